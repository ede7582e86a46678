"""Betweenness centrality against networkx: all sources, sampled sources, every scaling."""

import random
import types

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import as_array, graphs

import bspgraph as bg

scalings = st.sampled_from([(True, False), (False, False), (True, True), (False, True)])


@given(graphs(max_vertices=16, max_edges=40), scalings)
def test_bc_matches_networkx(case, scaling):
    graph, nx_graph = case
    normalized, endpoints = scaling
    result = bg.betweenness_centrality(graph, normalized=normalized, endpoints=endpoints)
    expected = nx.betweenness_centrality(nx_graph, normalized=normalized, endpoints=endpoints)
    np.testing.assert_allclose(result.centrality, as_array(expected, graph.num_vertices, np.nan))


@given(graphs(max_vertices=16, max_edges=40), scalings, st.data())
def test_bc_sources_match_networkx_sample(case, scaling, data):
    graph, nx_graph = case
    normalized, endpoints = scaling
    k = data.draw(st.integers(1, graph.num_vertices))
    seed = data.draw(st.integers(0, 1000))
    sources = random.Random(seed).sample(list(nx_graph), k)  # networkx's own sample for seed
    result = bg.betweenness_centrality(graph, sources, normalized=normalized, endpoints=endpoints)
    expected = nx.betweenness_centrality(
        nx_graph, k=k, seed=seed, normalized=normalized, endpoints=endpoints
    )
    np.testing.assert_allclose(result.centrality, as_array(expected, graph.num_vertices, -1.0))


def test_bc_literal_cases():
    empty = bg.Graph.from_edges([], [], num_vertices=0, backend="numpy")
    assert bg.betweenness_centrality(empty).centrality.shape == (0,)
    single = bg.Graph.from_edges([], [], num_vertices=1, backend="numpy")
    assert bg.betweenness_centrality(single).centrality.tolist() == [0.0]
    path = bg.Graph.from_edges([0, 1], [1, 2], directed=False, backend="numpy")
    assert bg.betweenness_centrality(path, normalized=False).centrality.tolist() == [0, 1, 0]
    karate = nx.karate_club_graph()
    expected = as_array(nx.betweenness_centrality(karate), 34, 0)
    for batch, runs in ((1, 34), (None, 1), (5, 7)):  # one source a run; all; 7 batches
        result = bg.betweenness_centrality(
            bg.Graph.from_networkx(karate, backend="numpy"), batch=batch
        )
        np.testing.assert_allclose(result.centrality, expected)
        assert result.stats.iterations > runs * 2  # both phases of every run, summed


@pytest.mark.parametrize(
    "sources, message",
    [([], "at least one"), ([1, 1], "distinct"), ([9], "range"), (2, "k="), ([[0, 1]], "sequence")],
)
def test_bc_rejects_bad_sources(sources, message):
    graph = bg.Graph.from_edges([0, 1], [1, 2], backend="numpy")
    with pytest.raises(ValueError, match=message):
        bg.betweenness_centrality(graph, sources)


@pytest.mark.parametrize("devices", [1, 3])
def test_bc_says_when_path_counts_overflow_float64(devices):
    """1100 diamonds in a row: 2^1100 shortest paths from vertex 0 to the end, past float64;
    an error naming the first vertex past the range, not a centrality of NaN."""
    src, dst = [], []
    for k in range(1100):  # diamond k: 3k -> 3k+1, 3k+2 -> 3k+3
        a = 3 * k
        src += [a, a, a + 1, a + 2]
        dst += [a + 1, a + 2, a + 3, a + 3]
    graph = bg.Graph.from_edges(src, dst, directed=False, backend="numpy")
    with pytest.raises(bg.PathCountOverflow, match=r"from source 0, vertex 3072 \(depth 2048\)"):
        bg.betweenness_centrality(graph, [0], devices=devices, partitioner="random")


def test_betweenness_over_processes_past_the_largest_graph_checked_warns():
    """Over MPI or NCCL ranks past the largest graph checked against one GPU (rmat26 on two
    H200s; it was wrong once at rmat25) a RuntimeWarning says so; in one process, none."""
    import warnings

    from bspgraph.primitives import bc

    large = types.SimpleNamespace(num_vertices=bc.CHECKED_OVER_PROCESSES + 1)
    for transport in ("nccl", "mpi", types.SimpleNamespace(distributed=True)):
        with pytest.warns(RuntimeWarning, match="checked against one GPU up to 67,108,864"):
            bc._warn_over_processes(large, transport)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bc._warn_over_processes(large, None)
        bc._warn_over_processes(large, "local")
        bc._warn_over_processes(types.SimpleNamespace(num_vertices=100), "nccl")
