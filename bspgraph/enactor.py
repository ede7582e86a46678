"""The BSP enactor: allocate a primitive's state, run its step until it converges, gather.

A primitive declares its per-vertex state, its initial frontier and one BSP step made of
frontier operators; the enactor owns everything else: allocation, the loop, timing, stats and,
for several devices, partitioning and communication (``bspgraph.multi``).
"""

from __future__ import annotations

import abc
import functools
import inspect
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import memory
from .backend import backend_of, get_backend, to_host
from .frontier import Frontier


@dataclass(frozen=True)
class State:
    """One per-vertex array of a primitive.

    ``dtype`` is a NumPy dtype name, "vertex" (the graph's id dtype) or "weight" (the graph's
    float weight dtype, float64 when unweighted). ``init`` is a scalar,
    "max" (the dtype's largest value, so that a min combiner works), "inf", or "id" (the vertex's
    own id). At the end, values still equal to the "max"/"inf" sentinel become ``unset``.
    ``when`` names a primitive option that must be true for the array to exist (else None).
    ``output=False`` marks scratch state that the result leaves out (never copied to the host).
    """

    name: str
    dtype: str
    init: Any = 0
    unset: Any = None
    when: str | None = None
    output: bool = True


@dataclass(frozen=True)
class Scalar:
    """One global value of a primitive (a 0-d array): the step sets it from its own vertices,
    and on several devices the enactor replaces it by its ``reduce`` ("sum", "min", "max")
    over all devices after every superstep."""

    name: str
    dtype: str = "float64"
    init: Any = 0
    reduce: str = "sum"


@dataclass
class Superstep:
    """What one BSP superstep did: output frontier size, time, and communication (messages,
    bytes and rounds over all devices; ``comm_seconds``, this process's wall time from the end
    of its devices' step kernels to the end of the exchange: packing, sending, receiving;
    ``sync_seconds``, its wall time in the superstep's collectives over processes, the scalars
    and the stop test: mostly waiting for the slowest process; near 0 in one process). The
    levels of a repeated advance (several supersteps in one launch) share its time evenly."""

    frontier: int
    seconds: float
    messages: int = 0
    bytes: int = 0
    rounds: int = 0
    comm_seconds: float = 0.0
    sync_seconds: float = 0.0


@dataclass
class Stats:
    """Iterations, wall time, per-superstep records and traversed edges of one run.

    ``seconds`` times the BSP run (allocation, supersteps, synchronisation); ``setup_seconds``
    the partitioning and copying to devices before it (0 on one device, or when reused).
    """

    iterations: int = 0
    seconds: float = 0.0
    setup_seconds: float = 0.0
    edges: int = 0
    devices: int = 1
    supersteps: list[Superstep] = field(default_factory=list)

    @classmethod
    def combine(cls, runs: list[Stats]) -> Stats:
        """One record for several runs: counts and times added, supersteps concatenated."""
        return cls(
            iterations=sum(r.iterations for r in runs), seconds=sum(r.seconds for r in runs),
            setup_seconds=sum(r.setup_seconds for r in runs), edges=sum(r.edges for r in runs),
            devices=max((r.devices for r in runs), default=1),
            supersteps=[s for r in runs for s in r.supersteps],
        )  # fmt: skip

    @property
    def gteps(self) -> float:
        """Traversed edges per second, in billions."""
        return self.edges / self.seconds / 1e9 if self.seconds > 0 else 0.0


class Primitive(abc.ABC):
    """Base class of a primitive: subclasses declare ``state`` and define ``init_frontier`` and
    ``step``; ``converged`` defaults to "frontier empty".

    ``communicate`` maps state names to their combiner ("min", "max", "sum", "replace") and
    ``associates`` names state that travels with a vertex whose value wins; the enactor reads
    them only when it lifts the primitive to several devices. ``needs_all`` says every device
    must see every update (pull traversal, pointer jumping), not only the owner.
    ``replicate_graph`` gives every device the whole graph, not only its own vertices' edges
    (triangle counting reads the neighbours of neighbours); ``Frontier.all`` and
    ``compute(graph, "vertices")`` still cover the device's own vertices only.
    """

    state: tuple[State, ...] = ()
    scalars: tuple[Scalar, ...] = ()
    communicate: dict[str, str] = {}
    associates: tuple[str, ...] = ()
    needs_all: bool = False
    replicate_graph: bool = False

    def __init__(self, **options: Any):
        self.options = options

    @abc.abstractmethod
    def init_frontier(self, graph, state, **params) -> Frontier:
        """Initialise ``state`` for a run (``params``: e.g. ``source``); return the first frontier."""

    @abc.abstractmethod
    def step(self, graph, frontier: Frontier, state, iteration: int) -> Frontier:
        """One BSP superstep: operators on ``frontier``; return the vertices whose state changed."""

    def converged(self, graph, frontier: Frontier, state, iteration: int) -> bool:
        return not frontier

    def traversed_edges(self, graph, state) -> int:
        """Edges the run traversed, for GTEPS (default: none counted)."""
        return 0


def allocate(primitive: Primitive, graph) -> SimpleNamespace:
    """The primitive's state arrays on ``graph``'s backend, initialised."""
    xp, n = graph.xp, graph.num_vertices
    arrays = {}
    for spec in primitive.state:
        if spec.when is not None and not primitive.options.get(spec.when):
            arrays[spec.name] = None
            continue
        dtype = _dtype(spec.dtype, graph)
        if spec.init == "id":
            arrays[spec.name] = xp.arange(n, dtype=dtype)
        else:
            arrays[spec.name] = graph.backend.full(n, _initial_value(spec, dtype), dtype)
    for scalar in primitive.scalars:
        arrays[scalar.name] = xp.asarray(scalar.init, dtype=scalar.dtype)
    return SimpleNamespace(**arrays)


