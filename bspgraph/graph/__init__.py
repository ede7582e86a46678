"""Graphs in CSR: the Graph class, file readers and writers, and generators."""

from . import generators
from .graph import CSR, Graph, Summary
from .io import load_npz, read_edgelist, read_mtx, save_npz
from .write import write_mtx

__all__ = [
    "CSR",
    "Graph",
    "Summary",
    "generators",
    "load_npz",
    "read_edgelist",
    "read_mtx",
    "save_npz",
    "write_mtx",
]
