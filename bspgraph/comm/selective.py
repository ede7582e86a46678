"""Selective: each device sends every owner only the entries it owns, and only when non-empty."""

from __future__ import annotations

from .base import CommStats, Communicator, key_counts, split
from .message import Bits, Gathered, Mostly, Packed, Piece, Slab, Update


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
    direct = True

    def exchange_mixed(self, messages, *, owner, blocks, to_all=False, transport, gathers=None):
        """:meth:`exchange` and :meth:`exchange_dense` in one round, each device sending what
        it chose: an Update (split by owner as :meth:`exchange` splits it), a Slab or Bits (to
        every other device, cut to each owner's block unless ``to_all``, as
        :meth:`exchange_dense` sends a Slab), or both Bits and an Update (:class:`Mostly`). An
        inbox may hold several kinds, each delivered as it is; the counts are those of the two
        exchanges' sends together. Devices in several processes may choose apart: every process
        makes this one round.

        In one memory a device may also send a :class:`Packed` message whose counts are still
        on the device, grouped by owner (or, ``to_all``, one group): each owner (every other
        device) gets its group as a :class:`Piece`, a view, unread (possibly empty); those
        sends are counted once their sizes are read (:meth:`CommStats.settled`).

        With ``gathers`` (``gathers[d][o]``: the positions in device ``d``'s block that device
        ``o``'s lists name, :func:`~bspgraph.enactor.layout.proxies`), a block's Slab sent to
        all goes to each receiver as those entries only (:class:`Gathered`): a proxy holder
        gets its proxies' values, as the multi-GPU Gunrock paper's selective sends."""
        parts = transport.size
        updates = {d: m.others if isinstance(m, Mostly) else m for d, m in enumerate(messages)}
        pieces = self._pieces(updates, transport.local, owner, to_all, parts)
        sends = []
        for d in transport.local:
            message = messages[d]
            if isinstance(message, Mostly):  # its Bits as Bits go, beside its Update's pieces
                sends += [
                    (d, o, pieces[d][o]) for o in range(parts) if o != d and len(pieces[d][o])
                ]
                message = message.bits
            if isinstance(message, Slab | Bits):
                dense = [
                    (d, o, _sent_to(message, o, blocks, to_all, gathers and gathers.get(d)))
                    for o in range(parts)
                    if o != d
                ]  # (a receiver whose lists name none of a block's vertices gets nothing)
                sends += [send for send in dense if len(send[2]) or type(send[2]) is not Gathered]
            elif isinstance(message, Packed):
                sends += [(d, o, message.piece(0 if to_all else o)) for o in range(parts) if o != d]
            else:
                sends += [
                    (d, o, pieces[d][o]) for o in range(parts) if o != d and len(pieces[d][o])
                ]
        inbox, stats = transport.exchange_round(sends, num_vertices=int(owner.shape[0]))
        received: list[list | None] = [None] * parts
        for d in transport.local:
            received[d] = [m for m in inbox[d] if isinstance(m, Piece) or len(m)]
        return received, CommStats.of([stats])

    def _deliver(self, updates, *, owner, to_all, combine, transport, num_vertices):
        return self.exchange_mixed(
            updates, owner=owner, blocks=None, to_all=to_all, transport=transport
        )

    def _pieces(self, messages, local, owner, to_all: bool, parts: int) -> dict:
        """What each device ``d`` of ``local`` sends each device of its Update
        ``messages[d]``: all of it to every one (``to_all``), else each owner's entries (None
        for ``d`` itself), the sizes of every split read together (one host read a device)."""
        pieces, splits = {}, {}
        for d in local:
            update = messages[d]
            if not isinstance(update, Update):
                continue
            if to_all or not len(update):
                pieces[d] = [update] * parts
            elif update.bounds is not None and len(update.bounds) == parts + 1:
                pieces[d] = update.by_owner(skip=d)  # packed by owner: slices
            else:
                splits[d] = (update, self._owners(owner, update))
        sizes = key_counts(list(splits.values()), parts)
        for (d, (update, keys)), counts in zip(splits.items(), sizes, strict=True):
            pieces[d] = split(update, keys, parts, skip=d, sizes=counts)
        return pieces


def _sent_to(message: Slab | Bits, receiver: int, blocks, to_all: bool, gathers: dict | None):
    """What of a dense ``message`` goes to ``receiver``: all of it (``to_all``), its
    receiver's proxies where ``gathers`` has them and it is one block's Slab, else the
    receiver's block of it."""
    if not to_all:
        return message.cut(receiver, blocks[receiver])
    if gathers is not None and type(message) is Slab and message.block is not None:
        return message.gather(gathers[receiver])
    return message
