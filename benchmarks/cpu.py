"""CPU benchmark: bspgraph on NumPy against scipy.sparse.csgraph, python-graphblas and igraph.

    python -m benchmarks.cpu                          # rmat 18 and 20, a 1000x1000 grid
    python -m benchmarks.cpu --scale 16 --grid 200    # a quick run
    python -m benchmarks.cpu --algorithms bfs sssp    # a subset
    python -m benchmarks.cpu --impls bspgraph         # bspgraph only (before / after a change)
    python -m benchmarks.cpu --roads                  # luxembourg_osm and grid1000 (issue 54)

``--roads`` runs the high-diameter graphs (luxembourg_osm from ../shared/graphs, the 1000 x
1000 grid) against scipy and networkx (BFS, SSSP, CC; betweenness from 20 sources of
luxembourg_osm against networkx's ``betweenness_centrality_subset``, timed once) and prints
the issue's road targets.

Needs the ``bench`` extra (``pip install -e '.[bench]'``: python-graphblas, python-igraph).
One device, one process: bspgraph, scipy and igraph run single-threaded; SuiteSparse:GraphBLAS
runs pinned to one thread (the fair column) and again with ``--threads`` threads beside it.
Every answer is checked equal to bspgraph's (BFS depths, SSSP distances, CC labels, TC counts
exactly; PageRank and BC to 1e-9). Prints one row per (graph, algorithm): median ms over
``--repeat`` runs after one warm-up, of the whole call; then the targets of the issue.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import bspgraph as bg
import bspgraph.backend
from bspgraph.backend import ops
from bspgraph.enactor import enact
from bspgraph.primitives.bc import _rescale
from bspgraph.primitives.pagerank import PageRank
from bspgraph.primitives.power import teleport

from . import cpu_baselines as base

backend = bspgraph.backend.get_backend("numpy")
ALGORITHMS = ("bfs", "sssp", "cc", "pagerank", "bc", "tc")
IMPLS = ("bspgraph", "bsp-no-numba", "scipy", "numpy-push", "gb-1t", "gb-nt", "igraph", "networkx")
ROAD_IMPLS = ("bspgraph", "scipy", "networkx")
LUXEMBOURG = (
    Path(__file__).resolve().parents[2] / "shared" / "graphs" / "luxembourg_osm.headerless.txt"
)
# where bspgraph runs an optional numba kernel (frontier/_numba.py, primitives/_tc_numba.py)
ACCELERATED = ("bfs", "tc")


class FixedIterations(PageRank):
    """bspgraph's PageRank run for exactly ``iterations`` power iterations (no tolerance)."""

    def converged(self, graph, frontier, state, iteration):
        return iteration > self.options["iterations"]


def bsp_pagerank(graph, iterations: int):
    """``iterations`` of bspgraph's PageRank with what ``bg.pagerank`` passes without a
    personalization (the uniform teleport as the scalar 1 / n, as scipy's baseline adds it);
    (rank, stats)."""
    primitive = FixedIterations(alpha=0.85, tol=0.0, max_iter=iterations, iterations=iterations)
    state, stats = enact(primitive, graph, teleport=teleport(graph, None), backend="numpy")
    return state["rank"], stats


def timed(fn, repeat: int, before=None):
    """(median seconds, result of the warm-up run) of ``fn()``; ``before()`` runs untimed first."""
    if before:
        before()
    out = fn()
    times = []
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


