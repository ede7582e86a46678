"""The traversals, components, centralities, clustering and cores of the backend (issue 30),
called directly, against networkx on labelled random graphs."""

import random

import networkx as nx
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from nx.test_algorithms import approx, labelled_graphs  # tests/nx, on the tests path

import bspgraph as bg
from bspgraph import nx as bnx
from bspgraph.nx import to_networkx

few = settings(max_examples=25)


def simple_loopless(G):
    G = G.copy()
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    return G


# --- traversal ----------------------------------------------------------------------------------
@few
@given(labelled_graphs(), st.data())
def test_bfs_family_in_networkx_order(G, data):
    source = data.draw(st.sampled_from(list(G)))
    limit = data.draw(st.sampled_from([None, 0, 1, 2]))
    assert list(bnx.bfs_edges(G, source, depth_limit=limit)) == list(
        nx.bfs_edges(G, source, depth_limit=limit)
    )
    assert list(bnx.bfs_predecessors(G, source)) == list(nx.bfs_predecessors(G, source))
    assert list(bnx.bfs_successors(G, source, limit)) == list(nx.bfs_successors(G, source, limit))
    assert nx.utils.graphs_equal(to_networkx(bnx.bfs_tree(G, source)), nx.bfs_tree(G, source))
    sources = data.draw(st.lists(st.sampled_from(list(G)), min_size=1, max_size=3))
    assert list(bnx.bfs_layers(G, sources)) == list(nx.bfs_layers(G, sources))
    reverse = set(bnx.bfs_edges(G, source, reverse=True))  # predecessors in node order
    assert {v for _, v in reverse} == {v for _, v in nx.bfs_edges(G, source, reverse=True)}
    assert bnx.descendants(G, source) == nx.descendants(G, source)
    assert bnx.ancestors(G, source) == nx.ancestors(G, source)
    target = data.draw(st.sampled_from(list(G)))
    assert bnx.has_path(G, source, target) == nx.has_path(G, source, target)


@few
@given(labelled_graphs(), st.data())
def test_path_lengths_match_networkx(G, data):
    source, target = data.draw(st.sampled_from(list(G))), data.draw(st.sampled_from(list(G)))
    weight = data.draw(st.sampled_from([None, "weight"]))
    method = data.draw(st.sampled_from(["dijkstra", "bellman-ford"]))
    for kwargs in ({"source": source}, {"target": target}):
        assert bnx.shortest_path_length(G, weight=weight, method=method, **kwargs) == (
            nx.shortest_path_length(G, weight=weight, method=method, **kwargs)
        )
    assert dict(bnx.shortest_path_length(G, weight=weight)) == dict(
        nx.shortest_path_length(G, weight=weight)
    )
    try:
        expected = nx.shortest_path_length(G, source, target, weight=weight)
    except nx.NetworkXNoPath:
        with pytest.raises(nx.NetworkXNoPath):
            bnx.shortest_path_length(G, source, target, weight=weight)
    else:
        assert bnx.shortest_path_length(G, source, target, weight=weight) == expected
    cutoff = data.draw(st.sampled_from([None, 0, 3.5]))
    assert bnx.single_source_dijkstra_path_length(G, source, cutoff) == (
        nx.single_source_dijkstra_path_length(G, source, cutoff)
    )
    assert bnx.single_source_bellman_ford_path_length(G, source) == (
        nx.single_source_bellman_ford_path_length(G, source)
    )
    if nx.has_path(G, source, target):
        assert bnx.dijkstra_path_length(G, source, target) == nx.dijkstra_path_length(
            G, source, target
        )


