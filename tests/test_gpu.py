"""CuPy answers equal NumPy answers on R-MAT graphs (run on a GPU: pytest -m gpu)."""

import contextlib
import os

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import as_array, examples, graphs

import bspgraph as bg
from bspgraph import frontier as fr
from bspgraph.backend import ops, to_host
from bspgraph.enactor import solo
from bspgraph.frontier import count_out_edges
from bspgraph.graph.context import RunContext
from bspgraph.primitives._bc_kernels import count_paths

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module", params=[16, 20])
def rmat_pair(request):
    graph = bg.generators.rmat(request.param, 16, seed=3, weights=True, backend="cupy")
    return graph, graph.to("numpy")


@pytest.mark.parametrize("direction", ["push", "pull", "auto"])
def test_bfs_cupy_equals_numpy(rmat_pair, direction):
    gpu, cpu = rmat_pair
    source = int(np.argmax(np.diff(cpu.offsets)))
    expected = bg.bfs(cpu, source, direction=direction, backend="numpy")
    result = bg.bfs(gpu, source, direction=direction, parents=True, backend="cupy")
    np.testing.assert_array_equal(result.depth, expected.depth)
    assert result.stats.edges == expected.stats.edges  # counted by the kernels: NumPy's pass
    tree = result.depth > 0
    src, dst = result.parent[tree], np.flatnonzero(tree)
    assert (result.depth[src] == result.depth[dst] - 1).all()
    assert cpu.to_scipy()[src, dst].all()


def _broom(handle: int, leaves: int, tail: int, weight=None):
    """A path of ``handle`` vertices, its last joined to ``leaves`` leaves, the last leaf
    starting a path of ``tail`` more (undirected; ``weight(count)`` gives edge weights)."""
    path = np.arange(handle - 1)
    hub, first = handle - 1, handle
    leaf = np.arange(first, first + leaves)
    rest = np.arange(first + leaves - 1, first + leaves + tail - 1)
    src = np.concatenate([path, np.full(leaves, hub), rest])
    dst = np.concatenate([path + 1, leaf, rest + 1])
    weights = None if weight is None else weight(src.size)
    return bg.Graph.from_edges(src, dst, weights, directed=False, backend="cupy")


@pytest.mark.parametrize("shape", ["grid", "path", "broom"])
def test_sssp_levels_in_one_launch_equal_numpy(shape):
    """Bellman-Ford rounds of small frontiers in one launch (relax_levels): NumPy's distances,
    weighted, over more rounds than a launch takes and through a hub."""
    rng = np.random.default_rng(5)

    def weight(count):
        return rng.integers(1, 64, count).astype(np.float32)

    n = 2600
    gpu = {
        "grid": lambda: bg.generators.grid(120, 90, weights=True, backend="cupy"),
        "path": lambda: bg.Graph.from_edges(
            np.arange(n - 1), np.arange(1, n), weight(n - 1), backend="cupy"
        ),
        "broom": lambda: _broom(50, 40_000, 100, weight),
    }[shape]()
    result = bg.sssp(gpu, 0)
    np.testing.assert_array_equal(result.distance, bg.sssp(gpu.to("numpy"), 0).distance)
    if shape == "path":
        assert result.stats.iterations == n


@pytest.mark.parametrize("shape", ["grid", "path", "broom"])
@pytest.mark.parametrize("direction", ["push", "auto"])
def test_bfs_levels_in_one_launch_equal_numpy(shape, direction):
    """Small frontiers run many levels in one launch (visit_levels): the depths, valid parents
    and every level's frontier size are NumPy's, over more levels than a launch takes (a path
    of 2,600), through a hub (a warp reads its row), and when a frontier outgrows the kernel
    midway (a broom's 40,000 leaves)."""
    from bspgraph.frontier.kernels import LEVEL_VERTICES, MAX_LEVELS

    gpu = {
        "grid": lambda: bg.generators.grid(300, 200, backend="cupy"),
        "path": lambda: bg.Graph.from_edges(np.arange(2599), np.arange(1, 2600), backend="cupy"),
        "broom": lambda: _broom(50, 40_000, 100),
    }[shape]()
    cpu = gpu.to("numpy")
    result = bg.bfs(gpu, 0, direction=direction, parents=True)
    expected = bg.bfs(cpu, 0, direction=direction)
    np.testing.assert_array_equal(result.depth, expected.depth)
    sizes = [s.frontier for s in result.stats.supersteps]
    assert sizes == [s.frontier for s in expected.stats.supersteps]
    reached_edges = int(np.diff(cpu.offsets)[expected.depth >= 0].sum())
    assert result.stats.edges == expected.stats.edges == reached_edges  # levels' edges too
    assert result.stats.iterations == expected.stats.iterations
    if shape == "path":
        assert result.stats.iterations > 2 * MAX_LEVELS
    if shape == "broom":
        assert max(sizes) > LEVEL_VERTICES
    reached = result.depth > 0
    child, parent = np.flatnonzero(reached), result.parent[reached]
    assert (result.depth[parent] == result.depth[child] - 1).all()
    assert cpu.to_scipy()[parent, child].all()


def test_sssp_cupy_equals_numpy(rmat_pair):
    gpu, cpu = rmat_pair
    source = int(np.argmax(np.diff(cpu.offsets)))
    expected = bg.sssp(cpu, source, backend="numpy").distance
    np.testing.assert_array_equal(bg.sssp(gpu, source, backend="cupy").distance, expected)


def test_a_push_whose_frontier_undercounts_its_out_edges_says_so(rmat_pair):
    """A push kernel's list has room for the frontier's out-edges: told too few, it writes no
    further and reading its count raises, never a list cut short."""
    from bspgraph.exceptions import FrontierError

    gpu, _ = rmat_pair
    hub = int(gpu.xp.argmax(gpu.out_degree()))
    frontier = fr.Frontier.from_ids(gpu, gpu.xp.asarray([hub]), out_edges=2)
    depth = gpu.xp.full(gpu.num_vertices, np.iinfo(np.int32).max, dtype=np.int32)
    with pytest.raises(FrontierError, match="its list had room for 2"):
        len(fr.advance(gpu, frontier, fr.functors.visit_unvisited(depth, 1), direction="push"))


@pytest.mark.parametrize("every", [7, 997])  # visit_push with its bitmap (7) and without
@pytest.mark.parametrize(
    "name, direction",
    [
        ("visit_unvisited", "push"),
        ("visit_unvisited", "pull"),
        ("relax_min", "push"),
        ("relax_min", "pull"),
        ("count_paths", "push"),
    ],
)
@pytest.mark.parametrize("counted", [False, True])  # a push's list: room for V, or out-edges
def test_fused_kernels_equal_generic_functors(rmat_pair, name, direction, every, counted):
    gpu, _ = rmat_pair
    xp = gpu.xp
    frontier = fr.Frontier.from_ids(gpu, xp.arange(0, gpu.num_vertices, every))
    if counted:
        count_out_edges(gpu, frontier)  # (kept as frontier.out_edges)
    results = []
    for fused in (True, False):
        extra = xp.zeros(0)
        if name == "visit_unvisited":
            state = xp.full(gpu.num_vertices, np.iinfo(np.int32).max, dtype=np.int32)
            functor = fr.functors.visit_unvisited(state, 1)
        elif name == "count_paths":  # whole-number path counts: every order sums them alike
            state = xp.full(gpu.num_vertices, np.iinfo(np.int32).max, dtype=np.int32)
            state[frontier.ids] = 0
            extra = xp.zeros(gpu.num_vertices)
            extra[frontier.ids] = xp.arange(frontier.ids.size) % 7 + 1.0
            functor = count_paths(state, extra, 1, gpu.backend)
        else:
            state = xp.full(gpu.num_vertices, np.inf, dtype=np.float32)
            state[frontier.ids] = 0  # sources keep their distance: both orders relax alike
            functor = fr.functors.relax_min(state, gpu.backend)
        op = functor if fused else (lambda *edge, f=functor: f(*edge))  # hides fused_push
        candidates = state > 1 if direction == "pull" else None
        out = fr.advance(
            gpu,
            frontier,
            op,
            unique=True,
            direction=direction,
            candidates=candidates,
            early_exit=functor.early_exit,
        )
        ids = out.ids.get()
        assert len(out) == ids.size  # a count the kernel tallied, when it did
        if out.out_edges is not None:
            assert out.out_edges == int(np.diff(gpu.offsets.get())[ids].sum())
        results.append((np.sort(ids), state.get(), extra.get()))
    for got, expected in zip(*results):
        np.testing.assert_array_equal(got, expected)


@pytest.fixture(scope="module")
def rmat18():
    graph = bg.generators.rmat(18, 16, seed=5, weights=True, backend="cupy")
    return graph, graph.to("numpy")


def test_connected_components_cupy_equals_numpy(rmat18):
    gpu, cpu = rmat18
    np.testing.assert_array_equal(
        bg.connected_components(gpu, backend="cupy").labels,
        bg.connected_components(cpu, backend="numpy").labels,
    )


def test_pagerank_cupy_equals_numpy(rmat18):
    gpu, cpu = rmat18
    np.testing.assert_allclose(
        bg.pagerank(gpu, backend="cupy").rank, bg.pagerank(cpu, backend="numpy").rank, rtol=1e-9
    )


