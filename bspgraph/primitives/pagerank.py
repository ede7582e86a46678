"""PageRank by pull-style power iteration, with networkx's semantics (weights, dangling, tol)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..enactor import Scalar, State, Stats, enact
from ..graph.graph import register_preparation
from ._pagerank_kernels import damped_update, out_weights, rank_pull, transition
from .power import PowerIteration, checked_options, checked_weights, teleport


@dataclass(frozen=True)
class PageRankResult:
    """``rank[v]``: the PageRank of ``v`` (float64, sums to 1)."""

    rank: np.ndarray
    stats: Stats


class PageRank(PowerIteration):
    state = (
        State("rank", "float64"),
        State("contribution", "float64", output=False),  # rank / out-weight (0 if dangling)
        State("scale", "float64", output=False),  # 1 / out-weight, 0 if dangling: never sent
        State("sink", "float64", output=False),  # 1 for a dangling vertex (no out-weight)
        State("teleport", "float64", output=False),  # the personalization vector, normalised
    )
    scalars = (Scalar("dangling"), Scalar("error", init=np.inf))  # summed over devices
    communicate = {"contribution": "replace"}
    params = {"teleport": "per_vertex"}
    name = "pagerank"
    pulls = ("in", "out")  # each iteration's pull; the out-weights (undirected: the same)
    tolerance_says = " (num_vertices * tol)"

    def init_frontier(self, graph, state, *, teleport):
        # The owned vertices' (every vertex's on one device): the step reads no other's rank,
        # scale, sink or teleport, and the out-weights (row sums of the weights) are right
        # only for them.
        xp, mine = graph.xp, graph.owned_index()
        out_weight = out_weights(graph, self.weighted)
        dangling = out_weight == 0
        state.sink[mine] = dangling
        state.scale[mine] = 1.0 / xp.where(dangling, xp.inf, out_weight)  # 0 if dangling
        state.teleport[mine] = (
            graph.backend.asarray(teleport)[mine] if np.ndim(teleport) else teleport
        )
        state.rank[mine] = 1.0 / graph.num_vertices
        self.uniform = float(teleport) if np.ndim(teleport) == 0 else None
        self.pull_rank = rank_pull(graph)  # None: the pull reads published contributions
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        update = damped_update(
            state.rank,
            None if self.pull_rank else state.contribution,
            state.scale,
            state.sink,
            state.teleport if self.uniform is None else self.uniform,
            state.error,
            state.dangling,
            self.options["alpha"],
        )
        if iteration == 0:  # superstep 0 only publishes the contributions of the start vector
            state.rank = update(graph)
        else:  # plus.times over every in-edge (owned source or not): one sparse product
            state.rank = update(graph, self.pulled(graph, state))
        return fr.Frontier.all(graph)

    def pulled(self, graph, state):
        """What each vertex pulls in an iteration: its in-neighbours' contributions."""
        if self.pull_rank:
            return self.pull_rank(graph, state.rank, self.weighted)
        return self.pull(graph, state.contribution)

    def prepare(self, graph):
        super().prepare(graph)
        graph.weight_range()
        out_weights(graph, self.weighted)
        if rank_pull(graph):
            transition(graph, self.weighted)


register_preparation("pagerank", lambda graph: PageRank().prepare(graph))


def pagerank(
    graph,
    alpha: float = 0.85,
    *,
    personalization=None,
    tol: float = 1e-6,
    max_iter: int = 100,
    weighted: bool = True,
    **run,
) -> PageRankResult:
    """PageRank of every vertex, as ``networkx.pagerank(G, alpha, personalization, max_iter, tol)``.

    Power iteration from the uniform vector: ``x = alpha * (x A + d p) + (1 - alpha) * p``,
    where ``A`` holds each vertex's out-edge weights (1 when unweighted) divided by their sum,
    ``d`` is the rank held by dangling vertices (out-weight 0) and ``p`` the normalised
    personalization (uniform by default), until the L1 change is below ``num_vertices * tol``.
    Pull-style: each vertex sums its in-neighbours' ``rank / out_weight`` (GraphBLAST's PR).
    Superstep 0 publishes the start vector's contributions; each later one is one iteration.

    Parameters
    ----------
    graph : Graph
    alpha : float
        Damping factor.
    personalization : dict {vertex: weight} or array of ``num_vertices`` weights, optional
        Non-negative, not all zero; missing vertices weigh 0.
    tol, max_iter : float, int
        Convergence tolerance (per vertex) and the most iterations.
    weighted : bool
        False: the structure only, every edge weighing 1 whatever the graph's weights
        (networkx's ``pagerank(G, weight=None)``); True (default): the graph's weights, if any.
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``, ``seed``: see :func:`enact`.

    Returns
    -------
    PageRankResult
        ``rank`` (float64; empty for a graph without vertices) and ``stats``.

    Raises
    ------
    ValueError
        ``alpha`` outside [0, 1], ``tol`` negative or not finite, ``max_iter`` not an integer
        >= 0, a negative, infinite or NaN edge weight, or a bad ``personalization`` (wrong
        length, unknown vertex, negative, infinite or NaN, or all zero).
    ConvergenceError
        No convergence within ``max_iter`` iterations (networkx's PowerIterationFailedConvergence).
    """
    options = checked_options(alpha, tol, max_iter)
    checked_weights(graph, weighted)
    if graph.num_vertices == 0:
        return PageRankResult(np.zeros(0), Stats())
    primitive = PageRank(**options, weighted=bool(weighted))
    state, stats = enact(primitive, graph, teleport=teleport(graph, personalization), **run)
    return PageRankResult(state["rank"], stats)
