"""Run by tests/comm/test_mpi.py under ``mpiexec -n P``: BFS, SSSP, CC and PageRank with every
communicator over the MPI transport, from the whole graph (the enactor partitions it) and from
the part :func:`bspgraph.enactor.distribute` keeps. Every rank saves what it got (results and
per-superstep message counts) to ``OUT.rank<R>.npz``.

Usage: python mpi_driver.py GRAPH.mtx OUT [SOURCE [TRANSPORT]]; TRANSPORT "mpi" (NumPy, the
default), "mpi-cupy" (MPI between GPUs), "nccl", or "mpi-long-headers" (NumPy, every header
longer than the slot it would travel in: the rounds send headers apart).
"""

import contextlib
import sys

import numpy as np

import bspgraph as bg
from bspgraph.comm.mpi import MPITransport
from bspgraph.enactor import distribute
from bspgraph.enactor.solo import LIGHT_SHARE, light_share

COMMUNICATORS = {
    "broadcast": lambda: "broadcast",
    "selective": lambda: "selective",
    "butterfly": lambda: "butterfly",
    "butterfly3": lambda: bg.comm.Butterfly(fanout=3),
}
PARTITIONERS = {"whole": "biased", "part": "edge_balanced"}  # how each path cuts the graph


def runs(graph, source, run):
    """name -> (values, stats) of each primitive on ``graph``."""
    bfs_push = bg.bfs(graph, source, direction="push", **run)
    bfs_auto = bg.bfs(graph, source, parents=True, **run)
    sssp = bg.sssp(graph, source, **run)
    cc = bg.connected_components(graph, **run)
    pagerank = bg.pagerank(graph, tol=1e-10, max_iter=500, **run)
    return {
        "bfs": (bfs_push.depth, bfs_push.stats),
        "bfs_auto": (bfs_auto.depth, bfs_auto.stats),
        "sssp": (sssp.distance, sssp.stats),
        "cc": (cc.labels, cc.stats),
        "pagerank": (pagerank.rank, pagerank.stats),
    }


COUNTED = ("bfs", "bfs_auto")  # whose messages a superstep the test compares with one process's


def main(path: str, out: str, source: int, kind: str) -> None:
    if kind == "nccl":
        from bspgraph.comm.nccl import NCCLTransport

        transport = NCCLTransport()
    else:
        if kind == "mpi-long-headers":
            bg.comm.mpi.HEADER_WORDS = 0
        transport = MPITransport(backend="cupy" if kind == "mpi-cupy" else "numpy")
    whole = bg.read_mtx(path, backend="numpy")
    part = distribute(whole, transport, partitioner=PARTITIONERS["part"], seed=3)
    pickled = _count_pickled(transport)  # from here: the runs' pickled collectives
    saved, stretches = {}, 0
    for name, make in COMMUNICATORS.items():
        for graph, how in ((whole, "whole"), (part, "part")):
            seed = 3 if how == "part" else 0
            run = {
                "transport": transport,
                "communicator": make(),
                "partitioner": PARTITIONERS[how],
                "seed": seed,
            }
            # (the whole graph's runs without the GPU's floor for light supersteps, E / 64
            # alone, so that their levels cross the transport: this graph's are all under it)
            with light_share(LIGHT_SHARE) if how == "whole" else contextlib.nullcontext():
                ran = runs(graph, source, run)
            for algorithm, (values, stats) in ran.items():
                saved[f"{algorithm}/{name}/{how}"] = values
                stretches += _alone(stats)
                if algorithm in COUNTED:
                    messages = [(step.messages, step.rounds) for step in stats.supersteps]
                    saved[f"{algorithm}/{name}/{how}/messages"] = np.array(messages).T
    # and what may pickle one: the runs (their agreement) and the stretches of supersteps on
    # the first device alone (what they came to, told to every process)
    saved["pickled"] = np.array([len(pickled), len(COMMUNICATORS) * 2 * 5, stretches])
    saved["reduced"] = _reduced_in_place(transport)
    saved["settled"] = np.array(transport._waiting is None)  # nothing left waited for
    np.savez(f"{out}.rank{transport.rank}.npz", **saved)


def _reduced_in_place(transport) -> np.ndarray:
    """Whether ``transport.reduce_in_place`` took three scalars (rank + 1 added, rank maxed,
    rank + 5 minned: float64, int64, int32 on NCCL's GPU) and what each became (after a
    settle, so the transport ends idle)."""
    xp = transport.backend.xp
    r = transport.rank
    scalars = [
        (xp.asarray(r + 1.0), "add"),
        (xp.asarray(r, dtype=np.int64), "max"),
        (xp.asarray(r + 5, dtype=np.int32), "min"),
    ]
    took = transport.reduce_in_place(scalars)
    transport.settle()
    return np.array([took, *(float(array) for array, _ in scalars)])


PICKLING = {
    "alltoall",
    "allgather",
    "allreduce",
    "bcast",
    "gather",
    "scatter",
    "reduce",
    "send",
    "recv",
    "sendrecv",
    "isend",
    "irecv",
}  # mpi4py's object (pickle) calls


class CountingComm:
    """An mpi4py communicator that counts its pickled (lower-case) calls in ``calls``."""

    def __init__(self, comm) -> None:
        self._comm, self.calls = comm, []

    def __getattr__(self, name: str):
        method = getattr(self._comm, name)
        if name not in PICKLING:
            return method

        def counted(*args, **kwargs):
            self.calls.append(name)
            return method(*args, **kwargs)

        return counted


def _alone(stats) -> int:
    """The stretches of a run's supersteps on the first device alone (rule 6)."""
    ran_on = [step.devices for step in stats.supersteps]
    return sum(d == 1 and (i == 0 or ran_on[i - 1] != 1) for i, d in enumerate(ran_on))


def _count_pickled(transport) -> list:
    """The list of ``transport``'s pickled collectives from now on (it grows as they run)."""
    transport.comm = CountingComm(transport.comm)
    return transport.comm.calls


if __name__ == "__main__":
    arguments = sys.argv[1:]
    main(arguments[0], arguments[1], int((arguments[2:] or [0])[0]), (arguments[3:] or ["mpi"])[0])
