"""Fused NumPy paths for the built-in functors: what kernels.py does on the GPU, done in a few
vectorised NumPy / scipy.sparse passes (and, where numba is installed, one compiled pass),
registered in :mod:`bspgraph.backend.fused` as the "numpy" kernels.

Each must agree with the functor's generic ``__call__``; the tests run both.
"""

from __future__ import annotations

import threading

import numpy as np

from ..backend import fused, ops
from ..backend import row_positions as positions
from .advance import count_out_edges
from .advance.push import DENSE_RATIO, _chunks, rows_of
from .frontier import Frontier
from .kernels import MAX_LEVELS, level_limits, startable
from .operators import owned_range, range_rows, short_rows

NUMBA = f"{__package__}._numba"  # the numba kernels (import numba: optional)

HOST_CHUNK_EDGES = 1 << 22  # edges per pass: smaller temporaries, fewer page faults
# A frontier of at most TINY_VERTICES vertices and TINY_EDGES out-edges is pushed by a loop
# over its edges in Python: a dozen NumPy calls on arrays of a few entries cost more (a road
# path's BFS level, one vertex: 50 -> 13 us a superstep, SSSP's 43 -> 19; benchmarks.light_steps)
TINY_VERTICES = 8
TINY_EDGES = 32
SPMV_SHARE = 4  # candidates holding > 1/SPMV_SHARE of the in-edges pull by one product
# SSSP takes every distance in one Dijkstra up to this many vertices: there a light level's
# fixed NumPy cost outweighs the heap's (luxembourg_osm, 115k: 88 -> 25 ms); on a wider mesh
# the levels are wide enough to pay (grid1000, 1M: 351 ms level by level, 460 in one Dijkstra)
EVERY_DISTANCE_VERTICES = 1 << 18
# relax_push reads a mesh's out-lists from a table of rows padded to the longest (two takes
# of whole rows, no per-edge CSR positions: a cumsum, a repeat, an arange) where the pads add
# at most this share - 1 of the edges (grid1000: 0.1%; luxembourg_osm: 187%, no table)
PADDED_SHARE = 1.25


@fused.register("visit_unvisited", "numpy", "push")
def visit_push(graph, ids, out_edges, depth, value, parent) -> Frontier:
    """``functors.visit_unvisited`` fused on NumPy: no edge ids or weights are gathered, and the
    output is deduplicated in a mask when it may be large, else by a sort. With numba
    installed, one compiled pass instead, which also counts the output's out-edges. (The
    frontier's ``out_edges`` size a GPU kernel's list; NumPy's lists hold what they find.)"""
    ids = ids.astype(np.intp, copy=False)  # NumPy indexes with intp ~4x faster than int32
    edges = _tiny(graph, ids)
    if edges is not None:
        return _visit_tiny(graph, edges, depth, value, parent)
    kernel = ops.accelerated(graph.backend, NUMBA, "visit_push")
    if kernel is not None:
        null = graph.indices[:0] if parent is None else parent
        found, edges = kernel(
            graph.offsets, graph.indices, ids, depth, value, null, graph.cost_degrees()[0]
        )
        return Frontier.from_ids(graph, found, out_edges=int(edges))
    starts, degrees = rows_of(graph, ids)
    total = int(degrees.sum()) if ids.size else 0
    if total == 0:
        return Frontier.empty(graph)
    dense = total * DENSE_RATIO >= graph.num_vertices
    reached = np.zeros(graph.num_vertices, dtype=bool) if dense else []
    for lo, hi in _chunks(degrees, total, np, HOST_CHUNK_EDGES):
        dst = graph.indices[positions(starts[lo:hi], degrees[lo:hi])].astype(np.intp)
        src = None if parent is None else np.repeat(ids[lo:hi], degrees[lo:hi])
        if dense:
            fresh = np.zeros(graph.num_vertices, dtype=bool)
            fresh[dst] = True
            fresh &= depth > value
            depth[fresh] = value
            reached |= fresh
            if parent is not None:  # any one of the frontier sources is a valid parent
                keep = np.flatnonzero(fresh[dst])
                parent[dst[keep]] = src[keep]
        else:
            keep = np.flatnonzero(depth[dst] > value)
            dst = dst[keep]
            depth[dst] = value
            if parent is not None:
                parent[dst] = src[keep]
            reached.append(dst)
    if dense:
        return Frontier.from_mask(graph, reached)
    return Frontier.from_ids(
        graph,
        ops.unique(graph.backend, reached[0] if len(reached) == 1 else np.concatenate(reached)),
    )


