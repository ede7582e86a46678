"""Built-in functors: named, vectorised, with a fused CuPy kernel picked up on the GPU.

Each is a GraphBLAS-like fixed operation: ``visit_unvisited`` is the ``any_pair`` semiring
under a "not yet visited" mask (BFS), ``relax_min`` is ``min_plus`` (SSSP). The generic
``__call__`` runs on NumPy and CuPy alike;
``fused_push`` / ``fused_pull`` do the whole advance in one kernel (or one gather-reduce) on
the backends named in ``fused_on`` and must agree with it. ``fused_repeat`` (backends in
``repeat_on``) advances again from its own output, level after level, on the device: what
``advance(..., repeat=True)`` asks for; it returns None where it does not apply.
``count_paths`` is Brandes' forward step (betweenness), fused on CuPy. ``damped_update`` is a
vertex step (PageRank's), called with the graph.
"""

from __future__ import annotations

from . import host, kernels
from .frontier import Frontier
from .operators import gathered


class visit_unvisited:  # noqa: N801 (a functor named like a function, as GraphBLAS ops are)
    """Set ``depth[dst] = value`` where it is larger (unvisited); keep those ``dst``.

    Also sets ``parent[dst] = src`` for each newly visited vertex when ``parent`` is given (any
    one of the competing sources wins: each is a valid BFS parent). Stops a pull at the first
    frontier in-neighbour (``early_exit``).
    """

    name = "visit_unvisited"
    early_exit = True
    fused_on = ("numpy", "cupy")
    repeat_on = ("numpy", "cupy")  # fused_repeat: levels value, value + 1, ... at once

    def __init__(self, depth, value: int, parent=None):
        self.depth, self.value, self.parent = depth, value, parent

    def __repr__(self) -> str:
        return f"functors.{self.name}"

    def __call__(self, src, dst, eid, weight):
        new = self.depth[dst] > self.value
        self.depth[dst[new]] = self.value  # repeated dst all write the same value: benign
        if self.parent is not None:
            self.parent[dst[new]] = src[new]
        return new

    def candidates(self, graph):
        """The vertices this functor may still visit (``depth > value``): a pull's candidates."""
        return graph.backend.greater(self.depth, self.value)

    def fused_push(self, graph, ids):
        fused = kernels if graph.backend.is_gpu else host
        return fused.visit_push(graph, ids, self.depth, self.value, self.parent)

    def fused_pull(self, graph, in_frontier, candidates):
        fused = kernels if graph.backend.is_gpu else host
        return fused.visit_pull(graph, in_frontier, candidates, self.depth, self.value,
                                self.parent)  # fmt: skip

    def fused_repeat(self, graph, frontier):
        fused = kernels if graph.backend.is_gpu else host
        return fused.visit_levels(graph, frontier, self.depth, self.value, self.parent)


class relax_min:  # noqa: N801
    """``distance[dst] = min(distance[dst], distance[src] + weight)``; keep the improved ``dst``.

    Unweighted graphs relax by 1. Correct for repeated ``dst`` (a scatter-min). Pulled, a
    candidate takes the min over all its in-edges from the frontier (no early exit).
    """

    name = "relax_min"
    early_exit = False
    fused_on = ("numpy", "cupy")
    repeat_on = ("cupy",)  # fused_repeat: relaxes again from the vertices it improved

    def __init__(self, distance, backend):
        self.distance, self.backend = distance, backend

    def __repr__(self) -> str:
        return f"functors.{self.name}"

    def __call__(self, src, dst, eid, weight):
        candidate = self.distance[src] + (1 if weight is None else weight)
        improved = candidate < self.distance[dst]
        self.backend.scatter_min(self.distance, dst[improved], candidate[improved])
        return improved

    def fused_push(self, graph, ids):
        fused = kernels if graph.backend.is_gpu else host
        return fused.relax_push(graph, ids, self.distance)

    def fused_repeat(self, graph, frontier):
        return kernels.relax_levels(graph, frontier, self.distance)

    def fused_pull(self, graph, in_frontier, candidates):
        """min.plus over each candidate's in-edges from the frontier: one gather-reduce (lanes
        per row on the GPU, no atomics); the candidates it improves."""
        reverse, xp, distance = graph.reverse, graph.xp, self.distance
        offered = xp.where(in_frontier, distance if reverse.weights is not None else distance + 1,
                           xp.inf)  # fmt: skip
        indices, offered = gathered(graph, "in", offered)
        best = self.backend.gather_reduce(offered, reverse.offsets, indices, "min",
                                          weights=reverse.weights)  # fmt: skip
        improved = candidates & (best < distance)
        distance[improved] = best[improved]
        return Frontier.from_mask(graph, improved)


