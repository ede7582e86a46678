"""The GPU row reduction against cuSPARSE's SpMV, and the row length a whole warp reads.

    PYTHONPATH=. python3 -m benchmarks.row_reduce

For each graph, the pull-direction CSR (in-edges) is reduced as PageRank's SpMV (plus-times,
unweighted: no values array) and SSSP's pull (min-plus, weighted), with rows of at least
8, 16, 32 or 64 entries read by a whole warp (``bspgraph.backend.cuda.WARP_ROW``; shorter ones by
one lane each), each checked against the current choice; beside them, cuSPARSE's SpMV of the
same matrix with float64 values (``cupyx.scipy.sparse``, what the PageRank baseline runs).
Mean ms of 10 calls after a warm-up.
"""

from __future__ import annotations

import time

import bspgraph as bg
import bspgraph.backend.cuda as backend_module
from bspgraph.backend import ops

WARP_ROWS = (8, 16, 32, 64)
GRAPHS = {
    "rmat22": lambda: bg.generators.rmat(22, 16, seed=1, weights=True, backend="cupy"),
    "rmat24": lambda: bg.generators.rmat(24, 16, seed=1, weights=True, backend="cupy"),
    "grid4096": lambda: bg.generators.grid(4096, 4096, weights=True, backend="cupy"),
}


def mean_ms(cp, fn, calls: int = 10, warmup: int = 1) -> float:
    """Mean ms of ``calls`` calls of ``fn`` after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    cp.cuda.Device().synchronize()
    return (time.perf_counter() - start) / calls * 1e3


def main() -> None:
    import cupyx.scipy.sparse as sparse

    chosen = backend_module.WARP_ROW
    for name, build in GRAPHS.items():
        graph = build()
        backend, cp, n = graph.backend, graph.xp, graph.num_vertices
        rows = graph.reverse
        rank = cp.random.random(n)
        distance = cp.random.random(n).astype(graph.weights.dtype)
        matrix = sparse.csr_matrix(
            (cp.ones(rows.indices.size), rows.indices, rows.offsets), shape=(n, n)
        )

        def plus_times(rows=rows, rank=rank, backend=backend, n=n):
            return ops.spmv(backend, rows.offsets, rows.indices, None, rank, n)

        def min_plus(rows=rows, distance=distance, backend=backend):
            return ops.gather_reduce(
                backend, distance, rows.offsets, rows.indices, "min", weights=rows.weights
            )

        expected_sum, expected_min = plus_times(), min_plus()
        assert bool(cp.allclose(matrix @ rank, expected_sum, rtol=1e-12))
        cells = []
        for warp_row in WARP_ROWS:
            backend_module.WARP_ROW = warp_row
            assert bool(cp.allclose(plus_times(), expected_sum, rtol=1e-12))
            assert bool((min_plus() == expected_min).all())
            cells.append(
                f"{warp_row:2d}: sum {mean_ms(cp, plus_times):6.3f} "
                f"min {mean_ms(cp, min_plus):6.3f}"
            )
        backend_module.WARP_ROW = chosen
        cusparse = mean_ms(cp, lambda matrix=matrix, rank=rank: matrix @ rank)
        print(
            f"{name:<9} now {chosen:2d} | " + " | ".join(cells) + f" | cuSPARSE {cusparse:6.3f}",
            flush=True,
        )
        del graph, rows, matrix


if __name__ == "__main__":
    main()
