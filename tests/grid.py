"""The multi-device grid: every primitive x partitioner x communicator x device count, each cell
a pytest parameter that checks a few hypothesis-drawn graphs (and the empty graph and edgeless
ones) against networkx. tests/test_multi.py runs it; tests/conftest.py reports what it covered.

To add a primitive, add one ``Row`` to ``ROWS``: how bspgraph runs it, how networkx answers,
how the two compare (and, optionally, the graphs and options to draw); the ``core_number`` row
is a short example (a graph with a self-loop: both refuse it).
"""

from __future__ import annotations

import importlib.util
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pytest
import scipy.sparse.linalg
from hypothesis import given, note, seed, settings
from hypothesis import strategies as st
from strategies import DEEP, SEED, as_array, edge_lists, to_networkx

import bspgraph as bg
from bspgraph.enactor import solo
from bspgraph.primitives.sssp import SSSP

PARTITIONERS = ("random", "biased", "edge_balanced", "metis")
COMMUNICATORS = (
    "broadcast",
    "selective",
    "butterfly:1",
    "butterfly:2",
    "butterfly:3",
    "butterfly:4",
)
DEVICES = (2, 3, 4, 5)
LIGHT_SHARES = (0, 1, 2, solo.LIGHT_SHARE)  # a frontier of at most E / share out-edges
HAS_PYMETIS = importlib.util.find_spec("pymetis") is not None
NO_PYMETIS = "pymetis is not installed: the metis cells did NOT run (pip install '.[dev]')"


@dataclass(frozen=True)
class Row:
    """One primitive (with one family of graphs) in the grid.

    ``run(graph, options, **run)`` runs bspgraph and returns its answer as NumPy arrays;
    ``truth(nx_graph, options)`` is networkx's answer in the same shape; ``compare(got,
    expected, case)`` raises AssertionError when they differ (``case``: the ``Case`` run, for
    checks that need the graph, such as a BFS tree's edges). ``graphs`` draws edge
    lists ``(n, src, dst, weight, directed)`` (default: ``edge_lists(directed=directed)``);
    ``options(n)`` draws the keyword options of one run on ``n`` vertices (``{}`` for the
    defaults). ``source``: the options hold a ``source`` vertex, so a graph without vertices
    must be refused (ValueError). ``directed``: only directed (True) or undirected (False)
    graphs, None for both. ``trivial``: also run the empty and the edgeless graphs."""

    name: str
    run: Callable
    truth: Callable
    compare: Callable
    examples: int  # hypothesis examples a cell (times 16 under HYPOTHESIS_PROFILE=deep)
    graphs: st.SearchStrategy | None = None
    options: Callable = lambda n: st.just({})
    source: bool = False
    directed: bool | None = None
    trivial: bool = True

    def edge_lists(self) -> st.SearchStrategy:
        return self.graphs if self.graphs is not None else edge_lists(directed=self.directed)

    def check(self, graph, nx_graph, options, run) -> None:
        if self.source and graph.num_vertices == 0:
            with pytest.raises(ValueError, match="source"):
                self.run(graph, {**options, "source": 0}, **run)
            return
        got = self.run(graph, options, **run)
        self.compare(got, self.truth(nx_graph, options), Case(graph, nx_graph, options))


@dataclass(frozen=True)
class Case:
    graph: bg.Graph
    nx_graph: nx.Graph
    options: dict


# --- the primitives: how bspgraph runs them, what networkx says, how they compare -----------
def _bfs(parents):
    def run(graph, options, **run):
        result = bg.bfs(
            graph,
            options["source"],
            parents=parents,
            direction=options.get("direction", "auto"),
            **run,
        )
        return result.depth, result.parent

    return run


def _bfs_truth(nx_graph, options):
    n = nx_graph.number_of_nodes()
    return as_array(nx.single_source_shortest_path_length(nx_graph, options["source"]), n, -1)


