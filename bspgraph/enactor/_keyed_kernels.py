"""A keyed contract's exchange on the device: packed, then combined and listed.

A contract whose communicated state is one min, max or replace column (BFS depth, SSSP
distance, CC labels, PageRank's contributions), with at most one column that follows a min or
max key (``Follow``: BFS parents; ``Add(follows=...)``: Brandes' path counts, whose changes
travel and are added on a tie of the key), takes these kernels:

- ``owner_counts`` and ``pack_by_owner`` write a device's package grouped by owner (as a
  sender writes one send buffer a destination), its own vertices left out, its counts by owner
  on the device; a selective exchange sends the slices (``Update.by_owner``), no split, or
  hands each owner its group unread (a ``Piece``: in one memory a view, across NCCL the
  package whole, in one send: it is ``laid_out`` as it travels);
- ``gather_listed`` writes the package for every device (``needs_all``): a kernel's list and
  its values beside it, one group, and the list's count, laid out as it travels;
- ``apply_best`` combines each arrived Update's or Piece's entries into the key (the winner's
  follower taken along; a Piece's start and count read on the device) and lists the winners
  and the returned vertices (those this device owns, unless ``needs_all``), each vertex once
  a superstep, their out-edges counted on the way: the next frontier, one host read;
- ``apply_block`` combines a Slab (or Bits: a vertex set and one value) over its block in one
  pass, counting what it marks;
- ``apply_marked`` combines many arrived entries (a heavy level's Updates) and marks the
  vertices they changed in a mask of every vertex, where listing them would cost more.

They replace a V-long mask, its count and compaction, the split's compare and compaction, and
about twenty of CuPy's index operations per device and superstep. :class:`NumpyKeyed` does the
same in NumPy's array operations for a NumPy backend that stands in for a GPU (the counting
backend of ``bg.testing.host_reads``).
"""

from __future__ import annotations

import functools

import numpy as np

from ..backend import fused
from ..backend.cuda import C_TYPES, c_type, stream
from ..comm.message import Bits, Packed, Piece, Slab, laid_out
from ..frontier import Frontier
from . import combiners

