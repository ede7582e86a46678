"""Partitioners: valid, deterministic owners for every P; edge balance, locality and the report."""

import importlib.util
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import graphs

import bspgraph as bg
from bspgraph import partitioners
from bspgraph.partitioners import (
    BiasedRandom,
    EdgeBalanced,
    Metis,
    Partitioner,
    PartitionReport,
    Random,
    report,
)

HAS_PYMETIS = importlib.util.find_spec("pymetis") is not None
NAMES = ["random", "biased", "edge_balanced"] + (["metis"] if HAS_PYMETIS else [])


def grid(rows: int, cols: int) -> bg.Graph:
    """An undirected rows x cols 4-neighbour grid; vertex r * cols + c."""
    ids = np.arange(rows * cols).reshape(rows, cols)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    return bg.Graph.from_edges(src, dst, num_vertices=rows * cols, directed=False, backend="numpy")


def skewed() -> bg.Graph:
    """R-MAT-like skew with the heavy vertices first: a few hubs, then a long low-degree tail."""
    rng = np.random.default_rng(7)
    n = 400
    src = np.minimum(rng.zipf(1.6, 6000) - 1, n - 1)  # low ids are hubs
    dst = rng.integers(0, n, 6000)
    return bg.Graph.from_edges(src, dst, num_vertices=n, directed=True, backend="numpy")


GRAPHS = {
    "grid": grid(6, 7),
    "rmat": bg.generators.rmat(7, 8, seed=2, backend="numpy"),
    "directed": skewed(),
    "no-edges": bg.Graph.from_edges([], [], num_vertices=5, backend="numpy"),
    "one-vertex": bg.Graph.from_edges([0], [0], num_vertices=1, backend="numpy"),
    "empty": bg.Graph.from_edges([], [], num_vertices=0, backend="numpy"),
    "tiny": bg.Graph.from_edges([0, 1], [1, 2], num_vertices=3, backend="numpy"),
}


def check_owner(owner, graph, parts):
    assert isinstance(owner, np.ndarray) and owner.dtype == np.int32
    assert owner.shape == (graph.num_vertices,)
    if graph.num_vertices:
        assert owner.min() >= 0 and owner.max() < parts


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("graph_name", list(GRAPHS))
@pytest.mark.parametrize("parts", [1, 2, 3, 4, 5, 9])
def test_owner_is_valid_and_deterministic(name, graph_name, parts):
    graph = GRAPHS[graph_name]
    owner = partitioners.get(name)(graph, parts, seed=11)
    check_owner(owner, graph, parts)
    np.testing.assert_array_equal(owner, partitioners.get(name)(graph, parts, seed=11))
    if parts == 1:
        assert not owner.any()


@pytest.mark.parametrize("name", ["random", "biased"])
def test_seed_changes_the_random_partitioners(name):
    graph = GRAPHS["grid"]
    owners = {tuple(partitioners.get(name)(graph, 3, seed=s)) for s in range(4)}
    assert len(owners) > 1


@pytest.mark.parametrize("name", NAMES)
def test_more_parts_than_vertices(name):
    graph = GRAPHS["tiny"]
    owner = partitioners.get(name)(graph, 7, seed=0)
    check_owner(owner, graph, 7)
    if name == "random":  # dealt out: no two vertices share a part
        assert len(set(owner.tolist())) == 3


def test_random_is_balanced():
    graph = GRAPHS["rmat"]
    for parts in range(2, 8):
        counts = np.bincount(Random()(graph, parts, seed=parts), minlength=parts)
        assert counts.max() - counts.min() <= 1


@pytest.mark.parametrize("graph_name", ["rmat", "directed", "grid"])
@pytest.mark.parametrize("parts", [2, 3, 4, 5])
def test_edge_balanced_is_contiguous_with_near_equal_edges(graph_name, parts):
    graph = GRAPHS[graph_name]
    owner = EdgeBalanced()(graph, parts)
    assert (np.diff(owner) >= 0).all()  # contiguous id ranges, in order
    degree = np.diff(graph.offsets)
    edges = np.bincount(owner, weights=degree, minlength=parts)
    # each cut is at the vertex boundary nearest a multiple of E/P
    assert np.abs(edges - graph.num_edges / parts).max() <= degree.max()


