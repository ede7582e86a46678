"""The Backend protocol (an abstract base class) and the helpers its implementations share."""

from __future__ import annotations

import time
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

PINNED_BYTES = 1 << 20  # device arrays this large come to the host through pinned memory
ROWS_SHARE = 4  # rows (or sources) holding > 1/ROWS_SHARE of a matrix's entries: the whole
# product over every row is cheaper than one over those rows
_WHILE_ALIVE: dict = {}  # (id(source), what) -> (weak reference to source, what was computed)


@dataclass(frozen=True)
class Capabilities:
    """What a kind of backend can do cheaply, read by the operators', primitives' and
    enactor's cost models (and nothing else): one per backend class."""

    on_host: bool  # arrays live in the host's memory (NumPy's)
    virtual_devices: bool  # several devices are parts of this one process's memory
    scans_whole_lists: bool  # a pull reads each candidate's whole in-list at about a push's
    # cost per edge (vectorised), rather than a thread per candidate stopping early
    costly_supersteps: bool  # a superstep (launches, a host read) costs more than the
    # redundant work that fewer, larger supersteps do
    dense_share: int  # the enactor sends dense messages (Slabs) in a superstep where
    # V / dense_share or more vertices travel (benchmarks.multi_gpu --same-gpu)
    lane_push_share: int  # a batched advance on one device pushes from the frontier rows when
    # their out-edges are at most 1 / lane_push_share of all, else pulls over every in-list
    # (benchmarks.many_sources)


