"""Backend reductions on NumPy against plain Python loops (the CuPy side: tests/test_gpu.py)."""

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given
from hypothesis import strategies as st
from strategies import examples

from bspgraph.backend import fused, get_backend, ops

HOST = get_backend("numpy")


@st.composite
def ragged_rows(draw):
    """A CSR (offsets, indices) over 0..9 with empty rows, values and per-entry weights."""
    degrees = draw(st.lists(st.integers(0, 6), min_size=1, max_size=8))
    offsets = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)
    total = int(offsets[-1])
    indices = np.array(draw(st.lists(st.integers(0, 9), min_size=total, max_size=total)), np.int32)
    values = np.array(draw(st.lists(st.integers(-20, 20), min_size=10, max_size=10)), np.float64)
    weights = np.array(
        draw(st.lists(st.integers(1, 5), min_size=total, max_size=total)), np.float64
    )
    return offsets, indices, values, weights


@examples(60)
@given(ragged_rows(), st.sampled_from(["min", "sum"]), st.booleans())
def test_gather_reduce_is_a_semiring_row_reduction(case, reduce, weighted):
    offsets, indices, values, weights = case
    weights = weights if weighted else None
    got = ops.gather_reduce(HOST, values, offsets, indices, reduce, weights=weights)
    for row in range(len(offsets) - 1):
        terms = []
        for e in range(offsets[row], offsets[row + 1]):
            term = values[indices[e]]
            if weights is not None:
                term = term + weights[e] if reduce == "min" else term * weights[e]
            terms.append(term)
        expected = min(terms, default=np.inf) if reduce == "min" else sum(terms)
        assert got[row] == expected


@examples(30)
@given(ragged_rows())
def test_spmv_reads_missing_weights_as_ones(case):
    offsets, indices, values, weights = case
    rows = len(offsets) - 1
    ones = np.ones_like(weights)
    np.testing.assert_array_equal(
        ops.spmv(HOST, offsets, indices, None, values, rows),
        ops.spmv(HOST, offsets, indices, ones, values, rows),
    )
    np.testing.assert_array_equal(
        ops.spmv(HOST, offsets, indices, weights, values, rows),
        ops.gather_reduce(HOST, values, offsets, indices, "sum", weights=weights),
    )


@examples(40)
@given(
    st.lists(st.tuples(st.integers(0, 50), st.sampled_from([0, 1, 2, 3, np.inf])), max_size=30),
    st.sampled_from([np.int32, np.int64, np.float64]),
)
def test_total_below_and_replace_match_a_loop(pairs, key_dtype):
    """``total_below`` sums the values whose key is under the bound (a traversal's reached
    vertices' degrees); ``replace`` swaps one value for another in place (the unset sentinel)."""
    values = np.array([value for value, _ in pairs], dtype=np.int64)
    sentinel = np.inf if key_dtype is np.float64 else np.iinfo(key_dtype).max
    keys = np.array([sentinel if key == np.inf else key for _, key in pairs], dtype=key_dtype)
    expected = sum(int(value) for value, key in zip(values, keys) if key < sentinel)
    assert ops.total_below(HOST, values, keys, sentinel) == expected
    replaced = keys.copy()
    ops.replace(HOST, replaced, sentinel, -1)
    assert replaced.tolist() == [-1 if key == sentinel else key for key in keys.tolist()]


@examples(30)
@given(st.lists(st.integers(0, 19), max_size=40))
def test_mask_of_marks_each_id(ids):
    mask = ops.mask_of(HOST, np.array(ids, dtype=np.int32), 20)
    assert mask.dtype == bool
    assert np.flatnonzero(mask).tolist() == sorted(set(ids))


@examples(40)
@given(
    st.lists(st.sampled_from([0.0, 1.0, 2.5, -1.0, np.inf, np.nan]), max_size=12),
    st.data(),
)
def test_one_value_says_whether_the_set_entries_hold_one_value(values, data):
    """ops.one_value: whether the entries at a mask (or at ids) are all one value (not where
    none is set or one is NaN), that value, and how many of them lie in a range; the same of
    their changes since a baseline."""
    n = len(values)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    start = data.draw(st.integers(0, n))
    kept = slice(start, data.draw(st.integers(start, n)))
    for dtype in (np.float64, np.int32):
        column = np.array(values, dtype=np.float64)
        if dtype is np.int32:
            column = np.nan_to_num(column, nan=7, posinf=9).astype(np.int32)
        for since in (None, np.arange(n, dtype=dtype) % 2):  # the values, or their changes
            changes = column if since is None else column - since
            chosen = changes[mask]
            one = chosen.size > 0 and not np.isnan(chosen).any() and (chosen == chosen[0]).all()
            expected = [int(mask[kept].sum()), int(one)]
            for index in ({"mask": mask}, {"ids": np.flatnonzero(mask).astype(np.int32)}):
                pair, value = ops.one_value(HOST, column, kept=kept, since=since, **index)
                assert pair.tolist() == expected
                assert value.dtype == column.dtype and value.shape == (1,)
                if one:
                    assert value[0] == chosen[0]