class Run:
    """The rows of one benchmark run: ``(graph, algorithm) -> {impl: seconds}`` and notes."""

    def __init__(
        self, repeat: int, threads: int, impls=("bspgraph", "scipy", "numpy-push", "gb", "igraph")
    ):
        self.repeat, self.threads, self.impls = repeat, threads, tuple(impls)
        self.times: dict[tuple[str, str], dict[str, float]] = {}
        self.notes: dict[tuple[str, str], str] = {}

    def once(self, key, impl, fn, check):
        """Time one call of ``fn`` (no warm-up: a slow reference such as networkx's BC)."""
        if impl not in self.impls:
            return
        started = time.perf_counter()
        answer = fn()
        seconds = time.perf_counter() - started
        if not check(answer):
            raise AssertionError(f"{key[0]} {key[1]}: {impl} differs from bspgraph")
        self.times.setdefault(key, {})[impl] = seconds
        print(
            f"  {key[0]} {key[1]:<9} {impl:<10} {seconds * 1e3:10.1f} ms  (checked, once)",
            flush=True,
        )

    def measure(self, key, impl, fn, check, *, graphblas=False):
        """Time ``fn``; assert ``check(answer)``; GraphBLAS at 1 thread, then ``threads``;
        bspgraph also without its numba kernels where it has some."""
        if impl not in self.impls and not (graphblas and "gb" in self.impls):
            return
        variants = [("gb-1t", 1), ("gb-nt", self.threads)] if graphblas else [(impl, None)]
        accelerated = ops.accelerated(backend, "bspgraph.frontier._numba", "visit_push")
        if impl == "bspgraph" and key[1] in ACCELERATED and accelerated is not None:
            variants.append(("bsp-no-numba", None))
        for name, threads in variants:
            before = None
            if threads is not None:
                import graphblas as gb

                def before(threads=threads):
                    gb.ss.config["nthreads"] = threads

            bspgraph.backend.numpy_backend.ACCELERATE = name != "bsp-no-numba"
            try:
                seconds, answer = timed(fn, self.repeat, before)
            finally:
                bspgraph.backend.numpy_backend.ACCELERATE = True
            if not check(answer):
                raise AssertionError(f"{key[0]} {key[1]}: {name} differs from bspgraph")
            self.times.setdefault(key, {})[name] = seconds
            print(
                f"  {key[0]} {key[1]:<9} {name:<10} {seconds * 1e3:10.1f} ms  (checked)", flush=True
            )


