"""Triangle counting against networkx.triangles (undirected graphs; self-loops ignored)."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from strategies import as_array, graphs

import bspgraph as bg


@given(graphs(directed=False, max_edges=120))
def test_tc_matches_networkx(case):
    graph, nx_graph = case
    result = bg.triangle_count(graph)
    expected = as_array(nx.triangles(nx_graph), graph.num_vertices, -1)
    np.testing.assert_array_equal(result.per_vertex, expected)
    assert result.total == expected.sum() // 3


def test_tc_literal_cases():
    empty = bg.Graph.from_edges([], [], num_vertices=0, directed=False, backend="numpy")
    assert bg.triangle_count(empty).total == 0
    single = bg.Graph.from_edges([0], [0], num_vertices=1, directed=False, backend="numpy")
    assert bg.triangle_count(single).per_vertex.tolist() == [0]
    k4 = bg.Graph.from_networkx(nx.complete_graph(4), backend="numpy")
    assert bg.triangle_count(k4).total == 4
    assert bg.triangle_count(k4).per_vertex.tolist() == [3, 3, 3, 3]
    karate = nx.karate_club_graph()
    result = bg.triangle_count(bg.Graph.from_networkx(karate, backend="numpy"))
    assert result.total == 45
    np.testing.assert_array_equal(result.per_vertex, as_array(nx.triangles(karate), 34, -1))


def test_tc_rejects_directed_graph():
    graph = bg.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=True, backend="numpy")
    with pytest.raises(ValueError, match="directed"):
        bg.triangle_count(graph)
