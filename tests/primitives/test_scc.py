"""Strongly connected components against networkx (smallest id as label); lifting on 1-5
virtual devices; CuPy against NumPy (marked gpu)."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from strategies import graphs

import bspgraph as bg
from bspgraph.primitives.scc import SCC


def expected_labels(nx_graph):
    components = (
        nx.strongly_connected_components(nx_graph)
        if nx_graph.is_directed()
        else nx.connected_components(nx_graph)
    )
    labels = np.empty(nx_graph.number_of_nodes(), dtype=np.int64)
    for component in components:
        labels[list(component)] = min(component)
    return labels


@settings(max_examples=60)
@given(graphs(min_vertices=0))
def test_scc_matches_networkx(case):
    """Empty graphs, single vertices, self-loops, duplicate edges, sinks, several components
    (tests/strategies.py draws them all), directed and undirected."""
    graph, nx_graph = case
    np.testing.assert_array_equal(
        bg.strongly_connected_components(graph).labels, expected_labels(nx_graph)
    )


@pytest.mark.parametrize(
    ("edges", "n", "labels"),
    [
        ([], 0, []),
        ([], 1, [0]),
        ([(0, 0)], 1, [0]),
        ([(0, 1), (0, 1), (1, 0)], 3, [0, 0, 2]),
        ([(i, i + 1) for i in range(5)], 6, [0, 1, 2, 3, 4, 5]),  # a chain: six rounds
        ([(i + 1, i) for i in range(5)], 6, [0, 1, 2, 3, 4, 5]),
        ([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3), (5, 4)], 6, [0, 0, 0, 3, 3, 5]),
        ([(3, 1), (1, 3), (0, 2), (2, 0), (2, 1)], 4, [0, 1, 0, 1]),  # a root's colour elsewhere
    ],
)
def test_scc_small_cases(edges, n, labels):
    src = [u for u, _ in edges]
    dst = [v for _, v in edges]
    graph = bg.Graph.from_edges(src, dst, num_vertices=n, directed=True, backend="numpy")
    assert bg.strongly_connected_components(graph).labels.tolist() == labels


def test_scc_lifts():
    bg.testing.assert_lifts(SCC(), max_examples=6)
    bg.testing.assert_lifts(
        lambda graph, **run: bg.strongly_connected_components(graph, **run),
        bg.testing.graphs(directed=True),
        max_examples=4,
    )


def test_scc_on_a_larger_random_graph_with_two_devices():
    nx_graph = nx.gnm_random_graph(300, 450, seed=5, directed=True)
    graph = bg.Graph.from_networkx(nx_graph, weight=None)
    for devices in (1, 2):
        result = bg.strongly_connected_components(graph, devices=devices, partitioner="random")
        np.testing.assert_array_equal(result.labels, expected_labels(nx_graph))


@pytest.mark.gpu
def test_scc_cupy_equals_numpy_and_networkx():
    nx_graph = nx.gnm_random_graph(2000, 5000, seed=2, directed=True)
    graph = bg.Graph.from_networkx(nx_graph, weight=None, backend="cupy")
    labels = bg.strongly_connected_components(graph, backend="cupy").labels
    np.testing.assert_array_equal(labels, expected_labels(nx_graph))
    rmat = bg.generators.rmat(14, 8, seed=4, backend="cupy")  # symmetric: the components
    np.testing.assert_array_equal(
        bg.strongly_connected_components(rmat).labels, bg.connected_components(rmat).labels
    )
    two = bg.strongly_connected_components(graph, devices=[0, 0]).labels  # two parts, one GPU
    np.testing.assert_array_equal(two, labels)
