"""The optional numba kernels (bspgraph._numba) agree exactly with the NumPy paths they replace."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from strategies import graphs

import bspgraph as bg
from bspgraph import backend

pytest.importorskip("numba")


def both(run):
    """``run()`` with the numba kernels, then without them."""
    saved = backend.ACCELERATE
    try:
        backend.ACCELERATE = True
        accelerated = run()
        backend.ACCELERATE = False
        return accelerated, run()
    finally:
        backend.ACCELERATE = saved


def test_accelerated_names_a_kernel_only_on_numpy_when_enabled():
    numpy = bg.get_backend("numpy")
    assert both(lambda: numpy.accelerated("visit_push") is not None) == (True, False)


@settings(max_examples=40)
@given(graphs())
def test_bfs_push_is_the_same_with_and_without_numba(case):
    graph, _ = case
    for direction in ("push", "auto"):
        fast, plain = both(lambda d=direction: bg.bfs(graph, 0, direction=d, parents=True))
        np.testing.assert_array_equal(fast.depth, plain.depth)
        for result in (fast, plain):  # parents may differ; each must be a BFS parent
            child = np.flatnonzero(result.parent >= 0)
            assert (result.depth[result.parent[child]] == result.depth[child] - 1).all()


@settings(max_examples=40)
@given(graphs(directed=False))
def test_triangles_are_the_same_with_and_without_numba(case):
    graph, nx_graph = case
    fast, plain = both(lambda: bg.triangle_count(graph))
    expected = nx.triangles(nx_graph)
    np.testing.assert_array_equal(fast.per_vertex, plain.per_vertex)
    np.testing.assert_array_equal(fast.per_vertex, [expected[v] for v in range(graph.num_vertices)])
    assert fast.total == plain.total


def test_grid_bfs_levels_with_and_without_numba():
    grid = bg.generators.grid(30, 40, backend="numpy")
    fast, plain = both(lambda: bg.bfs(grid, 0).depth)
    np.testing.assert_array_equal(fast, plain)
    assert fast.max() == 29 + 39


@settings(max_examples=40)
@given(graphs(directed=False))
def test_triangles_by_bitmap_blocks_match_networkx(case):
    """The NumPy path without numba, forced to use its bitmap blocks even on small graphs."""
    graph, nx_graph = case
    saved = backend.ACCELERATE, backend.WEDGE_MIN_BLOCK, backend.WEDGE_ROWS
    try:
        backend.ACCELERATE, backend.WEDGE_MIN_BLOCK, backend.WEDGE_ROWS = False, 0, 3
        results = [bg.triangle_count(graph), bg.triangle_count(graph, devices=2)]  # rows cut
    finally:
        backend.ACCELERATE, backend.WEDGE_MIN_BLOCK, backend.WEDGE_ROWS = saved
    expected = nx.triangles(nx_graph)
    for result in results:
        np.testing.assert_array_equal(result.per_vertex,
                                      [expected[v] for v in range(graph.num_vertices)])  # fmt: skip
