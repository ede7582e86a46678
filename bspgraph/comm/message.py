"""What travels between devices: an Update (vertex ids + aligned values) or a Slab (values by
position), and the bytes each hands to a transport."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backend import backend_of


@dataclass(frozen=True, eq=False)
class Update:
    """Changed vertices of one device: global ``ids`` and ``values`` aligned with them.

    Parameters
    ----------
    ids : 1-D integer array (NumPy or CuPy)
        Global vertex ids. A device's own package should hold each id once; every Update a
        communicator builds by combining does.
    values : dict of str to array
        One array per communicated state or associate, its first axis aligned with ``ids``.
    bounds : tuple of int, optional
        Set when the entries are grouped by owner: owner ``o``'s are ``bounds[o]`` to
        ``bounds[o + 1]`` (:meth:`by_owner`), so that a communicator sends each owner its
        slice without splitting; P + 1 offsets.

    Notes
    -----
    An Update is never modified in place: ``take`` and the communicators build new ones, so the
    same arrays may be shared by several Updates (the local transport does not copy on NumPy).

    Examples
    --------
    >>> import numpy as np
    >>> u = Update(np.array([3, 7]), {"depth": np.array([1, 2])})
    >>> len(u), u.take(np.array([False, True])).ids.tolist()
    (2, [7])
    """

    ids: Any
    values: dict[str, Any] = field(default_factory=dict)
    bounds: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        shape = getattr(self.ids, "shape", None)
        if shape is None or len(shape) != 1:
            raise ValueError(
                f"Update(ids=...): ids must be a 1-D array, got {type(self.ids).__name__}"
                + (f" of shape {tuple(shape)}" if shape is not None else "")
            )
        for name, column in self.values.items():
            column_shape = getattr(column, "shape", None)
            if column_shape is None or len(column_shape) == 0 or column_shape[0] != shape[0]:
                raise ValueError(
                    f"Update(values[{name!r}]): expected an array with {shape[0]} rows "
                    f"(one per id), got {type(column).__name__}"
                    + (f" of shape {tuple(column_shape)}" if column_shape is not None else "")
                )
        bounds = self.bounds
        if bounds is not None and (bounds[0] != 0 or bounds[-1] != shape[0]
                                   or any(a > b for a, b in zip(bounds, bounds[1:]))):  # fmt: skip
            raise ValueError(f"Update(bounds={bounds}): expected offsets from 0 to {shape[0]}")

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __repr__(self) -> str:
        names = ", ".join(self.values)
        return f"Update({len(self)} ids, values=[{names}])"

    def by_owner(self, skip: int | None = None) -> list[Update | None]:
        """The pieces of an Update whose entries are grouped by owner (``bounds``: owner o's
        entries are ``bounds[o]:bounds[o + 1]``, as a sender that packs by destination writes
        them): views, no copy; the piece ``skip`` is None."""
        bounds = self.bounds
        return [None if o == skip else self.take(slice(bounds[o], bounds[o + 1]))
                for o in range(len(bounds) - 1)]  # fmt: skip

    def take(self, index) -> Update:
        """The entries selected by ``index`` (a boolean mask, an index array or a slice)."""
        return Update(self.ids[index], {name: v[index] for name, v in self.values.items()})

    def map(self, convert) -> Update:
        """The same Update with ``convert`` applied to each of its arrays (such as a
        backend's ``asarray``, to move it to a device)."""
        values = {name: convert(column) for name, column in self.values.items()}
        return Update(convert(self.ids), values, self.bounds)

    def empty(self) -> Update:
        """An Update with no ids, the same value names and dtypes, on the same device."""
        return self.take(slice(0, 0))


@dataclass(frozen=True, eq=False)
class Packed:
    """An Update written in groups (a kernel's send buffer: one an owner, or one for every
    device) whose entries per group are still counted on the device (``counts``):
    :meth:`update` with those counts read makes the Update, so that a caller reads several
    packages' counts at once. In one memory its groups are handed over unread, as
    :class:`Piece` views; ``known`` holds the counts once read (:meth:`learn`)."""

    ids: Any
    values: dict[str, Any]
    counts: Any
    known: list[int] = field(default_factory=list, repr=False)
    at_most: int | None = None  # the most entries expected before the counts are read

    def update(self, counts: Sequence[int]) -> Update:
        """The Update of the first ``sum(counts)`` entries, ``bounds`` from ``counts``."""
        bounds = tuple(itertools.accumulate(counts, initial=0))
        end = bounds[-1]
        return Update(self.ids[:end], {name: v[:end] for name, v in self.values.items()}, bounds)

    def piece(self, group: int) -> Piece:
        """Group ``group``'s entries, their count unread (a view)."""
        return Piece(self, group)

    def learn(self, counts: Sequence[int]) -> None:
        """Keep its ``counts``, read from the device: its pieces' lengths."""
        self.known[:] = [int(count) for count in counts]


@dataclass(frozen=True, eq=False)
class Piece:
    """Group ``group`` of a :class:`Packed` message, handed to a receiver in the sender's
    memory with its count still on the device: the receiver's kernels read where it starts
    and how many entries it holds from ``packed.counts``; nothing is copied or read. Its
    length is known once the sender's counts are read (:meth:`Packed.learn`, with the
    superstep's tally); it may be empty."""

    packed: Packed
    group: int

    def __len__(self) -> int:
        start, stop = self._bounds()
        return stop - start

    def _bounds(self) -> tuple[int, int]:
        """Where its entries start and end in its package (the counts read)."""
        known = self.packed.known
        if not known:
            raise RuntimeError("Piece: its count is still on the device (Packed.learn)")
        start = sum(known[: self.group])
        return start, start + known[self.group]

    @property
    def at_most(self) -> int:
        """The entries it is expected to hold at most: its length once known, else its
        package's bound (or buffer). A bound sizes no buffer (:attr:`capacity` does): it
        chooses a path."""
        if self.packed.known:
            return len(self)
        bound = self.packed.at_most
        return self.capacity if bound is None else min(bound, self.capacity)

    @property
    def capacity(self) -> int:
        """The most entries it can hold: its package's buffer."""
        return int(self.packed.ids.shape[0])

    @property
    def entry_bytes(self) -> int:
        """The bytes of one entry: its id and its values."""
        arrays = (self.packed.ids, *self.packed.values.values())
        return sum(array.dtype.itemsize * math.prod(array.shape[1:]) for array in arrays)

    def update(self) -> Update:
        """Its entries as an Update (views; its package's counts read: :meth:`Packed.learn`)."""
        start, stop = self._bounds()
        packed = self.packed
        return Update(packed.ids[start:stop],
                      {name: v[start:stop] for name, v in packed.values.items()})  # fmt: skip


@dataclass(frozen=True, eq=False)
class Slab:
    """A dense message: values of a run of vertices named by position, so that no id travels.
    ``block`` is the device whose owned vertices (ascending) the values are aligned with, or
    None for every vertex of the graph; ``values`` maps state names to equally long arrays.
    Entries a sender has nothing for hold its combiner's neutral value (see
    :meth:`bspgraph.enactor.combiners.Combiner.neutral`)."""

    block: int | None
    values: dict[str, Any]

    def __len__(self) -> int:
        return int(next(iter(self.values.values())).shape[0]) if self.values else 0

    def map(self, convert) -> Slab:
        """The same Slab with ``convert`` applied to each of its arrays."""
        return Slab(self.block, {name: convert(column) for name, column in self.values.items()})

    def cut(self, block: int, index) -> Slab:
        """The entries of device ``block``'s owned vertices (``index``: a slice or their ids) of
        this every-vertex Slab."""
        return Slab(block, {name: column[index] for name, column in self.values.items()})


def concat(updates: Sequence[Update]) -> Update:
    """One Update holding every entry of ``updates`` (same device, same value names), in order.

    Ids may repeat in the result: combine it to get one entry per id.

    Raises
    ------
    ValueError
        ``updates`` is empty, or the updates name different values.
    """
    if not updates:
        raise ValueError("concat(updates=[]): need at least one Update")
    if len(updates) == 1:
        return updates[0]
    names = list(updates[0].values)
    for u in updates[1:]:
        if list(u.values) != names:
            raise ValueError(f"concat(updates): value names differ: {names} and {list(u.values)}")
    xp = backend_of(updates[0].ids).xp
    return Update(
        xp.concatenate([u.ids for u in updates]),
        {name: xp.concatenate([u.values[name] for u in updates]) for name in names},
    )


def wire_bytes(update: Update | Slab) -> int:
    """Bytes a message hands to a transport: its ids (4 or 8 bytes each, their own dtype)
    and its values; a Slab's values alone (its vertices are named by position). What every
    transport counts and what the MPI and NCCL transports send (beside a header of a few
    int64 words). Reads only host-side shapes: never synchronises a GPU.

    Examples
    --------
    >>> import numpy as np
    >>> wire_bytes(Update(np.arange(100, dtype=np.int32), {"depth": np.zeros(100, np.int32)}))
    800
    """
    return sum(int(array.nbytes) for array in arrays_of(update))


# --- the wire: messages as an int64 header and raw bytes, nothing pickled (MPI, NCCL) ------------
WIRE_ALIGN = 8  # bytes: every array of a payload starts at a multiple of this
UPDATE = "update"  # what :func:`described` gives as the block of an Update (a Slab's: its own)
Layout = list[tuple[int, list[tuple[str | None, np.dtype, tuple]], Any]]


def describe(messages: Sequence[Update | Slab]) -> np.ndarray:
    """The shapes of ``messages`` as one int64 array: their count, then for each its length,
    the ids' dtype (0 for a Slab, then its block + 1, 0 for None) and its column count, and
    for each column its name's length and UTF-8 bytes, its dtype, number of axes and extra
    axes' sizes. Reads no array (no GPU synchronisation): a transport whose arrays travel
    apart (NCCL) sends it ahead of them. :func:`described` reverses it."""
    header: list[int] = [len(messages)]
    for message in messages:
        if isinstance(message, Slab):
            block = 0 if message.block is None else message.block + 1
            header += [len(message), 0, block, len(message.values)]
        else:
            header += [len(message), _dtype_code(message.ids.dtype), len(message.values)]
        for name, column in message.values.items():
            encoded = name.encode()
            header += [len(encoded), *encoded, _dtype_code(column.dtype), column.ndim,
                       *column.shape[1:]]  # fmt: skip
    return np.asarray(header, dtype=np.int64)


def described(header: np.ndarray) -> Layout:
    """What :func:`describe` wrote: for each message its length, for each of its arrays in the
    order they travel (an Update's ids first, named None) its name, dtype and extra axes, and
    its block (:data:`UPDATE` for an Update)."""
    fields = header.tolist()
    at, layout = 1, []
    for _ in range(fields[0]):
        count, code = fields[at : at + 2]
        if code:  # an Update: its ids travel first
            block, arrays, at = UPDATE, [(None, _dtype_of(code), ())], at + 2
        else:
            block, arrays, at = fields[at + 2] - 1, [], at + 3
            block = None if block < 0 else block
        columns, at = fields[at], at + 1
        for _ in range(columns):
            length = fields[at]
            name = bytes(fields[at + 1 : at + 1 + length]).decode()
            at += 1 + length
            code, axes = fields[at : at + 2]
            arrays.append((name, _dtype_of(code), tuple(fields[at + 2 : at + 1 + axes])))
            at += 1 + axes
        layout.append((count, arrays, block))
    return layout


def arrays_of(message: Update | Slab) -> tuple:
    """The arrays of ``message`` in the order they travel: an Update's ids, then each value."""
    values = tuple(message.values.values())
    return values if isinstance(message, Slab) else (message.ids, *values)


def pack(messages: Sequence[Update | Slab]) -> tuple[np.ndarray, np.ndarray]:
    """``messages`` (host arrays) as their header (:func:`describe`) and one uint8 payload:
    each one's arrays (:func:`arrays_of`), every array starting at a multiple of WIRE_ALIGN
    bytes. :func:`unpack` reverses it."""
    payload = [_padded(np.ascontiguousarray(array)) for message in messages
               for array in arrays_of(message)]  # fmt: skip
    return (describe(messages),
            np.concatenate(payload) if payload else np.zeros(0, dtype=np.uint8))  # fmt: skip


def unpack(header: np.ndarray, payload) -> list[Update | Slab]:
    """The messages that ``header`` (:func:`describe`) lays out in ``payload`` (a uint8 array,
    NumPy or CuPy, as :func:`pack` writes it): views of the payload."""
    messages, offset = [], 0
    for count, arrays, block in described(header):
        values = {}
        for name, dtype, shape in arrays:
            shape = (count, *shape)
            size = math.prod(shape) * dtype.itemsize
            piece = payload[offset : offset + size].view(dtype)
            values[name] = piece if len(shape) == 1 else piece.reshape(shape)
            offset += padded_size(size)
        if block == UPDATE:
            ids = values.pop(None)
            messages.append(Update(ids, values))
        else:
            messages.append(Slab(block, values))
    return messages


def padded_size(nbytes: int) -> int:
    """``nbytes`` rounded up to a multiple of WIRE_ALIGN: where the next array starts."""
    return -(-nbytes // WIRE_ALIGN) * WIRE_ALIGN


def _dtype_code(dtype: np.dtype) -> int:
    """A dtype as one number: its kind's character code times 256 plus its item size."""
    return ord(dtype.kind) * 256 + dtype.itemsize


def _dtype_of(code: int) -> np.dtype:
    return np.dtype(f"{chr(code // 256)}{code % 256}")


def _padded(array: np.ndarray) -> np.ndarray:
    raw = array.reshape(-1).view(np.uint8)
    pad = padded_size(raw.shape[0]) - raw.shape[0]
    return np.concatenate([raw, np.zeros(pad, dtype=np.uint8)]) if pad else raw
