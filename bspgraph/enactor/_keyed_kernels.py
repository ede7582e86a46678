"""A keyed contract's exchange on the GPU: packed by owner, then combined and listed.

A contract whose communicated state is one min or max column (BFS depth, SSSP distance, CC
labels), with at most one ``Follow`` column (BFS parents), takes two kernels here:

- ``pack_best`` writes a device's package grouped by owner (as a sender writes one send
  buffer a destination), its own vertices left out: counts by owner (read with every
  part's, by the enactor), then each entry to its owner's slice; a selective exchange sends
  the slices (``Update.by_owner``), no split;
- ``apply_best`` combines each arrived Update's entries into the key (the winner's follower
  taken along) and lists the winners and the returned vertices (those this device owns,
  unless ``needs_all``), each vertex once a superstep, their out-edges counted on the way:
  the next frontier, one host read.

They replace a V-long mask, its count and compaction, the split's compare and compaction, and
about twenty of CuPy's index operations per device and superstep.
"""

from __future__ import annotations

import numpy as np

from ..backend import fused
from ..backend.cuda import C_TYPES, c_type, stream
from ..comm.message import Packed
from ..frontier import Frontier

# Entry j of a piece: an Update's (``key_in``: its value combined into key[v], the follower's
# value taken where it wins; listed where it won) or a returned vertex (``key_in`` null: listed
# where keep[v], or always without ``keep``). A vertex is listed by the entry that first
# stamps it this superstep (stamps[v] = stamp); a warp's listed vertices take their places with
# one atomic. The ids of one piece are distinct, so no two threads combine into one vertex.
_WINS = r"""
// Whether an arriving value x replaces the value held: mode 0 min, 1 max, 2 replace (differs).
__device__ __forceinline__ bool wins(KEY x, KEY now, int mode) {
  return mode == 0 ? x < now : (mode == 1 ? x > now : x != now);
}
"""
_APPLY_BEST = (
    _WINS
    + r"""
extern "C" __global__ void apply_best(const ID* ids, long long n, const bool* keep,
    const KEY* key_in, KEY* key, const FOL* follower_in, FOL* follower, int mode,
    int* stamps, int stamp, const DEG* degree, ID* out, unsigned long long* tally) {
  unsigned long long edges = 0;
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n;
       j += (long long)gridDim.x * blockDim.x) {
    const ID v = ids[j];
    bool listed;
    if (key_in) {
      const KEY x = key_in[j], now = key[v];
      listed = wins(x, now, mode);
      if (listed) {
        key[v] = x;
        if (follower) follower[v] = follower_in[j];
      }
    } else {
      listed = !keep || keep[v];
    }
    if (listed && stamps[v] != stamp && atomicExch(&stamps[v], stamp) != stamp) {
      const unsigned lanes = __activemask();
      const int lane = threadIdx.x & 31, leader = __ffs(lanes) - 1;
      unsigned long long at = 0;
      if (lane == leader) at = atomicAdd(&tally[0], (unsigned long long)__popc(lanes));
      at = __shfl_sync(lanes, at, leader);
      out[at + __popc(lanes & ((1u << lane) - 1))] = v;
      edges += (unsigned long long)degree[v];
    }
  }
  for (int s = 16; s > 0; s >>= 1) edges += __shfl_down_sync(0xffffffffu, edges, s);
  if ((threadIdx.x & 31) == 0 && edges) atomicAdd(&tally[1], edges);
}
"""
)


# A Slab over the block first .. first + n: each arriving value combined into the key (the
# follower's taken along where it wins), the vertices it changed marked (unless mark is null);
# those not marked before counted in tally[0], their out-edges in tally[1] (unless degree is
# null).
_APPLY_BLOCK = (
    _WINS
    + r"""
extern "C" __global__ void apply_block(long long first, long long n, const KEY* key_in,
    KEY* key, const FOL* follower_in, FOL* follower, int mode, bool* mark, const DEG* degree,
    unsigned long long* tally) {
  unsigned long long marked = 0, edges = 0;
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n;
       j += (long long)gridDim.x * blockDim.x) {
    const long long v = first + j;
    const KEY x = key_in[j];
    if (wins(x, key[v], mode)) {
      key[v] = x;
      if (follower) follower[v] = follower_in[j];
      if (mark && !mark[v]) {
        mark[v] = true;
        marked += 1;
        if (degree) edges += (unsigned long long)degree[v];
      }
    }
  }
  for (int s = 16; s > 0; s >>= 1) {
    marked += __shfl_down_sync(0xffffffffu, marked, s);
    edges += __shfl_down_sync(0xffffffffu, edges, s);
  }
  if ((threadIdx.x & 31) == 0 && marked) {  // (none without a mark)
    atomicAdd(&tally[0], marked);
    atomicAdd(&tally[1], edges);
  }
}
"""
)

