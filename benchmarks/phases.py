"""Where the multi-device superstep spends its time, phase by phase, on one GPU.

    PYTHONPATH=. python3 -m benchmarks.phases --scale 24 --algorithms bfs-push sssp
    PYTHONPATH=. python3 -m benchmarks.phases --backend numpy --scale 18 --parts 4
    PYTHONPATH=. python3 -m benchmarks.phases --scale 24 --host --algorithms sssp
    PYTHONPATH=. python3 -m benchmarks.phases --scale 24 --host --wire --algorithms bfs-auto

Builds an R-MAT graph (as ``benchmarks.multi_gpu``), runs each algorithm on one part and on
``--parts`` parts of the same device (edge_balanced, selective), and after two warm calls times
one call with the device synchronised before and after each phase of the superstep (the step
and the count it queues, the message's choice, the message (package or Slab), exchange, next
frontier and its counts, tally, convergence, gather; a phase inside another is printed too and
counted once): the phases' totals, calls and time per call. The synchronisations add a few microseconds a phase; the plain calls' best whole and
BSP times are printed first. Every superstep runs on every part (no light one on one part
alone, ``bspgraph.enactor.solo``: its phases are the one-device loop's). With ``--host`` nothing is synchronised: each superstep's phases
are printed apart, as the host spent them (a host read inside a phase includes its wait for the
device), with the time of the superstep and the frontier it made.

With ``--inner`` each superstep's phases are printed apart with the device synchronised around
each, beside the calls inside them in brackets (``[ops.one_value]``, the keyed kernels'
``[keyed.apply_block]``, ``[Frontier.mask]`` and ``[Frontier.ids]``, the communicator's
``[exchange_mixed]``): what a part's superstep costs on the device, call by call::

    PYTHONPATH=. python3 -m benchmarks.phases --scale 25 --wire --inner --algorithms bfs-auto

With ``--transport mpi`` or ``nccl``, under ``mpiexec -n P`` (one rank per device)::

    mpiexec -n 4 python3 -m benchmarks.phases --transport nccl --scale 24 --algorithms sssp

every rank prints its supersteps' phases as its host spent them (``--host``), with the
transport's own steps in parentheses inside them: each MPI collective by name (the headers'
``Alltoall``, the tally's ``Allgather``, ``nccl send/recv``: the wait for NCCL), the split of
Updates by owner (``pieces``), the round's start and its header slots, the messages' ``pack``,
``headers``, ``to device`` and ``unpack``, and over NCCL the calls that queue its work (``nccl
send``, ``nccl recv``, ``nccl group end``): what of an exchange's host time is not a wait.
"""

from __future__ import annotations

import argparse
import collections
import time

import numpy as np

import bspgraph as bg
from bspgraph import comm
from bspgraph.backend import get_backend, to_host
from bspgraph.enactor import distributed
from bspgraph.enactor.solo import light_share

from .multi_gpu import ALGORITHMS

