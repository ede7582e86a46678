"""The backend's functions, called directly, against networkx on labelled random graphs."""

import random

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import edge_lists, to_networkx

from bspgraph import nx as bnx

LABELS = ["a", ("t", 1), 2.5, True, frozenset({3}), "b", 10, -1]


@st.composite
def labelled_graphs(draw, directed=None, max_vertices=18, max_edges=50):
    """A networkx graph with arbitrary node labels in a shuffled node order."""
    n, src, dst, weight, directed = draw(
        edge_lists(max_vertices=max_vertices, max_edges=max_edges, directed=directed)
    )
    G = to_networkx(n, src, dst, weight, directed)
    order = list(G)
    random.Random(draw(st.integers(0, 2**16))).shuffle(order)
    labels = {v: LABELS[v] if v < len(LABELS) else f"v{v}" for v in G}
    H = G.__class__()
    H.add_nodes_from(labels[v] for v in order)
    H.add_edges_from((labels[u], labels[v], d) for u, v, d in G.edges(data=True))
    return H


def approx(mapping, tolerance=1e-10):
    return pytest.approx(mapping, abs=tolerance)


# --- pagerank -----------------------------------------------------------------------------------
@given(labelled_graphs(), st.sampled_from(["weight", None]))
def test_pagerank_matches_networkx(G, weight):
    ours = bnx.pagerank(G, weight=weight)
    theirs = nx.pagerank(G, weight=weight)
    assert list(ours) == list(theirs)
    assert ours == approx(theirs)


def test_pagerank_personalization_and_alpha_by_label():
    G = nx.relabel_nodes(nx.gnp_random_graph(30, 0.1, seed=1, directed=True), str)
    personalization = {"3": 1, "7": 2, "not a node": 5}
    ours = bnx.pagerank(G, alpha=0.7, personalization=personalization, tol=1e-10)
    assert ours == approx(nx.pagerank(G, alpha=0.7, personalization=personalization, tol=1e-10))
    with pytest.raises(ZeroDivisionError):
        bnx.pagerank(G, personalization={"not a node": 1})


def test_pagerank_raises_networkx_errors():
    with pytest.raises(nx.PowerIterationFailedConvergence):
        bnx.pagerank(nx.cycle_graph(5, create_using=nx.DiGraph), max_iter=0)
    assert bnx.pagerank(nx.Graph()) == {}
    with pytest.raises(NotImplementedError, match="nstart"):
        bnx.pagerank(nx.path_graph(3), nstart={0: -1})
    with pytest.raises(NotImplementedError, match="dangling"):
        bnx.pagerank(nx.path_graph(3), dangling={0: 0})
    # out of range: networkx runs them as given (alpha=2 fails to converge there)
    for options in ({"alpha": 2.0}, {"tol": -1.0}, {"max_iter": -1}):
        with pytest.raises(NotImplementedError, match="alpha|max_iter"):
            bnx.pagerank(nx.path_graph(3), **options)
    with pytest.raises(NotImplementedError, match="infinite"):
        bnx.pagerank(nx.Graph([(0, 1, {"weight": float("inf")})]))


def test_pagerank_weighted_multigraph_sums_parallel_edges():
    G = nx.MultiDiGraph([(0, 1), (0, 1), (1, 2), (2, 0), (0, 2)])
    assert bnx.pagerank(G) == approx(nx.pagerank(G))
    assert bnx.pagerank(G, weight=None) == approx(nx.pagerank(G, weight=None))  # counted


# --- single_source_shortest_path_length ---------------------------------------------------------
@given(labelled_graphs(), st.data())
def test_shortest_path_lengths_match_networkx(G, data):
    source = data.draw(st.sampled_from(list(G)))
    cutoff = data.draw(st.sampled_from([None, -1, 0, 1, 2, 1.5, 100]))
    ours = bnx.single_source_shortest_path_length(G, source, cutoff=cutoff)
    assert ours == nx.single_source_shortest_path_length(G, source, cutoff=cutoff)
    assert list(ours.values()) == sorted(ours.values())  # by length


def test_shortest_path_length_unknown_source():
    with pytest.raises(nx.NodeNotFound, match="Source 9 is not in G"):
        bnx.single_source_shortest_path_length(nx.path_graph(3), 9)
    with pytest.raises(nx.NodeNotFound):
        bnx.single_source_shortest_path_length(nx.path_graph(3), [0])


# --- connected_components -----------------------------------------------------------------------
@given(labelled_graphs(directed=False))
def test_connected_components_match_networkx_in_order(G):
    components = bnx.connected_components(G)
    assert iter(components) is components  # a generator, as networkx's
    assert list(components) == list(nx.connected_components(G))


def test_connected_components_rejects_directed_graphs():
    with pytest.raises(nx.NetworkXNotImplemented, match="directed"):
        bnx.connected_components(nx.DiGraph([(0, 1)]))
    assert list(bnx.connected_components(nx.Graph())) == []


