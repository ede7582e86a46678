"""The ``bspgraph`` command: run a primitive on a graph file or a generated graph."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from . import primitives
from .exceptions import BspgraphError

ALGORITHMS = {
    "bfs": ("depth", lambda g, a, run: primitives.bfs(g, a.source, **run)),
    "sssp": ("distance", lambda g, a, run: primitives.sssp(g, a.source, **run)),
}


def load_graph(spec: str, backend: str | None):
    """A graph from a file (.mtx, .npz, else an edge list) or a generator spec:
    ``rmat:SCALE[:EDGE_FACTOR]`` or ``grid:ROWSxCOLS``."""
    from . import graph as graph_module

    kind, _, rest = spec.partition(":")
    if kind == "rmat" and rest:
        scale, _, edge_factor = rest.partition(":")
        return graph_module.generators.rmat(
            int(scale), int(edge_factor or 16), seed=1, weights=True, backend=backend
        )
    if kind == "grid" and rest:
        rows, _, cols = rest.partition("x")
        return graph_module.generators.grid(int(rows), int(cols or rows), backend=backend)
    if not os.path.exists(spec):
        raise FileNotFoundError(f"{spec}: no such file (or use rmat:SCALE or grid:RxC)")
    if spec.endswith(".mtx"):
        return graph_module.read_mtx(spec, backend=backend)
    if spec.endswith(".npz"):
        return graph_module.load_npz(spec, backend=backend)
    return graph_module.read_edgelist(spec, backend=backend)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bspgraph", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a primitive and print a summary")
    run.add_argument("algorithm", choices=sorted(ALGORITHMS))
    run.add_argument("graph", help="a .mtx/.npz/edge-list file, rmat:SCALE[:EF] or grid:RxC")
    run.add_argument("--source", type=int, default=0)
    run.add_argument("--devices", type=int, default=1)
    run.add_argument("--partitioner", default=None)
    run.add_argument("--communicator", default=None)
    run.add_argument("--fanout", type=int, default=None)
    run.add_argument("--backend", choices=["numpy", "cupy"], default=None)
    run.add_argument("--output", help="write the result array to FILE.npy or FILE.csv")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: exit 0 on success, 2 for usage errors, 1 for bad data."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except (BspgraphError, ValueError, OSError, ImportError) as error:
        print(f"bspgraph: error: {error}", file=sys.stderr)
        return 1


def _run(args) -> int:
    started = time.perf_counter()
    graph = load_graph(args.graph, args.backend)
    loaded = time.perf_counter() - started
    run = {"devices": args.devices, "backend": args.backend}
    if args.partitioner:
        run["partitioner"] = args.partitioner
    if args.communicator:
        from . import comm
        butterfly = args.communicator == "butterfly" and args.fanout is not None
        run["communicator"] = comm.Butterfly(fanout=args.fanout) if butterfly else args.communicator
    field, call = ALGORITHMS[args.algorithm]
    result = call(graph, args, run)
    values = getattr(result, field)
    stats = result.stats
    summary = {
        "algorithm": args.algorithm, "graph": args.graph, "vertices": graph.num_vertices,
        "edges": graph.num_edges, "directed": graph.directed, "backend": graph.backend.name,
        "devices": args.devices, "supersteps": stats.iterations, "load_seconds": round(loaded, 4),
        "seconds": round(stats.seconds, 6), "gteps": round(stats.gteps, 4),
        "reached": int(np.count_nonzero(values >= 0) if field == "depth" else np.isfinite(values).sum()),
    }  # fmt: skip
    if args.output:
        _write(args.output, values)
    if args.json:
        print(json.dumps(summary))
    else:
        print("  ".join(f"{key}={value}" for key, value in summary.items()))
    return 0


def _write(path: str, values: np.ndarray) -> None:
    """Write to a temporary file, then rename: an interrupt leaves no half-written output."""
    temporary = f"{path}.tmp-{os.getpid()}"
    with open(temporary, "wb") as handle:
        if path.endswith(".csv"):
            np.savetxt(handle, values, delimiter=",", fmt="%g")
        else:
            np.save(handle, values)
    os.replace(temporary, path)


if __name__ == "__main__":
    sys.exit(main())