def _bfs_compare(got, expected, case):
    depth, parent = got
    np.testing.assert_array_equal(depth, expected)
    if parent is None:
        return
    for vertex in np.flatnonzero(depth > 0):  # a BFS tree: an edge from one level up
        assert case.nx_graph.has_edge(int(parent[vertex]), int(vertex)), (vertex, parent[vertex])
        assert depth[parent[vertex]] == depth[vertex] - 1, vertex
    assert (parent[depth <= 0] == -1).all()


def _source(n, **more):
    return st.fixed_dictionaries({"source": st.integers(0, n - 1), **more})


def _sssp(graph, options, **run):
    if "delta" not in options:
        return bg.sssp(graph, options["source"], **run).distance
    state, _ = bg.enact(SSSP(delta=options["delta"]), graph, source=options["source"], **run)
    return state["distance"]


def _sssp_parents(graph, options, **run):
    result = bg.sssp(graph, options["source"], parents=True, **run)
    return result.distance, result.parent


def _sssp_parents_compare(got, expected, case):
    """The distances, and a shortest-path tree: each reached vertex's parent is an in-neighbour
    whose distance plus the lightest edge weight is its own (any one of them)."""
    distance, parent = got
    np.testing.assert_allclose(distance, expected, rtol=1e-12, atol=0)
    for vertex in np.flatnonzero(np.isfinite(distance) & (parent >= 0)):
        above = int(parent[vertex])
        weight = case.nx_graph[above][int(vertex)].get("weight", 1)
        assert distance[above] + weight == distance[vertex], (vertex, above)
    reached = int(np.isfinite(distance).sum())
    assert int((parent >= 0).sum()) == max(reached - 1, 0)  # all but the source have one


def _sssp_truth(nx_graph, options):
    n = nx_graph.number_of_nodes()
    return as_array(nx.single_source_dijkstra_path_length(nx_graph, options["source"]), n, np.inf)


def _deltas():  # the public default ("auto": none on several devices), or a bucket width
    return st.one_of(
        st.just({}), st.sampled_from([None, 0.0, 1.0, 2.5]).map(lambda d: {"delta": d})
    )


def _component_minima(nx_graph, options=None) -> np.ndarray:
    """Each vertex's label: the smallest id of its (weakly) connected component."""
    directed = nx_graph.is_directed()
    components = (nx.weakly_connected_components if directed else nx.connected_components)(nx_graph)
    labels = np.empty(nx_graph.number_of_nodes(), dtype=np.int64)
    for component in components:
        labels[list(component)] = min(component)
    return labels


def _strong_minima(nx_graph, options=None) -> np.ndarray:
    """Each vertex's label: the smallest id of its strongly connected component (its
    connected component, undirected)."""
    directed = nx_graph.is_directed()
    components = (nx.strongly_connected_components if directed else nx.connected_components)(
        nx_graph
    )
    labels = np.empty(nx_graph.number_of_nodes(), dtype=np.int64)
    for component in components:
        labels[list(component)] = min(component)
    return labels


@st.composite
def dense_edge_lists(draw):
    """More than 8 edges a vertex on average (CC samples, then skips the largest component):
    a dense core on random ids, a few edges anywhere, isolated vertices, either direction."""
    n = draw(st.integers(20, 40))
    core = draw(st.integers(int((12 * n) ** 0.5) + 2, n))  # enough distinct pairs
    directed = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    members = rng.permutation(n)[:core]
    count = 20 * n
    src, dst = members[rng.integers(0, core, count)], members[rng.integers(0, core, count)]
    extra = draw(st.integers(0, 6))
    src = np.concatenate([src, rng.integers(0, n, extra)])
    dst = np.concatenate([dst, rng.integers(0, n, extra)])
    return n, src, dst, None, directed


def _dense_components(got, expected, case):
    assert case.graph.num_edges > 8 * case.graph.num_vertices  # the sampled path, then the skip
    np.testing.assert_array_equal(got, expected)


def _pagerank(graph, options, **run):
    return bg.pagerank(graph, tol=1e-10, max_iter=500, **options, **run).rank


def _pagerank_truth(nx_graph, options):
    n = nx_graph.number_of_nodes()
    return as_array(nx.pagerank(nx_graph, tol=1e-10, max_iter=500, **options), n, 0.0)


