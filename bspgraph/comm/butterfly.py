"""Butterfly: log_f(P) rounds of exchanges inside groups of f devices, combining on the way."""

from __future__ import annotations

from dataclasses import dataclass

from ..backend import backend_of
from .base import CommStats, Communicator, kept, key_counts, merge_all_each, merge_each, split
from .message import Update
from .transport import Inbox, RoundStats, Send


@dataclass(frozen=True)
class ButterflyPlan:
    """The schedule of a butterfly on ``parts`` devices with radix ``radix``.

    Attributes
    ----------
    parts : int
        P, the number of devices.
    radix : int
        r, the largest group size (``max(fanout, 2)``).
    radices : tuple of int
        The group size of each butterfly round: ``L`` rounds of ``r`` and, when ``m > 1``, one
        round of ``m``, where ``L = floor(log_r P)`` and ``m = floor(P / r**L)``.
    strides : tuple of int
        The place value of each round's digit (1, r, r², ...).
    core : int
        Q = m·r^L <= P, the devices that take part in the butterfly rounds.
    extras : int
        E = P - Q < r^L: devices ``Q + i`` that fold onto device ``i`` before the butterfly
        rounds and get their result from it after.
    """

    parts: int
    radix: int
    radices: tuple[int, ...]
    strides: tuple[int, ...]
    core: int
    extras: int

    @property
    def rounds(self) -> int:
        """``L + [m > 1] + 2 [E > 0]``: the butterfly rounds, plus fold-in and fold-out."""
        return len(self.radices) + 2 * (self.extras > 0)

    @property
    def messages(self) -> int:
        """``Q·(L·(r-1) + (m-1)) + 2E``: every core device sends to the other members of its
        group in each butterfly round; each extra device sends once and receives once."""
        return self.core * sum(g - 1 for g in self.radices) + 2 * self.extras

    def position(self, device: int) -> int:
        """The core device that stands for ``device`` in the butterfly rounds."""
        return device if device < self.core else device - self.core


def plan(parts: int, radix: int) -> ButterflyPlan:
    """The :class:`ButterflyPlan` for ``parts`` devices and groups of at most ``radix``."""
    power, digits = 1, 0
    while power * radix <= parts:
        power *= radix
        digits += 1
    top = parts // power
    radices = (radix,) * digits + ((top,) if top > 1 else ())
    strides, stride = [], 1
    for group in radices:
        strides.append(stride)
        stride *= group
    core = power * top
    return ButterflyPlan(parts, radix, radices, tuple(strides), core, parts - core)


