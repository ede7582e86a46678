"""The networkx backend's speed-up over networkx, per function served, as a markdown table.

    python benchmarks/nx_backend.py --backend numpy            # the CPU column
    python benchmarks/nx_backend.py --backend cupy             # the GPU column (one GPU)
    python benchmarks/nx_backend.py --vertices 20000 --edges 200000 --only pagerank,hits

For each function: networkx's own time, bspgraph's through ``backend="bspgraph"`` with the
conversion (the graph's conversion cache cleared first), and again on the cached conversion.
One run of each (the graphs are big; on a shared machine take the ratios more than the
seconds). The graphs: ``gnm_random_graph(vertices, edges, seed=1)``, undirected with integer
weights 1..10, and its directed twin for the functions of directed graphs. Functions whose
networkx time is out of reach at this size (all pairs, exact betweenness) are not timed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import networkx as nx  # noqa: E402


def _graphs(vertices: int, edges: int):
    undirected = nx.gnm_random_graph(vertices, edges, seed=1)
    rng = random.Random(2)
    for _, _, data in undirected.edges(data=True):
        data["weight"] = rng.randint(1, 10)
    directed = nx.gnm_random_graph(vertices, edges, seed=3, directed=True)
    return undirected, directed


def _cases(vertices: int):
    """(function name, graph kind, call): the call takes the graph and a ``backend`` keyword."""
    s, t = 0, vertices // 2
    return [
        ("bfs_edges", "u", lambda g, **b: list(nx.bfs_edges(g, s, **b))),
        ("bfs_tree", "u", lambda g, **b: nx.bfs_tree(g, s, **b)),
        ("bfs_layers", "u", lambda g, **b: list(nx.bfs_layers(g, [s], **b))),
        ("bfs_predecessors", "u", lambda g, **b: list(nx.bfs_predecessors(g, s, **b))),
        ("bfs_successors", "u", lambda g, **b: list(nx.bfs_successors(g, s, **b))),
        ("descendants", "d", lambda g, **b: nx.descendants(g, s, **b)),
        ("has_path", "d", lambda g, **b: nx.has_path(g, s, t, **b)),
        ("shortest_path_length", "u", lambda g, **b: nx.shortest_path_length(g, s, **b)),
        ("single_source_shortest_path_length", "u",
         lambda g, **b: nx.single_source_shortest_path_length(g, s, **b)),
        ("single_source_dijkstra_path_length", "u",
         lambda g, **b: nx.single_source_dijkstra_path_length(g, s, **b)),
        ("dijkstra_path_length", "u", lambda g, **b: nx.dijkstra_path_length(g, s, t, **b)),
        ("single_source_bellman_ford_path_length", "u",
         lambda g, **b: nx.single_source_bellman_ford_path_length(g, s, **b)),
        ("connected_components", "u", lambda g, **b: list(nx.connected_components(g, **b))),
        ("number_connected_components", "u",
         lambda g, **b: nx.number_connected_components(g, **b)),
        ("is_connected", "u", lambda g, **b: nx.is_connected(g, **b)),
        ("node_connected_component", "u", lambda g, **b: nx.node_connected_component(g, s, **b)),
        ("weakly_connected_components", "d",
         lambda g, **b: list(nx.weakly_connected_components(g, **b))),
        ("number_weakly_connected_components", "d",
         lambda g, **b: nx.number_weakly_connected_components(g, **b)),
        ("is_weakly_connected", "d", lambda g, **b: nx.is_weakly_connected(g, **b)),
        ("pagerank", "u", lambda g, **b: nx.pagerank(g, **b)),
        ("pagerank(weight=None)", "d", lambda g, **b: nx.pagerank(g, weight=None, **b)),
        ("hits", "d", lambda g, **b: nx.hits(g, **b)),
        ("katz_centrality", "d", lambda g, **b: nx.katz_centrality(g, alpha=0.01, **b)),
        ("eigenvector_centrality", "d", lambda g, **b: nx.eigenvector_centrality(g, **b)),
        ("degree_centrality", "u", lambda g, **b: nx.degree_centrality(g, **b)),
        ("triangles", "u", lambda g, **b: nx.triangles(g, **b)),
        ("clustering", "u", lambda g, **b: nx.clustering(g, **b)),
        ("average_clustering", "u", lambda g, **b: nx.average_clustering(g, **b)),
        ("transitivity", "u", lambda g, **b: nx.transitivity(g, **b)),
        ("core_number", "u", lambda g, **b: nx.core_number(g, **b)),
        ("k_core", "u", lambda g, **b: nx.k_core(g, **b)),
        ("shortest_path", "u", lambda g, **b: nx.shortest_path(g, s, t, **b)),
        ("shortest_path(source)", "u", lambda g, **b: nx.shortest_path(g, s, **b)),
        ("dijkstra_path", "u", lambda g, **b: nx.dijkstra_path(g, s, t, **b)),
        ("single_source_dijkstra(target)", "u",
         lambda g, **b: nx.single_source_dijkstra(g, s, t, **b)),
        ("single_source_dijkstra", "u", lambda g, **b: nx.single_source_dijkstra(g, s, **b)),
        ("strongly_connected_components", "d",
         lambda g, **b: list(nx.strongly_connected_components(g, **b))),
        ("number_strongly_connected_components", "d",
         lambda g, **b: nx.number_strongly_connected_components(g, **b)),
        ("is_strongly_connected", "d", lambda g, **b: nx.is_strongly_connected(g, **b)),
        ("eccentricity(v)", "u", lambda g, **b: nx.eccentricity(g, v=s, **b)),
        # every node's search (networkx: hours at 200k nodes): only when --only names them
        ("all_pairs_shortest_path_length", "u",
         lambda g, **b: sum(len(d) for _, d in nx.all_pairs_shortest_path_length(g, **b))),
        ("diameter", "u", lambda g, **b: nx.diameter(g, **b)),
        ("average_shortest_path_length", "u",
         lambda g, **b: nx.average_shortest_path_length(g, **b)),
    ]  # fmt: skip


ALL_PAIRS = {"all_pairs_shortest_path_length", "diameter", "average_shortest_path_length"}


def _seconds(call, *args, **kwargs) -> float:
    start = time.perf_counter()
    call(*args, **kwargs)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    parser.add_argument("--vertices", type=int, default=200_000)
    parser.add_argument("--edges", type=int, default=2_000_000)
    parser.add_argument("--only", default="", help="comma-separated function names")
    args = parser.parse_args(argv)
    nx.config.warnings_to_ignore.add("cache")  # the cached calls below are meant
    from bspgraph.backend import get_backend

    backend = get_backend(args.backend)
    _use_backend(backend)
    undirected, directed = _graphs(args.vertices, args.edges)
    graphs = {"u": undirected, "d": directed}
    wanted = {name for name in args.only.split(",") if name}
    print(
        f"gnm_random_graph({args.vertices:,}, {args.edges:,}); bspgraph on {args.backend}; "
        f"networkx {nx.__version__}\n"
    )
    print(
        "| function | networkx (s) | bspgraph with conversion (s) | cached (s) | speed-up "
        "with conversion | cached |"
    )
    print("|---|---|---|---|---|---|")
    for name, kind, call in _cases(args.vertices):
        if (wanted and name not in wanted) or (not wanted and name in ALL_PAIRS):
            continue
        graph = graphs[kind]
        theirs = _seconds(call, graph)
        graph.__networkx_cache__.clear()
        converted = _seconds(call, graph, backend="bspgraph")
        cached = _seconds(call, graph, backend="bspgraph")
        print(
            f"| `{name}` | {theirs:.3g} | {converted:.3g} | {cached:.3g} | "
            f"{theirs / converted:.2g}x | {theirs / cached:.3g}x |",
            flush=True,
        )
    return 0


def _use_backend(backend) -> None:
    """Build the backend graphs' CSR on ``backend`` (NxGraph.graph's default is None)."""
    from bspgraph.nx import graph as nxgraph

    original = nxgraph.NxGraph.graph

    def graph(self, weight=None, *, parallel="sum", backend_=None):
        return original(self, weight, parallel=parallel, backend=backend_ or backend)

    nxgraph.NxGraph.graph = graph


if __name__ == "__main__":
    raise SystemExit(main())