def test_wide_levels_on_short_lists_equal_numpy(rmat18):
    """A grid's lists are short: its repeated advances take frontiers wider than
    LEVEL_VERTICES (Bellman-Ford rounds of a 2,048-wide grid); rmat18's hubs keep the narrow
    limits. The distances are NumPy's."""
    from bspgraph.frontier.kernels import LEVEL_EDGES, LEVEL_VERTICES, WIDE_LEVELS, level_limits

    gpu = bg.generators.grid(2048, 2048, weights=True, seed=1, backend="cupy")
    cpu = gpu.to("numpy")
    assert level_limits(gpu)[0] == WIDE_LEVELS[0]
    assert level_limits(rmat18[0]) == (LEVEL_VERTICES, LEVEL_EDGES)
    result, expected = bg.sssp(gpu, 2049), bg.sssp(cpu, 2049)
    np.testing.assert_array_equal(result.distance, expected.distance)
    assert max(s.frontier for s in result.stats.supersteps) > LEVEL_VERTICES


def test_pagerank_fused_update_equals_numpy():
    """Directed, weighted, personalised, with sinks and isolated vertices, and more vertices
    than one pass of the fused update's grid (each thread takes several)."""
    rng = np.random.default_rng(3)
    n, m = 300_001, 1_200_000
    src, dst = rng.integers(0, n - 1000, (2, m))  # the last 1,000 vertices: isolated sinks
    cpu = bg.Graph.from_edges(src, dst, rng.random(m) + 0.1, num_vertices=n, directed=True)
    gpu = cpu.to("cupy")
    personalization = rng.random(n)
    for run in ({}, {"personalization": personalization}):
        on_gpu, on_cpu = bg.pagerank(gpu, **run), bg.pagerank(cpu, **run)
        np.testing.assert_allclose(on_gpu.rank, on_cpu.rank, rtol=1e-9)
        assert on_gpu.stats.iterations == on_cpu.stats.iterations
        np.testing.assert_array_equal(bg.pagerank(gpu, **run).rank, on_gpu.rank)  # every run


def test_ordered_columns_give_the_same_sums(rmat18, monkeypatch):
    """rmat18 is below ORDERED_VERTICES: lowered, its pulls gather through columns in degree
    order, each row's terms in the same order (the same ranks and distances, to the bit)."""
    gpu, _ = rmat18
    plain = bg.pagerank(gpu).rank, bg.sssp(gpu, 0).distance
    monkeypatch.setattr(fr.operators, "ORDERED_VERTICES", 1)
    monkeypatch.setattr(fr.operators, "ORDER_AFTER", 1)
    gpu.cache.clear()
    np.testing.assert_array_equal(bg.pagerank(gpu).rank, plain[0])
    np.testing.assert_array_equal(bg.sssp(gpu, 0).distance, plain[1])
    assert any(
        key[0] == "ordered columns" and isinstance(ordered, tuple)
        for key, ordered in gpu.cache.items()
    )
    gpu.cache.clear()


def test_betweenness_cupy_equals_numpy(rmat18):
    gpu, cpu = rmat18
    sources = [0, 1, 2, 3]
    np.testing.assert_allclose(
        bg.betweenness_centrality(gpu, sources, backend="cupy").centrality,
        bg.betweenness_centrality(cpu, sources, backend="numpy").centrality,
        rtol=1e-9,
    )


def test_triangles_cupy_equals_numpy(rmat18):
    gpu, cpu = rmat18
    result = bg.triangle_count(gpu, backend="cupy")
    expected = bg.triangle_count(cpu, backend="numpy")
    assert result.total == expected.total
    np.testing.assert_array_equal(result.per_vertex, expected.per_vertex)


@pytest.mark.parametrize("communicator", ["selective", "butterfly", "broadcast"])
def test_two_gpus_equal_one(communicator):
    from bspgraph.backend import gpu_count

    if gpu_count() < 2:
        pytest.skip("needs 2 GPUs")
    graph = bg.generators.rmat(16, 16, seed=4, weights=True, backend="cupy")
    run = {"devices": 2, "partitioner": "random", "communicator": communicator}
    for share in (None, solo.LIGHT_SHARE):  # (every frontier under the floor; E / 64 alone)
        with solo.light_share(share) if share else contextlib.nullcontext():
            depth, distance = bg.bfs(graph, 0, **run).depth, bg.sssp(graph, 0, **run).distance
        np.testing.assert_array_equal(depth, bg.bfs(graph, 0).depth)
        np.testing.assert_array_equal(distance, bg.sssp(graph, 0).distance)
    np.testing.assert_allclose(bg.pagerank(graph, **run).rank, bg.pagerank(graph).rank, rtol=1e-9)
    labels = bg.connected_components(graph, **run)  # CuPy's link_pairs after the full link
    np.testing.assert_array_equal(labels.labels, bg.connected_components(graph).labels)
    assert labels.stats.iterations <= 5


def test_a_graph_s_kernels_run_on_its_own_gpu_whatever_gpu_is_current():
    """Under ``mpiexec`` a rank's transport makes its GPU current for good (GPU 1 on rank 1);
    a graph the rank built before on GPU 0 still builds and reduces there: its weight range,
    reverse lists and in-degrees, the backend's reductions of its arrays, and a run on it
    (an illegal address, GPU 1 reading GPU 0's memory, when they went to the current GPU)."""
    import cupy as cp

    from bspgraph.backend import gpu_count

    if gpu_count() < 2:
        pytest.skip("needs 2 GPUs")
    rng = np.random.default_rng(5)
    tails, heads = rng.integers(0, 4096, size=(2, 40_000))
    weights = rng.random(40_000).astype(np.float32)
    host = bg.Graph.from_edges(tails, heads, weights, num_vertices=4096, backend="numpy")
    graph = host.to("cupy")  # (on GPU 0)
    with cp.cuda.Device(1):
        lightest, heaviest = graph.weight_range()
        total = float(graph.backend.total(graph.weights))
        in_degree = cp.asnumpy(graph.in_degree())
        distance = bg.sssp(graph, 0).distance
        for gpu in (0, 1):
            cp.cuda.Device(gpu).synchronize()
    assert (lightest, heaviest) == (host.weights.min(), host.weights.max())
    assert total == pytest.approx(host.weights.sum(dtype=np.float64))
    np.testing.assert_array_equal(in_degree, host.in_degree())
    np.testing.assert_allclose(distance, bg.sssp(host, 0).distance, rtol=1e-6)  # (sums' order)


@pytest.mark.parametrize("partitioner", ["edge_balanced", "random"])
def test_two_gpus_of_one_process_copy_messages_to_their_receivers(partitioner):
    """Two GPUs in one process, selective: every message copied to its receiver's GPU (Slabs
    in the heavy supersteps, Updates in the light ones), each primitive equal to one GPU on a
    graph whose supersteps move millions of vertices."""
    from bspgraph.backend import gpu_count

    if gpu_count() < 2:
        pytest.skip("needs 2 GPUs")
    graph = bg.generators.rmat(20, 16, seed=3, weights=True, backend="cupy")
    run = {"devices": [0, 1], "transport": "local"}  # (without it: a worker process a GPU)
    run.update(partitioner=partitioner, communicator="selective")
    for direction in ("push", "auto"):
        np.testing.assert_array_equal(
            bg.bfs(graph, 1, direction=direction, **run).depth,
            bg.bfs(graph, 1, direction=direction).depth,
        )
    np.testing.assert_array_equal(bg.sssp(graph, 1, **run).distance, bg.sssp(graph, 1).distance)
    np.testing.assert_allclose(bg.pagerank(graph, **run).rank, bg.pagerank(graph).rank, rtol=1e-9)
    np.testing.assert_array_equal(
        bg.connected_components(graph, **run).labels, bg.connected_components(graph).labels
    )


def test_a_peer_copy_waits_for_its_source_and_keeps_it_until_copied():
    """``asarray`` between GPUs queues the copy without the host waiting: it holds what the
    source GPU queued before it (a long kernel still running), and the source's memory,
    freed and reused right after, does not reach the copy."""
    import cupy as cp

    from bspgraph.backend import get_backend, gpu_count

    if gpu_count() < 2:
        pytest.skip("needs 2 GPUs")
    size = 1 << 26
    expected = np.arange(size, dtype=np.int64) * 3**20
    for dtype in (None, np.float64, np.dtype(np.int32)):  # a dtype instance: NumPy 1's is falsy
        with cp.cuda.Device(0):
            source = cp.arange(size, dtype=np.int64)
            for _ in range(20):  # queued, not finished, when the copy is asked for
                source *= 3
        moved = get_backend("cupy", 1).asarray(source, dtype=dtype)
        del source
        with cp.cuda.Device(0):  # the pool hands the same memory out again
            cp.full(size, -1, dtype=np.int64)
        wanted = np.int64 if dtype is None else dtype
        assert moved.device.id == 1 and moved.dtype == wanted
        np.testing.assert_array_equal(moved.get(), expected.astype(wanted))


def test_sssp_on_parts_of_a_grid_relaxes_each_region_in_few_supersteps():
    """Two parts of one GPU, a 256 x 256 grid cut into bands: each part's repeated levels
    (the cooperative kernel, listing every vertex it lowers) cover its band in a few
    supersteps where a level each takes 510; a random cut takes a level a superstep. Both
    equal one GPU, the banded one also in a checked run."""
    graph = bg.generators.grid(256, 256, weights=True, backend="cupy")
    one = bg.sssp(graph, 0).distance
    for partitioner, check in (
        ("edge_balanced", False),
        ("edge_balanced", True),
        ("random", False),
    ):
        with solo.light_share(0):  # (every superstep on both parts: none on one alone)
            run = bg.sssp(graph, 0, devices=[0, 0], partitioner=partitioner, check=check)
        np.testing.assert_array_equal(run.distance, one)
        steps = len(run.stats.supersteps)
        assert steps <= 20 if partitioner == "edge_balanced" else steps >= 510


