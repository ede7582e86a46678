"""The backend graph: a networkx graph's nodes numbered 0..n-1 and its edges as arrays."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from itertools import chain
from numbers import Number
from operator import methodcaller

import networkx as nx
import numpy as np

from ..graph import Graph


class NxGraph:
    """A networkx graph converted for bspgraph (what ``convert_from_nx`` returns).

    Node ``nodes[i]`` is vertex ``i`` (the networkx graph's node order); each edge is stored once
    (an undirected edge as ``i <= j``, parallel edges of a multigraph merged) in ``src``/``dst``,
    with the converted edge attributes in ``edge_values`` (float64, aligned with the edges; NaN
    where an edge lacks an attribute that has no default). :meth:`graph` builds the
    :class:`bspgraph.Graph` for one weight attribute and caches it.

    A multigraph also keeps, per merged edge, how many parallel edges it stands for
    (``multiplicity``) and the smallest of their attribute values (``edge_minima``: what
    shortest paths see). ``adjacency`` keeps each node's neighbours in networkx's order (an
    undirected edge at both ends), for the functions whose output order is networkx's
    (``bfs_edges``, ``bfs_layers``).
    """

    __networkx_backend__ = "bspgraph"

    def __init__(
        self,
        nodes: list,
        src: np.ndarray,
        dst: np.ndarray,
        *,
        directed: bool,
        multigraph: bool = False,
        edge_values: dict[str, np.ndarray] | None = None,
        node_data: list[dict] | None = None,
        graph_attrs: dict | None = None,
        adjacency: tuple[np.ndarray, np.ndarray] | None = None,
        multiplicity: np.ndarray | None = None,
        edge_minima: dict[str, np.ndarray] | None = None,
    ):
        self.nodes = nodes
        self.src, self.dst = src, dst
        self.directed, self.multigraph = bool(directed), bool(multigraph)
        self.edge_values = edge_values or {}
        self.node_data = node_data  # per node, only when node attributes were converted
        self.graph_attrs = graph_attrs if graph_attrs is not None else {}
        self.adjacency = adjacency
        self.multiplicity = multiplicity
        self.edge_minima = edge_minima or {}
        self._index: dict | None = None
        self._labels: np.ndarray | None = None
        self._graphs: dict = {}

    # --- what networkx asks of a backend graph ------------------------------------------------
    def is_directed(self) -> bool:
        return self.directed

    def is_multigraph(self) -> bool:
        return self.multigraph

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes)

    def __contains__(self, node) -> bool:
        try:
            return node in self.index
        except TypeError:  # unhashable: not a node, as in networkx
            return False

    def number_of_nodes(self) -> int:
        return len(self.nodes)

    def number_of_edges(self) -> int:
        return int(self.src.size)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"NxGraph({len(self.nodes)} nodes, {self.src.size} edges, {kind})"

    # --- labels <-> ids -----------------------------------------------------------------------
    @property
    def index(self) -> dict:
        """``{node: vertex id}``, built on first use."""
        if self._index is None:
            self._index = {node: i for i, node in enumerate(self.nodes)}
        return self._index

    def vertex(self, node) -> int:
        """The vertex id of ``node`` (KeyError if it is not a node)."""
        return self.index[node]

    def labels(self, ids) -> list:
        """The nodes of the vertex ids ``ids`` (an int array), as a list."""
        if self._labels is None:
            self._labels = np.fromiter(self.nodes, dtype=object, count=len(self.nodes))
        return self._labels[ids].tolist()

    def subgraph(self, keep: np.ndarray) -> NxGraph:
        """The subgraph induced by the vertices where ``keep`` (a bool array) is True, with
        their node data, the edges between them and their data, and the graph data (networkx's
        ``G.subgraph(nodes).copy()``; nodes in this graph's order)."""
        ids = np.flatnonzero(keep)
        new_id = np.cumsum(keep) - 1
        edges = keep[self.src] & keep[self.dst]
        node_data = None if self.node_data is None else [self.node_data[i] for i in ids.tolist()]
        return NxGraph(
            self.labels(ids),
            new_id[self.src[edges]],
            new_id[self.dst[edges]],
            directed=self.directed,
            multigraph=self.multigraph,
            edge_values={name: values[edges] for name, values in self.edge_values.items()},
            node_data=node_data,
            graph_attrs=dict(self.graph_attrs),
            multiplicity=None if self.multiplicity is None else self.multiplicity[edges],
            edge_minima={name: values[edges] for name, values in self.edge_minima.items()},
        )

    def ordered_adjacency(self, *, reverse: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets, indices)``: each vertex's neighbours in networkx's order (its
        successors; its predecessors with ``reverse``, in node order), host arrays."""
        key = ("adjacency", reverse)
        if key not in self._graphs:
            n = len(self.nodes)
            if self.adjacency is None or reverse:  # (a graph not converted from networkx)
                src, dst = self.src, self.dst
                if not self.directed:
                    loops = src == dst
                    src, dst = np.r_[src, dst[~loops]], np.r_[dst, src[~loops]]
                if reverse:
                    src, dst = dst, src
                order = np.argsort(src, kind="stable")
                offsets = np.r_[0, np.cumsum(np.bincount(src, minlength=n))]
                self._graphs[key] = (offsets, dst[order])
            else:
                self._graphs[key] = self.adjacency
        return self._graphs[key]

    def graph(self, weight: str | None = None, *, parallel: str = "sum", backend=None) -> Graph:
        """The :class:`bspgraph.Graph` of these edges, weighted by attribute ``weight`` or not.

        A multigraph's parallel edges weigh their sum (``parallel="sum"``: PageRank, HITS) or
        the lightest (``"min"``: shortest paths); unweighted, ``"sum"`` counts them
        (``parallel="count"``) and ``"min"`` makes them one edge of weight 1.

        Raises
        ------
        ValueError
            ``weight`` was not among the converted edge attributes.
        """
        if not self.multigraph:
            parallel = "sum"
        key = (weight, parallel, backend)
        if key not in self._graphs:
            values = None
            if weight is None and parallel == "count":
                values = self.multiplicity.astype(np.float64)
            elif weight is not None:
                if weight not in self.edge_values:
                    raise ValueError(
                        f"edge attribute {weight!r} was not converted; convert with "
                        f"convert_from_nx(G, edge_attrs={{{weight!r}: 1}})"
                    )
                values = (self.edge_minima if parallel == "min" else self.edge_values)[weight]
            self._graphs[key] = Graph.from_edges(
                self.src,
                self.dst,
                values,
                num_vertices=len(self.nodes),
                directed=self.directed,
                backend=backend,
            )
        return self._graphs[key]


def from_networkx(
    G,
    edge_attrs=None,
    node_attrs=None,
    preserve_edge_attrs=False,
    preserve_node_attrs=False,
    preserve_graph_attrs=False,
) -> NxGraph:
    """Convert a networkx graph (see :meth:`BackendInterface.convert_from_nx`).

    The cost is one pass of Python over the adjacency (a dict lookup per edge end, plus one per
    converted attribute and edge); the arrays are then built by NumPy. Attributes are converted
    only when asked: ``edge_attrs={"weight": 1}`` (name -> default for edges without it; a
    default of None leaves NaN), or every numeric attribute with ``preserve_edge_attrs=True``.
    Parallel edges of a multigraph merge into one whose attributes are the sums (networkx's
    ``to_scipy_sparse_array`` semantics).
    """
    with _collector_paused():  # millions of small lists: the cyclic GC would rescan them often
        return _from_networkx(
            G,
            edge_attrs,
            node_attrs,
            preserve_edge_attrs,
            preserve_node_attrs,
            preserve_graph_attrs,
        )


@contextmanager
def _collector_paused():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _from_networkx(
    G, edge_attrs, node_attrs, preserve_edge_attrs, preserve_node_attrs, preserve_graph_attrs
) -> NxGraph:
    nodes = list(G)
    index = {node: i for i, node in enumerate(nodes)}
    directed, multigraph = G.is_directed(), G.is_multigraph()
    adjacency = G._adj
    # one list per node, then map/chain keep the per-edge loop in C (3x faster than generator
    # expressions); len() of a filtered view's atlas may differ from what iterating it yields,
    # and its values() come in the order of its keys
    neighbours = [list(nbrs) for nbrs in adjacency.values()]
    counts = np.fromiter(map(len, neighbours), dtype=np.int64, count=len(nodes))
    total = int(counts.sum())
    src = np.repeat(np.arange(len(nodes), dtype=np.int64), counts)
    dst = np.fromiter(
        map(index.__getitem__, chain.from_iterable(neighbours)), dtype=np.int64, count=total
    )

    if preserve_edge_attrs:
        edge_attrs = {name: None for name in _numeric_edge_attributes(G)}
    ordered = (np.r_[0, np.cumsum(counts)], dst)  # before the undirected edges are halved
    multiplicity = None
    if multigraph:
        keyed_edges = chain.from_iterable(nbrs.values() for nbrs in adjacency.values())
        multiplicity = np.fromiter(map(len, keyed_edges), dtype=np.int64, count=total)
    edge_values, edge_minima = {}, {}
    for name, default in (edge_attrs or {}).items():
        missing = np.nan if default is None else default
        edge_data = chain.from_iterable(nbrs.values() for nbrs in adjacency.values())
        if multigraph:  # parallel edges: the sum, as networkx's sparse-array conversion does
            each = (d.get(name, missing) for keyed in edge_data for d in keyed.values())
            count = int(multiplicity.sum())
        else:
            each, count = map(methodcaller("get", name, missing), edge_data), total
        try:
            values = np.fromiter(each, dtype=np.float64, count=count)
        except (TypeError, ValueError) as error:  # networkx then tries the next backend
            raise NotImplementedError(
                f"bspgraph converts numeric edge attributes only; {name!r}: {error}"
            ) from None
        if multigraph and total:  # one run of values per merged edge
            starts = np.r_[0, np.cumsum(multiplicity)[:-1]]
            edge_minima[name] = np.minimum.reduceat(values, starts)
            values = np.add.reduceat(values, starts)
        elif multigraph:
            edge_minima[name] = values
        edge_values[name] = values

    if not directed:  # the adjacency holds each undirected edge twice: keep i <= j
        keep = src <= dst
        src, dst = src[keep], dst[keep]
        edge_values = {name: values[keep] for name, values in edge_values.items()}
        edge_minima = {name: values[keep] for name, values in edge_minima.items()}
        multiplicity = None if multiplicity is None else multiplicity[keep]

    node_data = None
    if preserve_node_attrs:
        node_data = [dict(G._node[node]) for node in nodes]
    elif node_attrs:
        node_data = [
            {
                name: data.get(name, default)
                for name, default in node_attrs.items()
                if name in data or default is not None
            }
            for data in (G._node[node] for node in nodes)
        ]
    graph_attrs = dict(G.graph) if preserve_graph_attrs else None
    if len(nodes) <= np.iinfo(np.int32).max:
        ordered = (ordered[0], ordered[1].astype(np.int32))  # half the memory
    return NxGraph(
        nodes,
        src,
        dst,
        directed=directed,
        multigraph=multigraph,
        edge_values=edge_values,
        node_data=node_data,
        graph_attrs=graph_attrs,
        adjacency=ordered,
        multiplicity=multiplicity,
        edge_minima=edge_minima,
    )


def _numeric_edge_attributes(G) -> list[str]:
    """The edge attributes whose values are all real numbers (bools excluded)."""
    names: dict[str, bool] = {}
    edges = G.edges(keys=True, data=True) if G.is_multigraph() else G.edges(data=True)
    for *_, data in edges:
        for name, value in data.items():
            numeric = isinstance(value, Number) and not isinstance(value, (bool, complex))
            names[name] = names.get(name, True) and numeric
    return [name for name, numeric in names.items() if numeric]


def to_networkx(graph: NxGraph):
    """The networkx graph of ``graph``: its nodes (with converted node data), its edges (with
    the converted edge attributes that are not NaN) and graph attributes."""
    if graph.directed:
        result = nx.MultiDiGraph() if graph.multigraph else nx.DiGraph()
    else:
        result = nx.MultiGraph() if graph.multigraph else nx.Graph()
    result.graph.update(graph.graph_attrs)
    if graph.node_data is None:
        result.add_nodes_from(graph.nodes)
    else:
        result.add_nodes_from(zip(graph.nodes, (dict(data) for data in graph.node_data)))
    nodes = graph.nodes
    names = list(graph.edge_values)
    columns = [graph.edge_values[name].tolist() for name in names]
    for position, (i, j) in enumerate(zip(graph.src.tolist(), graph.dst.tolist())):
        data = {
            name: column[position]
            for name, column in zip(names, columns)
            if column[position] == column[position]
        }  # (NaN: absent)
        result.add_edge(nodes[i], nodes[j], **data)
    return result
