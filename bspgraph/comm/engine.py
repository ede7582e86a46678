"""A communicator over a Dask deployment's own workers: ranks that no ``mpiexec`` started.

A user's Dask workers (``dask worker``, dask-cuda's ``LocalCUDACluster``, a deployment on a
batch system) share no MPI job, and MPI cannot join processes started apart (MPICH's
singletons refuse ``MPI_Comm_connect``: "Local and remote groups ... not disjoint").
:class:`EngineComm` gives :class:`~.mpi.MPITransport` and :class:`~.nccl.NCCLTransport` the
few collectives they take from an mpi4py communicator (``allgather``, ``bcast``,
``Allgather``, ``Alltoall``, ``Alltoallv``, ``Split_type``, ``Abort``) over the connections
Dask's workers already keep to each other: each rank hands its part of a collective to every
peer with one call of Dask's RPC (a handler on each worker, :func:`install`, puts it in a
mailbox; arrays travel as Dask serialises them, out of band), and waits in its mailbox for
theirs. On GPUs the payloads still go GPU to GPU over NCCL (its unique id sent this way);
only the headers, the tally and the fingerprints take this path.

Faults never hang: a rank that raises tells every peer (``Abort``), which raise in turn; a
wait longer than ``timeout`` raises; the caller, which sees a worker die, aborts the others'
mailboxes (:func:`abort`, run on each worker's event loop), and an abort also ends the
rank's NCCL communicator so that a transfer waiting for a dead peer returns. Nothing ends a
worker process: it is the user's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..exceptions import CommunicationError

HANDLER = "bspgraph_deliver"  # the Dask handler each worker answers collectives' parts with
_MAILBOXES: dict[str, Mailbox] = {}  # in a worker: each session's mailbox, by session
_LOCK = threading.Lock()


class AbortedError(CommunicationError):
    """A collective that ended because another rank failed or the caller ended the call."""


class Mailbox:
    """What a worker's peers sent a session, by (collective number, source rank), until its
    collective takes it; or why the session was aborted."""

    def __init__(self) -> None:
        self.ready = threading.Condition()
        self.items: dict[tuple[int, int], Any] = {}
        self.aborted: str | None = None
        self.on_abort: list[Callable[[], None]] = []  # (an NCCL communicator's abort)

    def put(self, key: tuple[int, int], payload: Any) -> None:
        with self.ready:
            self.items[key] = payload
            self.ready.notify_all()

    def abort(self, reason: str) -> None:
        with self.ready:
            if self.aborted is None:
                self.aborted = reason
            self.ready.notify_all()
        for hook in self.on_abort:
            try:
                hook()
            except Exception:  # (an NCCL communicator that ended already)
                pass

    def take(self, key: tuple[int, int], deadline: float | None, what: str) -> Any:
        with self.ready:
            while key not in self.items:
                if self.aborted is not None:
                    raise AbortedError(f"{what}: {self.aborted}")
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise CommunicationError(
                        f"{what}: no answer from rank {key[1]} (a peer is hung or dead)"
                    )
                self.ready.wait(left)
            return self.items.pop(key)


def mailbox(session: str) -> Mailbox:
    """The mailbox of ``session`` in this process (made on first use)."""
    with _LOCK:
        return _MAILBOXES.setdefault(session, Mailbox())


def install(worker) -> None:
    """Let ``worker`` (a Dask worker of this process) take collectives' parts."""
    worker.handlers.setdefault(HANDLER, _deliver)


def abort(session: str, reason: str) -> None:
    """End ``session``'s collectives in this process: every wait raises ``reason``."""
    mailbox(session).abort(reason)


def forget(session: str) -> None:
    """Drop ``session``'s mailbox in this process."""
    with _LOCK:
        _MAILBOXES.pop(session, None)


def _deliver(session: str, tag: int, src: int, payload: Any) -> None:
    """Dask's handler: a peer's part of a collective (``tag`` None: its abort)."""
    box = mailbox(session)
    if tag is None:
        box.abort(payload)
    else:
        box.put((tag, src), payload)