def test_edge_balanced_follows_the_edges_not_the_vertices():
    graph = GRAPHS["directed"]  # hubs first: the first part has few vertices, the last many
    r = report(graph, EdgeBalanced()(graph, 4), 4)
    assert r.edge_imbalance < 1.1
    assert r.vertices[0] < r.vertices[-1] / 4


def test_edge_balanced_on_a_star():
    star = bg.Graph.from_edges([0, 0, 0, 1, 2, 3], [1, 2, 3, 0, 0, 0], backend="numpy")
    assert EdgeBalanced()(star, 2).tolist() == [0, 1, 1, 1]


def test_edge_balanced_without_edges_splits_vertices():
    assert EdgeBalanced()(GRAPHS["no-edges"], 2).tolist() == [0, 0, 1, 1, 1]  # a tie: earlier cut


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_biased_cuts_fewer_edges_than_random_on_a_grid(seed):
    graph = grid(20, 20)
    biased = report(graph, BiasedRandom()(graph, 4, seed=seed), 4)
    random = report(graph, Random()(graph, 4, seed=seed), 4)
    assert biased.cut_edges < 0.75 * random.cut_edges
    assert sum(biased.borders) < sum(random.borders)
    assert max(biased.vertices) <= 1.1 * 400 / 4


def test_biased_balances_edges_when_asked():
    graph = GRAPHS["directed"]
    by_vertices = report(graph, BiasedRandom()(graph, 4, seed=1), 4)
    by_edges = report(graph, BiasedRandom(balance="edges")(graph, 4, seed=1), 4)
    assert by_edges.edge_imbalance < by_vertices.edge_imbalance
    degree = np.diff(graph.offsets)
    assert max(by_edges.edges) <= 1.1 * graph.num_edges / 4 + degree.max()


def test_report_on_a_literal_graph():
    # 0 -> 1 -> 2 -> 0 and 2 -> 3 -> 3 (self-loop); vertex 4 isolated, alone in part 2
    graph = bg.Graph.from_edges([0, 1, 2, 2, 3], [1, 2, 0, 3, 3], num_vertices=5, backend="numpy")
    r = report(graph, np.array([0, 0, 1, 1, 2]), 3)
    assert r == PartitionReport(
        parts=3,
        vertices=(2, 2, 1),
        edges=(2, 3, 0),
        vertex_imbalance=pytest.approx(2 / (5 / 3)),
        edge_imbalance=pytest.approx(3 / (5 / 3)),
        borders=(1, 2, 0),  # part 0 touches 2; part 1 touches 1 (in-edge) and 0 (out-edge)
        cut_edges=2,  # 1 -> 2 and 2 -> 0
    )


def test_report_of_an_undirected_path():
    path = bg.Graph.from_edges([0, 1, 2], [1, 2, 3], directed=False, backend="numpy")
    r = report(path, np.array([0, 0, 1, 1]), 2)
    assert (r.vertices, r.edges, r.borders, r.cut_edges) == ((2, 2), (3, 3), (1, 1), 2)


def test_report_rejects_bad_owners():
    graph = GRAPHS["tiny"]
    with pytest.raises(ValueError, match=r"expected 3 owners"):
        report(graph, np.array([0, 1]), 2)
    with pytest.raises(ValueError, match=r"owners must lie in \[0, 2\)"):
        report(graph, np.array([0, 1, 2]), 2)