@fused.register("visit_unvisited", "numpy", "repeat")
def visit_levels(graph, frontier, depth, value, parent) -> Frontier | None:
    """``functors.visit_unvisited`` repeated level after level: from one vertex of a graph
    whose out-lists are all short, every level in one scipy pass (:func:`_every_level`, with
    numba installed too: luxembourg_osm's BFS 1.6 ms, 3.0 through the numba kernel); else in
    one numba call, on the terms of the GPU's (:func:`kernels.visit_levels`: the same levels
    become supersteps); None without numba or when ``frontier`` is too large to start."""
    out = _every_level(graph, frontier, depth, value, parent)
    if out is not None:
        return out
    kernel = ops.accelerated(graph.backend, NUMBA, "visit_levels")
    if kernel is None or not startable(graph, frontier):
        return None
    null = graph.indices[:0] if parent is None else parent
    found, edges, sizes = kernel(
        graph.offsets,
        graph.indices,
        frontier.ids,
        depth,
        depth.dtype.type(value),
        null,
        graph.cost_degrees()[0],
        *level_limits(graph),
        MAX_LEVELS,
    )
    out = Frontier.from_ids(graph, found, out_edges=int(edges))
    out.passed, out.passed_edges = tuple(sizes[:-1].tolist()), None  # (levels' edges not kept)
    return out


def _every_level(graph, frontier, depth, value, parent) -> Frontier | None:
    """``functors.visit_unvisited`` from a one-vertex ``frontier`` through every level at once,
    without numba: scipy's breadth-first order (one pass in C, over the renumbered graph of
    :func:`_marked`) gives each vertex's level and a parent, on a graph whose out-lists are
    all short (SHORT_ROW: a road network's or a mesh's thousands of light levels, where a pull
    never pays). An unvisited vertex ``k`` levels from the frontier vertex has depth
    ``value - 1 + k`` (any path from the frontier into it is at least that long), and its BFS
    parent is the frontier vertex or unvisited. Depths (and parents) written; every level
    passed (their sizes), and the empty one after them returned: each reached vertex is
    visited now. None elsewhere (the level-by-level path)."""
    if len(frontier) != 1 or not short_rows(graph):
        return None
    n, start, unset = graph.num_vertices, int(frontier.ids[0]), np.iinfo(depth.dtype).max
    row = graph.indices[graph.offsets[start] : graph.offsets[start + 1]]
    if not (depth[row] == unset).any():  # (the last level's end)
        return Frontier.empty(graph)
    new, old = _numbering(graph)
    order, counts, tree = _breadth_first(graph, start, parent is not None)
    sizes = counts[1:] - 1  # the vertices of each level after the start's
    if np.count_nonzero(depth != unset) == 1:  # only the start visited: every level is fresh
        if order.shape[0] - counts.shape[0] == n:  # every vertex reached
            np.take(_by_vertex(order, counts, value - 1, depth.dtype, n), new, out=depth)
        else:  # 0 where unreached
            np.take(_by_vertex(order, counts, value, depth.dtype, n), new, out=depth)
            unreached = depth == 0
            depth -= 1
            depth[unreached] = unset
        if parent is not None:
            child = order[order < n][1:].astype(np.intp)  # (the start has no parent)
            parent[old[child]] = old[tree[child]]
    else:
        real = np.flatnonzero(order < n)
        level = np.repeat(np.arange(value - 1, value - 1 + counts.shape[0]), counts)[real]
        reached = old[order[real]]
        fresh = np.flatnonzero(depth[reached] == unset)
        if not fresh.size:
            return Frontier.empty(graph)
        reached, level = reached[fresh], level[fresh]
        depth[reached] = level
        if parent is not None:
            parent[reached] = old[tree[order[real[fresh]]]]
        sizes = np.bincount(level - (value - 1))[1:]  # levels 1, 2, ...: each holds fresh ones
    out = Frontier.empty(graph)
    out.passed, out.passed_edges = tuple(sizes.tolist()), None
    return out