PHASES = (
    "_stepped",
    "_chosen_unread",
    "_message",
    "_package",
    "_slab",
    "_exchange",
    "_next_frontier_counted",
    "_next_frontier",
    "_next_frontier_dense",
    "_union_edges",
    "_combine_scalars",
    "_converged",
    "_sum",
    "_owned_count",
    "_read_each",
    "_unpacked",
    "read_counts",
    "_level",
    "_unfolded",
    "_gather",
    "_parts",
)
INSIDE = {  # a phase timed within another (and the transport's own steps, "(...)")
    "step": "_stepped",  # (the primitive's step; the count it leaves is queued around it)
    "_package": "_message",
    "_slab": "_message",
    "_next_frontier": "_next_frontier_counted",
    "_next_frontier_dense": "_next_frontier",
}
OUTSIDE = ("_parts", "_gather")  # before the first superstep, after the last


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=22)
    parser.add_argument(
        "--parts",
        type=int,
        nargs="+",
        default=[2],
        help="part counts run by the multi-device enactor on one device (1: "
        "the enactor's own cost against the one-device loop)",
    )
    parser.add_argument("--backend", default="cupy")
    parser.add_argument(
        "--algorithms",
        nargs="+",
        default=["bfs-push", "bfs-auto", "sssp"],
        choices=sorted(ALGORITHMS),
    )
    parser.add_argument(
        "--host",
        action="store_true",
        help="no synchronisation: each superstep's phases as the host spent them",
    )
    parser.add_argument(
        "--transport",
        choices=["local", "mpi", "nccl"],
        default="local",
        help="mpi, nccl: one rank per device under mpiexec (implies --host)",
    )
    parser.add_argument(
        "--inner",
        action="store_true",
        help="each superstep apart, synchronised, with the calls inside the phases",
    )
    parser.add_argument(
        "--wire",
        action="store_true",
        help="local parts over a simulated link (messages copied and chosen by their bytes, "
        "as between GPUs or processes: Bits where a level took one value)",
    )
    args = parser.parse_args(argv)
    transport, lines = _transport(args.transport, args.backend), []
    backend = get_backend(args.backend) if transport is None else transport.backend
    args.host = args.host or transport is not None
    graph = bg.generators.rmat(args.scale, 16, seed=1, weights=True, backend=backend)
    source = int(np.argmax(to_host(graph.out_degree())))
    totals, counts, timing = collections.Counter(), collections.Counter(), [False]
    steps = []  # --host: each superstep's (totals, counts)
    synchronize = (lambda: None) if args.host else backend.synchronize

    def timed(label, fn):
        def wrapper(*args, **kwargs):
            if not timing[0]:
                return fn(*args, **kwargs)
            synchronize()
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                synchronize()
                totals[label] += time.perf_counter() - started
                counts[label] += 1

        return wrapper

    apart = args.host or args.inner  # each superstep's phases printed apart

    def superstep(*fields, record=distributed.Superstep, **named):
        if timing[0] and apart:  # the superstep's phases end here
            steps.append((totals.copy(), counts.copy()))
            totals.clear()
            counts.clear()
        return record(*fields, **named)

    for name in PHASES:
        setattr(distributed, name, timed(name, getattr(distributed, name)))
    distributed.Superstep = superstep
    for kind in (bg.primitives.BFS, bg.primitives.SSSP, bg.primitives.CC, bg.primitives.PageRank):
        kind.step = timed("step", kind.step)
    if args.inner:
        _time_inner(timed)
    if transport is not None:
        _time_transport(timed, transport)
    with light_share(0):  # (every superstep through the lifted phases)
        for name in args.algorithms:
            call = ALGORITHMS[name][0]
            for parts in (None, *(args.parts if transport is None else [transport.size])):
                run = {"backend": backend}
                if parts is not None:  # the multi-device enactor (None: the one-device loop)
                    run.update(partitioner="edge_balanced", communicator="selective")
                    if transport is not None:
                        run.update(transport=transport)
                    else:
                        run.update(devices=[0] * parts)
                        if args.wire:
                            run.update(transport=comm.Local(parts, wire=True))
                for _ in range(2):
                    call(graph, source, run)
                plain = []
                for _ in range(3):
                    started = time.perf_counter()
                    result = call(graph, source, run)
                    plain.append((time.perf_counter() - started, result.stats.seconds))
                totals.clear()
                counts.clear()
                steps.clear()
                timing[0] = True
                result = call(graph, source, run)
                timing[0] = False
                whole, bsp = min(plain)
                label = "the one-device loop" if parts is None else f"{parts} part(s)"
                lines.append(
                    f"{name} on {label}: whole {whole * 1e3:.2f} ms, bsp "
                    f"{bsp * 1e3:.2f} ms, {len(result.stats.supersteps)} supersteps"
                )
                if apart:
                    lines += _supersteps(result.stats.supersteps, steps)
                    continue
                for label, seconds in totals.most_common():
                    lines.append(
                        f"    {label:22} {seconds * 1e3:8.3f} ms {counts[label]:4d} calls "
                        f"{seconds / counts[label] * 1e6:8.1f} us a call"
                    )
    if transport is None:
        print("\n".join(lines))
        return
    ranks = transport.comm.gather(lines, root=0)  # after every run: no collective in between
    if transport.rank == 0:
        print("\n".join(f"rank {rank}: {line}" for rank, own in enumerate(ranks) for line in own))


