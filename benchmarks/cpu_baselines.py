"""The CPU baselines of ``benchmarks.cpu``: the same algorithms with scipy.sparse.csgraph, plain
NumPy, python-graphblas (SuiteSparse:GraphBLAS) and python-igraph, each returning host arrays
in bspgraph's conventions (depth -1 unreachable, distance inf unreachable, label = smallest id).

Every function takes prepared inputs (a scipy CSR matrix, a GraphBLAS Matrix, an igraph Graph):
building those is setup, not timed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

ALPHA, BETA = 14, 24  # Beamer's direction switch, for the GraphBLAS BFS (LAGraph's is similar)


# --- scipy.sparse.csgraph and NumPy -----------------------------------------------------------
def scipy_bfs(matrix, source: int):
    """``breadth_first_order``: the BFS order and a BFS tree (checked by ``check_tree``)."""
    return csgraph.breadth_first_order(matrix, source, directed=True, return_predecessors=True)


def check_tree(depth, predecessors, source: int) -> bool:
    """True when ``depth`` is the BFS depth: it reaches what the BFS tree reaches and every tree
    edge goes down one level (the tree's depths are the hop distances)."""
    reached = depth >= 0
    tree = predecessors >= 0
    tree[source] = True
    if not np.array_equal(reached, tree):
        return False
    child = np.flatnonzero(predecessors >= 0)
    return depth[source] == 0 and bool((depth[child] == depth[predecessors[child]] + 1).all())


def numpy_push_bfs(offsets, indices, source: int, n: int) -> np.ndarray:
    """A plain level-synchronous push BFS in NumPy: expand the frontier's edges, keep the new."""
    depth = np.full(n, -1, dtype=np.int32)
    depth[source] = 0
    frontier, level = np.array([source]), 0
    while frontier.size:
        starts, degrees = offsets[frontier], offsets[frontier + 1] - offsets[frontier]
        edge = np.repeat(starts - np.cumsum(degrees) + degrees, degrees) + np.arange(degrees.sum())
        dst = indices[edge]
        dst = np.unique(dst[depth[dst] < 0])
        level += 1
        depth[dst] = level
        frontier = dst
    return depth


def scipy_sssp(matrix, source: int) -> np.ndarray:
    return csgraph.dijkstra(matrix, directed=True, indices=source)


def scipy_cc(matrix) -> np.ndarray:
    _count, labels = csgraph.connected_components(matrix, directed=False)
    return labels


def smallest_id_labels(labels) -> np.ndarray:
    """Relabel components by their smallest vertex id (bspgraph's convention)."""
    labels = np.asarray(labels)
    smallest = np.full(labels.max() + 1, labels.size, dtype=np.int64)
    np.minimum.at(smallest, labels, np.arange(labels.size))
    return smallest[labels]


def transition(matrix):
    """``P.T`` as CSR, ``P`` the out-weight-normalised adjacency, and the dangling mask."""
    matrix = matrix.astype(np.float64)
    out_weight = np.asarray(matrix.sum(axis=1)).ravel()
    dangling = out_weight == 0
    scale = sp.diags(np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, out_weight)))
    return (scale @ matrix).T.tocsr(), dangling


def scipy_pagerank(transposed, dangling, iterations: int, alpha: float = 0.85) -> np.ndarray:
    """Power iteration from the uniform vector, networkx's formula: one CSR matvec per iteration,
    and the L1 change that networkx's stopping test reads (computed each iteration, as the same
    algorithm must; the count of iterations is fixed here, for timing)."""
    n = transposed.shape[0]
    rank = np.full(n, 1.0 / n)
    for _ in range(iterations):
        new = alpha * (transposed @ rank + rank[dangling].sum() / n) + (1 - alpha) / n
        change = np.abs(new - rank).sum()  # noqa: F841 (networkx: stop when below n * tol)
        rank = new
    return rank


# --- python-graphblas -------------------------------------------------------------------------
def gb_matrix(graph):
    """The graph as a GraphBLAS Matrix (FP32 weights, or BOOL structure when unweighted)."""
    import graphblas as gb

    src, dst, weight = graph.edges()
    n = graph.num_vertices
    if weight is None:
        return gb.Matrix.from_coo(src, dst, True, nrows=n, ncols=n, dtype=bool)
    return gb.Matrix.from_coo(src, dst, weight, nrows=n, ncols=n)


