"""The ``bspgraph`` command: run a primitive on a graph file or a generated graph.

    bspgraph run ALGO GRAPH [--source S] [--devices N] [--partitioner P] [--communicator C]
                 [--fanout F] [--transport local|nccl|mpi] [--backend numpy|cupy]
                 [--undirected] [--base 0|1|auto] [--delimiter D] [--weighted|--no-weighted]
                 [--output FILE.npy|FILE.csv] [--json]
    bspgraph bench ALGO GRAPH [--sources K] [--repeat N] [--warmup W] [--plot FILE.png]
                   [run options]
    bspgraph generate rmat --scale S [--edge-factor F] [--seed X] -o FILE.mtx|FILE.npz
    bspgraph generate grid --rows R [--cols C] -o FILE.mtx|FILE.npz
    bspgraph info GRAPH [--sweeps K] [--json]

ALGO is one of bfs, sssp, cc, pagerank, bc, tc. GRAPH is a Matrix Market, bspgraph npz or
edge-list file (told by its content, whatever its name; gzip and bz2 are read too), or a
generated graph: ``rmat:SCALE[:EDGE_FACTOR]`` (Graph500 R-MAT, seed 1, weights 1..64) or
``grid:ROWSxCOLS``. Edge lists are directed unless --undirected, their ids 1-based when no id 0
appears and the largest id is the number of ids (--base auto, the default; said in the output).
bfs and sssp start from the highest-degree vertex unless --source says otherwise; bench
--sources K averages over K random vertices with edges, as Graph500 does. Exit status: 0 on
success, 1 for bad data (a malformed or missing file, a bad vertex id; one line on stderr, no
traceback), 2 for usage.

``run`` prints the call's parts: ``seconds`` (the BSP loop), ``prepare_seconds`` (per-graph
structures built in this call), ``compile_seconds`` (kernels built on their first launch in
this process; 0 on NumPy), ``setup_seconds`` (memory check, copy to the device),
``gather_seconds`` (the result to the host) and ``call_seconds`` (the whole call), and which
backend ran and why (``backend_reason``: without --backend, NumPy for a graph of fewer than
``bspgraph.backend.SMALL_GRAPH_EDGES`` edges even where a GPU is usable).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import statistics
import sys
import threading
import time

import numpy as np

from . import __version__, primitives
from .backend import SMALL_GRAPH_EDGES, choose
from .exceptions import BspgraphError
from .graph.io import atomic_output

ALGORITHMS = {
    "bfs": ("depth", lambda g, a, run: primitives.bfs(g, a.source, **run)),
    "sssp": ("distance", lambda g, a, run: primitives.sssp(g, a.source, **run)),
    "cc": ("labels", lambda g, a, run: primitives.connected_components(g, **run)),
    "pagerank": ("rank", lambda g, a, run: primitives.pagerank(g, tol=a.tol, **run)),
    "bc": (
        "centrality",
        lambda g, a, run: primitives.betweenness_centrality(g, _bc_sources(g, a), **run),
    ),  # fmt: skip
    "tc": ("per_vertex", lambda g, a, run: primitives.triangle_count(g, **run)),
}


def load_graph(spec: str, backend: str | None, *, undirected: bool = False, base="auto",
               delimiter: str | None = None, weighted: bool | None = None):  # fmt: skip
    """A graph from a file or a generator spec: ``rmat:SCALE[:EDGE_FACTOR]`` or
    ``grid:ROWSxCOLS`` (``grid:N``: N x N). A file's format is told by its content
    (:func:`~bspgraph.graph.io.sniff_format`); ``base``, ``delimiter`` and ``weighted`` apply to
    edge lists, ``undirected`` to any directed graph (its edges then run both ways)."""
    from . import graph as graph_module
    from .graph.io import sniff_format

    kind, _, rest = spec.partition(":")
    if kind == "rmat" and rest:
        scale, _, edge_factor = rest.partition(":")
        return graph_module.generators.rmat(
            _spec_int(spec, scale), _spec_int(spec, edge_factor or "16"), seed=1, weights=True,
            backend=backend,
        )  # fmt: skip
    if kind == "grid" and rest:
        rows, x, cols = rest.partition("x")  # grid:N is square; grid:Nx is malformed
        return graph_module.generators.grid(
            _spec_int(spec, rows), _spec_int(spec, cols if x else rows), backend=backend
        )
    if not os.path.exists(spec):
        raise FileNotFoundError(f"{spec}: no such file (or use rmat:SCALE or grid:RxC)")
    file_format = sniff_format(spec)
    edge_list_options = {"base": base != "auto", "delimiter": delimiter is not None,
                         "weighted": weighted is not None}  # fmt: skip
    given = [f"--{name}" for name, set_ in edge_list_options.items() if set_]
    if file_format != "edgelist" and given:
        raise ValueError(f"{spec}: {', '.join(given)} applies to edge lists; this file is "
                         f"{'Matrix Market' if file_format == 'mtx' else 'a bspgraph npz'}")  # fmt: skip
    with _read_progress(spec):
        if file_format == "mtx":
            graph = graph_module.read_mtx(spec, backend=backend)
        elif file_format == "npz":
            graph = graph_module.load_npz(spec, backend=backend)
        else:
            graph = graph_module.read_edgelist(
                spec, base=base if base == "auto" else int(base), directed=not undirected,
                delimiter=delimiter, weighted=weighted, backend=backend,
            )  # fmt: skip
    if undirected and graph.directed:  # a directed Matrix Market or npz file
        src, dst, weight = graph.edges()
        graph = graph_module.Graph.from_edges(
            src, dst, weight, num_vertices=graph.num_vertices, directed=False, backend=backend
        )
    return graph


def _spec_int(spec: str, text: str) -> int:
    """An integer field of a generator spec, or a ValueError that shows the expected form."""
    if not text.strip().isdigit():
        form = "rmat:SCALE[:EDGE_FACTOR]" if spec.startswith("rmat") else "grid:ROWSxCOLS"
        raise ValueError(
            f"{spec}: expected {form} with non-negative integers, e.g. rmat:10, grid:8x8"
        )
    return int(text)


@contextlib.contextmanager
def _read_progress(path: str):
    """A tqdm bar of the bytes read from ``path``, while the body reads it.

    Shown only when tqdm is installed and stderr is a terminal. The readers open the file
    themselves, so a daemon thread polls that file's offset in ``/proc/self/fdinfo`` (Linux; the
    bar only jumps to the end elsewhere), and says "building" once the file is closed.
    """
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if tqdm is None or not sys.stderr.isatty():
        yield
        return
    size = os.path.getsize(path)
    bar = tqdm(total=size, desc=f"reading {os.path.basename(path)}", unit="B", unit_scale=True,
               leave=False, file=sys.stderr)  # fmt: skip
    done = threading.Event()

    def poll():
        target, building = os.path.realpath(path), False
        while not done.wait(0.1):
            offset = _read_offset(target)
            if offset is not None and offset > bar.n:
                bar.update(min(offset, size) - bar.n)
            elif offset is None and bar.n and not building:  # read and closed: CSR next
                bar.update(size - bar.n)
                bar.set_description_str(f"building the graph from {os.path.basename(path)}")
                building = True

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        yield
    finally:
        done.set()
        poller.join()
        bar.update(size - bar.n)
        bar.close()


def _read_offset(target: str) -> int | None:
    """The largest offset of this process's open descriptors on ``target`` (None: none or no
    /proc)."""
    offsets = []
    try:
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for fd in descriptors:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != target:
                continue
            with open(f"/proc/self/fdinfo/{fd}") as info:
                offsets += [int(line.split()[1]) for line in info if line.startswith("pos:")]
        except (OSError, ValueError, IndexError):
            continue
    return max(offsets, default=None)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bspgraph", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"bspgraph {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a primitive and print a summary")
    _add_run_options(run)
    run.add_argument("--output", help="write the result array to FILE.npy or FILE.csv")

    bench = commands.add_parser("bench", help="time a primitive: median of --repeat runs")
    _add_run_options(bench)
    bench.add_argument("--sources", type=_positive, default=None, metavar="K",
                       help="bfs and sssp: average over K random sources with out-degree > 0, "
                            "drawn with --seed (Graph500); default: the highest-degree "
                            "vertex")  # fmt: skip
    bench.add_argument("--repeat", type=_positive, default=5,
                       help="timed runs per source (default 5)")  # fmt: skip
    bench.add_argument("--warmup", type=_non_negative, default=1,
                       help="untimed runs first (default 1)")  # fmt: skip
    bench.add_argument("--plot", metavar="FILE.png",
                       help="draw frontier size and time per superstep (needs matplotlib)")  # fmt: skip

    generate = commands.add_parser("generate", help="write a generated graph to a file")
    kinds = generate.add_subparsers(dest="kind", required=True)
    rmat = kinds.add_parser("rmat", help="Graph500 R-MAT: 2**scale vertices, undirected")
    rmat.add_argument("--scale", type=_non_negative, required=True)
    rmat.add_argument("--edge-factor", type=_non_negative, default=16)
    rmat.add_argument("--seed", type=int, default=1)
    rmat.add_argument("--weights", action=argparse.BooleanOptionalAction, default=True,
                      help="integer weights 1..64 (default: on, as rmat:SCALE)")  # fmt: skip
    grid = kinds.add_parser("grid", help="ROWS x COLS 4-neighbour grid, undirected")
    grid.add_argument("--rows", type=_non_negative, required=True)
    grid.add_argument("--cols", type=_non_negative, default=None, help="default: ROWS")
    grid.add_argument("--seed", type=int, default=0)
    grid.add_argument("--weights", action=argparse.BooleanOptionalAction, default=False,
                      help="integer weights 1..64 (default: off, as grid:RxC)")  # fmt: skip
    for kind in (rmat, grid):
        kind.add_argument("-o", "--output", required=True, metavar="FILE.mtx|FILE.npz")
        kind.add_argument("--backend", choices=["numpy", "cupy"], default=None)

    info = commands.add_parser(
        "info", help="vertices, edges, degrees, components (weakly, if directed), diameter"
    )
    info.add_argument("graph", help=GRAPH_HELP)
    _add_file_options(info)
    info.add_argument("--sweeps", type=_positive, default=4,
                      help="BFS sweeps for the diameter estimate (default 4)")  # fmt: skip
    info.add_argument("--backend", choices=["numpy", "cupy"], default=None)
    info.add_argument("--json", action="store_true", help="print the facts as JSON")

    warm = commands.add_parser(
        "warmup", help="compile every primitive's kernels now (CuPy keeps them on disk)"
    )
    warm.add_argument("--backend", choices=["numpy", "cupy"], default=None)
    warm.add_argument("--scale", type=_positive, default=14,
                      help="R-MAT scale of the graphs run (default 14)")  # fmt: skip
    return parser


GRAPH_HELP = "a .mtx/.npz/edge-list file, rmat:SCALE[:EF] or grid:RxC"


def _add_run_options(command: argparse.ArgumentParser) -> None:
    """The arguments that ``run`` and ``bench`` share: what to run, where and how."""
    from . import comm, partitioners

    command.add_argument("algorithm", choices=sorted(ALGORITHMS))
    command.add_argument("graph", help=GRAPH_HELP)
    command.add_argument("--source", type=_non_negative, default=None,
                         help="bfs and sssp (default: the highest-degree vertex)")  # fmt: skip
    command.add_argument("--samples", type=_positive, default=None,
                         help="bc: this many random sources (default: every vertex)")  # fmt: skip
    command.add_argument("--seed", type=int, default=0,
                         help="partitioner and bc sample seed (default 0)")  # fmt: skip
    command.add_argument("--tol", type=float, default=1e-6,
                         help="pagerank: stop when the L1 change < num_vertices * tol "
                              "(default 1e-6, as networkx)")  # fmt: skip
    command.add_argument("--devices", type=_positive, default=1)
    command.add_argument("--partitioner", choices=sorted(partitioners.REGISTRY), default=None)
    command.add_argument("--communicator", choices=sorted(comm.REGISTRY), default=None)
    command.add_argument("--fanout", type=_positive, default=None,
                         help="butterfly fanout (implies --communicator butterfly)")  # fmt: skip
    command.add_argument("--transport", choices=["local", "nccl", "mpi"], default="local")
    command.add_argument("--backend", choices=["numpy", "cupy"], default=None)
    command.add_argument("--json", action="store_true", help="print the summary as JSON")
    _add_file_options(command)


def _add_file_options(command: argparse.ArgumentParser) -> None:
    """How to read a graph file: direction, and an edge list's base, delimiter and weights."""
    command.add_argument("--undirected", action="store_true",
                         help="treat the graph as undirected (every edge both ways)")  # fmt: skip
    command.add_argument("--base", choices=["0", "1", "auto"], default="auto",
                         help="edge lists: the first vertex id (default auto: 1 when no id 0 "
                              "appears and the largest id is the number of ids)")  # fmt: skip
    command.add_argument("--delimiter", default=None,
                         help="edge lists: the field separator (default: whitespace)")  # fmt: skip
    command.add_argument("--weighted", action=argparse.BooleanOptionalAction, default=None,
                         help="edge lists: the third field is a weight (default: when every "
                              "line has one)")  # fmt: skip