def prepare_levels(graph, weighted: bool = False) -> None:
    """Build what a repeated advance reads on NumPy, once per graph: on a graph whose
    out-lists are all short, the renumbered scipy matrix that :func:`_every_level` (BFS) or,
    with ``weighted``, :func:`_every_distance` (SSSP, up to EVERY_DISTANCE_VERTICES) reads;
    with ``weighted``, also :func:`_padded`'s table (a mesh's: what relax_push reads)."""
    if graph.backend.name != "numpy" or not short_rows(graph):
        return
    if not weighted or graph.weights is None:
        _marked(graph)
    elif graph.num_vertices <= EVERY_DISTANCE_VERTICES:
        _renumbered(graph)
    if weighted:
        _padded(graph)


def _numbering(graph) -> tuple[np.ndarray, np.ndarray]:
    """``(new, old)``, kept with the graph: the vertices renumbered in Cuthill-McKee order
    (scipy's reverse Cuthill-McKee, reversed), ``new[v]`` vertex ``v``'s number and ``old``
    the inverse. Neighbours get near numbers, so a traversal's reads stay in cache (on
    luxembourg_osm scipy's breadth-first order from five sources takes 0.86-1.22 ms instead
    of 1.73-1.79, and 1.00-1.37 in the reverse order; its Dijkstra, with random weights,
    9.7-10.3 instead of 9.8-10.6, as in the reverse order)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    def numbering():
        n, indices = graph.num_vertices, graph.indices
        pattern = sp.csr_array((np.ones(indices.shape[0]), indices, graph.offsets), shape=(n, n))
        reverse = reverse_cuthill_mckee(pattern, symmetric_mode=not graph.directed)
        old = reverse[::-1].astype(np.intp)
        new = np.empty(n, dtype=np.intp)
        new[old] = np.arange(n)
        return new, old

    return graph.cached(("rcm numbering",), numbering)


def _renumber(graph, values):
    """The out-lists as a scipy CSR matrix with entries ``values`` (parallel edges kept) in the
    numbering of :func:`_numbering`."""
    import scipy.sparse as sp

    new, _ = _numbering(graph)
    n, rows, columns = graph.num_vertices, graph.offsets, graph.indices
    # the columns renamed, then transposed (scipy's counting sort, which keeps parallel edges),
    # twice: the in-lists in new numbers, then the out-lists
    for _ in range(2):
        renamed = new[columns].astype(np.int32)
        matrix = sp.csr_array((values, renamed, rows), shape=(n, n)).T.tocsr()
        values, columns, rows = matrix.data, matrix.indices, matrix.indptr
    return matrix


def _renumbered(graph):
    """The weighted out-lists (float64 weights) renumbered (:func:`_renumber`), kept with the
    graph: what scipy's Dijkstra reads."""
    return graph.cached(
        ("renumbered weights",), lambda: _renumber(graph, graph.weights.astype(np.float64))
    )


MARKED_LEVELS = 1024  # markers first built (then twice as many when a search needs more)


