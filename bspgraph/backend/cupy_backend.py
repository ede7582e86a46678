"""The CuPy backend: one GPU, CuPy's arrays, and its kernels of :mod:`.ops` (most of them
launchers of the CUDA kernels of :mod:`.cuda`)."""

from __future__ import annotations

import contextlib
import os
from typing import ClassVar

import numpy as np

from ..exceptions import DeviceError
from . import cuda, fused, ops
from .base import Backend, Capabilities


class CupyBackend(Backend):
    """CuPy on GPU ``device``: grid-stride kernels where CuPy's element-wise ones move less
    than the bandwidth, warp-per-rows reductions (no atomics, the same sums every run).

    A pull is a thread per candidate that stops at its first frontier in-neighbour; a
    superstep (launches and a host read) is the cost, so fewer, larger ones win.
    """

    name: ClassVar[str] = "cupy"
    capabilities: ClassVar[Capabilities] = Capabilities(
        on_host=False,
        virtual_devices=False,
        scans_whole_lists=False,
        costly_supersteps=True,
        # a lifted superstep costs 0.6-1 ms on two H200 whatever its frontier, about what one
        # H200 takes over 16 M edges (rmat20 on two, A/B against 4 M: BFS push 3.60 -> 2.96 ms,
        # SSSP 4.83 -> 3.89, BC 13.41 -> 11.56; rmat22 and rmat24 alike); a 1024 x 1024 grid's
        # SSSP lifted a frontier of 229 K out-edges for 15.7 ms where its levels take 14 us
        light_edges=1 << 24,
        dense_share=8,
        lane_push_share=64,
        # cuSPARSE's product with the transposed rows costs about 2 ms on rmat25 (33.5M
        # columns, an H200) whatever the sources (30 or 3.5M: betweenness' backward levels),
        # where a pull reads an entry in about 8 ps: some 7 entries a column
        push_columns=7,
    )

    def on_device(self, device: int) -> CupyBackend:
        count = self.xp.cuda.runtime.getDeviceCount()
        if not 0 <= device < count:
            raise DeviceError(f"GPU {device} asked for, {count} usable on this machine")
        return type(self)(self.xp, device)

    def activate(self):
        """This GPU current, and CuPy's plain reduction kernels in place of CUB's block
        reductions, which CuPy JIT-compiles (about 3 s of NVRTC per kind and dtype: 61 of the
        84 s of a first call of every primitive on rmat16, H100). bspgraph's own whole-array
        reductions (:meth:`total`, :meth:`count`, ...) need neither; what CuPy still reduces
        (over an axis, mostly) takes its plain kernels. The routine accelerators (CUB's
        precompiled device-wide sums, minima and scans) stay. Inside an activation of the same
        GPU (the enactor's parts on one GPU, each superstep) it changes nothing and costs
        nothing."""
        accelerator = self.xp._core._accelerator
        current = self.xp.cuda.runtime.getDevice() == (self.device or 0)
        if current and not accelerator.get_reduction_accelerators():
            return contextlib.nullcontext()
        return self._activated(accelerator)

    @contextlib.contextmanager
    def _activated(self, accelerator):
        saved = accelerator.get_reduction_accelerators()
        with self.xp.cuda.Device(self.device or 0):
            accelerator.set_reduction_accelerators([])
            try:
                yield
            finally:
                accelerator.set_reduction_accelerators(saved)

    def kernel_cache_dir(self) -> str | None:
        """CuPy's kernel cache (``CUPY_CACHE_DIR``, default ``~/.cupy/kernel_cache``)."""
        return os.environ.get("CUPY_CACHE_DIR", os.path.expanduser("~/.cupy/kernel_cache"))

    def asarray(self, array, dtype=None):
        device = self.device or 0
        with self.xp.cuda.Device(device):
            if isinstance(array, self.xp.ndarray) and array.device.id != device:
                return self._peer_copy(array).astype(
                    array.dtype if dtype is None else dtype, copy=False
                )
            return self.xp.asarray(array, dtype=dtype)

    def _peer_copy(self, array):
        """``array`` (on another GPU) copied to this GPU, the host not waiting: the copy, on
        this GPU's current stream, waits for what the source's stream has queued, and the
        source's stream for the copy (its memory is not reused before the copy read it)."""
        cuda = self.xp.cuda
        with array.device:
            array = self.xp.ascontiguousarray(array)
            source = cuda.get_current_stream()
            ready = cuda.Event(block=False, disable_timing=True)
            ready.record(source)
        stream = cuda.get_current_stream()  # this GPU's
        stream.wait_event(ready)
        moved = self.xp.empty(array.shape, dtype=array.dtype)
        moved.data.copy_from_device_async(array.data, array.nbytes, stream)
        copied = cuda.Event(block=False, disable_timing=True)
        copied.record(stream)
        with array.device:  # (the null stream's handle names the current GPU's)
            source.wait_event(copied)
        return moved

    @property
    def sparse(self):
        import cupyx.scipy.sparse as sparse

        return sparse

    # CuPy's own element-wise kernels (a thread an element, 128 a block) handle about 200 G
    # elements/s on an H200: near the bandwidth for float64 arithmetic over two or three arrays
    # (3-4 TB/s), but a 16.7M-entry int32 fill moves 0.8 TB/s (82 us) where a grid-stride loop
    # moves 3.4 (20 us). full and nonzero (and the kernels greater, where_at, mask_of, tally and
    # replace below) take the second: O(V) passes over one narrow array.
    def full(self, size: int, value, dtype):
        if np.dtype(dtype).str[1:] not in cuda.STREAMED:
            return super().full(size, value, dtype)
        out = self.xp.empty(size, dtype=dtype)
        cuda.stream(
            self.xp, cuda.FILL, "fill", size, out, out.dtype.type(value), T=cuda.c_type(out)
        )
        return out

    def nonzero(self, mask, dtype, count: int | None = None):
        mask = self.xp.ascontiguousarray(mask, dtype=bool)
        return cuda.nonzero(self.xp, mask, np.dtype(dtype), count)

    def masked_total(self, values, mask=None, ids=None):
        return cuda.masked_total(self.xp, values, mask=mask, ids=ids)

    def read(self, arrays: list) -> list[list[int]]:
        """Each array copied into page-locked host memory on the current stream (one runtime
        call each, no kernel: any dtypes), the host waiting once."""
        if len(arrays) < 2:
            return [array.ravel().tolist() for array in arrays]
        cuda = self.xp.cuda
        arrays = [a if a.flags.c_contiguous else self.xp.ascontiguousarray(a) for a in arrays]
        starts, end = [], 0
        for array in arrays:  # 8-byte aligned places
            starts.append(end)
            end += -(-array.nbytes // 8) * 8
        buffer, address = _pinned(end)
        stream = cuda.get_current_stream().ptr
        for array, start in zip(arrays, starts):
            cuda.runtime.memcpyAsync(
                address + start,
                array.data.ptr,
                array.nbytes,
                cuda.runtime.memcpyDeviceToHost,
                stream,
            )
        cuda.runtime.streamSynchronize(stream)
        return [
            np.frombuffer(buffer, array.dtype, array.size, start).tolist()
            for array, start in zip(arrays, starts)
        ]

    # Whole-array reductions by one module of grid-wide kernels (cuda.reduce_all: two launches,
    # no atomics, no host read), for the dtypes of cuda.C_TYPES; others by CuPy's own.
    def total(self, values):
        if values.dtype.str[1:] not in cuda.C_TYPES:
            return super().total(values)
        return cuda.reduce_all(self.xp, values, "sum")

    def count(self, mask):
        return cuda.count_true(self.xp, mask.astype(bool, copy=False))

    def any(self, mask):
        return cuda.reduce_all(self.xp, mask.astype(bool, copy=False), "max")

    def all(self, mask):
        return cuda.reduce_all(self.xp, mask.astype(bool, copy=False), "min")

    def largest(self, values):
        return self._extreme(values, "max")

    def smallest(self, values):
        return self._extreme(values, "min")

    def _extreme(self, values, op: str):
        if values.dtype.str[1:] not in cuda.C_TYPES:
            return values.max() if op == "max" else values.min()
        if values.size == 0:
            which = "maximum" if op == "max" else "minimum"
            raise ValueError(
                f"zero-size array to reduction operation {which} which has no identity"
            )
        return cuda.reduce_all(self.xp, values, op)

    def copy(self, array):
        """One device-to-device copy of the bytes (CuPy's ``copy`` launches an element-wise
        kernel: for a bool mask of 16.7M vertices, 83 us on an H200)."""
        if not array.flags.c_contiguous:
            return array.copy()
        out = self.xp.empty_like(array)
        out.data.copy_from_device_async(array.data, array.nbytes)
        return out

    def synchronize(self) -> None:
        self.xp.cuda.Device(self.device or 0).synchronize()

    def mark(self):
        """An event recorded on this GPU's current stream."""
        with self.activate():
            event = self.xp.cuda.Event()
            event.record()
        return event

    def seconds_between(self, start, end) -> float:
        end.synchronize()
        return self.xp.cuda.get_elapsed_time(start, end) / 1e3

    def free_bytes(self) -> int | None:
        with self.xp.cuda.Device(self.device or 0):
            free, _total = self.xp.cuda.runtime.memGetInfo()
        return int(free)

    def pooled_bytes(self) -> int:
        try:
            with self.xp.cuda.Device(self.device or 0):
                return int(self.xp.get_default_memory_pool().free_bytes())
        except AttributeError:
            return 0


@fused.register("scatter_min", "cupy", "op")
def scatter_min(backend: Backend, target, index, values) -> None:
    cuda.scatter(backend.xp.minimum, "scatter_min", target, index, values)


@fused.register("scatter_max", "cupy", "op")
def scatter_max(backend: Backend, target, index, values) -> None:
    cuda.scatter(backend.xp.maximum, "scatter_max", target, index, values)


@fused.register("scatter_add", "cupy", "op")
def scatter_add(backend: Backend, target, index, values) -> None:
    cuda.scatter(backend.xp.add, "scatter_add", target, index, values)


@fused.register("spmv", "cupy", "op")
def spmv(backend: Backend, offsets, indices, weights, x, num_rows: int, rows=None):
    """A warp per 32 rows (no atomics, a fixed order), read in place."""
    return cuda.row_reduce(backend.xp, "sum", offsets, indices, weights, x, num_rows, rows)


@fused.register("lane_sums", "cupy", "op")
def lane_sums(backend: Backend, offsets, indices, values, rows=None, position=None):
    """A warp per row and 32 lanes over the row-major ``values`` (cuSPARSE's product
    with a matrix of 387 lanes took 200 ms a level on rmat20), hubs in pieces."""
    return cuda.lane_sums(backend.xp, offsets, indices, values, rows, position)


@fused.register("prepare_lanes", "cupy", "op")
def prepare_lanes(backend: Backend, offsets, indices, num_columns: int, dtype) -> None:
    cuda.hub_pieces(backend.xp, offsets)


@fused.register("prepare_rows", "cupy", "op")
def prepare_rows(backend: Backend, offsets) -> None:
    """The pieces of the rows longer than ``cuda.LONG_ROW`` (a search over the rows), which
    the row reductions and union-find's links read."""
    cuda.hub_pieces(backend.xp, offsets)


@fused.register("csr_rows", "cupy", "op")
def csr_rows(backend: Backend, offsets, indices, weights, rows, num_columns: int):
    """Gathered edge-parallel; offsets in the input's dtype (cuSPARSE: int32)."""
    xp = backend.xp
    starts = offsets[rows]
    degrees = offsets[rows + 1] - starts
    total = int(backend.total(degrees)) if rows.shape[0] else 0
    _, position = ops.row_entries(backend, starts, degrees, total)
    sub = xp.concatenate([xp.zeros(1, dtype=np.int64), xp.cumsum(degrees, dtype=np.int64)])
    picked = None if weights is None else weights[position]
    return sub.astype(offsets.dtype), indices[position], picked  # cuSPARSE: int32


@fused.register("gather_reduce", "cupy", "op")
def gather_reduce(backend: Backend, values, offsets, indices, reduce: str, weights=None, rows=None):
    """32 rows a warp, long rows in pieces (as :func:`spmv`), for the values a warp
    shuffle moves; others (bool) by a scatter per row."""
    if reduce in ("min", "sum") and values.dtype.str[1:] in cuda.SHUFFLED:
        return cuda.row_reduce(
            backend.xp, reduce, offsets, indices, weights, values, int(offsets.shape[0]) - 1, rows
        )
    return ops.gather_reduce.generic(backend, values, offsets, indices, reduce, weights, rows)


@fused.register("reduce_rows", "cupy", "op")
def reduce_rows(backend: Backend, out, values, offsets, indices, reduce, weights, weigh) -> None:
    total = int(indices.shape[0])
    segment = ops.segment_index(backend, backend.xp.diff(offsets), total)
    terms = values[indices] if weights is None else weigh(values[indices], weights)
    (ops.scatter_min if reduce == "min" else ops.scatter_add)(backend, out, segment, terms)


@fused.register("greater", "cupy", "op")
def greater(backend: Backend, values, threshold):
    if values.dtype.str[1:] not in cuda.STREAMED:
        return ops.greater.generic(backend, values, threshold)
    out = backend.xp.empty(values.shape[0], dtype=bool)
    values = backend.xp.ascontiguousarray(values)
    cuda.stream(
        backend.xp,
        cuda.GREATER,
        "greater",
        values.shape[0],
        values,
        values.dtype.type(threshold),
        out,
        T=cuda.c_type(values),
    )
    return out


@fused.register("where_at", "cupy", "op")
def where_at(backend: Backend, mask, values, other, index):
    if values.dtype.str[1:] not in cuda.STREAMED or index.dtype.str[1:] not in ("i4", "i8"):
        return ops.where_at.generic(backend, mask, values, other, index)
    out = backend.xp.empty(index.shape[0], dtype=values.dtype)
    cuda.stream(
        backend.xp,
        cuda.WHERE_AT,
        "where_at",
        index.shape[0],
        backend.xp.ascontiguousarray(index),
        backend.xp.ascontiguousarray(mask, dtype=bool),
        backend.xp.ascontiguousarray(values),
        values.dtype.type(other),
        out,
        T=cuda.c_type(values),
        ID=cuda.c_type(index),
    )
    return out


@fused.register("mask_of", "cupy", "op")
def mask_of(backend: Backend, ids, size: int, count=None):
    """A memset and one pass over ``ids``, without CuPy's indexing machinery; the kernel
    reads ``count`` itself (no host read)."""
    if ids.dtype.str[1:] not in ("i4", "i8") or (count is not None and count.dtype != np.uint64):
        return ops.mask_of.generic(backend, ids, size, count)
    mask = backend.xp.zeros(size, dtype=bool)
    ids = backend.xp.ascontiguousarray(ids)
    cuda.stream(
        backend.xp,
        cuda.MARK,
        "mark",
        ids.shape[0],
        ids,
        np.uintp(0) if count is None else count,
        mask,
        ID=cuda.c_type(ids),
    )
    return mask


@fused.register("total_below", "cupy", "op")
def total_below(backend: Backend, values, keys, bound):
    return cuda.masked_total(backend.xp, values, keys=keys, bound=bound)


@fused.register("one_value", "cupy", "op")
def one_value(backend: Backend, values, mask=None, ids=None, kept: slice = slice(0, 0), since=None):
    """One pass and one thread over the blocks' partials (:func:`cuda.one_value`), where
    CuPy's ``where`` and reductions make two arrays of every vertex and six launches (and
    ``values - since`` a third)."""
    if values.dtype.str[1:] not in cuda.STREAMED or (
        ids is not None and ids.dtype.str[1:] not in ("i4", "i8")
    ):
        return ops.one_value.generic(backend, values, mask, ids, kept, since)
    return cuda.one_value(backend.xp, values, mask, ids, kept, since)


@fused.register("differs_from", "cupy", "op")
def differs_from(backend: Backend, values, at: int, mask):
    """One pass of four entries a thread (:func:`cuda.differs_from`), where CuPy's ``!=`` and
    ``&`` make two of one."""
    if values.ndim != 1 or values.dtype.str[1:] not in ("i4", "i8"):
        return ops.differs_from.generic(backend, values, at, mask)
    return cuda.differs_from(backend.xp, values, int(at), mask)


@fused.register("tally", "cupy", "op")
def tally(backend: Backend, ids, size: int):
    """One pass of integer atomics (CuPy's bincount first tests ``(ids < 0).any()``, a
    reduction, and reads ``ids.max()``: two host reads)."""
    if ids.dtype.str[1:] not in ("i4", "i8"):
        return ops.tally.generic(backend, ids, size)
    counts = backend.xp.zeros(size, dtype=np.uint64)
    ids = backend.xp.ascontiguousarray(ids)
    cuda.stream(backend.xp, cuda.TALLY, "tally", ids.shape[0], ids, counts, ID=cuda.c_type(ids))
    return counts.view(np.int64)


@fused.register("replace", "cupy", "op")
def replace(backend: Backend, values, old, new) -> None:
    """One pass, no mask, no host read."""
    if values.dtype.str[1:] not in cuda.STREAMED or not values.flags.c_contiguous:
        return ops.replace.generic(backend, values, old, new)
    kind = values.dtype.type
    cuda.stream(
        backend.xp,
        cuda.REPLACE,
        "replace",
        values.size,
        values,
        kind(old),
        kind(new),
        T=cuda.c_type(values),
    )
    return None


@fused.register("split_rows", "cupy", "op")
def split_rows(backend: Backend, offsets, indices, weights, span: slice, rename=None):
    """Two warp-a-row passes (:func:`cuda.split_rows`): nothing of the entries' size made but
    the two sides."""
    typed = {offsets.dtype.str[1:], indices.dtype.str[1:]} <= {"i4", "i8"} and (
        weights is None or weights.dtype.str[1:] in cuda.STREAMED
    )
    if not typed or rename is not None and rename.dtype != indices.dtype:
        return ops.split_rows.generic(backend, offsets, indices, weights, span, rename)
    return cuda.split_rows(backend.xp, offsets, indices, weights, span, rename)


@fused.register("segment_index", "cupy", "op")
def segment_index(backend: Backend, counts, total: int):
    """A binary search of the inclusive scan per 8 slots."""
    return cuda.segment_index(backend.xp, backend.xp.cumsum(counts, dtype=np.int64), total)


@fused.register("expand", "cupy", "op")
def expand(backend: Backend, ids, starts, degrees, indices):
    segment, position = ops.row_entries(backend, starts, degrees, int(backend.total(degrees)))
    return ids[segment], indices[position], position


@fused.register("unique", "cupy", "op")
def unique(backend: Backend, ids):
    return backend.xp.unique(ids)


@fused.register("reduce_runs", "cupy", "op")
def reduce_runs(backend: Backend, values, first, reduce: str, segment_dtype):
    """Scatters by run (CuPy has no ``reduceat``)."""
    xp = backend.xp
    segment = xp.cumsum(first, dtype=segment_dtype) - 1
    count = int(segment[-1]) + 1
    if reduce == "sum":
        out = xp.zeros(count, dtype=values.dtype)
        ops.scatter_add(backend, out, segment, values)
        return out
    number = ~xp.isnan(values)
    out = xp.full(count, xp.inf, dtype=values.dtype)
    ops.scatter_min(backend, out, segment[number], values[number])
    has_number = xp.zeros(count, dtype=bool)
    has_number[segment[number]] = True
    out[~has_number] = xp.nan
    return out


@fused.register("within", "cupy", "op")
def within(backend: Backend, mask, span: slice):
    """A memset and one device-to-device copy of the range (no element-wise pass)."""
    source = mask[span]
    if not source.flags.c_contiguous:
        return ops.within.generic(backend, mask, span)
    out = backend.xp.zeros(mask.shape[0], dtype=bool)
    out[span].data.copy_from_device_async(source.data, source.nbytes)
    return out


_PINNED: list = []  # page-locked bytes for Backend.read and their address (one host thread)


def _pinned(size: int) -> tuple[np.ndarray, int]:
    """At least ``size`` page-locked bytes, reused from call to call, and their address."""
    if not _PINNED or _PINNED[0].size < size:
        import cupyx

        buffer = cupyx.empty_pinned(max(size, 4096), dtype=np.uint8)
        _PINNED[:] = [buffer, buffer.ctypes.data]
    return _PINNED[0], _PINNED[1]
