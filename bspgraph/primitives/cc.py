"""Connected components by union-find and pointer jumping: label = least vertex id of the component."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..backend import to_host
from ..enactor import Primitive, State, Stats, enact
from ..frontier.operators import prepare_sample
from ..graph.graph import register_preparation
from . import _cc_kernels  # noqa: F401 (registers the union-find kernels fr.link runs)


@dataclass(frozen=True)
class CCResult:
    """``labels[v]``: the smallest vertex id of ``v``'s (weakly) connected component."""

    labels: np.ndarray
    stats: Stats


class CC(Primitive):
    state = (State("labels", "vertex", init="id"),)  # labels[v] <= v: a forest, roots least
    communicate = {"labels": "min"}
    needs_all = True  # linking writes, and pointer jumping reads, any vertex's label
    pull_kind = None  # it links along lists, never pulls (memory.estimate)

    def init_frontier(self, graph, state):
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        labels = state.labels
        before = labels.copy()
        # The first superstep links along each vertex's first SAMPLE edges only (Afforest's
        # sampling: that joins most of a large component cheaply); the next along every edge
        # but those inside the largest component (Afforest's skip), as later ones where many
        # labels changed. (On several devices each starts with only its own vertices, so a
        # choice by frontier could differ between devices, and a device that pushes and one
        # that pulls would both skip the edges between them.)
        sampled = _sampled_supersteps(graph)
        if (not graph.directed and iteration > sampled
                and fr.count_out_edges(graph, frontier) * SPARSE <= graph.cost_degrees()[2]):  # fmt: skip
            fr.link(graph, labels, frontier=frontier)  # few labels changed: only their edges
        elif iteration < sampled:
            _link(graph, labels, sample=SAMPLE)
        elif sampled:  # an edge inside the largest component joins nothing
            _link(graph, labels, frontier=_outside_largest(graph, labels))
        else:
            _link(graph, labels)
        while True:  # pointer jumping until every tree is a star
            jumped = labels[labels]
            if not bool((jumped != labels).any()):
                break
            labels[...] = jumped
        return fr.Frontier.from_mask(graph, labels != before)

    def converged(self, graph, frontier, state, iteration):
        """After the superstep that linked along every edge: at once on one device (its
        union-find saw every edge), else when no label changed (another device's links
        arrive as smaller labels)."""
        done = iteration > _sampled_supersteps(graph)
        return done and (graph.context.global_view or not frontier)

    def traversed_edges(self, graph, state):
        return graph.num_edges

    def prepare(self, graph):
        super().prepare(graph)
        directions = ("out", "in") if graph.directed else ("out",)
        lists = [graph.forward, graph.reverse] if graph.directed else [graph.forward]
        if _sampled_supersteps(graph):
            for direction in directions:  # the first superstep's samples
                prepare_sample(graph, direction, SAMPLE)
            lists += [graph.cache[("first entries", d, SAMPLE)] for d in directions]
        for csr in lists:  # union-find's links over every row
            graph.backend.prepare_rows(csr.offsets)


register_preparation("cc", lambda graph: CC().prepare(graph))


SPARSE = 8  # a frontier with fewer than num_edges / SPARSE out-edges links along its edges only
SAMPLE = 2  # edges per vertex linked in the sampled superstep (Afforest samples 2)


def _link(graph, labels, *, frontier=None, sample=None) -> None:
    """Link along the edges of ``frontier``'s vertices (or all), both ways on a directed graph."""
    fr.link(graph, labels, frontier=frontier, sample=sample)
    if graph.directed:
        fr.link(graph, labels, direction="in", frontier=frontier, sample=sample)


def _outside_largest(graph, labels):
    """The vertices that have edges and are outside the most common label (Afforest's skip:
    after sampling, that label is the giant component's; an edge between two of its vertices
    joins nothing, and one from it to a vertex outside is in that vertex's lists)."""
    out_degree, in_degree, _ = graph.cost_degrees()
    return fr.Frontier.from_mask(
        graph, (labels != _most_common(graph, labels)) & ((out_degree | in_degree) > 0)
    )


def _most_common(graph, labels) -> int:
    """The most common label among 1,024 vertices spread evenly over the ids (Afforest picks
    them at random; a fixed stride gives every device the same vertices)."""
    picked = to_host(labels[:: max(1, graph.num_vertices // 1024)])  # one small copy
    values, counts = np.unique(picked, return_counts=True)
    return int(values[counts.argmax()])


def _sampled_supersteps(graph) -> int:
    """1 on a graph whose lists average more than 4 * SAMPLE edges; else 0 (a grid's first
    two edges are half of its edges: a sampled superstep would cost about as much as one
    over every edge)."""
    return 1 if graph.cost_degrees()[2] > 4 * SAMPLE * graph.num_vertices else 0


def connected_components(graph, **run) -> CCResult:
    """Label every vertex with the smallest vertex id of its connected component.

    Afforest (Sutton et al.): union-find links the two ends of edges (``fr.link``: a tree's
    root hooks under a smaller vertex), then pointer jumping (``labels = labels[labels]``)
    flattens every tree to a star. On a graph of more than 8 edges a vertex on average, the
    first superstep links along each vertex's first two edges only (sampling); the next skips
    the edges inside the most common label, the giant component. On one device that is the
    answer; on several, each links its own edges and the labels meet by min, so supersteps go
    on until none changes (an undirected graph then links along the edges of the vertices
    whose label changed, when they are few). Edge directions are ignored, so a directed graph
    gets its weakly connected components.

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
