"""A NumPy backend that counts what a GPU would read to the host (``bspgraph.testing.host_reads``).

On a GPU every conversion of a device value to a Python one (``int``, ``float``, ``bool``,
``item``, ``tolist``, an index) waits for the queue and copies: a host read. NumPy makes them
free, so a superstep can grow reads that only a GPU run would show. Here the arrays are a
NumPy subclass, :class:`DeviceArray`, whose conversions are counted; a scalar that NumPy would
return (an element, a reduction) stays a 0-d DeviceArray, as on CuPy. The backend has a GPU's
capabilities (``costly_supersteps``), so the enactor takes the paths it takes on a GPU, and
what returns a host integer (``nonzero`` without a count; ``ops.masked_sum``, ``ops.sum_at``,
``ops.entries_in``, which convert a 0-d DeviceArray) counts one read. Arrays made by NumPy
directly (not through the backend's ``xp`` or methods) are not seen: the count is a floor.

Each array also belongs to a device, as on CuPy: an array is made on the device current (the
backend's :meth:`~CountingBackend.activate`; 0 outside any), or the backend's for ``asarray``.
An operation on an array of another device than the current one raises
:class:`CrossDeviceError`: CuPy would run it on the current GPU, reading the other's memory
unordered (or, without peer access, at an illegal address). So separate devices
(``devices=[0, 1, 2]``) check on the CPU that each GPU's work runs with its GPU current.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np

from .backend import Capabilities, NumpyBackend


class Reads:
    """The running count of host reads."""

    def __init__(self) -> None:
        self.count = 0

    def add(self) -> None:
        self.count += 1


class CrossDeviceError(RuntimeError):
    """An operation on an array of one device while another device is current."""


CURRENT = [0]  # the device current (CountingBackend.activate)


class DeviceArray(np.ndarray):
    """A NumPy array of one device (``home``) whose conversions to host values count a read
    in ``READS``; every operation on it checks that its device is the current one."""

    __array_priority__ = 100.0
    home: int  # its device (NumPy's ``device`` is "cpu")

    def __array_finalize__(self, obj) -> None:
        self.home = getattr(obj, "home", CURRENT[0])  # a view: its base's; new: current

    def __array_wrap__(self, array, context=None, return_scalar=False):
        return _made(array)  # a reduction's scalar stays 0-d

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _on_current(inputs, kwargs.get("out", ()), ufunc.__name__)
        plain = [_plain(a) for a in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(_plain(a) for a in kwargs["out"])
        result = getattr(ufunc, method)(*plain, **kwargs)
        if "out" in kwargs or result is None:
            return result if result is None else kwargs["out"][0]
        return tuple(_made(r) for r in result) if isinstance(result, tuple) else _made(result)

    def __array_function__(self, func, types, args, kwargs):
        _on_current(args, kwargs.values(), func.__name__)
        return super().__array_function__(func, types, args, kwargs)

    def __getitem__(self, key):
        if _gathers(key):  # a kernel (a view, a slice or an element is none)
            _on_current((self, key), (), "an index")
        if _selects(key):  # a GPU sizes the selection by a count it reads
            READS.add()
        value = super().__getitem__(key)
        return _made(value) if isinstance(value, np.generic) else value

    def __setitem__(self, key, value) -> None:
        _on_current((self, key, value), (), "an assignment")
        super().__setitem__(key, value)

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


def _made(value) -> DeviceArray:
    """A result of an operation: on the current device."""
    array = np.asarray(value).view(DeviceArray)
    array.home = CURRENT[0]
    return array


def _plain(value):
    return value.view(np.ndarray) if isinstance(value, DeviceArray) else value


def _on_current(args, more, what: str) -> None:
    """Raise CrossDeviceError if an array among ``args`` and ``more`` (or in their tuples and
    lists) is on another device than the current one."""
    for arg in (*args, *more):
        items = arg if isinstance(arg, tuple | list) else (arg,)
        for item in items:
            if isinstance(item, DeviceArray) and item.home != CURRENT[0]:
                raise CrossDeviceError(
                    f"{what} on an array of device {item.home} while device {CURRENT[0]} is current"
                )


def on_device(value: Any) -> Any:
    """``value`` with its arrays and NumPy scalars as DeviceArrays of the current device
    (tuples item by item)."""
    if (
        isinstance(value, np.ndarray)
        and not isinstance(value, DeviceArray)
        or isinstance(value, np.generic)
    ):
        return _made(value)
    if isinstance(value, tuple):
        return tuple(on_device(item) for item in value)
    return value


def _gathers(key) -> bool:
    """Whether indexing by ``key`` reads through an index array (a kernel, not a view)."""
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, np.ndarray | list) for k in keys)


def adopted(frontier, state=None):
    """``frontier`` with its ids or mask, and the arrays of ``state`` (a namespace), as
    DeviceArrays of the current device where a step's NumPy kernels made them plain arrays (a
    GPU's kernels make them on the part's GPU; a step may rebind a state array)."""
    state_names = [] if state is None else list(vars(state))
    for owner, names in ((frontier, ("_ids", "_mask")), (state, state_names)):
        for name in names:
            value = getattr(owner, name)
            if isinstance(value, np.ndarray) and not isinstance(value, DeviceArray):
                setattr(owner, name, on_device(value))
    return frontier


def counted_on_device(graph, frontier):
    """``frontier`` (a step's output, its size known on NumPy) with its size and its members'
    out-edges still on the device, as a GPU's kernels leave them: a list and its tally, or a
    mask and its count; what a producer knew beside them is kept. The enactor then reads that
    size, or bounds it, as it does on a GPU. ``Frontier.all`` (the device's own vertices,
    counted once per graph) stays as it is."""
    if not frontier.size_known or frontier.is_dense and frontier.mask is graph.context.owned:
        return frontier
    from .frontier import Frontier

    backend, degree = graph.backend, graph.cost_degrees()[0]
    if frontier.is_dense:
        where = {"mask": frontier.mask}
        count = backend.count(frontier.mask)
    else:
        where = {"ids": frontier.ids}
        count = XP.asarray(frontier.ids.shape[0])
    tally = XP.stack([XP.asarray(count, dtype=np.int64), backend.masked_total(degree, **where)])
    if frontier.is_dense:
        counted = Frontier.from_mask(graph, frontier.mask, counted=(tally, 0, 0))
    else:
        counted = Frontier.listed(graph, frontier.ids, tally)
    for name in ("passed", "passed_edges", "pulled_from", "owned_only"):
        setattr(counted, name, getattr(frontier, name))
    return counted


def stepping_as_a_gpu(step):
    """``step`` (a primitive's) with what it makes left as a GPU's kernels leave it: on the
    part's device (:func:`adopted`), its size counted there (:func:`counted_on_device`;
    a known-empty frontier's step runs no kernel)."""

    def stepped(graph, frontier, state, iteration):
        output = adopted(step(graph, frontier, state, iteration), state)
        idle = frontier.size_known and not len(frontier)
        return output if idle else counted_on_device(graph, output)

    return stepped


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


XP = DeviceNumpy()  # one, so that backends of one device are equal


class CountingBackend(NumpyBackend):
    """NumPy with a GPU's costs on device ``device``: the enactor's paths of a GPU (each
    device a GPU of its own), every host read counted."""

    capabilities: ClassVar[Capabilities] = dataclasses.replace(
        NumpyBackend.capabilities, costly_supersteps=True, virtual_devices=False
    )

    def __init__(self, device: int | None = 0) -> None:
        super().__init__(XP, device)

    def activate(self):
        return _current(self.device)

    def on_device(self, device: int) -> CountingBackend:
        return CountingBackend(device=device)

    def asarray(self, array, dtype=None):
        with _current(self.device):
            if isinstance(array, DeviceArray):  # no read: here already, or a peer copy
                if array.home != self.device:
                    array = _made(array.view(np.ndarray).copy())
                return array if dtype is None else array.astype(dtype, copy=False)
            return on_device(super().asarray(array, dtype))

    def count(self, mask):
        return on_device(np.int64(np.count_nonzero(mask)))

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
def _current(device: int) -> Iterator[None]:
    saved, CURRENT[0] = CURRENT[0], device
    try:
        yield
    finally:
        CURRENT[0] = saved


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
        if isinstance(array, DeviceArray):
            return backend.on_device(array.home)
        return backend_holding(array)

    replaced = {host_copy: to_host, backend_holding: backend_of}
    patched = [
        (module, name, value)
        for module_name, module in list(sys.modules.items())
        if module_name.split(".")[0] == "bspgraph" and module is not None
        for name, value in vars(module).items()
        if callable(value) and any(value is original for original in replaced)
    ]
    try:
        for module, name, value in patched:
            setattr(module, name, next(r for o, r in replaced.items() if o is value))
        yield
    finally:
        for module, name, value in patched:
            setattr(module, name, value)