def test_traversal_errors_and_refusals():
    G = nx.path_graph(4)
    with pytest.raises(nx.NetworkXError, match="The node 9 is not in the graph"):
        list(bnx.bfs_edges(G, 9))
    with pytest.raises(nx.NetworkXError, match="The node 9"):
        list(bnx.bfs_layers(G, [0, 9]))
    with pytest.raises(nx.NodeNotFound):
        bnx.has_path(G, 0, 9)
    with pytest.raises(nx.NetworkXNoPath, match="Node 1 not reachable from 0"):
        bnx.dijkstra_path_length(nx.DiGraph([(1, 0)]), 0, 1)
    with pytest.raises(ValueError, match="method not supported"):
        bnx.shortest_path_length(G, 0, method="astar")
    with pytest.raises(NotImplementedError, match="sort_neighbors"):
        bnx.bfs_edges(G, 0, sort_neighbors=sorted)
    negative = nx.Graph([(0, 1, {"weight": -1})])
    with pytest.raises(NotImplementedError, match="negative"):
        bnx.single_source_bellman_ford_path_length(negative, 0)
    with pytest.raises(NotImplementedError, match="weight function"):
        bnx.single_source_dijkstra_path_length(G, 0, weight=lambda u, v, d: 1)
    multi = nx.MultiGraph([(0, 1, {"weight": 5}), (0, 1, {"weight": 2})])
    assert bnx.dijkstra_path_length(multi, 0, 1) == 2  # the lightest parallel edge


# --- components ---------------------------------------------------------------------------------
@few
@given(labelled_graphs())
def test_components_match_networkx(G):
    if G.is_directed():
        assert list(bnx.weakly_connected_components(G)) == list(nx.weakly_connected_components(G))
        assert bnx.number_weakly_connected_components(G) == (
            nx.number_weakly_connected_components(G)
        )
        assert bnx.is_weakly_connected(G) == nx.is_weakly_connected(G)
        with pytest.raises(nx.NetworkXNotImplemented, match="directed"):
            bnx.is_connected(G)
    else:
        assert bnx.number_connected_components(G) == nx.number_connected_components(G)
        assert bnx.is_connected(G) == nx.is_connected(G)
        node = next(iter(G))
        assert bnx.node_connected_component(G, node) == nx.node_connected_component(G, node)
        with pytest.raises(nx.NetworkXNotImplemented, match="undirected"):
            bnx.is_weakly_connected(G)


def test_connectivity_of_the_null_graph_is_pointless():
    with pytest.raises(nx.NetworkXPointlessConcept):
        bnx.is_connected(nx.Graph())
    with pytest.raises(nx.NetworkXPointlessConcept):
        bnx.is_weakly_connected(nx.DiGraph())


# --- centrality ---------------------------------------------------------------------------------
@few
@given(labelled_graphs(), st.sampled_from([None, "weight"]))
def test_power_iterations_match_networkx(G, weight):
    assert bnx.katz_centrality(G, alpha=0.02, weight=weight) == approx(
        nx.katz_centrality(G, alpha=0.02, weight=weight)
    )
    try:
        expected = nx.eigenvector_centrality(G, weight=weight, max_iter=300)
    except nx.PowerIterationFailedConvergence:
        with pytest.raises(nx.PowerIterationFailedConvergence):
            bnx.eigenvector_centrality(G, weight=weight, max_iter=300)
    else:
        assert bnx.eigenvector_centrality(G, weight=weight, max_iter=300) == approx(expected)
    nodes = list(G)
    nstart = {node: 1 + i % 3 for i, node in enumerate(nodes)}
    dangling = {nodes[0]: 1, nodes[-1]: 2}
    assert bnx.pagerank(G, nstart=nstart, dangling=dangling, weight=weight) == approx(
        nx.pagerank(G, nstart=nstart, dangling=dangling, weight=weight)
    )
    assert bnx.degree_centrality(G) == approx(nx.degree_centrality(G))


@few
@given(labelled_graphs(max_vertices=14, max_edges=40))
def test_hits_matches_networkx_python_iteration(G):
    from networkx.algorithms.link_analysis.hits_alg import _hits_python

    assume(G.number_of_edges())  # (networkx's iteration divides by zero without edges)
    try:
        hubs, authorities = _hits_python(nx.DiGraph(G) if G.is_directed() else nx.Graph(G))
    except nx.PowerIterationFailedConvergence:
        with pytest.raises(nx.PowerIterationFailedConvergence):
            bnx.hits(G)
        return
    except ZeroDivisionError:  # networkx's iteration, when every weight is 0: no answer
        assume(False)
    ours = bnx.hits(G)
    assert ours[0] == approx(hubs, 1e-9) and ours[1] == approx(authorities, 1e-9)