class EngineComm:
    """The communicator of ``size`` Dask workers, this one rank ``rank`` (see the module).

    Parameters
    ----------
    worker : distributed.Worker
        This process's worker (``distributed.get_worker()``), its handler installed.
    session : str
        The name its ranks share (one a cluster of runs: mailboxes are kept by it).
    addresses : list of str
        Every rank's worker address, in rank order.
    timeout : float, optional
        The most seconds a collective waits for a peer (None: forever).
    """

    def __init__(
        self, worker, session: str, rank: int, addresses: list[str], *, timeout: float | None
    ) -> None:
        self.worker, self.session, self.addresses = worker, session, list(addresses)
        self.rank, self.size, self.timeout = rank, len(addresses), timeout
        self.mailbox = mailbox(session)
        self._tag = 0

    def Get_rank(self) -> int:  # noqa: N802 (mpi4py's names)
        return self.rank

    def Get_size(self) -> int:  # noqa: N802
        return self.size

    def allgather(self, value: Any) -> list[Any]:
        return self._exchange(dict.fromkeys(self._peers(), value), value)

    def bcast(self, value: Any, root: int = 0) -> Any:
        if self.rank == root:
            self._exchange(dict.fromkeys(self._peers(), value), value, sources=())
            return value
        return self._exchange({}, None, sources=(root,))[root]

    def Allgather(self, values: np.ndarray, rows: np.ndarray) -> None:  # noqa: N802
        rows[...] = self.allgather(np.asarray(values))

    def Alltoall(self, sent: np.ndarray, arriving: np.ndarray) -> None:  # noqa: N802
        got = self._exchange({r: sent[r] for r in self._peers()}, sent[self.rank])
        arriving[...] = got

    def Alltoallv(self, sent: list, arriving: list) -> None:  # noqa: N802
        """mpi4py's buffer specs: ``[buffer, (counts, starts), kind]`` (the kind unread)."""
        (buffer, (counts, starts), _), (into, (sizes, at), _) = sent, arriving
        pieces = [buffer[s : s + n] for s, n in zip(starts.tolist(), counts.tolist())]
        got = self._exchange({r: pieces[r] for r in self._peers()}, pieces[self.rank])
        for src, piece in enumerate(got):
            into[at[src] : at[src] + sizes[src]] = piece

    def Split_type(self, _kind=None) -> _Group:  # noqa: N802
        """The ranks on this host that see the same GPUs (``CUDA_VISIBLE_DEVICES``): as MPI's
        shared-memory split, told apart where each worker was given its own GPU first (as
        dask-cuda gives them), so that each drives its first."""
        here = (socket.gethostname(), os.environ.get("CUDA_VISIBLE_DEVICES"))
        alike = [r for r, there in enumerate(self.allgather(here)) if there == here]
        return _Group(alike.index(self.rank), len(alike))

    def Abort(self, _code: int = 1) -> None:  # noqa: N802
        """Tell every peer that this rank failed (each wait there raises); this process goes
        on (the caller re-raises its error)."""
        reason = f"rank {self.rank} of {self.size} failed"
        self._send({peer: reason for peer in self._peers()}, tag=None)

    # --- internals ------------------------------------------------------------------------------
    def _peers(self) -> list[int]:
        return [r for r in range(self.size) if r != self.rank]

    def _exchange(self, outgoing: dict[int, Any], own: Any, sources=None) -> list[Any]:
        """Send ``outgoing[peer]`` to each peer and take one part from each of ``sources``
        (default every peer), this rank's own ``own``: the parts in rank order."""
        tag, self._tag = self._tag, self._tag + 1
        self._send(outgoing, tag=tag)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        sources = self._peers() if sources is None else sources
        got = [own] * self.size
        for src in sources:
            got[src] = self.mailbox.take((tag, src), deadline, f"collective {tag}")
        return got

    def _send(self, outgoing: dict[int, Any], *, tag: int | None) -> None:
        """Hand ``outgoing[peer]`` to each peer's handler (on this worker's event loop, all at
        once), and wait until each took it."""
        if not outgoing:
            return
        from distributed.protocol import to_serialize

        async def send_all():
            calls = [
                getattr(self.worker.rpc(self.addresses[peer]), HANDLER)(
                    session=self.session, tag=tag, src=self.rank, payload=to_serialize(part)
                )
                for peer, part in outgoing.items()
            ]
            return await asyncio.gather(*calls, return_exceptions=True)

        sending = asyncio.run_coroutine_threadsafe(send_all(), self.worker.loop.asyncio_loop)
        try:
            answers = sending.result(self.timeout)
        except concurrent.futures.TimeoutError:
            sending.cancel()
            raise CommunicationError(
                f"rank {self.rank}: its peers took no part of collective {tag} in "
                f"{self.timeout:g} s (a peer is hung or dead)"
            ) from None
        lost = [
            (peer, answer)
            for peer, answer in zip(outgoing, answers, strict=True)
            if isinstance(answer, BaseException)
        ]
        if lost and tag is not None:
            peer, error = lost[0]
            raise CommunicationError(
                f"rank {self.rank}: rank {peer} ({self.addresses[peer]}) did not take its "
                f"part: {type(error).__name__}: {error}"
            )


class _Group:
    """A rank's place among those that share its host and GPUs (``Split_type``'s)."""

    def __init__(self, rank: int, size: int) -> None:
        self.rank, self.size = rank, size

    def Get_rank(self) -> int:  # noqa: N802
        return self.rank

    def Get_size(self) -> int:  # noqa: N802
        return self.size
