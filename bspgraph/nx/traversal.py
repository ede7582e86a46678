"""networkx's breadth-first traversals and shortest-path lengths on bspgraph's BFS and SSSP.

Distances come from the primitives (:func:`bspgraph.bfs`, :func:`bspgraph.sssp`). The functions
whose output order is networkx's (``bfs_edges``, ``bfs_layers`` and the ones built on them) run
level by level over each node's neighbours in networkx's order (kept by the conversion): a level's
children are its vertices' neighbours, first occurrence first, in one vectorised pass per level.
"""

from __future__ import annotations

from collections.abc import Iterator

import networkx as nx
import numpy as np

from .. import primitives
from .algorithms import _backend_graph, can_run_when, networkx_algorithm, refused
from .graph import NxGraph

_NO_SORT = "a Python function of each neighbour list is not supported"
_CALLABLE = "a weight function is not supported, only an edge attribute name"


def _no_sort(where: str, sort_neighbors) -> None:
    if sort_neighbors is not None:
        raise NotImplementedError(f"{where}: {refused('sort_neighbors', sort_neighbors, _NO_SORT)}")


# --- level-ordered BFS --------------------------------------------------------------------------
def _levels(G: NxGraph, sources: np.ndarray, *, reverse: bool = False, depth_limit=None):
    """Yield ``(parents, children)`` id arrays per level, as networkx's BFS visits them: a
    child's parent is the first vertex of the level (in queue order) that lists it, and the
    children come in the order of their first listing."""
    offsets, indices = G.ordered_adjacency(reverse=reverse and G.is_directed())
    visited = np.zeros(len(G), dtype=bool)
    visited[sources] = True
    layer, depth = sources, 0
    limit = len(G) if depth_limit is None else depth_limit
    while layer.size and depth < limit:
        starts = offsets[layer]
        counts = offsets[layer + 1] - starts
        total = int(counts.sum())
        if total == 0:
            return
        owner = np.repeat(np.arange(layer.size), counts)  # the layer position of each listing
        first = np.cumsum(counts) - counts
        positions = np.arange(total) - np.repeat(first - starts, counts)
        children = indices[positions]
        fresh = ~visited[children]
        children, owner = children[fresh], owner[fresh]
        _, earliest = np.unique(children, return_index=True)
        earliest.sort()
        children = children[earliest].astype(np.int64)
        if not children.size:
            return
        visited[children] = True
        yield layer[owner[earliest]], children
        layer, depth = children, depth + 1


def _check_node(G: NxGraph, node) -> int:
    if node not in G:
        raise nx.NetworkXError(f"The node {node} is not in the graph.")
    return G.vertex(node)


