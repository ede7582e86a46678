"""networkx's algorithms on bspgraph: networkx's names, signatures and result shapes.

Each function takes a backend graph (:class:`~bspgraph.nx.graph.NxGraph`, or a networkx graph,
converted first), calls the bspgraph primitive on vertex ids, and maps the host arrays back to
the node labels as networkx returns them (dicts of Python numbers, a generator of sets).
Arguments bspgraph does not support raise NotImplementedError, which networkx's dispatcher reads
as "try the next backend" (networkx itself with ``fallback_to_nx``); ``can_run`` predicates give
the same answers before any conversion.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import networkx as nx
import numpy as np
from networkx.utils import create_py_random_state

from .. import primitives
from ..exceptions import ConvergenceError
from ..primitives.power import checked_options
from .graph import NxGraph, from_networkx

ALGORITHMS: dict[str, Callable] = {}  # name -> function, filled by @networkx_algorithm


def networkx_algorithm(func: Callable) -> Callable:
    """Register ``func`` under its name (networkx's) and give it networkx's docstring, with
    bspgraph's notes (``func``'s own docstring) first. The signature is written out in full in
    each function and checked against networkx's by ``tests/nx/test_interface.py``."""
    original = getattr(nx, func.__name__, None)
    notes = inspect.cleandoc(func.__doc__ or "")
    func.__doc__ = f"bspgraph backend: {notes}\n\n{inspect.getdoc(original) or ''}"
    func.can_run = lambda arguments: True
    ALGORITHMS[func.__name__] = func
    return func


def refused(argument: str, value, why: str) -> str:
    """A refusal naming the argument and the value that bspgraph does not serve, and why:
    what ``can_run`` returns and what the function's NotImplementedError says."""
    shown = _shown(value)
    return f"{argument}={shown} is not served by bspgraph: {why}"


def _shown(value) -> str:
    """A short repr: a graph by its kind, a function by its name, anything else by repr (cut)."""
    if isinstance(value, (nx.Graph, NxGraph)):
        kind = "a directed" if value.is_directed() else "an undirected"
        multi = " multigraph" if value.is_multigraph() else " graph"
        return f"<{kind}{multi}>"
    if callable(value):
        return f"<function {getattr(value, '__name__', type(value).__name__)}>"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def can_run_when(func: Callable):
    """Decorate a predicate of the bound arguments (True, or a reason string) as ``func``'s."""

    def attach(predicate: Callable) -> Callable:
        func.can_run = predicate
        return predicate

    return attach


def _backend_graph(G, weight: str | None = None) -> NxGraph:
    """``G`` itself, or ``G`` converted when it is a networkx graph (called directly)."""
    if isinstance(G, NxGraph):
        return G
    if isinstance(G, nx.Graph):
        return from_networkx(G, edge_attrs=None if weight is None else {weight: 1})
    raise TypeError(f"expected a networkx graph or a bspgraph backend graph, got {type(G)}")


# --- link analysis ------------------------------------------------------------------------------
@networkx_algorithm
def pagerank(
    G,
    alpha=0.85,
    personalization=None,
    max_iter=100,
    tol=1.0e-6,
    nstart=None,
    weight="weight",
    dangling=None,
):
    """pull-style power iteration (:func:`bspgraph.pagerank`; with ``nstart`` or
    ``dangling``, :func:`bspgraph.pagerank_from`); parallel edges of a multigraph add up
    (unweighted, they count). Negative or infinite weights, personalization, nstart or
    dangling values are not supported (NotImplementedError), nor ``alpha``, ``tol``,
    ``max_iter`` out of their ranges (networkx runs them as given)."""
    reason = _pagerank_can_run({"alpha": alpha, "tol": tol, "max_iter": max_iter})
    if reason is not True:
        raise NotImplementedError(f"pagerank: {reason}")
    G = _backend_graph(G, weight)
    if len(G) == 0:
        return {}
    graph = G.graph(weight, parallel="count" if weight is None else "sum")
    lightest, heaviest = graph.weight_range()
    if not (lightest >= 0 and heaviest < np.inf):  # (False for NaN)
        raise NotImplementedError("pagerank: negative, infinite or NaN edge weights")
    teleport = None
    if personalization is not None:
        teleport = np.array([personalization.get(node, 0) for node in G.nodes], dtype=np.float64)
        if teleport.sum() == 0:
            raise ZeroDivisionError  # as networkx
        if not bool(((teleport >= 0) & (teleport < np.inf)).all()):
            raise NotImplementedError("pagerank: negative, infinite or NaN personalization")
    try:
        if nstart is None and dangling is None:
            rank = primitives.pagerank(
                graph, alpha, personalization=teleport, tol=tol, max_iter=max_iter
            ).rank
        else:
            start, spread = (
                None if values is None else _distribution(G, values, name)
                for values, name in ((nstart, "nstart"), (dangling, "dangling"))
            )
            rank = primitives.pagerank_from(
                graph,
                alpha,
                personalization=teleport,
                start=start,
                dangling=spread,
                tol=tol,
                max_iter=max_iter,
            ).rank
    except ConvergenceError:
        raise nx.PowerIterationFailedConvergence(max_iter) from None
    return dict(zip(G.nodes, rank.tolist()))


