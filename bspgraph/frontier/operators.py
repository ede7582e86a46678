"""The filter, compute, near-far, neighbor-reduce and link operators."""

from __future__ import annotations

import numpy as np

from ..backend import fused, identity, ops, to_host
from ..backend.base import ROWS_SHARE
from ..graph.graph import CSR
from .frontier import Frontier


def filter(graph, frontier: Frontier, pred) -> Frontier:  # noqa: A001 (Gunrock's name; call as fr.filter)
    """The members ``v`` of ``frontier`` for which ``pred(ids)`` is True (a vectorised predicate)."""
    ids = frontier.ids
    return Frontier.from_ids(graph, ids[pred(ids)]) if ids.size else frontier


def compute(graph, frontier: Frontier | str, fn) -> None:
    """Call ``fn(ids)`` once on the vertex ids of ``frontier`` ("vertices": all that ``graph``
    owns, which is every vertex on one device)."""
    if isinstance(frontier, str):
        if frontier != "vertices":
            raise ValueError(f"compute({frontier!r}): expected a Frontier or 'vertices'")
        fn(graph.owned_ids())
    else:
        fn(frontier.ids)


def near_far(graph, frontier: Frontier, values, delta="auto") -> tuple[Frontier, Frontier]:
    """Gunrock's near and far piles (delta-stepping's buckets): the members of ``frontier``
    whose ``values`` lie within ``delta`` of its smallest value, and the others (empty when
    there are none). ``delta``: a width; None puts every member in the near pile; "auto" is
    :func:`bucket_width`, the operator's choice. Any width gives a label-correcting step
    (Bellman-Ford) the same answer: the far pile is relaxed from in a later superstep."""
    if delta == "auto":
        delta = bucket_width(graph)
    if delta is None or len(frontier) <= 1:
        return frontier, Frontier.empty(graph)
    ids = frontier.ids
    held = values[ids]
    near = held <= graph.backend.smallest(held) + delta
    if bool(graph.backend.all(near)):
        return frontier, Frontier.empty(graph)
    return Frontier.from_ids(graph, ids[near]), Frontier.from_ids(graph, ids[~near])


SHORT_ROW = 32  # entries: a GPU lane reads each row, no warp spends a level on one hub


def largest_degree(graph) -> int:
    """The longest out-list of the whole graph (``cost_degrees``), read once per graph."""

    def largest():
        degrees = graph.cost_degrees()[0]
        return int(graph.backend.largest(degrees)) if degrees.shape[0] else 0

    return graph.cached("largest degree", largest)


def short_rows(graph) -> bool:
    """Whether no out-list is longer than SHORT_ROW (a road network, a mesh): a thread may read
    a whole row in a levels kernel, and the levels are light."""
    return largest_degree(graph) <= SHORT_ROW


def bucket_width(graph) -> float | None:
    """:func:`near_far`'s "auto" width: 4 x mean weight / mean degree (Meyer and Sanders' 1/d
    for weights in [0, 1]; the factor 4 trades re-relaxations for supersteps, fit on R-MAT),
    three times that on a graph whose out-lists are all short (a mesh's or a road network's
    buckets are light, and a superstep's fixed cost outweighs the relaxations wider ones
    repeat: grid1000's SSSP on NumPy 286 ms at 4, 238 at 8, 233 at 12, 235 at 16; rmat18's
    126 ms at 4, 130 at 12), kept with the graph; None (no buckets) where a superstep costs
    more than the relaxations buckets save: on a GPU (``Capabilities.costly_supersteps``) or
    on one device of several."""
    if graph.backend.capabilities.costly_supersteps or not graph.context.global_view:
        return None

    def width() -> float:
        edges = graph.cost_degrees()[2]
        if edges == 0:
            return 0.0
        weights = graph.weights
        mean = 1.0 if weights is None else float(graph.backend.total(weights)) / weights.shape[0]
        return (12 if short_rows(graph) else 4) * mean * graph.num_vertices / edges

    return graph.cached(("bucket width",), width)