@networkx_algorithm
def bfs_edges(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    """level-synchronous, vectorised per level, in networkx's order; ``sort_neighbors`` is not
    supported (NotImplementedError). With ``reverse`` on a directed graph the predecessors of
    a node come in node order (networkx: the order their edges were added)."""
    _no_sort("bfs_edges", sort_neighbors)
    G = _backend_graph(G)
    return _bfs_edges(G, source, reverse, depth_limit)


def _bfs_edges(G: NxGraph, source, reverse, depth_limit) -> Iterator[tuple]:
    start = _check_node(G, source)  # (raised when iterated, as networkx's generator does)
    for parents, children in _levels(
        G, np.array([start]), reverse=reverse, depth_limit=depth_limit
    ):
        yield from zip(G.labels(parents), G.labels(children))


@can_run_when(bfs_edges)
def _bfs_edges_can_run(arguments):
    sort_neighbors = arguments.get("sort_neighbors")
    return True if sort_neighbors is None else refused("sort_neighbors", sort_neighbors, _NO_SORT)


@networkx_algorithm
def bfs_tree(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    """the tree of :func:`bfs_edges`, as a directed backend graph (networkx's node order:
    the source, then the others as reached)."""
    _no_sort("bfs_tree", sort_neighbors)
    G = _backend_graph(G)
    start = _check_node(G, source)
    parents, children = [np.array([], dtype=np.int64)], [np.array([start])]
    for level_parents, level_children in _levels(
        G, children[0], reverse=reverse, depth_limit=depth_limit
    ):
        parents.append(level_parents)
        children.append(level_children)
    order = np.concatenate(children)  # the tree's nodes: vertex order[i] is its node i
    position = np.empty(len(G), dtype=np.int64)
    position[order] = np.arange(order.size)
    src = position[np.concatenate(parents)]
    return NxGraph(G.labels(order), src, np.arange(1, order.size, dtype=np.int64), directed=True)


bfs_tree.can_run = _bfs_edges_can_run


@networkx_algorithm
def bfs_predecessors(G, source, depth_limit=None, sort_neighbors=None):
    """:func:`bfs_edges` turned round; ``sort_neighbors`` is not supported."""
    _no_sort("bfs_predecessors", sort_neighbors)
    return ((child, parent) for parent, child in bfs_edges(G, source, depth_limit=depth_limit))


bfs_predecessors.can_run = _bfs_edges_can_run


@networkx_algorithm
def bfs_successors(G, source, depth_limit=None, sort_neighbors=None):
    """:func:`bfs_edges` grouped by parent; ``sort_neighbors`` is not supported."""
    _no_sort("bfs_successors", sort_neighbors)
    return _successors(bfs_edges(G, source, depth_limit=depth_limit), source)


def _successors(edges, source):
    parent, children = source, []
    for p, c in edges:
        if p == parent:
            children.append(c)
            continue
        yield (parent, children)
        parent, children = p, [c]
    yield (parent, children)


bfs_successors.can_run = _bfs_edges_can_run


@networkx_algorithm
def bfs_layers(G, sources):
    """level-synchronous from all the sources at once; each layer in networkx's order."""
    G = _backend_graph(G)
    if sources in G:
        sources = [sources]
    first = list(set(sources))  # networkx's first layer: its visited set, in the set's order
    ids = np.array([_check_node(G, node) for node in first], dtype=np.int64)
    return _layers(G, first, ids)


def _layers(G: NxGraph, first: list, ids: np.ndarray):
    if first:
        yield first
    for _, children in _levels(G, ids):
        yield G.labels(children)


@networkx_algorithm
def descendants(G, source):
    """the vertices a BFS (:func:`bspgraph.bfs`) reaches, the source excepted."""
    G = _backend_graph(G)
    depth = primitives.bfs(G.graph(), _check_node(G, source)).depth
    return set(G.labels(np.flatnonzero(depth > 0)))


@networkx_algorithm
def ancestors(G, source):
    """the vertices a BFS (:func:`bspgraph.bfs`) along in-edges reaches, the source excepted."""
    G = _backend_graph(G)
    graph = G.graph()
    depth = primitives.bfs(
        graph.reversed() if graph.directed else graph, _check_node(G, source)
    ).depth
    return set(G.labels(np.flatnonzero(depth > 0)))


@networkx_algorithm
def has_path(G, source, target):
    """one BFS (:func:`bspgraph.bfs`) from ``source``."""
    G = _backend_graph(G)
    if source not in G or target not in G:
        raise nx.NodeNotFound(f"Either source {source} or target {target} is not in G")
    depth = primitives.bfs(G.graph(), G.vertex(source)).depth
    return bool(depth[G.vertex(target)] >= 0)


# --- shortest-path lengths ----------------------------------------------------------------------
def _lengths(G: NxGraph, start: int, weight, *, reverse: bool = False):
    """``(ids, lengths)`` of the vertices reached from ``start``, by length then id: hops
    (ints) when ``weight`` is None, else SSSP distances over the lightest parallel edges."""
    if weight is None:
        graph = G.graph()
        graph = graph.reversed() if reverse else graph
        lengths = primitives.bfs(graph, start).depth
        reached = np.flatnonzero(lengths >= 0)
    else:
        graph = _weighted(G, weight, reverse)
        lengths = primitives.sssp(graph, start).distance
        reached = np.flatnonzero(lengths < np.inf)
    reached = reached[np.argsort(lengths[reached], kind="stable")]
    return reached, lengths[reached]


def _weighted(G: NxGraph, weight, reverse: bool):
    if callable(weight):
        raise NotImplementedError(refused("weight", weight, _CALLABLE))
    graph = G.graph(weight, parallel="min")
    lightest, heaviest = graph.weight_range()
    if not lightest >= 0:  # (also NaN)
        raise NotImplementedError(
            f"weight={weight!r} is not served by bspgraph: negative (or NaN) edge weights "
            f"(down to {lightest}); bspgraph's "
            "shortest paths take non-negative weights; networkx runs them (Bellman-Ford "
            "detects negative cycles)"
        )
    return graph.reversed() if reverse else graph


def _length_dict(G: NxGraph, ids, lengths, cutoff=None) -> dict:
    if cutoff is not None:
        keep = lengths <= cutoff
        ids, lengths = ids[keep], lengths[keep]
    return dict(zip(G.labels(ids), lengths.tolist()))


def _weight_can_run(arguments):
    weight = arguments.get("weight")
    return refused("weight", weight, _CALLABLE) if callable(weight) else True


@networkx_algorithm
def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight"):
    """bucketed SSSP (:func:`bspgraph.sssp`) over the whole graph, ``cutoff`` applied after;
    negative weights and weight functions are not supported (NotImplementedError). Lengths
    are floats; a multigraph's parallel edges weigh the lightest."""
    G = _backend_graph(G, weight)
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    return _length_dict(G, *_lengths(G, G.vertex(source), weight), cutoff)


single_source_dijkstra_path_length.can_run = _weight_can_run


@networkx_algorithm
def dijkstra_path_length(G, source, target, weight="weight"):
    """SSSP (:func:`bspgraph.sssp`) from ``source``; as
    :func:`single_source_dijkstra_path_length`."""
    G = _backend_graph(G, weight)
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    if source == target:
        return 0
    ids, lengths = _lengths(G, G.vertex(source), weight)
    found = np.flatnonzero(ids == G.index.get(target, -1))
    if not found.size:
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}")
    return lengths[found[0]].item()


dijkstra_path_length.can_run = _weight_can_run


@networkx_algorithm
def single_source_bellman_ford_path_length(G, source, weight="weight"):
    """SSSP (:func:`bspgraph.sssp`) for non-negative weights; negative ones (where networkx's
    Bellman-Ford finds paths or negative cycles) are not supported (NotImplementedError)."""
    G = _backend_graph(G, weight)
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} not in G")
    return _length_dict(G, *_lengths(G, G.vertex(source), weight))


