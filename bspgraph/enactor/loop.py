"""The BSP loop on one device, and ``enact``, which runs it or hands the run to several."""

from __future__ import annotations

import copy
import functools
import inspect
import time
import warnings
from typing import Any, Protocol

import numpy as np

from .. import memory
from ..backend import choose, clock, get_backend, gpu_count, to_host
from .checks import Reference, Watch, snapshot, verify
from .contract import Primitive, contract_of
from .relabel import check_declarations
from .running import GPU_WORKERS, mpiexec
from .running import current as current_cluster
from .state import allocate, gather
from .stats import Stats


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
    result_device: bool = False,
    check: bool = False,
    cluster=None,
    **params: Any,
) -> tuple[dict[str, np.ndarray], Stats]:
    """Run ``primitive`` on ``graph`` until it converges; return host state arrays and stats.

    ``devices`` is a count or a list of device ids (default 1; a repeated id runs several parts
    on one GPU, ``devices=[0, 0]``); with more than one, the graph is
    partitioned by ``partitioner`` and updates travel by ``communicator``, as the lifting
    contract says (:mod:`bspgraph.enactor.contract`). On GPUs 0 .. P-1 of this machine (no
    ``transport`` or ``cluster`` given) the run goes to P worker processes, one a GPU, as
    ``mpiexec -n P`` runs it: started by the first such run, which says so once, and kept
    for later runs (:mod:`.running`); NumPy virtual devices and other lists run here.
    ``backend`` is "numpy", "cupy" or None: on one device, the graph's own backend for a graph
    on a GPU, else CuPy when a GPU is usable and the graph has SMALL_GRAPH_EDGES edges or
    more, else NumPy (:func:`bspgraph.backend.choose`; ``stats.backend`` and
    ``stats.backend_reason`` say which and why). ``params`` go to
    ``init_frontier`` (for example ``source``). ``transport`` ("local", "mpi", "nccl" or a
    Transport) moves updates between devices; with "mpi" or "nccl" (made by the process's
    first run that names it and kept for the next) there is one device per rank (``devices``
    left out or the number of ranks) and every rank returns the whole result. ``result_device``
    leaves the result arrays on the device (CuPy arrays on a GPU: ``__dlpack__`` and
    ``__cuda_array_interface__`` hand them to other libraries without a copy; a primitive that
    chains runs, as betweenness does, keeps them there too); several devices gather to the host
    first, then to the first device. ``check`` compares the state
    with a snapshot after every step (slow: for tests, as ``bspgraph.testing.assert_lifts``),
    and on several devices fails a run that takes more than max(4 x the one-device run's
    supersteps, 64): the one-device count is found by a one-device run once the run has gone
    on for long, or given by a :class:`~bspgraph.enactor.checks.Reference` as ``check``
    (which a checked one-device run fills in). ``cluster`` (a :class:`~.cluster.Cluster`, or
    the one of an enclosing ``with bg.cluster(P)``) runs it on the cluster's workers, one
    process a device, as ``mpiexec -n P`` would, and returns rank 0's result.

    Raises
    ------
    ContractError
        The primitive's declarations do not fit (an unknown combiner, one that does not fit
        its state's dtype); with ``check``, a step changed state the enactor cannot carry, or
        a run on several devices did not converge within the superstep limit (the message
        names the state that kept changing, and where devices disagree with a vertex's owner).
    """
    _check_params(primitive, params)
    cluster = _runner(cluster, transport, devices, backend)
    if cluster is not None:  # every worker runs it, one rank a device
        return cluster.enact(
            primitive,
            graph,
            devices=devices,
            partitioner=partitioner,
            communicator=communicator,
            backend=backend,
            seed=seed,
            result_device=result_device,
            check=check,
            **params,
        )
    device_ids = _device_ids(devices)
    if (
        len(device_ids) > 1
        or partitioner is not None
        or communicator is not None
        or transport is not None
    ):
        from .distributed import enact_multi

        if check:  # a lifted run that never settles fails: measured against one device's
            check = Watch(primitive, _one_device(check, primitive, graph, backend, seed, params))
        result, stats = enact_multi(
            primitive,
            graph,
            None if devices is None else device_ids,
            partitioner=partitioner,
            communicator=communicator,
            backend=backend,
            seed=seed,
            transport=transport,
            check=check,
            result_device=result_device,
            **params,
        )
        if not stats.backend:  # the size rule is for one device
            name, stats.backend_reason = choose(backend, graph, by_size=False)
            stats.backend = get_backend(name).name
        return result, stats
    started, paid = time.perf_counter(), clock.paid()
    name, reason = choose(backend, graph)
    target = get_backend(name)  # a graph on a GPU stays there, unless devices= says otherwise
    if devices is not None:
        target = target.on_device(device_ids[0])
    memory.check(primitive, graph, target)  # before any copy: OutOfDeviceMemory, not a CUDA OOM
    with target.activate():
        graph = graph.to(target)
        setup_seconds = time.perf_counter() - started - clock.spent_since(paid)
        result, stats = _enact_one(primitive, graph, params, result_device, check)
    if isinstance(check, Reference):  # the count that checked lifted runs are measured against
        check.saw(stats.iterations)
    stats.setup_seconds = setup_seconds
    payments = clock.since(paid)  # one-time costs of this call, apart from its phases
    stats.prepare_seconds, stats.compile_seconds = payments["prepare"], payments["compile"]
    stats.backend, stats.backend_reason = target.name, reason
    return result, stats


