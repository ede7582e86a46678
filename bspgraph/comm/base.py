"""The Communicator contract shared by every pattern, its statistics, and the helpers they share."""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..backend import Backend, backend_of, ops, read_together
from .message import Slab, Update
from .transport import RoundStats, Transport

Combine = Callable[[Update, Update], Update]


@dataclass(frozen=True)
class CommStats:
    """What one exchange cost: point-to-point messages, bytes handed over (ids and values), BSP
    rounds, the most ids one message carried and the most ids one device received
    in one round (the buffer the butterfly paper bounds by O(f·V)). Counts are of the sends made
    by this process (all of them on the local transport); ``a + b`` adds two exchanges."""

    messages: int = 0
    bytes: int = 0
    rounds: int = 0
    max_ids: int = 0
    max_inbox_ids: int = 0
    pending: tuple = ()  # (src, dst, Piece) sends whose sizes are still on the device

    def __add__(self, other: CommStats) -> CommStats:
        return CommStats(
            self.messages + other.messages,
            self.bytes + other.bytes,
            self.rounds + other.rounds,
            max(self.max_ids, other.max_ids),
            max(self.max_inbox_ids, other.max_inbox_ids),
            self.pending + other.pending,
        )

    def settled(self) -> CommStats:
        """These counts with the ``pending`` sends counted, their sizes read (each
        :class:`~bspgraph.comm.message.Piece`'s package learned its counts): a message for
        each non-empty one, and its entries' bytes where it was handed over in one memory (one
        that crossed a link counted its package's buffers when sent)."""
        if not self.pending:
            return self
        sizes = [(dst, len(piece)) for _, dst, piece in self.pending]
        received: dict[int, int] = {}
        for dst, size in sizes:
            received[dst] = received.get(dst, 0) + size
        sent = [piece for _, _, piece in self.pending if len(piece)]
        return CommStats(
            self.messages + len(sent),
            self.bytes + sum(len(p) * p.entry_bytes for p in sent if not p.crossed),
            self.rounds,
            max(self.max_ids, *(size for _, size in sizes), 0),
            max(self.max_inbox_ids, *received.values(), 0),
        )

    @classmethod
    def of(cls, rounds: Sequence[RoundStats]) -> CommStats:
        """The totals of a sequence of rounds."""
        return cls(
            sum(r.messages for r in rounds),
            sum(r.bytes for r in rounds),
            len(rounds),
            max((r.max_ids for r in rounds), default=0),
            max((r.max_inbox_ids for r in rounds), default=0),
            sum((r.pending for r in rounds), ()),
        )


