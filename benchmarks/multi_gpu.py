"""Multi-GPU check and timing: P GPUs against one, same graph, same answers.

    python -m benchmarks.multi_gpu --scale 22 --devices 2              # one process, P GPUs
    mpiexec -n 2 python -m benchmarks.multi_gpu --scale 25 --transport nccl --json out.json
    mpiexec -n 4 python -m benchmarks.multi_gpu --scale 26 --transport nccl --sizes 2 4 \
        --communicators selective butterfly:1 butterfly:4
    python -m benchmarks.multi_gpu --scale 25 --transport cluster --devices 2 --json one.json
    python -m benchmarks.multi_gpu --scale 25 --transport deployment --devices 2

Builds an R-MAT graph (edge factor 16, weights 1..64; or with ``--grid R`` the R x R grid, a
high-diameter graph whose supersteps are light) on the GPU, runs each algorithm on one GPU
and on P GPUs for each partitioner x communicator asked for, asserts the answers are equal
(PageRank to rtol 1e-9), and prints the median of the whole call, of the BSP run
(``stats.seconds``) and of its communication (the sum of ``comm_seconds`` over supersteps), and
what moved. With ``--transport nccl`` (or ``mpi``) there is one process per GPU: every rank
builds the same graph and runs the one-GPU reference on its own GPU; rank 0 prints. ``--sizes``
runs several device counts in one job, each on the first P ranks (the others wait), so the graph
is built once. A communicator is a name, or ``butterfly:F`` for the butterfly of fanout F.
``--json`` writes every row with its supersteps, for ``benchmarks.bsp_model``. With
``--transport cluster`` this one process drives ``--devices`` workers of ``bg.cluster`` (a
device each, the path of ``bg.bfs(G, 0, devices=P)`` from a notebook): its rows against an
``mpiexec`` run's are issue 50's gates (``benchmarks.one_call``). ``--transport deployment``
starts a Dask deployment of ``--devices`` worker processes (as a user's own, with no MPI job
between them) and runs on it with ``bg.cluster(client=...)``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import statistics
import time

import numpy as np

import bspgraph as bg
from bspgraph.backend import get_backend, gpu_count, to_host
from bspgraph.enactor.solo import light_share


class Empty(bg.Primitive):
    """EMPTY_STEPS supersteps that change nothing: what the enactor costs around the kernels
    (a one-int state travels by min, so every superstep packages, exchanges and combines),
    every one lifted (:func:`empty`)."""

    state = (bg.State("value", "int32"),)
    communicate = {"value": "min"}

    def init_frontier(self, graph, state, *, source):
        return bg.frontier.Frontier.empty(graph)

    def step(self, graph, frontier, state, iteration):
        return frontier

    def converged(self, graph, frontier, state, iteration):
        return iteration >= EMPTY_STEPS


EMPTY_STEPS = 100


@dataclasses.dataclass
class EmptyResult:
    value: np.ndarray
    stats: bg.Stats


def empty(graph, source, run):
    """Empty's run with every superstep on every device: its frontier is light, so rule 6
    would run them on the first device alone (6 us a superstep on two MPI ranks of NumPy,
    against 74 lifted, the cost the row stands for)."""
    with light_share(0):
        state, stats = bg.enact(Empty(), graph, source=source, **run)
    return EmptyResult(state["value"], stats)


ALGORITHMS = {
    "empty": (empty, "value"),
    "bfs-auto": (lambda g, s, run: bg.bfs(g, s, direction="auto", **run), "depth"),
    "bfs-push": (lambda g, s, run: bg.bfs(g, s, direction="push", **run), "depth"),
    "sssp": (lambda g, s, run: bg.sssp(g, s, **run), "distance"),
    "pagerank": (lambda g, s, run: bg.pagerank(g, tol=1e-9, **run), "rank"),
    "cc": (lambda g, s, run: bg.connected_components(g, **run), "labels"),
    "bc": (lambda g, s, run: bg.betweenness_centrality(g, sources=[s], **run), "centrality"),
}


def timed(fn, repeat: int):
    """The first call's setup seconds, then medians over ``repeat`` calls of the whole call,
    of stats.seconds, of the communication seconds and of the seconds in the collectives over
    processes (``sync``); and the last result."""
    setup = fn().stats.setup_seconds
    whole, bsp, comm, sync, result = [], [], [], [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        whole.append(time.perf_counter() - start)
        bsp.append(result.stats.seconds)
        comm.append(sum(s.comm_seconds for s in result.stats.supersteps))
        sync.append(sum(s.sync_seconds for s in result.stats.supersteps))
    median = statistics.median
    return {
        "ms": median(whole) * 1e3,
        "bsp_ms": median(bsp) * 1e3,
        "comm_ms": median(comm) * 1e3,
        "sync_ms": median(sync) * 1e3,
        "setup_s": setup,
        "setup_again_s": result.stats.setup_seconds,  # the last call's: 0 where the cut is kept
    }, result


def transports(kind: str, backend: str, sizes: list[int] | None):
    """The transport over every rank, and per device count P > 1 of ``sizes`` (default: every
    rank) this rank's transport over the first P ranks, or None where it is not among them."""
    from bspgraph.comm.mpi import MPITransport, _mpi
    from bspgraph.comm.nccl import NCCLTransport

    def make(comm=None):
        return NCCLTransport(comm) if kind == "nccl" else MPITransport(comm, backend=backend)

    world = make()
    runs = {}
    for parts in sorted(set(sizes or [world.size])):
        if not 1 <= parts <= world.size:
            raise SystemExit(f"--sizes {parts}: expected 1..{world.size} (the number of ranks)")
        if parts == world.size:
            runs[parts] = world
        elif parts > 1:
            inside = world.rank < parts
            comm = world.comm.Split(0 if inside else _mpi().UNDEFINED, world.rank)
            runs[parts] = make(comm) if inside else None
    return world, runs


