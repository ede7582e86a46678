"""What travels between devices: an Update (vertex ids + aligned values), a Slab (values by
position) or Bits (a vertex set and one value), and the bytes each hands to a transport."""

from __future__ import annotations

import functools
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
        if bounds is not None and (
            bounds[0] != 0
            or bounds[-1] != shape[0]
            or any(a > b for a, b in zip(bounds, bounds[1:]))
        ):
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
        return [
            None if o == skip else self.take(slice(bounds[o], bounds[o + 1]))
            for o in range(len(bounds) - 1)
        ]

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

    def map(self, convert) -> Packed:
        """The same package (its whole buffers, its counts) with ``convert`` applied to each
        of its arrays: a copy on another device, as a link moves it."""
        values = {name: convert(column) for name, column in self.values.items()}
        return Packed(
            convert(self.ids), values, convert(self.counts), list(self.known), self.at_most
        )


@dataclass(frozen=True, eq=False)
class Piece:
    """Group ``group`` of a :class:`Packed` message, handed to a receiver in the sender's
    memory with its count still on the device: the receiver's kernels read where it starts
    and how many entries it holds from ``packed.counts``; nothing is copied or read. Its
    length is known once the sender's counts are read (:meth:`Packed.learn`, with the
    superstep's tally); it may be empty."""

    packed: Packed
    group: int
    crossed: bool = False  # sent over a link: its package's whole buffers, counted when sent

    def __len__(self) -> int:
        start, stop = self._bounds()
        return stop - start

    def moved(self, convert) -> Piece:
        """This group of a copy of its package (:meth:`Packed.map`): what a receiver across
        a link gets, the counts still unread."""
        return Piece(self.packed.map(convert), self.group, crossed=True)

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
        return Update(
            packed.ids[start:stop], {name: v[start:stop] for name, v in packed.values.items()}
        )


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
        """The same Slab (of its own kind) with ``convert`` applied to each of its arrays."""
        values = {name: convert(column) for name, column in self.values.items()}
        return type(self)(self.block, values)

    def cut(self, block: int, index) -> Slab:
        """The entries of device ``block``'s owned vertices (``index``: a slice or their ids) of
        this every-vertex Slab."""
        return Slab(block, {name: column[index] for name, column in self.values.items()})

    def gather(self, positions) -> Gathered:
        """The entries at ``positions`` of this block's Slab: what one receiver reads of it
        (gathered on the sender's device, made current)."""
        with backend_of(positions).activate():
            values = {name: column[positions] for name, column in self.values.items()}
        return Gathered(self.block, values)


@dataclass(frozen=True, eq=False)
class Gathered(Slab):
    """A Slab of the vertices of the sender's block (``block``) that the receiver's lists
    name, in ascending order (Gunrock's duplicate-1-hop proxies): values alone, the receiver
    knowing which vertices they are (``enactor.layout.proxies``)."""


