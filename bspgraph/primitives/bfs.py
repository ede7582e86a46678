"""Breadth-first search: hop depth (and optionally a parent) of every vertex from one source."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .. import frontier as fr
from ..backend import ops, to_host
from ..enactor import Follow, Primitive, State, Stats, enact, run_backend
from ..frontier import lanes
from ..graph.graph import register_preparation
from ._batch import batch_width, batches, checked_sources, lane_edges


@dataclass(frozen=True)
class BFSResult:
    """``depth[v]``: hops from the source, -1 if unreachable; ``parent[v]``: a BFS parent, -1
    for the source and unreachable vertices (None unless ``parents=True``). From several
    ``sources``, ``depth[i, v]``: hops from ``sources[i]`` (and no parent)."""

    depth: np.ndarray
    parent: np.ndarray | None
    stats: Stats


class BFS(Primitive):
    state = (
        State("depth", "vertex", init="max", unset=-1),  # "max", so that a min combiner works
        State("parent", "vertex", init=-1, when="parents", holds="ids"),
    )
    communicate = {"depth": "min", "parent": Follow("depth")}  # a parent travels with its depth
    params = {"source": "id"}

    @property
    def needs_all(self) -> bool:  # a pull step reads the whole frontier
        return self.options.get("direction", "auto") != "push"

    @property
    def pull_kind(self) -> str | None:  # how it pulls (memory.estimate): visit_unvisited's kernel
        return None if self.options.get("direction", "auto") == "push" else "fused"

    push_kind = "fused"  # visit_unvisited's push kernel, with or without parents

    def init_frontier(self, graph, state, *, source):
        state.depth[source] = 0
        return fr.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        visit = fr.functors.visit_unvisited(state.depth, iteration + 1, state.parent)
        direction = self.options.get("direction", "auto")
        return fr.advance(
            graph,
            frontier,
            visit,
            unique=True,
            candidates="functor",
            direction=direction,
            repeat=True,
        )

    def traversed_edges(self, graph, state):
        unset = np.iinfo(state.depth.dtype).max
        return ops.total_below(graph.backend, graph.out_degree(), state.depth, unset)

    def prepare(self, graph):
        super().prepare(graph)
        fr.level_limits(graph)  # the most a repeated advance (GPU) takes on
        fr.prepare_levels(graph)  # (NumPy: what every level at once traverses)


class BatchedBFS(Primitive):
    """BFS from ``lanes`` sources at once: ``depth`` is a row of lanes per vertex (lane ``j``:
    hops from the ``j``-th source), and a level of the whole batch is one operator call on
    its ``(row, lane)`` pairs (:func:`~bspgraph.frontier.advance_pairs`: one product on a
    heavy level)."""

    state = (State("depth", "vertex", init="max", unset=-1, lanes="lanes"),)
    communicate = {"depth": "min"}  # lane by lane
    params = {"sources": "id"}

    def init_frontier(self, graph, state, *, sources):
        ids = graph.backend.asarray(sources).astype(graph.indices.dtype, copy=False)
        state.depth[ids, graph.xp.arange(len(sources))] = 0
        return fr.Frontier.from_ids(graph, ops.unique(graph.backend, ids))

    def step(self, graph, frontier, state, iteration):
        xp, ids = graph.xp, frontier.ids
        at, lanes = xp.nonzero(state.depth[ids] == iteration)  # the level's (row, lane) pairs
        visiting = fr.functors.visit_lanes(state.depth, iteration + 1)
        reached = fr.repeat_levels(graph, visiting, ids[at], lanes)  # light levels, at once
        if reached is not None:
            return reached
        rows, lanes, _ = fr.advance_pairs(
            graph, ids[at], lanes, xp.ones(at.shape[0], np.float32), state.depth.shape[1]
        )  # (paths: any reaches)
        new = xp.flatnonzero(state.depth[rows, lanes] == np.iinfo(state.depth.dtype).max)
        rows = rows[new]
        state.depth[rows, lanes[new]] = iteration + 1
        return fr.Frontier.from_ids(graph, ops.unique(graph.backend, rows))

    def traversed_edges(self, graph, state):
        return lane_edges(graph, state.depth)

    def prepare(self, graph):
        super().prepare(graph)
        lanes.prepare(graph, "in")  # a dense level's product
        fr.level_limits(graph)  # the most a launch of light levels takes on


register_preparation("bfs", lambda graph: BFS().prepare(graph))


def depth_batches(graph, sources: Sequence[int], width: int, **run) -> Iterator[tuple]:
    """``(batch, depth, stats)`` for each batch of ``width`` sources: ``depth`` the ``V x b``
    hops (-1: unreachable) on the run's device (lane ``j``: from ``batch[j]``); with
    ``width`` 1, each from :class:`BFS`."""
    for batch in batches(sources, width):
        if width == 1:  # one source a run: the one-source BFS (push or pull by its cost model)
            state, stats = enact(BFS(), graph, source=batch[0], result_device=True, **run)
            yield batch, state["depth"][:, None], stats
            continue
        state, stats = enact(
            BatchedBFS(lanes=len(batch)), graph, sources=batch, result_device=True, **run
        )
        yield batch, state["depth"], stats


def bfs(
    graph,
    source: int | None = None,
    *,
    sources: Sequence[int] | None = None,
    batch: int | None = None,
    parents: bool = False,
    direction: Literal["auto", "push", "pull"] = "auto",
    **run,
) -> BFSResult:
    """Breadth-first search from ``source`` (or from each of ``sources``) along out-edges.

    Level-synchronous: superstep ``i`` advances the frontier of depth ``i`` to the unvisited
    vertices at depth ``i + 1``, pushing from the frontier or pulling into the unvisited
    vertices as the cost model (Beamer's alpha/beta) or ``direction`` says. From ``sources``
    the searches run ``batch`` at a time as one batched search (:class:`BatchedBFS`: a lane
    per source, one sparse product a level for the whole batch).

    Parameters
    ----------
    graph : Graph
    source : int
        The start vertex, in ``[0, num_vertices)``.
    sources : sequence of int, optional
        Distinct start vertices, instead of ``source``: ``depth`` is then a matrix.
    batch : int, optional
        Sources per batched run (default: as many as fit, up to 1024).
    parents : bool
        Also return a BFS tree as ``parent`` (one source only).
    direction : "auto", "push" or "pull"
        (one source only)
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``, ``seed``: see :func:`enact`.

    Raises
    ------
    ValueError
        ``source`` (or one of ``sources``) is not a vertex of ``graph``, both or neither are
        given, ``sources`` repeats a vertex, or ``parents`` is asked with ``sources``.

    Examples
    --------
    >>> G = bg.generators.grid(3, 3)
    >>> bg.bfs(G, 0).depth.tolist()
    [0, 1, 2, 1, 2, 3, 2, 3, 4]
    >>> bg.bfs(G, sources=[0, 4]).depth.tolist()
    [[0, 1, 2, 1, 2, 3, 2, 3, 4], [2, 1, 2, 1, 0, 1, 2, 1, 2]]
    """
    if (source is None) == (sources is None):
        raise ValueError("bfs: expected either source= (one vertex) or sources= (several)")
    if sources is not None:
        if parents or direction != "auto":
            raise ValueError("bfs(sources=...): parents and direction are for one source")
        sources = checked_sources(graph, sources, "bfs")
        width = batch_width(run_backend(graph, run), graph, len(sources), batch, "bfs")
        depth = np.empty((len(sources), graph.num_vertices), dtype=graph.indices.dtype)
        runs, done = [], 0
        for chunk, lanes, stats in depth_batches(graph, sources, width, **run):
            depth[done : done + len(chunk)] = to_host(lanes).T
            done += len(chunk)
            runs.append(stats)
        return BFSResult(depth, None, Stats.combine(runs))
    graph.check_vertex(source, name="source", where="bfs")
    if direction not in ("auto", "push", "pull"):
        raise ValueError(f"bfs(direction={direction!r}): expected 'auto', 'push' or 'pull'")
    state, stats = enact(BFS(parents=parents, direction=direction), graph, source=source, **run)
    return BFSResult(state["depth"], state["parent"], stats)
