"""R-MAT and grid generators: Graph500 properties, determinism, networkx's grid."""

import networkx as nx
import numpy as np
import pytest

from bspgraph.backend import to_host
from bspgraph.graph import Graph, generators


def host_edges(graph: Graph) -> set[tuple[int, int]]:
    src, dst, _ = graph.edges()
    return set(zip(src.tolist(), dst.tolist()))


def assert_simple_undirected(graph: Graph) -> None:
    src, dst, weight = graph.edges()
    assert not graph.directed
    assert not np.any(src == dst)
    key = src.astype(np.int64) * graph.num_vertices + dst
    assert np.all(np.diff(key) > 0)  # no duplicates
    edges = dict(zip(zip(src.tolist(), dst.tolist()), range(src.size)))
    for (u, v), index in edges.items():  # symmetric, with equal weights both ways
        back = edges[(v, u)]
        assert weight is None or weight[index] == weight[back]


@pytest.mark.parametrize("scale, edge_factor", [(0, 16), (1, 4), (6, 8), (10, 16)])
def test_rmat_is_a_graph500_graph(scale, edge_factor):
    graph = generators.rmat(scale, edge_factor, seed=7, backend="numpy")
    assert graph.num_vertices == 2**scale and not graph.weighted
    assert graph.num_edges <= 2 * edge_factor * 2**scale
    assert_simple_undirected(graph)
    generated = edge_factor * 2**scale
    summary = graph.summary
    assert (
        summary.self_loops_dropped + summary.duplicates_merged + graph.num_edges // 2 == generated
    )


def test_rmat_degrees_are_skewed():
    graph = generators.rmat(12, 16, seed=1, backend="numpy")
    degree = np.diff(graph.offsets)
    assert degree.max() > 20 * degree.mean()
    assert np.count_nonzero(degree == 0) > 0.1 * graph.num_vertices


@pytest.mark.parametrize(
    "scale, a, b, c", [(1, 0.57, 0.19, 0.19), (2, 0.57, 0.19, 0.19), (3, 0.25, 0.25, 0.25)]
)
def test_rmat_self_loop_rate_follows_the_quadrant_probabilities(scale, a, b, c):
    """A generated edge is a self-loop when every bit pair agrees: probability (a + d) ** scale."""
    edge_factor = 40_000 // 2**scale
    graph = generators.rmat(scale, edge_factor, a=a, b=b, c=c, seed=3, backend="numpy")
    rate = graph.summary.self_loops_dropped / (edge_factor * 2**scale)
    assert rate == pytest.approx((1 - b - c) ** scale, abs=0.015)


def test_rmat_all_weight_on_one_quadrant():
    assert generators.rmat(5, 4, a=1.0, b=0.0, c=0.0, backend="numpy").num_edges == 0
    graph = generators.rmat(5, 4, a=0.0, b=1.0, c=0.0, backend="numpy")
    assert graph.num_edges == 2 and graph.summary.duplicates_merged == 4 * 32 - 1


def test_rmat_is_deterministic(backend):
    first = generators.rmat(8, 8, seed=5, weights=True, backend=backend)
    second = generators.rmat(8, 8, seed=5, weights=True, backend=backend)
    other = generators.rmat(8, 8, seed=6, weights=True, backend=backend)
    for name in ("offsets", "indices", "weights"):
        assert np.array_equal(to_host(getattr(first, name)), to_host(getattr(second, name)))
    assert host_edges(first) != host_edges(other)


def test_rmat_weights(backend):
    graph = generators.rmat(8, 8, seed=2, weights=True, backend=backend)
    weights = to_host(graph.weights)
    assert weights.dtype == np.float32
    assert weights.min() >= 1 and weights.max() <= 64 and np.all(weights == np.round(weights))
    assert len(np.unique(weights)) > 32
    assert_simple_undirected(graph.to("numpy"))


@pytest.mark.parametrize(
    "arguments, match",
    [
        ({"scale": -1}, "scale"),
        ({"scale": 2.0}, "scale"),
        ({"scale": True}, "scale"),
        ({"scale": 3, "edge_factor": -2}, "edge_factor"),
        ({"scale": 3, "a": 0.6, "b": 0.3, "c": 0.2}, "a \\+ b \\+ c <= 1"),
        ({"scale": 3, "a": -0.1}, "a, b, c >= 0"),
    ],
)
def test_rmat_rejects_bad_arguments(arguments, match):
    with pytest.raises(ValueError, match=match):
        generators.rmat(**arguments, backend="numpy")


@pytest.mark.parametrize("rows, cols", [(0, 0), (0, 3), (1, 1), (1, 5), (5, 1), (3, 4), (7, 6)])
def test_grid_matches_networkx(rows, cols):
    graph = generators.grid(rows, cols, backend="numpy")
    expected = nx.convert_node_labels_to_integers(nx.grid_2d_graph(rows, cols), ordering="sorted")
    assert graph.num_vertices == rows * cols and not graph.directed and not graph.weighted
    assert host_edges(graph) == {e for u, v in expected.edges for e in ((u, v), (v, u))}


def test_grid_weights(backend):
    graph = generators.grid(4, 5, weights=True, seed=9, backend=backend)
    again = generators.grid(4, 5, weights=True, seed=9, backend=backend)
    weights = to_host(graph.weights)
    assert weights.dtype == np.float32 and weights.min() >= 1 and weights.max() <= 64
    assert np.array_equal(weights, to_host(again.weights))
    assert_simple_undirected(graph.to("numpy"))


def test_grid_rejects_bad_sizes():
    with pytest.raises(ValueError, match="rows"):
        generators.grid(-1, 2, backend="numpy")
    with pytest.raises(ValueError, match="cols"):
        generators.grid(2, 1.5, backend="numpy")
