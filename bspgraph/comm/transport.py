"""Transports move Updates between devices, one BSP round at a time, and count what they move."""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backend import Backend
from ..exceptions import CommunicationError
from .message import Piece, Slab, Update, wire_bytes

Send = tuple[int, int, Update]  # (source device, destination device, payload)
Inbox = list[list[Update]]  # per destination device: what arrived, in order of source


@dataclass(frozen=True)
class Message:
    """The record of one point-to-point send: who, to whom, how many ids (a Slab: values),
    and the bytes handed over (:func:`~bspgraph.comm.message.wire_bytes`)."""

    src: int
    dst: int
    ids: int
    bytes: int


@dataclass(frozen=True)
class RoundStats:
    """What one round moved: messages, bytes handed over (ids and values), the most ids one
    message carried and the most ids one device received."""

    messages: int = 0
    bytes: int = 0
    max_ids: int = 0
    max_inbox_ids: int = 0
    pending: tuple = ()  # (src, dst, Piece) sends, counted once their sizes are read


class Transport(abc.ABC):
    """Moves Updates between ``size`` devices in rounds: a set of point-to-point sends, then a
    barrier.

    A communicator (a pattern) is written once against this interface and never knows which
    transport runs it. It calls :meth:`exchange_round` once per round with the sends of the
    devices in :attr:`local` and gets back what those devices received. The in-process
    :class:`Local` transport drives every device; a transport with one process per device
    (NCCL, MPI) drives one, and then the same communicator code sends and receives for that
    device only.

    Attributes
    ----------
    size : int
        Number of devices P (ranks 0..P-1).
    local : tuple of int
        The devices this process drives; their Updates are the ones a communicator handles.
    """

    size: int
    local: tuple[int, ...]
    # Messages cross a link (MPI, NCCL): a device sends a Slab only where it holds fewer
    # bytes than the Update; in one memory (False) its arrays are handed over, and a Slab
    # goes where it saves passes over the arrays (the backend's ``dense_share``).
    wire: bool = False
    # It takes a Piece (a group of a package whose counts are still on the sender's device)
    # across a link too, as the package's whole buffers and counts: sent unread, the
    # receiver's kernels reading where its group starts and how many it holds.
    carries_counts: bool = False
    # Its transfers go on the GPU stream set as ``stream`` (None: the caller's), queued behind
    # what the caller's stream holds; the caller makes its stream wait for them before it
    # reads what arrived, and before the next round (which frees the last one's sent arrays).
    streams: bool = False
    # Over processes, the one rank whose run returns the result (the others return an empty
    # one, and no owner sends its vertices' outputs to them: a cluster's workers, of which
    # rank 0's result is read); None: every process returns the whole.
    result_rank: int | None = None

    @property
    def distributed(self) -> bool:
        """True when other processes drive some of the devices (one process per device: MPI, NCCL)."""
        return len(self.local) < self.size

    def allgather(self, value: Any) -> list[Any]:
        """Every process's ``value``, in rank order (``[value]`` when this process drives every
        device). A collective: every process calls it, in the same order."""
        return [value]

    def allgather_numbers(self, values: np.ndarray) -> np.ndarray:
        """Every process's 1-D int64 ``values`` (the same length everywhere) as rows of one
        array, in rank order: a buffer collective, nothing pickled (what the superstep's tally
        uses). A collective: every process calls it, in the same order."""
        return np.asarray(values, dtype=np.int64)[None, :]

    def reduce_in_place(self, scalars: Sequence[tuple[Any, str]]) -> bool:
        """Replace each 0-d array of ``scalars`` (``(array, reduction)``, a reduction "add",
        "min" or "max") by its reduction over every process, on the device and unread, where
        this transport can (NCCL); False, touching nothing, where it cannot (then the caller
        reduces on the host). A collective where it returns True."""
        return False

    def settle(self) -> None:
        """Wait until the transfers this process queued have ended (where
        :meth:`exchange_round` returns before them, as NCCL's does): what ends a run, so that
        no transfer is still pending while the process goes on to other work. Nothing to wait
        for by default."""
        return

    def abort(self, error: BaseException) -> None:
        """Stop the run on every process after ``error`` on this one (no peer is left waiting).
        One process: re-raise ``error``; multi-process transports end every process non-zero."""
        raise error

    def agree(self, what: str, fingerprint: dict[str, Any]) -> None:
        """Check that every process passed an equal ``fingerprint`` (a dict of plain values).

        Raises
        ------
        CommunicationError
            On every process alike, naming the first key that differs and the ranks' values.
        """
        everyone = self.allgather(fingerprint)
        for key in fingerprint:
            values = [f.get(key) for f in everyone]
            if any(v != values[0] for v in values):
                found = ", ".join(f"rank {r}: {v!r}" for r, v in enumerate(values))
                error = CommunicationError(
                    f"the {len(everyone)} processes were started with different inputs: "
                    f"{what} {key!r} differs ({found}); start every rank with the same "
                    "graph and options"
                )
                error.on_every_rank = True
                raise error
        if any(set(f) != set(fingerprint) for f in everyone):
            error = CommunicationError(f"the processes disagree on the {what} fingerprint keys")
            error.on_every_rank = True
            raise error

    @abc.abstractmethod
    def exchange_round(
        self, sends: Sequence[Send], *, num_vertices: int
    ) -> tuple[Inbox, RoundStats]:
        """Deliver ``sends`` and wait until every device has delivered its own.

        Parameters
        ----------
        sends : sequence of (src, dst, Update)
            This round's messages from the local devices; ``src != dst``. A device may send
            several messages, also to the same peer; an empty Update is still a message.
        num_vertices : int
            V, the number of vertices the ids range over (for a transport that chooses
            an encoding by it; the built-in ones send id lists).

        Returns
        -------
        inbox : list of list of Update
            ``inbox[d]``: the Updates that arrived at local device ``d``, on ``d``'s device,
            ordered by source (then by order of sending); ``[]`` for a device not local here.
        stats : RoundStats
            The counts of the sends made from this process.

        Raises
        ------
        ValueError
            A send from a device that is not local, to a device out of range, or to itself.
        CommunicationError
            A peer failed (multi-process transports): raised on every rank, never a hang.
        """


