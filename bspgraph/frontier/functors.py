"""Built-in advance functors: named, vectorised, with a fused CuPy kernel picked up on the GPU.

Each is a GraphBLAS-like fixed operation: ``visit_unvisited`` is the ``any_pair`` semiring
under a "not yet visited" mask (BFS), ``relax_min`` is ``min_plus`` (SSSP). The generic
``__call__`` runs on NumPy and CuPy alike; ``fused_push`` does the whole push advance in one
kernel (edge expansion, test, atomic update, distinct output) and must agree with it.
"""

from __future__ import annotations

from . import kernels


class visit_unvisited:  # noqa: N801 (a functor named like a function, as GraphBLAS ops are)
    """Set ``depth[dst] = value`` where it is larger (unvisited); keep those ``dst``.

    Also sets ``parent[dst] = src`` for each newly visited vertex when ``parent`` is given (any
    one of the competing sources wins: each is a valid BFS parent). Stops a pull at the first
    frontier in-neighbour (``early_exit``).
    """

    name = "visit_unvisited"
    early_exit = True

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

    def fused_push(self, graph, ids, starts, degrees):
        return kernels.visit_push(graph, ids, starts, degrees, self.depth, self.value, self.parent)

    def fused_pull(self, graph, in_frontier, candidates):
        return kernels.visit_pull(graph, in_frontier, candidates, self.depth, self.value,
                                  self.parent)  # fmt: skip


class relax_min:  # noqa: N801
    """``distance[dst] = min(distance[dst], distance[src] + weight)``; keep the improved ``dst``.

    Unweighted graphs relax by 1. Correct for repeated ``dst`` (a scatter-min).
    """

    name = "relax_min"
    early_exit = False

    def __init__(self, distance, backend):
        self.distance, self.backend = distance, backend

    def __repr__(self) -> str:
        return f"functors.{self.name}"

    def __call__(self, src, dst, eid, weight):
        candidate = self.distance[src] + (1 if weight is None else weight)
        improved = candidate < self.distance[dst]
        self.backend.scatter_min(self.distance, dst[improved], candidate[improved])
        return improved

    def fused_push(self, graph, ids, starts, degrees):
        return kernels.relax_push(graph, ids, starts, degrees, self.distance)
