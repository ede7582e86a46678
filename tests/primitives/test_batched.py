"""Batched primitives against networkx: BFS from many sources, betweenness with networkx's
sampling (k, seed), closeness and harmonic centrality; batches that do and do not divide the
sources; on 1 to 5 virtual devices through assert_lifts."""

import random

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import as_array, examples, graphs

import bspgraph as bg
from bspgraph.testing import assert_lifts

batches = st.sampled_from([1, 2, 3, 4, None])  # None: every source in one batch
scalings = st.sampled_from([(True, False), (False, False), (True, True), (False, True)])


def _depths(nx_graph, sources, n):
    return np.array(
        [as_array(nx.single_source_shortest_path_length(nx_graph, s), n, -1) for s in sources]
    ).reshape(len(sources), n)


@given(graphs(), batches, st.data())
def test_bfs_from_sources_is_networkx(case, batch, data):
    graph, nx_graph = case
    n = graph.num_vertices
    sources = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n), label="sources")
    result = bg.bfs(graph, sources=sources, batch=batch)
    assert result.depth.shape == (len(sources), n) and result.parent is None
    np.testing.assert_array_equal(result.depth, _depths(nx_graph, sources, n))


@given(graphs(max_vertices=16, max_edges=40), scalings, batches, st.data())
def test_betweenness_batches_are_networkx(case, scaling, batch, data):
    graph, nx_graph = case
    normalized, endpoints = scaling
    options = {"normalized": normalized, "endpoints": endpoints}
    if data.draw(st.booleans(), label="sampled"):
        options["k"] = data.draw(st.integers(1, graph.num_vertices), label="k")
        options["seed"] = data.draw(st.integers(0, 1000), label="seed")
    result = bg.betweenness_centrality(graph, batch=batch, **options)
    expected = nx.betweenness_centrality(nx_graph, **options)
    np.testing.assert_allclose(
        result.centrality, as_array(expected, graph.num_vertices, -1.0), rtol=1e-9, atol=1e-12
    )


def test_betweenness_sample_is_networkx_for_every_kind_of_seed():
    g = nx.gnp_random_graph(30, 0.1, seed=4, directed=True)
    graph = bg.Graph.from_networkx(g, backend="numpy")
    for seed in (7, random.Random(7)):
        ours = bg.betweenness_centrality(graph, k=10, seed=seed, batch=4).centrality
        seed = random.Random(7) if isinstance(seed, random.Random) else seed
        expected = as_array(nx.betweenness_centrality(g, k=10, seed=seed), 30, -1.0)
        np.testing.assert_allclose(ours, expected)
    random.seed(3)  # seed=None: the random module's own state, as networkx
    ours = bg.betweenness_centrality(graph, k=5).centrality
    random.seed(3)
    np.testing.assert_allclose(ours, as_array(nx.betweenness_centrality(g, k=5), 30, -1.0))


@given(graphs(), st.booleans(), batches)
def test_closeness_is_networkx(case, wf_improved, batch):
    graph, nx_graph = case
    result = bg.closeness_centrality(graph, wf_improved=wf_improved, batch=batch)
    expected = nx.closeness_centrality(nx_graph, wf_improved=wf_improved)
    np.testing.assert_allclose(
        result.centrality, as_array(expected, graph.num_vertices, -1.0), rtol=1e-12
    )


@given(graphs(), batches, st.data())
def test_harmonic_is_networkx(case, batch, data):
    graph, nx_graph = case
    n = graph.num_vertices
    subsets = st.one_of(st.none(), st.lists(st.integers(0, n - 1), max_size=n))
    nbunch, sources = data.draw(subsets, label="nbunch"), data.draw(subsets, label="sources")
    result = bg.harmonic_centrality(graph, nbunch, sources, batch=batch)
    expected = nx.harmonic_centrality(nx_graph, nbunch=nbunch, sources=sources)
    np.testing.assert_allclose(result.centrality, as_array(expected, n, 0.0), rtol=1e-12)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda g: bg.bfs(g, sources=[0, 9]), r"bfs\(sources=9\): vertex 9 out of range \[0, 3\)"),
        (lambda g: bg.bfs(g, sources=[1, 1]), "vertex 1 appears twice"),
        (lambda g: bg.bfs(g, 0, sources=[1]), "either source= .* or sources="),
        (lambda g: bg.bfs(g), "either source="),
        (lambda g: bg.bfs(g, sources=[0], parents=True), "parents"),
        (lambda g: bg.bfs(g, sources=[0], batch=0), r"batch=0\): expected a number of lanes"),
        (lambda g: bg.betweenness_centrality(g, k=4), r"k=4\): expected 0 <= k <= 3"),
        (lambda g: bg.betweenness_centrality(g, [0], k=1), "not both"),
        (lambda g: bg.betweenness_centrality(g, k=0), "at least one"),
        (lambda g: bg.harmonic_centrality(g, [5]), r"nbunch=5\): vertex 5 out of range"),
    ],
)
def test_batched_primitives_refuse_bad_input(call, message):
    graph = bg.Graph.from_edges([0, 1], [1, 2], backend="numpy")
    with pytest.raises(ValueError, match=message):
        call(graph)


