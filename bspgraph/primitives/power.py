"""Power iterations beside PageRank: HITS, Katz and eigenvector centrality, and PageRank from a
start vector with its own dangling distribution, each one sparse product per superstep."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..enactor import Primitive, Scalar, State, Stats, enact
from ..exceptions import ConvergenceError
from ..frontier.operators import prepare_reduction
from ..graph.graph import register_preparation
from .pagerank import PageRank, PageRankResult, _teleport, checked_options


@dataclass(frozen=True)
class CentralityResult:
    """``centrality[v]`` (float64) of every vertex."""

    centrality: np.ndarray
    stats: Stats


@dataclass(frozen=True)
class HITSResult:
    """``hubs[v]`` and ``authorities[v]`` (float64) of every vertex."""

    hubs: np.ndarray
    authorities: np.ndarray
    stats: Stats


def _mine(graph):
    """The vertices whose entries this device writes: all of them on one device."""
    return graph.owned_index()


def _pull(graph, values, direction: str = "in"):
    """For every vertex, the weighted sum of ``values`` over its in-neighbours (plus.times)."""
    return fr.neighbor_reduce(graph, values, "sum", direction=direction, weighted=True)


def _prepare_pulls(graph, *directions: str) -> None:
    """Build what :func:`_pull` over every list in each of ``directions`` reads."""
    for direction in directions:
        prepare_reduction(graph, direction)


def _failed(name: str, max_iter: int, error: float, tolerance: float) -> ConvergenceError:
    return ConvergenceError(
        f"{name}: no convergence in max_iter={max_iter} iterations: L1 change {error:.3g}, "
        f"tolerance {tolerance:.3g}; hint: raise max_iter or tol"
    )


# --- eigenvector centrality ---------------------------------------------------------------------
class Eigenvector(Primitive):
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
    needs_all = True
    every_vertex = True  # its step reads no frontier: every superstep gets them all
    pull_kind = "fused"
    reduces_every_list = True

    def prepare(self, graph):
        super().prepare(graph)
        _prepare_pulls(graph, "in")

    def init_frontier(self, graph, state, *, start):
        state.y[...] = graph.backend.asarray(start)
        state.x[...] = state.y
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        mine = _mine(graph)
        norm = 1.0 if iteration == 0 else (float(state.squares) ** 0.5 or 1.0)
        current = state.y[mine] / norm
        if iteration > 0:
            state.error[...] = graph.backend.total(graph.xp.abs(current - state.x[mine]))
        state.x[mine] = current
        pulled = _pull(graph, state.y)[mine]
        following = current + pulled / norm
        state.squares[...] = graph.backend.total(following * following)
        state.y[mine] = following
        return fr.Frontier.all(graph)

    def converged(self, graph, frontier, state, iteration):
        error, tolerance = float(state.error), graph.num_vertices * self.options["tol"]
        if iteration > 1 and error < tolerance:  # the change of iterate iteration - 1
            return True
        if iteration - 1 >= self.options["max_iter"]:
            raise _failed("eigenvector_centrality", self.options["max_iter"], error, tolerance)
        return False

    def traversed_edges(self, graph, state):
        return graph.num_edges


register_preparation("eigenvector", lambda graph: Eigenvector().prepare(graph))


def eigenvector_centrality(graph, *, max_iter: int = 100, tol: float = 1e-6, start=None,
                           **run) -> CentralityResult:  # fmt: skip
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
    options = _options("eigenvector_centrality", tol, max_iter)
    n = graph.num_vertices
    if n == 0:
        raise ValueError("eigenvector_centrality: the graph has no vertices")
    start = np.ones(n) if start is None else _vector("eigenvector_centrality", "start", start, n)
    if not start.any():
        raise ValueError("eigenvector_centrality: start cannot be all zero")
    state, stats = enact(Eigenvector(**options), graph, start=start / start.sum(), **run)
    return CentralityResult(state["x"], stats)


# --- Katz centrality ----------------------------------------------------------------------------
class Katz(Primitive):
    """``x <- alpha * A^T x + beta`` until the L1 change is below ``num_vertices * tol``."""

    state = (State("x", "float64"), State("beta", "float64", output=False))
    scalars = (Scalar("error", init=np.inf),)
    communicate = {"x": "replace"}
    params = {"start": "per_vertex", "beta": "per_vertex"}
    needs_all = True
    every_vertex = True  # its step reads no frontier: every superstep gets them all
    pull_kind = "fused"
    reduces_every_list = True

    def prepare(self, graph):
        super().prepare(graph)
        _prepare_pulls(graph, "in")

    def init_frontier(self, graph, state, *, start, beta):
        state.x[...] = graph.backend.asarray(start)
        state.beta[...] = graph.backend.asarray(beta)
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        mine = _mine(graph)
        following = self.options["alpha"] * _pull(graph, state.x)[mine] + state.beta[mine]
        state.error[...] = graph.backend.total(graph.xp.abs(following - state.x[mine]))
        state.x[mine] = following
        return fr.Frontier.all(graph)

    def converged(self, graph, frontier, state, iteration):
        error, tolerance = float(state.error), graph.num_vertices * self.options["tol"]
        if iteration > 0 and error < tolerance:
            return True
        if iteration >= self.options["max_iter"]:
            raise _failed("katz_centrality", self.options["max_iter"], error, tolerance)
        return False

    def traversed_edges(self, graph, state):
        return graph.num_edges


register_preparation("katz", lambda graph: Katz().prepare(graph))


def katz_centrality(graph, alpha: float = 0.1, beta=1.0, *, max_iter: int = 1000,
                    tol: float = 1e-6, start=None, normalized: bool = True,
                    **run) -> CentralityResult:  # fmt: skip
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
    options = _options("katz_centrality", tol, max_iter)
    n = graph.num_vertices
    if n == 0:
        return CentralityResult(np.zeros(0), Stats())
    beta = (np.full(n, float(beta)) if np.ndim(beta) == 0
            else _vector("katz_centrality", "beta", beta, n))  # fmt: skip
    start = np.zeros(n) if start is None else _vector("katz_centrality", "start", start, n)
    state, stats = enact(Katz(**options, alpha=float(alpha)), graph, start=start, beta=beta, **run)
    x = state["x"]
    if normalized:
        norm = float(np.sqrt((x * x).sum()))
        x = x / norm if norm else x
    return CentralityResult(x, stats)


# --- HITS ---------------------------------------------------------------------------------------
class HITS(Primitive):
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
    needs_all = True
    every_vertex = True  # its step reads no frontier: every superstep gets them all
    pull_kind = "fused"
    reduces_every_list = True

    def prepare(self, graph):
        super().prepare(graph)
        _prepare_pulls(graph, "in", "out")

    def init_frontier(self, graph, state, *, start):
        state.h[...] = graph.backend.asarray(start)
        state.hubs[...] = state.h
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        mine, xp = _mine(graph), graph.xp
        state.error[...] = np.inf
        if iteration % 2 == 0:  # the hubs of the last iteration are complete: authorities
            if iteration > 0:
                hubs = state.h[mine] / (float(state.h_max) or 1.0)
                state.error[...] = graph.backend.total(xp.abs(hubs - state.hubs[mine]))
                state.hubs[mine] = hubs
            state.a[mine] = _pull(graph, state.h, "in")[mine]
            state.a_max[...] = graph.backend.largest(state.a[mine]) if state.a[mine].size else 0.0
        else:  # hubs from the authorities (their scale does not matter: h is divided by its max)
            state.authorities[mine] = state.a[mine] / (float(state.a_max) or 1.0)
            state.h[mine] = _pull(graph, state.a, "out")[mine]
            state.h_max[...] = graph.backend.largest(state.h[mine]) if state.h[mine].size else 0.0
        return fr.Frontier.all(graph)

    def converged(self, graph, frontier, state, iteration):
        max_iter, error = self.options["max_iter"], float(state.error)
        if iteration % 2 == 0:  # mid-iteration (or before the first: none allowed)
            if max_iter == 0:
                raise _failed("hits", max_iter, error, self.options["tol"])
            return False
        done = (iteration - 1) // 2  # the iteration whose hubs state.error compares
        if done >= 1 and error < self.options["tol"]:
            return True
        if done >= max_iter:
            raise _failed("hits", max_iter, error, self.options["tol"])
        return False

    def traversed_edges(self, graph, state):
        return graph.num_edges


register_preparation("hits", lambda graph: HITS().prepare(graph))


def hits(graph, *, max_iter: int = 100, tol: float = 1e-8, start=None, normalized: bool = True,
         **run) -> HITSResult:  # fmt: skip
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
    options = _options("hits", tol, max_iter)
    n = graph.num_vertices
    if n == 0:
        return HITSResult(np.zeros(0), np.zeros(0), Stats())
    start = np.full(n, 1.0 / n) if start is None else _vector("hits", "start", start, n)
    if start.sum() == 0:
        raise ValueError("hits: start sums to zero")
    state, stats = enact(HITS(**options), graph, start=start / start.sum(), **run)
    hubs, authorities = state["hubs"], state["authorities"]
    if normalized:
        if not (hubs.sum() > 0 and authorities.sum() > 0):
            raise ValueError(f"hits: the graph's {graph.num_edges} edges hold no positive "
                             "weight: every hub and authority score is 0, which cannot be "
                             "normalized")  # fmt: skip
        hubs, authorities = hubs / hubs.sum(), authorities / authorities.sum()
    return HITSResult(hubs, authorities, stats)


# --- PageRank from a start vector, with a dangling distribution ---------------------------------
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
        mine = _mine(graph)
        held = float(state.held)
        if iteration == 0:  # the start vector's contributions, and its dangling rank
            frontier = super().step(graph, frontier, state, iteration)
        else:
            from ._pagerank_kernels import damped_update

            update = damped_update(state.rank, state.contribution, state.scale, state.sink,
                                   state.teleport if self.uniform is None else self.uniform,
                                   state.error, state.dangling, self.options["alpha"])  # fmt: skip
            pulled = fr.neighbor_reduce(graph, state.contribution, "sum", direction="in",
                                        weighted=self.options.get("weighted", True))  # fmt: skip
            pulled[mine] += held * state.spread[mine]
            state.rank = update(graph, pulled)
        state.held[...] = graph.backend.total(state.rank[mine] * state.dangling_vertex[mine])
        return frontier


register_preparation("pagerank_from", lambda graph: PageRankFrom().prepare(graph))


def pagerank_from(graph, alpha: float = 0.85, *, personalization=None, start=None,
                  dangling=None, tol: float = 1e-6, max_iter: int = 100, weighted: bool = True,
                  **run) -> PageRankResult:  # fmt: skip
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
    lightest, heaviest = graph.weight_range() if weighted else (1.0, 1.0)
    if not (lightest >= 0 and heaviest < np.inf):  # (False for NaN)
        raise ValueError("pagerank: edge weights must be finite non-negative numbers (no NaN)")
    n = graph.num_vertices
    if n == 0:
        return PageRankResult(np.zeros(0), Stats())
    teleport = _teleport(graph, personalization)
    start = np.full(n, 1.0 / n) if start is None else _distribution("start", start, n)
    spread = (np.broadcast_to(teleport, (n,)).copy() if dangling is None
              else _distribution("dangling", dangling, n))  # fmt: skip
    primitive = PageRankFrom(**options, weighted=bool(weighted))
    state, stats = enact(primitive, graph, teleport=teleport, start=start, spread=spread, **run)
    return PageRankResult(state["rank"], stats)


# --- argument checks ----------------------------------------------------------------------------
def _options(name: str, tol, max_iter) -> dict:
    try:
        options = checked_options(0.5, tol, max_iter)
    except ValueError as error:
        raise ValueError(str(error).replace("pagerank", name, 1)) from None
    return {"tol": options["tol"], "max_iter": options["max_iter"]}


def _vector(name: str, argument: str, values, n: int) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float64)
    if vector.shape != (n,):
        raise ValueError(f"{name}: {argument} has shape {vector.shape}, expected ({n},)")
    if not np.isfinite(vector).all():
        raise ValueError(f"{name}: {argument} holds an infinite or NaN value")
    return vector


def _distribution(argument: str, values, n: int) -> np.ndarray:
    vector = _vector("pagerank", argument, values, n)
    if (vector < 0).any() or vector.sum() <= 0:
        raise ValueError(f"pagerank: {argument} must be non-negative and not all zero")
    return vector / vector.sum()
