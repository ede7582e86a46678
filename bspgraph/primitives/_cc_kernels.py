"""Connected components' kernels: union-find along a CSR's entries (``fr.link``) and between
the two vertices of each pair (``fr.link_pairs``, and those a min combine replaced:
``fr.link_replaced``), and pointer jumping (``fr.flatten``), registered as the "link",
"link_pairs", "link_replaced" and "flatten" steps of each backend. On NumPy, rounds that
flatten every tree and hook each root under the least root across an entry (a pair); on
CuPy, ECL-CC's lock-free hooking."""

from __future__ import annotations

import numpy as np

from ..backend import (
    BLOCK_SUM,
    COMPARE_SWAP,
    LONG_ROW,
    WARP_ROW,
    c_type,
    compile_kernel,
    fused,
    hub_pieces,
    ops,
)


@fused.register("link", "numpy", "step")
def link(backend, parent, offsets, indices, rows=None, *, symmetric=False, sample=False) -> None:
    """Union-find along a CSR's entries: afterwards, for every entry ``v`` of row ``u``
    (the rows ``rows``, vertex ids, or all), ``u`` and ``v`` have the same root in the
    forest ``parent``, given and kept with ``parent[x] <= x``, so that a root (its own
    parent) is its tree's least id; a root is joined under a smaller vertex. ``symmetric``:
    the CSR holds every entry ``u -> v`` also as ``v -> u`` (an undirected graph's lists, all
    rows), so that one of the two suffices. ``sample``: the lists are the first few entries
    of each list of a graph whose lists are long (Afforest's sampling). NumPy: rounds that
    flatten the trees and hook each root under the least root across an entry, until none is
    apart (:func:`_hook_rounds`; CuPy: :func:`link_rows`), or, every row of a forest of single
    vertices but a sample, scipy's components (:func:`_components`: on a road network or a
    mesh, paths too long for rounds; a sample's trees take a few rounds, which cost its
    entries, not the vertices: rmat18, alternating in one process, one device 12-14 ms
    against 18-25, two parts 26-28 against 31-33)."""
    if rows is None and not sample and _trees_apart(parent):  # single vertices: components
        _components(parent, offsets, indices, symmetric)
        return
    if rows is None:  # every row: its id once per entry, the entries as they are, over the
        # rows from the first to the last that holds entries (a part's own range)
        first = int(np.searchsorted(offsets, offsets[0], side="right")) - 1
        last = int(np.searchsorted(offsets, offsets[-1], side="left"))
        held = np.arange(first, max(first, last), dtype=indices.dtype)
        tails = np.repeat(held, np.diff(offsets[first : max(first, last) + 1]))
        _hook_rounds(backend, parent, tails, indices)
        return
    starts = offsets[rows]
    degrees = offsets[rows + 1] - starts
    segment, position = ops.row_entries(backend, starts, degrees, int(degrees.sum()))
    _hook_rounds(backend, parent, rows[segment], indices[position])


def _trees_apart(parent) -> bool:
    """Whether every vertex is its own root (the forest before any link)."""
    return bool((parent == np.arange(parent.shape[0], dtype=parent.dtype)).all())


