"""Sources for batched primitives: checked, sampled as networkx samples them, cut into batches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

# V x b entries of an array of lanes without a GPU's free memory to go by: a float64 array in
# a 2-core CPU's cache (email-Eu-core, every source: 256 lanes 0.095 s, 1,005 lanes 0.13 s)
LANE_ENTRIES = 1 << 18
GPU_BYTES_PER_ENTRY = 192  # with one: about 70 bytes of lanes and temporaries an entry, x 2.7
MAX_LANES = 1024
# Where a superstep is cheap (NumPy), a batch's products over every edge of a level cost more
# than one source's traversal beyond this many edges (2 cores, betweenness of 32 sampled
# sources: rmat13, 213k edges, 0.12 s batched against 0.15 one at a time; rmat14, 426k edges,
# 0.28 against 0.23; rmat16, 0.29 against 0.19): bigger graphs run one source at a time.
CHEAP_STEP_EDGES = 1 << 18
# A graph whose vertices average at most DEEP_DEGREE out-edges (a road network: 2.1, a grid:
# 4) is taken as deep: hundreds or thousands of levels, each a few vertices a source. There one
# source costs about as many supersteps as a whole batch (its levels are held as (row, lane)
# pairs: a level costs its pairs' edges, not V x b), so every size runs batched, as wide as
# DEEP_LANE_BYTES of lanes hold (LANE_BYTES_PER_ENTRY each: depth, sigma, delta and a
# scratch). luxembourg_osm (114,599 vertices), betweenness from 20 sources on 2 cores: 77.9 s
# at the two lanes LANE_ENTRIES gave, 1.9 s as one batch of 20.
DEEP_DEGREE = 8
DEEP_LANE_BYTES = 1 << 28
LANE_BYTES_PER_ENTRY = 32


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
    """Lanes per run: ``batch``, or (None) as many as fit: ``LANE_ENTRIES`` entries of ``V x
    b`` on the CPU, a ``GPU_BYTES_PER_ENTRY``-th of the free memory on a GPU, at most
    ``MAX_LANES`` and ``count``. Where supersteps are cheap (``backend.costly_supersteps``
    False: NumPy): a deep graph (at most ``DEEP_DEGREE`` out-edges a vertex on average) as
    many as ``DEEP_LANE_BYTES`` hold, at any size; another with more than
    ``CHEAP_STEP_EDGES`` edges 1 (one source at a time: few, heavy levels, each pushed or
    pulled by the one-source cost model)."""
    if batch is not None:
        if isinstance(batch, (bool, np.bool_)) or not isinstance(batch, (int, np.integer)):
            raise ValueError(f"{where}(batch={batch!r}): expected a number of lanes >= 1")
        if batch < 1:
            raise ValueError(f"{where}(batch={batch}): expected a number of lanes >= 1")
        return int(min(batch, max(count, 1)))
    free = backend.free_bytes()
    entries = LANE_ENTRIES if free is None else free // GPU_BYTES_PER_ENTRY
    if not backend.costly_supersteps and graph.num_edges <= DEEP_DEGREE * graph.num_vertices:
        entries = DEEP_LANE_BYTES // LANE_BYTES_PER_ENTRY  # deep: batched whatever its size
    elif not backend.costly_supersteps and graph.num_edges > CHEAP_STEP_EDGES:
        return 1
    return int(max(1, min(MAX_LANES, max(count, 1), entries // max(graph.num_vertices, 1))))


def batches(sources: Sequence[int], width: int) -> Iterator[list[int]]:
    """``sources`` cut into lists of ``width`` (the last one shorter when it does not divide)."""
    for start in range(0, len(sources), width):
        yield list(sources[start : start + width])


def lane_edges(graph, depth):
    """The out-edges of the vertices each lane of a batched search reached (``depth`` below its
    unset sentinel), summed over the lanes: the traversed edges of the whole batch."""
    reached = (depth < np.iinfo(depth.dtype).max).sum(axis=1)
    return graph.backend.total(graph.out_degree() * reached)
