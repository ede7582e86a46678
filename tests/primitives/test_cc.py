"""Connected components against networkx: (weakly) connected, smallest id as label."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from strategies import graphs

import bspgraph as bg


def expected_labels(nx_graph):
    components = (
        nx.weakly_connected_components(nx_graph)
        if nx_graph.is_directed()
        else nx.connected_components(nx_graph)
    )
    labels = np.empty(nx_graph.number_of_nodes(), dtype=np.int64)
    for component in components:
        labels[list(component)] = min(component)
    return labels


@given(graphs())
def test_cc_matches_networkx(case):
    graph, nx_graph = case
    result = bg.connected_components(graph)
    np.testing.assert_array_equal(result.labels, expected_labels(nx_graph))


def test_cc_path_in_reverse_order_needs_pointer_jumping():
    n = 64  # edges n-1 -> n-2 -> ... -> 0: labels travel the whole path
    graph = bg.Graph.from_edges(np.arange(1, n), np.arange(n - 1), backend="numpy")
    result = bg.connected_components(graph)
    assert (result.labels == 0).all()
    assert result.stats.iterations <= 8


def test_cc_literal_cases():
    empty = bg.Graph.from_edges([], [], num_vertices=0, backend="numpy")
    assert bg.connected_components(empty).labels.shape == (0,)
    single = bg.Graph.from_edges([], [], num_vertices=1, backend="numpy")
    assert bg.connected_components(single).labels.tolist() == [0]
    isolated = bg.Graph.from_edges([0, 3], [1, 2], num_vertices=5, directed=False, backend="numpy")
    assert bg.connected_components(isolated).labels.tolist() == [0, 0, 2, 2, 4]
    karate = bg.Graph.from_networkx(nx.karate_club_graph(), backend="numpy")
    assert (bg.connected_components(karate).labels == 0).all()


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_cc_dense_graphs_sample_first(directed, seed):
    """More than 8 edges a vertex on average: the first superstep links along each vertex's
    first two edges only, and the answer is still networkx's (components of every size), on
    one device (in one superstep: union-find over every edge is done) and on several."""
    rng = np.random.default_rng(seed)
    n, m = 400, 5000
    src, dst = rng.integers(0, 300, m), rng.integers(0, 300, m)  # 300..399 stay isolated
    src[:40], dst[:40] = rng.integers(300, 330, 40), rng.integers(300, 330, 40)  # a small one
    graph = bg.Graph.from_edges(src, dst, num_vertices=n, directed=directed, backend="numpy")
    assert graph.num_edges > 8 * n
    nx_graph = (nx.DiGraph if directed else nx.Graph)()
    nx_graph.add_nodes_from(range(n))
    nx_graph.add_edges_from(zip(src.tolist(), dst.tolist()))
    result = bg.connected_components(graph)
    np.testing.assert_array_equal(result.labels, expected_labels(nx_graph))
    assert result.stats.iterations == 1  # the sampled lists, then every edge outside the hub's tree
    for run in (
        {"devices": 3, "partitioner": "random"},
        {"devices": 2, "partitioner": "edge_balanced", "communicator": "butterfly"},
    ):
        labels = bg.connected_components(graph, **run).labels
        np.testing.assert_array_equal(labels, expected_labels(nx_graph))


@pytest.mark.parametrize("directed", [False, True])
def test_cc_largest_component_hooks_under_a_smaller_label(directed):
    """After sampling, the giant component (label 1) sits out of the superstep over every edge;
    a vertex outside it with a smaller label (5, in {0, 5, 7}) touches it by an edge that no
    sampled list holds (5's first two neighbours are 0 and 7; 300's are 1 and 2): the giant
    must hook under 0, read from 5's side."""
    rng = np.random.default_rng(7)
    giant = np.setdiff1d(np.arange(1, 400), [5, 7])
    src, dst = rng.choice(giant, 6000), rng.choice(giant, 6000)
    src = np.concatenate([src, [0, 0, 5, 300, 300, 5]])
    dst = np.concatenate([dst, [5, 7, 7, 1, 2, 300]])
    graph = bg.Graph.from_edges(src, dst, num_vertices=400, directed=directed, backend="numpy")
    nx_graph = (nx.DiGraph if directed else nx.Graph)()
    nx_graph.add_nodes_from(range(400))
    nx_graph.add_edges_from(zip(src.tolist(), dst.tolist()))
    expected = expected_labels(nx_graph)
    assert (expected == 0).all()
    for run in (
        {},
        {"devices": 3, "partitioner": "random"},
        {"devices": 2, "communicator": "butterfly"},
    ):
        np.testing.assert_array_equal(bg.connected_components(graph, **run).labels, expected)


