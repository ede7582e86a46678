"""Betweenness centrality by Brandes: per source, count shortest paths forward
(:mod:`.bc_forward`, batched :mod:`.bc_batched_forward`), accumulate dependencies back
(:mod:`.bc_backward`, :mod:`.bc_batched_backward`), and sum them over the sources."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..backend import backend_of, to_host
from ..enactor import Stats, enact, enact_chain, run_backend
from ..exceptions import PathCountOverflow
from ..frontier.operators import prepare_reduction
from ..graph.graph import register_preparation
from ._batch import batch_width, batches, checked_sources, sampled_sources
from .bc_backward import Backward
from .bc_batched_backward import BatchedBackward, level_bounds
from .bc_batched_forward import BatchedForward
from .bc_forward import Forward


@dataclass(frozen=True)
class BCResult:
    """``centrality[v]``: the betweenness of ``v`` (float64), scaled as networkx scales it."""

    centrality: np.ndarray
    stats: Stats


def _prepare(graph) -> None:
    """What betweenness builds, one source at a time or batched, and up front what the
    products of its heavy levels over every list build lazily."""
    for primitive in (
        Forward(),
        Backward(bounds=(0, 1, 1)),
        BatchedForward(lanes=2),
        BatchedBackward(lanes=2),
    ):
        primitive.prepare(graph)
    prepare_reduction(graph, "in")
    prepare_reduction(graph, "out")


register_preparation("bc", _prepare)


def betweenness_centrality(
    graph,
    sources: Sequence[int] | None = None,
    *,
    k: int | None = None,
    seed=None,
    batch: int | None = None,
    normalized: bool = True,
    endpoints: bool = False,
    **run,
) -> BCResult:
    """Betweenness centrality of every vertex, as ``networkx.betweenness_centrality`` (unweighted).

    Brandes' algorithm over batches of ``batch`` sources: :class:`BatchedForward` counts
    shortest paths level by level (``sigma``) from every source of the batch at once,
    :class:`BatchedBackward` accumulates dependencies from the deepest level up (``delta``),
    one sparse product a level for the whole batch (LAGraph's and GraphBLAST's formulation),
    and the dependencies are summed over the sources. With ``batch=1``, one source at a time
    (:class:`Forward`, :class:`Backward`: fused kernels and push or pull per level). The sums
    are rescaled as networkx rescales them, ``sources`` (or a sample of ``k``) as networkx's
    sample of ``k = len(sources)`` sources.

    Parameters
    ----------
    graph : Graph
    sources : sequence of int, optional
        Distinct source vertices; None (default) means every vertex (or a sample of ``k``).
    k : int, optional
        networkx's ``k``: ``k`` sources sampled as networkx samples them for ``seed``
        (``seed.sample(list(G), k)``), so that the answer is networkx's for the same ``seed``.
    seed : int, random.Random or None
        networkx's ``seed`` for the sample (None: the ``random`` module's state).
    batch : int, optional
        Sources per batched run (default: as many as fit, up to 1024); 1: one at a time.
    normalized : bool
        Divide by the number of (source, target) pairs, else only halve on undirected graphs.
    endpoints : bool
        Count the endpoints of each shortest path as on it.
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``: see :func:`enact`.

    Returns
    -------
    BCResult
        ``centrality`` (float64) and ``stats`` summed over both phases of every batch.

    Raises
    ------
    ValueError
        ``sources`` is not a sequence (an int: networkx's k is ``k=``), is empty, repeats a
        vertex or holds an id that is not a vertex; both ``sources`` and ``k``; ``k`` out of
        ``[1, num_vertices]``; ``batch`` below 1.
    PathCountOverflow
        A source has more shortest paths to some vertex than float64 holds (large grids).
    """
    n, where = graph.num_vertices, "betweenness_centrality"
    if sources is not None and k is not None:
        raise ValueError(f"{where}: expected sources= or k=, not both")
    if k is not None:
        sources = sampled_sources(graph, k, seed, where)
        if not sources:
            raise ValueError(f"{where}(k=0): expected at least one source")
    elif sources is None:
        sources = range(n)
    else:
        sources = checked_sources(graph, sources, where)
        if not sources:
            raise ValueError(f"{where}(sources=[]): expected at least one source")
    _warn_over_processes(graph, run.get("transport"))
    on_device = run.pop("result_device", False)
    target = run_backend(graph, run)
    width = batch_width(target, graph, len(sources), batch, where)
    with target.activate():  # (CuPy: the sums over lanes on its plain reduction kernels)
        total, runs = _accumulate(graph, sources, width, endpoints, run)
    if total is None:
        centrality = np.zeros(n)
        return BCResult(
            target.asarray(centrality) if on_device else centrality, Stats.combine(runs)
        )
    k = None if len(sources) == n else len(sources)
    centrality = _rescale(
        total, n, k, sources, normalized=normalized, directed=graph.directed, endpoints=endpoints
    )  # on the device: one copy of the result to the host, unless asked to stay
    return BCResult(centrality if on_device else to_host(centrality), Stats.combine(runs))


CHECKED_OVER_PROCESSES = 1 << 26  # vertices: the largest graph whose betweenness over NCCL
# ranks was checked against one GPU (rmat26 on two H200s, to rtol 1e-9:
# benchmarks/data/x2-nccl-rmat26-h200-55a8f23.txt)


def _warn_over_processes(graph, transport) -> None:
    """A RuntimeWarning where betweenness runs over processes (MPI or NCCL ranks) on a graph
    larger than any on which that path was checked against one GPU: at 3fdac7a, rmat25 on two
    H200s gave wrong centralities at 5% of the vertices (x2-bc-rmat25-mismatch.txt), at
    a39b595 one GPU's; what mended it was not pinned down."""
    distributed = transport in ("mpi", "nccl") or getattr(transport, "distributed", False)
    if distributed and graph.num_vertices > CHECKED_OVER_PROCESSES:
        warnings.warn(
            f"betweenness_centrality over processes on {graph.num_vertices:,} vertices: over "
            f"NCCL ranks it was checked against one GPU up to {CHECKED_OVER_PROCESSES:,} "
            "vertices only (wrong at that size once, in an earlier version); check the result "
            "against one device",
            RuntimeWarning,
            stacklevel=3,
        )


def _accumulate(graph, sources, width, endpoints, run):
    """The dependencies summed over ``sources`` (None where there are none) and the runs'
    stats: one chain of runs (:class:`Dependencies`), ``width`` sources a pair of runs."""
    chain = Dependencies(
        sources if isinstance(sources, range) else tuple(sources), width, endpoints
    )
    result, runs = enact_chain(chain, graph, result_device=True, **run)
    if result.get("overflow"):
        raise PathCountOverflow(result["overflow"])
    return result.get("dependency"), runs


@dataclass(frozen=True)
class Dependencies:
    """The dependencies of ``sources`` on every vertex, summed, as a chain of runs
    (:func:`~bspgraph.enactor.loop.enact_chain`), ``width`` sources at a time: a forward
    run counts shortest paths, a backward run accumulates dependencies along them from its
    depths and path counts (one piece of work: where runs go to worker processes, all go in
    one call and those arrays stay there). ``width`` above 1: one lane a source
    (:class:`BatchedForward`), else one source a run (:class:`Forward`)."""

    sources: Sequence[int]  # (a tuple, or a range: every vertex, as it travels)
    width: int
    endpoints: bool

    @property
    def primitive(self):
        """The forward runs, whose cut the backward runs take too."""
        return BatchedForward(lanes=self.width) if self.width > 1 else Forward()

    def __call__(self, graph, **run) -> tuple[dict, list[Stats]]:
        total, runs = None, []
        for batch in batches(self.sources, self.width):
            try:
                dependency = self._batch(graph, batch, run, runs)
            except PathCountOverflow as overflow:  # (told, not raised: a worker goes on)
                return {"overflow": str(overflow)}, runs
            if total is None:
                total = dependency
            else:  # (the first batch's array, made here: summed in place)
                total += dependency
        return {"dependency": total}, runs

    def _batch(self, graph, sources: list[int], run: dict, runs: list):
        """One batch's dependencies, its runs' stats added to ``runs``; PathCountOverflow
        where a path count is past float64 (every dependency would be NaN)."""
        batched, lanes = self.width > 1, len(sources)
        primitive = BatchedForward(lanes=lanes) if batched else Forward()
        given = {"sources": sources} if batched else {"source": sources[0]}
        forward, forward_stats = enact(primitive, graph, result_device=True, **given, **run)
        runs.append(forward_stats)
        _check_counts(forward, sources)
        depth, bounds = forward["depth"], level_bounds(forward["depth"])
        backward = (
            BatchedBackward(lanes=lanes, bounds=bounds) if batched else Backward(bounds=bounds)
        )
        delta, backward_stats = enact(
            backward, graph, depth=depth, sigma=forward["sigma"], result_device=True, **run
        )
        runs.append(backward_stats)
        if batched:
            return _batch_dependency(delta["delta"], depth, sources, self.endpoints)
        return _source_dependency(delta["delta"], depth, sources[0], self.endpoints)


def _source_dependency(delta, depth, source: int, endpoints: bool):
    """One source's dependency on every vertex from its backward run's ``delta``."""
    reached = depth >= 0
    dependency = delta + (1 if endpoints else 0)
    dependency[~reached] = 0
    dependency[source] = backend_of(reached).count(reached) - 1 if endpoints else 0
    return dependency


def _batch_dependency(delta, depth, sources: list[int], endpoints: bool):
    """A batch's dependencies summed over its lanes from its backward run's ``delta``."""
    dependency = delta.sum(axis=1)  # 0 at unreached vertices and the sources
    if endpoints:  # each reached target, and each source for its targets
        xp = backend_of(depth).xp
        dependency += (depth > 0).sum(axis=1)
        picked = backend_of(depth).asarray(sources)
        dependency[picked] += (depth >= 0).sum(axis=0)[xp.arange(len(sources))] - 1
    return dependency


def _check_counts(forward: dict, sources: list[int]) -> None:
    """PathCountOverflow when a shortest-path count is infinite (past float64's 1.8e308, as
    from a corner of a 600 x 600 grid): every dependency would be NaN. ``forward``'s arrays
    are one value a vertex (one source) or rows of a lane per source."""
    sigma = forward["sigma"]
    overflow = backend_of(sigma).xp.isinf(sigma)
    if bool(backend_of(sigma).any(overflow)):
        first = int(backend_of(sigma).xp.flatnonzero(overflow)[0])
        vertex, lane = divmod(first, len(sources)) if sigma.ndim > 1 else (first, 0)
        depth = forward["depth"][vertex] if sigma.ndim == 1 else forward["depth"][vertex, lane]
        raise PathCountOverflow(
            f"betweenness_centrality: from source {sources[lane]}, vertex {vertex} (depth "
            f"{int(depth)}) has more shortest paths than float64 holds (1.8e308); its "
            "dependencies would be NaN"
        )


def _rescale(centrality, n, k, sources, *, normalized, directed, endpoints):
    """networkx's ``_rescale``: divide by the (source, target) pairs counted, per source sample."""
    pairs = n if endpoints else n - 1  # the targets each source could count (networkx's N)
    if pairs < 2:
        return centrality

    def scale(k):  # a source sample of size k
        return 1 / (k * (pairs - 1)) if normalized else pairs / (k * (1 if directed else 2))

    if k is None or endpoints:
        return centrality * scale(pairs if k is None else k)
    out = centrality * scale(k)  # a sampled source never counts itself as a target
    picked = backend_of(centrality).asarray(list(sources))
    out[picked] = centrality[picked] * scale(k - 1) if k > 1 else np.nan
    return out