@dataclass(frozen=True, eq=False)
class Bits:
    """A vertex set and one value a column: the vertices of a run (``block``, as a Slab's:
    a device's owned vertices, or None for every vertex) whose bit is set in ``bits`` (packed,
    eight vertices a byte, the first vertex in the high bit: ``packbits``' order) take
    ``values[name][0]``; the others receive nothing. A superstep whose changed vertices all
    took one value (a traversal's level) travels so, V / 8 bytes where a Slab takes V
    values. :meth:`slab` unfolds it where it arrives."""

    block: int | None
    bits: Any
    length: int
    values: dict[str, Any]
    source: Any = field(default=None, repr=False)  # the sender's bool mask, to cut from

    @classmethod
    def of(cls, block: int | None, mask, values: dict[str, Any]) -> Bits:
        """The Bits of the bool ``mask`` (one entry a vertex of the run) and ``values`` (a
        one-element array a column)."""
        backend = backend_of(mask)
        with backend.activate():  # (a cut for another device runs on the sender's GPU)
            bits = backend.xp.packbits(mask)
        return cls(block, bits, int(mask.shape[0]), values, mask)

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return (
            f"Bits({self.length} vertices, block={self.block}, values=[{', '.join(self.values)}])"
        )

    def mask(self):
        """The vertex set as a bool array, one entry a vertex of the run."""
        backend = backend_of(self.bits)
        with backend.activate():
            return backend.xp.unpackbits(self.bits)[: self.length].view(bool)

    def map(self, convert) -> Bits:
        """The same Bits with ``convert`` applied to each of its arrays."""
        values = {name: convert(value) for name, value in self.values.items()}
        return Bits(self.block, convert(self.bits), self.length, values)

    def cut(self, block: int, index) -> Bits:
        """The part of these every-vertex Bits over device ``block``'s owned vertices
        (``index``: a slice or their ids); a range that starts and ends on a byte is a view."""
        if isinstance(index, slice):
            start, stop, _ = index.indices(self.length)
            if start % 8 == 0 and (stop % 8 == 0 or stop == self.length):
                return Bits(block, self.bits[start // 8 : -(-stop // 8)], stop - start, self.values)
        mask = self.mask() if self.source is None else self.source
        return Bits.of(block, mask[index], self.values)

    def slab(self, absent: dict[str, Any]) -> Slab:
        """These Bits as a Slab: ``values`` where the bit is set, ``absent[name]`` (a value
        the combiner leaves without effect) elsewhere."""
        xp = backend_of(self.bits).xp
        mask = self.mask()
        columns = {
            name: xp.where(mask, value, value.dtype.type(absent[name]))
            for name, value in self.values.items()
        }
        return Slab(self.block, columns)


@dataclass(frozen=True, eq=False)
class Mostly:
    """Bits and an Update beside them: of the vertices a device returned, those that took one
    value a column (``bits``) and the few that took others (``others``, ids and values). A
    superstep whose changed vertices nearly all took one value (connected components' first:
    most labels one root) travels so, V / 8 bytes and the others' entries. A communicator
    sends the two as two messages, each as it sends its kind."""

    bits: Bits
    others: Update


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


def wire_bytes(message: Update | Slab | Bits) -> int:
    """Bytes a message hands to a transport: its ids (4 or 8 bytes each, their own dtype)
    and its values; a Slab's values alone (its vertices are named by position); a Bits'
    bitmap and one value a column. What every transport counts and what the MPI and NCCL
    transports send (beside a header of a few int64 words). Reads only host-side shapes:
    never synchronises a GPU.

    Examples
    --------
    >>> import numpy as np
    >>> wire_bytes(Update(np.arange(100, dtype=np.int32), {"depth": np.zeros(100, np.int32)}))
    800
    """
    return sum(int(array.nbytes) for array in arrays_of(message))


# --- the wire: messages as an int64 header and raw bytes, nothing pickled (MPI, NCCL) ------------
WIRE_ALIGN = 8  # bytes: every array of a payload starts at a multiple of this
_KIND = {Slab: 0, Bits: -1, Gathered: -2, Piece: -3}  # the second header word: no Update
_KIND_OF = {code: kind for kind, code in _KIND.items()}
Layout = list[tuple[type, int, list[tuple[str | None, np.dtype, tuple]], Any]]


def describe(messages: Sequence[Update | Slab | Bits | Piece]) -> np.ndarray:
    """The shapes of ``messages`` as one int64 array: their count, then for each its length,
    the ids' dtype (0 for a Slab, -1 for Bits, -2 for a Gathered Slab, then its block + 1, 0
    for None; -3 for a Piece, its length its package's buffer, then its group, the ids' dtype,
    how many counts and its package's bound + 1, 0 for None) and its column count, and for
    each column its name's length and UTF-8 bytes, its dtype, number of axes and extra axes'
    sizes. Reads no array (no GPU synchronisation): a transport whose arrays travel apart
    (NCCL) sends it ahead of them. :func:`described` reverses it."""
    header: list[int] = [len(messages)]
    for message in messages:
        if isinstance(message, Update):
            header += [len(message), _dtype_code(message.ids.dtype), len(message.values)]
        elif isinstance(message, Piece):
            packed = message.packed
            bound = 0 if packed.at_most is None else packed.at_most + 1
            header += [message.capacity, _KIND[Piece], message.group]
            header += [_dtype_code(packed.ids.dtype), int(packed.counts.shape[0]), bound]
            header += [len(packed.values)]
        else:
            block = 0 if message.block is None else message.block + 1
            header += [len(message), _KIND[type(message)], block, len(message.values)]
        values = message.packed.values if isinstance(message, Piece) else message.values
        for name, column in values.items():
            encoded = name.encode()
            header += [
                len(encoded),
                *encoded,
                _dtype_code(column.dtype),
                column.ndim,
                *column.shape[1:],
            ]
    return np.asarray(header, dtype=np.int64)


def described(header: np.ndarray) -> Layout:
    """What :func:`describe` wrote: for each message its class, its length, each of its
    arrays in the order they travel (an Update's ids, a Bits' bitmap or a Piece's package's
    ids first, named None; a Piece's counts last, named "") with its name, dtype and whole
    shape, and its block (None for an Update; a Piece's group and bound). The same header
    gives the same Layout (kept: a run's light supersteps repeat theirs); do not modify it."""
    return _described(tuple(header.tolist()))


@functools.lru_cache(maxsize=256)
def _described(fields: tuple) -> Layout:
    at, layout = 1, []
    for _ in range(fields[0]):
        count, code = fields[at : at + 2]
        if code > 0:  # an Update: its ids travel first
            kind, block, arrays, at = Update, None, [(None, _dtype_of(code), (count,))], at + 2
        elif _KIND_OF[code] is Piece:  # its package's ids first, its counts last
            group, ids_code, counts, bound = fields[at + 2 : at + 6]
            kind, block, at = Piece, (group, bound - 1 if bound else None), at + 6
            arrays = [(None, _dtype_of(ids_code), (count,))]
        else:
            kind, block, at = _KIND_OF[code], fields[at + 2] - 1, at + 3
            block = None if block < 0 else block
            arrays = [(None, np.dtype(np.uint8), (-(-count // 8),))] if kind is Bits else []
        rows = 1 if kind is Bits else count
        columns, at = fields[at], at + 1
        for _ in range(columns):
            length = fields[at]
            name = bytes(fields[at + 1 : at + 1 + length]).decode()
            at += 1 + length
            code, axes = fields[at : at + 2]
            arrays.append((name, _dtype_of(code), (rows, *fields[at + 2 : at + 1 + axes])))
            at += 1 + axes
        if kind is Piece:
            arrays.append(("", np.dtype(np.uint64), (counts,)))
        layout.append((kind, count, arrays, block))
    return layout


def arrays_of(message: Update | Slab | Bits | Piece) -> tuple:
    """The arrays of ``message`` in the order they travel: an Update's ids or a Bits' bitmap,
    then each value; a Piece's package whole: its ids, each value, then its counts (the order
    of :func:`laid_out` buffers, which a transport may send as one)."""
    if isinstance(message, Piece):
        packed = message.packed
        return (packed.ids, *packed.values.values(), packed.counts)
    values = tuple(message.values.values())
    if isinstance(message, Slab):
        return values
    return (message.bits if isinstance(message, Bits) else message.ids, *values)


def pack(messages: Sequence[Update | Slab | Bits]) -> tuple[np.ndarray, np.ndarray]:
    """``messages`` (host arrays) as their header (:func:`describe`) and one uint8 payload:
    each one's arrays (:func:`arrays_of`), every array starting at a multiple of WIRE_ALIGN
    bytes. :func:`unpack` reverses it."""
    payload = [
        _padded(np.ascontiguousarray(array)) for message in messages for array in arrays_of(message)
    ]
    return (describe(messages), np.concatenate(payload) if payload else np.zeros(0, dtype=np.uint8))


def unpack(header: np.ndarray, payload) -> list[Update | Slab | Bits]:
    """The messages that ``header`` (:func:`describe`) lays out in ``payload`` (a uint8 array,
    NumPy or CuPy, as :func:`pack` writes it): views of the payload."""
    layout = described(header)
    return assembled(layout, columns_of(layout, payload))


def columns_of(layout: Layout, payload) -> list[dict]:
    """Each message's arrays in ``payload`` as ``layout`` (:func:`described`) places them, by
    name (an Update's ids, a Bits' bitmap and a Piece's package's ids under None, a Piece's
    counts under ""): views, which a transport that receives into the same buffer again may
    keep for the next message of that layout."""
    columns, offset = [], 0
    for _kind, _count, arrays, _block in layout:
        values = {}
        for name, dtype, shape in arrays:
            size = math.prod(shape) * dtype.itemsize
            piece = payload[offset : offset + size].view(dtype)
            values[name] = piece if len(shape) == 1 else piece.reshape(shape)
            offset += padded_size(size)
        columns.append(values)
    return columns


def assembled(layout: Layout, columns: list[dict]) -> list[Update | Slab | Bits | Piece]:
    """The messages of ``layout`` made of their ``columns`` (:func:`columns_of`): new
    objects every time (a Piece's package learns its counts once read)."""
    messages = []
    for (kind, count, _arrays, block), arrays in zip(layout, columns, strict=True):
        values = dict(arrays)
        first = values.pop(None, None)
        if kind is Update:
            messages.append(Update(first, values))
        elif kind is Piece:  # a copy of the sender's package, its counts unread
            counts, (group, bound) = values.pop(""), block
            messages.append(Piece(Packed(first, values, counts, at_most=bound), group, True))
        elif kind is Bits:
            messages.append(Bits(block, first, count, values))
        else:
            messages.append(kind(block, values))  # a Slab, or a Gathered one
    return messages


def laid_out(xp, arrays: Sequence[tuple[int, np.dtype]]) -> list:
    """New 1-D arrays of the given ``(length, dtype)``, in one allocation, each starting where
    the wire puts it (a multiple of WIRE_ALIGN after the one before): a message made of them
    in that order travels as one send (:class:`~bspgraph.comm.nccl.NCCLTransport`)."""
    starts, end = [], 0
    for length, dtype in arrays:
        starts.append(end)
        end += padded_size(length * np.dtype(dtype).itemsize)
    buffer = xp.empty(max(end, WIRE_ALIGN), dtype=np.uint8)
    return [
        buffer[start : start + length * np.dtype(dtype).itemsize].view(dtype)
        for start, (length, dtype) in zip(starts, arrays, strict=True)
    ]


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
