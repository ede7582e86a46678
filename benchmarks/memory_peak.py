"""Peak GPU memory of one device of a run, against ``bspgraph.memory.estimate``.

    python -m benchmarks.memory_peak --make 24 /tmp/r24.npz     # the R-MAT graph, once
    python -m benchmarks.memory_peak /tmp/r24.npz pagerank      # one GPU
    mpiexec -n 4 python -m benchmarks.memory_peak /tmp/r24.npz pagerank   # four parts

One process a device (``mpiexec``: one rank a part, over MPI, edge_balanced), so that each
part has its own CuPy memory pool, as it would on its own GPU: ranks may share one GPU, and
parts in one process (``devices=[0, 0]``) would share a pool and hide each other's
temporaries. The graph is read to the host; the run moves what its device needs. A device's
peak is its pool's footprint after one call (the pool keeps every block it was given); rank 0
prints the largest rank's, every rank's and the estimate.
"""

from __future__ import annotations

import argparse

import bspgraph as bg
from bspgraph.memory import estimate
from bspgraph.primitives.bfs import BFS
from bspgraph.primitives.pagerank import PageRank

PRIMITIVES = {
    "pagerank": (PageRank, lambda graph, run: bg.pagerank(graph, **run)),
    "bfs": (lambda: BFS(direction="auto"), lambda graph, run: bg.bfs(graph, 0, **run)),
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--make", type=int, metavar="SCALE", help="write rmat SCALE to PATH")
    parser.add_argument("path")
    parser.add_argument("algorithm", nargs="?", choices=sorted(PRIMITIVES), default="pagerank")
    args = parser.parse_args(argv)
    if args.make is not None:
        graph = bg.generators.rmat(args.make, 16, seed=1, weights=True, backend="cupy")
        bg.save_npz(graph.to("numpy"), args.path)
        return

    import cupy as cp
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    host = bg.load_npz(args.path, "numpy")
    run = {"backend": "cupy"}
    if comm.size > 1:
        run.update(transport="mpi", partitioner="edge_balanced")
    primitive, call = PRIMITIVES[args.algorithm]
    call(host, run)
    cp.cuda.Device().synchronize()
    pools = comm.gather(cp.get_default_memory_pool().total_bytes())
    if comm.rank == 0:
        estimated = estimate(primitive(), host, devices=comm.size)
        ranks = " ".join(f"{pool / 2**30:.2f}" for pool in pools)
        print(
            f"{args.algorithm:9s} P={comm.size}: measured {max(pools) / 2**30:6.2f} GiB (largest "
            f"rank; ranks {ranks}), estimated {estimated / 2**30:6.2f}, "
            f"V={host.num_vertices} E={host.num_edges}",
            flush=True,
        )


if __name__ == "__main__":
    main()