class Butterfly(Communicator):
    """The butterfly of Green's ButterFly BFS: ``log_f P`` rounds, groups of ``f``, any P.

    Parameters
    ----------
    fanout : int
        The paper's fanout f. For ``f >= 2`` a round exchanges inside groups of f devices that
        differ in one base-f digit of their rank (the paper's Fig. 2 for f = 4: devices 0-3,
        then 0, 4, 8, 12), so a device sends f - 1 messages per round, in ``log_f P`` rounds.
        ``f = 1`` is the paper's name for the pairwise butterfly of its Fig. 1 (device 0
        exchanges with 1, then 2, then 4, 8): the same pattern as ``f = 2``.

    Notes
    -----
    **Combining on the way.** A device forwards one Update: everything it holds, merged with the
    enactor's ``combine``, so every message has at most V distinct ids and a device receives at
    most ``(f - 1)·V`` ids per round (the paper's O(f·V) buffers). What arrives in the last
    round is forwarded by nobody and is delivered as it came (the inbox holds up to f - 1
    Updates more), unless extra devices wait for it. Every device's contribution reaches each
    receiver exactly once, so sum combiners are safe.

    **to_all=True** is the paper's frontier synchronisation (an all-gather): a device sends what
    it holds to its group, whose members merge it. **to_all=False** routes instead (a
    reduce-scatter): in the round of digit i a device sends each group member only the entries
    whose owner has that member's digit i, so every entry walks to its owner in ``log_f P``
    hops, merged with the other devices' entries for the same vertex, and messages shrink.

    **Any P.** With ``L = floor(log_r P)`` (``r = max(f, 2)``), ``m = floor(P / r**L)``,
    ``Q = m·r^L <= P`` and ``E = P - Q < r^L``, the Q core devices run a mixed-radix butterfly
    (L rounds of groups of r, then one of groups of m when m > 1), and each extra device
    ``Q + i`` sends its update to core device i in a first round and gets its result from it in
    a last one (as recursive doubling does for a P that is not a power of two). This keeps
    every message to one Update and avoids the bottleneck the paper reports for 9 devices with
    f = 1, where device 8 stands in for the missing 8-15 and talks to eight devices at once.

    **Counts**, exact and independent of the data (an empty update is still sent)::

        rounds   = L + [m > 1] + 2·[E > 0]
        messages = Q·(L·(r - 1) + (m - 1)) + 2·E

    For P = r^k this is ``P·(r-1)·log_r P`` in ``log_r P`` rounds: 64 messages in 4 rounds for
    P = 16 and f = 1 (the paper's 64), 96 in 2 rounds for f = 4 (the paper's ``P·f·log_f P``
    = 128 counts f per round, the device itself included); for r >= P it is one round of
    ``P·(P-1)``, a broadcast.

    Examples
    --------
    >>> Butterfly(fanout=4).message_count(16), Butterfly(fanout=4).rounds(16)
    (96, 2)
    >>> Butterfly(fanout=1).message_count(9), Butterfly(fanout=1).rounds(9)
    (26, 5)
    """

    name = "butterfly"
    dense = False  # it combines on the way: Updates only

    def __init__(self, fanout: int = 2):
        super().__init__()
        if isinstance(fanout, bool) or not isinstance(fanout, int) or fanout < 1:
            raise ValueError(
                f"Butterfly(fanout={fanout!r}): expected an integer >= 1 "
                "(1 and 2 both mean the pairwise butterfly)"
            )
        self.fanout = fanout
        self.radix = max(fanout, 2)

    def __repr__(self) -> str:
        return f"Butterfly(fanout={self.fanout})"

    def plan(self, parts: int) -> ButterflyPlan:
        """The schedule on ``parts`` devices."""
        return plan(parts, self.radix)

    def message_count(self, parts: int) -> int:
        """Messages per exchange on ``parts`` devices: ``Q·(L·(r-1) + (m-1)) + 2E``."""
        return self.plan(parts).messages

    def rounds(self, parts: int) -> int:
        """Rounds per exchange on ``parts`` devices: ``L + [m > 1] + 2·[E > 0]``."""
        return self.plan(parts).rounds

    def _deliver(self, updates, *, owner, to_all, combine, transport, num_vertices):
        schedule = self.plan(transport.size)
        core, extras = schedule.core, schedule.extras
        local = transport.local
        local_core = [d for d in local if d < core]
        done: list[RoundStats] = []

        def run(sends: list[Send]) -> Inbox:
            inbox, stats = transport.exchange_round(sends, num_vertices=num_vertices)
            done.append(stats)
            return inbox

        def digits(update: Update, stride: int, radix: int):  # of its owner's position
            with backend_of(update.ids).activate():
                return (self._positions(self._owners(owner, update), core) // stride) % radix

        # What each device contributes; with to_all=False its own vertices never leave it.
        out = {d: updates[d] for d in local}
        if not to_all:  # (every device's filter counted and read at once, as below)
            leaving = [(updates[d], self._ownership(owner, d)[1]) for d in local]
            out = dict(zip(local, kept(leaving), strict=True))
        received = {d: updates[d].empty() for d in local}  # what d has been sent so far
        held = {p: out[p] for p in local_core}  # what core device p forwards (or routes)
        # What arrives in the core's last round is forwarded by nobody (unless extras wait for
        # it): it is delivered as it came, uncombined, as the contract allows.
        last = {p: [] for p in local_core}
        final = len(schedule.radices) - 1 if not extras else -1

        # Fold-in: extra device Q + i hands its contribution to core device i.
        if extras:
            inbox = run([(e, e - core, out[e]) for e in local if e >= core])
            folded = [(p, inbox[p][0]) for p in local_core if p < extras]
            if to_all:
                passing = {p: arrived for p, arrived in folded}
                received.update(passing)
            else:
                halves = iter(
                    kept(
                        [
                            (arrived, select)
                            for p, arrived in folded
                            for select in self._ownership(owner, p)
                        ]
                    )
                )
                passing = {}
                for p, _ in folded:
                    received[p], passing[p] = next(halves), next(halves)
            held.update(
                zip(
                    passing,
                    merge_each([(held[p], u) for p, u in passing.items()], combine),
                    strict=True,
                )
            )

        if to_all:
            # All-gather: p sends all it holds to its group; ``gathered`` is what p got there.
            gathered = {p: updates[p].empty() for p in local_core}
            for step, (radix, stride) in enumerate(zip(schedule.radices, schedule.strides)):
                sends = []
                outgoing = dict(
                    zip(
                        local_core,
                        merge_each([(held[p], gathered[p]) for p in local_core], combine),
                        strict=True,
                    )
                )
                for p in local_core:
                    digit = (p // stride) % radix
                    sends += [
                        (p, p + (k - digit) * stride, outgoing[p])
                        for k in range(radix)
                        if k != digit
                    ]
                inbox = run(sends)
                if step == final:
                    last.update((p, inbox[p]) for p in local_core)
                else:
                    gathered = dict(
                        zip(
                            local_core,
                            merge_all_each([(gathered[p], inbox[p]) for p in local_core], combine),
                            strict=True,
                        )
                    )
            received.update(
                zip(
                    local_core,
                    merge_each([(received[p], gathered[p]) for p in local_core], combine),
                    strict=True,
                )
            )
            if extras:  # fold-out: everything but the extra's own contribution
                folding = [p for p in local_core if p < extras]
                sends = [
                    (p, p + core, u)
                    for p, u in zip(
                        folding,
                        merge_each([(gathered[p], out[p]) for p in folding], combine),
                        strict=True,
                    )
                ]
                inbox = run(sends)
                for e in local:
                    if e >= core:
                        (received[e],) = inbox[e]
        else:
            # Reduce-scatter: each entry walks to its owner's position, one digit per round.
            for step, (radix, stride) in enumerate(zip(schedule.radices, schedule.strides)):
                keys = {p: digits(held[p], stride, radix) for p in local_core}
                sizes = iter(key_counts([(held[p], keys[p]) for p in local_core], radix))
                sends = []
                for p in local_core:  # (every device's split sized by one read)
                    digit = (p // stride) % radix
                    pieces = split(held[p], keys[p], radix, sizes=next(sizes))
                    held[p] = pieces[digit]
                    sends += [
                        (p, p + (k - digit) * stride, pieces[k]) for k in range(radix) if k != digit
                    ]
                inbox = run(sends)
                if step == final:
                    last.update((p, inbox[p]) for p in local_core)
                else:
                    held = dict(
                        zip(
                            local_core,
                            merge_all_each([(held[p], inbox[p]) for p in local_core], combine),
                            strict=True,
                        )
                    )
            # Now core device p holds exactly the entries owned by p or by its extra p + Q.
            filters = []  # (every device's counted and read at once)
            for p in local_core:
                mine, others = self._ownership(owner, p)
                filters += [(held[p], mine)] + ([(held[p], others)] if p < extras else [])
            pieces = iter(kept(filters))
            sends, mine = [], {}
            for p in local_core:
                mine[p] = next(pieces)
                if p < extras:
                    sends.append((p, p + core, next(pieces)))
            received.update(
                zip(
                    mine,
                    merge_each([(received[p], u) for p, u in mine.items()], combine),
                    strict=True,
                )
            )
            if extras:  # fold-out
                inbox = run(sends)
                for e in local:
                    if e >= core:
                        (received[e],) = inbox[e]

        result: list[list[Update] | None] = [None] * transport.size
        for d in local:
            result[d] = [u for u in (received[d], *last.get(d, ())) if len(u)]
        return result, CommStats.of(done)

    @staticmethod
    def _positions(device_ids, core: int):
        """The core position of each device id: itself, or ``id - Q`` for an extra device."""
        xp = backend_of(device_ids).xp
        return xp.where(device_ids < core, device_ids, device_ids - core)
