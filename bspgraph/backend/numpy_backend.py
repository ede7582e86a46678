"""The NumPy backend: the host's arrays, and its kernels of :mod:`.ops` (scipy.sparse products,
``ufunc.at`` scatters, ``reduceat`` reductions, optional numba kernels)."""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
from typing import ClassVar

import numpy as np

from . import fused, ops
from .base import Backend, Capabilities, row_positions, to_host, while_alive

ACCELERATE = os.environ.get("BSPGRAPH_NUMBA", "1") != "0"  # numba kernels where they win
GATHER_CHUNK = 1 << 22  # entries gathered at once by gather_reduce
MERGED_RUNS = 32  # fewer ascending runs than this: unique merges them (a stable sort, timsort)


class NumpyBackend(Backend):
    """NumPy on the host: vectorised passes, ``ufunc.at`` scatters, scipy.sparse products.

    Several devices are virtual: parts of one process (the multi-device machinery runs
    without a GPU). A pull is vectorised (whole in-lists, about a push's cost per edge), and
    a superstep costs little: small buckets (delta-stepping) pay off.
    """

    name: ClassVar[str] = "numpy"
    capabilities: ClassVar[Capabilities] = Capabilities(
        on_host=True,
        virtual_devices=True,
        scans_whole_lists=True,
        costly_supersteps=False,
        light_edges=0,  # (a lifted superstep on CPUs: 60-200 us, a few thousand edges' step)
        # Slabs from V / 4 travelling vertices, not V: on rmat18, 4 parts, BFS auto 1.38x ->
        # 1.29x and CC 4.1x -> 3.3x of one device's time (a Slab of min values is the column
        # as it is)
        dense_share=4,
        lane_push_share=4,
        push_columns=0,  # scipy's product with the transposed rows: a pass over its entries
    )

    def activate(self):
        return contextlib.nullcontext()

    def on_device(self, device: int) -> NumpyBackend:
        return self  # virtual devices: one memory

    def asarray(self, array, dtype=None):
        return np.asarray(to_host(array), dtype=dtype)

    def index(self, ids):
        """As intp: NumPy scatters through int32 ids about 1.7 times slower."""
        return ids.astype(np.intp, copy=False)

    @property
    def sparse(self):
        import scipy.sparse as sparse

        return sparse

    def synchronize(self) -> None:
        return None

    def free_bytes(self) -> int | None:
        return None

    def pooled_bytes(self) -> int:
        return 0


@fused.register("scatter_min", "numpy", "op")
def scatter_min(backend: Backend, target, index, values) -> None:
    np.minimum.at(target, index, values)


@fused.register("scatter_max", "numpy", "op")
def scatter_max(backend: Backend, target, index, values) -> None:
    np.maximum.at(target, index, values)


@fused.register("scatter_add", "numpy", "op")
def scatter_add(backend: Backend, target, index, values) -> None:
    """A float sum over more than 64 indices by ``bincount`` (faster than ``add.at``)."""
    if target.dtype.kind == "f" and target.ndim == 1 and len(index) > 64:
        values = np.broadcast_to(values, np.shape(index))
        target += np.bincount(index, weights=values, minlength=len(target))[: len(target)]
    else:
        np.add.at(target, index, values)


@fused.register("spmv", "numpy", "op")
def spmv(backend: Backend, offsets, indices, weights, x, num_rows: int, rows=None):
    """scipy.sparse's product; with ``rows``, of those rows copied (:func:`csr_rows`)."""
    if rows is not None:
        offsets, indices, weights = ops.csr_rows(backend, offsets, indices, weights, rows, len(x))
        num_rows = int(rows.shape[0])
    data = ops.edge_values(backend, indices, weights, x.dtype)
    shape = (num_rows, int(x.shape[0]))
    return backend.sparse.csr_matrix((data, indices, offsets), shape=shape) @ x


@fused.register("prepare_product", "numpy", "op")
def prepare_product(backend: Backend, offsets, indices, weights, dtype) -> None:
    """The edge values as ``dtype`` (ones when unweighted), which scipy's product takes."""
    ops.prepare_rows(backend, offsets)
    ops.edge_values(backend, indices, weights, dtype)


@fused.register("count_dtype", "numpy", "op")
def count_dtype(backend: Backend, bound: int) -> np.dtype:
    """uint16 while ``bound`` fits (scipy's products of 2-byte integers move half the bytes of
    float32's: email-Eu-core, 1,005 lanes, 1.2 against 2.8 ms), else float32."""
    return np.dtype(np.uint16) if bound < 1 << 16 else np.dtype(np.float32)


