"""Closeness and harmonic centrality: batched BFS from every vertex, its distances summed."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..backend import backend_of, to_host
from ..enactor import Stats, run_backend
from ..graph.graph import register_preparation
from ._batch import batch_width
from .bfs import BFS, BatchedBFS, depth_batches
from .power import CentralityResult


def closeness_centrality(
    graph,
    vertices: Iterable[int] | None = None,
    *,
    wf_improved: bool = True,
    batch: int | None = None,
    **run,
) -> CentralityResult:
    """Closeness centrality of every vertex, as ``networkx.closeness_centrality`` (unweighted).

    ``(r - 1) / d``: ``d`` the sum of the hops to the vertex from the ``r - 1`` others that
    reach it, times ``(r - 1) / (n - 1)`` with ``wf_improved`` (Wasserman and Faust's scaling
    for graphs of several components); 0 where nothing else reaches it. On a directed graph the
    distances are those *to* the vertex (networkx's, on the reversed graph). One batched BFS
    (:class:`~bspgraph.primitives.bfs.BatchedBFS`) per ``batch`` vertices, summed on the device.

    Parameters
    ----------
    graph : Graph
    vertices : iterable of int, optional
        The vertices scored (default: every vertex; the others get 0).
    wf_improved : bool
        Scale by the fraction of the other vertices that reach the vertex.
    batch : int, optional
        Searches per batched run (default: as many as fit, up to 1024).
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``: see :func:`enact`.

    Returns
    -------
    CentralityResult
        ``centrality`` (float64) and ``stats`` summed over the batches.

    Raises
    ------
    ValueError
        An id of ``vertices`` is not a vertex (named, with the range).
    """
    n, where = graph.num_vertices, "closeness_centrality"
    scored = _vertices(graph, vertices, "vertices", where)

    def closeness(depth):  # per lane, from its distances to the others
        xp = backend_of(depth).xp
        reached = depth >= 0
        others = reached.sum(axis=0) - 1.0
        total = xp.where(reached, depth, 0).sum(axis=0).astype(np.float64)
        value = xp.where(total > 0, others / xp.where(total > 0, total, 1.0), 0.0)
        return value * (others / (n - 1)) if wf_improved and n > 1 else value

    return _per_vertex(graph.reversed(), scored, closeness, batch, where, run)


def harmonic_centrality(
    graph,
    nbunch: Iterable[int] | None = None,
    sources: Iterable[int] | None = None,
    *,
    batch: int | None = None,
    **run,
) -> CentralityResult:
    """Harmonic centrality, as ``networkx.harmonic_centrality`` (unweighted): for each vertex
    ``u`` of ``nbunch``, the sum of ``1 / d(v, u)`` over the vertices ``v`` of ``sources``
    that reach it (``d > 0``; a self-loop counts nothing).

    Parameters
    ----------
    graph : Graph
    nbunch, sources : iterables of int, optional
        The vertices scored and those whose distances count (default: every vertex);
        repeats are ignored, as networkx's sets ignore them.
    batch : int, optional
        Searches per batched run (default: as many as fit, up to 1024).
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``: see :func:`enact`.

    Returns
    -------
    CentralityResult
        ``centrality`` of every vertex (float64; 0 for those not in ``nbunch``).

    Raises
    ------
    ValueError
        An id of ``nbunch`` or ``sources`` is not a vertex (named, with the range).
    """
    where = "harmonic_centrality"
    scored = _vertices(graph, nbunch, "nbunch", where)
    counted = np.zeros(graph.num_vertices, dtype=bool)
    counted[_vertices(graph, sources, "sources", where)] = True

    def harmonic(depth):  # per lane: 1 / hops summed over the counted vertices reached
        xp = backend_of(depth).xp
        near = (depth > 0) & xp.asarray(counted)[:, None]
        return (xp.where(near, 1.0, 0.0) / xp.where(near, depth, 1)).sum(axis=0)

    return _per_vertex(graph.reversed(), scored, harmonic, batch, where, run)


def _prepare(graph) -> None:
    """The reversed graph (directed) and what the searches on it read."""
    reversed_graph = graph.reversed()
    BFS().prepare(reversed_graph)
    BatchedBFS(lanes=2).prepare(reversed_graph)


register_preparation(("closeness", "harmonic"), _prepare)


def _per_vertex(graph, vertices, measure, batch, where: str, run: dict) -> CentralityResult:
    """``measure(depth)`` of each lane of batched searches from ``vertices`` (on ``graph``),
    as an array over every vertex (0 elsewhere)."""
    vertices = list(vertices)
    centrality, runs = np.zeros(graph.num_vertices), []
    width = batch_width(run_backend(graph, run), graph, len(vertices), batch, where)
    for chunk, depth, stats in depth_batches(graph, vertices, width, **run):
        centrality[chunk] = to_host(measure(depth))
        runs.append(stats)
    return CentralityResult(centrality, Stats.combine(runs))


def _vertices(graph, vertices, name: str, where: str) -> list[int]:
    """The distinct vertex ids of ``vertices`` (every vertex for None), in increasing order."""
    if vertices is None:
        return list(range(graph.num_vertices))
    return sorted({graph.check_vertex(v, name=name, where=where) for v in vertices})
