"""Paths and distance measures of the backend (issue 53), called directly, against networkx on
labelled random graphs. Where several shortest paths exist networkx picks one by its search
order: a path here is checked for being a path of the graph of networkx's length, and is
networkx's exactly where networkx defines it (unweighted paths from one source)."""

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nx.test_algorithms import labelled_graphs  # tests/nx, on the tests path

from bspgraph import nx as bnx

few = settings(max_examples=25)


def _length(G, path, weight):
    """The length of ``path`` in ``G`` (its lightest parallel edges), failing if it is not
    a path of ``G``."""
    total = 0
    for u, v in zip(path, path[1:]):
        assert G.has_edge(u, v), (u, v)
        data = G.get_edge_data(u, v)
        if G.is_multigraph():
            total += min(d.get(weight, 1) for d in data.values()) if weight else 1
        else:
            total += data.get(weight, 1) if weight else 1
    return total


def _same_paths(G, ours, theirs, weight):
    assert ours.keys() == theirs.keys()
    for node, path in ours.items():
        assert path[0] == theirs[node][0] and path[-1] == theirs[node][-1]
        assert _length(G, path, weight) == pytest.approx(_length(G, theirs[node], weight))


@few
@given(labelled_graphs(), st.data())
def test_paths_are_shortest_paths(G, data):
    source, target = data.draw(st.sampled_from(list(G))), data.draw(st.sampled_from(list(G)))
    cutoff = data.draw(st.sampled_from([None, 0, 1, 2.5]))
    assert bnx.single_source_shortest_path(G, source, cutoff) == (
        nx.single_source_shortest_path(G, source, cutoff)
    )  # networkx's paths exactly
    for weight in (None, "weight"):
        _same_paths(
            G,
            bnx.shortest_path(G, source, weight=weight),
            nx.shortest_path(G, source, weight=weight),
            weight,
        )
        _same_paths(
            G,
            bnx.shortest_path(G, target=target, weight=weight),
            nx.shortest_path(G, target=target, weight=weight),
            weight,
        )
        try:
            expected = nx.shortest_path(G, source, target, weight=weight)
        except nx.NetworkXNoPath:
            with pytest.raises(nx.NetworkXNoPath):
                bnx.shortest_path(G, source, target, weight=weight)
        else:
            path = bnx.shortest_path(G, source, target, weight=weight)
            assert (path[0], path[-1]) == (source, target)
            assert _length(G, path, weight) == pytest.approx(_length(G, expected, weight))
    lengths, paths = bnx.single_source_dijkstra(G, source, cutoff=cutoff)
    expected_lengths, expected_paths = nx.single_source_dijkstra(G, source, cutoff=cutoff)
    assert lengths == expected_lengths
    _same_paths(G, paths, expected_paths, "weight")
    _same_paths(
        G,
        bnx.single_source_dijkstra_path(G, source),
        nx.single_source_dijkstra_path(G, source),
        "weight",
    )
    if target in expected_lengths:
        length, path = bnx.single_source_dijkstra(G, source, target)
        assert length == nx.dijkstra_path_length(G, source, target)
        assert _length(G, path, "weight") == pytest.approx(length)
        assert _length(G, bnx.dijkstra_path(G, source, target), "weight") == pytest.approx(length)


def test_path_errors_are_networkx_errors():
    G = nx.DiGraph([(0, 1), (1, 2)])
    G.add_node(3)
    assert bnx.shortest_path(G, 0, 2) == [0, 1, 2]
    assert bnx.dijkstra_path(G, 0, 0) == [0]
    assert bnx.single_source_dijkstra(G, 1, 1) == (0, [1])
    with pytest.raises(nx.NetworkXNoPath, match="No path between 0 and 3"):
        bnx.shortest_path(G, 0, 3)
    with pytest.raises(nx.NetworkXNoPath, match="Node 3 not reachable from 0"):
        bnx.dijkstra_path(G, 0, 3)
    with pytest.raises(nx.NetworkXNoPath):
        bnx.single_source_dijkstra(G, 0, 2, cutoff=1)
    with pytest.raises(nx.NodeNotFound):
        bnx.shortest_path(G, 9, 0)
    with pytest.raises(nx.NodeNotFound):
        bnx.single_source_shortest_path(G, 9)
    with pytest.raises(ValueError, match="method not supported"):
        bnx.shortest_path(G, 0, method="spfa")
    with pytest.raises(NotImplementedError, match="weight=-1|negative"):
        bnx.dijkstra_path(nx.DiGraph([(0, 1, {"weight": -1})]), 0, 1)


