"""Triangle counting: orient edges from lower to higher (degree, id), intersect the out-lists."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..backend import fused, ops
from ..enactor import Primitive, State, Stats, enact
from ..graph.graph import register_preparation
from . import _tc_kernels  # noqa: F401 (registers the close_wedges kernels)


@dataclass(frozen=True)
class TCResult:
    """``per_vertex[v]``: triangles through ``v`` (networkx.triangles); ``total``: triangles."""

    total: int
    per_vertex: np.ndarray
    stats: Stats


class TC(Primitive):
    state = (State("triangles", "int64"),)
    communicate = {"triangles": "add"}
    params = {}
    replicate_graph = True  # a device intersects the neighbour lists of vertices it does not own
    pull_kind = push_kind = None  # it intersects out-lists: no advance (memory.estimate)
    list_copies = 0.5  # the lists oriented by degree: half the edges (_oriented)

    def init_frontier(self, graph, state):
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        xp, n = graph.xp, graph.num_vertices
        offsets, heads = _oriented(graph)  # N+(u): the neighbours above u; sorted, no self-loops
        close_wedges = fused.lookup("close_wedges", graph.backend, "step")  # intersections
        found = (
            None
            if close_wedges is None
            else close_wedges(graph.backend, offsets, heads, frontier.ids)
        )
        if found is not None:
            state.triangles[...] += found
            return fr.Frontier.from_mask(graph, state.triangles > 0)
        tails = ops.segment_index(graph.backend, xp.diff(offsets), heads.shape[0])
        keys = tails.astype(np.int64) * n + heads  # the oriented edges, sorted

        def close(ids):  # wedges u -> v -> w of oriented edges; a triangle when u -> w exists
            first, v = _expand(graph, offsets, heads, ids)  # oriented edges u -> v, u = ids[first]
            wedge, w = _expand(graph, offsets, heads, v)  # wedge: the index of its edge u -> v
            u, v = ids[first[wedge]], v[wedge]
            key = u.astype(np.int64) * n + w
            found = xp.searchsorted(keys, key)
            closed = found < keys.shape[0]
            closed[closed] = keys[found[closed]] == key[closed]
            corners = xp.concatenate([u[closed], v[closed], w[closed]])
            state.triangles[...] += ops.tally(graph.backend, corners, n)

        degree_up = xp.diff(offsets)
        wedges = xp.zeros(n, dtype=np.float64)  # the wedges u -> v -> w that each u opens
        ops.scatter_add(graph.backend, wedges, tails, degree_up[heads].astype(np.float64))
        for batch in _batches(frontier, wedges, xp):  # bounded memory: WEDGE_BATCH at a time
            fr.compute(graph, batch, close)
        return fr.Frontier.from_mask(graph, state.triangles > 0)  # credited: their counts travel

    def converged(self, graph, frontier, state, iteration):
        return iteration == 1  # one superstep finds every triangle

    def traversed_edges(self, graph, state):
        return graph.num_edges

    def prepare(self, graph):
        super().prepare(graph)
        _oriented(graph)


register_preparation("tc", lambda graph: TC().prepare(graph))


WEDGE_BATCH = 1 << 25  # wedges examined at once (about 50 bytes each)


def _batches(frontier, wedges, xp):
    """Consecutive slices of ``frontier`` opening about WEDGE_BATCH wedges each."""
    ids = frontier.ids
    if ids.shape[0] == 0:
        return
    scan = xp.cumsum(wedges[ids])
    marks = xp.arange(WEDGE_BATCH, float(scan[-1]), WEDGE_BATCH)
    cuts = [0, *(int(c) for c in xp.searchsorted(scan, marks)), ids.shape[0]]
    for lo, hi in zip(cuts, cuts[1:]):
        if hi > lo:
            yield fr.Frontier(frontier.num_vertices, frontier.backend, ids=ids[lo:hi])


def _oriented(graph):
    """CSR ``(offsets, heads)`` of the edges ``u -> v`` with ``(degree, id)`` of ``u`` below
    ``v``'s; built once per graph (kept in its cache)."""
    return graph.cached("oriented", lambda: _orient(graph))


def _orient(graph):
    xp, n = graph.xp, graph.num_vertices
    rank = graph.out_degree().astype(np.int64) * n + xp.arange(n)  # a total order on vertices
    src = ops.segment_index(graph.backend, graph.out_degree(), graph.num_edges)
    up = rank[src] < rank[graph.indices]
    counts = ops.tally(graph.backend, src[up], n)
    offsets = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(counts)])
    return offsets, graph.indices[up]


def _expand(graph, offsets, heads, ids):
    """For each edge leaving ``ids`` in ``(offsets, heads)``: the position in ``ids``, the head."""
    starts, degrees = offsets[ids], offsets[ids + 1] - offsets[ids]
    total = int(graph.backend.total(degrees)) if degrees.shape[0] else 0
    segment, slot = ops.row_entries(graph.backend, starts, degrees, total)
    return segment, heads[slot]


def triangle_count(graph, **run) -> TCResult:
    """Triangles of an undirected graph: in total and through each vertex (``networkx.triangles``).

    Each edge is oriented from the endpoint of lower (degree, id) to the higher one, so every
    triangle has exactly one oriented wedge ``u -> v -> w`` closed by ``u -> w`` (GraphBLAST's
    masked SpGEMM, ``L .* (L @ L)``): on the GPU a thread per oriented edge ``u -> v``
    intersects the two out-lists, on NumPy rows mark their out-lists in a bitmap (or numba
    intersects them); each triangle is credited to its three corners. Self-loops are ignored.
    On several devices the step reads the out-lists of remote vertices, so every device holds
    the whole graph (``replicate_graph``).

    Parameters
    ----------
    graph : Graph
        Undirected.
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``, ``seed``: see :func:`enact`.

    Returns
    -------
    TCResult
        ``total`` (int), ``per_vertex`` (int64) and ``stats``.

    Raises
    ------
    ValueError
        ``graph`` is directed.
    """
    if graph.directed:
        raise ValueError(
            "triangle_count: the graph is directed; triangles are counted on undirected graphs "
            "(hint: build it with directed=False)"
        )
    state, stats = enact(TC(), graph, **run)
    per_vertex = state["triangles"]
    return TCResult(int(per_vertex.sum()) // 3, per_vertex, stats)