def neighbor_reduce(
    graph,
    values,
    reduce: str = "min",
    *,
    direction: str = "out",
    weighted: bool = False,
    frontier: Frontier | None = None,
    sources: Frontier | None = None,
    adds_up: bool = False,
    sample: int | None = None,
):
    """For every vertex ``u``, the ``reduce`` ("min" or "sum") of ``values[v]`` over the edges
    ``u -> v`` that ``graph`` holds (``v -> u`` with ``direction="in"``), times the edge's weight
    when ``weighted`` (a "sum" only); the identity (the dtype's largest value, or 0) where there
    are none. With ``frontier``: for its vertices only, in ``frontier.ids`` order. With
    ``sources`` (a sum of floats): over the edges to ``v`` in ``sources`` only (say, the only
    vertices whose values changed), pushed from them where that is cheaper and right.
    ``adds_up``: the caller's sums travel as added changes (its state is communicated with
    ``add``), so that sums over different shares of the edges may add up; then a push from
    ``sources`` is right on a part of a graph too (see below).

    Gunrock's neighbor-reduce, GraphBLAS's ``A min.second values`` or ``A plus.times values``:
    a sum of floats is one sparse product (scipy.sparse; on CuPy the row reduction of
    ``Backend.spmv``, or cuSPARSE for a push), a min one gather per edge and a segmented
    reduction; no functor is called per edge. The product is taken over the fewest edges:
    the frontier's rows (a pull), the sources' edges (a push: the product with the transpose
    of their rows, which also passes over every column, ``push_columns`` pull entries a
    column in the backend's capabilities), or every row when either holds most edges. On one
    device's part of several, which holds its own vertices' lists only, a pull sums the whole
    lists of its own ``frontier`` vertices and a push the edges into its own ``sources``: a
    push only where the sums add up (``adds_up``), chosen by the whole graph's counts, so
    that every device takes the same direction and each edge is summed on one device.
    With ``sample`` (k >= 1, every row, no ``frontier`` or ``sources``): over the first k
    edges of each list only (Afforest's neighbour sampling; built once per graph, cached).
    """
    if reduce not in ("min", "sum") or (weighted and reduce != "sum"):
        raise ValueError(
            f"neighbor_reduce(reduce={reduce!r}, weighted={weighted}): expected "
            "'min' or 'sum' (only a sum is weighted)"
        )
    backend, n = graph.backend, graph.num_vertices
    csr = _lists(graph, direction, sample, "neighbor_reduce", frontier, sources)
    floats = reduce == "sum" and values.dtype.kind == "f"
    arrivals = graph.context.arrivals
    split = floats and frontier is None and sources is None and not sample
    span = owned_range(graph) if split and arrivals.pending is not None else None
    if span is not None:  # the others' values still on their way: the own entries first
        return _own_then_others(graph, csr, direction, weighted, values, span)
    arrivals.wait()
    if weighted and not floats and csr.weights is not None:
        raise ValueError("neighbor_reduce(weighted=True): a weighted sum needs float values")
    total = csr.indices.shape[0]
    rows = total if frontier is None else ops.entries_in(backend, csr.offsets, frontier.ids)
    if sources is not None:
        if not floats:
            raise ValueError("neighbor_reduce(sources=...): sums of floats only")
        across = graph.reverse if direction == "out" else graph.forward  # v's rows list the u
        pushed = None  # a part whose sums must be whole (not adds_up) pulls
        if graph.context.owned is None:  # one device: this graph's counts
            pushed, pulled, edges = (
                ops.entries_in(backend, across.offsets, sources.ids),
                rows,
                total,
            )
        elif adds_up:  # a part: the whole graph's counts, the same on every device
            pushed, pulled, edges = _whole_counts(graph, direction, frontier, sources)
        columns = n * backend.capabilities.push_columns  # (a push's pass over every column)
        if pushed is not None and pushed + columns < pulled and pushed * ROWS_SHARE <= edges:
            ids = sources.ids  # their rows first: the data of only their entries is built
            offsets, indices, weights = ops.csr_rows(
                backend,
                across.offsets,
                across.indices,
                across.weights if weighted else None,
                ids,
                n,
            )
            data = ops.edge_values(backend, indices, weights, values.dtype)
            out = ops.spmv_transposed(backend, offsets, indices, data, values[ids], n)
            return out if frontier is None else out[frontier.ids]
        values = graph.xp.where(sources.mask, values, 0)  # pull: the others count as 0
    weights = csr.weights if weighted else None
    if frontier is None or rows * ROWS_SHARE > total:  # every row (then pick the frontier's)
        indices, values = (csr.indices, values) if sample else gathered(graph, direction, values)
        span = owned_range(graph)  # a part's range holds every list: reduce its rows only
        offsets = csr.offsets
        if span is not None:
            offsets, indices, weights = range_rows(graph, csr, indices, weights, span)
        out = (
            ops.spmv(backend, offsets, indices, weights, values, offsets.shape[0] - 1)
            if floats
            else ops.gather_reduce(backend, values, offsets, indices, reduce)
        )
        if span is not None:
            out = _every_vertex(graph, span, out, identity(reduce, values.dtype))
        return out if frontier is None else out[frontier.ids]
    if floats:  # the frontier's rows, in place
        return ops.spmv(backend, csr.offsets, csr.indices, weights, values, n, rows=frontier.ids)
    return ops.gather_reduce(backend, values, csr.offsets, csr.indices, reduce, rows=frontier.ids)


