"""The enactor on P devices: partition, run the unmodified step everywhere, exchange, combine.

Each device holds a subgraph in global vertex ids: the out-edges (and, for pull, the in-edges) of
the vertices it owns, and every vertex's state ("duplicate-all" proxies, as in the multi-GPU
Gunrock paper). After each superstep a device packages the declared state of the vertices it
changed, the communicator delivers each package to the owners (or to every device when the
primitive ``needs_all``), and receivers combine with the declared combiners; the vertices whose
value changed join the next frontier. Scalars are reduced over devices; the run stops when every
device has converged.
"""

from __future__ import annotations

import functools
import hashlib
import time
from dataclasses import dataclass

import numpy as np

from . import comm, partitioners
from .backend import backend_of, get_backend, gpu_count, to_host
from .comm.message import Update
from .comm.transport import failing_together
from .enactor import Stats, Superstep, allocate, gather
from .exceptions import DeviceError
from .frontier import Frontier
from .graph.graph import CSR, Graph

REDUCE = {"sum": sum, "min": min, "max": max}
# Several GPUs in one process exchange through the host: CuPy's per-device memory pools are
# not safe for kernels of one GPU reading another GPU's temporaries (seen as lost updates on
# rmat 22 with peer copies); one process per GPU (NCCL, MPI) sends device buffers directly.
HOST = get_backend("numpy")


def enact_multi(primitive, graph, device_ids, *, partitioner, communicator, backend, seed,
                transport=None, **params):  # fmt: skip
    """See :func:`bspgraph.enactor.enact`; runs on ``len(device_ids)`` devices.

    ``transport``: None or "local" (every device in this process), "mpi" or "nccl" (one rank
    per device; ``device_ids`` None, one, or one per rank) or a Transport. When other processes drive some
    devices, this process builds and runs only its own ones (from the whole ``graph``, or from
    the part :func:`distribute` made), reduces scalars and convergence over every process, and
    every process returns the whole result; an error on one process ends them all.
    """
    transport, backends = _transport(transport, backend, device_ids)
    with failing_together(transport):  # with one process, errors propagate as they are
        return _enact(primitive, graph, transport, backends, partitioner, communicator, seed,
                      params)  # fmt: skip


def _enact(primitive, graph, transport, backends, partitioner, communicator, seed, params):
    pattern = comm.get(communicator or "selective")
    started = time.perf_counter()
    owner, devices = _parts(primitive, graph, transport, backends, partitioner, seed)
    if transport.distributed:  # also a barrier: the run's clock starts with every process
        transport.agree("run", _run_fingerprint(primitive, graph, owner, pattern, backends, params))
    stats = Stats(devices=transport.size, setup_seconds=time.perf_counter() - started)
    started = time.perf_counter()
    local = transport.local
    owners = {d: _per_cut(graph, owner, backends[d], backends[d].asarray) for d in local}
    # one process per device: the communicator splits by owner on that device, no copy
    exchange_owner = owners[local[0]] if transport.distributed else owner
    each = functools.partial(_on_each, backends)
    states = each(functools.partial(allocate, primitive), devices)
    frontiers = each(functools.partial(primitive.init_frontier, **params), devices, states)
    if not primitive.needs_all:  # each vertex starts on its owner only
        frontiers = each(_restrict, devices, frontiers)
    iteration = 0
    converged = each(primitive.converged, devices, frontiers, states, iteration)
    done = all(_everywhere(transport, list(converged.values())))
    while not done:
        step_started = time.perf_counter()
        outputs = each(primitive.step, devices, frontiers, states, iteration)
        sync_started = time.perf_counter()
        _reduce_scalars(primitive, states, transport)
        sync_seconds = time.perf_counter() - sync_started
        for d in local:  # the step's kernels are done: what follows is communication
            backends[d].synchronize()
        comm_started = time.perf_counter()
        packages = each(functools.partial(_package, primitive), devices, states, outputs)
        if not transport.distributed:  # GPUs of one process exchange through host memory
            packages = {d: _to(HOST, update) for d, update in packages.items()}
        updates = [packages.get(d) for d in range(transport.size)]
        received, traffic = pattern.exchange(
            updates, owner=exchange_owner, to_all=primitive.needs_all, transport=transport,
            combine=lambda a, b: merge(primitive, _concat(a, b)),
        )  # fmt: skip
        for d in local:
            backends[d].synchronize()
        comm_seconds = time.perf_counter() - comm_started
        frontiers = each(functools.partial(_next_frontier, primitive), devices, states, outputs,
                         dict(enumerate(received)))  # fmt: skip
        iteration += 1
        converged = each(primitive.converged, devices, frontiers, states, iteration)
        counts = [sum(len(f) for f in frontiers.values()), traffic.messages, traffic.bytes,
                  sum(not c for c in converged.values())]  # fmt: skip
        sync_started = time.perf_counter()
        size, messages, nbytes, running = _sum(transport, counts)  # one collective a superstep
        sync_seconds += time.perf_counter() - sync_started
        done = running == 0
        stats.supersteps.append(Superstep(
            size, time.perf_counter() - step_started, messages=messages, bytes=nbytes,
            rounds=traffic.rounds, comm_seconds=comm_seconds, sync_seconds=sync_seconds,
        ))  # fmt: skip
    for d in local:
        backends[d].synchronize()
    stats.seconds = time.perf_counter() - started
    stats.iterations = iteration
    traversed = each(primitive.traversed_edges, devices, states)
    (stats.edges,) = _sum(transport, [sum(traversed.values())])
    if transport.distributed:
        _share_owned(primitive, devices, states, transport)
        return gather(primitive, states[local[0]]), stats
    return _gather(primitive, states, owner), stats