def test_segment_index_across_long_runs_of_empty_segments():
    """Runs of a million empty segments between short ones (isolated vertices in a frontier):
    the same slots as NumPy's repeat, searched past rather than walked."""
    import cupy as cp

    from bspgraph.backend import get_backend

    counts = np.zeros(3_000_000, dtype=np.int64)
    counts[[0, 5, 6, 1_000_000, 2_999_999]] = [3, 1, 9, 2, 4]
    expected = ops.segment_index(get_backend("numpy"), counts, int(counts.sum()))
    result = ops.segment_index(get_backend("cupy"), cp.asarray(counts), int(counts.sum()))
    np.testing.assert_array_equal(result.get(), expected)


def _offsets(rows: str, rng):
    """CSR offsets of the row kernels' tests: rows far longer than LONG_ROW (in pieces), empty
    and short ones ("hubs"); many rows of a few entries, a lane each ("short"); rows a warp
    reads (WARP_ROW or more entries) beside rows a lane reads, in the same warp."""
    from bspgraph.backend import LONG_ROW

    degrees = {
        "hubs": np.array([0, 3 * LONG_ROW + 5, 1, 0, LONG_ROW, LONG_ROW + 1, 40, 30 * LONG_ROW]),
        "short": rng.integers(0, 8, 10_001),
        "medium": rng.integers(0, 24, 5_003),
        "mixed": rng.integers(0, 100, 3_001),
    }[rows]
    return np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)


