"""Single-source shortest paths by frontier Bellman-Ford in delta-stepping order."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..backend import ops, to_host
from ..enactor import Follow, Primitive, State, Stats, enact
from ..exceptions import DistanceOverflow
from ..frontier.operators import bucket_width, prepare_reduction
from ..graph.graph import register_preparation


@dataclass(frozen=True)
class SSSPResult:
    """``distance[v]``: length of a shortest path from the source, ``inf`` if unreachable;
    ``parent[v]``: the vertex before ``v`` on a shortest path, -1 for the source and the
    unreachable vertices (None unless ``parents=True``)."""

    distance: np.ndarray
    stats: Stats
    parent: np.ndarray | None = None


class SSSP(Primitive):
    """Frontier Bellman-Ford, ordered as delta-stepping: a superstep relaxes the frontier's
    vertices within ``delta`` of its smallest distance and keeps the rest for later
    (:func:`~bspgraph.frontier.near_far`), so few vertices are relaxed before their distance
    is final (option ``delta``: a width, None to relax them all, or "auto", the default: the
    operator's choice). Option ``parents``: also keep a shortest-path predecessor of each
    vertex, travelling with its distance."""

    state = (
        State("distance", "weight", init="inf"),
        State("parent", "vertex", init=-1, when="parents", holds="ids"),
    )
    communicate = {"distance": "min", "parent": Follow("distance")}
    params = {"source": "id"}
    needs_all = True  # a pull reads the distance of every in-neighbour, owned here or not
    pull_kind = "fused"  # relax_min's pull: a min-plus row reduction (memory.estimate)
    reduces_every_list = True  # ... over every in-list, through operators.gathered

    @property
    def push_kind(self) -> str:  # relax_min's push kernel; with parents, the functor's chunks
        return "generic" if self.options.get("parents") else "fused"

    def init_frontier(self, graph, state, *, source):
        state.distance[source] = 0
        return fr.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        delta = self.options.get("delta", "auto")
        near, later = fr.near_far(graph, frontier, state.distance, delta)
        relax = fr.functors.relax_min(state.distance, graph.backend, state.parent)
        # a pull's candidates: any vertex may improve (the same on every device)
        improved = fr.advance(graph, near, relax, unique=True, candidates="all", repeat=not later)
        return fr.Frontier.union(graph, improved, later) if later else improved  # (its levels)

    def traversed_edges(self, graph, state):
        return ops.total_below(graph.backend, graph.out_degree(), state.distance, np.inf)

    def prepare(self, graph):
        super().prepare(graph)
        fr.level_limits(graph)  # the most a repeated advance (GPU) takes on
        fr.prepare_levels(graph, weighted=True)  # (NumPy: what every distance at once reads)
        graph.weight_range()
        bucket_width(graph)  # near_far's (where it buckets)


def _prepare(graph) -> None:
    """SSSP's preparation, and up front what its pulls over every in-list build lazily."""
    SSSP().prepare(graph)
    prepare_reduction(graph, "in", "min")


register_preparation("sssp", _prepare)


def sssp(graph, source: int, *, parents: bool = False, **run) -> SSSPResult:
    """Shortest path lengths from ``source`` (weights, or 1 per edge when unweighted).

    Frontier Bellman-Ford: each superstep relaxes the out-edges of vertices whose distance fell
    (min-plus, combiner min), until none falls; the lightest of them first (delta-stepping).
    With ``parents``, also a shortest-path tree as ``parent`` (the edge that last lowered each
    distance; the fused kernels keep no parents, so this runs the generic relaxation).

    Raises
    ------
    ValueError
        ``source`` is not a vertex, or a weight is negative or NaN (named with its edge).
    DistanceOverflow
        A reachable vertex's distance overflows the weights' float type (checked only when
        the heaviest weight times ``num_vertices - 1`` could).
    """
    graph.check_vertex(source, name="source", where="sssp")
    if not graph.weight_range()[0] >= 0:  # (False for NaN; 1 when unweighted)
        bad = np.flatnonzero(~(to_host(graph.weights) >= 0))
        if bad.size:
            src, dst, weight = graph.edges()
            edge = int(bad[0])
            raise ValueError(
                f"sssp: edge {int(src[edge])} -> {int(dst[edge])} has weight {weight[edge]}; "
                "weights must be non-negative numbers (NaN and negative are not allowed)"
            )
    overflow = _may_overflow(graph)
    with np.errstate(over="ignore") if overflow else contextlib.nullcontext():  # told apart below
        state, stats = enact(SSSP(parents=parents), graph, source=source, **run)
    distance = state["distance"]
    if overflow and not np.isfinite(distance).all():
        from .bfs import bfs  # inf is unreachable, unless the sum overflowed: BFS tells them apart

        lost = np.flatnonzero((bfs(graph, source, **run).depth >= 0) & ~np.isfinite(distance))
        if lost.size:
            raise DistanceOverflow(
                f"sssp: vertex {int(lost[0])} is reachable from {source}, but its distance "
                f"overflows {distance.dtype} (the heaviest weight is "
                f"{graph.weight_range()[1]:.3g}); hint: build the graph with float64 weights"
            )
    return SSSPResult(distance, stats, state["parent"])


def _may_overflow(graph) -> bool:
    """Whether a shortest path (at most num_vertices - 1 edges) could pass the largest value of
    the weights' float type."""
    if graph.weights is None or graph.weights.dtype.kind != "f":
        return False
    largest = float(np.finfo(graph.weights.dtype).max)
    return graph.weight_range()[1] * max(graph.num_vertices - 1, 1) >= largest