class Communicator(abc.ABC):
    """A communication pattern: who sends what to whom, in how many rounds, over a Transport.

    The exchange contract (every communicator):

    * ``updates[d]`` is what device ``d`` produced this superstep: the ids it changed (each once)
      and their values. Only the entries of ``transport.local`` are read (the others may be
      None), and none is modified.
    * The result's element ``d`` is device ``d``'s inbox: a list of Updates on its array module,
      each with distinct ids (an id may be in several), which together hold every contribution
      device ``d`` must receive:

      - ``to_all=False``: the entries of every other device's update whose vertex ``d`` owns
        (``owner[id] == d``);
      - ``to_all=True``: every entry of every other device's update.

      Each device's contribution is in it **exactly once** (never twice, never its own), so
      non-idempotent combiners such as sum are safe: folding the list with ``combine`` (or
      applying its Updates one after another to the state) gives the combined delivery. No
      Update in it is empty; with nothing to receive it is ``[]``. Elements of non-local
      devices are None. Receivers apply the Updates in turn, so a direct pattern (selective,
      broadcast) sorts nothing on the way. (In one memory, selective's ``exchange_mixed`` may
      also deliver a :class:`~bspgraph.comm.message.Piece`: an owner's group of a package
      whose counts are still on the device, possibly empty.)
    * ``combine(a, b)`` gets two non-empty Updates on one device, each with distinct ids, and
      returns one with distinct ids (the union; an id in both gets the combined value). It must
      be associative and commutative up to the order of its entries. Communicators that
      aggregate on the way (butterfly) call it on intermediate devices.

    Subclasses set :attr:`name` and implement :meth:`exchange`.
    """

    name: ClassVar[str]
    dense: ClassVar[bool] = True  # has :meth:`exchange_dense`
    sends_by_owner: ClassVar[bool] = False  # sends each owner its slice of a packed Update
    # One round in both exchanges, each message straight to where it is applied, delivered as
    # it is: devices of several processes may each choose Slabs or Updates in one superstep.
    direct: ClassVar[bool] = False

    def __init__(self) -> None:
        self._owner: Any = None  # the owner array last seen, and its copies per backend
        self._owner_copies: dict[Backend, Any] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def rounds(self, parts: int) -> int:
        """Rounds per exchange on ``parts`` devices: 1 (0 on one device) unless overridden."""
        return int(parts > 1)

    def exchange(
        self,
        updates: Sequence[Update | None],
        *,
        owner,
        to_all: bool = False,
        combine: Combine,
        transport: Transport,
    ) -> tuple[list[list[Update] | None], CommStats]:
        """Deliver each device's update to the devices that need it.

        Parameters
        ----------
        updates : sequence of Update or None
            ``updates[d]``: device d's changed vertices (see the class docstring).
        owner : array of int, length V
            ``owner[v]``: the device that owns vertex v (host or device array).
        to_all : bool
            False: each entry goes to its vertex's owner only. True: to every other device.
        combine : callable (Update, Update) -> Update
            Merges two Updates into one with distinct ids. It may also have ``many``, the
            batch form (a list of pairs in, their merges out), which a pattern that combines
            on the way calls once for every device's merges of a round.
        transport : Transport
            Moves the messages and counts them; ``transport.size`` devices.

        Returns
        -------
        received : list of (list of Update) or None
            ``received[d]``: the inbox of each local device (see the class docstring).
        stats : CommStats
            Messages, bytes and rounds of this exchange.

        Raises
        ------
        ValueError
            ``len(updates) != transport.size``, or a local device's update is missing.
        """
        num_vertices = self._check(updates, owner, transport)
        if transport.size == 1:  # nothing to send: each local device receives nothing
            received: list[list[Update] | None] = [None]
            for d in transport.local:
                received[d] = []
            return received, CommStats()
        return self._deliver(
            updates,
            owner=owner,
            to_all=to_all,
            combine=combine,
            transport=transport,
            num_vertices=num_vertices,
        )

    def exchange_dense(
        self,
        slabs: Sequence[Slab | None],
        *,
        blocks: Sequence[Any],
        to_all: bool = False,
        transport: Transport,
    ) -> tuple[list[list[Slab] | None], CommStats]:
        """The dense form of :meth:`exchange`, for supersteps in which many vertices changed.

        ``slabs[d]`` is device d's Slab: its communicated columns, neutral where d returned
        nothing, over every vertex (``block=None``) or over d's own block only. ``blocks[o]``
        indexes device o's owned vertices (a slice when they are contiguous, else their ids).
        Delivered, as Slabs whose ``block`` says which vertices they cover, is what
        :meth:`exchange` delivers: each owner's block of every other device's every-vertex
        Slab (``to_all=False``), or every Slab as it is (``to_all=True``). No id travels and
        nothing is combined on the way; receivers apply the Slabs in turn. This one sends
        each device's piece straight to its destination, in one round.
        """
        if transport.size == 1:
            return [[]], CommStats()
        sends = []
        for s in transport.local:
            slab = slabs[s]
            for o in range(transport.size):
                if o != s:
                    sends.append((s, o, slab if to_all else slab.cut(o, blocks[o])))
        return self._dense_round(sends, transport, blocks)

    def _dense_round(self, sends, transport, blocks, cut=False):
        """Run one round of Slab ``sends``; with ``cut``, each receiver keeps its own block."""
        inbox, stats = transport.exchange_round(sends, num_vertices=0)  # Slabs: no ids
        received: list[list[Slab] | None] = [None] * transport.size
        for d in transport.local:
            received[d] = [s.cut(d, blocks[d]) if cut else s for s in inbox[d]]
        return received, CommStats.of([stats])

    @abc.abstractmethod
    def _deliver(self, updates, *, owner, to_all, combine, transport, num_vertices):
        """The pattern itself, on two or more devices; same contract as :meth:`exchange`."""

    # --- helpers shared by the patterns -------------------------------------------------------
    def _check(self, updates: Sequence[Update | None], owner, transport: Transport) -> int:
        """Validate the arguments of :meth:`exchange`; return V."""
        call = f"{type(self).__name__}.exchange"
        if len(updates) != transport.size:
            raise ValueError(
                f"{call}(updates=...): {len(updates)} updates for {transport.size} devices"
            )
        for d in transport.local:
            if not isinstance(updates[d], Update):
                raise ValueError(
                    f"{call}(updates[{d}]={updates[d]!r}): expected an Update for local device {d}"
                )
        shape = getattr(owner, "shape", None)
        if shape is None or len(shape) != 1:
            raise ValueError(f"{call}(owner=...): expected a 1-D array of device ids")
        return int(shape[0])

    def _owners(self, owner, update: Update):
        """The owner of each of ``update``'s entries, looked up on its device (made current
        while it is, as every kernel on an update's arrays is)."""
        with backend_of(update.ids).activate():
            return self._owner_like(owner, update.ids)[update.ids]

    def _ownership(self, owner, device: int) -> tuple[Callable[[Update], Any], ...]:
        """For :func:`kept`: two selects, the mask of an Update's entries that ``device`` owns
        and the mask of those it does not; where both are asked of one Update (the first, then
        the second), its owners are looked up once."""
        owned: dict[int, Any] = {}

        def mine(update: Update):
            owned[id(update)] = self._owners(owner, update) == device
            return owned[id(update)]

        def others(update: Update):
            held = owned.pop(id(update), None)
            return self._owners(owner, update) != device if held is None else ~held

        return mine, others

    def _owner_like(self, owner, ids):
        """``owner`` on the array module and device of ``ids`` (copied once, then cached)."""
        backend = backend_of(ids)
        if backend_of(owner) == backend:
            return owner
        if self._owner is not owner:
            self._owner, self._owner_copies = owner, {}
        copy = self._owner_copies.get(backend)
        if copy is None:
            copy = self._owner_copies[backend] = backend.asarray(owner)
        return copy


