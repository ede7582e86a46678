"""How much device memory a run needs, checked before anything moves to the GPU.

:func:`estimate` adds up what the just-enough scheme allocates on one device: the graph (CSR, and
the reverse CSR when the primitive may pull on a directed graph), the cached degree arrays, the
lists' columns in degree order (a large graph that pulls every list: ``operators.gathered``), the
lists a primitive samples or copies (``sampled_entries``, ``list_copies``), the primitive's
state, two frontiers (ids and mask each), the fused kernels' output buffers (a power
iteration's: its frontier's mask, its pulled sums and new iterates) and the per-superstep
temporaries of a generic advance (a functor's push works in chunks of
``frontier.advance.push.CHUNK_EDGES`` edges; a generic pull has every in-edge in flight; a
fused kernel has none).
:func:`check` compares it with the device's free memory and raises
:class:`~bspgraph.exceptions.OutOfDeviceMemory` with both numbers, instead of a CUDA
out-of-memory deep inside a superstep.

The estimate reads sizes and dtypes only (``num_vertices``, ``num_edges``, ``weighted``,
``directed``, the id and offset dtypes that :func:`~bspgraph.graph.graph.index_dtype` picks), so
it works on a host graph before it is copied and on graphs too large to build here.
"""

from __future__ import annotations

import math

import numpy as np

from .backend.base import ROWS_SHARE
from .exceptions import OutOfDeviceMemory
from .frontier import operators
from .frontier.advance import push
from .graph.graph import index_dtype

GiB = 2**30
PUSH_BYTES_PER_EDGE = 56  # slots, segment, edge ids (int64), src, dst, weights, functor values
# a generic pull has every in-edge in flight at once: segment, positions, hits, ids, weights and
# functor values (the NumPy path peaks at ~85 bytes per in-edge, weighted PageRank)
PULL_BYTES_PER_EDGE = 88
QUEUED_BYTES = 4  # the relax kernel's int32 "queued" flag per vertex
# a sum pushed from a few sources as a sparse product (``operators.neighbor_reduce`` with
# ``sources``): their rows copied, at most a ROWS_SHARE-th of the entries, each with its row
# and position (int64) while expanded, then its index, weight and float64 value (betweenness
# from one source on one H200, rmat24: 2.8 GiB of them live at its peak, 7.43 GiB in all)
PRODUCT_PUSH_BYTES = 32
# a batched step's temporaries a vertex and lane, beside its state: the level's rows of lanes,
# the product's output, the pairs it reached (rows and lanes, int64) and their values; with the
# forward phase's 12 bytes of state, the 70 that lanes.GPU_BYTES_PER_ENTRY measured (betweenness
# from eight sources on one H200, rmat24: 75 bytes a vertex and lane at its peak, state included)
LANE_WORK_BYTES = 58
# a power iteration's pulled sums and its new iterate (float64), each held twice, the last
# step's while the next are made (PageRank on one H200, rmat24: 32 bytes a vertex live at the peak)
POWER_BYTES = 32
SAMPLE_BUILD_BYTES = 16  # a list sample's int64 row and position per entry while it is built
COPY_BUILD_BYTES_PER_EDGE = 25  # a list copy's int64 rows and two int64 gathers, and a mask

# How a primitive pulls and pushes, as it declares it (``Primitive.pull_kind``, ``push_kind``):
# None (never), "fused" (a kernel, no per-edge temporaries) or "generic" (operator arrays over
# every in-edge, or over a chunk of out-edges); one that declares nothing pushes "generic", and
# pulls "generic" when ``needs_all`` (the conservative guesses). A primitive whose pulls reduce
# every list through ``operators.gathered`` declares ``reduces_every_list``.


