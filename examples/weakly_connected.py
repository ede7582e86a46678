"""Weakly connected components by min-label propagation, written from docs/writing-a-primitive.md.

Every vertex starts with its own id as label; a superstep gives each vertex whose neighbourhood
changed the smallest label among itself and its neighbours, along edges in both directions;
when no label changes, every vertex holds the smallest id of its weakly connected component,
as ``networkx.weakly_connected_components`` groups them (``bg.connected_components`` gets the
same labels by union-find; this is the textbook BSP algorithm, for comparison).

Run it as a script::

    python examples/weakly_connected.py          # a directed graph of three chains
    python examples/weakly_connected.py 3        # with 3 virtual devices
"""

from __future__ import annotations

import sys

import numpy as np

import bspgraph as bg
from bspgraph import frontier as fr


class MinLabel(bg.Primitive):
    """Labels combine by min on every device (``needs_all``: a vertex reads the labels of its
    neighbours, owned or not); the next frontier is the vertices whose label fell."""

    state = (bg.State("labels", "vertex", init="id"),)
    communicate = {"labels": "min"}
    needs_all = True

    def init_frontier(self, graph, state):
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        labels = state.labels
        smallest = labels.copy()  # the least label over in- and out-neighbours, and itself
        for direction in ("out", "in"):
            around = fr.neighbor_reduce(graph, labels, "min", direction=direction)
            smallest = graph.xp.minimum(smallest, around)
        owned = fr.Frontier.all(graph)  # this device's vertices: their lists are here
        fell = fr.filter(graph, owned, lambda ids: smallest[ids] < labels[ids])
        labels[fell.ids] = smallest[fell.ids]
        return fell


def weakly_connected(graph, **run) -> np.ndarray:
    """The smallest vertex id of each vertex's weakly connected component."""
    state, _stats = bg.enact(MinLabel(), graph, **run)
    return state["labels"]


def main(argv: list[str]) -> None:
    devices = int(argv[0]) if argv else 1
    src, dst = [0, 1, 2, 5, 6, 8, 9], [1, 2, 3, 4, 5, 7, 8]  # 0-1-2-3, 6-5-4, 9-8-7
    graph = bg.Graph.from_edges(src, dst, num_vertices=11, directed=True)
    print(graph)
    print(weakly_connected(graph, devices=devices).tolist())


if __name__ == "__main__":
    main(sys.argv[1:])