@pytest.mark.parametrize("directed", [False, True])
def test_cc_skips_the_hub_s_tree_outside_the_giant_component(directed):
    """The skip leaves out the tree of the vertex of most edges, the same vertex on every
    device: here a star's centre (120 edges) beside a giant component whose vertices have
    about 40, so that every edge of the giant is linked; the answer is networkx's on one
    device and on several."""
    from bspgraph.primitives import cc

    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 300, 6000), rng.integers(0, 300, 6000)
    leaves = np.arange(380, 500)
    src = np.concatenate([src, np.full(leaves.shape, 350)])
    dst = np.concatenate([dst, leaves])
    graph = bg.Graph.from_edges(src, dst, num_vertices=500, directed=directed, backend="numpy")
    assert cc._sampled(graph) and cc._hub(graph) == 350
    nx_graph = (nx.DiGraph if directed else nx.Graph)()
    nx_graph.add_nodes_from(range(500))
    nx_graph.add_edges_from(zip(src.tolist(), dst.tolist()))
    for run in ({}, {"devices": 3, "partitioner": "random"}, {"devices": 4}):
        labels = bg.connected_components(graph, **run).labels
        np.testing.assert_array_equal(labels, expected_labels(nx_graph))


def _rmat(scale, edge_factor, directed):
    """An R-MAT graph; directed: each edge once, from its smaller end (weak components)."""
    graph = bg.generators.rmat(scale, edge_factor, seed=scale + edge_factor, backend="numpy")
    if not directed:
        return graph
    src = np.repeat(np.arange(graph.num_vertices), np.diff(graph.forward.offsets))
    dst = graph.forward.indices
    keep = src < dst
    return bg.Graph.from_edges(
        src[keep], dst[keep], num_vertices=graph.num_vertices, directed=True, backend="numpy"
    )


def _nx_of(graph):
    nx_graph = (nx.DiGraph if graph.directed else nx.Graph)()
    nx_graph.add_nodes_from(range(graph.num_vertices))
    offsets, indices = graph.forward.offsets, graph.forward.indices
    nx_graph.add_edges_from(
        (u, int(v)) for u in range(graph.num_vertices) for v in indices[offsets[u] : offsets[u + 1]]
    )
    return nx_graph


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("partitioner", ["random", "biased", "edge_balanced"])
@pytest.mark.parametrize("devices", [2, 3, 4])
def test_cc_on_several_devices_reads_no_edge_after_the_full_link(
    monkeypatch, directed, partitioner, devices
):
    """After the superstep over every edge, a superstep links only the pairs (label a vertex
    had, label another device gave it): no list is read again, and a few supersteps end the
    run with networkx's labels, on a sampled (dense) R-MAT graph and an unsampled sparse one."""
    from bspgraph.primitives import cc

    linked_in = []
    step, link = cc.CC.step, cc._link
    current = []
    monkeypatch.setattr(
        cc.CC, "step", lambda self, g, f, s, i: current.append(i) or step(self, g, f, s, i)
    )
    monkeypatch.setattr(cc, "_link", lambda *a, **k: linked_in.append(current[-1]) or link(*a, **k))
    for edge_factor in (16, 2):
        graph = _rmat(10, edge_factor, directed)
        assert cc._sampled(graph) == (edge_factor == 16)
        linked_in.clear()
        result = bg.connected_components(graph, devices=devices, partitioner=partitioner)
        np.testing.assert_array_equal(result.labels, expected_labels(_nx_of(graph)))
        assert set(linked_in) == {0}
        assert result.stats.iterations <= 4


