"""The NCCL transport: one process per GPU, payloads GPU to GPU with CuPy's NCCL bindings.

MPI starts the processes and carries everything small: the NCCL unique id (a broadcast), each
round's message headers (``message.describe``: int64 arrays, in one ``Alltoall`` of fixed slots
where they fit), the enactor's stop test and the fingerprints; a run's scalars are all-reduced
on the GPUs (:meth:`NCCLTransport.reduce_in_place`). The payloads (the final result's too)
never touch the host: one NCCL group moves every column of every message straight from the
array that holds it (no packing; arrays that lie one after another as the receiver places
them, a package laid out as it travels, in one send: the header says how many a send holds),
into one receive buffer per peer, cut as MPI's (``message.columns_of``); the host does not
wait for it (the receivers' kernels queue behind it). A light round allocates nothing: a
peer's buffer is kept between rounds while small, and so are the views of it of a header
that repeats. Faults are handled as by :class:`~bspgraph.comm.mpi.MPITransport` (abort on
an exception, the launcher on a dead rank, the watchdog on a hang, which also covers a host
read waiting for NCCL, until the next collective; a run ends by waiting for its transfers,
:meth:`NCCLTransport.settle`).

Launch as for MPI, one rank per GPU::

    mpiexec -n 2 python -m bspgraph.cli run bfs graph.mtx --transport nccl
"""

from __future__ import annotations

import math
import pickle
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backend import gpu_count
from ..exceptions import CommunicationError, DeviceError
from .message import arrays_of, assembled, columns_of, describe, described, padded_size
from .mpi import MPITransport
from .transport import Inbox, RoundStats, Send


