"""Connected components' kernels: union-find along a CSR's entries (``fr.link``), registered
as the "link" step of each backend. On NumPy, rounds that flatten every tree and hook each
root under the least root across an entry; on CuPy, ECL-CC's lock-free hooking."""

from __future__ import annotations

import numpy as np

from ..backend import COMPARE_SWAP, LONG_ROW, WARP_ROW, c_type, compile_kernel, fused, hub_pieces


@fused.register("link", "numpy", "step")
def link(backend, parent, offsets, indices, rows=None) -> None:
    """Union-find along a CSR's entries: afterwards, for every entry ``v`` of row ``u``
    (the rows ``rows``, vertex ids, or all), ``u`` and ``v`` have the same root in the
    forest ``parent``, given and kept with ``parent[x] <= x``, so that a root (its own
    parent) is its tree's least id; a root is joined under a smaller vertex. NumPy: rounds
    that flatten every tree and hook each root under the least root across an entry, until
    none is apart (CuPy: :func:`link_rows`)."""
    rows = np.arange(offsets.shape[0] - 1, dtype=indices.dtype) if rows is None else rows
    starts = offsets[rows]
    degrees = offsets[rows + 1] - starts
    segment, position = backend.row_entries(starts, degrees, int(degrees.sum()))
    tails, heads = rows[segment], indices[position]
    while True:
        jumped = parent[parent]
        while (jumped != parent).any():  # every vertex to its root
            parent[...] = jumped
            jumped = parent[parent]
        ends = parent[tails], parent[heads]
        apart = ends[0] != ends[1]
        if not apart.any():
            return None
        backend.scatter_min(parent, np.maximum(*ends)[apart], np.minimum(*ends)[apart])


_LINK = (
    COMPARE_SWAP
    + r"""

__device__ __forceinline__ ID find(ID x, ID* parent) {  // the root, halving the path to it
  volatile ID* seen = parent;  // another thread may move a root or halve a path meanwhile
  ID current = seen[x];
  if (current != x) {
    ID next, previous = x;  // below a root, parent[y] < y: a pointer to an ancestor
    while (current > (next = seen[current])) {
      seen[previous] = next;  // an ancestor's ancestor: still in the tree
      previous = current;
      current = next;
    }
  }
  return current;
}

__device__ __forceinline__ void link(ID u, ID v, ID* parent) {  // ECL-CC's hooking (Jaiganesh
  ID a = find(u, parent), b = find(v, parent);  // and Burtscher): a root swaps to a smaller
  while (a != b) {  // vertex only if it is still a root, else climb from what it points to
    if (a > b) { const ID t = a; a = b; b = t; }
    const ID seen = compare_swap(parent + b, b, a);
    if (seen == b) return;
    b = seen;
  }
}

extern "C" __global__ void link_rows(const OFF* starts, const OFF* ends, const ID* rows,
    const ID* indices, long long count, long long longest, ID* parent) {
  // ROWS ranges a warp, lane i holding range i (row rows[i], or i without rows): the whole
  // warp walks each range of WARP_ROW entries or more in turn, then each lane its own
  // shorter one; a range past `longest` entries is skipped (it comes in pieces).
  const unsigned full = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
  for (long long first = ((blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5) * ROWS;
       first < count; first += warps * ROWS) {  // warp-uniform: every lane shuffles below
    const long long r = first + lane;
    OFF start = 0, end = 0;
    ID u = 0;
    if (lane < ROWS && r < count) { start = starts[r]; end = ends[r]; u = rows ? rows[r] : (ID)r; }
    if (end - start > longest) end = start;
    for (unsigned long_rows = __ballot_sync(full, end - start >= WARP_ROW); long_rows;
         long_rows &= long_rows - 1) {
      const int owner = __ffs(long_rows) - 1;
      const OFF row_end = __shfl_sync(full, end, owner);
      const ID row = __shfl_sync(full, u, owner);
      for (OFF e = __shfl_sync(full, start, owner) + lane; e < row_end; e += 32)
        link(row, indices[e], parent);
    }
    if (end - start < WARP_ROW)
      for (OFF e = start; e < end; ++e) link(u, indices[e], parent);
  }
}
"""
)


@fused.register("link", "cupy", "step")
def link_rows(backend, parent, offsets, indices, rows=None) -> None:
    """:func:`link` on CuPy: every row (hubs past LONG_ROW in pieces, a warp each), or the
    rows ``rows`` whole."""
    cupy = backend.xp
    if rows is None:
        ranges = [(offsets[:-1], offsets[1:], None, LONG_ROW, 32)]
        hubs = hub_pieces(cupy, offsets)
        if hubs is not None:
            rows_of_hubs, _, _, starts, ends, hub = hubs
            ranges.append((starts, ends, rows_of_hubs.astype(indices.dtype)[hub], LONG_ROW, 1))
    else:
        longest = np.iinfo(np.int64).max
        ranges = [(offsets[rows], offsets[rows + 1], rows.astype(indices.dtype), longest, 32)]
    for starts, ends, ids, longest, per_warp in ranges:
        count = int(starts.shape[0])
        if count == 0:
            continue
        source = f"#define ROWS {per_warp}\n#define WARP_ROW {WARP_ROW}\n" + _LINK
        kernel = compile_kernel(cupy, source, "link_rows", OFF=c_type(starts), ID=c_type(indices))
        blocks = min(-(-count // (8 * per_warp)), 1 << 16)  # 8 warps a block
        kernel((blocks,), (256,), (starts, ends, np.uintp(0) if ids is None else ids, indices,
                                   np.int64(count), np.int64(longest), parent))  # fmt: skip
