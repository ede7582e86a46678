"""What a primitive declares (State, Scalar, Primitive) and the lifting contract it relies on.

The contract, in full (docs/writing-a-primitive.md walks through it with an example):

1. ``step`` runs on every device with that device's frontier and state; it may write the state
   of any vertex, and returns the vertices whose state it changed.
2. A state array that ``communicate`` names travels after every superstep: each device sends
   the returned vertices' values (their changes, for ``add``), the communicator delivers them
   to the vertices' owners (to every device when ``needs_all``), and the receivers combine
   them with the state's combiner (:mod:`bspgraph.enactor.combiners`). Other state stays
   where it was written: output state is read from each vertex's owner at the end. With
   ``reads_neighbours`` a device receives, of the vertices it does not own, only those its
   lists name (over a link, and in checked runs); the others' values it holds go stale.
3. The next frontier on a device is: the returned vertices it owns (all returned vertices when
   ``needs_all``), and every vertex whose communicated state changed when the updates of other
   devices were combined in. On one device it is the returned frontier itself. With
   ``every_vertex`` it is ``Frontier.all``, every vertex the device owns: what arrived is
   combined in, and no change is marked or counted.
4. Scalars are set by ``step`` from the device's own vertices (or its own work); after the
   exchange the enactor replaces each by its combination over all devices (``reduce``), so
   ``converged`` and the next ``step`` read the global value on every device.
5. ``converged`` runs on every device after the scalars are combined; the run stops when it
   holds on every device (the default, "the frontier is empty", then means: everywhere).
   With ``every_vertex`` it reads only scalars, so where every device's state is in one
   memory it runs once, on the first device, for all. With ``votes_to_halt`` it is a vote
   (Pregel's): the run stops once every device has voted and every frontier is empty, so
   that no message is left to arrive; on one device, at the vote. After voting, a step
   changes state only in answer to its frontier (what arrived).
6. A light superstep may run on one device alone (:mod:`bspgraph.enactor.solo`): where the
   frontier is not ``every_vertex`` and every state is communicated or ``alike`` (the same on
   every device: a state that keeps what each device saw, such as the labels CC's step left,
   rules it out), the first device runs the supersteps of a frontier of few
   out-edges as one device would, on the whole graph, until it is heavy again or the run is
   over (without ``needs_all`` it first takes every other device's own vertices' state and
   frontier; with it, where the devices' frontiers are not known to be one, it compares them
   and goes on only where they are); the others skip those steps and take its changed
   vertices' values as they are (at the end, its result). Their other state does not see
   those steps. Where the whole graph is under the backend's floor (``light_edges``), the
   first device runs the whole run so, from every vertex's first state, for any primitive.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

from ..exceptions import ContractError
from ..frontier import Frontier
from . import combiners


@dataclass(frozen=True)
class State:
    """One per-vertex array of a primitive.

    ``dtype`` is a NumPy dtype name, "vertex" (the graph's id dtype) or "weight" (the graph's
    float weight dtype, float64 when unweighted). ``init`` is a scalar,
    "max" (the dtype's largest value, so that a min combiner works), "inf", or "id" (the vertex's
    own id). At the end, values still equal to the "max"/"inf" sentinel become ``unset``.
    ``when`` names a primitive option that must be true for the array to exist (else None).
    ``output=False`` marks scratch state that the result leaves out (never copied to the host).
    ``lanes`` makes the array a row of values per vertex (shape ``V x b``, one lane per member of
    a batch, such as one per BFS source): an int, or the name of the primitive option holding
    ``b``. Combiners then apply lane by lane, and a vertex changed when any of its lanes did.
    ``holds`` says what the values are, for a run in relabelled ids (``Primitive.params``):
    "values" (depths, distances, ranks: the default), "ids" (a vertex id, such as a parent; a
    negative one means none) or "least id" (the least id of the vertex's class, such as a
    component label); the last two need the "vertex" dtype and come back in the caller's ids.
    ``alike=True`` says that a state which does not travel holds the same values on every
    device whenever a superstep begins (set from the parameters or whole-graph facts, or
    scratch that a step clears again), so that one device may run light supersteps for all
    (rule 6); a state that keeps what a device saw of its own supersteps must not say so (a
    checked run compares it between the devices of a process as each superstep begins).
    """

    name: str
    dtype: str
    init: Any = 0
    unset: Any = None
    when: str | None = None
    output: bool = True
    lanes: int | str | None = None
    holds: str = "values"
    alike: bool = False

    def width(self, options: dict) -> int | None:
        """The number of lanes (None: one value per vertex) under a primitive's ``options``."""
        return options[self.lanes] if isinstance(self.lanes, str) else self.lanes