def _transport(transport, backend, device_ids) -> tuple[comm.Transport, dict]:
    """The Transport, and the Backend of each device it drives in this process."""
    if transport is None or transport == "local":
        backends = _backends(backend, device_ids or [0])
        return comm.Local(len(backends)), dict(enumerate(backends))
    if transport == "mpi":
        from .comm.mpi import MPITransport

        transport = MPITransport(backend=backend)
    elif transport == "nccl":
        from .comm.nccl import NCCLTransport

        transport = NCCLTransport()
    if not isinstance(transport, comm.Transport):
        raise ValueError(
            f"transport={transport!r}: expected 'local', 'mpi', 'nccl' or a Transport instance"
        )
    if not transport.distributed:
        if device_ids is not None and len(device_ids) != transport.size:
            raise DeviceError(f"devices={device_ids}: transport {transport!r} has "
                              f"{transport.size} devices")  # fmt: skip
        backends = _backends(backend, device_ids or list(range(transport.size)))
        return transport, dict(enumerate(backends))
    if device_ids is not None and len(device_ids) not in (1, transport.size):
        raise DeviceError(
            f"devices={device_ids}: transport {transport!r} has one device per process, "
            f"{transport.size} in all; leave devices out (or pass {transport.size})"
        )
    return transport, {d: transport.backend for d in transport.local}


def _parts(primitive, graph, transport, backends, partitioner, seed):
    """``owner`` and the subgraph of each local device: cut here, or by :func:`distribute`."""
    part = getattr(graph, "partition", None)
    if part is None:
        cutter = partitioners.get(partitioner or "random")
        key = ("parts", repr(cutter), transport.size, seed, primitive.replicate_graph,
               tuple((d, backends[d].name, backends[d].device) for d in transport.local))  # fmt: skip
        if key in graph.cache:  # the same cut on the same devices: built once per graph
            return graph.cache[key]
        host = graph.to("numpy")
        owner = cutter(host, transport.size, seed=seed)
        devices = {d: _subgraph(host, owner == d, primitive.replicate_graph).to(backends[d])
                   for d in transport.local}  # fmt: skip
        degrees = (host.out_degree(), host.in_degree(), host.num_edges)
    else:
        owner = part.owner
        expected = f"distribute(partitioner={part.partitioner}, seed={part.seed}) on {part.parts}"
        if (part.parts != transport.size or tuple(transport.local) != (part.device,)
                or seed != part.seed or (partitioner is not None and
                                         repr(partitioners.get(partitioner)) != part.partitioner)):  # fmt: skip
            raise ValueError(
                f"the graph is device {part.device}'s part from {expected} devices; the run "
                f"asks for device(s) {list(transport.local)} of {transport.size}, partitioner="
                f"{partitioner!r}, seed={seed}"
            )
        if primitive.replicate_graph and not part.replicated:
            raise ValueError(
                f"{type(primitive).__name__} needs the whole graph on every device: "
                "distribute(..., replicate=True)"
            )
        devices = {part.device: graph.to(backends[part.device])}
        degrees = (part.out_degree, part.in_degree, part.num_edges)
    for d, device in devices.items():
        device.whole_degrees = (backends[d].asarray(degrees[0]), backends[d].asarray(degrees[1]),
                                degrees[2])  # fmt: skip
    if part is None:
        graph.cache[key] = owner, devices
    return owner, devices