@st.composite
def _pagerank_options(draw, n):
    options = {"alpha": draw(st.sampled_from([0.85, 0.5]))}
    if draw(st.booleans()):  # a dict of some vertices' weights, not all zero
        weights = draw(st.dictionaries(st.integers(0, n - 1), st.integers(0, 3), min_size=1))
        if any(weights.values()):
            options["personalization"] = weights
    return options


def _equal(got, expected, case):
    np.testing.assert_array_equal(got, expected)


def _close(rtol, atol):
    def compare(got, expected, case):
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)

    return compare


def _bc(graph, options, **run):
    options = dict(options)
    if "sampled" in options:  # the list networkx samples for (k, seed), passed as sources
        k, seed = options.pop("sampled")
        options["sources"] = random.Random(seed).sample(range(graph.num_vertices), k)
    return bg.betweenness_centrality(graph, **options, **run).centrality


def _bc_truth(nx_graph, options):
    nx_graph = nx.DiGraph(nx_graph) if nx_graph.is_directed() else nx.Graph(nx_graph)
    n = nx_graph.number_of_nodes()
    options = {key: value for key, value in options.items() if key != "batch"}
    if "sampled" in options:
        options["k"], options["seed"] = options.pop("sampled")
    return as_array(nx.betweenness_centrality(nx_graph, weight=None, **options), n, 0.0)


@st.composite
def _bc_options(draw, n):
    options = {
        "normalized": draw(st.booleans()),
        "endpoints": draw(st.booleans()),
        "batch": draw(st.sampled_from([1, 2, 3, None])),
    }
    if draw(st.booleans()):  # sampled sources: networkx's k and seed, or its sample as a list
        k, seed = draw(st.integers(1, n)), draw(st.integers(0, 1000))
        options.update({"k": k, "seed": seed} if draw(st.booleans()) else {"sampled": (k, seed)})
    return options


def _bfs_sources(graph, options, **run):  # (every vertex on the trivial graphs)
    sources = options.get("sources", range(graph.num_vertices))
    return bg.bfs(graph, sources=sources, batch=options.get("batch"), **run).depth


def _bfs_sources_truth(nx_graph, options):
    n = nx_graph.number_of_nodes()
    sources = options.get("sources", range(n))
    rows = [as_array(nx.single_source_shortest_path_length(nx_graph, s), n, -1) for s in sources]
    return np.array(rows, dtype=np.int64).reshape(len(sources), n)


def _closeness(graph, options, **run):
    return bg.closeness_centrality(graph, **options, **run).centrality


def _closeness_truth(nx_graph, options):
    n = nx_graph.number_of_nodes()
    closeness = nx.closeness_centrality(nx_graph, wf_improved=options.get("wf_improved", True))
    return as_array(closeness, n, 0.0)


def _triangles(graph, options, **run):
    result = bg.triangle_count(graph, **run)
    return result.per_vertex, result.total


def _triangles_truth(nx_graph, options):
    per_vertex = as_array(nx.triangles(nx_graph), nx_graph.number_of_nodes(), 0)
    return per_vertex, per_vertex.sum() // 3


def _triangles_compare(got, expected, case):
    np.testing.assert_array_equal(got[0], expected[0])
    assert got[1] == expected[1]


def _core(graph, options, **run):
    """Core numbers, or None where bspgraph refuses the graph (a self-loop)."""
    try:
        return bg.core_number(graph, **run).core
    except ValueError as error:
        assert "self-loop" in str(error), error
        return None


def _core_truth(nx_graph, options):
    if nx.number_of_selfloops(nx_graph):  # networkx refuses it too (NetworkXNotImplemented)
        return None
    return as_array(nx.core_number(nx_graph), nx_graph.number_of_nodes(), 0)


def _core_compare(got, expected, case):
    if expected is None or got is None:
        assert got is expected is None, (got, expected)
    else:
        np.testing.assert_array_equal(got, expected)


