"""Pull advance: each candidate vertex scans its in-edges for a frontier member (early exit)."""

from __future__ import annotations

import numpy as np

from ...backend import ops
from ..frontier import Frontier
from .push import kept

EARLY_ROUNDS = 4  # in-edges tried one at a time before the rest are scanned in one pass


def run(graph, frontier: Frontier, op, *, candidates, early_exit: bool) -> Frontier:
    """Call ``op(src, dst, eid, weight)`` on in-edges ``src -> dst`` with ``src`` in ``frontier``
    and ``dst`` a candidate (``candidates``: a bool mask, "all", or "functor": those of
    ``op.candidates(graph)``); return the candidates with a kept edge (a dense frontier).

    A fused pull takes the frontier and the candidates' mask, or None for "all" and
    "functor": it tests the functor's own condition on every vertex (``visit_unvisited``:
    unvisited), with no mask built. With
    ``early_exit`` a candidate stops at its first kept edge, as in Beamer's bottom-up step:
    the first EARLY_ROUNDS in-edges are tried one per round, then the rest in one pass.
    """
    xp, reverse = graph.xp, graph.reverse
    fused = getattr(op, "fused_pull", None)
    if fused is not None and early_exit == op.early_exit:
        own = None if isinstance(candidates, str) else candidates
        reached = fused(graph, frontier, own)  # None: no kernel on this backend
        if reached is not None:
            return reached
    in_frontier = frontier.mask
    if isinstance(candidates, str):  # "all" or "functor"
        every = candidates == "all"
        candidates = xp.ones(graph.num_vertices, dtype=bool) if every else op.candidates(graph)
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
    total = int(graph.backend.total(degrees)) if degrees.size else 0
    if total and total == reverse.indices.shape[0]:  # every in-edge: cached rows, no search
        position = xp.arange(total, dtype=np.int64)
        hit = xp.flatnonzero(in_frontier[reverse.indices])
        position, dst = position[hit], reverse.rows(graph.backend)[hit]
        reached[_visit(graph, op, reverse.indices[position], dst, position)] = True
    elif total:
        segment, position = ops.row_entries(graph.backend, starts, degrees, total)
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
