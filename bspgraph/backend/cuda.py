"""CUDA kernels of the CuPy backend (compiled by CuPy at first use, per dtype) and their launchers:
the load balancer's search, row reductions, grid-stride passes, sums and the shared snippets
(BLOCK_SUM, COMPARE_SWAP) that other kernel modules build on. Functions take the ``cupy``
module as their first argument; nothing here imports it."""

from __future__ import annotations

import functools
import os
import re

import numpy as np

from . import clock
from .base import extreme, identity, while_alive

_SEGMENT_INDEX = r"""
extern "C" __global__ void segment_index(const long long* scan, long long segments,
                                         long long total, long long* out) {
  const long long stride = (long long)gridDim.x * blockDim.x * 8;
  for (long long k = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 8; k < total;
       k += stride) {  // one binary search per 8 slots, then walk on (a few segments at most)
    long long lo = 0, hi = segments - 1;
    while (lo < hi) { long long mid = (lo + hi) >> 1; if (scan[mid] > k) hi = mid; else lo = mid + 1; }
    const long long end = k + 8 < total ? k + 8 : total;
    for (long long slot = k; slot < end; ++slot) {
      for (int walked = 0; walked < 8 && slot >= scan[lo]; ++walked) ++lo;
      if (slot >= scan[lo]) {  // a run of empty segments: search past it, do not walk it
        long long last = segments - 1;
        while (lo < last) {
          const long long mid = (lo + last) >> 1;
          if (scan[mid] > slot) last = mid; else lo = mid + 1;
        }
      }
      out[slot] = lo;
    }
  }
}
"""


