"""Graph writers: Matrix Market ``coordinate`` files that :func:`~bspgraph.read_mtx` reads back."""

from __future__ import annotations

import numpy as np

from .graph import Graph

_ROWS_PER_CHUNK = 1 << 16  # lines formatted by one ``%`` call


def write_mtx(graph: Graph, path, *, comment: str | None = None) -> None:
    """Write ``graph`` to ``path`` as a Matrix Market ``coordinate`` file.

    A directed graph is written ``general`` (one entry ``u+1 v+1`` per edge ``u -> v``), an
    undirected one ``symmetric`` (each edge once, as its lower-triangle entry ``max+1 min+1``; a
    self-loop once). Weighted graphs are ``real``, with enough digits that :func:`read_mtx`
    reads back the same weights (float32 weights print as float32, ``17`` for 17.0); unweighted
    ones are ``pattern``. ``read_mtx(path)`` gives back the same vertices, edges, direction and
    weights (the ids become 1-based in the file and 0-based again when read).

    Parameters
    ----------
    graph : Graph
        On any backend; it is copied to the host.
    path : str or os.PathLike
        The file to write (replaced if it exists, through a temporary file and a rename: an
        error or an interrupt leaves no half-written file).
    comment : str, optional
        Text written after the banner, each line prefixed with ``%``.

    Raises
    ------
    OSError
        The file cannot be written.

    Examples
    --------
    >>> G = bg.generators.grid(2, 2)
    >>> bg.write_mtx(G, "grid.mtx")
    >>> bg.read_mtx("grid.mtx").num_edges == G.num_edges
    True
    """
    src, dst, weight = graph.edges()
    if not graph.directed:  # the lower triangle: row >= column
        lower = src >= dst
        src, dst = src[lower], dst[lower]
        weight = None if weight is None else weight[lower]
    field = "pattern" if weight is None else "real"
    symmetry = "general" if graph.directed else "symmetric"
    n = graph.num_vertices
    from .io import atomic_output

    with atomic_output(path, "w", encoding="ascii", newline="\n") as stream:
        stream.write(f"%%MatrixMarket matrix coordinate {field} {symmetry}\n")
        for line in (comment or "").splitlines():
            stream.write(f"% {line}\n")
        stream.write(f"{n} {n} {src.size}\n")
        _write_entries(stream, src, dst, weight)


def _write_entries(stream, src: np.ndarray, dst: np.ndarray, weight: np.ndarray | None) -> None:
    """``row column [value]`` lines, 1-based, formatted a chunk at a time (one ``%`` call each:
    several times faster than ``numpy.savetxt``'s call per line)."""
    if weight is None:
        line = "%d %d\n"
    else:  # %.9g round-trips float32 and %.17g float64; integral weights print without a point
        line = "%d %d %.9g\n" if weight.dtype == np.float32 else "%d %d %.17g\n"
    for start in range(0, src.size, _ROWS_PER_CHUNK):
        stop = min(start + _ROWS_PER_CHUNK, src.size)
        rows = [src[start:stop].astype(np.int64) + 1, dst[start:stop].astype(np.int64) + 1]
        if weight is not None:  # as float64: exact for ids below 2**53, and %d prints it whole
            rows = [column.astype(np.float64) for column in (*rows, weight[start:stop])]
        flat = np.column_stack(rows).ravel().tolist()
        stream.write((line * (stop - start)) % tuple(flat))