@dataclass(frozen=True)
class Backend(ABC):
    """An array library and a device: ``xp`` is ``numpy`` or ``cupy``; ``device`` a GPU id or
    None. :class:`~bspgraph.backend.numpy_backend.NumpyBackend` and
    :class:`~bspgraph.backend.cupy_backend.CupyBackend` implement it; nothing above this
    package asks which one it has: it asks the methods below and its ``capabilities``.

    Arrays passed in live on this backend's device; integer ids index ``num_vertices`` entries.
    The methods with a body here are the array module's own functions, which an
    implementation may replace by a kernel where it is faster.
    """

    xp: Any
    device: int | None = None

    name: ClassVar[str]  # "numpy" or "cupy": the key of the kernel registry (``fused``)
    capabilities: ClassVar[Capabilities]  # what the cost models read (fixed per kind)

    def __repr__(self) -> str:
        return f"Backend({self.name!r}, device={self.device})"

    @abstractmethod
    def activate(self):
        """A context in which new arrays and kernels go to this backend's device."""

    @abstractmethod
    def on_device(self, device: int) -> Backend:
        """This kind of backend on device ``device`` of this process (with virtual devices,
        itself). Raises DeviceError where there is no such device."""

    def kernel_cache_dir(self) -> str | None:
        """The folder where compiled kernels are kept between processes (None: none)."""
        return None

    @abstractmethod
    def asarray(self, array, dtype=None):
        """Move ``array`` (NumPy, CuPy or a sequence) to this backend's device (a no-op when
        it is already there)."""

    @abstractmethod
    def scatter_min(self, target, index, values) -> None:
        """``target[index] = min(target[index], values)``, correct for repeated indices."""

    @abstractmethod
    def scatter_max(self, target, index, values) -> None:
        """``target[index] = max(target[index], values)``, correct for repeated indices."""

    @abstractmethod
    def scatter_add(self, target, index, values) -> None:
        """``target[index] += values``, correct for repeated indices."""

    @property
    @abstractmethod
    def sparse(self):
        """The sparse-matrix module (``scipy.sparse`` or ``cupyx.scipy.sparse``)."""

    @abstractmethod
    def spmv(self, offsets, indices, weights, x, num_rows: int, rows=None):
        """``y[i] = sum of weights[e] * x[indices[e]]`` over row ``i``'s entries ``e`` of a CSR
        matrix, in ``x``'s dtype; ``weights`` None means ones. With ``rows`` (ids), over those
        rows only: ``y[k]`` for row ``rows[k]``. The same sums every run (a fixed order)."""

    def prepare_rows(self, offsets) -> None:
        """Build what a kernel over every row of a CSR with ``offsets`` caches (kept while the
        arrays live), so that its first launch does not: nothing by default."""
        return None

    def prepare_product(self, offsets, indices, weights, dtype) -> None:
        """Build what :meth:`spmv` over every row of this CSR with ``dtype`` values caches
        (kept while the arrays live), so that the first product does not: by default what
        :meth:`prepare_rows` builds."""
        self.prepare_rows(offsets)

    def spmv_transposed(self, offsets, indices, data, x, num_columns: int):
        """``y[j] = sum of data[e] * x[i]`` over the entries ``e = (i, j)`` of a CSR matrix with
        ``x.shape[0]`` rows: the product with its transpose, a push from the rows."""
        shape = (int(x.shape[0]), num_columns)
        matrix = self.sparse.csr_matrix((data, indices, offsets), shape=shape)
        matrix.has_canonical_format = True  # (a product adds up repeats anyway): no check of
        return matrix.T @ x  # the rows, which is a reduction over them on each new matrix

    def lane_sums(self, offsets, indices, values, rows=None, position=None):
        """``out[k, j]``: the sum of ``values[indices[e], j]`` over the entries ``e`` of row ``k``
        of a CSR matrix (of row ``rows[k]`` with ``rows``), 0 for a row without entries: the
        unweighted matrix times ``values``, ``b`` lanes a row. With ``position`` (an int32 per
        column, -1 for none), ``values`` holds rows only for some columns: an entry ``e`` adds
        ``values[position[indices[e]], j]``, or nothing where that is -1.

        scipy.sparse's product here, of the whole matrix (built once while ``indices`` lives)
        unless ``rows`` hold at most 1 / ROWS_SHARE of the entries (then of those rows)."""
        if position is not None:  # a row of lanes for every column
            spread = self.xp.zeros((int(position.shape[0]), int(values.shape[1])), values.dtype)
            has = self.xp.flatnonzero(position >= 0)
            spread[has] = values[position[has]]
            values = spread
        columns, dtype, total = int(values.shape[0]), values.dtype, int(indices.shape[0])
        if rows is not None and self.entries_in(offsets, rows) * ROWS_SHARE <= total:
            offsets, indices, _ = self.csr_rows(offsets, indices, None, rows, columns)
            return self._lane_matrix(offsets, indices, columns, dtype) @ values
        whole = while_alive(
            indices,
            ("lane matrix", columns, dtype.str),
            lambda: self._lane_matrix(offsets, indices, columns, dtype),
        )
        out = whole @ values
        return out if rows is None else out[rows]

    def prepare_lanes(self, offsets, indices, num_columns: int, dtype) -> None:
        """Build what :meth:`lane_sums` over every row of this CSR with ``dtype`` values
        caches, so that the first product does not."""
        dtype = np.dtype(dtype)
        while_alive(
            indices,
            ("lane matrix", num_columns, dtype.str),
            lambda: self._lane_matrix(offsets, indices, num_columns, dtype),
        )

    def _lane_matrix(self, offsets, indices, num_columns: int, dtype):
        data = self.edge_values(indices, None, dtype)
        shape = (int(offsets.shape[0]) - 1, num_columns)
        return self.sparse.csr_matrix((data, indices, offsets), shape=shape)

    def count_dtype(self, bound: int) -> np.dtype:
        """The dtype in which a sparse product counts 0/1 terms up to ``bound`` fastest without
        wrapping: float32 (cuSPARSE multiplies floats only)."""
        return np.dtype(np.float32)

    @abstractmethod
    def csr_rows(self, offsets, indices, weights, rows, num_columns: int):
        """``(offsets, indices, weights)`` of the CSR made of ``rows`` (ids) of a CSR matrix with
        ``weights`` per entry (or None) and ``num_columns`` columns."""

    def gather_reduce(self, values, offsets, indices, reduce: str, weights=None, rows=None):
        """``out[i] = reduce(values[indices[offsets[i]:offsets[i + 1]]])`` (a CSR matrix's rows)
        with ``reduce`` "min" or "sum"; with ``weights`` (one per entry), the min of
        ``values + weights`` (min-plus) or the sum of ``values * weights`` (plus-times). The
        identity (the dtype's largest value, or 0) for an empty row. With ``rows`` (ids), over
        those rows only (``out[k]`` for row ``rows[k]``).

        Raises
        ------
        ValueError
            ``reduce`` is neither "min" nor "sum".
        """
        if reduce not in ("min", "sum"):
            raise ValueError(f"gather_reduce(reduce={reduce!r}): expected 'min' or 'sum'")
        if rows is not None:
            offsets, indices, weights = self.csr_rows(
                offsets, indices, weights, rows, int(values.shape[0])
            )
        count = int(offsets.shape[0]) - 1
        out = self.xp.full(count, identity(reduce, values.dtype), dtype=values.dtype)
        if int(indices.shape[0]):
            weigh = np.add if reduce == "min" else np.multiply
            self._reduce_rows(out, values, offsets, indices, reduce, weights, weigh)
        return out

    @abstractmethod
    def _reduce_rows(self, out, values, offsets, indices, reduce, weights, weigh) -> None:
        """:meth:`gather_reduce` over every row of a CSR with entries, into ``out`` (the
        identities); ``weigh`` is how a weight enters a term (``np.add`` or ``np.multiply``)."""

    def full(self, size: int, value, dtype):
        """A new array of ``size`` copies of ``value``, as ``dtype`` (``numpy.full``)."""
        return self.xp.full(size, value, dtype=dtype)

    def greater(self, values, threshold):
        """The bool mask ``values > threshold`` (a scalar)."""
        return values > threshold

    def where_at(self, mask, values, other, index):
        """``where(mask, values, other)`` at the ids ``index`` only (``mask`` and ``values``
        one entry a vertex, ``other`` a scalar): no pass over every vertex."""
        return self.xp.where(mask.take(index), values.take(index), other)

    def nonzero(self, mask, dtype, count: int | None = None):
        """The positions of the True entries of the bool ``mask``, ascending, as ``dtype``
        (``numpy.flatnonzero``). ``count``, their number when the caller knows it, spares a
        device a host read; it must be exact."""
        return self.xp.flatnonzero(mask).astype(dtype, copy=False)

    def index(self, ids):
        """The integer ``ids`` in the dtype this backend gathers and scatters through fastest
        (the same array where it is already)."""
        return ids

    def copy(self, array):
        """A copy of ``array`` (contiguous), in the same memory."""
        return array.copy()

    def within(self, mask, span: slice):
        """A new bool array: ``mask`` over the range ``span`` (a slice, step 1), False
        elsewhere."""
        out = self.xp.zeros(mask.shape[0], dtype=bool)
        out[span] = mask[span]
        return out

    def mask_of(self, ids, size: int, count=None):
        """A bool array of ``size`` entries, True at the integer ``ids`` (a frontier's dense
        form); with ``count`` (an array on the device whose first entry says how many of
        ``ids`` lead: a kernel's list and its tally), at the first ``count[0]`` only."""
        if count is not None:
            ids = ids[: int(count[0])]
        mask = self.xp.zeros(size, dtype=bool)
        mask[self.index(ids)] = True
        return mask

    @abstractmethod
    def masked_sum(self, values, mask) -> int:
        """``int(values[mask].sum())`` for a bool ``mask`` and integer ``values`` (which must
        not overflow their dtype on NumPy: degrees sum to E)."""

    def sum_at(self, values, ids) -> int:
        """``int(values[ids].sum())`` for integer ``values``."""
        return int(values.take(self.index(ids)).sum(dtype=np.int64))

    def masked_total(self, values, mask=None, ids=None):
        """:meth:`masked_sum` where ``mask`` or :meth:`sum_at` at ``ids`` (one of them), as a
        0-d int64 array on the device: no host read (:meth:`read` brings several back)."""
        if ids is not None:
            return values.take(self.index(ids)).sum(dtype=np.int64)
        return self.xp.multiply(values, mask).sum(dtype=np.int64)

    def read(self, arrays: list) -> list[list[int]]:
        """The entries of small integer ``arrays`` on this device as lists of Python ints, in
        one host read (a GPU: their copies queued, one wait)."""
        return [array.ravel().tolist() for array in arrays]

    # Whole-array reductions. Each returns a 0-d array on the device (NumPy: a scalar), so
    # that a caller that keeps the value there (a state's scalar) makes no host read; int(),
    # float() or bool() of it is one.
    @abstractmethod
    def total_below(self, values, keys, bound):
        """The sum in int64 of integer ``values`` where ``keys < bound``: the out-degrees of
        the vertices a traversal reached (``keys`` their depth or distance, ``bound`` its unset
        sentinel), without a mask array."""

    def total(self, values):
        """The sum of every entry of ``values``: in int64 for bools and integers, in float64
        for floats (NaN when an entry is NaN); 0 when empty."""
        return values.sum(dtype=np.float64 if values.dtype.kind == "f" else np.int64)

    def entries_in(self, offsets, rows) -> int:
        """How many entries the rows ``rows`` (ids) of a CSR with ``offsets`` hold (one host
        read on a GPU)."""
        return int(self.total(offsets[rows + 1] - offsets[rows])) if rows.shape[0] else 0

    def count(self, mask):
        """The number of True entries of the bool array ``mask`` (int64)."""
        return self.xp.count_nonzero(mask)

    def any(self, mask):
        """Whether any entry of the bool array ``mask`` is True (False when empty)."""
        return mask.any()

    def all(self, mask):
        """Whether every entry of the bool array ``mask`` is True (True when empty)."""
        return mask.all()

    def largest(self, values):
        """The largest entry of ``values``, in its dtype; NaN when a float entry is NaN (as
        ``numpy.max``).

        Raises
        ------
        ValueError
            ``values`` is empty.
        """
        return values.max()

    def smallest(self, values):
        """The smallest entry of ``values``, in its dtype; NaN when a float entry is NaN (as
        ``numpy.min``).

        Raises
        ------
        ValueError
            ``values`` is empty.
        """
        return values.min()

    def tally(self, ids, size: int):
        """How many times each of ``0 .. size - 1`` occurs in the integer array ``ids``
        (int64; ``numpy.bincount(ids, minlength=size)`` for ids in that range, which they
        must be: not checked)."""
        if ids.shape[0] == 0:
            return self.xp.zeros(size, dtype=np.int64)
        return self.xp.bincount(ids, minlength=size)[:size]

    def replace(self, values, old, new) -> None:
        """``values[values == old] = new``, in place."""
        values[values == old] = new

    def edge_values(self, indices, weights, dtype):
        """The data of a sparse product over a CSR with ``indices``: ``weights`` as ``dtype``, or
        ones when ``weights`` is None (``weights`` itself when it has that dtype)."""
        if weights is not None and weights.dtype == np.dtype(dtype):
            return weights
        return self.xp.ones(indices.shape[0], dtype) if weights is None else weights.astype(dtype)

    @abstractmethod
    def segment_index(self, counts, total: int):
        """For each of ``total = sum(counts)`` slots, the index of the segment it falls in:
        the load balancer's search (every slot costs the same however skewed ``counts`` is)."""

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

    @abstractmethod
    def expand(self, ids, starts, degrees, indices):
        """The entries of the rows ``ids`` of a CSR with ``indices`` (row ``ids[i]`` starts at
        ``starts[i]`` and holds ``degrees[i]`` entries), row after row: ``(src, dst,
        position)``, each entry's row id, its index (in the dtype this library indexes
        with fastest) and its position (an edge id)."""

    @abstractmethod
    def unique(self, ids):
        """The distinct values of the integer array ``ids``, sorted."""

    @abstractmethod
    def reduce_runs(self, values, first, reduce: str, segment_dtype):
        """The min (``reduce="min"``, skipping NaN: NaN only where every value of the run is)
        or sum (``"sum"``) of ``values`` over each run that starts where the bool array
        ``first`` is True (``first[0]`` is); ``segment_dtype`` holds a run's index."""

    def accelerated(self, module: str, name: str):
        """The optional compiled (numba) kernel ``name`` of ``module``, or None (then the caller
        keeps its array path): None here; see the NumPy backend."""
        return None

    @abstractmethod
    def synchronize(self) -> None:
        """Wait for queued device work (a no-op on NumPy)."""

    def mark(self):
        """A point in this backend's queue of work, recorded without waiting for it: two of
        them time the work between (:meth:`seconds_between`). The host clock here (the work
        is done when queued)."""
        return time.perf_counter()

    def seconds_between(self, start, end) -> float:
        """The seconds from the mark ``start`` to the mark ``end`` on the device's clock,
        once the work before ``end`` is done (waiting for it)."""
        return end - start

    @abstractmethod
    def free_bytes(self) -> int | None:
        """Free device memory in bytes, or None on the CPU (no limit checked)."""

    @abstractmethod
    def pooled_bytes(self) -> int:
        """Bytes the array library's memory pool keeps for reuse but does not use (0 without
        a pool)."""


