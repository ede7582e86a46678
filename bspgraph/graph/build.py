"""Edge arrays to CSR on any backend: validate, symmetrise, merge duplicates, sort, count."""

from __future__ import annotations

import numpy as np

from ..backend import Backend
from .graph import CSR, Graph, Summary, index_dtype

MAX_VERTICES = 3_000_000_000  # the merge key src * n + dst must fit in int64


def build_graph(src, dst, weight, *, num_vertices, directed, duplicates, self_loops,
                backend: Backend) -> Graph:  # fmt: skip
    """See :meth:`Graph.from_edges`."""
    xp = backend.xp
    if duplicates not in ("min", "sum"):
        raise ValueError(f"Graph.from_edges(duplicates={duplicates!r}): expected 'min' or 'sum'")
    src, dst = backend.asarray(src), backend.asarray(dst)
    if src.ndim != 1 or src.shape != dst.shape:
        raise ValueError(
            f"Graph.from_edges: src and dst must be 1-D of one length, got {src.shape} and {dst.shape}"
        )
    for name, ids in (("src", src), ("dst", dst)):
        if ids.size and ids.dtype.kind not in "iu":
            if ids.dtype.kind == "f" and bool(xp.all(xp.isfinite(ids) & (ids == xp.floor(ids)))):
                continue
            raise ValueError(
                f"Graph.from_edges: {name} ids must be integers, got dtype {ids.dtype}"
            )
    src, dst = src.astype(np.int64, copy=False), dst.astype(np.int64, copy=False)
    if weight is not None:
        weight = backend.asarray(weight)
        if weight.shape != src.shape:
            raise ValueError(
                f"Graph.from_edges: weight has shape {weight.shape}, expected {src.shape}"
            )
        if weight.dtype.kind not in "iufb":
            raise ValueError(f"Graph.from_edges: weights must be numbers, got dtype {weight.dtype}")
        if weight.dtype != np.float32:
            weight = weight.astype(np.float64)

    num_vertices = _check_ids(src, dst, num_vertices, xp)
    loops = src == dst
    self_loop_count = int(loops.sum())
    dropped = 0
    if not self_loops and self_loop_count:
        keep = ~loops
        src, dst = src[keep], dst[keep]
        weight = None if weight is None else weight[keep]
        dropped, self_loop_count = self_loop_count, 0
    del loops
    if num_vertices > MAX_VERTICES:
        raise ValueError(f"Graph.from_edges: {num_vertices} vertices; at most 3e9 supported")
    key, weight = _edge_keys(src, dst, weight, max(num_vertices, 1), directed, xp)
    del src, dst  # from here on only the keys: an edge's int64 once, not its ids twice
    order = xp.argsort(key, kind="stable")
    key = key[order]
    if weight is not None:
        weight = weight[order]
    del order
    first = xp.ones(key.shape, dtype=bool)
    first[1:] = key[1:] != key[:-1]
    if directed:
        merged = int(key.size - int(first.sum()))
    else:  # count each merged undirected edge once: in its src <= dst direction
        merged = int(((~first) & (key // max(num_vertices, 1) <= key % max(num_vertices, 1))).sum())
    if weight is not None and merged:  # the min (NaN-skipping) or sum of each run of copies
        weight = backend.reduce_runs(weight, first, duplicates, index_dtype(int(first.size)))
    elif weight is not None:
        weight = weight[first]
    key = key[first]
    del first
    src, dst = key // max(num_vertices, 1), key % max(num_vertices, 1)
    del key
    forward = _csr(src, dst, weight, num_vertices, xp)
    summary = Summary(num_vertices, int(dst.size), bool(directed), merged, self_loop_count, dropped)
    return Graph(forward, num_vertices, directed=directed, backend=backend, summary=summary)


def _check_ids(src, dst, num_vertices, xp) -> int:
    if num_vertices is not None and (
        isinstance(num_vertices, bool)
        or not isinstance(num_vertices, (int, np.integer))
        or num_vertices < 0
    ):
        raise ValueError(
            f"Graph.from_edges(num_vertices={num_vertices!r}): expected an integer >= 0"
        )
    if src.size == 0:
        return int(num_vertices or 0)
    low = int(min(int(src.min()), int(dst.min())))
    high = int(max(int(src.max()), int(dst.max())))
    if low < 0:
        index = int(xp.nonzero((src < 0) | (dst < 0))[0][0])
        bad = int(src[index]) if int(src[index]) < 0 else int(dst[index])
        raise ValueError(f"Graph.from_edges: edge {index} has negative vertex id {bad}")
    if num_vertices is None:
        return high + 1
    num_vertices = int(num_vertices)
    if high >= num_vertices:
        index = int(xp.nonzero((src >= num_vertices) | (dst >= num_vertices))[0][0])
        bad = int(src[index]) if int(src[index]) >= num_vertices else int(dst[index])
        raise ValueError(
            f"Graph.from_edges: edge {index} has vertex {bad} out of range [0, {num_vertices})"
        )
    return num_vertices


def _edge_keys(src, dst, weight, num_vertices: int, directed: bool, xp):
    """``src * num_vertices + dst`` per stored edge (both directions of an undirected edge, a
    self-loop once) and the weights to match."""
    key = src * num_vertices + dst
    if directed:
        return key, weight
    other = src != dst
    key = xp.concatenate([key, dst[other] * num_vertices + src[other]])
    return key, (None if weight is None else xp.concatenate([weight, weight[other]]))


def _csr(src, dst, weight, num_vertices: int, xp) -> CSR:
    """CSR from edges sorted by (src, dst)."""
    ids = index_dtype(num_vertices)
    offsets_dtype = index_dtype(int(dst.size))
    counts = (
        xp.bincount(src, minlength=num_vertices) if src.size else xp.zeros(num_vertices, np.int64)
    )
    offsets = xp.zeros(num_vertices + 1, dtype=offsets_dtype)
    offsets[1:] = xp.cumsum(counts)
    return CSR(offsets, dst.astype(ids), weight)


def transpose(csr: CSR, num_vertices: int, xp) -> CSR:
    """In-edges of ``csr``: rows are destinations; ``edge_ids`` map back to forward positions."""
    counts = xp.diff(csr.offsets)
    src = xp.repeat(xp.arange(num_vertices, dtype=csr.indices.dtype), counts.astype(np.int64))
    order = xp.argsort(csr.indices, kind="stable")  # stable: sources stay sorted within a row
    rows = csr.indices[order].astype(np.int64)
    reverse = _csr(rows, src[order], None, num_vertices, xp)
    weights = None if csr.weights is None else csr.weights[order]
    return CSR(reverse.offsets, reverse.indices, weights, order.astype(csr.offsets.dtype))
