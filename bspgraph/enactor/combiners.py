"""Combiners: how the values that several devices hold for one vertex become one.

A primitive names a combiner for each state array it communicates (``communicate = {"depth":
"min"}``) and for each scalar (``Scalar("error", reduce="add")``); the enactor applies it when
the updates of other devices arrive, and when a communicator merges two updates of one vertex
on the way (butterfly). A name is looked up in :data:`COMBINERS`; an instance is taken as it
is, so a primitive may pass ``Add(follows="depth")`` or a combiner of its own: subclass
:class:`Combiner` and register it with :func:`register`.

=========================  ===========================================================  =======
combiner                   what arrives, and what the receiver keeps                    changed
=========================  ===========================================================  =======
``min`` / ``max``          the sender's value; the smaller / larger                     it won
``replace``                the owner's value (only owners send); it                     differs
``add``                    the change the sender made this superstep; the sum           non-0
``Add(follows=k)``         the change; taken when ``k`` wins, added on a tie of ``k``,  it won
                           dropped when ``k`` loses (path counts at the least depth)    or non-0
``Follow(k)``              the sender's value; taken when ``k`` wins (BFS parents)      never
=========================  ===========================================================  =======

A state of lanes (``State(..., lanes=b)``: a row of ``b`` values per vertex) is combined lane
by lane with the same combiners (min, max, replace, add; not ``follows``), and a vertex changed
when any of its lanes did.
"""

from __future__ import annotations

import abc
import functools
import operator
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from ..backend import extreme, ops
from ..exceptions import ContractError


class Combiner(abc.ABC):
    """How a vertex's (or a scalar's) values from several devices combine into one.

    ``keyed`` combiners (min, max) pick a winner that ``follows`` combiners obey; an
    ``owner_only`` combiner (replace) is sent by the vertex's owner alone; ``ships_change``
    combiners (add) send the change a device made in the superstep rather than its value.
    ``reads_returned``: its dense message (:meth:`neutral`) reads which vertices were returned.
    ``keeps_incoming``: what :meth:`apply` combines is ``incoming`` itself (the enactor then
    writes it without reading ``current`` where it needs no ``changed``).
    """

    name: ClassVar[str]
    keyed: ClassVar[bool] = False
    owner_only: ClassVar[bool] = False
    ships_change: ClassVar[bool] = False
    reads_returned: ClassVar[bool] = True
    keeps_incoming: ClassVar[bool] = False
    follows: str | None = None

    def __repr__(self) -> str:
        key = f"(follows={self.follows!r})" if self.follows else ""
        return f"{type(self).__name__}{key}"

    def check(self, where: str, dtype: np.dtype) -> None:
        """ContractError naming ``where`` when values of ``dtype`` cannot be combined."""
        if dtype.kind not in "biuf":
            raise ContractError(f"{where}: combiner {self.name!r} cannot combine {dtype} values")

    @abc.abstractmethod
    def apply(self, xp, current, incoming, won=None, tied=None):
        """``(combined, changed)``: ``incoming`` combined into ``current`` (aligned arrays,
        rows of lanes too), ``changed`` a bool per row; ``won`` / ``tied``: where the followed
        key's incoming value won / tied (else None)."""

    @abc.abstractmethod
    def reduce(self, values: list) -> Any:
        """One value from a scalar's values on every device: Python numbers, or (every
        device's scalar in one memory: parts on one GPU, virtual devices) their 0-d arrays,
        to be reduced without a read to the host."""

    def neutral(self, xp, column, returned):
        """``column`` (every vertex's value, or change for ``ships_change``) for a dense
        message: where the bool ``returned`` is False, a value that :meth:`apply` leaves
        without effect (``returned`` is None where ``reads_returned`` is False). None (the
        default): this combiner's state travels in Updates only."""
        return None

    def absent(self, dtype: np.dtype):
        """The value that :meth:`apply` leaves without effect, standing for "nothing sent"
        where a vertex set and one value (Bits) unfold; None (the default): this combiner's
        state travels as Bits nowhere."""
        return None

    def merge(self, backend, column, segment, count: int, first, tied):
        """One value per id from the entries of ``column`` (two updates concatenated and
        sorted by id, and within an id by the followed key, best first): ``segment`` numbers
        each entry's id (0 .. count-1), ``first`` holds the position of each id's first
        (winning) entry, ``tied`` the entries whose key ties with the winner's (None without a
        key)."""
        return column[first]


class _Best(Combiner):
    """The better value wins: ``wins(a, b)`` says where ``a`` beats ``b``; ``worst(dtype)`` is
    the value every other beats; ``scatter`` names the scatter of ``ops`` that keeps the best."""

    keyed = True
    reads_returned = False  # its dense message is the column as it is
    best: ClassVar[str]  # the array module's element-wise better of two
    wins: ClassVar[Callable]
    pick: ClassVar[Callable]
    worst: ClassVar[Callable]
    scatter: ClassVar[str]

    def apply(self, xp, current, incoming, won=None, tied=None):
        better = type(self).wins(incoming, current)
        if current.dtype.kind in "biu":  # the same values, 2 to 5 times faster than a where
            return getattr(xp, self.best)(incoming, current), _rows(better)
        return xp.where(better, incoming, current), _rows(better)  # (NaN and -0.0 as before)

    def neutral(self, xp, column, returned):
        # The column as it is, no pass: where a device returned nothing, its value is one that
        # every receiver already holds or beats (it came from them, or was sent and combined
        # when it was set), so it wins nowhere, just as the worst value would not.
        return column

    def absent(self, dtype):
        return type(self).worst(dtype)

    def reduce(self, values):
        if getattr(values[0], "ndim", None) is None:  # numbers
            return type(self).pick(values)
        return functools.reduce(getattr(np, self.best), values)  # 0-d arrays (CuPy's too)

    def merge(self, backend, column, segment, count, first, tied):
        worst = type(self).worst(column.dtype)
        out = (
            backend.full(count, worst, column.dtype)
            if column.ndim == 1
            else backend.xp.full((count, *column.shape[1:]), worst, dtype=column.dtype)
        )
        getattr(ops, self.scatter)(backend, out, segment, column)
        return out


