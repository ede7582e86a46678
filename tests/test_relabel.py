"""Run ids (bspgraph/enactor/relabel.py): every cut is run with each part one contiguous id
range, and the answers come back in the caller's ids."""

import networkx as nx
import numpy as np
import pytest
from grid import HAS_PYMETIS

import bspgraph as bg
from bspgraph import comm
from bspgraph.backend import get_backend
from bspgraph.enactor import State
from bspgraph.enactor.layout import _parts
from bspgraph.enactor.relabel import Relabelling
from bspgraph.exceptions import ContractError
from bspgraph.primitives.bfs import BFS
from bspgraph.primitives.cc import CC

SCATTERED = ["random", "biased"] + (["metis"] if HAS_PYMETIS else [])


def _graph(seed=4):
    """A graph whose random cut moves almost every vertex: 300 vertices, a few components."""
    nx_graph = nx.gnp_random_graph(300, 0.012, seed=seed)
    return nx_graph, bg.Graph.from_networkx(nx_graph, backend="numpy")


def _cut(primitive, graph, parts, partitioner):
    backends = {d: get_backend("numpy") for d in range(parts)}
    return _parts(primitive, graph, comm.Local(parts), backends, partitioner, 0)[:3]


def test_a_cut_is_built_once_a_graph():
    _, graph = _graph()
    backends = {d: get_backend("numpy") for d in range(3)}
    built = [_parts(BFS(), graph, comm.Local(3), backends, "random", 0)[3] for _ in range(2)]
    assert built == [True, False]


@pytest.mark.parametrize("partitioner", SCATTERED)
@pytest.mark.parametrize("parts", [2, 3, 5])
def test_every_part_owns_one_range_in_run_ids(partitioner, parts):
    _, graph = _graph()
    owner, devices, relabelling = _cut(BFS(), graph, parts, partitioner)
    assert relabelling is not None
    assert (np.diff(owner) >= 0).all()  # part 0 first, then part 1, ...
    starts = 0
    for d, part in devices.items():
        index = part.owned_index()
        assert isinstance(index, slice) and index.start == starts
        starts = index.stop
        caller = relabelling.order[index]  # within a part, the caller's order is kept
        assert (np.diff(caller) > 0).all()
        assert (bg.partitioners.get(partitioner)(graph, parts)[caller] == d).all()
    assert starts == graph.num_vertices


def test_a_range_cut_and_an_undeclared_primitive_keep_the_callers_ids():
    _, graph = _graph()
    assert _cut(BFS(), graph, 3, "edge_balanced")[2] is None
    undeclared = type("Undeclared", (BFS,), {"params": None})()
    _, devices, relabelling = _cut(undeclared, graph, 3, "random")
    assert relabelling is None
    assert not isinstance(devices[0].owned_index(), slice)  # ids: the slower path


@pytest.mark.parametrize("directed", [False, True])
def test_relabelled_graph_has_the_callers_edges_renamed(directed):
    nx_graph = nx.gnp_random_graph(300, 0.02, seed=5, directed=directed)
    for u, v in nx_graph.edges:
        nx_graph[u][v]["weight"] = float(u * 1000 + v if directed else min(u, v) * 1000 + max(u, v))
    graph = bg.Graph.from_networkx(nx_graph, backend="numpy")
    owner = bg.partitioners.get("random")(graph, 3)
    relabelling = Relabelling.of(owner, graph.indices.dtype)
    renamed = relabelling.graph(graph)
    assert renamed.directed == directed and renamed.num_edges == graph.num_edges
    src, dst, weight = renamed.edges()
    caller = sorted(
        zip(relabelling.order[src].tolist(), relabelling.order[dst].tolist(), weight.tolist())
    )
    assert caller == sorted(zip(*(a.tolist() for a in graph.edges())))
    offsets = renamed.offsets
    for v in range(renamed.num_vertices):  # every list still sorted
        assert (np.diff(renamed.indices[offsets[v] : offsets[v + 1]]) > 0).all()


