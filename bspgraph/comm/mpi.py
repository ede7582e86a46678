"""The MPI transport: one rank per device (mpi4py), for runs past one process or one machine.

Each rank drives one device: a CPU on NumPy, or one GPU on CuPy (the node-local rank picks the
GPU). The communicators run on it unchanged: in a round each rank hands its own sends to
:meth:`MPITransport.exchange_round`, which delivers them as raw buffers (one ``Alltoall`` of
fixed slots holding the sizes and the headers of :func:`~.message.pack`, then one
``Alltoallv`` for the payloads; nothing pickled) and returns what was addressed to this rank.

Faults never hang a run:

* an exception on one rank, inside the enactor or the ``bspgraph`` command, prints one line
  and calls ``MPI_Abort``, which ends every rank non-zero (:meth:`MPITransport.abort`);
* a rank that dies (a signal, ``os._exit``) makes the launcher end the job: MPICH's hydra
  kills the other ranks at once and exits non-zero (Open MPI's ``mpirun`` does the same);
* a rank that stops answering (a hang, a deadlock, a lost node) is caught by a watchdog: a
  rank that waits longer than ``timeout`` seconds in one collective aborts the job.

Fault injection for tests: ``BSPGRAPH_MPI_FAULT=RANK:ROUND:KIND`` makes rank RANK, at the
start of its exchange round number ROUND (0-based), raise (``raise``), kill itself with SIGKILL
(``kill``) or hang (``hang``).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backend import Backend, get_backend, gpu_count, to_host
from ..exceptions import CommunicationError, DeviceError
from .engine import EngineComm
from .message import Piece, Slab, Update, arrays_of, pack, unpack, wire_bytes
from .transport import Inbox, RoundStats, Send, Transport

TIMEOUT_ENV = "BSPGRAPH_MPI_TIMEOUT"
FAULT_ENV = "BSPGRAPH_MPI_FAULT"
ABORT_GRACE = 0.5  # seconds between the last words of a failing rank and its abort
DEFAULT_TIMEOUT = 600.0


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError(
            "transport 'mpi' needs mpi4py and an MPI library: pip install 'bspgraph[mpi]' "
            "(mpi4py and MPICH), then launch with mpiexec -n P"
        ) from error
    return MPI


class MPITransport(Transport):
    """Moves Updates between the ranks of an MPI communicator, one device per rank.

    Parameters
    ----------
    comm : mpi4py communicator, optional
        Default ``MPI.COMM_WORLD``; rank r drives device r, ``size`` is the number of ranks.
        Or an :class:`~.engine.EngineComm` (a Dask deployment's workers): its waits time out
        by themselves, and a fault ends the run on every rank, not the processes.
    backend : str or Backend, optional
        "numpy", "cupy" or None (CuPy when a GPU is usable). On CuPy each rank takes the GPU
        ``node-local rank % GPUs on the node``.
    timeout : float, optional
        The most seconds a rank waits in one collective for its peers before it aborts the
        job; default ``$BSPGRAPH_MPI_TIMEOUT`` or 600. ``0`` or ``inf`` waits forever.

    Notes
    -----
    The counts of :meth:`exchange_round` are those of this rank's sends (messages, bytes
    handed over, largest message) and the ids that arrived here
    (``max_inbox_ids``); the enactor sums and maxes them over ranks, so its stats equal those
    of the in-process :class:`~bspgraph.comm.transport.Local` transport for the same run.
    Payloads travel as raw bytes (:func:`~bspgraph.comm.message.pack`; CuPy arrays are copied
    to the host and back), never pickled.
    """

    wire = True

    def __init__(
        self, comm=None, backend: str | Backend | None = None, *, timeout: float | None = None
    ):
        self.on_mpi = not isinstance(comm, EngineComm)  # (else no MPI: a Dask deployment's)
        mpi = _mpi() if self.on_mpi else None
        self.comm = mpi.COMM_WORLD if comm is None else comm
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self.local = (self.rank,)
        self.backend = self._device_backend(backend)
        if timeout is None:
            timeout = float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT))
        self.timeout = timeout if 0 < timeout < float("inf") else None
        self.rounds = 0
        self._fault = _parse_fault(os.environ.get(FAULT_ENV))
        self._waiting: tuple[float, str] | None = None  # (since, what) while in a collective
        self._multiple = self.on_mpi and mpi.Query_thread() == mpi.THREAD_MULTIPLE
        if self.on_mpi and self.timeout is not None and self.size > 1:
            threading.Thread(target=self._watch, name="bspgraph-mpi-watchdog", daemon=True).start()

    def __repr__(self) -> str:
        return f"MPITransport(rank={self.rank}, size={self.size}, backend={self.backend.name!r})"

    # --- the Transport interface ---------------------------------------------------------------
    def exchange_round(
        self, sends: Sequence[Send], *, num_vertices: int
    ) -> tuple[Inbox, RoundStats]:
        outgoing, counts = self._start_round(sends, num_vertices)
        packed = [
            pack([_to_host(u) for u in per_peer]) if per_peer else NOTHING for per_peer in outgoing
        ]
        headers, payloads = self._alltoallv(
            [header for header, _ in packed], [payload for _, payload in packed]
        )
        arrived = [
            self._to_device(u)
            for header, payload in zip(headers, payloads)
            for u in unpack(header, payload)
        ]
        return self._finish_round(arrived, counts)

    def allgather(self, value: Any) -> list[Any]:
        return self._collective("allgather", self.comm.allgather, value)

    def allgather_numbers(self, values) -> np.ndarray:
        values = np.ascontiguousarray(values, dtype=np.int64)
        rows = np.empty((self.size, values.shape[0]), dtype=np.int64)
        self._collective("Allgather", self.comm.Allgather, values, rows)
        return rows

    def abort(self, error: BaseException) -> None:
        """Print one line naming this rank and ``error``, then ``MPI_Abort``: every rank exits 1
        (a Dask deployment's: every rank's run raises, and the caller re-raises ``error``)."""
        if not self.on_mpi:
            self.comm.Abort(1)
            return
        problem = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        _say(f"rank {self.rank} of {self.size} failed: {problem}; aborting every rank")
        self.comm.Abort(1)
        os._exit(1)  # not reached

    # --- internals ------------------------------------------------------------------------------
    def _start_round(self, sends: Sequence[Send], num_vertices: int):
        """Check ``sends`` and sort them by destination; count them (messages, bytes, the
        largest) as the Local transport does."""
        self._inject_fault()
        self.rounds += 1
        outgoing: list[list[Update]] = [[] for _ in range(self.size)]
        total = largest = 0
        pending = []  # Pieces: their entries counted once their package's counts are read
        for src, dst, update in sends:
            if src != self.rank or not 0 <= dst < self.size or dst == src:
                raise ValueError(
                    f"{type(self).__name__}.exchange_round: send {src} -> {dst} on rank "
                    f"{self.rank}: expected sends from this rank to another rank in [0, {self.size})"
                )
            total += wire_bytes(update)
            if isinstance(update, Piece):
                pending.append((src, dst, Piece(update.packed, update.group, crossed=True)))
            else:
                largest = max(largest, len(update))
            outgoing[dst].append(update)
        return outgoing, (len(sends) - len(pending), total, largest, tuple(pending))

    def _finish_round(self, arrived: list[Update], counts) -> tuple[Inbox, RoundStats]:
        """The inbox (``arrived``, in order of source, for this rank) and the round's stats."""
        inbox: Inbox = [[] for _ in range(self.size)]
        inbox[self.rank] = arrived
        messages, total, largest, pending = counts
        ids = sum(len(u) for u in arrived if not isinstance(u, Piece))
        return inbox, RoundStats(messages, total, largest, ids, pending)

    def _device_backend(self, name) -> Backend:
        backend = get_backend(name)
        if backend.capabilities.virtual_devices:
            return backend
        count = gpu_count()
        if count == 0:
            raise DeviceError(f"transport 'mpi' on rank {self.rank}: no GPU usable")
        local_rank = self.comm.Split_type(self._shared()).Get_rank()
        backend = get_backend("cupy", local_rank % count)
        backend.xp.cuda.Device(backend.device).use()  # this rank's GPU for every kernel
        return backend

    def _shared(self):
        """MPI's split of the ranks that share a node (a Dask deployment's comm takes none)."""
        return _mpi().COMM_TYPE_SHARED if self.on_mpi else None

    def _to_device(self, message: Update | Slab | Piece) -> Update | Slab | Piece:
        if self.backend.capabilities.virtual_devices or isinstance(message, Piece):
            return message  # (in this process's memory; a Piece: on this rank's GPU already)
        return message.map(self.backend.asarray)

    def _alltoallv(
        self, headers: list[np.ndarray], *columns: list[np.ndarray]
    ) -> list[list[np.ndarray]]:
        """``headers[r]`` (int64) and, for each of ``columns``, ``column[r]`` (host arrays of
        one dtype, int64 or uint8) to rank ``r``, and what each rank sent here in rank order:
        one ``Alltoall`` of a fixed slot a rank holding the sizes, what the rank sends in all
        and, where it fits in HEADER_WORDS, the header itself; then one ``Alltoallv`` a column
        into one buffer, unless no rank sends any of it (an empty superstep: every rank reads
        that from the slots alike), and one for the headers, only in a round where some rank's
        did not fit. No pickle."""
        slot = _slots(headers, columns)
        arriving = np.empty_like(slot)
        self._collective("Alltoall", self.comm.Alltoall, slot, arriving)
        count = len(columns)
        first = 2 + 2 * count  # where the headers start
        rows = arriving[:, :first].tolist()  # (a few numbers a rank: read as Python ints)
        if any(row[first - 1] for row in rows):  # a header too long somewhere: every rank sees it
            delivered = self._columns([headers], slot[:, :1], arriving[:, :1], [True])
        else:
            delivered = [[arriving[r, first : first + row[0]] for r, row in enumerate(rows)]]
        sending = [any(row[1 + count + k] for row in rows) for k in range(count)]
        if not any(sending):  # no rank sends any payload: no collective
            return delivered + [[column[0][:0]] * self.size for column in columns]
        sizes = slice(1, 1 + count)
        return delivered + self._columns(columns, slot[:, sizes], arriving[:, sizes], sending)

    def _columns(
        self, columns, sent: np.ndarray, arriving: np.ndarray, sending: list[bool]
    ) -> list[list[np.ndarray]]:
        """One ``Alltoallv`` a column of ``columns`` (``column[r]`` to rank ``r``), the sizes
        sent to and arriving from each rank known (``sent[r, k]``, ``arriving[r, k]``), where
        some rank sends any of it (``sending[k]``, the same on every rank); what each rank
        sent, in rank order."""
        mpi = _mpi() if self.on_mpi else None
        delivered = []
        for k, column in enumerate(columns):
            dtype = column[0].dtype
            if not sending[k]:  # no rank sends any: no collective
                delivered.append([column[0][:0]] * self.size)
                continue
            kind = mpi and (mpi.INT64_T if dtype == np.int64 else mpi.BYTE)
            out, into = sent[:, k].copy(), arriving[:, k].copy()
            received = np.empty(int(into.sum()), dtype=dtype)
            starts, arrived_at = _starts(out), _starts(into)
            self._collective(
                "Alltoallv",
                self.comm.Alltoallv,
                [np.concatenate(column), (out, starts), kind],
                [received, (into, arrived_at), kind],
            )
            delivered.append(
                [received[at : at + n] for at, n in zip(arrived_at.tolist(), into.tolist())]
            )
        return delivered

    def _collective(self, what: str, call, *args):
        self._waiting = (time.monotonic(), what)
        try:
            return call(*args)
        finally:
            self._waiting = None

    def _watch(self) -> None:
        """Abort the job when this rank has waited ``timeout`` seconds in one collective."""
        period = min(1.0, self.timeout / 4)
        while True:
            time.sleep(period)
            waiting = self._waiting
            if waiting is None or time.monotonic() - waiting[0] < self.timeout:
                continue
            _say(
                f"rank {self.rank} of {self.size}: no answer from the other ranks for "
                f"{self.timeout:g} s in {waiting[1]} (after {self.rounds} exchange rounds): a "
                f"peer is hung or dead; aborting every rank (set {TIMEOUT_ENV} to wait longer)"
            )
            if self._multiple:
                self.comm.Abort(1)
            os._exit(1)  # hydra then ends the other ranks

    def _inject_fault(self) -> None:
        if self._fault is None or self._fault[:2] != (self.rank, self.rounds):
            return
        kind = self._fault[2]
        if kind == "raise":
            raise CommunicationError(
                f"injected fault ({FAULT_ENV}) on rank {self.rank} in round {self.rounds}"
            )
        if kind == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        while True:  # "hang"
            time.sleep(3600)


