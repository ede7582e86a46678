"""A GPU user's first minute: every primitive's first call with an empty kernel cache.

    PYTHONPATH=. python3 -m benchmarks.cold_start                 # rmat16, a fresh cache
    PYTHONPATH=. python3 -m benchmarks.cold_start --warmup        # bg.warmup() first
    PYTHONPATH=. python3 -m benchmarks.cold_start --scale 12 --compiles 15
    PYTHONPATH=. python3 -m benchmarks.cold_start --cache /tmp/k    # twice: a warm disk cache

Runs itself in a child process whose CUPY_CACHE_DIR is a new empty folder (CuPy's kernel cache
on disk; the child's in-memory caches start empty too), builds an R-MAT graph on NumPy and
moves it to the GPU (so that the generator's kernels are not counted), then calls each
primitive twice: the first call's time (compilation included) and the second's. Every module
CuPy builds or loads from its disk cache is timed (``cupy.cuda.compiler._compile_with_cache_cuda``,
CuPy's own element-wise and reduction kernels included) and attributed to the call that asked. Prints one row per primitive, then the slowest compilations.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

PRIMITIVES = ("bfs", "sssp", "cc", "pagerank", "bc", "tc", "core")


def child(args) -> None:
    import cupy.cuda.compiler as compiler
    import numpy as np

    import bspgraph as bg

    compiles: list[tuple[str, float, str]] = []
    current = ["setup"]
    original = compiler._compile_with_cache_cuda

    def timed(source, *rest, **options):
        started = time.perf_counter()
        try:
            return original(source, *rest, **options)
        finally:
            names = re.findall(r"__global__\s+void\s+(\w+)", source) or ["?"]
            compiles.append((current[0], time.perf_counter() - started, ",".join(names[:3])))

    compiler._compile_with_cache_cuda = timed
    host = bg.generators.rmat(args.scale, 16, seed=1, weights=True, backend="numpy")
    graph = host.to("cupy")
    source = int(np.argmax(np.diff(host.forward.offsets)))
    calls = {
        "bfs": lambda: bg.bfs(graph, source, backend="cupy"),
        "sssp": lambda: bg.sssp(graph, source, backend="cupy"),
        "cc": lambda: bg.connected_components(graph, backend="cupy"),
        "pagerank": lambda: bg.pagerank(graph, backend="cupy"),
        "bc": lambda: bg.betweenness_centrality(graph, sources=[source], backend="cupy"),
        "tc": lambda: bg.triangle_count(graph, backend="cupy"),
        "core": lambda: bg.core_number(graph, backend="cupy"),
    }
    if args.warmup:
        current[0] = "warmup"
        started = time.perf_counter()
        bg.warmup()
        print(f"warmup: {time.perf_counter() - started:.2f} s, {len(compiles)} compilations")
    print(f"rmat{args.scale}: {graph.num_vertices} vertices, {graph.num_edges} edges")
    print(f"{'primitive':10} {'first s':>8} {'second s':>9} {'compiles':>8} {'compile s':>9}")
    total = 0.0
    for name in args.primitives:
        current[0] = name
        before = len(compiles)
        started = time.perf_counter()
        calls[name]()
        first = time.perf_counter() - started
        started = time.perf_counter()
        calls[name]()
        second = time.perf_counter() - started
        mine = compiles[before:]
        total += first
        print(f"{name:10} {first:8.4f} {second:9.4f} {len(mine):8d} {sum(c[1] for c in mine):9.2f}")
    print(f"{'all':10} {total:8.4f}")
    print(f"slowest compilations (of {len(compiles)}):")
    for where, seconds, names in sorted(compiles, key=lambda c: -c[1])[: args.compiles]:
        print(f"  {seconds:6.2f} s  {where:9} {names}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=16)
    parser.add_argument("--primitives", nargs="+", default=list(PRIMITIVES), choices=PRIMITIVES)
    parser.add_argument("--warmup", action="store_true", help="call bg.warmup() first")
    parser.add_argument("--compiles", type=int, default=10, help="slowest compilations listed")
    parser.add_argument("--cache", help="use this CUPY_CACHE_DIR (kept) instead of a new one")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return
    with tempfile.TemporaryDirectory() as fresh:
        env = dict(os.environ, CUPY_CACHE_DIR=args.cache or fresh)
        command = [sys.executable, "-m", "benchmarks.cold_start", "--child", *sys.argv[1:]]
        sys.exit(subprocess.run(command, env=env).returncode)


if __name__ == "__main__":
    main()
