"""Connected components by hooking and pointer jumping: label = smallest vertex id of the component."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..enactor import Primitive, State, Stats, enact


@dataclass(frozen=True)
class CCResult:
    """``labels[v]``: the smallest vertex id of ``v``'s (weakly) connected component."""

    labels: np.ndarray
    stats: Stats


class CC(Primitive):
    state = (State("labels", "vertex", init="id"),)  # labels[v] <= v, a vertex of v's component
    communicate = {"labels": "min"}
    needs_all = True  # hooking writes, and pointer jumping reads, any vertex's label

    def init_frontier(self, graph, state):
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        labels, scatter_min = state.labels, graph.backend.scatter_min
        before = labels.copy()

        def hook(src, dst, eid, weight):  # both ways: a directed edge joins like an undirected one
            for a, b in ((src, dst), (dst, src)):
                root, label = labels[a], labels[b]
                lower = label < labels[root]  # only the edges that lower a root hook (few atomics)
                scatter_min(labels, root[lower], label[lower])

        fr.advance(graph, fr.Frontier.all(graph), hook, direction="push", output="none")
        while True:  # pointer jumping until every tree is a star
            jumped = labels[labels]
            if not bool((jumped != labels).any()):
                break
            labels[...] = jumped
        return fr.Frontier.from_mask(graph, labels != before)

    def traversed_edges(self, graph, state):
        return graph.num_edges


def connected_components(graph, **run) -> CCResult:
    """Label every vertex with the smallest vertex id of its connected component.

    Each superstep hooks along every edge (``labels[labels[u]] = min(., labels[v])`` and the
    same from ``v``, by scatter-min) and then jumps pointers (``labels = labels[labels]``)
    until every tree is a star; it stops when a superstep changes no label (Soman et al.;
    FastSV in GraphBLAST's terms). Edge directions are ignored, so a directed graph gets its
    weakly connected components.

    Parameters
    ----------
    graph : Graph
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``, ``seed``: see :func:`enact`.

    Returns
    -------
    CCResult
        ``labels`` (vertex id dtype) and ``stats``.

    Raises
    ------
    DeviceError
        The backend or devices asked for are not usable.

    Examples
    --------
    >>> G = bg.Graph.from_edges([0, 3], [1, 2], num_vertices=5, directed=False)
    >>> bg.connected_components(G).labels.tolist()
    [0, 0, 2, 2, 4]
    """
    state, stats = enact(CC(), graph, **run)
    return CCResult(state["labels"], stats)
