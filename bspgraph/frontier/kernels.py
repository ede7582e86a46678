"""Fused CUDA kernels for the built-in functors (compiled by CuPy at first use, per dtype),
registered in :mod:`bspgraph.backend.fused` as the "cupy" kernels of ``visit_unvisited`` and
``relax_min``; the edge-walking pieces (HELPERS, SCANS, FOR_EACH_EDGE, APPEND_AND_FINISH,
typed_kernel, launch_push) also serve the kernels of one algorithm that live beside it.

Work is split by edges, not vertices: tiles of edge slots, a block each, and a search of the
degree scan for each slot's source (a vertex of degree 10^6 spreads over many blocks), then the
functor's test and an atomic update; the single winner of each vertex appends it to the output
(through the block's queue), so the output is distinct without a separate filter.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ..backend import BLOCK_SUM, C_TYPES, COMPARE_SWAP, compile_kernel, fused, ops
from .frontier import Frontier
from .operators import owned_range, short_rows

# Edge slots (the frontier's out-edges, in order) are cut into tiles of 256 * EDGES_PER_THREAD,
# a block per tile (grid-stride): warp 0 finds the tile's first and last frontier vertex in
# the inclusive degree scan, the block copies that piece of the scan to shared memory, and
# thread t takes slots t, t + 256, ... (adjacent threads read adjacent edges), each finding its
# source by a binary search of the shared piece. A frontier of at most one tile's vertices
# comes without a scan: every block scans its degrees in shared memory (one launch a level,
# where the host's launches of the scan would cost more than the level's edges). Vertices a
# thread wins go to a shared queue, which the block appends to the output with one atomic per
# tile; the output's out-edges are summed a block at a time.
EDGES_PER_THREAD = 4  # 8 was slower on an H200 (its 25 KB of shared memory a block crowd L1)
FOR_EACH_EDGE = r"""
  __shared__ long long piece[TILE + 1];  // scan[first - 1 .. last]
  __shared__ ID queue[TILE];
  __shared__ long long first, last;
  __shared__ unsigned int queued;
  __shared__ unsigned long long at;
  const bool small = scan == nullptr;  // n_frontier <= TILE: piece = the whole scan, from here
  if (small) scan_degrees(ids, n_frontier, offsets, piece);
  const long long total = small ? piece[n_frontier] : scan[n_frontier - 1];  // no host read
  unsigned long long edges = 0;  // the out-degrees of the vertices this thread appends
  for (long long base = blockIdx.x * (long long)TILE; base < total;
       base += (long long)gridDim.x * TILE) {  // block-uniform: every thread syncs below
    const long long end = base + TILE < total ? base + TILE : total;
    if (threadIdx.x < 32) {  // warp 0 finds the tile's first and last frontier vertex
      const long long f = small ? 0 : warp_first_above(scan, n_frontier, base);
      const long long l = small ? n_frontier - 1 : warp_first_above(scan, n_frontier, end - 1);
      if (threadIdx.x == 0) { first = f; last = l; queued = 0; }
    }
    __syncthreads();
    const long long count = last - first + 1;  // zero-degree vertices may make it > TILE
    const bool shared = count <= TILE;
    if (shared && !small)
      for (long long i = threadIdx.x; i <= count; i += blockDim.x)
        piece[i] = first + i ? scan[first + i - 1] : 0;
    __syncthreads();
    for (long long slot = base + threadIdx.x; slot < end; slot += blockDim.x) {
      long long lo, before;  // slot's frontier position, and the edge slots before its row
      if (shared) {
        long long a = 1, b = count;  // piece[a] = scan[first + a - 1]
        while (a < b) { long long mid = (a + b) >> 1; if (piece[mid] > slot) b = mid; else a = mid + 1; }
        lo = first + a - 1;
        before = piece[a - 1];
      } else {
        lo = first_above(scan, n_frontier, slot);
        before = lo ? scan[lo - 1] : 0;
      }
      const long long e = (long long)(small ? offsets[ids[lo]] : starts[lo]) + (slot - before);
      const ID v = indices[e];
      bool won;
"""

# After the functor's test: a won vertex v joins the block's queue and its out-degree
# (cost_degrees) the thread's sum; at the end of the tile one atomic reserves the queue's place
# in the output. The sums go to tally[1] once a block, so that one 16-byte read tells the host
# the output's size and out-edges: the next superstep's direction test needs no read of its own.
# The output holds ``capacity`` vertices (a push keeps at most one an edge: the frontier's
# out-edges bound it); more are counted, not written, and reading that count raises.
APPEND_AND_FINISH = r"""
      if (won) { queue[atomicAdd(&queued, 1u)] = v; edges += cost_degree[v]; }
    }
    __syncthreads();
    if (threadIdx.x == 0) at = atomicAdd(&tally[0], (unsigned long long)queued);
    __syncthreads();
    for (unsigned int i = threadIdx.x; i < queued; i += blockDim.x)
      if (at + i < (unsigned long long)capacity) out[at + i] = queue[i];  // else counted only
    __syncthreads();  // before thread 0 resets the queue for the next tile
  }
  add_block_sum(edges, &tally[1]);
}
"""
HELPERS = (
    BLOCK_SUM
    + r"""
