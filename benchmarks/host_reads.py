"""How many host reads each superstep makes on P parts, as a GPU would make them (no GPU needed).

    python -m benchmarks.host_reads                    # rmat12, 2 and 5 parts
    python -m benchmarks.host_reads --scale 14 --devices 2 3 4 5
    python -m benchmarks.host_reads --communicators selective broadcast butterfly:2
    python -m benchmarks.host_reads --separate         # each part a GPU of its own (a link)

Runs BFS (push and direction-optimising), SSSP, connected components, PageRank and
betweenness' forward phase (path counts) from the R-MAT graph's highest-degree vertex on ``--devices`` parts (edge_balanced; selective, or each
of ``--communicators``; parts of one GPU, or with ``--separate`` each a GPU of its own, whose
messages cross a link as between processes) with ``bg.testing.host_reads``: a NumPy backend with a GPU's traits whose every conversion of a
device value to a host one counts a read. It prints, for each, the reads around the step (the
enactor's) and within it (NumPy's kernels') superstep by superstep.
"""

from __future__ import annotations

import argparse

import numpy as np

import bspgraph as bg
from bspgraph.primitives.bc_forward import Forward
from bspgraph.primitives.bfs import BFS
from bspgraph.primitives.cc import CC
from bspgraph.primitives.pagerank import PageRank
from bspgraph.primitives.sssp import SSSP
from bspgraph.testing import host_reads


def runs(graph) -> dict:
    """Each primitive's instance and ``init_frontier`` parameters on ``graph``."""
    source = int(np.argmax(np.diff(graph.forward.offsets)))
    return {
        "bfs push": (BFS(direction="push"), {"source": source}),
        "bfs auto": (BFS(), {"source": source}),
        "sssp": (SSSP(), {"source": source}),
        "cc": (CC(), {}),
        "pagerank": (
            PageRank(alpha=0.85, tol=1e-6, max_iter=100, weighted=False),
            {"teleport": 1.0 / graph.num_vertices},
        ),
        "bc forward": (Forward(), {"source": source}),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=12, help="R-MAT scale (default 12)")
    parser.add_argument("--devices", type=int, nargs="+", default=[2, 5], help="part counts")
    parser.add_argument(
        "--communicators", nargs="+", default=["selective"], choices=bg.testing.COMMUNICATORS
    )
    parser.add_argument(
        "--separate", action="store_true", help="each part a GPU of its own (messages cross a link)"
    )
    args = parser.parse_args(argv)
    graph = bg.generators.rmat(args.scale, 16, seed=1, weights=True, backend="numpy")
    where = "GPUs of their own" if args.separate else "parts of one GPU"
    print(f"rmat{args.scale}, {where}: host reads a superstep, around the step / within it")
    for communicator in args.communicators:
        for parts in args.devices:
            for name, (primitive, params) in runs(graph).items():
                reads = host_reads(
                    primitive,
                    graph,
                    devices=parts,
                    communicator=communicator,
                    separate=args.separate,
                    **params,
                )
                print(
                    f"  {communicator} P={parts} {name:9s} around {reads.superstep}  "
                    f"within {reads.step}  pickled collectives {sum(reads.pickled)}"
                )


if __name__ == "__main__":
    main()
