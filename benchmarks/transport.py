"""What one exchange round costs on this machine: latency and bandwidth, raw and through bspgraph.

    mpiexec -n 4 python -m benchmarks.transport [--sizes 8 1000 1000000 30000000]

One rank per GPU. For each message length n (vertices; 4-byte ids and 8-byte values, so 12n
bytes to each peer) every rank sends to every other rank at once, ``--repeat`` times after a
warm-up, and rank 0 prints the median per round of: the transport's header round alone (one
MPI ``Alltoall`` of fixed int64 slots holding the sizes and headers, nothing pickled), raw
grouped ncclSend/ncclRecv of the same bytes between buffers allocated once, and
:meth:`NCCLTransport.exchange_round` (headers, NCCL, unpacking). GB/s is the bytes one rank
sends per second. The gap between the last two is what the transport adds to NCCL; the first
is the floor of its latency.
"""

from __future__ import annotations

import argparse
import statistics
import time

from bspgraph.comm.message import Update, describe
from bspgraph.comm.nccl import NCCLTransport


def median_seconds(transport, call, repeat: int) -> float:
    """Median wall seconds of ``call()`` over ``repeat`` rounds, every rank starting together
    and the GPU synchronised before the clock stops."""
    sync = transport.backend.xp.cuda.get_current_stream().synchronize
    call()
    sync()
    times = []
    for _ in range(repeat):
        transport.comm.Barrier()
        start = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(transport, n: int, repeat: int) -> tuple[float, float, float]:
    """Seconds per round for messages of ``n`` vertices to every peer: the headers' MPI
    alltoall, raw NCCL, and the transport's whole exchange round."""
    cp, nccl, rank, size = transport.backend.xp, transport._nccl, transport.rank, transport.size
    peers = [peer for peer in range(size) if peer != rank]
    update = Update(
        cp.arange(rank * n, (rank + 1) * n, dtype=cp.int32), {"value": cp.ones(n, dtype=cp.float64)}
    )
    nbytes = 12 * n
    headers = [describe([update] if peer != rank else []) for peer in range(size)]
    out = {peer: cp.ones(nbytes, dtype=cp.uint8) for peer in peers}
    into = {peer: cp.empty(nbytes, dtype=cp.uint8) for peer in peers}
    stream = cp.cuda.get_current_stream()

    def raw():
        nccl.groupStart()
        for peer in peers:
            transport.nccl.send(out[peer].data.ptr, nbytes, nccl.NCCL_UINT8, peer, stream.ptr)
            transport.nccl.recv(into[peer].data.ptr, nbytes, nccl.NCCL_UINT8, peer, stream.ptr)
        nccl.groupEnd()

    def whole():
        sends = [(rank, peer, update) for peer in peers]
        inbox, _ = transport.exchange_round(sends, num_vertices=size * n)
        assert sum(len(u) for u in inbox[rank]) == len(peers) * n

    times = (
        median_seconds(transport, lambda: transport._alltoallv(headers), repeat),
        median_seconds(transport, raw, repeat),
        median_seconds(transport, whole, repeat),
    )
    assert int(into[peers[0]][: min(nbytes, 8)].sum()) == min(nbytes, 8)  # raw sends arrived
    return times


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 1000, 100_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    transport = NCCLTransport()
    say = print if transport.rank == 0 else (lambda *a, **k: None)
    say(
        f"{transport.size} ranks, NCCL {transport._nccl.get_version()}; per round, every rank "
        "sends n vertices to every other"
    )
    say(
        f"{'n':>10} {'MB/peer':>8} {'headers ms':>10} {'nccl ms':>8} {'GB/s':>6} "
        f"{'round ms':>8} {'GB/s':>6}"
    )
    for n in args.sizes:
        header_s, raw_s, whole_s = measure(transport, n, args.repeat)
        sent = 12 * n * (transport.size - 1)
        say(
            f"{n:>10} {12 * n / 1e6:8.2f} {header_s * 1e3:10.3f} {raw_s * 1e3:8.3f} "
            f"{sent / raw_s / 1e9:6.1f} {whole_s * 1e3:8.3f} {sent / whole_s / 1e9:6.1f}"
        )


if __name__ == "__main__":
    main()
