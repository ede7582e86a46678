"""Built-in functors: named, vectorised, with fused kernels found in a registry.

Each is a GraphBLAS-like fixed operation: ``visit_unvisited`` is the ``any_pair`` semiring
under a "not yet visited" mask (BFS), ``relax_min`` is ``min_plus`` (SSSP). The generic
``__call__`` runs on NumPy and CuPy alike; ``fused_push`` / ``fused_pull`` do the whole advance
in one kernel (or one gather-reduce) where :func:`bspgraph.backend.fused.lookup` has one for
the functor's name, the graph's backend and the direction, and must agree with it; they
return None where there is none (the operator then takes the generic path); ``fused_push``
also takes the frontier's out-edges where known (``edges``, else None), which bound a push's
output (a vertex an edge at most) and size its list. ``fused_repeat``
advances again from its own output, level after level, on the device: what
``advance(..., repeat=True)`` asks for; it returns None where it does not apply. On one part of
a graph among several, only a ``label_correcting`` functor repeats, and returns every vertex
its levels changed (``every_level``). The kernels
of these two live in ``host`` (NumPy) and ``kernels`` (CuPy); a functor that serves one
algorithm (betweenness's ``count_paths``, PageRank's ``damped_update``) lives beside it in
``bspgraph.primitives`` and subclasses :class:`Functor`.
"""

from __future__ import annotations

from ..backend import fused, ops
from . import host, kernels  # noqa: F401 (their import registers the fused kernels)
from .frontier import Frontier
from .operators import gathered, owned_range, range_rows


class Functor:
    """A named functor with optional fused kernels: ``name`` keys the registry, ``early_exit``
    says whether a pull may stop a candidate at its first kept edge, ``visits_once`` that its
    candidates are the vertices no frontier of its traversal has held (a BFS's: advance then
    counts the edges it leaves), ``pull_is_product`` that its pull is a sparse product over
    the fewer of a level's edges (never dearer than its push on a heavy level)."""

    name: str
    early_exit = False
    visits_once = False
    pull_is_product = False
    # Its repeated levels (``fused_repeat``) stay right on one part of a graph among several:
    # each level only lowers values that the enactor combines by min, and a value another
    # device lowers later is relaxed from again (label-correcting, as Bellman-Ford is).
    label_correcting = False

    def __repr__(self) -> str:
        return f"functors.{self.name}"

    def fused_call(self, graph, direction: str, *args):
        """``kernel(graph, *args)`` with the kernel registered for this functor, ``graph``'s
        backend and ``direction``; None when there is none."""
        kernel = fused.lookup(self.name, graph.backend, direction)
        return None if kernel is None else kernel(graph, *args)


class visit_unvisited(Functor):  # noqa: N801 (a functor named like a function, as GraphBLAS ops are)
    """Set ``depth[dst] = value`` where it is larger (unvisited); keep those ``dst``.

    Also sets ``parent[dst] = src`` for each newly visited vertex when ``parent`` is given (any
    one of the competing sources wins: each is a valid BFS parent). Stops a pull at the first
    frontier in-neighbour (``early_exit``).
    """

    name = "visit_unvisited"
    early_exit = True
    visits_once = True

    def __init__(self, depth, value: int, parent=None):
        self.depth, self.value, self.parent = depth, value, parent

    def __call__(self, src, dst, eid, weight):
        new = self.depth[dst] > self.value
        self.depth[dst[new]] = self.value  # repeated dst all write the same value: benign
        if self.parent is not None:
            self.parent[dst[new]] = src[new]
        return new

    def candidates(self, graph):
        """The vertices this functor may still visit (``depth > value``): a pull's candidates."""
        return ops.greater(graph.backend, self.depth, self.value)

    def fused_push(self, graph, ids, edges):
        return self.fused_call(graph, "push", ids, edges, self.depth, self.value, self.parent)

    def fused_pull(self, graph, frontier, candidates):
        return self.fused_call(
            graph, "pull", frontier.mask, candidates, self.depth, self.value, self.parent
        )

    def fused_repeat(self, graph, frontier):  # levels value, value + 1, ... at once
        return self.fused_call(graph, "repeat", frontier, self.depth, self.value, self.parent)