class NCCLTransport(MPITransport):
    """Moves Updates and Slabs between GPUs with NCCL point-to-point sends, one rank per GPU.

    Parameters
    ----------
    comm : mpi4py communicator, optional
        Default ``MPI.COMM_WORLD``; it starts NCCL and carries the small messages.
    timeout : float, optional
        As for :class:`~bspgraph.comm.mpi.MPITransport`.

    Raises
    ------
    DeviceError
        No GPU, or more ranks on a node than it has GPUs (NCCL needs one GPU per rank).
    """

    carries_counts = True
    streams = True

    def __init__(self, comm=None, *, timeout: float | None = None):
        super().__init__(comm, backend="cupy", timeout=timeout)
        from cupy.cuda import nccl

        node_ranks = self.comm.Split_type(self._shared()).Get_size()
        if node_ranks > gpu_count():
            raise DeviceError(
                f"transport 'nccl': {node_ranks} ranks on this node, {gpu_count()} GPUs: "
                "NCCL needs one GPU per rank"
            )
        self._nccl = nccl
        uid = nccl.get_unique_id() if self.rank == 0 else None
        uid = self._collective("bcast", self.comm.bcast, uid)
        with self.backend.xp.cuda.Device(self.backend.device):
            self.nccl = nccl.NcclCommunicator(self.size, uid, self.rank)
        if not self.on_mpi:  # a Dask deployment's: its small collectives over NCCL too
            self.comm = SmallOverNCCL(self.comm, self.backend)
            self.comm.mailbox.on_abort.append(self.nccl.abort)
        self._kept: dict = {}  # src -> its receive buffer, kept between rounds (_buffer)
        self._views: dict = {}  # src -> (its last Layout and buffer, the arrays in it)
        self.stream = None  # where the rounds' transfers go (``Transport.streams``)
        self._sent = None  # the last round's sent arrays, on another stream: kept until the
        # next (their memory goes back to the caller's stream's pool, which may hand it to a
        # kernel that writes it before the send has read it)

    def __repr__(self) -> str:
        return f"NCCLTransport(rank={self.rank}, size={self.size}, gpu={self.backend.device})"

    def settle(self) -> None:
        """Wait for the queued transfers, watched as a collective is (then nothing is left
        marked as waited for: an idle process is no hung one)."""
        self._collective("nccl send/recv", self.backend.xp.cuda.get_current_stream().synchronize)

    def reduce_in_place(self, scalars: Sequence[tuple[Any, str]]) -> bool:
        """Each scalar all-reduced in place by NCCL, one group for all, queued on this GPU's
        stream (no host read: whatever reads a scalar next waits for it, watched as the
        exchange's transfers are); False where a scalar is not a CuPy array on this GPU or its
        reduction or dtype is not NCCL's."""
        cp, nccl, gpu = self.backend.xp, self._nccl, self.backend.device or 0
        calls = []
        for array, reduction in scalars:
            op, kind = NCCL_OPS.get(reduction), NCCL_TYPES.get(getattr(array, "dtype", None))
            on_this_gpu = isinstance(array, cp.ndarray) and array.device.id == gpu
            if op is None or kind is None or not on_this_gpu or not array.flags.c_contiguous:
                return False
            calls.append((array, getattr(nccl, kind), getattr(nccl, op)))
        stream = cp.cuda.get_current_stream().ptr
        nccl.groupStart()
        for array, kind, op in calls:
            self.nccl.allReduce(array.data.ptr, array.data.ptr, array.size, kind, op, stream)
        nccl.groupEnd()
        self._waiting = (time.monotonic(), "nccl allreduce")
        return True

    def exchange_round(
        self, sends: Sequence[Send], *, num_vertices: int
    ) -> tuple[Inbox, RoundStats]:
        cp, nccl = self.backend.xp, self._nccl
        outgoing, counts = self._start_round(sends, num_vertices)
        outgoing = [[self._to_device(m) for m in per_peer] for per_peer in outgoing]
        contiguous = [
            [cp.ascontiguousarray(array) for m in messages for array in arrays_of(m)]
            for messages in outgoing
        ]
        sending = dict(enumerate(map(_runs, contiguous)))  # every array with bytes, in runs
        stream = cp.cuda.get_current_stream() if self.stream is None else self.stream
        if self.stream is not None:  # behind the caller's queue (its messages are made there)
            stream.wait_event(cp.cuda.get_current_stream().record())
        self._sent = contiguous if self.stream is not None else None
        headers = [  # how many arrays each send holds, then the messages' shapes
            np.concatenate([[len(sending[dst]), *(n for *_, n in sending[dst])], describe(m)])
            for dst, m in enumerate(outgoing)
        ]
        (arriving,) = self._alltoallv(headers)
        runs = [header[1 : 1 + header[0]].tolist() for header in arriving]
        layouts = [described(header[1 + header[0] :]) for header in arriving]  # no pickle
        sizes = {src: _sizes(layout) for src, layout in enumerate(layouts) if layout}
        spans = {src: _spans(sized, runs[src], src) for src, sized in sizes.items()}
        with stream:  # (from that stream's pool: no other stream's kernel writes them first)
            buffers = {
                src: self._buffer(src, sum(p for _, p in sized)) for src, sized in sizes.items()
            }
        if any(spans.values()) or any(sending.values()):  # (nothing to move: no group, no wait)
            nccl.groupStart()  # sends and receives of a pair match in order: run by run
            for dst, sent in sending.items():
                for pointer, nbytes, _ in sent:
                    self.nccl.send(pointer, nbytes, nccl.NCCL_UINT8, dst, stream.ptr)
            for src, buffer in buffers.items():
                for offset, nbytes in spans[src]:
                    self.nccl.recv(
                        buffer.data.ptr + offset, nbytes, nccl.NCCL_UINT8, src, stream.ptr
                    )
            nccl.groupEnd()
            # Not waited for: what reads the columns queues behind the transfer on this stream,
            # and a column freed now goes back to CuPy's pool for this stream only. The next
            # host read waits for it, watched until the next collective as if in one.
            self._waiting = (time.monotonic(), "nccl send/recv")
        arrived = [
            m
            for src, layout in enumerate(layouts)
            if layout
            for m in assembled(layout, self._columns_in(src, layout, buffers[src]))
        ]
        return self._finish_round(arrived, counts)

    def _buffer(self, src: int, nbytes: int):
        """Where the round's payload from ``src`` arrives: a buffer kept for ``src`` between
        rounds while it holds at most KEPT_BYTES (a light superstep allocates nothing;
        receives and the kernels that read them queue in order on this stream), else a new
        one."""
        cp = self.backend.xp
        if nbytes > KEPT_BYTES:
            return cp.empty(nbytes, dtype=cp.uint8)
        kept = self._kept.get(src)
        if kept is None or kept.nbytes < nbytes:
            kept = self._kept[src] = cp.empty(max(nbytes, KEPT_MIN), dtype=cp.uint8)
        return kept

    def _columns_in(self, src: int, layout, buffer) -> list[dict]:
        """The arrays of ``src``'s messages in ``buffer`` (:func:`~.message.columns_of`):
        those of the last round from ``src`` where the same header (the same Layout, which
        ``described`` keeps) arrived in the same kept buffer (views cost a few CuPy calls
        each)."""
        last = self._views.get(src)
        if last is not None and last[0] is layout and last[1] is buffer:
            return last[2]
        columns = columns_of(layout, buffer)
        if buffer is self._kept.get(src):
            self._views[src] = (layout, buffer, columns)
        return columns


