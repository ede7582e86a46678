"""The biased-random partitioner's greedy assignment in one numba call (optional: importing
this module raises ImportError without numba; reach it through
:meth:`bspgraph.backend.NumpyBackend.accelerated`, which returns None then and
:class:`~.randomized.BiasedRandom` keeps its Python loop). It must agree exactly with that
loop: the same order, fits, ties and tie-breakers and float loads (each neighbour listed once:
``symmetric_adjacency``)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def assign_biased(order, picks, offsets, neighbours, weights, capacity, parts):
    """Each vertex of ``order`` in turn to the part that fits it (``load + weight <=
    capacity``; none fitting: those of least load) with the highest score (its neighbours
    assigned there so far), ties broken by ``picks[v]`` modulo their number; the owners."""
    n = order.shape[0]
    score = np.zeros((n, parts), dtype=np.int32)
    owner = np.empty(n, dtype=np.int32)
    load = np.zeros(parts, dtype=np.float64)
    fits = np.empty(parts, dtype=np.int64)
    for v in order:
        w = weights[v]
        count = 0
        for p in range(parts):
            if load[p] + w <= capacity:
                fits[count] = p
                count += 1
        if count == 0:
            least = load.min()
            for p in range(parts):
                if load[p] == least:
                    fits[count] = p
                    count += 1
        best = score[v, fits[0]]
        for k in range(1, count):
            best = max(best, score[v, fits[k]])
        tied = 0
        for k in range(count):
            if score[v, fits[k]] == best:
                fits[tied] = fits[k]
                tied += 1
        part = fits[picks[v] % tied]
        owner[v] = part
        load[part] += w
        for e in range(offsets[v], offsets[v + 1]):
            score[neighbours[e], part] += 1
    return owner
