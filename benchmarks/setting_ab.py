"""A/B of a setting inside one process: a module's constant set to A or to B, run by run.

    PYTHONPATH=. python -m benchmarks.setting_ab bspgraph.enactor.distributed KEYED_SHARE 4 8 \
        --backend numpy --scale 14 --devices 2 --algorithms bfs-push sssp
    mpiexec -n 2 python -m benchmarks.setting_ab bspgraph.enactor.distributed LENT_BYTES \
        1048576 0 --transport nccl --scale 25 --algorithms bfs-push sssp

A whole-process A/B (:mod:`benchmarks.ab`) sees only what exceeds the spread between
processes, and on two H200s the same code's light superstep took up to 2x longer in one job
than in another: a change of a few per cent to a light superstep shows only inside one
process. This one builds the graph once, then runs each algorithm on ``--devices`` devices
(NumPy's virtual devices or GPUs of this process, ``--transport local``) or on every rank
(``mpi``, ``nccl``, under ``mpiexec``), ``--runs`` runs an arm in ABBA order, with
``module.NAME`` (read where it is used, at call time) set to A or to B before each run, the
same on every rank. Each arm's supersteps are split by their frontier into light (below
``--light`` vertices; superstep 0 aside) and heavy; it prints, per arm, the light supersteps'
host time (median, quartiles, count) on each rank and the runs' bsp median (rank 0), and
checks that the two arms' answers are equal. A and B are Python literals.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import statistics

import numpy as np

import bspgraph as bg
from bspgraph.backend import get_backend, to_host

from .multi_gpu import ALGORITHMS, check_equal, transports


def main(argv=None) -> list[dict]:
    """Run the A/B; return one row a rank, algorithm and arm (printed by rank 0)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", help="the module that holds the setting (dotted name)")
    parser.add_argument("name", help="the setting: a module-level name read at call time")
    parser.add_argument("a", help="arm A's value, a Python literal")
    parser.add_argument("b", help="arm B's value, a Python literal")
    parser.add_argument("--scale", type=int, default=14)
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--transport", choices=["local", "mpi", "nccl"], default="local")
    parser.add_argument("--devices", type=int, default=2, help="devices of this process (local)")
    parser.add_argument("--algorithms", nargs="+", default=["bfs-push"], choices=sorted(ALGORITHMS))
    parser.add_argument("--runs", type=int, default=24, help="runs an arm, after two warm ones")
    parser.add_argument("--light", type=int, default=200_000, help="a light superstep's frontier")
    args = parser.parse_args(argv)
    module = importlib.import_module(args.module)
    if not hasattr(module, args.name):
        raise SystemExit(f"{args.module} has no setting {args.name!r}")
    arms = {"A": ast.literal_eval(args.a), "B": ast.literal_eval(args.b)}
    if args.transport == "local":
        backend, transport, rank = get_backend(args.backend), None, 0
        run = {"backend": backend, "devices": args.devices}
    else:
        transport, _ = transports(args.transport, args.backend, None)
        backend, rank = transport.backend, transport.rank
        run = {"transport": transport}
    run.update(partitioner="edge_balanced", communicator="selective")
    graph = bg.generators.rmat(args.scale, 16, seed=1, weights=True, backend=backend)
    source = int(np.argmax(to_host(graph.out_degree())))
    rows = []
    for algorithm in args.algorithms:
        call, field = ALGORITHMS[algorithm]
        light, bsp, answers = {k: [] for k in arms}, {k: [] for k in arms}, {}
        for k in [*arms, *arms]:  # warm runs: each arm's kernels built before any is timed
            setattr(module, args.name, arms[k])
            answers[k] = getattr(call(graph, source, run), field)
        check_equal(field, answers["B"], answers["A"])
        for turn in range(args.runs):
            for k in ("A", "B") if turn % 2 == 0 else ("B", "A"):
                setattr(module, args.name, arms[k])
                stats = call(graph, source, run).stats
                bsp[k].append(stats.seconds * 1e3)
                light[k] += [
                    step.seconds * 1e6
                    for i, step in enumerate(stats.supersteps)
                    if i and step.frontier < args.light
                ]
        for k, value in arms.items():
            rows.append(
                {"rank": rank, "algorithm": algorithm, "arm": k, "value": value}
                | {"light_us": light[k], "bsp_ms": statistics.median(bsp[k]), "runs_ms": bsp[k]}
            )
    every = transport.comm.gather(rows, root=0) if transport is not None else [rows]
    if rank == 0:
        _report(args.name, every)
    return rows


def _report(name: str, every: list[list[dict]]) -> None:
    """Per algorithm and arm: the light supersteps' host time on each rank, the bsp median and
    quartiles; per algorithm, B - A run by run (the two arms of a turn run back to back): its
    median and quartiles, and in how many turns B was the faster."""
    print(
        "light supersteps' host us: median (p25-p75, count) on each rank; bsp: rank 0's "
        "median (p25-p75); B - A: rank 0's bsp, turn by turn"
    )
    for at, row in enumerate(every[0]):
        ranks = []
        for rank_rows in every:
            times = rank_rows[at]["light_us"]
            p25, p50, p75 = np.percentile(times, [25, 50, 75]) if times else [np.nan] * 3
            ranks.append(f"r{rank_rows[at]['rank']} {p50:6.0f} ({p25:.0f}-{p75:.0f}, {len(times)})")
        p25, p75 = np.percentile(row["runs_ms"], [25, 75])
        print(
            f"{row['algorithm']:<9} {name}={row['value']!r:<10} light "
            + " | ".join(ranks)
            + f"; bsp {row['bsp_ms']:.2f} ms ({p25:.2f}-{p75:.2f})",
            flush=True,
        )
        if row["arm"] == "B":  # (the row before it is the same algorithm's arm A)
            change = np.subtract(row["runs_ms"], every[0][at - 1]["runs_ms"])
            p25, p50, p75 = np.percentile(change, [25, 50, 75])
            faster = int((change < 0).sum())
            print(
                f"{row['algorithm']:<9} B - A {p50:+.2f} ms ({p25:+.2f} to {p75:+.2f}); "
                f"B faster in {faster} of {change.size} turns",
                flush=True,
            )


if __name__ == "__main__":
    main()
