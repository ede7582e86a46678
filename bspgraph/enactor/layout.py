"""How a graph is laid out over devices: the cut (owner of every vertex), each device's part,
and what every process of a run must agree on."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .. import partitioners
from ..backend import backend_of, to_host
from ..comm.message import Update
from ..comm.transport import failing_together
from ..frontier import Frontier
from ..graph.context import RunContext
from ..graph.graph import CSR, Graph
from .relabel import Relabelling


def partitioner_of(partitioner=None):
    """The partitioner a run named (a name or an instance), random where it named none."""
    return partitioners.get(partitioner or "random")


def _parts(primitive, graph, transport, backends, partitioner, seed):
    """``owner``, the subgraph of each local device, the run's :class:`Relabelling` (None:
    the caller's ids), whether anything was built (False: the graph's cut and parts from
    an earlier run), and the whole graph in run ids where it was built here (else None: for
    rule 6's whole graph, :func:`~.solo.whole_graph`, which would build it again): cut here,
    or by :func:`distribute`.

    A cut whose parts are not id ranges (random, biased, metis) is relabelled, for a primitive
    that declares its ``params``, so that each part is one range (owned slices, dense blocks);
    the relabelled graph and its parts are built once per graph and cut, like the parts."""
    part = getattr(graph, "partition", None)
    relabel = primitive.params is not None
    if part is None:
        cutter = partitioner_of(partitioner)
        key = (
            "parts",
            repr(cutter),
            transport.size,
            seed,
            primitive.replicate_graph,
            relabel,
            tuple((d, backends[d].name, backends[d].device) for d in transport.local),
        )
        if key in graph.cache:  # the same cut on the same devices: built once per graph
            return (*graph.cache[key], False, None)
        host = graph.to("numpy")
        owner = cutter(host, transport.size, seed=seed)
        relabelling = Relabelling.of(owner, host.indices.dtype) if relabel else None
        renamed = None
        if relabelling is not None:
            host, owner = relabelling.graph(host), relabelling.owner(owner)
            renamed = host
        devices = {
            d: _subgraph(host, owner, d, transport.size, primitive.replicate_graph).to(backends[d])
            for d in transport.local
        }
    else:
        owner = part.owner
        expected = f"distribute(partitioner={part.partitioner}, seed={part.seed}) on {part.parts}"
        if (
            part.parts != transport.size
            or tuple(transport.local) != (part.device,)
            or seed != part.seed
            or (partitioner is not None and repr(partitioners.get(partitioner)) != part.partitioner)
        ):
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
        relabelling = part.relabelling
        if relabelling is not None and not relabel:
            raise ValueError(
                f"the graph is a part in run ids ({part.partitioner}'s parts are not id "
                f"ranges) and {type(primitive).__name__} declares no params, so it runs in "
                "the caller's ids only: distribute(..., relabel=False)"
            )
        backend = backends[part.device]
        key = ("part on", backend.name, backend.device)
        if key in graph.cache:  # this part on its device before: nothing to copy again
            return owner, {part.device: graph.cache[key] or graph}, relabelling, False, None
        copy = graph.to(backend)
        devices = {part.device: copy}
        graph.cache[key] = None if copy is graph else copy  # (None: the part itself, no cycle)
        return owner, devices, relabelling, True, None
    graph.cache[key] = owner, devices, relabelling
    return owner, devices, relabelling, True, renamed


@dataclass(frozen=True, eq=False)
class Partition:
    """How :func:`distribute` cut a graph; set as ``part.partition`` on the part it returns."""

    device: int
    parts: int
    owner: np.ndarray  # host int32, owner[v] for every vertex
    partitioner: str
    seed: int
    replicated: bool
    relabelling: Relabelling | None  # the run ids the part is in (None: the caller's)
    out_degree: np.ndarray  # of the whole graph, for the cost models
    in_degree: np.ndarray
    num_edges: int  # of the whole graph
    digest: str  # of the whole graph
    whole: Graph | None = None  # the whole graph in the part's ids, with device 0's part where
    # the run's primitive runs light supersteps there alone (:mod:`.solo`); else None


def distribute(
    graph: Graph,
    transport,
    *,
    partitioner=None,
    seed: int = 0,
    replicate: bool = False,
    relabel: bool = True,
) -> Graph:
    """This process's part of ``graph`` for a run over a multi-process ``transport``.

    Every process passes the whole graph (each rank reads the file); the ranks first check that
    they hold the same graph (vertex and edge counts, a hash of the CSR), then each computes the
    same ``owner`` (partitioners are deterministic for a seed) and keeps only the out-edges of
    its own vertices (and their in-edges on a directed graph), or everything with
    ``replicate=True`` (triangle counting). Drop every reference to ``graph`` afterwards: what
    stays is the part, the owner array and the whole graph's degrees (O(V)). Run a primitive on
    the part with the same ``transport``, ``partitioner`` and ``seed`` (or none).

    When the cut's parts are not id ranges (random, biased, metis), the part is in run ids
    (:class:`~bspgraph.enactor.relabel.Relabelling`: each part one range) and runs answer in
    the caller's ids; only primitives that declare their ``params`` run on such a part, and
    ``relabel=False`` keeps the caller's ids for the others.

    Raises
    ------
    CommunicationError
        The ranks hold different graphs (on every rank).
    """
    (device,) = transport.local
    with failing_together(transport):
        host = graph.to("numpy")
        transport.agree(
            "graph",
            {
                "vertices": host.num_vertices,
                "edges": host.num_edges,
                "directed": host.directed,
                "digest": _graph_digest(graph),
            },
        )
        return next(
            cut(
                graph,
                transport.size,
                partitioner=partitioner,
                seed=seed,
                replicate=replicate,
                relabel=relabel,
                devices=[device],
            )
        )


def cut(
    graph: Graph,
    parts: int,
    *,
    partitioner=None,
    seed: int = 0,
    replicate: bool = False,
    relabel: bool = True,
    whole: bool = False,
    devices=None,
) -> Iterator[Graph]:
    """The parts of ``graph`` over ``parts`` devices (those of ``devices``, default every one),
    in turn, each as :func:`distribute` makes its own: host arrays, ``part.partition`` set;
    with ``whole``, device 0's with the whole graph in the parts' ids beside it (rule 6).
    One cut for all of them; each part is built when the next is asked for."""
    host = graph.to("numpy")
    digest = _graph_digest(graph)
    cutter = partitioner_of(partitioner)
    owner = cutter(host, parts, seed=seed)
    relabelling = Relabelling.of(owner, host.indices.dtype) if relabel else None
    if relabelling is not None:
        host, owner = relabelling.graph(host), relabelling.owner(owner)
    out_degree, in_degree = to_host(host.out_degree()), to_host(host.in_degree())
    for device in range(parts) if devices is None else devices:
        part = _subgraph(host, owner, device, parts, replicate)
        part.partition = Partition(
            device,
            parts,
            owner,
            repr(cutter),
            seed,
            replicate,
            relabelling,
            out_degree,
            in_degree,
            host.num_edges,
            digest,
            host if whole and device == 0 else None,
        )
        yield part


def proxies(transport, devices: dict, blocks: list[slice], each) -> dict:
    """For each device of this process, the vertices of other devices that its lists name
    (Gunrock's duplicate-1-hop proxies): ``(reads, gathers)``, ``reads[o]`` the global ids
    of device ``o``'s block named here (ascending), ``gathers[r]`` the positions in this
    device's own block of those device ``r`` names. A device whose step reads others' state
    only through its lists needs only those values. Found in one exchange round (each device
    tells each owner what it names); ``each`` runs a function on every device of this
    process with its GPU current."""
    size = transport.size
    reads = each(lambda graph: _named(graph, blocks, size), devices)
    sends = [(d, o, Update(ids)) for d, named in reads.items() for o, ids in named.items()]
    inbox, _ = transport.exchange_round(sends, num_vertices=int(blocks[-1].stop))

    def positions(graph, arrived):  # from every other device, in order of source (one each)
        sources = [o for o in range(size) if o != graph.context.device]
        start = blocks[graph.context.device].start
        return {o: u.ids - start for o, u in zip(sources, arrived, strict=True)}

    gathers = each(positions, devices, dict(enumerate(inbox)))
    return {d: (reads[d], gathers[d]) for d in devices}


def _named(graph: Graph, blocks: list[slice], size: int) -> dict:
    """The ids of every other device's block that ``graph``'s lists name, by device."""
    xp, device = graph.xp, graph.context.device
    named = xp.zeros(graph.num_vertices, dtype=bool)
    for csr in (graph.forward, graph.reverse) if graph.directed else (graph.forward,):
        named[csr.indices] = True
    ids = {}
    for o in range(size):
        if o != device:
            found = xp.flatnonzero(named[blocks[o]]).astype(graph.indices.dtype)
            ids[o] = found + graph.indices.dtype.type(blocks[o].start)
    return ids


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


CHECKSUM_WORDS = 1 << 22  # 32-bit words a pass of _checksum: bounds its temporaries


def _checksum(array) -> str:
    """Dtype, shape and a sum of the array's bytes as 32-bit words, each weighted by its
    position, taken where the array lives: on a GPU a few passes and one read, where a hash
    would first copy it to the host (betweenness' depth and sigma, 400 MB at rmat25, cost
    0.8 s a call so over NCCL). The sums are the backend's (``Backend.total``, in int64,
    wrapping at 2**64 alike on every process): CuPy's own ``sum`` takes its plain reduction
    kernel inside the enactor's activation, where it runs the run's fingerprint."""
    backend = backend_of(array)
    xp = backend.xp
    data = xp.ascontiguousarray(array).reshape(-1).view(xp.uint8)
    whole = data.shape[0] // 4 * 4
    words = data[:whole].view(xp.uint32)
    total = xp.zeros((), dtype=xp.int64)
    for start in range(0, words.shape[0], CHECKSUM_WORDS):
        chunk = words[start : start + CHECKSUM_WORDS].astype(xp.uint64)
        weights = xp.arange(start, start + chunk.shape[0], dtype=xp.uint64) % 65521 + 1
        total += backend.total((chunk * weights).view(xp.int64))
    tail = backend.total(data[whole:].astype(xp.int64))
    return f"{array.dtype.str}{tuple(array.shape)}:{int(total)}:{int(tail)}"


def _per_cut(graph: Graph, owner, what, make):
    """``make(owner)``, computed once per cut of ``graph`` (cuts are cached in graph.cache) and
    ``what`` (a hashable tag): an O(V) upload or hash would otherwise open every run."""
    key = (what, id(owner))
    if graph.cache.get(key, (None,))[0] is not owner:  # the id of a freed array may be reused
        graph.cache[key] = owner, make(owner)
    return graph.cache[key][1]


def _describe(options: dict) -> str:
    """Options as a string that compares equal across processes (host arrays by their hash,
    a GPU's by a checksum taken there)."""

    def one(value):
        if not hasattr(value, "shape"):
            return repr(value)
        on_gpu = hasattr(value, "__cuda_array_interface__")
        return _checksum(value) if on_gpu else _digest(value)

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


def _subgraph(host: Graph, owner: np.ndarray, device: int, parts: int, replicate: bool) -> Graph:
    """Device ``device``'s part: the rows of the vertices it owns (out-edges, and in-edges for
    directed graphs), or the whole graph when the primitive asks for it (``replicate_graph``),
    with its run context (owned vertices, the whole graph's degrees)."""
    owned = owner == device
    degrees = (to_host(host.out_degree()), to_host(host.in_degree()), host.num_edges)
    context = RunContext(owned, parts, degrees, device)
    if replicate:
        return Graph(
            host.forward,
            host.num_vertices,
            directed=host.directed,
            backend=host.backend,
            summary=host.summary,
            reverse=host.reverse if host.directed else None,
            context=context,
        )

    def rows(csr: CSR) -> CSR:
        degree = np.diff(csr.offsets) * owned
        keep = np.repeat(owned, np.diff(csr.offsets))
        offsets = np.zeros_like(csr.offsets)
        np.cumsum(degree, out=offsets[1:])
        weights = None if csr.weights is None else csr.weights[keep]
        return CSR(offsets, csr.indices[keep], weights)

    forward = rows(host.forward)
    reverse = rows(host.reverse) if host.directed else None
    return Graph(
        forward,
        host.num_vertices,
        directed=host.directed,
        backend=host.backend,
        summary=host.summary,
        reverse=reverse,
        context=context,
    )


def owned_part(graph, frontier: Frontier) -> Frontier:
    """The vertices of ``frontier`` that ``graph``'s device owns."""
    ids = frontier.ids
    return Frontier.from_ids(graph, ids[graph.context.owned[ids]])
