"""NumPy or CuPy behind one interface: the only package that touches CuPy.

``base`` holds the :class:`Backend` protocol (an abstract base class with a docstring per
method) and the helpers its implementations share; ``numpy_backend`` and ``cupy_backend``
implement it (the second with the CUDA kernels of ``cuda``); ``select`` finds one by name or
by array; ``fused`` is the registry of kernels by (functor or operation, backend, direction);
``ops`` the array operations beyond the Backend's thin interface, each a named kernel there
(``ops.scatter_min(backend, ...)``). Code above this package asks a backend's methods, ``ops``
and ``capabilities``, never which library it has.
"""

from . import clock, fused, ops
from .base import (
    Backend,
    Capabilities,
    extreme,
    identity,
    read_together,
    row_positions,
    to_host,
    while_alive,
)
from .cuda import (
    BLOCK_SUM,
    C_TYPES,
    COMPARE_SWAP,
    LONG_ROW,
    STREAM_BLOCKS,
    WARP_ROW,
    c_type,
    compile_kernel,
    hub_pieces,
)
from .cupy_backend import CupyBackend
from .numpy_backend import NumpyBackend
from .select import (
    ENV_VAR,
    NAMES,
    SMALL_GRAPH_EDGES,
    backend_for,
    backend_of,
    choose,
    get_backend,
    gpu_count,
)

__all__ = [
    "BLOCK_SUM",
    "COMPARE_SWAP",
    "C_TYPES",
    "ENV_VAR",
    "LONG_ROW",
    "NAMES",
    "STREAM_BLOCKS",
    "WARP_ROW",
    "Backend",
    "Capabilities",
    "CupyBackend",
    "NumpyBackend",
    "backend_of",
    "c_type",
    "clock",
    "compile_kernel",
    "fused",
    "ops",
    "get_backend",
    "gpu_count",
    "hub_pieces",
    "extreme",
    "identity",
    "read_together",
    "row_positions",
    "to_host",
    "while_alive",
    "SMALL_GRAPH_EDGES",
    "backend_for",
    "choose",
]