def bench_graph(run: Run, name: str, graph, args, rng) -> None:
    n = graph.num_vertices
    degree = np.asarray(graph.out_degree())
    candidates = np.flatnonzero(degree > 0)
    source = int(rng.choice(candidates))
    sources = np.sort(
        rng.choice(candidates, size=min(args.sources, candidates.size), replace=False)
    )
    matrix = graph.to_scipy()
    graphblas = "gb" in run.impls  # the bench extra's libraries only where asked for
    gb_graph = base.gb_matrix(graph) if graphblas else None
    g = base.ig_graph(graph) if "igraph" in run.impls else None
    nxg = base.nx_graph(graph) if "networkx" in run.impls else None
    print(f"{name}: {n} vertices, {graph.num_edges} directed edges, source {source}", flush=True)
    todo = args.algorithms
    if graphblas:
        import graphblas as gb

        gb.ss.config["nthreads"] = 1

    if "bfs" in todo:
        key = (name, "bfs")
        r = bg.bfs(graph, source, backend="numpy")
        depth = r.depth
        run.notes[key] = f"{r.stats.iterations} levels, {r.stats.edges / 1e6:.1f} M edges"
        run.measure(
            key,
            "bspgraph",
            lambda: bg.bfs(graph, source, backend="numpy").depth,
            lambda d: np.array_equal(d, depth),
        )
        run.measure(
            key,
            "scipy",
            lambda: base.scipy_bfs(matrix, source),
            lambda out: base.check_tree(depth, out[1], source),
        )
        offsets, indices = np.asarray(graph.offsets), np.asarray(graph.indices)
        run.measure(
            key,
            "numpy-push",
            lambda: base.numpy_push_bfs(offsets, indices, source, n),
            lambda d: np.array_equal(d, depth),
        )
        run.measure(
            key,
            "gb",
            lambda: base.gb_bfs(gb_graph, source),
            lambda d: np.array_equal(d, depth),
            graphblas=True,
        )
        run.measure(
            key, "igraph", lambda: base.ig_bfs(g, source), lambda d: np.array_equal(d, depth)
        )
        run.once(
            key, "networkx", lambda: base.nx_bfs(nxg, source, n), lambda d: np.array_equal(d, depth)
        )

    if "sssp" in todo:
        key = (name, "sssp")
        r = bg.sssp(graph, source, backend="numpy")
        distance = r.distance.astype(np.float64)
        run.notes[key] = f"{r.stats.iterations} supersteps"
        same = lambda d: np.array_equal(np.asarray(d, dtype=np.float64), distance)  # noqa: E731
        run.measure(key, "bspgraph", lambda: bg.sssp(graph, source, backend="numpy").distance, same)
        run.measure(key, "scipy", lambda: base.scipy_sssp(matrix, source), same)
        run.measure(key, "gb", lambda: base.gb_sssp(gb_graph, source), same, graphblas=True)
        run.measure(key, "igraph", lambda: base.ig_sssp(g, source), same)
        run.once(key, "networkx", lambda: base.nx_sssp(nxg, source, n), same)

    if "cc" in todo:
        key = (name, "cc")
        r = bg.connected_components(graph, backend="numpy")
        labels = r.labels
        run.notes[key] = f"{len(np.unique(labels))} components, {r.stats.iterations} supersteps"
        same = lambda x: np.array_equal(x, labels)  # noqa: E731
        run.measure(
            key, "bspgraph", lambda: bg.connected_components(graph, backend="numpy").labels, same
        )
        run.measure(key, "scipy", lambda: base.smallest_id_labels(base.scipy_cc(matrix)), same)
        run.measure(key, "gb", lambda: base.gb_cc(gb_graph), same, graphblas=True)
        run.measure(key, "igraph", lambda: base.ig_cc(g), same)
        run.once(key, "networkx", lambda: base.nx_cc(nxg, n), same)

    if "pagerank" in todo:
        key, k = (name, "pagerank"), args.pr_iterations
        rank, stats = bsp_pagerank(graph, k)
        transposed, dangling = base.transition(matrix)
        x = np.full(n, 1.0 / n)
        steps, matvecs = [], []
        for _ in range(max(run.repeat, 3)):  # interleaved, so that both see the same machine
            stats = bsp_pagerank(graph, k)[1]
            steps.append(statistics.median(s.seconds for s in stats.supersteps[1:]))
            matvecs.append(timed(lambda: transposed @ x, 5)[0])
        step, matvec = statistics.median(steps), statistics.median(matvecs)
        ratio = statistics.median(a / b for a, b in zip(steps, matvecs))
        run.notes[key] = (
            f"{k} iterations; bsp superstep {step * 1e3:.1f} ms, scipy matvec "
            f"{matvec * 1e3:.1f} ms ({ratio:.2f}x)"
        )
        run.times.setdefault(key, {})["_step"] = step
        run.times[key]["_matvec"] = matvec
        run.times[key]["_ratio"] = ratio
        close = lambda r: np.allclose(r, rank, rtol=1e-9, atol=1e-15)  # noqa: E731
        run.measure(key, "bspgraph", lambda: bsp_pagerank(graph, k)[0], close)
        run.measure(key, "scipy", lambda: base.scipy_pagerank(transposed, dangling, k), close)
        gb_p, gb_dangling = base.gb_transition(gb_graph) if graphblas else (None, None)
        run.measure(
            key, "gb", lambda: base.gb_pagerank(gb_p, gb_dangling, k), close, graphblas=True
        )
        converged = bg.pagerank(graph, tol=1e-15, max_iter=1000, backend="numpy").rank
        run.measure(
            key,
            "igraph",
            lambda: base.ig_pagerank(g),  # PRPACK: solved, not iterated
            lambda r: np.abs(r - converged).sum() < 1e-6,
        )

    if "bc" in todo and not name.startswith("grid"):  # a grid's path counts overflow float64
        key, listed = (name, "bc"), sources.tolist()
        centrality = bg.betweenness_centrality(graph, listed, backend="numpy").centrality
        run.notes[key] = f"{len(listed)} sources"

        def close(raw):
            scaled = _rescale(
                raw, n, len(listed), listed, normalized=True, directed=False, endpoints=False
            )
            return np.allclose(scaled, centrality, rtol=1e-9, atol=1e-15)

        run.measure(
            key,
            "bspgraph",
            lambda: bg.betweenness_centrality(graph, listed, backend="numpy").centrality,
            lambda c: np.allclose(c, centrality, rtol=1e-9, atol=1e-15),
        )
        run.measure(key, "gb", lambda: base.gb_bc(gb_graph, sources), close, graphblas=True)
        run.measure(key, "igraph", lambda: base.ig_bc(g, listed), close)
        run.once(key, "networkx", lambda: base.nx_bc(nxg, listed), close)

    if "tc" in todo and (not name.startswith("rmat") or int(name[4:]) <= args.tc_max_scale):
        key = (name, "tc")
        r = bg.triangle_count(graph, backend="numpy")
        run.notes[key] = f"{r.total} triangles"
        run.measure(
            key,
            "bspgraph",
            lambda: bg.triangle_count(graph, backend="numpy").per_vertex,
            lambda p: np.array_equal(p, r.per_vertex),
        )
        run.measure(key, "gb", lambda: base.gb_tc(gb_graph), lambda t: t == r.total, graphblas=True)
        run.measure(key, "igraph", lambda: base.ig_tc(g), lambda p: np.array_equal(p, r.per_vertex))