@fused.register("csr_rows", "numpy", "op")
def csr_rows(backend: Backend, offsets, indices, weights, rows, num_columns: int):
    """A copy by scipy.sparse's row indexing (a C loop)."""
    data = ops.edge_values(backend, indices, None, bool) if weights is None else weights
    shape = (int(offsets.shape[0]) - 1, num_columns)
    part = backend.sparse.csr_matrix((data, indices, offsets), shape=shape)[rows]
    return part.indptr, part.indices, None if weights is None else part.data


@fused.register("reduce_rows", "numpy", "op")
def reduce_rows(backend: Backend, out, values, offsets, indices, reduce, weights, weigh) -> None:
    """Gathers and ``reduceat``s a few million entries at a time (temporaries that stay in
    cache, no page faults)."""
    ufunc = np.minimum if reduce == "min" else np.add
    total = int(indices.shape[0])
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


@fused.register("total_below", "numpy", "op")
def total_below(backend: Backend, values, keys, bound):
    """After a traversal that reached most vertices, the total of ``values`` (kept while they
    live) less theirs at the few keys not below: a pass over ``keys``, none over ``values``
    (BFS on luxembourg_osm: 0.08 -> 0.02 ms); else the masked sum."""
    missing = keys >= bound
    count = np.count_nonzero(missing)
    if count * 8 > keys.shape[0]:
        return np.multiply(values, ~missing).sum(dtype=np.int64)
    total = while_alive(values, ("total",), lambda: values.sum(dtype=np.int64))
    return total - values[missing].sum(dtype=np.int64) if count else total


@fused.register("edge_values", "numpy", "op")
def edge_values(backend: Backend, indices, weights, dtype):
    """A converted or filled array is cached (read-only) while its source array lives, so a
    product per superstep does not redo O(E) work."""
    if weights is not None and weights.dtype == np.dtype(dtype):
        return weights

    def filled():
        values = ops.edge_values.generic(backend, indices, weights, dtype)
        values.flags.writeable = False
        return values

    source = indices if weights is None else weights
    return while_alive(source, ("edge values", weights is None, np.dtype(dtype).str), filled)


@fused.register("segment_index", "numpy", "op")
def segment_index(backend: Backend, counts, total: int):
    return np.repeat(np.arange(len(counts)), counts)


@fused.register("expand", "numpy", "op")
def expand(backend: Backend, ids, starts, degrees, indices):
    """The ids repeated and the positions computed (no search); ``dst`` as intp (NumPy indexes
    with it ~4x faster than with int32)."""
    position = row_positions(starts, degrees)
    return np.repeat(ids, degrees), indices[position].astype(np.intp), position


@fused.register("mask_of", "numpy", "op")
def mask_of(backend: Backend, ids, size: int, count=None):
    """With ``count``, its first ``count[0]`` ids picked as a kernel reads the count: on the
    device, no host read."""
    if count is not None:
        leading = backend.xp.arange(ids.shape[0]) < count[0]
        ids = ids.take(backend.nonzero(leading, np.intp, count=count[0]))
    return ops.mask_of.generic(backend, ids, size)


@fused.register("unique", "numpy", "op")
def unique(backend: Backend, ids):
    """A sort (NumPy 2's hashing ``unique`` is several times slower on the small arrays of a
    traversal); a merge (NumPy's stable sort) where ``ids`` are fewer than MERGED_RUNS
    ascending runs, as a union of frontiers is (four sorted lists of 2,000 ids: 13 us
    against 110; one pass counts the runs)."""
    runs = 1 + int(np.count_nonzero(ids[1:] < ids[:-1]))
    ids = np.sort(ids, kind="stable" if runs < MERGED_RUNS else None)
    first = np.empty(ids.shape, dtype=bool)
    first[:1] = True
    np.not_equal(ids[1:], ids[:-1], out=first[1:])
    return ids[first]


@fused.register("reduce_runs", "numpy", "op")
def reduce_runs(backend: Backend, values, first, reduce: str, segment_dtype):
    ufunc = np.fmin if reduce == "min" else np.add
    return ufunc.reduceat(values, np.flatnonzero(first))


@fused.register("accelerated", "numpy", "op")
def accelerated(backend: Backend, module: str, name: str):
    """The numba kernel ``name`` of ``module`` (which imports numba), when numba is installed
    and ``ACCELERATE`` is on ($BSPGRAPH_NUMBA != "0"); else None."""
    if not ACCELERATE:
        return None
    kernels = _optional_module(module)
    return None if kernels is None else getattr(kernels, name)


@functools.cache
def _optional_module(module: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