def _dtype(name: str, graph) -> np.dtype:
    if name == "vertex":
        return graph.indices.dtype
    if name == "weight":
        return graph.weights.dtype if graph.weights is not None else np.dtype(np.float64)
    return np.dtype(name)


def _initial_value(spec: State, dtype: np.dtype):
    if spec.init == "max":
        return np.iinfo(dtype).max if dtype.kind in "iu" else np.inf
    if spec.init == "inf":
        return np.inf
    return spec.init


def gather(primitive: Primitive, state: SimpleNamespace, *, host: bool = True) -> dict:
    """Host copies of the output state arrays, with init sentinels replaced by ``unset``, and
    of the scalars; with ``host=False`` the arrays stay where they are (on the device)."""
    result = {scalar.name: to_host(getattr(state, scalar.name))[()] for scalar in primitive.scalars}
    for spec in primitive.state:
        if not spec.output:
            continue
        array = getattr(state, spec.name)
        if array is None:
            result[spec.name] = None
            continue
        if spec.unset is not None and spec.init in ("max", "inf"):
            backend = backend_of(array)
            with backend.activate():  # on the array's device, before the copy
                backend.replace(array, _initial_value(spec, array.dtype), spec.unset)
        result[spec.name] = to_host(array) if host else array
    return result


def enact(
    primitive: Primitive,
    graph,
    *,
    devices: int | list[int] | None = None,
    partitioner=None,
    communicator=None,
    backend=None,
    seed: int = 0,
    transport=None,
    keep_on_device: bool = False,
    **params: Any,
) -> tuple[dict[str, np.ndarray], Stats]:
    """Run ``primitive`` on ``graph`` until it converges; return host state arrays and stats.

    ``devices`` is a count or a list of device ids (default 1); with more than one, the graph is
    partitioned by ``partitioner`` and updates travel by ``communicator`` (``bspgraph.multi``).
    ``backend`` is "numpy", "cupy" or None (CuPy when a GPU is usable). ``params`` go to
    ``init_frontier`` (for example ``source``). ``transport`` ("local", "mpi" or a Transport)
    moves updates between devices; with "mpi" there is one device per rank (``devices`` left out
    or the number of ranks) and every rank returns the whole result. ``keep_on_device``
    leaves the arrays of a one-device run on its device (for a primitive that chains runs, as
    betweenness does); several devices always gather to the host.
    """
    _check_params(primitive, params)
    device_ids = _device_ids(devices)
    if (len(device_ids) > 1 or partitioner is not None or communicator is not None
            or transport is not None):  # fmt: skip
        from .multi import enact_multi

        return enact_multi(primitive, graph, None if devices is None else device_ids,
                           partitioner=partitioner, communicator=communicator, backend=backend,
                           seed=seed, transport=transport, **params)  # fmt: skip
    target = get_backend(backend, device_ids[0])
    memory.check(primitive, graph, target)  # before any copy: OutOfDeviceMemory, not a CUDA OOM
    with target.activate():
        return _enact_one(primitive, graph.to(target), params, keep_on_device)


def _enact_one(primitive, graph, params, keep_on_device=False):
    stats = Stats()
    started = time.perf_counter()
    state = allocate(primitive, graph)
    frontier = primitive.init_frontier(graph, state, **params)
    iteration = 0
    while not primitive.converged(graph, frontier, state, iteration):
        step_started = time.perf_counter()
        frontier = primitive.step(graph, frontier, state, iteration)
        sizes = (*frontier.passed, len(frontier))  # a repeated advance ran several levels
        iteration += len(sizes)
        seconds = (time.perf_counter() - step_started) / len(sizes)  # shared out evenly
        stats.supersteps.extend(Superstep(size, seconds) for size in sizes)
    graph.backend.synchronize()
    stats.seconds = time.perf_counter() - started
    stats.iterations = iteration
    stats.edges = primitive.traversed_edges(graph, state)
    return gather(primitive, state, host=not keep_on_device), stats


RUN_OPTIONS = ("devices", "partitioner", "communicator", "backend", "seed", "transport")


def _check_params(primitive: Primitive, params: dict) -> None:
    """TypeError naming the keyword arguments that neither ``enact`` nor the primitive's
    ``init_frontier`` takes (a typo would otherwise surface from inside the primitive)."""
    accepted = _init_parameters(type(primitive))
    if accepted is None:
        return
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise TypeError(
            f"{type(primitive).__name__}: unexpected keyword argument(s) "
            f"{', '.join(map(repr, unknown))}; the run options are {', '.join(RUN_OPTIONS)}"
        )


@functools.cache
def _init_parameters(kind: type) -> frozenset | None:
    """The names ``kind.init_frontier`` takes, None if it takes any (``**params``); read once
    a class (``inspect.signature`` costs tens of microseconds a call)."""
    parameters = inspect.signature(kind.init_frontier).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters)


def _device_ids(devices) -> list[int]:
    if devices is None:
        return [0]
    if isinstance(devices, (int, np.integer)) and not isinstance(devices, bool):
        if devices < 1:
            raise ValueError(f"devices={devices}: expected a count >= 1 or a list of device ids")
        return list(range(int(devices)))
    if isinstance(devices, (str, bytes, bool)) or not hasattr(devices, "__iter__"):
        raise ValueError(f"devices={devices!r}: expected a count >= 1 or a list of device ids")
    ids = list(devices)
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in ids):
        raise ValueError(f"devices={devices!r}: device ids must be integers")
    if not ids or len(set(ids)) != len(ids) or min(ids) < 0:
        raise ValueError(f"devices={devices!r}: expected distinct non-negative device ids")
    return [int(d) for d in ids]