class SmallOverNCCL:
    """A Dask deployment's communicator (:class:`~.engine.EngineComm`) whose collectives
    (each round's headers, the tally, rule 6's outcome: small host arrays and values) go
    over an NCCL communicator of their own, on a stream of their own (not behind the run's
    kernels, as MPI's are not), where each would cost a Dask call a peer (two H200, rmat25:
    BFS push's loop 18.8 -> 13.2 ms, against 11.0 under ``mpiexec``); an abort still goes
    over Dask, and ends both NCCL communicators there, so that a transfer waiting for a dead
    peer returns."""

    def __init__(self, comm, backend) -> None:
        from cupy.cuda import nccl

        self.comm, self.xp, self._nccl = comm, backend.xp, nccl
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        uid = comm.bcast(nccl.get_unique_id() if self.rank == 0 else None)
        with self.xp.cuda.Device(backend.device):
            self.nccl = nccl.NcclCommunicator(self.size, uid, self.rank)
            self.stream = self.xp.cuda.Stream(non_blocking=True)
        comm.mailbox.on_abort.append(self.nccl.abort)

    def __getattr__(self, name: str):
        return getattr(self.comm, name)

    def allgather(self, value: Any) -> list[Any]:
        """Every rank's ``value``, pickled (as mpi4py's), in two NCCL all-gathers."""
        data = np.frombuffer(pickle.dumps(value), dtype=np.uint8)
        sizes = np.empty((self.size, 1), dtype=np.int64)
        self.Allgather(np.array([data.size], dtype=np.int64), sizes)
        padded = np.zeros(int(sizes.max()), dtype=np.uint8)
        padded[: data.size] = data
        rows = np.empty((self.size, padded.size), dtype=np.uint8)
        self.Allgather(padded, rows)
        return [pickle.loads(rows[r, : sizes[r, 0]].tobytes()) for r in range(self.size)]

    def bcast(self, value: Any, root: int = 0) -> Any:
        return self.allgather(value if self.rank == root else None)[root]

    def Allgather(self, values: np.ndarray, rows: np.ndarray) -> None:  # noqa: N802
        with self.stream:  # (copies, buffers and the collective on this stream alone)
            sent = self.xp.asarray(values)
            got = self.xp.empty((self.size, *sent.shape), dtype=sent.dtype)
            uint8 = self._nccl.NCCL_UINT8
            self.nccl.allGather(sent.data.ptr, got.data.ptr, sent.nbytes, uint8, self.stream.ptr)
            rows[...] = got.get()

    def Alltoall(self, sent: np.ndarray, arriving: np.ndarray) -> None:  # noqa: N802
        row = sent[0].nbytes
        self._moved(sent, [(r * row, row) for r in range(self.size)], arriving, row)

    def Alltoallv(self, sent: list, arriving: list) -> None:  # noqa: N802
        """mpi4py's buffer specs: ``[buffer, (counts, starts), kind]`` (the kind unread)."""
        (buffer, (counts, starts), _), (into, (sizes, at), _) = sent, arriving
        item = buffer.dtype.itemsize
        spans = [(s * item, n * item) for s, n in zip(starts.tolist(), counts.tolist())]
        places = [(s * item, n * item) for s, n in zip(at.tolist(), sizes.tolist())]
        self._moved(buffer, spans, into, places)

    def _moved(self, buffer: np.ndarray, spans: list, into: np.ndarray, places) -> None:
        """Bytes ``spans[r]`` (offset, size) of ``buffer`` to rank r, and r's to ``places[r]``
        of ``into`` (a row size: rows in rank order), in one NCCL group."""
        nccl, xp = self._nccl, self.xp
        if not isinstance(places, list):
            places = [(r * places, places) for r in range(self.size)]
        with self.stream:  # (copies, buffers and the transfers on this stream alone)
            sent = xp.asarray(buffer.reshape(-1).view(np.uint8))
            got = xp.empty(into.nbytes, dtype=np.uint8)
            nccl.groupStart()
            for r in range(self.size):
                (start, n), (at, m) = spans[r], places[r]
                if n:
                    self.nccl.send(sent.data.ptr + start, n, nccl.NCCL_UINT8, r, self.stream.ptr)
                if m:
                    self.nccl.recv(got.data.ptr + at, m, nccl.NCCL_UINT8, r, self.stream.ptr)
            nccl.groupEnd()
            into.reshape(-1).view(np.uint8)[...] = got.get()