# --- betweenness_centrality ---------------------------------------------------------------------
@given(labelled_graphs(max_vertices=12, max_edges=30), st.booleans(), st.booleans())
def test_betweenness_matches_networkx(G, normalized, endpoints):
    ours = bnx.betweenness_centrality(G, normalized=normalized, endpoints=endpoints)
    theirs = nx.betweenness_centrality(G, normalized=normalized, endpoints=endpoints)
    assert list(ours) == list(theirs)
    assert ours == approx(theirs, 1e-9)


@given(labelled_graphs(max_vertices=12, max_edges=30), st.booleans(), st.booleans(), st.data())
def test_betweenness_sample_matches_networkx(G, normalized, endpoints, data):
    k = data.draw(st.integers(1, len(G)), label="k")
    seed = data.draw(st.integers(0, 1000), label="seed")
    ours = bnx.betweenness_centrality(G, k, normalized, None, endpoints, seed)
    theirs = nx.betweenness_centrality(G, k, normalized, None, endpoints, seed)
    assert list(ours) == list(theirs)
    assert ours == pytest.approx(theirs, abs=1e-9, nan_ok=True)


def test_betweenness_unsupported_arguments():
    with pytest.raises(NotImplementedError, match="weighted"):
        bnx.betweenness_centrality(nx.path_graph(4), weight="weight")
    with pytest.raises(ValueError, match="Sample larger than population"):  # as networkx
        bnx.betweenness_centrality(nx.path_graph(4), k=5, seed=1)


# --- closeness_centrality, harmonic_centrality --------------------------------------------------
@given(labelled_graphs(max_vertices=12, max_edges=30), st.booleans(), st.data())
def test_closeness_matches_networkx(G, wf_improved, data):
    ours = bnx.closeness_centrality(G, wf_improved=wf_improved)
    theirs = nx.closeness_centrality(G, wf_improved=wf_improved)
    assert list(ours) == list(theirs)
    assert ours == approx(theirs, 1e-12)
    node = data.draw(st.sampled_from(list(G)), label="u")
    one = bnx.closeness_centrality(G, node, wf_improved=wf_improved)
    assert one == pytest.approx(nx.closeness_centrality(G, node, wf_improved=wf_improved))


@given(labelled_graphs(max_vertices=12, max_edges=30), st.data())
def test_harmonic_matches_networkx(G, data):
    subsets = st.one_of(st.none(), st.lists(st.sampled_from([*G, "not a node"]), max_size=6))
    nbunch, sources = data.draw(subsets, label="nbunch"), data.draw(subsets, label="sources")
    ours = bnx.harmonic_centrality(G, nbunch, sources=sources)
    theirs = nx.harmonic_centrality(G, nbunch, sources=sources)
    assert ours == approx(theirs, 1e-12)


def test_closeness_and_harmonic_refuse_distances_and_unknown_nodes():
    with pytest.raises(NotImplementedError, match="distance"):
        bnx.closeness_centrality(nx.path_graph(4), distance="weight")
    with pytest.raises(NotImplementedError, match="distance"):
        bnx.harmonic_centrality(nx.path_graph(4), distance="weight")
    with pytest.raises(nx.NodeNotFound):
        bnx.closeness_centrality(nx.path_graph(4), 9)
    assert bnx.harmonic_centrality(nx.path_graph(3), 1) == {1: 2.0}


# --- triangles ----------------------------------------------------------------------------------
@given(labelled_graphs(directed=False))
def test_triangles_match_networkx(G):
    assert bnx.triangles(G) == nx.triangles(G)
    some = list(G)[::2]
    assert bnx.triangles(G, some) == nx.triangles(G, some)
    node = next(iter(G), None)
    if node is not None:
        count = bnx.triangles(G, node)
        assert count == nx.triangles(G, node) and type(count) is int


def test_triangles_nodes_like_networkx():
    G = nx.complete_graph(4)
    assert bnx.triangles(G, [3, 99, 0, 3]) == {3: 3, 0: 3}
    assert bnx.triangles(G, iter([1])) == {1: 3}
    with pytest.raises(nx.NetworkXError, match="Node 99 is not in the graph"):
        bnx.triangles(G, 99)
    with pytest.raises(nx.NetworkXError, match="not a valid node"):
        bnx.triangles(G, [0, [1]])
    with pytest.raises(nx.NetworkXNotImplemented, match="directed"):
        bnx.triangles(nx.DiGraph(G))
    with pytest.raises(nx.NetworkXNotImplemented, match="multigraph"):
        bnx.triangles(nx.MultiGraph(G), [0])
    assert bnx.triangles(nx.MultiGraph(G)) == nx.triangles(nx.MultiGraph(G))
