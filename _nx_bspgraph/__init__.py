"""networkx's ``backend_info`` entry point for bspgraph: metadata only.

networkx calls :func:`get_info` while it is being imported, to document which functions the
``bspgraph`` backend implements, so this package must stay tiny and must not import bspgraph,
NumPy or networkx. The backend itself is ``bspgraph.nx.interface:BackendInterface``.
"""

# The functions of bspgraph.nx (tests/nx/test_interface.py checks that the lists agree).
_FUNCTIONS = {
    "betweenness_centrality": {
        "additional_docs": (
            "Exact Brandes betweenness on bspgraph's BFS primitives; k (source sampling) and "
            "weight are not supported and fall back to networkx."
        ),
    },
    "connected_components": {
        "additional_docs": "Afforest: union-find over sampled edges, then the rest, on the whole graph.",
    },
    "pagerank": {
        "additional_docs": (
            "Pull-style power iteration with networkx's semantics; nstart and dangling are not "
            "supported and fall back to networkx."
        ),
    },
    "single_source_shortest_path_length": {
        "additional_docs": (
            "Level-synchronous BFS (push or pull per level); a cutoff filters the levels."
        ),
    },
    "triangles": {
        "additional_docs": "Triangle counting by oriented-wedge intersection (degree order).",
    },
}


def get_info() -> dict:
    """The backend's name, summary and functions, as networkx's ``backend_info`` expects."""
    return {
        "backend_name": "bspgraph",
        "project": "bspgraph",
        "package": "bspgraph",
        "short_summary": (
            "Gunrock-style frontier operators on NumPy or CuPy, on one or several devices."
        ),
        "functions": {name: dict(info) for name, info in _FUNCTIONS.items()},
    }
