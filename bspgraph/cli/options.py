"""The arguments that several commands share, and argparse types."""

from __future__ import annotations

import argparse

GRAPH_HELP = "a .mtx/.npz/edge-list file, rmat:SCALE[:EF] or grid:RxC"
SOURCED = ("bfs", "sssp")  # the algorithms that start from --source
WEIGHTS_READ = ("sssp", "pagerank")  # the algorithms that read edge weights


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line that points to ``--help``."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def usage_error(command: str, message: str):
    """Exit 2 with one line, as :meth:`Parser.error` of ``bspgraph COMMAND``."""
    Parser(prog=f"bspgraph {command}").error(message)


def at_least(minimum: int):
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


positive, non_negative = at_least(1), at_least(0)


def add_run_options(command: argparse.ArgumentParser, algorithms) -> None:
    """The arguments that ``run`` and ``bench`` share: what to run, where and how."""
    from .. import comm, partitioners

    command.add_argument("algorithm", choices=sorted(algorithms))
    command.add_argument("graph", help=GRAPH_HELP)
    command.add_argument(
        "--source",
        type=int,
        default=None,
        help="bfs and sssp: the start vertex, in the file's ids (1-based in "
        "a .mtx file; default: the highest-degree vertex)",
    )
    command.add_argument(
        "--samples",
        type=positive,
        default=None,
        help="bc: this many random sources (default: every vertex)",
    )
    command.add_argument(
        "--seed", type=int, default=0, help="partitioner and bc sample seed (default 0)"
    )
    command.add_argument(
        "--tol",
        type=float,
        default=1e-6,
        help="pagerank: stop when the L1 change < num_vertices * tol (default 1e-6, as networkx)",
    )
    command.add_argument(
        "--max-iter",
        type=non_negative,
        default=100,
        help="pagerank: give up after this many iterations (default 100)",
    )
    command.add_argument("--devices", type=positive, default=1)
    command.add_argument("--partitioner", choices=sorted(partitioners.REGISTRY), default=None)
    command.add_argument("--communicator", choices=sorted(comm.REGISTRY), default=None)
    command.add_argument(
        "--fanout",
        type=positive,
        default=None,
        help="butterfly fanout (implies --communicator butterfly)",
    )
    command.add_argument("--transport", choices=["local", "nccl", "mpi"], default="local")
    command.add_argument("--backend", choices=["numpy", "cupy"], default=None)
    command.add_argument("--json", action="store_true", help="print the summary as JSON")
    command.add_argument(
        "--quiet", action="store_true", help="no progress line (it shows only on a terminal anyway)"
    )
    command.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw frontier size and time per superstep (needs matplotlib)",
    )
    add_file_options(command)


def add_file_options(command: argparse.ArgumentParser) -> None:
    """How to read a graph file: direction, weights, and an edge list's vertices and fields."""
    command.add_argument(
        "--undirected",
        action="store_true",
        help="treat the graph as undirected (every edge both ways)",
    )
    command.add_argument(
        "--vertices",
        choices=["listed", "range"],
        default=None,
        help="edge lists: the ids that appear in the file (listed, the "
        "default, as networkx and SNAP read them) or the whole range "
        "from --base to the largest id",
    )
    command.add_argument(
        "--base",
        choices=["0", "1", "auto"],
        default=None,
        help="edge lists with --vertices range (implied): the first vertex id "
        "(auto: 1 when no id 0 appears and the largest id is the number "
        "of ids)",
    )
    command.add_argument(
        "--delimiter", default=None, help="edge lists: the field separator (default: whitespace)"
    )
    command.add_argument(
        "--weighted",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="edge lists: every line has a weight (--weighted) or weights are "
        "ignored (--no-weighted, any file); default: as the first line, "
        "and a file with weights on some lines only is refused",
    )