class Local(Transport):
    """In-process transport: P virtual devices on NumPy, or GPUs of one host.

    Parameters
    ----------
    devices : int or sequence of Backend
        The number of virtual devices, or one Backend per device. Where the backends differ
        (several GPUs) the messages cross a link (``wire``): one sent to device ``d`` is moved
        there with ``devices[d].asarray`` (a peer copy); else they are handed over as they
        are.
    record : bool
        Keep a :class:`Message` record of every send in :attr:`log` (one list per round), for
        tests and traces.
    wire : bool, optional
        True: every message is copied to its receiver as over a link, and the enactor chooses
        messages by the bytes that cross (the path of several GPUs or processes, run on
        virtual devices); default: a link where the backends differ (False there is a
        ValueError). A run given a Local of virtual devices (a count) keeps its devices in
        one memory: parts of one GPU where the run is on CuPy.

    Examples
    --------
    >>> import numpy as np
    >>> t = Local(2)
    >>> inbox, stats = t.exchange_round(
    ...     [(0, 1, Update(np.array([5], np.int32)))], num_vertices=10)
    >>> inbox[1][0].ids.tolist(), stats.messages, stats.bytes
    ([5], 1, 2)
    """

    carries_counts = True

    def __init__(
        self, devices: int | Sequence[Backend], *, record: bool = False, wire: bool | None = None
    ):
        if isinstance(devices, bool) or not isinstance(devices, (int, Sequence)):
            raise ValueError(
                f"Local(devices={devices!r}): expected a device count or a list of Backends"
            )
        if isinstance(devices, int):
            self.backends, size, several = None, devices, False
        else:
            self.backends = list(devices)
            size = len(self.backends)
            several = self.wire = len(set(self.backends)) > 1  # several GPUs: peer copies
        if size < 1:
            raise ValueError(f"Local(devices={devices!r}): need at least one device")
        if wire is False and several:  # (a kernel of one GPU would read another's arrays:
            # CuPy's memory pools are not safe for that)
            raise ValueError(
                f"Local(devices={devices!r}, wire=False): the backends are different devices, "
                "between which every message is copied; leave wire out"
            )
        # a link simulated in one memory: messages copied (several GPUs copy anyway)
        self.copies = bool(wire) and not getattr(self, "wire", False)
        if wire is not None:
            self.wire = wire
        self.size = size
        self.local = tuple(range(size))
        self.record = record
        self.log: list[list[Message]] = []

    def __repr__(self) -> str:
        return f"Local({self.size})"

    def exchange_round(
        self, sends: Sequence[Send], *, num_vertices: int
    ) -> tuple[Inbox, RoundStats]:
        inbox: Inbox = [[] for _ in range(self.size)]
        received = [0] * self.size
        records: list[Message] = []
        total = largest = 0
        pending = []
        for src, dst, update in sorted(sends, key=lambda send: send[0]):
            self._check(src, dst)
            if isinstance(update, Piece):  # its size still counted on the sender's device
                if self.wire:  # its package's whole buffers cross: counted now
                    update = Piece(update.packed, update.group, crossed=True)
                    total += wire_bytes(update)
                    if self.record:
                        records.append(Message(src, dst, update.capacity, wire_bytes(update)))
                inbox[dst].append(self._moved(update, dst) if self.wire else update)
                pending.append((src, dst, update))  # (its entries counted once read)
                continue
            size, nbytes = len(update), wire_bytes(update)
            total += nbytes
            largest = max(largest, size)
            received[dst] += size
            if self.record:
                records.append(Message(src, dst, size, nbytes))
            inbox[dst].append(self._move(update, dst))
        if self.record:
            self.log.append(records)
        stats = RoundStats(
            len(sends) - len(pending), total, largest, max(received, default=0), tuple(pending)
        )
        return inbox, stats

    def _check(self, src: int, dst: int) -> None:
        if not (0 <= src < self.size and 0 <= dst < self.size) or src == dst:
            raise ValueError(
                f"Local.exchange_round: send {src} -> {dst}: expected two different devices "
                f"in [0, {self.size})"
            )

    def _moved(self, piece: Piece, dst: int) -> Piece:
        """``piece`` as its receiver gets it across a link: a copy of its package there."""
        if self.copies or self.backends is None:
            return piece.moved(lambda array: array.copy())
        return piece.moved(self.backends[dst].asarray)

    def _move(self, message: Update | Slab, dst: int) -> Update | Slab:
        if self.copies:  # a simulated link: a copy, in the same memory
            return message.map(lambda array: array.copy())
        if self.backends is None or not self.wire:  # no backends, or one memory: as it is
            return message
        return message.map(self.backends[dst].asarray)


@contextlib.contextmanager
def failing_together(transport: Transport) -> Iterator[None]:
    """Run a block that every process of ``transport`` runs: an exception on this process
    ends every process (:meth:`Transport.abort`) instead of leaving the peers waiting in a
    collective, unless it is marked ``on_every_rank`` (raised by every process alike, as
    :meth:`Transport.agree` does), which propagates as it is."""
    try:
        yield
    except BaseException as error:
        if not transport.distributed or getattr(error, "on_every_rank", False):
            raise
        transport.abort(error)
        raise
