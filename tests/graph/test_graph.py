"""Graph construction against networkx: from_edges, from_networkx, from_scipy, reverse, checks."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from strategies import edge_lists, to_networkx

import bspgraph as bg
from bspgraph.graph import Graph
from bspgraph.graph.graph import index_dtype


def weighted_edges(nx_graph) -> dict[tuple[int, int], float]:
    """{(u, v): weight} of a networkx graph, each undirected edge once as (min, max)."""
    edges = {}
    for u, v, data in nx_graph.edges(data=True):
        key = (u, v) if nx_graph.is_directed() else (min(u, v), max(u, v))
        edges[key] = data.get("weight", 1.0)
    return edges


def summed_networkx(n, src, dst, weight, directed):
    """networkx's graph of the edges where duplicates add their weights."""
    nx_graph = nx.DiGraph() if directed else nx.Graph()
    nx_graph.add_nodes_from(range(n))
    for i, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        old = nx_graph[u][v]["weight"] if nx_graph.has_edge(u, v) else 0.0
        nx_graph.add_edge(u, v, weight=old + float(weight[i]))
    return nx_graph


def unique_pairs(src, dst, directed) -> set:
    if directed:
        return set(zip(src.tolist(), dst.tolist()))
    return {(min(u, v), max(u, v)) for u, v in zip(src.tolist(), dst.tolist())}


@given(edge_lists(min_vertices=0))
def test_from_edges_matches_networkx(case):
    n, src, dst, weight, directed = case
    graph = Graph.from_edges(src, dst, weight, num_vertices=n, directed=directed, backend="numpy")
    expected = to_networkx(n, src, dst, weight, directed)

    assert graph.num_vertices == n and graph.directed == directed
    assert graph.weighted == (weight is not None)
    assert sorted(graph.to_networkx().nodes) == list(range(n))
    got = weighted_edges(graph.to_networkx())
    assert got == weighted_edges(expected)

    pairs = unique_pairs(src, dst, directed)
    loops = sum(u == v for u, v in pairs)
    assert graph.num_edges == (len(pairs) if directed else 2 * len(pairs) - loops)
    assert graph.summary.duplicates_merged == len(src) - len(pairs)
    assert graph.summary.self_loops == int(np.count_nonzero(src == dst))
    assert graph.summary.edges == graph.num_edges and graph.summary.vertices == n


@given(edge_lists(min_vertices=0))
def test_csr_is_sorted_and_int32(case):
    n, src, dst, weight, directed = case
    graph = Graph.from_edges(src, dst, weight, num_vertices=n, directed=directed, backend="numpy")
    assert graph.offsets.dtype == np.int32 and graph.indices.dtype == np.int32
    assert graph.offsets.shape == (n + 1,) and graph.offsets[0] == 0
    row, column, _ = graph.edges()
    key = row.astype(np.int64) * max(n, 1) + column
    assert np.all(np.diff(key) > 0)  # sorted by (source, target), no duplicates
    if weight is not None:
        assert graph.weights.dtype == np.float64


@given(edge_lists(weighted=True))
def test_duplicates_sum(case):
    n, src, dst, weight, directed = case
    graph = Graph.from_edges(
        src, dst, weight, num_vertices=n, directed=directed, duplicates="sum", backend="numpy"
    )
    assert weighted_edges(graph.to_networkx()) == weighted_edges(
        summed_networkx(n, src, dst, weight, directed)
    )


@given(edge_lists())
def test_self_loops_dropped(case):
    n, src, dst, weight, directed = case
    graph = Graph.from_edges(
        src, dst, weight, num_vertices=n, directed=directed, self_loops=False, backend="numpy"
    )
    keep = src != dst
    expected = to_networkx(
        n, src[keep], dst[keep], None if weight is None else weight[keep], directed
    )
    assert weighted_edges(graph.to_networkx()) == weighted_edges(expected)
    assert graph.summary.self_loops == 0
    assert graph.summary.self_loops_dropped == int(np.count_nonzero(~keep))


