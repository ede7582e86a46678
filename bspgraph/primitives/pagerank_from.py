"""PageRank from a start vector, with a dangling distribution of its own (networkx's
``pagerank(nstart=..., dangling=...)``)."""

from __future__ import annotations

import numpy as np

from ..enactor import Scalar, State, Stats, enact
from ..graph.graph import register_preparation
from .pagerank import PageRank, PageRankResult
from .power import checked_options, checked_weights, distribution, teleport


class PageRankFrom(PageRank):
    """PageRank (:class:`PageRank`'s supersteps and fused update) from the start vector
    ``start``, the rank held by dangling vertices going to ``dangling`` instead of the
    personalization: networkx's ``pagerank(nstart=..., dangling=...)``.

    PageRank's own dangling term is switched off (no vertex is a sink to it); the rank on the
    dangling vertices is summed here (``held``, over all devices) and added, spread as
    ``dangling``, to what each vertex pulls in the next superstep.
    """

    state = PageRank.state + (
        State("dangling_vertex", "float64", output=False),  # 1 for a vertex without out-weight
        State("spread", "float64", output=False),  # the dangling distribution
    )
    scalars = PageRank.scalars + (Scalar("held"),)
    params = {"teleport": "per_vertex", "start": "per_vertex", "spread": "per_vertex"}

    def init_frontier(self, graph, state, *, teleport, start, spread):
        frontier = super().init_frontier(graph, state, teleport=teleport)
        state.dangling_vertex[...] = state.sink
        state.sink[...] = 0
        state.spread[...] = graph.backend.asarray(spread)
        state.rank[...] = graph.backend.asarray(start)
        return frontier

    def step(self, graph, frontier, state, iteration):
        frontier = super().step(graph, frontier, state, iteration)
        mine = graph.owned_index()
        state.held[...] = graph.backend.total(state.rank[mine] * state.dangling_vertex[mine])
        return frontier

    def pulled(self, graph, state):
        """The in-neighbours' contributions, plus the rank the dangling vertices held last
        superstep, spread as ``spread``."""
        pulled = super().pulled(graph, state)
        mine = graph.owned_index()
        pulled[mine] += float(state.held) * state.spread[mine]
        return pulled


register_preparation("pagerank_from", lambda graph: PageRankFrom().prepare(graph))


def pagerank_from(
    graph,
    alpha: float = 0.85,
    *,
    personalization=None,
    start=None,
    dangling=None,
    tol: float = 1e-6,
    max_iter: int = 100,
    weighted: bool = True,
    **run,
) -> PageRankResult:
    """PageRank as :func:`bspgraph.pagerank`, from the start vector ``start`` (uniform by
    default; divided by its sum) and with the rank of dangling vertices spread as ``dangling``
    (the personalization by default; divided by its sum): networkx's ``nstart`` and
    ``dangling``.

    Raises
    ------
    ValueError
        As :func:`bspgraph.pagerank`; ``start`` or ``dangling`` of the wrong length, negative,
        not finite or all zero.
    """
    options = checked_options(alpha, tol, max_iter)
    checked_weights(graph, weighted)
    n = graph.num_vertices
    if n == 0:
        return PageRankResult(np.zeros(0), Stats())
    shares = teleport(graph, personalization)
    start = np.full(n, 1.0 / n) if start is None else distribution("start", start, n)
    spread = (
        np.broadcast_to(shares, (n,)).copy()
        if dangling is None
        else distribution("dangling", dangling, n)
    )
    primitive = PageRankFrom(**options, weighted=bool(weighted))
    state, stats = enact(primitive, graph, teleport=shares, start=start, spread=spread, **run)
    return PageRankResult(state["rank"], stats)