class count_paths:  # noqa: N801
    """Brandes' forward step into level ``value``: each ``dst`` not reached before (depth
    ``value`` or more) gets depth ``value`` and adds ``sigma[src]`` to ``sigma[dst]``, the
    ``plus_times`` semiring on the edges into the next level; keep those ``dst``. Path counts
    are whole numbers, exact in float64 up to 2^53 in any order of the additions."""

    name = "count_paths"
    early_exit = False
    fused_on = ("cupy",)

    def __init__(self, depth, sigma, value: int, backend):
        self.depth, self.sigma, self.value, self.backend = depth, sigma, value, backend

    def __repr__(self) -> str:
        return f"functors.{self.name}"

    def __call__(self, src, dst, eid, weight):
        on_path = self.depth[dst] >= self.value  # unvisited, or reached this superstep
        self.depth[dst[on_path]] = self.value
        self.backend.scatter_add(self.sigma, dst[on_path], self.sigma[src[on_path]])
        return on_path

    def fused_push(self, graph, ids):
        return kernels.count_push(graph, ids, self.depth, self.value, self.sigma)


class damped_update:  # noqa: N801
    """PageRank's vertex step over the vertices ``graph`` owns. With ``pulled`` (each vertex's
    sum over its in-edges of ``contribution``): ``rank = alpha * pulled + (alpha * dangling +
    1 - alpha) * teleport`` and ``error`` = the L1 change of ``rank``. Then, with or without it
    (the start vector), each vertex publishes ``contribution = rank * scale`` and ``dangling``
    becomes the rank held by sinks, ``sum(rank * sink)``. ``teleport``: an array, or a float
    when uniform; ``error`` and ``dangling`` are 0-d arrays. Returns the rank array: ``rank``
    updated in place, or on a GPU a new one (one fused pass, 3x faster than in place)."""

    name = "damped_update"

    def __init__(self, rank, contribution, scale, sink, teleport, error, dangling, alpha: float):
        self.rank, self.contribution, self.scale, self.sink = rank, contribution, scale, sink
        self.teleport, self.error, self.dangling, self.alpha = teleport, error, dangling, alpha

    def __repr__(self) -> str:
        return f"functors.{self.name}"

    def __call__(self, graph, pulled=None):
        if graph.backend.is_gpu:
            return kernels.damped_update(graph, pulled, self.rank, self.contribution, self.scale,
                                         self.sink, self.teleport, self.error, self.dangling,
                                         self.alpha)  # fmt: skip
        mine = (
            slice(None) if graph.context.owned is None else graph.owned_ids()
        )  # views on one device
        alpha, teleport = self.alpha, self.teleport
        if pulled is not None:
            pulled = pulled[mine]
            pulled *= alpha
            pulled += (alpha * self.dangling + (1 - alpha)) * (
                teleport if isinstance(teleport, float) else teleport[mine]
            )
            change = pulled - self.rank[mine]
            self.error[...] = graph.xp.abs(change, out=change).sum()
            self.rank[mine] = pulled
        rank = self.rank[mine]
        self.contribution[mine] = rank * self.scale[mine]
        self.dangling[...] = (rank * self.sink[mine]).sum()  # (not BLAS: its threads spin)
        return self.rank
