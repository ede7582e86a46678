"""The networkx backend's contract: signatures, entry points, conversions, dispatching."""

import inspect
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import networkx as nx
import pytest

import _nx_bspgraph
from bspgraph import nx as bnx
from bspgraph.nx import ALGORITHMS, BackendInterface, NxGraph
from bspgraph.nx.interface import BackendInterface as FromEntryPointPath

ROOT = Path(__file__).resolve().parent.parent.parent
INSTALLED = bool(entry_points(group="networkx.backends", name="bspgraph"))
# networkx warns each time it reuses a converted graph from G.__networkx_cache__
reuses_cache = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs")
needs_entry_point = pytest.mark.skipif(
    not INSTALLED,
    reason="the networkx.backends entry point 'bspgraph' is not installed "
    "(pip install -e . --no-deps)",
)


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_signature_matches_networkx(name):
    ours = inspect.signature(getattr(BackendInterface, name))
    theirs = inspect.signature(getattr(nx, name).orig_func)
    assert ours == theirs


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_docstring_is_networkx_with_our_notes_first(name):
    doc = getattr(BackendInterface, name).__doc__
    assert doc.startswith("bspgraph backend: ")
    assert inspect.getdoc(getattr(nx, name)).splitlines()[0] in doc


def test_backend_info_lists_exactly_the_implemented_functions():
    info = _nx_bspgraph.get_info()
    assert info["backend_name"] == "bspgraph"
    assert set(info["functions"]) == set(ALGORITHMS)
    assert all(hasattr(BackendInterface, name) for name in info["functions"])
    assert FromEntryPointPath is BackendInterface


def test_get_info_imports_no_bspgraph():
    code = (
        "import sys, _nx_bspgraph; _nx_bspgraph.get_info(); "
        "sys.exit(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('bspgraph', 'numpy', 'networkx')) or 0)"
    )
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_pyproject_declares_both_entry_points():
    text = (ROOT / "pyproject.toml").read_text()
    assert '[project.entry-points."networkx.backends"]' in text
    assert 'bspgraph = "bspgraph.nx.interface:BackendInterface"' in text
    assert '[project.entry-points."networkx.backend_info"]' in text
    assert 'bspgraph = "_nx_bspgraph:get_info"' in text
    assert '"_nx_bspgraph*"' in text


# --- conversions --------------------------------------------------------------------------------
def labelled_graph(directed=False):
    G = nx.DiGraph() if directed else nx.Graph()
    G.graph["name"] = "labelled"
    G.add_node("lonely", colour="red")
    G.add_edge("a", ("b", 2), weight=2.5, capacity=3)
    G.add_edge(("b", 2), 7, weight=1)
    G.add_edge(7, "a")
    G.add_edge(7, 7, weight=0.5)  # a self-loop
    return G


@pytest.mark.parametrize("directed", [False, True])
def test_convert_from_nx_numbers_the_nodes_in_order(directed):
    G = labelled_graph(directed)
    converted = BackendInterface.convert_from_nx(G, edge_attrs={"weight": 1})
    assert converted.__networkx_backend__ == "bspgraph"
    assert converted.is_directed() is directed
    assert converted.is_multigraph() is False
    assert converted.nodes == list(G)
    assert len(converted) == 4 and "a" in converted and ["a"] not in converted
    assert converted.number_of_edges() == G.number_of_edges()
    graph = converted.graph("weight")
    assert graph.num_vertices == 4
    assert graph.directed is directed
    a, b = converted.vertex("a"), converted.vertex(("b", 2))
    neighbours = graph.indices[graph.offsets[a] : graph.offsets[a + 1]].tolist()
    assert b in neighbours
    assert graph.weights[graph.offsets[a] + neighbours.index(b)] == 2.5
    # the edge 7 -> a has no weight: the default, 1
    seven = converted.vertex(7)
    row = graph.indices[graph.offsets[seven] : graph.offsets[seven + 1]].tolist()
    assert graph.weights[graph.offsets[seven] + row.index(a)] == 1


