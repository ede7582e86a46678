"""``bspgraph run``: one primitive on one graph, its summary, its output, its notes."""

from __future__ import annotations

import json
import shlex
import sys
import time

import numpy as np

from .. import primitives
from ..exceptions import ConvergenceError
from .load import host, load
from .options import SOURCED, WEIGHTS_READ
from .progress import Progress
from .write import check_writable, import_matplotlib, plot, write_result

ALGORITHMS = {
    "bfs": ("depth", lambda g, a, run: primitives.bfs(g, a.source, **run)),
    "sssp": ("distance", lambda g, a, run: primitives.sssp(g, a.source, **run)),
    "cc": ("labels", lambda g, a, run: primitives.connected_components(g, **run)),
    "pagerank": (
        "rank",
        lambda g, a, run: primitives.pagerank(g, tol=a.tol, max_iter=a.max_iter, **run),
    ),
    "bc": (
        "centrality",
        lambda g, a, run: primitives.betweenness_centrality(g, bc_sources(g, a), **run),
    ),
    "tc": ("per_vertex", lambda g, a, run: primitives.triangle_count(g, **run)),
}
UNREACHED_NOTE = 0.01  # a directed run from the default source reaching less: a note


def run(args) -> int:
    """``run`` in this process (one device or several; ``--transport mpi|nccl`` is
    :func:`bspgraph.cli.mpi.run_mpi`'s)."""
    if args.output:
        check_writable(args.output, "--output")
    if args.plot:
        import_matplotlib()  # fail before the run, not after it
        check_writable(args.plot, "--plot")
    started = time.perf_counter()
    loaded = load(args)
    graph = loaded.graph
    seconds = time.perf_counter() - started
    chosen = choose_source(loaded, args)
    check_weights(args, loaded)
    warm_imports()
    field, call = ALGORITHMS[args.algorithm]
    called = time.perf_counter()
    with Progress(args.algorithm, quiet=args.quiet):
        result = call_checked(call, graph, args, run_kwargs(args))
    called = time.perf_counter() - called
    values = getattr(result, field)
    summary = summarize(args, loaded, result.stats, seconds)
    summary["call_seconds"] = round(called, 6)  # the whole call: the five parts above and checks
    summary.update(chosen)
    summary.update(findings(args.algorithm, result, values, loaded))
    if args.output:
        write_result(args.output, *output_columns(args.algorithm, values, loaded), field)
    if args.plot:
        plot(args.plot, result.stats, f"{args.algorithm} on {args.graph}, 1 device")
        summary["plot"] = args.plot
    print_summary(summary, args.json)
    note_unreached(args, loaded, values)
    return 0


def call_checked(call, graph, args, run: dict):
    """``call``, with a PageRank that does not converge named in the command's options."""
    try:
        return call(graph, args, run)
    except ConvergenceError as error:
        message = str(error).replace("max_iter=", "--max-iter ")
        message = message.replace("raise max_iter or tol", "raise --max-iter or --tol")
        raise ConvergenceError(message) from None


def check_weights(args, loaded) -> None:
    """PageRank reads its weights: negative, infinite or NaN ones are refused before the run,
    naming them and ``--no-weighted``."""
    graph = loaded.graph
    if args.algorithm != "pagerank" or not graph.weighted:
        return
    lightest, heaviest = graph.weight_range()
    if lightest >= 0 and heaviest < np.inf:
        return
    problem = "negative" if lightest < 0 else "infinite or NaN"
    raise ValueError(
        f"pagerank: {args.graph} has {problem} edge weights (from {lightest:g} to {heaviest:g}); "
        "PageRank follows edges in proportion to finite non-negative weights: "
        "--no-weighted runs it on the graph without them"
    )


def choose_source(loaded, args) -> dict:
    """Set ``args.source`` for bfs and sssp (a vertex; ``--source`` names a file id); the
    summary fields that say which (in the file's ids) and why."""
    if args.algorithm not in SOURCED:
        return {}
    sources, rule = pick_sources(loaded, args)
    args.source = sources[0]
    args.source_rule = rule
    return {"source": int(loaded.ids.of(args.source)), "source_rule": rule}


def pick_sources(loaded, args) -> tuple[list[int], str]:
    """bfs/sssp sources (vertices) and how they were chosen: ``--source`` (a file id), K random
    vertices with out-degree > 0 drawn with ``--seed`` (``bench --sources K``), or the
    highest-degree one."""
    graph = loaded.graph
    if args.source is not None:
        return [loaded.ids.vertex(args.source, graph.num_vertices, "--source")], "given"
    degree = host(graph.out_degree())
    count = getattr(args, "sources", None)
    if count is None:
        return [int(np.argmax(degree)) if degree.size else 0], "highest-degree"
    candidates = np.flatnonzero(degree > 0)
    if candidates.size == 0:
        raise ValueError(f"--sources {count}: {args.graph} has no vertex with edges")
    rng = np.random.default_rng(args.seed)
    chosen = rng.choice(candidates, size=min(count, candidates.size), replace=False)
    return sorted(int(v) for v in chosen), f"random out-degree>0 seed={args.seed}"