def read_together(arrays: list[tuple[Backend, Any]]) -> list[list[int]]:
    """The entries of each small integer array of ``arrays`` (``(backend, array)`` pairs) as
    a list of Python ints, in order: every array of one backend (one GPU) brought back by one
    :meth:`Backend.read`, in its activation."""
    groups: dict[Backend, list[int]] = {}
    for k, (backend, _) in enumerate(arrays):
        groups.setdefault(backend, []).append(k)
    values: list = [None] * len(arrays)
    for backend, ks in groups.items():
        with backend.activate():
            for k, read in zip(ks, backend.read([arrays[k][1] for k in ks]), strict=True):
                values[k] = read
    return values


def identity(reduce: str, dtype: np.dtype):
    """What a ``reduce`` ("sum" or "min") of no entries gives: 0, or the dtype's largest value."""
    if reduce == "sum":
        return 0
    return np.inf if dtype.kind == "f" else (True if dtype.kind == "b" else np.iinfo(dtype).max)


def while_alive(source, what: tuple, compute):
    """``compute()``, cached under ``what`` while the array ``source`` lives (arrays it was
    computed from, such as a CSR's, are never written in place)."""
    key = (id(source), *what)
    cached = _WHILE_ALIVE.get(key)
    if cached is not None and cached[0]() is source:
        return cached[1]
    value = compute()
    _WHILE_ALIVE[key] = (
        weakref.ref(source, lambda _r, key=key, cache=_WHILE_ALIVE: cache.pop(key, None)),
        value,
    )
    return value


def row_positions(starts, degrees):
    """The CSR positions ``starts[i] .. starts[i] + degrees[i] - 1`` of rows, concatenated
    (NumPy arrays)."""
    scan = np.cumsum(degrees)
    total = int(scan[-1]) if scan.size else 0
    return np.repeat(starts - (scan - degrees), degrees) + np.arange(total)


def to_host(array) -> np.ndarray:
    """A NumPy array with the values of ``array`` (NumPy, CuPy or a sequence); a large CuPy
    array comes back through page-locked memory from CuPy's pinned pool (a faster copy)."""
    if hasattr(array, "__cuda_array_interface__") and hasattr(array, "get"):
        if array.nbytes < PINNED_BYTES or not array.flags.c_contiguous:
            return array.get()
        import cupyx  # a large result: through page-locked memory (CuPy's pool reuses it)

        return array.get(out=cupyx.empty_pinned(array.shape, array.dtype))
    return np.asarray(array)
