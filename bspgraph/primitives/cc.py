"""Connected components by union-find and pointer jumping: label = least vertex id of the component."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..backend import ops, to_host
from ..enactor import Primitive, State, Stats, enact
from ..frontier.operators import prepare_sample
from ..graph.graph import register_preparation
from . import _cc_kernels  # noqa: F401 (registers the union-find kernels fr.link runs)


@dataclass(frozen=True)
class CCResult:
    """``labels[v]``: the smallest vertex id of ``v``'s (weakly) connected component."""

    labels: np.ndarray
    stats: Stats


SAMPLE = 2  # edges per vertex linked in the sampled superstep (Afforest samples 2)


class CC(Primitive):
    state = (
        State("labels", "vertex", init="id"),  # labels[v] <= v: a forest, roots least
        State("previous", "vertex", init="id", output=False),  # labels as the last step left them
    )
    communicate = {"labels": "min"}
    needs_all = True  # linking writes, and pointer jumping reads, any vertex's label
    votes_to_halt = True  # once every edge is linked, only labels that arrive change any
    pull_kind = push_kind = None  # it links along lists: no advance (memory.estimate)
    sampled_entries = SAMPLE  # the sampled superstep's lists (memory.estimate)

    def init_frontier(self, graph, state):
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        labels = state.labels
        # The first superstep links along each vertex's first SAMPLE edges only (Afforest's
        # sampling: that joins most of a large component cheaply); the next along every edge
        # but those inside the largest component (Afforest's skip). (On several devices each
        # starts with only its own vertices, so a choice by frontier could differ between
        # devices, and a device that pushes and one that pulls would both skip the edges
        # between them.) Then every edge is in some device's forest. What the min of the
        # labels loses on a device is only where another device's smaller label y replaced
        # its label x at a vertex: that splits the vertex from x's tree, and linking the pair
        # (x, y) rejoins the two trees. So the superstep over every edge first links those
        # pairs, and later ones link nothing else: no edge is read again.
        sampled = _sampled_supersteps(graph)
        if iteration < sampled:
            _link(graph, labels, sample=SAMPLE)
        elif iteration > sampled:
            fr.link_replaced(graph, labels, state.previous, frontier)
        elif sampled:
            largest = _most_common(graph, labels)  # before the pairs: the same on every device
            if fr.link_replaced(graph, labels, state.previous, frontier):
                fr.flatten(graph, labels)
            _link(graph, labels, frontier=_outside(graph, labels, largest))
        else:
            _link(graph, labels)
        return fr.flatten(graph, labels, since=state.previous)  # the labels this step changed

    def converged(self, graph, frontier, state, iteration):
        """A vote to halt after the superstep that linked along every edge: union-find has
        seen them all (labels that arrive then are linked as pairs until none changes one)."""
        return iteration > _sampled_supersteps(graph)

    def traversed_edges(self, graph, state):
        return graph.num_edges

    def prepare(self, graph):
        super().prepare(graph)
        directions = ("out", "in") if graph.directed else ("out",)
        lists = [graph.forward, graph.reverse] if graph.directed else [graph.forward]
        if _sampled_supersteps(graph):
            for direction in directions:  # the first superstep's samples
                prepare_sample(graph, direction, SAMPLE)
            _has_edges(graph)  # the skip's
            lists += [graph.cache[("first entries", d, SAMPLE)] for d in directions]
        for csr in lists:  # union-find's links over every row
            ops.prepare_rows(graph.backend, csr.offsets)


register_preparation("cc", lambda graph: CC().prepare(graph))


def _link(graph, labels, *, frontier=None, sample=None) -> None:
    """Link along the edges of ``frontier``'s vertices (or all), both ways on a directed graph."""
    fr.link(graph, labels, frontier=frontier, sample=sample)
    if graph.directed:
        fr.link(graph, labels, direction="in", frontier=frontier, sample=sample)


def _outside(graph, labels, vertex: int):
    """The vertices that have edges and are outside ``vertex``'s tree, the labels being stars
    (Afforest's skip: ``vertex`` is the most common label after sampling, the giant
    component's; an edge between two vertices of its tree joins nothing, and an edge from it
    to a vertex outside is in that vertex's lists). On several devices ``vertex`` is the same
    on all, read before the trees part: wherever a device skips an edge, its two ends are
    each joined to ``vertex`` on the devices that hold their lists."""
    return fr.Frontier.from_mask(
        graph, ops.differs_from(graph.backend, labels, vertex, _has_edges(graph))
    )


def _has_edges(graph):
    """A bool per vertex: it has an out- or in-edge in the whole graph (cached)."""
    out_degree, in_degree, _ = graph.cost_degrees()
    return graph.cached(("cc: has edges",), lambda: (out_degree | in_degree) > 0)


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
    answer. On several, each links its own vertices' edges and the labels meet by min, which
    on a device can only split a vertex from its tree where another device's smaller label
    replaced its own: later supersteps link just those pairs (old label, new label) with
    ``fr.link_pairs``, never an edge again, until no label changes (the skip's label is read
    before any pair is linked, so that it is the same on every device). Edge directions are
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
