"""Connected components by hooking and pointer jumping: label = smallest vertex id of the component."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..backend import to_host
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
        labels, xp = state.labels, graph.xp
        before = labels.copy()
        grandparent = labels[labels]  # FastSV: hook to the neighbours' grandparents
        edges = graph.cost_degrees()[2]  # the whole graph's: the same choice on every device
        # The first `sampled` supersteps hook along each vertex's first SAMPLE edges only
        # (Afforest: that joins most of a large component cheaply); the next, when every label
        # may be new, along every edge but those inside the largest component, as later ones
        # where many labels changed. (On several devices each starts with only its own
        # vertices, so a choice by frontier could differ between devices, and a device that
        # pushes and one that pulls would both skip the edges between them.)
        sampled = _sampled_supersteps(graph)
        if (not graph.directed and iteration > sampled
                and fr.count_out_edges(graph, frontier) * SPARSE <= edges):  # fmt: skip
            # undirected, few labels changed: only their neighbours can hook lower
            least = xp.full(graph.num_vertices, xp.iinfo(labels.dtype).max, dtype=labels.dtype)

            def offer(src, dst, eid, weight):
                graph.backend.scatter_min(least, dst, grandparent[src])

            fr.advance(graph, frontier, offer, direction="push", output="none")
        elif iteration < sampled:
            least = _least_neighbour(graph, grandparent, sample=SAMPLE)
        elif sampled:  # Afforest: the largest component sits out (an edge inside joins nothing)
            least = _least_outside_largest(graph, labels, grandparent)
        else:
            least = _least_neighbour(graph, grandparent)
        lower = xp.flatnonzero(least < labels)
        graph.backend.scatter_min(labels, labels[lower], least[lower])  # hook the parent ...
        labels[lower] = xp.minimum(labels[lower], least[lower])  # ... and the vertex itself
        while True:  # pointer jumping until every tree is a star
            jumped = labels[labels]
            if not bool((jumped != labels).any()):
                break
            labels[...] = jumped
        return fr.Frontier.from_mask(graph, labels != before)

    def converged(self, graph, frontier, state, iteration):
        """No label changed, after the superstep that hooked along every edge."""
        return iteration > _sampled_supersteps(graph) and not frontier

    def traversed_edges(self, graph, state):
        return graph.num_edges


SPARSE = 8  # a frontier with fewer than num_edges / SPARSE out-edges pushes its labels
SAMPLE = 2  # edges per vertex hooked in the sampled supersteps (Afforest samples 2)
SAMPLED = 3  # supersteps; on an H200, rmat24: 1 -> 21.6 ms, 2 -> 23.1, 3 -> 18.8 (no sampling 28.2)


def _least_neighbour(graph, values, *, frontier=None, sample=None):
    """The least of ``values`` over each vertex's neighbours (of ``frontier``'s vertices only,
    in its order), both ways along a directed edge."""
    least = fr.neighbor_reduce(graph, values, "min", frontier=frontier, sample=sample)
    if graph.directed:
        least = graph.xp.minimum(least, fr.neighbor_reduce(graph, values, "min", direction="in",
                                                           frontier=frontier, sample=sample))  # fmt: skip
    return least


def _least_outside_largest(graph, labels, grandparent):
    """What hooking along every edge needs, read from the edges of the vertices outside the
    most common label ``c`` only (Afforest's skip: after sampling, ``c`` is the giant
    component; an edge inside it joins nothing; isolated vertices join nothing either). A
    vertex outside ``c`` gets its neighbours' least grandparent; ``c`` itself the least label
    of the vertices outside it that have a neighbour in it, so that ``c`` hooks lower when
    one of them has a smaller label."""
    xp, n = graph.xp, graph.num_vertices
    largest = _most_common(graph, labels)
    least = xp.full(n, xp.iinfo(labels.dtype).max, dtype=labels.dtype)
    out_degree, in_degree, _ = graph.cost_degrees()  # a vertex without edges joins nothing
    others = fr.Frontier.from_mask(graph, (labels != largest) & ((out_degree | in_degree) > 0))
    if not others:
        return least
    ids = others.ids
    least[ids] = _least_neighbour(graph, grandparent, frontier=others)
    outside = (grandparent != largest).astype(labels.dtype)  # 0 for a neighbour in c
    beside = ids[_least_neighbour(graph, outside, frontier=others) == 0]
    if beside.shape[0]:
        least[largest] = labels[beside].min()
    return least


def _most_common(graph, labels) -> int:
    """The most common label among 1,024 vertices spread evenly over the ids (Afforest picks
    them at random; a fixed stride gives every device the same vertices)."""
    picked = to_host(labels[:: max(1, graph.num_vertices // 1024)])  # one small copy
    values, counts = np.unique(picked, return_counts=True)
    return int(values[counts.argmax()])


def _sampled_supersteps(graph) -> int:
    """SAMPLED, on a graph whose lists average more than 4 * SAMPLE edges; else 0 (a grid's
    first two edges are half its edges: sampling cost it 7.8 -> 10.6 ms on an H200)."""
    return SAMPLED if graph.cost_degrees()[2] > 4 * SAMPLE * graph.num_vertices else 0


def connected_components(graph, **run) -> CCResult:
    """Label every vertex with the smallest vertex id of its connected component.

    Each superstep hooks along every edge (``labels[labels[u]] = min(., labels[v])`` and the
    same from ``v``, by scatter-min) and then jumps pointers (``labels = labels[labels]``)
    until every tree is a star; it stops when a superstep changes no label (Soman et al.;
    FastSV in GraphBLAST's terms). On a graph of more than 8 edges a vertex on average, the
    first three supersteps hook along each vertex's first two edges only (Afforest's
    sampling); the pulls after them skip the edges inside the most common label (Afforest's
    skip of the giant component). Later supersteps of an undirected graph push along the
    edges of the vertices whose label changed when they are few. Edge directions are
    ignored, so a directed graph gets its weakly connected components.

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
