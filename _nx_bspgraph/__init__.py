"""networkx's ``backend_info`` entry point for bspgraph: metadata only.

networkx calls :func:`get_info` while it is being imported, to document which functions the
``bspgraph`` backend implements, so this package must stay tiny and must not import bspgraph,
NumPy or networkx (only os). The backend itself is ``bspgraph.nx.interface:BackendInterface``.
"""

import os

# The functions of bspgraph.nx and a line on each (tests/nx/test_interface.py checks that the
# lists agree).
_NO_SORT = "sort_neighbors is not supported."
_NON_NEGATIVE = "Negative weights and weight functions are not supported (NotImplementedError)."
_DIRECTED = "Directed graphs are not supported."
_WEIGHTED = "distance (weighted) is not supported."
_DOCS = {
    "edge_betweenness_centrality": (
        "Brandes over batches of sources (batched path counts and dependencies); k samples "
        "the sources as networkx does. weight and multigraphs are not supported."
    ),
    "strongly_connected_components": (
        "Colouring: colours spread forward, each root's component collected backward, in "
        "rounds; the sets by their first node (networkx: Tarjan's order)."
    ),
    "number_strongly_connected_components": "Colouring (forward colours, backward marks).",
    "is_strongly_connected": "Colouring (forward colours, backward marks).",
    "all_pairs_shortest_path_length": "Batched BFS (a lane per node, one sparse product a level).",
    "average_shortest_path_length": (
        "Batched BFS, or one SSSP a node when weighted. " + _NON_NEGATIVE
    ),
    "diameter": "Eccentricities by batched BFS, or SSSP when weighted. " + _NON_NEGATIVE,
    "dijkstra_path": "Bucketed SSSP with parents (one shortest path where ties). " + _NON_NEGATIVE,
    "eccentricity": "Batched BFS, or one SSSP a node when weighted. " + _NON_NEGATIVE,
    "radius": "Eccentricities by batched BFS, or SSSP when weighted. " + _NON_NEGATIVE,
    "shortest_path": (
        "Level-ordered BFS (networkx's paths) from one node, BFS or bucketed SSSP with "
        "parents between two. " + _NON_NEGATIVE
    ),
    "single_source_dijkstra": "Bucketed SSSP with parents. " + _NON_NEGATIVE,
    "single_source_dijkstra_path": "Bucketed SSSP with parents. " + _NON_NEGATIVE,
    "single_source_shortest_path": "Level-ordered BFS: networkx's paths exactly.",
    "average_clustering": "Triangle counting; directed graphs and weight are not supported.",
    "betweenness_centrality": (
        "Brandes betweenness over batches of sources (one sparse product a level for a "
        "batch); k samples the sources as networkx does. weight is not supported."
    ),
    "bfs_edges": "Level-synchronous BFS in networkx's order. " + _NO_SORT,
    "bfs_layers": "Level-synchronous BFS from all sources at once, in networkx's order.",
    "bfs_predecessors": "Level-synchronous BFS in networkx's order. " + _NO_SORT,
    "bfs_successors": "Level-synchronous BFS in networkx's order. " + _NO_SORT,
    "bfs_tree": "Level-synchronous BFS in networkx's order. " + _NO_SORT,
    "closeness_centrality": (
        "Batched BFS (a lane per node, one sparse product a level for a batch). " + _WEIGHTED
    ),
    "clustering": "Triangle counting; directed graphs and weight are not supported.",
    "connected_components": "Union-find over sampled edges, then the rest, on the whole graph.",
    "core_number": "Level-synchronous peeling. " + _DIRECTED,
    "degree_centrality": "Degrees from the edge arrays.",
    "ancestors": "BFS along in-edges.",
    "descendants": "BFS.",
    "dijkstra_path_length": "Bucketed SSSP. " + _NON_NEGATIVE,
    "eigenvector_centrality": "Power iteration with A + I, as networkx's.",
    "harmonic_centrality": "Batched BFS from the nodes of nbunch. " + _WEIGHTED,
    "has_path": "BFS.",
    "hits": "Power iteration on A A^T (networkx's _hits_python; networkx calls ARPACK).",
    "is_connected": "Union-find.",
    "is_weakly_connected": "Union-find, directions ignored.",
    "k_core": "Level-synchronous peeling. " + _DIRECTED,
    "katz_centrality": "Power iteration, as networkx's.",
    "node_connected_component": "BFS.",
    "number_connected_components": "Union-find.",
    "number_weakly_connected_components": "Union-find, directions ignored.",
    "pagerank": "Pull-style power iteration with networkx's semantics (nstart and dangling too).",
    "shortest_path_length": "BFS, or bucketed SSSP when weighted. " + _NON_NEGATIVE,
    "single_source_bellman_ford_path_length": "Bucketed SSSP. " + _NON_NEGATIVE,
    "single_source_dijkstra_path_length": "Bucketed SSSP. " + _NON_NEGATIVE,
    "single_source_shortest_path_length": (
        "Level-synchronous BFS (push or pull per level); a cutoff filters the levels."
    ),
    "transitivity": "Triangle counting. " + _DIRECTED,
    "triangles": "Triangle counting by oriented-wedge intersection (degree order).",
    "weakly_connected_components": "Union-find, directions ignored.",
}
_FUNCTIONS = {name: {"additional_docs": docs} for name, docs in _DOCS.items()}


def _autoconfigure() -> None:
    """With ``BSPGRAPH_NX_AUTOCONFIG=true``, what nx-cugraph's ``NX_CUGRAPH_AUTOCONFIG``
    does, through networkx's own environment variables (read right after this): bspgraph
    first in ``NETWORKX_BACKEND_PRIORITY``, fallback to networkx, converted graphs cached, and
    the cache note ("cache" in ``NETWORKX_WARNINGS_TO_IGNORE``) off, since whoever opts in has
    read what it says (docs/networkx-backend.md). A variable the user set is left as it is."""
    if os.environ.get("BSPGRAPH_NX_AUTOCONFIG", "").strip().lower() != "true":
        return
    priority = "NETWORKX_BACKEND_PRIORITY_ALGOS"
    if priority not in os.environ:
        priority = "NETWORKX_BACKEND_PRIORITY"
    names = [name.strip() for name in os.environ.get(priority, "").split(",") if name.strip()]
    if "bspgraph" not in names:
        os.environ[priority] = ",".join(["bspgraph", *names])
    os.environ.setdefault("NETWORKX_FALLBACK_TO_NX", "true")
    os.environ.setdefault("NETWORKX_CACHE_CONVERTED_GRAPHS", "true")
    os.environ.setdefault("NETWORKX_WARNINGS_TO_IGNORE", "cache")


def get_info() -> dict:
    """The backend's name, summary and functions, as networkx's ``backend_info`` expects
    (and the opt-in configuration of ``BSPGRAPH_NX_AUTOCONFIG``)."""
    _autoconfigure()
    return {
        "backend_name": "bspgraph",
        "project": "bspgraph",
        "package": "bspgraph",
        "short_summary": (
            "Gunrock-style frontier operators on NumPy or CuPy, on one or several devices."
        ),
        "functions": {name: dict(info) for name, info in _FUNCTIONS.items()},
    }
