"""Triangle counting's kernels: the wedge-closing tally, registered as the "close_wedges" step
of each backend (NumPy: a numba kernel, else bitmaps of row blocks; CuPy: list intersections)."""

from __future__ import annotations

import numpy as np

from ..backend import c_type, compile_kernel, fused, ops, row_positions

NUMBA = f"{__package__}._tc_numba"  # the numba kernel (imports numba: optional)
WEDGE_ROWS = 64  # close_wedges on NumPy: rows per block ...
WEDGE_BITMAP = 1 << 24  # ... and at most this many bitmap bytes
WEDGE_CREDITS = 1 << 24  # triangle corners buffered before they are counted
WEDGE_MIN_BLOCK = 1 << 14  # ... and the fewest wedges a block must hold on average


@fused.register("close_wedges", "numpy", "step")
def close_wedges(backend, offsets, heads, ids):
    """Triangle tally per vertex (int64): for each ``u`` of ``ids`` and each wedge
    ``u -> v -> w`` of the oriented CSR ``(offsets, heads)`` closed by ``u -> w``, one to
    each of ``u, v, w``. The rows of ``heads`` are sorted. NumPy: the numba kernel, else
    blocks of rows whose out-neighbours are marked in a bitmap, one read per wedge; None when
    those blocks would hold too few wedges to cover their cost (the caller has its own path).
    (CuPy: :func:`intersect_lists`.)"""
    n = int(offsets.shape[0]) - 1
    kernel = ops.accelerated(backend, NUMBA, "close_wedges")
    if kernel is not None:
        return kernel(offsets, heads, ids, n)
    rows = max(1, min(WEDGE_ROWS, WEDGE_BITMAP // max(n, 1)))
    degrees, found = np.diff(offsets), []
    wedges = int(np.take(degrees, heads[row_positions(offsets[ids], degrees[ids])]).sum())
    if wedges * rows < WEDGE_MIN_BLOCK * int(ids.shape[0]):  # sparse wedges (grids, roads)
        return None
    tally = np.zeros(n, dtype=np.int64)
    bitmap = np.zeros(rows * n, dtype=bool)
    for lo in range(0, int(ids.shape[0]), rows):
        block = ids[lo : lo + rows]
        spread = degrees[block]
        if not spread.any():
            continue
        if int(block[-1]) - int(block[0]) == block.shape[0] - 1:  # consecutive rows
            v = heads[int(offsets[block[0]]) : int(offsets[block[-1] + 1])]
        else:
            v = heads[row_positions(offsets[block], spread)]
        slot = np.repeat(np.arange(block.shape[0]) * n, spread)  # (u's row in the bitmap) * n
        marks = slot + v
        bitmap[marks] = True
        reach = degrees[v]  # wedges u -> v -> w through each edge u -> v
        w = heads[row_positions(offsets[v], reach)]
        hit = np.flatnonzero(bitmap.take(np.repeat(slot, reach) + w))
        bitmap[marks] = False
        if hit.size:
            edge = np.searchsorted(np.cumsum(reach), hit, side="right")
            found += [np.repeat(block, spread)[edge], v[edge], w[hit]]
        if sum(f.shape[0] for f in found) > WEDGE_CREDITS:
            tally += np.bincount(np.concatenate(found), minlength=n)
            found = []
    if found:
        tally += np.bincount(np.concatenate(found), minlength=n)
    return tally


_INTERSECT = r"""
extern "C" __global__ void intersect_lists(const long long* tails, const long long* edges,
    long long total, const long long* offsets, const ID* heads, unsigned long long* tally) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total;
       k += (long long)gridDim.x * blockDim.x) {
    const long long u = tails[k], v = heads[edges[k]];
    long long a = offsets[u], a_end = offsets[u + 1], b = offsets[v], b_end = offsets[v + 1];
    if (a_end - a > b_end - b) { long long t = a; a = b; b = t; t = a_end; a_end = b_end; b_end = t; }
    unsigned long long found = 0;
    for (; a < a_end; ++a) {  // each w of the shorter list, searched in the longer one
      const ID w = heads[a];
      long long lo = b, hi = b_end;
      while (lo < hi) { const long long mid = (lo + hi) >> 1; if (heads[mid] < w) lo = mid + 1; else hi = mid; }
      if (lo < b_end && heads[lo] == w) { ++found; atomicAdd(&tally[w], 1ULL); b = lo + 1; }
      else b = lo;  // the lists are sorted: the next w lies further on
    }
    if (found) { atomicAdd(&tally[u], found); atomicAdd(&tally[v], found); }
  }
}
"""


@fused.register("close_wedges", "cupy", "step")
def intersect_lists(backend, offsets, heads, ids):
    """:func:`close_wedges` on CuPy: one thread per oriented edge ``u -> v`` of the rows
    ``ids`` intersects the two out-lists (each entry of the shorter binary-searched in the
    longer)."""
    n = int(offsets.shape[0]) - 1
    cupy = backend.xp
    offsets = offsets.astype(np.int64, copy=False)
    starts = offsets[ids]
    degrees = offsets[ids + 1] - starts
    total = int(backend.total(degrees)) if ids.shape[0] else 0
    tally = cupy.zeros(n, dtype=np.uint64)
    if total:
        segment, edges = ops.row_entries(backend, starts, degrees, total)
        tails = ids.astype(np.int64)[segment]
        kernel = compile_kernel(cupy, _INTERSECT, "intersect_lists", ID=c_type(heads))
        blocks = min((total + 255) // 256, 1 << 16)
        kernel((blocks,), (256,), (tails, edges, np.int64(total), offsets, heads, tally))
    return tally.astype(np.int64)