@pytest.mark.parametrize("directed", [False, True])
def test_convert_round_trip_preserves_everything(directed):
    G = labelled_graph(directed)
    converted = BackendInterface.convert_from_nx(
        G, preserve_edge_attrs=True, preserve_node_attrs=True, preserve_graph_attrs=True
    )
    back = BackendInterface.convert_to_nx(converted)
    assert nx.utils.graphs_equal(back, G)


def test_convert_to_nx_passes_results_through():
    result = {"a": 1.0}
    assert BackendInterface.convert_to_nx(result) is result


def test_multigraph_parallel_edges_sum_their_weights():
    G = nx.MultiGraph()
    G.add_edge(0, 1, weight=2)
    G.add_edge(0, 1, weight=3)
    G.add_edge(1, 2)
    converted = BackendInterface.convert_from_nx(G, edge_attrs={"weight": 1})
    assert converted.is_multigraph()
    assert converted.number_of_edges() == 2
    assert sorted(converted.edge_values["weight"].tolist()) == [1.0, 5.0]


def test_non_numeric_edge_attribute_is_not_implemented():
    G = nx.Graph()
    G.add_edge(0, 1, weight="heavy")
    with pytest.raises(NotImplementedError, match="numeric"):
        BackendInterface.convert_from_nx(G, edge_attrs={"weight": 1})


def test_graph_without_the_weight_attribute_names_it():
    converted = BackendInterface.convert_from_nx(nx.path_graph(3))
    with pytest.raises(ValueError, match="'weight' was not converted"):
        converted.graph("weight")


def test_can_run_gives_reasons():
    G = nx.path_graph(4)
    assert BackendInterface.can_run("pagerank", (G,), {}) is True
    assert BackendInterface.can_run("pagerank", (G,), {"nstart": {0: 1}}) is True
    assert BackendInterface.can_run("betweenness_centrality", (G, 2), {}) is True
    assert "weight" in BackendInterface.can_run("betweenness_centrality", (G,), {"weight": "w"})
    assert BackendInterface.can_run("closeness_centrality", (G,), {}) is True
    assert "distance" in BackendInterface.can_run("closeness_centrality", (G, 0, "w"), {})
    assert "does not implement" in BackendInterface.can_run("load_centrality", (G,), {})
    assert "sort_neighbors" in BackendInterface.can_run(
        "bfs_edges", (G, 0), {"sort_neighbors": sorted}
    )
    assert BackendInterface.can_run("triangles", (G,), {}) is True


# --- through networkx's dispatcher --------------------------------------------------------------
@needs_entry_point
@reuses_cache
def test_nx_pagerank_with_the_backend_matches_networkx():
    G = nx.gnp_random_graph(60, 0.08, seed=3, directed=True)
    for u, v in G.edges:
        G[u][v]["weight"] = (u * v) % 5 + 1
    G = nx.relabel_nodes(G, {v: f"n{v}" for v in G})
    ours = nx.pagerank(G, backend="bspgraph")
    theirs = nx.pagerank(G)
    assert ours.keys() == theirs.keys()
    assert all(ours[v] == pytest.approx(theirs[v], abs=1e-12) for v in G)
    unweighted = nx.pagerank(G, weight=None, backend="bspgraph")
    assert unweighted == pytest.approx(nx.pagerank(G, weight=None), abs=1e-12)


@needs_entry_point
@reuses_cache
def test_dispatching_every_function():
    G = nx.karate_club_graph()
    G.add_edge("x", "y")
    assert nx.single_source_shortest_path_length(G, 0, backend="bspgraph") == (
        nx.single_source_shortest_path_length(G, 0)
    )
    assert list(nx.connected_components(G, backend="bspgraph")) == list(nx.connected_components(G))
    assert nx.triangles(G, backend="bspgraph") == nx.triangles(G)
    assert nx.betweenness_centrality(G, backend="bspgraph") == pytest.approx(
        nx.betweenness_centrality(G), abs=1e-12
    )
    assert nx.closeness_centrality(G, backend="bspgraph") == pytest.approx(
        nx.closeness_centrality(G), abs=1e-12
    )
    assert nx.harmonic_centrality(G, backend="bspgraph") == pytest.approx(
        nx.harmonic_centrality(G), abs=1e-12
    )