class relax_min(Functor):  # noqa: N801
    """``distance[dst] = min(distance[dst], distance[src] + weight)``; keep the improved ``dst``.

    Unweighted graphs relax by 1. Correct for repeated ``dst`` (a scatter-min). Pulled, a
    candidate takes the min over all its in-edges from the frontier (no early exit).

    With ``parent``, also sets ``parent[dst] = src`` where ``src`` gave ``dst`` its new
    distance (of several such edges any one wins: each is a shortest-path predecessor); the
    fused kernels keep no parents, so the generic path runs then.
    """

    name = "relax_min"
    label_correcting = True

    def __init__(self, distance, backend, parent=None):
        self.distance, self.backend, self.parent = distance, backend, parent

    def __call__(self, src, dst, eid, weight):
        candidate = self.distance[src] + (1 if weight is None else weight)
        improved = candidate < self.distance[dst]
        ops.scatter_min(self.backend, self.distance, dst[improved], candidate[improved])
        if self.parent is not None:  # the writers whose candidate won (any one of them)
            won = self.backend.xp.flatnonzero(improved)
            won = won[candidate[won] == self.distance[dst[won]]]
            self.parent[dst[won]] = src[won]
        return improved

    def fused_push(self, graph, ids, edges):
        if self.parent is not None:
            return None
        return self.fused_call(graph, "push", ids, edges, self.distance)

    def fused_repeat(self, graph, frontier, every_level: bool = False):  # relaxes again from
        if self.parent is not None:  # its output
            return None
        return self.fused_call(graph, "repeat", frontier, self.distance, every_level)

    def fused_pull(self, graph, frontier, candidates):
        if self.parent is not None:
            return None
        return self.fused_call(graph, "pull", frontier.mask, candidates, self.distance)


@fused.register("relax_min", ("numpy", "cupy"), "pull")
def relax_pull(graph, in_frontier, candidates, distance) -> Frontier:
    """``relax_min`` pulled: min.plus over each candidate's in-edges from the frontier, one
    gather-reduce (lanes per row on the GPU, no atomics); the candidates it improves. A part
    that owns one range of vertices (``owned_range``) reduces the rows of that range only
    (the others hold no in-list here); the improved values are written where they improve,
    with no compaction (on the GPU, no host read)."""
    reverse, xp, n = graph.reverse, graph.xp, graph.num_vertices
    offered = distance if reverse.weights is not None else distance + 1
    indices, offered = gathered(graph, "in", offered, where=in_frontier, other=xp.inf)
    span = owned_range(graph)
    offsets, weights = reverse.offsets, reverse.weights
    if span is not None:
        offsets, indices, weights = range_rows(graph, reverse, indices, weights, span)
    window = slice(0, n) if span is None else span
    best = ops.gather_reduce(graph.backend, offered, offsets, indices, "min", weights=weights)
    held = distance[window]
    improved = best < held
    if candidates is not None:  # (None: every vertex)
        improved &= candidates[window]
    xp.copyto(held, best, where=improved)  # (a view of distance)
    if span is None:
        return Frontier.from_mask(graph, improved)
    mask = xp.zeros(n, dtype=bool)
    mask[window] = improved
    return Frontier.from_mask(graph, mask)


class visit_lanes(Functor):  # noqa: N801
    """A batch's next level, held as ``(row, lane)`` pairs (``depth`` rows of lanes): each
    pair an edge reaches that no level reached before takes depth ``value``; with ``sigma``
    (rows of lanes too), every edge into a pair of that level adds its source pair's count
    (Brandes' path counts). Only fused: light levels several to a launch (:meth:`fused_repeat`
    from the pairs at ``value - 1``: ``frontier.repeat_levels``)."""

    name = "visit_lanes"

    def __init__(self, depth, value: int, sigma=None):
        self.depth, self.value, self.sigma = depth, value, sigma

    def fused_repeat(self, graph, rows, lanes):
        return self.fused_call(graph, "repeat", rows, lanes, self.depth, self.value, self.sigma)
