"""The Partitioner contract (graph, parts, seed -> owner) and the report that measures a result."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..backend import to_host


class Partitioner(abc.ABC):
    """Assigns every vertex to one of ``parts`` devices (an edge cut: a vertex's out-edges go
    with it).

    Calling a partitioner validates its input and output; subclasses implement :meth:`assign`.
    Every partitioner is deterministic for a given ``seed``, accepts ``parts > V`` (some parts
    stay empty) and an empty graph.

    Examples
    --------
    >>> import numpy as np, bspgraph as bg
    >>> from bspgraph.partitioners import EdgeBalanced
    >>> g = bg.Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 0], backend="numpy")
    >>> EdgeBalanced()(g, 2).tolist()
    [0, 0, 1, 1]
    """

    name: ClassVar[str]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __call__(self, graph, parts: int, *, seed: int = 0) -> np.ndarray:
        """``owner``: a host int32 array, ``owner[v]`` in ``[0, parts)`` for every vertex v.

        Parameters
        ----------
        graph : Graph
            On any backend; partitioners read it on the host.
        parts : int
            Number of parts P >= 1 (may exceed the vertex count).
        seed : int
            Seed of every random choice; the same seed gives the same owner array.

        Raises
        ------
        ValueError
            ``parts`` is not a positive integer, or ``seed`` is not an integer.
        """
        call = f"{type(self).__name__}()(graph, parts={parts!r}, seed={seed!r})"
        if isinstance(parts, (bool, np.bool_)) or not isinstance(parts, (int, np.integer)):
            raise ValueError(f"{call}: parts must be an integer >= 1")
        if parts < 1:
            raise ValueError(f"{call}: parts must be an integer >= 1, got {parts}")
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"{call}: seed must be an integer")
        num_vertices = int(graph.num_vertices)
        if parts == 1 or num_vertices == 0:
            return np.zeros(num_vertices, dtype=np.int32)
        owner = np.asarray(self.assign(graph, int(parts), seed=int(seed)))
        if owner.shape != (num_vertices,) or (
            num_vertices and (owner.min() < 0 or owner.max() >= parts)
        ):
            raise RuntimeError(
                f"{call}: {type(self).__name__}.assign returned an owner array of shape "
                f"{owner.shape} with values outside [0, {parts})"
            )
        return owner.astype(np.int32, copy=False)

    @abc.abstractmethod
    def assign(self, graph, parts: int, *, seed: int) -> np.ndarray:
        """The owner of every vertex; called with ``parts >= 2`` and at least one vertex."""


@dataclass(frozen=True)
class PartitionReport:
    """How good a partition is, part by part.

    Attributes
    ----------
    parts : int
        Number of parts P.
    vertices : tuple of int
        Vertices owned by each part.
    edges : tuple of int
        Out-edges of each part's owned vertices (stored directed edges: an undirected edge
        counts once from each end).
    vertex_imbalance, edge_imbalance : float
        ``max / mean`` of ``vertices`` and of ``edges`` (1.0 is perfect; 1.0 when all are 0).
    borders : tuple of int
        ``|B_i|``: distinct vertices owned by other parts that are adjacent (by an out- or an
        in-edge) to a vertex of part i; the vertices whose values part i sends or receives.
    cut_edges : int
        Stored directed edges whose ends have different owners.
    """

    parts: int
    vertices: tuple[int, ...]
    edges: tuple[int, ...]
    vertex_imbalance: float
    edge_imbalance: float
    borders: tuple[int, ...]
    cut_edges: int


def report(graph, owner, parts: int) -> PartitionReport:
    """Measure a partition: sizes, imbalance, border sizes and the edge cut.

    Parameters
    ----------
    graph : Graph
        The partitioned graph.
    owner : array of int
        ``owner[v]`` in ``[0, parts)`` (host or device array).
    parts : int
        Number of parts.

    Returns
    -------
    PartitionReport

    Raises
    ------
    ValueError
        ``owner`` does not have one entry per vertex in ``[0, parts)``.

    Notes
    -----
    The multi-GPU Gunrock paper argues that the border size ``|B_i|``, not the edge cut, governs
    communication: many cut edges to one remote vertex cost one value.

    Examples
    --------
    >>> import numpy as np, bspgraph as bg
    >>> g = bg.Graph.from_edges([0, 1, 2], [1, 2, 3], backend="numpy")  # a path 0-1-2-3
    >>> r = report(g, np.array([0, 0, 1, 1]), 2)
    >>> r.vertices, r.edges, r.borders, r.cut_edges
    ((2, 2), (2, 1), (1, 1), 1)
    """
    num_vertices = int(graph.num_vertices)
    owner = to_host(owner)
    if owner.shape != (num_vertices,):
        raise ValueError(
            f"report(owner=...): expected {num_vertices} owners (one per vertex), "
            f"got shape {owner.shape}"
        )
    if num_vertices and (owner.min() < 0 or owner.max() >= parts):
        raise ValueError(
            f"report(owner=..., parts={parts}): owners must lie in [0, {parts}), "
            f"got [{owner.min()}, {owner.max()}]"
        )
    owner = owner.astype(np.int64, copy=False)
    src, dst, _ = graph.edges()
    src_part, dst_part = owner[src], owner[dst]
    vertices = np.bincount(owner, minlength=parts)
    edges = np.bincount(src_part, minlength=parts)
    cut = src_part != dst_part
    # (part, remote vertex) pairs: dst is remote to src's part, src is remote to dst's part.
    pairs = np.concatenate(
        [src_part[cut] * num_vertices + dst[cut], dst_part[cut] * num_vertices + src[cut]]
    )
    borders = np.bincount(np.unique(pairs) // max(num_vertices, 1), minlength=parts)
    return PartitionReport(
        parts=parts,
        vertices=tuple(int(x) for x in vertices),
        edges=tuple(int(x) for x in edges),
        vertex_imbalance=_imbalance(vertices),
        edge_imbalance=_imbalance(edges),
        borders=tuple(int(x) for x in borders),
        cut_edges=int(cut.sum()),
    )


def _imbalance(counts: np.ndarray) -> float:
    mean = counts.mean() if counts.size else 0.0
    return float(counts.max() / mean) if mean > 0 else 1.0


def symmetric_adjacency(graph) -> tuple[np.ndarray, np.ndarray]:
    """Host CSR ``(offsets, neighbours)`` of the undirected simple graph under ``graph``:
    out- and in-neighbours, each once, without self-loops."""
    num_vertices = int(graph.num_vertices)
    src, dst, _ = graph.edges()
    keep = src != dst
    if not graph.directed:  # stored both ways and merged already: only drop the self-loops
        offsets = np.zeros(num_vertices + 1, dtype=np.int64)
        np.cumsum(np.bincount(src[keep], minlength=num_vertices), out=offsets[1:])
        return offsets, dst[keep].astype(np.int64)
    import scipy.sparse as sp

    rows = np.concatenate([src[keep], dst[keep]]).astype(np.int64, copy=False)
    cols = np.concatenate([dst[keep], src[keep]]).astype(np.int64, copy=False)
    matrix = sp.csr_matrix(
        (np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(num_vertices, num_vertices)
    )
    matrix.sum_duplicates()
    matrix.sort_indices()
    return matrix.indptr.astype(np.int64), matrix.indices.astype(np.int64)