def _own_then_others(graph, csr: CSR, direction: str, weighted: bool, values, span: slice):
    """:func:`neighbor_reduce`'s sum over every list of a part that owns the rows ``span``,
    in two products: over the entries that name its own vertices, which it computed itself,
    then, once the others' values sent to it have arrived (``context.arrivals``), over the
    rest; so that their transfer runs beside the first product (Gunrock's multi-GPU
    overlap of communication with the computation that does not need it). Each row's sum
    is its own entries' plus the others' (the same order every run)."""
    own, others = _split_lists(graph, csr, direction, weighted, span)
    backend, rows = graph.backend, span.stop - span.start
    out = ops.spmv(backend, own.offsets, own.indices, own.weights, own.gathered(values), rows)
    graph.context.arrivals.wait()
    out += ops.spmv(
        backend, others.offsets, others.indices, others.weights, others.gathered(values), rows
    )
    return _every_vertex(graph, span, out, 0)


def _every_vertex(graph, span: slice, rows_out, empty):
    """A part's reduction over its rows ``span`` as one value a vertex: ``empty`` (the
    identity) at the other, empty rows (zeros: NumPy's pages not written, a third faster)."""
    backend, dtype = graph.backend, rows_out.dtype
    n = graph.num_vertices
    out = backend.xp.zeros(n, dtype=dtype) if empty == 0 else backend.full(n, empty, dtype)
    out[span] = rows_out
    return out


class _Columns:
    """A CSR over a part's rows of some of its entries, and the vertices its column indices
    stand for (``columns[j]`` for index ``j``; None: the indices are the vertices)."""

    def __init__(self, offsets, indices, weights, columns) -> None:
        self.offsets, self.indices, self.weights, self.columns = offsets, indices, weights, columns

    def gathered(self, values):
        """``values`` as the product reads them through :attr:`indices`."""
        return values if self.columns is None else values[self.columns]


def _split_lists(graph, csr: CSR, direction: str, weighted: bool, span: slice):
    """The rows ``span`` of ``csr`` as two CSRs, each row's entries in their order: those
    naming a vertex of ``span`` (owned) and the others, renamed as :func:`gathered` renames
    them where it does (each side's columns numbered apart). Kept with the part, built again
    once the columns are put in degree order."""
    ordered = _ordered_columns(graph, direction)
    made_for = csr.indices if ordered is None else ordered[0]  # (the columns' order it follows)
    key = ("own and other entries", _ordered_key(graph, direction)[1], weighted)  # (one CSR
    # for both directions of an undirected graph: one split)
    kept = graph.cache.get(key)
    if kept is not None and kept[0] is made_for:
        return kept[1]
    graph.cache.pop(key, None)  # (the split of the columns before they were put in order)

    columns = None if ordered is None else ordered[0]
    renamed = None if ordered is None or ordered[1] is None else id(ordered[1])
    del ordered  # (the renamed list goes before the split is built: it is not read)

    def build():
        if columns is not None:  # the split holds every renamed entry: the list goes, and
            graph.cache[_ordered_key(graph, direction)] = (columns, None)  # the views of it
            views = [k for k in graph.cache if isinstance(k, tuple) and k[0] == "range rows"]
            for stale in [k for k in views if k[2] == renamed]:
                del graph.cache[stale]
        weights = csr.weights if weighted else None
        ranged = ("range rows", id(csr.offsets), id(csr.indices), id(weights))
        offsets, entries, weights = range_rows(graph, csr, csr.indices, weights, span)
        graph.cache.pop(ranged, None)  # (its offsets: the split's replace them)
        rename = own_columns = other_columns = None
        if columns is not None:  # each side's columns numbered apart, in degree order
            rename, own_columns, other_columns = _renamed_apart(graph, columns, span)
        own, others = ops.split_rows(graph.backend, offsets, entries, weights, span, rename)
        return made_for, (_Columns(*own, own_columns), _Columns(*others, other_columns))

    return graph.cached(key, build)[1]


