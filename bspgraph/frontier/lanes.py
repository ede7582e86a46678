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

ROWS_SHARE = 4  # frontier rows with more than 1/ROWS_SHARE of the edges: the whole product


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
    values``) when they are few, else over every in-list (a pull, ``A^T @ X``, on one device).
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
    if not total or not len(frontier):
        out = xp.zeros((n, values.shape[1]), dtype=dtype)
    elif not graph.context.global_view or _row_edges(graph.forward, ids) * ROWS_SHARE <= total:
        offsets, indices, _ = graph.backend.csr_rows(graph.forward.offsets, graph.forward.indices,
                                                     None, ids, n)  # fmt: skip
        data = graph.backend.edge_values(indices, None, dtype)
        out = graph.backend.sparse.csr_matrix((data, indices, offsets), shape=(len(ids), n)).T
        out = out @ values
    else:
        spread = xp.zeros((n, values.shape[1]), dtype=dtype)
        spread[ids] = values
        out = _matrix(graph, "in", dtype) @ spread
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
    n, ids = graph.num_vertices, frontier.ids
    total = int(graph.forward.indices.shape[0])
    if not total or not len(frontier):
        return graph.xp.zeros((len(frontier), values.shape[1]), dtype=values.dtype)
    if _row_edges(graph.forward, ids) * ROWS_SHARE > total:  # most rows: the whole product
        return (_matrix(graph, "out", values.dtype) @ values)[ids]
    offsets, indices, _ = graph.backend.csr_rows(graph.forward.offsets, graph.forward.indices,
                                                 None, ids, n)  # fmt: skip
    data = graph.backend.edge_values(indices, None, values.dtype)
    return graph.backend.sparse.csr_matrix((data, indices, offsets), shape=(len(ids), n)) @ values


def prepare(graph, direction: str, dtype=None) -> None:
    """Build the adjacency matrix of the out- (or in-) lists that the batched operators read
    in a level over most rows, once per graph: of ``dtype`` values, or (None) of the counts
    in which :func:`advance_lanes` adds up bools (batched searches)."""
    _matrix(graph, direction, _count_dtype(graph) if dtype is None else dtype)


def _matrix(graph, direction: str, dtype):
    """The adjacency matrix of the out- (or in-) lists, unweighted, as a sparse matrix of
    ``dtype`` on the graph's backend, built once per graph."""

    def build():
        csr = graph.forward if direction == "out" else graph.reverse
        data = graph.backend.edge_values(csr.indices, None, dtype)
        shape = (graph.num_vertices, graph.num_vertices)
        return graph.backend.sparse.csr_matrix((data, csr.indices, csr.offsets), shape=shape)

    return graph.cached(("lanes matrix", direction, np.dtype(dtype).str), build)


def _count_dtype(graph):
    """The backend's dtype for counts up to the graph's largest in-degree (cached)."""

    def largest():
        in_degree = graph.cost_degrees()[1]
        return int(graph.backend.largest(in_degree)) if in_degree.shape[0] else 0

    return graph.backend.count_dtype(graph.cached("largest in-degree", largest))


def _row_edges(csr, ids) -> int:
    return int((csr.offsets[ids + 1] - csr.offsets[ids]).sum()) if ids.shape[0] else 0
