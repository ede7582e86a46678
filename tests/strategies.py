"""Hypothesis strategies: random graphs with the awkward cases drawn often."""

import os

import networkx as nx
import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

import bspgraph as bg

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")  # conftest.py registers and loads it
DEEP = 16 if PROFILE == "deep" else 1  # 60 -> about 1,000

# The seed of the multi-device grid's searches (tests/grid.py): fixed under the ci profile, so
# CI runs the same examples every time; drawn per run under the others. Printed in the header.
_SEED = os.environ.get("BSPGRAPH_TEST_SEED")
if _SEED is not None:
    SEED = int(_SEED)
else:
    SEED = 0 if PROFILE == "ci" else int(np.random.SeedSequence().entropy % 2**32)


def examples(n: int) -> settings:
    """Settings for ``n`` examples (no deadline), DEEP times as many under the deep profile."""
    return settings(max_examples=n * DEEP, deadline=None)


@st.composite
def edge_lists(
    draw, *, min_vertices=1, max_vertices=24, max_edges=80, weighted=None, directed=None
):
    """(num_vertices, src, dst, weight | None, directed): duplicates, self-loops, isolated
    vertices, sinks and several components all occur; weights include 0 and ties. Each edge is
    drawn whole (source, target, weight), so that shrinking drops edges, not ends of edges."""
    n = draw(st.integers(min_vertices, max_vertices))
    if weighted is None:
        weighted = draw(st.booleans())
    if directed is None:
        directed = draw(st.booleans())
    m = draw(st.integers(0, max_edges if n else 0))
    ids = st.integers(0, max(n - 1, 0))
    edge = st.tuples(ids, ids, st.integers(0, 9) if weighted else st.just(0))
    edges = np.array(draw(st.lists(edge, min_size=m, max_size=m)), dtype=np.int64).reshape(m, 3)
    src, dst = edges[:, 0].copy(), edges[:, 1].copy()
    weight = edges[:, 2].astype(float) if weighted else None
    return n, src, dst, weight, directed


@st.composite
def graphs(draw, **kwargs):
    """(Graph on NumPy, the networkx graph networkx builds from the same edges)."""
    n, src, dst, weight, directed = draw(edge_lists(**kwargs))
    graph = bg.Graph.from_edges(
        src, dst, weight, num_vertices=n, directed=directed, backend="numpy"
    )
    return graph, to_networkx(n, src, dst, weight, directed)


def to_networkx(n, src, dst, weight, directed):
    """networkx's graph of the edges; a duplicate keeps the minimum weight, as bspgraph does."""
    nx_graph = nx.DiGraph() if directed else nx.Graph()
    nx_graph.add_nodes_from(range(n))
    for i, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        w = 1.0 if weight is None else float(weight[i])
        if not nx_graph.has_edge(u, v) or nx_graph[u][v]["weight"] > w:
            nx_graph.add_edge(u, v, weight=w)
    return nx_graph


def as_array(mapping, n, missing):
    """A dense array from networkx's {vertex: value} dict."""
    out = np.full(n, missing, dtype=float)
    for vertex, value in mapping.items():
        out[vertex] = value
    return out