#define TILE (256 * PER_THREAD)
__device__ inline long long first_above(const long long* scan, long long n, long long x) {
  long long lo = 0, hi = n - 1;  // the first position with scan[pos] > x (x < scan[n - 1])
  while (lo < hi) { long long mid = (lo + hi) >> 1; if (scan[mid] > x) hi = mid; else lo = mid + 1; }
  return lo;
}

// The same, by every lane of one warp: 32 probes a step (about 4 dependent loads where a
// binary search makes 19; as one thread's search it held its block's tile back).
__device__ inline long long warp_first_above(const long long* scan, long long n, long long x) {
  const int lane = threadIdx.x & 31;
  long long lo = 0, hi = n - 1;  // scan[hi] > x, and lo == 0 or scan[lo - 1] <= x
  while (hi - lo > 31) {
    const long long step = (hi - lo + 32) / 32;  // 32 chunks cover [lo, hi]
    long long end = lo + (lane + 1) * step - 1;
    if (end > hi) end = hi;
    const unsigned int above = __ballot_sync(0xffffffffu, end == hi || scan[end] > x);
    const int chunk = __ffs(above) - 1;  // the first chunk whose last entry is above x
    const long long chunk_end = lo + (chunk + 1) * step - 1;
    lo += chunk * step;
    if (chunk_end < hi) hi = chunk_end;
  }
  const long long pos = lo + lane;
  return lo + __ffs(__ballot_sync(0xffffffffu, pos >= hi || scan[pos] > x)) - 1;
}

// One atomic a block: the sum of every thread's value (all threads of the block call it).
__device__ inline void add_block_sum(unsigned long long value, unsigned long long* target) {
  const unsigned long long total = block_sum(value);
  if (threadIdx.x == 0 && total) atomicAdd(target, total);
}
"""
)
# Scans of a frontier's out-degrees: block_exclusive_scan adds up one value a thread over the
# block (warp shuffles, then the warp totals); scan_degrees fills a block's shared piece for a
# frontier of at most one tile's vertices (PER_THREAD a thread, 256 threads); frontier_scan,
# blocks of 1024 threads, writes starts and the inclusive scan of a larger frontier to memory:
# block b scans its chunk of the frontier, starting from the degrees of the chunks before it
# (summed by frontier_sums, a launch before; none for a frontier that one block takes), in
# place of four row gathers and CuPy's scan.
SCANS = r"""
__device__ inline long long block_exclusive_scan(long long value) {
  __shared__ long long warp_totals[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  long long inclusive = value;
  for (int s = 1; s < 32; s <<= 1) {
    const long long x = __shfl_up_sync(0xffffffffu, inclusive, s);
    if (lane >= s) inclusive += x;
  }
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    long long w = lane < (blockDim.x >> 5) ? warp_totals[lane] : 0;
    for (int s = 1; s < 32; s <<= 1) {
      const long long x = __shfl_up_sync(0xffffffffu, w, s);
      if (lane >= s) w += x;
    }
    warp_totals[lane] = w;
  }
  __syncthreads();
  const long long exclusive = inclusive - value + (warp ? warp_totals[warp - 1] : 0);
  __syncthreads();  // warp_totals is free for the next call
  return exclusive;
}

__device__ inline void scan_degrees(const ID* ids, long long n, const OFF* offsets,
                                    long long* piece) {
  long long running[PER_THREAD], sum = 0;  // piece[i + 1]: degrees of ids[0 .. i] summed
  for (int j = 0; j < PER_THREAD; ++j) {
    const long long i = (long long)threadIdx.x * PER_THREAD + j;
    sum += i < n ? (long long)(offsets[ids[i] + 1] - offsets[ids[i]]) : 0;
    running[j] = sum;
  }
  const long long before = block_exclusive_scan(sum);
  for (int j = 0; j < PER_THREAD; ++j) {
    const long long i = (long long)threadIdx.x * PER_THREAD + j;
    if (i < n) piece[i + 1] = before + running[j];
  }
  if (threadIdx.x == 0) piece[0] = 0;
  __syncthreads();
}

extern "C" __global__ void frontier_sums(const ID* ids, long long n, const OFF* offsets,
                                         long long chunk, long long* sums) {
  const long long first = blockIdx.x * chunk, end = first + chunk < n ? first + chunk : n;
  long long sum = 0;
  for (long long i = first + threadIdx.x; i < end; i += blockDim.x)
    sum += offsets[ids[i] + 1] - offsets[ids[i]];
  sum += block_exclusive_scan(sum);  // the last thread holds the block's total
  if (threadIdx.x == blockDim.x - 1) sums[blockIdx.x] = sum;
}

