"""Peak GPU memory of one device of a run, against ``bspgraph.memory.estimate``.

    python -m benchmarks.memory_peak --make 24 /tmp/r24.npz     # the R-MAT graph, once
    python -m benchmarks.memory_peak /tmp/r24.npz pagerank      # one GPU
    mpiexec -n 4 python -m benchmarks.memory_peak /tmp/r24.npz pagerank   # four parts
    mpiexec -n 2 python -m benchmarks.memory_peak /tmp/r24.npz pagerank --transport nccl

One process a device (``mpiexec``: one rank a part, over MPI, edge_balanced), so that each
part has its own CuPy memory pool, as it would on its own GPU: ranks may share one GPU, and
parts in one process (``devices=[0, 0]``) would share a pool and hide each other's
temporaries. The graph is read to the host; the run moves what its device needs. A device's
peak is its pool's footprint after one call (the pool keeps every block it was given); rank 0
prints the largest rank's, every rank's and the estimate. ``--sites`` also prints, for rank
0, the blocks live at its highest point, summed by the innermost bspgraph lines that asked
for them (a CuPy memory hook), to see which of the estimate's terms a run really holds.
"""

from __future__ import annotations

import argparse
import collections
import traceback

import bspgraph as bg
from bspgraph.memory import estimate
from bspgraph.primitives import BFS, CC, SSSP, PageRank
from bspgraph.primitives.bc_backward import Backward
from bspgraph.primitives.bc_batched_backward import BatchedBackward
from bspgraph.primitives.bc_batched_forward import BatchedForward
from bspgraph.primitives.bc_forward import Forward


def _one(primitive):
    """The estimate of a run of one primitive."""
    return lambda graph, devices: estimate(primitive(), graph, devices=devices)


BATCH = 8  # the sources of "bc-batch": one batched run of each phase, a lane a source


def betweenness_estimate(graph, devices: int, lanes: int = 1) -> int:
    """Betweenness from ``lanes`` sources (one run of each phase): the larger of its two
    phases' estimates, the backward phase's with the forward phase's result beside it (a
    depth and a path count a vertex and lane)."""
    if lanes == 1:
        forward, backward = Forward(), Backward(bounds=(0, 1, 1))
    else:
        forward, backward = (
            BatchedForward(lanes=lanes),
            BatchedBackward(lanes=lanes, bounds=(0, 1, 1)),
        )
    held = graph.num_vertices * lanes * (4 + 8)
    return max(
        estimate(forward, graph, devices=devices),
        estimate(backward, graph, devices=devices) + held,
    )


PRIMITIVES = {
    "pagerank": (_one(PageRank), lambda graph, run: bg.pagerank(graph, **run)),
    "bfs": (_one(lambda: BFS(direction="auto")), lambda graph, run: bg.bfs(graph, 0, **run)),
    "sssp": (_one(SSSP), lambda graph, run: bg.sssp(graph, 0, **run)),
    "cc": (_one(CC), lambda graph, run: bg.connected_components(graph, **run)),
    "bc": (
        betweenness_estimate,
        lambda graph, run: bg.betweenness_centrality(graph, sources=[0], **run),
    ),
    "bc-batch": (
        lambda graph, devices: betweenness_estimate(graph, devices, BATCH),
        lambda graph, run: bg.betweenness_centrality(graph, sources=range(BATCH), **run),
    ),
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--make", type=int, metavar="SCALE", help="write rmat SCALE to PATH")
    parser.add_argument("path")
    parser.add_argument("algorithm", nargs="?", choices=sorted(PRIMITIVES), default="pagerank")
    parser.add_argument("--sites", action="store_true", help="rank 0's live blocks at its peak")
    parser.add_argument(
        "--transport",
        choices=("mpi", "nccl"),
        default="mpi",
        help="between ranks (one GPU each: nccl)",
    )
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
        run.update(transport=args.transport, partitioner="edge_balanced")
    estimated_for, call = PRIMITIVES[args.algorithm]
    if args.sites and comm.rank == 0:
        with sites_hook() as sites:
            call(host, run)
    else:
        call(host, run)
    pools = comm.gather(_footprint(cp))
    if comm.rank == 0:
        estimated = estimated_for(host, comm.size)
        ranks = " ".join(f"{pool / 2**30:.2f}" for pool in pools)
        print(
            f"{args.algorithm:9s} P={comm.size}: measured {max(pools) / 2**30:6.2f} GiB (largest "
            f"rank; ranks {ranks}), estimated {estimated / 2**30:6.2f}, "
            f"V={host.num_vertices} E={host.num_edges}",
            flush=True,
        )
        if args.sites:
            sites.report(host.num_vertices)


def _footprint(cp) -> int:
    """The largest pool of this process's GPUs (the pool is per device: the run's GPU need
    not be the current one once the call returns)."""
    largest = 0
    for device in range(cp.cuda.runtime.getDeviceCount()):
        with cp.cuda.Device(device):
            cp.cuda.Device().synchronize()
            largest = max(largest, cp.get_default_memory_pool().total_bytes())
    return largest


def _site() -> str:
    """The innermost three bspgraph frames of the current stack, innermost first."""
    frames = [f for f in traceback.extract_stack()[:-3] if "/bspgraph/" in f.filename]
    return " < ".join(f"{f.filename.split('/bspgraph/')[-1]}:{f.lineno}" for f in frames[:-4:-1])


def _hook_class():
    from cupy.cuda import memory_hook

    class Hook(memory_hook.MemoryHook):
        """Every pool block's size and site while it is live; the live set at the peak."""

        name = "bspgraph-sites"

        def __init__(self):
            self.live, self.total, self.peak, self.at_peak = {}, 0, 0, {}

        def malloc_postprocess(self, **kwargs):
            size = kwargs["mem_size"]
            self.live[kwargs["mem_ptr"]] = (size, _site())
            self.total += size
            if self.total > self.peak:
                self.peak, self.at_peak = self.total, dict(self.live)

        def free_postprocess(self, **kwargs):
            size, _ = self.live.pop(kwargs["mem_ptr"], (0, None))
            self.total -= size

        def report(self, vertices: int) -> None:
            by_site = collections.Counter()
            blocks = collections.Counter()
            for size, site in self.at_peak.values():
                by_site[site] += size
                blocks[site] += 1
            print(
                f"  live at the peak: {self.peak / 2**30:.2f} GiB; by site (GiB, bytes a vertex, blocks):"
            )
            for site, size in by_site.most_common(30):
                print(f"  {size / 2**30:6.3f} {size / vertices:7.2f} {blocks[site]:4d}  {site}")

    return Hook


def sites_hook():
    """A CuPy memory hook recording the live blocks at the pool's highest point."""
    return _hook_class()()


if __name__ == "__main__":
    main()
