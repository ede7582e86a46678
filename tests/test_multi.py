"""Every primitive gives networkx's answer on 1..5 virtual devices, for every partitioner and
communicator (NumPy, one process)."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import as_array, examples, graphs

import bspgraph as bg

PARTITIONERS = ["random", "biased", "edge_balanced"]
COMMUNICATORS = ["broadcast", "selective", "butterfly:1", "butterfly:2", "butterfly:4"]

runs = st.tuples(
    st.integers(1, 5), st.sampled_from(PARTITIONERS), st.sampled_from(COMMUNICATORS)
).map(lambda r: {"devices": r[0], "partitioner": r[1], "communicator": r[2]})


@examples(80)
@given(graphs(), runs, st.data())
def test_bfs_on_devices(case, run, data):
    graph, nx_graph = case
    source = data.draw(st.integers(0, graph.num_vertices - 1))
    direction = data.draw(st.sampled_from(["push", "pull", "auto"]))
    result = bg.bfs(graph, source, parents=True, direction=direction, **run)
    expected = as_array(
        nx.single_source_shortest_path_length(nx_graph, source), graph.num_vertices, -1
    )
    np.testing.assert_array_equal(result.depth, expected)
    for vertex in np.flatnonzero(result.depth > 0):
        assert result.depth[result.parent[vertex]] == result.depth[vertex] - 1
        assert nx_graph.has_edge(result.parent[vertex], vertex)


@examples(60)
@given(graphs(), runs, st.data())
def test_sssp_on_devices(case, run, data):
    graph, nx_graph = case
    source = data.draw(st.integers(0, graph.num_vertices - 1))
    expected = as_array(
        nx.single_source_dijkstra_path_length(nx_graph, source), graph.num_vertices, np.inf
    )
    np.testing.assert_allclose(bg.sssp(graph, source, **run).distance, expected)


@examples(60)
@given(graphs(), runs)
def test_connected_components_on_devices(case, run):
    graph, nx_graph = case
    np.testing.assert_array_equal(
        bg.connected_components(graph, **run).labels, component_minima(nx_graph)
    )


@st.composite
def dense_graphs(draw):
    """More than 8 edges a vertex on average (CC samples, then skips the largest component):
    a dense core on random ids, a few edges anywhere, isolated vertices, either direction."""
    n = draw(st.integers(20, 40))
    core = draw(st.integers(int((12 * n) ** 0.5) + 2, n))  # enough distinct pairs
    directed = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    members = rng.permutation(n)[:core]
    count = 20 * n
    src, dst = members[rng.integers(0, core, count)], members[rng.integers(0, core, count)]
    extra = draw(st.integers(0, 6))
    src = np.concatenate([src, rng.integers(0, n, extra)])
    dst = np.concatenate([dst, rng.integers(0, n, extra)])
    graph = bg.Graph.from_edges(src, dst, num_vertices=n, directed=directed, backend="numpy")
    nx_graph = (nx.DiGraph if directed else nx.Graph)()
    nx_graph.add_nodes_from(range(n))
    nx_graph.add_edges_from(zip(src.tolist(), dst.tolist()))
    return graph, nx_graph


@examples(40)
@given(dense_graphs(), runs)
def test_connected_components_of_dense_graphs_on_devices(case, run):
    graph, nx_graph = case
    assert graph.num_edges > 8 * graph.num_vertices  # the sampled path, then the skip
    np.testing.assert_array_equal(
        bg.connected_components(graph, **run).labels, component_minima(nx_graph)
    )


def component_minima(nx_graph) -> np.ndarray:
    """Each vertex's label: the smallest id of its (weakly) connected component."""
    directed = nx_graph.is_directed()
    components = (nx.weakly_connected_components if directed else nx.connected_components)(nx_graph)
    labels = np.empty(nx_graph.number_of_nodes(), dtype=np.int64)
    for component in components:
        labels[list(component)] = min(component)
    return labels


@examples(40)
@given(graphs(), runs)
def test_pagerank_on_devices(case, run):
    graph, nx_graph = case
    expected = as_array(nx.pagerank(nx_graph, tol=1e-10, max_iter=500), graph.num_vertices, 0.0)
    rank = bg.pagerank(graph, tol=1e-10, max_iter=500, **run).rank
    np.testing.assert_allclose(rank, expected, rtol=1e-5, atol=1e-8)


@examples(30)
@given(graphs(max_vertices=12, max_edges=30), runs)
def test_betweenness_on_devices(case, run):
    graph, nx_graph = case
    nx_graph = nx.DiGraph(nx_graph) if graph.directed else nx.Graph(nx_graph)
    expected = as_array(nx.betweenness_centrality(nx_graph, weight=None), graph.num_vertices, 0.0)
    np.testing.assert_allclose(
        bg.betweenness_centrality(graph, **run).centrality, expected, rtol=1e-9, atol=1e-12
    )


