"""Optional numba kernels for ``functors.visit_unvisited`` on NumPy, used only where they win
clearly over the vectorised NumPy path (see benchmarks/RESULTS.md): a push superstep of BFS on
a small frontier, where NumPy's per-call overhead dominates, and BFS levels one after the other
in one call while frontiers stay small (a grid's thousand levels). Importing this module raises
ImportError without numba; reach the kernels through
:meth:`bspgraph.backend.NumpyBackend.accelerated`, which returns None then (or when
``BSPGRAPH_NUMBA=0``) and the caller keeps its NumPy path. Each kernel is single-threaded, as
NumPy is, and must agree exactly with the path it replaces. (Triangle counting's numba kernel:
``bspgraph/primitives/_tc_numba.py``.)
"""

from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(cache=True, nogil=True)


@_jit
def visit_push(offsets, indices, ids, depth, value, parent, cost_degree):
    """BFS push from ``ids``: every out-neighbour ``v`` with ``depth[v] > value`` gets ``value``
    (and ``parent[v]``, unless ``parent`` is empty); returns those ``v``, each once, and their
    out-degrees (``cost_degree``) summed."""
    total = 0
    for u in ids:
        total += offsets[u + 1] - offsets[u]
    found = np.empty(total, dtype=ids.dtype)
    count = edges = 0
    keep_parent = parent.shape[0] > 0
    for u in ids:
        for e in range(offsets[u], offsets[u + 1]):
            v = indices[e]
            if depth[v] > value:
                depth[v] = value
                if keep_parent:
                    parent[v] = u
                found[count] = v
                count += 1
                edges += cost_degree[v]
    return found[:count], edges


@_jit
def visit_levels(
    offsets, indices, ids, depth, value, parent, cost_degree, max_vertices, max_edges, max_levels
):
    """BFS push levels ``value``, ``value + 1``, ... from ``ids`` (as :func:`visit_push`, each
    level's vertices in the order found) while a level finds at most ``max_vertices``
    vertices with at most ``max_edges`` out-edges (``cost_degree``), up to ``max_levels``:
    returns the last level's vertices, their out-edges and every level's size."""
    sizes = np.empty(max_levels, dtype=np.int64)
    current, levels = ids, 0
    while True:
        current, edges = visit_push(offsets, indices, current, depth, value, parent, cost_degree)
        sizes[levels] = count = current.shape[0]
        levels += 1
        if count == 0 or count > max_vertices or edges > max_edges or levels == max_levels:
            return current, edges, sizes[:levels]
        value += 1
