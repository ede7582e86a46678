"""Push advance: expand the out-edges of the frontier, load-balanced per edge, not per vertex."""

from __future__ import annotations

import numpy as np

from ...backend import row_positions as positions
from ..frontier import Frontier, distinct

CHUNK_EDGES = 1 << 24  # edges per functor call: bounds the O(E) temporaries of a superstep
DENSE_RATIO = 16  # a push output of more than num_vertices / DENSE_RATIO edges goes to a mask
HOST_CHUNK_EDGES = 1 << 22  # ... on NumPy's fused paths: smaller temporaries, fewer page faults


def run(graph, frontier: Frontier, op, *, unique: bool) -> Frontier:
    """Call ``op(src, dst, eid, weight)`` on every out-edge of ``frontier``; return the kept ``dst``.

    Work is assigned per edge: an exclusive scan of the frontier's degrees and a search give
    each edge slot its source, so one vertex of degree 10^6 costs no more than 10^6 leaves.
    """
    xp, offsets = graph.xp, graph.offsets
    ids = frontier.ids
    host_fused = None if graph.backend.is_gpu else _HOST_FUSED.get(getattr(op, "name", None))
    if host_fused is not None:
        ids = ids.astype(np.intp, copy=False)  # NumPy indexes with intp ~4x faster than int32
        visit = unique and op.name == "visit_unvisited"
        kernel = graph.backend.accelerated("visit_push") if visit else None
        if kernel is not None:  # numba, when installed: the whole superstep in one pass
            parent = graph.indices[:0] if op.parent is None else op.parent
            return Frontier.from_ids(graph, kernel(offsets, graph.indices, ids, op.depth,
                                                   op.value, parent))  # fmt: skip
    starts = offsets[ids]
    degrees = offsets[ids + 1] - starts
    fused = getattr(op, "fused_push", None)
    if fused is not None and graph.backend.name in op.fused_on:
        return fused(graph, ids, starts, degrees)
    total = int(degrees.sum()) if ids.size else 0
    if total == 0:
        return Frontier.empty(graph)
    if unique and host_fused is not None:
        return host_fused(graph, op, ids, starts, degrees, total)
    if total == graph.num_edges:  # every edge: the cached COO rows replace the search
        kept = [_every_edge(graph, op, lo, min(lo + CHUNK_EDGES, total))
                for lo in range(0, total, CHUNK_EDGES)]  # fmt: skip
    else:
        kept = [
            _expand(graph, op, ids[lo:hi], starts[lo:hi], degrees[lo:hi])
            for lo, hi in _chunks(degrees, total, xp)
        ]
    dst = kept[0] if len(kept) == 1 else xp.concatenate(kept)
    return dedupe(graph, dst) if unique else Frontier.from_ids(graph, dst)


def _visit_host(graph, op, ids, starts, degrees, total: int) -> Frontier:
    """``functors.visit_unvisited`` fused on NumPy: no edge ids or weights are gathered, and the
    output is deduplicated in a mask when it may be large, else by a sort."""
    depth, value, parent = op.depth, op.value, op.parent
    dense = total * DENSE_RATIO >= graph.num_vertices
    reached = np.zeros(graph.num_vertices, dtype=bool) if dense else []
    for lo, hi in _chunks(degrees, total, np, HOST_CHUNK_EDGES):
        dst = graph.indices[positions(starts[lo:hi], degrees[lo:hi])].astype(np.intp)
        src = None if parent is None else np.repeat(ids[lo:hi], degrees[lo:hi])
        if dense:
            fresh = np.zeros(graph.num_vertices, dtype=bool)
            fresh[dst] = True
            fresh &= depth > value
            depth[fresh] = value
            reached |= fresh
            if parent is not None:  # any one of the frontier sources is a valid parent
                keep = np.flatnonzero(fresh[dst])
                parent[dst[keep]] = src[keep]
        else:
            keep = np.flatnonzero(depth[dst] > value)
            dst = dst[keep]
            depth[dst] = value
            if parent is not None:
                parent[dst] = src[keep]
            reached.append(dst)
    if dense:
        return Frontier.from_mask(graph, reached)
    return Frontier.from_ids(
        graph, distinct(reached[0] if len(reached) == 1 else np.concatenate(reached))
    )


def _relax_host(graph, op, ids, starts, degrees, total: int) -> Frontier:
    """``functors.relax_min`` fused on NumPy: sources' distances repeated (not gathered per
    edge), one scatter-min of the improving candidates, the output deduplicated as above."""
    distance, n = op.distance, graph.num_vertices
    improved = []
    for lo, hi in _chunks(degrees, total, np, HOST_CHUNK_EDGES):
        eid = positions(starts[lo:hi], degrees[lo:hi])
        dst = graph.indices[eid].astype(np.intp)
        candidate = np.repeat(distance[ids[lo:hi]], degrees[lo:hi])
        candidate += 1 if graph.weights is None else graph.weights[eid]
        better = np.flatnonzero(candidate < distance[dst])  # indices: faster than a bool mask
        dst = dst[better]
        np.minimum.at(distance, dst, candidate[better])
        improved.append(dst)
    dst = improved[0] if len(improved) == 1 else np.concatenate(improved)
    if dst.shape[0] * DENSE_RATIO < n:
        return Frontier.from_ids(graph, distinct(dst))
    mask = np.zeros(n, dtype=bool)
    mask[dst] = True
    return Frontier.from_mask(graph, mask)


_HOST_FUSED = {"visit_unvisited": _visit_host, "relax_min": _relax_host}


def _expand(graph, op, ids, starts, degrees):
    backend = graph.backend
    if backend.is_gpu:
        total = int(degrees.sum())
        segment = backend.segment_index(degrees, total)
        first_slot = backend.xp.cumsum(degrees) - degrees
        eid = (
            backend.xp.arange(total, dtype=np.int64)
            + (starts.astype(np.int64) - first_slot)[segment]
        )
        src, dst = ids[segment], graph.indices[eid]
    else:
        eid = positions(starts, degrees)
        src, dst = np.repeat(ids, degrees), graph.indices[eid].astype(np.intp)
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
        return Frontier.from_ids(
            graph, graph.xp.unique(ids) if graph.backend.is_gpu else distinct(ids)
        )
    mask = graph.xp.zeros(graph.num_vertices, dtype=bool)
    mask[ids] = True
    return Frontier.from_mask(graph, mask)
