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
    connected_components,
    pagerank,
    single_source_shortest_path_length,
    triangles,
)
from .graph import NxGraph, from_networkx, to_networkx
from .interface import BackendInterface

__all__ = [
    "ALGORITHMS", "BackendInterface", "NxGraph", "betweenness_centrality", "connected_components",
    "from_networkx", "pagerank", "single_source_shortest_path_length", "to_networkx", "triangles",
]  # fmt: skip