@examples(40)
@given(st.lists(st.integers(0, 3), max_size=3000), st.data())
def test_common_value_counts_the_set_entries_that_hold_another(values, data):
    """ops.common_value: a value the set entries hold (the commonest where one holds most of
    them) and how many set entries hold another; the dtype's largest where none is set."""
    n = len(values)
    column = np.array(values, dtype=np.int32)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    count, value = ops.common_value(HOST, column, mask)
    assert value.dtype == column.dtype and value.shape == (1,)
    if not mask.any():
        assert int(count) == 0 and value[0] == np.iinfo(np.int32).max
        return
    assert value[0] in column[mask]
    assert int(count) == int((column[mask] != value[0]).sum())
    mostly = np.where(np.arange(n) % 50 == 0, column, 2)  # one value but for every 50th
    if (mostly[mask] == 2).mean() > 0.9 and mask[::3].sum() > 30:
        assert ops.common_value(HOST, mostly, mask)[1][0] == 2


@given(
    st.lists(st.lists(st.integers(0, 99), max_size=30), max_size=40),
    st.sampled_from([np.int32, np.int64]),
)
def test_unique_is_numpy_unique_for_sorted_runs_and_any_order(runs, dtype):
    """ops.unique: the distinct ids, ascending, whether they come as a few ascending runs (a
    union of frontiers: merged) or in any order (sorted)."""
    ids = np.array([i for run in runs for i in sorted(run)], dtype=dtype)
    for order in (ids, ids[::-1].copy()):
        got = ops.unique(HOST, order)
        assert got.dtype == dtype and got.tolist() == np.unique(order).tolist()


@examples(30)
@given(st.lists(st.booleans(), min_size=1, max_size=20), st.data())
def test_where_at_is_where_then_gather(mask, data):
    values = np.arange(len(mask), dtype=np.float32) * 1.5
    index = np.array(data.draw(st.lists(st.integers(0, len(mask) - 1), max_size=30)), np.int32)
    got = ops.where_at(HOST, np.array(mask), values, np.inf, index)
    assert got.tolist() == [values[i] if mask[i] else np.inf for i in index.tolist()]


@examples(30)
@given(st.lists(st.booleans(), max_size=20), st.data())
def test_within_keeps_the_range_only(mask, data):
    start = data.draw(st.integers(0, len(mask)))
    stop = data.draw(st.integers(start, len(mask)))
    got = ops.within(HOST, np.array(mask, dtype=bool), slice(start, stop))
    assert got.tolist() == [start <= i < stop and m for i, m in enumerate(mask)]


@examples(30)
@given(ragged_rows(), st.sampled_from(["min", "sum"]), st.data())
def test_reductions_over_some_rows_pick_those_rows(case, reduce, data):
    """``rows=`` gives the rows' results in the order asked, for gather_reduce and spmv."""
    offsets, indices, values, weights = case
    count = len(offsets) - 1
    rows = np.array(data.draw(st.lists(st.integers(0, count - 1), max_size=count)), np.int64)
    whole = ops.gather_reduce(HOST, values, offsets, indices, reduce, weights=weights)
    picked = ops.gather_reduce(HOST, values, offsets, indices, reduce, weights=weights, rows=rows)
    np.testing.assert_array_equal(picked, whole[rows])
    product = ops.spmv(HOST, offsets, indices, weights, values, count)
    np.testing.assert_array_equal(
        ops.spmv(HOST, offsets, indices, weights, values, count, rows), product[rows]
    )


@pytest.mark.parametrize("share", [1, 100])
def test_lane_sums_are_the_matrix_times_the_lanes(monkeypatch, share):
    """NumPy's lane products against a dense product: every row, some rows (whole-matrix and
    row-copy paths), and value rows through positions."""
    monkeypatch.setattr(ops, "ROWS_SHARE", share)
    rng = np.random.default_rng(2)
    dense = (rng.random((40, 30)) < 0.2).astype(np.float64)
    matrix = scipy.sparse.csr_matrix(dense)
    offsets, indices = matrix.indptr, matrix.indices
    values = rng.random((30, 5))
    backend = HOST
    np.testing.assert_allclose(ops.lane_sums(backend, offsets, indices, values), dense @ values)
    rows = np.array([3, 0, 17, 39])
    np.testing.assert_allclose(
        ops.lane_sums(backend, offsets, indices, values, rows=rows), (dense @ values)[rows]
    )
    position = np.full(30, -1, dtype=np.int32)
    position[[2, 7, 11]] = [0, 1, 2]
    kept = np.zeros_like(values)
    kept[[2, 7, 11]] = values[:3]
    np.testing.assert_allclose(
        ops.lane_sums(backend, offsets, indices, values[:3], position=position), dense @ kept
    )


