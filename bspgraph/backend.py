"""NumPy or CuPy behind one small interface: the only module that imports cupy."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from .exceptions import DeviceError

NAMES = ("numpy", "cupy")
ENV_VAR = "BSPGRAPH_BACKEND"
ACCELERATE = os.environ.get("BSPGRAPH_NUMBA", "1") != "0"  # numba kernels where they win (NumPy)
_WHILE_ALIVE: dict = {}  # (id(source), what) -> (weak reference to source, what was computed)


def _while_alive(source, what: tuple, compute):
    """``compute()``, cached under ``what`` while the array ``source`` lives (arrays it was
    computed from, such as a CSR's, are never written in place)."""
    key = (id(source), *what)
    cached = _WHILE_ALIVE.get(key)
    if cached is not None and cached[0]() is source:
        return cached[1]
    value = compute()
    _WHILE_ALIVE[key] = (
        weakref.ref(source, lambda _r, key=key: _WHILE_ALIVE.pop(key, None)),
        value,
    )
    return value


GATHER_CHUNK = 1 << 22  # entries gathered at once by gather_reduce on NumPy
PINNED_BYTES = 1 << 20  # device arrays this large come to the host through pinned memory


@dataclass(frozen=True)
class Backend:
    """An array library and a device: ``xp`` is ``numpy`` or ``cupy``; ``device`` a GPU id or None."""

    name: str
    xp: Any
    device: int | None = None

    @property
    def is_gpu(self) -> bool:
        return self.name == "cupy"

    def __repr__(self) -> str:
        return f"Backend({self.name!r}, device={self.device})"

    def activate(self):
        """A context in which new arrays and kernels go to this backend's device."""
        if self.is_gpu:
            return self.xp.cuda.Device(self.device or 0)
        return contextlib.nullcontext()

    def asarray(self, array, dtype=None):
        """Move ``array`` to this backend's device (a no-op when it is already there)."""
        if self.is_gpu:
            device = self.device or 0
            with self.xp.cuda.Device(device):
                if isinstance(array, self.xp.ndarray) and array.device.id != device:
                    # A peer copy, ordered on neither device's stream: wait for the source before
                    # it and for the copy after it, since any device may read the result next.
                    array.device.synchronize()
                    moved = self.xp.array(array, dtype=dtype, copy=True)
                    self.xp.cuda.Device(device).synchronize()
                    return moved
                return self.xp.asarray(array, dtype=dtype)
        return np.asarray(to_host(array), dtype=dtype)

    def scatter_min(self, target, index, values) -> None:
        """``target[index] = min(target[index], values)``, correct for repeated indices."""
        if self.is_gpu:
            _scatter(self.xp.minimum, "scatter_min", target, index, values)
        else:
            np.minimum.at(target, index, values)

    def scatter_max(self, target, index, values) -> None:
        """``target[index] = max(target[index], values)``, correct for repeated indices."""
        if self.is_gpu:
            _scatter(self.xp.maximum, "scatter_max", target, index, values)
        else:
            np.maximum.at(target, index, values)

    def scatter_add(self, target, index, values) -> None:
        """``target[index] += values``, correct for repeated indices."""
        if self.is_gpu:
            _scatter(self.xp.add, "scatter_add", target, index, values)
        elif target.dtype.kind == "f" and len(index) > 64:
            values = np.broadcast_to(values, np.shape(index))
            target += np.bincount(index, weights=values, minlength=len(target))[: len(target)]
        else:
            np.add.at(target, index, values)

    def spmv(self, offsets, indices, weights, x, num_rows: int, rows=None):
        """``y[i] = sum of weights[e] * x[indices[e]]`` over row ``i``'s entries ``e`` of a CSR
        matrix, in ``x``'s dtype; ``weights`` None means ones. With ``rows`` (ids), over those
        rows only: ``y[k]`` for row ``rows[k]``. scipy.sparse on NumPy; on CuPy a warp per 32
        rows (no atomics, a fixed order: the same sums every run), read in place."""
        if self.is_gpu:
            return _row_reduce(self.xp, "sum", offsets, indices, weights, x, num_rows, rows)
        if rows is not None:
            offsets, indices, weights = self.csr_rows(offsets, indices, weights, rows, len(x))
            num_rows = int(rows.shape[0])
        import scipy.sparse as sparse

        data = self.edge_values(indices, weights, x.dtype)
        return sparse.csr_matrix((data, indices, offsets), shape=(num_rows, int(x.shape[0]))) @ x

    def spmv_transposed(self, offsets, indices, data, x, num_columns: int):
        """``y[j] = sum of data[e] * x[i]`` over the entries ``e = (i, j)`` of a CSR matrix with
        ``x.shape[0]`` rows: the product with its transpose, a push from the rows."""
        shape = (int(x.shape[0]), num_columns)
        if self.is_gpu:
            import cupyx.scipy.sparse as sparse
        else:
            import scipy.sparse as sparse
        return sparse.csr_matrix((data, indices, offsets), shape=shape).T @ x

    def csr_rows(self, offsets, indices, weights, rows, num_columns: int):
        """``(offsets, indices, weights)`` of the CSR made of ``rows`` (ids) of a CSR matrix with
        ``weights`` per entry (or None) and ``num_columns`` columns. NumPy copies them with
        scipy.sparse's row indexing, a C loop; CuPy gathers them edge-parallel."""
        xp = self.xp
        if not self.is_gpu:
            import scipy.sparse as sparse

            data = self.edge_values(indices, None, bool) if weights is None else weights
            shape = (int(offsets.shape[0]) - 1, num_columns)
            part = sparse.csr_matrix((data, indices, offsets), shape=shape)[rows]
            return part.indptr, part.indices, None if weights is None else part.data
        starts = offsets[rows]
        degrees = offsets[rows + 1] - starts
        total = int(degrees.sum()) if rows.shape[0] else 0
        _, position = self.row_entries(starts, degrees, total)
        sub = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(degrees, dtype=np.int64)])
        picked = None if weights is None else weights[position]
        return sub.astype(offsets.dtype), indices[position], picked  # cuSPARSE: int32

    def gather_reduce(self, values, offsets, indices, reduce: str, weights=None, rows=None):
        """``out[i] = reduce(values[indices[offsets[i]:offsets[i + 1]]])`` (a CSR matrix's rows)
        with ``reduce`` "min" or "sum"; with ``weights`` (one per entry), the min of
        ``values + weights`` (min-plus) or the sum of ``values * weights`` (plus-times). The
        identity (the dtype's largest value, or 0) for an empty row. With ``rows`` (ids), over
        those rows only (``out[k]`` for row ``rows[k]``). NumPy gathers and ``reduceat``s a
        few million entries at a time (temporaries that stay in cache, no page faults); CuPy
        reduces 32 rows a warp, long rows in pieces (as :meth:`spmv`)."""
        if reduce not in ("min", "sum"):
            raise ValueError(f"gather_reduce(reduce={reduce!r}): expected 'min' or 'sum'")
        if self.is_gpu and values.dtype.str[1:] in _SHUFFLED:
            return _row_reduce(self.xp, reduce, offsets, indices, weights, values,
                               int(offsets.shape[0]) - 1, rows)  # fmt: skip
        if rows is not None:
            offsets, indices, weights = self.csr_rows(offsets, indices, weights, rows,
                                                      int(values.shape[0]))  # fmt: skip
        xp, count = self.xp, int(offsets.shape[0]) - 1
        out = xp.full(count, _identity(reduce, values.dtype), dtype=values.dtype)
        total = int(indices.shape[0])
        if total == 0:
            return out
        ufunc = np.minimum if reduce == "min" else np.add
        weigh = np.add if reduce == "min" else np.multiply
        if self.is_gpu:  # bool: no warp shuffle; a scatter by row
            segment = self.segment_index(xp.diff(offsets), total)
            terms = values[indices] if weights is None else weigh(values[indices], weights)
            (self.scatter_min if reduce == "min" else self.scatter_add)(out, segment, terms)
            return out
        rows = np.flatnonzero(np.diff(offsets))
        starts = offsets[rows]
        cuts = np.searchsorted(starts, np.arange(0, total, GATHER_CHUNK), side="left")
        for lo, hi in zip(cuts.tolist(), [*cuts[1:].tolist(), rows.shape[0]]):
            if hi > lo:
                first, last = int(starts[lo]), int(offsets[rows[hi - 1] + 1])
                gathered = np.take(values, indices[first:last])
                if weights is not None:
                    gathered = weigh(gathered, weights[first:last], dtype=values.dtype)
                out[rows[lo:hi]] = ufunc.reduceat(gathered, starts[lo:hi] - first)
        return out

    # CuPy's own element-wise kernels (a thread an element, 128 a block) handle about 200 G
    # elements/s on an H200: near the bandwidth for float64 arithmetic over two or three arrays
    # (3-4 TB/s), but a 16.7M-entry int32 fill moves 0.8 TB/s (82 us) where a grid-stride loop
    # moves 3.4 (20 us). full, greater and nonzero take the second on the GPU: O(V) passes over
    # one narrow array.
    def full(self, size: int, value, dtype):
        """A new array of ``size`` copies of ``value``, as ``dtype`` (``numpy.full``)."""
        if self.is_gpu and np.dtype(dtype).str[1:] in _STREAMED:
            out = self.xp.empty(size, dtype=dtype)
            _stream(self.xp, _FILL, "fill", size, out, out.dtype.type(value), T=_c(out))
            return out
        return self.xp.full(size, value, dtype=dtype)

    def greater(self, values, threshold):
        """The bool mask ``values > threshold`` (a scalar)."""
        if self.is_gpu and values.dtype.str[1:] in _STREAMED:
            out = self.xp.empty(values.shape[0], dtype=bool)
            values = self.xp.ascontiguousarray(values)
            _stream(self.xp, _GREATER, "greater", values.shape[0], values,
                    values.dtype.type(threshold), out, T=_c(values))  # fmt: skip
            return out
        return values > threshold

    def nonzero(self, mask, dtype, count: int | None = None):
        """The positions of the True entries of the bool ``mask``, ascending, as ``dtype``
        (``numpy.flatnonzero``). ``count``, their number when the caller knows it, spares the
        GPU a host read; it must be exact."""
        if self.is_gpu:
            mask = self.xp.ascontiguousarray(mask, dtype=bool)
            return _nonzero(self.xp, mask, np.dtype(dtype), count)
        return np.flatnonzero(mask).astype(dtype, copy=False)

    def mask_of(self, ids, size: int):
        """A bool array of ``size`` entries, True at the integer ``ids`` (a frontier's dense
        form; CuPy: a memset and one pass over ``ids``, without CuPy's indexing machinery)."""
        mask = self.xp.zeros(size, dtype=bool)
        if self.is_gpu and ids.dtype.str[1:] in ("i4", "i8"):
            ids = self.xp.ascontiguousarray(ids)
            _stream(self.xp, _MARK, "mark", ids.shape[0], ids, mask, ID=_c(ids))
        else:
            mask[ids] = True
        return mask

    def masked_sum(self, values, mask) -> int:
        """``int(values[mask].sum())`` for a bool ``mask``; NumPy takes a dot product instead of
        compacting (several times faster on a random mask of a million vertices); CuPy sums in
        int64. On NumPy integer ``values`` must not overflow their dtype (degrees sum to E)."""
        if self.is_gpu:  # one fused pass (no temporary, no compaction), one host read
            return _masked_sum(self.xp, values, mask=mask)
        return int(np.dot(mask, values))

    def sum_at(self, values, ids) -> int:
        """``int(values[ids].sum())`` for integer ``values`` (CuPy: one pass, one host read)."""
        if self.is_gpu:
            return _masked_sum(self.xp, values, ids=ids)
        return int(values[ids].sum(dtype=np.int64))

    def sum_below(self, values, keys, bound) -> int:
        """``int(values[keys < bound].sum())`` for integer ``values``: the out-degrees of the
        vertices a traversal reached (``keys`` their depth or distance, ``bound`` its unset
        sentinel), without a mask array (CuPy: one pass, one host read)."""
        if self.is_gpu:
            return _masked_sum(self.xp, values, keys=keys, bound=bound)
        return int(np.dot(keys < bound, values))

    def replace(self, values, old, new) -> None:
        """``values[values == old] = new``, in place (CuPy: one pass, no mask, no host read)."""
        if self.is_gpu and values.dtype.str[1:] in _STREAMED and values.flags.c_contiguous:
            kind = values.dtype.type
            _stream(self.xp, _REPLACE, "replace", values.size, values, kind(old), kind(new),
                    T=_c(values))  # fmt: skip
        else:
            values[values == old] = new

    def edge_values(self, indices, weights, dtype):
        """The data of a sparse product over a CSR with ``indices``: ``weights`` as ``dtype``, or
        ones when ``weights`` is None. On NumPy a converted or filled array is cached (read-only)
        while its source array lives, so a product per superstep does not redo O(E) work."""
        if weights is not None and weights.dtype == np.dtype(dtype):
            return weights
        source = indices if weights is None else weights
        if self.is_gpu:
            return (
                self.xp.ones(indices.shape[0], dtype) if weights is None else weights.astype(dtype)
            )

        def filled():
            values = np.ones(indices.shape[0], dtype) if weights is None else weights.astype(dtype)
            values.flags.writeable = False
            return values

        return _while_alive(source, ("edge values", weights is None, np.dtype(dtype).str), filled)

    def link(self, parent, offsets, indices, rows=None) -> None:
        """Union-find along a CSR's entries: afterwards, for every entry ``v`` of row ``u``
        (the rows ``rows``, vertex ids, or all), ``u`` and ``v`` have the same root in the
        forest ``parent``, given and kept with ``parent[x] <= x``, so that a root (its own
        parent) is its tree's least id; a root is joined under a smaller vertex. CuPy:
        ECL-CC's lock-free hooking (a compare-and-swap of a root; finds halve the paths they
        climb), 32 rows a warp, hubs in pieces (as :meth:`spmv`); NumPy: rounds that flatten
        every tree and hook each root under the least root across an entry, until none is
        apart."""
        if self.is_gpu:
            return _link_rows(self.xp, parent, offsets, indices, rows)
        rows = np.arange(offsets.shape[0] - 1, dtype=indices.dtype) if rows is None else rows
        starts = offsets[rows]
        degrees = offsets[rows + 1] - starts
        segment, position = self.row_entries(starts, degrees, int(degrees.sum()))
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
            self.scatter_min(parent, np.maximum(*ends)[apart], np.minimum(*ends)[apart])

    def segment_index(self, counts, total: int):
        """For each of ``total = sum(counts)`` slots, the index of the segment it falls in.

        The load balancer's search: NumPy repeats, CuPy binary-searches the inclusive scan, so
        every slot costs the same however skewed ``counts`` is.
        """
        if self.is_gpu:
            return _segment_index_kernel(self.xp, self.xp.cumsum(counts, dtype=np.int64), total)
        return np.repeat(np.arange(len(counts)), counts)

    def row_entries(self, starts, degrees, total: int):
        """For the ``total = sum(degrees)`` entries of the rows that start at ``starts`` with
        ``degrees`` entries each: the index (into ``starts``) of each entry's row, and the
        entry's position (int64). The load balancer's expansion, as :meth:`segment_index`."""
        segment = self.segment_index(degrees, total)
        first = self.xp.cumsum(degrees) - degrees
        position = (
            self.xp.arange(total, dtype=np.int64) + (starts.astype(np.int64) - first)[segment]
        )
        return segment, position

    def accelerated(self, name: str):
        """The optional numba kernel ``name`` of :mod:`bspgraph._numba`, on NumPy when numba is
        installed and ``ACCELERATE`` is on ($BSPGRAPH_NUMBA != "0"); else None, and the caller
        keeps its NumPy path."""
        if self.is_gpu or not ACCELERATE:
            return None
        kernels = _numba_kernels()
        return None if kernels is None else getattr(kernels, name)

    def close_wedges(self, offsets, heads, ids):
        """Triangle tally per vertex (int64): for each ``u`` of ``ids`` and each wedge
        ``u -> v -> w`` of the oriented CSR ``(offsets, heads)`` closed by ``u -> w``, one to
        each of ``u, v, w``. The rows of ``heads`` are sorted. CuPy: a thread per edge
        ``u -> v`` intersects the two out-lists (each entry of the shorter binary-searched in the
        longer). NumPy: the numba kernel, else blocks of rows whose out-neighbours are marked in
        a bitmap, one read per wedge; None when those blocks would hold too few wedges to cover
        their cost (the caller has its own path)."""
        n = int(offsets.shape[0]) - 1
        if self.is_gpu:
            return _intersect_lists(self, offsets, heads, ids, n)
        kernel = self.accelerated("close_wedges")
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

    def synchronize(self) -> None:
        """Wait for queued device work (a no-op on NumPy)."""
        if self.is_gpu:
            self.xp.cuda.Device(self.device or 0).synchronize()

    def free_bytes(self) -> int | None:
        """Free device memory in bytes, or None on the CPU."""
        if not self.is_gpu:
            return None
        with self.xp.cuda.Device(self.device or 0):
            free, _total = self.xp.cuda.runtime.memGetInfo()
        return int(free)