def _components(parent, offsets, indices, symmetric: bool) -> None:
    """:func:`link` over every row of a forest of single vertices, in one pass of scipy's
    (weakly) connected components: each vertex's parent becomes its component's least id.
    On ``symmetric`` lists the strong components are the weak ones, and scipy finds them
    without transposing the lists first (grid1000: 24 ms against 42, the transpose 28); one
    traversal finds a connected graph's (:func:`_reaches_all`)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    n = parent.shape[0]
    ones = np.broadcast_to(1.0, indices.shape)  # a view: no E ones written (grid1000: 5 ms)
    edges = sp.csr_array((ones, indices, offsets), shape=(n, n))
    if symmetric and _reaches_all(edges, offsets):
        parent[...] = 0
        return
    connection = "strong" if symmetric else "weak"
    count, component = connected_components(edges, directed=True, connection=connection)
    if count == 1:  # a connected graph (a road network, a mesh): 0 is the least id
        parent[...] = 0
        return
    # (NumPy 2's ufunc.at: on rmat18's sample, 262K vertices, 1.1 ms with the gather; a
    # scatter in reverse order checked afterwards 1.4, np.unique's first indices 5.6)
    least = np.full(count, n, dtype=parent.dtype)
    np.minimum.at(least, component, np.arange(n, dtype=parent.dtype))
    parent[...] = least.take(component)


def _reaches_all(edges, offsets) -> bool:
    """Whether a traversal of the symmetric lists ``edges`` from vertex 0 reaches every vertex:
    a connected graph (a road network, a mesh) in one pass of scipy's breadth-first order,
    which transposes nothing (luxembourg_osm 1.8 ms, strong components 3.1; grid1000 16 ms
    against 24). Not tried where a vertex has no edge: then some vertex is apart."""
    n = offsets.shape[0] - 1
    if n == 0 or bool((offsets[1:] == offsets[:-1]).any()):
        return False
    from scipy.sparse.csgraph import breadth_first_order

    order = breadth_first_order(edges, 0, directed=True, return_predecessors=False)
    return order.shape[0] == n


@fused.register("link_pairs", "numpy", "step")
def link_pairs(backend, parent, tails, heads) -> None:
    """Union-find between ``tails[i]`` and ``heads[i]`` for every ``i``: afterwards the two
    have the same root in the forest ``parent`` (kept with ``parent[x] <= x``, as
    :func:`link`). NumPy: :func:`link`'s rounds over the pairs (CuPy: :func:`link_pairs_gpu`)."""
    _hook_rounds(backend, parent, tails, heads)


@fused.register("link_replaced", "numpy", "step")
def link_replaced(backend, parent, previous, ids=None) -> None:
    """:func:`~bspgraph.frontier.link_replaced` on NumPy: the vertices ``ids`` (or all) whose
    pointer differs from ``previous``, ``previous`` taking the new pointers there, and
    :func:`link_pairs`' rounds over the pairs (old pointer, new pointer) of those that were
    no root."""
    if ids is None:  # one streaming comparison, no gather
        moved = np.flatnonzero(previous != parent)
    else:
        moved = ids.take(np.flatnonzero(previous.take(ids) != parent.take(ids)))
    tails, heads = previous.take(moved), parent.take(moved)
    previous[moved] = heads
    split = np.flatnonzero(tails != moved)  # not a root: split off its tree
    _hook_rounds(backend, parent, tails.take(split), heads.take(split))


def _hook_rounds(backend, parent, tails, heads) -> None:
    """Rounds that flatten the trees of the pairs' ends and hook each root under the least
    root across a pair ``(tails[i], heads[i])``, until no pair's ends have different roots;
    each round keeps only the pairs still apart. Flattened: every vertex, or only the ends
    when they are fewer than half the vertices (a device's own rows, a few pairs), so that
    the rounds cost the pairs, not the vertices (the others' paths may stay long). Gathers
    are ``take`` and selections by index (NumPy's fancy and boolean indexing are 2 to 4
    times slower on arrays this size)."""
    n = parent.shape[0]
    if tails.shape[0] == 0:
        return
    ends = None
    if tails.shape[0] < n:  # else nearly every vertex is an end
        touched = np.zeros(n, dtype=bool)
        touched[tails] = True
        touched[heads] = True
        ends = np.flatnonzero(touched)
        ends = ends if 2 * ends.shape[0] < n else None
    while True:
        _flatten(parent, ends)
        roots = parent.take(tails), parent.take(heads)
        apart = np.flatnonzero(roots[0] != roots[1])
        if apart.shape[0] == 0:
            return
        tails, heads = tails.take(apart), heads.take(apart)
        roots = roots[0].take(apart), roots[1].take(apart)
        ops.scatter_min(backend, parent, np.maximum(*roots), np.minimum(*roots))


@fused.register("flatten", "numpy", "step")
def flatten(backend, parent, since, degree):
    """:func:`~bspgraph.frontier.flatten` on NumPy: :func:`_flatten` over every vertex; with
    ``since``, the bool mask of the vertices whose root differs from it (``since`` taking the
    roots) and None (no count on a device: the mask's is a host value); else None."""
    _flatten(parent)
    if since is None:
        return None
    moved = parent != since
    since[...] = parent
    return moved, None


def _flatten(parent, ids=None) -> None:
    """Point the vertices ``ids`` (or all) straight at their roots: pointer jumping, each
    jump over those still below a vertex that is no root (no root moves)."""
    up = parent if ids is None else parent.take(ids)  # each one's pointer
    while True:
        jumped = parent.take(up)  # a gather; on NumPy twice as fast as parent[up]
        moving = np.flatnonzero(jumped != up)
        if moving.shape[0] == 0:
            return
        ids = moving if ids is None else ids.take(moving)
        up = jumped.take(moving)
        parent[ids] = up


