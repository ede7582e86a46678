"""Where one run of a primitive (direction-optimising BFS, or betweenness from one source)
spends its time on a GPU: the BSP loop's wall time (``stats.seconds``) against its kernels'
own durations, and the host's hot spots.

    PYTHONPATH=. python3 -m benchmarks.timeline [--scale 24] [--algorithm bc]  # wall, cProfile
    ncu --clock-control none --profile-from-start off --csv --log-file k.csv \\
        --metrics gpu__time_duration.sum python3 -m benchmarks.timeline --ncu
    python3 -m benchmarks.timeline --kernels k.csv                 # the kernels, summed

R-MAT (Graph500, edge factor 16), the source of largest degree, as ``benchmarks.gpu``. Plain
mode prints: the median of 21 calls' whole time and BSP loop; the time of a host round trip
(a tiny kernel, then a read of its 16-byte result: what each superstep's size read costs at
least); and the functions with the most own time, then the package's functions with the most
time in all, over 21 calls under cProfile. ``--ncu`` profiles one call after two warm-ups
(CUDA's profiler API brackets it).
"""

from __future__ import annotations

import argparse
import cProfile
import csv
import pstats
import statistics
import time

import numpy as np


def kernel_table(path: str) -> None:
    """The kernels of an ncu CSV log with their durations (us): each in launch order, or per
    name (count and total, largest first) when there are more than LISTED; then the sum."""
    with open(path) as log:
        rows = [line for line in log if line.startswith('"')]
    launches = []
    for row in csv.DictReader(rows):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
        value = float(row["Metric Value"].replace(",", "")) * scale[row["Metric Unit"]]
        launches.append((row["Kernel Name"][:60], value))
    if len(launches) <= LISTED:
        for name, duration in launches:
            print(f"{name:<60} {duration:9.1f} us")
    else:
        totals: dict[str, list[float]] = {}
        for name, duration in launches:
            totals.setdefault(name, []).append(duration)
        for name, durations in sorted(totals.items(), key=lambda item: -sum(item[1])):
            print(f"{name:<60} {len(durations):4d}x {sum(durations):9.1f} us")
    print(f"{'sum of kernel durations':<60} {sum(d for _, d in launches):9.1f} us")


LISTED = 40  # kernels listed one by one; more are summed per name


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=24)
    parser.add_argument("--algorithm", choices=("bfs", "bc"), default="bfs")
    parser.add_argument("--ncu", action="store_true", help="one call inside the profiler range")
    parser.add_argument("--kernels", metavar="CSV", help="print an ncu log's kernels and exit")
    args = parser.parse_args()
    if args.kernels:
        kernel_table(args.kernels)
        return
    import cupy as cp

    import bspgraph as bg

    graph = bg.generators.rmat(args.scale, 16, seed=1, weights=True, backend="cupy")
    source = int(np.argmax(bg.backend.to_host(graph.out_degree())))

    def run():
        if args.algorithm == "bc":
            return bg.betweenness_centrality(graph, [source], normalized=False)
        return bg.bfs(graph, source)

    for _ in range(2):
        run()
    if args.ncu:
        cp.cuda.profiler.start()
        run()
        cp.cuda.Device().synchronize()
        cp.cuda.profiler.stop()
        return
    walls, loops = [], []
    for _ in range(21):
        started = time.perf_counter()
        result = run()
        walls.append(time.perf_counter() - started)
        loops.append(result.stats.seconds)
    steps = " ".join(f"{s.frontier}:{s.seconds * 1e3:.3f}" for s in result.stats.supersteps)
    print(
        f"rmat{args.scale} {args.algorithm} from {source}: whole {statistics.median(walls) * 1e3:.3f} "
        f"ms, loop {statistics.median(loops) * 1e3:.3f} ms; supersteps {steps}"
    )

    flag = cp.zeros(2, dtype=cp.uint64)
    tick = cp.ElementwiseKernel("", "uint64 x", "x += 1", "tick")
    trips = []
    for _ in range(1000):
        started = time.perf_counter()
        tick(flag)
        flag.get()
        trips.append(time.perf_counter() - started)
    print(
        f"host round trip (launch + 16-byte read): median {statistics.median(trips) * 1e6:.1f}"
        f" us, 90th percentile {np.percentile(trips, 90) * 1e6:.1f} us"
    )

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(21):
        run()
    profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(30)
    pstats.Stats(profile).sort_stats("cumulative").print_stats("bspgraph", 30)


if __name__ == "__main__":
    main()