@pytest.mark.parametrize("partitioner", SCATTERED)
def test_bfs_depths_and_parents_in_callers_ids(partitioner):
    nx_graph, graph = _graph()
    source = 17
    hops = nx.single_source_shortest_path_length(nx_graph, source)
    expected = np.array([hops.get(v, -1) for v in range(graph.num_vertices)])
    for direction in ("push", "auto"):
        result = bg.bfs(
            graph, source, parents=True, direction=direction, devices=3, partitioner=partitioner
        )
        np.testing.assert_array_equal(result.depth, expected)
        parent = result.parent
        assert parent[source] == -1 and (parent[expected < 0] == -1).all()
        for v in np.flatnonzero(expected > 0):
            assert nx_graph.has_edge(parent[v], v) and expected[parent[v]] == expected[v] - 1


@pytest.mark.parametrize("partitioner", SCATTERED)
def test_per_vertex_and_id_parameters_go_in_run_ids(partitioner):
    nx_graph, graph = _graph()
    run = {"devices": 4, "partitioner": partitioner}
    weights = np.random.default_rng(1).random(graph.num_vertices)
    rank = bg.pagerank(graph, personalization=weights, tol=1e-10, **run).rank
    one = bg.pagerank(graph, personalization=weights, tol=1e-10).rank
    np.testing.assert_allclose(rank, one, rtol=1e-9)
    expected = nx.pagerank(nx_graph, personalization=dict(enumerate(weights)), tol=1e-12)
    np.testing.assert_allclose(rank, [expected[v] for v in range(graph.num_vertices)], atol=1e-6)
    sources = [250, 3, 120]
    depth = bg.bfs(graph, sources=sources, batch=3, **run).depth
    for lane, source in enumerate(sources):
        hops = nx.single_source_shortest_path_length(nx_graph, source)
        np.testing.assert_array_equal(depth[lane], [hops.get(v, -1) for v in range(300)])
    distance = bg.sssp(graph, 250, **run).distance
    hops = nx.single_source_shortest_path_length(nx_graph, 250)
    np.testing.assert_array_equal(distance, [hops.get(v, np.inf) for v in range(300)])


class LeastIdCC(CC):
    """CC declared for run ids: its labels name a component by its least member."""

    state = (State("labels", "vertex", init="id", holds="least id"),) + CC.state[1:]
    params = {}


@pytest.mark.parametrize("partitioner", SCATTERED)
def test_labels_that_are_least_ids_come_back_as_the_callers_least_ids(partitioner):
    nx_graph, graph = _graph()
    expected = np.empty(graph.num_vertices, dtype=np.int64)
    for component in nx.connected_components(nx_graph):
        expected[list(component)] = min(component)
    for parts in (2, 5):
        state, _ = bg.enact(LeastIdCC(), graph, devices=parts, partitioner=partitioner)
        np.testing.assert_array_equal(state["labels"], expected)


def test_the_relabelling_is_built_once_per_graph_and_cut(monkeypatch):
    _, graph = _graph()
    built = []
    original = Relabelling.graph
    monkeypatch.setattr(
        Relabelling, "graph", lambda self, host: built.append(1) or original(self, host)
    )
    first = bg.bfs(graph, 0, devices=3, partitioner="random", direction="push")
    assert len(built) == 1  # the parts' graph, rule 6's whole one too (enactor/solo.py)
    bg.bfs(graph, 5, devices=3, partitioner="random", direction="push")
    bg.bfs(graph, 5, devices=3, partitioner="random", direction="push", parents=True)
    assert len(built) == 1
    assert first.stats.setup_seconds > 0  # what the first run paid is its setup, not its loop
    _, graph = _graph()  # a cut first made for a primitive that takes no part in rule 6:
    bg.pagerank(graph, devices=3, partitioner="random")  # its whole graph made when first
    bg.bfs(graph, 0, devices=3, partitioner="random", direction="push")  # asked for
    assert len(built) == 3


def test_declarations_are_checked():
    _, graph = _graph()
    wrong = type("Wrong", (BFS,), {"params": {"source": "vertex"}})()
    with pytest.raises(ContractError, match="params\\['source'\\] is 'vertex'"):
        bg.enact(wrong, graph, source=0)
    holds = (State("depth", "int64", init="max", unset=-1, holds="ids"),)
    with pytest.raises(ContractError, match="dtype must be 'vertex'"):
        bg.enact(type("Bad", (BFS,), {"state": holds})(), graph, source=0)