WEDGE_ROWS = 64  # close_wedges on NumPy: rows per block ...
WEDGE_BITMAP = 1 << 24  # ... and at most this many bitmap bytes
WEDGE_CREDITS = 1 << 24  # triangle corners buffered before they are counted
WEDGE_MIN_BLOCK = 1 << 14  # ... and the fewest wedges a block must hold on average


def row_positions(starts, degrees):
    """The CSR positions ``starts[i] .. starts[i] + degrees[i] - 1`` of rows, concatenated."""
    scan = np.cumsum(degrees)
    total = int(scan[-1]) if scan.size else 0
    return np.repeat(starts - (scan - degrees), degrees) + np.arange(total)


@functools.cache
def _numba_kernels():
    try:
        from . import _numba
    except ImportError:
        return None
    return _numba


def to_host(array) -> np.ndarray:
    """A NumPy array with the values of ``array`` (NumPy, CuPy or a sequence); a large CuPy
    array comes back through page-locked memory from CuPy's pinned pool (a faster copy)."""
    if hasattr(array, "__cuda_array_interface__") and hasattr(array, "get"):
        if array.nbytes < PINNED_BYTES or not array.flags.c_contiguous:
            return array.get()
        import cupyx  # a large result: through page-locked memory (CuPy's pool reuses it)

        return array.get(out=cupyx.empty_pinned(array.shape, array.dtype))
    return np.asarray(array)


