"""networkx's components, centralities, clustering and cores on bspgraph's primitives."""

from __future__ import annotations

import networkx as nx
import numpy as np

from .. import primitives
from ..exceptions import ConvergenceError
from .algorithms import _backend_graph, _nbunch, can_run_when, networkx_algorithm, refused
from .graph import NxGraph, from_networkx


# --- components ---------------------------------------------------------------------------------
def _labels(G: NxGraph) -> np.ndarray:
    return primitives.connected_components(G.graph()).labels


def _component_sets(G: NxGraph):
    """The components (directions ignored) as sets, in networkx's order (by first node)."""
    labels = _labels(G)
    order = np.argsort(labels, kind="stable")  # by component (its smallest id), then by id
    starts = np.flatnonzero(np.r_[True, labels[order][1:] != labels[order][:-1]])
    groups = np.split(order, starts[1:]) if order.size else []
    return (set(G.labels(group)) for group in groups)


def _count(G: NxGraph) -> int:
    return int(np.unique(_labels(G)).size) if len(G) else 0


def _refuse(G, directed: bool) -> NxGraph:
    """``G`` converted; networkx's exception when it is not ``directed``."""
    G = _backend_graph(G)
    if G.is_directed() is not directed:
        kind = "undirected" if directed else "directed"
        raise nx.NetworkXNotImplemented(f"not implemented for {kind} type")
    return G


def _one_component(G: NxGraph) -> bool:
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return _count(G) == 1


@networkx_algorithm
def number_connected_components(G):
    """union-find (:func:`bspgraph.connected_components`), then the distinct labels."""
    return _count(_refuse(G, directed=False))


@networkx_algorithm
def is_connected(G):
    """one :func:`bspgraph.connected_components`."""
    return _one_component(_refuse(G, directed=False))


@networkx_algorithm
def node_connected_component(G, n):
    """one BFS (:func:`bspgraph.bfs`) from ``n``."""
    G = _refuse(G, directed=False)
    if n not in G:
        raise KeyError(n)  # as networkx's adjacency lookup
    depth = primitives.bfs(G.graph(), G.vertex(n)).depth
    return set(G.labels(np.flatnonzero(depth >= 0)))


@networkx_algorithm
def weakly_connected_components(G):
    """union-find over the edges, directions ignored; sets in networkx's order."""
    return _component_sets(_refuse(G, directed=True))


@networkx_algorithm
def number_weakly_connected_components(G):
    """union-find over the edges, directions ignored."""
    return _count(_refuse(G, directed=True))


@networkx_algorithm
def is_weakly_connected(G):
    """union-find over the edges, directions ignored."""
    return _one_component(_refuse(G, directed=True))


def _strong_labels(G: NxGraph) -> np.ndarray:
    return primitives.strongly_connected_components(G.graph()).labels


@networkx_algorithm
def strongly_connected_components(G):
    """colouring (:func:`bspgraph.strongly_connected_components`: colours spread forward, each
    root's component collected backward, in rounds), computed when called; the sets come by
    their first node in node order (networkx yields them in Tarjan's order, sinks first:
    compare them as a collection)."""
    G = _refuse(G, directed=True)
    labels = _strong_labels(G)
    order = np.argsort(labels, kind="stable")
    starts = np.flatnonzero(np.r_[True, labels[order][1:] != labels[order][:-1]])
    groups = np.split(order, starts[1:]) if order.size else []
    return (set(G.labels(group)) for group in groups)


@networkx_algorithm
def number_strongly_connected_components(G):
    """colouring (:func:`bspgraph.strongly_connected_components`), then the distinct labels."""
    G = _refuse(G, directed=True)
    return int(np.unique(_strong_labels(G)).size) if len(G) else 0


@networkx_algorithm
def is_strongly_connected(G):
    """one :func:`bspgraph.strongly_connected_components`."""
    G = _refuse(G, directed=True)
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return bool((_strong_labels(G) == 0).all())


# --- power iterations ---------------------------------------------------------------------------
def _node_vector(G: NxGraph, values: dict, default=0) -> np.ndarray:
    return np.array([values.get(node, default) for node in G.nodes], dtype=np.float64)


def _check_weights(G: NxGraph, graph, name: str) -> None:
    lightest, heaviest = graph.weight_range()
    if not (lightest >= 0 and heaviest < np.inf):  # (also NaN)
        raise NotImplementedError(f"{name}: negative, infinite or NaN edge weights")