def _renamed_apart(graph, columns, span: slice):
    """For the columns in degree order (``columns[j]``: the vertex renamed ``j``), each
    vertex's index among those of its side (``span``'s vertices, the others), and each
    side's vertices by index: ``(rename, own, others)``."""
    xp = graph.xp
    owned = (columns >= span.start) & (columns < span.stop)
    before = xp.cumsum(owned, dtype=columns.dtype) - owned  # owned columns before each
    index = xp.where(owned, before, xp.arange(columns.shape[0], dtype=columns.dtype) - before)
    rename = xp.zeros(graph.num_vertices, dtype=columns.dtype)  # (no entry names the rest)
    rename[columns] = index
    return rename, columns[owned], columns[~owned]


def owned_range(graph) -> slice | None:
    """The rows a part of a graph holds lists in, when its owned vertices are one contiguous
    range (an edge_balanced cut) and no other row holds any: a slice; None for a whole graph,
    another cut, or a part that holds the whole graph (``replicate_graph``)."""
    span = graph.owned_index()
    if not isinstance(span, slice) or span == slice(None):
        return None
    held = graph.cached(("lists in range", span.start, span.stop), lambda: _lists_in(graph, span))
    return span if held else None


def _lists_in(graph, span: slice) -> bool:
    """Whether every entry of ``graph``'s lists (in-lists too, directed) is in rows ``span``."""
    for csr in (graph.forward, graph.reverse) if graph.directed else (graph.forward,):
        first, last, total = (int(x) for x in to_host(csr.offsets[[span.start, span.stop, -1]]))
        if first != 0 or last != total:
            return False
    return True


def range_rows(graph, csr: CSR, indices, weights, span: slice):
    """The rows ``span`` of ``csr`` (with ``indices`` for its columns, renamed or not) as a CSR
    of their own, its offsets from 0: on a device that owns one range of vertices, its lists
    are all there, and a reduction need not pass over the other (empty) rows. Kept with the
    part."""

    def build():  # the same views every call: what a backend caches per array stays valid
        first, last = (int(x) for x in to_host(csr.offsets[[span.start, span.stop]]))
        offsets = csr.offsets[span.start : span.stop + 1] - csr.offsets[span.start]
        return offsets, indices[first:last], None if weights is None else weights[first:last]

    return graph.cached(("range rows", id(csr.offsets), id(indices), id(weights)), build)


def _whole_counts(graph, direction: str, frontier, sources):
    """The whole graph's entries that a push from ``sources`` and a pull over ``frontier``'s
    rows (all rows: None) would read, and its edges: on a part of it, counted alike on every
    device (its frontiers being the whole run's)."""
    out_degree, in_degree, edges = graph.cost_degrees()
    # a pull reads the frontier's lists of this direction, a push the sources' other ones
    pull_lists, push_lists = (
        (out_degree, in_degree) if direction == "out" else (in_degree, out_degree)
    )
    backend = graph.backend
    pulled = edges if frontier is None else ops.sum_at(backend, pull_lists, frontier.ids)
    return ops.sum_at(backend, push_lists, sources.ids), pulled, edges


def link(
    graph,
    parent,
    *,
    direction: str = "out",
    frontier: Frontier | None = None,
    sample: int | None = None,
) -> None:
    """Union-find: join the trees of the forest ``parent`` along the edges ``u -> v`` that
    ``graph`` holds (``v -> u`` with ``direction="in"``), from every vertex ``u`` or those of
    ``frontier``, over the first ``sample`` edges of each list only with ``sample``. Afterwards
    both ends of each such edge have the same root. ``parent`` holds ``parent[x] <= x``
    before and after (a root is its own parent and its tree's least id); paths are not
    flattened: jump pointers to read the roots. Lock-free on CuPy (a compare-and-swap of a
    root per join, no rounds). The kernels are connected components' (the "link" step of the
    fused-kernel registry: ``bspgraph/primitives/_cc_kernels.py``).

    Raises
    ------
    ValueError
        A bad ``direction`` or ``sample``, or no union-find kernel for the graph's backend.
    """
    csr = _lists(graph, direction, sample, "link", frontier)
    kernel = fused.lookup("link", graph.backend, "step")
    if kernel is None:
        raise ValueError(
            f"link: no union-find kernel registered for backend {graph.backend.name!r}"
        )
    # every list of a whole undirected graph: each edge is there both ways, once suffices
    whole = frontier is None and sample is None and graph.context.owned is None
    symmetric = whole and not graph.directed
    rows = None if frontier is None else frontier.ids
    sampled = sample is not None
    kernel(
        graph.backend, parent, csr.offsets, csr.indices, rows, symmetric=symmetric, sample=sampled
    )