class Chain(Protocol):
    """Runs of primitives that read each other's results, as one piece of work (betweenness:
    the forward run, then the backward run on its depths and path counts): ``primitive`` is
    the run whose cut every run of the chain takes (each enacts with the ``run`` options
    given), and a call returns the chain's result arrays and its runs' stats."""

    primitive: Primitive

    def __call__(self, graph, **run: Any) -> tuple[dict, list[Stats]]: ...


def enact_chain(
    chain: Chain,
    graph,
    *,
    devices: int | list[int] | None = None,
    backend=None,
    transport=None,
    cluster=None,
    result_device: bool = False,
    **run: Any,
) -> tuple[dict, list[Stats]]:
    """``chain`` (:class:`Chain`) on ``graph`` with the :func:`enact` options ``run``: here,
    or, where a run would go to a cluster's workers, on every worker in one call, as
    ``mpiexec -n P`` ranks run it (each on its part; the results its runs hand each other
    stay on the workers, and only the chain's comes back). Host arrays unless
    ``result_device``."""
    runner = _runner(cluster, transport, devices, backend)
    if runner is not None:
        return runner.enact(
            chain, graph, devices=devices, backend=backend, result_device=result_device, **run
        )
    result, stats = chain(graph, devices=devices, backend=backend, transport=transport, **run)
    if not result_device:
        result = {n: to_host(v) if getattr(v, "ndim", 0) else v for n, v in result.items()}
    return result, stats


def _runner(cluster, transport, devices, backend):
    """The cluster a run goes to: ``cluster``, the enclosing ``with bg.cluster(P)``'s, or for
    ``devices`` on GPUs (no ``transport``) the GPU workers; None: this process."""
    cluster = cluster or current_cluster()
    if cluster is None and transport is None and devices is not None:
        cluster = _gpu_workers(_device_ids(devices), backend)
    return cluster


def _one_device(check, primitive, graph, backend, seed, params):
    """What a checked lifted run's supersteps are measured against: ``check``'s Reference
    where it holds a count, else a function that runs ``primitive`` (a copy: a primitive may
    keep things between steps) on one device and returns its supersteps."""
    if isinstance(check, Reference) and check.supersteps is not None:
        return check

    def run_on_one_device() -> int:
        return enact(copy.deepcopy(primitive), graph, backend=backend, seed=seed, **params)[
            1
        ].iterations

    return run_on_one_device