def note_unreached(args, loaded, values: np.ndarray) -> None:
    """A note on stderr when a directed run from the default source reached under 1%."""
    graph = loaded.graph
    default = getattr(args, "source_rule", "") == "highest-degree"
    if args.algorithm not in SOURCED or not graph.directed or not default:
        return
    reached = int((values >= 0).sum() if args.algorithm == "bfs" else np.isfinite(values).sum())
    if reached >= UNREACHED_NOTE * graph.num_vertices:
        return
    print(
        f"bspgraph: note: reached {reached} of {graph.num_vertices} vertices "
        f"({100 * reached / graph.num_vertices:.2g}%) from vertex "
        f"{int(loaded.ids.of(args.source))} along the edges' directions: {args.graph} is read "
        "as directed; --undirected follows every edge both ways",
        file=sys.stderr,
    )


def warm_imports() -> None:
    """Import what a primitive's first call would (scipy.sparse), so ``seconds`` times the
    algorithm alone."""
    import scipy.sparse  # noqa: F401


def run_kwargs(args) -> dict:
    """The keyword arguments every primitive takes: devices, partitioner, communicator..."""
    kwargs = {"devices": args.devices, "backend": args.backend, "seed": args.seed}
    if args.partitioner:
        kwargs["partitioner"] = args.partitioner
    if args.communicator or args.fanout is not None:
        from .. import comm

        butterfly = args.communicator in (None, "butterfly") and args.fanout is not None
        kwargs["communicator"] = (
            comm.Butterfly(fanout=args.fanout) if butterfly else args.communicator
        )
    if args.transport != "local":
        kwargs["transport"] = args.transport
    return kwargs


def bc_sources(graph, args):
    """bc's sources: every vertex, or ``--samples`` distinct ones drawn with ``--seed``."""
    if args.samples is None:
        return None
    rng = np.random.default_rng(args.seed)
    count = min(args.samples, graph.num_vertices)
    return sorted(rng.choice(graph.num_vertices, size=count, replace=False).tolist())


def weights_rule(args, loaded) -> str:
    """``used``, ``ignored`` (the file has weights the run does not read) or ``none``."""
    if not loaded.file_weighted:
        return "none"
    return "used" if loaded.graph.weighted and args.algorithm in WEIGHTS_READ else "ignored"


def summarize(args, loaded, stats, seconds: float) -> dict:
    graph = loaded.graph
    summary = {
        "algorithm": args.algorithm,
        "graph": args.graph,
        "vertices": graph.num_vertices,
        "edges": graph.num_edges,
        "directed": graph.directed,
        "base": loaded.ids.rule,
        "weights": weights_rule(args, loaded),
        "backend": stats.backend or graph.backend.name,
        "backend_reason": getattr(args, "backend_reason", None) or stats.backend_reason,
        "devices": args.devices,
        "supersteps": stats.iterations,
        "load_seconds": round(seconds, 4),
        "seconds": round(stats.seconds, 6),
        "gteps": round(stats.gteps, 4),
        # the rest of the call: one-time costs (0 when paid before), the copy in, the result out
        "prepare_seconds": round(stats.prepare_seconds, 6),
        "compile_seconds": round(stats.compile_seconds, 6),
        "setup_seconds": round(stats.setup_seconds, 6),
        "gather_seconds": round(stats.gather_seconds, 6),
    }
    if args.devices > 1:  # what the communicator moved, over all supersteps
        for key in ("messages", "bytes", "rounds"):
            summary[key] = sum(getattr(step, key) for step in stats.supersteps)
    return summary


def findings(algorithm: str, result, values: np.ndarray, loaded) -> dict:
    """The one or two numbers that say what a run found (vertices in the file's ids)."""
    if algorithm == "bfs":
        reached = values >= 0
        return {"reached": int(reached.sum()), "depth": int(values.max(initial=-1))}
    if algorithm == "sssp":
        return {"reached": int(np.isfinite(values).sum())}
    if algorithm == "cc":
        return {"components": int(np.unique(values).size)}
    if algorithm == "tc":
        return {"triangles": int(result.total)}
    if not values.size:  # pagerank and bc: the top vertex
        return {"top_vertex": None, "top_value": 0.0}
    top = int(np.argmax(values))
    return {"top_vertex": int(loaded.ids.of(top)), "top_value": float(values[top])}


def output_columns(algorithm: str, values: np.ndarray, loaded):
    """``(values, ids)`` as written: cc's labels (a vertex each) in the file's ids too."""
    ids = loaded.ids.column(values.size)
    if algorithm == "cc":
        values = np.asarray(loaded.ids.of(values))
    return values, ids


def print_summary(summary: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary))
    else:
        # key=value fields; a value with spaces (backend_reason) quoted as a shell would
        print("  ".join(f"{key}={shlex.quote(str(value))}" for key, value in summary.items()))
