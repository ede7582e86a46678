"""Betweenness centrality's kernels: the ``count_paths`` functor (Brandes' path counts, the
``plus_times`` semiring into the next level) with its fused CuPy push and repeat, registered as
("count_paths", "cupy", "push" / "repeat"), and its pull, one sparse product on either backend;
and a batch's dependencies back, light levels several to a cooperative launch
(:class:`lane_dependencies`, ("lane_dependencies", "cupy", "repeat")), where a deep graph's
levels (a road network's thousands) would otherwise cost a superstep's launches each (a batch's
path counts forward: ``functors.visit_lanes``)."""

from __future__ import annotations

import numpy as np

from ..backend import COMPARE_SWAP, fused, ops
from ..frontier.frontier import Frontier
from ..frontier.functors import Functor
from ..frontier.kernels import (
    APPEND_AND_FINISH,
    COUNT_PATH,
    FOR_EACH_EDGE,
    GRID_BARRIER,
    HELPERS,
    LEVELS,
    SCANS,
    launch_push,
    level_limits,
    levels_from,
    levels_kernel,
    multiprocessors,
    startable,
    typed_kernel,
)
from ..frontier.operators import neighbor_reduce, owned_range, short_rows


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
        ops.scatter_add(self.backend, self.sigma, dst[on_path], self.sigma[src[on_path]])
        return on_path

    def candidates(self, graph):
        """The vertices not reached before (depth above ``value``): a pull's candidates."""
        return self.depth > self.value

    def fused_push(self, graph, ids, edges):
        return self.fused_call(graph, "push", ids, edges, self.depth, self.value, self.sigma)

    def fused_repeat(self, graph, frontier):  # levels value, value + 1, ... at once
        return self.fused_call(graph, "repeat", frontier, self.depth, self.value, self.sigma)

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
    span = owned_range(graph)  # a part's in-lists are its own range's: pull into it only
    if candidates is None and span is not None:
        held = graph.backend.nonzero(depth[span] > value, graph.indices.dtype) + span.start
        unvisited = Frontier.from_ids(graph, held)
    else:
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
    DEPTH unset, double* sigma, const DEG* cost_degree, ID* out, long long capacity,
    unsigned long long* tally) {
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
def count_push(graph, ids, edges, depth, value, sigma) -> Frontier:
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
        edges=edges,
    )


_COUNT_PATHS_LEVELS = (
    HELPERS
    + COMPARE_SWAP
    + COUNT_PATH
    + r"""
#define FUNCTOR_PARAMS DEPTH* depth, DEPTH value, DEPTH unset, double* sigma
#define WIN(item, u, v, e) count_path(u, v, depth, value, unset, sigma)
#define NEXT_LEVEL value += 1
"""
    + LEVELS
)


@fused.register("count_paths", "cupy", "repeat")
def count_levels(graph, frontier, depth, value, sigma) -> Frontier | None:
    """Fused push of :class:`count_paths`, repeated level after level in one cooperative
    launch while the levels stay light (:func:`~bspgraph.frontier.kernels.level_limits`)."""
    if not startable(graph, frontier):
        return None
    kind = depth.dtype.type
    kernel = levels_kernel(graph, _COUNT_PATHS_LEVELS, depth)
    return levels_from(
        graph, frontier, kernel, depth, kind(value), kind(np.iinfo(depth.dtype).max), sigma
    )


