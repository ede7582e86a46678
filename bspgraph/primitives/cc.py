"""Connected components by union-find and pointer jumping: label = least vertex id of the component."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..backend import ops
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
        if iteration == 0:
            # On a graph of long lists, link along each vertex's first SAMPLE edges (Afforest's
            # sampling joins most of a large component cheaply), then along every edge but
            # those of the vertices in the hub's tree (Afforest's skip). Then every edge is
            # in some device's forest. Else along every edge.
            if _sampled(graph):
                _link(graph, labels, sample=SAMPLE)
                fr.flatten(graph, labels)
                _link(graph, labels, frontier=_outside(graph, labels, _hub(graph)))
            else:
                _link(graph, labels)
        else:
            # What the min of the labels loses on a device is only where another device's
            # smaller label y replaced its label x at a vertex: that splits the vertex from
            # x's tree, and linking the pair (x, y) rejoins the two trees. So later supersteps
            # link those pairs, and nothing else: no edge is read again.
            fr.link_replaced(graph, labels, state.previous, frontier)
        return fr.flatten(graph, labels, since=state.previous)  # the labels this step changed

    def converged(self, graph, frontier, state, iteration):
        """A vote to halt after the first superstep (``iteration`` counts those done): union-find
        has seen every edge (labels that arrive then are linked as pairs until none changes one)."""
        return iteration > 0

    def traversed_edges(self, graph, state):
        return graph.num_edges

    def prepare(self, graph):
        super().prepare(graph)
        directions = ("out", "in") if graph.directed else ("out",)
        lists = [graph.forward, graph.reverse] if graph.directed else [graph.forward]
        if _sampled(graph):
            for direction in directions:  # the first superstep's samples
                prepare_sample(graph, direction, SAMPLE)
            _has_edges(graph), _hub(graph)  # the skip's
            lists += [graph.cache[("first entries", d, SAMPLE)] for d in directions]
        for csr in lists:  # union-find's links over every row
            ops.prepare_rows(graph.backend, csr.offsets)


register_preparation("cc", lambda graph: CC().prepare(graph))


def _link(graph, labels, *, frontier=None, sample=None) -> None:
    """Link along the edges of ``frontier``'s vertices (or all), both ways on a directed graph."""
    fr.link(graph, labels, frontier=frontier, sample=sample)
    if graph.directed:
        fr.link(graph, labels, direction="in", frontier=frontier, sample=sample)


def _outside(graph, labels, hub: int):
    """The vertices that have edges and are outside ``hub``'s tree, the labels being stars
    (Afforest's skip, with the hub's tree for the most common label: the giant component's
    on the graphs sampling is for). An edge between two vertices of the hub's tree joins
    nothing, and an edge from it to a vertex outside is in that vertex's lists. On several
    devices, wherever a device skips an edge, its two ends are each joined to the hub on the
    devices that hold their lists: the hub is the one vertex in every device's skip."""
    return fr.Frontier.from_mask(
        graph, ops.differs_from(graph.backend, labels, hub, _has_edges(graph))
    )


def _has_edges(graph):
    """A bool per vertex: ``graph`` holds an out- or in-edge of it (on a device of several,
    its own vertices only: the others' lists are elsewhere; cached)."""
    return graph.cached(("cc: has edges",), lambda: (graph.out_degree() | graph.in_degree()) > 0)


def _hub(graph) -> int:
    """The vertex of most out- and in-edges in the whole graph (cached: the same on every
    device)."""

    def hub() -> int:
        out_degree, in_degree, _ = graph.cost_degrees()
        return int(graph.xp.argmax(out_degree + in_degree if graph.directed else out_degree))

    return graph.cached(("cc: hub",), hub)


def _sampled(graph) -> bool:
    """Whether the lists average more than 4 * SAMPLE edges (a grid's first two edges are
    half of its edges: sampling would cost about as much as linking every edge)."""
    return graph.cost_degrees()[2] > 4 * SAMPLE * graph.num_vertices


def connected_components(graph, **run) -> CCResult:
    """Label every vertex with the smallest vertex id of its connected component.

    Afforest (Sutton et al.): union-find links the two ends of edges (``fr.link``: a tree's
    root hooks under a smaller vertex), then pointer jumping (``labels = labels[labels]``)
    flattens every tree to a star. On a graph of more than 8 edges a vertex on average, the
    first superstep links along each vertex's first two edges only (sampling), then along
    every edge but those of the vertices in the tree of the vertex of most edges (Afforest
    skips the most common label's: on the graphs that sampling is for, the same giant
    component; the hub is one vertex that every device names alike, so that sampling and the
    skip share one superstep on several devices too). On one device that is the answer. On
    several, each links its own vertices' edges and the labels meet by min, which on a device
    can only split a vertex from its tree where another device's smaller label replaced its
    own: later supersteps link just those pairs (old label, new label) with
    ``fr.link_pairs``, never an edge again, until no label changes. Edge directions are
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
