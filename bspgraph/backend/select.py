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

# backend=None runs a graph held on the host with fewer edges (stored, directed) than this on
# NumPy even where a GPU is usable: there a GPU call is bound by its launches and host reads,
# not by the edges. Measured with `python -m benchmarks.crossover` on an H100 (whole calls of a
# host graph, benchmarks/data/crossover-h100.txt): CuPy first wins at rmat12 (97k edges) for
# SSSP, rmat14 (427k) for PageRank, rmat15 (884k) for BFS and BC, past rmat16 (1.8M) for CC;
# between rmat14 and rmat15 the most primitives are on the faster side.
SMALL_GRAPH_EDGES = 1 << 19


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


def choose(name: str | Backend | None, graph, *, by_size: bool = True) -> tuple[str | Backend, str]:
    """Which backend a run of ``graph`` takes for ``backend=name``, and why (a sentence):

    - ``name`` given (a name or a Backend): that one;
    - else $BSPGRAPH_BACKEND when set;
    - else the graph's own backend when the graph lives on a device (a CuPy graph stays there);
    - else (a graph on the host) NumPy when no GPU is usable, or when the graph has fewer
      than SMALL_GRAPH_EDGES edges (a GPU call would be launch-bound); CuPy otherwise.

    Without ``by_size`` (several devices) the graph is not looked at: CuPy when a GPU is
    usable. Returns the name (or the Backend given, or the graph's own) to pass to
    :func:`get_backend`, and the reason.
    """
    if isinstance(name, Backend):
        return name, f"backend={name.name!r} given"
    if name:
        return name, f"backend={name!r} given"
    if os.environ.get(ENV_VAR):
        return os.environ[ENV_VAR], f"${ENV_VAR}={os.environ[ENV_VAR]}"
    if not by_size:
        return ("cupy", "a GPU is usable") if gpu_count() else ("numpy", "no GPU usable")
    own = getattr(graph, "backend", None)
    if (
        own is not None and not own.capabilities.on_host
    ):  # the Backend itself: its device, not device 0
        return own, f"the graph lives on {own.name} (backend=None keeps it there)"
    edges = int(graph.num_edges)
    if gpu_count() == 0:
        return "numpy", "no GPU usable"
    if edges < SMALL_GRAPH_EDGES:
        return "numpy", (
            f"a host graph of {edges:,} edges < SMALL_GRAPH_EDGES = "
            f"{SMALL_GRAPH_EDGES:,}: a GPU call would be launch-bound"
        )
    return "cupy", f"a host graph of {edges:,} edges >= SMALL_GRAPH_EDGES = {SMALL_GRAPH_EDGES:,}"


def backend_for(name: str | Backend | None, graph, device: int | None = None) -> Backend:
    """The backend :func:`choose` picks for a run of ``graph`` (on ``device``), as
    :func:`get_backend` makes it; what primitives that size their work by the device (batched
    searches) ask, so that they see the enactor's choice."""
    return get_backend(choose(name, graph)[0], device)


def get_backend(name: str | Backend | None = None, device: int | None = None) -> Backend:
    """The backend called ``name`` ("numpy", "cupy"), or $BSPGRAPH_BACKEND, or CuPy when a GPU is
    usable, on GPU ``device`` (None: CuPy's current device, which a transport sets to its
    rank's GPU). Without a graph to go by: a run of a graph (``enact``) chooses by its size as
    well (:func:`choose`).

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
    device = cupy.cuda.runtime.getDevice() if device is None else int(device)  # CuPy's current
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
    from .cuda import time_compilation, use_precompiled_headers

    time_compilation(cupy)  # kernels built inside a call are reported as its compile time
    use_precompiled_headers(cupy)
    return cupy