REDUCED_DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]


@examples(60)
@given(
    st.lists(st.integers(-1000, 1000), max_size=40),
    st.sampled_from(REDUCED_DTYPES),
    st.sampled_from([(-1,), (2, -1)]),
)
def test_whole_array_reductions_match_a_loop(numbers, dtype, shape):
    """total (int64 or float64), count, any, all, largest and smallest over every entry, of
    any shape; largest and smallest of nothing raise, as NumPy's max and min."""
    if shape == (2, -1) and len(numbers) % 2:
        numbers = numbers[1:]
    values = np.array(numbers, dtype=dtype).reshape(shape)
    flat = values.reshape(-1).tolist()
    total = HOST.total(values)
    assert np.dtype(type(total)) == (np.float64 if values.dtype.kind == "f" else np.int64)
    assert total == sum(flat)
    mask = values > 0
    assert int(HOST.count(mask)) == sum(1 for x in flat if x > 0)
    assert bool(HOST.any(mask)) == any(x > 0 for x in flat)
    assert bool(HOST.all(mask)) == all(x > 0 for x in flat)
    if flat:
        assert HOST.largest(values) == max(flat)
        assert HOST.smallest(values) == min(flat)
        assert HOST.largest(values).dtype == values.dtype
    else:
        for extreme in (HOST.largest, HOST.smallest):
            with pytest.raises(ValueError):
                extreme(values)


def test_whole_array_reductions_of_nan():
    """A NaN makes the sum, the largest and the smallest NaN (as NumPy's sum, max and min)."""
    values = np.array([1.0, np.nan, -3.0], dtype=np.float32)
    assert np.isnan(HOST.total(values))
    assert np.isnan(HOST.largest(values)) and np.isnan(HOST.smallest(values))
    assert HOST.total(values[[0, 2]]) == -2.0


@examples(30)
@given(st.lists(st.integers(0, 9), max_size=40), st.sampled_from([np.int32, np.int64]))
def test_tally_counts_each_id(ids, dtype):
    counts = ops.tally(HOST, np.array(ids, dtype=dtype), 10)
    assert counts.dtype == np.int64
    assert counts.tolist() == [ids.count(k) for k in range(10)]


def split_by_loop(offsets, indices, weights, span, rename):
    """:func:`ops.split_rows` row by row: each side's offsets, renamed indices, weights."""
    sides = [([0], [], []), ([0], [], [])]
    for row in range(len(offsets) - 1):
        for e in range(offsets[row], offsets[row + 1]):
            starts, ids, weighs = sides[0 if span.start <= indices[e] < span.stop else 1]
            ids.append(indices[e] if rename is None else rename[indices[e]])
            weighs.append(None if weights is None else weights[e])
        for starts, ids, _ in sides:
            starts.append(len(ids))
    return sides


@examples(60)
@given(ragged_rows(), st.data())
def test_split_rows_keeps_each_row_s_entries_in_order_on_their_side(case, data):
    offsets, indices, _, weights = case
    start = data.draw(st.integers(0, 10))
    span = slice(start, data.draw(st.integers(start, 10)))
    rename = data.draw(st.sampled_from([None, np.arange(10, dtype=np.int32)[::-1].copy()]))
    weights = data.draw(st.sampled_from([None, weights]))
    got = ops.split_rows(HOST, offsets, indices, weights, span, rename)
    for (starts, ids, weighs), (want_starts, want_ids, want_weights) in zip(
        got, split_by_loop(offsets, indices, weights, span, rename), strict=True
    ):
        assert starts.dtype == offsets.dtype and ids.dtype == indices.dtype
        assert starts.tolist() == want_starts and ids.tolist() == want_ids
        assert weighs is None if weights is None else weighs.tolist() == want_weights


REQUIRED = ["scatter_min", "scatter_max", "scatter_add", "spmv", "csr_rows", "reduce_rows"]
REQUIRED += ["total_below", "segment_index", "expand", "unique", "reduce_runs"]


@pytest.mark.parametrize("name", REQUIRED)
def test_each_backend_registers_the_operations_without_a_generic_body(name):
    for backend in ("numpy", "cupy"):
        assert fused.lookup(name, backend, "op") is not None


def test_an_operation_without_a_kernel_runs_its_generic_body_or_raises():
    other = SimpleNamespace(name="other")  # a backend that registered nothing
    assert ops.greater(other, np.arange(3), 1).tolist() == [False, False, True]
    with pytest.raises(NotImplementedError, match="ops.unique: no kernel registered for 'other'"):
        ops.unique(other, np.arange(3))
