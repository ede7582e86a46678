"""PageRank by pull-style power iteration, with networkx's semantics (weights, dangling, tol)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..enactor import Primitive, Scalar, State, Stats, enact
from ..exceptions import ConvergenceError
from ..frontier.operators import prepare_reduction
from ..graph.graph import register_preparation
from ._pagerank_kernels import damped_update


@dataclass(frozen=True)
class PageRankResult:
    """``rank[v]``: the PageRank of ``v`` (float64, sums to 1)."""

    rank: np.ndarray
    stats: Stats


class PageRank(Primitive):
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
    needs_all = True  # a vertex pulls the contributions of all its in-neighbours
    every_vertex = True  # its step reads no frontier: every superstep gets them all
    pull_kind = "fused"  # a row reduction (SpMV): no per-edge temporaries (memory.estimate)
    reduces_every_list = True  # ... over every in-list, through operators.gathered

    def init_frontier(self, graph, state, *, teleport):
        # The owned vertices' (every vertex's on one device): the step reads no other's rank,
        # scale, sink or teleport, and the out-weights (row sums of the weights) are right
        # only for them.
        xp, mine = graph.xp, graph.owned_index()
        out_weight = fr.neighbor_reduce(graph, xp.ones(graph.num_vertices), "sum",
                                        weighted=self.options.get("weighted", True))[mine]  # fmt: skip
        dangling = out_weight == 0
        state.sink[mine] = dangling
        state.scale[mine] = 1.0 / xp.where(dangling, xp.inf, out_weight)  # 0 if dangling
        state.teleport[mine] = (
            graph.backend.asarray(teleport)[mine] if np.ndim(teleport) else teleport
        )
        state.rank[mine] = 1.0 / graph.num_vertices
        self.uniform = float(teleport) if np.ndim(teleport) == 0 else None
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        update = damped_update(
            state.rank, state.contribution, state.scale, state.sink,
            state.teleport if self.uniform is None else self.uniform,
            state.error, state.dangling, self.options["alpha"],
        )  # fmt: skip
        if iteration == 0:  # superstep 0 only publishes the contributions of the start vector
            state.rank = update(graph)
        else:  # plus.times over every in-edge (owned source or not): one sparse product
            pulled = fr.neighbor_reduce(graph, state.contribution, "sum", direction="in",
                                        weighted=self.options.get("weighted", True))  # fmt: skip
            state.rank = update(graph, pulled)
        return fr.Frontier.all(graph)

    def converged(self, graph, frontier, state, iteration):
        error, tol, max_iter = float(state.error), self.options["tol"], self.options["max_iter"]
        if iteration > 1 and error < graph.num_vertices * tol:
            return True
        if iteration > max_iter:
            raise ConvergenceError(
                f"pagerank: no convergence in max_iter={max_iter} iterations: L1 change {error:.3g}, "
                f"tolerance {graph.num_vertices * tol:.3g} (num_vertices * tol); "
                "hint: raise max_iter or tol"
            )
        return False

    def traversed_edges(self, graph, state):
        return graph.num_edges

    def prepare(self, graph):
        super().prepare(graph)
        graph.weight_range()
        weighted = self.options.get("weighted", True)
        prepare_reduction(graph, "in", weighted=weighted)  # each iteration's pull
        prepare_reduction(graph, "out", weighted=weighted)  # the out-weights (undirected: the same)


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
    lightest, heaviest = graph.weight_range() if weighted else (1.0, 1.0)
    if not (lightest >= 0 and heaviest < np.inf):  # (False for NaN)
        raise ValueError("pagerank: edge weights must be finite non-negative numbers (no NaN)")
    if graph.num_vertices == 0:
        return PageRankResult(np.zeros(0), Stats())
    teleport = _teleport(graph, personalization)
    primitive = PageRank(**options, weighted=bool(weighted))
    state, stats = enact(primitive, graph, teleport=teleport, **run)
    return PageRankResult(state["rank"], stats)


def checked_options(alpha, tol, max_iter) -> dict:
    """``alpha``, ``tol`` and ``max_iter`` as the primitive takes them; ValueError naming the
    first that is out of its range."""
    for name, value in (("alpha", alpha), ("tol", tol)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            raise ValueError(f"pagerank({name}={value!r}): expected a number")
    if not 0 <= alpha <= 1:  # (False for NaN)
        raise ValueError(f"pagerank(alpha={alpha!r}): expected a damping factor in [0, 1]")
    if not 0 <= tol < np.inf:
        raise ValueError(f"pagerank(tol={tol!r}): expected a finite tolerance >= 0")
    integer = isinstance(max_iter, (int, np.integer)) and not isinstance(max_iter, bool)
    if not integer or max_iter < 0:
        raise ValueError(f"pagerank(max_iter={max_iter!r}): expected an integer >= 0")
    return {"alpha": float(alpha), "tol": float(tol), "max_iter": int(max_iter)}


def _teleport(graph, personalization) -> np.ndarray:
    """The personalization as a normalised host array, or the float 1 / n when None (uniform:
    nothing to upload)."""
    n = graph.num_vertices
    if personalization is None:
        return 1.0 / n
    if isinstance(personalization, dict):
        p = np.zeros(n)
        for vertex, value in personalization.items():
            p[graph.check_vertex(vertex, name="personalization", where="pagerank")] = value
    else:
        p = np.asarray(personalization, dtype=np.float64)
        if p.shape != (n,):
            raise ValueError(f"pagerank: personalization has shape {p.shape}, expected ({n},)")
    if not ((p >= 0) & (p < np.inf)).all() or p.sum() <= 0:
        raise ValueError("pagerank: personalization must be finite, non-negative and not all zero")
    return p / p.sum()