@pytest.mark.parametrize("reduce", ["min", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("rows", ["hubs", "short", "medium", "mixed"])
def test_row_reduce_equals_numpy(reduce, weighted, dtype, rows):
    """Rows far longer than LONG_ROW (reduced in pieces), empty rows and short ones; many rows
    of a few entries (a lane each, a partial last warp); rows a warp reads (WARP_ROW or more
    entries) beside rows a lane reads, in the same warp."""
    import cupy as cp

    from bspgraph.backend import get_backend

    rng = np.random.default_rng(7)
    offsets = _offsets(rows, rng)
    indices = rng.integers(0, 1000, offsets[-1]).astype(np.int32)
    values = rng.integers(-50, 50, 1000).astype(dtype)
    weights = rng.integers(1, 4, offsets[-1]).astype(dtype) if weighted else None
    host, gpu = get_backend("numpy"), get_backend("cupy")
    expected = ops.gather_reduce(host, values, offsets, indices, reduce, weights=weights)
    result = ops.gather_reduce(
        gpu,
        cp.asarray(values),
        cp.asarray(offsets),
        cp.asarray(indices),
        reduce,
        weights=None if weights is None else cp.asarray(weights),
    )
    np.testing.assert_allclose(result.get(), expected, rtol=1e-6)
    some = rng.choice(offsets.size - 1, (offsets.size - 1) // 3, replace=False)  # any order
    picked = ops.gather_reduce(host, values, offsets, indices, reduce, weights=weights, rows=some)
    np.testing.assert_allclose(picked, expected[some], rtol=1e-6)  # NumPy: csr_rows
    result = ops.gather_reduce(
        gpu,
        cp.asarray(values),
        cp.asarray(offsets),
        cp.asarray(indices),
        reduce,
        weights=None if weights is None else cp.asarray(weights),
        rows=cp.asarray(some),
    )
    np.testing.assert_allclose(result.get(), expected[some], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lanes", [1, 33, 387])
@pytest.mark.parametrize("rows", ["hubs", "short", "mixed"])
def test_lane_sums_equal_numpy(dtype, lanes, rows):
    """The warp-per-row-and-32-lanes product: hubs in pieces, a partial last warp of lanes,
    every row, some rows, and value rows read through positions (-1: none)."""
    import cupy as cp

    from bspgraph.backend import get_backend

    rng = np.random.default_rng(3)
    offsets = _offsets(rows, rng)
    indices = rng.integers(0, 1000, offsets[-1]).astype(np.int32)
    values = rng.integers(0, 50, (1000, lanes)).astype(dtype)
    host, gpu = get_backend("numpy"), get_backend("cupy")
    d_offsets, d_indices = cp.asarray(offsets), cp.asarray(indices)
    expected = ops.lane_sums(host, offsets, indices, values)
    result = ops.lane_sums(gpu, d_offsets, d_indices, cp.asarray(values))
    np.testing.assert_allclose(result.get(), expected, rtol=1e-6)
    some = rng.choice(offsets.size - 1, (offsets.size - 1) // 3, replace=False)
    result = ops.lane_sums(gpu, d_offsets, d_indices, cp.asarray(values), rows=cp.asarray(some))
    np.testing.assert_allclose(result.get(), expected[some], rtol=1e-6)
    position = np.full(1000, -1, dtype=np.int32)
    picked = rng.choice(1000, 100, replace=False)
    position[picked] = np.arange(100, dtype=np.int32)
    expected = ops.lane_sums(host, offsets, indices, values[picked], position=position)
    result = ops.lane_sums(
        gpu, d_offsets, d_indices, cp.asarray(values[picked]), position=cp.asarray(position)
    )
    np.testing.assert_allclose(result.get(), expected, rtol=1e-6)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("renamed", [False, True])
@pytest.mark.parametrize("rows", ["hubs", "short", "mixed"])
def test_split_rows_equals_numpy(rows, renamed, weighted, index_dtype):
    """The warp-a-row split of a CSR (each row's entries inside a range, then the others,
    in order; renamed or not): hubs far longer than a warp, empty rows, short ones."""
    import cupy as cp

    from bspgraph.backend import get_backend

    rng = np.random.default_rng(11)
    offsets = _offsets(rows, rng)
    indices = rng.integers(0, 1000, offsets[-1]).astype(index_dtype)
    weights = rng.random(offsets[-1]).astype(np.float32) if weighted else None
    rename = rng.permutation(1000).astype(index_dtype) if renamed else None
    host, gpu = get_backend("numpy"), get_backend("cupy")
    span = slice(300, 650)
    expected = ops.split_rows(host, offsets, indices, weights, span, rename)
    result = ops.split_rows(
        gpu,
        cp.asarray(offsets),
        cp.asarray(indices),
        None if weights is None else cp.asarray(weights),
        span,
        None if rename is None else cp.asarray(rename),
    )
    for side, want in zip(result, expected, strict=True):
        for got, array in zip(side, want, strict=True):
            if array is None:
                assert got is None
            else:
                assert got.dtype == array.dtype
                np.testing.assert_array_equal(got.get(), array)


def test_batched_betweenness_cupy_equals_numpy(rmat18):
    """Batched Brandes with the lane products on the GPU (pull levels read only the
    frontier's rows) against NumPy's scipy products."""
    gpu, host = rmat18
    sources = list(range(0, host.num_vertices, host.num_vertices // 100))[:100]
    expected = bg.betweenness_centrality(host, sources=sources, batch=40).centrality
    result = bg.betweenness_centrality(gpu, sources=sources, batch=40).centrality
    np.testing.assert_allclose(result, expected, rtol=1e-9, atol=1e-12)
    depth = bg.bfs(gpu, sources=sources[:70]).depth
    np.testing.assert_array_equal(depth, bg.bfs(host, sources=sources[:70]).depth)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("rows", ["hubs", "short", "mixed", "some rows"])
def test_link_equals_numpy(dtype, rows):
    """The lock-free link on CuPy joins the same trees as NumPy's union-find: rows in
    pieces (hubs), a lane's rows and a warp's, or a few rows named by id; the forest given
    is not flat (parent[x] <= x, chains), and the roots after it (by pointer jumping) are
    each component's least id."""
    import cupy as cp

    from bspgraph.backend import fused, get_backend

    rng = np.random.default_rng(11)
    n = 200_000
    offsets = _offsets("mixed" if rows == "some rows" else rows, rng)
    indices = rng.integers(0, n, offsets[-1]).astype(dtype)
    parent = np.arange(n, dtype=dtype)
    chained = rng.random(n) < 0.3
    parent[chained] = (rng.random(chained.sum()) * np.flatnonzero(chained)).astype(dtype)
    ids = None
    if rows == "some rows":
        ids = rng.choice(offsets.size - 1, 500, replace=False).astype(dtype)

    def roots(forest):
        while bool((forest[forest] != forest).any()):
            forest = forest[forest]
        return forest

    host, gpu = get_backend("numpy"), get_backend("cupy")
    expected = parent.copy()
    fused.lookup("link", host, "step")(host, expected, offsets, indices, ids)
    result = cp.asarray(parent)
    fused.lookup("link", gpu, "step")(
        gpu,
        result,
        cp.asarray(offsets),
        cp.asarray(indices),
        None if ids is None else cp.asarray(ids),
    )
    assert (result <= cp.arange(n, dtype=dtype)).all()
    np.testing.assert_array_equal(roots(result).get(), roots(expected))
    assert not np.array_equal(roots(expected), roots(parent))  # it joined some


def test_link_over_an_undirected_graph_s_lists_equals_numpy():
    """Connected components of undirected graphs too sparse for the sampled superstep link
    every list once, each edge in one of its two entries (``symmetric``: a grid, a sparse
    R-MAT with a hub past LONG_ROW, self-loops and many components), and equal NumPy's."""
    rng = np.random.default_rng(5)
    rmat = bg.generators.rmat(16, 2, seed=3, backend="numpy")
    loops = rng.integers(0, rmat.num_vertices, 100)
    hub = rng.integers(0, rmat.num_vertices, 6000)  # vertex 7's list in pieces
    rows = np.repeat(np.arange(rmat.num_vertices), rmat.out_degree())
    src = np.concatenate([rows, loops, np.full(hub.size, 7)])
    dst = np.concatenate([rmat.forward.indices, loops, hub])
    sparse = bg.Graph.from_edges(src, dst, num_vertices=rmat.num_vertices, directed=False)
    for host in (bg.generators.grid(300, 200, backend="numpy"), sparse.to("numpy")):
        expected = bg.connected_components(host).labels
        result = bg.connected_components(host.to("cupy"))
        np.testing.assert_array_equal(result.labels, expected)
        assert result.stats.iterations == 1  # one superstep over every list: no sampling
    assert np.unique(expected).size > 1000


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n", [0, 1, 257, 1_000_003, 20_000_001])
def test_flatten_equals_numpy(dtype, n):
    """fr.flatten on CuPy (a thread a vertex, path halving): NumPy's roots, on random forests
    past one grid's pass and (up to a million vertices) on a chain, every vertex under the one
    before it."""
    import cupy as cp

    rng = np.random.default_rng(n)
    forests = [rng.random(n) * np.arange(1, n + 1)]
    if n <= 1_000_003:
        forests.append(np.maximum(np.arange(n) - 1, 0))
    for parent in forests:
        parent = parent.astype(dtype)
        host = bg.Graph.from_edges([], [], num_vertices=n, backend="numpy")
        gpu = bg.Graph.from_edges([], [], num_vertices=n, backend="cupy")
        expected, result = parent.copy(), cp.asarray(parent)
        fr.flatten(host, expected)
        fr.flatten(gpu, result)
        np.testing.assert_array_equal(result.get(), expected)


@pytest.mark.parametrize("n", [0, 257, 1_000_003])
def test_flatten_since_lists_the_moved_vertices_as_numpy(n):
    """fr.flatten(since=...) on CuPy, in its one pass: the vertices whose root differs from
    ``since`` (NumPy's), their count and out-edges counted on the device, ``since`` taking
    the roots."""
    import cupy as cp

    rng = np.random.default_rng(n + 1)
    edges = rng.integers(0, max(n, 1), (2, 3 * n))
    parent = (rng.random(n) * np.arange(1, n + 1)).astype(np.int32)
    since = np.where(rng.random(n) < 0.5, parent, np.arange(n)).astype(np.int32)
    results = []
    for backend, xp in (("numpy", np), ("cupy", cp)):
        graph = bg.Graph.from_edges(*edges, num_vertices=n, backend=backend)
        forest, before = xp.array(parent), xp.array(since)  # copies: both runs start alike
        moved = fr.flatten(graph, forest, since=before)
        results.append(
            (
                to_host(forest),
                to_host(before),
                to_host(moved.ids),
                len(moved),
                count_out_edges(graph, moved),
            )
        )
    (forest, before, ids, size, edges_out), gpu = results
    np.testing.assert_array_equal(before, forest)  # since took the roots
    for expected, got in zip(results[0], gpu, strict=True):
        np.testing.assert_array_equal(got, expected)
    assert size == ids.shape[0] and (n < 1000 or 0 < size < n)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("count", [0, 500, 300_000])
def test_link_pairs_equals_numpy(dtype, count):
    """fr.link_pairs on CuPy (a thread a pair, ECL-CC's hooking) joins the same trees as
    NumPy's rounds: pairs repeated and in any order, many on a few hubs (as connected
    components' pairs after a combine), the forest given not flat; roots by pointer jumping
    are each component's least id, and the fused-kernel lookup is what fr.link_pairs runs."""
    import cupy as cp

    rng = np.random.default_rng(13)
    n = 200_000
    parent = np.arange(n, dtype=dtype)
    chained = rng.random(n) < 0.3
    parent[chained] = (rng.random(chained.sum()) * np.flatnonzero(chained)).astype(dtype)
    hubs = rng.integers(0, 64, count)
    a = np.where(rng.random(count) < 0.5, hubs, rng.integers(0, n, count)).astype(dtype)
    b = rng.integers(0, n, count).astype(dtype)

    def roots(forest):
        while bool((forest[forest] != forest).any()):
            forest = forest[forest]
        return forest

    host = bg.Graph.from_edges([], [], num_vertices=n, backend="numpy")
    gpu = bg.Graph.from_edges([], [], num_vertices=n, backend="cupy")
    expected = parent.copy()
    fr.link_pairs(host, expected, a, b)
    result = cp.asarray(parent)
    fr.link_pairs(gpu, result, cp.asarray(a), cp.asarray(b))
    assert (result <= cp.arange(n, dtype=dtype)).all()
    np.testing.assert_array_equal(roots(result).get(), roots(expected))
    if count:
        assert not np.array_equal(roots(expected), roots(parent))  # it joined some


@pytest.mark.parametrize("wide", [False, True])
def test_link_replaced_equals_numpy(wide):
    """fr.link_replaced on CuPy (two passes: the replaced pointers' old values, then their
    hooking) does what NumPy's does after a min combine of two devices' forests: ``previous``
    takes the combined pointers, and every vertex the combine moved from a tree it was no
    root of has its old and new pointers in one tree, the roots each component's least id."""
    import cupy as cp

    rng = np.random.default_rng(17)
    n = 300_000

    def forest():
        parent = np.arange(n, dtype=np.int32)
        chained = rng.random(n) < 0.4
        parent[chained] = (rng.random(chained.sum()) * np.flatnonzero(chained)).astype(np.int32)
        return parent

    def roots(forest):
        while bool((forest[forest] != forest).any()):
            forest = forest[forest]
        return forest

    previous = roots(forest())  # this device's stars, as its last flatten left them
    arrived = rng.random(n) < (1.0 if wide else 0.05)  # another device's labels here
    combined = np.where(arrived, np.minimum(previous, roots(forest())), previous)  # min won
    replaced = np.flatnonzero(combined != previous)
    split = replaced[previous[replaced] != replaced]
    assert split.shape[0] > 500
    listed = np.union1d(replaced, rng.integers(0, n, 500)).astype(np.int32)  # (and others)
    results = []
    for backend in ("numpy", "cupy"):
        xp = np if backend == "numpy" else cp
        graph = bg.Graph.from_edges([], [], num_vertices=n, backend=backend)
        graph.context = RunContext(parts=2)  # (one of two devices: a combine ran)
        frontier = (
            fr.Frontier.from_mask(graph, xp.asarray(combined != previous))
            if wide
            else fr.Frontier.from_ids(graph, xp.asarray(listed))
        )
        assert frontier.wide == wide
        parent, before = xp.array(combined), xp.array(previous)
        fr.link_replaced(graph, parent, before, frontier)
        results.append((roots(to_host(parent)), to_host(before)))
    (expected, taken), (got, got_taken) = results
    np.testing.assert_array_equal(taken, combined)
    np.testing.assert_array_equal(got_taken, combined)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got[previous[split]], got[combined[split]])
    assert not np.array_equal(expected, roots(combined))  # it joined some


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("duplicates", ["min", "sum"])
def test_build_cupy_equals_numpy(directed, duplicates):
    """Merged duplicates (a NaN among them skipped by min, NaN where all are), self-loops."""
    rng = np.random.default_rng(11)
    src, dst = rng.integers(0, 300, 20_000), rng.integers(0, 300, 20_000)
    weight = rng.integers(1, 9, 20_000).astype(np.float64)
    weight[rng.integers(0, 20_000, 500)] = np.nan
    weight[:3], src[:3], dst[:3] = np.nan, 5, 7  # the only copies of edge 5 -> 7
    options = {"num_vertices": 301, "directed": directed, "duplicates": duplicates}
    gpu = bg.Graph.from_edges(src, dst, weight, backend="cupy", **options)
    cpu = bg.Graph.from_edges(src, dst, weight, backend="numpy", **options)
    for name in ("offsets", "indices", "weights"):
        got, expected = getattr(gpu.forward, name), getattr(cpu.forward, name)
        np.testing.assert_array_equal(got.get(), expected, err_msg=name)
    assert gpu.summary == cpu.summary


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.uint8])
@pytest.mark.parametrize("size", [100_003, 40_000_001])  # the second: more than a grid's pass
def test_where_at_equals_numpy(dtype, size):
    rng = np.random.default_rng(8)
    values = rng.integers(0, 100, size).astype(dtype)
    mask = rng.random(size) < 0.4
    cupy = bg.backend.get_backend("cupy")
    for index_dtype in (np.int32, np.int64):
        index = rng.integers(0, size, size // 2).astype(index_dtype)
        got = ops.where_at(cupy, cupy.asarray(mask), cupy.asarray(values), 7, cupy.asarray(index))
        np.testing.assert_array_equal(got.get(), np.where(mask[index], values[index], 7))


def test_within_equals_numpy():
    mask = np.random.default_rng(9).random(1_000_003) < 0.5
    cupy = bg.backend.get_backend("cupy")
    for span in (slice(0, 0), slice(0, 1_000_003), slice(17, 500_001), slice(999_999, None)):
        got = ops.within(cupy, cupy.asarray(mask), span).get()
        expected = np.zeros_like(mask)
        expected[span] = mask[span]
        np.testing.assert_array_equal(got, expected, err_msg=str(span))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("size", [100_003, 40_000_001])  # the second: more than a grid's pass
def test_masked_sum_equals_numpy(dtype, size):
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**30, size).astype(dtype)
    mask = rng.random(values.size) < 0.3
    cupy = bg.backend.get_backend("cupy")
    assert ops.masked_sum(cupy, cupy.asarray(values), cupy.asarray(mask)) == int(values[mask].sum())
    assert ops.masked_sum(cupy, cupy.asarray(values[:0]), cupy.asarray(mask[:0])) == 0
    ids = rng.integers(0, size, size // 3)
    assert ops.sum_at(cupy, cupy.asarray(values), cupy.asarray(ids)) == int(values[ids].sum())
    assert ops.sum_at(cupy, cupy.asarray(values), cupy.asarray(ids[:0])) == 0
    for key_dtype, unset in [
        (np.int32, np.iinfo(np.int32).max),
        (np.float32, np.inf),
        (np.float64, np.inf),
        (np.uint8, 255),
    ]:
        keys = rng.integers(0, 5, size).astype(key_dtype)
        keys[mask] = unset  # uint8: through a mask (no grid-stride kernel for it)
        reached = int(values[~mask].sum())
        assert ops.total_below(cupy, cupy.asarray(values), cupy.asarray(keys), unset) == reached
    on_device = cupy.masked_total(cupy.asarray(values), mask=cupy.asarray(mask))  # no read
    at_ids = cupy.masked_total(cupy.asarray(values), ids=cupy.asarray(ids))
    assert on_device.shape == () and isinstance(on_device, cupy.xp.ndarray)
    counts = cupy.xp.asarray([3, 5], dtype=np.uint64)  # a kernel's tally
    assert cupy.read([on_device, at_ids, counts, cupy.count(cupy.asarray(mask))]) == [
        [int(values[mask].sum())],
        [int(values[ids].sum())],
        [3, 5],
        [int(mask.sum())],
    ]


def test_frontier_counts_deferred_and_read_together():
    graph = bg.generators.rmat(14, 8, seed=2, backend="cupy")
    degree = graph.cost_degrees()[0]
    host = bg.backend.to_host(degree)
    rng = np.random.default_rng(3)
    mask = rng.random(graph.num_vertices) < 0.2
    ids = np.flatnonzero(rng.random(graph.num_vertices) < 0.01)
    dense = fr.Frontier.from_mask(graph, graph.backend.asarray(mask))
    sparse = fr.Frontier.from_ids(graph, ids)
    dense.defer_counts(degree)
    sparse.defer_counts(degree)
    fr.read_counts([dense, sparse])
    assert dense._counted is None and sparse._counted is None  # both read in that one copy
    assert (len(dense), dense.out_edges) == (int(mask.sum()), int(host[mask].sum()))
    assert (len(sparse), sparse.out_edges) == (ids.size, int(host[ids].sum()))


@pytest.mark.parametrize("size", [0, 1, 255, 257, 1_000_003, 20_000_001])
def test_grid_stride_passes_equal_numpy(size):
    """full, greater, replace, mask_of and nonzero (with and without the count, on a view
    off a 16-byte boundary) against NumPy, across a block's 256 entries and past one grid's
    pass."""
    cupy = bg.backend.get_backend("cupy")
    rng = np.random.default_rng(size)
    for dtype, value in [
        (np.int32, np.iinfo(np.int32).max),
        (np.int64, -3),
        (np.float64, np.inf),
        (np.uint8, 7),
        (np.bool_, True),
    ]:  # the last two: CuPy's kernels
        np.testing.assert_array_equal(
            cupy.full(size, value, dtype).get(), np.full(size, value, dtype)
        )
        values = rng.integers(0, 5, size).astype(dtype)
        np.testing.assert_array_equal(ops.greater(cupy, cupy.asarray(values), 2).get(), values > 2)
        on_gpu, expected = cupy.asarray(values), values.copy()
        ops.replace(cupy, on_gpu, 3, 1)
        expected[expected == 3] = 1
        np.testing.assert_array_equal(on_gpu.get(), expected)
    for density in (0.0, 0.001, 0.5, 1.0):
        mask = rng.random(size) < density
        expected = np.flatnonzero(mask)
        repeated = np.concatenate([expected, expected[::3]])  # duplicates: the same bit
        for dtype in (np.int32, np.int64, np.uint32):  # the last: CuPy's indexing
            got = ops.mask_of(cupy, cupy.asarray(repeated.astype(dtype)), size)
            np.testing.assert_array_equal(got.get(), mask)
            # a kernel's list and its tally: the first count[0] only, read by the kernel
            listed = np.concatenate([repeated, np.flatnonzero(~mask)[:7]]).astype(dtype)
            tally = cupy.asarray(np.array([repeated.size, 0], dtype=np.uint64))
            got = ops.mask_of(cupy, cupy.asarray(listed), size, count=tally)
            np.testing.assert_array_equal(got.get(), mask)
        for dtype, count in [(np.int32, int(mask.sum())), (np.int64, None)]:
            got = cupy.nonzero(cupy.asarray(mask), dtype, count)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got.get(), expected)
        for start in (1, 3):  # a view that starts off a 16-byte boundary: byte by byte
            shifted = cupy.asarray(np.concatenate([np.ones(start, dtype=bool), mask]))[start:]
            np.testing.assert_array_equal(cupy.nonzero(shifted, np.int64).get(), expected)


@examples(40)
@given(graphs(max_vertices=16, max_edges=40))
def test_betweenness_on_cupy_matches_networkx(case):
    """Small graphs: Brandes' forward step in the fused kernel (one-tile frontiers)."""
    graph, nx_graph = case
    result = bg.betweenness_centrality(graph.to("cupy"), backend="cupy")
    expected = nx.betweenness_centrality(nx_graph)
    np.testing.assert_allclose(result.centrality, as_array(expected, graph.num_vertices, np.nan))


@examples(80)
@given(graphs(), st.data(), st.sampled_from(["auto", "push", "pull"]))
def test_bfs_and_sssp_on_cupy_match_networkx(case, data, direction):
    """Small graphs: frontiers of one tile (each block scans it), sinks, self-loops, duplicates."""
    graph, nx_graph = case
    gpu = graph.to("cupy")
    source = data.draw(st.integers(0, graph.num_vertices - 1))
    expected = nx.single_source_shortest_path_length(nx_graph, source)
    result = bg.bfs(gpu, source, parents=True, direction=direction, backend="cupy")
    np.testing.assert_array_equal(result.depth, as_array(expected, graph.num_vertices, -1))
    for vertex in np.flatnonzero(result.depth > 0):
        assert nx_graph.has_edge(result.parent[vertex], vertex)
    expected = nx.single_source_dijkstra_path_length(nx_graph, source)
    np.testing.assert_allclose(
        bg.sssp(gpu, source, backend="cupy").distance,
        as_array(expected, graph.num_vertices, np.inf),
    )


def test_core_number_cupy_equals_numpy(rmat18):
    gpu, cpu = rmat18
    np.testing.assert_array_equal(
        bg.core_number(gpu, backend="cupy").core, bg.core_number(cpu, backend="numpy").core
    )


@examples(30)
@given(graphs(directed=False, max_vertices=16, max_edges=40))
def test_core_number_on_cupy_matches_networkx(case):
    graph, nx_graph = case
    graph = bg.Graph.from_edges(
        *graph.edges()[:2], num_vertices=graph.num_vertices, directed=False, self_loops=False
    )
    nx_graph.remove_edges_from(list(nx.selfloop_edges(nx_graph)))
    expected = as_array(nx.core_number(nx_graph), graph.num_vertices, -1)
    np.testing.assert_array_equal(bg.core_number(graph, backend="cupy", check=True).core, expected)


def test_lifting_checks_and_the_weakly_connected_example_on_cupy():
    """A checked run and an example's primitive on CuPy: the snapshot and comparison read
    device arrays; min-label propagation equals CC's labels."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "examples" / "weakly_connected.py"
    spec = importlib.util.spec_from_file_location("weakly_connected", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 3000, 4000), rng.integers(0, 3000, 4000)
    graph = bg.Graph.from_edges(src, dst, num_vertices=3000, directed=True, backend="cupy")
    labels = module.weakly_connected(graph, backend="cupy", check=True)
    expected = bg.connected_components(graph.to("numpy"), backend="numpy").labels
    np.testing.assert_array_equal(labels, expected)


@pytest.mark.parametrize("name", ["bfs", "sssp", "cc", "pagerank", "bc", "tc", "core"])
def test_results_stay_on_the_device_on_request(rmat18, name):
    """result_device=True: CuPy arrays (DLPack and the CUDA array interface), the same values."""
    import cupy

    gpu, _ = rmat18
    calls = {
        "bfs": lambda **r: bg.bfs(gpu, 3, parents=True, **r).depth,
        "sssp": lambda **r: bg.sssp(gpu, 3, **r).distance,
        "cc": lambda **r: bg.connected_components(gpu, **r).labels,
        "pagerank": lambda **r: bg.pagerank(gpu, **r).rank,
        "bc": lambda **r: bg.betweenness_centrality(gpu, sources=[3, 5], **r).centrality,
        "tc": lambda **r: bg.triangle_count(gpu, **r).per_vertex,
        "core": lambda **r: bg.core_number(gpu, **r).core,
    }
    kept = calls[name](backend="cupy", result_device=True)
    assert isinstance(kept, cupy.ndarray) and hasattr(kept, "__cuda_array_interface__")
    np.testing.assert_allclose(cupy.asnumpy(kept), calls[name](backend="cupy"), rtol=1e-12)


def test_warmup_fills_the_kernel_cache_and_first_calls_are_warm(tmp_path):
    """bg.warmup() in a process whose CuPy cache starts empty: then a first call of each
    primitive on another graph compiles almost nothing (measured on an H100: 2 new modules of
    138, variants that a size reaches which the warmup's graphs do not)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    script = (
        "import os, bspgraph as bg\n"
        "report = bg.warmup('cupy', scale=12)\n"
        "print(report.cached_before, report.cached_after)\n"
        "g = bg.generators.rmat(13, 16, seed=9, weights=True, backend='numpy').to('cupy')\n"
        "for call in (lambda: bg.bfs(g, 0), lambda: bg.sssp(g, 0), lambda: bg.pagerank(g),\n"
        "             lambda: bg.connected_components(g), lambda: bg.core_number(g),\n"
        "             lambda: bg.betweenness_centrality(g, sources=[1]),\n"
        "             lambda: bg.triangle_count(g)):\n"
        "    call()\n"
        "print(sum(len(f) for _, _, f in os.walk(report.cache_dir)))\n"
    )
    env = dict(os.environ, CUPY_CACHE_DIR=str(tmp_path), PYTHONPATH=str(root))
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (before, after), (final,) = (map(int, line.split()) for line in done.stdout.splitlines())
    assert before == 0 and after > 0
    assert final - after <= 0.05 * after  # almost nothing compiled after the warmup


def test_a_first_call_reports_its_compilation_and_its_parts_add_up(tmp_path):
    """In a fresh process every kernel is built (compiled, or loaded from the disk cache) on
    its first launch: the first call's compile_seconds holds that time, CuPy's own kernels
    included (the wrapped compiler), and its parts add up to the whole call; the second call
    compiles nothing."""
    import subprocess
    import sys

    script = (
        "import os, time, cupy, bspgraph as bg\n"
        "g = bg.generators.rmat(12, 16, seed=9, weights=True, backend='numpy').to('cupy')\n"
        "assert cupy.cuda.compiler._compile_module_with_cache.timed_by_bspgraph\n"
        "assert cupy.cuda.compiler._use_pch or 'CUPY_NVRTC_USE_PCH' in os.environ\n"
        "for _ in range(2):\n"
        "    start = time.perf_counter()\n"
        "    s = bg.connected_components(g).stats\n"
        "    whole = time.perf_counter() - start\n"
        "    parts = (s.seconds + s.prepare_seconds + s.compile_seconds + s.setup_seconds\n"
        "             + s.gather_seconds)\n"
        "    print(s.compile_seconds, s.prepare_seconds, parts, whole)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=os.path.dirname(os.path.dirname(__file__)),
        env={**os.environ, "PYTHONPATH": "."},
    )
    first, second = ([float(x) for x in line.split()] for line in out.stdout.splitlines())
    assert first[0] > 0 and first[1] > 0
    assert first[2] <= first[3] and first[2] >= 0.9 * first[3]  # the call, but for its checks
    assert second[0] < 0.01 * first[0] and second[1] == 0


@pytest.mark.parametrize("name", ["bfs", "sssp", "pagerank", "cc", "bc", "tc", "core_number"])
def test_prepare_on_cupy_leaves_nothing_to_prepare(name):
    host = bg.generators.rmat(13, 16, seed=5, weights=True, backend="numpy")
    calls = {
        "bfs": lambda g: bg.bfs(g, 1),
        "sssp": lambda g: bg.sssp(g, 1),
        "pagerank": lambda g: bg.pagerank(g),
        "cc": lambda g: bg.connected_components(g),
        "bc": lambda g: bg.betweenness_centrality(g, sources=[1, 2, 3]),
        "tc": lambda g: bg.triangle_count(g),
        "core_number": lambda g: bg.core_number(g),
    }
    expected = calls[name](host.to("cupy"))
    result = calls[name](host.to("cupy").prepare([name]))
    assert result.stats.prepare_seconds == 0 and result.stats.backend == "cupy"
    for field in ("depth", "distance", "rank", "labels", "centrality", "per_vertex", "core"):
        if hasattr(result, field):
            np.testing.assert_allclose(getattr(result, field), getattr(expected, field))


def test_backend_none_runs_a_small_host_graph_on_numpy_and_a_large_one_on_cupy():
    from bspgraph.backend import SMALL_GRAPH_EDGES

    small = bg.generators.rmat(8, 16, seed=1, backend="numpy")
    large = bg.generators.rmat(15, 16, seed=1, backend="numpy")
    assert small.num_edges < SMALL_GRAPH_EDGES <= large.num_edges
    assert bg.bfs(small, 0).stats.backend == "numpy"
    assert bg.bfs(large, 0).stats.backend == "cupy"
    assert bg.bfs(small.to("cupy"), 0).stats.backend == "cupy"  # a graph on the GPU stays
    assert bg.bfs(small, 0, backend="cupy").stats.backend == "cupy"  # given: always


REDUCED = [np.bool_, np.int32, np.int64, np.float32, np.float64]  # cuda.C_TYPES


def _reduced_values(dtype, size: int, rng):
    """``size`` values of ``dtype`` whose extremes sit at the last entry (a grid's tail)."""
    if dtype is np.bool_:
        values = rng.random(size) < 0.5
    elif np.dtype(dtype).kind == "f":
        values = rng.random(size).astype(dtype) - 0.25
    else:
        values = rng.integers(-(2**20), 2**20, size).astype(dtype)
    if size and dtype is not np.bool_:
        values[-1] = 2**21
    return values


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("size", [0, 1, 2, 255, 4095, 4096, 4097, 1_000_003, (1 << 24) + 3])
def test_whole_array_reductions_equal_numpy(dtype, size):
    """total, count, any, all, largest and smallest (one module, two launches) against NumPy:
    empty, one entry, a block's and a pass's edges, odd sizes, past 2^24 entries; each a 0-d
    array on the device (no host read), sums in int64 or float64, extremes in the dtype."""
    import cupy as cp

    host, gpu = bg.backend.get_backend("numpy"), bg.backend.get_backend("cupy")
    rng = np.random.default_rng(size)
    values = _reduced_values(dtype, size, rng)
    on_gpu = cp.asarray(values)
    total = gpu.total(on_gpu)
    assert isinstance(total, cp.ndarray) and total.shape == ()
    if np.dtype(dtype).kind == "f":
        assert total.dtype == np.float64
        np.testing.assert_allclose(float(total), float(host.total(values)), rtol=1e-10, atol=1e-9)
    else:
        assert total.dtype == np.int64 and int(total) == int(host.total(values))
    for mask in (values > 0, np.zeros(size, bool), np.ones(size, bool)):
        for method in ("count", "any", "all"):
            got = getattr(gpu, method)(cp.asarray(mask))
            assert isinstance(got, cp.ndarray) and got.shape == ()
            assert got.item() == getattr(host, method)(mask), (method, mask[:4])
    if size == 0:
        for method in ("largest", "smallest"):
            with pytest.raises(ValueError):
                getattr(gpu, method)(on_gpu)
        return
    for method in ("largest", "smallest"):
        got = getattr(gpu, method)(on_gpu)
        assert got.dtype == values.dtype and got.shape == ()
        assert got.item() == getattr(host, method)(values).item(), method


@pytest.mark.parametrize("size", [1, 5000, (1 << 24) + 3])
def test_whole_array_reductions_of_nan_views_and_other_dtypes(size):
    """A NaN anywhere gives a NaN sum, largest and smallest (as NumPy); strided views and 2-D
    arrays are reduced whole; dtypes outside C_TYPES take CuPy's own reductions; a float sum
    is the same bits every run."""
    import cupy as cp

    gpu = bg.backend.get_backend("cupy")
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        values = rng.random(size).astype(dtype)
        values[size // 2] = np.nan
        on_gpu = cp.asarray(values)
        assert np.isnan(float(gpu.total(on_gpu)))
        assert np.isnan(gpu.largest(on_gpu).item()) and np.isnan(gpu.smallest(on_gpu).item())
    values = rng.random(2 * size)
    on_gpu = cp.asarray(values)
    assert float(gpu.total(on_gpu[::2])) == pytest.approx(values[::2].sum(), rel=1e-10)
    assert float(gpu.total(on_gpu.reshape(2, -1))) == pytest.approx(values.sum(), rel=1e-10)
    assert gpu.largest(on_gpu[1::2]).item() == values[1::2].max()
    assert gpu.total(on_gpu).get().tobytes() == gpu.total(on_gpu).get().tobytes()
    small = rng.integers(0, 200, size).astype(np.uint8)
    assert int(gpu.total(cp.asarray(small))) == int(small.sum(dtype=np.int64))
    assert int(gpu.largest(cp.asarray(small))) == int(small.max())
    assert int(gpu.count(cp.asarray(small))) == int(np.count_nonzero(small))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.uint8])
@pytest.mark.parametrize("size", [0, 1, 1_000, 5_000_001])  # the last: more than a grid's pass
def test_one_value_equals_numpy(dtype, size):
    """The one-pass kernel of ops.one_value (the generic path for uint8) gives NumPy's pair
    and value: one value over a sparse mask, two values, a NaN, nothing set; at ids too; and
    of the changes since a baseline (one value, and not)."""
    import cupy as cp

    gpu = bg.backend.get_backend("cupy")
    rng = np.random.default_rng(size)
    mask = rng.random(size) < 0.01
    kept = slice(size // 3, size // 2)
    base = np.full(size, 5, dtype=dtype)
    two = base.copy()
    two[np.flatnonzero(mask)[-1:]] = 3
    cases = [base, two, np.zeros(size, dtype=dtype)]
    if np.dtype(dtype).kind == "f" and size:
        nan = base.copy()
        nan[np.flatnonzero(mask)[:1]] = np.nan
        cases.append(nan)
    since = (np.arange(size) % 3).astype(dtype)  # changes since it: not one value
    for column, baseline in [*((c, None) for c in cases), (base + since, since), (two, since)]:
        for index in ({"mask": mask}, {"ids": np.flatnonzero(mask).astype(np.int64)}):
            expected = ops.one_value(
                bg.backend.get_backend("numpy"), column, kept=kept, since=baseline, **index
            )
            on_gpu = {name: cp.asarray(array) for name, array in index.items()}
            on_gpu["since"] = None if baseline is None else cp.asarray(baseline)
            pair, value = ops.one_value(gpu, cp.asarray(column), kept=kept, **on_gpu)
            assert pair.get().tolist() == expected[0].tolist()
            if expected[0][1]:
                assert value.get().tolist() == expected[1].tolist()


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
@pytest.mark.parametrize("size", [0, 1, 1_000, 5_000_001])
def test_common_value_equals_numpy(dtype, size):
    """ops.common_value on CuPy takes NumPy's value and count: one value but for a few over a
    mask, several values, nothing set."""
    import cupy as cp

    gpu, host = bg.backend.get_backend("cupy"), bg.backend.get_backend("numpy")
    rng = np.random.default_rng(size)
    mask = rng.random(size) < 0.3
    mostly = np.where(rng.random(size) < 0.02, rng.integers(0, 9, size), 4).astype(dtype)
    several = rng.integers(0, 50, size).astype(dtype)
    for column, where in [(mostly, mask), (several, mask), (mostly, np.zeros(size, bool))]:
        count, value = ops.common_value(host, column, where)
        got = ops.common_value(gpu, cp.asarray(column), cp.asarray(where))
        assert int(got[0]) == int(count) and got[1].get().tolist() == value.tolist()


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint16])  # the last: generic
@pytest.mark.parametrize("size", [1, 3, 4, 1_001, 5_000_003])  # the last: past a grid's pass
def test_differs_from_equals_numpy(dtype, size):
    """ops.differs_from's kernel (four entries a thread where aligned) gives NumPy's
    ``(values != values[at]) & mask``: whole arrays and views one entry in (unaligned), the
    picked value at the start, the middle and the end."""
    import cupy as cp

    gpu, host = bg.backend.get_backend("cupy"), bg.backend.get_backend("numpy")
    rng = np.random.default_rng(size)
    values = rng.integers(0, 3, size + 1).astype(dtype)
    mask = rng.random(size + 1) < 0.7
    for first in (0, 1):  # (1: views off the 16-byte and 4-byte alignment)
        part, kept = values[first:], mask[first:]
        for at in {0, len(part) // 2, len(part) - 1}:
            expected = ops.differs_from(host, part, at, kept)
            result = ops.differs_from(gpu, cp.asarray(values)[first:], at, cp.asarray(mask)[first:])
            assert result.dtype == bool
            assert np.array_equal(result.get(), expected), (first, at)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])  # the last: CuPy's bincount
@pytest.mark.parametrize("size", [0, 1, 257, 3_000_001])
def test_tally_equals_bincount(dtype, size):
    """Occurrences of each id: random ids, sorted ones (a warp's lanes on one counter), one
    hub's id over and over."""
    import cupy as cp

    gpu = bg.backend.get_backend("cupy")
    rng = np.random.default_rng(size)
    for ids in (
        rng.integers(0, 1000, size),
        np.sort(rng.integers(0, 1000, size)),
        np.full(size, 7),
    ):
        ids = ids.astype(dtype)
        got = ops.tally(gpu, cp.asarray(ids), 1000)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.get(), np.bincount(ids, minlength=1000)[:1000])


