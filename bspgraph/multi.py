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

import time

import numpy as np

from . import comm, partitioners
from .backend import backend_of, get_backend, gpu_count
from .comm.message import Update
from .enactor import Stats, Superstep, allocate, gather
from .exceptions import DeviceError
from .frontier import Frontier
from .graph.graph import CSR, Graph

REDUCE = {"sum": sum, "min": min, "max": max}


def enact_multi(primitive, graph, device_ids, *, partitioner, communicator, backend, seed,
                **params):  # fmt: skip
    """See :func:`bspgraph.enactor.enact`; runs on ``len(device_ids)`` devices."""
    backends = _backends(backend, device_ids)
    host = graph.to("numpy")
    owner = partitioners.get(partitioner or "random")(host, len(backends), seed=seed)
    pattern = comm.get(communicator or "selective")
    transport = comm.Local(backends)
    started = time.perf_counter()
    devices = [_subgraph(host, owner == d, primitive.replicate_graph).to(b)
               for d, b in enumerate(backends)]  # fmt: skip
    for part, b in zip(devices, backends):
        part.whole_degrees = (b.asarray(host.out_degree()), b.asarray(host.in_degree()),
                              host.num_edges)  # fmt: skip
    owners = [b.asarray(owner) for b in backends]
    states = [allocate(primitive, g) for g in devices]
    frontiers = [primitive.init_frontier(g, s, **params) for g, s in zip(devices, states)]
    if not primitive.needs_all:  # each vertex starts on its owner only
        frontiers = [_restrict(g, f) for g, f in zip(devices, frontiers)]
    stats = Stats(devices=len(devices))
    iteration = 0
    while not all(primitive.converged(g, f, s, iteration)
                  for g, f, s in zip(devices, frontiers, states)):  # fmt: skip
        step_started = time.perf_counter()
        outputs = [primitive.step(g, f, s, iteration) for g, f, s in zip(devices, frontiers, states)]
        _reduce_scalars(primitive, states)
        updates = [_package(primitive, g, s, f.ids) for g, s, f in zip(devices, states, outputs)]
        received, traffic = pattern.exchange(
            updates, owner=owner, to_all=primitive.needs_all, transport=transport,
            combine=lambda a, b: merge(primitive, _concat(a, b)),
        )  # fmt: skip
        frontiers = [
            _next_frontier(primitive, g, s, f, received[d], owners[d])
            for d, (g, s, f) in enumerate(zip(devices, states, outputs))
        ]
        iteration += 1
        stats.supersteps.append(Superstep(
            sum(len(f) for f in frontiers), time.perf_counter() - step_started,
            messages=traffic.messages, bytes=traffic.bytes, rounds=traffic.rounds,
        ))  # fmt: skip
    for b in backends:
        b.synchronize()
    stats.seconds = time.perf_counter() - started
    stats.iterations = iteration
    stats.edges = sum(primitive.traversed_edges(g, s) for g, s in zip(devices, states))
    return _gather(primitive, states, owner), stats


def _backends(name, device_ids):
    backend = get_backend(name)
    if not backend.is_gpu:
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


def _reduce_scalars(primitive, states) -> None:
    for scalar in primitive.scalars:
        total = REDUCE[scalar.reduce](float(getattr(s, scalar.name)) for s in states)
        for s in states:
            getattr(s, scalar.name)[...] = total


def _package(primitive, graph, state, ids) -> Update:
    """The declared state of the changed ``ids``; "replace" state only from the owner."""
    if "replace" in primitive.communicate.values():
        ids = ids[graph.owned[ids]]
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
    values = {}
    for name, column in update.values.items():
        column = column[order]
        if combiners.get(name) == "sum":
            segment = xp.cumsum(first) - 1
            total = xp.zeros(int(first.sum()), dtype=column.dtype)
            backend.scatter_add(total, segment, column)
            values[name] = total
        else:
            values[name] = column[first]
    return Update(ids[first], values)


def _next_frontier(primitive, graph, state, output: Frontier, inbox, owner) -> Frontier:
    """Combine ``inbox`` into ``state``; the next frontier is what changed here or arrived."""
    xp = graph.xp
    changed = [output.ids if primitive.needs_all else output.ids[graph.owned[output.ids]]]
    updates = [u for u in (inbox if isinstance(inbox, list) else [inbox]) if u.ids.size]
    if updates:
        update = updates[0]
        for other in updates[1:]:
            update = _concat(update, other)
        update = merge(primitive, _to(graph.backend, update))
        changed.append(_combine(primitive, state, update, xp))
    ids = xp.concatenate(changed) if len(changed) > 1 else changed[0]
    return Frontier.from_ids(graph, xp.unique(ids))


def _to(backend, update: Update) -> Update:
    return Update(backend.asarray(update.ids), {n: backend.asarray(v) for n, v in update.values.items()})


def _combine(primitive, state, update: Update, xp):
    """Apply ``update`` to ``state`` with the declared combiners; return the ids that changed."""
    ids = update.ids
    improved = xp.zeros(ids.size, dtype=bool)
    winners = None
    for name, combiner in primitive.communicate.items():
        local, incoming = getattr(state, name), update.values[name]
        if combiner == "min":
            better = incoming < local[ids]
        elif combiner == "max":
            better = incoming > local[ids]
        elif combiner == "sum":
            local[ids] += incoming
            improved |= incoming != 0
            continue
        else:  # "replace": the owner's value
            better = incoming != local[ids]
        local[ids[better]] = incoming[better]
        improved |= better
        if winners is None and combiner in ("min", "max"):
            winners = better
    for name in primitive.associates:
        if getattr(state, name) is not None and winners is not None:
            getattr(state, name)[ids[winners]] = update.values[name][winners]
    return ids[improved]


def _gather(primitive, states, owner) -> dict[str, np.ndarray]:
    """Each vertex's values from its owner's device."""
    hosts = [gather(primitive, s) for s in states]
    result = dict(hosts[0])
    for spec in primitive.state:
        if result[spec.name] is None:
            continue
        merged = result[spec.name].copy()
        for d, host in enumerate(hosts):
            merged[owner == d] = host[spec.name][owner == d]
        result[spec.name] = merged
    return result

