"""The NCCL transport's wire format, on NumPy: a packed buffer unpacks to the same Updates.
(The transport itself runs in tests/comm/test_mpi.py::test_gpu_transports_on_two_gpus.)"""

import numpy as np

from bspgraph.comm import Update
from bspgraph.comm.nccl import ALIGN, _header, _pack, _sizes, _unpack


def test_packed_updates_unpack_to_the_same_updates():
    updates = [
        Update(
            np.array([3, 1, 4], np.int32),
            {"depth": np.array([1, 2, 3], np.int32), "parent": np.array([0, 0, 7], np.int32)},
        ),  # fmt: skip
        Update(
            np.zeros(0, np.int32), {"depth": np.zeros(0, np.int32), "parent": np.zeros(0, np.int32)}
        ),  # fmt: skip
        Update(
            np.array([9], np.int64), {"mass": np.array([[0.5, 0.25]]), "flag": np.array([True])}
        ),
    ]
    buffer = _pack(np, updates)
    headers = [_header(u) for u in updates]
    assert buffer.dtype == np.uint8 and buffer.size == sum(_sizes(headers))
    assert all(size % ALIGN == 0 for size in _sizes(headers))
    for before, after in zip(updates, _unpack(np, buffer, headers)):
        np.testing.assert_array_equal(after.ids, before.ids)
        assert after.ids.dtype == before.ids.dtype and list(after.values) == list(before.values)
        for name, column in before.values.items():
            np.testing.assert_array_equal(after.values[name], column)
            assert after.values[name].dtype == column.dtype


def test_nothing_to_send_is_an_empty_buffer():
    assert _pack(np, []).size == 0 and _unpack(np, np.empty(0, np.uint8), []) == []
