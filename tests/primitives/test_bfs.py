"""BFS against networkx: depth, parents, every direction."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import as_array, graphs

import bspgraph as bg


@given(graphs(), st.data(), st.sampled_from(["auto", "push", "pull"]))
def test_bfs_matches_networkx(case, data, direction):
    import networkx as nx

    graph, nx_graph = case
    source = data.draw(st.integers(0, graph.num_vertices - 1))
    result = bg.bfs(graph, source, parents=True, direction=direction)
    expected = as_array(
        nx.single_source_shortest_path_length(nx_graph, source), graph.num_vertices, -1
    )
    np.testing.assert_array_equal(result.depth, expected)
    for vertex in np.flatnonzero(result.depth > 0):
        parent = result.parent[vertex]
        assert nx_graph.has_edge(parent, vertex)
        assert result.depth[parent] == result.depth[vertex] - 1
    assert (result.parent[result.depth <= 0] == -1).all()


def test_bfs_grid_depths():
    result = bg.bfs(bg.generators.grid(3, 3, backend="numpy"), 0)
    assert result.depth.tolist() == [0, 1, 2, 1, 2, 3, 2, 3, 4]
    assert result.stats.iterations == 5
    assert result.stats.edges == 24


@pytest.mark.parametrize("source", [-1, 5, 2.0, True])
def test_bfs_rejects_bad_source(source):
    graph = bg.Graph.from_edges([0, 1], [1, 2], num_vertices=5, backend="numpy")
    with pytest.raises(ValueError, match="bfs"):
        bg.bfs(graph, source if source != 5 else 7)


def test_bfs_rejects_unknown_direction():
    graph = bg.Graph.from_edges([0], [1], backend="numpy")
    with pytest.raises(ValueError, match="direction"):
        bg.bfs(graph, 0, direction="sideways")


def test_bfs_hub_of_high_degree_is_load_balanced():
    # a star: one vertex with 200k out-edges; the per-edge expansion handles it in one superstep
    n = 200_001
    graph = bg.Graph.from_edges(np.zeros(n - 1, int), np.arange(1, n), backend="numpy")
    result = bg.bfs(graph, 0, direction="push")
    assert result.depth.max() == 1 and (result.depth[1:] == 1).all()