def _not_multigraph(G: NxGraph) -> None:
    if G.is_multigraph():
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")


@networkx_algorithm
def hits(G, max_iter=100, tol=1.0e-8, nstart=None, normalized=True):
    """power iteration on ``A A^T`` (:func:`bspgraph.hits`, two sparse products an
    iteration), networkx's ``_hits_python`` (networkx itself calls ARPACK's ``svds``: the same
    vectors where the largest singular value is simple, to ``tol``); edge weights ``weight``,
    parallel edges summed. Negative weights are not supported."""
    G = _backend_graph(G, "weight")
    if len(G) == 0:
        return {}, {}
    if max_iter <= 0:
        raise nx.PowerIterationFailedConvergence(max_iter)
    graph = G.graph("weight") if "weight" in G.edge_values else G.graph()
    _check_weights(G, graph, "hits")
    start = None if nstart is None else _node_vector(G, nstart)
    try:
        result = primitives.hits(
            graph, max_iter=max_iter, tol=tol, start=start, normalized=normalized
        )
    except ConvergenceError:
        raise nx.PowerIterationFailedConvergence(max_iter) from None
    return dict(zip(G.nodes, result.hubs.tolist())), dict(zip(G.nodes, result.authorities.tolist()))


@networkx_algorithm
def katz_centrality(
    G, alpha=0.1, beta=1.0, max_iter=1000, tol=1.0e-6, nstart=None, normalized=True, weight=None
):
    """power iteration ``x <- alpha A^T x + beta`` (:func:`bspgraph.katz_centrality`);
    negative weights are not supported."""
    G = _backend_graph(G, weight)
    _not_multigraph(G)
    if len(G) == 0:
        return {}
    if not isinstance(beta, dict):
        try:
            beta = float(beta)
        except (TypeError, ValueError, AttributeError) as error:
            raise nx.NetworkXError("beta dictionary must have a value for every node") from error
    elif set(beta) != set(G.nodes):
        raise nx.NetworkXError("beta dictionary must have a value for every node")
    else:
        beta = _node_vector(G, beta)
    graph = G.graph(weight)
    _check_weights(G, graph, "katz_centrality")
    start = None if nstart is None else _node_vector(G, nstart)
    try:
        x = primitives.katz_centrality(
            graph, alpha, beta, max_iter=max_iter, tol=tol, start=start, normalized=normalized
        ).centrality
    except ConvergenceError:
        raise nx.PowerIterationFailedConvergence(max_iter) from None
    return dict(zip(G.nodes, x.tolist()))


@networkx_algorithm
def eigenvector_centrality(G, max_iter=100, tol=1.0e-6, nstart=None, weight=None):
    """power iteration with ``A + I`` (:func:`bspgraph.eigenvector_centrality`); negative
    weights are not supported."""
    G = _backend_graph(G, weight)
    _not_multigraph(G)
    if len(G) == 0:
        raise nx.NetworkXPointlessConcept("cannot compute centrality for the null graph")
    start = None
    if nstart is not None:
        if all(value == 0 for value in nstart.values()):
            raise nx.NetworkXError("initial vector cannot have all zero values")
        start = _node_vector(G, nstart)
    graph = G.graph(weight)
    _check_weights(G, graph, "eigenvector_centrality")
    try:
        x = primitives.eigenvector_centrality(
            graph, max_iter=max_iter, tol=tol, start=start
        ).centrality
    except ConvergenceError:
        raise nx.PowerIterationFailedConvergence(max_iter) from None
    return dict(zip(G.nodes, x.tolist()))


# --- degree -------------------------------------------------------------------------------------
def _degrees(G: NxGraph, *, loops: bool = True) -> np.ndarray:
    """networkx's ``G.degree()`` (in + out for a directed graph; a self-loop counts 2),
    parallel edges counted; without self-loops nor parallel copies when ``loops`` is False
    (the neighbours other than the node itself)."""
    n = len(G)
    src, dst = G.src, G.dst
    weight = None if G.multiplicity is None or not loops else G.multiplicity
    if not loops:
        other = src != dst
        src, dst = src[other], dst[other]
    return (np.bincount(src, weight, minlength=n) + np.bincount(dst, weight, minlength=n))[:n]


