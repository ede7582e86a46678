"""networkx's shortest paths and distance measures on bspgraph's BFS and SSSP.

A path is read off a predecessor tree: the parents that :func:`bspgraph.bfs` and
:func:`bspgraph.sssp` keep with ``parents=True`` (a ``Follow`` state, which travels with its
depth or distance on several devices). Where several shortest paths exist, networkx defines
which one it returns only by its own search order; these functions return a shortest path
(same length, edges of the graph), and networkx's own where it is the only one. The unweighted
paths from one source are networkx's exactly: they come from the level-ordered BFS of
``bfs_edges`` (each node's parent is the first of the level, in networkx's queue order, that
lists it, as ``single_source_shortest_path`` picks it).

Distances from many sources (``all_pairs_shortest_path_length``, ``eccentricity``,
``diameter``, ``radius``, ``average_shortest_path_length``) run as batched BFS (a lane per
source, one sparse product a level for a batch: :class:`bspgraph.primitives.bfs.BatchedBFS`),
one batch at a time, so memory stays one batch of ``V x b``; weighted ones as one SSSP per
source.
"""

from __future__ import annotations

from collections.abc import Iterator

import networkx as nx
import numpy as np

from .. import primitives
from ..backend import backend_for, to_host
from ..primitives._batch import batch_width
from ..primitives.bfs import depth_batches
from .algorithms import _backend_graph, _nbunch, networkx_algorithm
from .graph import NxGraph
from .traversal import _levels, _weight_can_run, _weighted


# --- predecessor trees --------------------------------------------------------------------------
def _tree(G: NxGraph, start: int, weight, *, reverse: bool = False):
    """``(parent, length)`` host arrays of a shortest-path tree from ``start``: parent -1 for
    the start and the unreached; length -1 (hops) or inf (weighted) where unreached."""
    if weight is None:
        graph = G.graph()
        result = primitives.bfs(graph.reversed() if reverse else graph, start, parents=True)
        return result.parent, result.depth
    result = primitives.sssp(_weighted(G, weight, reverse), start, parents=True)
    return result.parent, result.distance


def _walk(G: NxGraph, parent: np.ndarray, start: int, end: int) -> list:
    """The tree path ``start -> ... -> end`` as node labels."""
    path, vertex = [end], end
    while vertex != start:
        vertex = int(parent[vertex])
        if vertex < 0 or len(path) > len(G):
            raise RuntimeError(f"bspgraph: the predecessor tree from {start} is broken at {end}")
        path.append(vertex)
    return G.labels(np.array(path[::-1], dtype=np.int64))


def _tree_paths(G: NxGraph, parent: np.ndarray, start: int, keep=None) -> dict:
    """``{node: path}`` from ``start`` to every vertex of its tree (those ``keep`` marks, when
    given: a subtree closed under parents, such as the vertices within a cutoff), parents
    before children, by tree level."""
    order = [np.array([start], dtype=np.int64)]
    child = np.flatnonzero(parent >= 0)
    if keep is not None:
        child = child[keep[child]]
    child = child[np.argsort(parent[child], kind="stable")]
    offsets = np.searchsorted(parent[child], np.arange(len(G) + 1))
    layer = order[0]
    while layer.size:
        starts, counts = offsets[layer], offsets[layer + 1] - offsets[layer]
        positions = np.arange(int(counts.sum())) + np.repeat(
            starts - np.cumsum(counts) + counts, counts
        )
        layer = child[positions]
        order.append(layer)
    order = np.concatenate(order)
    labels = G.labels(order)
    at = dict(zip(order.tolist(), labels))
    paths = {labels[0]: [labels[0]]}
    for label, above in zip(labels[1:], parent[order[1:]].tolist()):
        paths[label] = [*paths[at[above]], label]
    return paths


