"""Betweenness centrality's forward phase from one source: a BFS that counts shortest paths."""

from __future__ import annotations

import numpy as np

from .. import frontier as fr
from ..backend import ops
from ..enactor import Add, Primitive, State
from ._bc_kernels import count_paths


class Forward(Primitive):
    """Level-synchronous BFS that counts shortest paths: ``sigma[w] = sum of sigma[v]`` over
    the edges ``v -> w`` with ``depth[w] = depth[v] + 1``."""

    state = (State("depth", "vertex", init="max", unset=-1), State("sigma", "float64"))
    communicate = {"depth": "min", "sigma": Add(follows="depth")}  # counted at the least depth
    needs_all = True  # a heavy level's pull reads the whole frontier's path counts
    params = {"source": "id"}
    pull_kind = "fused"  # count_paths' pull: one sparse product (memory.estimate)
    reduces_every_list = True  # ... over every in-list, through operators.gathered
    push_kind = "product"  # ... or pushed from the frontier (its kernels' light levels: none)

    def init_frontier(self, graph, state, *, source):
        state.depth[source], state.sigma[source] = 0, 1.0
        return fr.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        count = count_paths(state.depth, state.sigma, iteration + 1, graph.backend)
        # a heavy level is pulled: its path counts in one sparse product (count_paths)
        return fr.advance(graph, frontier, count, unique=True, candidates="functor", repeat=True)

    def traversed_edges(self, graph, state):
        unset = np.iinfo(state.depth.dtype).max
        return ops.total_below(graph.backend, graph.out_degree(), state.depth, unset)

    def prepare(self, graph):
        super().prepare(graph)
        graph.cost_degrees()  # a heavy level's pull reads the in-edges
        fr.level_limits(graph)  # the most a repeated advance (GPU) takes on