@given(edge_lists(directed=True))
def test_reverse_is_the_transpose(case):
    n, src, dst, weight, _ = case
    graph = Graph.from_edges(src, dst, weight, num_vertices=n, directed=True, backend="numpy")
    reverse = graph.reverse
    forward_src, forward_dst, forward_weight = graph.edges()
    for v in range(n):
        begin, end = reverse.offsets[v], reverse.offsets[v + 1]
        in_neighbours = reverse.indices[begin:end]
        assert np.all(np.diff(in_neighbours) > 0)
        edge_ids = reverse.edge_ids[begin:end]
        assert np.array_equal(forward_src[edge_ids], in_neighbours)
        assert np.all(forward_dst[edge_ids] == v)
        if weight is not None:
            assert np.array_equal(reverse.weights[begin:end], forward_weight[edge_ids])
    assert np.array_equal(graph.in_degree(), np.bincount(forward_dst, minlength=n))


def test_undirected_reverse_is_forward():
    graph = Graph.from_edges([0, 1], [1, 2], directed=False, backend="numpy")
    assert graph.reverse is graph.forward


def test_isolated_vertices_stay():
    graph = Graph.from_edges([0, 1], [1, 2], num_vertices=10, backend="numpy")
    assert graph.num_vertices == 10
    assert graph.out_degree().tolist() == [1, 1] + [0] * 8


def test_num_vertices_defaults_to_largest_id():
    graph = Graph.from_edges([4], [2], backend="numpy")
    assert graph.num_vertices == 5


def test_empty_and_single_vertex():
    empty = Graph.from_edges([], [], backend="numpy")
    assert (empty.num_vertices, empty.num_edges) == (0, 0)
    assert empty.offsets.tolist() == [0]
    single = Graph.from_edges([0, 0], [0, 0], [3.0, 2.0], directed=False, backend="numpy")
    assert (single.num_vertices, single.num_edges) == (1, 1)
    assert single.weights.tolist() == [2.0]


def test_undirected_keeps_min_of_both_directions():
    graph = Graph.from_edges([0, 1], [1, 0], [5.0, 2.0], directed=False, backend="numpy")
    assert graph.num_edges == 2
    assert graph.weights.tolist() == [2.0, 2.0]
    assert graph.summary.duplicates_merged == 1


def test_float32_weights_stay_float32():
    graph = Graph.from_edges([0], [1], np.array([1.5], dtype=np.float32), backend="numpy")
    assert graph.weights.dtype == np.float32


def test_index_dtype_switches_to_int64():
    assert index_dtype(2**31 - 1) == np.int32
    assert index_dtype(2**31) == np.int64


@pytest.mark.parametrize(
    "src, dst, weight, num_vertices, match",
    [
        ([0, 1], [1], None, None, "one length"),
        ([0, -1], [1, 1], None, None, "negative vertex id -1"),
        ([0, 1], [1, 7], None, 5, r"vertex 7 out of range \[0, 5\)"),
        ([0.5], [1], None, None, "integers"),
        ([0], [1], ["a"], None, "numbers"),
        ([0], [1], [1.0, 2.0], None, "weight has shape"),
    ],
)
def test_from_edges_rejects_bad_input(src, dst, weight, num_vertices, match):
    with pytest.raises(ValueError, match=match):
        Graph.from_edges(src, dst, weight, num_vertices=num_vertices, backend="numpy")


def test_from_edges_rejects_unknown_duplicates_rule():
    with pytest.raises(ValueError, match="duplicates"):
        Graph.from_edges([0], [1], duplicates="max", backend="numpy")


@pytest.mark.parametrize("directed", [True, False])
def test_from_networkx_round_trip(directed):
    nx_graph = nx.gnm_random_graph(30, 80, seed=3, directed=directed)
    for i, (u, v) in enumerate(nx_graph.edges):
        nx_graph[u][v]["weight"] = float(i % 7)
    nx_graph.add_edge(4, 4, weight=0.5)
    graph = Graph.from_networkx(nx_graph, backend="numpy")
    assert graph.directed == directed and graph.num_vertices == 30
    assert weighted_edges(graph.to_networkx()) == weighted_edges(nx_graph)


def test_from_networkx_without_weights():
    graph = Graph.from_networkx(nx.path_graph(4), backend="numpy")
    assert not graph.weighted and graph.num_edges == 6


def test_from_networkx_needs_integer_nodes():
    with pytest.raises(ValueError, match="convert_node_labels_to_integers"):
        Graph.from_networkx(nx.Graph([("a", "b")]), backend="numpy")