def _at_least(minimum: int):
    """An argparse type: an integer >= ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}")
        return value

    return parse


_positive, _non_negative = _at_least(1), _at_least(0)


def main(argv: list[str] | None = None) -> int:
    """Entry point: exit 0 on success, 2 for usage errors, 1 for bad data."""
    parser = _parser()
    args = parser.parse_args(argv)
    _check_usage(parser, args)
    commands = {"run": _run, "bench": _bench, "generate": _generate, "info": _info,
                "warmup": _warmup}  # fmt: skip
    try:
        return commands[args.command](args)
    except (BspgraphError, ValueError, OSError, ImportError) as error:
        return _fail(error)
    except MemoryError:
        return _fail("out of memory (try a smaller graph, or --backend numpy on a larger host)")
    except KeyboardInterrupt:
        print("bspgraph: interrupted", file=sys.stderr)
        return 130


def _warmup(args) -> int:
    from .warmup import warmup

    print(warmup(args.backend, scale=args.scale))
    return 0


def _fail(error) -> int:
    """One line on stderr, never a traceback; exit status 1 (bad data)."""
    message = " ".join(str(error).split()) or type(error).__name__
    print(f"bspgraph: error: {message}", file=sys.stderr)
    return 1


def _check_usage(parser: argparse.ArgumentParser, args) -> None:
    """Combinations argparse cannot check itself; ``parser.error`` exits with status 2."""
    if getattr(args, "fanout", None) is not None and args.communicator not in (None, "butterfly"):
        parser.error(f"--fanout is a butterfly setting; --communicator is {args.communicator!r}")
    output = getattr(args, "output", None)
    if args.command == "run" and output and not output.endswith((".npy", ".csv")):
        parser.error(f"--output {output!r}: expected a file name ending in .npy or .csv")
    if args.command == "generate" and not output.endswith((".mtx", ".npz")):
        parser.error(f"--output {output!r}: expected a file name ending in .mtx or .npz")
    if args.command == "bench" and args.plot and not args.plot.endswith(".png"):
        parser.error(f"--plot {args.plot!r}: expected a file name ending in .png")
    sources = args.command == "bench" and args.sources is not None
    if sources and args.source is not None:
        parser.error("--source and --sources: give one")
    if sources and args.algorithm not in SOURCED:
        parser.error(f"--sources applies to {' and '.join(SOURCED)}, not {args.algorithm}")


SOURCED = ("bfs", "sssp")  # the algorithms that start from --source


def _check_writable(path: str, option: str) -> None:
    """Fail before a run, naming the user's ``path``, if it cannot be written."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"{option} {path}: is a directory")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{option} {path}: no such directory {directory}")
    if not os.access(directory, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise PermissionError(f"{option} {path}: not writable")


def _load(args):
    """The graph that ``args`` names, read with its file options; tc needs it undirected.

    Without ``--backend`` the graph goes where ``backend=None`` would run it
    (:func:`bspgraph.backend.choose`: NumPy for a small graph, even where a GPU is usable),
    read on the host first (a generated graph is made on the host only when its expected edge
    count is small); ``args.backend_reason`` says why."""
    backend = args.backend
    if backend is None and _expected_edges(args.graph) < SMALL_GRAPH_EDGES:
        backend = "numpy"  # on the host first: the choice below sees its edges
    graph = load_graph(args.graph, backend, undirected=args.undirected, base=args.base,
                       delimiter=args.delimiter, weighted=args.weighted)  # fmt: skip
    name, args.backend_reason = choose(args.backend, graph)
    graph = graph.to(name)
    if getattr(args, "algorithm", None) == "tc" and graph.directed:
        raise ValueError(
            f"tc: {args.graph} is a directed graph; triangles are counted on undirected graphs "
            "(hint: --undirected counts the triangles of the undirected graph beneath it)"
        )
    return graph


def _expected_edges(spec: str) -> float:
    """The edges a generator spec makes at most (rmat: 2 x edge factor x 2^scale, grid: 4 per
    vertex); a file's: 0 (it is read on the host, then placed by its edge count)."""
    kind, _, rest = spec.partition(":")
    try:
        if kind == "rmat" and rest:
            scale, _, edge_factor = rest.partition(":")
            return 2.0 * int(edge_factor or "16") * 2 ** int(scale)
        if kind == "grid" and rest:
            rows, x, cols = rest.partition("x")
            return 4.0 * int(rows) * int(cols if x else rows)
    except ValueError:  # a malformed spec: load_graph says what is wrong
        return 0.0
    return 0.0


def _pick_sources(graph, args) -> tuple[list[int], str]:
    """bfs/sssp sources and how they were chosen: ``--source``, K random vertices with
    out-degree > 0 drawn with ``--seed`` (``bench --sources K``), or the highest-degree one."""
    if args.source is not None:
        return [graph.check_vertex(args.source, name="source", where="--source")], "given"
    degree = _host(graph.out_degree())
    count = getattr(args, "sources", None)
    if count is None:
        return [int(np.argmax(degree)) if degree.size else 0], "highest-degree"
    candidates = np.flatnonzero(degree > 0)
    if candidates.size == 0:
        raise ValueError(f"--sources {count}: {args.graph} has no vertex with edges")
    rng = np.random.default_rng(args.seed)
    chosen = rng.choice(candidates, size=min(count, candidates.size), replace=False)
    return sorted(int(v) for v in chosen), f"random out-degree>0 seed={args.seed}"


def _warm_imports() -> None:
    """Import what a primitive's first call would (scipy.sparse), so ``seconds`` times the
    algorithm alone."""
    import scipy.sparse  # noqa: F401


def _run_kwargs(args) -> dict:
    """The keyword arguments every primitive takes: devices, partitioner, communicator..."""
    run = {"devices": args.devices, "backend": args.backend, "seed": args.seed}
    if args.partitioner:
        run["partitioner"] = args.partitioner
    if args.communicator or args.fanout is not None:
        from . import comm

        butterfly = args.communicator in (None, "butterfly") and args.fanout is not None
        run["communicator"] = comm.Butterfly(fanout=args.fanout) if butterfly else args.communicator
    if args.transport != "local":
        run["transport"] = args.transport
    return run


def _bc_sources(graph, args):
    """bc's sources: every vertex, or ``--samples`` distinct ones drawn with ``--seed``."""
    if args.samples is None:
        return None
    rng = np.random.default_rng(args.seed)
    count = min(args.samples, graph.num_vertices)
    return sorted(rng.choice(graph.num_vertices, size=count, replace=False).tolist())


def _run(args) -> int:
    if args.transport in ("mpi", "nccl"):
        return _run_mpi(args)
    if args.output:
        _check_writable(args.output, "--output")
    started = time.perf_counter()
    graph = _load(args)
    loaded = time.perf_counter() - started
    chosen = _choose_source(graph, args)
    _warm_imports()
    field, call = ALGORITHMS[args.algorithm]
    called = time.perf_counter()
    result = call(graph, args, _run_kwargs(args))
    called = time.perf_counter() - called
    values = getattr(result, field)
    summary = _summary(args, graph, result.stats, loaded)
    summary["call_seconds"] = round(called, 6)  # the whole call: the five parts above and checks
    summary.update(chosen)
    summary.update(_findings(args.algorithm, result, values))
    if args.output:
        _write(args.output, values)
    _print(summary, args.json)
    return 0


def _choose_source(graph, args) -> dict:
    """Set ``args.source`` for bfs and sssp (the first of :func:`_pick_sources`); the summary
    fields that say which and why, and the base an edge list was read with."""
    facts = {}
    if "base" in graph.cache and args.base == "auto":
        facts["base"] = f"{graph.cache['base']}(auto)"
    if args.algorithm in SOURCED:
        sources, rule = _pick_sources(graph, args)
        args.source = sources[0]
        facts.update(source=args.source, source_rule=rule)
    return facts


def _run_mpi(args) -> int:
    """``run`` under ``mpiexec -n P`` (transport mpi or nccl), one device per rank: every rank
    reads the graph and keeps its part (docs/multi-gpu-and-mpi.md); rank 0 prints the summary
    and writes ``--output``. An error on any rank ends every rank non-zero, never a hang."""
    from .comm.transport import failing_together
    from .enactor import distribute

    if args.transport == "nccl":
        from .comm.nccl import NCCLTransport

        transport = NCCLTransport()
    else:
        from .comm.mpi import MPITransport

        transport = MPITransport(backend=args.backend)
    if args.devices not in (1, transport.size):
        raise ValueError(f"--devices {args.devices}: --transport {args.transport} runs one "
                         f"device per rank, {transport.size} here; leave --devices out")  # fmt: skip
    args.devices = transport.size
    with failing_together(transport):
        started = time.perf_counter()
        whole = load_graph(args.graph, "numpy", undirected=args.undirected, base=args.base,
                           delimiter=args.delimiter, weighted=args.weighted)  # on the host  # fmt: skip
        if args.algorithm in SOURCED:
            args.source = _pick_sources(whole, args)[0][0]
        # run ids (each part one id range) for every primitive that declares its params;
        # CC does not yet (bspgraph/primitives/cc.py), so it keeps the file's ids
        graph = distribute(whole, transport, partitioner=args.partitioner, seed=args.seed,
                           replicate=args.algorithm == "tc",
                           relabel=args.algorithm != "cc")  # fmt: skip
        del whole  # from here on this rank holds its part only
        loaded = time.perf_counter() - started
        field, call = ALGORITHMS[args.algorithm]
        result = call(graph, args, {**_run_kwargs(args), "transport": transport, "devices": None})
        values = getattr(result, field)
        summary = _summary(args, graph, result.stats, loaded)
        summary.update(_findings(args.algorithm, result, values))
        summary.update(edges=graph.partition.num_edges, backend=transport.backend.name)
        if transport.rank == 0:
            if args.output:
                _write(args.output, values)
            _print(summary, args.json)
    return 0


def _summary(args, graph, stats, loaded: float) -> dict:
    summary = {
        "algorithm": args.algorithm, "graph": args.graph, "vertices": graph.num_vertices,
        "edges": graph.num_edges, "directed": graph.directed,
        "backend": stats.backend or graph.backend.name,
        "backend_reason": getattr(args, "backend_reason", None) or stats.backend_reason,
        "devices": args.devices, "supersteps": stats.iterations, "load_seconds": round(loaded, 4),
        "seconds": round(stats.seconds, 6), "gteps": round(stats.gteps, 4),
        # the rest of the call: one-time costs (0 when paid before), the copy in, the result out
        "prepare_seconds": round(stats.prepare_seconds, 6),
        "compile_seconds": round(stats.compile_seconds, 6),
        "setup_seconds": round(stats.setup_seconds, 6),
        "gather_seconds": round(stats.gather_seconds, 6),
    }  # fmt: skip
    if args.devices > 1:  # what the communicator moved, over all supersteps
        for key in ("messages", "bytes", "rounds"):
            summary[key] = sum(getattr(step, key) for step in stats.supersteps)
    return summary


def _findings(algorithm: str, result, values: np.ndarray) -> dict:
    """The one or two numbers that say what a run found."""
    if algorithm == "bfs":
        reached = values >= 0
        return {"reached": int(reached.sum()), "depth": int(values.max(initial=-1))}
    if algorithm == "sssp":
        return {"reached": int(np.isfinite(values).sum())}
    if algorithm == "cc":
        return {"components": int(np.unique(values).size)}
    if algorithm == "tc":
        return {"triangles": int(result.total)}
    top = int(np.argmax(values)) if values.size else -1  # pagerank and bc: the top vertex
    return {"top_vertex": top, "top_value": float(values[top]) if values.size else 0.0}


def _print(summary: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary))
    else:
        # key=value fields; a value with spaces (backend_reason) quoted as a shell would
        print("  ".join(f"{key}={shlex.quote(str(value))}" for key, value in summary.items()))


