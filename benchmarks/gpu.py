"""GPU benchmark: bspgraph on CuPy against the same algorithms written plainly with cupyx.

    python -m benchmarks.gpu --scale 20 22        # R-MAT scales, edge factor 16
    python -m benchmarks.gpu --scale 20 --check   # also check CuPy == NumPy answers

Prints one row per (graph, algorithm): ms (median of --repeat runs), GTEPS (edges of reached
vertices / time), the plain cupyx baseline's ms and the speed-up over it.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import bspgraph as bg
from bspgraph.backend import get_backend, to_host


def timed(fn, repeat: int, sync):
    fn()  # warm-up: kernel compilation, allocator pools
    times = []
    for _ in range(repeat):
        sync()
        start = time.perf_counter()
        out = fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def plain_bfs(matrix, source: int, cp):
    """BFS as one SpMV per level with cupyx.scipy.sparse (the baseline)."""
    n = matrix.shape[0]
    depth = cp.full(n, -1, dtype=cp.int32)
    depth[source] = 0
    frontier = cp.zeros(n, dtype=cp.float32)
    frontier[source] = 1
    level = 0
    while True:
        reached = (matrix @ frontier > 0) & (depth < 0)
        level += 1
        if not bool(reached.any()):
            return depth
        depth[reached] = level
        frontier = reached.astype(cp.float32)


def plain_sssp(graph, source: int, cp, cupyx):
    """Frontier Bellman-Ford with cupyx.scatter_min (the baseline)."""
    n = graph.num_vertices
    offsets, indices = graph.offsets, graph.indices
    weights = graph.weights if graph.weights is not None else cp.ones(graph.num_edges, cp.float32)
    distance = cp.full(n, cp.inf, dtype=weights.dtype)
    distance[source] = 0
    frontier = cp.asarray([source], dtype=indices.dtype)
    while frontier.size:
        starts, ends = offsets[frontier], offsets[frontier + 1]
        degrees = (ends - starts).astype(cp.int64)
        scan = cp.cumsum(degrees)
        total = int(scan[-1])
        slots = cp.arange(total, dtype=cp.int64)
        owner = cp.searchsorted(scan, slots, side="right")
        edge = starts[owner] + (slots - (scan - degrees)[owner])
        candidate = distance[frontier][owner] + weights[edge]
        dst = indices[edge]
        before = distance[dst]
        cupyx.scatter_min(distance, dst, candidate)
        improved = candidate < before
        frontier = cp.unique(dst[improved])
    return distance


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, nargs="+", default=[20])
    parser.add_argument("--edge-factor", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--check", action="store_true", help="compare with the NumPy backend")
    args = parser.parse_args(argv)
    backend = get_backend("cupy")
    cp = backend.xp
    import cupyx
    import cupyx.scipy.sparse as cusparse

    rows = []
    for scale in args.scale:
        graph = bg.generators.rmat(scale, args.edge_factor, seed=1, weights=True, backend="cupy")
        degree = to_host(graph.out_degree())
        source = int(np.argmax(degree > 0))
        matrix = cusparse.csr_matrix(
            (cp.ones(graph.num_edges, cp.float32), graph.indices, graph.offsets),
            shape=(graph.num_vertices,) * 2,
        ).T.tocsr()
        name = f"rmat{scale}"
        print(f"{name}: {graph.num_vertices} vertices, {graph.num_edges} directed edges", flush=True)
        base_s, base_depth = timed(lambda: plain_bfs(matrix, source, cp), args.repeat, backend.synchronize)
        for direction in ("push", "auto"):
            t, result = timed(lambda: bg.bfs(graph, source, direction=direction, backend="cupy"),
                              args.repeat, backend.synchronize)  # fmt: skip
            assert (result.depth == to_host(base_depth)).all(), "bfs differs from the baseline"
            rows.append((name, f"bfs-{direction}", t, result.stats, base_s))
            steps = ", ".join(f"{s.frontier}:{s.seconds * 1e3:.2f}" for s in result.stats.supersteps)
            print(f"{name} bfs-{direction} supersteps (frontier:ms): {steps}", flush=True)
        base_s, base_dist = timed(lambda: plain_sssp(graph, source, cp, cupyx), args.repeat,
                                  backend.synchronize)  # fmt: skip
        t, result = timed(lambda: bg.sssp(graph, source, backend="cupy"), args.repeat,
                          backend.synchronize)  # fmt: skip
        assert np.allclose(result.distance, to_host(base_dist)), "sssp differs from the baseline"
        rows.append((name, "sssp", t, result.stats, base_s))
        if args.check:
            host = graph.to("numpy")
            assert (bg.bfs(host, source).depth == bg.bfs(graph, source).depth).all()
            assert np.array_equal(bg.sssp(host, source).distance, bg.sssp(graph, source).distance)
            print(f"{name}: CuPy == NumPy for bfs and sssp", flush=True)
    print("\nms: the whole call (host result); bsp ms: the BSP loop on the device (stats.seconds)")
    print(f"{'graph':<8} {'algorithm':<10} {'ms':>8} {'GTEPS':>7} {'bsp ms':>8} {'GTEPS':>7} "
          f"{'base ms':>8} {'speed-up':>8}")  # fmt: skip
    for name, algorithm, seconds, stats, base in rows:
        print(f"{name:<8} {algorithm:<10} {seconds * 1e3:8.2f} {stats.edges / seconds / 1e9:7.2f} "
              f"{stats.seconds * 1e3:8.2f} {stats.gteps:7.2f} {base * 1e3:8.2f} "
              f"{base / seconds:7.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
