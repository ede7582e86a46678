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

Where each row is active in few of its lanes (a deep graph: every source's levels reach a
vertex at another time), a level is better held as its ``(row, lane)`` pairs:
:func:`advance_pairs` and :func:`reduce_pairs` do the same sums for pairs, at the pairs' own
edges on a light level (a sort and a segmented sum), through the products above on a heavy one.

Both read only the edges this device holds: on one device of several, :func:`advance_lanes`
pushes from the rows it holds (sums over its own edges: partial, to be added up by the
enactor's ``add`` or decided by ``min``), and :func:`reduce_lanes` gives the sums of the rows
it owns (0 elsewhere).
"""

from __future__ import annotations

import numpy as np

from ..backend import ops
from .frontier import Frontier

# V x b entries of an array of lanes without a GPU's free memory to go by: a float64 array in
# a 2-core CPU's cache (email-Eu-core, every source: 256 lanes 0.095 s, 1,005 lanes 0.13 s)
LANE_ENTRIES = 1 << 18
GPU_BYTES_PER_ENTRY = 192  # with one: about 70 bytes of lanes and temporaries an entry, x 2.7
MAX_LANES = 1024
# Where a superstep is cheap (NumPy), a batch's products over every edge of a level cost more
# than one source's traversal beyond this many edges (2 cores, betweenness of 32 sampled
# sources: rmat13, 213k edges, 0.12 s batched against 0.15 one at a time; rmat14, 426k edges,
# 0.28 against 0.23; rmat16, 0.29 against 0.19): bigger graphs run one source at a time.
CHEAP_STEP_EDGES = 1 << 18
# A graph whose vertices average at most DEEP_DEGREE out-edges (a road network: 2.1, a grid:
# 4) is taken as deep: hundreds or thousands of levels, each a few vertices a source. There one
# source costs about as many supersteps as a whole batch (its levels are held as (row, lane)
# pairs: a level costs its pairs' edges, not V x b), so every size runs batched, as wide as
# DEEP_LANE_BYTES of lanes hold (LANE_BYTES_PER_ENTRY each: depth, sigma, delta and a
# scratch). luxembourg_osm (114,599 vertices), betweenness from 20 sources on 2 cores: 77.9 s
# at the two lanes LANE_ENTRIES gave, 1.9 s as one batch of 20.
DEEP_DEGREE = 8
DEEP_LANE_BYTES = 1 << 28
LANE_BYTES_PER_ENTRY = 32


# A level whose pairs' rows hold at most num_vertices / LIGHT_SHARE out-edges moves along
# those edges only (where a superstep is cheap: NumPy), with no pass over the V x b lanes:
# luxembourg_osm's levels from 20 sources are a few hundred pairs of 114,599 x 20.
LIGHT_SHARE = 2


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
    values``) when they are few (at most 1 / ``backend.capabilities.lane_push_share`` of the edges) or when
    this device is one of several, else over every in-list, reading the frontier's rows only
    (a pull, :meth:`Backend.lane_sums` with the frontier's positions).
    """
    if values.ndim != 2 or values.shape[0] != len(frontier):
        raise ValueError(
            f"advance_lanes: values of shape {values.shape}, expected "
            f"({len(frontier)}, b): a row of lanes per frontier member"
        )
    xp, n = graph.xp, graph.num_vertices
    flags = values.dtype == np.bool_
    dtype = _count_dtype(graph) if flags else values.dtype  # or-and: a count of 0/1 that
    values = values.astype(dtype, copy=False)  # cannot wrap (at most the largest in-degree)
    total = int(graph.forward.indices.shape[0])
    ids = frontier.ids
    push_share = graph.backend.capabilities.lane_push_share
    if not total or not len(frontier):
        out = xp.zeros((n, values.shape[1]), dtype=dtype)
    elif (
        not graph.context.global_view
        or ops.entries_in(graph.backend, graph.forward.offsets, ids) * push_share <= total
    ):
        offsets, indices, _ = ops.csr_rows(
            graph.backend, graph.forward.offsets, graph.forward.indices, None, ids, n
        )
        data = ops.edge_values(graph.backend, indices, None, dtype)
        out = graph.backend.sparse.csr_matrix((data, indices, offsets), shape=(len(ids), n)).T
        out = out @ values
    else:  # every in-list, reading the value rows of the frontier's in-neighbours only
        position = xp.full(n, -1, dtype=np.int32)
        position[ids] = xp.arange(len(ids), dtype=np.int32)
        out = ops.lane_sums(
            graph.backend, graph.reverse.offsets, graph.reverse.indices, values, position=position
        )
    return out > 0 if flags else out


def reduce_lanes(graph, values, frontier: Frontier):
    """For each row ``u`` of ``frontier``, the sums of ``values[v]`` (a row of lanes) over the
    out-edges ``u -> v`` that ``graph`` holds: an array of shape ``(len(frontier), b)``, in
    ``frontier.ids`` order (0 for a row without edges here).

    One product for the whole batch (``A[rows] @ values``); ``values`` is ``V x b`` floats.
    """
    if values.ndim != 2 or values.shape[0] != graph.num_vertices:
        raise ValueError(
            f"reduce_lanes: values of shape {values.shape}, expected "
            f"({graph.num_vertices}, b): a row of lanes per vertex"
        )
    if not int(graph.forward.indices.shape[0]) or not len(frontier):
        return graph.xp.zeros((len(frontier), values.shape[1]), dtype=values.dtype)
    return ops.lane_sums(
        graph.backend, graph.forward.offsets, graph.forward.indices, values, rows=frontier.ids
    )


def advance_pairs(graph, rows, lanes, values, width: int):
    """Push a batch held as ``(row, lane)`` pairs along the out-edges that ``graph`` holds.

    Parameters
    ----------
    graph : Graph
    rows, lanes : int arrays of one length
        Distinct pairs: vertex ``rows[k]`` is active in lane ``lanes[k]`` (< ``width``).
    values : float array
        The value of each pair.
    width : int
        The lanes of the batch.

    Returns
    -------
    (rows, lanes, sums)
        The distinct pairs ``(v, j)`` reached by an edge ``u -> v`` from a pair ``(u, j)``,
        sorted by ``v`` then ``j``, and the sum of the values pushed to each (0 sums left
        out). A light level (its rows' out-edges at most ``num_vertices / LIGHT_SHARE``, on
        a backend with cheap supersteps) gathers its edges, sorts them by pair and sums each
        run; a heavy one is one product over the lanes (:func:`advance_lanes`).
    """
    xp, n = graph.xp, graph.num_vertices
    offsets = graph.forward.offsets
    starts = offsets[rows]
    degrees = offsets[rows + 1] - starts
    total = int(graph.backend.total(degrees)) if rows.shape[0] else 0
    if not total:
        none = rows[:0]
        return none, none, values[:0]
    if graph.backend.capabilities.costly_supersteps or total * LIGHT_SHARE > n:
        ids = ops.unique(graph.backend, rows)
        dense = xp.zeros((ids.shape[0], width), dtype=values.dtype)
        dense[xp.searchsorted(ids, rows), lanes] = values
        out = advance_lanes(graph, Frontier.from_ids(graph, ids), dense)
        reached, lane = xp.nonzero(out)
        return reached.astype(rows.dtype), lane, out[reached, lane]
    pair = xp.arange(rows.shape[0])
    src, dst, _ = ops.expand(graph.backend, pair, starts, degrees, graph.indices)
    key = dst.astype(np.int64) * width + lanes[src]
    order = xp.argsort(key, kind="stable")  # a pair's terms in the order of the pairs
    key = key[order]
    first = xp.ones(key.shape[0], dtype=bool)
    first[1:] = key[1:] != key[:-1]
    sums = ops.reduce_runs(graph.backend, values[src[order]], first, "sum", np.int64)
    key = key[first]
    kept = xp.flatnonzero(sums)
    key, sums = key[kept], sums[kept]
    return (key // width).astype(rows.dtype), key % width, sums


def reduce_pairs(graph, values, rows, lanes):
    """The pairs' :func:`reduce_lanes`: ``(rows, lanes, sums)``, for each pair ``(rows[k],
    lanes[k])`` whose row this device answers for (every row on one device; on one device
    of several, the rows it owns: it holds their out-lists), in their order, the sum of
    ``values[v, lanes[k]]`` over the out-edges ``rows[k] -> v`` (0 for a row without any).
    A light level gathers its edges' terms and sums them row by row; a heavy one is one
    product over the lanes of its distinct rows."""
    owned = graph.context.owned
    if owned is not None:
        mine = owned[rows]
        rows, lanes = rows[mine], lanes[mine]
    xp, n = graph.xp, graph.num_vertices
    offsets = graph.forward.offsets
    starts = offsets[rows]
    degrees = offsets[rows + 1] - starts
    total = int(graph.backend.total(degrees)) if rows.shape[0] else 0
    out = xp.zeros(rows.shape[0], dtype=values.dtype)
    if not total:
        return rows, lanes, out
    if graph.backend.capabilities.costly_supersteps or total * LIGHT_SHARE > n:
        ids = ops.unique(graph.backend, rows)
        sums = reduce_lanes(graph, values, Frontier.from_ids(graph, ids))
        return rows, lanes, sums[xp.searchsorted(ids, rows), lanes]
    pair = xp.arange(rows.shape[0])
    src, dst, _ = ops.expand(graph.backend, pair, starts, degrees, graph.indices)
    held = xp.flatnonzero(degrees)
    first = xp.zeros(total, dtype=bool)
    first[(xp.cumsum(degrees) - degrees)[held]] = True  # each pair's edges, pair after pair
    out[held] = ops.reduce_runs(graph.backend, values[dst, lanes[src]], first, "sum", np.int64)
    return rows, lanes, out


def width(backend, graph, count: int) -> int:
    """How many of ``count`` traversals a batched run of ``graph`` on ``backend`` takes at
    once: as many lanes as fit, ``LANE_ENTRIES`` entries of ``V x b`` on the CPU or a
    ``GPU_BYTES_PER_ENTRY``-th of the free memory on a GPU, at most ``MAX_LANES`` and
    ``count``. Where supersteps are cheap (``backend.capabilities.costly_supersteps`` False: NumPy), a
    deep graph (at most ``DEEP_DEGREE`` out-edges a vertex on average) takes as many as
    ``DEEP_LANE_BYTES`` hold, at any size, and another with more than ``CHEAP_STEP_EDGES``
    edges 1 (one traversal at a time: few, heavy levels, each pushed or pulled by the
    one-source cost model)."""
    free = backend.free_bytes()
    entries = LANE_ENTRIES if free is None else free // GPU_BYTES_PER_ENTRY
    if (
        not backend.capabilities.costly_supersteps
        and graph.num_edges <= DEEP_DEGREE * graph.num_vertices
    ):
        entries = DEEP_LANE_BYTES // LANE_BYTES_PER_ENTRY  # deep: batched whatever its size
    elif not backend.capabilities.costly_supersteps and graph.num_edges > CHEAP_STEP_EDGES:
        return 1
    return int(max(1, min(MAX_LANES, max(count, 1), entries // max(graph.num_vertices, 1))))


def repeat_levels(graph, functor, *args) -> Frontier | None:
    """A batch's light levels, several supersteps in one call: ``functor.fused_repeat(graph,
    *args)`` (a kernel for the backend, or None), on one device only (on a part among several
    each level travels, a superstep each). The last level's frontier, the sizes of the levels
    before it as ``passed``; None where it does not apply."""
    if not graph.context.global_view:
        return None
    return functor.fused_repeat(graph, *args)


def prepare(graph, direction: str, dtype=None) -> None:
    """Build what the batched operators' products over every out- (or in-) list read, once
    per graph: for ``dtype`` values, or (None) for the counts in which :func:`advance_lanes`
    adds up bools (batched searches)."""
    csr = graph.forward if direction == "out" else graph.reverse
    dtype = _count_dtype(graph) if dtype is None else dtype
    ops.prepare_lanes(graph.backend, csr.offsets, csr.indices, graph.num_vertices, dtype)


def _count_dtype(graph):
    """The backend's dtype for counts up to the graph's largest in-degree (cached)."""

    def largest():
        in_degree = graph.cost_degrees()[1]
        return int(graph.backend.largest(in_degree)) if in_degree.shape[0] else 0

    return ops.count_dtype(graph.backend, graph.cached("largest in-degree", largest))