def _refused_alike(run, truth, to_array):
    """A Row's run and truth for a centrality that networkx may refuse (no convergence, an
    empty graph): "refused" on both sides then, else the arrays. Where networkx has no answer
    (nx.hits's ARPACK fails on a graph without edges) the truth is None: nothing to compare."""

    def ours(graph, options, **runs):
        try:
            return to_array(run(graph, **runs))
        except (bg.ConvergenceError, ValueError):
            return "refused"

    def theirs(nx_graph, options):
        try:
            return truth(nx_graph)
        except (nx.PowerIterationFailedConvergence, nx.NetworkXException):
            return "refused"
        except scipy.sparse.linalg.ArpackError:
            return None

    return ours, theirs


def _refusal_or_close(got, expected, case):
    if expected is None:
        return
    if isinstance(expected, str) or isinstance(got, str):
        assert got == expected, (got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)


def _values(n, mapping):
    return as_array(mapping, n, 0.0)


# (hits is not in the grid: networkx computes it with ARPACK, whose vectors on graphs with a
# repeated top singular value, disconnected ones, differ from any power iteration's; tests/nx
# compares it where they are unique.) Katz with a small alpha and few iterations: a run that
# does not converge costs max_iter supersteps on every cell.
_katz = _refused_alike(
    lambda g, **run: bg.katz_centrality(g, 0.05, max_iter=100, **run),
    lambda nxg: _values(len(nxg), nx.katz_centrality(nxg, 0.05, max_iter=100, weight="weight")),
    lambda r: r.centrality,
)
_eigenvector = _refused_alike(
    lambda g, **run: bg.eigenvector_centrality(g, **run),
    lambda nxg: _values(len(nxg), nx.eigenvector_centrality(nxg, weight="weight")),
    lambda r: r.centrality,
)


ROWS: tuple[Row, ...] = (
    Row(
        "bfs",
        _bfs(parents=False),
        _bfs_truth,
        _bfs_compare,
        examples=6,
        source=True,
        options=lambda n: _source(n, direction=st.sampled_from(["auto", "push", "pull"])),
    ),
    Row(
        "bfs_parents",
        _bfs(parents=True),
        _bfs_truth,
        _bfs_compare,
        examples=6,
        source=True,
        options=lambda n: _source(n, direction=st.sampled_from(["auto", "push", "pull"])),
    ),
    Row(
        "sssp",
        _sssp,
        _sssp_truth,
        _close(1e-12, 0),
        examples=6,
        source=True,
        options=lambda n: st.tuples(_source(n), _deltas()).map(lambda o: {**o[0], **o[1]}),
    ),
    Row(
        "sssp_parents",
        _sssp_parents,
        _sssp_truth,
        _sssp_parents_compare,
        examples=4,
        source=True,
        options=lambda n: _source(n),
    ),
    Row(
        "connected_components",
        lambda g, o, **run: bg.connected_components(g, **run).labels,
        _component_minima,
        _equal,
        examples=6,
    ),
    Row(
        "connected_components_dense",
        lambda g, o, **run: bg.connected_components(g, **run).labels,
        _component_minima,
        _dense_components,
        examples=2,
        graphs=dense_edge_lists(),
        trivial=False,
    ),
    Row(
        "strongly_connected_components",
        lambda g, o, **run: bg.strongly_connected_components(g, **run).labels,
        _strong_minima,
        _equal,
        examples=4,
    ),
    Row(
        "pagerank",
        _pagerank,
        _pagerank_truth,
        _close(1e-5, 1e-8),
        examples=4,
        options=_pagerank_options,
    ),
    Row(
        "betweenness_centrality",
        _bc,
        _bc_truth,
        _close(1e-9, 1e-12),
        examples=3,
        graphs=edge_lists(max_vertices=12, max_edges=30),
        options=_bc_options,
    ),
    Row(
        "bfs_sources",
        _bfs_sources,
        _bfs_sources_truth,
        _equal,
        examples=3,
        options=lambda n: st.fixed_dictionaries(
            {
                "batch": st.sampled_from([1, 2, 3, None]),
                "sources": st.lists(st.integers(0, n - 1), unique=True, max_size=n),
            }
        ),
    ),
    Row(
        "closeness_centrality",
        _closeness,
        _closeness_truth,
        _close(1e-12, 0),
        examples=3,
        options=lambda n: st.fixed_dictionaries(
            {"batch": st.sampled_from([1, 3, None]), "wf_improved": st.booleans()}
        ),
    ),
    Row(
        "triangle_count",
        _triangles,
        _triangles_truth,
        _triangles_compare,
        examples=6,
        directed=False,
    ),
    Row("core_number", _core, _core_truth, _core_compare, examples=6, directed=False),
    Row("katz_centrality", *_katz, _refusal_or_close, examples=3),
    Row("eigenvector_centrality", *_eigenvector, _refusal_or_close, examples=3),
)

