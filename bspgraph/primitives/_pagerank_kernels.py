"""PageRank's vertex step: the ``damped_update`` functor, its fused CuPy kernel, registered as
("damped_update", "cupy", "step"), and its NumPy kernels: the step in cache-sized chunks
("damped_update", "numpy", "step") and a pull of the rank through the transition matrix
("damped_update", "numpy", "pull"), which leaves no contributions to publish."""

from __future__ import annotations

import numpy as np

from .. import frontier as fr
from ..backend import BLOCK_SUM, STREAM_BLOCKS, fused, ops, while_alive
from ..frontier.functors import Functor
from ..frontier.kernels import typed_kernel
from ..frontier.operators import gathered

CHUNK = 1 << 15  # vertices NumPy's step takes at once: its temporaries stay in cache


class damped_update(Functor):  # noqa: N801
    """PageRank's vertex step over the vertices ``graph`` owns. With ``pulled`` (each vertex's
    sum over its in-edges of ``contribution``): ``rank = alpha * pulled + (alpha * dangling +
    1 - alpha) * teleport`` and ``error`` = the L1 change of ``rank``. Then, with or without it
    (the start vector), each vertex publishes ``contribution = rank * scale`` and ``dangling``
    becomes the rank held by sinks, ``sum(rank * sink)``. ``teleport``: an array, or a float
    when uniform; ``error`` and ``dangling`` are 0-d arrays; ``contribution`` None: none
    published (the pull reads the rank: :func:`pull_rank`). Returns the rank array: ``rank``
    updated in place, or with a fused kernel a new one (on a GPU one pass, 3x faster than in
    place; on NumPy ``pulled`` itself)."""

    name = "damped_update"

    def __init__(self, rank, contribution, scale, sink, teleport, error, dangling, alpha: float):
        self.rank, self.contribution, self.scale, self.sink = rank, contribution, scale, sink
        self.teleport, self.error, self.dangling, self.alpha = teleport, error, dangling, alpha

    def __call__(self, graph, pulled=None):
        rank = self.fused_call(
            graph,
            "step",
            pulled,
            self.rank,
            self.contribution,
            self.scale,
            self.sink,
            self.teleport,
            self.error,
            self.dangling,
            self.alpha,
        )
        if rank is not None:  # a fused kernel (CuPy)
            return rank
        mine = graph.owned_index()  # views on one device, or on a part's contiguous range
        alpha, teleport = self.alpha, self.teleport
        if pulled is not None:
            pulled = pulled[mine]
            pulled *= alpha
            pulled += (alpha * self.dangling + (1 - alpha)) * (
                teleport if isinstance(teleport, float) else teleport[mine]
            )
            change = pulled - self.rank[mine]
            self.error[...] = graph.backend.total(graph.xp.abs(change, out=change))
            self.rank[mine] = pulled
        rank = self.rank[mine]
        if self.contribution is not None:
            self.contribution[mine] = rank * self.scale[mine]
        # (not BLAS's dot product: its threads spin)
        self.dangling[...] = graph.backend.total(rank * self.sink[mine])
        return self.rank


# PageRank's vertex step in one grid-stride pass (with CuPy's element-wise kernels, ten passes:
# 0.77 against 0.21 ms on 16.7M vertices on an H200): each block adds up its
# vertices' L1 change and sink rank, then one block adds the blocks' sums in a fixed order
# (no atomics: the same sums every run).
_DAMPED_UPDATE = (
    BLOCK_SUM
    + r"""
extern "C" __global__ void damped_update(const ID* __restrict__ ids, long long first,
    long long count,
    const double* __restrict__ pulled, const double* __restrict__ rank,
    const double* __restrict__ scale, const double* __restrict__ sink,
    const double* __restrict__ teleport, double uniform, double alpha,
    const double* __restrict__ dangling, double* __restrict__ next,
    double* __restrict__ contribution, double* __restrict__ sums) {
  // the vertices ids[0 .. count) (a device's part), or first .. first + count - 1 (ids null)
  // the new rank goes to another array: rewriting rank in place, this kernel took 0.65 ms on
  // rmat24's 16.7M vertices on an H200, against 0.21 (a plain in-place scaling did not slow)
  const double jump = alpha * dangling[0] + (1 - alpha);  // the previous step's dangling rank
  double change = 0, held = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    const long long v = ids ? (long long)ids[i] : first + i;
    const double previous = rank[v], weight = scale[v], sunk = sink[v];
    double value = previous;
    if (pulled) {
      value = alpha * pulled[v] + jump * (teleport ? teleport[v] : uniform);
      change += fabs(value - previous);
    }
    next[v] = value;
    contribution[v] = value * weight;
    held += value * sunk;
  }
  change = block_sum(change);
  held = block_sum(held);
  if (threadIdx.x == 0) { sums[blockIdx.x] = change; sums[gridDim.x + blockIdx.x] = held; }
}

extern "C" __global__ void damped_totals(const double* sums, int blocks, int pulled,
                                         double* error, double* dangling) {
  double change = 0, held = 0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) {
    change += sums[b];
    held += sums[blocks + b];
  }
  change = block_sum(change);
  held = block_sum(held);
  if (threadIdx.x == 0) {
    if (pulled) error[0] = change;
    dangling[0] = held;
  }
}
"""
)