@dataclass(frozen=True, eq=False)
class Partition:
    """How :func:`distribute` cut a graph; set as ``part.partition`` on the part it returns."""

    device: int
    parts: int
    owner: np.ndarray  # host int32, owner[v] for every vertex
    partitioner: str
    seed: int
    replicated: bool
    out_degree: np.ndarray  # of the whole graph, for the cost models
    in_degree: np.ndarray
    num_edges: int  # of the whole graph
    digest: str  # of the whole graph


def distribute(graph: Graph, transport, *, partitioner=None, seed: int = 0,
               replicate: bool = False) -> Graph:  # fmt: skip
    """This process's part of ``graph`` for a run over a multi-process ``transport``.

    Every process passes the whole graph (each rank reads the file); the ranks first check that
    they hold the same graph (vertex and edge counts, a hash of the CSR), then each computes the
    same ``owner`` (partitioners are deterministic for a seed) and keeps only the out-edges of
    its own vertices (and their in-edges on a directed graph), or everything with
    ``replicate=True`` (triangle counting). Drop every reference to ``graph`` afterwards: what
    stays is the part, the owner array and the whole graph's degrees (O(V)). Run a primitive on
    the part with the same ``transport``, ``partitioner`` and ``seed`` (or none).

    Raises
    ------
    CommunicationError
        The ranks hold different graphs (on every rank).
    """
    (device,) = transport.local
    with failing_together(transport):
        host = graph.to("numpy")
        digest = _graph_digest(graph)
        transport.agree("graph", {"vertices": host.num_vertices, "edges": host.num_edges,
                                  "directed": host.directed, "digest": digest})  # fmt: skip
        cutter = partitioners.get(partitioner or "random")
        owner = cutter(host, transport.size, seed=seed)
        part = _subgraph(host, owner == device, replicate)
        part.partition = Partition(device, transport.size, owner, repr(cutter), seed, replicate,
                                   to_host(host.out_degree()), to_host(host.in_degree()),
                                   host.num_edges, digest)  # fmt: skip
        return part


def _graph_digest(graph: Graph) -> str:
    """A hash of the whole graph, computed once per Graph (a part carries its whole graph's)."""
    part = getattr(graph, "partition", None)
    if part is not None:
        return part.digest
    if "digest" not in graph.cache:
        host = graph.to("numpy")
        arrays = (host.forward.offsets, host.forward.indices, host.forward.weights)
        graph.cache["digest"] = _digest(f"{host.num_vertices}:{host.directed}", *arrays)
    return graph.cache["digest"]


def _digest(*items) -> str:
    """A short hash of strings and host arrays (dtype, shape and bytes)."""
    h = hashlib.blake2b(digest_size=12)
    for item in items:
        if item is None:
            h.update(b"None")
        elif isinstance(item, str):
            h.update(item.encode())
        else:
            array = np.ascontiguousarray(to_host(item))
            h.update(f"{array.dtype.str}{array.shape}".encode())
            h.update(array.view(np.uint8).reshape(-1) if array.size else b"")
    return h.hexdigest()


def _per_cut(graph: Graph, owner, what, make):
    """``make(owner)``, computed once per cut of ``graph`` (cuts are cached in graph.cache) and
    ``what`` (a hashable tag): an O(V) upload or hash would otherwise open every run."""
    key = (what, id(owner))
    if graph.cache.get(key, (None,))[0] is not owner:  # the id of a freed array may be reused
        graph.cache[key] = owner, make(owner)
    return graph.cache[key][1]


def _describe(options: dict) -> str:
    """Options as a string that compares equal across processes (arrays by their hash)."""

    def one(value):
        return _digest(value) if hasattr(value, "shape") else repr(value)

    return ", ".join(f"{key}={one(value)}" for key, value in sorted(options.items()))


def _run_fingerprint(primitive, graph, owner, pattern, backends, params) -> dict:
    """What every process of one run must agree on."""
    return {
        "graph": _graph_digest(graph),
        "primitive": f"{type(primitive).__name__}({_describe(primitive.options)})",
        "parameters": _describe(params),
        "communicator": repr(pattern),
        "partition": _per_cut(graph, owner, "digest", _digest),
        "backend": sorted({b.name for b in backends.values()}),
    }


