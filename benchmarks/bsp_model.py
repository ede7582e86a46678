"""A BSP cost model (W + H.g + S.l) fitted to measured multi-GPU runs, predicting more GPUs.

    python -m benchmarks.bsp_model rows.json [more.json ...] --plot benchmarks/multi_gpu.png

Reads the rows that ``benchmarks.multi_gpu --json`` wrote. ``g`` (seconds per byte a device
sends, packing included), ``l`` (seconds per communication round: launch, headers, barrier)
and ``m`` (seconds per peer a device exchanges with in a round: its headers, launches and
unpacking) are fitted by non-negative least squares to every measured superstep of P > 1:
``comm_seconds = l * rounds + m * rounds * peers(P) + g * bytes / P``. For each algorithm and
communicator on a graph, the prediction on P devices is

    T(P) = W / P + O(P) + g * H(2) * s(P) / s(2) + (l + m * peers(P)) * S * rounds(P)

with W the one-device BSP time; O(P) the multi-device overhead: a device's compute time
beyond W / P (merging what arrived, rebuilding frontiers, the O(V) passes over duplicated
state, waiting for the slowest device), measured on two devices and, where the rows hold a
run on four, growing linearly with the peers through both (else taken as independent of P);
when the two parts ran on one GPU (``benchmarks.multi_gpu --same-gpu``: its kernels did all of
W, and the host made both parts' calls, one after the other), O(2) is half of their time
beyond W (each part's own, which a process per GPU makes in parallel); H(2) the bytes per
device measured on two; S the supersteps; rounds(P) the communicator's rounds per exchange
and peers(P) the devices each one exchanges with in a round (P - 1, or radix - 1 in a
butterfly's); and s(P) the bytes each device sends as a fraction of one superstep's updates:
(P-1)/P when every device needs every update (the exchange is an all-gather), (P-1)/P^2 when
only owners do (selective), and (r-1)/r * log_r(P) / P for an owner-only butterfly of radix
r. Prints the fit and a table of measured and predicted times; where the rows hold runs on
more than two devices (same graph, algorithm, partitioner and communicator), their measured
times print beside the predictions and the plot draws them. ``--plot`` draws them.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

import bspgraph as bg

NEEDS_ALL = {"bfs-push": False, "bfs-auto": True, "sssp": True, "pagerank": True, "cc": True}
PREDICT = (2, 4, 8)


def fit(rows, parts: set[int] | None = None) -> Link:
    """The link (:class:`Link`) from every superstep of the P > 1 rows (of the device counts
    ``parts`` only, when given)."""
    from scipy.optimize import nnls

    design, seconds = [], []
    crossing = [row for row in rows if _gpus(row) > 1]  # bytes that crossed between GPUs
    for row in crossing or rows:  # (parts of one GPU hand their arrays over: no link to fit)
        if row["P"] > 1 and (parts is None or row["P"] in parts):
            for step in _on_every_device(row):
                rounds, sent = step["rounds"], step.get("messages", 1) > 0
                design.append(
                    [
                        rounds,
                        rounds * sent,
                        step.get("messages", 0) / row["P"],
                        step["bytes"] / row["P"],
                    ]
                )
                seconds.append(step["comm_seconds"])
    design, seconds = np.asarray(design, float), np.asarray(seconds, float)
    fitted, _ = nnls(design, seconds)
    error = np.abs(design @ fitted - seconds)
    print(
        f"comm fit over {len(seconds)} supersteps: median |error| {np.median(error) * 1e3:.2f} "
        f"ms, largest {error.max() * 1e3:.2f} ms (measured median "
        f"{np.median(seconds) * 1e3:.2f} ms)"
    )
    return Link(*fitted.tolist())


@dataclass(frozen=True)
class Link:
    """What a superstep's exchange costs a device: ``latency`` seconds a round, ``sending``
    more a round in which anything is sent (packing, the launches of the point-to-point
    group), ``message`` a message it sends, and ``g`` a byte it sends."""

    latency: float
    sending: float
    message: float
    g: float

    def __str__(self) -> str:
        rate = f"{1 / self.g / 1e9:.1f} GB/s" if self.g else "inf"
        return (
            f"g = {self.g * 1e9:.4f} ns/byte ({rate}), l = {self.latency * 1e6:.0f} us a "
            f"round, {self.sending * 1e6:.0f} us more a round that sends, "
            f"{self.message * 1e6:.0f} us a message"
        )


def peers(communicator: str, parts: int) -> int:
    """The devices each device exchanges with in one round of ``communicator`` on ``parts``."""
    if parts == 1:
        return 0
    if communicator in ("selective", "broadcast"):
        return parts - 1
    return min(max(bg.comm.get(communicator).radix, 2), parts) - 1


def _gpus(row) -> int:
    """The GPUs a row's parts ran on (rows written before it was recorded: one each)."""
    return row.get("gpus", row["P"])


def share(algorithm: str, communicator: str, parts: int) -> float:
    """s(P): the bytes a device sends, as a fraction of one superstep's updates."""
    if parts == 1:
        return 0.0
    if NEEDS_ALL[algorithm] or communicator == "broadcast":
        return (parts - 1) / parts
    if communicator == "selective":
        return (parts - 1) / parts**2
    radix = max(bg.comm.get(communicator).radix, 2)
    return (radix - 1) / radix * math.log(parts, radix) / parts


def _on_every_device(row) -> list:
    """The row's supersteps that ran on its every device (not those that ran on one alone,
    the contract's rule 6: their exchange is untimed, ``comm_seconds`` 0)."""
    return [step for step in row["supersteps"] if step.get("devices", row["P"]) == row["P"]]


