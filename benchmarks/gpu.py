"""GPU harness: each primitive on CuPy beside the same algorithm written plainly with cupyx.

    python -m benchmarks.gpu --scale 22 24 --grid 4096
    python -m benchmarks.gpu --scale 0 --grid 4096 --algorithms pagerank --prepare

R-MAT graphs (Graph500, edge factor 16, integer weights 1..64) and a rows x rows grid are built
on the GPU. For each (graph, algorithm) it checks that both answers agree and prints: ms of the
whole bspgraph call (result copied to the host) and of its BSP loop alone (stats.seconds), GTEPS
of each (edges of reached vertices / time), the baseline's ms and the speed-up over it, and the
peak of CuPy's memory pool. The table is printed last. Times are medians of ``--repeat`` calls
after a warm-up; after a warm-up of more than 10 s (the TC baselines) one call is timed.
With ``--prepare`` each graph is prepared first (``Graph.prepare(algorithms)``, timed); the
table gives whole call / loop and, for the first (warm-up) call, its prepare and compile ms
(``Stats.prepare_seconds``, ``compile_seconds``: what it paid once, outside its loop).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import bspgraph as bg
from bspgraph.backend import get_backend, to_host

cp = None  # cupy, set in main() through the backend seam
sparse = None  # cupyx.scipy.sparse


RUN: dict = {}  # keyword arguments of every bspgraph call (--result-device)


def timed(fn, repeat: int):
    """Median seconds of ``repeat`` calls after a warm-up (one call when the warm-up took more
    than LONG_CALL seconds), the last result, the memory pool's bytes, and the median of the
    results' BSP loops (``stats.seconds``; None for a baseline) and the warm-up's stats (None
    for a baseline). The warm-up is never timed:
    on a fresh machine it compiles every kernel (22.6 s for BC on rmat22)."""
    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    out = fn()  # warm-up: kernel compilation, allocator pools
    cp.cuda.Device().synchronize()
    first = getattr(out, "stats", None)
    if time.perf_counter() - start > LONG_CALL:
        repeat = 1
    cp.get_default_memory_pool().free_all_blocks()
    times, loops = [], []
    for _ in range(repeat):
        cp.cuda.Device().synchronize()
        start = time.perf_counter()
        out = fn()
        cp.cuda.Device().synchronize()
        times.append(time.perf_counter() - start)
        if hasattr(out, "stats"):
            loops.append(out.stats.seconds)
    loop = statistics.median(loops) if loops else None
    return statistics.median(times), out, cp.get_default_memory_pool().total_bytes(), loop, first


LONG_CALL = 10.0  # seconds: a warm-up this long is followed by one timed call, not ``repeat``


# ---- plain cupyx baselines --------------------------------------------------------------------
def adjacency(graph, values=None):
    n = graph.num_vertices
    data = cp.ones(graph.num_edges, cp.float32) if values is None else values
    return sparse.csr_matrix((data, graph.indices, graph.offsets), shape=(n, n))


def plain_bfs(graph, source, pull_matrix):
    """One masked SpMV per level."""
    depth = cp.full(graph.num_vertices, -1, dtype=cp.int32)
    depth[source] = 0
    frontier = cp.zeros(graph.num_vertices, dtype=cp.float32)
    frontier[source] = 1
    level = 0
    while True:
        reached = (pull_matrix @ frontier > 0) & (depth < 0)
        level += 1
        if not bool(reached.any()):
            return depth
        depth[reached] = level
        frontier = reached.astype(cp.float32)


def plain_sssp(graph, source):
    """Frontier Bellman-Ford with a scatter-min."""
    offsets, indices, weights = graph.offsets, graph.indices, graph.weights
    distance = cp.full(graph.num_vertices, cp.inf, dtype=weights.dtype)
    distance[source] = 0
    frontier = cp.asarray([source], dtype=indices.dtype)
    while frontier.size:
        starts = offsets[frontier].astype(cp.int64)
        degrees = offsets[frontier + 1] - starts
        scan = cp.cumsum(degrees)
        slots = cp.arange(int(scan[-1]), dtype=cp.int64)
        owner = cp.searchsorted(scan, slots, side="right")
        edge = starts[owner] + (slots - (scan - degrees)[owner])
        candidate = distance[frontier][owner] + weights[edge]
        dst = indices[edge]
        improved = candidate < distance[dst]
        cp.minimum.at(distance, dst[improved], candidate[improved])
        frontier = cp.unique(dst[improved])
    return distance


PAGERANK_TOL = 1e-10  # per vertex, as networkx: small enough for tens of iterations


def plain_pagerank(graph, alpha=0.85, tol=PAGERANK_TOL):
    """Power iteration with a cupyx SpMV (weights normalised per source, as networkx)."""
    n = graph.num_vertices
    weights = graph.weights.astype(cp.float64)
    out_weight = cp.asarray(adjacency(graph, weights).sum(axis=1)).ravel()
    inverse = cp.where(out_weight > 0, 1 / cp.where(out_weight > 0, out_weight, 1), 0)
    rows = cp.searchsorted(graph.offsets, cp.arange(graph.num_edges), side="right") - 1
    pull = adjacency(graph, weights * inverse[rows]).T.tocsr()
    dangling = out_weight == 0
    rank = cp.full(n, 1.0 / n)
    ended = [time.perf_counter()]  # each iteration ends with a host read: no extra sync
    for _ in range(100):
        new = alpha * (pull @ rank + rank[dangling].sum() / n) + (1 - alpha) / n
        error = float(cp.abs(new - rank).sum())
        rank = new
        ended.append(time.perf_counter())
        if error < n * tol:
            break
    return rank, len(ended) - 1, statistics.median(np.diff(ended))


def plain_cc(graph):
    """Min-label propagation with one pointer jump per round."""
    src = cp.searchsorted(graph.offsets, cp.arange(graph.num_edges), side="right") - 1
    dst = graph.indices
    labels = cp.arange(graph.num_vertices, dtype=dst.dtype)
    while True:
        new = labels.copy()
        cp.minimum.at(new, dst, labels[src])
        new = new[new]
        if bool((new == labels).all()):
            return labels
        labels = new


def plain_bc(graph, source, matrix):
    """Brandes from one source: an SpMV per level forward (sigma) and backward (delta)."""
    n = graph.num_vertices
    depth = cp.full(n, -1, dtype=cp.int32)
    sigma = cp.zeros(n)
    depth[source], sigma[source] = 0, 1.0
    level = 0
    while True:
        paths = matrix.T @ cp.where(depth == level, sigma, 0)
        new = (paths > 0) & (depth < 0)
        if not bool(new.any()):
            break
        depth[new], sigma[new] = level + 1, paths[new]
        level += 1
    delta = cp.zeros(n)
    for d in range(level, 0, -1):
        share = matrix @ cp.where(depth == d, (1 + delta) / cp.where(sigma > 0, sigma, 1), 0)
        parents = depth == d - 1
        delta[parents] = sigma[parents] * share[parents]
    delta[source] = 0
    return delta


def plain_tc(graph, block_products: int = 1 << 24):
    """Masked SpGEMM: the sum of (L @ L.T) .* L, L the strictly lower triangle after relabelling
    the vertices by degree, over blocks of L's rows that make at most ``block_products``
    products each; a block that cuSPARSE refuses is halved until it takes it. (In one piece,
    cuSPARSE's int32 indices overflowed: the product by id order on rmat20 has 1.2e10 entries,
    and the degree-ordered one gave 0 on rmat 20-22 without an error on 2026-11-22. On
    2026-11-23 the first block, the lowest-degree rows, failed with
    CUSPARSE_STATUS_INSUFFICIENT_RESOURCES on rmat18-22 at 2^20 to 2^24 products a block,
    and every other block ran.) The mask is applied by looking L's entries up in each
    block's product."""
    n = graph.num_vertices
    rank = cp.empty(n, dtype=cp.int64)
    rank[cp.argsort(cp.diff(graph.offsets))] = cp.arange(n)
    rows = cp.searchsorted(graph.offsets, cp.arange(graph.num_edges), side="right") - 1
    row, column = rank[rows], rank[graph.indices]
    below = row > column
    lower = sparse.csr_matrix(
        (cp.ones(int(below.sum())), (row[below], column[below])), shape=(n, n)
    )  # float64: exact sums
    upper = lower.T.tocsr()
    products = cp.cumsum(lower @ cp.diff(upper.indptr).astype(cp.float64))  # up to each row

    def closed(lo, hi) -> float:  # the triangles closed in rows lo..hi - 1
        block = lower[lo:hi]
        try:
            product = (block @ upper).tocoo()
        except RuntimeError:  # cuSPARSE's INSUFFICIENT_RESOURCES
            if hi - lo == 1:
                raise
            return closed(lo, (lo + hi) // 2) + closed((lo + hi) // 2, hi)
        found = product.row.astype(cp.int64) * n + product.col
        order = cp.argsort(found)
        found, counts = found[order], product.data[order]
        entries = block.tocoo()
        wanted = entries.row.astype(cp.int64) * n + entries.col
        where = cp.minimum(cp.searchsorted(found, wanted), max(found.size - 1, 0))
        return float(counts[where][found[where] == wanted].sum()) if found.size else 0.0

    marks = cp.arange(block_products, float(products[-1]), block_products)
    cuts = [0, *(int(c) for c in cp.searchsorted(products, marks)), n]
    return int(round(sum(closed(lo, hi) for lo, hi in zip(cuts, cuts[1:]) if hi > lo)))


# ---- the harness ------------------------------------------------------------------------------
def run_graph(name, graph, repeat, rows, algorithms, levels=False):
    n = graph.num_vertices
    degree = to_host(graph.out_degree())
    source = int(np.argmax(degree))
    matrix = adjacency(graph)
    pull = matrix.T.tocsr()
    print(f"{name}: {n} vertices, {graph.num_edges} directed edges, source {source}", flush=True)

    def record(algorithm, ours, base, agree, note=""):
        (t, result, peak, loop, first), (base_t, base_out, *_) = ours, base
        assert agree(result, base_out), f"{name} {algorithm}: bspgraph and baseline disagree"
        rows.append((name, algorithm, t, result.stats, loop, base_t, peak, note, first))
        print(
            f"  {algorithm}: {t * 1e3:.2f} ms (bsp {loop * 1e3:.2f} ms, {t / loop:.2f}x), "
            f"baseline {base_t * 1e3:.2f} ms {note}",
            flush=True,
        )
        print(
            f"    first call: prepare {first.prepare_seconds * 1e3:.2f} ms, compile "
            f"{first.compile_seconds * 1e3:.2f} ms, setup {first.setup_seconds * 1e3:.2f} ms, "
            f"gather {first.gather_seconds * 1e3:.2f} ms; timed call: prepare "
            f"{result.stats.prepare_seconds * 1e3:.2f} ms, setup "
            f"{result.stats.setup_seconds * 1e3:.2f}, gather "
            f"{result.stats.gather_seconds * 1e3:.2f}; backend {result.stats.backend} "
            f"({result.stats.backend_reason})",
            flush=True,
        )
        if levels:  # the last run's supersteps: output frontier size and ms
            print(
                "    "
                + " ".join(
                    f"{s.frontier}:{s.seconds * 1e3:.3f}" for s in result.stats.supersteps[:64]
                ),
                flush=True,
            )

    if "bfs" in algorithms:
        base = timed(lambda: plain_bfs(graph, source, pull), repeat)
        for direction in ("push", "auto"):
            ours = timed(lambda d=direction: bg.bfs(graph, source, direction=d, **RUN), repeat)
            record(
                f"bfs-{direction}", ours, base, lambda r, b: (to_host(r.depth) == to_host(b)).all()
            )
    if "sssp" in algorithms:
        base = timed(lambda: plain_sssp(graph, source), repeat)
        ours = timed(lambda: bg.sssp(graph, source, **RUN), repeat)
        record("sssp", ours, base, lambda r, b: np.array_equal(to_host(r.distance), to_host(b)))
    if "pagerank" in algorithms:
        base = timed(lambda: plain_pagerank(graph), repeat)
        ours = timed(lambda: bg.pagerank(graph, tol=PAGERANK_TOL, **RUN), repeat)
        iterations, base_iteration = base[1][1:]
        # one iteration: the median superstep after the first (which only publishes the start
        # vector), against the median of the baseline's loop bodies; both end with a host read
        iteration = statistics.median(s.seconds for s in ours[1].stats.supersteps[1:])
        # the bytes an iteration must move: the in-edge lists and their weights once, offsets,
        # and the contribution read, the rank read and written once each (float64)
        weights = 0 if graph.weights is None else graph.weights.nbytes
        compulsory = graph.indices.nbytes + weights + graph.offsets.nbytes + 3 * 8 * n
        record(
            "pagerank",
            ours,
            base,
            lambda r, b: np.allclose(to_host(r.rank), to_host(b[0]), atol=1e-9),
            f"(baseline {iterations} iterations; one iteration: {iteration * 1e3:.3f} vs "
            f"{base_iteration * 1e3:.3f} ms, {base_iteration / iteration:.2f}x; compulsory "
            f"bytes at {compulsory / iteration / 1e9:.0f} GB/s)",
        )
    if "cc" in algorithms:
        base = timed(lambda: plain_cc(graph), repeat)
        ours = timed(lambda: bg.connected_components(graph, **RUN), repeat)
        record("cc", ours, base, lambda r, b: np.array_equal(to_host(r.labels), to_host(b)))
    if "bc" in algorithms:
        base = timed(lambda: plain_bc(graph, source, matrix), repeat)
        ours = timed(
            lambda: bg.betweenness_centrality(graph, [source], normalized=False, **RUN), repeat
        )
        # networkx's scaling of one sampled source, normalized=False: (n - 1) / 2 (undirected)
        scale = (n - 1) / (1 if graph.directed else 2)
        record(
            "bc-1src",
            ours,
            base,
            lambda r, b: np.allclose(
                np.delete(to_host(r.centrality) / scale, source),
                np.delete(to_host(b), source),
                rtol=1e-9,
            ),
        )
    if "tc" in algorithms:
        try:
            base, failure = timed(lambda: plain_tc(graph), repeat), ""
        except (cp.cuda.memory.OutOfMemoryError, RuntimeError) as error:  # cuSPARSE's too
            base, failure = (float("nan"), None, 0, None, None), f"(baseline failed: {error})"
        ours = timed(lambda: bg.triangle_count(graph, **RUN), repeat)
        record(
            "tc",
            ours,
            base,
            lambda r, b: b is None or r.total == b,
            f"({ours[1].total} triangles) {failure}",
        )


def prepared(graph, args):
    """``graph``, prepared for the algorithms run when ``--prepare`` is given (time printed)."""
    if args.prepare:
        cp.cuda.Device().synchronize()
        start = time.perf_counter()
        graph.prepare(
            [a for a in args.algorithms if a in ("bfs", "sssp", "pagerank", "cc", "bc", "tc")]
        )
        cp.cuda.Device().synchronize()
        print(f"Graph.prepare: {(time.perf_counter() - start) * 1e3:.1f} ms", flush=True)
    return graph


def copy_bandwidth() -> float:
    """Bytes read + written per second by a 1 GiB device-to-device copy."""
    a = cp.ones(1 << 28, dtype=cp.float32)
    b = cp.empty_like(a)
    seconds, *_ = timed(lambda: cp.copyto(b, a), 5)
    return 2 * a.nbytes / seconds


def main(argv=None) -> None:
    global cp, sparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, nargs="*", default=[20])
    parser.add_argument("--grid", type=int, nargs="*", default=[])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--levels",
        action="store_true",
        help="print each run's supersteps (frontier size:ms, the first 64)",
    )
    parser.add_argument(
        "--algorithms", nargs="+", default=["bfs", "sssp", "pagerank", "cc", "bc", "tc"]
    )
    parser.add_argument(
        "--result-device",
        action="store_true",
        help="keep results on the GPU (result_device=True): the whole call "
        "without the copy to the host",
    )
    parser.add_argument(
        "--prepare",
        action="store_true",
        help="Graph.prepare(algorithms) each graph before its calls (timed)",
    )
    parser.add_argument(
        "--cpu",
        type=int,
        default=None,
        help="pin this process to one CPU core (the host work of a small "
        "superstep is most of its time: it then does not migrate)",
    )
    args = parser.parse_args(argv)
    if args.result_device:
        RUN["result_device"] = True
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    cp = get_backend("cupy").xp
    import cupyx.scipy.sparse

    sparse = cupyx.scipy.sparse
    bandwidth = copy_bandwidth()
    print(
        f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}: "
        f"copy {bandwidth / 1e12:.2f} TB/s",
        flush=True,
    )
    rows = []
    for scale in (s for s in args.scale if s > 0):  # --scale 0: grids only
        graph = prepared(bg.generators.rmat(scale, 16, seed=1, weights=True, backend="cupy"), args)
        run_graph(f"rmat{scale}", graph, args.repeat, rows, args.algorithms, args.levels)
        del graph
    for size in args.grid:
        graph = prepared(bg.generators.grid(size, size, weights=True, backend="cupy"), args)
        # no TC (a grid has no triangles) and no BC: a grid's path counts overflow float64
        # (PathCountOverflow from a corner past about 515 x 515, from anywhere past about 1,030)
        run_graph(
            f"grid{size}",
            graph,
            args.repeat,
            rows,
            [a for a in args.algorithms if a not in ("tc", "bc")],
        )
    where = "on the device" if RUN else "on the host"
    print(
        f"\nms: whole call, result {where}; bsp ms: the BSP loop (stats.seconds); "
        "each the median of the timed calls"
    )
    print(
        "whole/bsp: the whole call over its loop; 1st prep/comp ms: the first (warm-up) "
        "call's prepare_seconds and compile_seconds"
    )
    print(
        f"{'graph':<9} {'algorithm':<9} {'ms':>9} {'GTEPS':>7} {'bsp ms':>9} {'GTEPS':>7} "
        f"{'whole/bsp':>9} {'1st prep':>8} {'1st comp':>8} "
        f"{'steps':>6} {'base ms':>9} {'speed-up':>8} {'peak GB':>7}"
    )
    for name, algorithm, seconds, stats, loop, base, peak, note, first in rows:
        print(
            f"{name:<9} {algorithm:<9} {seconds * 1e3:9.2f} {stats.edges / seconds / 1e9:7.2f} "
            f"{loop * 1e3:9.2f} {stats.edges / loop / 1e9:7.2f} {seconds / loop:8.2f}x "
            f"{first.prepare_seconds * 1e3:8.2f} {first.compile_seconds * 1e3:8.2f} "
            f"{stats.iterations:6d} "
            f"{base * 1e3:9.2f} {base / seconds:7.2f}x {peak / 1e9:7.2f} {note}"
        )


if __name__ == "__main__":
    main()
