"""Betweenness centrality's backward phase for a batch of sources: a lane per source."""

from __future__ import annotations

import numpy as np

from .. import frontier as fr
from ..enactor import Primitive, State
from ..frontier import lanes


class BatchedBackward(Primitive):
    """:class:`Backward` for ``lanes`` sources at once: a level's dependencies for the whole
    batch are one product (the adjacency matrix times ``(1 + delta) / sigma`` of the level
    below)."""

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
        return fr.Frontier.empty(graph)  # the deepest level's dependencies are 0: final

    def step(self, graph, frontier, state, iteration):
        xp, level = graph.xp, self.options["deepest"] - 1 - iteration
        below = state.depth == level + 1
        share = xp.where(below, (1 + state.delta) / xp.where(below, state.sigma, 1.0), 0.0)
        members = fr.filter(graph, fr.Frontier.all(graph),  # the rows this device owns there
                            lambda ids: (state.depth[ids] == level).any(axis=1))  # fmt: skip
        rows = members.ids
        sums = fr.reduce_lanes(graph, share, members)  # plus.times over their out-edges
        state.delta[rows] = xp.where(state.depth[rows] == level, state.sigma[rows] * sums,
                                     state.delta[rows])  # fmt: skip
        return members

    def converged(self, graph, frontier, state, iteration):
        return self.options["deepest"] - 1 - iteration < 1  # level 0 holds the sources

    def prepare(self, graph):
        super().prepare(graph)
        lanes.prepare(graph, "out", np.float64)  # a dense level's dependencies
