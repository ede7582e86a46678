"""SSSP against networkx's Dijkstra; bad weights raise."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import as_array, graphs

import bspgraph as bg
from bspgraph.enactor.solo import light_share


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


def test_sssp_says_when_a_distance_overflows_float32():
    """float32 weights near its largest value: vertex 2's distance (6e38) does not fit, and
    would read as unreachable; vertex 3 is unreachable and stays inf without an error."""
    weights = np.array([3e38, 3e38], dtype=np.float32)
    graph = bg.Graph.from_edges([0, 1], [1, 2], weights, num_vertices=4, backend="numpy")
    with pytest.raises(bg.DistanceOverflow, match="vertex 2 is reachable from 0"):
        bg.sssp(graph, 0)
    assert isinstance(bg.DistanceOverflow("x"), OverflowError)
    short = bg.Graph.from_edges([0], [1], weights[:1], num_vertices=4, backend="numpy")
    np.testing.assert_array_equal(bg.sssp(short, 0).distance, [0, weights[0], np.inf, np.inf])


@pytest.mark.parametrize("devices", [2, 3, 5])
def test_sssp_on_parts_of_a_grid_runs_each_region_in_few_supersteps(devices):
    """A 48 x 48 grid cut into bands (edge_balanced: most of a part's edges stay inside it):
    each part relaxes its band level after level in one superstep, and only what crosses
    waits for the next, so the run takes a few supersteps where a level each takes 67 or
    more; a random cut (most edges leave a part) takes a level a superstep. Both equal
    networkx, also in checked runs (every vertex a step lowered is returned)."""
    import networkx as nx

    graph = bg.generators.grid(48, 48, weights=True, backend="numpy")
    source = 48 * 20 + 7
    expected = as_array(
        nx.single_source_dijkstra_path_length(graph.to_networkx(), source),
        graph.num_vertices,
        np.inf,
    )
    with light_share(0):  # (every superstep on every device: no light one on one alone)
        banded = bg.sssp(graph, source, devices=devices, partitioner="edge_balanced")
    np.testing.assert_allclose(banded.distance, expected)
    assert len(banded.stats.supersteps) <= 8 * devices
    spread = bg.sssp(graph, source, devices=devices, partitioner="random", check=True)
    np.testing.assert_allclose(spread.distance, expected)
    levels = int(bg.bfs(graph, source).depth.max())  # the hops to the farthest vertex: 67
    assert len(spread.stats.supersteps) >= levels  # at least a level a superstep
    checked = bg.sssp(graph, source, devices=devices, partitioner="edge_balanced", check=True)
    np.testing.assert_allclose(checked.distance, expected)


def test_sssp_lifts_with_every_part_running_ahead(monkeypatch):
    """The run-ahead forced on every part (the 90% rule off: random cuts of small graphs run
    ahead too): SSSP still gives its one-device answer on 2 to 5 devices, every partitioner
    and communicator, in checked runs (every vertex a step lowered is returned)."""
    import sys

    from bspgraph.backend import fused

    monkeypatch.setattr(sys.modules["bspgraph.frontier.advance"], "RUN_AHEAD_SHARE", 0.0)
    key, ran = ("relax_min", "numpy", "repeat"), []
    levels = fused.REGISTRY[key]

    def counted(*args, **kwargs):
        result = levels(*args, **kwargs)
        ran.append(result is not None)
        return result

    monkeypatch.setitem(fused.REGISTRY, key, counted)

    def distances(graph, **run):
        return bg.sssp(graph, 0, **run).distance if graph.num_vertices else np.zeros(0)

    bg.testing.assert_lifts(
        distances, bg.testing.graphs(weighted=True), devices=range(2, 6), max_examples=12
    )
    assert any(ran)  # parts ran ahead


def _check_tree(distance, parent, source, nx_graph):
    """``parent`` is a shortest-path tree: an edge into each reached vertex whose tail's
    distance plus its lightest weight is the vertex's, and every walk up ends at the source."""
    for vertex in np.flatnonzero(np.isfinite(distance)):
        if vertex == source:
            assert parent[vertex] == -1
            continue
        above = int(parent[vertex])
        assert nx_graph.has_edge(above, int(vertex)), (above, vertex)
        weight = nx_graph[above][int(vertex)].get("weight", 1)
        assert distance[above] + weight == distance[vertex], vertex
        walk, steps = int(vertex), 0
        while walk != source:
            walk, steps = int(parent[walk]), steps + 1
            assert walk >= 0 and steps < len(distance), vertex  # no cycle, no dead end
    assert (parent[~np.isfinite(distance)] == -1).all()


@given(graphs(), st.data())
def test_sssp_parents_form_a_shortest_path_tree(case, data):
    graph, nx_graph = case
    source = data.draw(st.integers(0, graph.num_vertices - 1))
    devices = data.draw(st.sampled_from([1, 3]))
    result = bg.sssp(graph, source, parents=True, devices=devices)
    np.testing.assert_array_equal(result.distance, bg.sssp(graph, source).distance)
    _check_tree(result.distance, result.parent, source, nx_graph)
    assert bg.sssp(graph, source).parent is None


def test_sssp_parents_through_zero_weight_cycles():
    graph = bg.Graph.from_edges(
        [0, 1, 2, 1, 3], [1, 2, 1, 3, 0], [0.0, 0.0, 0.0, 2.0, 0.0], backend="numpy"
    )
    result = bg.sssp(graph, 0, parents=True)
    assert result.distance.tolist() == [0.0, 0.0, 0.0, 2.0]
    assert result.parent.tolist() == [-1, 0, 1, 1]