@networkx_algorithm
def degree_centrality(G):
    """degrees from the edge arrays (one pass)."""
    G = _backend_graph(G)
    if len(G) <= 1:
        return dict.fromkeys(G.nodes, 1)
    centrality = _degrees(G) * (1.0 / (len(G) - 1.0))
    return dict(zip(G.nodes, centrality.tolist()))


# --- clustering ---------------------------------------------------------------------------------
_DIRECTED = "directed graphs (directed triangles) are not supported"
_WEIGHTED = "weighted clustering (geometric means of the weights) is not supported"


def _clustering_can_run(arguments):
    G = arguments.get("G")
    if G is not None and G.is_directed():
        return refused("G", G, _DIRECTED)
    weight = arguments.get("weight")
    return True if weight is None else refused("weight", weight, _WEIGHTED)


def _triangles_and_pairs(G: NxGraph):
    """Per vertex: triangles (:func:`bspgraph.triangle_count`) and neighbour pairs
    ``d (d - 1) / 2`` (``d``: neighbours other than itself)."""
    if G.is_directed():
        raise NotImplementedError(refused("G", G, _DIRECTED))
    _not_multigraph(G)
    triangles = primitives.triangle_count(G.graph()).per_vertex.astype(np.int64)
    degree = _degrees(G, loops=False).astype(np.int64)
    return triangles, degree * (degree - 1) // 2


@networkx_algorithm
def clustering(G, nodes=None, weight=None):
    """triangles (:func:`bspgraph.triangle_count`) over neighbour pairs; directed graphs and
    ``weight`` are not supported (NotImplementedError)."""
    G = _backend_graph(G)
    if weight is not None:
        raise NotImplementedError(f"clustering: {refused('weight', weight, _WEIGHTED)}")
    single = nodes is not None and nodes in G
    wanted = None if nodes is None or single else _nbunch(G, nodes)
    triangles, pairs = _triangles_and_pairs(G)
    values = [0 if t == 0 else t / p for t, p in zip(triangles.tolist(), pairs.tolist())]
    if single:
        return values[G.vertex(nodes)]
    if wanted is None:
        return dict(zip(G.nodes, values))
    return {node: values[G.vertex(node)] for node in wanted}


clustering.can_run = _clustering_can_run


@networkx_algorithm
def average_clustering(G, nodes=None, weight=None, count_zeros=True):
    """the mean of :func:`clustering`; as it, directed graphs and ``weight`` are not
    supported."""
    values = clustering(G, nodes, weight=weight)
    values = list(values.values()) if isinstance(values, dict) else [values]
    if not count_zeros:
        values = [v for v in values if abs(v) > 0]
    return sum(values) / len(values)


average_clustering.can_run = _clustering_can_run


@networkx_algorithm
def transitivity(G):
    """3 x triangles / connected triples, from :func:`bspgraph.triangle_count`; directed
    graphs are not supported."""
    G = _backend_graph(G)
    if len(G) == 0:
        return 0
    triangles, pairs = _triangles_and_pairs(G)
    total = int(triangles.sum())
    return 0 if total == 0 else total / int(pairs.sum())


@can_run_when(transitivity)
def _transitivity_can_run(arguments):
    G = arguments.get("G")
    return refused("G", G, _DIRECTED) if G is not None and G.is_directed() else True


# --- cores --------------------------------------------------------------------------------------
_SELF_LOOPS = (
    "Input graph has self loops which is not permitted; "
    "Consider using G.remove_edges_from(nx.selfloop_edges(G))."
)
_DIRECTED_CORES = "directed graphs (cores of in + out degree) are not supported"


def _cores(G: NxGraph) -> np.ndarray:
    _not_multigraph(G)
    if G.is_directed():
        raise NotImplementedError(refused("G", G, _DIRECTED_CORES))
    if bool((G.src == G.dst).any()):
        raise nx.NetworkXNotImplemented(_SELF_LOOPS)
    return primitives.core_number(G.graph()).core


def _cores_can_run(arguments):
    G = arguments.get("G")
    return refused("G", G, _DIRECTED_CORES) if G is not None and G.is_directed() else True


@networkx_algorithm
def core_number(G):
    """level-synchronous peeling (:func:`bspgraph.core_number`); directed graphs are not
    supported."""
    G = _backend_graph(G)
    return dict(zip(G.nodes, _cores(G).tolist()))


