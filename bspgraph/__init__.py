"""bspgraph: Gunrock-style frontier operators and a BSP enactor on NumPy and CuPy."""

from . import frontier
from .graph import generators
from .backend import get_backend
from .enactor import Primitive, State, Stats, enact
from .exceptions import BspgraphError, CommunicationError, DeviceError, GraphFormatError
from .graph import Graph, load_npz, read_edgelist, read_mtx, save_npz
from .primitives import bfs, sssp

__all__ = [
    "BspgraphError", "CommunicationError", "DeviceError", "Graph", "GraphFormatError",
    "Primitive", "State", "Stats", "bfs", "enact", "frontier", "generators", "get_backend",
    "load_npz", "read_edgelist", "read_mtx", "save_npz", "sssp",
]  # fmt: skip
__version__ = "0.1.0"
