"""Betweenness centrality's forward phase from a batch of sources: a lane per source."""

from __future__ import annotations

import numpy as np

from .. import frontier as fr
from ..backend import ops
from ..enactor import Primitive, State
from ..frontier import lanes
from ._batch import lane_edges


class BatchedForward(Primitive):
    """:class:`Forward` from ``lanes`` sources at once: ``depth`` and ``sigma`` are rows of
    lanes, and a level's path counts for the whole batch are one operator call on its
    ``(row, lane)`` pairs (:func:`~bspgraph.frontier.advance_pairs`: the frontier's ``sigma``
    times the adjacency matrix, kept where the lane is unvisited); light levels, several in
    one launch where the backend has the kernel (``functors.visit_lanes``)."""

    state = (
        State("depth", "vertex", init="max", unset=-1, lanes="lanes"),
        State("sigma", "float64", lanes="lanes"),
    )
    communicate = {"depth": "min", "sigma": "add"}  # lane by lane
    params = {"sources": "id"}
    needs_all = True  # every device knows every depth: counts add up only at the new level
    pull_kind = push_kind = "fused"  # products over the lanes (memory.estimate: its lanes)

    def init_frontier(self, graph, state, *, sources):
        ids = graph.backend.asarray(sources).astype(graph.indices.dtype, copy=False)
        lanes = graph.xp.arange(len(sources))
        state.depth[ids, lanes], state.sigma[ids, lanes] = 0, 1.0
        return fr.Frontier.from_ids(graph, ops.unique(graph.backend, ids))

    def step(self, graph, frontier, state, iteration):
        xp, ids = graph.xp, frontier.ids
        at, lanes = xp.nonzero(state.depth[ids] == iteration)  # the level's (row, lane) pairs
        rows = ids[at]
        counting = fr.functors.visit_lanes(state.depth, iteration + 1, state.sigma)
        reached = fr.repeat_levels(graph, counting, rows, lanes)  # light levels, several at once
        if reached is not None:
            return reached
        # plus.times over the level's edges: the path counts of the pairs it reaches
        rows, lanes, paths = fr.advance_pairs(
            graph, rows, lanes, state.sigma[rows, lanes], state.sigma.shape[1]
        )
        new = xp.flatnonzero(state.depth[rows, lanes] == np.iinfo(state.depth.dtype).max)
        rows, lanes = rows[new], lanes[new]
        state.depth[rows, lanes] = iteration + 1
        state.sigma[rows, lanes] = paths[new]
        return fr.Frontier.from_ids(graph, ops.unique(graph.backend, rows))

    def traversed_edges(self, graph, state):
        return lane_edges(graph, state.depth)

    def prepare(self, graph):
        super().prepare(graph)
        lanes.prepare(graph, "in", np.float64)  # a dense level's path counts
        fr.level_limits(graph)  # the most a launch of light levels takes on