def gb_bfs(matrix, source: int) -> np.ndarray:
    """Level-synchronous BFS with a Beamer push/pull switch (LAGraph's ``BreadthFirstSearch``):
    push ``q<!v> = q any.pair A``, pull ``q<!v> = A any.pair q`` (A is symmetric here)."""
    import graphblas as gb
    from graphblas import semiring

    n = matrix.nrows
    average_degree = matrix.nvals / max(n, 1)
    depth = gb.Vector(gb.dtypes.INT32, n)
    frontier = gb.Vector(bool, n)
    depth[source] = 0
    frontier[source] = True
    level, push, unexplored, previous = 0, True, matrix.nvals, 1
    while frontier.nvals:
        size = frontier.nvals
        growing = size > previous
        if push and growing and size * average_degree * ALPHA > unexplored:
            push = False
        elif not push and not growing and size * BETA < n:
            push = True
        unexplored -= size * average_degree
        level += 1
        product = frontier @ matrix if push else matrix @ frontier
        frontier(~depth.S, replace=True) << semiring.any_pair(product)
        depth(frontier.S) << level
        previous = size
    return depth.to_dense(fill_value=-1)


def gb_sssp(matrix, source: int) -> np.ndarray:
    """Frontier Bellman-Ford in min.plus: relax the out-edges of the vertices that improved."""
    import graphblas as gb
    from graphblas import binary, semiring

    n = matrix.nrows
    distance = gb.Vector(matrix.dtype, n)
    distance[source] = 0
    frontier = distance.dup()
    reached = gb.Vector(matrix.dtype, n)
    while frontier.nvals:
        reached << semiring.min_plus(frontier @ matrix)
        frontier.clear()
        frontier(~distance.S) << reached  # first reached
        better = reached.ewise_mult(distance, binary.lt).new()
        frontier(better.V) << reached  # shorter than before
        distance(binary.min) << frontier
    return distance.to_dense(fill_value=np.inf).astype(np.float64)


def gb_cc(matrix) -> np.ndarray:
    """FastSV (LAGraph's ``FastSV5`` without sampling): min-grandparent hooking, stochastic and
    aggressive, then shortcutting, until the grandparents stop changing."""
    import graphblas as gb
    from graphblas import binary, semiring

    n = matrix.nrows
    ids = np.arange(n, dtype=np.int64)
    parent = gb.Vector.from_coo(ids, ids, size=n)
    grandparent = parent.dup()
    least = parent.dup()
    while True:
        least(binary.min) << semiring.min_second(matrix @ grandparent)
        # stochastic hooking: parent[parent[u]] = min(., least[u]); duplicates meet in the accum
        targets = parent.to_dense()
        parent(binary.min) << gb.Vector.from_coo(
            targets, least.to_dense(), size=n, dup_op=binary.min
        )
        parent(binary.min) << least  # aggressive hooking
        parent(binary.min) << grandparent  # shortcutting
        jumped = parent[parent.to_dense()].new()
        if jumped.isequal(grandparent):
            return parent.to_dense()
        grandparent = jumped


def gb_transition(matrix):
    """GraphBLAS ``P`` (rows scaled by 1/out-weight, FP64) and a Vector holding the dangling."""
    import graphblas as gb

    n, matrix = matrix.nrows, matrix.dup(gb.dtypes.FP64)
    out_weight = matrix.reduce_rowwise().new().to_dense(fill_value=0.0)
    dangling = out_weight == 0
    inverse = gb.Vector.from_dense(np.where(dangling, 0.0, 1.0 / np.where(dangling, 1, out_weight)))
    transition = (inverse.diag() @ matrix).new()
    ids = np.flatnonzero(dangling)
    return transition, gb.Vector.from_coo(ids, True, size=n, dtype=bool)


def gb_pagerank(transition, dangling, iterations: int, alpha: float = 0.85) -> np.ndarray:
    """Power iteration: ``r = alpha * (r plus.times P + dangling mass / n) + (1 - alpha) / n``."""
    import graphblas as gb
    from graphblas import binary, semiring

    n = transition.nrows
    rank = gb.Vector.from_scalar(1.0 / n, n, dtype=gb.dtypes.FP64)
    pulled = gb.Vector(gb.dtypes.FP64, n)
    for _ in range(iterations):
        mass = rank.select(dangling.S).reduce().get(0.0) if dangling.nvals else 0.0
        pulled << semiring.plus_times(rank @ transition)
        rank[:] << alpha * mass / n + (1 - alpha) / n
        rank(binary.plus) << pulled.apply(binary.times, right=alpha)
    return rank.to_dense()


