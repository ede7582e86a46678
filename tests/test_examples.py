"""The examples run, and their answers match networkx."""

import importlib.util
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given
from strategies import graphs

import bspgraph as bg

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lpa = load("label_propagation")


def as_sets(groups):
    return sorted(sorted(group) for group in groups)


@given(graphs(directed=False, max_vertices=16, max_edges=40))
def test_label_propagation_matches_networkx(case):
    graph, nx_graph = case
    labels = lpa.label_propagation(graph)
    expected = nx.community.label_propagation_communities(nx_graph)
    assert as_sets(lpa.communities(labels)) == as_sets(expected)


def test_label_propagation_karate_and_script(capsys):
    karate = nx.karate_club_graph()
    labels = lpa.label_propagation(bg.Graph.from_networkx(karate, backend="numpy"))
    expected = nx.community.label_propagation_communities(karate)
    assert as_sets(lpa.communities(labels)) == as_sets(expected)
    lpa.main(["3", "4"])
    assert capsys.readouterr().out.startswith("Graph(12 vertices")


def test_label_propagation_rejects_directed_graph():
    with pytest.raises(ValueError, match="undirected"):
        lpa.label_propagation(bg.Graph.from_edges([0], [1], backend="numpy"))


@pytest.mark.parametrize("communicator", ["broadcast", "selective", "butterfly"])
def test_label_propagation_lifts_to_devices_unmodified(communicator):
    graph = bg.Graph.from_networkx(nx.karate_club_graph(), backend="numpy")
    one = lpa.label_propagation(graph)
    three = lpa.label_propagation(graph, devices=3, partitioner="biased", communicator=communicator)
    assert (three == one).all()


wcc = load("weakly_connected")


@given(graphs(max_vertices=16, max_edges=40))
def test_weakly_connected_matches_networkx(case):
    graph, nx_graph = case
    labels = wcc.weakly_connected(graph)
    components = (
        nx.weakly_connected_components if nx_graph.is_directed() else nx.connected_components
    )(nx_graph)
    for component in components:
        assert set(labels[sorted(component)].tolist()) == {min(component)}


def test_weakly_connected_lifts_and_runs_as_a_script(capsys):
    bg.testing.assert_lifts(wcc.MinLabel(), max_examples=4)
    wcc.main(["3"])
    assert capsys.readouterr().out.endswith("[0, 0, 0, 0, 4, 4, 4, 7, 7, 7, 10]\n")