extern "C" __global__ void frontier_scan(const ID* ids, long long n, const OFF* offsets,
                                         long long chunk, const long long* sums, OFF* starts,
                                         long long* scan) {
  __shared__ long long running;  // the degrees of the frontier before this round
  const long long first = blockIdx.x * chunk, end = first + chunk < n ? first + chunk : n;
  long long earlier = 0;  // the degrees of the chunks before this block's
  for (long long b = threadIdx.x; b < blockIdx.x; b += blockDim.x) earlier += sums[b];
  earlier += block_exclusive_scan(earlier);  // the last thread holds the total
  if (threadIdx.x == blockDim.x - 1) running = earlier;
  __syncthreads();
  for (long long base = first; base < end; base += blockDim.x) {  // block-uniform
    const long long i = base + threadIdx.x;  // a vertex a thread: coalesced reads and writes
    OFF start = 0;
    long long degree = 0;
    if (i < end) { start = offsets[ids[i]]; degree = offsets[ids[i] + 1] - start; }
    const long long inclusive = running + block_exclusive_scan(degree) + degree;
    if (i < end) { starts[i] = start; scan[i] = inclusive; }
    __syncthreads();  // every thread has read running
    if (threadIdx.x == blockDim.x - 1) running = inclusive;
    __syncthreads();
  }
}
"""

_VISIT = (
    HELPERS
    + SCANS
    + r"""
extern "C" __global__ void visit_push(const ID* ids, const OFF* starts, const long long* scan,
    long long n_frontier, const OFF* offsets, const ID* indices, DEPTH* depth, DEPTH value, ID* parent,
    unsigned int* visited, const DEG* cost_degree, ID* out, long long capacity,
    unsigned long long* tally) {
"""
    + FOR_EACH_EDGE
    + r"""
      if (visited) {  // claim v's bit (L2-resident; a stale 0 read from L1 only costs the
        // atomicOr); the one winner writes depth
        const unsigned int bit = 1u << (v & 31);
        won = !(__ldca(&visited[v >> 5]) & bit) && !(atomicOr(&visited[v >> 5], bit) & bit);
        if (won) depth[v] = value;
      } else {
        won = depth[v] > value && atomicMin(&depth[v], value) > value;
      }
      if (won && parent) parent[v] = ids[lo];
"""
    + APPEND_AND_FINISH
)

# Bit v of the bitmap: depth[v] <= value (visited before this level). One warp, one word.
_VISITED_BITS = r"""
extern "C" __global__ void visited_bits(const DEPTH* depth, long long n, DEPTH value,
    unsigned int* bits) {
  const long long padded = (n + 31) & ~31LL;  // whole warps in every iteration
  for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < padded;
       v += (long long)gridDim.x * blockDim.x) {
    const unsigned int word = __ballot_sync(0xffffffffu, v < n && depth[v] <= value);
    if ((threadIdx.x & 31) == 0) bits[v >> 5] = word;
  }
}
"""

# Level after level in one cooperative launch (Merrill et al. ran small frontiers in one
# block; one block was too slow here: 68 us a level of a 4,096-wide grid's frontier). Every
# block stays resident; a warp takes 32 frontier vertices, a row of 32 or more out-edges read
# by the whole warp in turn, a shorter one by its lane; an edge the functor's WIN
# keeps appends v to the other half of `queue` (one atomic per group of lanes); a grid-wide
# barrier ends the level (written here: the cooperative_groups header cost 1.3-1.9 s of NVRTC
# time a kernel), and every thread reads the same counters (level % 3: a counter is
# reset a level before its next use, a level after its last read) and takes the same
# decision: go on while the frontier holds at most max_vertices vertices and max_edges
# out-edges. result: levels run, the last frontier's size, its out-edges, its offset in
# `queue`, then every level's size, then every level's out-edges. FUNCTOR_PARAMS and NEXT_LEVEL
# come with WIN(item, u, v, e). The queue holds ITEMs: vertices, or where the functor defines
# ITEM, ROW and TARGET, what else stands for a vertex of the frontier (a batch's (vertex, lane)
# pair as one index, vertex * lanes + lane): ROW(item) is its vertex, TARGET(item, v) the item
# an edge of that vertex to v reaches.
GRID_BARRIER = r"""
// Every block waits here for every other (resident: the launch is cooperative). barrier[0]
// counts the blocks arrived, barrier[1] the barriers passed; the last block to arrive resets
// the count and lets the others go.
__device__ __forceinline__ void grid_barrier(unsigned int* barrier) {
  __syncthreads();
  if (threadIdx.x == 0) {
    volatile unsigned int* passed = barrier + 1;
    const unsigned int seen = *passed;
    __threadfence();
    if (atomicAdd(barrier, 1u) == gridDim.x - 1) {
      atomicExch(barrier, 0u);
      __threadfence();
      atomicAdd(barrier + 1, 1u);
    } else {
      while (*passed == seen) {}
    }
    __threadfence();
  }
  __syncthreads();
}
"""
LEVELS = (
    GRID_BARRIER
    + r"""
#ifndef ITEM
#define ITEM ID
#define ROW(item) (item)
#define TARGET(item, v) (v)
#endif
// A warp's lanes that won an edge append their items with one atomic (v: the item's vertex).
__device__ __forceinline__ void append(ITEM item, ID v, ITEM* out, unsigned long long* found,
                                       const DEG* cost_degree, unsigned long long& edges) {
  const unsigned winners = __activemask();
  const int lane = threadIdx.x & 31, leader = __ffs(winners) - 1;
  unsigned long long at = 0;
  if (lane == leader) at = atomicAdd(found, (unsigned long long)__popc(winners));
  at = __shfl_sync(winners, at, leader);
  out[at + __popc(winners & ((1u << lane) - 1))] = item;
  edges += cost_degree[v];
}

