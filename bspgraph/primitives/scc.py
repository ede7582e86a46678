"""Strongly connected components by colouring: forward min-colours, backward reachability."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..backend import extreme, ops
from ..enactor import Primitive, Scalar, State, Stats, enact
from ..frontier.operators import prepare_reduction
from ..graph.graph import register_preparation

RESET, FORWARD, ROOTS, BACKWARD = 0, 1, 2, 3  # the phases of a round


@dataclass(frozen=True)
class SCCResult:
    """``labels[v]``: the smallest vertex id of ``v``'s strongly connected component."""

    labels: np.ndarray
    stats: Stats


class SCC(Primitive):
    """The colouring algorithm (Orzan; Slota, Rajamanickam and Madduri's "Multistep"), in
    rounds over the vertices without a component yet (the *open* ones), four phases a round:

    1. reset: every open vertex takes its own id as colour;
    2. forward: colours spread along out-edges between open vertices, the smaller winning,
       until none changes: a vertex's colour is then the least id that reaches it;
    3. roots: a vertex whose colour is its own id is the least of its component;
    4. backward: a root's component is the open vertices of its colour that reach it, marked
       from the root along in-edges: an open vertex joins when an out-neighbour marked in this
       round has its colour (an out-neighbour's colour is never larger than its own, so the
       least key ``BIG - 1 - colour`` over the marked out-neighbours tells it: one
       ``neighbor_reduce``), until none joins.

    Each round closes at least the component of the least open id. The phase and the counts
    that end a phase are scalars, reduced over devices, so every device turns alike. Colours
    and labels travel with ``min``; every device writes the reset of every vertex alike (from
    the labels, which every device holds: ``needs_all``), and returns them.
    """

    state = (
        State("labels", "vertex", init="max", unset=-1, holds="least id"),
        State("colour", "vertex", init="id", output=False),
    )
    scalars = (
        Scalar("phase", "int64", reduce="max"),  # every device sets the same phase
        Scalar("changed", "int64"),  # vertices changed in the last superstep, over all devices
        Scalar("left", "int64", init=1),  # open vertices at the last reset, over all devices
    )
    communicate = {"labels": "min", "colour": "min"}
    needs_all = True  # the backward reduce reads the marks and colours of any vertex
    params = {}
    pull_kind = "fused"  # the backward min: a row reduction, no per-edge temporaries
    reduces_every_list = True  # ... over every list where most rows take part (gathered)

    def init_frontier(self, graph, state):
        return fr.Frontier.empty(graph)  # the first superstep (reset) takes every open vertex

    def step(self, graph, frontier, state, iteration):
        phase, changed = int(state.phase), int(state.changed)
        if phase == FORWARD and changed == 0:
            phase = ROOTS
        elif phase == BACKWARD and changed == 0:
            phase = RESET
        step = {RESET: _reset, FORWARD: _forward, ROOTS: _roots, BACKWARD: _backward}[phase]
        out = step(graph, frontier, state)
        state.phase[...] = {RESET: FORWARD, FORWARD: FORWARD, ROOTS: BACKWARD}.get(phase, phase)
        if phase != RESET:
            state.changed[...] = len(out)
        return out

    def converged(self, graph, frontier, state, iteration):
        return graph.num_vertices == 0 or (int(state.phase) == FORWARD and int(state.left) == 0)

    def traversed_edges(self, graph, state):
        return graph.num_edges

    def prepare(self, graph):
        super().prepare(graph)
        graph.forward.rows(graph.backend)  # the forward push's edge sources
        prepare_reduction(graph, "out", "min", np.int64, weighted=False)  # the backward reduce


def _reset(graph, frontier, state):
    """Open vertices take their own id, closed ones the largest id (they then match no
    colour); every vertex on every device alike. The open ones are the next frontier."""
    xp, colour = graph.xp, state.colour
    unset = extreme(state.labels.dtype)
    open_ = state.labels == unset
    reset = xp.where(
        open_, xp.arange(graph.num_vertices, dtype=colour.dtype), extreme(colour.dtype)
    )
    moved = reset != colour
    colour[...] = reset
    owned = graph.owned_ids()
    left = int(graph.backend.count(open_[owned]))
    state.left[...] = left
    state.changed[...] = left
    return fr.Frontier.from_mask(graph, open_ | moved)


def _forward(graph, frontier, state):
    """One superstep of colours along out-edges into open vertices, the smaller winning."""
    colour, labels, backend = state.colour, state.labels, graph.backend
    unset = extreme(labels.dtype)

    def spread(src, dst, eid, weight):  # dst repeats: a scatter-min
        offered = colour[src]
        lower = (offered < colour[dst]) & (labels[dst] == unset)
        ops.scatter_min(backend, colour, dst[lower], offered[lower])
        return lower

    return fr.advance(graph, frontier, spread, direction="push", unique=True)


def _roots(graph, frontier, state):
    """The open vertices that kept their own id (owned here) label themselves."""
    labels, colour = state.labels, state.colour
    owned = graph.owned_ids()
    roots = fr.filter(
        graph,
        fr.Frontier.from_ids(graph, owned),
        lambda ids: (labels[ids] == extreme(labels.dtype)) & (colour[ids] == ids),
    )
    labels[roots.ids] = roots.ids
    return roots


def _backward(graph, frontier, state):
    """The open vertices (owned here) with an out-neighbour marked this round in their colour
    take it as label."""
    xp, labels, colour = graph.xp, state.labels, state.colour
    unset, big = extreme(labels.dtype), np.iinfo(np.int64).max
    marked = (labels != unset) & (labels == colour)  # this round's: closed ones hold no colour
    key = xp.where(marked, big - 1 - colour.astype(np.int64), big)
    candidates = fr.filter(
        graph, fr.Frontier.from_ids(graph, graph.owned_ids()), lambda ids: labels[ids] == unset
    )
    if not len(candidates):
        return candidates
    ids = candidates.ids
    best = fr.neighbor_reduce(graph, key, "min", direction="out", frontier=candidates)
    join = ids[best == big - 1 - colour[ids].astype(np.int64)]
    labels[join] = colour[join]
    return fr.Frontier.from_ids(graph, join)


register_preparation("strongly_connected_components", lambda graph: SCC().prepare(graph))


def strongly_connected_components(graph, **run) -> SCCResult:
    """The strongly connected components: each vertex labelled by the smallest vertex id of
    its component (networkx.strongly_connected_components' sets).

    Colouring in rounds (:class:`SCC`): colours spread forward (the least id reaching each
    vertex), then each colour's root collects the vertices of its colour that reach it,
    backward; what is left starts the next round. Undirected graphs: the connected
    components.

    Parameters
    ----------
    graph : Graph
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``, ``seed``: see :func:`enact`.

    Examples
    --------
    >>> G = bg.Graph.from_edges([0, 1, 2, 2], [1, 0, 3, 0])
    >>> bg.strongly_connected_components(G).labels.tolist()
    [0, 0, 2, 3]
    """
    state, stats = enact(SCC(), graph, **run)
    return SCCResult(state["labels"], stats)