def link_pairs(graph, parent, a, b) -> None:
    """Union-find: join the trees of the forest ``parent`` that hold ``a[i]`` and ``b[i]``, for
    every ``i`` (the root of one hooks under the smaller root; the pairs may repeat and come in
    any order). Afterwards ``a[i]`` and ``b[i]`` have the same root. As :func:`link`, but
    along pairs rather than edges, with the same kernels (the "link_pairs" step of the
    fused-kernel registry, beside "link"): ``parent[x] <= x`` before and after, paths not
    flattened (jump pointers to read the roots), lock-free on CuPy.

    Its cost is the pairs', not the graph's edges': connected components on several devices
    links the pairs (label a vertex had, label another device gave it), which rejoins the two
    trees that the min of the labels split.

    Parameters
    ----------
    graph : Graph
        Gives the backend; its edges are not read.
    parent : array
        The forest, one entry per vertex, updated in place.
    a, b : arrays of vertex ids
        1-D, of equal length (cast to ``parent``'s dtype, on its array library).

    Raises
    ------
    ValueError
        ``a`` and ``b`` of different shapes or not 1-D, or no kernel for the graph's backend.

    Examples
    --------
    >>> parent = np.arange(6)
    >>> fr.link_pairs(G, parent, np.array([4, 5]), np.array([2, 4]))
    >>> while (parent[parent] != parent).any():  # pointer jumping: the roots
    ...     parent = parent[parent]
    >>> parent.tolist()  # 2, 4 and 5 share the root 2
    [0, 1, 2, 3, 2, 2]
    """
    xp = graph.xp
    a, b = (xp.ascontiguousarray(xp.asarray(ids, dtype=parent.dtype)) for ids in (a, b))
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"link_pairs(a, b): expected two 1-D arrays of one length, got shapes "
            f"{a.shape} and {b.shape}"
        )
    kernel = fused.lookup("link_pairs", graph.backend, "step")
    if kernel is None:
        raise ValueError(
            f"link_pairs: no union-find kernel registered for backend {graph.backend.name!r}"
        )
    kernel(graph.backend, parent, a, b)


def link_replaced(graph, parent, previous, frontier: Frontier) -> None:
    """Union-find after a min combine: link the pairs ``(previous[v], parent[v])`` at the
    vertices ``v`` whose pointer the combine replaced since the last step (another device's
    smaller pointer won), where ``v`` was not a root: ``v`` left that tree for another, and
    the link joins the two again (a root that moves takes its tree along, which stays hung
    from it). ``previous``: the pointers as the last step left them (:func:`flatten`'s
    ``since``); it takes the new ones. The replaced vertices are in ``frontier`` (a combine
    changes no other): looked for among its ids when it holds few, else over every vertex
    (one streaming pass, no gather). Nothing on one device, where no combine runs. The
    "link_replaced" step of the fused-kernel registry, beside "link" and "link_pairs"
    (``bspgraph/primitives/_cc_kernels.py``): on CuPy two passes, no host read.

    Raises
    ------
    ValueError
        No union-find kernel for the graph's backend.
    """
    if graph.context.global_view:
        return
    backend = graph.backend
    kernel = fused.lookup("link_replaced", backend, "step")
    if kernel is None:
        raise ValueError(
            f"link_replaced: no union-find kernel registered for backend {backend.name!r}"
        )
    kernel(backend, parent, previous, None if frontier.wide else backend.index(frontier.ids))