extern "C" __global__ void levels(const ITEM* ids, long long n_frontier, const OFF* offsets,
    const ID* indices, const DEG* cost_degree, ITEM* queue, long long n, long long max_vertices,
    long long max_edges, long long max_levels, unsigned long long* counters, long long* result,
    FUNCTOR_PARAMS) {
  const bool first_thread = blockIdx.x == 0 && threadIdx.x == 0;
  const unsigned full = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  const ITEM* current = ids;
  long long count = n_frontier, level = 0;
  ITEM* out = queue;
  for (;;) {
    unsigned long long* found = counters + 2 * (level % 3);  // found, then out-edges
    if (first_thread) {
      counters[2 * ((level + 1) % 3)] = 0;
      counters[2 * ((level + 1) % 3) + 1] = 0;
    }
    unsigned long long edges = 0;
    for (long long first = warp * 32; first < count; first += warps * 32) {  // warp-uniform
      OFF start = 0, end = 0;
      ITEM item = 0;
      ID u = 0;
      if (first + lane < count) {
        item = current[first + lane]; u = ROW(item); start = offsets[u]; end = offsets[u + 1];
      }
      for (unsigned long_rows = __ballot_sync(full, end - start >= 32); long_rows;
           long_rows &= long_rows - 1) {
        const int owner = __ffs(long_rows) - 1;
        const OFF row_end = __shfl_sync(full, end, owner);
        const ITEM row_item = __shfl_sync(full, item, owner);
        const ID row = __shfl_sync(full, u, owner);
        for (OFF e = __shfl_sync(full, start, owner) + lane; e < row_end; e += 32) {
          const ID v = indices[e];
          if (WIN(row_item, row, v, e)) append(TARGET(row_item, v), v, out, found, cost_degree, edges);
        }
      }
      if (end - start < 32)
        for (OFF e = start; e < end; ++e) {
          const ID v = indices[e];
          if (WIN(item, u, v, e)) append(TARGET(item, v), v, out, found, cost_degree, edges);
        }
    }
    add_block_sum(edges, found + 1);
    grid_barrier((unsigned int*)(counters + 6));
    const long long next = ((volatile unsigned long long*)found)[0];
    const long long next_edges = ((volatile unsigned long long*)found)[1];
    if (first_thread) { result[4 + level] = next; result[4 + max_levels + level] = next_edges; }
    ++level;
    if (next == 0 || next > max_vertices || next_edges > max_edges || level == max_levels) {
      if (first_thread) {
        result[0] = level; result[1] = next; result[2] = next_edges; result[3] = out - queue;
      }
      return;
    }
    current = out;
    count = next;
    out = out == queue ? queue + n : queue;
    NEXT_LEVEL;
  }
}
"""
)
_VISIT_LEVELS = (
    HELPERS
    + r"""
#define FUNCTOR_PARAMS DEPTH* depth, DEPTH value, ID* parent
#define WIN(item, u, v, e) claim(u, v, depth, value, parent)
#define NEXT_LEVEL value += 1
__device__ __forceinline__ bool claim(ID u, ID v, DEPTH* depth, DEPTH value, ID* parent) {
  if (!(depth[v] > value && atomicMin(&depth[v], value) > value)) return false;
  if (parent) parent[v] = u;
  return true;
}
"""
    + LEVELS
)
LEVEL_VERTICES = 1 << 15  # the largest frontier a repeated advance takes on ...
LEVEL_EDGES = 1 << 17  # ... and its most out-edges
WIDE_LEVELS = (1 << 19, 1 << 21)  # the same where no out-list is longer than SHORT_ROW
MAX_LEVELS = 1024  # levels a launch (then one host read, and on)
# a frontier whose rows average more out-edges than this (a hub's) goes the usual way: a warp
# reads a row in turn, and an rmat20 hub's 65 K edges held one launch 0.75 ms on an H200 (a
# level of the usual way: 0.15, balanced over the whole GPU)
LONG_ROWS = 1 << 11


def level_limits(graph) -> tuple[int, int]:
    """The most vertices and out-edges of a frontier that a repeated advance takes on:
    WIDE_LEVELS on a graph whose out-lists are all short (a 4,096-wide grid's SSSP: 1,209 ->
    835 ms on an H200, most of its Bellman-Ford rounds in the kernel), at most num_edges /
    ALPHA out-edges (the kernel pushes: no level that a BFS would rather pull), else
    LEVEL_VERTICES and LEVEL_EDGES (one warp reads a hub's row: a long one would hold a wide
    level up). Read once per graph."""
    from .advance import ALPHA

    def limits():
        edges = graph.cost_degrees()[2]
        vertices, most = WIDE_LEVELS
        wide = (vertices, max(min(most, edges // ALPHA), LEVEL_EDGES))
        return wide if short_rows(graph) else (LEVEL_VERTICES, LEVEL_EDGES)

    return graph.cached("level limits", limits)


@fused.register("visit_unvisited", "cupy", "repeat")
def visit_levels(graph, frontier, depth, value, parent) -> Frontier | None:
    """Fused push of :class:`functors.visit_unvisited`, repeated: ``value``, ``value + 1``, ...
    level after level in one cooperative launch (see :func:`levels_from`)."""
    if not startable(graph, frontier):
        return None
    return levels_from(
        graph,
        frontier,
        levels_kernel(graph, _VISIT_LEVELS, depth),
        depth,
        depth.dtype.type(value),
        np.uintp(0) if parent is None else parent,
    )


def startable(graph, frontier) -> bool:
    """Whether a levels kernel takes ``frontier`` on (:func:`level_limits`, rows of at most
    LONG_ROWS out-edges on average; checked before anything is allocated: a wider frontier, or
    a hub, goes the usual way)."""
    edges, (max_vertices, max_edges) = frontier.out_edges, level_limits(graph)
    if edges is None or not 0 < len(frontier) <= max_vertices:
        return False
    return edges <= min(max_edges, LONG_ROWS * len(frontier))


def levels_from(graph, frontier, kernel, *functor_args) -> Frontier:
    """Run a levels kernel from ``frontier`` (:func:`startable`) while frontiers stay within
    :func:`level_limits`, up to MAX_LEVELS; one host read after it. The last level's
    frontier comes back with the sizes and out-edges of those before it
    (``Frontier.passed``, ``Frontier.passed_edges``)."""
    ids = frontier.ids.astype(graph.indices.dtype, copy=False)  # the kernel's ID
    run = run_levels(graph, ids, graph.num_vertices, kernel, *functor_args)
    out = Frontier.from_ids(graph, run.last, out_edges=run.out_edges)
    out.passed, out.passed_edges = run.sizes[:-1], run.edges[:-1]
    return out


@dataclasses.dataclass
class LevelsRun:
    """What a levels kernel did: the last level's items (a view of its queue) and their
    out-edges, and every level's size and out-edges, the last included."""

    last: object
    out_edges: int
    sizes: tuple[int, ...]
    edges: tuple[int, ...]