def segment_index(cupy, scan, total: int):
    out = cupy.empty(total, dtype=np.int64)
    if total:
        kernel = compile_kernel(cupy, _SEGMENT_INDEX, "segment_index")
        blocks = min((total + 2047) // 2048, 65536)
        kernel((blocks,), (256,), (scan, np.int64(scan.size), np.int64(total), out))
    return out


C_TYPES = {"i4": "int", "i8": "long long", "f4": "float", "f8": "double", "b1": "bool"}
SHUFFLED = ("i4", "i8", "f4", "f8")  # the value types a warp shuffle moves
LONG_ROW = 1 << 12  # entries: a longer row is cut into pieces of this size, a warp each
WARP_ROW = 32  # entries: a row this long is read by a whole warp, a shorter one by one lane
_ROW_REDUCE = r"""
__device__ __forceinline__ VAL term(const ID* indices, const WEIGHT* weights, const VAL* values,
                                    OFF e) {
  const VAL value = values[indices[e]];
  return weights ? WEIGH(value, (VAL)weights[e]) : value;
}

extern "C" __global__ void row_reduce(const OFF* starts, const OFF* ends, const ID* indices,
    const WEIGHT* weights, const VAL* values, long long rows, long long longest, VAL identity,
    VAL* out) {
  // ROWS consecutive rows a warp, lane i holding row i's bounds: the whole warp reads each
  // row of WARP_ROW entries or more in turn (adjacent lanes on adjacent entries), then each
  // lane its own shorter row (no lane idles on a row of a few entries, none waits on an
  // empty one).
  const unsigned full = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  for (long long first = ((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5) * ROWS;
       first < rows; first += warps * ROWS) {  // warp-uniform: every lane shuffles below
    const long long row = first + lane;
    OFF start = 0, end = 0;
    if (lane < ROWS && row < rows) { start = starts[row]; end = ends[row]; }
    const bool here = lane < ROWS && row < rows && end - start <= longest;  // else in pieces
    if (!here) end = start;
    VAL acc = identity;
    for (unsigned long_rows = __ballot_sync(full, end - start >= WARP_ROW); long_rows;
         long_rows &= long_rows - 1) {
      const int owner = __ffs(long_rows) - 1;
      const OFF row_end = __shfl_sync(full, end, owner);
      VAL sum = identity;
      for (OFF e = __shfl_sync(full, start, owner) + lane; e < row_end; e += 4 * 32) {
        VAL part[4];  // four loads in flight a lane
#pragma unroll
        for (int k = 0; k < 4; ++k)
          part[k] = e + k * 32 < row_end ? term(indices, weights, values, e + k * 32) : identity;
        const VAL low = COMBINE(part[0], part[1]), high = COMBINE(part[2], part[3]);
        const VAL both = COMBINE(low, high);
        sum = COMBINE(sum, both);
      }
      for (int s = 16; s > 0; s >>= 1) {  // (COMBINE may name its arguments twice)
        const VAL other = __shfl_xor_sync(full, sum, s);
        sum = COMBINE(sum, other);
      }
      if (lane == owner) acc = sum;
    }
    if (end - start < WARP_ROW) {
#pragma unroll 4
      for (OFF e = start; e < end; ++e) {
        const VAL entry = term(indices, weights, values, e);
        acc = COMBINE(acc, entry);
      }
    }
    if (here) out[row] = acc;
  }
}
"""
_SEMIRING = {  # the row's reduction, and how an entry's weight enters its term
    "sum": "#define COMBINE(a, b) ((a) + (b))\n#define WEIGH(v, w) ((v) * (w))\n",
    "min": "#define COMBINE(a, b) ((b) < (a) ? (b) : (a))\n#define WEIGH(v, w) ((v) + (w))\n",
}


def row_reduce(cupy, reduce: str, offsets, indices, weights, values, rows: int, ids=None):
    """``out[i]``: the ``reduce`` ("sum" or "min") over row ``i``'s entries ``e`` of
    ``values[indices[e]]``, times ``weights[e]`` for a sum or plus it for a min when given;
    the identity (0 or the dtype's largest value) for an empty row. With ``ids``, over the
    rows ``ids`` only (``out[k]`` for row ``ids[k]``), read in place (no copy of their
    entries). 32 rows a warp (see the kernel); rows longer than LONG_ROW (hubs) go in pieces,
    a warp each, then their pieces are reduced the same way: no atomics, the same order every
    run."""
    dtype = values.dtype
    count = rows if ids is None else int(ids.shape[0])
    out = cupy.empty(count, dtype=dtype)
    if count == 0:
        return out
    if ids is None:
        starts, ends, hubs = offsets[:-1], offsets[1:], hub_pieces(cupy, offsets)
    else:
        starts, ends = offsets[ids], offsets[ids + 1]
        hubs = _pieces(cupy, starts, ends)
    _reduce_ranges(cupy, reduce, starts, ends, indices, weights, values, out, 32)
    if hubs is not None:
        rows_of_hubs, first, pieces, starts, ends, _ = hubs
        partial = cupy.empty(starts.size, dtype=dtype)
        _reduce_ranges(cupy, reduce, starts, ends, indices, weights, values, partial, 1)
        out[rows_of_hubs] = row_reduce(cupy, reduce, first, pieces, None, partial, first.size - 1)
    return out


def hub_pieces(cupy, offsets):
    """:func:`_pieces` of every row of a CSR with ``offsets``, cached while ``offsets`` lives:
    a product per superstep does not search the rows again."""

    def pieces():
        with clock.paying("prepare"):  # once per graph (its offsets)
            return _pieces(cupy, offsets[:-1], offsets[1:])

    return while_alive(offsets, ("hub pieces",), pieces)


def _pieces(cupy, starts, ends):
    """``(hubs, first, pieces, starts, ends, hub)`` of the entry ranges ``[starts[r], ends[r])``:
    the ranges of more than LONG_ROW entries, and the entry ranges ``[starts[p], ends[p])`` of
    their pieces of at most LONG_ROW, hub ``h``'s from ``first[h]`` to ``first[h + 1]``
    (``pieces``: 0, 1, ...; ``hub[p]``: the hub of piece ``p``); None without hubs."""
    degrees = ends - starts
    hubs = cupy.flatnonzero(degrees > LONG_ROW)
    if not hubs.size:
        return None
    count = (degrees[hubs].astype(np.int64) + LONG_ROW - 1) // LONG_ROW
    first = cupy.concatenate([cupy.zeros(1, dtype=np.int64), cupy.cumsum(count)])
    pieces = cupy.arange(int(first[-1]), dtype=np.int64)
    hub = cupy.searchsorted(first[1:], pieces, side="right")  # the hub of each piece
    piece_starts = starts[hubs].astype(np.int64)[hub] + (pieces - first[hub]) * LONG_ROW
    piece_ends = cupy.minimum(piece_starts + LONG_ROW, ends[hubs].astype(np.int64)[hub])
    return hubs, first, pieces, piece_starts, piece_ends, hub


def _reduce_ranges(cupy, reduce, starts, ends, indices, weights, values, out, per_warp) -> None:
    """The row_reduce kernel over the entry ranges ``[starts[r], ends[r])`` of at most
    LONG_ROW entries (longer ones are skipped), ``per_warp`` (1 to 32) ranges a warp."""
    dtype, rows = values.dtype, int(out.shape[0])
    source = f"#define ROWS {per_warp}\n#define WARP_ROW {WARP_ROW}\n" + _SEMIRING[reduce]
    weight = np.dtype(np.float32) if weights is None else weights.dtype
    kernel = compile_kernel(
        cupy,
        source + _ROW_REDUCE,
        "row_reduce",
        OFF=c_type(starts),
        ID=c_type(indices),
        VAL=c_type(values),
        WEIGHT=C_TYPES[weight.str[1:]],
    )
    blocks = min(-(-rows // (8 * per_warp)), 1 << 16)  # 8 warps a block
    null = np.uintp(0) if weights is None else weights
    kernel(
        (blocks,),
        (256,),
        (
            starts,
            ends,
            indices,
            null,
            values,
            np.int64(rows),
            np.int64(LONG_ROW),
            dtype.type(identity(reduce, dtype)),
            out,
        ),
    )


_LANE_SUMS = r"""
extern "C" __global__ void lane_sums(const OFF* starts, const OFF* ends, const ID* indices,
    const int* position, const VAL* values, long long rows, int lanes, long long longest,
    VAL* out) {
  // a warp per (row, 32 lanes): lane j of the warp adds up column j of the value rows its
  // row's entries name (a 256-byte load a warp an entry, four in flight), in entry order
  const int chunks = (lanes + 31) >> 5;
  const int lane = threadIdx.x & 31;
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  for (long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
       w < rows * chunks; w += warps) {
    const long long row = w / chunks;
    const int column = (int)(w - row * chunks) * 32 + lane;
    const OFF start = starts[row], end = ends[row];
    if (end - start > longest || column >= lanes) continue;  // a hub: summed in pieces
    VAL sum = 0;
    OFF e = start;
    for (; e + 4 <= end; e += 4) {
      long long at[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const long long u = (long long)indices[e + k];
        at[k] = position ? (long long)position[u] : u;
      }
      VAL part[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) part[k] = at[k] >= 0 ? values[at[k] * lanes + column] : (VAL)0;
      sum += (part[0] + part[1]) + (part[2] + part[3]);
    }
    for (; e < end; ++e) {
      const long long u = (long long)indices[e];
      const long long at = position ? (long long)position[u] : u;
      if (at >= 0) sum += values[at * lanes + column];
    }
    out[row * lanes + column] = sum;
  }
}
"""


def lane_sums(cupy, offsets, indices, values, rows=None, position=None):
    """``out[k, j]``: the sum of ``values[indices[e], j]`` over the entries ``e`` of CSR row
    ``k`` (of row ``rows[k]``), or with ``position`` (int32, -1 for none) of
    ``values[position[indices[e]], j]`` where that is not -1; ``values`` row-major. A warp per
    row and 32 lanes; rows longer than LONG_ROW in pieces, their pieces added up after: no
    atomics, the same order every run."""
    lanes = int(values.shape[1])
    count = int(offsets.shape[0]) - 1 if rows is None else int(rows.shape[0])
    if rows is None:
        starts, ends, hubs = offsets[:-1], offsets[1:], hub_pieces(cupy, offsets)
    else:
        starts, ends = offsets[rows], offsets[rows + 1]
        hubs = _pieces(cupy, starts, ends) if count else None
    return _lane_ranges(
        cupy, starts, ends, hubs, indices, position, cupy.ascontiguousarray(values), count, lanes
    )


def _lane_ranges(cupy, starts, ends, hubs, indices, position, values, count, lanes):
    out = cupy.empty((count, lanes), dtype=values.dtype)
    if not count * lanes:
        return out
    kernel = compile_kernel(
        cupy, _LANE_SUMS, "lane_sums", OFF=c_type(starts), ID=c_type(indices), VAL=c_type(values)
    )
    null = np.uintp(0) if position is None else position
    warps = count * ((lanes + 31) // 32)
    kernel(
        (min(-(-warps // 8), 1 << 16),),
        (256,),
        (
            starts,
            ends,
            indices,
            null,
            values,
            np.int64(count),
            np.int32(lanes),
            np.int64(LONG_ROW),
            out,
        ),
    )
    if hubs is not None:  # each hub's pieces, then the pieces' sums
        rows_of_hubs, first, pieces, piece_starts, piece_ends, _ = hubs
        partial = _lane_ranges(
            cupy,
            piece_starts,
            piece_ends,
            None,
            indices,
            position,
            values,
            int(piece_starts.shape[0]),
            lanes,
        )
        out[rows_of_hubs] = _lane_ranges(
            cupy, first[:-1], first[1:], None, pieces, None, partial, int(first.shape[0]) - 1, lanes
        )
    return out


# atomicCAS for signed ids and depths of either width: the value that was there.
COMPARE_SWAP = r"""
__device__ __forceinline__ int compare_swap(int* at, int expected, int value) {
  return atomicCAS(at, expected, value);
}
__device__ __forceinline__ long long compare_swap(long long* at, long long expected,
                                                  long long value) {
  return (long long)atomicCAS((unsigned long long*)at, (unsigned long long)expected,
                              (unsigned long long)value);
}
"""


_MASKED_SUM = r"""
extern "C" __global__ void masked_sum(const VALUE* values, long long n, const bool* mask,
                                      const ID* ids, const KEY* keys, KEY bound,
                                      unsigned long long* total) {
  unsigned long long sum = 0;  // two's complement: signed values add up alike
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    if (ids) sum += (unsigned long long)(long long)values[ids[i]];
    else if (mask ? mask[i] : keys[i] < bound) sum += (unsigned long long)(long long)values[i];
  for (int s = 16; s > 0; s >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, s);
  if ((threadIdx.x & 31) == 0 && sum) atomicAdd(total, sum);
}
"""


FILL = r"""
extern "C" __global__ void fill(T* out, long long n, T value) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = value;
}
"""
GREATER = r"""
extern "C" __global__ void greater(const T* values, long long n, T threshold, bool* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = values[i] > threshold;
}
"""
WHERE_AT = r"""
extern "C" __global__ void where_at(const ID* index, long long n, const bool* mask,
                                    const T* values, T other, T* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const ID v = index[i];
    out[i] = mask[v] ? values[v] : other;
  }
}
"""
# The first n ids, or with ``count`` (not null) the first count[0] of them (a kernel's list
# and its tally, on the device: no host read)
MARK = r"""
extern "C" __global__ void mark(const ID* ids, long long n, const unsigned long long* count,
                                bool* mask) {
  if (count && (unsigned long long)n > count[0]) n = (long long)count[0];
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    mask[ids[i]] = true;
}
"""
# Occurrences of each id: a warp adds its lanes' equal ids up first (one atomic per distinct id
# a warp: sorted ids, such as a CSR's sources, do not queue on one counter).
TALLY = r"""
extern "C" __global__ void tally(const ID* ids, long long n, unsigned long long* counts) {
  const int lane = threadIdx.x & 31;
  for (long long base = blockIdx.x * (long long)blockDim.x + (threadIdx.x & ~31); base < n;
       base += (long long)gridDim.x * blockDim.x) {  // warp-uniform: every lane matches below
    const long long i = base + lane;
    const long long id = i < n ? (long long)ids[i] : -1;
    const unsigned int peers = __match_any_sync(0xffffffffu, id);
    if (id >= 0 && lane == __ffs(peers) - 1)
      atomicAdd(counts + id, (unsigned long long)__popc(peers));
  }
}
"""
REPLACE = r"""
extern "C" __global__ void replace(T* values, long long n, T old, T value) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    if (values[i] == old) values[i] = value;
}
"""
# A bool mask read 16 entries a thread at a time (one 16-byte load where the mask is aligned
# and the 16 lie before hi, else byte by byte): as four words with bit 0 of each byte set
# where the entry is. A load a byte, one at a time, keeps too few bytes in flight to stream a
# mask (ops.one_value over 2^25 entries, 90% set, on an H200: 146 us so, 105 us by groups).
MASK_GROUPS = r"""
__device__ __forceinline__ unsigned int set_bytes(unsigned int word) {  // bit 0: not 0
  word |= word >> 4;
  word |= word >> 2;
  word |= word >> 1;
  return word & 0x01010101u;
}

__device__ __forceinline__ uint4 group_of(const bool* mask, long long i, long long hi,
                                          int aligned) {
  uint4 words;
  if (aligned && i + 16 <= hi) {
    words = *reinterpret_cast<const uint4*>(mask + i);
  } else {
    unsigned int word[4] = {0, 0, 0, 0};
    for (int k = 0; k < 16 && i + k < hi; ++k)
      word[k >> 2] |= (unsigned int)(mask[i + k] != 0) << (8 * (k & 3));
    words = make_uint4(word[0], word[1], word[2], word[3]);
  }
  return make_uint4(set_bytes(words.x), set_bytes(words.y), set_bytes(words.z),
                    set_bytes(words.w));
}

__device__ __forceinline__ unsigned int group_count(uint4 g) {
  return __popc(g.x) + __popc(g.y) + __popc(g.z) + __popc(g.w);
}

__device__ __forceinline__ bool group_has(uint4 g, int k) {  // entry k of the 16
  const unsigned int word = k < 4 ? g.x : k < 8 ? g.y : k < 12 ? g.z : g.w;
  return (word >> (8 * (k & 3))) & 1u;
}
"""
MASK_GROUP = 16  # entries a thread reads at a time in MASK_GROUPS' kernels


# ops.one_value in two launches and no temporary of the array's size: each block's least and
# largest value where the mask is set (a group of 16 entries a thread at a time) or at the
# ids, and its count of them in [lo, hi); then one block over the blocks' partials (one
# thread over 1,024 of them took 70 us, their loads in turn). A NaN makes a block's range
# the whole type's (never one value).
_ONE_VALUE = (
    MASK_GROUPS
    + r"""
// The block's least and largest value and its count, into thread 0's (every thread calls it).
__device__ __forceinline__ void reduce_block(T& low, T& high, unsigned long long& count) {
  __shared__ T warp_lows[32], warp_highs[32];
  __shared__ unsigned long long warp_counts[32];
  for (int s = 16; s > 0; s >>= 1) {
    const T other_low = __shfl_down_sync(0xffffffffu, low, s);
    const T other_high = __shfl_down_sync(0xffffffffu, high, s);
    low = other_low < low ? other_low : low;
    high = other_high > high ? other_high : high;
    count += __shfl_down_sync(0xffffffffu, count, s);
  }
  if ((threadIdx.x & 31) == 0) {
    warp_lows[threadIdx.x >> 5] = low;
    warp_highs[threadIdx.x >> 5] = high;
    warp_counts[threadIdx.x >> 5] = count;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < (int)(blockDim.x >> 5); ++w) {
      low = warp_lows[w] < low ? warp_lows[w] : low;
      high = warp_highs[w] > high ? warp_highs[w] : high;
      count += warp_counts[w];
    }
  }
}

extern "C" __global__ void one_value_blocks(const T* values, const T* since, long long n,
                                            const bool* mask, int aligned, const ID* ids,
                                            long long lo, long long hi, T highest, T lowest,
                                            T* lows, T* highs, unsigned long long* counts) {
  T low = highest, high = lowest;
  unsigned long long count = 0;
  const long long thread = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long threads = (long long)gridDim.x * blockDim.x;
#define TAKE(vertex)                                                        \
  {                                                                         \
    const T value = since ? values[vertex] - since[vertex] : values[vertex]; \
    if (value != value) { low = lowest; high = highest; }                   \
    else { low = value < low ? value : low; high = value > high ? value : high; } \
    count += (vertex) >= lo && (vertex) < hi;                               \
  }
  if (ids) {
    for (long long i = thread; i < n; i += threads) TAKE((long long)ids[i]);
  } else {
    for (long long i = 16 * thread; i < n; i += 16 * threads) {
      const uint4 g = group_of(mask, i, n, aligned);
#pragma unroll
      for (int k = 0; k < 16; ++k)
        if (group_has(g, k)) TAKE(i + k);
    }
  }
#undef TAKE
  reduce_block(low, high, count);
  if (threadIdx.x == 0) {
    lows[blockIdx.x] = low;
    highs[blockIdx.x] = high;
    counts[blockIdx.x] = count;
  }
}

extern "C" __global__ void one_value_total(const T* lows, const T* highs,
                                           const unsigned long long* counts, int blocks,
                                           T* value, long long* pair) {
  T low = lows[0], high = highs[0];  // one block: a thread a partial at a time
  unsigned long long count = 0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) {
    low = lows[b] < low ? lows[b] : low;
    high = highs[b] > high ? highs[b] : high;
    count += counts[b];
  }
  reduce_block(low, high, count);
  if (threadIdx.x == 0) {
    pair[0] = (long long)count;
    pair[1] = low == high;
    value[0] = low;
  }
}
"""
)


def one_value(cupy, values, mask, ids, kept: slice, since=None):
    """:func:`bspgraph.backend.ops.one_value` for ``values`` (and ``since``, or None) of a
    STREAMED dtype (and int32 or int64 ``ids``)."""
    dtype, null = values.dtype, np.uintp(0)
    n = int(values.shape[0] if ids is None else ids.shape[0])
    per_thread = 1 if ids is not None else MASK_GROUP  # (a mask: a group of entries a thread)
    blocks = max(min(-(-n // (256 * per_thread)), STREAM_BLOCKS), 1)
    mask = None if mask is None else cupy.ascontiguousarray(mask, dtype=bool)
    lows, highs = cupy.empty(blocks, dtype=dtype), cupy.empty(blocks, dtype=dtype)
    counts = cupy.empty(blocks, dtype=np.uint64)
    value, pair = cupy.empty(1, dtype=dtype), cupy.empty(2, dtype=np.int64)
    highest, lowest = dtype.type(extreme(dtype)), dtype.type(extreme(dtype, largest=False))
    types = {"T": c_type(values), "ID": "int" if ids is None else c_type(ids)}
    compile_kernel(cupy, _ONE_VALUE, "one_value_blocks", **types)(
        (blocks,),
        (256,),
        (
            cupy.ascontiguousarray(values),
            null if since is None else cupy.ascontiguousarray(since, dtype=dtype),
            np.int64(n),
            null if mask is None else mask,
            np.int32(mask is not None and mask.data.ptr % 16 == 0),
            null if ids is None else cupy.ascontiguousarray(ids),
            np.int64(kept.start),
            np.int64(kept.stop),
            highest,
            lowest,
            lows,
            highs,
            counts,
        ),
    )
    compile_kernel(cupy, _ONE_VALUE, "one_value_total", **types)(
        (1,), (256,), (lows, highs, counts, np.int32(blocks), value, pair)
    )
    return pair, value


# A CSR's rows split in two, a warp a row (a pass to count each row's entries inside [lo, hi),
# then one to write them): each entry's place in its side is its row's start there plus the
# lanes before it on that side (a ballot), so that nothing of the entries' size is made but
# the two sides themselves (a boolean index of a billion entries makes an int64 scan of them).
_SPLIT_ROWS = r"""
extern "C" __global__ void inside_counts(const OFF* offsets, const ID* indices, long long rows,
                                         long long lo, long long hi, OFF* counts) {
  const int lane = threadIdx.x & 31;
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  for (long long row = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5; row < rows;
       row += warps) {  // warp-uniform
    OFF count = 0;
    for (OFF e = offsets[row] + lane; e < offsets[row + 1]; e += 32) {
      const long long v = indices[e];
      count += v >= lo && v < hi;
    }
    for (int s = 16; s > 0; s >>= 1) count += __shfl_xor_sync(0xffffffffu, count, s);
    if (lane == 0) counts[row] = count;
  }
}

extern "C" __global__ void split_rows(const OFF* offsets, const ID* indices, const W* weights,
    long long rows, long long lo, long long hi, const ID* rename, const OFF* inside_offsets,
    ID* inside, W* inside_weights, ID* outside, W* outside_weights) {
  const int lane = threadIdx.x & 31;
  const unsigned below = (1u << lane) - 1u;
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  for (long long row = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5; row < rows;
       row += warps) {  // warp-uniform: every lane votes below
    const OFF end = offsets[row + 1];
    OFF in_at = inside_offsets[row], out_at = offsets[row] - inside_offsets[row];
    for (OFF first = offsets[row]; first < end; first += 32) {
      const OFF e = first + lane;
      const long long v = e < end ? (long long)indices[e] : lo - 1;
      const bool in = v >= lo && v < hi, out = e < end && !in;
      const unsigned ins = __ballot_sync(0xffffffffu, in), outs = __ballot_sync(0xffffffffu, out);
      if (in || out) {
        const OFF at = in ? in_at + __popc(ins & below) : out_at + __popc(outs & below);
        (in ? inside : outside)[at] = rename ? rename[v] : (ID)v;
        if (weights) (in ? inside_weights : outside_weights)[at] = weights[e];
      }
      in_at += __popc(ins);
      out_at += __popc(outs);
    }
  }
}
"""


def split_rows(cupy, offsets, indices, weights, span: slice, rename):
    """:func:`~bspgraph.backend.ops.split_rows` in two warp-a-row passes and one scan of the
    rows' counts (see the kernels)."""
    rows = offsets.shape[0] - 1
    types = {"OFF": c_type(offsets), "ID": c_type(indices)}
    types["W"] = "float" if weights is None else c_type(weights)
    lo, hi = np.int64(span.start), np.int64(span.stop)
    blocks = (max(min(-(-rows // 8), 1 << 16), 1),)  # 8 warps a block
    counts = cupy.empty(rows, dtype=offsets.dtype)
    compile_kernel(cupy, _SPLIT_ROWS, "inside_counts", **types)(
        blocks, (256,), (offsets, indices, np.int64(rows), lo, hi, counts)
    )
    inside_offsets = cupy.zeros(rows + 1, dtype=offsets.dtype)
    cupy.cumsum(counts, out=inside_offsets[1:])
    del counts
    total, count = int(indices.shape[0]), int(inside_offsets[-1])  # (one read)
    sides = [cupy.empty(count, indices.dtype), cupy.empty(total - count, indices.dtype)]
    weighs = (
        [None, None]
        if weights is None
        else [cupy.empty(count, weights.dtype), cupy.empty(total - count, weights.dtype)]
    )
    null = np.uintp(0)
    compile_kernel(cupy, _SPLIT_ROWS, "split_rows", **types)(
        blocks,
        (256,),
        (
            offsets, indices, null if weights is None else weights, np.int64(rows), lo, hi,
            null if rename is None else rename, inside_offsets,
            sides[0], null if weights is None else weighs[0],
            sides[1], null if weights is None else weighs[1],
        ),
    )  # fmt: skip
    return (
        (inside_offsets, sides[0], weighs[0]),
        (offsets - inside_offsets, sides[1], weighs[1]),
    )


STREAM_BLOCKS = 1024  # blocks of 256 threads for a grid-stride pass (a few per SM)
STREAMED = ("i4", "i8", "f4", "f8")  # the dtypes it takes (others: CuPy's own kernels)


def stream(cupy, source: str, name: str, size: int, *args, **types) -> None:
    """Launch the grid-stride kernel ``name`` over ``size`` entries: (first, size, rest...)."""
    if size:
        kernel = compile_kernel(cupy, source, name, **types)
        kernel(
            (min((size + 255) // 256, STREAM_BLOCKS),), (256,), (args[0], np.int64(size), *args[1:])
        )


# The sum over a block of one value a thread, returned to every thread: shuffles, then each
# thread adds the warps' sums in the same order (the same floating-point total every run).
# Every thread of the block calls it; any block of up to 1024 threads.
BLOCK_SUM = r"""
template <typename Sum> __device__ inline Sum block_sum(Sum value) {
  __shared__ Sum warp_sums[32];
  for (int s = 16; s > 0; s >>= 1) value += __shfl_down_sync(0xffffffffu, value, s);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = value;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  Sum total = 0;
  for (int w = 0; w < warps; ++w) total += warp_sums[w];
  __syncthreads();  // warp_sums is free for the next call
  return total;
}
"""


# Positions of a mask's True entries, in order, in two launches and no host read when their
# count is known: block b counts the Trues of its chunk of the mask, then lists them from
# the counts of the blocks before it, a round of 16 entries a thread at a time: a scan of
# the threads' counts places each thread's entries in shared memory, and the block writes
# them out in order, side by side (each thread writing its own 16 places: 423 us for 2^25
# entries, 90% set; one entry a thread a round, a scan each: 161 us).
_NONZERO = (
    BLOCK_SUM
    + MASK_GROUPS
    + r"""
extern "C" __global__ void count_true(const bool* mask, long long n, long long chunk,
                                      int aligned, unsigned long long* counts) {
  const long long lo = blockIdx.x * chunk, hi = lo + chunk < n ? lo + chunk : n;
  unsigned long long count = 0;
  for (long long i = lo + 16 * threadIdx.x; i < hi; i += 16 * 256)
    count += group_count(group_of(mask, i, hi, aligned));
  count = block_sum(count);
  if (threadIdx.x == 0) counts[blockIdx.x] = count;
}

extern "C" __global__ void list_true(const bool* mask, long long n, long long chunk,
                                     int aligned, const unsigned long long* counts, T* out) {
  __shared__ unsigned int warp_totals[8];
  __shared__ T staged[16 * 256];
  const long long lo = blockIdx.x * chunk, hi = lo + chunk < n ? lo + chunk : n;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned long long before = 0;
  for (long long b = threadIdx.x; b < blockIdx.x; b += 256) before += counts[b];
  unsigned long long at = block_sum(before);
  for (long long base = lo; base < hi; base += 16 * 256) {  // block-uniform
    const long long i = base + 16 * threadIdx.x;
    const uint4 g = i < hi ? group_of(mask, i, hi, aligned) : make_uint4(0, 0, 0, 0);
    const unsigned int mine = group_count(g);
    unsigned int scan = mine;  // inclusive, within the warp
    for (int s = 1; s < 32; s <<= 1) {
      const unsigned int other = __shfl_up_sync(0xffffffffu, scan, s);
      if (lane >= s) scan += other;
    }
    if (lane == 31) warp_totals[warp] = scan;
    __syncthreads();
    unsigned int place = scan - mine, total = 0;
    for (int w = 0; w < 8; ++w) { place += w < warp ? warp_totals[w] : 0; total += warp_totals[w]; }
    const unsigned int words[4] = {g.x, g.y, g.z, g.w};
    for (int k = 0; k < 4; ++k)
      for (unsigned int bits = words[k]; bits; bits &= bits - 1)
        staged[place++] = (T)(i + 4 * k + ((__ffs(bits) - 1) >> 3));
    __syncthreads();
    for (unsigned int j = threadIdx.x; j < total; j += 256) out[at + j] = staged[j];
    at += total;
    __syncthreads();  // warp_totals and staged are free for the next round
  }
}
"""
)


NONZERO_ROUND = MASK_GROUP * 256  # entries a block's round reads in nonzero's kernels


def _true_counts(cupy, mask):
    """Each block's count of the True entries of its chunk of ``mask``, the chunk and whether
    ``mask`` is aligned for :data:`_NONZERO`'s kernels (None for an empty mask)."""
    n = mask.shape[0]
    blocks = min(-(-n // NONZERO_ROUND), STREAM_BLOCKS)
    if blocks == 0:
        return None
    chunk = -(-n // (blocks * NONZERO_ROUND)) * NONZERO_ROUND  # whole rounds: aligned groups
    aligned = np.int32(mask.data.ptr % 16 == 0)  # (a view may start anywhere)
    counts = cupy.empty(blocks, dtype=np.uint64)
    compile_kernel(cupy, _NONZERO, "count_true", T="int")(
        (blocks,), (256,), (mask, np.int64(n), np.int64(chunk), aligned, counts)
    )
    return counts, chunk, aligned


def count_true(cupy, mask):
    """How many entries of the bool array ``mask`` are True, as a 0-d int64 array on the
    device: 16 entries a thread at a time (:data:`MASK_GROUPS`), then the blocks' counts
    summed. No host read."""
    mask = cupy.ascontiguousarray(mask, dtype=bool).reshape(-1)
    counted = _true_counts(cupy, mask)
    if counted is None:
        return cupy.zeros((), dtype=np.int64)
    return reduce_all(cupy, counted[0].view(np.int64), "sum")  # (each count < 2^63)


# ops.differs_from four entries a thread: their values in one or two 16-byte loads and their
# mask bytes in one word, where the arrays are aligned (else entry by entry). CuPy's
# element-wise `!=` then `&` take two passes of one entry a thread: CC's skip at 2^25
# vertices on an H200, 340 us so, 80 us in one pass of four (with its op call and Frontier).
_DIFFERS_FROM = (
    MASK_GROUPS
    + r"""
__device__ __forceinline__ void load_four(const int* p, int* four) {
  const int4 v = *reinterpret_cast<const int4*>(p);
  four[0] = v.x, four[1] = v.y, four[2] = v.z, four[3] = v.w;
}
__device__ __forceinline__ void load_four(const long long* p, long long* four) {
  const longlong2 u = reinterpret_cast<const longlong2*>(p)[0];
  const longlong2 v = reinterpret_cast<const longlong2*>(p)[1];
  four[0] = u.x, four[1] = u.y, four[2] = v.x, four[3] = v.y;
}

extern "C" __global__ void differs_from(const T* values, long long n, long long at,
                                        const bool* mask, int aligned, bool* out) {
  const T picked = values[at];
  const long long groups = (n + 3) >> 2;
  for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < groups;
       g += (long long)gridDim.x * blockDim.x) {
    const long long i = g << 2;
    if (aligned && i + 4 <= n) {
      T four[4];
      load_four(values + i, four);
      unsigned int differs = 0;
      for (int k = 0; k < 4; ++k) differs |= (unsigned int)(four[k] != picked) << (8 * k);
      const unsigned int kept = set_bytes(*reinterpret_cast<const unsigned int*>(mask + i));
      *reinterpret_cast<unsigned int*>(out + i) = differs & kept;
    } else {
      for (long long k = i; k < n && k < i + 4; ++k) out[k] = values[k] != picked && mask[k];
    }
  }
}
"""
)


def differs_from(cupy, values, at: int, mask):
    """:func:`bspgraph.backend.ops.differs_from` for int32 or int64 ``values`` (one dimension)
    and a bool ``mask`` of their length."""
    values = cupy.ascontiguousarray(values)
    mask = cupy.ascontiguousarray(mask, dtype=bool)
    n = int(values.shape[0])
    out = cupy.empty(n, dtype=bool)
    if n:
        aligned = values.data.ptr % 16 == 0 and mask.data.ptr % 4 == 0 and out.data.ptr % 4 == 0
        kernel = compile_kernel(cupy, _DIFFERS_FROM, "differs_from", T=c_type(values))
        groups = -(-n // 4)
        kernel(
            (min(-(-groups // 256), STREAM_BLOCKS),),
            (256,),
            (values, np.int64(n), np.int64(at), mask, np.int32(aligned), out),
        )
    return out


def nonzero(cupy, mask, dtype, count: int | None):
    n = mask.shape[0]
    counted = _true_counts(cupy, mask)
    if counted is None:
        return cupy.zeros(0, dtype=dtype)
    counts, chunk, aligned = counted
    if count is None:
        count = int(reduce_all(cupy, counts.view(np.int64), "sum"))  # (each count < 2^63)
    out = cupy.empty(count, dtype=dtype)
    compile_kernel(cupy, _NONZERO, "list_true", T=c_type(out))(
        (counts.shape[0],), (256,), (mask, np.int64(n), np.int64(chunk), aligned, counts, out)
    )
    return out


def masked_sum(cupy, values, mask=None, ids=None, keys=None, bound=None) -> int:
    """The sum of ``values`` where ``mask``, at ``ids``, or where ``keys < bound``: one pass,
    one atomic a warp (CuPy's ReductionKernel reduces to a scalar in one block)."""
    return int(masked_total(cupy, values, mask, ids, keys, bound))


def masked_total(cupy, values, mask=None, ids=None, keys=None, bound=None):
    """:func:`masked_sum` as a 0-d int64 array on the device: no host read."""
    if keys is not None and keys.dtype.str[1:] not in STREAMED:
        mask, keys = keys < bound, None
    if values.dtype.kind != "i" or values.dtype.itemsize not in (4, 8):
        if ids is not None:
            return values[ids].sum(dtype=np.int64)
        return cupy.where(mask if keys is None else keys < bound, values, 0).sum(dtype=np.int64)
    values, total = cupy.ascontiguousarray(values), cupy.zeros(1, dtype=np.uint64)
    n = values.shape[0] if ids is None else ids.shape[0]
    null = np.uintp(0)
    mask = null if mask is None else cupy.ascontiguousarray(mask, dtype=bool)
    ids = null if ids is None else cupy.ascontiguousarray(ids)
    if keys is None:
        keys, bound = null, np.int32(0)
    else:
        keys, bound = cupy.ascontiguousarray(keys), keys.dtype.type(bound)
    id_type = c_type(ids) if isinstance(ids, cupy.ndarray) else "int"  # (unused: any type)
    key_type = c_type(keys) if isinstance(keys, cupy.ndarray) else "int"
    stream(
        cupy,
        _MASKED_SUM,
        "masked_sum",
        n,
        values,
        mask,
        ids,
        keys,
        bound,
        total,
        VALUE=c_type(values),
        ID=id_type,
        KEY=key_type,
    )
    return total.view(np.int64)[0]


# Whole-array sums, counts, tests, minima and maxima, deterministic: block b reduces its
# grid-stride share of the array to partial b (shuffles, then its warps in order), then one
# block reduces the partials the same way. The grid is a function of the size only, and no
# atomics: the same float sum every run. One module, templated on the element type, the
# accumulator and the operation, every instance built by one NVRTC compile (name_expressions)
# and no header: no CUB block reduction to JIT-compile per dtype (about 3 s each).
_REDUCE = r"""
struct Sum {};
struct Min {};
struct Max {};

template <typename T> struct Bounds;
template <> struct Bounds<bool> {
  __device__ static bool lowest() { return false; }
  __device__ static bool highest() { return true; }
};
template <> struct Bounds<int> {
  __device__ static int lowest() { return -2147483647 - 1; }
  __device__ static int highest() { return 2147483647; }
};
template <> struct Bounds<long long> {
  __device__ static long long lowest() { return -9223372036854775807LL - 1; }
  __device__ static long long highest() { return 9223372036854775807LL; }
};
template <> struct Bounds<float> {
  __device__ static float lowest() { return -__int_as_float(0x7f800000); }
  __device__ static float highest() { return __int_as_float(0x7f800000); }
};
template <> struct Bounds<double> {
  __device__ static double lowest() { return -__longlong_as_double(0x7ff0000000000000LL); }
  __device__ static double highest() { return __longlong_as_double(0x7ff0000000000000LL); }
};

template <typename T> __device__ __forceinline__ T start(Sum) { return T(0); }
template <typename T> __device__ __forceinline__ T start(Min) { return Bounds<T>::highest(); }
template <typename T> __device__ __forceinline__ T start(Max) { return Bounds<T>::lowest(); }

// A NaN wins a min or a max, as in NumPy (a comparison with NaN is false: b != b tests it).
template <typename T> __device__ __forceinline__ T combine(Sum, T a, T b) { return a + b; }
template <typename T> __device__ __forceinline__ T combine(Min, T a, T b) {
  return (b < a || b != b) ? b : a;
}
template <typename T> __device__ __forceinline__ T combine(Max, T a, T b) {
  return (b > a || b != b) ? b : a;
}

template <typename T> struct Shuffled { typedef T type; };  // what a warp shuffle moves
template <> struct Shuffled<bool> { typedef int type; };

template <typename In, typename Acc, typename Op>
__global__ void reduce_blocks(const In* __restrict__ values, long long n, Acc* __restrict__ out) {
  __shared__ Acc warp_parts[32];
  const Op op = Op();
  Acc acc = start<Acc>(op);
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {  // four loads in flight a thread
    const Acc a = (Acc)values[i], b = (Acc)values[i + stride];
    const Acc c = (Acc)values[i + 2 * stride], d = (Acc)values[i + 3 * stride];
    acc = combine(op, acc, combine(op, combine(op, a, b), combine(op, c, d)));
  }
  for (; i < n; i += stride) acc = combine(op, acc, (Acc)values[i]);
  for (int s = 16; s > 0; s >>= 1) {
    const Acc other = (Acc)__shfl_down_sync(0xffffffffu, (typename Shuffled<Acc>::type)acc, s);
    acc = combine(op, acc, other);
  }
  if ((threadIdx.x & 31) == 0) warp_parts[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    Acc total = warp_parts[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); ++w) total = combine(op, total, warp_parts[w]);
    out[blockIdx.x] = total;
  }
}
"""
REDUCE_OPS = {"sum": "Sum", "min": "Min", "max": "Max"}
SUMMED = {"b1": "i8", "i4": "i8", "i8": "i8", "f4": "f8", "f8": "f8"}  # accumulator of a sum
REDUCE_CHUNK = 4096  # entries a block of 256 threads reads (16 a thread), up to
REDUCE_BLOCKS = 1024  # blocks: then each thread reads more


def _reduce_instance(code: str, op: str) -> str:
    """The name expression of the instance that reduces dtype ``code`` ("i4") by ``op``."""
    accumulator = SUMMED[code] if op == "sum" else code
    return f"reduce_blocks<{C_TYPES[code]}, {C_TYPES[accumulator]}, {REDUCE_OPS[op]}>"


_REDUCE_INSTANCES = tuple(_reduce_instance(code, op) for op in REDUCE_OPS for code in C_TYPES)


@functools.cache
def _reduce_module(cupy):
    module = cupy.RawModule(
        code=_REDUCE,
        options=("--std=c++14",),  # (templates: a standard)
        name_expressions=_REDUCE_INSTANCES,
    )
    with clock.paying("compile"):  # every instance in one NVRTC call, on the current device
        module.compile()
    return module


@functools.cache
def _reduce_function(cupy, device: int, instance: str):
    return _reduce_module(cupy).get_function(instance)


def reduce_all(cupy, values, op: str):
    """The ``op`` ("sum", "min" or "max") of all of ``values`` (any shape; a dtype of
    C_TYPES), as a 0-d array on the device: a sum in int64 (bool and integers) or float64
    (floats), a min or max in ``values``' dtype (False/True for bools: all, any), NaN when a
    float is NaN. No host read. An empty array gives the identity (0, the dtype's largest or
    smallest value, inf or -inf). Two launches (one up to REDUCE_CHUNK entries); the same
    result every run."""
    device = values.device
    if device.id != cupy.cuda.runtime.getDevice():  # (a kernel of another GPU cannot read
        with device:  # them: launched where they are)
            return reduce_all(cupy, values, op)
    code = values.dtype.str[1:]
    instance = _reduce_instance(code, op)
    values = cupy.ascontiguousarray(values).reshape(-1)
    n = int(values.shape[0])
    dtype = np.dtype(SUMMED[code] if op == "sum" else code)
    blocks = max(min(-(-n // REDUCE_CHUNK), REDUCE_BLOCKS), 1)
    first = _reduce_function(cupy, device.id, instance)
    if blocks == 1:
        out = cupy.empty((), dtype=dtype)
        first((1,), (256,), (values, np.int64(n), out))
        return out
    partial = cupy.empty(blocks + 1, dtype=dtype)  # the blocks' partials, then the result
    out = partial[blocks]
    first((blocks,), (256,), (values, np.int64(n), partial))
    second = _reduce_function(cupy, device.id, _reduce_instance(dtype.str[1:], op))
    second((1,), (256,), (partial, np.int64(blocks), out))
    return out


@functools.cache
def compile_kernel(cupy, source: str, name: str, cooperative: bool = False, **types: str):
    """The kernel ``name`` of ``source`` with each whole-word token of ``types`` replaced by its
    text (a C type, a constant), built once per key (a row reduction is called thousands of
    times a run); ``cooperative`` for a kernel that synchronises its whole grid. It is
    compiled here, on the current device, and the time paid as "compile" (:mod:`.clock`)."""
    for token, text in types.items():
        source = re.sub(rf"\b{token}\b", text, source)
    kernel = cupy.RawKernel(source, name, enable_cooperative_groups=cooperative)
    with clock.paying("compile"):  # now, on the current device: not inside a timed step
        kernel.compile()
    return kernel


def use_precompiled_headers(cupy) -> bool:
    """NVRTC's automatic precompiled headers (``--pch``, NVRTC 12.8+) for every kernel CuPy
    builds from now on in this process, as CuPy's ``CUPY_NVRTC_USE_PCH=1`` does: the headers
    of CuPy's element-wise kernels are parsed once, not once a kernel (the first call of
    every primitive on rmat16: 13.3 -> 9.2 s, H200). Nothing changes where the variable is
    set (the user's choice stands) or where this CuPy has no such switch; True when set."""
    compiler = getattr(getattr(cupy, "cuda", None), "compiler", None)
    if "CUPY_NVRTC_USE_PCH" in os.environ or not hasattr(compiler, "_use_pch"):
        return False
    compiler._use_pch = True  # read at each compilation; NVRTC before 12.8: CuPy skips it
    return True


def time_compilation(cupy) -> bool:
    """Time every kernel CuPy builds as a "compile" payment on :mod:`.clock`: its element-wise
    kernels, reductions (CUB's included) and raw kernels all pass through one function,
    ``cupy.cuda.compiler._compile_module_with_cache`` (compile, or load from the disk cache,
    then load the module), reached only for a kernel not yet built in this process. That
    function is wrapped once per process; False when this CuPy has none (then only
    bspgraph's own kernels are timed, by :func:`compile_kernel`)."""
    compiler = getattr(getattr(cupy, "cuda", None), "compiler", None)
    original = getattr(compiler, "_compile_module_with_cache", None)
    if original is None:
        return False
    if getattr(original, "timed_by_bspgraph", False):
        return True

    @functools.wraps(original)
    def timed(*args, **kwargs):
        with clock.paying("compile"):
            return original(*args, **kwargs)

    timed.timed_by_bspgraph = True
    compiler._compile_module_with_cache = timed
    return True


def c_type(array) -> str:
    """The C type of ``array``'s elements."""
    return C_TYPES[array.dtype.str[1:]]


def scatter(ufunc, legacy: str, target, index, values) -> None:
    """``ufunc.at`` on CuPy 14+, cupyx's scatter functions before it."""
    if hasattr(ufunc, "at"):
        ufunc.at(target, index, values)
    else:
        import cupyx

        getattr(cupyx, legacy)(target, index, values)
