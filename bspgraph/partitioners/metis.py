"""METIS through pymetis: minimum edge cut on the symmetrised graph (optional dependency)."""

from __future__ import annotations

import numpy as np

from .base import Partitioner, symmetric_adjacency

INSTALL = "pip install 'bspgraph[metis]'"


class Metis(Partitioner):
    """METIS k-way partitioning (``pymetis.part_graph``) of the symmetrised, loop-free graph.

    Minimises the edge cut with balanced vertex counts, as Gunrock and Groute use it. Needs the
    optional dependency pymetis; ``seed`` is METIS's own seed, so a seed gives one result.

    Raises
    ------
    ImportError
        pymetis is not installed (raised when the partitioner is built; the message gives the
        pip command).
    """

    name = "metis"

    def __init__(self) -> None:
        self._pymetis = _import_pymetis()

    def assign(self, graph, parts: int, *, seed: int) -> np.ndarray:
        pymetis = self._pymetis
        num_vertices = int(graph.num_vertices)
        if parts >= num_vertices:  # one vertex per part; METIS rejects more parts than vertices
            return np.arange(num_vertices, dtype=np.int32)
        offsets, neighbours = symmetric_adjacency(graph)
        options = pymetis.Options(seed=seed)
        if hasattr(pymetis, "CSRAdjacency"):  # pymetis >= 2025.2
            graph_arg = {"adjacency": pymetis.CSRAdjacency(offsets, neighbours)}
        else:
            graph_arg = {"xadj": offsets, "adjncy": neighbours}
        _cut, membership = pymetis.part_graph(parts, **graph_arg, options=options)
        return np.asarray(membership, dtype=np.int32)


def _import_pymetis():
    try:
        import pymetis
    except ImportError as error:
        raise ImportError(f"partitioner 'metis' needs pymetis: {INSTALL}") from error
    return pymetis