# Two launches over a package's ids (the first listed[0] of them, when listed is not null: a
# kernel's list and its count, on the device): owner_counts adds up the entries of each owner (a block's
# counts in shared memory first), pack_by_owner writes entry j at its owner's offset (the
# counts of the owners before it) plus its place among that owner's entries (one atomic per
# owner a warp: the lanes of one owner take consecutive places).
_PACK = r"""
extern "C" __global__ void owner_counts(const ID* ids, long long n,
    const unsigned long long* listed, const OWNER* owner, int parts, int skip,
    unsigned long long* counts) {
  if (listed && (unsigned long long)n > listed[0]) n = (long long)listed[0];
  __shared__ unsigned long long block_counts[64];
  for (int k = threadIdx.x; k < parts; k += blockDim.x) block_counts[k] = 0;
  __syncthreads();
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n;
       j += (long long)gridDim.x * blockDim.x) {
    const int o = (int)owner[ids[j]];
    if (o != skip) atomicAdd(&block_counts[o], 1ULL);
  }
  __syncthreads();
  for (int k = threadIdx.x; k < parts; k += blockDim.x)
    if (block_counts[k]) atomicAdd(&counts[k], block_counts[k]);
}

extern "C" __global__ void pack_by_owner(const ID* ids, long long n,
    const unsigned long long* listed, const OWNER* owner, int parts, int skip,
    const unsigned long long* counts, unsigned long long* filled, const KEY* key,
    const FOL* follower, ID* out_ids, KEY* out_key, FOL* out_follower) {
  if (listed && (unsigned long long)n > listed[0]) n = (long long)listed[0];
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n;
       j += (long long)gridDim.x * blockDim.x) {
    const ID v = ids[j];
    const int o = (int)owner[v];
    const unsigned lanes = __activemask();
    const int lane = threadIdx.x & 31;
    unsigned long long at = 0;
    for (int k = 0; k < parts; ++k) {  // a ballot per owner: its lanes' places at once
      if (k == skip) continue;  // (the same k for every lane)
      const unsigned mine = __ballot_sync(lanes, o == k);
      if (!mine) continue;
      const int leader = __ffs(mine) - 1;
      unsigned long long first = 0;
      if (lane == leader) first = atomicAdd(&filled[k], (unsigned long long)__popc(mine));
      first = __shfl_sync(lanes, first, leader);
      if (o == k) at = first + __popc(mine & ((1u << lane) - 1));
    }
    if (o == skip) continue;  // the sender's own vertex: it stays
    for (int k = 0; k < o; ++k) at += counts[k];
    out_ids[at] = v;
    out_key[at] = key[v];
    if (follower) out_follower[at] = follower[v];
  }
}
"""
PACK_PARTS = 64  # the most owners a package is grouped by (a block's counts in shared memory)
MODES = {"min": 0, "max": 1, "replace": 2}  # the combiners the kernels apply (``wins``)


def keyed_columns(contract, state) -> tuple[str, str | None] | None:
    """``(key, follower)`` when the contract's communicated state (that this run holds) is one
    min, max or replace column and, for min or max, at most one Follow column of it, all one
    value a vertex of a dtype the kernels take; else None (the general path combines it)."""
    columns = {name: combiner for name, combiner in contract.combiners.items()
               if getattr(state, name) is not None}  # fmt: skip
    keys = [name for name, combiner in columns.items() if combiner.name in MODES]
    followers = [name for name in columns if name not in keys]
    if len(keys) != 1 or len(followers) > 1:
        return None
    if followers and (columns[followers[0]].name != "follow" or not columns[keys[0]].keyed):
        return None
    if any(getattr(state, name).ndim != 1 or getattr(state, name).dtype.str[1:] not in C_TYPES
           for name in columns):  # fmt: skip
        return None
    return keys[0], (followers[0] if followers else None)


