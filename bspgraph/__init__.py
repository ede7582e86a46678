"""bspgraph: Gunrock-style frontier operators and a BSP enactor on NumPy and CuPy."""

from . import comm, frontier, partitioners, testing
from .backend import get_backend
from .enactor import Cluster, Primitive, Scalar, State, Stats, cluster, combiners, enact
from .exceptions import (
    BspgraphError,
    CommunicationError,
    ContractError,
    ConvergenceError,
    DeviceError,
    DistanceOverflow,
    GraphFormatError,
    PathCountOverflow,
    WorkerError,
)
from .graph import Graph, generators, load_npz, read_edgelist, read_mtx, save_npz
from .graph.write import write_mtx
from .primitives import (
    betweenness_centrality,
    bfs,
    closeness_centrality,
    connected_components,
    core_number,
    eigenvector_centrality,
    harmonic_centrality,
    hits,
    katz_centrality,
    pagerank,
    pagerank_from,
    sssp,
    strongly_connected_components,
    triangle_count,
)
from .warmup import warmup

__all__ = [
    "BspgraphError",
    "Cluster",
    "CommunicationError",
    "ContractError",
    "ConvergenceError",
    "DeviceError",
    "DistanceOverflow",
    "Graph",
    "GraphFormatError",
    "PathCountOverflow",
    "Primitive",
    "Scalar",
    "State",
    "Stats",
    "WorkerError",
    "betweenness_centrality",
    "bfs",
    "cluster",
    "combiners",
    "comm",
    "connected_components",
    "core_number",
    "enact",
    "frontier",
    "generators",
    "get_backend",
    "load_npz",
    "pagerank",
    "partitioners",
    "read_edgelist",
    "read_mtx",
    "save_npz",
    "sssp",
    "testing",
    "triangle_count",
    "warmup",
    "write_mtx",
]
__all__ += ["eigenvector_centrality", "hits", "katz_centrality", "pagerank_from"]
__all__ += ["closeness_centrality", "harmonic_centrality", "strongly_connected_components"]
__version__ = "0.1.0"
