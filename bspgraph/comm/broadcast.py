"""Broadcast: every device sends its whole update to every other device, in one round."""

from __future__ import annotations

from .base import CommStats, Communicator, kept
from .message import Update


class Broadcast(Communicator):
    """Every device sends its whole update to every other device: P(P-1) messages, one round.

    The multi-GPU Gunrock paper's *broadcast*: no splitting on the sender, the most bandwidth.
    The message count does not depend on the data: an empty update is still sent (a header
    with no ids), so the count is exactly ``P * (P - 1)`` per exchange and the round count is 1
    (0 for one device).

    With ``to_all=False`` the full updates still travel (that is what broadcast costs), and each
    receiver keeps only the entries of vertices it owns, so the result obeys the common contract
    of :class:`~bspgraph.comm.base.Communicator` whatever the pattern.

    Examples
    --------
    >>> Broadcast.message_count(4)
    12
    """

    name = "broadcast"

    @staticmethod
    def message_count(parts: int) -> int:
        """Messages per exchange on ``parts`` devices: ``P * (P - 1)``."""
        return parts * (parts - 1)

    def exchange_dense(self, slabs, *, blocks, to_all=False, transport):
        """Every device's Slab, as it is, to every other device; receivers keep their own
        block unless ``to_all``."""
        if to_all or transport.size == 1:
            return super().exchange_dense(slabs, blocks=blocks, to_all=to_all, transport=transport)
        sends = [(d, o, slabs[d]) for d in transport.local for o in range(transport.size) if o != d]
        return self._dense_round(sends, transport, blocks, cut=True)

    def _deliver(self, updates, *, owner, to_all, combine, transport, num_vertices):
        parts = transport.size
        result: list[list[Update] | None] = [None] * parts
        sends = [(d, o, updates[d]) for d in transport.local for o in range(parts) if o != d]
        inbox, stats = transport.exchange_round(sends, num_vertices=num_vertices)
        if not to_all:  # each receiver's own entries, every receiver's counts read at once
            filters = [(d, u) for d in transport.local for u in inbox[d]]
            pieces = iter(kept([(u, self._ownership(owner, d)[0]) for d, u in filters]))
            inbox = {d: [] for d in transport.local}
            for d, _ in filters:
                inbox[d].append(next(pieces))
        for d in transport.local:
            result[d] = [update for update in inbox[d] if len(update)]
        return result, CommStats.of([stats])