@needs_entry_point
def test_dispatching_unsupported_arguments_raises_or_falls_back():
    G = nx.path_graph(5)
    assert nx.betweenness_centrality(G, k=2, seed=1, backend="bspgraph") == pytest.approx(
        nx.betweenness_centrality(G, k=2, seed=1), abs=1e-12
    )
    with pytest.raises(NotImplementedError):
        nx.betweenness_centrality(G, weight="weight", backend="bspgraph")
    with pytest.raises(nx.NetworkXNotImplemented):  # networkx's own check, before dispatching
        list(nx.connected_components(nx.DiGraph(G), backend="bspgraph"))


@needs_entry_point
@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda G, b: nx.betweenness_centrality(G, k=10, weight="weight", backend=b),
         "weight='weight'"),
        (lambda G, b: nx.closeness_centrality(G, distance="length", backend=b),
         "distance='length'"),
        (lambda G, b: list(nx.bfs_edges(G, 0, sort_neighbors=sorted, backend=b)),
         "sort_neighbors=<function sorted>"),
        (lambda G, b: nx.pagerank(G, alpha=2, backend=b), "alpha=2"),
        (lambda G, b: nx.clustering(G, weight="w", backend=b), "weight='w'"),
        (lambda G, b: nx.core_number(nx.DiGraph(G), backend=b), "G=<a directed graph>"),
        (lambda G, b: nx.dijkstra_path_length(G, 0, 1, weight=lambda u, v, d: 1, backend=b),
         "weight=<function <lambda>>"),
    ],
)  # fmt: skip
def test_a_refused_call_names_the_argument_and_its_value(call, named):
    """networkx's own message says only "for the given arguments"; the backend's names what."""
    G = nx.gnm_random_graph(20, 40, seed=1)
    with pytest.raises(NotImplementedError) as refusal:
        call(G, "bspgraph")
    message = str(refusal.value)
    assert named in message and "is not served by bspgraph" in message, message
    assert "backend='bspgraph'" in message  # networkx's note that no other backend was tried
    assert BackendInterface.can_run("betweenness_centrality", (G,), {"weight": "w"}) == (
        "weight='w' is not served by bspgraph: weighted betweenness is not supported"
    )  # through backend_priority: a reason, and networkx runs it


@needs_entry_point
def test_a_refused_call_through_priority_falls_back():
    G = nx.gnm_random_graph(20, 40, seed=1)
    with nx.config(backend_priority=["bspgraph"], fallback_to_nx=True):
        assert nx.betweenness_centrality(G, k=5, weight="weight", seed=2) == pytest.approx(
            nx.betweenness_centrality(G, k=5, weight="weight", seed=2, backend="networkx")
        )


@needs_entry_point
def test_backend_graph_is_accepted_by_networkx():
    converted = BackendInterface.convert_from_nx(nx.cycle_graph(5))
    assert isinstance(converted, NxGraph)
    assert nx.triangles(converted) == dict.fromkeys(range(5), 0)


@pytest.mark.parametrize("graph_class", [nx.Graph, nx.MultiGraph, nx.DiGraph])
def test_convert_a_filtered_view(graph_class):
    """networkx's subgraph views filter the adjacency lazily (their len() can overcount)."""
    G = graph_class([(0, 1), (0, 1), (1, 2), (2, 3), (3, 0), (1, 3)])
    view = G.edge_subgraph(list(G.edges)[:3])
    converted = BackendInterface.convert_from_nx(view, edge_attrs={"weight": 1})
    assert converted.nodes == list(view)
    back = BackendInterface.convert_to_nx(converted)
    assert {frozenset(e[:2]) for e in back.edges} == {frozenset(e[:2]) for e in view.edges}
    if not G.is_directed():
        assert list(bnx.connected_components(view)) == list(nx.connected_components(view))
