"""Betweenness centrality against networkx: all sources, sampled sources, every scaling."""

import random

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
    result = bg.betweenness_centrality(bg.Graph.from_networkx(karate, backend="numpy"))
    np.testing.assert_allclose(
        result.centrality, as_array(nx.betweenness_centrality(karate), 34, 0)
    )
    assert result.stats.iterations > 34


@pytest.mark.parametrize(
    "sources, message", [([], "at least one"), ([1, 1], "distinct"), ([9], "range")]
)
def test_bc_rejects_bad_sources(sources, message):
    graph = bg.Graph.from_edges([0, 1], [1, 2], backend="numpy")
    with pytest.raises(ValueError, match=message):
        bg.betweenness_centrality(graph, sources)