def run_levels(graph, items, capacity: int, kernel, *functor_args) -> LevelsRun:
    """Launch a levels kernel (:data:`LEVELS`) from ``items`` (vertices, or a functor's
    ITEMs: their dtype is the queue's), with room for ``capacity`` items a level, one resident
    block an SM; one host read after it."""
    cp = graph.xp
    queue = cp.empty(2 * capacity, dtype=items.dtype)
    counters = cp.zeros(7, dtype=cp.uint64)  # 3 x (found, edges), the barrier
    result = cp.empty(4 + 2 * MAX_LEVELS, dtype=cp.int64)
    max_vertices, max_edges = level_limits(graph)
    kernel(
        (multiprocessors(cp),),
        (512,),
        (
            items,
            np.int64(items.size),
            graph.offsets,
            graph.indices,
            graph.cost_degrees()[0],
            queue,
            np.int64(capacity),
            np.int64(max_vertices),
            np.int64(max_edges),
            np.int64(MAX_LEVELS),
            counters,
            result,
            *functor_args,
        ),
    )
    levels, count, out_edges, at, *counted = result.get().tolist()  # one read
    return LevelsRun(
        queue[at : at + count],
        out_edges,
        tuple(counted[:levels]),
        tuple(counted[MAX_LEVELS : MAX_LEVELS + levels]),
    )


_VISIT_PULL = (
    HELPERS
    + r"""
extern "C" __global__ void visit_pull(const bool* candidates, long long first, long long last,
    const OFF* offsets, const ID* indices, const bool* in_frontier, DEPTH* depth, DEPTH value,
    ID* parent, bool* reached, const DEG* cost_degree, unsigned long long* tally) {
  unsigned long long count = 0, edges = 0;  // the vertices this thread reached, their out-edges
  for (long long v = first + blockIdx.x * (long long)blockDim.x + threadIdx.x; v < last;
       v += (long long)gridDim.x * blockDim.x) {
    if (candidates ? !candidates[v] : !(depth[v] > value)) continue;  // null: the unvisited
    for (OFF e = offsets[v]; e < offsets[v + 1]; ++e) {
      ID u = indices[e];
      if (in_frontier[u]) {  // early exit: the first frontier in-neighbour is v's parent
        depth[v] = value;
        if (parent) parent[v] = u;
        reached[v] = true;
        ++count;
        edges += cost_degree[v];
        break;
      }
    }
  }
  add_block_sum(count, &tally[0]);
  add_block_sum(edges, &tally[1]);
}
"""
)

_ATOMIC_MIN_NONNEG = r"""
__device__ inline float atomic_min_nonneg(float* a, float x) {
  return __int_as_float(atomicMin((int*)a, __float_as_int(x)));
}
__device__ inline double atomic_min_nonneg(double* a, double x) {
  return __longlong_as_double(atomicMin((long long*)a, __double_as_longlong(x)));
}
"""
_RELAX = (
    HELPERS
    + SCANS
    + _ATOMIC_MIN_NONNEG
    + r"""
extern "C" __global__ void relax_push(const ID* ids, const OFF* starts, const long long* scan,
    long long n_frontier, const OFF* offsets, const ID* indices, const DIST* weights, DIST* distance, int* queued_at,
    const DEG* cost_degree, ID* out, long long capacity, unsigned long long* tally) {
"""
    + FOR_EACH_EDGE
    + r"""
      DIST candidate = distance[ids[lo]] + (weights ? weights[e] : (DIST)1);
      won = candidate < distance[v] && candidate < atomic_min_nonneg(&distance[v], candidate)
            && atomicExch(&queued_at[v], 1) == 0;
"""
    + APPEND_AND_FINISH
)