def _backends(name, device_ids):
    backend = get_backend(name)
    if backend.virtual_devices:
        return [backend] * len(device_ids)  # virtual devices in one process
    available = gpu_count()
    if max(device_ids) >= available:
        raise DeviceError(f"devices={device_ids}: {available} GPU(s) usable on this machine")
    return [get_backend("cupy", d) for d in device_ids]


def _subgraph(host: Graph, owned: np.ndarray, replicate: bool) -> Graph:
    """The rows of the ``owned`` vertices (out-edges, and in-edges for directed graphs), or the
    whole graph when the primitive asks for it (``replicate_graph``), marked with ``owned``."""
    if replicate:
        return Graph(host.forward, host.num_vertices, directed=host.directed, backend=host.backend,
                     summary=host.summary, reverse=host.reverse if host.directed else None,
                     owned=owned)  # fmt: skip

    def rows(csr: CSR) -> CSR:
        degree = np.diff(csr.offsets) * owned
        keep = np.repeat(owned, np.diff(csr.offsets))
        offsets = np.zeros_like(csr.offsets)
        np.cumsum(degree, out=offsets[1:])
        weights = None if csr.weights is None else csr.weights[keep]
        return CSR(offsets, csr.indices[keep], weights)

    forward = rows(host.forward)
    reverse = rows(host.reverse) if host.directed else None
    return Graph(forward, host.num_vertices, directed=host.directed, backend=host.backend,
                 summary=host.summary, reverse=reverse, owned=owned)  # fmt: skip


def _restrict(graph: Graph, frontier: Frontier) -> Frontier:
    ids = frontier.ids
    return Frontier.from_ids(graph, ids[graph.owned[ids]])


def _reduce_scalars(primitive, states, transport) -> None:
    if not primitive.scalars:
        return
    values = _everywhere(transport, [[float(getattr(s, scalar.name)) for scalar in primitive.scalars]
                                     for s in states.values()])  # fmt: skip
    for k, scalar in enumerate(primitive.scalars):
        total = REDUCE[scalar.reduce](device[k] for device in values)
        for s in states.values():
            getattr(s, scalar.name)[...] = total


def _everywhere(transport, values: list) -> list:
    """The ``values`` of this process's devices -> those of every device, in device order."""
    return [value for process in transport.allgather(values) for value in process]


def _sum(transport, numbers: list) -> list:
    """Element-wise sums of ``numbers`` over the processes."""
    return [sum(column) for column in zip(*transport.allgather(numbers))]


def _on_each(backends, fn, devices: dict, *per_device_and_constants):
    """``fn(devices[d], *(a[d] for per-device dicts a), *constants)`` for every device d in
    ``devices``, with d's GPU current; a dict of the results."""
    results = {}
    for d in devices:
        args = [a[d] if isinstance(a, dict) else a for a in per_device_and_constants]
        with backends[d].activate():
            results[d] = fn(devices[d], *args)
    return results


def _package(primitive, graph, state, output: Frontier) -> Update:
    """The declared state of the ``output`` vertices; "replace" state only from the owner."""
    if "replace" not in primitive.communicate.values():
        ids = output.ids
    elif output.is_dense:  # one pass over the mask (PageRank's every owned vertex)
        ids = graph.xp.flatnonzero(output.mask & graph.owned).astype(graph.indices.dtype)
    else:
        ids = output.ids[graph.owned[output.ids]]
    names = [*primitive.communicate, *primitive.associates]
    return Update(ids, {n: getattr(state, n)[ids] for n in names if getattr(state, n) is not None})


def _concat(a: Update, b: Update) -> Update:
    xp = backend_of(a.ids).xp
    values = {name: xp.concatenate([a.values[name], b.values[name]]) for name in a.values}
    return Update(xp.concatenate([a.ids, b.ids]), values)


def merge(primitive, update: Update) -> Update:
    """One entry per id: the winner of the first min/max combiner (associates travel with it),
    sums of "sum" state, any one of "replace" state."""
    backend = backend_of(update.ids)
    xp = backend.xp
    if update.ids.size == 0:
        return update
    combiners = primitive.communicate
    key = next((n for n, c in combiners.items() if c in ("min", "max")), None)
    order = xp.arange(update.ids.size)
    if key is not None:
        value = update.values[key]
        order = xp.argsort(-value if combiners[key] == "max" else value, kind="stable")
    order = order[xp.argsort(update.ids[order], kind="stable")]
    ids = update.ids[order]
    first = xp.ones(ids.size, dtype=bool)
    first[1:] = ids[1:] != ids[:-1]
    segment = xp.cumsum(first) - 1
    if key is not None:  # a sum only adds the entries tied with the winning key
        ranked = update.values[key][order]
        tied = ranked == ranked[first][segment]
    values = {}
    for name, column in update.values.items():
        column = column[order]
        if combiners.get(name) == "sum":
            total = xp.zeros(int(first.sum()), dtype=column.dtype)
            backend.scatter_add(total, segment, column if key is None else column * tied)
            values[name] = total
        else:
            values[name] = column[first]
    return Update(ids[first], values)