def _bfs_paths(G: NxGraph, start: int, cutoff=None, *, reverse: bool = False) -> dict:
    """networkx's ``single_source_shortest_path``: the level-ordered BFS of ``bfs_edges``,
    each node's parent the one networkx's search gives it."""
    node = G.labels(np.array([start]))[0]
    paths = {node: [node]}
    limit = None if cutoff is None else max(int(np.ceil(cutoff)), 0)  # levels networkx expands
    for parents, children in _levels(G, np.array([start]), reverse=reverse, depth_limit=limit):
        for above, below in zip(G.labels(parents), G.labels(children)):
            paths[below] = [*paths[above], below]
    return paths


def _weighted_paths(G: NxGraph, start: int, weight, cutoff=None, *, reverse=False):
    """``(lengths, paths)`` dicts over the vertices within ``cutoff`` of ``start``, by
    length: SSSP with parents."""
    parent, distance = _tree(G, start, weight, reverse=reverse)
    keep = distance < np.inf if cutoff is None else distance <= cutoff
    ids = np.flatnonzero(keep)
    ids = ids[np.argsort(distance[ids], kind="stable")]
    paths = _tree_paths(G, np.where(keep, parent, -1), start, keep)
    labels = G.labels(ids)
    return dict(zip(labels, distance[ids].tolist())), {node: paths[node] for node in labels}


def _source_target_path(G: NxGraph, source, target, weight) -> tuple:
    """``(length, path)`` of one shortest path, or None when ``target`` is not reached."""
    start, end = G.vertex(source), G.vertex(target)
    parent, length = _tree(G, start, weight)
    reached = length[end] >= 0 if weight is None else length[end] < np.inf
    if not reached:
        return None
    return length[end].item(), _walk(G, parent, start, end)


# --- paths --------------------------------------------------------------------------------------
@networkx_algorithm
def single_source_shortest_path(G, source, cutoff=None):
    """level-ordered BFS (as :func:`bfs_edges`): networkx's paths exactly, ties broken as its
    search breaks them."""
    G = _backend_graph(G)
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} not in G")
    return _bfs_paths(G, G.vertex(source), cutoff)


@networkx_algorithm
def single_source_dijkstra_path(G, source, cutoff=None, weight="weight"):
    """SSSP with parents (:func:`bspgraph.sssp`); where several shortest paths exist, one of
    them (not necessarily networkx's). Negative weights and weight functions are not
    supported (NotImplementedError)."""
    G = _backend_graph(G, weight)
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    return _weighted_paths(G, G.vertex(source), weight, cutoff)[1]


single_source_dijkstra_path.can_run = _weight_can_run


@networkx_algorithm
def single_source_dijkstra(G, source, target=None, cutoff=None, weight="weight"):
    """SSSP with parents (:func:`bspgraph.sssp`): lengths (floats) and one shortest path to
    each node (ties: not necessarily networkx's); with ``target``, its length and path.
    Negative weights and weight functions are not supported (NotImplementedError)."""
    G = _backend_graph(G, weight)
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    if target == source:
        return (0, [source])
    lengths, paths = _weighted_paths(G, G.vertex(source), weight, cutoff)
    if target is None:
        return lengths, paths
    if target not in lengths:
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}")
    return lengths[target], paths[target]


single_source_dijkstra.can_run = _weight_can_run


@networkx_algorithm
def dijkstra_path(G, source, target, weight="weight"):
    """SSSP with parents (:func:`bspgraph.sssp`) from ``source``, the tree path to
    ``target``; where several shortest paths exist, one of them (not necessarily
    networkx's). Negative weights and weight functions are not supported."""
    G = _backend_graph(G, weight)
    if source not in G:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    if source == target:
        return [source]
    found = None if target not in G else _source_target_path(G, source, target, weight)
    if found is None:
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}")
    return found[1]


dijkstra_path.can_run = _weight_can_run