def backend_of(array) -> Backend:
    """The backend holding ``array``: CuPy (on its device) or NumPy. Never imports CuPy to ask."""
    if hasattr(array, "__cuda_array_interface__") and hasattr(array, "device"):
        return get_backend("cupy", array.device.id)
    return get_backend("numpy")


def gpu_count() -> int:
    """Number of usable CUDA devices (0 when CuPy is missing or finds none)."""
    cupy = _import_cupy(required=False)
    if cupy is None:
        return 0
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no driver, no device: CuPy raises its own runtime errors
        return 0


def get_backend(name: str | Backend | None = None, device: int | None = None) -> Backend:
    """The backend called ``name`` ("numpy", "cupy"), or $BSPGRAPH_BACKEND, or CuPy when a GPU is usable.

    Raises
    ------
    DeviceError
        ``name`` is not a known backend, or CuPy was asked for and no GPU is usable.
    ImportError
        CuPy was asked for and is not installed (the message gives the pip command).
    """
    if isinstance(name, Backend):
        return name
    name = name or os.environ.get(ENV_VAR) or None
    if name is None:
        name = "cupy" if gpu_count() > 0 else "numpy"
    if name not in NAMES:
        raise DeviceError(
            f"unknown backend {name!r}; expected one of {', '.join(map(repr, NAMES))}"
        )
    if name == "numpy":
        return Backend("numpy", np, None)
    cupy = _import_cupy(required=True)
    count = gpu_count()
    device = 0 if device is None else int(device)
    if not 0 <= device < count:
        raise DeviceError(f"backend 'cupy': GPU {device} asked for, {count} usable")
    return Backend("cupy", cupy, device)