def _bench(args) -> int:
    """Median of ``--repeat`` timed runs after ``--warmup`` untimed ones, per source; over
    several sources (``--sources K``) the mean time and the harmonic mean of GTEPS."""
    if args.plot:
        _import_matplotlib()  # fail before the runs, not after them
        _check_writable(args.plot, "--plot")
    started = time.perf_counter()
    graph = _load(args)
    loaded = time.perf_counter() - started
    sources, rule = _pick_sources(graph, args) if args.algorithm in SOURCED else ([None], "")
    _warm_imports()
    field, call = ALGORITHMS[args.algorithm]
    run = _run_kwargs(args)
    medians, rates, middles = [], [], []
    for source in sources:
        args.source = source
        for _ in range(args.warmup):
            call(graph, args, run)
        results = [call(graph, args, run) for _ in range(args.repeat)]
        seconds = [result.stats.seconds for result in results]
        median = statistics.median(seconds)
        middle = min(results, key=lambda r: abs(r.stats.seconds - median))  # a run at the median
        medians.append((median, min(seconds), max(seconds)))
        rates.append(middle.stats.edges / median / 1e9 if median > 0 else 0.0)
        middles.append(middle)
    result = middles[0]
    summary = _summary(args, graph, result.stats, loaded)
    if args.algorithm in SOURCED:
        summary.update(source=sources[0] if len(sources) == 1 else sources, source_rule=rule)
    if "base" in graph.cache and args.base == "auto":
        summary["base"] = f"{graph.cache['base']}(auto)"
    summary.update(_findings(args.algorithm, result, getattr(result, field)))
    positive = [rate for rate in rates if rate > 0]
    summary.update({
        "repeat": args.repeat, "warmup": args.warmup,
        "seconds": round(statistics.mean(m[0] for m in medians), 6),
        "min_seconds": round(min(m[1] for m in medians), 6),
        "max_seconds": round(max(m[2] for m in medians), 6),
        "gteps": round(statistics.harmonic_mean(positive) if positive else 0.0, 4),
    })  # fmt: skip
    if len(sources) > 1:
        summary["sources"] = len(sources)
    if args.plot:
        devices = f"{args.devices} device" + ("s" if args.devices > 1 else "")
        _plot(args.plot, result.stats, f"{args.algorithm} on {args.graph}, {devices}")
        summary["plot"] = args.plot
    _print(summary, args.json)
    return 0


