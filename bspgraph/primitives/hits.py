"""HITS hubs and authorities by power iteration, as networkx's ``_hits_python``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..enactor import Scalar, State, Stats, enact
from ..graph.graph import register_preparation
from .power import PowerIteration, iteration_options, vector


@dataclass(frozen=True)
class HITSResult:
    """``hubs[v]`` and ``authorities[v]`` (float64) of every vertex."""

    hubs: np.ndarray
    authorities: np.ndarray
    stats: Stats


class HITS(PowerIteration):
    """Hubs and authorities, two supersteps an iteration: ``a <- A^T h`` (pull from
    in-neighbours), then ``h <- A a`` (from out-neighbours); each divided by its largest entry;
    until the L1 change of the hubs is below ``tol`` (networkx's ``_hits_python``).

    The largest entry is a maximum over all vertices, known after the superstep: each vector
    travels unnormalised with its maximum, and the next superstep divides.
    """

    state = (
        State("hubs", "float64"),  # the last normalised hub vector (the answer)
        State("authorities", "float64"),  # its authorities, normalised
        State("h", "float64", output=False),  # the hubs as pulled, not normalised
        State("a", "float64", output=False),  # the authorities as pulled, not normalised
    )
    scalars = (
        Scalar("h_max", reduce="max", init=1.0),
        Scalar("a_max", reduce="max", init=1.0),
        Scalar("error", init=np.inf),
    )
    communicate = {"h": "replace", "a": "replace"}
    params = {"start": "per_vertex"}
    name = "hits"
    pulls = ("in", "out")

    def init_frontier(self, graph, state, *, start):
        state.h[...] = graph.backend.asarray(start)
        state.hubs[...] = state.h
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        mine, xp = graph.owned_index(), graph.xp
        state.error[...] = np.inf
        if iteration % 2 == 0:  # the hubs of the last iteration are complete: authorities
            if iteration > 0:
                hubs = state.h[mine] / (float(state.h_max) or 1.0)
                state.error[...] = graph.backend.total(xp.abs(hubs - state.hubs[mine]))
                state.hubs[mine] = hubs
            state.a[mine] = self.pull(graph, state.h, "in")[mine]
            state.a_max[...] = graph.backend.largest(state.a[mine]) if state.a[mine].size else 0.0
        else:  # hubs from the authorities (their scale does not matter: h is divided by its max)
            state.authorities[mine] = state.a[mine] / (float(state.a_max) or 1.0)
            state.h[mine] = self.pull(graph, state.a, "out")[mine]
            state.h_max[...] = graph.backend.largest(state.h[mine]) if state.h[mine].size else 0.0
        return fr.Frontier.all(graph)

    def tolerance(self, graph):
        return self.options["tol"]  # networkx's: not times the vertices

    def measured(self, iteration):
        return (iteration - 1) // 2  # the iteration whose hubs state.error compares

    def converged(self, graph, frontier, state, iteration):
        if iteration % 2 == 0:  # mid-iteration (or before the first: none allowed)
            if self.options["max_iter"] == 0:
                raise self.failed(float(state.error), self.tolerance(graph))
            return False
        return super().converged(graph, frontier, state, iteration)


register_preparation("hits", lambda graph: HITS().prepare(graph))


def hits(
    graph, *, max_iter: int = 100, tol: float = 1e-8, start=None, normalized: bool = True, **run
) -> HITSResult:
    """HITS hubs and authorities (weighted), as ``networkx.hits``.

    Power iteration on ``A A^T`` for the hubs from ``start`` (uniform by default, divided by
    its sum), each iterate divided by its largest entry, until the hubs' L1 change is below
    ``tol``; with ``normalized`` each vector is then divided by its sum. networkx computes the
    same singular vectors with ARPACK (``scipy.sparse.linalg.svds``); the power iteration is
    networkx's own ``_hits_python``, and both agree where the largest singular value is simple.

    Raises
    ------
    ValueError
        ``start`` of the wrong length or summing to zero, ``tol`` or ``max_iter`` out of
        range, or (``normalized``) no edge of positive weight: every score is 0, and 0 / 0
        is no score (networkx's ARPACK fails there too).
    ConvergenceError
        No convergence within ``max_iter`` iterations.
    """
    options = iteration_options("hits", tol, max_iter)
    n = graph.num_vertices
    if n == 0:
        return HITSResult(np.zeros(0), np.zeros(0), Stats())
    start = np.full(n, 1.0 / n) if start is None else vector("hits", "start", start, n)
    if start.sum() == 0:
        raise ValueError("hits: start sums to zero")
    state, stats = enact(HITS(**options), graph, start=start / start.sum(), **run)
    hubs, authorities = state["hubs"], state["authorities"]
    if normalized:
        if not (hubs.sum() > 0 and authorities.sum() > 0):
            raise ValueError(
                f"hits: the graph's {graph.num_edges} edges hold no positive "
                "weight: every hub and authority score is 0, which cannot be "
                "normalized"
            )
        hubs, authorities = hubs / hubs.sum(), authorities / authorities.sum()
    return HITSResult(hubs, authorities, stats)
