"""PageRank against networkx.pagerank: weights, dangling vertices, personalization, errors."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import as_array, graphs

import bspgraph as bg

TOL = 1e-6


def assert_matches(result, expected, n):
    np.testing.assert_allclose(result.rank, as_array(expected, n, np.nan), rtol=1e-4, atol=1e-6)


@given(graphs(), st.sampled_from([0.85, 0.5, 0.9]))
def test_pagerank_matches_networkx(case, alpha):
    graph, nx_graph = case  # max_iter: alpha**max_iter << tol, so neither side stops short
    expected = nx.pagerank(nx_graph, alpha=alpha, tol=TOL, max_iter=300)
    assert_matches(bg.pagerank(graph, alpha, tol=TOL, max_iter=300), expected, graph.num_vertices)


@given(graphs(), st.data())
def test_pagerank_personalization_matches_networkx(case, data):
    graph, nx_graph = case
    n = graph.num_vertices
    keys = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    personalization = {k: data.draw(st.integers(1, 5)) for k in keys}
    expected = nx.pagerank(nx_graph, personalization=personalization, tol=TOL, max_iter=1000)
    result = bg.pagerank(graph, personalization=personalization, tol=TOL, max_iter=1000)
    assert_matches(result, expected, n)
    dense = np.zeros(n)
    dense[keys] = [personalization[k] for k in keys]
    result = bg.pagerank(graph, personalization=dense, tol=TOL, max_iter=1000)
    assert_matches(result, expected, n)


def test_pagerank_literal_cases():
    empty = bg.Graph.from_edges([], [], num_vertices=0, backend="numpy")
    assert bg.pagerank(empty).rank.shape == (0,)
    single = bg.Graph.from_edges([], [], num_vertices=1, backend="numpy")
    assert bg.pagerank(single).rank.tolist() == [1.0]
    karate = nx.karate_club_graph()  # weighted: networkx uses the weights, and so do we
    result = bg.pagerank(bg.Graph.from_networkx(karate, backend="numpy"))
    assert_matches(result, nx.pagerank(karate), 34)
    assert result.rank.dtype == np.float64


def test_pagerank_raises_convergence_error():
    graph = bg.Graph.from_networkx(nx.karate_club_graph(), backend="numpy")
    with pytest.raises(bg.ConvergenceError, match="max_iter=3") as error:
        bg.pagerank(graph, max_iter=3)
    assert isinstance(error.value, RuntimeError)


@pytest.mark.parametrize(
    "personalization, message",
    [
        ({7: 1.0}, "out of range"),
        ([1.0, 2.0], "shape"),
        ([0.0, 0.0, 0.0], "not all zero"),
        ([np.inf, 1.0, 1.0], "finite"),
        ({0: np.nan}, "finite"),
    ],
)
def test_pagerank_rejects_bad_personalization(personalization, message):
    graph = bg.Graph.from_edges([0, 1], [1, 2], backend="numpy")
    with pytest.raises(ValueError, match=message):
        bg.pagerank(graph, personalization=personalization)


def test_pagerank_rejects_negative_weights():
    graph = bg.Graph.from_edges([0, 1], [1, 2], [1.0, -1.0], backend="numpy")
    with pytest.raises(ValueError, match="non-negative"):
        bg.pagerank(graph)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"alpha": 2.0}, r"alpha=2.0\): expected a damping factor in \[0, 1\]"),
        ({"alpha": -0.1}, "alpha=-0.1"),
        ({"alpha": float("nan")}, "alpha=nan"),
        ({"alpha": "0.85"}, "alpha='0.85'.*a number"),
        ({"tol": -1.0}, "tol=-1.0"),
        ({"tol": float("inf")}, "tol=inf"),
        ({"tol": True}, "tol=True"),
        ({"max_iter": -3}, "max_iter=-3"),
        ({"max_iter": 10.0}, "max_iter=10.0"),
    ],
)
def test_pagerank_rejects_bad_options(options, message):
    """A damping factor outside [0, 1] gave negative "ranks" (alpha=2), silently; a negative
    tolerance ran to max_iter and reported non-convergence."""
    graph = bg.Graph.from_edges([0, 1, 2], [1, 2, 0], num_vertices=4, backend="numpy")
    with pytest.raises(ValueError, match=message):
        bg.pagerank(graph, **options)


def test_pagerank_rejects_infinite_weights():
    graph = bg.Graph.from_edges([0, 1], [1, 2], [1.0, np.inf], backend="numpy")
    with pytest.raises(ValueError, match="finite non-negative"):
        bg.pagerank(graph)


def test_pagerank_takes_the_ends_of_its_ranges():
    """alpha 0 (teleport only) and 1 (no teleport); tol 0 and max_iter 0 are accepted and
    never converge, as in networkx (its test is a strict ``err < N * tol``)."""
    import networkx as nx

    graph = bg.Graph.from_edges([0, 1, 2], [1, 2, 0], num_vertices=3, backend="numpy")
    cycle = nx.cycle_graph(3, create_using=nx.DiGraph)
    np.testing.assert_allclose(bg.pagerank(graph, alpha=0.0).rank, [1 / 3] * 3)
    np.testing.assert_allclose(bg.pagerank(graph, alpha=1.0).rank, [1 / 3] * 3)
    for options in ({"tol": 0.0}, {"max_iter": 0}):
        with pytest.raises(bg.ConvergenceError, match="no convergence"):
            bg.pagerank(graph, **options)
        with pytest.raises(nx.PowerIterationFailedConvergence):
            nx.pagerank(cycle, **options)


@pytest.mark.parametrize("personalized", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_numpy_kernels_match_the_generic_step(monkeypatch, personalized, weighted):
    """NumPy's kernels (the step in chunks, the pull of the rank through the transition
    matrix, without contributions) give the generic step's ranks: a directed graph with sinks,
    zero-weight edges and more vertices than a chunk."""
    from bspgraph.backend import fused
    from bspgraph.primitives import _pagerank_kernels

    monkeypatch.setattr(_pagerank_kernels, "CHUNK", 64)
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 300, 900), rng.integers(0, 300, 900)
    weights = rng.integers(0, 3, 900).astype(float)  # some 0: vertices of out-weight 0
    graph = bg.Graph.from_edges(src, dst, weights, num_vertices=300, backend="numpy")
    personalization = rng.random(300) if personalized else None
    run = {"personalization": personalization, "weighted": weighted, "tol": 1e-12}
    fast = bg.pagerank(graph, **run)
    for direction in ("step", "pull"):
        monkeypatch.delitem(fused.REGISTRY, ("damped_update", "numpy", direction))
    generic = bg.pagerank(graph, **run)
    assert fast.stats.iterations == generic.stats.iterations
    np.testing.assert_allclose(fast.rank, generic.rank, rtol=1e-12, atol=0)


@pytest.mark.parametrize("devices", [1, 3])
def test_the_out_weights_are_a_product_once_per_graph(monkeypatch, devices):
    """A run computes the out-weights (a product over every out-list) once for its graph (on
    several devices, once for each part); a later run, weighted alike, reads them again and
    ranks alike, and an unweighted run gets its own."""
    from bspgraph import frontier

    rng = np.random.default_rng(7)
    pairs = np.unique(rng.integers(0, 200, (700, 2)), axis=0)
    src, dst = pairs[:, 0], pairs[:, 1]
    weights = rng.integers(0, 3, len(src)).astype(float)  # some 0: vertices of out-weight 0
    graph = bg.Graph.from_edges(src, dst, weights, num_vertices=200, backend="numpy")
    products, reduce = [], frontier.neighbor_reduce

    def counted(graph, values, *args, direction="in", **kwargs):
        products.append(direction)
        return reduce(graph, values, *args, direction=direction, **kwargs)

    monkeypatch.setattr(frontier, "neighbor_reduce", counted)
    run = {"devices": devices, "partitioner": "edge_balanced", "tol": 1e-10, "max_iter": 500}
    first = bg.pagerank(graph, **run)
    assert products.count("out") == devices
    products.clear()
    again = bg.pagerank(graph, **run)
    assert products.count("out") == 0
    np.testing.assert_array_equal(first.rank, again.rank)
    unweighted = bg.pagerank(graph, weighted=False, **run)
    assert products.count("out") == devices
    expected = nx.DiGraph(list(zip(src.tolist(), dst.tolist())))
    expected.add_nodes_from(range(200))
    want = nx.pagerank(expected, tol=1e-10, max_iter=500)
    np.testing.assert_allclose(unweighted.rank, [want[v] for v in range(200)], atol=1e-9)