def _marked(graph, levels: int = 0) -> tuple:
    """``(matrix, markers)``, kept with the graph: the renumbered out-lists (:func:`_renumber`,
    vertices ``0 .. n - 1``), then ``markers`` marker vertices ``n, n + 1, ...`` in a chain
    (each one's out-edge to the next), then a root ``n + markers`` whose out-list is ``[n, s]``,
    ``s`` the start of a search (written under ROOT before each one: the matrix's one entry that
    changes). scipy's breadth-first order from the root is one from ``s`` a level later, with
    each level's marker before its vertices: scipy takes the out-edges of a vertex in order and
    of the level's vertices in turn, so the first marker is the first of level 1, and each next
    one the first of the next level. At least ``levels`` markers (then a longer chain replaces
    the one kept), and at most ``n + 1`` (every level a BFS can have, and one more)."""
    import scipy.sparse as sp

    key, n = ("marked",), graph.num_vertices
    if key in graph.cache and graph.cache[key][1] < levels:
        del graph.cache[key]

    def build():
        markers = min(n + 1, max(levels, MARKED_LEVELS))
        pattern = _renumber(graph, np.ones(graph.indices.shape[0]))
        chain = np.arange(n + 1, n + markers, dtype=np.int32)
        indices = np.concatenate([pattern.indices, chain, np.array([n, 0], dtype=np.int32)])
        ends = np.minimum(np.arange(1, markers + 1), markers - 1)  # (the last: no out-edge)
        rows = pattern.indices.shape[0] + np.append(ends, markers + 1)  # (the root: two)
        indptr = np.concatenate([pattern.indptr, rows.astype(pattern.indptr.dtype)])
        size = n + markers + 1
        matrix = sp.csr_array((np.ones(indices.shape[0]), indices, indptr), shape=(size, size))
        return matrix, markers

    return graph.cached(key, build)


ROOT = threading.Lock()  # held from writing a search's start into _marked's root to its end


def _breadth_first(graph, start: int, predecessors: bool = False) -> tuple:
    """``(order, counts, tree)``: scipy's breadth-first order from ``start`` over
    :func:`_marked` (renumbered ids, int32 as scipy gives them, and each level's marker first
    in the level: ids ``n``, ``n + 1``, ... for the levels of ``start``, its neighbours, ...),
    up to the last level that holds a vertex; each level's entries, its marker one of them;
    and with ``predecessors``, each renumbered vertex's parent (else None)."""
    from scipy.sparse.csgraph import breadth_first_order

    n, new = graph.num_vertices, _numbering(graph)[0]
    matrix, markers = _marked(graph)
    while True:
        with ROOT:
            matrix.indices[-1] = new[start]
            found = breadth_first_order(matrix, n + markers, return_predecessors=predecessors)
        order, tree = found if predecessors else (found, None)
        order = order[1:]  # (the root)
        opens = np.flatnonzero(order >= n)  # where each level begins: its marker
        counts = np.empty_like(opens)  # each level's entries, marker and all
        np.subtract(opens[1:], opens[:-1], out=counts[:-1])
        counts[-1] = order.shape[0] - opens[-1]
        if counts[-1] == 1:  # the last marker alone: each level that holds a vertex marked
            break
        matrix, markers = _marked(graph, 2 * markers)
    levels = int(np.argmax(counts == 1))  # (the first without a vertex)
    return order[: opens[levels]], counts[:levels], tree


def _by_vertex(order, counts, first: int, dtype, n: int) -> np.ndarray:
    """For each of the ``n`` renumbered vertices and the markers of :func:`_breadth_first`'s
    ``order`` (levels of ``counts`` entries), ``first + k`` where it lies in level ``k``, 0
    where it is absent: a
    scatter in one C loop (scipy's product with a matrix of a column a level, whose rows are
    the entries' ids: 0.08 ms on luxembourg_osm, against 0.20 for NumPy's repeat and fancy
    assignment, which wants intp ids)."""
    from scipy.sparse._sparsetools import csc_matvec

    size = n + counts.shape[0]  # (a marker a level)
    out = np.zeros(size, dtype=dtype)
    columns = np.zeros(counts.shape[0] + 1, dtype=order.dtype)
    np.cumsum(counts, out=columns[1:])
    levels = np.arange(first, first + counts.shape[0], dtype=dtype)
    csc_matvec(size, counts.shape[0], columns, order, np.ones(order.shape[0], dtype), levels, out)
    return out