def _distribution(G: NxGraph, values: dict, name: str) -> np.ndarray:
    """``values`` by node (0 for the missing ones), as networkx reads nstart and dangling."""
    vector = np.array([values.get(node, 0) for node in G.nodes], dtype=np.float64)
    if not (((vector >= 0) & (vector < np.inf)).all() and vector.sum() > 0):
        raise NotImplementedError(
            f"pagerank: {name} with negative, infinite or NaN values, or summing to zero"
        )
    return vector


@can_run_when(pagerank)
def _pagerank_can_run(arguments):
    try:  # out of range, networkx runs them as given (alpha=2 fails to converge there)
        checked_options(
            arguments.get("alpha", 0.85),
            arguments.get("tol", 1.0e-6),
            arguments.get("max_iter", 100),
        )
    except ValueError as error:  # "pagerank(alpha=2): expected ...": the argument and value
        name = str(error).split("(", 1)[1].split("=", 1)[0]
        return refused(
            name, arguments.get(name), f"{error} (networkx runs alpha, tol and max_iter as given)"
        )
    return True


# --- shortest paths -----------------------------------------------------------------------------
@networkx_algorithm
def single_source_shortest_path_length(G, source, cutoff=None):
    """level-synchronous BFS (:func:`bspgraph.bfs`) over the whole graph; ``cutoff`` keeps the
    levels networkx would reach (it does not stop the search early). The dict is ordered by
    length, then by node order."""
    G = _backend_graph(G)
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    depth = primitives.bfs(G.graph(), G.vertex(source)).depth
    keep = depth >= 0
    if cutoff is not None:  # networkx yields level L while cutoff > L - 1; the source always
        keep &= (depth == 0) | (depth - 1 < cutoff)
    ids = np.flatnonzero(keep)
    ids = ids[np.argsort(depth[ids], kind="stable")]
    nodes = G.nodes
    return {nodes[i]: d for i, d in zip(ids.tolist(), depth[ids].tolist())}


# --- components ---------------------------------------------------------------------------------
@networkx_algorithm
def connected_components(G):
    """union-find and pointer jumping (:func:`bspgraph.connected_components`), computed when
    called; the sets come in networkx's order (by their first node)."""
    G = _backend_graph(G)
    if G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for directed type")
    labels = primitives.connected_components(G.graph()).labels
    order = np.argsort(labels, kind="stable")  # by component (its smallest id), then by id
    starts = np.flatnonzero(np.r_[True, labels[order][1:] != labels[order][:-1]])
    groups = np.split(order, starts[1:]) if order.size else []
    nodes = G.nodes
    return ({nodes[i] for i in group.tolist()} for group in groups)


# --- centrality ---------------------------------------------------------------------------------
@networkx_algorithm
def betweenness_centrality(G, k=None, normalized=True, weight=None, endpoints=False, seed=None):
    """Brandes betweenness over batches of sources (:func:`bspgraph.betweenness_centrality`:
    path counts and dependencies of a whole batch, one sparse product a level); ``k`` samples
    the sources as networkx does (``seed.sample(list(G), k)``), so the answer is networkx's
    for the same ``seed``. ``weight`` is not supported (NotImplementedError)."""
    reason = _betweenness_can_run({"weight": weight})
    if reason is not True:
        raise NotImplementedError(f"betweenness_centrality: {reason}")
    G = _backend_graph(G)
    sources = None
    if k is not None and k != len(G):  # networkx's sample (k == len(G): every node, unsampled)
        sample = create_py_random_state(seed).sample(list(G.nodes), k)
        sources = [G.vertex(node) for node in sample]
        if not sources:  # networkx rescales by 1 / k: 0 sources divide by zero where it scales
            if len(G) - (0 if endpoints else 1) >= 2:
                raise ZeroDivisionError("division by zero")
            return dict.fromkeys(G.nodes, 0.0)
    centrality = primitives.betweenness_centrality(
        G.graph(), sources, normalized=normalized, endpoints=endpoints
    ).centrality
    return dict(zip(G.nodes, centrality.tolist()))