def targets(run: Run) -> list[tuple[str, str, float, float, str]]:
    """The issue's targets that this run measured: (graph, algorithm, ms, limit ms, limit)."""
    out = []

    def add(key, impl, limit_ms, text):
        row = run.times.get(key)
        if row and impl in row:
            out.append((*key, row[impl] * 1e3, limit_ms, text))

    rmat20, rmat18, grid = ("rmat20", "bfs"), ("rmat18", "tc"), ("grid1000", "bfs")
    add(rmat20, "bspgraph", 120.0, "120 ms")
    if ("luxembourg_osm", "bc") not in run.times:  # (the rmat/grid run's, not --roads')
        add(grid, "bspgraph", 90.0, "90 ms")
    for algorithm, against in (("sssp", "scipy"), ("cc", "scipy"), ("bc", "gb-1t")):
        row = run.times.get(("rmat20", algorithm), {})
        if against in row:
            add(("rmat20", algorithm), "bspgraph", row[against] * 1e3, against)
    row = run.times.get(("rmat18", "tc"), {})
    if "gb-1t" in row:
        add(rmat18, "bspgraph", row["gb-1t"] * 1e3, "gb-1t")
    road = ("luxembourg_osm", "bc")
    add(road, "bspgraph", 3300.0, "3.3 s (networkx / 3)")
    if "networkx" in run.times.get(road, {}):
        add(road, "bspgraph", run.times[road]["networkx"] * 1e3 / 3, "networkx / 3")
    for graph, algorithms in (
        ("grid1000", ("sssp", "cc")),
        ("luxembourg_osm", ("sssp", "cc", "bfs")),
    ):
        for algorithm in algorithms:
            row = run.times.get((graph, algorithm), {})
            if "scipy" in row:
                add((graph, algorithm), "bspgraph", row["scipy"] * 1e3, "scipy")
    row = run.times.get(("grid1000", "pagerank"), {})
    if "scipy" in row:  # the same algorithm (networkx's L1 change each iteration), whole
        add(("grid1000", "pagerank"), "bspgraph", row["scipy"] * 1e3, "scipy, same iterations")
    if "_step" in row:
        out.append(
            (
                "grid1000",
                "pagerank iteration",
                row["_ratio"] * row["_matvec"] * 1e3,
                1.3 * row["_matvec"] * 1e3,
                "1.3x scipy matvec",
            )
        )
    row = run.times.get(("rmat20", "pagerank"), {})
    if "_step" in row:  # judged by the median of per-run ratios (interleaved runs)
        out.append(
            (
                "rmat20",
                "pagerank iteration",
                row["_ratio"] * row["_matvec"] * 1e3,
                1.2 * row["_matvec"] * 1e3,
                "1.2x scipy matvec",
            )
        )
    return out


