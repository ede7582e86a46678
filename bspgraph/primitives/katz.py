"""Katz centrality by power iteration, as networkx's."""

from __future__ import annotations

import numpy as np

from .. import frontier as fr
from ..enactor import Scalar, State, Stats, enact
from ..graph.graph import register_preparation
from .power import CentralityResult, PowerIteration, iteration_options, vector


class Katz(PowerIteration):
    """``x <- alpha * A^T x + beta`` until the L1 change is below ``num_vertices * tol``."""

    state = (State("x", "float64"), State("beta", "float64", output=False))
    scalars = (Scalar("error", init=np.inf),)
    communicate = {"x": "replace"}
    params = {"start": "per_vertex", "beta": "per_vertex"}
    name = "katz_centrality"

    def init_frontier(self, graph, state, *, start, beta):
        state.x[...] = graph.backend.asarray(start)
        state.beta[...] = graph.backend.asarray(beta)
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        mine = graph.owned_index()
        following = self.options["alpha"] * self.pull(graph, state.x)[mine] + state.beta[mine]
        state.error[...] = graph.backend.total(graph.xp.abs(following - state.x[mine]))
        state.x[mine] = following
        return fr.Frontier.all(graph)

    def measured(self, iteration):
        return iteration  # every superstep is an iteration


register_preparation("katz", lambda graph: Katz().prepare(graph))


def katz_centrality(
    graph,
    alpha: float = 0.1,
    beta=1.0,
    *,
    max_iter: int = 1000,
    tol: float = 1e-6,
    start=None,
    normalized: bool = True,
    **run,
) -> CentralityResult:
    """Katz centrality (in-edges, weighted), as ``networkx.katz_centrality``.

    ``x <- alpha * A^T x + beta`` from ``start`` (zeros by default) until the L1 change is below
    ``num_vertices * tol``; then divided by its 2-norm when ``normalized``.

    Parameters
    ----------
    graph : Graph
    alpha : float
        Attenuation; below ``1 / lambda_max`` for the iteration to converge.
    beta : float or array of ``num_vertices`` numbers
    max_iter, tol, start, normalized
        As networkx.
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``, ``seed``: see :func:`enact`.

    Raises
    ------
    ValueError
        ``beta`` or ``start`` of the wrong length, ``tol`` or ``max_iter`` out of range.
    ConvergenceError
        No convergence within ``max_iter`` iterations.
    """
    options = iteration_options("katz_centrality", tol, max_iter)
    n = graph.num_vertices
    if n == 0:
        return CentralityResult(np.zeros(0), Stats())
    beta = (
        np.full(n, float(beta))
        if np.ndim(beta) == 0
        else vector("katz_centrality", "beta", beta, n)
    )
    start = np.zeros(n) if start is None else vector("katz_centrality", "start", start, n)
    state, stats = enact(Katz(**options, alpha=float(alpha)), graph, start=start, beta=beta, **run)
    x = state["x"]
    if normalized:
        norm = float(np.sqrt((x * x).sum()))
        x = x / norm if norm else x
    return CentralityResult(x, stats)
