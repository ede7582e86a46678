"""Fused NumPy paths for the built-in functors: what kernels.py does on the GPU, done in a few
vectorised NumPy / scipy.sparse passes (and, where numba is installed, one compiled pass),
registered in :mod:`bspgraph.backend.fused` as the "numpy" kernels.

Each must agree with the functor's generic ``__call__``; the tests run both.
"""

from __future__ import annotations

import numpy as np

from ..backend import fused, ops
from ..backend import row_positions as positions
from .advance import count_out_edges
from .advance.push import DENSE_RATIO, _chunks, rows_of
from .frontier import Frontier
from .kernels import MAX_LEVELS, SHORT_ROW, level_limits, startable
from .operators import owned_range, range_rows

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


@fused.register("visit_unvisited", "numpy", "push")
def visit_push(graph, ids, depth, value, parent) -> Frontier:
    """``functors.visit_unvisited`` fused on NumPy: no edge ids or weights are gathered, and the
    output is deduplicated in a mask when it may be large, else by a sort. With numba
    installed, one compiled pass instead, which also counts the output's out-edges."""
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
    """``functors.visit_unvisited`` repeated level after level in one numba call, on the terms
    of the GPU's (:func:`kernels.visit_levels`: the same levels become supersteps); None
    without numba or when ``frontier`` is too large to start."""
    kernel = ops.accelerated(graph.backend, NUMBA, "visit_levels")
    if kernel is None:
        return _every_level(graph, frontier, depth, value, parent)
    if not startable(graph, frontier):
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
    :func:`_renumbered`) gives each vertex's level and a parent, on a graph whose out-lists are
    all short (SHORT_ROW: a road network's or a mesh's thousands of light levels, where a pull
    never pays). An unvisited vertex ``k`` levels from the frontier vertex has depth
    ``value - 1 + k`` (any path from the frontier into it is at least that long), and its BFS
    parent is the frontier vertex or unvisited. Depths (and parents) written; the last level
    returned with the sizes of those before it, as a levels kernel returns it. None elsewhere
    (the level-by-level path)."""
    if len(frontier) != 1 or not _short_rows(graph):
        return None
    start, unset = int(frontier.ids[0]), np.iinfo(depth.dtype).max
    row = graph.indices[graph.offsets[start] : graph.offsets[start + 1]]
    if not (depth[row] == unset).any():  # (the last level's end)
        return Frontier.empty(graph)
    _, new, old = _renumbered(graph)
    order, tree, ends = _breadth_first(graph, start)
    if np.count_nonzero(depth != unset) == 1:  # only the start visited: every level is fresh
        renumbered = np.full(depth.shape[0], unset, dtype=depth.dtype)
        renumbered[order] = _levels(ends, value - 1, depth.dtype)
        np.take(renumbered, new, out=depth)  # (renumbered ids written in order: fewer misses)
        if parent is not None:
            parent[old[order[1:]]] = old[tree[order[1:]]]
        sizes = np.diff(ends)
        last = old[order[ends[-2] :]]
    else:
        reached, level = old[order], _levels(ends, 0, np.intp)
        fresh = np.flatnonzero(depth[reached] == unset)
        if not fresh.size:
            return Frontier.empty(graph)
        reached, level = reached[fresh], level[fresh]
        depth[reached] = level + (value - 1)
        if parent is not None:
            parent[reached] = old[tree[order[fresh]]]
        sizes = np.bincount(level)[1:]  # levels 1, 2, ...: each holds fresh vertices
        last = reached[level == sizes.size]
    last = last.astype(graph.indices.dtype, copy=False)
    out = Frontier.from_ids(graph, last, out_edges=int(graph.cost_degrees()[0][last].sum()))
    out.passed, out.passed_edges = tuple(sizes[:-1].tolist()), None
    return out


def prepare_levels(graph, weighted: bool = False) -> None:
    """Build what a repeated advance reads on NumPy, once per graph: on a graph whose
    out-lists are all short, the renumbered scipy matrix that :func:`_every_level` (BFS) or,
    with ``weighted``, :func:`_every_distance` (SSSP, up to EVERY_DISTANCE_VERTICES) reads."""
    weighted = weighted and graph.weights is not None
    if weighted and graph.num_vertices > EVERY_DISTANCE_VERTICES:
        return
    if graph.backend.name == "numpy" and _short_rows(graph):
        _renumbered(graph, weighted)


def _short_rows(graph) -> bool:
    """Whether no out-list is longer than SHORT_ROW (read once per graph)."""
    degrees = graph.cost_degrees()[0]
    return graph.cached(
        ("short rows",), lambda: not degrees.shape[0] or int(degrees.max()) <= SHORT_ROW
    )


def _renumbered(graph, weighted: bool = False) -> tuple:
    """``(matrix, new, old)``, kept with the graph: its out-lists as a scipy CSR matrix of
    ones (float64 weights with ``weighted`` on a weighted graph; parallel edges kept) with the
    vertices renumbered in reverse Cuthill-McKee order, ``new[v]`` vertex ``v``'s number there
    and ``old`` the inverse. Neighbours get near numbers, so a traversal's reads stay in cache
    (on luxembourg_osm scipy's breadth-first order takes 1.0 ms instead of 1.8, its Dijkstra
    10.0 instead of 11.8)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    n, offsets, indices = graph.num_vertices, graph.offsets, graph.indices
    weights = graph.weights if weighted else None

    def numbering():
        pattern = sp.csr_array((np.ones(indices.shape[0]), indices, offsets), shape=(n, n))
        old = reverse_cuthill_mckee(pattern, symmetric_mode=not graph.directed).astype(np.intp)
        new = np.empty(n, dtype=np.intp)
        new[old] = np.arange(n)
        return new, old

    def renumber():
        new, old = graph.cached(("rcm numbering",), numbering)
        values = np.ones(indices.shape[0]) if weights is None else weights.astype(np.float64)
        # the columns renamed, then transposed (scipy's counting sort, which keeps parallel
        # edges), twice: the in-lists in new numbers, then the out-lists
        rows, columns = offsets, indices
        for _ in range(2):
            renamed = new[columns].astype(np.int32)
            matrix = sp.csr_array((values, renamed, rows), shape=(n, n)).T.tocsr()
            values, columns, rows = matrix.data, matrix.indices, matrix.indptr
        return matrix, new, old

    return graph.cached(("renumbered", weights is not None), renumber)


