"""Communicators (broadcast, selective, butterfly) over transports (local, mpi, nccl).

The multi-process transports live in :mod:`bspgraph.comm.mpi` and :mod:`bspgraph.comm.nccl`
and are imported on demand (importing mpi4py starts MPI).

A communicator is a pattern, a transport moves bytes; the pattern never knows which transport
runs it. Every communicator has one contract (:class:`Communicator`): given what each device
changed this superstep, return for each device its inbox, a list of Updates (each with
distinct ids) that holds what it must receive (its own vertices, or everything with
``to_all=True``), every other device's contribution exactly once, plus :class:`CommStats`
(messages, bytes, rounds).

Examples
--------
>>> import numpy as np
>>> from bspgraph import comm
>>> owner = np.array([0, 0, 1, 1])
>>> updates = [comm.Update(np.array([2]), {"depth": np.array([1])}),
...            comm.Update(np.array([0, 3]), {"depth": np.array([2, 1])})]
>>> def combine(a, b):  # min on depth; here the ids never overlap
...     return comm.concat([a, b])
>>> received, stats = comm.get("selective").exchange(
...     updates, owner=owner, combine=combine, transport=comm.Local(2))
>>> [[u.ids.tolist() for u in inbox] for inbox in received], stats.messages, stats.rounds
([[[0]], [[2]]], 2, 1)
"""

from __future__ import annotations

from ..registry import lookup
from .base import Combine, CommStats, Communicator
from .broadcast import Broadcast
from .butterfly import Butterfly, ButterflyPlan
from .message import Packed, Piece, Slab, Update, concat, wire_bytes
from .selective import Selective
from .transport import Local, Message, RoundStats, Transport, failing_together

REGISTRY: dict[str, type[Communicator]] = {
    "broadcast": Broadcast,
    "selective": Selective,
    "butterfly": Butterfly,
}


def get(name_or_instance: str | Communicator) -> Communicator:
    """The communicator called ``name_or_instance`` (built with its defaults), or the instance.

    Parameters
    ----------
    name_or_instance : str or Communicator
        A key of :data:`REGISTRY` ("broadcast", "selective", "butterfly"), ``"butterfly:F"``
        for ``Butterfly(fanout=F)``, or an instance such as ``Butterfly(fanout=4)``.

    Raises
    ------
    ValueError
        An unknown name (the message lists the valid ones), or a fanout that is not an integer
        >= 1.
    """
    if isinstance(name_or_instance, str) and name_or_instance.startswith("butterfly:"):
        fanout = name_or_instance.partition(":")[2]
        if not fanout.isdigit():
            raise ValueError(
                f"communicator {name_or_instance!r}: expected 'butterfly:F' with F an integer >= 1"
            )
        return Butterfly(fanout=int(fanout))
    return lookup(REGISTRY, name_or_instance, Communicator, "communicator")


__all__ = [
    "REGISTRY",
    "Broadcast",
    "Butterfly",
    "ButterflyPlan",
    "Combine",
    "CommStats",
    "Communicator",
    "Local",
    "Message",
    "Packed",
    "Piece",
    "RoundStats",
    "Selective",
    "Slab",
    "Transport",
    "Update",
    "concat",
    "failing_together",
    "get",
    "wire_bytes",
]