def _level_ends(order, children) -> list[int]:
    """Where each level of a breadth-first ``order`` ends (positions; the first level, the
    start, ends at 1, the last at ``order.size``), from each vertex's count of children in
    its tree: level ``k + 1`` holds the children of the levels up to ``k``, so it ends one
    past their count."""
    counted = memoryview(np.cumsum(children[order]))  # children of order[: i + 1]
    ends = [1]
    while ends[-1] < order.size:
        ends.append(counted[ends[-1] - 1] + 1)
    return ends


def _levels(ends: list[int], first, dtype) -> np.ndarray:
    """The level of each position of an order whose levels end at ``ends``, counted from
    ``first``."""
    return np.repeat(np.arange(first, first + len(ends), dtype=dtype), np.diff(ends, prepend=0))


@fused.register("relax_min", "numpy", "repeat")
def relax_levels(graph, frontier, distance, every_level: bool = False) -> Frontier | None:
    """``functors.relax_min`` pushed again from its own output while the levels stay within
    :func:`kernels.level_limits` (up to MAX_LEVELS), on a part among several only
    (``every_level``; on one device a level a superstep costs the same): every vertex the
    levels lowered, each once. None on one device or when ``frontier`` is too large (its
    out-edges counted here when its producer did not: a pass over its ids)."""
    max_vertices, max_edges = level_limits(graph)
    if not every_level:
        return _every_distance(graph, frontier, distance)
    if len(frontier) > max_vertices:  # (then no count of its out-edges)
        return None
    count_out_edges(graph, frontier)  # (kept as frontier.out_edges)
    if not startable(graph, frontier):
        return None
    level, lowered = frontier, []
    for _ in range(MAX_LEVELS):
        level = relax_push(graph, level.ids, level.out_edges, distance)
        if not len(level):
            break
        lowered.append(level.ids)
        if (
            len(level) > max_vertices
            or ops.sum_at(graph.backend, graph.cost_degrees()[0], level.ids) > max_edges
        ):
            break
    if not lowered:
        return Frontier.empty(graph)
    return Frontier.from_ids(graph, ops.unique(graph.backend, np.concatenate(lowered)))


def _every_distance(graph, frontier, distance) -> Frontier | None:
    """``functors.relax_min`` from a one-vertex ``frontier`` to every vertex at once, on one
    device: scipy's Dijkstra from it (one pass in C, over the renumbered graph of
    :func:`_renumbered`; its breadth-first order over :func:`_marked` on an unweighted graph, whose distances are
    hops) lowers each vertex ``v`` to ``distance[s] + dist(s, v)`` where that is less. Where
    every other vertex's out-edges are relaxed already (no later bucket:
    ``advance(repeat=True)``), every edge is relaxed afterwards: the distances are final, and
    an empty frontier comes back, the lowered vertices counted by their level in the
    shortest-path tree (its hops from the start: the rounds a level-synchronous relaxation
    takes to reach them) as the levels passed. On a graph whose out-lists are all short (a
    road network's or a mesh's thousands of light supersteps), unweighted, or with positive
    weights (scipy reads an explicit 0 as no edge) and up to EVERY_DISTANCE_VERTICES vertices;
    None elsewhere."""
    weighted = graph.weights is not None
    if (
        len(frontier) != 1
        or (weighted and graph.num_vertices > EVERY_DISTANCE_VERTICES)
        or not short_rows(graph)
        or graph.weight_range()[0] <= 0
    ):
        return None
    from scipy.sparse.csgraph import dijkstra

    new, _ = _numbering(graph)
    start = int(frontier.ids[0])
    if weighted:
        found, tree = dijkstra(
            _renumbered(graph), indices=int(new[start]), return_predecessors=True
        )
        order, children = _tree_order(tree, int(new[start]))
        ends = _level_ends(order, children)
        hops = np.zeros(found.shape[0], dtype=np.intp)  # 1 + hops, 0 where unreached
        hops[order] = _levels(ends, 1, np.intp)
        sizes = np.diff(ends)
    else:
        order, counts, _ = _breadth_first(graph, start)
        hops = _by_vertex(order, counts, 1, np.intp, graph.num_vertices)  # (and markers')
        found = np.where(hops > 0, hops - 1.0, np.inf)
        sizes = counts[1:] - 1
    candidate = (found[new] + distance[start]).astype(distance.dtype, copy=False)
    lowered = candidate < distance
    count = np.count_nonzero(lowered)
    np.minimum(distance, candidate, out=distance)
    if count != sizes.sum():  # not every vertex reached (but the start) lowered
        sizes = np.bincount(hops[new][lowered])
        sizes = sizes[sizes > 0]
    out = Frontier.empty(graph)
    out.passed, out.passed_edges = tuple(sizes.tolist()), None
    return out