def _breadth_first(graph, start: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """``(order, tree, ends)``: scipy's breadth-first order from ``start`` over the graph of
    :func:`_renumbered` (renumbered ids), each vertex's parent there (negative for the start
    and the unreached) and where each level of the order ends (:func:`_level_ends`)."""
    from scipy.sparse.csgraph import breadth_first_order

    matrix, new, _ = _renumbered(graph)
    order, tree = breadth_first_order(matrix, int(new[start]), return_predecessors=True)
    order, tree = order.astype(np.intp), tree.astype(np.intp)
    return order, tree, _level_ends(order, np.bincount(tree[order[1:]], minlength=tree.shape[0]))


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
        level = relax_push(graph, level.ids, distance)
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
    :func:`_renumbered`; its breadth-first order on an unweighted graph, whose distances are
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
        or not _short_rows(graph)
        or graph.weight_range()[0] <= 0
    ):
        return None
    from scipy.sparse.csgraph import dijkstra

    matrix, new, old = _renumbered(graph, weighted)
    start = int(frontier.ids[0])
    if weighted:
        found, tree = dijkstra(matrix, indices=int(new[start]), return_predecessors=True)
        order, children = _tree_order(tree, int(new[start]))
        ends = _level_ends(order, children)
    else:
        order, _, ends = _breadth_first(graph, start)
        found = np.full(graph.num_vertices, np.inf)
        found[order] = _levels(ends, 0, found.dtype)
    candidate = (found[new] + distance[start]).astype(distance.dtype, copy=False)
    lowered = candidate < distance
    count = np.count_nonzero(lowered)
    np.minimum(distance, candidate, out=distance)
    if count == order.size - 1:  # every vertex reached (but the start) lowered
        sizes = np.diff(ends)
    else:
        hops = np.zeros(graph.num_vertices, dtype=np.intp)
        hops[old[order]] = _levels(ends, 0, np.intp)
        sizes = np.bincount(hops[lowered])
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
def relax_push(graph, ids, distance) -> Frontier:
    """``functors.relax_min`` fused on NumPy: sources' distances repeated (not gathered per
    edge), one scatter-min of the improving candidates, the output deduplicated as above."""
    ids, n = ids.astype(np.intp, copy=False), graph.num_vertices
    edges = _tiny(graph, ids)
    if edges is not None:
        return _relax_tiny(graph, edges, distance)
    starts, degrees = rows_of(graph, ids)
    total = int(degrees.sum()) if ids.size else 0
    if total == 0:
        return Frontier.empty(graph)
    improved = []
    for lo, hi in _chunks(degrees, total, np, HOST_CHUNK_EDGES):
        eid = positions(starts[lo:hi], degrees[lo:hi])
        dst = graph.indices[eid].astype(np.intp)
        candidate = np.repeat(distance[ids[lo:hi]], degrees[lo:hi])
        candidate += 1 if graph.weights is None else graph.weights[eid]
        better = np.flatnonzero(candidate < distance[dst])  # indices: faster than a bool mask
        dst = dst[better]
        np.minimum.at(distance, dst, candidate[better])
        improved.append(dst)
    dst = improved[0] if len(improved) == 1 else np.concatenate(improved)
    if dst.shape[0] * DENSE_RATIO < n:
        return Frontier.from_ids(graph, ops.unique(graph.backend, dst))
    mask = np.zeros(n, dtype=bool)
    mask[dst] = True
    return Frontier.from_mask(graph, mask)


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
