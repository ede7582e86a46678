"""What the power iterations (PageRank, HITS, Katz, eigenvector centrality) share: the
primitive that pulls over every in-list each superstep and stops on its L1 change, the result
of a centrality, and the checks of their arguments."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..enactor import Primitive, Stats
from ..exceptions import ConvergenceError
from ..frontier.operators import prepare_reduction


@dataclass(frozen=True)
class CentralityResult:
    """``centrality[v]`` (float64) of every vertex."""

    centrality: np.ndarray
    stats: Stats


class PowerIteration(Primitive):
    """A power iteration: each superstep works on every vertex its device owns and pulls one
    sparse product over every in-list (``pulls``: the directions, prepared up front), and the
    run stops when the scalar ``error`` (the iterate's L1 change, summed over devices) is below
    :meth:`tolerance`, or raises ConvergenceError (naming ``name``) after ``max_iter``
    iterations. A subclass declares ``state``, ``scalars`` (with ``error``), ``communicate``
    and ``params``, and defines ``init_frontier`` and ``step``; :meth:`measured` says which
    iteration's change ``error`` holds after a superstep."""

    name = "power iteration"
    needs_all = True  # a vertex pulls from all its in-neighbours
    every_vertex = True  # its step reads no frontier: every superstep gets them all
    reads_neighbours = True  # ... and others' values only through its lists (its pulls)
    pull_kind = "fused"  # a row reduction (SpMV): no per-edge temporaries (memory.estimate)
    reduces_every_list = True  # ... over every in-list, through operators.gathered
    push_kind = None  # its frontier is every vertex: it never pushes
    pulls: tuple[str, ...] = ("in",)
    tolerance_says = ""  # how the tolerance is made, in the error message

    @property
    def weighted(self) -> bool:
        return self.options.get("weighted", True)

    def pull(self, graph, values, direction: str = "in"):
        """For every vertex, the (weighted) sum of ``values`` over its in-neighbours
        (out-neighbours with ``direction="out"``): plus.times."""
        return fr.neighbor_reduce(graph, values, "sum", direction=direction, weighted=self.weighted)

    def prepare(self, graph):
        super().prepare(graph)
        for direction in self.pulls:
            prepare_reduction(graph, direction, weighted=self.weighted)

    def tolerance(self, graph) -> float:
        """The L1 change below which the run has converged: ``num_vertices * tol``."""
        return graph.num_vertices * self.options["tol"]

    def measured(self, iteration: int) -> int:
        """The iteration whose change ``error`` holds after ``iteration`` supersteps (the first
        is 1; the default: superstep 0 publishes the start, each later one is an iteration)."""
        return iteration - 1

    def converged(self, graph, frontier, state, iteration):
        error, tolerance = float(state.error), self.tolerance(graph)
        done = self.measured(iteration)
        if done >= 1 and error < tolerance:
            return True
        if done >= self.options["max_iter"]:
            raise self.failed(error, tolerance)
        return False

    def failed(self, error: float, tolerance: float) -> ConvergenceError:
        return ConvergenceError(
            f"{self.name}: no convergence in max_iter={self.options['max_iter']} iterations: "
            f"L1 change {error:.3g}, tolerance {tolerance:.3g}{self.tolerance_says}; "
            "hint: raise max_iter or tol"
        )

    def traversed_edges(self, graph, state):
        return graph.num_edges


# --- argument checks ----------------------------------------------------------------------------
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


def iteration_options(name: str, tol, max_iter) -> dict:
    """``tol`` and ``max_iter`` checked as :func:`checked_options` does, for ``name``."""
    try:
        options = checked_options(0.5, tol, max_iter)
    except ValueError as error:
        raise ValueError(str(error).replace("pagerank", name, 1)) from None
    return {"tol": options["tol"], "max_iter": options["max_iter"]}


def checked_weights(graph, weighted: bool = True) -> None:
    """ValueError where a weight PageRank reads is negative, infinite or NaN."""
    lightest, heaviest = graph.weight_range() if weighted else (1.0, 1.0)
    if not (lightest >= 0 and heaviest < np.inf):  # (False for NaN)
        raise ValueError("pagerank: edge weights must be finite non-negative numbers (no NaN)")


def teleport(graph, personalization) -> np.ndarray | float:
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


def vector(name: str, argument: str, values, n: int) -> np.ndarray:
    """``values`` as a float64 array of ``n`` finite numbers; ValueError naming ``argument``."""
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (n,):
        raise ValueError(f"{name}: {argument} has shape {values.shape}, expected ({n},)")
    if not np.isfinite(values).all():
        raise ValueError(f"{name}: {argument} holds an infinite or NaN value")
    return values


def distribution(argument: str, values, n: int) -> np.ndarray:
    """``values`` (non-negative, not all zero) divided by their sum."""
    values = vector("pagerank", argument, values, n)
    if (values < 0).any() or values.sum() <= 0:
        raise ValueError(f"pagerank: {argument} must be non-negative and not all zero")
    return values / values.sum()