def _tree_order(tree, root: int) -> tuple[np.ndarray, np.ndarray]:
    """A breadth-first order of the vertices that the tree ``tree`` (scipy's predecessors)
    reaches from ``root``, and each vertex's count of children: scipy's order over the tree's
    edges from parent to child (the transpose of one edge a vertex to its parent, a loop
    where it has none)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order

    n = tree.shape[0]
    up = np.where(tree >= 0, tree, np.arange(n, dtype=tree.dtype))
    down = sp.csr_array((np.ones(n), up, np.arange(n + 1, dtype=up.dtype)), shape=(n, n)).T
    down = down.tocsr()
    children = np.diff(down.indptr)
    children[root] -= 1  # (its loop; the unreached vertices' are never read)
    order = breadth_first_order(down, root, return_predecessors=False).astype(np.intp)
    return order, children


@fused.register("relax_min", "numpy", "push")
def relax_push(graph, ids, out_edges, distance) -> Frontier:
    """``functors.relax_min`` fused on NumPy: sources' distances repeated (not gathered per
    edge), or their rows of :func:`_padded`'s table taken whole, one scatter-min of the
    improving candidates, the output deduplicated as above."""
    ids, n = ids.astype(np.intp, copy=False), graph.num_vertices
    edges = _tiny(graph, ids)
    if edges is not None:
        return _relax_tiny(graph, edges, distance)
    table = _padded(graph)
    if table is not None and table[1].dtype == distance.dtype:
        improved = _relax_table(graph, table, ids, distance)
    else:
        improved = _relax_rows(graph, ids, distance)
    if not improved:
        return Frontier.empty(graph)
    dst = improved[0] if len(improved) == 1 else np.concatenate(improved)
    if dst.shape[0] * DENSE_RATIO < n:
        return Frontier.from_ids(graph, ops.unique(graph.backend, dst))
    mask = np.zeros(n, dtype=bool)
    mask[dst] = True
    return Frontier.from_mask(graph, mask)


def _relax_rows(graph, ids, distance) -> list[np.ndarray]:
    """:func:`relax_push`'s relaxation over the CSR rows of ``ids`` (intp): the improved heads
    of each pass, in the ids' dtype (int32 sorts about twice as fast as intp)."""
    starts, degrees = rows_of(graph, ids)
    total = int(degrees.sum()) if ids.size else 0
    improved = []
    for lo, hi in _chunks(degrees, total, np, HOST_CHUNK_EDGES) if total else ():
        eid = positions(starts[lo:hi], degrees[lo:hi])
        heads = graph.indices[eid]
        dst = heads.astype(np.intp)
        candidate = np.repeat(distance[ids[lo:hi]], degrees[lo:hi])
        candidate += 1 if graph.weights is None else graph.weights[eid]
        better = np.flatnonzero(candidate < distance[dst])  # indices: faster than a bool mask
        np.minimum.at(distance, dst[better], candidate[better])
        improved.append(heads[better])
    return improved