@fused.register("keyed", "cupy", "step")
class KeyedKernels:
    """A keyed contract's kernels on one GPU, for a device's ``state`` and its ``columns``
    (:func:`keyed_columns`) combined by ``mode`` (:data:`MODES`). The columns are read from
    ``state`` at each call (a step may rebind a state array)."""

    def __init__(self, graph, state, columns: tuple[str, str | None], mode: int):
        self.graph, self.state, self.columns, self.mode = graph, state, columns, np.int32(mode)
        self.stamps = None  # an int32 per vertex, made on the first listing

    def _columns(self):
        """The key, the follower (None without one) and their C types."""
        key = getattr(self.state, self.columns[0])
        follower = None if self.columns[1] is None else getattr(self.state, self.columns[1])
        types = {"KEY": c_type(key), "FOL": "int" if follower is None else c_type(follower)}
        return key, follower, types

    def _arriving(self, values: dict, key, follower):
        """The key's and the follower's arriving columns (null for no follower), contiguous."""
        cp = self.graph.xp
        key_in = cp.ascontiguousarray(values[self.columns[0]], dtype=key.dtype)
        if follower is None:
            return key_in, NULL
        return key_in, cp.ascontiguousarray(values[self.columns[1]], dtype=follower.dtype)

    def pack(self, owner, parts: int, skip: int, ids, count=None) -> Packed:
        """The package at ``ids`` (distinct; with ``count``, a device array, its first
        ``count[0]``: a kernel's list, not read) grouped by ``owner`` (a device array) over
        ``parts`` owners, without the entries of owner ``skip`` (the sender: its own vertices
        stay; their piece is empty); its counts by owner stay on the device (``Packed``)."""
        cp = self.graph.xp
        key, follower, types = self._columns()
        n = ids.shape[0]
        ids, listed = cp.ascontiguousarray(ids), _or_null(count)
        types.update(ID=c_type(ids), OWNER=c_type(owner))
        counts = cp.zeros(2 * parts, dtype=cp.uint64)  # the counts, then the places filled
        stream(cp, _PACK, "owner_counts", n, ids, listed, owner, np.int32(parts),
               np.int32(skip), counts, **types)  # fmt: skip
        out_ids, out_key = cp.empty_like(ids), cp.empty(n, dtype=key.dtype)
        out_follower = None if follower is None else cp.empty(n, dtype=follower.dtype)
        stream(cp, _PACK, "pack_by_owner", n, ids, listed, owner, np.int32(parts),
               np.int32(skip), counts, counts[parts:], key, _or_null(follower), out_ids,
               out_key, _or_null(out_follower), **types)  # fmt: skip
        values = {self.columns[0]: out_key}
        if follower is not None:
            values[self.columns[1]] = out_follower
        return Packed(out_ids, values, counts[:parts])

    def list(self, returned, keep, updates: list, stamp: int) -> Frontier:
        """Combine ``updates`` (Updates on this GPU, distinct ids each) into the columns, and
        list the winners and the ``returned`` ids (None: none; where ``keep``, a bool per
        vertex, unless it is None), each once (a stamp per vertex, below ``stamp``): the next
        frontier, its out-edges counted (``cost_degrees``). One host read, when the frontier's
        size, ids or out-edges are first asked for (:meth:`Frontier.listed`)."""
        graph = self.graph
        cp = graph.xp
        key, follower, types = self._columns()
        if self.stamps is None:
            self.stamps = cp.zeros(graph.num_vertices, dtype=cp.int32)
        capacity = (0 if returned is None else returned.shape[0]) + sum(len(u) for u in updates)
        out = cp.empty(capacity, dtype=graph.indices.dtype)
        tally = cp.zeros(2, dtype=cp.uint64)
        degree = graph.cost_degrees()[0]
        pieces = [] if returned is None else [(returned, NULL, NULL)]
        pieces += [(u.ids, *self._arriving(u.values, key, follower)) for u in updates]
        for ids, key_in, follower_in in pieces:
            stream(cp, _APPLY_BEST, "apply_best", ids.shape[0],
                   cp.ascontiguousarray(ids, dtype=out.dtype), _or_null(keep), key_in, key,
                   follower_in, _or_null(follower), self.mode, self.stamps, np.int32(stamp),
                   degree, out, tally, ID=c_type(out), DEG=c_type(degree), **types)  # fmt: skip
        return Frontier.listed(graph, out, tally)  # read when first asked for

    def apply_block(self, region: slice, values: dict, mark, tally=None, edges: bool = True):
        """Combine a Slab's ``values`` over the vertices ``region`` (a range) into the
        columns, marking in ``mark`` (a bool per vertex) the vertices it changed. Returns
        ``tally`` (a new one when None): two counters on the device, to which it adds how
        many vertices it marked that were not marked before, and (with ``edges``) their
        out-edges (``cost_degrees``). With ``mark`` None nothing is marked or counted (and
        None returned)."""
        graph = self.graph
        first, stop, _ = region.indices(graph.num_vertices)
        key, follower, types = self._columns()
        key_in, follower_in = self._arriving(values, key, follower)
        degree = graph.cost_degrees()[0]
        if tally is None and mark is not None:
            tally = graph.xp.zeros(2, dtype=graph.xp.uint64)
        stream(graph.xp, _APPLY_BLOCK, "apply_block", max(stop - first, 0), np.int64(first),
               key_in, key, follower_in, _or_null(follower), self.mode, _or_null(mark),
               degree if edges and mark is not None else NULL, _or_null(tally),
               DEG=c_type(degree), **types)  # fmt: skip
        return tally


NULL = np.uintp(0)  # a null pointer: no such array


def _or_null(array):
    return NULL if array is None else array
