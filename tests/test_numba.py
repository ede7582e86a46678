"""The optional numba kernels (bspgraph.frontier._numba, bspgraph.primitives._tc_numba) agree exactly with the NumPy paths they replace."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from strategies import examples, graphs

import bspgraph as bg
from bspgraph.backend import fused, numpy_backend, ops
from bspgraph.partitioners import BiasedRandom

pytest.importorskip("numba")


def both(run):
    """``run()`` with the numba kernels, then without them."""
    saved = numpy_backend.ACCELERATE
    try:
        numpy_backend.ACCELERATE = True
        accelerated = run()
        numpy_backend.ACCELERATE = False
        return accelerated, run()
    finally:
        numpy_backend.ACCELERATE = saved


def test_accelerated_names_a_kernel_only_on_numpy_when_enabled():
    numpy, kernels = bg.get_backend("numpy"), "bspgraph.frontier._numba"
    assert both(lambda: ops.accelerated(numpy, kernels, "visit_push") is not None) == (True, False)
    assert both(lambda: ops.accelerated(numpy, "bspgraph.no_such_module", "visit_push")) == (
        None,
        None,
    )


@examples(40)
@given(graphs())
def test_bfs_push_is_the_same_with_and_without_numba(case):
    graph, _ = case
    for direction in ("push", "auto"):
        fast, plain = both(lambda d=direction: bg.bfs(graph, 0, direction=d, parents=True))
        np.testing.assert_array_equal(fast.depth, plain.depth)
        for result in (fast, plain):  # parents may differ; each must be a BFS parent
            child = np.flatnonzero(result.parent >= 0)
            assert (result.depth[result.parent[child]] == result.depth[child] - 1).all()


@examples(40)
@given(graphs(directed=False))
def test_triangles_are_the_same_with_and_without_numba(case):
    graph, nx_graph = case
    fast, plain = both(lambda: bg.triangle_count(graph))
    expected = nx.triangles(nx_graph)
    np.testing.assert_array_equal(fast.per_vertex, plain.per_vertex)
    np.testing.assert_array_equal(fast.per_vertex, [expected[v] for v in range(graph.num_vertices)])
    assert fast.total == plain.total


@examples(40)
@given(graphs())
def test_the_biased_cut_is_the_same_with_and_without_numba(case):
    """The biased-random partitioner's compiled assignment makes the Python loop's every
    choice: fits, ties, tie-breakers, a vertex too heavy for any part (balance by edges,
    tolerance 1), on graphs with duplicate edges and self-loops."""
    graph, _ = case
    for parts, cutter in (
        (3, BiasedRandom()),
        (2, BiasedRandom(tolerance=1.0, balance="edges")),
        (5, BiasedRandom(tolerance=1.5)),
    ):
        for seed in (0, 7):
            fast, plain = both(lambda c=cutter, p=parts, s=seed: c(graph, p, seed=s))
            np.testing.assert_array_equal(fast, plain)


def test_the_biased_cut_of_a_large_graph_is_the_same_with_and_without_numba():
    """The same on rmat12 (4,096 vertices, a hub heavier than a part by edges)."""
    graph = bg.generators.rmat(12, 8, seed=3, backend="numpy")
    for cutter in (BiasedRandom(), BiasedRandom(tolerance=1.0, balance="edges")):
        fast, plain = both(lambda c=cutter: c(graph, 4, seed=2))
        np.testing.assert_array_equal(fast, plain)


@pytest.mark.parametrize("shape", ["grid", "path"])
def test_bfs_levels_at_once_with_and_without_numba(shape, monkeypatch):
    """With numba, small frontiers run level after level in one call (as the GPU's levels
    kernel, over more levels than one call takes on a path; the scipy pass that takes a
    one-vertex frontier on short rows first left out): the same depths, every level a
    superstep of the same size, and valid parents."""
    from bspgraph.frontier import host
    from bspgraph.frontier.kernels import MAX_LEVELS

    monkeypatch.setattr(host, "_every_level", lambda *args: None)

    at_once = []  # the levels of each call that ran several

    def counted(*args):
        out = visit_levels(*args)
        if out is not None:
            at_once.append(len(out.passed) + 1)
        return out

    visit_levels = host.visit_levels
    monkeypatch.setitem(fused.REGISTRY, ("visit_unvisited", "numpy", "repeat"), counted)

    graph = {
        "grid": lambda: bg.generators.grid(30, 40, backend="numpy"),
        "path": lambda: bg.Graph.from_edges(np.arange(2599), np.arange(1, 2600), backend="numpy"),
    }[shape]()
    fast, plain = both(lambda: bg.bfs(graph, 0, parents=True))
    np.testing.assert_array_equal(fast.depth, plain.depth)
    assert [s.frontier for s in fast.stats.supersteps] == [
        s.frontier for s in plain.stats.supersteps
    ]
    assert fast.stats.iterations == plain.stats.iterations == fast.depth.max() + 1
    assert sum(at_once) >= fast.stats.iterations - 2  # all but the first (and the last)
    if shape == "path":
        assert fast.stats.iterations > 2 * MAX_LEVELS
        assert max(at_once) == MAX_LEVELS
    else:
        assert fast.depth.max() == 29 + 39
    child = np.flatnonzero(fast.depth > 0)
    assert (fast.depth[fast.parent[child]] == fast.depth[child] - 1).all()
