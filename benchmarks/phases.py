"""Where the multi-device superstep spends its time, phase by phase, on one GPU.

    PYTHONPATH=. python3 -m benchmarks.phases --scale 24 --algorithms bfs-push sssp
    PYTHONPATH=. python3 -m benchmarks.phases --backend numpy --scale 18 --parts 4
    PYTHONPATH=. python3 -m benchmarks.phases --scale 24 --host --algorithms sssp

Builds an R-MAT graph (as ``benchmarks.multi_gpu``), runs each algorithm on one part and on
``--parts`` parts of the same device (edge_balanced, selective), and after two warm calls times
one call with the device synchronised before and after each phase of the superstep (the step,
packaging, exchange, next frontier, Slabs, tally, gather): the phases' totals, calls and time
per call. The synchronisations add a few microseconds a phase; the plain calls' best whole and
BSP times are printed first. With ``--host`` nothing is synchronised: each superstep's phases
are printed apart, as the host spent them (a host read inside a phase includes its wait for the
device), with the time of the superstep and the frontier it made.
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
INSIDE = {"_next_frontier_dense": "_next_frontier"}  # a phase timed within another
OUTSIDE = ("_parts", "_gather")  # before the first superstep, after the last


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=22)
    parser.add_argument("--parts", type=int, default=2)
    parser.add_argument("--backend", default="cupy")
    parser.add_argument("--algorithms", nargs="+", default=["bfs-push", "bfs-auto", "sssp"],
                        choices=sorted(ALGORITHMS))  # fmt: skip
    parser.add_argument(
        "--host",
        action="store_true",
        help="no synchronisation: each superstep's phases as the host spent them",
    )
    args = parser.parse_args(argv)
    backend = get_backend(args.backend)
    graph = bg.generators.rmat(args.scale, 16, seed=1, weights=True, backend=backend)
    source = int(np.argmax(to_host(graph.out_degree())))
    totals, counts, timing = collections.Counter(), collections.Counter(), [False]
    steps = []  # --host: each superstep's (totals, counts)
    synchronize = (lambda: None) if args.host else backend.synchronize

    def timed(label, fn):
        def wrapper(*args, **kwargs):
            if not timing[0]:
                return fn(*args, **kwargs)
            synchronize()
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                synchronize()
                totals[label] += time.perf_counter() - started
                counts[label] += 1

        return wrapper

    def superstep(*fields, record=distributed.Superstep, **named):
        if timing[0] and args.host:  # the superstep's phases end here
            steps.append((totals.copy(), counts.copy()))
            totals.clear()
            counts.clear()
        return record(*fields, **named)

    for name in PHASES:
        setattr(distributed, name, timed(name, getattr(distributed, name)))
    distributed.Superstep = superstep
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
            steps.clear()
            timing[0] = True
            result = call(graph, source, run)
            timing[0] = False
            whole, bsp = min(plain)
            print(f"{name} on {parts} part(s): whole {whole * 1e3:.2f} ms, bsp {bsp * 1e3:.2f} ms, "
                  f"{len(result.stats.supersteps)} supersteps")  # fmt: skip
            if args.host:
                _print_supersteps(result.stats.supersteps, steps)
                continue
            for label, seconds in totals.most_common():
                print(f"    {label:22} {seconds * 1e3:8.3f} ms {counts[label]:4d} calls "
                      f"{seconds / counts[label] * 1e6:8.1f} us a call")  # fmt: skip


def _print_supersteps(supersteps, steps) -> None:
    """Each superstep's frontier, time and phases (us / calls), as the host spent them; "other"
    is the superstep's time outside the phases timed (the loop's own work)."""
    for superstep, (totals, counts) in zip(supersteps, steps, strict=False):
        for label in OUTSIDE:
            totals.pop(label, None)
        other = superstep.seconds - sum(seconds for label, seconds in totals.items()
                                        if label not in INSIDE)  # fmt: skip
        print(f"    {superstep.frontier:>10} {superstep.seconds * 1e6:8.0f} us  other "
              f"{other * 1e6:6.0f}  "
              + "  ".join(f"{label} {seconds * 1e6:.0f}/{counts[label]}"
                          for label, seconds in totals.most_common()))  # fmt: skip


if __name__ == "__main__":
    main()