@networkx_algorithm
def shortest_path(G, source=None, target=None, weight=None, method="dijkstra"):
    """unweighted: the level-ordered BFS from one node (networkx's paths exactly), or
    :func:`bspgraph.bfs` with parents from ``source`` to ``target``; weighted: SSSP with
    parents (:func:`bspgraph.sssp`), for both methods. Between a source and a target
    networkx searches from both ends; where several shortest paths exist the path here is
    one of them, not necessarily networkx's. A target alone searches the reversed graph;
    neither, one search per node. Negative weights and weight functions are not supported."""
    if method not in ("dijkstra", "bellman-ford"):
        raise ValueError(f"method not supported: {method}")
    G = _backend_graph(G, weight)
    if source is None and target is None:
        return ((node, _paths_from(G, i, weight)) for i, node in enumerate(G))
    if source is None or target is None:
        node = target if source is None else source
        if node not in G:
            raise nx.NodeNotFound(
                f"Source {node} not in G" if weight is None else f"Node {node} not found in graph"
            )
        paths = _paths_from(G, G.vertex(node), weight, reverse=source is None)
        return paths if target is None else {k: p[::-1] for k, p in paths.items()}
    if source not in G or target not in G:
        if weight is None:
            raise nx.NodeNotFound(f"Either source {source} or target {target} is not in G")
        missing = source if source not in G else target
        which = "Source" if missing is source else "Target"
        raise nx.NodeNotFound(f"{which} {missing} is not in G")
    if source == target:
        return [source]
    found = _source_target_path(G, source, target, weight)
    if found is None:
        raise nx.NetworkXNoPath(f"No path between {source} and {target}.")
    return found[1]


shortest_path.can_run = _weight_can_run


def _paths_from(G: NxGraph, start: int, weight, *, reverse: bool = False) -> dict:
    if weight is None:
        return _bfs_paths(G, start, reverse=reverse and G.is_directed())
    return _weighted_paths(G, start, weight, reverse=reverse and G.is_directed())[1]


# --- distances from every node ------------------------------------------------------------------
def _depth_rows(G: NxGraph, vertices=None) -> Iterator[tuple[list[int], np.ndarray]]:
    """``(batch, depth)`` for batches of ``vertices`` (every vertex by default): ``depth`` a
    host ``b x V`` array of hops (-1: unreachable), row ``i`` from ``batch[i]``."""
    graph = G.graph()
    vertices = list(range(len(G))) if vertices is None else vertices
    if not vertices:
        return
    width = batch_width(backend_for(None, graph), graph, len(vertices), None, "nx")
    for batch, depth, _ in depth_batches(graph, vertices, width):
        yield batch, to_host(depth).T


def _weighted_rows(G: NxGraph, weight, vertices=None):
    """As :func:`_depth_rows`, one SSSP a row (inf: unreachable)."""
    graph = _weighted(G, weight, False)
    for vertex in range(len(G)) if vertices is None else vertices:
        yield [vertex], primitives.sssp(graph, vertex).distance[None, :]


@networkx_algorithm
def all_pairs_shortest_path_length(G, cutoff=None):
    """batched BFS (a lane per node, one sparse product a level for a batch of nodes); each
    dict by length, then node order."""
    G = _backend_graph(G)
    return _all_pairs(G, cutoff)


def _all_pairs(G: NxGraph, cutoff):
    nodes = G.nodes
    for batch, depth in _depth_rows(G):
        for row, vertex in zip(depth, batch):
            keep = row >= 0
            if cutoff is not None:
                keep &= row <= cutoff
            ids = np.flatnonzero(keep)
            ids = ids[np.argsort(row[ids], kind="stable")]
            yield nodes[vertex], dict(zip(G.labels(ids), row[ids].tolist()))


def _not_connected(G: NxGraph) -> nx.NetworkXError:
    if G.is_directed():
        return nx.NetworkXError(
            "Found infinite path length because the digraph is not strongly connected"
        )
    return nx.NetworkXError("Found infinite path length because the graph is not connected")


def _eccentricities(G: NxGraph, vertices, weight) -> list:
    """The eccentricity of each of ``vertices`` (in their order): batched BFS, or one SSSP a
    vertex when weighted; networkx's error where a node does not reach every node."""
    rows = _depth_rows(G, vertices) if weight is None else _weighted_rows(G, weight, vertices)
    found = {}
    for batch, lengths in rows:
        unreached = (lengths < 0) if weight is None else ~(lengths < np.inf)
        if bool(unreached.any()):
            raise _not_connected(G)
        found.update(zip(batch, lengths.max(axis=1, initial=0).tolist()))
    return [found[vertex] for vertex in vertices]


