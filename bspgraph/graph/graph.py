"""Graph: compressed sparse rows (CSR) on one backend, with a reverse CSR built when first needed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from ..backend import Backend, clock, get_backend, ops, to_host
from .context import RunContext
from .csr import CSR, INT32_MAX, Summary, index_dtype, transpose

__all__ = ["CSR", "INT32_MAX", "Graph", "Summary", "index_dtype"]  # the arrays' home: .csr

# What Graph.prepare builds for each algorithm, by name: ``prepare(graph)`` functions that the
# primitives' modules register (see register_preparation); the graph layer knows none of them.
PREPARATIONS: dict[str, Callable] = {}


def register_preparation(names: str | tuple[str, ...], prepare: Callable) -> None:
    """Register ``prepare(graph)`` as what :meth:`Graph.prepare` builds for each of ``names``."""
    for name in (names,) if isinstance(names, str) else names:
        PREPARATIONS[name] = prepare


class Graph:
    """A simple graph in CSR: what networkx builds from the same edges.

    Vertices are ``0 .. num_vertices-1``. An undirected graph stores each edge in both directions
    (a self-loop once). Ids are int32 while ``num_vertices`` fits, offsets int32 while the edge
    count fits, int64 beyond. ``reverse`` (in-edges, for pull traversal) is built on first use and
    is ``forward`` itself for undirected graphs. Build one with :meth:`from_edges`,
    :meth:`from_networkx`, :meth:`from_scipy`, a reader or a generator.
    """

    def __init__(
        self,
        forward: CSR,
        num_vertices: int,
        *,
        directed: bool,
        backend: Backend,
        summary: Summary | None = None,
        reverse: CSR | None = None,
        context: RunContext | None = None,
    ):
        self.forward = forward
        self.context = context or RunContext()  # a device's part: its owned vertices, ...
        self.num_vertices = int(num_vertices)
        self.directed = bool(directed)
        self.backend = backend
        self._reverse = reverse if directed else forward
        self._out_degree = self._in_degree = None
        self.cache: dict = {}  # structures derived from this graph, by name (e.g. device parts)
        self.summary = summary or Summary(self.num_vertices, self.num_edges, directed, 0, 0, 0)

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def from_edges(
        cls,
        src,
        dst,
        weight=None,
        *,
        num_vertices: int | None = None,
        directed: bool = True,
        duplicates: Literal["min", "sum"] = "min",
        self_loops: bool = True,
        backend: str | Backend | None = None,
    ) -> Graph:
        """Build a graph from edge arrays ``src[i] -> dst[i]`` with optional ``weight[i]``.

        Duplicate edges merge into one, keeping the minimum weight (``duplicates="sum"`` adds
        them); self-loops stay unless ``self_loops=False``; vertices up to ``num_vertices`` stay
        even when isolated. With ``directed=False`` each edge also runs ``dst -> src``.

        Raises
        ------
        ValueError
            Arrays of different lengths, non-integer or negative ids, an id ``>= num_vertices``
            (the message names the id and the edge index), or weights that are not numbers.
        """
        from .build import build_graph

        return cls(
            **build_graph(
                src,
                dst,
                weight,
                num_vertices=num_vertices,
                directed=directed,
                duplicates=duplicates,
                self_loops=self_loops,
                backend=get_backend(backend),
            )
        )

    @classmethod
    def from_networkx(
        cls,
        nx_graph,
        *,
        weight: str | None = "weight",
        duplicates: Literal["min", "sum"] | None = None,
        backend=None,
    ) -> Graph:
        """Build from a networkx graph; nodes must be the integers ``0..n-1`` (use
        ``nx.convert_node_labels_to_integers`` otherwise). Edges without ``weight`` weigh 1.
        A multigraph's parallel edges merge as ``duplicates`` says, which it must then give:
        "min" (the lightest: what shortest paths see) or "sum" (their total: what networkx's
        PageRank counts, each unweighted edge as 1).

        Raises
        ------
        ValueError
            Nodes other than ``0..n-1``, a weight that is not a number (the message names the
            edge), or a multigraph without ``duplicates``.
        """
        nodes = list(nx_graph.nodes)
        n = len(nodes)
        if any(
            isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < n
            for v in nodes
        ):
            raise ValueError(
                "Graph.from_networkx: nodes must be the integers 0..n-1; "
                "hint: nx.convert_node_labels_to_integers(G)"
            )
        multigraph = nx_graph.is_multigraph()
        if multigraph and duplicates not in ("min", "sum"):
            raise ValueError(
                f"Graph.from_networkx(duplicates={duplicates!r}): a multigraph needs 'min' or "
                "'sum' to say how its parallel edges merge ('sum' counts them, as "
                "networkx's PageRank does; 'min' keeps the lightest, as shortest paths do)"
            )
        edges = list(nx_graph.edges(data=True))
        src = np.fromiter((u for u, _, _ in edges), dtype=np.int64, count=len(edges))
        dst = np.fromiter((v for _, v, _ in edges), dtype=np.int64, count=len(edges))
        weights = None
        if weight is not None and any(weight in d for _, _, d in edges):
            weights = np.empty(len(edges))
            for i, (u, v, d) in enumerate(edges):
                value = d.get(weight, 1.0)
                try:
                    weights[i] = value
                except (TypeError, ValueError):
                    raise ValueError(
                        f"Graph.from_networkx: edge ({u}, {v}) has {weight}={value!r}, not a number"
                    ) from None
        elif multigraph and duplicates == "sum":
            weights = np.ones(len(edges))  # each parallel edge counts once
        return cls.from_edges(
            src,
            dst,
            weights,
            num_vertices=n,
            directed=nx_graph.is_directed(),
            duplicates=duplicates or "min",
            backend=backend,
        )

    @classmethod
    def from_scipy(cls, matrix, *, directed: bool = True, backend=None) -> Graph:
        """Build from a scipy sparse matrix: entry ``(i, j)`` is the edge ``i -> j`` with its value
        as weight (explicit zeros included). With ``directed=False`` the matrix is symmetrised.

        Raises
        ------
        TypeError
            ``matrix`` is not sparse (a dense array: convert it, its nonzeros becoming edges).
        ValueError
            ``matrix`` is not square.
        """
        if not hasattr(matrix, "tocoo"):
            raise TypeError(
                f"Graph.from_scipy: expected a scipy.sparse matrix or array, got "
                f"{type(matrix).__name__}; hint: scipy.sparse.csr_array(a) makes a dense "
                "array's nonzeros its entries"
            )
        coo = matrix.tocoo()
        if coo.shape[0] != coo.shape[1]:
            raise ValueError(f"Graph.from_scipy: matrix must be square, got shape {coo.shape}")
        return cls.from_edges(
            coo.row,
            coo.col,
            coo.data,
            num_vertices=coo.shape[0],
            directed=directed,
            backend=backend,
        )

    # --- properties ---------------------------------------------------------------------------
    @property
    def xp(self):
        """The array module (numpy or cupy) holding this graph."""
        return self.backend.xp

    @property
    def num_edges(self) -> int:
        """Stored directed edges (an undirected edge counts twice, a self-loop once)."""
        return int(self.forward.indices.shape[0])

    @property
    def weighted(self) -> bool:
        return self.forward.weights is not None

    @property
    def offsets(self):
        return self.forward.offsets

    @property
    def indices(self):
        return self.forward.indices

    @property
    def weights(self):
        return self.forward.weights

    @property
    def reverse(self) -> CSR:
        """In-edges: ``reverse.indices[reverse.offsets[v]:reverse.offsets[v+1]]`` are v's in-neighbours."""
        if self._reverse is None:
            with clock.paying("prepare"), self.backend.activate():
                self._reverse = transpose(self.forward, self.num_vertices, self.backend)
                self.backend.synchronize()  # its kernels are the preparation's time
        return self._reverse

    def weight_range(self) -> tuple[float, float]:
        """``(lightest, heaviest)`` edge weight: NaN in both if a weight is NaN, ``(1, 1)``
        unweighted, ``(0, 0)`` without edges. Read once (cached: weights are not to change)."""

        def read():
            weights = self.weights
            if weights is None or weights.shape[0] == 0:
                return (1.0, 1.0) if self.num_edges else (0.0, 0.0)
            return float(self.backend.smallest(weights)), float(self.backend.largest(weights))

        return self.cached("weight range", read)

    def owned_ids(self):
        """Ids of the vertices whose edges this graph holds: all of them, or one device's part."""
        owned = self.context.owned
        if owned is None:
            return self.xp.arange(self.num_vertices, dtype=self.indices.dtype)
        # a part's vertices never change: once per part
        return self.cached(
            "owned ids", lambda: self.xp.flatnonzero(owned).astype(self.indices.dtype, copy=False)
        )

    def owned_index(self):
        """The vertices whose edges this graph holds, as an index: ``slice(None)`` for all of
        them, a slice for one contiguous range (an edge_balanced part), else their ids
        (:meth:`owned_ids`). Indexing with it gives views where it can."""
        if self.context.owned is None:
            return slice(None)

        def index():
            ids = to_host(self.owned_ids())  # (once per part)
            if ids.size and ids[-1] - ids[0] + 1 != ids.size:
                return self.owned_ids()
            start = int(ids[0]) if ids.size else 0
            return slice(start, start + int(ids.size))

        return self.cached("owned index", index)

    def cost_degrees(self):
        """``(out_degree, in_degree, num_edges)`` of the whole graph, for cost models.

        On one device of several these are the whole graph's (``context.degrees``), so that
        every device makes the same choice (a push on one and a pull on another would miss edges).
        """
        if self.context.degrees is not None:
            return self.context.degrees
        return self.out_degree(), self.in_degree(), self.num_edges

    def out_degree(self):
        """Out-degree of every vertex (computed once, cached)."""
        if self._out_degree is None:
            with clock.paying("prepare"), self.backend.activate():
                self._out_degree = self.xp.diff(self.forward.offsets)
        return self._out_degree

    def in_degree(self):
        """In-degree of every vertex (computed once, cached)."""
        if not self.directed:
            return self.out_degree()
        if self._in_degree is None:
            with clock.paying("prepare"), self.backend.activate():
                self._in_degree = self.xp.diff(self.reverse.offsets)
        return self._in_degree

    def cached(self, key, build: Callable):
        """``self.cache[key]``, built by ``build()`` the first time: a structure derived from
        this graph, kept with it (its arrays never change). The build is timed as a one-time
        preparation (``Stats.prepare_seconds`` of the run that pays it, or :meth:`prepare`)."""
        if key not in self.cache:
            with clock.paying("prepare"), self.backend.activate():
                self.cache[key] = build()
                self.backend.synchronize()  # its kernels are the preparation's time
        return self.cache[key]

    def prepare(self, algorithms=None) -> Graph:
        """Build now, on this graph's backend, the structures that runs of ``algorithms`` would
        otherwise build in their first call (or, for some, a later one), so that no call pays
        for them: ``Stats.prepare_seconds`` of a later run is then 0. Returns the graph.

        ``algorithms``: names from ``sorted(bspgraph.graph.graph.PREPARATIONS)`` ("bfs",
        "sssp", "pagerank", "cc", "bc", "tc", "core_number", "closeness", "harmonic",
        "eigenvector", "katz", "hits", "pagerank_from"), or None for all of them. What each
        builds, every one kept with the graph (``graph.cache`` and the graph's attributes):

        - every algorithm: the out-degrees (cost models) and, on a directed graph whose
          algorithm may pull or follows in-edges, the reverse CSR (in-edges with edge ids,
          O(E)) and the in-degrees;
        - "bfs", "sssp": the frontier limits of a repeated advance (a read of the largest
          degree); "sssp", "pagerank": the weight range (a read of the weights); "sssp" on
          NumPy, on a mesh (every out-list short and about as long): its out-lists padded
          into a table (heads and weights, V times the longest list of each);
        - "pagerank", and "sssp", "eigenvector", "katz", "hits", "pagerank_from" (which
          reduce over every list): on a large graph of skewed degrees (``operators.
          ORDERED_VERTICES`` vertices or more), the lists' columns renamed in degree order,
          which they would otherwise build in their ORDER_AFTER-th reduction; then the
          backend's structures of a product over every list (NumPy: the edge values as
          floats; CuPy: the pieces of the rows longer than ``LONG_ROW``); "pagerank": each
          vertex's out-weight (V float64 values, a product over the out-lists that a run
          would otherwise pay once); "pagerank", "pagerank_from" on NumPy: the transition
          matrix their pull reads (E float64 values);
        - "cc": the CSR of each list's first two entries (Afforest's sampling) on a graph of
          more than 8 edges a vertex, and on CuPy the pieces of the long rows it links along;
        - "bc": the float64 adjacency matrices (in- and out-edges, E values each) of its
          batched products; "closeness", "harmonic": the in-edge matrix in which a batched
          search counts (and the largest in-degree that sizes it), on a directed graph of
          the reversed graph they search, which they keep too (a batched BFS from
          ``sources=`` builds its matrix on its first call);
        - "tc": the edges oriented from lower to higher (degree, id) (a CSR of E/2 entries).

        Everything stays with the graph as long as it lives: on a large graph, prepare only
        the algorithms it will run.

        Kernels are not compiled here: ``bg.warmup()`` does that, once per machine, and a
        call's ``Stats.compile_seconds`` says what it compiled. A graph moved to another
        backend (``graph.to``, or a host graph that a call runs on a GPU) is a new graph
        without these: prepare the graph the calls receive, on their backend.

        Raises
        ------
        ValueError
            An unknown algorithm name (the message lists the valid ones).
        """
        known = sorted(PREPARATIONS)
        names = (
            known
            if algorithms is None
            else ([algorithms] if isinstance(algorithms, str) else list(algorithms))
        )
        unknown = [name for name in names if name not in PREPARATIONS]
        if unknown:
            raise ValueError(
                f"Graph.prepare: unknown algorithm(s) {', '.join(map(repr, unknown))}; "
                f"expected names from {', '.join(map(repr, known))}"
            )
        with self.backend.activate():
            for name in dict.fromkeys(names):
                PREPARATIONS[name](self)
        return self

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        w = ", weighted" if self.weighted else ""
        return f"Graph({self.num_vertices} vertices, {self.num_edges} edges, {kind}{w}, {self.backend.name})"

    # --- checks and conversions ---------------------------------------------------------------
    def check_vertex(self, vertex, *, name: str = "vertex", where: str = "") -> int:
        """Return ``vertex`` as int, or raise ValueError naming it and the valid range."""
        prefix = f"{where}({name}={vertex!r}): " if where else f"{name} {vertex!r}: "
        if isinstance(vertex, (bool, np.bool_)) or not isinstance(vertex, (int, np.integer)):
            raise ValueError(f"{prefix}a vertex id must be an integer")
        if not 0 <= vertex < self.num_vertices:
            raise ValueError(f"{prefix}vertex {int(vertex)} out of range [0, {self.num_vertices})")
        return int(vertex)

    def to(self, backend: str | Backend | None) -> Graph:
        """This graph on another backend (itself when it is already there)."""
        backend = get_backend(backend)
        if backend == self.backend:
            return self

        def move(csr: CSR | None) -> CSR | None:
            if csr is None:
                return None
            return CSR(
                *(
                    None if a is None else backend.asarray(a)
                    for a in (csr.offsets, csr.indices, csr.weights, csr.edge_ids)
                )
            )

        forward = move(self.forward)
        reverse = forward if not self.directed else move(self._reverse)
        return Graph(
            forward,
            self.num_vertices,
            directed=self.directed,
            backend=backend,
            summary=self.summary,
            reverse=reverse,
            context=self.context.to(backend),
        )

    def to_undirected(self) -> Graph:
        """The undirected graph of the same edges, directions dropped (itself if undirected).

        ``u -> v`` and ``v -> u`` become one edge with the smaller weight (what shortest paths
        see; networkx keeps the data of one of them). Built on the graph's backend from its two
        sorted edge lists (out-edges and in-edges): one stable merge of two sorted runs, O(E)
        past the in-edges a directed graph builds anyway.
        """
        if not self.directed:
            return self
        xp, forward, reverse = self.xp, self.forward, self.reverse
        src = xp.concatenate([forward.rows(self.backend), reverse.rows(self.backend)])
        dst = xp.concatenate([forward.indices, reverse.indices])
        weight = (
            None if forward.weights is None else xp.concatenate([forward.weights, reverse.weights])
        )
        both = Graph.from_edges(
            src, dst, weight, num_vertices=self.num_vertices, directed=True, backend=self.backend
        )
        return Graph(both.forward, self.num_vertices, directed=False, backend=self.backend)

    def reversed(self) -> Graph:
        """The graph with every edge turned around (networkx's ``G.reverse()``; the name
        ``reverse`` is taken by the in-edge CSR). Itself when undirected.

        O(E): the in-edges become the out-edges and the other way round (the in-edges are
        built first if they were not yet). Built once, kept with the graph (``cache``).
        """
        if not self.directed:
            return self
        return self.cached("reversed", self._reversed)

    def _reversed(self) -> Graph:
        xp, forward, reverse = self.xp, self.forward, self.reverse
        positions = xp.empty_like(reverse.edge_ids)  # forward edge p is reversed edge positions[p]
        positions[reverse.edge_ids] = xp.arange(reverse.edge_ids.shape[0], dtype=positions.dtype)
        return Graph(
            CSR(reverse.offsets, reverse.indices, reverse.weights),
            self.num_vertices,
            directed=True,
            backend=self.backend,
            reverse=CSR(forward.offsets, forward.indices, forward.weights, positions),
        )

    def subgraph(self, vertices) -> Graph:
        """The subgraph induced by ``vertices``: those vertices and the edges between them.

        Vertex ``i`` of the result is the ``i``-th smallest of ``vertices`` (networkx keeps
        the graph's node order too); repeated ids count once. O(V + E) on the graph's backend:
        the CSR rows stay sorted, so the kept edges are already in order.

        Raises
        ------
        ValueError
            An id that is not a vertex (named with the valid range).
        """
        xp, n = self.xp, self.num_vertices
        keep = xp.zeros(n, dtype=bool)
        ids = self.backend.asarray(vertices).reshape(-1)
        if ids.size:
            if ids.dtype.kind not in "iu":
                raise ValueError(f"Graph.subgraph: vertex ids must be integers, got {ids.dtype}")
            low, high = int(self.backend.smallest(ids)), int(self.backend.largest(ids))
            if low < 0 or high >= n:
                bad = low if low < 0 else high
                raise ValueError(f"Graph.subgraph: vertex {bad} out of range [0, {n})")
            keep[ids] = True
        new_id = xp.cumsum(keep) - 1  # the new id of each kept vertex
        count = int(self.backend.count(keep))
        rows = self.forward.rows(self.backend)
        kept = keep[rows] & keep[self.forward.indices]
        dtype = index_dtype(count)
        indices = new_id[self.forward.indices[kept]].astype(dtype)
        offsets = xp.zeros(count + 1, dtype=index_dtype(int(indices.shape[0])))
        offsets[1:] = xp.cumsum(ops.tally(self.backend, new_id[rows[kept]], count))
        weights = None if self.forward.weights is None else self.forward.weights[kept]
        return Graph(
            CSR(offsets, indices, weights), count, directed=self.directed, backend=self.backend
        )

    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Host arrays ``(src, dst, weight)`` of the stored directed edges, in CSR order."""
        offsets = to_host(self.forward.offsets)
        src = np.repeat(np.arange(self.num_vertices, dtype=offsets.dtype), np.diff(offsets))
        dst = to_host(self.forward.indices)
        weight = None if self.forward.weights is None else to_host(self.forward.weights)
        return src, dst, weight

    def to_scipy(self):
        """A scipy.sparse CSR matrix with the weights (1.0 where unweighted)."""
        import scipy.sparse as sp

        n = self.num_vertices
        data = (
            np.ones(self.num_edges)
            if self.forward.weights is None
            else to_host(self.forward.weights)
        )
        return sp.csr_matrix(
            (data, to_host(self.forward.indices), to_host(self.forward.offsets)), shape=(n, n)
        )

    def to_networkx(self):
        """The networkx Graph or DiGraph with the same vertices, edges and weights."""
        import networkx as nx

        graph = nx.DiGraph() if self.directed else nx.Graph()
        graph.add_nodes_from(range(self.num_vertices))
        src, dst, weight = self.edges()
        if weight is None:
            graph.add_edges_from(zip(src.tolist(), dst.tolist()))
        else:
            graph.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), weight.tolist()))
        return graph
