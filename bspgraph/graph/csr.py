"""Compressed sparse rows: the CSR arrays, their index dtypes, and the operations on them alone."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backend import clock, ops

INT32_MAX = np.iinfo(np.int32).max


def index_dtype(count: int) -> np.dtype:
    """int32 while ``count`` fits in it, int64 beyond."""
    return np.dtype(np.int32) if count <= INT32_MAX else np.dtype(np.int64)


@dataclass(frozen=True)
class Summary:
    """What building a Graph did to its input edges."""

    vertices: int
    edges: int  # stored directed edges (an undirected edge counts twice, a self-loop once)
    directed: bool
    duplicates_merged: int
    self_loops: int  # self-loop entries in the input, duplicates included
    self_loops_dropped: int


class CSR:
    """One direction of adjacency: ``offsets`` (V+1), ``indices`` (E), ``weights`` (E or None)."""

    __slots__ = ("offsets", "indices", "weights", "edge_ids", "_rows")

    def __init__(self, offsets, indices, weights=None, edge_ids=None):
        self.offsets, self.indices, self.weights, self.edge_ids = (
            offsets,
            indices,
            weights,
            edge_ids,
        )
        self._rows = None

    def rows(self, backend):
        """The row (source) of every edge, aligned with ``indices``; computed once."""
        if self._rows is None:
            with clock.paying("prepare"):
                degrees = backend.xp.diff(self.offsets)
                self._rows = ops.segment_index(backend, degrees, int(self.indices.shape[0])).astype(
                    self.indices.dtype, copy=False
                )
        return self._rows


def csr_of_sorted(src, dst, weight, num_vertices: int, backend) -> CSR:
    """CSR from edges sorted by (src, dst)."""
    xp = backend.xp
    ids = index_dtype(num_vertices)
    offsets_dtype = index_dtype(int(dst.size))
    counts = ops.tally(backend, src, num_vertices)
    offsets = xp.zeros(num_vertices + 1, dtype=offsets_dtype)
    offsets[1:] = xp.cumsum(counts)
    return CSR(offsets, dst.astype(ids), weight)


def transpose(csr: CSR, num_vertices: int, backend) -> CSR:
    """In-edges of ``csr``: rows are destinations; ``edge_ids`` map back to forward positions."""
    xp = backend.xp
    counts = xp.diff(csr.offsets)
    src = xp.repeat(xp.arange(num_vertices, dtype=csr.indices.dtype), counts.astype(np.int64))
    order = xp.argsort(csr.indices, kind="stable")  # stable: sources stay sorted within a row
    rows = csr.indices[order].astype(np.int64)
    reverse = csr_of_sorted(rows, src[order], None, num_vertices, backend)
    weights = None if csr.weights is None else csr.weights[order]
    return CSR(reverse.offsets, reverse.indices, weights, order.astype(csr.offsets.dtype))
