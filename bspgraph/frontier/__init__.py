"""Frontiers and the operators on them: advance, filter, compute, near_far, neighbor_reduce,
link, link_pairs, link_replaced, flatten.

A functor is a plain function of whole arrays, written with the array module so one body runs
on NumPy and CuPy. An advance functor maps ``(src, dst, eid, weight)`` to a keep-mask (None: keep
all, False: keep none); a filter predicate maps ``ids`` to one. The arrays are equal-length, 1-D and
unordered; a functor may be called in chunks, and ``dst`` may repeat, so scatter writes must be
idempotent (every writer stores the same value) or go through ``backend.scatter_min/add``::

    def visit(src, dst, eid, weight):
        new = depth[dst] > level + 1          # not reached yet
        depth[dst[new]] = level + 1           # every writer stores the same value
        return new
    next_frontier = fr.advance(G, frontier, visit, unique=True)

``functors`` holds built-in functors with fused GPU kernels (``visit_unvisited``, ``relax_min``).
``advance_lanes`` and ``reduce_lanes`` move a batched frontier (b traversals, a lane each) one
level in one sparse product (:mod:`bspgraph.frontier.lanes`).
"""

from . import functors
from .advance import advance, count_out_edges, many_out_edges
from .frontier import Frontier, read_counts
from .host import prepare_levels
from .kernels import level_limits
from .lanes import advance_lanes, advance_pairs, reduce_lanes, reduce_pairs, repeat_levels
from .operators import (
    compute,
    filter,  # noqa: A004 (Gunrock's name; call as fr.filter)
    flatten,
    link,
    link_pairs,
    link_replaced,
    near_far,
    neighbor_reduce,
)

__all__ = [
    "Frontier",
    "advance",
    "advance_lanes",
    "advance_pairs",
    "compute",
    "count_out_edges",
    "filter",
    "functors",
    "flatten",
    "level_limits",
    "link",
    "link_pairs",
    "link_replaced",
    "many_out_edges",
    "near_far",
    "neighbor_reduce",
    "prepare_levels",
    "read_counts",
    "reduce_lanes",
    "reduce_pairs",
    "repeat_levels",
]
