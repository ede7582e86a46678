"""The GPU's next frontier of a keyed contract in one kernel a piece and one host read.

A contract whose communicated state is one min or max column (BFS depth, SSSP distance, CC
labels), with at most one ``Follow`` column (BFS parents), is combined and listed here: each
Update's entries are combined into the key (the winner's follower taken along) and the winners
listed, the returned vertices listed (those this device owns, unless ``needs_all``), each vertex
once a superstep, with the out-edges of the list counted on the way. It replaces a V-long mask,
its count and compaction, and about fifteen of CuPy's index operations per device and superstep.
"""

from __future__ import annotations

import numpy as np

from ..backend import fused
from ..backend.cuda import C_TYPES, STREAM_BLOCKS, c_type, compile_kernel
from ..frontier import Frontier

# Entry j of a piece: an Update's (``key_in``: its value combined into key[v], the follower's
# value taken where it wins; listed where it won) or a returned vertex (``key_in`` null: listed
# where keep[v], or always without ``keep``). A vertex is listed by the entry that first
# stamps it this superstep (stamps[v] = stamp); a warp's listed vertices take their places with
# one atomic. The ids of one piece are distinct, so no two threads combine into one vertex.
_APPLY_BEST = r"""
extern "C" __global__ void apply_best(const ID* ids, long long n, const bool* keep,
    const KEY* key_in, KEY* key, const FOL* follower_in, FOL* follower, int smaller_wins,
    int* stamps, int stamp, const DEG* degree, ID* out, unsigned long long* tally) {
  unsigned long long edges = 0;
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n;
       j += (long long)gridDim.x * blockDim.x) {
    const ID v = ids[j];
    bool listed;
    if (key_in) {
      const KEY x = key_in[j], now = key[v];
      listed = smaller_wins ? x < now : x > now;
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


def listable(contract, state) -> tuple[str, str | None] | None:
    """``(key, follower)`` when the contract's communicated state (that this run holds) is
    one min or max column and at most one Follow column of it, all one value a vertex of a
    dtype the kernel takes; else None (the general path combines it)."""
    columns = {name: combiner for name, combiner in contract.combiners.items()
               if getattr(state, name) is not None}  # fmt: skip
    keys = [name for name, combiner in columns.items() if combiner.keyed]
    if len(keys) != 1:
        return None
    followers = [name for name in columns if name not in keys]
    if len(followers) > 1 or any(columns[f].name != "follow" for f in followers):
        return None
    if any(getattr(state, name).ndim != 1 or getattr(state, name).dtype.str[1:] not in C_TYPES
           for name in columns):  # fmt: skip
        return None
    return keys[0], (followers[0] if followers else None)


@fused.register("apply_best", "cupy", "step")
def apply_best(graph, state, columns, combiner, stamps, returned, keep, updates, stamp):
    """Combine ``updates`` (Updates on this GPU, distinct ids each) into the ``columns``
    (key, follower or None) of ``state`` by the keyed ``combiner``, and list the winners and
    the ``returned`` ids (None: none; where ``keep``, a bool per vertex, unless it is None),
    each once (``stamps``: an int32 per vertex, below ``stamp``): the next frontier, its
    out-edges counted (``cost_degrees``). One host read."""
    cp = graph.xp
    key_name, follower_name = columns
    key = getattr(state, key_name)
    follower = None if follower_name is None else getattr(state, follower_name)
    capacity = (0 if returned is None else returned.shape[0]) + sum(len(u) for u in updates)
    out = cp.empty(capacity, dtype=graph.indices.dtype)
    tally = cp.zeros(2, dtype=cp.uint64)
    degree = graph.cost_degrees()[0]
    kernel = compile_kernel(cp, _APPLY_BEST, "apply_best", ID=c_type(out), KEY=c_type(key),
                            FOL="int" if follower is None else c_type(follower),
                            DEG=c_type(degree))  # fmt: skip
    null = np.uintp(0)
    smaller = np.int32(combiner.name == "min")
    pieces = [] if returned is None else [(returned, null, null)]
    for update in updates:
        values = update.values
        pieces.append((update.ids, cp.ascontiguousarray(values[key_name], dtype=key.dtype),
                       null if follower is None else
                       cp.ascontiguousarray(values[follower_name], dtype=follower.dtype)))  # fmt: skip
    for ids, key_in, follower_in in pieces:
        n = ids.shape[0]
        if not n:
            continue
        ids = cp.ascontiguousarray(ids, dtype=out.dtype)
        blocks = min((n + 255) // 256, STREAM_BLOCKS)
        kernel((blocks,), (256,), (ids, np.int64(n), null if keep is None else keep, key_in,
                                   key, follower_in, null if follower is None else follower,
                                   smaller, stamps, np.int32(stamp), degree, out, tally))  # fmt: skip
    count, edges = (int(x) for x in tally.get())
    return Frontier.from_ids(graph, out[:count], out_edges=edges)