@examples(30)
@given(graphs(directed=False), runs)
def test_triangles_on_devices(case, run):
    graph, nx_graph = case
    expected = as_array(nx.triangles(nx_graph), graph.num_vertices, 0)
    result = bg.triangle_count(graph, **run)
    np.testing.assert_array_equal(result.per_vertex, expected)


def test_issue_example_three_devices_equals_one():
    graph = bg.generators.rmat(12, 16, seed=2, backend="numpy")
    one = bg.bfs(graph, 0, devices=1)
    three = bg.bfs(graph, 0, devices=3, partitioner="edge_balanced", communicator="butterfly")
    np.testing.assert_array_equal(three.depth, one.depth)
    assert three.stats.devices == 3 and three.stats.supersteps[0].messages > 0


def test_broadcast_sends_p_times_p_minus_one_messages_a_superstep():
    graph = bg.generators.grid(6, 6, backend="numpy")
    result = bg.bfs(graph, 0, devices=4, communicator="broadcast", direction="push")
    assert all(step.messages == 4 * 3 for step in result.stats.supersteps)


def test_supersteps_time_their_exchanges_apart():
    graph = bg.generators.rmat(10, 16, seed=2, backend="numpy")
    steps = bg.pagerank(graph, devices=3, communicator="broadcast").stats.supersteps
    assert all(0 < step.comm_seconds <= step.seconds for step in steps)
    assert bg.pagerank(graph).stats.supersteps[0].comm_seconds == 0


def test_scratch_state_stays_out_of_the_result():
    graph = bg.generators.rmat(8, 8, seed=2, backend="numpy")
    from bspgraph.primitives.pagerank import PageRank

    primitive = PageRank(alpha=0.85, tol=1e-6, max_iter=100)
    state, _ = bg.enactor.enact(primitive, graph, teleport=np.full(256, 1 / 256))
    assert set(state) == {"rank", "dangling", "error"}


@pytest.mark.parametrize("devices", [0, -1, [0, 0], 2.0, "2", [0, 1.5], [True]])
def test_bad_device_counts_are_errors(devices):
    graph = bg.generators.grid(2, 2, backend="numpy")
    with pytest.raises(ValueError, match="devices"):
        bg.bfs(graph, 0, devices=devices)


@pytest.mark.parametrize("call", [lambda g: bg.bfs(g, 0, device=2),
                                  lambda g: bg.pagerank(g, nstart=[1, 1, 1, 1]),
                                  lambda g: bg.connected_components(g, weight="w")])  # fmt: skip
def test_a_mistyped_keyword_is_named(call):
    """Not a TypeError from inside the primitive's init_frontier."""
    graph = bg.generators.grid(2, 2, backend="numpy")
    with pytest.raises(TypeError, match=r": unexpected keyword argument\(s\) '.*'; the run opt"):
        call(graph)


def test_unknown_partitioner_is_named():
    graph = bg.generators.grid(2, 2, backend="numpy")
    with pytest.raises(ValueError, match="metiss"):
        bg.bfs(graph, 0, devices=2, partitioner="metiss")


def test_components_join_across_a_lopsided_cut():
    """Found by hypothesis: the device owning almost no edges pushed while the other pulled,
    and the edge 0 - 1 between them was skipped by both."""
    src, dst = [0, 0, 0, 1, 2, 3, 4, 6], [0, 1, 6, 0, 2, 3, 4, 0]
    graph = bg.Graph.from_edges(np.array(src), np.array(dst), num_vertices=11, directed=False,
                                backend="numpy")  # fmt: skip
    for communicator in ("broadcast", "selective", "butterfly"):
        labels = bg.connected_components(graph, devices=2, partitioner="random",
                                         communicator=communicator).labels  # fmt: skip
        assert labels.tolist() == [0, 0, 2, 3, 4, 5, 0, 7, 8, 9, 10]


@pytest.mark.parametrize("devices", [2, 3])
def test_ordered_columns_on_each_device_leave_the_answers(devices, monkeypatch):
    """Each device part renames the columns of its own lists (by its rows' degrees): PageRank
    and SSSP give the answers of the lists as stored, to the bit."""
    graph = bg.generators.rmat(10, 8, seed=3, weights=True)
    plain = bg.pagerank(graph, devices=devices).rank, bg.sssp(graph, 0, devices=devices).distance
    for name, value in (("ORDERED_VERTICES", 1), ("SKEW", 1), ("ORDER_AFTER", 1)):
        monkeypatch.setattr(bg.frontier.operators, name, value)
    graph = bg.generators.rmat(10, 8, seed=3, weights=True)  # fresh parts, fresh caches
    ordered = bg.pagerank(graph, devices=devices).rank, bg.sssp(graph, 0, devices=devices).distance
    np.testing.assert_array_equal(ordered[0], plain[0])
    np.testing.assert_array_equal(ordered[1], plain[1])
