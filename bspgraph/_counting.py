"""A NumPy backend that counts what a GPU would read to the host (``bspgraph.testing.host_reads``).

On a GPU every conversion of a device value to a Python one (``int``, ``float``, ``bool``,
``item``, ``tolist``, an index) waits for the queue and copies: a host read. NumPy makes them
free, so a superstep can grow reads that only a GPU run would show. Here the arrays are a
NumPy subclass, :class:`DeviceArray`, whose conversions are counted; a scalar that NumPy would
return (an element, a reduction) stays a 0-d DeviceArray, as on CuPy. The backend has a GPU's
traits (``costly_supersteps``), so the enactor takes the paths it takes on a GPU, and its
methods that return a host integer (``masked_sum``, ``sum_at``, ``entries_in``, ``nonzero``
without a count) count one read. Arrays made by NumPy directly (not through the backend's
``xp`` or methods) are not seen: the count is a floor.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np

from .backend import NumpyBackend


class Reads:
    """The running count of host reads."""

    def __init__(self) -> None:
        self.count = 0

    def add(self) -> None:
        self.count += 1


class DeviceArray(np.ndarray):
    """A NumPy array whose conversions to host values count a read in ``READS``."""

    __array_priority__ = 100.0

    def __array_wrap__(self, array, context=None, return_scalar=False):
        return np.asarray(array).view(DeviceArray)  # a reduction's scalar stays 0-d

    def __getitem__(self, key):
        if _selects(key):  # a GPU sizes the selection by a count it reads
            READS.add()
        value = super().__getitem__(key)
        return np.asarray(value).view(DeviceArray) if isinstance(value, np.generic) else value

    def _host(self) -> np.ndarray:
        READS.add()
        return self.view(np.ndarray)

    def __int__(self) -> int:
        return int(self._host())

    def __index__(self) -> int:
        return self._host().__index__()

    def __float__(self) -> float:
        return float(self._host())

    def __bool__(self) -> bool:
        return bool(self._host())

    def item(self, *args):
        return self._host().item(*args)

    def tolist(self):
        return self._host().tolist()


READS = Reads()


def on_device(value: Any) -> Any:
    """``value`` with its arrays and NumPy scalars as DeviceArrays (tuples item by item)."""
    if isinstance(value, np.ndarray) and not isinstance(value, DeviceArray):
        return value.view(DeviceArray)
    if isinstance(value, np.generic):
        return np.asarray(value).view(DeviceArray)
    if isinstance(value, tuple):
        return tuple(on_device(item) for item in value)
    return value


def _selects(key) -> bool:
    """Whether indexing by ``key`` selects by a bool array (a compaction)."""
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, np.ndarray) and k.dtype == bool and k.ndim > 0 for k in keys)


SIZED_BY_VALUES = {"flatnonzero", "nonzero", "argwhere", "unique", "compress", "extract"}


class DeviceNumpy:
    """``numpy`` whose functions return DeviceArrays (the backend's ``xp``); those whose
    output's size depends on the values (a compaction, ``repeat`` by counts) count a read, as
    a GPU reads that size."""

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(np, name)
        if not callable(attribute) or isinstance(attribute, type):
            return attribute  # dtypes, constants, submodules

        def on_device_call(*args, **kwargs):
            if name in SIZED_BY_VALUES or (name == "repeat" and np.ndim(args[1]) > 0):
                READS.add()
            return on_device(attribute(*args, **kwargs))

        return on_device_call


class CountingBackend(NumpyBackend):
    """NumPy with a GPU's costs: the enactor's paths of a GPU, every host read counted."""

    costly_supersteps: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__(DeviceNumpy())

    def asarray(self, array, dtype=None):
        if isinstance(array, DeviceArray):  # already here: no read
            return array if dtype is None else array.astype(dtype, copy=False)
        return on_device(super().asarray(array, dtype))

    def count(self, mask):
        return on_device(np.int64(np.count_nonzero(mask)))

    def masked_sum(self, values, mask) -> int:
        READS.add()
        return int(np.asarray(values)[np.asarray(mask)].sum(dtype=np.int64))

    def sum_at(self, values, ids) -> int:
        READS.add()
        return int(np.asarray(values).take(np.asarray(ids)).sum(dtype=np.int64))

    def entries_in(self, offsets, rows) -> int:
        READS.add()
        return super().entries_in(np.asarray(offsets), np.asarray(rows))

    def masked_total(self, values, mask=None, ids=None):
        return on_device(super().masked_total(values, mask, ids))  # no read: stays 0-d

    def read(self, arrays: list) -> list[list[int]]:
        READS.add()  # one copy of them all
        return [np.asarray(array).ravel().tolist() for array in arrays]

    def nonzero(self, mask, dtype, count: int | None = None):
        if count is None:  # a GPU sizes its output by a count it reads
            READS.add()
        return on_device(np.flatnonzero(np.asarray(mask)).astype(dtype, copy=False))


@contextlib.contextmanager
def counting(backend: CountingBackend) -> Iterator[None]:
    """While it lasts, ``to_host`` of a DeviceArray counts a read, and ``backend_of`` a
    DeviceArray is ``backend``: both replaced in every loaded bspgraph module that imported
    them (restored after)."""
    from .backend import base, select

    host_copy, backend_holding = base.to_host, select.backend_of

    def to_host(array):
        if isinstance(array, DeviceArray):
            READS.add()
            return np.array(array.view(np.ndarray))
        return host_copy(array)

    def backend_of(array):
        return backend if isinstance(array, DeviceArray) else backend_holding(array)

    replaced = {host_copy: to_host, backend_holding: backend_of}
    patched = [(module, name, value)
               for module_name, module in list(sys.modules.items())
               if module_name.split(".")[0] == "bspgraph" and module is not None
               for name, value in vars(module).items()
               if callable(value) and any(value is original for original in replaced)]  # fmt: skip
    try:
        for module, name, value in patched:
            setattr(module, name, next(r for o, r in replaced.items() if o is value))
        yield
    finally:
        for module, name, value in patched:
            setattr(module, name, value)
