"""Where the multi-device superstep spends its time, phase by phase, on one GPU.

    PYTHONPATH=. python3 -m benchmarks.phases --scale 24 --algorithms bfs-push sssp
    PYTHONPATH=. python3 -m benchmarks.phases --backend numpy --scale 18 --parts 4

Builds an R-MAT graph (as ``benchmarks.multi_gpu``), runs each algorithm on one part and on
``--parts`` parts of the same device (edge_balanced, selective), and after two warm calls times
one call with the device synchronised before and after each phase of the superstep (the step,
packaging, exchange, next frontier, Slabs, tally, gather): the phases' totals, calls and time
per call. The synchronisations add a few microseconds a phase; the plain calls' best whole and
BSP times are printed first.
"""

from __future__ import annotations

import argparse
import collections
import time

import numpy as np

import bspgraph as bg
from bspgraph.backend import get_backend, to_host
from bspgraph.enactor import distributed

from .multi_gpu import ALGORITHMS

PHASES = ("_package", "_exchange_updates", "_next_frontier", "_union_edges", "_combine_scalars",
          "_sum", "_spread", "_slab", "_next_frontier_dense", "_gather", "_parts")  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=22)
    parser.add_argument("--parts", type=int, default=2)
    parser.add_argument("--backend", default="cupy")
    parser.add_argument("--algorithms", nargs="+", default=["bfs-push", "bfs-auto", "sssp"],
                        choices=sorted(ALGORITHMS))  # fmt: skip
    args = parser.parse_args(argv)
    backend = get_backend(args.backend)
    graph = bg.generators.rmat(args.scale, 16, seed=1, weights=True, backend=backend)
    source = int(np.argmax(to_host(graph.out_degree())))
    totals, counts, timing = collections.Counter(), collections.Counter(), [False]

    def timed(label, fn):
        def wrapper(*args, **kwargs):
            if not timing[0]:
                return fn(*args, **kwargs)
            backend.synchronize()
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                backend.synchronize()
                totals[label] += time.perf_counter() - started
                counts[label] += 1

        return wrapper

    for name in PHASES:
        setattr(distributed, name, timed(name, getattr(distributed, name)))
    for kind in (bg.primitives.BFS, bg.primitives.SSSP, bg.primitives.CC, bg.primitives.PageRank):
        kind.step = timed("step", kind.step)
    for name in args.algorithms:
        call = ALGORITHMS[name][0]
        for parts in (1, args.parts):
            run = {"backend": backend}
            if parts > 1:
                run.update(devices=[0] * parts, partitioner="edge_balanced",
                           communicator="selective")  # fmt: skip
            for _ in range(2):
                call(graph, source, run)
            plain = []
            for _ in range(3):
                started = time.perf_counter()
                result = call(graph, source, run)
                plain.append((time.perf_counter() - started, result.stats.seconds))
            totals.clear()
            counts.clear()
            timing[0] = True
            result = call(graph, source, run)
            timing[0] = False
            whole, bsp = min(plain)
            print(f"{name} on {parts} part(s): whole {whole * 1e3:.2f} ms, bsp {bsp * 1e3:.2f} ms, "
                  f"{len(result.stats.supersteps)} supersteps")  # fmt: skip
            for label, seconds in totals.most_common():
                print(f"    {label:22} {seconds * 1e3:8.3f} ms {counts[label]:4d} calls "
                      f"{seconds / counts[label] * 1e6:8.1f} us a call")  # fmt: skip


if __name__ == "__main__":
    main()
