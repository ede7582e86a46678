"""Light supersteps on one device: the contract's rule 6.

A lifted superstep costs every device a fixed price (the step's launches, the package, the
exchange, the combine and the tally's collective: some 0.6-1 ms on two H200) whatever its
frontier; a light frontier's step costs one device far less than that. So where the run's
frontier has at most E / LIGHT_SHARE out-edges or the backend's ``light_edges`` (a small
graph's whole frontier may cost one device less than that price), or a BFS's next step pulls
from it with early exit (a GPU's pull: about a pass over the vertices, whatever the
frontier), the first device
runs the supersteps alone, on the whole graph and its own copy of every vertex's state, as
one device runs them (a repeated advance's light levels in one launch), until its frontier
is heavy again or the run is over.
Where every device holds every vertex's state and the whole frontier (``needs_all``), the
first device has them already, once the frontiers are known to be one (the tally found them
joined; a first frontier of at most FEW_IDS vertices, compared id by id: a source's,
betweenness' deepest level; else the first device compares them and, where one differs,
every device steps as before: a part's own first vertices); where
each holds only its own vertices' (a push BFS), the others first send it their own vertices'
state and frontiers in one exchange round (:meth:`Solo._gather`: on rmat25 over two ranks,
a slice of V / 2 values). Then its changes (the vertices its steps returned) and its frontier
go straight to every other device in one exchange round, which take them as they are; or,
where the run is over, its state is the result (the gather reads it there). Each vertex is still
expanded once, by one device; the others wait. Direction optimising for the number of
devices, as Beamer's is for push and pull: on two H200 at rmat25 it took 2.5 ms off a
direction-optimising BFS of 9 and 17 off a betweenness of 63 (``benchmarks/RESULTS.md``),
and its pulled levels a further 2.3 ms off that BFS's 5.5.

The first device holds the whole graph for it (the caller's, or in run ids a copy), where the
run was given the whole graph and a one-device run of the primitive fits there
(:func:`whole_graph`). A primitive takes part when its frontier is not every vertex
(``every_vertex``), its lists are its own vertices' (not ``replicate_graph``, not
``reads_neighbours``) and every state travels (else an owner's own value would be lost, or
what another device saw of its own supersteps), unless it is declared ``alike`` on every
device (``State.alike``: betweenness' path counts and level order in its backward phase).
Connected components keeps the labels each device's step left (``previous``: a later step
links those another device's labels replaced there), so it runs every superstep on every
device: :func:`takes_part`. Where the whole graph is under the backend's floor, every
frontier is light: the first device runs the whole run alone from every vertex's first
state, as one device runs it, for any primitive (nothing is handed over, so none of these
conditions applies: :func:`under_floor`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

from .. import memory
from ..comm.message import Slab, Update, wire_bytes
from ..exceptions import OutOfDeviceMemory
from ..frontier import Frontier, count_out_edges
from ..frontier.advance import pulls_early
from .checks import snapshot, verify
from .layout import owned_part
from .state import allocate
from .stats import Superstep

LIGHT_SHARE = 64  # a frontier is light when its out-edges are at most E / LIGHT_SHARE (0: never)
FLOORED = True  # or at most its backend's ``light_edges`` (off inside light_share: E / share only)
LEADER = 0  # the device that runs light supersteps alone
# first frontiers of at most this many vertices are compared id by id at the start (a
# source's; betweenness' deepest level, where its backward phase starts: 15 vertices on
# rmat25 from its hub), so that rule 6's first device need not gather them to compare
FEW_IDS = 64


@contextlib.contextmanager
def light_share(share: int) -> Iterator[None]:
    """Runs inside this block take a frontier for light below E / ``share`` out-edges and no
    other (0: none is: every superstep on every device; 1: every one is, where rule 6
    applies), then LIGHT_SHARE and the backends' floor are as they were (tests:
    ``bspgraph.testing.assert_lifts``)."""
    global LIGHT_SHARE, FLOORED
    kept, (LIGHT_SHARE, FLOORED) = (LIGHT_SHARE, FLOORED), (share, False)
    try:
        yield
    finally:
        LIGHT_SHARE, FLOORED = kept


def takes_part(primitive) -> bool:
    """Whether ``primitive`` may run its light supersteps on one device (see the module)."""
    travels = {spec.name for spec in primitive.state if not spec.alike}  # (else per device)
    return (
        LIGHT_SHARE > 0
        and not primitive.every_vertex
        and not primitive.replicate_graph
        and not primitive.reads_neighbours
        and travels <= set(primitive.communicate)
    )


def _floor(backend) -> int:
    """The out-edges under which a frontier is light whatever the graph (0: none)."""
    return backend.capabilities.light_edges if FLOORED and LIGHT_SHARE > 0 else 0


def under_floor(graph, backend) -> bool:
    """Whether ``graph`` (a part: its whole graph) holds at most ``backend``'s
    ``light_edges`` edges: then every frontier is light, and the first device runs a whole run
    of any primitive alone, from every vertex's first state (:meth:`Solo.supersteps`: nothing
    is handed over, so no state need travel)."""
    floor = _floor(backend)
    return floor > 0 and graph.cost_degrees()[2] <= floor


def is_light(graph, out_edges: int | None, frontier: Frontier | None = None) -> bool:
    """Whether a frontier of ``out_edges`` (None: not counted) is light on ``graph`` (a part:
    its whole graph's edges, alike on every device): at most E / LIGHT_SHARE out-edges or
    the backend's ``light_edges``, or ``frontier`` (where given: every device's alike) one
    that a BFS's next step pulls from with early exit, which costs one device about a pass
    over its vertices (:func:`~bspgraph.frontier.advance.pulls_early`)."""
    if out_edges is not None:
        if out_edges * LIGHT_SHARE <= graph.cost_degrees()[2] or out_edges <= _floor(graph.backend):
            return True
    return frontier is not None and pulls_early(graph, frontier, out_edges)


def own_edges(graph, frontier: Frontier) -> int | None:
    """The out-edges of a device's frontier, where the tally could not join the frontiers
    (without ``needs_all`` the run's is every device's together; with it, one if the first
    device finds them so), where a light one may be: a list of ids (a mask holds many
    vertices, :func:`~.distributed._few_as_ids`), or counted already; else None."""
    if frontier.is_dense and frontier.out_edges is None:
        return None
    return count_out_edges(graph, frontier)


def whole_graph(primitive, graph, backend, relabelling, renamed=None):
    """``graph`` whole on ``backend`` (the leader's) in the run's ids (``renamed``: already
    so on the host, else made here), or None where a one-device run of ``primitive`` would
    not fit there (:func:`~bspgraph.memory.check`) or ``graph`` is a part
    (:func:`~.layout.distribute`) cut without it (``Partition.whole``: a cluster's rank 0
    gets it). Kept with ``graph``."""
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
        if relabelling is None:
            whole = graph
        else:
            whole = renamed if renamed is not None else relabelling.graph(graph.to("numpy"))
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
    bytes: int  # what its changes and frontier cost to send (and those gathered)


class Solo:
    """A lifted run's light supersteps on its first device (see the module): ``whole`` the
    whole graph where this process drives that device, else None. ``ended``: the run ended
    in them, its state whole on the leader only (the result and its traversed edges are
    read there)."""

    def __init__(self, run, whole) -> None:
        self.run, self.whole, self.ended = run, whole, False
        self.joined_only = False  # (set once the frontiers it was handed differed)

    def supersteps(self, frontiers: dict) -> tuple[dict, list[Superstep], bool]:
        """Rule 6: supersteps on the leader alone from ``frontiers`` (each the whole run's;
        or each device's own, gathered on the leader first: :meth:`_gather`; or, for a whole
        run alone, from the first state: :meth:`_first`), while light; unless the run is
        over, every device then takes its changes. The next frontiers, the records and
        whether the run is over."""
        run = self.run
        # (else every device holds every vertex's; a whole run alone starts from the first)
        state = not (run.primitive.needs_all or run.alone)
        gathering = state or not (run.one_frontier or run.alone)  # (else: compared first)
        gathered = self._gather(frontiers, state=state) if gathering else 0
        led = None
        if self.whole is not None and gathered is not None:
            with run.backends[LEADER].activate():
                led = self._lead(self._first() if run.alone else frontiers[LEADER])
            led[0].bytes += gathered
        outcome = led[0] if led is not None else None
        if run.transport.distributed:
            outcome = run.transport.allgather(outcome)[LEADER]
        run.light = False  # (heavy again, or the frontiers differ: every device steps)
        if outcome is None:  # they differ: from now on only frontiers the tally joined
            self.joined_only = True
            return None
        run.iteration, run.joined, run.one_frontier = outcome.iteration, False, False
        records = [
            Superstep(size, seconds / len(sizes), size, devices=1)
            for sizes, seconds in outcome.levels
            for size in sizes
        ]
        peers, gather = run.transport.size - 1, (2 if state else 1) if gathering else 0
        last = records[-1]  # (a gather, each other device's state and frontier or frontier;
        last.messages = peers * (gather + 2 * (not outcome.done))  # its changes, two Updates)
        last.bytes, last.rounds = outcome.bytes, int(gather > 0) + int(not outcome.done)
        if outcome.done:  # the leader's state is the result: nothing to send (:meth:`result`)
            self.ended = True
            for d in run.local:  # (but its scalars, which the others' results hold too)
                for name, value in outcome.scalars.items():
                    getattr(run.states[d], name)[...] = value
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
        return frontiers, records, False

    def _first(self) -> Frontier:
        """A whole run's first frontier on the leader, its state made afresh as one device's
        on the whole graph (a part's ``init_frontier`` sets only its own vertices' for some
        primitives, and a checked run poisons what a part does not read)."""
        run = self.run
        run.states[LEADER] = allocate(run.primitive, self.whole)
        frontier = run.primitive.init_frontier(self.whole, run.states[LEADER], **run.params)
        frontier.edges_before = 0
        return frontier

    def _gather(self, frontiers: dict, *, state: bool) -> int | None:
        """Every other device's frontier to the leader, in one exchange round. With ``state``
        (each device holds only its own vertices' state and frontier: not ``needs_all``) their
        own state too, which the leader takes, and its frontier becomes their union, in
        ``frontiers``; else (``needs_all``, every frontier meant to be the run's) the leader
        compares them: None where one differs from its own. The bytes the leader received
        (0 elsewhere)."""
        run, blocks = self.run, self.run.blocks  # (blocks: each device's own, without ids)
        names = _travelling(run, run.states[run.local[0]]) if state else []
        sends = []
        for d in run.local:
            if d != LEADER:
                with run.backends[d].activate():  # (read on that device's own GPU)
                    if state:
                        at = run.devices[d].owned_ids() if blocks is None else blocks[d]
                        values = {name: getattr(run.states[d], name)[at] for name in names}
                        own = Update(at, values) if blocks is None else Slab(d, values)
                        sends.append((d, LEADER, own))
                    sends.append((d, LEADER, Update(frontiers[d].ids)))
        vertices = run.devices[run.local[0]].num_vertices
        inbox, _ = run.transport.exchange_round(sends, num_vertices=vertices)
        if LEADER not in run.local:
            return 0
        graph, received = run.devices[LEADER], sum(map(wire_bytes, inbox[LEADER]))
        with run.backends[LEADER].activate():
            if not state:
                mine = graph.xp.sort(frontiers[LEADER].ids)
                theirs = (graph.xp.sort(reached.ids) for reached in inbox[LEADER])
                return received if all(_same(mine, ids) for ids in theirs) else None
            states, bases, reached = run.states[LEADER], run.bases[LEADER], [frontiers[LEADER].ids]
            for own, their in zip(inbox[LEADER][::2], inbox[LEADER][1::2], strict=True):
                at = own.ids if blocks is None else blocks[own.block]
                for name in names:
                    getattr(states, name)[at] = own.values[name]
                    if name in bases:  # (their changes were sent to their owners already)
                        bases[name][at] = own.values[name]
                reached.append(their.ids)
            frontiers[LEADER] = Frontier.from_ids(graph, graph.xp.concatenate(reached))
        return received

    def _lead(self, frontier: Frontier) -> tuple[_Outcome, tuple]:
        """The leader's supersteps on the whole graph, as one device runs them, while light;
        what they came to, and (unless the run is over) its changes and frontier as
        Updates: the vertices its steps returned, or where a step's levels ran in one call
        (``passed``: only the last level returned), those whose state differs from before."""
        run, graph = self.run, self.whole
        primitive, state = run.primitive, run.states[LEADER]
        names = _travelling(run, state)
        before = {}  # (a whole run alone hands nothing over: its frontier is the whole graph's)
        if not run.alone:
            before = {name: graph.backend.copy(getattr(state, name)) for name in names}
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
            if done:
                break
            if run.alone:  # (every frontier light: as one device runs it, to the end)
                continue
            returned.append(None if frontier.passed else frontier.ids)
            if not is_light(graph, count_out_edges(graph, frontier), frontier):
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


def _same(a, b) -> bool:
    """Whether the sorted id arrays ``a`` and ``b`` are equal (one host read)."""
    return a.shape == b.shape and bool((a == b).all())


def _travelling(run, state) -> list[str]:
    """The names of the communicated state columns this run holds."""
    return [name for name in run.contract.combiners if getattr(state, name) is not None]


def _taken(run, d, outcome: _Outcome, changes: Update, reached: Update) -> Frontier:
    """Device ``d`` takes the leader's ``changes`` (on the leader: its own) and scalars as
    they are, its ``add`` baselines with them; its next frontier, the leader's ``reached``
    (its own vertices of it, where devices hold only theirs: not ``needs_all``)."""
    state = run.states[d]
    if d != LEADER:  # (on this device's GPU: the transport moved them there)
        for name, values in changes.values.items():
            getattr(state, name)[changes.ids] = values
        for name, value in outcome.scalars.items():
            getattr(state, name)[...] = value
    for name, base in run.bases[d].items():
        base[changes.ids] = getattr(state, name)[changes.ids]
    frontier = Frontier.from_ids(run.devices[d], reached.ids, out_edges=outcome.out_edges)
    if not run.primitive.needs_all:
        return owned_part(run.devices[d], frontier)
    frontier.edges_before = outcome.edges_before
    return frontier