def _relax_table(graph, table, ids, distance) -> list[np.ndarray]:
    """:func:`relax_push`'s relaxation over the rows of ``ids`` (intp) in :func:`_padded`'s
    ``table``: whole rows taken (a pad's candidate is inf, never an improvement), in the
    passes of :func:`_relax_rows` (a pass reads the sources that the passes before lowered):
    the same improved heads and distances, bit for bit."""
    heads, weights = table
    passes = [(0, ids.shape[0])]
    if ids.shape[0] * heads.shape[1] > HOST_CHUNK_EDGES:  # (else one pass there too)
        degrees = rows_of(graph, ids)[1]
        passes = _chunks(degrees, int(degrees.sum()), np, HOST_CHUNK_EDGES)
    improved = []
    for lo, hi in passes:
        candidate = np.take(weights, ids[lo:hi], axis=0)  # (take: much faster than indexing)
        candidate += distance[ids[lo:hi]][:, None]  # (w + d: the sum d + w, bit for bit)
        candidate = candidate.reshape(-1)
        ends = np.take(heads, ids[lo:hi], axis=0).reshape(-1)
        dst = ends.astype(np.intp)
        better = np.flatnonzero(candidate < distance[dst])
        np.minimum.at(distance, dst[better], candidate[better])
        improved.append(ends[better])
    return improved


def _padded(graph) -> tuple[np.ndarray, np.ndarray] | None:
    """``(heads, weights)``, kept with the graph: every out-list padded to the longest, one
    row of a table each (heads in the ids' dtype, weights in the distances', 1 where
    unweighted; a pad's head 0 and weight inf), where no list is longer than SHORT_ROW and
    the pads add at most PADDED_SHARE - 1 of the edges (a mesh); else None."""
    if not short_rows(graph):
        return None

    def build():
        weights = graph.weights
        if weights is not None and weights.dtype.kind != "f":
            return None
        n, offsets = graph.num_vertices, graph.offsets
        degrees = np.diff(offsets)
        width = int(degrees.max()) if n else 0
        if width == 0 or n * width > PADDED_SHARE * graph.indices.shape[0]:
            return None
        # each entry's place in the table: its row's start there, plus its place in its list
        at = np.repeat(np.arange(n, dtype=np.int64) * width - offsets[:-1], degrees)
        at += np.arange(graph.indices.shape[0], dtype=np.int64)
        heads = np.zeros((n, width), dtype=graph.indices.dtype)
        heads.reshape(-1)[at] = graph.indices
        table = np.full((n, width), np.inf, dtype=np.float64 if weights is None else weights.dtype)
        table.reshape(-1)[at] = 1 if weights is None else weights
        return heads, table

    return graph.cached(("padded lists",), build)


