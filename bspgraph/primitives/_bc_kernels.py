"""Betweenness centrality's forward step: the ``count_paths`` functor (Brandes' path counts, the
``plus_times`` semiring into the next level), its fused CuPy push, registered as
("count_paths", "cupy", "push"), and its pull, one sparse product on either backend."""

from __future__ import annotations

import numpy as np

from ..backend import COMPARE_SWAP, fused
from ..frontier.frontier import Frontier
from ..frontier.functors import Functor
from ..frontier.kernels import (
    APPEND_AND_FINISH,
    FOR_EACH_EDGE,
    HELPERS,
    SCANS,
    launch_push,
    typed_kernel,
)
from ..frontier.operators import neighbor_reduce


class count_paths(Functor):  # noqa: N801
    """Brandes' forward step into level ``value``: each ``dst`` not reached before (depth
    ``value`` or more) gets depth ``value`` and adds ``sigma[src]`` to ``sigma[dst]``, the
    ``plus_times`` semiring on the edges into the next level; keep those ``dst``. Path counts
    are whole numbers, exact in float64 up to 2^53 in any order of the additions. Pulled
    (a heavy level), one sparse product: :func:`count_pull`."""

    name = "count_paths"
    pull_is_product = True

    def __init__(self, depth, sigma, value: int, backend):
        self.depth, self.sigma, self.value, self.backend = depth, sigma, value, backend

    def __call__(self, src, dst, eid, weight):
        on_path = self.depth[dst] >= self.value  # unvisited, or reached this superstep
        self.depth[dst[on_path]] = self.value
        self.backend.scatter_add(self.sigma, dst[on_path], self.sigma[src[on_path]])
        return on_path

    def candidates(self, graph):
        """The vertices not reached before (depth above ``value``): a pull's candidates."""
        return self.depth > self.value

    def fused_push(self, graph, ids):
        return self.fused_call(graph, "push", ids, self.depth, self.value, self.sigma)

    def fused_pull(self, graph, frontier, candidates):
        return self.fused_call(
            graph, "pull", frontier, candidates, self.depth, self.value, self.sigma
        )


@fused.register("count_paths", ("numpy", "cupy"), "pull")
def count_pull(graph, frontier, candidates, depth, value, sigma) -> Frontier:
    """:class:`count_paths` pulled: the path counts of every vertex not reached before (or of
    ``candidates``) in one sparse product with the ``frontier``'s ``sigma``
    (:func:`~bspgraph.frontier.neighbor_reduce`: over their in-edges, or pushed over the
    frontier's out-edges where those are fewer); those it reaches get depth ``value``."""
    unvisited = Frontier.from_mask(graph, depth > value if candidates is None else candidates)
    paths = neighbor_reduce(
        graph, sigma, "sum", direction="in", frontier=unvisited, sources=frontier
    )
    hit = graph.xp.flatnonzero(paths > 0)
    reached = unvisited.ids[hit]
    depth[reached], sigma[reached] = value, paths[hit]
    return Frontier.from_ids(graph, reached)


_COUNT_PATHS = (
    HELPERS
    + SCANS
    + COMPARE_SWAP
    + r"""
extern "C" __global__ void count_push(const ID* ids, const OFF* starts, const long long* scan,
    long long n_frontier, const OFF* offsets, const ID* indices, DEPTH* depth, DEPTH value,
    DEPTH unset, double* sigma, const DEG* cost_degree, ID* out, unsigned long long* tally) {
"""
    + FOR_EACH_EDGE
    + r"""
      // v is on a shortest path through ids[lo] if unvisited (the one thread whose swap
      // sets its depth appends it) or reached at this level
      const DEPTH seen = depth[v] > value ? compare_swap(&depth[v], unset, value) : depth[v];
      won = seen == unset;
      if (won || seen == value) atomicAdd(&sigma[v], sigma[ids[lo]]);
"""
    + APPEND_AND_FINISH
)


@fused.register("count_paths", "cupy", "push")
def count_push(graph, ids, depth, value, sigma) -> Frontier:
    """Fused push of :class:`count_paths`: one kernel over the frontier's out-edges
    (atomic adds of whole-number path counts: the same sums in any order below 2^53)."""
    cp = graph.xp
    kernel = typed_kernel(
        cp,
        _COUNT_PATHS,
        "count_push",
        id=graph.indices.dtype,
        off=graph.offsets.dtype,
        depth=depth.dtype,
        deg=graph.cost_degrees()[0].dtype,
    )
    kind = depth.dtype.type
    return launch_push(
        graph,
        kernel,
        ids,
        depth,
        kind(value),
        kind(np.iinfo(depth.dtype).max),
        sigma,
        out_bound=graph.num_vertices,
    )