def _import_matplotlib():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "bspgraph bench --plot needs matplotlib; install it with: pip install matplotlib"
        ) from None
    return Figure


def _plot(path: str, stats, title: str) -> None:
    """Frontier size and time per superstep (and messages, for several devices) as a PNG."""
    figure_class = _import_matplotlib()
    steps = np.arange(1, len(stats.supersteps) + 1)
    frontier = [step.frontier for step in stats.supersteps]
    millis = [step.seconds * 1e3 for step in stats.supersteps]
    messages = [step.messages for step in stats.supersteps]
    panels = 3 if any(messages) else 2
    figure = figure_class(figsize=(7, 2.4 * panels), layout="constrained")
    axes = figure.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    axes[0].bar(steps, frontier, color="tab:blue")
    axes[0].set_ylabel("output frontier\n(vertices)")
    nonzero = [size for size in frontier if size]
    if nonzero and max(nonzero) > 100 * min(nonzero):  # BFS frontiers span decades
        axes[0].set_yscale("log")
    axes[1].bar(steps, millis, color="tab:orange")
    axes[1].set_ylabel("time (ms)")
    if panels == 3:
        axes[2].bar(steps, messages, color="tab:green")
        axes[2].set_ylabel("messages")
    axes[-1].set_xlabel("superstep")
    axes[-1].xaxis.get_major_locator().set_params(integer=True)
    axes[0].set_title(f"{title}: {len(steps)} supersteps, {stats.seconds * 1e3:.3g} ms")
    temporary = f"{path}.tmp-{os.getpid()}.png"
    figure.savefig(temporary, dpi=100)
    os.replace(temporary, path)