def _enact_one(primitive, graph, params, result_device=False, check=False):
    stats = Stats()
    primitive.prepare(graph)  # what the steps read, built before the loop: prepare_seconds
    started, paid = time.perf_counter(), clock.paid()
    state = allocate(primitive, graph)
    contract = contract_of(primitive, state)  # ContractError now, not on several devices later
    frontier = primitive.init_frontier(graph, state, **params)
    frontier.edges_before = 0  # no frontier was advanced from before it
    iteration = 0
    done = primitive.converged(graph, frontier, state, iteration)
    while not done:
        step_started, step_paid = time.perf_counter(), clock.paid()
        before = snapshot(graph, state) if check else None
        frontier = primitive.step(graph, frontier, state, iteration)
        if check:
            verify(primitive, contract, iteration, graph, before, state, frontier)
        sizes = (*frontier.passed, len(frontier))  # a repeated advance ran several levels
        iteration += len(sizes)
        # the stop test reads what the step computed: the superstep ends when it has read it
        # (a vote to halt ends the run: on one device no message can arrive)
        done = primitive.converged(graph, frontier, state, iteration)
        seconds = time.perf_counter() - step_started - clock.spent_since(step_paid)
        # shared out evenly; the watchers' time is not the loop's
        started += stats.record(iteration, sizes, seconds / len(sizes))
    graph.backend.synchronize()
    stats.seconds = time.perf_counter() - started - clock.spent_since(paid)
    stats.iterations = iteration
    stats.edges = primitive.traversed_edges(graph, state)
    gathered, paid = time.perf_counter(), clock.paid()
    result = gather(primitive, state, host=not result_device)
    stats.gather_seconds = time.perf_counter() - gathered - clock.spent_since(paid)
    return result, stats


RUN_OPTIONS = (
    "devices",
    "partitioner",
    "communicator",
    "backend",
    "seed",
    "transport",
    "check",
    "result_device",
    "cluster",
)


def _check_params(primitive: Primitive, params: dict) -> None:
    """TypeError naming the keyword arguments that neither ``enact`` nor the primitive's
    ``init_frontier`` takes (a typo would otherwise surface from inside the primitive);
    ContractError for a declared ``params`` or ``State.holds`` that does not fit
    (:func:`~bspgraph.enactor.relabel.check_declarations`)."""
    accepted = _init_parameters(type(primitive))
    unknown = sorted(set(params) - accepted) if accepted is not None else []
    if unknown:
        raise TypeError(
            f"{type(primitive).__name__}: unexpected keyword argument(s) "
            f"{', '.join(map(repr, unknown))}; the run options are {', '.join(RUN_OPTIONS)}"
        )
    check_declarations(primitive, params)


@functools.cache
def _init_parameters(kind: type) -> frozenset | None:
    """The names ``kind.init_frontier`` takes, None if it takes any (``**params``); read once
    a class (``inspect.signature`` costs tens of microseconds a call)."""
    parameters = inspect.signature(kind.init_frontier).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters)


def _gpu_workers(device_ids: list[int], backend):
    """The workers (one process a GPU: :data:`~.running.GPU_WORKERS`) that a run on
    ``device_ids`` goes to: GPUs 0 .. P-1 of this machine, P >= 2, on CuPy, where bg.cluster
    can start them; else None (the run stays in this process: NumPy virtual devices, parts of
    one GPU, other ids, or no engine, which a warning says once)."""
    name = _on_gpus(device_ids, backend)
    if name is None:
        return None
    if not _engine():
        warnings.warn(
            f"devices={device_ids}: every GPU runs from this process, one after the other; "
            "pip install 'bspgraph[engine]' (Dask's distributed, mpi4py, MPICH) for a process "
            "a GPU",
            stacklevel=3,
        )
        return None
    return GPU_WORKERS.for_run(device_ids, name)


def _on_gpus(device_ids: list[int], backend) -> str | None:
    """ "cupy" where ``device_ids`` are GPUs 0 .. P-1 (P >= 2) of this machine and the run is
    on CuPy; else None."""
    size = len(device_ids)
    if size < 2 or device_ids != list(range(size)) or gpu_count() < size:
        return None
    name, _ = choose(backend, None, by_size=False)
    return "cupy" if getattr(name, "name", name) == "cupy" else None


@functools.cache
def _engine() -> bool:
    """Whether bg.cluster can start workers here: ``mpiexec``, mpi4py and Dask's
    distributed."""
    import importlib.util

    modules = ("distributed", "mpi4py")
    return mpiexec() is not None and all(importlib.util.find_spec(m) for m in modules)


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
    if not ids or min(ids) < 0:  # a repeated id: several parts on one GPU
        raise ValueError(f"devices={devices!r}: expected non-negative device ids")
    return [int(d) for d in ids]
