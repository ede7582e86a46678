"""Light supersteps on one device: the contract's rule 6.

A lifted superstep costs every device a fixed price (the step's launches, the package, the
exchange, the combine and the tally's collective: some 0.6-1 ms on two H200) whatever its
frontier; a light frontier's step costs one device far less than that. So where every device
holds the whole frontier (``needs_all``, after a superstep whose tally found the frontiers
joined) and its out-edges are fewer than E / LIGHT_SHARE, the first device runs the
supersteps alone, on the whole graph and its own copy of every vertex's state, as one device
runs them (a repeated advance's light levels in one launch), until its frontier is heavy again
or the run is over. Then its changes (the vertices its steps returned) and its frontier go
straight to every other device in one exchange round, which take them as they are; or, where
the run is over, its state is the result (the gather reads it there). Each vertex is still
expanded once, by one device; the others wait. Direction optimising for the number of
devices, as Beamer's is for push and pull: on two H200 at rmat25 it took 2.5 ms off a
direction-optimising BFS of 9 and 17 off a betweenness of 63 (``benchmarks/RESULTS.md``).

The first device holds the whole graph for it (the caller's, or in run ids a copy), where the
run was given the whole graph and a one-device run of the primitive fits there
(:func:`whole_graph`). A primitive takes part when every device holds every vertex's state
(``needs_all``), its frontier is not every vertex (``every_vertex``), its lists are its own
vertices' (not ``replicate_graph``, not ``reads_neighbours``) and every output state travels
(else an owner's own value would be lost): :func:`takes_part`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

from .. import memory
from ..comm.message import Update, wire_bytes
from ..exceptions import OutOfDeviceMemory
from ..frontier import Frontier, count_out_edges
from .checks import snapshot, verify
from .stats import Superstep

LIGHT_SHARE = 64  # a frontier is light when its out-edges are fewer than E / LIGHT_SHARE (0: never)
LEADER = 0  # the device that runs light supersteps alone


@contextlib.contextmanager
def light_share(share: int) -> Iterator[None]:
    """Runs inside this block take a frontier for light below E / ``share`` out-edges (0:
    none is: every superstep on every device; ``1 << 40``: every one is, where rule 6
    applies), then LIGHT_SHARE is as it was (tests: ``bspgraph.testing.assert_lifts``)."""
    global LIGHT_SHARE
    kept, LIGHT_SHARE = LIGHT_SHARE, share
    try:
        yield
    finally:
        LIGHT_SHARE = kept


def takes_part(primitive) -> bool:
    """Whether ``primitive`` may run its light supersteps on one device (see the module)."""
    outputs = {spec.name for spec in primitive.state if spec.output}
    return (
        LIGHT_SHARE > 0
        and primitive.needs_all
        and not primitive.every_vertex
        and not primitive.replicate_graph
        and not primitive.reads_neighbours
        and outputs <= set(primitive.communicate)
    )


def is_light(graph, out_edges: int | None) -> bool:
    """Whether a frontier of ``out_edges`` (None: not counted) is light on ``graph`` (a part:
    its whole graph's edges, alike on every device)."""
    return out_edges is not None and out_edges * LIGHT_SHARE < graph.cost_degrees()[2]


def whole_graph(primitive, graph, backend, relabelling):
    """``graph`` whole on ``backend`` (the leader's) in the run's ids, or None where a
    one-device run of ``primitive`` would not fit there (:func:`~bspgraph.memory.check`) or
    ``graph`` is a part (:func:`~.layout.distribute`) cut without it (``Partition.whole``:
    a cluster's rank 0 gets it). Kept with ``graph``."""
    part = getattr(graph, "partition", None)
    if part is not None:
        if part.whole is None:
            return None
        graph, relabelling = part.whole, None  # (in run ids already)
    key = ("whole, in run ids", relabelling, backend.name, backend.device)  # (by identity)
    held = graph.cache.get(key, False)  # (None: the graph itself is there, no cycle)
    try:  # (a copy held there counts as memory the run has)
        memory.check(primitive, held or graph, backend)
    except OutOfDeviceMemory:
        return None
    if held is False:
        whole = graph if relabelling is None else relabelling.graph(graph.to("numpy"))
        copy = whole.to(backend)
        held = graph.cache[key] = None if copy is graph else copy
    return held or graph


@dataclass
class _Outcome:
    """What the leader's light supersteps came to, told to every process."""

    iteration: int
    levels: list  # (sizes, seconds) of each step
    done: bool
    scalars: dict
    frontier: int  # the last one's size (0 where the run is over)
    out_edges: int | None
    edges_before: int | None
    bytes: int  # what its changes and frontier cost to send


class Solo:
    """A lifted run's light supersteps on its first device (see the module): ``whole`` the
    whole graph where this process drives that device, else None. ``ended``: the run ended
    in them, its state whole on the leader only (the result and its traversed edges are
    read there)."""

    def __init__(self, run, whole) -> None:
        self.run, self.whole, self.ended = run, whole, False

    def supersteps(self, frontiers: dict) -> tuple[dict, list[Superstep], bool]:
        """Rule 6: supersteps on the leader alone from ``frontiers`` (each the whole run's),
        while light; unless the run is over, every device then takes its changes. The next
        frontiers, the records and whether the run is over."""
        run = self.run
        led = None
        if self.whole is not None:
            with run.backends[LEADER].activate():
                led = self._lead(frontiers[LEADER])
        outcome = led[0] if led is not None else None
        if run.transport.distributed:
            outcome = run.transport.allgather(outcome)[LEADER]
        run.iteration, run.joined, run.light = outcome.iteration, False, False  # (heavy again)
        records = [
            Superstep(size, seconds / len(sizes), size, devices=1)
            for sizes, seconds in outcome.levels
            for size in sizes
        ]
        if outcome.done:  # the leader's state is the result: nothing to send (:meth:`result`)
            self.ended = True
            return {}, records, True
        sends = [
            (LEADER, peer, message)
            for peer in range(run.transport.size)
            if led is not None and peer != LEADER
            for message in led[1]
        ]
        vertices = run.devices[run.local[0]].num_vertices
        inbox, _ = run.transport.exchange_round(sends, num_vertices=vertices)
        frontiers = {}
        for d in run.local:
            with run.backends[d].activate():
                frontiers[d] = _taken(run, d, outcome, *(led[1] if d == LEADER else inbox[d]))
        last = records[-1]  # (the changes' exchange: two Updates to each other device)
        last.messages, last.bytes, last.rounds = 2 * (run.transport.size - 1), outcome.bytes, 1
        return frontiers, records, False

    def _lead(self, frontier: Frontier) -> tuple[_Outcome, tuple]:
        """The leader's supersteps on the whole graph, as one device runs them, while light;
        what they came to, and (unless the run is over) its changes and frontier as
        Updates: the vertices its steps returned, or where a step's levels ran in one call
        (``passed``: only the last level returned), those whose state differs from before."""
        run, graph = self.run, self.whole
        primitive, state = run.primitive, run.states[LEADER]
        names = [name for name in run.contract.combiners if getattr(state, name) is not None]
        before = {name: getattr(state, name).copy() for name in names}
        edges_before = frontier.edges_before
        frontier = Frontier.from_ids(graph, frontier.ids, out_edges=frontier.out_edges)
        frontier.edges_before = edges_before
        iteration, levels, returned = run.iteration, [], []
        while True:
            started = time.perf_counter()
            checked = snapshot(graph, state) if run.check else None
            frontier = primitive.step(graph, frontier, state, iteration)
            if run.check:
                verify(primitive, run.contract, iteration, graph, checked, state, frontier)
            sizes = (*frontier.passed, len(frontier))
            iteration += len(sizes)
            done = primitive.converged(graph, frontier, state, iteration)
            levels.append((sizes, time.perf_counter() - started))
            returned.append(None if frontier.passed else frontier.ids)
            if done or not is_light(graph, count_out_edges(graph, frontier)):
                break
        scalars = {name: getattr(state, name).item() for name in run.contract.scalars}
        if done:
            return _Outcome(iteration, levels, True, scalars, 0, None, None, 0), ()
        xp = graph.xp
        if all(ids is not None for ids in returned):
            ids = xp.concatenate(returned) if len(returned) > 1 else returned[0]
        else:
            moved = xp.zeros(graph.num_vertices, dtype=bool)
            for name in names:
                differs = getattr(state, name) != before[name]
                moved |= differs.reshape(differs.shape[0], -1).any(axis=1)
            ids = xp.flatnonzero(moved).astype(graph.indices.dtype, copy=False)
        messages = (
            Update(ids, {name: getattr(state, name)[ids] for name in names}),
            Update(frontier.ids),
        )
        outcome = _Outcome(
            iteration,
            levels,
            False,
            scalars,
            len(frontier),
            count_out_edges(graph, frontier),
            frontier.edges_before,
            sum(map(wire_bytes, messages)) * (run.transport.size - 1),
        )
        return outcome, messages

    def traversed_edges(self) -> int:
        """The edges a run that ended here traversed: the leader's count on the whole graph,
        0 elsewhere (summed over processes by the caller)."""
        if self.whole is None:
            return 0
        with self.run.backends[LEADER].activate():
            return int(self.run.primitive.traversed_edges(self.whole, self.run.states[LEADER]))


def _taken(run, d, outcome: _Outcome, changes: Update, reached: Update) -> Frontier:
    """Device ``d`` takes the leader's ``changes`` (on the leader: its own) and scalars as
    they are, its ``add`` baselines with them; its next frontier, the leader's ``reached``."""
    state = run.states[d]
    if d != LEADER:  # (on this device's GPU: a transport in one memory moves nothing)
        changes, reached = (
            changes.map(run.backends[d].asarray),
            reached.map(run.backends[d].asarray),
        )
        for name, values in changes.values.items():
            getattr(state, name)[changes.ids] = values
        for name, value in outcome.scalars.items():
            getattr(state, name)[...] = value
    for name, base in run.bases[d].items():
        base[changes.ids] = getattr(state, name)[changes.ids]
    frontier = Frontier.from_ids(run.devices[d], reached.ids, out_edges=outcome.out_edges)
    frontier.edges_before = outcome.edges_before
    return frontier
