"""Pull advance: each candidate vertex scans its in-edges for a frontier member (early exit)."""

from __future__ import annotations

import numpy as np

from ..frontier import Frontier
from .push import HOST_CHUNK_EDGES, _chunks, kept, positions

EARLY_ROUNDS = 4  # in-edges tried one at a time before the rest are scanned in one pass
SPMV_SHARE = 4  # NumPy: candidates holding > 1/SPMV_SHARE of the in-edges pull by one product


def run(graph, frontier: Frontier, op, *, candidates, early_exit: bool) -> Frontier:
    """Call ``op(src, dst, eid, weight)`` on in-edges ``src -> dst`` with ``src`` in ``frontier``
    and ``dst`` a candidate; return the candidates with a kept edge (a dense frontier).

    With ``early_exit`` a candidate stops at its first kept edge, as in Beamer's bottom-up step:
    the first EARLY_ROUNDS in-edges are tried one per round, then the rest in one pass.
    """
    xp, reverse = graph.xp, graph.reverse
    in_frontier = frontier.mask
    fused = getattr(op, "fused_pull", None)
    if (fused is not None and graph.backend.name in op.fused_on
            and early_exit == op.early_exit):  # fmt: skip
        reached = fused(graph, in_frontier, candidates)
        return Frontier.empty(graph) if reached is None else reached
    if not graph.backend.is_gpu and getattr(op, "name", None) == "visit_unvisited":
        return _visit_host(graph, op, in_frontier, candidates)
    reached = xp.zeros(graph.num_vertices, dtype=bool)
    active = xp.flatnonzero(candidates)
    starts = reverse.offsets[active].astype(np.int64)
    ends = reverse.offsets[active + 1].astype(np.int64)
    rounds = EARLY_ROUNDS if early_exit else 0
    for _ in range(rounds):
        live = starts < ends
        active, starts, ends = active[live], starts[live], ends[live]
        if active.size == 0:
            break
        hit = xp.flatnonzero(in_frontier[reverse.indices[starts]])
        if hit.size:
            kept = _visit(graph, op, reverse.indices[starts[hit]], active[hit], starts[hit])
            reached[kept] = True
            live = ~reached[active]
            active, starts, ends = active[live], starts[live], ends[live]
        starts = starts + 1
    degrees = xp.maximum(ends - starts, 0)
    total = int(degrees.sum()) if degrees.size else 0
    if total and total == reverse.indices.shape[0]:  # every in-edge: cached rows, no search
        position = xp.arange(total, dtype=np.int64)
        hit = xp.flatnonzero(in_frontier[reverse.indices])
        position, dst = position[hit], reverse.rows(graph.backend)[hit]
        reached[_visit(graph, op, reverse.indices[position], dst, position)] = True
    elif total:
        segment = graph.backend.segment_index(degrees, total)
        first_slot = xp.cumsum(degrees) - degrees
        position = xp.arange(total, dtype=np.int64) + (starts - first_slot)[segment]
        hit = xp.flatnonzero(in_frontier[reverse.indices[position]])
        position, dst = position[hit], active[segment[hit]]
        reached[_visit(graph, op, reverse.indices[position], dst, position)] = True
    return Frontier.from_mask(graph, reached)


def _visit(graph, op, src, dst, position):
    """Apply ``op`` to in-edges at reverse-CSR ``position``; return the kept ``dst``."""
    reverse = graph.reverse
    eid = position if reverse.edge_ids is None else reverse.edge_ids[position]
    weight = None if reverse.weights is None else reverse.weights[position]
    return kept(dst, op(src, dst, eid, weight))


def _visit_host(graph, op, in_frontier, candidates) -> Frontier:
    """``functors.visit_unvisited`` pulled on NumPy, without early exit: vectorised, a
    candidate's whole in-list is as cheap to scan as its first entries. Candidates holding most
    in-edges pull by one boolean sparse product over every row (scipy's C loop); fewer scan
    their own in-edges (``reduceat`` per row, or every hit when parents are kept). Dense masks
    are indexed through their ids (NumPy's boolean indexing is slower on random masks)."""
    reverse, n = graph.reverse, graph.num_vertices
    depth, value, parent = op.depth, op.value, op.parent
    candidates = candidates & (depth > value)  # the functor keeps only the unvisited
    active = np.flatnonzero(candidates)
    degrees = graph.in_degree()[active]
    total = int(degrees.sum())
    if parent is None and total * SPMV_SHARE > reverse.indices.shape[0]:
        ones = graph.backend.edge_values(reverse.indices, None, bool)
        reached = graph.backend.spmv(reverse.offsets, reverse.indices, ones, in_frontier, n)
        reached &= candidates
        ids = np.flatnonzero(reached)
    else:
        live = np.flatnonzero(degrees)
        active, degrees = active[live], degrees[live]
        starts = reverse.offsets[active]
        found = []
        for lo, hi in _chunks(degrees, total, np, HOST_CHUNK_EDGES) if total else ():
            src = reverse.indices[positions(starts[lo:hi], degrees[lo:hi])]
            hit = in_frontier[src]
            if parent is None:
                first = np.cumsum(degrees[lo:hi]) - degrees[lo:hi]
                found.append(active[lo:hi][np.logical_or.reduceat(hit, first)])
            else:  # every frontier in-neighbour is a valid parent: the last one written wins
                dst = np.repeat(active[lo:hi], degrees[lo:hi])[hit]
                parent[dst] = src[hit]
                found.append(dst)
        ids = np.concatenate(found) if found else active[:0]
        reached = np.zeros(n, dtype=bool)
        reached[ids] = True
        if parent is not None:
            ids = np.flatnonzero(reached)
    depth[ids] = value
    ids = ids.astype(graph.indices.dtype)  # sorted and distinct, as a mask converts to
    return Frontier(n, graph.backend, ids=ids, mask=reached)