# Dependencies from level `top` down to `bottom`, grid barriers between the passes: the pairs
# of level l + 1 put (1 + delta) / sigma in `share` (those of l + 2 put 0 back), then each pair
# (v, j) of level l sums `share` over its out-edges in lane j, times its sigma. A level's pairs
# are rows[bounds[l]:bounds[l + 1]], lanes beside them (null: one source, lane 0), in vertex
# order: its distinct vertices are counted in distinct[l]. `share` is all 0 again at the end.
_DEPENDENCY_LEVELS = (
    GRID_BARRIER
    + r"""
extern "C" __global__ void dependency_levels(const ROW* rows, const long long* lanes,
    const long long* bounds, long long top, long long bottom, long long width,
    const OFF* offsets, const ID* indices, const double* sigma, double* delta, double* share,
    unsigned long long* distinct, unsigned int* barrier) {
  const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long level = top; level >= bottom - 1; --level) {
    if (level + 2 < top + 2)  // the level below the last one summed: back to 0
      for (long long k = bounds[level + 2] + first; k < bounds[level + 3]; k += stride)
        share[(long long)rows[k] * width + (lanes ? lanes[k] : 0)] = 0.0;
    if (level >= bottom)
      for (long long k = bounds[level + 1] + first; k < bounds[level + 2]; k += stride) {
        const long long at = (long long)rows[k] * width + (lanes ? lanes[k] : 0);
        share[at] = (1.0 + delta[at]) / sigma[at];
      }
    grid_barrier(barrier);
    if (level < bottom) return;
    const long long lo = bounds[level], hi = bounds[level + 1];
    unsigned long long count = 0;
    for (long long k = lo + first; k < hi; k += stride) {
      const long long v = rows[k], j = lanes ? lanes[k] : 0;
      double sum = 0.0;
      for (OFF e = offsets[v]; e < offsets[v + 1]; ++e) sum += share[(long long)indices[e] * width + j];
      delta[v * width + j] = sigma[v * width + j] * sum;
      if (k == lo || rows[k - 1] != rows[k]) ++count;
    }
    if (count) atomicAdd(&distinct[level], count);
    grid_barrier(barrier);
  }
}
"""
)


class lane_dependencies:  # noqa: N801 (a functor)
    """Brandes' dependencies, level after level down from a level, of one source (1-D
    ``sigma``, ``delta`` and ``share``) or a batch (rows of lanes): every vertex or pair in
    level order (``rows``, and for a batch ``lanes``; ``bounds``: where each level begins),
    through the scratch ``share`` (all 0 before and after)."""

    name = "lane_dependencies"

    def __init__(self, bounds, rows, lanes, sigma, delta, share):
        self.bounds, self.rows, self.lanes = bounds, rows, lanes
        self.sigma, self.delta, self.share = sigma, delta, share

    def fused_repeat(self, graph, top: int):
        kernel = fused.lookup(self.name, graph.backend, "repeat")
        return None if kernel is None else kernel(graph, top, self)


@fused.register("lane_dependencies", "cupy", "repeat")
def dependency_levels(graph, top: int, accumulating: lane_dependencies) -> Frontier | None:
    """Levels ``top``, ``top - 1``, ... down to the first (level 1: the sources' own are
    none) or to the last light one, in one cooperative launch: the last level's rows, the
    distinct rows of each level before it as ``passed``; None where level ``top`` is heavy or
    some out-list is long (a thread reads a pair's whole list)."""
    bounds, rows, lanes = accumulating.bounds, accumulating.rows, accumulating.lanes
    max_vertices, _ = level_limits(graph)
    if top < 1 or not short_rows(graph) or bounds[top + 1] - bounds[top] > max_vertices:
        return None
    bottom = top
    while bottom > 1 and bounds[bottom] - bounds[bottom - 1] <= max_vertices:
        bottom -= 1  # (level bottom - 1 light too)
    cp, delta = graph.xp, accumulating.delta
    kernel = typed_kernel(
        cp,
        _DEPENDENCY_LEVELS,
        "dependency_levels",
        cooperative=True,
        row=rows.dtype,
        id=graph.indices.dtype,
        off=graph.offsets.dtype,
    )
    distinct = cp.zeros(top + 1, dtype=cp.uint64)
    kernel(
        (multiprocessors(cp),),
        (512,),
        (
            rows,
            np.uintp(0) if lanes is None else lanes.astype(np.int64, copy=False),
            cp.asarray(bounds, dtype=cp.int64),
            np.int64(top),
            np.int64(bottom),
            np.int64(1 if delta.ndim == 1 else delta.shape[1]),
            graph.offsets,
            graph.indices,
            accumulating.sigma,
            delta,
            accumulating.share,
            distinct,
            cp.zeros(2, dtype=cp.uint32),
        ),
    )
    sizes = distinct.get().tolist()[bottom : top + 1][::-1]  # top first: the supersteps' order
    out = Frontier.from_ids(
        graph, ops.unique(graph.backend, rows[bounds[bottom] : bounds[bottom + 1]])
    )
    out.passed, out.passed_edges = tuple(sizes[:-1]), None
    return out