def flatten(graph, parent, since=None) -> Frontier | None:
    """Pointer jumping: every vertex of the forest ``parent`` (``parent[x] <= x``, a root its
    own parent) pointed straight at its root, so that every tree is a star. The "flatten"
    step of the fused-kernel registry, beside "link" (``bspgraph/primitives/_cc_kernels.py``):
    on CuPy one kernel, a thread climbing from each vertex and halving the path on its way (no
    host read); on NumPy a pass over every vertex, then passes over those still below a vertex
    that is no root (no root moves).

    ``since`` (an array like ``parent``, say the pointers a step started from): the Frontier
    of the vertices whose root differs from it is returned, and ``since`` takes the roots; on
    CuPy in the same pass, the frontier's size and out-edges counted there (read when first
    asked for). Without it, None.

    Raises
    ------
    ValueError
        No pointer-jumping kernel for the graph's backend.

    Examples
    --------
    >>> parent = np.array([0, 0, 1, 2, 4])
    >>> before = parent.copy()
    >>> moved = fr.flatten(G, parent, since=before)
    >>> parent.tolist(), moved.ids.tolist(), before.tolist()
    ([0, 0, 0, 0, 4], [2, 3], [0, 0, 0, 0, 4])
    """
    kernel = fused.lookup("flatten", graph.backend, "step")
    if kernel is None:
        raise ValueError(
            f"flatten: no pointer-jumping kernel registered for backend {graph.backend.name!r}"
        )
    moved = kernel(graph.backend, parent, since, graph.cost_degrees()[0])
    if since is None:
        return None
    mask, counts = moved
    return Frontier.from_mask(graph, mask, counted=None if counts is None else (counts, 0, 0))


def _lists(graph, direction: str, sample: int | None, where: str, *restrictions):
    """The CSR of the out- (or in-) lists, of their first ``sample`` entries when given (over
    every row: no ``restrictions``, frontier or sources); ValueError naming ``where`` else."""
    if direction not in ("out", "in"):
        raise ValueError(f"{where}(direction={direction!r}): expected 'out' or 'in'")
    if sample is None:
        return graph.forward if direction == "out" else graph.reverse
    if sample < 1 or any(r is not None for r in restrictions):
        raise ValueError(
            f"{where}(sample={sample!r}): expected k >= 1, over every row (no frontier or sources)"
        )
    return _first_entries(graph, direction, sample)


ORDERED_VERTICES = 1 << 20  # fewer vertices: their values stay in cache whatever the order
SKEW = 32  # a column this many times as frequent as the average one makes the columns skewed
ORDER_AFTER = 4  # whole-list reductions on one graph before its columns are put in order


def gathered(graph, direction: str, values, *, where=None, other=None):
    """``(indices, values)`` through which a reduction over every out- (or in-) list gathers:
    the lists' own indices and ``values``, or, from the ORDER_AFTER-th such reduction on a
    large graph with skewed degrees, the entries renamed in degree order and ``values`` in
    that order (see :func:`_ordered_columns`; each row's terms stay in their order: the same
    results). With ``where`` (a bool per vertex), the values ``where(where, values, other)``:
    where the entries are renamed, taken in the same gather (no pass over every vertex)."""
    ordered = _ordered_columns(graph, direction)
    if ordered is None:
        if where is not None:
            values = graph.xp.where(where, values, other)
        return _lists(graph, direction, None, "neighbor_reduce").indices, values
    columns, indices = ordered[0], _ordered_entries(graph, direction, ordered)
    if where is None:
        return indices, values[columns]
    return indices, ops.where_at(graph.backend, where, values, other, columns)


def _ordered_columns(graph, direction: str):
    """``(columns, indices)``: the out- (or in-) lists' entries renamed so that vertex
    ``columns[j]`` is ``j``, the most frequent entries first (the columns no entry names
    left out); None while the graph is small,
    its columns are not skewed, or it has had fewer than ORDER_AFTER such calls (the renaming
    costs about one reduction and is kept with the graph: one more index array). A product
    gathers ``values[columns]`` through ``indices``: the values read most often share cache
    lines. On an H200, rmat24: renaming 6.3 ms, then a pull of 4.7 instead of 6.7 ms (rows
    in degree order as well made it 4.9)."""
    n = graph.num_vertices
    if n < ORDERED_VERTICES:
        return None
    key = _ordered_key(graph, direction)
    ordered = graph.cache.get(key, 0)
    if isinstance(ordered, int):  # the calls so far
        if ordered + 1 >= ORDER_AFTER:
            graph.cache.pop(key, None)  # (the count) then built, timed as a preparation
            return graph.cached(key, lambda: _order_columns(graph, direction))
        graph.cache[key] = ordered + 1
    return None if isinstance(ordered, int) else ordered


