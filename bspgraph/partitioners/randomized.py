"""The random and biased-random partitioners of the multi-GPU Gunrock paper."""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..backend import get_backend, ops, to_host
from .base import Partitioner, symmetric_adjacency

NUMBA = f"{__package__}._biased_numba"  # the assignment compiled (import numba: optional)


class Random(Partitioner):
    """Random and balanced: a seeded random permutation of the vertices, dealt into P equal
    blocks.

    Part sizes differ by at most one vertex. This is Gunrock's random partitioner (sort the
    vertices by a random key, cut into equal ranges): no locality at all, perfect vertex
    balance, and the one the multi-GPU Gunrock paper uses for all its experiments.

    Examples
    --------
    >>> import numpy as np, bspgraph as bg
    >>> g = bg.Graph.from_edges([0, 1], [1, 2], num_vertices=6, backend="numpy")
    >>> np.bincount(Random()(g, 3, seed=1)).tolist()
    [2, 2, 2]
    """

    name = "random"

    def assign(self, graph, parts: int, *, seed: int) -> np.ndarray:
        num_vertices = int(graph.num_vertices)
        order = np.random.default_rng(seed).permutation(num_vertices)
        owner = np.empty(num_vertices, dtype=np.int32)
        owner[order] = np.arange(num_vertices, dtype=np.int64) * parts // num_vertices
        return owner


class BiasedRandom(Partitioner):
    """Random, biased toward the part that already holds most of a vertex's neighbours.

    Vertices are visited in a seeded random order. Each goes to the part holding most of its
    already-assigned neighbours (out- and in-neighbours), among the parts it fits in: a part
    whose load plus this vertex would exceed ``tolerance`` times the mean load is skipped. Ties,
    and vertices with no assigned neighbour yet, go to a random part among the best that fit.
    When no part fits (a very heavy vertex), the least-loaded part takes it.

    Parameters
    ----------
    tolerance : float
        Allowed load of a part, as a multiple of the mean (``>= 1``; default 1.1).
    balance : {"vertices", "edges"}
        What a part's load counts: its vertices, or the out-edges of its vertices.

    Notes
    -----
    The multi-GPU Gunrock paper's "biased random" partitioner: it shrinks the borders |B_i|
    without giving up much balance. Gunrock's own implementation draws the part at random with
    probabilities mixing the neighbour counts and the free capacity; this one is the greedy
    variant, which cuts fewer edges for the same balance.

    The assignment is sequential by nature (each choice depends on the previous ones): a Python
    loop over the vertices that makes the choice on a row of a V x P score matrix (int32, 4·V·P
    bytes) and updates the scores of the vertex's neighbours with one NumPy scatter. About
    5 µs per vertex: 0.5 s for 10^5 vertices, slow past 10^6. With numba installed (the
    ``numba`` extra) the same loop is one compiled call, with the same choices: rmat20's
    cut in two (10^6 vertices, 33 M edges) 1.0 s against 5.0 on one core.

    Examples
    --------
    >>> import numpy as np, bspgraph as bg
    >>> g = bg.generators.grid(8, 8, backend="numpy")
    >>> owner = BiasedRandom()(g, 4, seed=0)
    >>> int(np.bincount(owner).max()) <= 1.1 * 64 / 4
    True
    """

    name = "biased"

    def __init__(self, tolerance: float = 1.1, balance: Literal["vertices", "edges"] = "vertices"):
        if not isinstance(tolerance, (int, float)) or not tolerance >= 1:
            raise ValueError(f"BiasedRandom(tolerance={tolerance!r}): expected a number >= 1")
        if balance not in ("vertices", "edges"):
            raise ValueError(f"BiasedRandom(balance={balance!r}): expected 'vertices' or 'edges'")
        self.tolerance = float(tolerance)
        self.balance = balance

    def __repr__(self) -> str:
        return f"BiasedRandom(tolerance={self.tolerance}, balance={self.balance!r})"

    def assign(self, graph, parts: int, *, seed: int) -> np.ndarray:
        num_vertices = int(graph.num_vertices)
        rng = np.random.default_rng(seed)
        order = rng.permutation(num_vertices)
        picks = rng.integers(0, 2**62, size=num_vertices)  # tie-breakers
        offsets, neighbours = symmetric_adjacency(graph)
        if self.balance == "edges":
            weight = np.diff(to_host(graph.offsets)).astype(np.float64)
        else:
            weight = np.ones(num_vertices)
        capacity = self.tolerance * float(weight.sum()) / parts
        kernel = ops.accelerated(get_backend("numpy"), NUMBA, "assign_biased")
        if kernel is not None:  # (the same choices in one compiled call)
            return kernel(order, picks, offsets, neighbours, weight, capacity, parts)
        order, picks, weights = order.tolist(), picks.tolist(), weight.tolist()
        starts, ends = offsets[:-1].tolist(), offsets[1:].tolist()

        score = np.zeros((num_vertices, parts), dtype=np.int32)
        columns = [score[:, p] for p in range(parts)]  # views: 1-D scatters are cheaper
        owner = np.empty(num_vertices, dtype=np.int32)
        load = [0.0] * parts
        everyone = range(parts)
        for v in order:
            w = weights[v]
            fits = [p for p in everyone if load[p] + w <= capacity]
            if not fits:
                least = min(load)
                fits = [p for p in everyone if load[p] == least]
            row = score[v].tolist()
            best = max(row[p] for p in fits)
            tied = [p for p in fits if row[p] == best]
            part = tied[picks[v] % len(tied)]
            owner[v] = part
            load[part] += w
            start, end = starts[v], ends[v]
            if end > start:
                columns[part][neighbours[start:end]] += 1
        return owner