def check_equal(field: str, got, expected) -> None:
    if field == "rank":
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    elif field == "centrality":  # sums of a float64 per path, in another order on P devices
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=0)
    else:
        np.testing.assert_array_equal(got, expected)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=22)
    parser.add_argument(
        "--grid",
        type=int,
        metavar="ROWS",
        help="the ROWS x ROWS grid (weights 1..64) instead of R-MAT",
    )
    parser.add_argument(
        "--devices", type=int, default=2, help="GPUs of one process (local), or workers (cluster)"
    )
    parser.add_argument(
        "--same-gpu",
        action="store_true",
        help="--devices parts all on GPU 0 (the enactor's cost on one GPU)",
    )
    parser.add_argument(
        "--transport", choices=["local", "nccl", "mpi", "cluster", "deployment"], default="local"
    )
    parser.add_argument("--backend", default="cupy", help="numpy: a CPU run of the same script")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--algorithms", nargs="+", default=[a for a in ALGORITHMS if a != "empty"])
    parser.add_argument("--partitioners", nargs="+", default=["edge_balanced", "random", "biased"])
    parser.add_argument(
        "--communicators", nargs="+", default=["selective", "butterfly", "broadcast"]
    )
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        help="device counts to run with --transport nccl/mpi (default: all ranks)",
    )
    parser.add_argument("--json", help="write the rows, with their supersteps, here (rank 0)")
    args = parser.parse_args(argv)
    if args.sizes and args.transport in ("local", "cluster", "deployment"):
        parser.error(
            "--sizes needs --transport nccl or mpi (one process per device); "
            "in one process use --devices"
        )
    cluster = deployment = client = None
    if args.transport in ("cluster", "deployment"):  # this process drives P workers
        backend, rank = get_backend(args.backend), 0
        if args.transport == "deployment":  # (a user's own: P worker processes, no MPI job)
            from distributed import Client, LocalCluster

            from bspgraph.enactor.cluster import WORKER_DASK, WORKER_MALLOC

            # its workers set as the docs advise (Dask's profiler and monitors off), as
            # bg.cluster sets its own
            env = {**WORKER_MALLOC, **WORKER_DASK}
            deployment = LocalCluster(n_workers=args.devices, threads_per_worker=1, env=env)
            client = Client(deployment)
            cluster = bg.cluster(client=client, backend=backend.name)
        else:
            cluster = bg.cluster(args.devices, backend=backend.name)
        runs = {args.devices: {"cluster": cluster}}
    elif args.transport == "local":
        backend, rank = get_backend(args.backend), 0
        devices = [0] * args.devices if args.same_gpu else args.devices
        runs = {args.devices: {"backend": backend, "devices": devices}}
    else:
        world, transports_by_size = transports(args.transport, args.backend, args.sizes)
        backend, rank = world.backend, world.rank
        runs = {
            parts: transport and {"transport": transport}
            for parts, transport in transports_by_size.items()
        }
    say = print if rank == 0 else (lambda *a, **k: None)
    say(
        f"{gpu_count()} GPUs visible; P = {', '.join(map(str, runs))} over transport "
        f"{args.transport}",
        flush=True,
    )
    if args.grid:
        graph_name = f"grid{args.grid}"
        graph = bg.generators.grid(args.grid, args.grid, weights=True, backend=backend)
    else:
        graph_name = f"rmat{args.scale}"
        graph = bg.generators.rmat(args.scale, 16, seed=1, weights=True, backend=backend)
    source = int(np.argmax(to_host(graph.out_degree())))
    host_graph = graph.to("numpy") if cluster is not None else None  # what the workers get
    say(
        f"{graph_name}: {graph.num_vertices} vertices, {graph.num_edges} edges, source {source}",
        flush=True,
    )
    rows = []

    def record(algorithm, p, partitioner, communicator, times, stats):
        steps = [dataclasses.asdict(s) for s in stats.supersteps]
        gpus = 1 if p == 1 or args.same_gpu else p  # the GPUs the parts ran on
        rows.append(
            {
                "graph": graph_name,
                "edges": graph.num_edges,
                "algorithm": algorithm,
                "P": p,
                "gpus": gpus,
                "transport": args.transport,
                "partitioner": partitioner,
                "communicator": communicator,
                **times,
                "supersteps": steps,
                "traversed_edges": stats.edges,
            }
        )
        say(
            f"  {algorithm} P={p} {partitioner} {communicator}: {times['ms']:.1f} ms, bsp "
            f"{times['bsp_ms']:.1f} ms, comm {times['comm_ms']:.1f} ms, sync "
            f"{times['sync_ms']:.1f} ms",
            flush=True,
        )
        if args.json and rank == 0:  # after every row: a run cut short keeps what it measured
            with open(args.json, "w") as out:
                json.dump(rows, out, indent=1)

    for name in args.algorithms:
        call, field = ALGORITHMS[name]
        one_times, one = timed(lambda c=call: c(graph, source, {"backend": backend}), args.repeat)
        record(name, 1, "-", "-", one_times, one.stats)
        for parts, many_run in runs.items():
            if many_run is None:  # this rank is not among the first P
                continue
            for partitioner, spec in itertools.product(args.partitioners, args.communicators):
                run = {**many_run, "partitioner": partitioner, "communicator": spec}
                sent = graph if cluster is None else host_graph
                times, many = timed(lambda c=call, r=run, g=sent: c(g, source, r), args.repeat)
                check_equal(field, getattr(many, field), getattr(one, field))
                transport = run.get("transport")  # each rank's sync: the slowest waits least
                times["sync_ms_ranks"] = (
                    transport.allgather(times["sync_ms"]) if transport else [times["sync_ms"]]
                )
                record(name, parts, partitioner, spec, times, many.stats)
    say(
        "\nms: whole call; bsp: the BSP run (stats.seconds); comm: its exchanges; sync: the "
        "collectives over processes, fewest-most ms over ranks (the slowest rank waits least); "
        "speed-up of bsp over P=1; setup: the first call's partitioning and upload (cached after)"
    )
    say(
        f"{'algorithm':<9} {'P':>2} {'partitioner':<13} {'communicator':<10} {'ms':>8} "
        f"{'bsp ms':>8} {'comm ms':>8} {'sync ms':>11} {'speed-up':>8} {'steps':>5} "
        f"{'MB sent':>8} {'setup s':>7}"
    )
    base = {}
    for row in rows:
        if row["P"] == 1:
            base[row["algorithm"]] = row["bsp_ms"]
        sent = sum(s["bytes"] for s in row["supersteps"]) / 1e6
        ranks = row.get("sync_ms_ranks", [0.0])
        sync = f"{min(ranks):.1f}-{max(ranks):.1f}"
        say(
            f"{row['algorithm']:<9} {row['P']:>2} {row['partitioner']:<13} "
            f"{row['communicator']:<10} {row['ms']:8.1f} {row['bsp_ms']:8.1f} "
            f"{row['comm_ms']:8.1f} {sync:>11} {base[row['algorithm']] / row['bsp_ms']:7.2f}x "
            f"{len(row['supersteps']):5d} {sent:8.1f} {row['setup_s']:7.2f}"
        )
    if cluster is not None:
        cluster.close()
    if deployment is not None:
        client.close()
        deployment.close()


if __name__ == "__main__":
    main()
