"""The array operations beyond :class:`~bspgraph.backend.base.Backend`'s thin interface: CSR
products and row reductions, scatters, the load balancer's expansions, masks and compactions.

Each is a function of this module that takes the backend first and runs the kernel that
backend registered under the function's name, direction "op" (:mod:`.fused`)::

    ops.scatter_min(graph.backend, distance, dst, candidate)

    @fused.register("scatter_min", "cupy", "op")  # in cupy_backend.py
    def scatter_min(backend, target, index, values) -> None: ...

Functions, not ``backend.kernel("scatter_min")(...)``: a misspelt name fails at import (and in
ruff), not mid-run; each operation has one signature and one docstring, here; and a reader
greps its callers. An operation with a body here (``@_generic``) runs that body where a
backend registered no kernel; its kernels may fall back to it as ``ops.name.generic``. One
without (``@_required``) raises NotImplementedError there: each backend registers its own. A
few (``masked_sum``, ``sum_at``, ``entries_in``, ``row_entries``) are compositions of the
backend's methods and other operations, the same on every backend: plain functions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from . import fused
from .base import ROWS_SHARE, Backend, extreme, identity, while_alive


def _generic(body: Callable) -> Callable:
    """The operation named after ``body``: the kernel a backend registered, else ``body``."""
    name = body.__name__

    @functools.wraps(body)
    def dispatch(backend, *args, **kwargs):
        kernel = fused.lookup(name, backend, "op")
        return (body if kernel is None else kernel)(backend, *args, **kwargs)

    dispatch.generic = body
    return dispatch


def _required(signature: Callable) -> Callable:
    """The operation named after ``signature`` (its arguments and docstring only): the kernel
    a backend registered; NotImplementedError where it registered none."""
    name = signature.__name__.lstrip("_")

    @functools.wraps(signature)
    def dispatch(backend, *args, **kwargs):
        kernel = fused.lookup(name, backend, "op")
        if kernel is None:
            raise NotImplementedError(f"ops.{name}: no kernel registered for {backend.name!r}")
        return kernel(backend, *args, **kwargs)

    return dispatch


@_required
def scatter_min(backend: Backend, target, index, values) -> None:
    """``target[index] = min(target[index], values)``, correct for repeated indices."""


@_required
def scatter_max(backend: Backend, target, index, values) -> None:
    """``target[index] = max(target[index], values)``, correct for repeated indices."""


@_required
def scatter_add(backend: Backend, target, index, values) -> None:
    """``target[index] += values``, correct for repeated indices."""


@_required
def spmv(backend: Backend, offsets, indices, weights, x, num_rows: int, rows=None):
    """``y[i] = sum of weights[e] * x[indices[e]]`` over row ``i``'s entries ``e`` of a CSR
    matrix, in ``x``'s dtype; ``weights`` None means ones. With ``rows`` (ids), over those
    rows only: ``y[k]`` for row ``rows[k]``. The same sums every run (a fixed order)."""


@_generic
def prepare_rows(backend: Backend, offsets) -> None:
    """Build what a kernel over every row of a CSR with ``offsets`` caches (kept while the
    arrays live), so that its first launch does not: nothing by default."""
    return None


@_generic
def prepare_product(backend: Backend, offsets, indices, weights, dtype) -> None:
    """Build what :func:`spmv` over every row of this CSR with ``dtype`` values caches (kept
    while the arrays live), so that the first product does not: by default what
    :func:`prepare_rows` builds."""
    prepare_rows(backend, offsets)


@_generic
def spmv_transposed(backend: Backend, offsets, indices, data, x, num_columns: int):
    """``y[j] = sum of data[e] * x[i]`` over the entries ``e = (i, j)`` of a CSR matrix with
    ``x.shape[0]`` rows: the product with its transpose, a push from the rows."""
    shape = (int(x.shape[0]), num_columns)
    matrix = backend.sparse.csr_matrix((data, indices, offsets), shape=shape)
    matrix.has_canonical_format = True  # (a product adds up repeats anyway): no check of
    return matrix.T @ x  # the rows, which is a reduction over them on each new matrix


@_generic
def lane_sums(backend: Backend, offsets, indices, values, rows=None, position=None):
    """``out[k, j]``: the sum of ``values[indices[e], j]`` over the entries ``e`` of row ``k``
    of a CSR matrix (of row ``rows[k]`` with ``rows``), 0 for a row without entries: the
    unweighted matrix times ``values``, ``b`` lanes a row. With ``position`` (an int32 per
    column, -1 for none), ``values`` holds rows only for some columns: an entry ``e`` adds
    ``values[position[indices[e]], j]``, or nothing where that is -1.

    scipy.sparse's product here, of the whole matrix (built once while ``indices`` lives)
    unless ``rows`` hold at most 1 / ROWS_SHARE of the entries (then of those rows)."""
    if position is not None:  # a row of lanes for every column
        spread = backend.xp.zeros((int(position.shape[0]), int(values.shape[1])), values.dtype)
        has = backend.xp.flatnonzero(position >= 0)
        spread[has] = values[position[has]]
        values = spread
    columns, dtype, total = int(values.shape[0]), values.dtype, int(indices.shape[0])
    if rows is not None and entries_in(backend, offsets, rows) * ROWS_SHARE <= total:
        offsets, indices, _ = csr_rows(backend, offsets, indices, None, rows, columns)
        return _lane_matrix(backend, offsets, indices, columns, dtype) @ values
    whole = while_alive(
        indices,
        ("lane matrix", columns, dtype.str),
        lambda: _lane_matrix(backend, offsets, indices, columns, dtype),
    )
    out = whole @ values
    return out if rows is None else out[rows]


@_generic
def prepare_lanes(backend: Backend, offsets, indices, num_columns: int, dtype) -> None:
    """Build what :func:`lane_sums` over every row of this CSR with ``dtype`` values caches,
    so that the first product does not."""
    dtype = np.dtype(dtype)
    while_alive(
        indices,
        ("lane matrix", num_columns, dtype.str),
        lambda: _lane_matrix(backend, offsets, indices, num_columns, dtype),
    )


def _lane_matrix(backend: Backend, offsets, indices, num_columns: int, dtype):
    data = edge_values(backend, indices, None, dtype)
    shape = (int(offsets.shape[0]) - 1, num_columns)
    return backend.sparse.csr_matrix((data, indices, offsets), shape=shape)


@_generic
def count_dtype(backend: Backend, bound: int) -> np.dtype:
    """The dtype in which a sparse product counts 0/1 terms up to ``bound`` fastest without
    wrapping: float32 (cuSPARSE multiplies floats only)."""
    return np.dtype(np.float32)


@_required
def csr_rows(backend: Backend, offsets, indices, weights, rows, num_columns: int):
    """``(offsets, indices, weights)`` of the CSR made of ``rows`` (ids) of a CSR matrix with
    ``weights`` per entry (or None) and ``num_columns`` columns."""


@_generic
def gather_reduce(backend: Backend, values, offsets, indices, reduce: str, weights=None, rows=None):
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
        offsets, indices, weights = csr_rows(
            backend, offsets, indices, weights, rows, int(values.shape[0])
        )
    count = int(offsets.shape[0]) - 1
    out = backend.xp.full(count, identity(reduce, values.dtype), dtype=values.dtype)
    if int(indices.shape[0]):
        weigh = np.add if reduce == "min" else np.multiply
        _reduce_rows(backend, out, values, offsets, indices, reduce, weights, weigh)
    return out


@_required
def _reduce_rows(backend: Backend, out, values, offsets, indices, reduce, weights, weigh) -> None:
    """:func:`gather_reduce` over every row of a CSR with entries, into ``out`` (the
    identities); ``weigh`` is how a weight enters a term (``np.add`` or ``np.multiply``)."""


@_generic
def greater(backend: Backend, values, threshold):
    """The bool mask ``values > threshold`` (a scalar)."""
    return values > threshold


@_generic
def where_at(backend: Backend, mask, values, other, index):
    """``where(mask, values, other)`` at the ids ``index`` only (``mask`` and ``values`` one
    entry a vertex, ``other`` a scalar): no pass over every vertex."""
    return backend.xp.where(mask.take(index), values.take(index), other)


@_generic
def within(backend: Backend, mask, span: slice):
    """A new bool array: ``mask`` over the range ``span`` (a slice, step 1), False
    elsewhere."""
    out = backend.xp.zeros(mask.shape[0], dtype=bool)
    out[span] = mask[span]
    return out


@_generic
def differs_from(backend: Backend, values, at: int, mask):
    """The bool array ``(values != values[at]) & mask``: the entries of ``mask`` whose value
    differs from the one at index ``at`` (one pass; no host read)."""
    return (values != values[at]) & mask


@_generic
def mask_of(backend: Backend, ids, size: int, count=None):
    """A bool array of ``size`` entries, True at the integer ``ids`` (a frontier's dense form);
    with ``count`` (an array on the device whose first entry says how many of ``ids`` lead: a
    kernel's list and its tally), at the first ``count[0]`` only."""
    if count is not None:
        ids = ids[: int(count[0])]
    mask = backend.xp.zeros(size, dtype=bool)
    mask[backend.index(ids)] = True
    return mask


def masked_sum(backend: Backend, values, mask) -> int:
    """``int(values[mask].sum())`` for a bool ``mask`` and integer ``values`` (which must not
    overflow their dtype on NumPy: degrees sum to E): one host read of
    :meth:`~Backend.masked_total`."""
    return int(backend.masked_total(values, mask=mask))


def sum_at(backend: Backend, values, ids) -> int:
    """``int(values[ids].sum())`` for integer ``values``: one host read of
    :meth:`~Backend.masked_total`."""
    return int(backend.masked_total(values, ids=ids))


@_generic
def one_value(backend: Backend, values, mask=None, ids=None, kept: slice = slice(0, 0), since=None):
    """Whether ``values`` hold one value where the bool ``mask`` is set (or at ``ids``), and
    how many of those entries lie in the id range ``kept``: an int64 pair on the device (the
    count, then 1 or 0; 0 where none is set or one is NaN), and the least of them as a
    one-element array. ``since`` (an array like ``values``): the changes ``values - since``
    are tested instead, at those entries only. Reads nothing."""
    xp = backend.xp
    if ids is None:
        changes = values if since is None else values - since
        low = xp.where(mask, changes, values.dtype.type(extreme(values.dtype)))
        high = xp.where(mask, changes, values.dtype.type(extreme(values.dtype, largest=False)))
        count = backend.count(mask[kept])
    else:
        low = high = xp.take(values, ids)
        if since is not None:
            low = high = low - xp.take(since, ids)
        count = backend.count((ids >= kept.start) & (ids < kept.stop))
    low, high = (low.min(), high.max()) if low.shape[0] else (xp.zeros((), values.dtype), 1)
    pair = xp.stack([xp.asarray(count, dtype=np.int64), (low == high).astype(np.int64)])
    return pair, xp.reshape(low, (1,)).astype(values.dtype, copy=False)


COMMON_SAMPLE = 1024  # entries looked at for the commonest value (evenly spaced)


@_generic
def common_value(backend: Backend, values, mask):
    """The value most entries of ``values`` take where the bool ``mask`` is set (the
    commonest among up to COMMON_SAMPLE entries, evenly spaced, that are set), and how many
    set entries hold another: a 0-d int64 count on the device and the value as a
    one-element array. Where none of those entries is set, the dtype's largest value. Any
    value gives a right count; the commonest makes it small. Reads nothing."""
    xp = backend.xp
    unset = values.dtype.type(extreme(values.dtype))
    if values.shape[0] == 0:
        return xp.zeros((), dtype=np.int64), xp.full(1, unset, dtype=values.dtype)
    step = max(1, values.shape[0] // COMMON_SAMPLE)
    picked = xp.sort(xp.where(mask[::step], values[::step], unset))
    times = xp.searchsorted(picked, picked, side="right") - xp.searchsorted(picked, picked)
    times = xp.where(picked == unset, 0, times)  # (the unset ones: no value of theirs)
    value = picked[xp.argmax(times).reshape(1)]
    others = backend.count(mask & (values != value))
    return xp.asarray(others, dtype=np.int64), value


@_required
def total_below(backend: Backend, values, keys, bound):
    """The sum in int64 of integer ``values`` where ``keys < bound``, as a 0-d array on the
    device: the out-degrees of the vertices a traversal reached (``keys`` their depth or
    distance, ``bound`` its unset sentinel), without a mask array. ``values`` are never
    written in place (a graph's degrees: a backend may keep their total)."""


def entries_in(backend: Backend, offsets, rows) -> int:
    """How many entries the rows ``rows`` (ids) of a CSR with ``offsets`` hold (one host read
    on a GPU)."""
    return int(backend.total(offsets[rows + 1] - offsets[rows])) if rows.shape[0] else 0


@_generic
def tally(backend: Backend, ids, size: int):
    """How many times each of ``0 .. size - 1`` occurs in the integer array ``ids`` (int64;
    ``numpy.bincount(ids, minlength=size)`` for ids in that range, which they must be: not
    checked)."""
    if ids.shape[0] == 0:
        return backend.xp.zeros(size, dtype=np.int64)
    return backend.xp.bincount(ids, minlength=size)[:size]


@_generic
def replace(backend: Backend, values, old, new) -> None:
    """``values[values == old] = new``, in place."""
    values[values == old] = new


@_generic
def edge_values(backend: Backend, indices, weights, dtype):
    """The data of a sparse product over a CSR with ``indices``: ``weights`` as ``dtype``, or
    ones when ``weights`` is None (``weights`` itself when it has that dtype)."""
    if weights is not None and weights.dtype == np.dtype(dtype):
        return weights
    return backend.xp.ones(indices.shape[0], dtype) if weights is None else weights.astype(dtype)


@_generic
def split_rows(backend: Backend, offsets, indices, weights, span: slice, rename=None):
    """The CSR ``(offsets, indices, weights)`` (offsets from 0) as two, each row's entries in
    their order: those whose index lies in ``span`` and the others, each index
    ``rename[index]`` where given. ``(inside, outside)``, each ``(offsets, indices, weights)``
    (weights None without)."""
    xp = backend.xp
    inside = (indices >= span.start) & (indices < span.stop)
    before = xp.zeros(indices.shape[0] + 1, dtype=np.int64)  # entries inside before each
    xp.cumsum(inside, out=before[1:])
    inside_offsets = before[offsets].astype(offsets.dtype)
    parts = []
    for kept, starts in ((inside, inside_offsets), (~inside, offsets - inside_offsets)):
        ids = indices[kept] if rename is None else rename[indices[kept]]
        parts.append((starts, ids, None if weights is None else weights[kept]))
    return tuple(parts)


@_required
def segment_index(backend: Backend, counts, total: int):
    """For each of ``total = sum(counts)`` slots, the index of the segment it falls in: the
    load balancer's search (every slot costs the same however skewed ``counts`` is)."""


def row_entries(backend: Backend, starts, degrees, total: int):
    """For the ``total = sum(degrees)`` entries of the rows that start at ``starts`` with
    ``degrees`` entries each: the index (into ``starts``) of each entry's row, and the entry's
    position (int64). The load balancer's expansion, as :func:`segment_index`."""
    xp = backend.xp
    segment = segment_index(backend, degrees, total)
    first = xp.cumsum(degrees) - degrees
    position = xp.arange(total, dtype=np.int64) + (starts.astype(np.int64) - first)[segment]
    return segment, position


@_required
def expand(backend: Backend, ids, starts, degrees, indices):
    """The entries of the rows ``ids`` of a CSR with ``indices`` (row ``ids[i]`` starts at
    ``starts[i]`` and holds ``degrees[i]`` entries), row after row: ``(src, dst, position)``,
    each entry's row id, its index (in the dtype this library indexes with fastest) and its
    position (an edge id)."""


@_required
def unique(backend: Backend, ids):
    """The distinct values of the integer array ``ids``, sorted."""


@_required
def reduce_runs(backend: Backend, values, first, reduce: str, segment_dtype):
    """The min (``reduce="min"``, skipping NaN: NaN only where every value of the run is) or
    sum (``"sum"``) of ``values`` over each run that starts where the bool array ``first`` is
    True (``first[0]`` is); ``segment_dtype`` holds a run's index."""


@_generic
def accelerated(backend: Backend, module: str, name: str):
    """The optional compiled (numba) kernel ``name`` of ``module``, or None (then the caller
    keeps its array path): None here; see the NumPy backend's."""
    return None
