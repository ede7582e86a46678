"""Betweenness centrality's forward phase from a batch of sources: a lane per source."""

from __future__ import annotations

import numpy as np

from .. import frontier as fr
from ..enactor import Primitive, State
from ..frontier import lanes
from ._batch import lane_edges


class BatchedForward(Primitive):
    """:class:`Forward` from ``lanes`` sources at once: ``depth`` and ``sigma`` are rows of
    lanes, and a level's path counts for the whole batch are one product (the frontier's
    ``sigma`` times the adjacency matrix, masked by the unvisited lanes)."""

    state = (
        State("depth", "vertex", init="max", unset=-1, lanes="lanes"),
        State("sigma", "float64", lanes="lanes"),
    )
    communicate = {"depth": "min", "sigma": "add"}  # lane by lane
    params = {"sources": "id"}
    needs_all = True  # every device knows every depth: counts add up only at the new level

    def init_frontier(self, graph, state, *, sources):
        ids = graph.backend.asarray(sources).astype(graph.indices.dtype, copy=False)
        lanes = graph.xp.arange(len(sources))
        state.depth[ids, lanes], state.sigma[ids, lanes] = 0, 1.0
        return fr.Frontier.from_ids(graph, graph.backend.unique(ids))

    def step(self, graph, frontier, state, iteration):
        xp, rows = graph.xp, frontier.ids
        level = xp.where(state.depth[rows] == iteration, state.sigma[rows], 0.0)
        paths = fr.advance_lanes(graph, frontier, level)  # plus.times over the level's edges
        new = (paths > 0) & (state.depth == np.iinfo(state.depth.dtype).max)
        xp.copyto(state.depth, state.depth.dtype.type(iteration + 1), where=new)
        xp.copyto(state.sigma, paths, where=new)
        return fr.Frontier.from_mask(graph, new.any(axis=1))

    def traversed_edges(self, graph, state):
        return lane_edges(graph, state.depth)

    def prepare(self, graph):
        super().prepare(graph)
        lanes.prepare(graph, "in", np.float64)  # a dense level's path counts
