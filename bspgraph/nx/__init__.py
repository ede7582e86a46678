"""A networkx backend on bspgraph: ``nx.pagerank(G, backend="bspgraph")`` (see docs/networkx-backend.md).

networkx loads :class:`~bspgraph.nx.interface.BackendInterface` through the
``networkx.backends`` entry point once bspgraph is installed. The functions can also be called
directly, on a networkx graph or on a converted one:

>>> import networkx as nx
>>> from bspgraph import nx as bnx
>>> bnx.triangles(nx.complete_graph(4))
{0: 3, 1: 3, 2: 3, 3: 3}
"""

from .algorithms import (
    ALGORITHMS,
    betweenness_centrality,
    closeness_centrality,
    connected_components,
    harmonic_centrality,
    pagerank,
    single_source_shortest_path_length,
    triangles,
)
from .centrality import (
    average_clustering,
    clustering,
    core_number,
    degree_centrality,
    edge_betweenness_centrality,
    eigenvector_centrality,
    hits,
    is_connected,
    is_strongly_connected,
    is_weakly_connected,
    k_core,
    katz_centrality,
    node_connected_component,
    number_connected_components,
    number_strongly_connected_components,
    number_weakly_connected_components,
    strongly_connected_components,
    transitivity,
    weakly_connected_components,
)
from .graph import NxGraph, from_networkx, to_networkx
from .interface import BackendInterface
from .paths import (
    all_pairs_shortest_path_length,
    average_shortest_path_length,
    diameter,
    dijkstra_path,
    eccentricity,
    radius,
    shortest_path,
    single_source_dijkstra,
    single_source_dijkstra_path,
    single_source_shortest_path,
)
from .traversal import (
    ancestors,
    bfs_edges,
    bfs_layers,
    bfs_predecessors,
    bfs_successors,
    bfs_tree,
    descendants,
    dijkstra_path_length,
    has_path,
    shortest_path_length,
    single_source_bellman_ford_path_length,
    single_source_dijkstra_path_length,
)

__all__ = [
    "edge_betweenness_centrality",
    "strongly_connected_components",
    "number_strongly_connected_components",
    "is_strongly_connected",
    "all_pairs_shortest_path_length",
    "average_shortest_path_length",
    "diameter",
    "dijkstra_path",
    "eccentricity",
    "radius",
    "shortest_path",
    "single_source_dijkstra",
    "single_source_dijkstra_path",
    "single_source_shortest_path",
    "ALGORITHMS",
    "BackendInterface",
    "NxGraph",
    "from_networkx",
    "to_networkx",
    "ancestors",
    "average_clustering",
    "betweenness_centrality",
    "bfs_edges",
    "bfs_layers",
    "bfs_predecessors",
    "bfs_successors",
    "bfs_tree",
    "closeness_centrality",
    "clustering",
    "connected_components",
    "core_number",
    "degree_centrality",
    "descendants",
    "dijkstra_path_length",
    "eigenvector_centrality",
    "harmonic_centrality",
    "has_path",
    "hits",
    "is_connected",
    "is_weakly_connected",
    "k_core",
    "katz_centrality",
    "node_connected_component",
    "number_connected_components",
    "number_weakly_connected_components",
    "pagerank",
    "shortest_path_length",
    "single_source_bellman_ford_path_length",
    "single_source_dijkstra_path_length",
    "single_source_shortest_path_length",
    "transitivity",
    "triangles",
    "weakly_connected_components",
]