@can_run_when(betweenness_centrality)
def _betweenness_can_run(arguments):
    if arguments.get("weight") is not None:
        return refused("weight", arguments["weight"], "weighted betweenness is not supported")
    return True


@networkx_algorithm
def closeness_centrality(G, u=None, distance=None, wf_improved=True):
    """batched BFS (:func:`bspgraph.closeness_centrality`: a lane per node, one sparse product
    a level for a batch of nodes), over the reversed graph when directed (distances to each
    node, as networkx); ``distance`` (weighted) is not supported (NotImplementedError)."""
    reason = _distance_can_run({"distance": distance})
    if reason is not True:
        raise NotImplementedError(f"closeness_centrality: {reason}")
    G = _backend_graph(G)
    if u is not None:
        if u not in G:
            raise nx.NodeNotFound(f"Source {u} is not in G")
        vertex = G.vertex(u)
        result = primitives.closeness_centrality(G.graph(), [vertex], wf_improved=wf_improved)
        return float(result.centrality[vertex])
    centrality = primitives.closeness_centrality(G.graph(), wf_improved=wf_improved).centrality
    return dict(zip(G.nodes, centrality.tolist()))


@networkx_algorithm
def harmonic_centrality(G, nbunch=None, distance=None, sources=None):
    """batched BFS (:func:`bspgraph.harmonic_centrality`) from the nodes of ``nbunch``, over
    the reversed graph when directed; ``distance`` (weighted) is not supported
    (NotImplementedError)."""
    reason = _distance_can_run({"distance": distance})
    if reason is not True:
        raise NotImplementedError(f"harmonic_centrality: {reason}")
    G = _backend_graph(G)
    scored = set(_node_bunch(G, nbunch))  # a set, as networkx's: the result's keys in its order
    counted = set(_node_bunch(G, sources))
    result = primitives.harmonic_centrality(
        G.graph(), [G.vertex(node) for node in scored], [G.vertex(node) for node in counted]
    )
    values = result.centrality
    return {node: float(values[G.vertex(node)]) for node in scored}


def _node_bunch(G: NxGraph, nbunch) -> list:
    """networkx's ``G.nbunch_iter(nbunch)`` as a list: every node for None, one node, or the
    nodes of an iterable that are in ``G`` (with networkx's errors)."""
    if nbunch is None:
        return list(G.nodes)
    if nbunch in G:
        return [nbunch]
    return _nbunch(G, nbunch)


def _distance_can_run(arguments):
    if arguments.get("distance") is not None:
        return refused("distance", arguments["distance"], "weighted distances are not supported")
    return True


closeness_centrality.can_run = _distance_can_run
harmonic_centrality.can_run = _distance_can_run


# --- clustering ---------------------------------------------------------------------------------
@networkx_algorithm
def triangles(G, nodes=None):
    """oriented-wedge triangle counting (:func:`bspgraph.triangle_count`) over the whole
    graph, then the counts of ``nodes`` (one node: an int; several: a dict)."""
    G = _backend_graph(G)
    if G.is_directed():
        raise nx.NetworkXNotImplemented("not implemented for directed type")
    if nodes is not None and G.is_multigraph():  # as networkx's _triangles_and_degree_iter
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")
    single = nodes is not None and nodes in G
    wanted = None if nodes is None or single else _nbunch(G, nodes)
    counts = primitives.triangle_count(G.graph()).per_vertex
    if nodes is None:
        return dict(zip(G.nodes, counts.tolist()))
    if single:
        return int(counts[G.vertex(nodes)])
    return {node: int(counts[G.vertex(node)]) for node in wanted}


def _nbunch(G: NxGraph, nbunch) -> list:
    """The nodes of ``nbunch`` that are in ``G``, in order, as networkx's ``nbunch_iter``
    yields them (and with its errors)."""
    found = []
    try:
        for node in nbunch:
            if node in G.index:
                found.append(node)
    except TypeError as error:
        message = error.args[0] if error.args else ""
        if "object is not iterable" in message:
            raise nx.NetworkXError(f"Node {nbunch} is not in the graph.") from error
        if "iter" in message:
            raise nx.NetworkXError("nbunch is not a node or a sequence of nodes.") from error
        if "hash" in message:
            raise nx.NetworkXError(
                f"Node {node} in sequence nbunch is not a valid node."
            ) from error
        raise
    return found