@functools.cache
def _import_cupy(required: bool):
    try:
        import cupy
    except ImportError as error:
        if required:
            raise ImportError(
                "backend 'cupy' needs CuPy: pip install 'bspgraph[gpu]' (CUDA 13) "
                "or 'bspgraph[gpu-cuda12]' (CUDA 12)"
            ) from error
        return None
    return cupy


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


def _segment_index_kernel(cupy, scan, total: int):
    out = cupy.empty(total, dtype=np.int64)
    if total:
        kernel = compile_kernel(cupy, _SEGMENT_INDEX, "segment_index")
        blocks = min((total + 2047) // 2048, 65536)
        kernel((blocks,), (256,), (scan, np.int64(scan.size), np.int64(total), out))
    return out


C_TYPES = {"i4": "int", "i8": "long long", "f4": "float", "f8": "double", "b1": "bool"}
_SHUFFLED = ("i4", "i8", "f4", "f8")  # the value types a warp shuffle moves
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


def _row_reduce(cupy, reduce: str, offsets, indices, weights, values, rows: int, ids=None):
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
        starts, ends, hubs = offsets[:-1], offsets[1:], _hub_pieces(cupy, offsets)
    else:
        starts, ends = offsets[ids], offsets[ids + 1]
        hubs = _pieces(cupy, starts, ends)
    _reduce_ranges(cupy, reduce, starts, ends, indices, weights, values, out, 32)
    if hubs is not None:
        rows_of_hubs, first, pieces, starts, ends, _ = hubs
        partial = cupy.empty(starts.size, dtype=dtype)
        _reduce_ranges(cupy, reduce, starts, ends, indices, weights, values, partial, 1)
        out[rows_of_hubs] = _row_reduce(cupy, reduce, first, pieces, None, partial, first.size - 1)
    return out


def _hub_pieces(cupy, offsets):
    """:func:`_pieces` of every row of a CSR with ``offsets``, cached while ``offsets`` lives:
    a product per superstep does not search the rows again."""
    return _while_alive(offsets, ("hub pieces",), lambda: _pieces(cupy, offsets[:-1], offsets[1:]))


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


def _identity(reduce: str, dtype: np.dtype):
    """What a ``reduce`` ("sum" or "min") of no entries gives: 0, or the dtype's largest value."""
    if reduce == "sum":
        return 0
    return np.inf if dtype.kind == "f" else (True if dtype.kind == "b" else np.iinfo(dtype).max)


def _reduce_ranges(cupy, reduce, starts, ends, indices, weights, values, out, per_warp) -> None:
    """The row_reduce kernel over the entry ranges ``[starts[r], ends[r])`` of at most
    LONG_ROW entries (longer ones are skipped), ``per_warp`` (1 to 32) ranges a warp."""
    dtype, rows = values.dtype, int(out.shape[0])
    source = f"#define ROWS {per_warp}\n#define WARP_ROW {WARP_ROW}\n" + _SEMIRING[reduce]
    weight = np.dtype(np.float32) if weights is None else weights.dtype
    kernel = compile_kernel(cupy, source + _ROW_REDUCE, "row_reduce", OFF=_c(starts), ID=_c(indices),
                       VAL=_c(values), WEIGHT=C_TYPES[weight.str[1:]])  # fmt: skip
    blocks = min(-(-rows // (8 * per_warp)), 1 << 16)  # 8 warps a block
    null = np.uintp(0) if weights is None else weights
    kernel((blocks,), (256,), (starts, ends, indices, null, values, np.int64(rows),
                               np.int64(LONG_ROW), dtype.type(_identity(reduce, dtype)), out))  # fmt: skip


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


def _link_rows(cupy, parent, offsets, indices, rows) -> None:
    """Backend.link on CuPy: every row (hubs past LONG_ROW in pieces, a warp each), or the
    rows ``rows`` whole."""
    if rows is None:
        ranges = [(offsets[:-1], offsets[1:], None, LONG_ROW, 32)]
        hubs = _hub_pieces(cupy, offsets)
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
        kernel = compile_kernel(cupy, source, "link_rows", OFF=_c(starts), ID=_c(indices))
        blocks = min(-(-count // (8 * per_warp)), 1 << 16)  # 8 warps a block
        kernel((blocks,), (256,), (starts, ends, np.uintp(0) if ids is None else ids, indices,
                                   np.int64(count), np.int64(longest), parent))  # fmt: skip


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


def _intersect_lists(backend, offsets, heads, ids, n: int):
    """close_wedges on CuPy: one thread per oriented edge of the rows ``ids``."""
    cupy = backend.xp
    offsets = offsets.astype(np.int64, copy=False)
    starts = offsets[ids]
    degrees = offsets[ids + 1] - starts
    total = int(degrees.sum()) if ids.shape[0] else 0
    tally = cupy.zeros(n, dtype=np.uint64)
    if total:
        segment, edges = backend.row_entries(starts, degrees, total)
        tails = ids.astype(np.int64)[segment]
        kernel = compile_kernel(cupy, _INTERSECT, "intersect_lists", ID=_c(heads))
        blocks = min((total + 255) // 256, 1 << 16)
        kernel((blocks,), (256,), (tails, edges, np.int64(total), offsets, heads, tally))
    return tally.astype(np.int64)


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


_FILL = r"""
extern "C" __global__ void fill(T* out, long long n, T value) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = value;
}
"""
_GREATER = r"""
extern "C" __global__ void greater(const T* values, long long n, T threshold, bool* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = values[i] > threshold;
}
"""
_MARK = r"""
extern "C" __global__ void mark(const ID* ids, long long n, bool* mask) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    mask[ids[i]] = true;
}
"""
_REPLACE = r"""
extern "C" __global__ void replace(T* values, long long n, T old, T value) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    if (values[i] == old) values[i] = value;
}
"""
STREAM_BLOCKS = 1024  # blocks of 256 threads for a grid-stride pass (a few per SM)
_STREAMED = ("i4", "i8", "f4", "f8")  # the dtypes it takes (others: CuPy's own kernels)


def _stream(cupy, source: str, name: str, size: int, *args, **types) -> None:
    """Launch the grid-stride kernel ``name`` over ``size`` entries: (first, size, rest...)."""
    if size:
        kernel = compile_kernel(cupy, source, name, **types)
        kernel((min((size + 255) // 256, STREAM_BLOCKS),), (256,),
               (args[0], np.int64(size), *args[1:]))  # fmt: skip


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
# the counts of the blocks before it (a warp's lanes by ballot, the block's warps in turn).
_NONZERO = (
    BLOCK_SUM
    + r"""
extern "C" __global__ void count_true(const bool* mask, long long n, long long chunk,
                                      unsigned long long* counts) {
  const long long lo = blockIdx.x * chunk, hi = lo + chunk < n ? lo + chunk : n;
  unsigned long long count = 0;
  for (long long i = lo + threadIdx.x; i < hi; i += 256) count += mask[i];
  count = block_sum(count);
  if (threadIdx.x == 0) counts[blockIdx.x] = count;
}

extern "C" __global__ void list_true(const bool* mask, long long n, long long chunk,
                                     const unsigned long long* counts, T* out) {
  __shared__ unsigned int warp_before[8];
  const long long lo = blockIdx.x * chunk, hi = lo + chunk < n ? lo + chunk : n;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned long long before = 0;
  for (long long b = threadIdx.x; b < blockIdx.x; b += 256) before += counts[b];
  unsigned long long at = block_sum(before);
  for (long long base = lo; base < hi; base += 256) {  // block-uniform
    const long long i = base + threadIdx.x;
    const bool set = i < hi && mask[i];
    const unsigned int lanes = __ballot_sync(0xffffffffu, set);
    if (lane == 0) warp_before[warp] = __popc(lanes);
    __syncthreads();
    unsigned int mine = 0, total = 0;
    for (int w = 0; w < 8; ++w) { mine += w < warp ? warp_before[w] : 0; total += warp_before[w]; }
    if (set) out[at + mine + __popc(lanes & ((1u << lane) - 1))] = (T)i;
    at += total;
    __syncthreads();  // warp_before is free for the next round
  }
}
"""
)


def _nonzero(cupy, mask, dtype, count: int | None):
    n = mask.shape[0]
    blocks = min((n + 255) // 256, STREAM_BLOCKS)
    if blocks == 0:
        return cupy.zeros(0, dtype=dtype)
    chunk = -(-n // (blocks * 256)) * 256  # a multiple of the block's 256 threads
    counts = cupy.empty(blocks, dtype=np.uint64)
    compile_kernel(cupy, _NONZERO, "count_true", T=C_TYPES[dtype.str[1:]])(
        (blocks,), (256,), (mask, np.int64(n), np.int64(chunk), counts)
    )
    if count is None:
        count = int(counts.sum())
    out = cupy.empty(count, dtype=dtype)
    compile_kernel(cupy, _NONZERO, "list_true", T=_c(out))(
        (blocks,), (256,), (mask, np.int64(n), np.int64(chunk), counts, out)
    )
    return out


def _masked_sum(cupy, values, mask=None, ids=None, keys=None, bound=None) -> int:
    """The sum of ``values`` where ``mask``, at ``ids``, or where ``keys < bound``: one pass,
    one atomic a warp (CuPy's ReductionKernel reduces to a scalar in one block)."""
    if keys is not None and keys.dtype.str[1:] not in _STREAMED:
        mask, keys = keys < bound, None
    if values.dtype.kind != "i" or values.dtype.itemsize not in (4, 8):
        if ids is not None:
            return int(values[ids].sum(dtype=np.int64))
        return int(
            cupy.where(mask if keys is None else keys < bound, values, 0).sum(dtype=np.int64)
        )
    values, total = cupy.ascontiguousarray(values), cupy.zeros(1, dtype=np.uint64)
    n = values.shape[0] if ids is None else ids.shape[0]
    null = np.uintp(0)
    mask = null if mask is None else cupy.ascontiguousarray(mask, dtype=bool)
    ids = null if ids is None else cupy.ascontiguousarray(ids)
    if keys is None:
        keys, bound = null, np.int32(0)
    else:
        keys, bound = cupy.ascontiguousarray(keys), keys.dtype.type(bound)
    id_type = _c(ids) if isinstance(ids, cupy.ndarray) else "int"  # (unused: any type)
    key_type = _c(keys) if isinstance(keys, cupy.ndarray) else "int"
    _stream(cupy, _MASKED_SUM, "masked_sum", n, values, mask, ids, keys, bound, total,
            VALUE=_c(values), ID=id_type, KEY=key_type)  # fmt: skip
    return int(total.view(np.int64).get()[0])


@functools.cache
def compile_kernel(cupy, source: str, name: str, cooperative: bool = False, **types: str):
    """The kernel ``name`` of ``source`` with each whole-word token of ``types`` replaced by its
    text (a C type, a constant), built once per key (a row reduction is called thousands of
    times a run); ``cooperative`` for a kernel that synchronises its whole grid."""
    for token, text in types.items():
        source = re.sub(rf"\b{token}\b", text, source)
    return cupy.RawKernel(source, name, enable_cooperative_groups=cooperative)


def _c(array) -> str:
    """The C type of ``array``'s elements."""
    return C_TYPES[array.dtype.str[1:]]


def _scatter(ufunc, legacy: str, target, index, values) -> None:
    """``ufunc.at`` on CuPy 14+, cupyx's scatter functions before it."""
    if hasattr(ufunc, "at"):
        ufunc.at(target, index, values)
    else:
        import cupyx

        getattr(cupyx, legacy)(target, index, values)
