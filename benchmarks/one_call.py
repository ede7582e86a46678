"""Issue 50's gates: a run from one Python call on ``bg.cluster`` workers against the same run
under ``mpiexec``, row by row, from two ``benchmarks.multi_gpu --json`` files of one machine.

    mpiexec -n 2 python -m benchmarks.multi_gpu --transport nccl --scale 25 --json mpi.json
    python -m benchmarks.multi_gpu --transport cluster --devices 2 --scale 25 --json one.json
    python -m benchmarks.one_call mpi.json one.json

For each algorithm, partitioner and communicator run by both at P > 1: the BSP run's medians
(``stats.seconds``) and the whole call's (the result on the caller's host, after the graph was
sent and cut by an earlier call), their ratios one call / mpiexec against the gates (1.15 and
1.3), and the setup seconds of a call after the first (0: nothing sent or cut again).
"""

from __future__ import annotations

import argparse
import json

BSP_GATE, WHOLE_GATE = 1.15, 1.3


def rows_of(path: str) -> dict:
    """The lifted rows of a ``benchmarks.multi_gpu --json`` file (P > 1, or one rank's run
    through the multi-device enactor: a partitioner named), by (algorithm, P, partitioner,
    communicator)."""
    with open(path) as rows:
        return {
            (r["algorithm"], r["P"], r["partitioner"], r["communicator"]): r
            for r in json.load(rows)
            if r["P"] > 1 or r["partitioner"] != "-"
        }


def compare(mpiexec: dict, one_call: dict) -> list[str]:
    """The table's lines: every row both runs hold, its times and ratios, and whether each
    gate holds."""
    lines = [
        f"{'algorithm':<9} {'P':>2} {'partitioner':<13} {'communicator':<12} {'bsp mpi':>8} "
        f"{'bsp one':>8} {'ratio':>6} {'ms mpi':>8} {'ms one':>8} {'ratio':>6} "
        f"{'setup again':>11}  gates"
    ]
    for key in sorted(mpiexec.keys() & one_call.keys()):
        a, b = mpiexec[key], one_call[key]
        bsp, whole = b["bsp_ms"] / a["bsp_ms"], b["ms"] / a["ms"]
        again = b.get("setup_again_s", float("nan"))
        held = bsp <= BSP_GATE and whole <= WHOLE_GATE and again == 0
        lines.append(
            f"{key[0]:<9} {key[1]:>2} {key[2]:<13} {key[3]:<12} {a['bsp_ms']:8.1f} "
            f"{b['bsp_ms']:8.1f} {bsp:5.2f}x {a['ms']:8.1f} {b['ms']:8.1f} {whole:5.2f}x "
            f"{again:11.3f}  {'met' if held else 'missed'}"
        )
    if len(lines) == 1:
        lines.append("(no row in both files: run the same algorithms, partitioners and P)")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mpiexec", help="benchmarks.multi_gpu --json of the mpiexec run")
    parser.add_argument("one_call", help="... of the --transport cluster run")
    args = parser.parse_args(argv)
    print(
        f"one call / mpiexec; gates: bsp <= {BSP_GATE}x, whole call <= {WHOLE_GATE}x, "
        "setup 0 on a call after the first"
    )
    print("\n".join(compare(rows_of(args.mpiexec), rows_of(args.one_call))))


if __name__ == "__main__":
    main()
