"""Synthetic graphs: Graph500 R-MAT (Kronecker) and 2-D grids, generated on the chosen backend."""

from __future__ import annotations

import numpy as np

from ..backend import Backend, get_backend
from .graph import Graph, index_dtype

MAX_WEIGHT = 64  # generated weights are integers 1..MAX_WEIGHT


def rmat(
    scale: int,
    edge_factor: int = 16,
    *,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    seed: int = 0,
    weights: bool = False,
    backend: str | Backend | None = None,
) -> Graph:
    """A Graph500 R-MAT graph with ``2**scale`` vertices, undirected.

    Generates ``edge_factor * 2**scale`` edges, each by choosing one quadrant per bit of the
    vertex ids with probabilities ``a, b, c, d = 1-a-b-c``, then relabels the vertices by a random
    permutation, drops self-loops, symmetrises and merges duplicates (as Graph500 does). With
    ``weights=True`` every edge weighs a uniform random integer in ``1..64`` (float32; a merged
    duplicate keeps the smallest). Runs on ``backend``'s array module (on the GPU with CuPy) and
    gives the same graph for the same ``seed`` on the same backend.

    Raises
    ------
    ValueError
        ``scale`` or ``edge_factor`` is not a non-negative integer, or ``a, b, c`` are not
        probabilities with ``a + b + c <= 1``.
    """
    _check_count("scale", scale)
    _check_count("edge_factor", edge_factor)
    if min(a, b, c) < 0 or a + b + c > 1:
        raise ValueError(
            f"rmat(a={a}, b={b}, c={c}): need a, b, c >= 0 and a + b + c <= 1 (d = 1 - a - b - c)"
        )
    backend = get_backend(backend)
    xp = backend.xp
    rng = xp.random.default_rng(seed)
    num_vertices = 2**scale
    num_edges = edge_factor * num_vertices
    ids = index_dtype(num_vertices - 1)

    top = a + b  # probability that the row bit is 0
    # probability that the column bit is 0, in the top and in the bottom half
    column_zero_given = xp.asarray(
        [a / top if top > 0 else 0.0, c / (1 - top) if top < 1 else 0.0], dtype=np.float32
    )
    src = xp.zeros(num_edges, dtype=ids)
    dst = xp.zeros(num_edges, dtype=ids)
    for bit in range(scale):
        bottom = rng.random(num_edges, dtype=np.float32) >= top
        column_zero = xp.where(bottom, column_zero_given[1], column_zero_given[0])
        right = rng.random(num_edges, dtype=np.float32) >= column_zero
        src |= bottom.astype(ids) << bit
        dst |= right.astype(ids) << bit
    relabel = _permutation(rng, num_vertices, xp).astype(ids)
    src, dst = relabel[src], relabel[dst]
    weight = _random_weights(rng, num_edges) if weights else None
    return Graph.from_edges(
        src,
        dst,
        weight,
        num_vertices=num_vertices,
        directed=False,
        self_loops=False,
        backend=backend,
    )


def grid(
    rows: int,
    cols: int,
    *,
    backend: str | Backend | None = None,
    weights: bool = False,
    seed: int = 0,
) -> Graph:
    """The undirected ``rows x cols`` 4-neighbour grid; vertex ``r * cols + c`` is cell (r, c).

    With ``weights=True`` every edge weighs a uniform random integer in ``1..64`` (float32),
    drawn from ``seed``.

    Raises
    ------
    ValueError
        ``rows`` or ``cols`` is not a non-negative integer.
    """
    _check_count("rows", rows)
    _check_count("cols", cols)
    backend = get_backend(backend)
    xp = backend.xp
    vertex = xp.arange(rows * cols, dtype=np.int64)
    right = vertex[vertex % max(cols, 1) != cols - 1]
    down = vertex[: max(rows - 1, 0) * cols]
    src = xp.concatenate([right, down])
    dst = xp.concatenate([right + 1, down + cols])
    weight = _random_weights(xp.random.default_rng(seed), int(src.size)) if weights else None
    return Graph.from_edges(
        src, dst, weight, num_vertices=rows * cols, directed=False, backend=backend
    )


def _check_count(name: str, value) -> None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name}={value!r}: expected a non-negative integer")


def _random_weights(rng, count: int):
    """``count`` uniform random integers in ``1..MAX_WEIGHT``, as float32."""
    return rng.integers(1, MAX_WEIGHT + 1, size=count, dtype=np.int32).astype(np.float32)


def _permutation(rng, count: int, xp):
    """A uniform random permutation of ``0..count-1`` (CuPy's Generator has no ``permutation``)."""
    if hasattr(rng, "permutation"):
        return rng.permutation(count)
    return xp.argsort(rng.random(count), kind="stable")
