"""Multi-GPU check and timing: P GPUs of one host against one, same graph, same answers.

    python -m benchmarks.multi_gpu --scale 22 --devices 2

Builds an R-MAT graph on GPU 0, runs BFS (push and auto), SSSP and PageRank on one GPU and on
P GPUs for each partitioner x communicator asked for, asserts the answers are equal, and prints
the median time (whole call) and its communication share: messages, bytes and rounds.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import bspgraph as bg
from bspgraph.backend import gpu_count

ALGORITHMS = {
    "bfs-push": (lambda g, run: bg.bfs(g, SOURCE, direction="push", **run), "depth"),
    "bfs-auto": (lambda g, run: bg.bfs(g, SOURCE, direction="auto", **run), "depth"),
    "sssp": (lambda g, run: bg.sssp(g, SOURCE, **run), "distance"),
    "pagerank": (lambda g, run: bg.pagerank(g, tol=1e-9, **run), "rank"),
}
SOURCE = 0


SETUP: dict = {}  # (partitioner, communicator) -> seconds the first call spent partitioning


def timed(fn, repeat, key=None):
    first = fn()
    if key is not None:
        SETUP.setdefault(key, first.stats.setup_seconds)
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv=None) -> None:
    global SOURCE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=22)
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--partitioners", nargs="+", default=["edge_balanced", "random"])
    parser.add_argument(
        "--communicators", nargs="+", default=["selective", "butterfly", "broadcast"]
    )
    args = parser.parse_args(argv)
    print(f"{gpu_count()} GPUs", flush=True)
    graph = bg.generators.rmat(args.scale, 16, seed=1, weights=True, backend="cupy")
    SOURCE = int(np.argmax(graph.out_degree().get()))
    print(f"rmat{args.scale}: {graph.num_vertices} vertices, {graph.num_edges} edges", flush=True)
    rows = []
    for name, (call, field) in ALGORITHMS.items():
        one_t, one = timed(lambda c=call: c(graph, {"backend": "cupy"}), args.repeat)
        rows.append((name, 1, "-", "-", one_t, one.stats, one.stats))
        for partitioner in args.partitioners:
            for communicator in args.communicators:
                run = {"backend": "cupy", "devices": args.devices, "partitioner": partitioner,
                       "communicator": communicator}  # fmt: skip
                t, many = timed(lambda c=call, r=run: c(graph, r), args.repeat,
                                (partitioner, communicator))  # fmt: skip
                expected, got = getattr(one, field), getattr(many, field)
                if field == "rank":
                    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
                else:
                    np.testing.assert_array_equal(got, expected)
                rows.append((name, args.devices, partitioner, communicator, t, many.stats,
                             one.stats))  # fmt: skip
                print(f"  {name} P={args.devices} {partitioner} {communicator}: {t * 1e3:.1f} ms "
                      f"(P=1 {one_t * 1e3:.1f} ms), equal", flush=True)  # fmt: skip
    print(
        "\nms: whole call (partitions are cut once per graph and reused); bsp ms: the BSP run "
        "(stats.seconds); speed-up of bsp ms over P=1; setup: the first call's partitioning"
    )
    print(f"{'algorithm':<9} {'P':>2} {'partitioner':<13} {'communicator':<12} {'ms':>8} "
          f"{'bsp ms':>8} {'speed-up':>8} {'steps':>5} {'messages':>8} {'MB sent':>8} "
          f"{'rounds':>6} {'setup s':>7}")  # fmt: skip
    for name, p, partitioner, communicator, t, stats, one in rows:
        steps = stats.supersteps
        print(f"{name:<9} {p:>2} {partitioner:<13} {communicator:<12} {t * 1e3:8.1f} "
              f"{stats.seconds * 1e3:8.1f} {one.seconds / stats.seconds:7.2f}x {stats.iterations:5d} "
              f"{sum(s.messages for s in steps):8d} {sum(s.bytes for s in steps) / 1e6:8.1f} "
              f"{sum(s.rounds for s in steps):6d} {SETUP.get((partitioner, communicator), 0):7.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
