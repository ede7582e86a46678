"""Which backend: by name, $BSPGRAPH_BACKEND, or the array an input lives in."""

from __future__ import annotations

import functools
import os

import numpy as np

from ..exceptions import DeviceError
from .base import Backend
from .cupy_backend import CupyBackend
from .numpy_backend import NumpyBackend

NAMES = ("numpy", "cupy")
ENV_VAR = "BSPGRAPH_BACKEND"


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
        return NumpyBackend(np)
    cupy = _import_cupy(required=True)
    count = gpu_count()
    device = 0 if device is None else int(device)
    if not 0 <= device < count:
        raise DeviceError(f"backend 'cupy': GPU {device} asked for, {count} usable")
    return CupyBackend(cupy, device)


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