def _ordered_key(graph, direction: str) -> tuple:
    return ("ordered columns", direction if graph.directed else "out")  # undirected: one CSR


def prepare_reduction(
    graph, direction: str = "in", reduce: str = "sum", dtype=np.float64, weighted: bool = True
) -> None:
    """Build now what a reduction over every out- (or in-) list of ``graph`` (a
    :func:`neighbor_reduce` ``reduce`` of ``dtype`` values, ``weighted`` or not) builds in its
    first calls, kept with the graph: the lists, the columns renamed in degree order on a
    large graph of skewed degrees (instead of at the ORDER_AFTER-th reduction), and for a
    sum the backend's structures of a product over every list
    (:meth:`Backend.prepare_product`)."""
    csr = _lists(graph, direction, None, "prepare_reduction")
    indices = csr.indices
    if graph.num_vertices >= ORDERED_VERTICES:
        key = _ordered_key(graph, direction)
        if isinstance(graph.cache.get(key, 0), int):
            graph.cache.pop(key, None)
        ordered = graph.cached(key, lambda: _order_columns(graph, direction))
        indices = indices if ordered is None else _ordered_entries(graph, direction, ordered)
    ops.prepare_rows(graph.backend, csr.offsets)  # a min reads the rows' pieces too
    if reduce == "sum":  # (the backend keeps what it builds with the arrays: a mark here)
        weights = csr.weights if weighted else None
        graph.cached(
            ("product", direction, np.dtype(dtype).str, weights is None),
            lambda: ops.prepare_product(
                graph.backend, csr.offsets, indices, weights, np.dtype(dtype)
            ),
        )


def _order_columns(graph, direction: str):
    csr, xp = _lists(graph, direction, None, "neighbor_reduce"), graph.xp
    n, entries = graph.num_vertices, int(csr.indices.shape[0])
    whole = graph.context.owned is None  # a device's part holds only its own vertices' lists
    if whole and (direction == "in" or not graph.directed):  # how often each is an entry:
        frequency = graph.cost_degrees()[0]  # its out-degree
    else:
        frequency = ops.tally(graph.backend, csr.indices, n)
    if not entries or int(graph.backend.largest(frequency)) * n < SKEW * entries:
        return None
    # only the columns that are entries (not isolated vertices, not those no list of a
    # part names): the gather before each product reads no other value
    named = int(graph.backend.count(frequency > 0))
    columns = xp.argsort(-frequency)[:named].astype(csr.indices.dtype)
    return columns, _renamed(graph, csr, columns)


def _renamed(graph, csr: CSR, columns):
    """``csr``'s entries renamed so that vertex ``columns[j]`` is ``j``."""
    xp = graph.xp
    renamed = xp.empty(graph.num_vertices, dtype=columns.dtype)
    renamed[columns] = xp.arange(columns.shape[0], dtype=columns.dtype)
    return renamed[csr.indices]


def _ordered_entries(graph, direction: str, ordered):
    """``ordered``'s renamed entries: kept, or made again (and kept) where a part that
    pulls its own entries and the others' apart let them go (:func:`_split_lists`)."""
    columns, indices = ordered
    if indices is None:
        indices = _renamed(graph, _lists(graph, direction, None, "neighbor_reduce"), columns)
        graph.cache[_ordered_key(graph, direction)] = (columns, indices)
    return indices


def _first_entries(graph, direction: str, k: int):
    """The CSR of the first ``k`` entries of each of ``graph``'s out- (or in-) lists, cached."""

    def build():
        csr = graph.forward if direction == "out" else graph.reverse
        xp, offsets = graph.xp, csr.offsets
        degrees = xp.minimum(xp.diff(offsets), k)
        sampled = xp.zeros_like(offsets)
        xp.cumsum(degrees, out=sampled[1:])
        _, position = ops.row_entries(graph.backend, offsets[:-1], degrees, int(sampled[-1]))
        weights = None if csr.weights is None else csr.weights[position]
        return CSR(sampled, csr.indices[position], weights)

    return graph.cached(("first entries", direction, k), build)


def prepare_sample(graph, direction: str, k: int) -> None:
    """Build now the CSR of the first ``k`` entries of each out- (or in-) list, which
    :func:`neighbor_reduce` and :func:`link` read with ``sample=k`` (cached with the graph)."""
    _lists(graph, direction, k, "prepare_sample")
