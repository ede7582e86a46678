"""The Backend protocol (an abstract base class), its Capabilities, and the helpers its
implementations share."""

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
    light_edges: int  # a frontier of at most this many out-edges costs one device less than
    # a lifted superstep's fixed price, whatever the graph's size (rule 6's floor: solo.is_light)
    dense_share: int  # the enactor sends dense messages (Slabs) in a superstep where
    # V / dense_share or more vertices travel (benchmarks.multi_gpu --same-gpu)
    lane_push_share: int  # a batched advance on one device pushes from the frontier rows when
    # their out-edges are at most 1 / lane_push_share of all, else pulls over every in-list
    # (benchmarks.many_sources)
    push_columns: int  # a sum pushed from a few sources (ops.spmv_transposed) costs what a pull
    # over this many entries a column costs, before its own entries (neighbor_reduce's choice)


@dataclass(frozen=True)
class Backend(ABC):
    """An array library and a device: ``xp`` is ``numpy`` or ``cupy``; ``device`` a GPU id or
    None. :class:`~bspgraph.backend.numpy_backend.NumpyBackend` and
    :class:`~bspgraph.backend.cupy_backend.CupyBackend` implement it; nothing above this
    package asks which one it has: it asks the methods below and its ``capabilities``.

    The interface is thin: the array module, the device (activation, transfers, waits, clocks,
    memory) and the few whole-array primitives every layer uses. Every other array operation
    is a named kernel in :mod:`.ops`. Arrays passed in live on this backend's device; integer
    ids index ``num_vertices`` entries. The methods with a body here are the array module's
    own functions, which an implementation may replace by a kernel where it is faster.
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

    @property
    @abstractmethod
    def sparse(self):
        """The sparse-matrix module (``scipy.sparse`` or ``cupyx.scipy.sparse``)."""

    def full(self, size: int, value, dtype):
        """A new array of ``size`` copies of ``value``, as ``dtype`` (``numpy.full``)."""
        return self.xp.full(size, value, dtype=dtype)

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

    def masked_total(self, values, mask=None, ids=None):
        """The sum in int64 of integer ``values`` where the bool ``mask`` is True or at the ids
        ``ids`` (one of them), as a 0-d array on the device: no host read (:meth:`read` brings
        several back; ``ops.masked_sum`` and ``ops.sum_at`` read one)."""
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
    def total(self, values):
        """The sum of every entry of ``values``: in int64 for bools and integers, in float64
        for floats (NaN when an entry is NaN); 0 when empty."""
        return values.sum(dtype=np.float64 if values.dtype.kind == "f" else np.int64)

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
    return 0 if reduce == "sum" else extreme(dtype)


def extreme(dtype: np.dtype, largest: bool = True):
    """The largest (or smallest) value of ``dtype``: an infinity for floats, True (False) for
    bools, the integer's limit else."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.inf if largest else -np.inf
    if dtype.kind == "b":
        return largest
    return np.iinfo(dtype).max if largest else np.iinfo(dtype).min


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
