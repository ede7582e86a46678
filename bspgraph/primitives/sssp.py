"""Single-source shortest paths by frontier Bellman-Ford: relax the edges of changed vertices."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..backend import to_host
from ..enactor import Primitive, State, Stats, enact


@dataclass(frozen=True)
class SSSPResult:
    """``distance[v]``: length of a shortest path from the source, ``inf`` if unreachable."""

    distance: np.ndarray
    stats: Stats


class SSSP(Primitive):
    state = (State("distance", "weight", init="inf"),)
    communicate = {"distance": "min"}

    def init_frontier(self, graph, state, *, source):
        state.distance[source] = 0
        return fr.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        relax = fr.functors.relax_min(state.distance, graph.backend)
        return fr.advance(graph, frontier, relax, unique=True, direction="push")

    def traversed_edges(self, graph, state):
        return int(graph.out_degree()[state.distance < np.inf].sum())


def sssp(graph, source: int, **run) -> SSSPResult:
    """Shortest path lengths from ``source`` (weights, or 1 per edge when unweighted).

    Frontier Bellman-Ford: each superstep relaxes the out-edges of the vertices whose distance
    fell in the previous one (min-plus, combiner min), until none falls.

    Raises
    ------
    ValueError
        ``source`` is not a vertex, or a weight is negative or NaN (named with its edge).
    """
    graph.check_vertex(source, name="source", where="sssp")
    if graph.weights is not None and not bool(graph.xp.all(graph.weights >= 0)):
        bad = np.flatnonzero(~(to_host(graph.weights) >= 0))
        if bad.size:
            src, dst, weight = graph.edges()
            edge = int(bad[0])
            raise ValueError(
                f"sssp: edge {int(src[edge])} -> {int(dst[edge])} has weight {weight[edge]}; "
                "weights must be non-negative numbers (NaN and negative are not allowed)"
            )
    state, stats = enact(SSSP(), graph, source=source, **run)
    return SSSPResult(state["distance"], stats)