def estimate(primitive, graph, *, devices: int = 1, edges: int | None = None) -> int:
    """Bytes one device needs to run ``primitive`` on ``graph`` split over ``devices`` devices.

    With several devices each holds every vertex's state and frontiers ("duplicate-all"), the
    out-edges (and, directed, the in-edges) of its own vertices, ``edges`` of them (default:
    an even share; all of them when the primitive sets ``replicate_graph``), the owner map and
    the communicator's send and receive buffers of the communicated state. Scalars and CUDA
    kernel images are not counted.
    """
    devices = max(int(devices), 1)
    n, m = int(graph.num_vertices), int(graph.num_edges)
    ids = index_dtype(n).itemsize
    offsets = index_dtype(m).itemsize
    weight = _weight_itemsize(graph)
    pull = primitive.pull_kind
    if edges is None:
        whole = devices == 1 or getattr(primitive, "replicate_graph", False)
        edges = m if whole else -(-m // devices)

    def csr(num_edges: int, *, edge_ids: bool) -> int:
        per_edge = ids + (weight or 0) + (offsets if edge_ids else 0)
        return (n + 1) * offsets + num_edges * per_edge

    total = csr(edges, edge_ids=False)
    total += n * offsets  # cached out-degrees (the cost model reads them)
    if graph.directed and devices > 1:  # a device's part always carries its in-edges
        total += csr(edges, edge_ids=False) + n * offsets
    elif graph.directed and pull is not None:  # built on the first pull, with edge ids
        total += csr(edges, edge_ids=True) + n * offsets
    reduces = primitive.reduces_every_list or pull == "generic"
    if reduces and n >= operators.ORDERED_VERTICES:  # its pulls may rename the lists' columns
        total += (edges + n) * ids  # the lists' columns in degree order, and that order
    directions = 2 if graph.directed else 1
    sampled = primitive.sampled_entries * n  # the first k entries of each list, per direction
    if sampled:
        total += directions * ((n + 1) * offsets + sampled * (ids + (weight or 0)))
        total += sampled * SAMPLE_BUILD_BYTES + n * offsets  # while one is built: rows, degrees
    copied = int(primitive.list_copies * edges)  # entries of the lists it builds beside these
    if copied:
        total += (n + 1) * 8 + copied * ids + edges * COPY_BUILD_BYTES_PER_EDGE
    total += n * _state_itemsize(primitive, graph)
    lanes = _lanes(primitive)
    if lanes > 1:  # a batched run: its steps' rows of lanes and the pairs they reach
        total += n * lanes * LANE_WORK_BYTES
    power = getattr(primitive, "every_vertex", False)  # a power iteration: it never advances
    if power:
        total += n if devices == 1 else 0  # its frontier, every vertex: a mask (a part's: owned)
        total += n * POWER_BYTES
    else:
        total += 2 * n * (ids + 1)  # current and next frontier: ids and mask each
        total += n * (2 * ids + QUEUED_BYTES + 8)  # fused output (a repeated advance's levels:
        # two halves of n ids), queued flags, degree scan
    temporaries = 0
    if primitive.push_kind == "generic":
        temporaries = min(edges, push.CHUNK_EDGES) * PUSH_BYTES_PER_EDGE
    elif primitive.push_kind == "product":
        temporaries = -(-edges // ROWS_SHARE) * PRODUCT_PUSH_BYTES
    if pull == "generic":
        temporaries = max(temporaries, edges * PULL_BYTES_PER_EDGE)
    total += temporaries
    if devices > 1:
        names = list(getattr(primitive, "communicate", {}))
        options = getattr(primitive, "options", {})
        sizes = {
            spec.name: _itemsize(spec.dtype, graph) * (spec.width(options) or 1)
            for spec in primitive.state
        }
        total += 2 * n * (ids + sum(sizes.get(name, 8) for name in names))  # sent, received
        total += 2 * n * offsets  # the whole graph's degrees, for every device's cost model
        total += n * (1 + 4)  # the owned mask and the owner map (int32)
        if not power:  # (a power iteration's next frontier: every vertex)
            total += n * 4  # stamps of the next frontier's listing (a GPU's, int32)
            total += n * ids  # what a part's levels lowered, listed (label-correcting: SSSP)
        if primitive.reads_neighbours:  # the proxies: the others' vertices
            total += 2 * n * ids  # its lists name, and the positions of its own they read
        if power and primitive.reduces_every_list:
            # its lists split into the entries of its own vertices and the others' (where the
            # others' values arrive behind its pull: NCCL): their weights apart, two offsets,
            # and while it is built a count a row and a vertex's index on its side; their
            # entries replace the lists' renamed ones where those are counted
            total += edges * (weight or 0) + n * (3 * offsets + ids)
            if n < operators.ORDERED_VERTICES:
                total += edges * ids
    return int(total)


def check(primitive, graph, backend, *, devices: int = 1, edges: int | None = None) -> None:
    """Raise :class:`OutOfDeviceMemory` when :func:`estimate` exceeds ``backend``'s free memory.

    A no-op on the CPU (``backend.free_bytes()`` is None). Memory that ``graph`` already holds on
    ``backend`` counts as available; so does memory CuPy's pool keeps for reuse.

    Raises
    ------
    OutOfDeviceMemory
        "<primitive> on <V> vertices, <E> edges needs X GiB, Y GiB free on GPU d".
    """
    pooled = backend.pooled_bytes()
    resident = _resident_bytes(graph) if getattr(graph, "backend", None) == backend else 0
    if pooled and _estimate_once(primitive, graph, devices, edges) <= pooled + resident:
        return  # a call after another: its pool is enough (no driver call: tens of us)
    free = backend.free_bytes()
    if free is None:
        return
    free += pooled + resident
    need = _estimate_once(primitive, graph, devices, edges)
    if need > free:
        name = type(primitive).__name__
        on = f" ({devices} devices)" if devices > 1 else ""
        raise OutOfDeviceMemory(
            f"{name} on {graph.num_vertices} vertices, {graph.num_edges} edges{on} needs "
            f"{_amount(need)}, {_amount(free)} free on GPU {backend.device or 0}; "
            "hint: more devices (devices=P), a smaller graph, or backend='numpy'"
        )


_ESTIMATES: dict = {}  # estimate() by what it reads, for repeated calls (tens of us each)


def _estimate_once(primitive, graph, devices: int, edges: int | None) -> int:
    """:func:`estimate`, computed once per primitive class and options, graph shape and split."""
    weights = graph.weights
    key = (
        type(primitive),
        repr(getattr(primitive, "options", None)),
        int(graph.num_vertices),
        int(graph.num_edges),
        bool(graph.directed),
        None if weights is None else weights.dtype,
        devices,
        edges,
    )
    need = _ESTIMATES.get(key)
    if need is None:
        if len(_ESTIMATES) > 1024:
            _ESTIMATES.clear()
        need = _ESTIMATES[key] = estimate(primitive, graph, devices=devices, edges=edges)
    return need


def _amount(size: int) -> str:
    """Bytes in GiB (MiB below 0.1 GiB, so that small amounts are not shown as 0.00)."""
    return f"{size / GiB:.2f} GiB" if size >= GiB / 10 else f"{size / 2**20:.2f} MiB"


def _weight_itemsize(graph) -> int | None:
    weights = graph.weights
    return None if weights is None else int(weights.dtype.itemsize)


def _itemsize(name: str, graph) -> int:
    if name == "vertex":
        return index_dtype(int(graph.num_vertices)).itemsize
    if name == "weight":
        return _weight_itemsize(graph) or 8
    return int(np.dtype(name).itemsize)


def _state_itemsize(primitive, graph) -> int:
    """Bytes per vertex of the primitive's state arrays (those its options switch on)."""
    options = getattr(primitive, "options", {})
    return sum(
        _itemsize(spec.dtype, graph) * (spec.width(options) or 1)  # rows of lanes: b values
        for spec in primitive.state
        if spec.when is None or options.get(spec.when)
    )


def _lanes(primitive) -> int:
    """The lanes of a batched primitive's state (1: one traversal)."""
    options = getattr(primitive, "options", {})
    return max((spec.width(options) or 1 for spec in primitive.state), default=1)


def _resident_bytes(graph) -> int:
    """Bytes of the CSR arrays ``graph`` already holds (they need no new memory)."""
    csrs = [graph.forward]
    reverse = getattr(graph, "_reverse", None)
    if reverse is not None and reverse is not graph.forward:
        csrs.append(reverse)
    return sum(
        int(math.prod(array.shape)) * array.dtype.itemsize
        for csr in csrs
        for array in (csr.offsets, csr.indices, csr.weights, csr.edge_ids)
        if array is not None
    )