def _generate(args) -> int:
    """Write an R-MAT or grid graph as Matrix Market or npz."""
    from .graph import generators, save_npz, write_mtx

    if args.kind == "rmat":
        graph = generators.rmat(args.scale, args.edge_factor, seed=args.seed,
                                weights=args.weights, backend=args.backend)  # fmt: skip
        made = f"rmat scale={args.scale} edge_factor={args.edge_factor} seed={args.seed}"
    else:
        cols = args.rows if args.cols is None else args.cols
        graph = generators.grid(args.rows, cols, weights=args.weights, seed=args.seed,
                                backend=args.backend)  # fmt: skip
        made = f"grid {args.rows}x{cols}" + (f" seed={args.seed}" if args.weights else "")
    temporary = f"{args.output}.tmp-{os.getpid()}"
    try:
        if args.output.endswith(".npz"):
            save_npz(graph, temporary)
        else:
            write_mtx(graph, temporary, comment=f"generated by bspgraph: {made}")
        os.replace(temporary, args.output)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    print(f"wrote {args.output}: {graph!r}")
    return 0


def _info(args) -> int:
    """Vertices, edges, degrees, components and an estimated diameter."""
    from .primitives import bfs, connected_components

    graph = _load(args)
    out_degree = np.asarray(_host(graph.out_degree()))
    labels = connected_components(graph, backend=args.backend).labels
    component_ids, sizes = np.unique(labels, return_counts=True)
    facts = {
        "graph": args.graph, "vertices": graph.num_vertices, "edges": graph.num_edges,
        "directed": graph.directed, "weighted": graph.weighted,
        "self_loops": _self_loops(graph),
    }  # fmt: skip
    if not graph.directed:  # an undirected edge is stored twice, a self-loop once
        facts["undirected_edges"] = (graph.num_edges + facts["self_loops"]) // 2
    facts.update(_degree_facts("degree" if not graph.directed else "out_degree", out_degree))
    if graph.directed:
        facts.update(_degree_facts("in_degree", np.asarray(_host(graph.in_degree()))))
    facts["isolated"] = int(((out_degree == 0) & (np.asarray(_host(graph.in_degree())) == 0)).sum())
    facts["components"] = int(component_ids.size)
    facts["largest_component"] = int(sizes.max(initial=0))
    facts["diameter_estimate"] = _diameter_estimate(
        graph, labels, component_ids, sizes, out_degree, args.sweeps, bfs, args.backend
    )
    if args.json:
        print(json.dumps(facts))
    else:
        width = max(map(len, facts))
        for key, value in facts.items():
            print(f"{key:<{width}}  {value}")
    return 0