def print_table(run: Run) -> None:
    def cell(row, impl):
        return f"{row[impl] * 1e3:,.1f}" if impl in row else "-"

    threads = f"gb-{run.threads}t"
    print(
        "\nms: median of the whole call; gb-1t: GraphBLAS on 1 thread, "
        f"{threads}: on {run.threads}; bsp-no-numba: bspgraph with BSPGRAPH_NUMBA=0; every "
        "answer checked equal to bspgraph's"
    )
    heads = ["graph", "algorithm", *[threads if i == "gb-nt" else i for i in IMPLS], "notes"]
    print("| " + " | ".join(heads) + " |")
    print("|" + "---|" * 2 + "---:|" * len(IMPLS) + "---|")
    for (graph, algorithm), row in run.times.items():
        cells = [cell(row, impl) for impl in IMPLS]
        print(
            f"| {graph} | {algorithm} | "
            + " | ".join(cells)
            + f" | {run.notes.get((graph, algorithm), '')} |"
        )
    rows = targets(run)
    if rows:
        print("\n| target | bspgraph ms | limit ms | limit | met |")
        print("|---|---:|---:|---|---|")
        for graph, algorithm, ms, limit, text in rows:
            verdict = "yes" if ms <= limit else f"no ({ms / limit:.2f}x)"
            print(f"| {graph} {algorithm} | {ms:,.1f} | {limit:,.1f} | {text} | {verdict} |")


def header(command: str) -> str:
    """``# <machine>, <date>, commit <hash>: <command>``: what benchmarks.results reads."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    machine = f"{platform.machine()} {os.cpu_count()} cores, NumPy {np.__version__}"
    return f"# {machine}, {datetime.date.today()}, commit {commit}: {command}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, nargs="*", default=[18, 20])
    parser.add_argument("--edge-factor", type=int, default=16)
    parser.add_argument("--grid", type=int, default=1000, help="side of the grid (0: none)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="GraphBLAS threads, 2nd column")
    parser.add_argument("--sources", type=int, default=8, help="BC sources")
    parser.add_argument("--pr-iterations", type=int, default=20)
    parser.add_argument("--tc-max-scale", type=int, default=18, help="largest rmat for TC")
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    parser.add_argument(
        "--impls",
        nargs="+",
        default=["bspgraph", "scipy", "numpy-push", "gb", "igraph"],
        help="implementations to time (gb: GraphBLAS at 1 and --threads threads)",
    )
    parser.add_argument(
        "--roads",
        action="store_true",
        help="luxembourg_osm and grid1000 against scipy and networkx",
    )
    args = parser.parse_args(argv)
    if args.roads:
        args.scale, args.grid, args.sources = [], 1000, 20
        args.algorithms = [a for a in args.algorithms if a != "tc"]
        if args.impls == parser.get_default("impls"):
            args.impls = list(ROAD_IMPLS)
        print(
            header(
                "python -m benchmarks.cpu " + " ".join(argv if argv is not None else sys.argv[1:])
            )
        )
    run = Run(args.repeat, args.threads, args.impls)
    graphs = [
        (
            f"rmat{s}",
            lambda s=s: bg.generators.rmat(
                s, args.edge_factor, seed=1, weights=True, backend="numpy"
            ),
        )
        for s in args.scale
    ]
    if args.roads:
        graphs.append(
            (
                "luxembourg_osm",
                lambda: bg.read_edgelist(LUXEMBOURG, base=1, directed=False, backend="numpy"),
            )
        )
    if args.grid:
        graphs.append(
            (
                f"grid{args.grid}",
                lambda: bg.generators.grid(
                    args.grid, args.grid, weights=True, seed=1, backend="numpy"
                ),
            )
        )
    for name, build in graphs:
        started = time.perf_counter()
        graph = build()
        print(f"{name}: built in {time.perf_counter() - started:.1f} s", flush=True)
        bench_graph(run, name, graph, args, np.random.default_rng(1))
        del graph
    print_table(run)


if __name__ == "__main__":
    main()
