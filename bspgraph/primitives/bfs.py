"""Breadth-first search: hop depth (and optionally a parent) of every vertex from one source."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .. import frontier as fr
from ..enactor import Follow, Primitive, State, Stats, enact


@dataclass(frozen=True)
class BFSResult:
    """``depth[v]``: hops from the source, -1 if unreachable; ``parent[v]``: a BFS parent, -1
    for the source and unreachable vertices (None unless ``parents=True``)."""

    depth: np.ndarray
    parent: np.ndarray | None
    stats: Stats


class BFS(Primitive):
    state = (
        State("depth", "vertex", init="max", unset=-1),  # "max", so that a min combiner works
        State("parent", "vertex", init=-1, when="parents"),
    )
    communicate = {"depth": "min", "parent": Follow("depth")}  # a parent travels with its depth

    @property
    def needs_all(self) -> bool:  # a pull step reads the whole frontier
        return self.options.get("direction", "auto") != "push"

    @property
    def pull_kind(self) -> str | None:  # how it pulls (memory.estimate): visit_unvisited's kernel
        return None if self.options.get("direction", "auto") == "push" else "fused"

    def init_frontier(self, graph, state, *, source):
        state.depth[source] = 0
        return fr.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        visit = fr.functors.visit_unvisited(state.depth, iteration + 1, state.parent)
        unvisited = functools.partial(visit.candidates, graph)  # built only if pull is considered
        return fr.advance(graph, frontier, visit, unique=True, candidates=unvisited,
                          direction=self.options.get("direction", "auto"), repeat=True)  # fmt: skip

    def traversed_edges(self, graph, state):
        unset = np.iinfo(state.depth.dtype).max
        return graph.backend.sum_below(graph.out_degree(), state.depth, unset)


def bfs(
    graph,
    source: int,
    *,
    parents: bool = False,
    direction: Literal["auto", "push", "pull"] = "auto",
    **run,
) -> BFSResult:
    """Breadth-first search from ``source`` along out-edges.

    Level-synchronous: superstep ``i`` advances the frontier of depth ``i`` to the unvisited
    vertices at depth ``i + 1``, pushing from the frontier or pulling into the unvisited
    vertices as the cost model (Beamer's alpha/beta) or ``direction`` says.

    Parameters
    ----------
    graph : Graph
    source : int
        The start vertex, in ``[0, num_vertices)``.
    parents : bool
        Also return a BFS tree as ``parent``.
    direction : "auto", "push" or "pull"
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``, ``seed``: see :func:`enact`.

    Raises
    ------
    ValueError
        ``source`` is not a vertex of ``graph``.

    Examples
    --------
    >>> G = bg.generators.grid(3, 3)
    >>> bg.bfs(G, 0).depth.tolist()
    [0, 1, 2, 1, 2, 3, 2, 3, 4]
    """
    graph.check_vertex(source, name="source", where="bfs")
    if direction not in ("auto", "push", "pull"):
        raise ValueError(f"bfs(direction={direction!r}): expected 'auto', 'push' or 'pull'")
    state, stats = enact(BFS(parents=parents, direction=direction), graph, source=source, **run)
    return BFSResult(state["depth"], state["parent"], stats)