def merge_each(pairs: Sequence[tuple[Update, Update]], combine: Combine) -> list[Update]:
    """``combine(a, b)`` of every pair ``(a, b)``, each on its device (made current), a side
    itself where the other is empty: where ``combine`` has a batch form ``combine.many(pairs)``
    (the enactor's reads every pair's count at once: one host read a device), the pairs with
    two non-empty sides in one call; else one call a pair."""
    merged: list[Update | None] = [b if not len(a) else a for a, b in pairs]
    both = [k for k, (a, b) in enumerate(pairs) if len(a) and len(b)]
    many = getattr(combine, "many", None)
    if many is not None and both:
        for k, update in zip(both, many([pairs[k] for k in both]), strict=True):
            merged[k] = update
        return merged
    for k in both:
        a, b = pairs[k]
        with backend_of(a.ids).activate():
            merged[k] = combine(a, b)
    return merged


def merge_all_each(
    groups: Sequence[tuple[Update, Sequence[Update]]], combine: Combine
) -> list[Update]:
    """Each ``(base, updates)`` group (one a device, say) combined into one Update, as a
    balanced tree of combines: the groups' trees level by level, each level's pairs of every
    group in one :func:`merge_each`."""
    parts = [[u for u in (base, *updates) if len(u)] or [base] for base, updates in groups]
    while any(len(p) > 1 for p in parts):
        pairs = [(g, i) for g, p in enumerate(parts) for i in range(0, len(p) - 1, 2)]
        merged = iter(merge_each([(parts[g][i], parts[g][i + 1]) for g, i in pairs], combine))
        parts = [
            [next(merged) for _ in range(0, len(p) - 1, 2)] + ([p[-1]] if len(p) % 2 else [])
            for p in parts
        ]
    return [p[0] for p in parts]


SPLIT_BY_MASKS = 4  # up to this many pieces: one mask each, not a sort


def split(
    update: Update, keys, count: int, skip: int | None = None, sizes: list[int] | None = None
) -> list[Update]:
    """``update`` split by ``keys`` (one int in ``[0, count)`` per entry): piece k holds the
    entries whose key is k, in their original order. ``sizes``: each key's number of
    entries, when the caller read them (:func:`key_counts`, several splits' in one read);
    else one host read of them here. Up to SPLIT_BY_MASKS pieces, the positions of each
    key (a compaction each, sized by ``sizes``: none for the piece ``skip``, which the
    caller does not read: it is left None); more, one sort."""
    if count == 1 or not len(update):
        return [update] * count
    if sizes is None:
        (sizes,) = key_counts([(update, keys)], count)
    backend = backend_of(update.ids)
    with backend.activate():
        if count <= SPLIT_BY_MASKS:
            return [
                None if k == skip else update.take(backend.nonzero(keys == k, np.int64, sizes[k]))
                for k in range(count)
            ]
        order = backend.xp.argsort(keys, kind="stable")
        pieces, start = [], 0
        for size in sizes:
            pieces.append(update.take(order[start : start + size]))
            start += size
        return pieces


def kept(filters: Sequence[tuple[Update, Callable[[Update], Any]]]) -> list[Update]:
    """Each ``(update, select)`` of ``filters``: ``update`` cut to the entries where the bool
    mask ``select(update)`` holds. Every mask is made and counted on its update's device (that
    device current: its kernels queue behind those that made the update, and no kernel reads
    another GPU's memory), the counts read together (one host read a device,
    :func:`~bspgraph.backend.read_together`), then one compaction each, sized by its count
    (where each array's boolean index would read a count of its own)."""
    masks, counts = [], []
    for update, select in filters:
        backend = backend_of(update.ids)
        with backend.activate():
            mask = select(update)
            masks.append(mask)
            counts.append((backend, backend.count(mask)))
    on_device = [(backend, c) for backend, c in counts if not isinstance(c, int | np.integer)]
    read = iter(read_together(on_device))  # (NumPy counts are host integers already)
    pieces = []
    for (update, _), mask, (backend, count) in zip(filters, masks, counts, strict=True):
        size = int(count) if isinstance(count, int | np.integer) else next(read)[0]
        with backend.activate():
            pieces.append(update.take(backend.nonzero(mask, np.int64, size)))
    return pieces


def key_counts(splits: Sequence[tuple[Update, Any]], count: int) -> list[list[int]]:
    """For each ``(update, keys)`` of ``splits``, how many of its entries have each key in
    ``[0, count)`` (made on the update's device): tallied there and read together, one host read a
    device (:func:`~bspgraph.backend.read_together`)."""
    tallies = []
    for update, keys in splits:
        backend = backend_of(update.ids)
        with backend.activate():
            tallies.append((backend, ops.tally(backend, keys, count)))
    return read_together(tallies)
