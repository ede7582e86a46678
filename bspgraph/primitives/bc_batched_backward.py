"""Betweenness centrality's backward phase for a batch of sources: a lane per source."""

from __future__ import annotations

import numpy as np

from .. import frontier as fr
from ..enactor import Primitive, State
from ..frontier import lanes
from ._bc_kernels import lane_dependencies


class BatchedBackward(Primitive):
    """:class:`Backward` for ``lanes`` sources at once: a level's dependencies for the whole
    batch are one operator call on its ``(row, lane)`` pairs
    (:func:`~bspgraph.frontier.reduce_pairs`: the adjacency matrix times ``(1 + delta) /
    sigma`` of the level below). The pairs of every level are listed once, at the start
    (:class:`Levels`), so that a level reads its own pairs and those below, not every vertex."""

    state = (
        State("depth", "vertex", output=False, lanes="lanes"),
        State("sigma", "float64", output=False, lanes="lanes"),
        State("delta", "float64", lanes="lanes"),
    )
    communicate = {"delta": "replace"}
    params = {"depth": "per_vertex", "sigma": "per_vertex"}
    needs_all = True  # a vertex reads the dependencies of its successors, owned or not

    def init_frontier(self, graph, state, *, depth, sigma):
        state.depth[...] = graph.backend.asarray(depth)
        state.sigma[...] = graph.backend.asarray(sigma)
        self.levels = getattr(self, "levels", {})  # per device: the pairs of every level
        self.levels[graph.context.device] = Levels(graph, state.depth, self.options["deepest"])
        return fr.Frontier.empty(graph)  # the deepest level's dependencies are 0: final

    def step(self, graph, frontier, state, iteration):
        level = self.options["deepest"] - 1 - iteration
        levels = self.levels[graph.context.device]
        accumulating = lane_dependencies(levels, state.depth, state.sigma, state.delta)
        done = fr.repeat_levels(graph, accumulating, level)  # light levels, several at once
        if done is not None:
            return done
        rows, lanes = levels.pairs(level + 1)  # every device's: their dependencies arrived
        share = levels.share  # (1 + delta) / sigma at the level below, 0 elsewhere
        share[rows, lanes] = (1 + state.delta[rows, lanes]) / state.sigma[rows, lanes]
        below = rows, lanes
        rows, lanes = levels.pairs(level, owned=True)  # this device's own pairs of the level
        sums = fr.reduce_pairs(graph, share, rows, lanes)  # plus.times over their out-edges
        state.delta[rows, lanes] = state.sigma[rows, lanes] * sums
        share[below] = 0.0
        return fr.Frontier.from_ids(graph, graph.backend.unique(rows))  # final: they travel

    def converged(self, graph, frontier, state, iteration):
        return self.options["deepest"] - 1 - iteration < 1  # level 0 holds the sources

    def prepare(self, graph):
        super().prepare(graph)
        lanes.prepare(graph, "out", np.float64)  # a heavy level's dependencies
        fr.level_limits(graph)  # the most a launch of light levels takes on


class Levels:
    """The ``(row, lane)`` pairs of each level of a batch's ``depth`` (``V x b``, unset: the
    dtype's largest), found in one stable sort of the depths (a radix sort where they fit
    16 bits): level ``l``'s are ``rows[bounds[l]:bounds[l + 1]]`` and the lanes beside them
    (``device_bounds``: the same on the device); ``share``, a scratch ``V x b`` of zeros."""

    def __init__(self, graph, depth, deepest: int):
        xp, width = graph.xp, int(depth.shape[1])
        key_type = np.uint16 if deepest + 1 < 1 << 16 else np.int64
        keys = xp.minimum(depth.ravel(), deepest + 1).astype(key_type)  # unset: past the last
        order = xp.argsort(keys, kind="stable")  # a level's pairs in (row, lane) order
        self.rows = (order // width).astype(graph.indices.dtype)
        self.lanes = order % width
        bounds = xp.searchsorted(keys[order], xp.arange(deepest + 3))
        self.bounds, self.device_bounds = bounds.tolist(), bounds.astype(np.int64)
        self.owned = graph.context.owned  # a bool per vertex on a part, else None
        self.share = xp.zeros(depth.shape, dtype=np.float64)

    def pairs(self, level: int, owned: bool = False):
        """The pairs at ``level`` (only those of rows this device owns, with ``owned``)."""
        lo, hi = self.bounds[level], self.bounds[level + 1]
        rows, lanes = self.rows[lo:hi], self.lanes[lo:hi]
        if owned and self.owned is not None:
            mine = self.owned[rows]
            rows, lanes = rows[mine], lanes[mine]
        return rows, lanes
