"""The primitives: each an operator pipeline plus its multi-device contract."""

from .bfs import BFS, BFSResult, bfs
from .sssp import SSSP, SSSPResult, sssp

__all__ = ["BFS", "BFSResult", "SSSP", "SSSPResult", "bfs", "sssp"]