def _time_inner(timed) -> None:
    """Time the calls inside the phases that pass over every vertex or a block: the message
    choice's one value, the keyed kernels, the general path's combine (where no keyed kernel
    takes the contract: an added follower, lanes), a frontier's mask and ids, the exchange."""
    from bspgraph.backend import ops
    from bspgraph.comm import selective
    from bspgraph.enactor import _keyed_kernels
    from bspgraph.frontier import Frontier

    ops.one_value = timed("[ops.one_value]", ops.one_value)
    for kind in (_keyed_kernels.KeyedKernels, _keyed_kernels.NumpyKeyed):
        for name in ("apply_block", "list", "pack", "gather"):
            setattr(kind, name, timed(f"[keyed.{name}]", getattr(kind, name)))
    for name in ("mask", "ids"):
        prop = getattr(Frontier, name)
        setattr(Frontier, name, property(timed(f"[Frontier.{name}]", prop.fget)))
    exchange = selective.Selective.exchange_mixed
    selective.Selective.exchange_mixed = timed("[exchange_mixed]", exchange)
    distributed._combine = timed("[combine]", distributed._combine)  # the general path's


def _time_transport(timed, transport) -> None:
    """Time the transport's own steps inside the phases: each MPI collective by name (the
    wait for the other ranks included), the split of Updates by owner, the round's start and
    its header slots, the headers' encoding and decoding, the messages' packing and moves to
    the device, the cut of what arrived and, over NCCL, the calls that queue its work (the
    group's sends, receives and end)."""
    from bspgraph.comm import mpi, nccl, selective

    collective = mpi.MPITransport._collective
    mpi.MPITransport._collective = lambda self, what, *rest: timed(f"({what})", collective)(
        self, what, *rest
    )
    mpi.unpack = timed("(unpack)", mpi.unpack)
    nccl.assembled = timed("(unpack)", nccl.assembled)
    nccl.NCCLTransport._columns_in = timed("(unpack)", nccl.NCCLTransport._columns_in)
    mpi.pack = timed("(pack)", mpi.pack)
    pieces = selective.Selective._pieces
    selective.Selective._pieces = timed("(pieces)", pieces)
    mpi._slots = timed("(slots)", mpi._slots)
    nccl.describe, nccl.described = (
        timed("(headers)", nccl.describe),
        timed("(headers)", nccl.described),
    )
    for name in ("_start_round", "_to_device"):
        setattr(
            mpi.MPITransport,
            name,
            timed(f"({name[1:].replace('_', ' ')})", getattr(mpi.MPITransport, name)),
        )
    if isinstance(transport, nccl.NCCLTransport):  # the calls that queue NCCL's work
        transport._nccl = _Timed(transport._nccl, timed, {"groupEnd": "(nccl group end)"})
        names = {"send": "(nccl send)", "recv": "(nccl recv)"}
        transport.nccl = _Timed(transport.nccl, timed, names)


class _Timed:
    """``target`` with the attributes ``names`` maps to labels timed by ``timed``."""

    def __init__(self, target, timed, names: dict) -> None:
        self._target = target
        self._timed = {name: timed(label, getattr(target, name)) for name, label in names.items()}

    def __getattr__(self, name):
        return self._timed.get(name) or getattr(self._target, name)


def _transport(kind: str, backend: str):
    """None (parts of one device in this process), or this rank's MPI or NCCL transport."""
    if kind == "local":
        return None
    from bspgraph.comm.mpi import MPITransport
    from bspgraph.comm.nccl import NCCLTransport

    return NCCLTransport() if kind == "nccl" else MPITransport(backend=backend)


def _supersteps(supersteps, steps) -> list[str]:
    """Each superstep's frontier, time and phases (us / calls), as the host spent them (or
    synchronised, with ``--inner``); "other" is the superstep's time outside the phases timed
    (the loop's own work)."""
    lines = []
    for superstep, (totals, counts) in zip(supersteps, steps, strict=False):
        for label in OUTSIDE:
            totals.pop(label, None)
        other = superstep.seconds - sum(
            seconds
            for label, seconds in totals.items()
            if label not in INSIDE and label[0] not in "(["
        )
        lines.append(
            f"    {superstep.frontier:>10} {superstep.seconds * 1e6:8.0f} us  other "
            f"{other * 1e6:6.0f}  "
            + "  ".join(
                f"{label} {seconds * 1e6:.0f}/{counts[label]}"
                for label, seconds in totals.most_common()
            )
        )
    return lines


if __name__ == "__main__":
    main()
