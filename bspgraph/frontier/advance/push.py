"""Push advance: expand the out-edges of the frontier, load-balanced per edge, not per vertex."""

from __future__ import annotations

import numpy as np

from ...backend import ops
from ..frontier import Frontier
from ..operators import owned_range

CHUNK_EDGES = 1 << 24  # edges per functor call: bounds the O(E) temporaries of a superstep
DENSE_RATIO = 16  # a push output of more than num_vertices / DENSE_RATIO edges goes to a mask


def run(graph, frontier: Frontier, op, *, unique: bool) -> Frontier:
    """Call ``op(src, dst, eid, weight)`` on every out-edge of ``frontier``; return the kept ``dst``.

    Work is assigned per edge: an exclusive scan of the frontier's degrees and a search give
    each edge slot its source, so one vertex of degree 10^6 costs no more than 10^6 leaves.
    """
    xp, ids = graph.xp, sources(graph, frontier)
    fused = getattr(op, "fused_push", None)
    # (a kernel's list has room for the frontier's out-edges, where known: one vertex an edge)
    result = None if fused is None else fused(graph, ids, frontier.out_edges)  # None: none here
    if result is not None:
        return result
    starts, degrees = rows_of(graph, ids)
    total = int(graph.backend.total(degrees)) if ids.size else 0
    if total == 0:
        return Frontier.empty(graph)
    if total == graph.num_edges:  # every edge: the cached COO rows replace the search
        kept = [
            _every_edge(graph, op, lo, min(lo + CHUNK_EDGES, total))
            for lo in range(0, total, CHUNK_EDGES)
        ]
    else:
        kept = [
            _expand(graph, op, ids[lo:hi], starts[lo:hi], degrees[lo:hi])
            for lo, hi in _chunks(degrees, total, xp)
        ]
    dst = kept[0] if len(kept) == 1 else xp.concatenate(kept)
    return dedupe(graph, dst) if unique else Frontier.from_ids(graph, dst)


def sources(graph, frontier: Frontier):
    """The ids of ``frontier``'s vertices whose out-lists ``graph`` holds: on a part that holds
    only its own range's lists (``owned_range``), those in the range, where picking them costs
    no host read (the others have no out-edge here); else every member."""
    span = owned_range(graph)
    if (
        span is None or graph.backend.capabilities.costly_supersteps
    ):  # (a GPU: a compaction reads a count)
        return frontier.ids
    if frontier.is_dense:
        ids = graph.backend.nonzero(frontier.mask[span], graph.indices.dtype)
        return ids + graph.indices.dtype.type(span.start)
    ids = frontier.ids
    return ids[(ids >= span.start) & (ids < span.stop)]


def rows_of(graph, ids):
    """Where the out-edges of the vertices ``ids`` start in ``graph``'s CSR, and how many."""
    starts = graph.offsets[ids]
    return starts, graph.offsets[ids + 1] - starts


def _expand(graph, op, ids, starts, degrees):
    src, dst, eid = ops.expand(graph.backend, ids, starts, degrees, graph.indices)
    weight = None if graph.weights is None else graph.weights[eid]
    return kept(dst, op(src, dst, eid, weight))


def _every_edge(graph, op, lo: int, hi: int):
    eid = graph.xp.arange(lo, hi, dtype=np.int64)
    src, dst = graph.forward.rows(graph.backend)[lo:hi], graph.indices[lo:hi]
    weight = None if graph.weights is None else graph.weights[lo:hi]
    return kept(dst, op(src, dst, eid, weight))


def kept(dst, keep):
    """The destinations a functor kept: ``keep`` is a mask, None (all) or False (none)."""
    if keep is None:
        return dst
    return dst[:0] if keep is False else dst[keep]


def _chunks(degrees, total: int, xp, chunk: int = CHUNK_EDGES):
    """(lo, hi) ranges of frontier positions holding about ``chunk`` edges each."""
    if total <= chunk:
        return [(0, int(degrees.shape[0]))]
    scan = xp.cumsum(degrees)
    marks = xp.arange(chunk, total, chunk, dtype=scan.dtype)
    cuts = [0, *(int(c) for c in xp.searchsorted(scan, marks, side="right")), len(degrees)]
    return [(lo, hi) for lo, hi in zip(cuts, cuts[1:]) if hi > lo]


def dedupe(graph, ids) -> Frontier:
    """The frontier of the distinct ``ids``: sorted when few, a dense mask when many."""
    if ids.shape[0] * DENSE_RATIO < graph.num_vertices:
        return Frontier.from_ids(graph, ops.unique(graph.backend, ids))
    return Frontier.from_mask(graph, ops.mask_of(graph.backend, ids, graph.num_vertices))