def overhead(one, row) -> float:
    """O(P) of a measured row on P devices, in seconds: a device's time beyond its share of W
    and its communication (for two parts on one GPU, half of their time beyond W)."""
    work = one["bsp_ms"] / 1e3
    beyond = row["bsp_ms"] / 1e3 - sum(s["comm_seconds"] for s in row["supersteps"])
    if _gpus(row) == 1:
        return max((beyond - work) / row["P"], 0.0)
    return max(beyond - work / row["P"], 0.0)


def predict(one, two, link: Link, parts: int, four=None) -> float:
    """Predicted BSP ms on ``parts`` devices from the one- and two-device rows (and the
    four-device row ``four`` of the same run, when measured: O(P) then grows with the peers)."""
    algorithm, communicator = two["algorithm"], two["communicator"]
    grown = overhead(one, two)
    if four is not None:
        step = (overhead(one, four) - grown) / (peers(communicator, 4) - peers(communicator, 2))
        grown += step * (peers(communicator, parts) - peers(communicator, 2))
    lifted = _on_every_device(two)
    sent = sum(s["bytes"] for s in lifted) / 2  # per device
    scaled = share(algorithm, communicator, parts) / share(algorithm, communicator, 2)
    rounds = bg.comm.get(communicator).rounds(parts)
    sending = sum(s.get("messages", 1) > 0 for s in lifted)
    link_seconds = rounds * (
        link.latency * len(lifted)
        + (link.sending + link.message * peers(communicator, parts)) * sending
    )
    seconds = one["bsp_ms"] / 1e3 / parts + max(grown, 0.0) + link.g * sent * scaled + link_seconds
    return seconds * 1e3


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="+", help="JSON files from benchmarks.multi_gpu --json")
    parser.add_argument("--plot", help="write a PNG here (matplotlib)")
    parser.add_argument(
        "--fit-on",
        type=int,
        nargs="+",
        metavar="P",
        help="fit g and l to the runs on these device counts only (default: all "
        "P > 1), e.g. 2 to test the model's predictions for 4",
    )
    args = parser.parse_args(argv)
    rows = [row for path in args.rows for row in json.load(open(path))]
    link = fit(rows, set(args.fit_on) if args.fit_on else None)
    print(link)
    ones = {(r["graph"], r["algorithm"]): r for r in rows if r["P"] == 1}
    measured = defaultdict(dict)  # (graph, algorithm, partitioner, communicator) -> {P: row}
    for r in rows:
        measured[(r["graph"], r["algorithm"], r["partitioner"], r["communicator"])][r["P"]] = r
    table = defaultdict(list)
    print(
        f"\n{'graph':<7} {'algorithm':<9} {'partitioner':<13} {'communicator':<12} "
        f"{'P=1 ms':>8} {'P=2 ms':>8} {'P=4 ms':>8} {'model 2':>8} {'model 4':>8} "
        f"{'model 8':>8} {'8 (2, 4)':>8}"
    )
    for two in (r for r in rows if r["P"] == 2 and r["algorithm"] in NEEDS_ALL):
        one = ones[(two["graph"], two["algorithm"])]
        runs = measured[(two["graph"], two["algorithm"], two["partitioner"], two["communicator"])]
        model = [predict(one, two, link, p) for p in PREDICT]  # from two devices only
        four = runs.get(4) if _gpus(two) > 1 else None  # O(P) from P GPUs, not parts of one
        eight = f"{predict(one, two, link, 8, four):8.1f}" if four else f"{'-':>8}"
        runs = {p: row["bsp_ms"] for p, row in runs.items()}
        table[(two["graph"], two["algorithm"])].append((two, model, runs))
        four = f"{runs[4]:8.1f}" if 4 in runs else f"{'-':>8}"
        print(
            f"{two['graph']:<7} {two['algorithm']:<9} {two['partitioner']:<13} "
            f"{two['communicator']:<12} {one['bsp_ms']:8.1f} {two['bsp_ms']:8.1f} {four} "
            + " ".join(f"{m:8.1f}" for m in model)
            + f" {eight}"
        )
    if args.plot:
        plot(table, ones, args.plot)


def plot(table, ones, path: str) -> None:
    """Per graph and algorithm, the fastest configuration on the most devices measured: its
    measured speed-ups over one device (o) and the model's from its two-device run (x)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    graphs = sorted({graph for graph, _ in table})
    fig, axes = plt.subplots(1, len(graphs), figsize=(6 * len(graphs), 4.5), squeeze=False)
    for ax, graph in zip(axes[0], graphs):
        for (name, algorithm), runs in sorted(table.items()):
            if name != graph:
                continue
            most = max(max(measured) for _, _, measured in runs)
            two, model, measured = min(
                (run for run in runs if most in run[2]), key=lambda run: run[2][most]
            )
            one = ones[(graph, algorithm)]["bsp_ms"]
            parts = [1, *sorted(measured)]
            speedups = [1] + [one / measured[p] for p in sorted(measured)]
            line = ax.plot(
                parts,
                speedups,
                "o-",
                label=f"{algorithm} ({two['communicator']}, {two['partitioner']})",
            )[0]
            ax.plot(PREDICT, [one / m for m in model], "x--", color=line.get_color())
        ax.plot([1, 8], [1, 8], ":", color="grey", label="linear")
        ax.set(
            xscale="log",
            yscale="log",
            xticks=[1, 2, 4, 8],
            yticks=[0.125, 0.25, 0.5, 1, 2, 4, 8],
            xlabel="GPUs",
            ylabel="speed-up of the BSP run over 1 GPU",
            title=f"{graph}: measured (o) and BSP model (x)",
        )
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
