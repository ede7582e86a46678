"""Batched frontiers: b traversals at once, one lane per member of the batch, one product a level.

A batch of ``b`` traversals (one per source) keeps its state as rows of lanes (``V x b``
arrays: ``State(..., lanes="lanes")``), and its frontier as the :class:`Frontier` of the
vertices active in any lane; which lanes a row is active in is the primitive's state (BFS: the
lanes where ``depth == level``). The two operators here move a whole level of the whole batch
in one sparse-dense product (SpMM), as LAGraph and GraphBLAST run betweenness: the frontier
matrix times the adjacency matrix, whatever ``b`` is:

- :func:`advance_lanes` pushes the frontier rows' lane values along their out-edges (plus-times
  for numbers, or-and for bools): ``out[v, j] = sum of values[u, j]`` over the edges ``u -> v``;
- :func:`reduce_lanes` pulls, for each frontier row ``u``, the sum of ``values[v, j]`` over its
  out-edges ``u -> v``.

Both read only the edges this device holds: on one device of several, :func:`advance_lanes`
pushes from the rows it holds (sums over its own edges: partial, to be added up by the
enactor's ``add`` or decided by ``min``), and :func:`reduce_lanes` gives the sums of the rows
it owns (0 elsewhere).
"""

from __future__ import annotations

import numpy as np

from .frontier import Frontier


def advance_lanes(graph, frontier: Frontier, values):
    """Push a batch from ``frontier`` along the out-edges that ``graph`` holds.

    Parameters
    ----------
    graph : Graph
    frontier : Frontier
        The rows active in any lane.
    values : array of shape ``(len(frontier), b)``
        Each frontier row's lane values, in ``frontier.ids`` order (0 or False in the lanes
        where the row is not active).

    Returns
    -------
    array of shape ``(num_vertices, b)``
        ``out[v, j]``: the sum of ``values[u, j]`` over the edges ``u -> v`` from the frontier
        (float values, in their dtype), or whether any is True (bool values).

    Notes
    -----
    One product for the whole batch: over the frontier rows' edges (a push, ``A[rows]^T @
    values``) when they are few (at most 1 / ``backend.lane_push_share`` of the edges) or when
    this device is one of several, else over every in-list, reading the frontier's rows only
    (a pull, :meth:`Backend.lane_sums` with the frontier's positions).
    """
    if values.ndim != 2 or values.shape[0] != len(frontier):
        raise ValueError(f"advance_lanes: values of shape {values.shape}, expected "
                         f"({len(frontier)}, b): a row of lanes per frontier member")  # fmt: skip
    xp, n = graph.xp, graph.num_vertices
    flags = values.dtype == np.bool_
    dtype = _count_dtype(graph) if flags else values.dtype  # or-and: a count of 0/1 that
    values = values.astype(dtype, copy=False)  # cannot wrap (at most the largest in-degree)
    total = int(graph.forward.indices.shape[0])
    ids = frontier.ids
    push_share = graph.backend.lane_push_share
    if not total or not len(frontier):
        out = xp.zeros((n, values.shape[1]), dtype=dtype)
    elif (
        not graph.context.global_view
        or graph.backend.entries_in(graph.forward.offsets, ids) * push_share <= total
    ):
        offsets, indices, _ = graph.backend.csr_rows(graph.forward.offsets, graph.forward.indices,
                                                     None, ids, n)  # fmt: skip
        data = graph.backend.edge_values(indices, None, dtype)
        out = graph.backend.sparse.csr_matrix((data, indices, offsets), shape=(len(ids), n)).T
        out = out @ values
    else:  # every in-list, reading the value rows of the frontier's in-neighbours only
        position = xp.full(n, -1, dtype=np.int32)
        position[ids] = xp.arange(len(ids), dtype=np.int32)
        out = graph.backend.lane_sums(graph.reverse.offsets, graph.reverse.indices, values,
                                      position=position)  # fmt: skip
    return out > 0 if flags else out


def reduce_lanes(graph, values, frontier: Frontier):
    """For each row ``u`` of ``frontier``, the sums of ``values[v]`` (a row of lanes) over the
    out-edges ``u -> v`` that ``graph`` holds: an array of shape ``(len(frontier), b)``, in
    ``frontier.ids`` order (0 for a row without edges here).

    One product for the whole batch (``A[rows] @ values``); ``values`` is ``V x b`` floats.
    """
    if values.ndim != 2 or values.shape[0] != graph.num_vertices:
        raise ValueError(f"reduce_lanes: values of shape {values.shape}, expected "
                         f"({graph.num_vertices}, b): a row of lanes per vertex")  # fmt: skip
    if not int(graph.forward.indices.shape[0]) or not len(frontier):
        return graph.xp.zeros((len(frontier), values.shape[1]), dtype=values.dtype)
    return graph.backend.lane_sums(graph.forward.offsets, graph.forward.indices, values,
                                   rows=frontier.ids)  # fmt: skip


def prepare(graph, direction: str, dtype=None) -> None:
    """Build what the batched operators' products over every out- (or in-) list read, once
    per graph: for ``dtype`` values, or (None) for the counts in which :func:`advance_lanes`
    adds up bools (batched searches)."""
    csr = graph.forward if direction == "out" else graph.reverse
    dtype = _count_dtype(graph) if dtype is None else dtype
    graph.backend.prepare_lanes(csr.offsets, csr.indices, graph.num_vertices, dtype)


def _count_dtype(graph):
    """The backend's dtype for counts up to the graph's largest in-degree (cached)."""

    def largest():
        in_degree = graph.cost_degrees()[1]
        return int(graph.backend.largest(in_degree)) if in_degree.shape[0] else 0

    return graph.backend.count_dtype(graph.cached("largest in-degree", largest))