def test_bfs_sources_literal_cases():
    empty = bg.Graph.from_edges([], [], num_vertices=0, backend="numpy")
    assert bg.bfs(empty, sources=[]).depth.shape == (0, 0)
    path = bg.Graph.from_edges([0, 1], [1, 2], backend="numpy")  # directed
    result = bg.bfs(path, sources=[2, 0], batch=1)
    assert result.depth.tolist() == [[-1, -1, 0], [0, 1, 2]]
    assert result.stats.iterations == 4  # 1 + 3 supersteps (the last finds nothing)
    assert bg.closeness_centrality(empty).centrality.shape == (0,)
    single = bg.Graph.from_edges([0], [0], num_vertices=1, backend="numpy")
    assert bg.closeness_centrality(single).centrality.tolist() == [0.0]


# --- lifting: the batched primitives on 1..5 devices, every partitioner and communicator ----
small = bg.testing.graphs(max_vertices=9, max_edges=20)


def _rich():
    """Two components with a self-loop and an isolated vertex, directed and undirected."""
    found = []
    for directed in (False, True):
        g = nx.gnp_random_graph(11, 0.3, seed=5, directed=directed)
        g.add_edges_from([(11, 12), (12, 13), (13, 13), (11, 13)])
        g.add_node(14)
        found.append(bg.Graph.from_networkx(g, backend="numpy"))
    return found


def _some_sources(graph):
    return list(range(0, graph.num_vertices, 2))  # 5 of 9: batches of 2 do not divide them


def test_batched_bfs_lifts():
    def run(graph, **run):
        return bg.bfs(graph, sources=_some_sources(graph), batch=2, **run).depth

    assert_lifts(run, _rich())
    assert_lifts(run, small, max_examples=6)


def test_batched_betweenness_lifts():
    def run(graph, **run):
        return bg.betweenness_centrality(graph, batch=4, endpoints=True, **run)

    assert_lifts(run, _rich())
    assert_lifts(run, small, max_examples=6)


def test_closeness_lifts():
    assert_lifts(lambda graph, **run: bg.closeness_centrality(graph, batch=4, **run), _rich())


@examples(10)
@given(
    graphs(max_vertices=12, max_edges=30),
    st.integers(2, 5),
    batches,
    st.sampled_from(bg.testing.COMMUNICATORS),
)
def test_batched_betweenness_on_devices_is_networkx(case, devices, batch, communicator):
    graph, nx_graph = case
    k = max(1, graph.num_vertices // 2)
    result = bg.betweenness_centrality(
        graph, k=k, seed=1, batch=batch, devices=devices, communicator=communicator, check=True
    )
    expected = nx.betweenness_centrality(nx_graph, k=k, seed=1)
    np.testing.assert_allclose(
        result.centrality, as_array(expected, graph.num_vertices, -1.0), rtol=1e-9, atol=1e-12
    )


def test_batched_primitives_on_each_backend(backend):
    """The same answers on NumPy and (with a GPU) CuPy: cuSPARSE's products, float32 counts."""
    g = nx.gnp_random_graph(60, 0.06, seed=2, directed=True)
    g.add_edges_from([(3, 3), (60, 61)])  # a self-loop, a second component
    graph = bg.Graph.from_networkx(g, backend=backend)
    n = graph.num_vertices
    sources = list(range(0, n, 3))
    depth = bg.bfs(graph, sources=sources, batch=7, backend=backend).depth
    np.testing.assert_array_equal(depth, _depths(g, sources, n))
    for options in ({}, {"k": 20, "seed": 3, "endpoints": True}):
        ours = bg.betweenness_centrality(graph, batch=16, backend=backend, **options).centrality
        expected = as_array(nx.betweenness_centrality(g, **options), n, -1.0)
        np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=1e-12)
    ours = bg.closeness_centrality(graph, batch=32, backend=backend).centrality
    np.testing.assert_allclose(ours, as_array(nx.closeness_centrality(g), n, -1.0), rtol=1e-12)
    ours = bg.harmonic_centrality(graph, backend=backend).centrality
    np.testing.assert_allclose(ours, as_array(nx.harmonic_centrality(g), n, -1.0), rtol=1e-12)
