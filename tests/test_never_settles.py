"""A checked lifted run that never converges fails, naming what never settled, rather than run
on forever: the two mistakes of a primitive written from docs/writing-a-primitive.md that
make a lifted run go on for ever (a combiner that drops the owner's change; a step that reads
its neighbours' state without ``needs_all``), planted in a maximal independent set."""

import networkx as nx
import numpy as np
import pytest

import bspgraph as bg
from bspgraph import frontier as fr
from bspgraph.enactor import checks
from bspgraph.enactor.solo import light_share
from bspgraph.testing import assert_lifts, graphs

UNDECIDED, IN, OUT = 0, 1, 2


class MIS(bg.Primitive):
    """The greedy maximal independent set (least id first), in rounds of two supersteps: the
    undecided vertices with no undecided neighbour of a smaller id join, then the undecided
    neighbours of those that joined leave. A step reads its neighbours' status (needs_all), a
    status only grows (max), and the run stops when no vertex is undecided."""

    state = (bg.State("status", "int64"),)
    scalars = (bg.Scalar("undecided", "int64"),)
    communicate = {"status": "max"}
    needs_all = True

    def init_frontier(self, graph, state):
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        xp, ids = graph.xp, graph.owned_ids()
        undecided = state.status == UNDECIDED
        if iteration % 2 == 0:  # join: no undecided neighbour has a smaller id
            rival = xp.where(undecided, xp.arange(graph.num_vertices), graph.num_vertices)
            least = fr.neighbor_reduce(graph, rival, "min")
            changed = ids[undecided[ids] & (ids <= least[ids])]
            state.status[changed] = IN
        else:  # leave: a neighbour joined
            near = fr.neighbor_reduce(graph, (state.status == IN).astype(np.int64), "sum")
            changed = ids[undecided[ids] & (near[ids] > 0)]
            state.status[changed] = OUT
        state.undecided[...] = graph.backend.count(state.status[ids] == UNDECIDED)
        return fr.Frontier.from_ids(graph, changed)

    def converged(self, graph, frontier, state, iteration):
        return iteration > 0 and iteration % 2 == 0 and int(state.undecided) == 0


class MinMIS(MIS):
    """The status combined by min: a device keeps its own UNDECIDED over the owner's IN."""

    communicate = {"status": "min"}


class PullWithoutNeedsAll(MIS):
    """needs_all left out: a device never hears that its vertex's neighbour joined."""

    needs_all = False


one_edge = bg.Graph.from_edges([0], [1], directed=False)
undirected = graphs(directed=False, max_vertices=8, max_edges=16)


def test_the_mis_lifts_and_is_networkx_s_greedy_set():
    graph = bg.Graph.from_networkx(nx.karate_club_graph(), weight=None)
    status = bg.enact(MIS(), graph, devices=3, partitioner="random", check=True)[0]["status"]
    chosen = set(np.flatnonzero(status == IN).tolist())
    greedy = set()
    for v in range(graph.num_vertices):  # least id first
        if not any(u in greedy for u in nx.karate_club_graph()[v]):
            greedy.add(v)
    assert chosen == greedy
    assert_lifts(MIS(), undirected, max_examples=3, devices=[1, 3])


@pytest.mark.parametrize(
    ("primitive", "hint"),
    [(MinMIS(), "is the combiner the one"), (PullWithoutNeedsAll(), "needs needs_all = True")],
)
def test_a_checked_run_that_never_settles_names_the_state(primitive, hint):
    with pytest.raises(bg.ContractError) as failure, light_share(0):  # (every device steps)
        bg.enact(primitive, one_edge, devices=2, partitioner="edge_balanced", check=True)
    message = str(failure.value)
    assert f"did not converge in {checks.MINIMUM_SUPERSTEPS} supersteps" in message
    assert "where one device takes 2" in message
    assert "converged stayed False on device(s) [0, 1]" in message
    assert "scalar 'undecided': 1 on device 0, 1 on device 1" in message
    assert (
        "'status' differs from its owner's value at vertex 0: 1 on its owner (device 0), 0 on "
        "device 1" in message
    )
    assert hint in message


@pytest.mark.parametrize("primitive", [MinMIS(), PullWithoutNeedsAll()])
def test_assert_lifts_fails_and_shrinks_to_one_edge(primitive):
    with pytest.raises(bg.ContractError) as failure:
        assert_lifts(
            primitive,
            undirected,
            devices=[2],
            partitioners=["edge_balanced"],
            communicators=["selective"],
            max_examples=30,
        )
    message = str(failure.value)
    assert "'status' differs from its owner's value" in message
    assert (
        "(devices=2, partitioner='edge_balanced', communicator='selective', light_share=0 on "
        "2 vertices, undirected, edges [(0, 1)" in message
    )


class Restless(bg.Primitive):
    """Never stops on several devices: each superstep a vertex's owner adds one to it."""

    state = (bg.State("count", "int64"),)
    communicate = {"count": "add"}

    def init_frontier(self, graph, state):
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        if graph.context.parts == 1:  # stops at once on one device only
            return fr.Frontier.empty(graph)
        ids = graph.owned_ids()
        state.count[ids] += 1
        return fr.Frontier.from_ids(graph, ids)


def test_a_long_run_is_measured_against_the_reference_it_is_given():
    graph = bg.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=False)
    with pytest.raises(bg.ContractError) as failure:
        bg.enact(Restless(), graph, devices=2, check=checks.Reference(20))
    message = str(failure.value)
    assert "did not converge in 80 supersteps, where one device takes 20" in message
    assert "'count' (communicated) kept changing: at vertices [0, 1, 2]" in message
    assert "the frontier:" in message


def test_a_checked_one_device_run_fills_in_its_reference():
    reference = checks.Reference()
    bg.enact(MIS(), one_edge, check=reference)
    assert reference.supersteps == 2
    assert checks.superstep_limit(2) == 64 and checks.superstep_limit(20) == 80
