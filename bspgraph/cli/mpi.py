"""``bspgraph run --transport mpi|nccl`` under ``mpiexec``: one device per rank."""

from __future__ import annotations

import time

from .load import file_options, load_graph
from .options import SOURCED
from .progress import Progress
from .running import (
    ALGORITHMS,
    call_checked,
    check_weights,
    findings,
    note_unreached,
    output_columns,
    pick_sources,
    print_summary,
    run_kwargs,
    summarize,
)
from .write import write_result


def run_mpi(args) -> int:
    """``run`` under ``mpiexec -n P`` (transport mpi or nccl), one device per rank: every rank
    reads the graph and keeps its part (docs/multi-gpu-and-mpi.md); rank 0 prints the summary
    and writes ``--output``, and shows the progress line (on a terminal). An error on any rank
    ends every rank non-zero, never a hang."""
    from ..comm.transport import failing_together
    from ..enactor import distribute

    if args.transport == "nccl":
        from ..comm.nccl import NCCLTransport

        transport = NCCLTransport()
    else:
        from ..comm.mpi import MPITransport

        transport = MPITransport(backend=args.backend)
    if args.devices not in (1, transport.size):
        raise ValueError(
            f"--devices {args.devices}: --transport {args.transport} runs one "
            f"device per rank, {transport.size} here; leave --devices out"
        )
    if args.plot:
        raise ValueError(
            f"--plot draws a one-device run; leave it out with --transport {args.transport}"
        )
    args.devices = transport.size
    with failing_together(transport):
        started = time.perf_counter()
        loaded = load_graph(args.graph, "numpy", **file_options(args))  # on the host
        whole = loaded.graph
        if args.algorithm in SOURCED:
            sources, args.source_rule = pick_sources(loaded, args)
            args.source = sources[0]
        check_weights(args, loaded)
        # run ids (each part one id range) for every primitive that declares its params;
        # CC does not yet (bspgraph/primitives/cc.py), so it keeps the file's ids
        graph = distribute(
            whole,
            transport,
            partitioner=args.partitioner,
            seed=args.seed,
            replicate=args.algorithm == "tc",
            relabel=args.algorithm != "cc",
        )
        loaded.graph = graph
        del whole  # from here on this rank holds its part only
        seconds = time.perf_counter() - started
        field, call = ALGORITHMS[args.algorithm]
        run = {**run_kwargs(args), "transport": transport, "devices": None}
        with Progress(args.algorithm, quiet=args.quiet or transport.rank != 0):
            result = call_checked(call, graph, args, run)
        values = getattr(result, field)
        summary = summarize(args, loaded, result.stats, seconds)
        if args.algorithm in SOURCED:
            summary.update(source=int(loaded.ids.of(args.source)), source_rule=args.source_rule)
        summary.update(findings(args.algorithm, result, values, loaded))
        summary.update(edges=graph.partition.num_edges, backend=transport.backend.name)
        if transport.rank == 0:
            if args.output:
                write_result(args.output, *output_columns(args.algorithm, values, loaded), field)
            print_summary(summary, args.json)
            note_unreached(args, loaded, values)
    return 0
