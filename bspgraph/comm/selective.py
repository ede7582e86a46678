"""Selective: each device sends every owner only the entries it owns, and only when non-empty."""

from __future__ import annotations

from .base import CommStats, Communicator, split
from .message import Update


class Selective(Communicator):
    """Each device splits its update by owner and sends each piece to its owner, in one round.

    The multi-GPU Gunrock paper's *selective-communicate*: the sender pays for one split (a
    sort of its update by owner), receivers get only what they own. As in Gunrock, **only
    non-empty messages are sent**, so the message count depends on the data:

    * ``to_all=False``: ``sum over d of |{o != d : some id of updates[d] is owned by o}|``;
    * ``to_all=True``: every non-empty update goes to every other device, as in broadcast:
      ``(P - 1) * |{d : updates[d] non-empty}|``.

    One round per exchange (0 on one device), even when nothing is sent: the round is the
    superstep's barrier.

    See Also
    --------
    Broadcast : sends everything everywhere, the count independent of the data.
    """

    name = "selective"
    sends_by_owner = True

    def _deliver(self, updates, *, owner, to_all, combine, transport, num_vertices):
        parts = transport.size
        result: list[list[Update] | None] = [None] * parts
        sends = []
        for d in transport.local:
            update = updates[d]
            if to_all or not len(update):
                pieces = [update] * parts
            elif update.bounds is not None and len(update.bounds) == parts + 1:
                pieces = update.by_owner(skip=d)  # packed by owner: slices
            else:
                pieces = split(update, self._owner_like(owner, update.ids)[update.ids], parts,
                               skip=d)  # fmt: skip
            sends += [(d, o, pieces[o]) for o in range(parts) if o != d and len(pieces[o])]
        inbox, stats = transport.exchange_round(sends, num_vertices=num_vertices)
        for d in transport.local:
            result[d] = [update for update in inbox[d] if len(update)]
        return result, CommStats.of([stats])
