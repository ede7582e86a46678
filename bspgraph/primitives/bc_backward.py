"""Betweenness centrality's backward phase from one source: dependencies, deepest level first."""

from __future__ import annotations

import numpy as np

from .. import frontier as fr
from ..enactor import Primitive, State
from ._bc_kernels import lane_dependencies


class Backward(Primitive):
    """Dependencies from the deepest level up: ``delta[v] = sum of sigma[v] / sigma[w] *
    (1 + delta[w])`` over the edges ``v -> w`` with ``depth[w] = depth[v] + 1``. The vertices
    are put in level order once, at the start (``rows``; option ``bounds``, from
    :func:`~bspgraph.primitives.bc_batched_backward.level_bounds`, says where each level
    begins), so that a level reads its own vertices and those below, not every vertex."""

    state = (
        State("sigma", "float64", output=False, alike=True),  # (the forward phase's)
        State("delta", "float64"),
        State("share", "float64", output=False, alike=True),  # (1 + delta) / sigma below
        State("rows", "vertex", output=False, alike=True),  # every vertex, level by level
    )
    communicate = {"delta": "add"}  # sums over shares of the edges add up
    params = {"depth": "per_vertex", "sigma": "per_vertex"}
    needs_all = True  # a vertex reads the dependencies of its successors, owned or not
    pull_kind, push_kind = "fused", "product"  # sparse products, pulled or pushed (memory.estimate)
    reduces_every_list = True  # ... a heavy level's pull over every out-list (gathered)

    def init_frontier(self, graph, state, *, depth, sigma):
        state.sigma[...] = graph.backend.asarray(sigma)
        depth = graph.backend.asarray(depth)  # one stable sort (radix within 16 bits), unset last
        key = np.uint16 if len(self.options["bounds"]) < 1 << 16 else np.uint64
        state.rows[...] = graph.xp.argsort(depth.astype(key), kind="stable")
        return _level(graph, state, self.options["bounds"], len(self.options["bounds"]) - 2)

    def step(self, graph, frontier, state, iteration):
        bounds = self.options["bounds"]
        level = len(bounds) - 3 - iteration  # from the one above the deepest
        accumulating = lane_dependencies(
            bounds, state.rows, None, state.sigma, state.delta, state.share
        )
        done = fr.repeat_levels(graph, accumulating, level)  # light levels, several at once
        if done is not None:
            return done
        # plus.times over the out-edges into the level below: the frontier (the level the
        # last superstep returned; what arrived since changed only its dependencies)
        below = frontier.ids
        state.share[below] = (1 + state.delta[below]) / state.sigma[below]
        here = _level(graph, state, bounds, level)
        ids = here.ids  # (where the graph holds no out-edge of a vertex, its sum is 0)
        state.delta[ids] = state.sigma[ids] * fr.neighbor_reduce(
            graph, state.share, "sum", frontier=here, sources=frontier, adds_up=True
        )  # only the level below has shares: pushed from it where its edges are fewer
        state.share[below] = 0.0
        return here  # their dependencies are final: the enactor sends them

    def converged(self, graph, frontier, state, iteration):
        return len(self.options["bounds"]) - 3 - iteration < 1  # level 0: the source, no delta


def _level(graph, state, bounds, level: int):
    """The vertices at ``level`` (the source is at 0), in id order."""
    return fr.Frontier.from_ids(graph, state.rows[bounds[level] : bounds[level + 1]])