def _self_loops(graph) -> int:
    src, dst, _ = graph.edges()
    return int(np.count_nonzero(src == dst))


def _host(array) -> np.ndarray:
    from .backend import to_host

    return to_host(array)


def _degree_facts(name: str, degree: np.ndarray) -> dict:
    if degree.size == 0:
        return {f"{name}_min": 0, f"{name}_mean": 0.0, f"{name}_max": 0}
    return {f"{name}_min": int(degree.min()), f"{name}_mean": round(float(degree.mean()), 3),
            f"{name}_max": int(degree.max())}  # fmt: skip


def _diameter_estimate(graph, labels, component_ids, sizes, degree, sweeps, bfs, backend) -> int:
    """A lower bound on the longest finite distance, by ``sweeps`` BFS sweeps in the largest
    (weakly connected) component, from its highest-degree vertex: each sweep starts at the
    farthest vertex the previous one found (exact on trees and grids, close on most graphs).
    On a directed graph the sweeps alternate along out-edges and along in-edges, so that a
    vertex far *from* the last start is followed by one far *to* it (wiki-Vote: 10, where
    out-edge sweeps alone see 4)."""
    if graph.num_vertices == 0:
        return 0
    from .graph import CSR, Graph

    largest = component_ids[np.argmax(sizes)]
    members = np.flatnonzero(labels == largest)
    start = int(members[np.argmax(degree[members])])
    directions = [graph]
    if graph.directed:
        reverse = graph.reverse
        directions.append(Graph(CSR(reverse.offsets, reverse.indices), graph.num_vertices,
                                directed=True, backend=graph.backend))  # fmt: skip
    best, seen = 0, set()
    for sweep in range(sweeps):
        along = directions[sweep % len(directions)]
        if (start, sweep % len(directions)) in seen:
            break
        seen.add((start, sweep % len(directions)))
        depth = _host(bfs(along, start, backend=backend).depth)
        best = max(best, int(depth.max()))
        start = int(np.argmax(depth))
    return best


def _write(path: str, values: np.ndarray) -> None:
    """Write to a temporary file, then rename: an interrupt leaves no half-written output."""
    try:
        with atomic_output(path) as handle:
            if path.endswith(".csv"):  # integers whole, floats with every digit (inf, nan)
                fmt = "%d" if values.dtype.kind in "iub" else "%.17g"
                np.savetxt(handle, values, delimiter=",", fmt=fmt)
            else:
                np.save(handle, values)
    except OSError as error:
        raise OSError(f"--output {path}: cannot write: {error.strerror or error}") from None


if __name__ == "__main__":
    sys.exit(main())