single_source_bellman_ford_path_length.can_run = _weight_can_run


@networkx_algorithm
def shortest_path_length(G, source=None, target=None, weight=None, method="dijkstra"):
    """BFS (:func:`bspgraph.bfs`) when ``weight`` is None, else SSSP (:func:`bspgraph.sssp`)
    for both methods; a target alone searches the reversed graph; neither, one search per
    node. Negative weights and weight functions are not supported (NotImplementedError)."""
    if method not in ("dijkstra", "bellman-ford"):
        raise ValueError(f"method not supported: {method}")
    G = _backend_graph(G, weight)
    if source is None and target is None:
        return ((node, _length_dict(G, *_lengths(G, i, weight))) for i, node in enumerate(G))
    if source is None or target is None:
        node = target if source is None else source
        if node not in G:
            message = (
                "Source {} not in G"
                if method == "bellman-ford"
                else ("Source {} is not in G" if weight is None else "Node {} not found in graph")
            )
            raise nx.NodeNotFound(message.format(node))
        return _length_dict(G, *_lengths(G, G.vertex(node), weight, reverse=source is None))
    if source not in G or target not in G:
        if weight is None:
            raise nx.NodeNotFound(f"Either source {source} or target {target} is not in G")
        missing = source if source not in G else target
        raise nx.NodeNotFound(f"Node {missing} not found in graph")
    ids, lengths = _lengths(G, G.vertex(source), weight)
    found = np.flatnonzero(ids == G.vertex(target))
    if not found.size:
        raise nx.NetworkXNoPath(f"No path between {source} and {target}.")
    return lengths[found[0]].item()


shortest_path_length.can_run = _weight_can_run
