"""Betweenness centrality's backward phase from one source: dependencies, deepest level first."""

from __future__ import annotations

from .. import frontier as fr
from ..enactor import Primitive, State


class Backward(Primitive):
    """Dependencies from the deepest level up: ``delta[v] = sum of sigma[v] / sigma[w] *
    (1 + delta[w])`` over the edges ``v -> w`` with ``depth[w] = depth[v] + 1``."""

    state = (
        State("depth", "int64", output=False),
        State("sigma", "float64", output=False),
        State("delta", "float64"),
    )
    communicate = {"delta": "replace"}
    params = {"depth": "per_vertex", "sigma": "per_vertex"}
    needs_all = True  # a vertex reads the dependencies of its successors, owned or not

    def init_frontier(self, graph, state, *, depth, sigma):
        state.depth[...] = graph.backend.asarray(depth)
        state.sigma[...] = graph.backend.asarray(sigma)
        return _at_depth(graph, state, self.options["deepest"])  # delta 0: final already

    def step(self, graph, frontier, state, iteration):
        # plus.times over the out-edges into the level below: the frontier (the level the
        # last superstep returned; what arrived since changed only its dependencies)
        below = frontier.ids
        share = graph.xp.zeros(graph.num_vertices)  # (1 + delta) / sigma, there only
        share[below] = (1 + state.delta[below]) / state.sigma[below]
        level = _at_depth(graph, state, self.options["deepest"] - 1 - iteration)
        ids = level.ids  # (where the graph holds no out-edge of a vertex, its sum is 0)
        state.delta[ids] = state.sigma[ids] * fr.neighbor_reduce(
            graph, share, "sum", frontier=level, sources=frontier
        )  # only the level below has shares: pushed from it where its edges are fewer
        return level  # their dependencies are final: the enactor sends them

    def converged(self, graph, frontier, state, iteration):
        return self.options["deepest"] - 1 - iteration < 1  # level 0 is the source: no delta


def _at_depth(graph, state, depth: int):
    """The vertices at ``depth`` (the source is at 0), in id order."""
    return fr.Frontier.from_mask(graph, state.depth == depth)
