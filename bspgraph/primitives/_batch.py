"""Sources for batched primitives: checked, sampled as networkx samples them, cut into batches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ..frontier import lanes


def checked_sources(graph, sources, where: str) -> list[int]:
    """``sources`` as a list of distinct vertex ids.

    Raises
    ------
    ValueError
        ``sources`` is a number (networkx's ``k`` is a count: pass ``k=``) or nested, repeats a
        vertex, or holds an id that is not a vertex (the message names the id and the range).
    """
    if isinstance(sources, (int, np.integer)) or np.ndim(sources) > 1:
        raise ValueError(
            f"{where}(sources={sources!r}): expected a sequence of vertex ids "
            "(for a sample of k sources, pass k= and seed=)"
        )
    checked = [graph.check_vertex(s, name="sources", where=where) for s in sources]
    seen: set[int] = set()
    for vertex in checked:
        if vertex in seen:
            raise ValueError(
                f"{where}(sources=...): vertex {vertex} appears twice; expected distinct vertices"
            )
        seen.add(vertex)
    return checked


def sampled_sources(graph, k, seed, where: str) -> list[int]:
    """networkx's sample of ``k`` sources: ``seed.sample(list(G), k)`` after its
    ``py_random_state`` made ``seed`` a ``random.Random`` (None: the ``random`` module's);
    every vertex, unsampled, when ``k`` is the vertex count (as networkx does)."""
    from networkx.utils import create_py_random_state

    n = graph.num_vertices
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"{where}(k={k!r}): expected a number of sources")
    if not 0 <= k <= n:
        raise ValueError(f"{where}(k={k}): expected 0 <= k <= {n} (the vertex count)")
    if k == n:
        return list(range(n))
    return [int(v) for v in create_py_random_state(seed).sample(list(range(n)), int(k))]


def batch_width(backend, graph, count: int, batch: int | None, where: str) -> int:
    """Lanes per run: ``batch``, or (None) as many as fit and pay
    (:func:`bspgraph.frontier.lanes.width`), at most ``count``.

    Raises
    ------
    ValueError
        ``batch`` is not a number of lanes >= 1 (the message names ``where``).
    """
    if batch is None:
        return lanes.width(backend, graph, count)
    if isinstance(batch, (bool, np.bool_)) or not isinstance(batch, (int, np.integer)):
        raise ValueError(f"{where}(batch={batch!r}): expected a number of lanes >= 1")
    if batch < 1:
        raise ValueError(f"{where}(batch={batch}): expected a number of lanes >= 1")
    return int(min(batch, max(count, 1)))


def batches(sources: Sequence[int], width: int) -> Iterator[list[int]]:
    """``sources`` cut into lists of ``width`` (the last one shorter when it does not divide)."""
    for start in range(0, len(sources), width):
        yield list(sources[start : start + width])


def lane_edges(graph, depth):
    """The out-edges of the vertices each lane of a batched search reached (``depth`` below its
    unset sentinel), summed over the lanes: the traversed edges of the whole batch."""
    reached = (depth < np.iinfo(depth.dtype).max).sum(axis=1)
    return graph.backend.total(graph.out_degree() * reached)