NCCL_OPS = {"add": "NCCL_SUM", "min": "NCCL_MIN", "max": "NCCL_MAX"}  # a scalar's reduction
NCCL_TYPES = {
    np.dtype(name): f"NCCL_{name.upper()}"
    for name in ("float64", "float32", "int64", "int32", "uint64", "uint32")
}
KEPT_BYTES = 1 << 22  # a peer's payloads up to this size arrive in a buffer kept for it
KEPT_MIN = 1 << 16  # the smallest kept buffer


def _runs(arrays: list) -> list[tuple[int, int, int]]:
    """The sends that move ``arrays`` (those with bytes, in order): one a run of arrays that lie
    one after another as the receiver places them (each at a multiple of WIRE_ALIGN after the
    one before: a package of :func:`~.message.laid_out` arrays), as (pointer, bytes, arrays)."""
    runs: list[list[int]] = []
    end = None
    for array in arrays:
        if not array.nbytes:
            continue
        pointer = array.data.ptr
        if pointer == end:  # it starts where the run's last array's place ends
            runs[-1][1] = pointer + array.nbytes - runs[-1][0]
            runs[-1][2] += 1
        else:
            runs.append([pointer, array.nbytes, 1])
        end = pointer + padded_size(array.nbytes)
    return [tuple(run) for run in runs]


def _spans(sizes: list[tuple[int, int]], runs: list[int], src: int) -> list[tuple[int, int]]:
    """Where each of ``src``'s sends (``runs``: how many arrays each holds) lands in the
    receive buffer, from the arrays' ``sizes`` (:func:`_sizes`): (offset, bytes) a send.

    Raises
    ------
    CommunicationError
        The runs do not cover the arrays with bytes (the two ranks' code differs)."""
    placed, offset = [], 0
    for nbytes, padded in sizes:
        if nbytes:
            placed.append((offset, nbytes))
        offset += padded
    if sum(runs) != len(placed):
        raise CommunicationError(
            f"transport 'nccl': rank {src} sends {sum(runs)} arrays, its header lays out "
            f"{len(placed)}: do the ranks run the same bspgraph?"
        )
    spans, at = [], 0
    for count in runs:
        first, (last, nbytes) = placed[at][0], placed[at + count - 1]
        spans.append((first, last + nbytes - first))
        at += count
    return spans


def _sizes(layout) -> list[tuple[int, int]]:
    """(bytes, bytes padded to WIRE_ALIGN) of every array of every message of ``layout``
    (:func:`~bspgraph.comm.message.described`): where ``unpack`` finds them in a buffer."""
    sizes = []
    for _kind, _length, arrays, _block in layout:
        for _name, dtype, shape in arrays:
            nbytes = math.prod(shape) * np.dtype(dtype).itemsize
            sizes.append((nbytes, padded_size(nbytes)))
    return sizes