def gb_bc(matrix, sources) -> np.ndarray:
    """Brandes from a batch of sources (LAGraph's ``VertexCentrality_Betweenness``): forward,
    paths per level ``frontier<!paths> = frontier plus.first A``; backward from the deepest
    level, ``W = (1 + delta) / paths`` pulled one level up. Returns the unscaled sums of the
    dependencies over the sources (each source's own excluded)."""
    import graphblas as gb
    from graphblas import binary, semiring

    n, k = matrix.nrows, len(sources)
    rows = np.arange(k)
    structure = matrix  # plus.first reads only the left operand's values
    paths = gb.Matrix.from_coo(rows, sources, 1.0, nrows=k, ncols=n, dtype=gb.dtypes.FP64)
    frontier = gb.Matrix(gb.dtypes.FP64, k, n)
    frontier(~paths.S, replace=True) << semiring.plus_first(paths @ structure)
    levels = []
    while frontier.nvals:
        levels.append(frontier.dup(bool))
        paths(binary.plus) << frontier
        frontier(~paths.S, replace=True) << semiring.plus_first(frontier @ structure)
    dependency = gb.Matrix.from_scalar(1.0, k, n, dtype=gb.dtypes.FP64)  # 1 + delta
    weight = gb.Matrix(gb.dtypes.FP64, k, n)
    for depth in range(len(levels) - 1, 0, -1):
        weight(levels[depth].S, replace=True) << dependency.ewise_mult(paths, binary.truediv)
        weight(levels[depth - 1].S, replace=True) << semiring.plus_first(weight @ structure)
        dependency(binary.plus) << weight.ewise_mult(paths, binary.times)
    return dependency.reduce_columnwise().new().to_dense() - k


def gb_tc(matrix) -> int:
    """Triangles by masked mxm (LAGraph's Sandia LL): ``sum(L .* (L plus.pair L'))``, ``L`` the
    strictly lower triangle."""
    from graphblas import select, semiring

    lower = select.tril(matrix, -1).new()
    counts = semiring.plus_pair(lower @ lower.T).new(mask=lower.S)
    return int(counts.reduce_scalar().get(0))


# --- igraph -----------------------------------------------------------------------------------
def ig_graph(graph):
    import igraph as ig

    src, dst, weight = graph.edges()
    once = src <= dst  # undirected: each edge once
    edges = np.column_stack((src[once], dst[once]))
    g = ig.Graph(n=graph.num_vertices, edges=edges, directed=False)
    if weight is not None:
        g.es["weight"] = weight[once].astype(np.float64)
    return g


def ig_bfs(g, source: int) -> np.ndarray:
    vids, layers, _parents = g.bfs(source)
    depth = np.full(g.vcount(), -1, dtype=np.int64)
    vids, layers = np.asarray(vids), np.asarray(layers)
    depth[vids] = np.repeat(np.arange(layers.size - 1), np.diff(layers))
    return depth


def ig_sssp(g, source: int) -> np.ndarray:
    weights = "weight" if "weight" in g.es.attributes() else None
    return np.asarray(g.distances(source, weights=weights, algorithm="dijkstra")[0])


def ig_cc(g) -> np.ndarray:
    return smallest_id_labels(g.connected_components().membership)


def ig_pagerank(g, alpha: float = 0.85) -> np.ndarray:
    weights = "weight" if "weight" in g.es.attributes() else None
    return np.asarray(g.pagerank(damping=alpha, weights=weights))


def ig_bc(g, sources) -> np.ndarray:
    """Unscaled dependency sums over ``sources``, as ``gb_bc`` (igraph halves undirected ones)."""
    return 2 * np.asarray(g.betweenness(directed=False, sources=list(sources)))


def ig_tc(g) -> np.ndarray:
    """Triangles per vertex from the local clustering coefficient: ``t = c * d (d - 1) / 2``."""
    local = np.asarray(g.transitivity_local_undirected(mode="zero"))
    degree = np.asarray(g.degree())
    return np.rint(local * degree * (degree - 1) / 2).astype(np.int64)


# --- networkx ---------------------------------------------------------------------------------
def nx_graph(graph):
    """The graph as a networkx Graph (undirected graphs here), weights as ``weight``."""
    import networkx as nx

    src, dst, weight = graph.edges()
    g = nx.Graph()
    g.add_nodes_from(range(graph.num_vertices))
    if weight is None:
        g.add_edges_from(zip(src.tolist(), dst.tolist()))
    else:
        g.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), weight.astype(float).tolist()))
    return g


def nx_bfs(g, source: int, n: int) -> np.ndarray:
    import networkx as nx

    depth = np.full(n, -1, dtype=np.int64)
    for v, d in nx.single_source_shortest_path_length(g, source).items():
        depth[v] = d
    return depth


def nx_sssp(g, source: int, n: int) -> np.ndarray:
    import networkx as nx

    distance = np.full(n, np.inf)
    for v, d in nx.single_source_dijkstra_path_length(g, source).items():
        distance[v] = d
    return distance


def nx_cc(g, n: int) -> np.ndarray:
    import networkx as nx

    labels = np.empty(n, dtype=np.int64)
    for component in nx.connected_components(g):
        members = list(component)
        labels[members] = min(members)
    return labels


def nx_bc(g, sources) -> np.ndarray:
    """Unscaled dependency sums over ``sources`` (``betweenness_centrality_subset`` to every
    target, which halves undirected sums), as ``gb_bc``."""
    import networkx as nx

    values = nx.betweenness_centrality_subset(g, list(sources), list(g), normalized=False)
    return 2 * np.array([values[v] for v in range(g.number_of_nodes())])
