"""SSSP against networkx's Dijkstra; bad weights raise."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import as_array, graphs

import bspgraph as bg


@given(graphs(), st.data())
def test_sssp_matches_networkx(case, data):
    import networkx as nx

    graph, nx_graph = case
    source = data.draw(st.integers(0, graph.num_vertices - 1))
    distance = bg.sssp(graph, source).distance
    expected = as_array(
        nx.single_source_dijkstra_path_length(nx_graph, source), graph.num_vertices, np.inf
    )
    np.testing.assert_allclose(distance, expected)


@pytest.mark.parametrize("bad", [-1.0, np.nan])
def test_sssp_rejects_negative_and_nan_weights(bad):
    graph = bg.Graph.from_edges([0, 1, 2], [1, 2, 3], [1.0, bad, 2.0], backend="numpy")
    with pytest.raises(ValueError, match=r"edge 1 -> 2 has weight"):
        bg.sssp(graph, 0)


def test_sssp_zero_and_equal_weights():
    graph = bg.Graph.from_edges([0, 0, 1, 2], [1, 2, 3, 3], [0.0, 1.0, 1.0, 0.0], backend="numpy")
    assert bg.sssp(graph, 0).distance.tolist() == [0.0, 0.0, 1.0, 1.0]