# Entry j of a piece: an Update's (``key_in``: its value combined into key[v], the follower's
# value taken where it wins, or with ``adds`` added where it ties; listed where it changed
# them) or a returned vertex (``key_in`` null: listed where keep[v], or always without
# ``keep``). With ``counts``, the piece is group ``group`` of a package whose groups are
# counted on the device (a Piece): its entries start after the groups before it, and there
# are counts[group] of them (at most n). A vertex is listed by the entry that first stamps it
# this superstep (stamps[v] = stamp); a warp's listed vertices take their places with one
# atomic. The ids of one piece are distinct, so no two threads combine into one vertex. With
# ``base`` (an added follower's baseline), each entry's vertex takes the follower's value
# there: what a superstep sent or applied is no longer a change.
_WINS = r"""
// Whether an arriving value x replaces the value held: mode 0 min, 1 max, 2 replace (differs).
__device__ __forceinline__ bool wins(KEY x, KEY now, int mode) {
  return mode == 0 ? x < now : (mode == 1 ? x > now : x != now);
}
"""
_APPLY_BEST = (
    _WINS
    + r"""
extern "C" __global__ void apply_best(const ID* ids, long long n,
    const unsigned long long* counts, int group, const bool* keep, const KEY* key_in, KEY* key,
    const FOL* follower_in, FOL* follower, int mode, int adds, FOL* base, int* stamps,
    int stamp, const DEG* degree, ID* out, unsigned long long* tally) {
  if (counts) {  // a package's group, counted on the device: where it starts, how many
    long long start = 0;
    for (int k = 0; k < group; ++k) start += (long long)counts[k];
    ids += start;
    if (key_in) key_in += start;
    if (follower_in) follower_in += start;
    if ((long long)counts[group] < n) n = (long long)counts[group];
  }
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
      } else if (adds && x == now && follower_in[j] != (FOL)0) {
        follower[v] += follower_in[j];  // a change made at the same key: added
        listed = true;
      }
    } else {
      listed = !keep || keep[v];
    }
    if (base) base[v] = follower[v];
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
# follower's taken along where it wins, or with adds added where it ties), the vertices it
# changed marked (unless mark is null);
# those not marked before counted in tally[0], their out-edges in tally[1] (unless degree is
# null). Bits (apply_bits: packbits' order) give only the vertices whose bit is set, each the
# one value key_in[0] (and follower_in[0]); a thread takes a byte of them, its set bits in
# turn (an empty byte skips eight vertices at once: 2^24 vertices, a set bit in ten, 217 ->
# 102 us on an H200 against a thread a vertex).
_APPLY_ONE = (
    _WINS
    + r"""
__device__ __forceinline__ void apply_one(long long v, long long at, const KEY* key_in,
    KEY* key, const FOL* follower_in, FOL* follower, int mode, int adds, bool* mark,
    const DEG* degree, unsigned long long& marked, unsigned long long& edges) {
  const KEY x = key_in[at];
  bool changed = wins(x, key[v], mode);
  if (changed) {
    key[v] = x;
    if (follower) follower[v] = follower_in[at];
  } else if (adds && x == key[v] && follower_in[at] != (FOL)0) {
    follower[v] += follower_in[at];
    changed = true;
  }
  if (changed && mark && !mark[v]) {
    mark[v] = true;
    marked += 1;
    if (degree) edges += (unsigned long long)degree[v];
  }
}

__device__ __forceinline__ void count_marked(unsigned long long marked,
    unsigned long long edges, unsigned long long* tally) {
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
_APPLY_BLOCK = (
    _APPLY_ONE
    + r"""
extern "C" __global__ void apply_block(long long first, long long n, const KEY* key_in,
    KEY* key, const FOL* follower_in, FOL* follower, int mode, int adds, bool* mark,
    const DEG* degree, unsigned long long* tally) {
  unsigned long long marked = 0, edges = 0;
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n;
       j += (long long)gridDim.x * blockDim.x)
    apply_one(first + j, j, key_in, key, follower_in, follower, mode, adds, mark, degree,
              marked, edges);
  count_marked(marked, edges, tally);
}

extern "C" __global__ void apply_bits(long long first, long long bytes, long long n,
    const unsigned char* bits, const KEY* key_in, KEY* key, const FOL* follower_in,
    FOL* follower, int mode, int adds, bool* mark, const DEG* degree,
    unsigned long long* tally) {
  unsigned long long marked = 0, edges = 0;
  for (long long b = blockIdx.x * (long long)blockDim.x + threadIdx.x; b < bytes;
       b += (long long)gridDim.x * blockDim.x) {
    for (unsigned int byte = bits[b]; byte;) {
      const int k = __clz(byte) - 24;  // the highest bit left: the byte's first vertex
      byte &= ~(0x80u >> k);
      const long long j = 8 * b + k;
      if (j >= n) break;
      apply_one(first + j, 0, key_in, key, follower_in, follower, mode, adds, mark, degree,
                marked, edges);
    }
  }
  count_marked(marked, edges, tally);
}
"""
)
# An Update's (or a counted package group's, as apply_best finds it) entries combined into the
# key and follower as apply_one does, the vertices they changed marked in ``mark``, and each
# entry's vertex taking the follower's value as its baseline (``base``, where added): many
# arrivals at once, into a mask of every vertex, where apply_best would list them.
_APPLY_MARKED = (
    _APPLY_ONE
    + r"""
extern "C" __global__ void apply_marked(const ID* ids, long long n,
    const unsigned long long* counts, int group, const KEY* key_in, KEY* key,
    const FOL* follower_in, FOL* follower, int mode, int adds, FOL* base, bool* mark) {
  if (counts) {
    long long start = 0;
    for (int k = 0; k < group; ++k) start += (long long)counts[k];
    ids += start;
    key_in += start;
    if (follower_in) follower_in += start;
    if ((long long)counts[group] < n) n = (long long)counts[group];
  }
  unsigned long long marked = 0, edges = 0;  // (not counted: no degrees)
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n;
       j += (long long)gridDim.x * blockDim.x) {
    const ID v = ids[j];
    apply_one(v, j, key_in, key, follower_in, follower, mode, adds, mark, (const DEG*)0,
              marked, edges);
    if (base) base[v] = follower[v];
  }
}
"""
)


# Two launches over a package's ids (the first listed[0] of them, when listed is not null: a
# kernel's list and its count, on the device):
# owner_counts adds up the entries of each owner (a block's counts in shared memory first), pack_by_owner writes entry j at its owner's offset (the
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
    const FOL* follower, const FOL* base, ID* out_ids, KEY* out_key, FOL* out_follower) {
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
    if (follower) out_follower[at] = base ? follower[v] - base[v] : follower[v];
  }
}
"""
# A package for every device (``needs_all``): each of the first listed[0] ids of a kernel's
# list and the key's (and follower's: its change since ``base`` where it is added) value
# beside it, and their count, written where the package travels from.
_GATHER = r"""
extern "C" __global__ void gather_listed(const ID* ids, long long n,
    const unsigned long long* listed, const KEY* key, const FOL* follower, const FOL* base,
    ID* out_ids, KEY* out_key, FOL* out_follower, unsigned long long* out_count) {
  if (blockIdx.x == 0 && threadIdx.x == 0) out_count[0] = listed[0];
  if ((unsigned long long)n > listed[0]) n = (long long)listed[0];
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n;
       j += (long long)gridDim.x * blockDim.x) {
    const ID v = ids[j];
    out_ids[j] = v;
    out_key[j] = key[v];
    if (follower) out_follower[j] = base ? follower[v] - base[v] : follower[v];
  }
}
"""
PACK_PARTS = 64  # the most owners a package is grouped by (a block's counts in shared memory)
MODES = {"min": 0, "max": 1, "replace": 2}  # the combiners the kernels apply (``wins``)


def keyed_columns(contract, state) -> tuple[str, str | None] | None:
    """``(key, follower)`` when the contract's communicated state (that this run holds) is one
    min, max or replace column and, for min or max, at most one column that follows it
    (``Follow``, or ``Add`` with ``follows``), all one value a vertex of a dtype the kernels
    take; else None (the general path combines it)."""
    columns = {
        name: combiner
        for name, combiner in contract.combiners.items()
        if getattr(state, name) is not None
    }
    keys = [name for name, combiner in columns.items() if combiner.name in MODES]
    followers = [name for name in columns if name not in keys]
    if len(keys) != 1 or len(followers) > 1:
        return None
    if followers and (columns[followers[0]].follows != keys[0] or not columns[keys[0]].keyed):
        return None
    if any(
        getattr(state, name).ndim != 1 or getattr(state, name).dtype.str[1:] not in C_TYPES
        for name in columns
    ):
        return None
    return keys[0], (followers[0] if followers else None)


class Keyed:
    """A keyed contract's kernels on one device, for its ``state`` and ``columns``
    (:func:`keyed_columns`) combined by ``mode`` (:data:`MODES`): ``pack``, ``list`` and
    ``apply_block``, one implementation an array library. The columns are read from ``state``
    at each call (a step may rebind a state array). ``adds``: the follower is added on a tie
    of the key (``Add(follows=...)``); its changes travel, measured from its baseline in
    ``bases`` (the enactor's, given when it makes them), which every vertex a listing touches
    takes up."""

    def __init__(self, graph, state, columns: tuple[str, str | None], mode: int, adds=False):
        self.graph, self.state, self.columns, self.mode = graph, state, columns, np.int32(mode)
        self.adds = np.int32(bool(adds))
        self.bases: dict = {}
        self.stamps = None  # an int32 per vertex, made on the first listing

    def _key_and_follower(self):
        """The key column and the follower column (None without one)."""
        key = getattr(self.state, self.columns[0])
        return key, None if self.columns[1] is None else getattr(self.state, self.columns[1])

    def _base(self):
        """The added follower's baseline (None where the follower is not added)."""
        return self.bases.get(self.columns[1]) if self.adds else None

    def _named(self, key, follower) -> dict:
        """A key's (and follower's) column by name."""
        values = {self.columns[0]: key}
        if follower is not None:
            values[self.columns[1]] = follower
        return values


@fused.register("keyed", "cupy", "step")
class KeyedKernels(Keyed):
    """The keyed kernels on one GPU: the CUDA kernels above."""

    def _columns(self):
        """The key, the follower (None without one) and their C types."""
        key, follower = self._key_and_follower()
        types = {"KEY": c_type(key), "FOL": "int" if follower is None else c_type(follower)}
        return key, follower, types

    def _combining(self, key_in, key, follower_in, follower) -> tuple:
        """What a kernel that combines arriving entries takes after where they are: the
        arriving and held key and follower (null for none), the mode, whether it adds."""
        return key_in, key, follower_in, _or_null(follower), self.mode, self.adds

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
        stay; their piece is empty); its counts by owner stay on the device (``Packed``). Its
        arrays are laid out as they travel (:func:`~bspgraph.comm.message.laid_out`)."""
        cp = self.graph.xp
        key, follower, types = self._columns()
        n = ids.shape[0]
        ids, listed = cp.ascontiguousarray(ids), _or_null(count)
        types.update(ID=c_type(ids), OWNER=c_type(owner))
        # as the package travels (ids, values, counts), then the places filled: one buffer
        out_ids, out_key, *out_follower, counts, filled = laid_out(
            cp, _columns_of(n, ids, key, follower) + [(parts, np.uint64)] * 2
        )
        counts.data.memset_async(0, 2 * counts.nbytes)  # (filled follows counts)
        stream(
            cp,
            _PACK,
            "owner_counts",
            n,
            ids,
            listed,
            owner,
            np.int32(parts),
            np.int32(skip),
            counts,
            **types,
        )
        out_follower = out_follower[0] if out_follower else None
        stream(
            cp,
            _PACK,
            "pack_by_owner",
            n,
            ids,
            listed,
            owner,
            np.int32(parts),
            np.int32(skip),
            counts,
            filled,
            key,
            _or_null(follower),
            _or_null(self._base()),
            out_ids,
            out_key,
            _or_null(out_follower),
            **types,
        )
        return Packed(out_ids, self._named(out_key, out_follower), counts)

    def gather(self, ids, count) -> Packed:
        """The package for every device of a kernel's list ``ids`` and its ``count`` (a
        device array, not read): its first ``count[0]`` ids and the columns' values (an
        added follower's changes) at them, in one group, counted, laid out as it travels."""
        cp = self.graph.xp
        key, follower, types = self._columns()
        ids = cp.ascontiguousarray(ids)
        n = ids.shape[0]
        out_ids, out_key, *out_follower, out_count = laid_out(
            cp, _columns_of(n, ids, key, follower) + [(1, np.uint64)]
        )
        out_follower = out_follower[0] if out_follower else None
        if not n:  # (no launch: the count copied apart)
            out_count.data.copy_from_device_async(count.data, out_count.nbytes)
        stream(
            cp,
            _GATHER,
            "gather_listed",
            n,
            ids,
            count,
            key,
            _or_null(follower),
            _or_null(self._base()),
            out_ids,
            out_key,
            _or_null(out_follower),
            out_count,
            ID=c_type(ids),
            **types,
        )
        return Packed(out_ids, self._named(out_key, out_follower), out_count)

    def list(self, returned, keep, updates: list, stamp: int) -> Frontier:
        """Combine ``updates`` (Updates or Pieces on this GPU, distinct ids each) into the
        columns, and list the winners and the ``returned`` ids (None: none; ids, or a list
        with its count on the device ``(ids, count)``; where ``keep``, a bool per vertex,
        unless it is None), each once (a stamp per vertex, below ``stamp``):
        the next frontier, its out-edges counted (``cost_degrees``). A Piece's start and count
        are read on the device. One host read, when the frontier's size, ids or out-edges are
        first asked for (:meth:`Frontier.listed`)."""
        graph = self.graph
        cp = graph.xp
        key, follower, types = self._columns()
        if self.stamps is None:
            self.stamps = cp.zeros(graph.num_vertices, dtype=cp.int32)
        out = cp.empty(_capacity(returned, updates), dtype=graph.indices.dtype)
        tally = cp.zeros(2, dtype=cp.uint64)
        degree = graph.cost_degrees()[0]
        pieces = []
        if returned is not None:  # ids, or a kernel's list with its count on the device
            ids, count = returned if isinstance(returned, tuple) else (returned, NULL)
            pieces.append((ids, ids.shape[0], NULL, NULL, count, 0))
        for update in updates:
            message, counts, group = _located(update)
            pieces.append(
                (
                    message.ids,
                    _held(update),
                    *self._arriving(message.values, key, follower),
                    counts,
                    group,
                )
            )
        for ids, size, key_in, follower_in, counts, group in pieces:
            stream(
                cp,
                _APPLY_BEST,
                "apply_best",
                size,
                cp.ascontiguousarray(ids, dtype=out.dtype),
                counts,
                np.int32(group),
                _or_null(keep),
                *self._combining(key_in, key, follower_in, follower),
                _or_null(self._base()),
                self.stamps,
                np.int32(stamp),
                degree,
                out,
                tally,
                ID=c_type(out),
                DEG=c_type(degree),
                **types,
            )
        return Frontier.listed(graph, out, tally)  # read when first asked for

    def apply_block(self, region: slice, dense: Slab | Bits, mark, tally=None, edges: bool = True):
        """Combine a Slab's values (or Bits': their one value at the vertices in their set)
        over the vertices ``region`` (a range) into the columns, marking in ``mark`` (a bool
        per vertex) the vertices it changed. Returns ``tally`` (a new one when None): two
        counters on the device, to which it adds how many vertices it marked that were not
        marked before, and (with ``edges``) their out-edges (``cost_degrees``). With ``mark``
        None nothing is marked or counted (and None returned)."""
        graph = self.graph
        first, stop, _ = region.indices(graph.num_vertices)
        key, follower, types = self._columns()
        key_in, follower_in = self._arriving(dense.values, key, follower)
        degree = graph.cost_degrees()[0]
        if tally is None and mark is not None:
            tally = graph.xp.zeros(2, dtype=graph.xp.uint64)
        count = max(stop - first, 0)
        if isinstance(dense, Bits):  # a thread a byte of the set
            bits = graph.xp.ascontiguousarray(dense.bits)
            name, size, lead = (
                "apply_bits",
                -(-count // 8),
                (np.int64(first), np.int64(count), bits),
            )
        else:
            name, size, lead = "apply_block", count, (np.int64(first),)
        stream(
            graph.xp,
            _APPLY_BLOCK,
            name,
            size,
            *lead,
            *self._combining(key_in, key, follower_in, follower),
            _or_null(mark),
            degree if edges and mark is not None else NULL,
            _or_null(tally),
            DEG=c_type(degree),
            **types,
        )
        return tally

    def apply_updates(self, updates: list, mark) -> None:
        """Combine ``updates`` (Updates or Pieces on this GPU, distinct ids each) into the
        columns, one kernel a piece, marking in ``mark`` (a bool per vertex) the vertices they
        changed; each entry's vertex takes the added follower's value as its baseline. Many
        arrivals: where :meth:`list` would list them. Reads nothing."""
        graph = self.graph
        key, follower, types = self._columns()
        degree = graph.cost_degrees()[0]  # (its type only: apply_one's, nothing counted)
        for update in updates:
            message, counts, group = _located(update)
            ids = graph.xp.ascontiguousarray(message.ids)
            key_in, follower_in = self._arriving(message.values, key, follower)
            stream(
                graph.xp,
                _APPLY_MARKED,
                "apply_marked",
                _held(update),
                ids,
                counts,
                np.int32(group),
                *self._combining(key_in, key, follower_in, follower),
                _or_null(self._base()),
                mark,
                ID=c_type(ids),
                DEG=c_type(degree),
                **types,
            )


@fused.register("keyed", "numpy", "step")
class NumpyKeyed(Keyed):
    """The keyed kernels in NumPy's array operations, with the CUDA kernels' semantics: what a
    kernel counts stays a 0-d array (so that the counting backend sees the reads a GPU makes:
    none in a kernel), and what it lists is compacted by that count (:func:`_compacted`).
    The enactor takes them on a NumPy backend that stands in for a GPU (``costly_supersteps``:
    ``bg.testing.host_reads``); on NumPy's virtual devices its own passes cost less."""

    @functools.cached_property
    def combiner(self):
        """The combiner of ``mode``: its arithmetic on NumPy."""
        return combiners.get(next(n for n, m in MODES.items() if m == self.mode), "keyed")

    def _combined(self, index, incoming: dict, key, follower):
        """Combine ``incoming`` (values by name) at ``index`` into the columns (the follower
        taken where the key wins, added where it ties and ``adds``); where it changed them."""
        xp = self.graph.xp
        arriving, now = incoming[self.columns[0]], _at(key, index)
        combined, won = self.combiner.apply(xp, now, arriving)
        changed = won
        if follower is not None:
            offered, held = incoming[self.columns[1]], _at(follower, index)
            taken = xp.where(won, offered, held)
            if self.adds:
                added = ~won & (arriving == now) & (offered != 0)
                taken = xp.where(added, held + offered, taken)
                changed = won | added
            follower[index] = taken
        key[index] = combined
        return changed

    def pack(self, owner, parts: int, skip: int, ids, count=None) -> Packed:
        """As :meth:`KeyedKernels.pack`: grouped by ``owner``, the entries
        of owner ``skip`` left out, the counts by owner 0-d arrays' worth on the device."""
        graph, xp = self.graph, self.graph.xp
        key, follower = self._key_and_follower()
        ids = _leading(graph, ids, count)
        groups = owner.take(graph.backend.index(ids)).astype(np.int64)
        groups = xp.where(groups == skip, parts, groups)  # the sender's own: past the last
        order = xp.argsort(groups, kind="stable")
        out = ids.take(order)
        counts = xp.bincount(groups, minlength=parts + 1)[:parts].astype(np.uint64)
        return Packed(out, self._gathered(out), counts)

    def gather(self, ids, count) -> Packed:
        """As :meth:`KeyedKernels.gather`."""
        ids = _leading(self.graph, ids, count)
        return Packed(ids, self._gathered(ids), count[:1])

    def _gathered(self, ids) -> dict:
        """The columns' values at ``ids`` (an added follower's changes), by name."""
        key, follower = self._key_and_follower()
        index = self.graph.backend.index(ids)
        base = self._base()
        if follower is not None:
            follower = follower.take(index)
            follower = follower if base is None else follower - base.take(index)
        return self._named(key.take(index), follower)

    def list(self, returned, keep, updates: list, stamp: int) -> Frontier:
        """As :meth:`KeyedKernels.list`: each piece in turn combined into the columns, its
        winners (the returned ids where ``keep``) listed unless stamped before."""
        graph, xp, backend = self.graph, self.graph.xp, self.graph.backend
        key, follower = self._key_and_follower()
        if self.stamps is None:
            self.stamps = xp.zeros(graph.num_vertices, dtype=np.int32)
        listed, base = [], self._base()
        if returned is not None:
            ids = backend.index(_leading(graph, *_listing(returned)))
            if base is not None:
                base[ids] = follower.take(ids)
            listed.append(ids if keep is None else ids.take(_compacted(backend, keep.take(ids))))
        for update in updates:
            ids, values = _entries(graph, update)
            ids = backend.index(ids)
            changed = self._combined(ids, values, key, follower)
            if base is not None:
                base[ids] = follower.take(ids)
            listed.append(ids.take(_compacted(backend, changed)))
        for k, ids in enumerate(listed):  # each vertex once: the first piece to stamp it
            ids = ids.take(_compacted(backend, self.stamps.take(ids) != stamp))
            self.stamps[ids] = stamp
            listed[k] = ids
        out = (xp.concatenate(listed) if listed else xp.zeros(0, np.intp)).astype(
            graph.indices.dtype
        )
        degree = graph.cost_degrees()[0]
        edges = backend.masked_total(degree, ids=out).astype(np.uint64)
        tally = xp.stack([xp.asarray(out.shape[0], dtype=np.uint64), edges])
        return Frontier.listed(graph, out, tally)  # read when first asked for

    def apply_updates(self, updates: list, mark) -> None:
        """As :meth:`KeyedKernels.apply_updates`: each piece in turn combined into the columns, the
        vertices it changed marked, its vertices' baselines taken."""
        graph, backend = self.graph, self.graph.backend
        key, follower = self._key_and_follower()
        base = self._base()
        for update in updates:
            ids, values = _entries(graph, update)
            ids = backend.index(ids)
            mark[ids] |= self._combined(ids, values, key, follower)
            if base is not None:
                base[ids] = follower.take(ids)

    def apply_block(self, region: slice, dense: Slab | Bits, mark, tally=None, edges: bool = True):
        """As :meth:`KeyedKernels.apply_block`, by the combiner's own arithmetic (NumPy's
        fastest: a ``minimum`` for integers, a copy for replace); Bits unfolded first."""
        graph, xp = self.graph, self.graph.xp
        first, stop, _ = region.indices(graph.num_vertices)
        key, follower = self._key_and_follower()
        if isinstance(dense, Bits):  # (a follower's value is taken only where the key's wins)
            dense = dense.slab(
                {name: 0 for name in dense.values}
                | {self.columns[0]: self.combiner.absent(key.dtype)}
            )
        wins = self._combined(slice(first, stop), dense.values, key, follower)
        if mark is None:
            return None
        new = wins & ~mark[first:stop]
        mark[first:stop] |= wins
        if tally is None:
            tally = xp.zeros(2, dtype=np.uint64)
        tally[0] += graph.backend.count(new).astype(np.uint64)
        if edges:
            degree = graph.cost_degrees()[0][first:stop]
            tally[1] += graph.backend.masked_total(degree, new).astype(np.uint64)
        return tally


def _at(array, index):
    """``array[index]``: a view for a slice, ``take`` along the first axis for ids (faster
    than indexing on NumPy)."""
    return array[index] if isinstance(index, slice) else array.take(index, axis=0)


def _listing(returned) -> tuple:
    """``(ids, count)`` of ``returned``: ids (count None) or a list with its count."""
    return returned if isinstance(returned, tuple) else (returned, None)


def _leading(graph, ids, count):
    """The first ``count[0]`` of ``ids`` (all with ``count`` None), picked as a kernel reads
    its count: on the device (:func:`_compacted`)."""
    if count is None:
        return ids
    return ids.take(_compacted(graph.backend, graph.xp.arange(ids.shape[0]) < count[0]))


def _entries(graph, message) -> tuple:
    """The ids and values of an Update, or of a Piece: the entries of its group, found from
    its package's counts on the device."""
    if not isinstance(message, Piece):
        return message.ids, message.values
    packed, xp = message.packed, graph.xp
    counts = packed.counts.astype(np.int64)
    start = counts[: message.group].sum()
    position = xp.arange(packed.ids.shape[0])
    inside = _compacted(
        graph.backend, (position >= start) & (position < start + counts[message.group])
    )
    return packed.ids.take(inside), {name: v.take(inside) for name, v in packed.values.items()}


def _compacted(backend, mask):
    """The positions of ``mask``'s True entries, as a kernel compacts them (with atomics):
    their count stays on the device, nothing is read."""
    return backend.nonzero(mask, np.intp, count=backend.count(mask))


NULL = np.uintp(0)  # a null pointer: no such array


def _located(message):
    """``(message, counts, group)``: an Update as it is (no counts: null, group 0), or a
    Piece's package with its counts on the device and its group."""
    if isinstance(message, Piece):
        return message.packed, message.packed.counts, message.group
    return message, NULL, 0


def _capacity(returned, updates: list) -> int:
    """The most vertices a listing of ``returned`` and ``updates`` holds (a Piece: its
    package's buffer)."""
    held = 0 if returned is None else _listing(returned)[0].shape[0]
    return held + sum(_held(u) for u in updates)


def _held(update) -> int:
    """An Update's length, or the most a Piece can hold (its count is on the device; its
    package's buffer: a bound from the sender's frontier is no bound where its levels ran
    ahead)."""
    return update.capacity if isinstance(update, Piece) else len(update)


def _columns_of(n: int, ids, key, follower) -> list[tuple[int, np.dtype]]:
    """The (length, dtype) of a package's ids, key and follower (where there is one): ``n``
    entries each."""
    columns = [(n, ids.dtype), (n, key.dtype)]
    return columns if follower is None else [*columns, (n, follower.dtype)]


def _or_null(array):
    return NULL if array is None else array
