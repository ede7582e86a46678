"""1-D edge-balanced partitioning: contiguous id ranges with near-equal out-edge counts."""

from __future__ import annotations

import numpy as np

from ..backend import to_host
from .base import Partitioner


class EdgeBalanced(Partitioner):
    """Contiguous vertex-id ranges ``[s_i, s_{i+1})`` holding near-equal numbers of out-edges.

    The 1-D partitioning of ButterFly BFS: part i takes the vertices ``{s_i, ..., s_{i+1}-1}``,
    where ``s_i`` is the vertex boundary of the CSR offsets nearest to ``i·E/P`` (found with a
    binary search on the offsets, the cumulative out-degree). Vertex counts can differ a lot on
    skewed graphs; each part's edge count is within one vertex's degree of ``E/P``. A graph
    without edges is cut into equal vertex ranges. Deterministic (``seed`` is not used).

    Examples
    --------
    >>> import bspgraph as bg
    >>> star = bg.Graph.from_edges([0, 0, 0, 1, 2, 3], [1, 2, 3, 0, 0, 0], backend="numpy")
    >>> EdgeBalanced()(star, 2).tolist()   # vertex 0 alone holds half of the edges
    [0, 1, 1, 1]
    """

    name = "edge_balanced"

    def assign(self, graph, parts: int, *, seed: int) -> np.ndarray:
        num_vertices = int(graph.num_vertices)
        cumulative = to_host(graph.offsets).astype(np.int64)  # edges before each vertex
        total = int(cumulative[-1])
        if total == 0:
            cumulative = np.arange(num_vertices + 1, dtype=np.int64)
            total = num_vertices
        targets = np.arange(parts + 1, dtype=np.float64) * (total / parts)
        # the boundary nearest each target: the first offset >= target, or the one before it
        after = np.clip(np.searchsorted(cumulative, targets, side="left"), 1, num_vertices)
        before = after - 1
        nearer_before = (targets - cumulative[before]) <= (cumulative[after] - targets)
        starts = np.where(nearer_before, before, after)
        starts[0], starts[-1] = 0, num_vertices
        starts = np.maximum.accumulate(starts)
        return (np.searchsorted(starts, np.arange(num_vertices), side="right") - 1).astype(np.int32)
