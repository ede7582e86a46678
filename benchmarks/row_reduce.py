"""Lanes per row in the GPU row reduction: time each group size on rmat and grid graphs.

    PYTHONPATH=. python3 -m benchmarks.row_reduce

For each graph, the pull-direction CSR (in-edges with weights) is reduced as PageRank's SpMV
(plus-times) and SSSP's pull (min-plus) with 4, 8, 16 and 32 lanes per row, each checked
against the automatic choice (`bspgraph.backend._group_size`), and the mean ms of 10 calls
after a warm-up is printed beside the group the automatic rule picks.
"""

from __future__ import annotations

import time

import bspgraph as bg
import bspgraph.backend as backend_module

GROUPS = (4, 8, 16, 32)
GRAPHS = {
    "rmat22": lambda: bg.generators.rmat(22, 16, seed=1, weights=True, backend="cupy"),
    "rmat24": lambda: bg.generators.rmat(24, 16, seed=1, weights=True, backend="cupy"),
    "grid4096": lambda: bg.generators.grid(4096, 4096, weights=True, backend="cupy"),
}


def mean_ms(cp, fn, calls: int = 10) -> float:
    fn()
    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    cp.cuda.Device().synchronize()
    return (time.perf_counter() - start) / calls * 1e3


def main() -> None:
    automatic = backend_module._group_size
    for name, build in GRAPHS.items():
        graph = build()
        backend, cp, n = graph.backend, graph.xp, graph.num_vertices
        rows = graph.reverse
        rank = cp.random.random(n)
        distance = cp.random.random(n).astype(graph.weights.dtype)

        def plus_times(rows=rows, rank=rank, backend=backend, n=n):
            return backend.spmv(rows.offsets, rows.indices, rows.weights, rank, n)

        def min_plus(rows=rows, distance=distance, backend=backend):
            return backend.gather_reduce(distance, rows.offsets, rows.indices, "min",
                                         weights=rows.weights)  # fmt: skip

        expected_sum, expected_min = plus_times(), min_plus()
        cells = []
        for group in GROUPS:
            backend_module._group_size = lambda entries, count, group=group: group
            assert bool(cp.allclose(plus_times(), expected_sum, rtol=1e-12))
            assert bool((min_plus() == expected_min).all())
            cells.append(f"{group:2d} lanes: sum {mean_ms(cp, plus_times):6.3f} "
                         f"min {mean_ms(cp, min_plus):6.3f}")  # fmt: skip
        backend_module._group_size = automatic
        chosen = automatic(int(rows.indices.size), n)
        print(f"{name:<9} auto {chosen:2d} | " + " | ".join(cells), flush=True)
        del graph, rows


if __name__ == "__main__":
    main()
