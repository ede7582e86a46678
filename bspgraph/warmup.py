"""Compile, once per machine, the kernels that the built-in primitives use: ``bg.warmup()``, or
``bspgraph warmup`` at an image's build time.

A GPU's first run of a primitive compiles its kernels (NVRTC: CuPy's element-wise and CUB
reductions and bspgraph's own), 84 s for every primitive on rmat16 on an H100, against
2.3 s when CuPy's disk cache (``CUPY_CACHE_DIR``, default ``~/.cupy/kernel_cache``) already
holds them (benchmarks/data/cold-start-h100-2f2680f.txt). Warming up runs every primitive, in
its directions and options, on small graphs of each shape that selects a kernel variant:
weighted (float32) and unweighted, undirected and directed, low and high diameter, and a hub
with more edges than a GPU row reduction reads in one piece (``HUB_EDGES``; a graph without
one never builds the kernels that add up a hub's pieces), one source and a batch of sources.
Graphs with more than 2**31 vertices or edges take int64 variants, which it does not compile.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from .backend import get_backend
from .graph import Graph, generators
from .primitives import (
    betweenness_centrality,
    bfs,
    connected_components,
    core_number,
    pagerank,
    sssp,
    triangle_count,
)

HUB_EDGES = 10_000  # the hub's edges: over twice CuPy's row piece (backend.cuda.LONG_ROW)


@dataclass(frozen=True)
class WarmupReport:
    """What :func:`warmup` did: the backend, the calls made and their seconds, and the kernel
    cache on disk (its folder and how many files it held before and after; None on NumPy)."""

    backend: str
    calls: int
    seconds: float
    cache_dir: str | None
    cached_before: int | None
    cached_after: int | None

    def __str__(self) -> str:
        cache = (
            "no kernel cache on disk"
            if self.cache_dir is None
            else f"kernel cache {self.cache_dir}: {self.cached_before} -> {self.cached_after} files"
        )
        return f"warmup on {self.backend}: {self.calls} calls, {self.seconds:.1f} s; {cache}"


def warmup(backend=None, *, scale: int = 14) -> WarmupReport:
    """Run every built-in primitive on small generated graphs (R-MAT of ``scale``, directed
    and undirected, weighted and not, and a grid), so that their kernels are compiled and
    cached before the first real call.

    Raises
    ------
    DeviceError
        The backend asked for is not usable.
    """
    target = get_backend(backend)
    cache_dir = target.kernel_cache_dir()
    before = _count(cache_dir)
    started = time.perf_counter()
    calls = 0
    for host in _graphs(scale):
        source = int(np.argmax(np.diff(host.forward.offsets)))
        graph = host.to(target)
        for call in _calls(graph, source):
            call(backend=target)
            calls += 1
    target.synchronize()
    return WarmupReport(
        target.name, calls, time.perf_counter() - started, cache_dir, before, _count(cache_dir)
    )


def _graphs(scale: int) -> list[Graph]:
    """The warmup's graphs, on the host."""
    rmat = generators.rmat(scale, 16, seed=1, weights=True, backend="numpy")
    src, dst, weight = rmat.edges()
    upward = src < dst  # one direction of each edge: a directed graph with sinks
    directed = Graph.from_edges(
        src[upward], dst[upward], weight[upward], num_vertices=rmat.num_vertices, backend="numpy"
    )
    unweighted = Graph.from_edges(
        src, dst, num_vertices=rmat.num_vertices, directed=False, backend="numpy"
    )
    grid = generators.grid(64, 64, backend="numpy")
    leaves = np.arange(1, HUB_EDGES + 1)
    hub = Graph.from_edges(
        np.zeros_like(leaves),
        leaves,
        np.ones(HUB_EDGES, dtype=np.float32),
        directed=False,
        backend="numpy",
    )
    return [rmat, directed, unweighted, grid, hub]


def _calls(graph: Graph, source: int) -> list:
    calls = [
        lambda **run: bfs(graph, source, direction="push", **run),
        lambda **run: bfs(graph, source, direction="pull", parents=True, **run),
        lambda **run: bfs(graph, source, **run),
        lambda **run: sssp(graph, source, **run),
        lambda **run: connected_components(graph, **run),
        lambda **run: pagerank(graph, **run),
        lambda **run: betweenness_centrality(graph, sources=[source], **run),
        lambda **run: betweenness_centrality(graph, sources=[source, 1, 2], **run),  # batched
        lambda **run: bfs(graph, sources=[source, 1, 2], **run),
    ]
    if not graph.directed:
        calls += [
            lambda **run: triangle_count(graph, **run),
            lambda **run: core_number(graph, **run),
        ]
    return calls


def _count(folder: str | None) -> int | None:
    if folder is None:
        return None
    return sum(len(files) for _, _, files in os.walk(folder)) if os.path.isdir(folder) else 0