@fused.register("damped_update", "cupy", "step")
def fused_update(graph, pulled, rank, contribution, scale, sink, teleport, error, dangling, alpha):
    """Fused :class:`damped_update` over the vertices ``graph`` owns: two launches,
    no host read; returns the new rank array (on a device's part, only its own vertices'
    entries are set)."""
    cp = graph.xp
    mine = graph.owned_index()  # every vertex, a range (a part's), or a part's ids
    if isinstance(mine, slice):  # first .. stop - 1, no ids read
        ids, (first, stop, _) = None, mine.indices(graph.num_vertices)
        count = stop - first
    else:
        ids, first, count = mine, 0, int(mine.shape[0])
    blocks = max(min(-(-count // 256), STREAM_BLOCKS), 1)
    sums = cp.empty(2 * blocks, dtype=cp.float64)
    next_rank = cp.empty_like(rank)
    null = np.uintp(0)
    uniform = float(teleport) if np.ndim(teleport) == 0 else 0.0
    teleport = null if np.ndim(teleport) == 0 else teleport
    update = typed_kernel(cp, _DAMPED_UPDATE, "damped_update", id=graph.indices.dtype)
    update(
        (blocks,),
        (256,),
        (
            null if ids is None else ids,
            np.int64(first),
            np.int64(count),
            null if pulled is None else pulled,
            rank,
            scale,
            sink,
            teleport,
            np.float64(uniform),
            np.float64(alpha),
            dangling,
            next_rank,
            contribution,
            sums,
        ),
    )
    totals = typed_kernel(cp, _DAMPED_UPDATE, "damped_totals", id=graph.indices.dtype)
    totals((1,), (256,), (sums, np.int32(blocks), np.int32(pulled is not None), error, dangling))
    return next_rank


@fused.register("damped_update", "numpy", "step")
def update_in_chunks(
    graph, pulled, rank, contribution, scale, sink, teleport, error, dangling, alpha
):
    """:class:`damped_update` over the vertices ``graph`` owns where they are one range (a
    whole graph's, or a part's of an edge_balanced cut; None on another part: the generic
    path), CHUNK vertices at a time, so that no temporary is the size of the graph: the new
    rank is written over ``pulled`` and returned (on a part, copied into ``rank``'s range).
    On grid1000, 5.3 ms a step against the generic 9.5; 2.6 without contributions to
    publish. The L1 change is BLAS's ``dasum`` of the difference: one pass (on one thread at
    this size), where NumPy's ``abs`` and ``sum`` take two (the update on grid1000 1.48 ->
    1.11 ms). The sinks' ids are kept while ``sink`` lives (it does not change during a run;
    a part's sinks are its own)."""
    mine = graph.owned_index()
    if not isinstance(mine, slice):
        return None
    start, stop, _ = mine.indices(graph.num_vertices)
    if pulled is not None:
        from scipy.linalg.blas import dasum

        jump = alpha * float(dangling) + (1 - alpha)
        spare = np.empty(min(CHUNK, stop - start))
        change = 0.0
        for first in range(start, stop, CHUNK):
            chunk = slice(first, min(first + CHUNK, stop))
            new = pulled[chunk]
            temporary = spare[: new.shape[0]]
            new *= alpha
            if isinstance(teleport, float):
                new += jump * teleport
            else:
                new += np.multiply(teleport[chunk], jump, out=temporary)
            change += dasum(np.subtract(new, rank[chunk], out=temporary))
            if contribution is not None:
                np.multiply(new, scale[chunk], out=contribution[chunk])
        error[...] = change
        if graph.context.owned is None:
            rank = pulled
        else:  # (a part's rank elsewhere as it was, whatever its product gave there)
            rank[mine] = pulled[mine]
    elif contribution is not None:  # (a part's others' contributions are theirs to send)
        np.multiply(rank[mine], scale[mine], out=contribution[mine])
    sinks = while_alive(sink, ("sink ids", start), lambda: np.flatnonzero(sink[mine]) + start)
    dangling[...] = rank.take(sinks).sum()
    return rank


def rank_pull(graph):
    """The kernel of ``graph``'s backend that pulls the rank itself, through the transition
    matrix (so that no contributions are published), on a whole graph; None on a device's part
    or where the backend has none."""
    if graph.context.owned is not None:
        return None
    return fused.lookup(damped_update.name, graph.backend, "pull")


@fused.register("damped_update", "numpy", "pull")
def pull_rank(graph, rank, weighted: bool):
    """What each vertex of a whole graph pulls, its in-neighbours' ``rank * scale``, as one
    product of ``rank`` with :func:`transition`: no contributions are published first."""
    indices, values = gathered(graph, "in", rank)
    offsets = graph.reverse.offsets
    return ops.spmv(graph.backend, offsets, indices, transition(graph, weighted), values, len(rank))


def transition(graph, weighted: bool):
    """For each in-edge ``u -> v``, in the in-lists' order: ``w_uv / out_weight(u)`` (``w_uv``
    1 unweighted), 0 where the out-weight is 0: the random walk's transition matrix, as
    PageRank's ``scale`` weighs it, transposed. Kept with the graph."""

    def build():
        xp, lists = graph.xp, graph.reverse
        out_weight = out_weights(graph, weighted)
        scale = 1.0 / xp.where(out_weight == 0, xp.inf, out_weight)
        weights = lists.weights if weighted else None
        return (
            ops.edge_values(graph.backend, lists.indices, weights, np.float64)
            * scale[lists.indices]
        )

    return graph.cached(("transition", weighted), build)


def out_weights(graph, weighted: bool):
    """The out-weight of each vertex ``graph`` owns (every vertex of a whole graph, in id
    order; a part's own, in the order of its ``owned_index``): the sum of its out-edges'
    weights (its out-degree unweighted), one product over the out-lists, kept with the
    graph (a part keeps its own vertices' only: the others' lists are elsewhere)."""

    def build():
        ones = graph.xp.ones(graph.num_vertices)
        every = fr.neighbor_reduce(graph, ones, "sum", direction="out", weighted=weighted)
        if graph.context.owned is None:
            return every
        return every[graph.owned_index()].copy()  # (a view would keep every vertex's)

    return graph.cached(("out-weights", weighted), build)