@few
@given(labelled_graphs(max_vertices=12), st.sampled_from([None, "weight"]))
def test_distance_measures_match_networkx(G, weight):
    assert dict(bnx.all_pairs_shortest_path_length(G)) == dict(nx.all_pairs_shortest_path_length(G))
    assert dict(bnx.all_pairs_shortest_path_length(G, cutoff=1)) == dict(
        nx.all_pairs_shortest_path_length(G, cutoff=1)
    )
    for name in ("eccentricity", "diameter", "radius", "average_shortest_path_length"):
        try:
            expected = getattr(nx, name)(G, weight=weight)
        except (nx.NetworkXError, ValueError) as error:
            with pytest.raises(type(error), match=str(error)[:20].replace("(", r"\(")):
                getattr(bnx, name)(G, weight=weight)
        else:
            assert getattr(bnx, name)(G, weight=weight) == pytest.approx(expected, abs=1e-12)


def test_distance_measures_corner_cases():
    G = nx.path_graph(5)
    assert bnx.eccentricity(G, v=0) == 4
    assert bnx.eccentricity(G, v=[1, 2]) == {1: 3, 2: 2}
    sp = dict(nx.all_pairs_shortest_path_length(G))
    assert bnx.eccentricity(G, sp=sp) == nx.eccentricity(G, sp=sp)
    assert bnx.diameter(G, usebounds=True) == 4 and bnx.radius(G, usebounds=True) == 2
    with pytest.raises(nx.NetworkXError, match="not connected"):
        bnx.diameter(nx.Graph([(0, 1), (2, 3)]), usebounds=True)
    with pytest.raises(nx.NetworkXPointlessConcept):
        bnx.average_shortest_path_length(nx.Graph())
    assert bnx.average_shortest_path_length(nx.empty_graph(1)) == 0
    with pytest.raises(nx.NetworkXError, match="not strongly connected"):
        bnx.average_shortest_path_length(nx.DiGraph([(0, 1)]))
    with pytest.raises(ValueError, match="method not supported"):
        bnx.average_shortest_path_length(G, method="magic")
    assert bnx.average_shortest_path_length(G, method="floyd-warshall") == pytest.approx(2.0)


# --- strongly connected components --------------------------------------------------------------
@few
@given(labelled_graphs(directed=True))
def test_strongly_connected_components_match_networkx(G):
    ours = list(bnx.strongly_connected_components(G))
    theirs = list(nx.strongly_connected_components(G))
    assert sorted(map(frozenset, ours), key=hash) == sorted(map(frozenset, theirs), key=hash)
    assert len(ours) == len(theirs)
    assert bnx.number_strongly_connected_components(G) == len(theirs)
    assert bnx.is_strongly_connected(G) == nx.is_strongly_connected(G)


def test_strongly_connected_refusals_are_networkx_errors():
    with pytest.raises(nx.NetworkXNotImplemented):
        list(bnx.strongly_connected_components(nx.path_graph(3)))
    with pytest.raises(nx.NetworkXPointlessConcept):
        bnx.is_strongly_connected(nx.DiGraph())
    assert bnx.number_strongly_connected_components(nx.DiGraph()) == 0
    assert bnx.is_strongly_connected(nx.cycle_graph(4, create_using=nx.DiGraph))


# --- edge betweenness ---------------------------------------------------------------------------
@few
@given(labelled_graphs(), st.data())
def test_edge_betweenness_matches_networkx(G, data):
    G = nx.DiGraph(G) if G.is_directed() else nx.Graph(G)
    normalized = data.draw(st.booleans())
    k = data.draw(st.sampled_from([None, 1, len(G)]))
    ours = bnx.edge_betweenness_centrality(G, k=k, normalized=normalized, seed=3)
    theirs = nx.edge_betweenness_centrality(G, k=k, normalized=normalized, seed=3)
    assert ours.keys() == theirs.keys()
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_edge_betweenness_refusals_name_the_argument():
    with pytest.raises(NotImplementedError, match="weight='w'"):
        bnx.edge_betweenness_centrality(nx.path_graph(3), weight="w")
    with pytest.raises(NotImplementedError, match="G=<an undirected multigraph>"):
        bnx.edge_betweenness_centrality(nx.MultiGraph([(0, 1), (0, 1)]))
