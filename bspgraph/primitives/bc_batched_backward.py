"""Betweenness centrality's backward phase for a batch of sources: a lane per source."""

from __future__ import annotations

import numpy as np

from .. import frontier as fr
from ..backend import backend_of, ops, to_host
from ..enactor import Primitive, State
from ..frontier import lanes
from ._bc_kernels import lane_dependencies


class BatchedBackward(Primitive):
    """:class:`Backward` for ``lanes`` sources at once: a level's dependencies for the whole
    batch are one operator call on its ``(row, lane)`` pairs
    (:func:`~bspgraph.frontier.reduce_pairs`: the adjacency matrix times ``(1 + delta) /
    sigma`` of the level below). The pairs are put in level order once, at the start
    (``rows``, ``columns``; option ``bounds``, from :func:`level_bounds`, says where each
    level's begin), so that a level reads its own pairs and those below, not every vertex."""

    state = (
        State("sigma", "float64", output=False, lanes="lanes", alike=True),
        State("delta", "float64", lanes="lanes"),
        State("share", "float64", output=False, lanes="lanes", alike=True),  # (1 + delta) / sigma
        State("rows", "vertex", output=False, lanes="lanes", alike=True),  # every pair, by level:
        State("columns", "int64", output=False, lanes="lanes", alike=True),  # row and lane
    )
    communicate = {"delta": "replace"}
    params = {"depth": "per_vertex", "sigma": "per_vertex"}
    needs_all = True  # a vertex reads the dependencies of its successors, owned or not
    pull_kind = push_kind = "fused"  # products over the lanes (memory.estimate: its lanes)

    def init_frontier(self, graph, state, *, depth, sigma):
        state.sigma[...] = graph.backend.asarray(sigma)
        depth = graph.backend.asarray(depth)
        # one stable sort of the depths (a radix sort where they fit 16 bits), unset last
        key = np.uint16 if len(self.options["bounds"]) < 1 << 16 else np.uint64
        order = graph.xp.argsort(depth.ravel().astype(key), kind="stable")
        width = depth.shape[1]
        state.rows.ravel()[...] = order // width
        state.columns.ravel()[...] = order % width
        return fr.Frontier.empty(graph)  # the deepest level's dependencies are 0: final

    def step(self, graph, frontier, state, iteration):
        level = len(self.options["bounds"]) - 3 - iteration  # from the one above the deepest
        accumulating = lane_dependencies(
            self.options["bounds"],
            state.rows.ravel(),
            state.columns.ravel(),
            state.sigma,
            state.delta,
            state.share,
        )
        done = fr.repeat_levels(graph, accumulating, level)  # light levels, several at once
        if done is not None:
            return done
        below = _pairs(state, self.options["bounds"], level + 1)  # dependencies final
        state.share[below] = (1 + state.delta[below]) / state.sigma[below]
        rows, lanes = _pairs(state, self.options["bounds"], level)
        rows, lanes, sums = fr.reduce_pairs(graph, state.share, rows, lanes)  # plus.times
        state.delta[rows, lanes] = state.sigma[rows, lanes] * sums  # over the out-edges
        state.share[below] = 0.0
        return fr.Frontier.from_ids(graph, ops.unique(graph.backend, rows))  # final: they travel

    def converged(self, graph, frontier, state, iteration):
        return len(self.options["bounds"]) - 3 - iteration < 1  # level 0 holds the sources

    def prepare(self, graph):
        super().prepare(graph)
        lanes.prepare(graph, "out", np.float64)  # a heavy level's dependencies
        fr.level_limits(graph)  # the most a launch of light levels takes on


def level_bounds(depth) -> tuple[int, ...]:
    """:class:`BatchedBackward`'s ``bounds`` for a batch's ``depth`` (``V x b``, -1 where
    unreached): ``bounds[L]`` pairs lie above level ``L``, and the last entry counts every
    reached pair (two passes over the depths, two reads: the deepest level, then the counts;
    CuPy's bincount would read its largest and smallest through plain reduction kernels, which
    take milliseconds where an activation turns CUB's off: one source on rmat24, H200, 10.9 ms
    against 1.0 so)."""
    backend = backend_of(depth)
    levels = (depth + 1).ravel()  # 0: unreached
    deepest = int(backend.largest(levels)) if levels.shape[0] else 0
    sizes = to_host(ops.tally(backend, levels, deepest + 1))[1:]
    return (0, *np.cumsum(sizes).tolist())


def _pairs(state, bounds, level: int):
    """The ``(rows, lanes)`` of the pairs at ``level``: those of ``state.rows`` and
    ``state.columns`` from ``bounds[level]`` to ``bounds[level + 1]``."""
    at = slice(bounds[level], bounds[level + 1])
    return state.rows.ravel()[at], state.columns.ravel()[at]
