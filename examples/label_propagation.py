"""Label propagation communities, written outside bspgraph with its public operator API.

Semi-synchronous label propagation (Cordasco and Gargano), as
``networkx.community.label_propagation_communities`` runs it: every vertex starts with its own
id as label; the vertices are coloured so that neighbours differ, and the colour classes are
updated one after the other, each vertex taking the label most frequent among its neighbours
(ties: keep its own label if it is one of the most frequent, else take the largest). A round
that begins with every vertex holding a most frequent label ends the run.

Run it as a script::

    python examples/label_propagation.py            # Zachary's karate club
    python examples/label_propagation.py 6 8        # a 6 x 8 grid
"""

from __future__ import annotations

import sys

import networkx as nx
import numpy as np

import bspgraph as bg
from bspgraph import frontier as fr
from bspgraph.backend import ops


class LabelPropagation(bg.Primitive):
    """Superstep 0 of each round counts the unhappy vertices, supersteps 1..C update colour
    class 0..C-1 (neighbours never share a class, so a class updates at once)."""

    state = (bg.State("labels", "vertex", init="id"), bg.State("color", "int64"))
    scalars = (bg.Scalar("unhappy", "int64"),)  # summed over devices by the enactor
    communicate = {"labels": "replace"}  # the owner of a vertex computes its label
    needs_all = True  # a vote reads the labels of all neighbours, owned or not

    def init_frontier(self, graph, state, *, colors):
        state.color[...] = graph.backend.asarray(colors)
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        phase = iteration % (self.options["colors"] + 1)
        if phase == 0:  # the check that opens a round: who lacks a most frequent label?
            everyone = fr.Frontier.all(graph)
            _, happy = vote(graph, everyone, state.labels)
            has_neighbours = graph.out_degree()[everyone.ids] > 0
            state.unhappy[...] = graph.backend.count(has_neighbours & ~happy[everyone.ids])
            return everyone
        color = phase - 1
        members = fr.filter(graph, fr.Frontier.all(graph), lambda ids: state.color[ids] == color)
        new_labels, _ = vote(graph, members, state.labels)
        changed = fr.filter(graph, members, lambda ids: new_labels[ids] != state.labels[ids])
        state.labels[changed.ids] = new_labels[changed.ids]
        return changed

    def converged(self, graph, frontier, state, iteration):
        just_checked = iteration % (self.options["colors"] + 1) == 1
        return graph.num_vertices == 0 or (just_checked and int(state.unhappy) == 0)


def vote(graph, frontier, labels):
    """For the vertices of ``frontier``: the label each takes (Prec-Max) and whether its own
    label is already a most frequent one among its neighbours. Arrays over all vertices."""
    xp, n, backend = graph.xp, graph.num_vertices, graph.backend
    pairs = []

    def collect(src, dst, eid, weight):  # (vertex, neighbour's label) keys; may run in chunks
        pairs.append(src.astype(np.int64) * n + labels[dst])
        return xp.zeros(src.shape, dtype=bool)  # keep no vertex: the advance only gathers

    fr.advance(graph, frontier, collect, direction="push")
    keys = xp.concatenate(pairs) if pairs else xp.zeros(0, dtype=np.int64)
    keys, count = xp.unique(keys, return_counts=True)
    vertex, label = keys // n, keys % n
    best = xp.zeros(n, dtype=count.dtype)
    ops.scatter_max(backend, best, vertex, count)  # vertex repeats: a scatter, not an assignment
    top = count == best[vertex]
    happy = xp.zeros(n, dtype=bool)
    happy[vertex[top & (label == labels[vertex])]] = True  # every writer stores True
    largest = xp.full(n, -1, dtype=np.int64)
    ops.scatter_max(backend, largest, vertex[top], label[top])
    keep = happy | (largest < 0)  # no neighbours: a vertex keeps its own label
    return xp.where(keep, labels, largest).astype(labels.dtype), happy


def label_propagation(graph, **run) -> np.ndarray:
    """Community label of every vertex of the undirected ``graph`` (the label that spread to
    it: a vertex id), with networkx's colouring and tie-breaking."""
    if graph.directed:
        raise ValueError("label_propagation: the graph must be undirected")
    by_vertex = nx.greedy_color(graph.to_networkx())  # networkx's colouring, for the same answer
    colors = np.array([by_vertex[v] for v in range(graph.num_vertices)], dtype=np.int64)
    primitive = LabelPropagation(colors=int(colors.max(initial=-1)) + 1)
    state, _stats = bg.enact(primitive, graph, colors=colors, **run)
    return state["labels"]


def communities(labels: np.ndarray) -> list[set[int]]:
    """The vertex sets sharing a label, largest first."""
    groups: dict[int, set[int]] = {}
    for vertex, label in enumerate(labels.tolist()):
        groups.setdefault(label, set()).add(vertex)
    return sorted(groups.values(), key=lambda group: (-len(group), min(group)))


def main(argv: list[str]) -> None:
    if len(argv) == 2:
        graph = bg.generators.grid(int(argv[0]), int(argv[1]))
    else:
        graph = bg.Graph.from_networkx(nx.karate_club_graph())
    print(graph)
    for group in communities(label_propagation(graph)):
        print(len(group), sorted(group))


if __name__ == "__main__":
    main(sys.argv[1:])