# Cells that give a wrong answer today (library bugs, not fixed here): (row, partitioner,
# communicator, devices) -> what goes wrong, with the smallest graph hypothesis found.
KNOWN_BUGS: dict[tuple[str, str, str, int], str] = {}


# --- running a cell ---------------------------------------------------------------------------
# What the run covered: (row, partitioner, communicator, devices) -> hypothesis examples run
# (the empty and the edgeless graph come on top). Read by conftest's terminal summary.
COVERED: dict[tuple[str, str, str, int], int] = {}


def cells() -> list:
    """Every cell as a pytest parameter, with its id, metis skipped loudly without pymetis and
    the known bugs as strict xfails."""
    params = []
    for row in ROWS:
        for partitioner in PARTITIONERS:
            for communicator in COMMUNICATORS:
                for devices in DEVICES:
                    key = (row.name, partitioner, communicator, devices)
                    marks = []
                    if partitioner == "metis" and not HAS_PYMETIS:
                        marks.append(pytest.mark.skip(reason=NO_PYMETIS))
                    if key in KNOWN_BUGS:
                        marks.append(pytest.mark.xfail(reason=KNOWN_BUGS[key], strict=True))
                    cell = f"{row.name}-{partitioner}-{communicator}-P{devices}"
                    params.append(pytest.param(row, *key[1:], marks=marks, id=cell))
    return params


def cell_seed(*key) -> int:
    """The cell's hypothesis seed: the run's seed (BSPGRAPH_TEST_SEED) and the cell's name."""
    return zlib.crc32(repr((SEED, *key)).encode())


def build(n, src, dst, weight, directed):
    graph = bg.Graph.from_edges(
        src, dst, weight, num_vertices=n, directed=directed, backend="numpy"
    )
    return graph, to_networkx(n, src, dst, weight, directed)


TRIVIAL = [  # no vertices; five isolated ones (directed or not), with and without weights
    (0, np.zeros(0, np.int64), np.zeros(0, np.int64), None, False),
    (5, np.zeros(0, np.int64), np.zeros(0, np.int64), None, True),
    (5, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), False),
]


def run_cell(row: Row, partitioner: str, communicator: str, devices: int) -> None:
    """The empty and edgeless graphs, then ``row.examples`` drawn graphs, on this cell."""
    run = {"devices": devices, "partitioner": partitioner, "communicator": communicator}
    for edges in TRIVIAL if row.trivial else ():
        if row.directed is not None and edges[4] != row.directed:
            continue
        graph, nx_graph = build(*edges)
        options = {"source": edges[0] - 1} if row.source and edges[0] else {}
        row.check(graph, nx_graph, options, run)
    key = (row.name, partitioner, communicator, devices)
    ran = 0

    @seed(cell_seed(*key))
    @settings(max_examples=row.examples * DEEP, deadline=None)
    @given(edges=row.edge_lists(), data=st.data())
    def search(edges, data):
        nonlocal ran
        graph, nx_graph = build(*edges)
        options = data.draw(row.options(graph.num_vertices), label="options") if edges[0] else {}
        # light supersteps on one device (rule 6): never, the default, or from most frontiers
        share = data.draw(st.sampled_from(LIGHT_SHARES), label="LIGHT_SHARE")
        note(f"{row.name} on {devices} devices, {partitioner}, {communicator}")
        default, solo.LIGHT_SHARE = solo.LIGHT_SHARE, share
        try:
            row.check(graph, nx_graph, options, run)
        finally:
            solo.LIGHT_SHARE = default
        ran += 1

    search()
    COVERED[key] = ran