@dataclass(frozen=True)
class Scalar:
    """One global value of a primitive (a 0-d array): the step sets it from the vertices its
    device owns, and on several devices the enactor replaces it by its combination over all
    devices (``reduce``: "add", "min" or "max") before ``converged`` runs."""

    name: str
    dtype: str = "float64"
    init: Any = 0
    reduce: str = "add"


class Primitive(abc.ABC):
    """Base class of a primitive: subclasses declare ``state`` and define ``init_frontier`` and
    ``step``; ``converged`` defaults to "frontier empty".

    ``communicate`` maps state names to their combiner: a name ("min", "max", "add",
    "replace") or a :class:`~bspgraph.enactor.combiners.Combiner` (``Add(follows="depth")``,
    ``Follow("depth")`` for state that travels with another's winner). ``needs_all`` says
    every device must see every update (pull traversal, pointer jumping), not only the
    owner. ``replicate_graph`` gives every device the whole graph, not only its own vertices'
    edges (triangle counting reads the neighbours of neighbours); ``Frontier.all`` and
    ``compute(graph, "vertices")`` still cover the device's own vertices only. ``every_vertex``
    says the step works on every vertex its device owns whatever its frontier, and
    ``converged`` reads only scalars (a power iteration: PageRank): on several devices every
    superstep then gets ``Frontier.all``, and the enactor builds no frontier from what arrived.
    ``votes_to_halt`` makes ``converged`` a vote to halt: "this device's own work is done;
    only what other devices send can change its state" (rule 5). ``reads_neighbours`` (with
    ``needs_all``) says the step reads another device's vertices only where its lists name
    them (a pull over every list: a power iteration): on several devices each then receives
    only those vertices' values (the others it holds go stale, unread).

    ``params`` says what each ``init_frontier`` parameter holds: "id" (a vertex id, or a
    sequence or array of them), "per_vertex" (an array whose first axis is the vertices; a
    scalar passes as it is) or "value" (anything else). Declaring it (``{}`` when
    ``init_frontier`` takes nothing), with ``State.holds`` on every output state of vertex ids,
    lets the enactor run on several devices in relabelled ids (each part one contiguous id
    range, :mod:`bspgraph.enactor.relabel`) and answer in the caller's; None (the default)
    keeps the caller's ids, and a cut whose parts are not ranges then runs on id arrays.

    The module docstring of :mod:`bspgraph.enactor.contract` states what the enactor does with
    these on several devices: what travels, what the next frontier is, when scalars combine.
    """

    state: tuple[State, ...] = ()
    scalars: tuple[Scalar, ...] = ()
    communicate: dict[str, Any] = {}
    needs_all: bool = False
    replicate_graph: bool = False
    every_vertex: bool = False
    votes_to_halt: bool = False
    params: dict[str, str] | None = None
    reduces_every_list: bool = False
    reads_neighbours: bool = False
    sampled_entries: int = 0  # it reads the first k entries of each list (a cached sample)
    list_copies: float = 0.0  # edges' worth of lists it builds and keeps beside the graph's

    def __init__(self, **options: Any):
        self.options = options

    @property
    def pull_kind(self) -> str | None:
        """How the step pulls, for the memory estimate (:func:`bspgraph.memory.estimate`):
        None (never), "fused" (a kernel: no per-edge temporaries) or "generic" (operator
        arrays over every in-edge). Declare it (a class attribute overrides this default:
        "generic" when ``needs_all``, the conservative guess, else None); with
        ``reduces_every_list`` True, a primitive whose pulls reduce every list (through
        ``operators.gathered``) says so, so that the estimate counts the lists' columns in
        degree order."""
        return "generic" if self.needs_all else None

    @property
    def push_kind(self) -> str | None:
        """How the step pushes, for the memory estimate: None (never), "fused" (a kernel: no
        per-edge temporaries), "product" (a sum pushed from a few sources as a sparse product,
        ``neighbor_reduce`` with ``sources``: their rows copied, at most a quarter of the
        entries) or "generic" (the default: a functor called on chunks of
        ``frontier.advance.push.CHUNK_EDGES`` out-edges). Declare it as ``pull_kind``."""
        return "generic"

    @abc.abstractmethod
    def init_frontier(self, graph, state, **params) -> Frontier:
        """Initialise ``state`` for a run (``params``: e.g. ``source``); return the first frontier."""

    @abc.abstractmethod
    def step(self, graph, frontier: Frontier, state, iteration: int) -> Frontier:
        """One BSP superstep: operators on ``frontier``; return the vertices whose state changed."""

    def converged(self, graph, frontier: Frontier, state, iteration: int) -> bool:
        return not frontier

    def traversed_edges(self, graph, state):
        """Edges the run traversed, for GTEPS (default: none counted): an int, or a 0-d array
        on the device, read only when ``stats.edges`` is."""
        return 0

    def prepare(self, graph) -> None:
        """Build what this primitive's steps read of ``graph`` beyond its CSR, once per graph
        and kept with it (``graph.cached``), so that no superstep builds it. The enactor calls
        it before the first superstep, on one device or on each device's part of several
        (what it builds there is the run's ``Stats.prepare_seconds``); ``Graph.prepare``
        calls it up front. The default: the
        degrees that cost models read, and, when the primitive may pull (``needs_all`` or a
        ``pull_kind``), the in-degrees (on a directed graph, and so the reverse CSR).
        Override it to add more (and call this one)."""
        if self.needs_all or self.pull_kind is not None:
            graph.cost_degrees()
        else:
            graph.out_degree()


