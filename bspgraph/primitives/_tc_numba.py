"""Triangle counting's optional numba kernel on NumPy (:func:`._tc_kernels.close_wedges`), where
NumPy must materialise every wedge. Importing this module raises ImportError without numba;
reach it through :meth:`bspgraph.backend.NumpyBackend.accelerated`. Single-threaded, as NumPy
is, and exactly the tally of the path it replaces.
"""

from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(cache=True, nogil=True)


@_jit
def close_wedges(offsets, heads, ids, num_vertices):
    """Triangle tally: for each ``u`` of ``ids`` and each oriented wedge ``u -> v -> w``
    closed by an edge ``u -> w`` (rows of ``heads`` by ``offsets``), one to each of ``u, v,
    w``. The out-neighbours of ``u`` are marked in a byte array (cleared after), so a wedge
    costs one read."""
    tally = np.zeros(num_vertices, dtype=np.int64)
    mark = np.zeros(num_vertices, dtype=np.uint8)
    for u in ids:
        first, last = offsets[u], offsets[u + 1]
        for e in range(first, last):
            mark[heads[e]] = 1
        for e in range(first, last):
            v = heads[e]
            closed = 0
            for f in range(offsets[v], offsets[v + 1]):
                w = heads[f]
                if mark[w]:
                    closed += 1
                    tally[w] += 1
            tally[u] += closed
            tally[v] += closed
        for e in range(first, last):
            mark[heads[e]] = 0
    return tally