@networkx_algorithm
def eccentricity(G, v=None, sp=None, weight=None):
    """batched BFS from the nodes of ``v`` (one sparse product a level for a batch), or one
    SSSP a node when weighted; with ``sp``, networkx's reading of the lengths given. Negative
    weights and weight functions are not supported (NotImplementedError)."""
    G = _backend_graph(G, weight)
    if v in G:
        nodes = [v]
    elif v is None:
        nodes = list(G.nodes)
    else:
        nodes = _nbunch(G, v)
    if sp is not None:
        values = [_from_lengths(G, sp, node) for node in nodes]
    else:
        values = _eccentricities(G, [G.vertex(node) for node in nodes], weight)
    if v in G:
        return values[0]
    return dict(zip(nodes, values))


eccentricity.can_run = _weight_can_run


def _from_lengths(G: NxGraph, sp, node):
    try:
        length = sp[node]
        count = len(length)
    except TypeError as error:
        raise nx.NetworkXError('Format of "sp" is invalid.') from error
    if count != len(G):
        raise _not_connected(G)
    return max(length.values())


@networkx_algorithm
def diameter(G, e=None, usebounds=False, weight=None):
    """the largest eccentricity (:func:`eccentricity`: batched BFS, SSSP when weighted);
    ``usebounds`` gives the same answer from every node's search (networkx's bounding
    shortcut prunes searches)."""
    return _extreme(G, e, weight, max, usebounds)


diameter.can_run = _weight_can_run


@networkx_algorithm
def radius(G, e=None, usebounds=False, weight=None):
    """the smallest eccentricity (:func:`eccentricity`: batched BFS, SSSP when weighted)."""
    return _extreme(G, e, weight, min, usebounds)


radius.can_run = _weight_can_run


def _extreme(G, e, weight, pick, usebounds):
    G = _backend_graph(G, weight)
    if e is None:
        if usebounds and not G.is_directed() and len(G) and _count_components(G) > 1:
            raise nx.NetworkXError("Cannot compute metric because graph is not connected.")
        e = dict(zip(G.nodes, _eccentricities(G, list(range(len(G))), weight)))
    return pick(e.values())


def _count_components(G: NxGraph) -> int:
    return int(np.unique(primitives.connected_components(G.graph()).labels).size)


@networkx_algorithm
def average_shortest_path_length(G, weight=None, method=None):
    """the sum of every node's lengths over ``n (n - 1)``: batched BFS (one sparse product a
    level for a batch of nodes), or one SSSP a node when weighted (every method: each gives
    the same lengths). Negative weights and weight functions are not supported."""
    single = {"unweighted", "dijkstra", "bellman-ford"}
    if method is None:
        method = "unweighted" if weight is None else "dijkstra"
    if method not in single | {"floyd-warshall", "floyd-warshall-numpy"}:
        raise ValueError(f"method not supported: {method}")
    G = _backend_graph(G, weight)
    n = len(G)
    if n == 0:
        raise nx.NetworkXPointlessConcept(
            "the null graph has no paths, thus there is no average shortest path length"
        )
    if n == 1:
        return 0
    unweighted = method == "unweighted" or weight is None
    rows = _depth_rows(G) if unweighted else _weighted_rows(G, weight)
    total = 0
    for _, lengths in rows:
        if bool(((lengths < 0) if unweighted else ~(lengths < np.inf)).any()):
            kind = "strongly connected" if G.is_directed() else "connected"
            raise nx.NetworkXError(f"Graph is not {kind}.")
        total += lengths.sum(dtype=np.int64 if unweighted else np.float64).item()
    return total / (n * (n - 1))


average_shortest_path_length.can_run = _weight_can_run