@fused.register("visit_unvisited", "numpy", "pull")
def visit_pull(graph, in_frontier, candidates, depth, value, parent) -> Frontier:
    """``functors.visit_unvisited`` pulled on NumPy, without early exit: vectorised, a
    candidate's whole in-list is as cheap to scan as its first entries. Candidates holding most
    in-edges pull by one boolean sparse product over every row (scipy's C loop); fewer scan
    their own in-edges (``reduceat`` per row, or every hit when parents are kept). Dense masks
    are indexed through their ids (NumPy's boolean indexing is slower on random masks)."""
    reverse, n = graph.reverse, graph.num_vertices
    span = owned_range(graph)  # a part that owns one range: only its rows hold in-lists
    window = slice(0, n) if span is None else span
    first = window.start
    unvisited = depth[window] > value  # only these (every one, without candidates)
    candidates = unvisited if candidates is None else candidates[window] & unvisited
    active = np.flatnonzero(candidates)
    if first:
        active += first
    degrees = graph.in_degree()[active]
    total = int(degrees.sum())
    if parent is None and total * SPMV_SHARE > reverse.indices.shape[0]:
        offsets, indices = reverse.offsets, reverse.indices
        if span is not None:
            offsets, indices, _ = range_rows(graph, reverse, indices, None, span)
        hits = ops.spmv(graph.backend, offsets, indices, None, in_frontier, offsets.shape[0] - 1)
        hits &= candidates
        ids = np.flatnonzero(hits)
        if span is not None:
            ids += first
            reached = np.zeros(n, dtype=bool)
            reached[window] = hits
        else:
            reached = hits
    else:
        live = np.flatnonzero(degrees)
        active, degrees = active[live], degrees[live]
        starts = reverse.offsets[active]
        found = []
        for lo, hi in _chunks(degrees, total, np, HOST_CHUNK_EDGES) if total else ():
            src = reverse.indices[positions(starts[lo:hi], degrees[lo:hi])]
            hit = in_frontier[src]
            if parent is None:
                first = np.cumsum(degrees[lo:hi]) - degrees[lo:hi]
                found.append(active[lo:hi][np.logical_or.reduceat(hit, first)])
            else:  # every frontier in-neighbour is a valid parent: the last one written wins
                dst = np.repeat(active[lo:hi], degrees[lo:hi])[hit]
                parent[dst] = src[hit]
                found.append(dst)
        ids = np.concatenate(found) if found else active[:0]
        reached = np.zeros(n, dtype=bool)
        reached[ids] = True
        if parent is not None:
            ids = np.flatnonzero(reached)
    depth[ids] = value
    ids = ids.astype(graph.indices.dtype)  # sorted and distinct, as a mask converts to
    return Frontier(n, graph.backend, ids=ids, mask=reached)


def _tiny(graph, ids) -> list[tuple[int, int, int]] | None:
    """The out-edges ``(u, first, last)`` (CSR positions ``first .. last - 1``) of the frontier
    ``ids`` when it is tiny (TINY_VERTICES, TINY_EDGES); else None."""
    if ids.shape[0] > TINY_VERTICES:
        return None
    offsets, rows, total = graph.offsets, [], 0
    for u in ids.tolist():
        first, last = int(offsets[u]), int(offsets[u + 1])
        total += last - first
        if total > TINY_EDGES:
            return None
        rows.append((u, first, last))
    return rows


def _visit_tiny(graph, rows, depth, value, parent) -> Frontier:
    """:func:`visit_push` on a tiny frontier, edge by edge (the first writer wins), with the
    output's out-edges counted."""
    indices, degree, found, edges = graph.indices, graph.cost_degrees()[0], [], 0
    for u, first, last in rows:
        for v in indices[first:last].tolist():
            if depth[v] > value:
                depth[v] = value
                if parent is not None:
                    parent[v] = u
                found.append(v)
                edges += int(degree[v])
    return Frontier.from_ids(graph, np.array(found, dtype=graph.indices.dtype), out_edges=edges)


def _relax_tiny(graph, rows, distance) -> Frontier:
    """:func:`relax_push` on a tiny frontier, edge by edge, with the output's out-edges."""
    indices, weights, degree = graph.indices, graph.weights, graph.cost_degrees()[0]
    improved = {}
    for u, first, last in rows:
        for e, v in enumerate(indices[first:last].tolist(), start=first):
            candidate = distance[u] + (1 if weights is None else weights[e])
            if candidate < distance[v]:
                distance[v] = candidate
                improved[v] = None
    edges = sum(int(degree[v]) for v in improved)
    ids = np.array(sorted(improved), dtype=graph.indices.dtype)
    return Frontier.from_ids(graph, ids, out_edges=edges)