def test_bspgraph_calls_run_without_cub_block_reductions():
    """Inside a backend's activate() CuPy's reduction accelerators are off (its routine ones
    stay) and restored after; a first call of every primitive in a fresh process with an empty
    kernel cache builds no CUB block reduction (cupy_cub_*: seconds of NVRTC each)."""
    import subprocess
    import sys
    import tempfile

    import cupy as cp

    accelerator = cp._core._accelerator
    before = accelerator.get_reduction_accelerators(), accelerator.get_routine_accelerators()
    with bg.backend.get_backend("cupy").activate():
        assert accelerator.get_reduction_accelerators() == []
        assert accelerator.get_routine_accelerators() == before[1]
    assert (
        accelerator.get_reduction_accelerators(),
        accelerator.get_routine_accelerators(),
    ) == before
    script = (
        "import re, numpy as np, cupy.cuda.compiler as compiler, bspgraph as bg\n"
        "names, original = [], compiler._compile_with_cache_cuda\n"
        "def record(source, *args, **kwargs):\n"
        "    names.extend(re.findall(r'__global__\\s+void\\s+(\\w+)', source))\n"
        "    return original(source, *args, **kwargs)\n"
        "host = bg.generators.rmat(12, 16, seed=2, weights=True, backend='numpy')\n"
        "g = host.to('cupy')\n"
        "s = int(np.argmax(np.diff(host.forward.offsets)))\n"
        "compiler._compile_with_cache_cuda = record\n"
        "for call in (lambda: bg.bfs(g, s), lambda: bg.sssp(g, s), lambda: bg.pagerank(g),\n"
        "             lambda: bg.connected_components(g), lambda: bg.core_number(g),\n"
        "             lambda: bg.betweenness_centrality(g, sources=[s]),\n"
        "             lambda: bg.triangle_count(g)):\n"
        "    call()\n"
        "print(' '.join(sorted({n for n in names if 'cub' in n})) or 'none')\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, CUPY_CACHE_DIR=cache, PYTHONPATH=root)
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            env=env,
            cwd=root,
            timeout=600,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["none"], done.stdout


PARTS_RUNS = {  # a run of each keyed contract on several parts, and its answer's field
    "bfs-push": (lambda g, s, **run: bg.bfs(g, s, direction="push", parents=True, **run), "depth"),
    "bfs-auto": (lambda g, s, **run: bg.bfs(g, s, parents=True, **run), "depth"),
    "sssp": (lambda g, s, **run: bg.sssp(g, s, **run), "distance"),
    "cc": (lambda g, s, **run: bg.connected_components(g, **run), "labels"),
    "pagerank": (lambda g, s, **run: bg.pagerank(g, **run), "rank"),
    "bc": (lambda g, s, **run: bg.betweenness_centrality(g, sources=[s], **run), "centrality"),
    "bc-batched": (
        lambda g, s, **run: bg.betweenness_centrality(g, sources=[s, (s + 1) % 100], **run),
        "centrality",
    ),
}


@pytest.mark.parametrize("name", sorted(PARTS_RUNS))
@pytest.mark.parametrize("parts", [1, 2, 3])
def test_parts_on_one_gpu_equal_one_part(name, parts):
    """Parts on one GPU (a keyed contract's packing by owner and combine-and-list, the marked
    mask, Slabs; one part: a lifted run of one, whose levels are supersteps; light
    supersteps on the first part alone or not) give one device's answer for every cut and
    communicator; BFS parents are in-neighbours one level up."""
    graph = bg.generators.rmat(14, 8, seed=5, weights=True, backend="cupy")
    host = graph.to("numpy")
    offsets, indices = host.forward.offsets, host.forward.indices
    source = int(np.argmax(np.diff(offsets)))
    edges = np.repeat(np.arange(host.num_vertices), np.diff(offsets)) * host.num_vertices + indices
    call, field = PARTS_RUNS[name]
    expected = getattr(call(host, source, backend="numpy"), field)
    # light supersteps on one part alone (rule 6): by E / 64 (the backend's floor aside: this
    # graph's every frontier is under it), never, or wherever they may
    shares = {"edge_balanced": solo.LIGHT_SHARE, "random": 0, "biased": 1}
    for partitioner, share in shares.items():
        for communicator in ("selective", "broadcast", "butterfly"):
            with solo.light_share(share):
                result = call(
                    graph,
                    source,
                    devices=[0] * parts,
                    partitioner=partitioner,
                    communicator=communicator,
                )
            got = getattr(result, field)
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
            if name.startswith("bfs"):
                child = np.flatnonzero(got > 0)
                parent = result.parent[child]
                assert child.size > 1000 and (got[parent] == got[child] - 1).all()
                assert np.isin(parent.astype(np.int64) * host.num_vertices + child, edges).all()


@pytest.mark.parametrize("parts", [2, 3])
def test_a_bfs_pulls_on_the_first_part_alone_on_a_gpu(parts):
    """Rule 6 on a GPU, whose pull stops at a candidate's first frontier in-neighbour: a
    direction-optimising BFS that pulls (a hub's R-MAT) runs every level on the first part,
    with one GPU's depths and levels; a push BFS's heavy levels run on every part."""
    import cupy as cp

    graph = bg.generators.rmat(16, 16, seed=1, backend="cupy")
    source = int(cp.argmax(graph.out_degree()))
    one = bg.bfs(graph, source)
    run = {"devices": [0] * parts, "partitioner": "edge_balanced"}
    with solo.light_share(solo.LIGHT_SHARE):  # (E / 64 alone: every frontier is under the floor)
        auto, push = bg.bfs(graph, source, **run), bg.bfs(graph, source, direction="push", **run)
    for result in (auto, push):
        np.testing.assert_array_equal(result.depth, one.depth)
    assert [step.frontier for step in auto.stats.supersteps] == [
        step.frontier for step in one.stats.supersteps
    ]
    assert {step.devices for step in auto.stats.supersteps} == {1}
    assert parts in {step.devices for step in push.stats.supersteps}


@examples(40)
@given(graphs(), st.data(), st.integers(2, 5))
def test_parts_on_one_gpu_match_networkx(case, data, parts):
    """Small graphs (sinks, self-loops, duplicates, empty updates) on 2-5 parts of one GPU."""
    graph, nx_graph = case
    gpu = graph.to("cupy")
    source = data.draw(st.integers(0, graph.num_vertices - 1))
    run = {
        "devices": [0] * parts,
        "partitioner": data.draw(st.sampled_from(["random", "edge_balanced"])),
    }
    expected = nx.single_source_shortest_path_length(nx_graph, source)
    result = bg.bfs(gpu, source, parents=True, **run)
    np.testing.assert_array_equal(result.depth, as_array(expected, graph.num_vertices, -1))
    for vertex in np.flatnonzero(result.depth > 0):
        assert nx_graph.has_edge(result.parent[vertex], vertex)
    expected = nx.single_source_dijkstra_path_length(nx_graph, source)
    np.testing.assert_allclose(
        bg.sssp(gpu, source, **run).distance, as_array(expected, graph.num_vertices, np.inf)
    )


def test_a_copy_is_one_device_copy_and_marks_time_the_work_between():
    """Backend.copy gives equal, independent arrays (one device-to-device copy when
    contiguous, CuPy's copy otherwise); two marks time the queued work between them."""
    import cupy as cp

    from bspgraph.backend import get_backend

    gpu = get_backend("cupy")
    rng = np.random.default_rng(3)
    cases = [
        cp.asarray(rng.random(1001) < 0.3),
        cp.asarray(rng.integers(0, 9, 777), cp.int32),
        cp.zeros(0, dtype=bool),
        cp.asarray(rng.random((40, 3)))[:, 1],
    ]  # (not contiguous)
    for array in cases:
        copy = gpu.copy(array)
        np.testing.assert_array_equal(copy.get(), array.get())
        if copy.size:
            copy[0] = ~copy[0] if copy.dtype == bool else copy[0] + 1
            assert int((copy != array).sum()) == 1  # not a view
    start = gpu.mark()
    big = cp.ones(1 << 24, dtype=cp.float64)
    for _ in range(20):
        big *= 1.0001  # queued work, not waited for
    seconds = gpu.seconds_between(start, gpu.mark())
    assert 0 < seconds < 10


def test_betweenness_runs_a_deep_graphs_light_levels_several_to_a_launch(monkeypatch):
    """On a grid and a path (hundreds of light levels) betweenness on the GPU equals NumPy's,
    with the same supersteps and frontier sizes, its levels run by the levels kernels (path
    counts and dependencies, one source at a time or a batch at once) in fewer launches than
    supersteps; closeness (a batched BFS) too."""
    from bspgraph.backend import fused

    launches = {}
    for name in ("count_paths", "visit_lanes", "lane_dependencies"):
        kernel = fused.lookup(name, "cupy", "repeat")

        def counted(*args, kernel=kernel, name=name):
            launches[name] = launches.get(name, 0) + 1
            return kernel(*args)

        monkeypatch.setitem(fused.REGISTRY, (name, "cupy", "repeat"), counted)
    path = bg.Graph.from_edges(
        np.arange(199), np.arange(1, 200), num_vertices=201, directed=False, backend="numpy"
    )
    for host, sources in (
        (bg.generators.grid(30, 30, backend="numpy"), [0, 31, 450, 899]),
        (path, [0, 100, 150]),
    ):  # (a vertex on its own: 200)
        for batch in (None, 1):
            expected = bg.betweenness_centrality(host, sources=sources, batch=batch)
            got = bg.betweenness_centrality(host.to("cupy"), sources=sources, batch=batch)
            np.testing.assert_allclose(to_host(got.centrality), expected.centrality, rtol=1e-9)
            sizes = [s.frontier for s in got.stats.supersteps]
            assert sizes == [s.frontier for s in expected.stats.supersteps]
    grid = bg.generators.grid(30, 30, backend="numpy")  # a batched BFS's levels (closeness)
    expected = bg.closeness_centrality(grid).centrality
    got = bg.closeness_centrality(grid.to("cupy")).centrality
    np.testing.assert_allclose(to_host(got), expected, rtol=1e-12)
    assert set(launches) == {"count_paths", "visit_lanes", "lane_dependencies"}
    backward_runs = 2 + 4 + 3  # a batch a graph, and a run a source with batch=1
    assert launches["lane_dependencies"] == backward_runs  # every level light: one launch each


@pytest.mark.parametrize(
    "name", ["bfs", "bfs-push", "sssp", "cc", "pagerank", "tc", "bc", "bc-batch", "scc"]
)
def test_estimate_covers_a_gpu_run(name):
    """``memory.estimate`` bounds what a run holds on the GPU at its highest (the graph moved
    there, its preparations and the run's own), within a few times of it: measured by a
    memory hook on CuPy's pool, on rmat 16 and 18 (fused kernels: no per-edge temporaries;
    betweenness from one source or a batch of BATCH: its two phases, the forward one's result
    held through the backward one)."""
    from benchmarks.memory_peak import BATCH, betweenness_estimate, sites_hook
    from bspgraph import memory
    from bspgraph.primitives import BFS, CC, SCC, SSSP, TC, PageRank

    primitives = {
        "bfs": (BFS(direction="auto"), lambda g, s: bg.bfs(g, s)),
        "bfs-push": (BFS(direction="push"), lambda g, s: bg.bfs(g, s, direction="push")),
        "sssp": (SSSP(), lambda g, s: bg.sssp(g, s)),
        "cc": (CC(), lambda g, s: bg.connected_components(g)),
        "pagerank": (PageRank(), lambda g, s: bg.pagerank(g)),
        "tc": (TC(), lambda g, s: bg.triangle_count(g)),
        "bc": (1, lambda g, s: bg.betweenness_centrality(g, sources=[s])),
        "bc-batch": (BATCH, lambda g, s: bg.betweenness_centrality(g, sources=range(BATCH))),
        "scc": (SCC(), lambda g, s: bg.strongly_connected_components(g)),
    }
    primitive, call = primitives[name]
    for scale in (16, 18):
        host = bg.generators.rmat(scale, 16, seed=1, weights=name != "tc", backend="numpy")
        source = int(np.argmax(np.diff(host.offsets)))
        live = sites_hook()
        with live:
            call(host.to("cupy"), source)
        if isinstance(primitive, int):  # betweenness, from that many sources
            estimate = betweenness_estimate(host, 1, primitive)
        else:
            estimate = memory.estimate(primitive, host)
        assert live.peak <= estimate, (scale, live.peak, estimate)
        assert estimate <= 3 * live.peak, (scale, live.peak, estimate)


def test_a_parameter_checksum_on_the_gpu_equals_the_hosts():
    """What processes compare of a GPU's parameter array is taken on the GPU and equals the
    host array's checksum; a run's fingerprint describes it so, not by copying it."""
    import cupy as cp

    from bspgraph.enactor import layout

    host = np.random.default_rng(3).random(1_000_003)
    for array in (host, (host * 100).astype(np.int32), host > 0.5):
        assert layout._checksum(cp.asarray(array)) == layout._checksum(array)
    described = layout._describe({"sigma": cp.asarray(host)})
    assert described == f"sigma={layout._checksum(host)}"


SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
}
"""


@pytest.mark.parametrize("ordered", [False, True], ids=["ids", "degree-order"])
def test_a_part_s_pull_waits_for_the_others_values_on_another_stream(monkeypatch, ordered):
    """The others' values written on a second stream behind a long kernel (as the enactor's
    transfers arrive there, ``context.arrivals``): a part's pull over every list sums its own
    entries, makes its stream wait for them, then sums the others': the whole graph's sums,
    never the values from before they arrived."""
    import cupy as cp

    from bspgraph.enactor.layout import cut
    from bspgraph.frontier import operators

    if ordered:
        monkeypatch.setattr(operators, "ORDERED_VERTICES", 0)
        monkeypatch.setattr(operators, "SKEW", 1)
    graph = bg.generators.rmat(14, 16, seed=3, weights=True, backend="cupy")
    values = cp.random.default_rng(5).random(graph.num_vertices)
    whole = fr.neighbor_reduce(graph, values, "sum", direction="in", weighted=True)
    spin = cp.RawKernel(SPIN, "spin")
    side = cp.cuda.Stream(non_blocking=True)
    for host_part in cut(graph, 2, partitioner="edge_balanced", relabel=False):
        part = host_part.to("cupy")
        span = operators.owned_range(part)
        for _ in range(operators.ORDER_AFTER + 1):
            arrived = values.copy()
            arrived[: span.start], arrived[span.stop :] = cp.nan, cp.nan  # not yet here
            side.wait_event(cp.cuda.get_current_stream().record())
            with side:  # they arrive after some 20 ms
                spin((1,), (1,), (np.int64(40_000_000),))
                arrived[: span.start], arrived[span.stop :] = (
                    values[: span.start],
                    values[span.stop :],
                )
                came = side.record()
            part.context.arrivals.pending = lambda came=came: (
                cp.cuda.get_current_stream().wait_event(came)
            )
            sums = fr.neighbor_reduce(part, arrived, "sum", direction="in", weighted=True)
            np.testing.assert_allclose(to_host(sums[span]), to_host(whole[span]), rtol=1e-12)
            cp.cuda.Device().synchronize()  # (what the next pass writes, after this one read)