_UNION = (
    COMPARE_SWAP
    + r"""

__device__ __forceinline__ ID find(ID x, ID* parent) {  // the root, halving the path to it
  // Plain loads, not volatile ones (as ECL-CC's): another thread may hook a root or halve a
  // path meanwhile, but a pointer only ever moves to an ancestor, so a stale value read is an
  // ancestor still, and link's compare-and-swap (in L2) hooks only what is a root there,
  // reading the fresh pointer where it is not (rmat25's sampled link, H200: 2.3 -> 0.7-0.8 ms)
  ID* seen = parent;
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
"""
)

_LINK_ROWS = (
    _UNION
    + r"""

__device__ __forceinline__ void link_once(ID u, ID v, ID* parent) {  // SYMMETRIC: v -> u too
  if (!SYMMETRIC || v < u) link(u, v, parent);
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
        link_once(row, indices[e], parent);
    }
    if (end - start < WARP_ROW)
      for (OFF e = start; e < end; ++e) link_once(u, indices[e], parent);
  }
}
"""
)


@fused.register("link", "cupy", "step")
def link_rows(backend, parent, offsets, indices, rows=None, *, symmetric=False, sample=False):
    """:func:`link` on CuPy: every row (hubs past LONG_ROW in pieces, a warp each), or the
    rows ``rows`` whole; on ``symmetric`` lists only the entries ``u -> v`` with ``v < u``
    (ECL-CC's: the other half are the same edges). A ``sample`` is linked as any lists
    (lock-free: no rounds to count)."""
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
        source = f"#define ROWS {per_warp}\n#define WARP_ROW {WARP_ROW}\n"
        source += f"#define SYMMETRIC {int(symmetric)}\n" + _LINK_ROWS
        kernel = compile_kernel(cupy, source, "link_rows", OFF=c_type(starts), ID=c_type(indices))
        blocks = min(-(-count // (8 * per_warp)), 1 << 16)  # 8 warps a block
        kernel(
            (blocks,),
            (256,),
            (
                starts,
                ends,
                np.uintp(0) if ids is None else ids,
                indices,
                np.int64(count),
                np.int64(longest),
                parent,
            ),
        )


_LINK_PAIRS = (
    _UNION
    + r"""

extern "C" __global__ void link_pairs(const ID* tails, const ID* heads, long long count,
    ID* parent) {  // a thread a pair, grid-stride
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x)
    link(tails[i], heads[i], parent);
}
"""
)


@fused.register("link_pairs", "cupy", "step")
def link_pairs_gpu(backend, parent, tails, heads) -> None:
    """:func:`link_pairs` on CuPy: :func:`link_rows`'s lock-free hooking, a thread a pair."""
    count = int(tails.shape[0])
    if count == 0:
        return
    kernel = compile_kernel(backend.xp, _LINK_PAIRS, "link_pairs", ID=c_type(parent))
    blocks = min(-(-count // 256), 1 << 16)
    kernel((blocks,), (256,), (tails, heads, np.int64(count), parent))


_LINK_REPLACED = (
    _UNION
    + r"""

__device__ __forceinline__ long long vertex_of(const IDX* ids, long long i) {
  return ids ? (long long)ids[i] : i;
}

extern "C" __global__ void take_replaced(const IDX* ids, long long count, const ID* parent,
    ID* previous, ID* tails) {  // a thread an entry: the old pointer where it was no root's
  // and the combine replaced it (else the vertex itself: no pair), previous taking the new
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    const long long v = vertex_of(ids, i);
    const ID old = previous[v], now = parent[v];
    tails[i] = old != now && old != (ID)v ? old : (ID)v;
    if (old != now) previous[v] = now;
  }
}

extern "C" __global__ void link_replaced(const IDX* ids, long long count, const ID* tails,
    const ID* previous, ID* parent) {  // the pairs: after every entry was read above, so that
  // no hook or halved path of this pass is mistaken for a pointer the combine replaced
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    const long long v = vertex_of(ids, i);
    if (tails[i] != (ID)v) link(tails[i], previous[v], parent);
  }
}
"""
)


@fused.register("link_replaced", "cupy", "step")
def link_replaced_gpu(backend, parent, previous, ids=None) -> None:
    """:func:`~bspgraph.frontier.link_replaced` on CuPy: a pass over the vertices ``ids`` (or
    all) that takes each replaced pointer's old value, ``previous`` taking the new one, then
    :func:`link_pairs_gpu`'s hooking of those pairs in a second pass (no compaction, no host
    read: rmat25, two parts of one H200, 0.7 ms a call as a comparison, a count and gathers)."""
    cupy = backend.xp
    count = int(parent.shape[0] if ids is None else ids.shape[0])
    if count == 0:
        return
    tails = cupy.empty(count, dtype=parent.dtype)
    types = {"ID": c_type(parent), "IDX": "long long" if ids is None else c_type(ids)}
    blocks = (min(-(-count // 256), 1 << 16),)
    null = np.uintp(0) if ids is None else ids
    take = compile_kernel(cupy, _LINK_REPLACED, "take_replaced", **types)
    take(blocks, (256,), (null, np.int64(count), parent, previous, tails))
    link = compile_kernel(cupy, _LINK_REPLACED, "link_replaced", **types)
    link(blocks, (256,), (null, np.int64(count), tails, previous, parent))


_FLATTEN = (
    BLOCK_SUM
    + r"""
extern "C" __global__ void flatten(ID* parent, long long count, ID* since, bool* moved,
    const DEG* degree, unsigned long long* tally) {  // a thread a vertex
  // Each vertex climbs to its root, halving the path on its way; every write is an atomicMin
  // of an ancestor, so that a slower thread's halving never raises what a vertex holds: the
  // root a vertex's own thread writes last is the least of its ancestors, and stays. A vertex
  // that points at a root already writes nothing (an atomic there would change nothing: on a
  // forest of stars, an atomic a vertex cost 400 us of 2^25 vertices on an H200). With
  // `since`: whether that root differs from since[v] (then since[v] takes it), counted with
  // the out-edges of those that moved. Plain loads, not volatile ones: no root changes during
  // the pass and a pointer only ever moves to an ancestor, so a stale value read is still an
  // ancestor and the climb still ends at the root (2^25 vertices, H200: stars 373 -> 229 us,
  // chains 856 -> 337 us).
  const ID* seen = parent;
  unsigned long long marked = 0, edges = 0;
  for (long long v = blockIdx.x * (long long)blockDim.x + threadIdx.x; v < count;
       v += (long long)gridDim.x * blockDim.x) {
    const ID up = seen[v];
    ID previous = (ID)v, current = up, next;
    if (current != previous) {  // not a root
      while (current > (next = seen[current])) {
        atomicMin(parent + previous, next);
        previous = current;
        current = next;
      }
      if (current != up) atomicMin(parent + v, current);
    }
    if (since) {
      const bool differs = since[v] != current;
      moved[v] = differs;
      if (differs) {
        since[v] = current;
        marked += 1;
        edges += (unsigned long long)degree[v];
      }
    }
  }
  if (!since) return;
  marked = block_sum(marked);  // one atomic a block: a warp's each would queue on one address
  edges = block_sum(edges);
  if (threadIdx.x == 0 && marked) {
    atomicAdd(&tally[0], marked);
    atomicAdd(&tally[1], edges);
  }
}
"""
)


@fused.register("flatten", "cupy", "step")
def flatten_gpu(backend, parent, since, degree):
    """:func:`~bspgraph.frontier.flatten` on CuPy: each vertex climbs to its root, halving the
    path by atomic minima, in one grid-stride pass (no host read). With ``since``: the bool
    mask of the vertices whose root differs from it, and two counters on the device (how many,
    their out-edges by ``degree``), ``since`` taking the roots; else None."""
    cupy = backend.xp
    count = int(parent.shape[0])
    moved = tally = None
    if since is not None:
        moved = cupy.empty(count, dtype=bool)
        tally = cupy.zeros(2, dtype=cupy.uint64)
    if count:  # a thread a vertex (their climbs wait on memory: as many warps as may run)
        kernel = compile_kernel(cupy, _FLATTEN, "flatten", ID=c_type(parent), DEG=c_type(degree))
        null = np.uintp(0)
        kernel(
            (min(-(-count // 256), 1 << 16),),
            (256,),
            (
                parent,
                np.int64(count),
                null if since is None else since,
                null if moved is None else moved,
                degree,
                null if tally is None else tally,
            ),
        )
    return None if since is None else (moved, tally)