NOTHING = pack([])  # a peer's header and payload in a round that sends it nothing
HEADER_WORDS = 48  # a header that fits travels in the sizes' Alltoall (BFS's: 21 words)


def _slots(headers: list[np.ndarray], columns) -> np.ndarray:
    """One row a rank: the header's length, each column's size, each column's total over
    every rank this one sends to, whether any header of this rank is longer than
    HEADER_WORDS (then every rank sends every header apart), the header."""
    count = len(columns)
    first = 2 + 2 * count  # where the header starts
    lengths = [header.shape[0] for header in headers]
    too_long = max(lengths, default=0) > HEADER_WORDS
    totals = [sum(part.shape[0] for part in column) for column in columns]
    slot = np.zeros((len(headers), first + HEADER_WORDS), dtype=np.int64)
    slot[:, :first] = [
        [length, *(column[r].shape[0] for column in columns), *totals, too_long]
        for r, length in enumerate(lengths)
    ]
    if not too_long:
        for r, header in enumerate(headers):
            slot[r, first : first + lengths[r]] = header
    return slot


def _starts(sizes: np.ndarray) -> np.ndarray:
    """Where each of ``sizes``' runs starts in their concatenation."""
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)


def _to_host(message: Update | Slab) -> Update | Slab:
    on_gpu = any(hasattr(array, "__cuda_array_interface__") for array in arrays_of(message))
    return message.map(to_host) if on_gpu else message


def _parse_fault(spec: str | None) -> tuple[int, int, str] | None:
    if not spec:
        return None
    try:
        rank, rounds, kind = spec.split(":")
        if kind not in ("raise", "kill", "hang"):
            raise ValueError(kind)
        return int(rank), int(rounds), kind
    except ValueError:
        raise ValueError(
            f"{FAULT_ENV}={spec!r}: expected RANK:ROUND:KIND with KIND raise, kill or hang"
        ) from None


def _say(line: str) -> None:
    """Print ``line`` before an abort, and give the launcher a moment to forward it: an abort
    tears the job down, and MPICH's hydra then drops output it had not read yet (seen as
    a run that failed with an empty stderr, a few times in a hundred)."""
    print(f"bspgraph: {line}", file=sys.stderr, flush=True)
    time.sleep(ABORT_GRACE)