def _next_frontier(primitive, graph, state, output: Frontier, inbox: list[Update]) -> Frontier:
    """Combine each Update of ``inbox`` (each with distinct ids, as communicators deliver)
    into ``state`` in turn; the next frontier is what changed here or arrived: a union of sets
    of distinct ids (a mask when large, no sort)."""
    mine = (
        output
        if primitive.needs_all
        else Frontier.from_ids(graph, output.ids[graph.owned[output.ids]])
    )
    arrived = []
    for update in inbox:
        update = _to(graph.backend, update)
        improved = _combine(primitive, state, update, graph.xp)
        if len(mine) < graph.num_vertices:  # else every vertex is in the frontier already
            arrived.append(Frontier.from_ids(graph, update.ids[improved]))
    return Frontier.union(graph, mine, *arrived)


def _to(backend, update: Update) -> Update:
    return Update(
        backend.asarray(update.ids), {n: backend.asarray(v) for n, v in update.values.items()}
    )


def _combine(primitive, state, update: Update, xp):
    """Apply ``update`` (distinct ids) to ``state`` with the declared combiners; return a bool
    per id, True where the vertex's state changed.

    min/max keep the better value (and its associates); "sum" state follows the first min/max
    key when there is one (taken when the key improves, added when it ties, dropped when it
    loses), else adds; "replace" takes the owner's value. Every column is written whole at
    ``ids`` (they are distinct): no compaction, no host synchronisation.
    """
    ids, combiners = update.ids, primitive.communicate
    key = next((n for n, c in combiners.items() if c in ("min", "max")), None)
    if key is not None:
        current, incoming = getattr(state, key)[ids], update.values[key]
        winners = incoming < current if combiners[key] == "min" else incoming > current
        tied = incoming == current
    improved = xp.zeros(ids.size, dtype=bool)
    for name, combiner in combiners.items():
        local, incoming = getattr(state, name), update.values[name]
        current = local[ids]
        if combiner == "sum" and key is not None:
            local[ids] = xp.where(winners, incoming, xp.where(tied, current + incoming, current))
            improved |= winners | (tied & (incoming != 0))
        elif combiner == "sum":
            local[ids] = current + incoming
            improved |= incoming != 0
        elif combiner == "replace":  # the owner's value
            improved |= incoming != current
            local[ids] = incoming
        else:
            better = incoming < current if combiner == "min" else incoming > current
            local[ids] = xp.where(better, incoming, current)
            improved |= better
    for name in primitive.associates:
        if getattr(state, name) is not None and key is not None:
            column = getattr(state, name)
            column[ids] = xp.where(winners, update.values[name], column[ids])
    return improved


def _share_owned(primitive, devices, states, transport) -> None:
    """Give every process's device the output state of every vertex from its owner: one
    exchange round over the transport (device to device on NCCL), each owner to all peers."""
    (d,) = transport.local
    graph, state = devices[d], states[d]
    names = [spec.name for spec in primitive.state
             if spec.output and getattr(state, spec.name) is not None]  # fmt: skip
    ids = graph.owned_ids()
    mine = Update(ids, {name: getattr(state, name)[ids] for name in names})
    sends = [(d, peer, mine) for peer in range(transport.size) if peer != d]
    inbox, _ = transport.exchange_round(sends, num_vertices=graph.num_vertices)
    for update in inbox[d]:
        for name in names:
            getattr(state, name)[update.ids] = update.values[name]


def _gather(primitive, states, owner) -> dict[str, np.ndarray]:
    """Each vertex's values from its owner's device, all devices in this process."""
    hosts = {d: gather(primitive, s) for d, s in states.items()}
    result = dict(next(iter(hosts.values())))
    names = [spec.name for spec in primitive.state if result.get(spec.name) is not None]
    for name in names:
        result[name] = result[name].copy()
        for d, host in hosts.items():
            mine = owner == d
            result[name][mine] = host[name][mine]
    return result