def test_from_networkx_multigraph_says_how_parallel_edges_merge():
    """networkx's PageRank counts parallel edges (sum); shortest paths see the lightest (min);
    a multigraph must say which, rather than have them merged one way silently."""
    multi = nx.MultiDiGraph([(0, 1), (0, 1), (1, 2), (2, 0), (0, 2)])
    with pytest.raises(ValueError, match="multigraph needs 'min' or 'sum'"):
        Graph.from_networkx(multi, backend="numpy")
    summed = Graph.from_networkx(multi, duplicates="sum", backend="numpy")
    assert weighted_edges(summed.to_networkx())[(0, 1)] == 2.0
    rank = nx.pagerank(multi)
    np.testing.assert_allclose(bg.pagerank(summed).rank, [rank[v] for v in range(3)], rtol=1e-6)
    weighted = nx.MultiGraph([(0, 1, {"weight": 3.0}), (0, 1, {"weight": 1.0})])
    lightest = Graph.from_networkx(weighted, duplicates="min", backend="numpy")
    assert weighted_edges(lightest.to_networkx()) == {(0, 1): 1.0}


def test_from_networkx_names_a_weight_that_is_not_a_number():
    with pytest.raises(ValueError, match=r"edge \(0, 1\) has weight='x', not a number"):
        Graph.from_networkx(nx.Graph([(0, 1, {"weight": "x"})]), backend="numpy")


def test_weight_range():
    def of(weights):
        return Graph.from_edges([0, 1], [1, 2], weights, backend="numpy").weight_range()

    assert of([2.0, -1.0]) == (-1.0, 2.0)
    assert all(np.isnan(of([2.0, np.nan])))
    assert of(None) == (1.0, 1.0)
    assert Graph.from_edges([], [], num_vertices=3, backend="numpy").weight_range() == (0.0, 0.0)


def test_from_scipy_rejects_a_dense_array():
    with pytest.raises(TypeError, match="csr_array"):
        Graph.from_scipy(np.eye(3), backend="numpy")


def test_from_scipy_keeps_explicit_zeros():
    matrix = sp.coo_matrix(([0.0, 2.0, 3.0], ([0, 1, 2], [1, 2, 0])), shape=(4, 4))
    graph = Graph.from_scipy(matrix, backend="numpy")
    assert graph.num_vertices == 4 and graph.num_edges == 3
    assert weighted_edges(graph.to_networkx()) == {(0, 1): 0.0, (1, 2): 2.0, (2, 0): 3.0}
    assert (graph.to_scipy() != matrix.tocsr()).nnz == 0


def test_from_scipy_undirected_and_square():
    matrix = sp.csr_matrix(([1.0], ([0], [2])), shape=(3, 3))
    assert Graph.from_scipy(matrix, directed=False, backend="numpy").num_edges == 2
    with pytest.raises(ValueError, match="square"):
        Graph.from_scipy(sp.csr_matrix((2, 3)), backend="numpy")


def test_check_vertex():
    graph = Graph.from_edges([0], [1], num_vertices=3, backend="numpy")
    assert graph.check_vertex(2) == 2
    assert graph.check_vertex(np.int64(1)) == 1
    with pytest.raises(ValueError, match=r"vertex 3 out of range \[0, 3\)"):
        graph.check_vertex(3)
    with pytest.raises(ValueError, match=r"bfs\(source=-1\).*out of range"):
        graph.check_vertex(-1, name="source", where="bfs")
    for not_an_id in (1.0, True, "1", None):
        with pytest.raises(ValueError, match="must be an integer"):
            graph.check_vertex(not_an_id)


@given(edge_lists(min_vertices=0))
def test_to_same_backend_is_identity(edges):
    n, src, dst, weight, directed = edges
    graph = Graph.from_edges(src, dst, weight, num_vertices=n, directed=directed, backend="numpy")
    assert graph.to("numpy") is graph


def test_build_peak_memory_per_edge():
    """The build sorts one int64 key per stored edge and keeps no int64 copies of the ids: on
    NumPy its peak stays under 40 bytes per stored edge, weights included (it was 56 when it
    sorted twice; on the GPU that difference decided whether rmat26 could be built)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    count, n = 500_000, 2**16
    src, dst = (
        rng.integers(0, n, count).astype(np.int32),
        rng.integers(0, n, count).astype(np.int32),
    )
    weight = rng.integers(1, 65, count).astype(np.float32)
    tracemalloc.start()
    try:
        Graph.from_edges(src, dst, weight, num_vertices=n, directed=False, backend="numpy")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2 * count, f"{peak / (2 * count):.1f} bytes per stored edge"
