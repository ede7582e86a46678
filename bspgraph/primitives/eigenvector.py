"""Eigenvector centrality by power iteration with ``A + I``, as networkx's."""

from __future__ import annotations

import numpy as np

from .. import frontier as fr
from ..enactor import Scalar, State, enact
from ..graph.graph import register_preparation
from .power import CentralityResult, PowerIteration, iteration_options, vector


class Eigenvector(PowerIteration):
    """``x <- (x + A^T x) / ||x + A^T x||_2`` (networkx iterates with A + I, so that a
    bipartite graph converges too), until the L1 change is below ``num_vertices * tol``.

    The 2-norm is a sum over all vertices, known only once the superstep's scalars are added
    up: each superstep publishes the unnormalised iterate ``y`` and its squared norm, and the
    next one divides by the norm (a pull is linear, so ``A^T (y / norm) = (A^T y) / norm``).
    The change of iterate k is therefore read a superstep later.
    """

    state = (
        State("x", "float64"),  # the last normalised iterate (the answer)
        State("y", "float64", output=False),  # the next one, not yet normalised: what is pulled
    )
    scalars = (Scalar("squares"), Scalar("error", init=np.inf))
    communicate = {"y": "replace"}
    params = {"start": "per_vertex"}
    name = "eigenvector_centrality"

    def init_frontier(self, graph, state, *, start):
        state.y[...] = graph.backend.asarray(start)
        state.x[...] = state.y
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        mine = graph.owned_index()
        norm = 1.0 if iteration == 0 else (float(state.squares) ** 0.5 or 1.0)
        current = state.y[mine] / norm
        if iteration > 0:
            state.error[...] = graph.backend.total(graph.xp.abs(current - state.x[mine]))
        state.x[mine] = current
        following = current + self.pull(graph, state.y)[mine] / norm
        state.squares[...] = graph.backend.total(following * following)
        state.y[mine] = following
        return fr.Frontier.all(graph)


register_preparation("eigenvector", lambda graph: Eigenvector().prepare(graph))


def eigenvector_centrality(
    graph, *, max_iter: int = 100, tol: float = 1e-6, start=None, **run
) -> CentralityResult:
    """Eigenvector centrality (in-edges, weighted), as ``networkx.eigenvector_centrality``.

    Power iteration with ``A + I`` from ``start`` (all ones by default) divided by its sum;
    each iterate is divided by its 2-norm; it stops when the L1 change is below
    ``num_vertices * tol``.

    Parameters
    ----------
    graph : Graph
    max_iter, tol : int, float
    start : array of ``num_vertices`` numbers, optional
        Not all zero.
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``, ``seed``: see :func:`enact`.

    Raises
    ------
    ValueError
        An empty graph, ``start`` of the wrong length or all zero, ``tol`` or ``max_iter`` out of
        range.
    ConvergenceError
        No convergence within ``max_iter`` iterations.
    """
    options = iteration_options("eigenvector_centrality", tol, max_iter)
    n = graph.num_vertices
    if n == 0:
        raise ValueError("eigenvector_centrality: the graph has no vertices")
    start = np.ones(n) if start is None else vector("eigenvector_centrality", "start", start, n)
    if not start.any():
        raise ValueError("eigenvector_centrality: start cannot be all zero")
    state, stats = enact(Eigenvector(**options), graph, start=start / start.sum(), **run)
    return CentralityResult(state["x"], stats)