def test_multigraph_degrees_and_unweighted_pagerank_count_parallel_edges():
    G = nx.MultiDiGraph([(0, 1), (0, 1), (1, 2), (2, 0), (0, 2), (2, 2)])
    assert bnx.degree_centrality(G) == approx(nx.degree_centrality(G))
    assert bnx.pagerank(G, weight=None) == approx(nx.pagerank(G, weight=None))
    with pytest.raises(nx.NetworkXNotImplemented, match="multigraph"):
        bnx.katz_centrality(G)


# --- clustering and cores -----------------------------------------------------------------------
@few
@given(labelled_graphs(directed=False))
def test_clustering_and_cores_match_networkx(G):
    assert bnx.clustering(G) == approx(nx.clustering(G))
    some = list(G)[::2]
    assert bnx.clustering(G, some) == approx(nx.clustering(G, some))
    assert bnx.average_clustering(G) == pytest.approx(nx.average_clustering(G))
    assert bnx.transitivity(G) == pytest.approx(nx.transitivity(G))
    if nx.number_of_selfloops(G):
        with pytest.raises(nx.NetworkXNotImplemented, match="self loops"):
            bnx.core_number(G)
        G = simple_loopless(G)
    assert bnx.core_number(G) == nx.core_number(G)
    for k in (None, 1, 2):
        assert nx.utils.graphs_equal(to_networkx(bnx.k_core(G, k)), nx.k_core(G, k))


def test_clustering_refusals():
    with pytest.raises(NotImplementedError, match="directed"):
        bnx.clustering(nx.DiGraph([(0, 1)]))
    with pytest.raises(NotImplementedError, match="weighted"):
        bnx.clustering(nx.Graph([(0, 1)]), weight="weight")
    with pytest.raises(NotImplementedError, match="directed"):
        bnx.core_number(nx.DiGraph([(0, 1)]))


# --- the Python API beside it -------------------------------------------------------------------
@few
@given(st.integers(0, 2**16))
def test_graph_reversed_undirected_subgraph_match_networkx(seed):
    G = nx.gnp_random_graph(20, 0.15, seed=seed, directed=True)
    rng = random.Random(seed)
    for u, v in G.edges:
        G[u][v]["weight"] = float(rng.randint(1, 5))
    graph = bg.Graph.from_networkx(G)

    def edges(h):
        src, dst, weight = h.edges()
        return sorted(zip(src.tolist(), dst.tolist(), weight.tolist()))

    assert edges(graph.reversed()) == edges(bg.Graph.from_networkx(G.reverse()))
    undirected = nx.Graph()
    undirected.add_nodes_from(G)
    for u, v, w in sorted(G.edges(data="weight"), key=lambda e: -e[2]):  # the lightest wins
        undirected.add_edge(u, v, weight=w)
    assert edges(graph.to_undirected()) == edges(bg.Graph.from_networkx(undirected))
    keep = sorted(rng.sample(range(20), 8))
    sub = nx.convert_node_labels_to_integers(G.subgraph(keep), ordering="sorted")
    assert edges(graph.subgraph(keep[::-1])) == edges(bg.Graph.from_networkx(sub))
    assert np.array_equal(
        bg.bfs(graph.reversed(), 0, direction="pull").depth,
        bg.bfs(graph.reversed(), 0, direction="push").depth,
    )
    rank = bg.pagerank(graph, weighted=False).rank
    assert dict(enumerate(rank.tolist())) == approx(nx.pagerank(G, weight=None))


def test_subgraph_rejects_unknown_vertices():
    with pytest.raises(ValueError, match="out of range"):
        bg.Graph.from_edges([0], [1]).subgraph([0, 5])