@given(
    graphs(min_vertices=0, max_vertices=20, max_edges=50), st.integers(1, 6), st.sampled_from(NAMES)
)
def test_any_graph_any_parts(pair, parts, name):
    """A valid owner array, what each partitioner promises of it, and a report that counts
    the partition as networkx's graph of the same edges does."""
    graph, nx_graph = pair
    owner = partitioners.get(name)(graph, parts, seed=3)
    check_owner(owner, graph, parts)
    assert np.array_equal(owner, partitioners.get(name)(graph, parts, seed=3))
    if name == "edge_balanced":  # contiguous id ranges, in order
        assert np.all(np.diff(owner) >= 0)
    if name == "metis" and parts >= graph.num_vertices:  # one vertex a part
        assert owner.tolist() == list(range(graph.num_vertices))
    stored = [(u, v) for u, v in nx_graph.edges]  # an undirected edge is stored from each end
    if not graph.directed:
        stored += [(v, u) for u, v in nx_graph.edges if u != v]
    r = report(graph, owner, parts)
    assert r.vertices == tuple(np.bincount(owner, minlength=parts).tolist())
    assert r.edges == tuple(sum(owner[u] == i for u, _ in stored) for i in range(parts))
    assert r.cut_edges == sum(owner[u] != owner[v] for u, v in stored)
    for i in range(parts):
        mine = set(np.flatnonzero(owner == i).tolist())
        border = {v for u, v in stored if u in mine and v not in mine}
        border |= {u for u, v in stored if v in mine and u not in mine}
        assert r.borders[i] == len(border), i
    for sizes, imbalance in ((r.vertices, r.vertex_imbalance), (r.edges, r.edge_imbalance)):
        mean = sum(sizes) / parts
        assert imbalance == pytest.approx(max(sizes) / mean if mean else 1.0)


def test_get_by_name_and_instance():
    assert isinstance(partitioners.get("random"), Random)
    assert isinstance(partitioners.get("biased"), BiasedRandom)
    assert isinstance(partitioners.get("edge_balanced"), EdgeBalanced)
    custom = BiasedRandom(tolerance=1.05)
    assert partitioners.get(custom) is custom
    assert set(partitioners.REGISTRY) == {"random", "biased", "edge_balanced", "metis"}


def test_get_unknown_name_lists_the_valid_ones():
    message = (
        "unknown partitioner 'metiss'; expected one of 'biased', 'edge_balanced', 'metis', "
        "'random', or a Partitioner instance"
    )
    with pytest.raises(ValueError) as error:
        partitioners.get("metiss")
    assert str(error.value) == message


def test_metis_without_pymetis_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "pymetis", None)  # import pymetis: ImportError
    with pytest.raises(ImportError, match=r"pip install 'bspgraph\[metis\]'"):
        partitioners.get("metis")
    with pytest.raises(ImportError, match=r"pip install 'bspgraph\[metis\]'"):
        Metis()


@pytest.mark.skipif(not HAS_PYMETIS, reason="needs pymetis")
def test_metis_cuts_fewer_edges_than_random():
    graph = grid(20, 20)
    metis = report(graph, Metis()(graph, 4, seed=0), 4)
    assert metis.cut_edges < report(graph, Random()(graph, 4), 4).cut_edges / 4


@pytest.mark.parametrize("parts", [0, -1, 2.5, True, "2"])
def test_bad_parts(parts):
    with pytest.raises(
        ValueError, match=r"Random\(\)\(graph, parts=.*\): parts must be an integer >= 1"
    ):
        Random()(GRAPHS["tiny"], parts)


def test_bad_options():
    with pytest.raises(ValueError, match=r"BiasedRandom\(tolerance=0.5\)"):
        BiasedRandom(tolerance=0.5)
    with pytest.raises(ValueError, match=r"BiasedRandom\(balance='degree'\)"):
        BiasedRandom(balance="degree")
    with pytest.raises(ValueError, match=r"seed must be an integer"):
        Random()(GRAPHS["tiny"], 2, seed=1.5)


def test_a_custom_partitioner_is_checked():
    class Odd(Partitioner):
        name = "odd"

        def assign(self, graph, parts, *, seed):
            return np.arange(graph.num_vertices) % parts

    class Broken(Partitioner):
        name = "broken"

        def assign(self, graph, parts, *, seed):
            return np.full(graph.num_vertices, parts)

    assert partitioners.get(Odd())(GRAPHS["tiny"], 2).tolist() == [0, 1, 0]
    with pytest.raises(RuntimeError, match=r"Broken.assign returned"):
        Broken()(GRAPHS["tiny"], 2)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["random", "biased", "edge_balanced"])
def test_a_graph_on_the_gpu_gets_the_same_owner(name):
    graph = GRAPHS["directed"]
    on_gpu = graph.to("cupy")
    owner = partitioners.get(name)(on_gpu, 3, seed=4)
    assert isinstance(owner, np.ndarray)
    np.testing.assert_array_equal(owner, partitioners.get(name)(graph, 3, seed=4))
    assert report(on_gpu, owner, 3) == report(graph, owner, 3)