core_number.can_run = _cores_can_run


@networkx_algorithm
def k_core(G, k=None, core_number=None):
    """the subgraph of the vertices whose core number (:func:`bspgraph.core_number`, or the
    ``core_number`` given) is at least ``k`` (the largest by default), with the converted
    node, edge and graph data; directed graphs are not supported."""
    if isinstance(G, nx.Graph):  # called directly: keep the data, as networkx's dispatcher does
        G = from_networkx(
            G, preserve_edge_attrs=True, preserve_node_attrs=True, preserve_graph_attrs=True
        )
    G = _backend_graph(G)
    _not_multigraph(G)
    if core_number is None:
        cores = _cores(G)
    else:
        cores = np.array([core_number[node] for node in G.nodes], dtype=np.int64)
    if k is None:
        k = int(cores.max()) if cores.size else 0
    return G.subgraph(cores >= k)


k_core.can_run = _cores_can_run


# --- edge betweenness ---------------------------------------------------------------------------
def _edge_betweenness_can_run(arguments):
    weight, G = arguments.get("weight"), arguments.get("G")
    if weight is not None:
        return refused("weight", weight, "weighted betweenness is not supported")
    if G is not None and G.is_multigraph():
        return refused("G", G, "parallel edges (edge keys) are not supported")
    return True


@networkx_algorithm
def edge_betweenness_centrality(G, k=None, normalized=True, weight=None, seed=None):
    """Brandes over batches of sources (the batched forward and backward passes of
    :func:`bspgraph.betweenness_centrality`: path counts and dependencies of a whole batch,
    one sparse product a level), each edge ``u -> v`` one level down taking
    ``sigma[u] / sigma[v] * (1 + delta[v])``; ``k`` samples the sources as networkx does.
    ``weight`` and multigraphs are not supported (NotImplementedError)."""
    reason = _edge_betweenness_can_run({"weight": weight, "G": G})
    if reason is not True:
        raise NotImplementedError(f"edge_betweenness_centrality: {reason}")
    from networkx.utils import create_py_random_state

    from ..backend import backend_for, to_host
    from ..enactor import enact
    from ..primitives._batch import batch_width, batches
    from ..primitives.bc import BatchedBackward, BatchedForward
    from ..primitives.bc_batched_backward import level_bounds

    G = _backend_graph(G)
    n, graph = len(G), G.graph()
    if k is None:
        sources = list(range(n))
    else:
        sources = [G.vertex(node) for node in create_py_random_state(seed).sample(G.nodes, k)]
    src, dst = G.src.astype(np.int64), G.dst.astype(np.int64)
    total = np.zeros(src.size)
    width = batch_width(backend_for(None, graph), graph, len(sources), None, "betweenness")
    for batch in batches(sources, width) if sources else ():
        forward, _ = enact(BatchedForward(lanes=len(batch)), graph, sources=batch)
        depth, sigma = forward["depth"], forward["sigma"]
        backward, _ = enact(
            BatchedBackward(lanes=len(batch), bounds=level_bounds(depth)),
            graph,
            depth=depth,
            sigma=sigma,
        )
        delta = to_host(backward["delta"])
        total += _edge_shares(depth, sigma, delta, src, dst)
        if not G.is_directed():
            total += _edge_shares(depth, sigma, delta, dst, src)
    if n >= 2:  # networkx's _rescale (endpoints: every ordered pair of distinct nodes)
        sampled = n if k is None else k
        if normalized:
            total *= 1 / (sampled * (n - 1))
        else:
            total *= n / (sampled * (1 if G.is_directed() else 2))
    return dict(zip(zip(G.labels(src), G.labels(dst)), total.tolist()))


edge_betweenness_centrality.can_run = _edge_betweenness_can_run


def _edge_shares(depth, sigma, delta, a, b) -> np.ndarray:
    """Per edge ``a[i] -> b[i]``, summed over the lanes: ``sigma[a] / sigma[b] * (1 +
    delta[b])`` where ``b`` lies one level below ``a`` (on a shortest path), else 0."""
    on = (depth[a] >= 0) & (depth[b] == depth[a] + 1)
    ratio = sigma[a] / np.where(on, sigma[b], 1.0)
    return np.where(on, ratio * (1 + delta[b]), 0.0).sum(axis=1)