class Min(_Best):
    """The smallest value wins (BFS depth, SSSP distance, CC labels)."""

    name, best, wins, pick, scatter = "min", "minimum", operator.lt, min, "scatter_min"
    worst = staticmethod(extreme)


class Max(_Best):
    """The largest value wins."""

    name, best, wins, pick, scatter = "max", "maximum", operator.gt, max, "scatter_max"
    worst = staticmethod(lambda dtype: extreme(dtype, largest=False))


class Replace(Combiner):
    """The owner computed the value; every other device takes it (PageRank contributions)."""

    name = "replace"
    owner_only = True
    reads_returned = False  # its dense message is the column as it is
    keeps_incoming = True

    def apply(self, xp, current, incoming, won=None, tied=None):
        return incoming, _rows(incoming != current)

    def neutral(self, xp, column, returned):
        return column  # sent by owners for their own block, whose values are current

    def reduce(self, values):
        raise ContractError("a scalar cannot be replaced: reduce it with 'add', 'min' or 'max'")


class Add(Combiner):
    """Each device sends the change it made to a vertex in the superstep; the changes add up.

    ``follows``: the name of a min/max state whose winner decides: a change made at a better
    key replaces the value, one at a tie adds to it, one at a worse key is dropped; a vertex's
    value must then start from 0 at each new key (Brandes' path counts at a depth).
    """

    name = "add"
    ships_change = True
    reads_returned = False  # its dense message is the change as it is

    def __init__(self, follows: str | None = None):
        self.follows = follows

    def check(self, where, dtype):
        if dtype.kind not in "iuf":
            raise ContractError(f"{where}: combiner 'add' needs numbers, not {dtype} values")

    def apply(self, xp, current, incoming, won=None, tied=None):
        if won is None:
            return current + incoming, _rows(incoming != 0)
        combined = xp.where(won, incoming, xp.where(tied, current + incoming, current))
        return combined, won | (tied & (incoming != 0))

    def absent(self, dtype):
        return 0

    def reduce(self, values):
        return sum(values)

    def neutral(self, xp, column, returned):
        # The change as it is, no pass: it is 0 at every vertex the step did not return (the
        # contract's rule 1: a step returns every vertex whose communicated state it changed,
        # and the baseline is rebased wherever a superstep sent or received a change).
        return column

    def merge(self, backend, column, segment, count, first, tied):
        out = backend.xp.zeros((count, *column.shape[1:]), dtype=column.dtype)
        ops.scatter_add(backend, out, segment, column if tied is None else column * tied)
        return out


class Follow(Combiner):
    """Travels with the winner of the state ``follows`` names (BFS parents with depths)."""

    name = "follow"
    reads_returned = False  # its dense message is the column as it is

    def __init__(self, follows: str):
        self.follows = follows

    def check(self, where, dtype):
        pass  # any value can travel with its key

    def apply(self, xp, current, incoming, won=None, tied=None):
        return xp.where(won, incoming, current), xp.zeros(incoming.shape, dtype=bool)

    def neutral(self, xp, column, returned):
        return column  # taken only where the key's neutral value cannot win

    def absent(self, dtype):
        return 0  # taken only where the key's value wins, which its absent value never does

    def reduce(self, values):
        raise ContractError("a scalar cannot follow another")


COMBINERS: dict[str, type[Combiner]] = {}


def register(kind: type[Combiner]) -> type[Combiner]:
    """Make ``kind`` available by its ``name`` (a class decorator for a new combiner)."""
    COMBINERS[kind.name] = kind
    return kind


for _kind in (Min, Max, Replace, Add):
    register(_kind)


def get(name_or_instance, where: str) -> Combiner:
    """The combiner ``name_or_instance`` names, or the instance itself.

    Raises
    ------
    ContractError
        An unknown name (the message names ``where`` and lists the valid names).
    """
    if isinstance(name_or_instance, Combiner):
        return name_or_instance
    if isinstance(name_or_instance, str) and name_or_instance in COMBINERS:
        return COMBINERS[name_or_instance]()
    valid = ", ".join(repr(n) for n in COMBINERS)
    raise ContractError(
        f"{where}: unknown combiner {name_or_instance!r}; expected one of {valid} or a "
        "bspgraph.combiners.Combiner (Add(follows=...), Follow(...))"
    )


def _rows(changed):
    """A bool per row: ``changed`` itself, or for rows of lanes, whether any lane changed."""
    return changed if changed.ndim == 1 else changed.any(axis=tuple(range(1, changed.ndim)))