@dataclass(frozen=True)
class Contract:
    """A primitive's declarations resolved and checked: each communicated state's combiner,
    the keys that followers obey, each scalar's combiner."""

    combiners: dict[str, combiners.Combiner]
    scalars: dict[str, combiners.Combiner]
    owner_only: bool  # a replace state: only owners send
    key: str | None  # the min/max state that ``follows`` states follow

    @property
    def names(self) -> list[str]:
        return list(self.combiners)

    @property
    def dense(self) -> bool:
        """Whether every communicated state can travel in dense messages (its combiner has a
        neutral value)."""
        return bool(self.combiners) and all(
            type(c).neutral is not combiners.Combiner.neutral for c in self.combiners.values()
        )


def contract_of(primitive: Primitive, state=None) -> Contract:
    """``primitive``'s contract; with ``state`` (allocated arrays), dtypes checked too.

    Raises
    ------
    ContractError
        An unknown combiner, a communicated name that is no declared state, a ``follows`` that
        names no min/max state, replace mixed with other combiners, a combiner that does not
        fit its state's dtype, or ``every_vertex`` with the default ``converged``; the message
        names the primitive and the state.
    """
    kind = type(primitive).__name__
    declared = {spec.name for spec in primitive.state}
    resolved = {}
    for name, combiner in primitive.communicate.items():
        where = f"{kind}.communicate[{name!r}]"
        if name not in declared:
            raise ContractError(f"{where}: no State named {name!r} (declared: {sorted(declared)})")
        resolved[name] = combiners.get(combiner, where)
    for name, combiner in resolved.items():
        key = combiner.follows
        if key is not None and not (key in resolved and resolved[key].keyed):
            raise ContractError(
                f"{kind}.communicate[{name!r}]: follows {key!r}, which is not "
                "a state communicated with 'min' or 'max'"
            )
    laned = {spec.name for spec in primitive.state if spec.lanes is not None}
    for name, combiner in resolved.items():
        if combiner.follows and {name, combiner.follows} & laned:
            raise ContractError(
                f"{kind}.communicate[{name!r}]: a state of lanes cannot follow "
                "or be followed (each lane has its own winner)"
            )
    keys = {c.follows for c in resolved.values() if c.follows}
    if len(keys) > 1:
        raise ContractError(f"{kind}.communicate: states follow {sorted(keys)}; one key at most")
    owner_only = any(c.owner_only for c in resolved.values())
    if owner_only and not all(c.owner_only for c in resolved.values()):
        raise ContractError(
            f"{kind}.communicate: 'replace' (sent by owners only) cannot be "
            "mixed with other combiners in one primitive"
        )
    if primitive.every_vertex and type(primitive).converged is Primitive.converged:
        raise ContractError(
            f"{kind}.every_vertex: its frontier is never empty, so it needs a "
            "converged of its own (the default waits for an empty frontier)"
        )
    scalars = {
        s.name: combiners.get(s.reduce, f"{kind}.scalars[{s.name!r}]") for s in primitive.scalars
    }
    for name, combiner in scalars.items():
        if combiner.owner_only or combiner.follows:  # a scalar has no owner and no key
            raise ContractError(
                f"{kind}.scalars[{name!r}]: a scalar reduces with 'add', 'min', "
                f"'max' or a combiner of values, not {combiner!r}"
            )
    if state is not None:
        for name, combiner in resolved.items():
            array = getattr(state, name)
            if array is not None:
                combiner.check(f"{kind}.communicate[{name!r}]", array.dtype)
    return Contract(resolved, scalars, owner_only, next(iter(keys), None))