def test_cc_lifts():
    """The one-device labels on every device count x partitioner x communicator, in checked
    runs (the contract: every changed label returned; ``previous`` is scratch, written
    anywhere), on small graphs of both kinds and on dense ones that sample first."""
    dense = [
        bg.Graph.from_edges(
            *np.random.default_rng(seed).integers(0, 40, (2, 500)),
            num_vertices=48,
            directed=directed,
            backend="numpy",
        )
        for seed, directed in ((1, False), (2, True))
    ]
    assert all(cc_sampled(graph) for graph in dense)
    run = lambda graph, **r: bg.connected_components(graph, **r).labels  # noqa: E731
    bg.testing.assert_lifts(run, max_examples=8)
    bg.testing.assert_lifts(run, dense, devices=[2, 3, 4])


def cc_sampled(graph):
    from bspgraph.primitives import cc

    return cc._sampled(graph)


@pytest.mark.parametrize("directed", [True, False])
def test_the_first_link_on_numpy_is_scipy_s_components_and_equals_hook_rounds(directed):
    """On NumPy, a link over every row of a forest of single vertices is one pass of scipy's
    weakly connected components (strong ones on an undirected graph's symmetric lists): the
    same forest (each vertex under its component's least id) as the hook rounds give, with
    sinks, self-loops and isolated vertices."""
    from bspgraph.primitives import _cc_kernels

    rng = np.random.default_rng(7)
    n = 500
    src, dst = rng.integers(0, n, (2, 300))
    src[:5] = dst[:5]
    graph = bg.Graph.from_edges(src, dst, num_vertices=n, directed=directed, backend="numpy")
    offsets, indices = graph.forward.offsets, graph.forward.indices
    by_components = np.arange(n, dtype=indices.dtype)
    _cc_kernels._components(by_components, offsets, indices, symmetric=not directed)
    by_rounds = np.arange(n, dtype=indices.dtype)
    tails = np.repeat(np.arange(n, dtype=indices.dtype), np.diff(offsets))
    _cc_kernels._hook_rounds(graph.backend, by_rounds, tails, indices)
    _cc_kernels._flatten(by_rounds)
    np.testing.assert_array_equal(by_components, by_rounds)
    assert (by_components <= np.arange(n)).all()


def test_a_sample_is_linked_by_rounds_and_every_list_by_scipy_s_components(monkeypatch):
    """On NumPy the first link of a forest of single vertices goes to scipy's components
    over every list (a road network's or a mesh's long paths), but by hook rounds over a
    sample of each list (Afforest's: its trees take a few rounds, which cost the sample's
    entries, not the vertices); both join the ends of every entry they cover."""
    from bspgraph import frontier as fr
    from bspgraph.primitives import _cc_kernels

    graph = bg.generators.rmat(10, 16, seed=3, backend="numpy")
    called = []
    components = _cc_kernels._components
    monkeypatch.setattr(
        _cc_kernels,
        "_components",
        lambda *args, **kw: called.append(True) or components(*args, **kw),
    )
    n = graph.num_vertices
    sampled = np.arange(n, dtype=graph.indices.dtype)
    fr.link(graph, sampled, sample=2)
    assert not called
    whole = np.arange(n, dtype=graph.indices.dtype)
    fr.link(graph, whole)
    assert called
    fr.flatten(graph, sampled)
    csr = graph.cached(("first entries", "out", 2), lambda: None)
    tails = np.repeat(np.arange(n), np.diff(csr.offsets))
    assert (sampled[tails] == sampled[csr.indices]).all()  # every sampled entry's ends joined
