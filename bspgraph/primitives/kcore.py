"""k-core decomposition by level-synchronous peeling: core number of every vertex."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..backend import ops
from ..enactor import Primitive, Scalar, State, Stats, enact
from ..graph.graph import register_preparation


@dataclass(frozen=True)
class CoreResult:
    """``core[v]``: the largest k such that ``v`` is in the k-core (networkx.core_number)."""

    core: np.ndarray
    stats: Stats


class KCore(Primitive):
    """Peeling, one level k at a time: every vertex with at most k neighbours left gets core
    number k and leaves, which lowers its neighbours' degrees; when a superstep peels no
    vertex anywhere, k goes up, to the least degree left if that is higher (no vertex would
    leave at the levels between).

    The frontier holds the candidates: every vertex at the start and when k goes up, else the
    vertices whose degree fell. The degree travels as changes (``add``: several devices may
    lower one vertex's degree in one superstep); a core number is set by the vertex's owner
    only, so it need not travel (unset is -1).
    """

    state = (State("degree", "int64", output=False), State("core", "int64", init=-1))
    scalars = (
        Scalar("k", "int64", reduce="max"),  # every device raises it alike
        Scalar("peeled", "int64"),  # vertices peeled in the last superstep, over all devices
        Scalar("left", "int64"),  # vertices without a core number yet, over all devices
        Scalar("lowest", "int64", reduce="min"),  # the least degree of those, over all devices
    )
    communicate = {"degree": "add"}
    params = {}

    def init_frontier(self, graph, state):
        state.degree[...] = graph.cost_degrees()[0]  # the whole graph's: the same everywhere
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        if iteration > 0 and int(state.peeled) == 0:  # level k is done everywhere, and
            state.k[...] = max(int(state.k) + 1, int(state.lowest))  # no degree fell since
            frontier = fr.Frontier.all(graph)
        k, core, degree = int(state.k), state.core, state.degree
        peel = fr.filter(graph, frontier, lambda ids: (core[ids] < 0) & (degree[ids] <= k))
        core[peel.ids] = k
        backend = graph.backend

        def lower(src, dst, eid, weight):  # dst repeats: a scatter, not an assignment
            left = core[dst] < 0
            lowered = dst[left]
            ops.scatter_add(backend, degree, lowered, graph.xp.full(lowered.shape, -1, np.int64))
            return left

        lowered = fr.advance(graph, peel, lower, direction="push", unique=True)
        state.peeled[...] = len(peel)
        owned = graph.owned_ids()
        left = owned[core[owned] < 0]
        state.left[...] = left.shape[0]
        state.lowest[...] = (
            backend.smallest(degree[left]) if left.shape[0] else np.iinfo(np.int64).max
        )
        return fr.Frontier.union(graph, peel, lowered)

    def converged(self, graph, frontier, state, iteration):
        return graph.num_vertices == 0 or (iteration > 0 and int(state.left) == 0)

    def traversed_edges(self, graph, state):
        return graph.num_edges


register_preparation("core_number", lambda graph: KCore().prepare(graph))


def core_number(graph, **run) -> CoreResult:
    """Core number of every vertex, as ``networkx.core_number``.

    The k-core is the largest subgraph in which every vertex has at least k neighbours; a
    vertex's core number is the largest k whose k-core holds it. Peeling (Batagelj and
    Zaversnik, level-synchronous as in Gunrock's k-core): vertices with at most k neighbours
    left leave with core number k, superstep after superstep, then k goes up.

    Parameters
    ----------
    graph : Graph
        Undirected, without self-loops (as networkx requires).
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``, ``seed``: see :func:`enact`.

    Returns
    -------
    CoreResult
        ``core`` (int64) and ``stats``.

    Raises
    ------
    ValueError
        A directed graph, or a graph with a self-loop (the message names one).

    Examples
    --------
    >>> G = bg.Graph.from_edges([0, 0, 1, 2], [1, 2, 2, 3], directed=False)
    >>> bg.core_number(G).core.tolist()
    [2, 2, 2, 1]
    """
    if graph.directed:
        raise ValueError(
            "core_number: the graph is directed; k-cores are defined here on undirected graphs "
            "(hint: build it with directed=False)"
        )
    src, dst, _ = graph.edges()
    loops = np.flatnonzero(src == dst)
    if loops.size:
        raise ValueError(
            f"core_number: vertex {int(src[loops[0]])} has a self-loop, which networkx does not "
            "allow either (hint: build the graph with self_loops=False)"
        )
    state, stats = enact(KCore(), graph, **run)
    return CoreResult(state["core"], stats)