@functools.cache
def typed_kernel(cupy, source: str, name: str, cooperative: bool = False, **dtypes) -> object:
    """:func:`compile_kernel` with each keyword's upper-cased token (``id=`` names ``ID``)
    replaced by the C type of its dtype, and PER_THREAD by EDGES_PER_THREAD (looked up once
    per key: a superstep launches several)."""
    types = {key.upper(): C_TYPES[np.dtype(dtype).str[1:]] for key, dtype in dtypes.items()}
    return compile_kernel(
        cupy, source, name, cooperative, PER_THREAD=str(EDGES_PER_THREAD), **types
    )


def launch_push(graph, kernel, ids, *args, edges: int | None) -> Frontier:
    """One push kernel over the out-edges of the frontier ``ids``, sized without a host read
    (the edge count stays on the device); one read after it, when the output is first used:
    its size and out-edges (:meth:`Frontier.listed`). Its list has room for ``edges`` (the
    frontier's out-edges, where the host knows them: a push keeps a vertex an edge at most)
    or every vertex."""
    cp = graph.xp
    if ids.size == 0:
        return Frontier.empty(graph)
    null = np.uintp(0)
    starts = scan = null  # a frontier of one tile's vertices: each block scans it
    if ids.size > 256 * EDGES_PER_THREAD:
        starts = cp.empty(ids.size, dtype=graph.offsets.dtype)
        scan = cp.empty(ids.size, dtype=cp.int64)
        blocks = -(-ids.size // SCAN_CHUNK)
        chunk, sums = -(-ids.size // blocks), null
        if blocks > 1:
            sums = cp.empty(blocks, dtype=cp.int64)
            frontier_sums = typed_kernel(cp, SCANS, "frontier_sums", id=ids.dtype, off=starts.dtype)
            frontier_sums(
                (blocks,), (1024,), (ids, np.int64(ids.size), graph.offsets, np.int64(chunk), sums)
            )
        frontier_scan = typed_kernel(cp, SCANS, "frontier_scan", id=ids.dtype, off=starts.dtype)
        frontier_scan(
            (blocks,),
            (1024,),
            (ids, np.int64(ids.size), graph.offsets, np.int64(chunk), sums, starts, scan),
        )
    cost_degree = graph.cost_degrees()[0]
    room = graph.num_vertices if edges is None else min(edges, graph.num_vertices)
    out = cp.empty(room, dtype=graph.indices.dtype)
    tally = cp.zeros(2, dtype=cp.uint64)
    expected = _expected_edges(graph, ids) if edges is None else edges
    tiles = expected // (256 * EDGES_PER_THREAD) + 1
    blocks = min(max(_resident_blocks(cp), tiles), 4 * _resident_blocks(cp))  # grid-stride
    kernel(
        (blocks,),
        (256,),
        (
            ids,
            starts,
            scan,
            np.int64(ids.size),
            graph.offsets,
            graph.indices,
            *args,
            cost_degree,
            out,
            np.int64(room),
            tally,
        ),
    )
    return Frontier.listed(graph, out, tally)  # the read deferred to the first use


SCAN_CHUNK = 1 << 13  # frontier vertices a block of frontier_scan takes (8 a thread)


def _expected_edges(graph, ids) -> int:
    """The out-edges of the frontier ``ids`` at the graph's average degree (no host read)."""
    return int(ids.size * graph.cost_degrees()[2] / max(graph.num_vertices, 1))


@functools.cache
def multiprocessors(cupy) -> int:
    """The current GPU's SM count (read once: ``Device().attributes`` reads every attribute)."""
    return cupy.cuda.Device().attributes["MultiProcessorCount"]


def _resident_blocks(cupy) -> int:
    """Blocks of 256 threads that fill the current GPU once (a floor for a launch whose edge
    count the host does not know)."""
    return 8 * multiprocessors(cupy)


@fused.register("visit_unvisited", "cupy", "push")
def visit_push(graph, ids, edges, depth, value, parent) -> Frontier:
    """Fused push of :class:`functors.visit_unvisited`. A frontier with more expected edges
    than num_vertices / BITMAP_RATIO first marks the visited vertices in a bitmap (one bit
    each: it stays in L2, where a 4-byte depth does not); each edge then tests that bit and
    claims it with one atomicOr, touching depth only for the vertex it wins."""
    cp = graph.xp
    kernel = typed_kernel(
        cp,
        _VISIT,
        "visit_push",
        id=graph.indices.dtype,
        off=graph.offsets.dtype,
        depth=depth.dtype,
        deg=graph.cost_degrees()[0].dtype,
    )
    null = np.uintp(0)
    value = depth.dtype.type(value)
    visited = null
    if _expected_edges(graph, ids) * BITMAP_RATIO > graph.num_vertices:
        n = graph.num_vertices
        visited = cp.empty((n + 31) // 32, dtype=cp.uint32)
        bits = typed_kernel(cp, _VISITED_BITS, "visited_bits", depth=depth.dtype)
        bits((min((n + 255) // 256, 1 << 16),), (256,), (depth, np.int64(n), value, visited))
    return launch_push(
        graph,
        kernel,
        ids,
        depth,
        value,
        null if parent is None else parent,
        visited,
        edges=edges,
    )


BITMAP_RATIO = 8  # the bitmap pays for its pass over depth past num_vertices / 8 edges


@fused.register("visit_unvisited", "cupy", "pull")
def visit_pull(graph, in_frontier, candidates, depth, value, parent) -> Frontier:
    """Fused pull of :class:`functors.visit_unvisited`: a thread per vertex, skipping those that
    are not candidates (without candidates, the visited ones; no compaction), early exit at the
    first parent; one read after it, when the output is first used: how many it reached and
    their out-edges (no pass over the mask to count them). A part that owns one range of
    vertices (``owned_range``) pulls into that range only: the other rows hold no in-list."""
    cp = graph.xp
    reverse = graph.reverse
    cost_degree = graph.cost_degrees()[0]
    kernel = typed_kernel(
        cp,
        _VISIT_PULL,
        "visit_pull",
        id=reverse.indices.dtype,
        off=reverse.offsets.dtype,
        depth=depth.dtype,
        deg=cost_degree.dtype,
    )
    n = graph.num_vertices
    span = owned_range(graph) or slice(0, n)
    reached = cp.zeros(n, dtype=bool)
    tally = cp.zeros(2, dtype=cp.uint64)
    null = np.uintp(0) if parent is None else parent
    blocks = max(min((span.stop - span.start + 255) // 256, 4 * _resident_blocks(cp)), 1)
    kernel(
        (blocks,),
        (256,),
        (
            np.uintp(0) if candidates is None else candidates,
            np.int64(span.start),
            np.int64(span.stop),
            reverse.offsets,
            reverse.indices,
            in_frontier,
            depth,
            depth.dtype.type(value),
            null,
            reached,
            cost_degree,
            tally,
        ),
    )
    return Frontier.from_mask(graph, reached, counted=(tally, 0, 0))  # read at the first use


_RELAX_LEVELS = (
    HELPERS
    + _ATOMIC_MIN_NONNEG
    + r"""
#define FUNCTOR_PARAMS const DIST* weights, DIST* distance, int* queued_at, int stamp, \
    ID* changed, unsigned long long* changed_tally
#define WIN(item, u, v, e) relax(u, v, e, weights, distance, queued_at, stamp, changed, \
                                 changed_tally, cost_degree)
#define NEXT_LEVEL stamp += 1
// queued once a level; with ``changed`` (not null), each vertex the launch lowers is also listed
// there once (its first stamp), and counted with its out-edges in ``changed_tally``
__device__ __forceinline__ bool relax(ID u, ID v, OFF e, const DIST* weights, DIST* distance,
                                      int* queued_at, int stamp, ID* changed,
                                      unsigned long long* changed_tally, const DEG* cost_degree) {
  const DIST candidate = distance[u] + (weights ? weights[e] : (DIST)1);
  if (!(candidate < distance[v] && candidate < atomic_min_nonneg(&distance[v], candidate)))
    return false;
  const int last = atomicExch(&queued_at[v], stamp);
  if (last == 0 && changed) {
    changed[atomicAdd(&changed_tally[0], 1ull)] = v;
    atomicAdd(&changed_tally[1], (unsigned long long)cost_degree[v]);
  }
  return last != stamp;
}
"""
    + LEVELS
)


@fused.register("relax_min", "cupy", "repeat")
def relax_levels(graph, frontier, distance, every_level: bool = False) -> Frontier | None:
    """Fused push of :class:`functors.relax_min`, repeated from its own output level after
    level in one cooperative launch (see :func:`levels_from`). With ``every_level``, the frontier
    returned is every vertex the launch lowered, each once, its out-edges counted (read when
    first asked for), not the last level's."""
    if not startable(graph, frontier):
        return None
    cp = graph.xp
    kernel = typed_kernel(
        cp,
        _RELAX_LEVELS,
        "levels",
        cooperative=True,
        id=graph.indices.dtype,
        off=graph.offsets.dtype,
        dist=distance.dtype,
        deg=graph.cost_degrees()[0].dtype,
    )
    weights = (
        np.uintp(0) if graph.weights is None else graph.weights.astype(distance.dtype, copy=False)
    )
    queued = cp.zeros(graph.num_vertices, dtype=cp.int32)  # the level stamp a vertex last got
    if not every_level:
        null = np.uintp(0)
        return levels_from(
            graph, frontier, kernel, weights, distance, queued, np.int32(1), null, null
        )
    changed = cp.empty(graph.num_vertices, dtype=graph.indices.dtype)
    tally = cp.zeros(2, dtype=cp.uint64)
    levels_from(graph, frontier, kernel, weights, distance, queued, np.int32(1), changed, tally)
    return Frontier.listed(graph, changed, tally)


@fused.register("relax_min", "cupy", "push")
def relax_push(graph, ids, edges, distance) -> Frontier:
    """Fused push of :class:`functors.relax_min` (distances are non-negative)."""
    cp = graph.xp
    kernel = typed_kernel(
        cp,
        _RELAX,
        "relax_push",
        id=graph.indices.dtype,
        off=graph.offsets.dtype,
        dist=distance.dtype,
        deg=graph.cost_degrees()[0].dtype,
    )
    weights = (
        np.uintp(0) if graph.weights is None else graph.weights.astype(distance.dtype, copy=False)
    )
    queued = cp.zeros(graph.num_vertices, dtype=cp.int32)
    return launch_push(graph, kernel, ids, weights, distance, queued, edges=edges)


# One more level's path count, for a vertex or a batch's (vertex, lane) pair (items, as the
# levels kernel holds them): the item an edge reaches is kept by the one thread whose swap
# sets its depth, and (with ``sigma``) every edge into it from this level adds the source's
# count (final: counted in the level before, behind the grid barrier). Brandes' forward step.
COUNT_PATH = r"""
__device__ __forceinline__ bool count_path(long long from, long long to, DEPTH* depth,
                                           DEPTH value, DEPTH unset, double* sigma) {
  const DEPTH seen = depth[to] > value ? compare_swap(&depth[to], unset, value) : depth[to];
  if (seen != unset && seen != value) return false;
  if (sigma) atomicAdd(&sigma[to], sigma[from]);
  return seen == unset;
}
"""
# A batch held as (vertex, lane) pairs: a vertex newly reached in some lane is counted once a
# level (its stamp), so that a level's size is its vertices, as a superstep's frontier holds.
_VISIT_LANES_LEVELS = (
    HELPERS
    + COMPARE_SWAP
    + COUNT_PATH
    + r"""
#define ITEM long long
#define ROW(item) ((ID)((item) / width))
#define TARGET(item, v) ((long long)(v) * width + (item) % width)
#define FUNCTOR_PARAMS long long width, DEPTH* depth, DEPTH value, DEPTH unset, double* sigma, \
    int* stamps, unsigned long long* rows
#define WIN(item, u, v, e) visit_lane(item, v, width, depth, value, unset, sigma, stamps, \
                                      rows + level)
#define NEXT_LEVEL value += 1
__device__ __forceinline__ bool visit_lane(long long item, ID v, long long width, DEPTH* depth,
    DEPTH value, DEPTH unset, double* sigma, int* stamps, unsigned long long* rows) {
  if (!count_path(item, (long long)v * width + item % width, depth, value, unset, sigma))
    return false;
  if (atomicExch(&stamps[v], (int)value) != (int)value) atomicAdd(rows, 1ull);
  return true;
}
"""
    + LEVELS
)
QUEUE_BYTES = 1 << 30  # the most a batch's pair queue takes (two levels of every pair)


def levels_kernel(graph, source: str, depth):
    """The levels kernel of ``source`` (:data:`LEVELS` with a functor) for ``graph``'s dtypes."""
    return typed_kernel(
        graph.xp,
        source,
        "levels",
        cooperative=True,
        id=graph.indices.dtype,
        off=graph.offsets.dtype,
        depth=depth.dtype,
        deg=graph.cost_degrees()[0].dtype,
    )


@fused.register("visit_lanes", "cupy", "repeat")
def visit_lane_levels(graph, rows, lanes, depth, value, sigma) -> Frontier | None:
    """Fused :class:`functors.visit_lanes` from the pairs ``(rows, lanes)``, repeated level
    after level in one cooperative launch while the levels stay light: the last level's rows,
    the vertices of each level before it as ``passed``; None where the first level is heavy
    or every pair's queue would take more than QUEUE_BYTES."""
    xp, n, width = graph.xp, graph.num_vertices, int(depth.shape[1])
    max_vertices, max_edges = level_limits(graph)
    if not 0 < rows.shape[0] <= max_vertices or 16 * n * width > QUEUE_BYTES:
        return None
    if int(graph.backend.total(graph.cost_degrees()[0][rows])) > max_edges:
        return None
    items = rows.astype(np.int64) * width + lanes
    kind = depth.dtype.type
    stamps = xp.zeros(n, dtype=np.int32)  # the level that last counted a vertex
    distinct = xp.zeros(MAX_LEVELS, dtype=np.uint64)  # each level's vertices
    kernel = levels_kernel(graph, _VISIT_LANES_LEVELS, depth)
    null = np.uintp(0)
    args = np.int64(width), depth, kind(value), kind(np.iinfo(depth.dtype).max)
    run = run_levels(
        graph, items, n * width, kernel, *args, null if sigma is None else sigma, stamps, distinct
    )
    sizes = distinct[: len(run.sizes)].get().tolist()  # (the launch's second read)
    out = Frontier.from_ids(graph, ops.unique(graph.backend, run.last // width).astype(rows.dtype))
    out.passed, out.passed_edges = tuple(sizes[:-1]), None
    return out
