"""The ``bspgraph`` command: run a primitive on a graph file or a generated graph.

    bspgraph run ALGO GRAPH [--source S] [--devices N] [--partitioner P] [--communicator C]
                 [--fanout F] [--transport local|nccl|mpi] [--backend numpy|cupy]
                 [--undirected] [--vertices listed|range] [--base 0|1|auto] [--delimiter D]
                 [--weighted|--no-weighted] [--tol T] [--max-iter N]
                 [--output FILE.npy|FILE.csv] [--plot FILE.png] [--json] [--quiet]
    bspgraph bench ALGO GRAPH [--sources K] [--repeat N] [--warmup W] [run options]
    bspgraph generate rmat --scale S [--edge-factor F] [--seed X] -o FILE.mtx|FILE.npz
    bspgraph generate grid --rows R [--cols C] -o FILE.mtx|FILE.npz
    bspgraph info GRAPH [--sweeps K] [--json]

ALGO is one of bfs, sssp, cc, pagerank, bc, tc. GRAPH is a Matrix Market, bspgraph npz or
edge-list file (told by its content, whatever its name; gzip, bz2 and xz are read too), or a
generated graph: ``rmat:SCALE[:EDGE_FACTOR]`` (Graph500 R-MAT, seed 1, weights 1..64) or
``grid:ROWSxCOLS``.

Nothing is guessed silently; every run and ``info`` print what was read:
  base      the ids the command speaks and writes, the file's own: ``1`` for Matrix Market,
            ``listed`` for an edge list (its vertices are the ids that appear in it, as
            networkx and SNAP read it; ``--vertices range`` makes every id from --base to the
            largest one a vertex), ``0`` for npz files and generated graphs
  directed  edge lists are directed unless --undirected (a directed run from the default
            source that reaches under 1% of the vertices says so on stderr)
  weights   ``used``, ``ignored`` (bfs, cc, bc, tc, or --no-weighted) or ``none``; an edge
            list with a weight on some lines only is refused naming the line

``--source`` and every vertex printed (source, top_vertex) are the file's ids; a CSV
``--output`` has an ``id`` column of them (cc's labels are file ids too); an npy output is
the values in vertex order. bfs and sssp start from the highest-degree vertex unless --source
says otherwise; bench --sources K averages over K random vertices with edges, as Graph500 does.
A run longer than 2 s shows a progress line on a terminal (superstep, frontier, time; with
tqdm; never when piped or with --quiet). Exit status: 0 on success, 1 for bad data (a
malformed or missing file, a bad vertex id; one line on stderr, no traceback), 2 for usage
(one line, pointing to --help).

``run`` prints the call's parts: ``seconds`` (the BSP loop), ``prepare_seconds`` (per-graph
structures built in this call), ``compile_seconds`` (kernels built on their first launch in
this process; 0 on NumPy), ``setup_seconds`` (memory check, copy to the device),
``gather_seconds`` (the result to the host) and ``call_seconds`` (the whole call), and which
backend ran and why (``backend_reason``: without --backend, NumPy for a graph of fewer than
``bspgraph.backend.SMALL_GRAPH_EDGES`` edges even where a GPU is usable).
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..exceptions import BspgraphError
from .load import MAX_RMAT_SCALE, load_graph
from .options import (
    GRAPH_HELP,
    SOURCED,
    Parser,
    add_file_options,
    add_run_options,
    non_negative,
    positive,
    usage_error,
)
from .running import ALGORITHMS, run_kwargs
from .write import write_result

__all__ = ["ALGORITHMS", "load_graph", "main", "run_kwargs", "write_result"]


def main(argv: list[str] | None = None) -> int:
    """Entry point: exit 0 on success, 2 for usage errors, 1 for bad data."""
    args, extra = parser().parse_known_args(argv)
    if extra:  # named with the command whose --help lists what it takes
        usage_error(_command_name(args), f"unrecognized arguments: {' '.join(extra)}")
    _check_usage(args)
    try:
        return _command(args.command)(args)
    except (BspgraphError, ValueError, OSError, ImportError) as error:
        return _fail(error)
    except MemoryError:
        return _fail("out of memory (try a smaller graph, or --backend numpy on a larger host)")
    except KeyboardInterrupt:
        print("bspgraph: interrupted", file=sys.stderr)
        return 130


def _command(name: str):
    """The function that runs command ``name`` (its module imported only when it runs)."""
    if name == "run":
        from .running import run

        return _over_mpi_or(run)
    if name == "bench":
        from .bench import bench

        return bench
    if name == "generate":
        from .generate import generate

        return generate
    if name == "info":
        from .info import info

        return info
    return _warmup


def _warmup(args) -> int:
    from ..warmup import warmup

    print(warmup(args.backend, scale=args.scale))
    return 0


def _fail(error) -> int:
    """One line on stderr, never a traceback; exit status 1 (bad data)."""
    message = " ".join(str(error).split()) or type(error).__name__
    print(f"bspgraph: error: {message}", file=sys.stderr)
    return 1


def parser() -> argparse.ArgumentParser:
    """The command line's parser (each usage error one line: :class:`.options.Parser`)."""
    top = Parser(
        prog="bspgraph", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    top.add_argument("--version", action="version", version=f"bspgraph {__version__}")
    commands = top.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a primitive and print a summary")
    add_run_options(run, ALGORITHMS)
    run.add_argument("--output", help="write the result to FILE.csv (id,value) or FILE.npy")

    bench = commands.add_parser("bench", help="time a primitive: median of --repeat runs")
    add_run_options(bench, ALGORITHMS)
    bench.add_argument(
        "--sources",
        type=positive,
        default=None,
        metavar="K",
        help="bfs and sssp: average over K random sources with out-degree > 0, "
        "drawn with --seed (Graph500); default: the highest-degree "
        "vertex",
    )
    bench.add_argument(
        "--repeat", type=positive, default=5, help="timed runs per source (default 5)"
    )
    bench.add_argument(
        "--warmup", type=non_negative, default=1, help="untimed runs first (default 1)"
    )

    generate = commands.add_parser("generate", help="write a generated graph to a file")
    kinds = generate.add_subparsers(dest="kind", required=True)
    rmat = kinds.add_parser("rmat", help="Graph500 R-MAT: 2**scale vertices, undirected")
    rmat.add_argument(
        "--scale",
        type=non_negative,
        required=True,
        help=f"log2 of the vertex count (at most {MAX_RMAT_SCALE})",
    )
    rmat.add_argument("--edge-factor", type=non_negative, default=16)
    rmat.add_argument("--seed", type=int, default=1)
    rmat.add_argument(
        "--weights",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="integer weights 1..64 (default: on, as rmat:SCALE)",
    )
    grid = kinds.add_parser("grid", help="ROWS x COLS 4-neighbour grid, undirected")
    grid.add_argument("--rows", type=non_negative, required=True)
    grid.add_argument("--cols", type=non_negative, default=None, help="default: ROWS")
    grid.add_argument("--seed", type=int, default=0)
    grid.add_argument(
        "--weights",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="integer weights 1..64 (default: off, as grid:RxC)",
    )
    for kind in (rmat, grid):
        kind.add_argument("-o", "--output", required=True, metavar="FILE.mtx|FILE.npz")
        kind.add_argument("--backend", choices=["numpy", "cupy"], default=None)

    info = commands.add_parser(
        "info", help="vertices, edges, degrees, components (weakly, if directed), diameter"
    )
    info.add_argument("graph", help=GRAPH_HELP)
    add_file_options(info)
    info.add_argument(
        "--sweeps",
        type=positive,
        default=4,
        help="BFS sweeps for the diameter estimate (default 4)",
    )
    info.add_argument("--backend", choices=["numpy", "cupy"], default=None)
    info.add_argument("--json", action="store_true", help="print the facts as JSON")

    warm = commands.add_parser(
        "warmup", help="compile every primitive's kernels now (CuPy keeps them on disk)"
    )
    warm.add_argument("--backend", choices=["numpy", "cupy"], default=None)
    warm.add_argument(
        "--scale", type=positive, default=14, help="R-MAT scale of the graphs run (default 14)"
    )
    return top


def _command_name(args) -> str:
    return args.command if args.command != "generate" else f"generate {args.kind}"


def _check_usage(args) -> None:
    """Combinations argparse cannot check itself: one line, exit status 2."""

    def error(message: str):
        usage_error(_command_name(args), message)

    if getattr(args, "fanout", None) is not None and args.communicator not in (None, "butterfly"):
        error(f"--fanout is a butterfly setting; --communicator is {args.communicator!r}")
    output = getattr(args, "output", None)
    if args.command == "run" and output and not output.endswith((".npy", ".csv")):
        error(f"--output {output!r}: expected a file name ending in .npy or .csv")
    if args.command == "generate" and not output.endswith((".mtx", ".npz")):
        error(f"--output {output!r}: expected a file name ending in .mtx or .npz")
    if args.command == "generate" and args.kind == "rmat" and args.scale > MAX_RMAT_SCALE:
        error(
            f"--scale {args.scale}: an R-MAT graph of 2**{args.scale} vertices; bspgraph "
            f"supports at most 3e9 vertices (--scale {MAX_RMAT_SCALE})"
        )
    plot = getattr(args, "plot", None)
    if plot and not plot.endswith(".png"):
        error(f"--plot {plot!r}: expected a file name ending in .png")
    sources = args.command == "bench" and args.sources is not None
    if sources and args.source is not None:
        error("--source and --sources: give one")
    if sources and args.algorithm not in SOURCED:
        error(f"--sources applies to {' and '.join(SOURCED)}, not {args.algorithm}")


def _over_mpi_or(run):
    """``run``, or under ``--transport mpi|nccl`` the MPI path (one device per rank)."""

    def dispatch(args) -> int:
        if args.transport in ("mpi", "nccl"):
            from .mpi import run_mpi

            return run_mpi(args)
        return run(args)

    return dispatch
