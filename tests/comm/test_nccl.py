"""The NCCL transport's wire format, on NumPy: columns received where the headers (int64
arrays, nothing pickled) say unpack to the same Updates. (The transport itself runs in tests/comm/test_mpi.py::
test_gpu_transports_on_two_gpus.)"""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import examples

from bspgraph.comm import Slab, Update
from bspgraph.comm.message import (
    WIRE_ALIGN,
    Bits,
    Packed,
    Piece,
    arrays_of,
    assembled,
    columns_of,
    describe,
    described,
    laid_out,
    pack,
    unpack,
)
from bspgraph.comm.nccl import _runs, _sizes, _spans
from bspgraph.exceptions import CommunicationError


def receive(updates, headers):
    """One peer's receive buffer as the transport fills it: each column's bytes, in the order
    the sender sends them, at the offsets ``_sizes`` gives."""
    sizes = _sizes(headers)
    buffer, offset = np.full(sum(padded for _, padded in sizes), 255, np.uint8), 0
    columns = [np.ascontiguousarray(c) for u in updates for c in arrays_of(u)]
    for column, (nbytes, padded) in zip(columns, sizes, strict=True):
        assert (
            column.nbytes == nbytes
            and padded % WIRE_ALIGN == 0
            and 0 <= padded - nbytes < WIRE_ALIGN
        )
        buffer[offset : offset + nbytes] = column.reshape(-1).view(np.uint8)
        offset += padded
    return buffer


def test_received_columns_unpack_to_the_same_updates():
    updates = [
        Update(
            np.array([3, 1, 4], np.int32),
            {"depth": np.array([1, 2, 3], np.int32), "parent": np.array([0, 0, 7], np.int32)},
        ),
        Update(
            np.zeros(0, np.int32), {"depth": np.zeros(0, np.int32), "parent": np.zeros(0, np.int32)}
        ),
        Update(
            np.array([9], np.int64), {"mass": np.array([[0.5, 0.25]]), "flag": np.array([True])}
        ),
    ]
    header = describe(updates)
    assert header.dtype == np.int64
    headers = described(header)
    buffer = receive(updates, headers)
    for before, after in zip(updates, unpack(header, buffer)):
        np.testing.assert_array_equal(after.ids, before.ids)
        assert after.ids.dtype == before.ids.dtype and list(after.values) == list(before.values)
        for name, column in before.values.items():
            np.testing.assert_array_equal(after.values[name], column)
            assert after.values[name].dtype == column.dtype


def test_slabs_and_bits_travel_without_ids_beside_updates():
    """A Slab (values by position over a block, or over every vertex) travels as its values
    alone, Bits as their bitmap and one value a column, the block in the header; Updates
    beside them keep their ids."""
    mask = np.array([1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1], bool)
    messages = [
        Slab(2, {"depth": np.array([4, 0, 9], np.int32), "parent": np.array([1, 1, 2], np.int32)}),
        Update(np.array([7], np.int64), {"depth": np.array([3], np.int32)}),
        Slab(None, {"rank": np.array([[0.5, 0.25], [1.0, 2.0]])}),
        Slab(0, {"rank": np.zeros(0)}),
        Bits.of(1, mask, {"depth": np.array([5], np.int32)}),
        Bits.of(None, mask[:0], {"depth": np.array([5], np.int32)}),
    ]
    header = describe(messages)
    assert [(kind, block) for kind, _, _, block in described(header)] == [
        (Slab, 2),
        (Update, None),
        (Slab, None),
        (Slab, 0),
        (Bits, 1),
        (Bits, None),
    ]
    by_nccl = unpack(header, receive(messages, described(header)))
    by_mpi = unpack(*pack(messages))
    for sent, got in [*zip(messages, by_nccl, strict=True), *zip(messages, by_mpi, strict=True)]:
        assert type(got) is type(sent)
        assert getattr(got, "block", "ids") == getattr(sent, "block", "ids")
        assert len(got) == len(sent)
        for array, arrived in zip(arrays_of(sent), arrays_of(got), strict=True):
            np.testing.assert_array_equal(arrived, array)
            assert arrived.dtype == array.dtype and arrived.shape == array.shape


def test_nothing_to_receive_is_no_update():
    assert described(describe([])) == []
    assert receive([], []).size == 0 and unpack(describe([]), np.empty(0, np.uint8)) == []


def test_a_piece_crosses_as_its_package_whole_its_counts_unread():
    """A Piece (a group of a package whose counts are still on the sender's device) travels
    as its package's whole buffers, counts and bound: the receiver gets the same group of a
    copy, which it reads the way the sender would once the counts are read."""
    counts = np.array([2, 0, 1], np.uint64)
    packed = Packed(
        np.array([4, 9, 6, 0], np.int32),
        {"depth": np.array([1, 1, 2, 0], np.int32), "parent": np.array([0, 3, 3, 0], np.int32)},
        counts,
        at_most=5,
    )
    messages = [Update(np.array([7], np.int64), {"depth": np.array([3], np.int32)})]
    messages += [packed.piece(2), Packed(packed.ids[:0], {}, counts[:1]).piece(0)]
    header = describe(messages)
    for got in (unpack(header, receive(messages, described(header))), unpack(*pack(messages))):
        update, piece, empty = got
        np.testing.assert_array_equal(update.ids, [7])
        assert piece.crossed and piece.group == 2 and piece.packed.at_most == 5
        assert empty.capacity == 0 and empty.packed.at_most is None
        for array, arrived in zip(arrays_of(messages[1]), arrays_of(piece), strict=True):
            np.testing.assert_array_equal(arrived, array)
            assert arrived.dtype == array.dtype and arrived.shape == array.shape
        piece.packed.learn(piece.packed.counts.tolist())
        np.testing.assert_array_equal(piece.update().ids, [6])
        np.testing.assert_array_equal(piece.update().values["parent"], [3])


def test_kept_columns_assemble_fresh_messages():
    """A transport that receives the same layout into the same buffer keeps the arrays
    (``columns_of``) and assembles new messages from them each round: a Piece's package
    learns its counts anew (what an earlier round learned does not leak into the next)."""
    counts = np.array([1, 2], np.uint64)
    packed = Packed(np.array([4, 9, 6], np.int32), {"depth": np.array([1, 1, 2], np.int32)}, counts)
    messages = [
        packed.piece(1),
        Update(np.array([7], np.int64), {"depth": np.array([3], np.int32)}),
    ]
    header = describe(messages)
    assert described(header) is described(header.copy())  # one layout a header, kept
    buffer = receive(messages, described(header))
    columns = columns_of(described(header), buffer)
    first, again = assembled(described(header), columns), assembled(described(header), columns)
    first[0].packed.learn([1, 2])
    assert not again[0].packed.known and again[0].packed is not first[0].packed
    np.testing.assert_array_equal(first[0].update().ids, [9, 6])
    buffer[: 3 * 4] = np.array([5, 8, 3], np.int32).view(np.uint8)  # the next round's bytes
    again[0].packed.learn([1, 2])
    np.testing.assert_array_equal(again[0].update().ids, [8, 3])
    np.testing.assert_array_equal(again[1].ids, [7])


def on_device(array):
    """``array`` as the transport sees a device array: its address and bytes."""
    return SimpleNamespace(data=SimpleNamespace(ptr=array.ctypes.data), nbytes=array.nbytes)


def delivered(messages, src=1):
    """``messages`` as the NCCL transport moves them: the sender's runs (``_runs``) copied
    byte for byte to where the receiver's spans (``_spans``, from the run counts and the
    header's layout) put them, the buffer's other bytes garbage; the messages assembled
    there, and the run counts."""
    arrays = [a for m in messages for a in arrays_of(m)]
    sent = _runs([on_device(a) for a in arrays])
    layout = described(describe(messages))
    spans = _spans(_sizes(layout), [n for *_, n in sent], src=src)
    buffer = np.full(sum(padded for _, padded in _sizes(layout)), 255, np.uint8)
    for (pointer, nbytes, _), (offset, size) in zip(sent, spans, strict=True):
        assert size == nbytes
        source = next(a for a in arrays if a.nbytes and a.ctypes.data == pointer)
        whole = np.frombuffer(source.base if source.base is not None else source, np.uint8)
        start = pointer - whole.ctypes.data
        buffer[offset : offset + nbytes] = whole[start : start + nbytes]
    return assembled(layout, columns_of(layout, buffer)), [n for *_, n in sent]


DTYPES = [np.int32, np.int64, np.uint8, np.float32, np.float64]


@st.composite
def wire_messages(draw):
    """A round's messages to one peer: packages laid out as they travel (a keyed kernel's, a
    few owners, with or without a follower) and Updates of arrays apart, any lengths (0
    included) and dtypes."""
    messages = []
    for _ in range(draw(st.integers(0, 4))):
        n = draw(st.integers(0, 9))
        ids_dtype, key_dtype = draw(st.sampled_from(DTYPES[:2])), draw(st.sampled_from(DTYPES))
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        if draw(st.booleans()):
            parts = draw(st.integers(1, 5))
            columns = [(n, ids_dtype), (n, key_dtype)]
            if draw(st.booleans()):
                columns.append((n, draw(st.sampled_from(DTYPES))))
            ids, *values, counts = laid_out(np, [*columns, (parts, np.uint64)])
            for array in (ids, *values, counts):
                array[:] = rng.integers(0, 100, array.shape[0])
            names = ["key", "follower"][: len(values)]
            packed = Packed(ids, dict(zip(names, values, strict=True)), counts)
            messages.append(packed.piece(draw(st.integers(0, parts - 1))))
        else:
            ids = rng.integers(0, 100, n).astype(ids_dtype)
            messages.append(Update(ids, {"key": rng.integers(0, 100, n).astype(key_dtype)}))
    return messages


@given(wire_messages())
@examples(60)
def test_any_round_of_laid_out_packages_and_arrays_apart_arrives_equal(messages):
    """Whatever mix a round holds, each laid-out package with bytes goes in one send, each
    array apart in its own, and every message arrives with the arrays it was sent with."""
    got, runs = delivered(messages)
    for message, arrived in zip(messages, got, strict=True):
        assert type(arrived) is type(message)
        for array, copy in zip(arrays_of(message), arrays_of(arrived), strict=True):
            assert copy.dtype == array.dtype and copy.shape == array.shape
            np.testing.assert_array_equal(copy, array)
    pieces = [m for m in messages if isinstance(m, Piece)]
    apart = sum(a.nbytes > 0 for m in messages if isinstance(m, Update) for a in arrays_of(m))
    assert len(runs) <= apart + len(pieces)  # (adjacent by chance: fewer)
    assert sum(runs) == sum(a.nbytes > 0 for m in messages for a in arrays_of(m))


def test_a_laid_out_package_travels_as_one_send_where_the_receiver_finds_it():
    """A package whose arrays lie one after another as the wire places them (``laid_out``:
    a keyed kernel's) goes as one send; arrays apart go one a send. The receiver's spans
    (from the header's run counts and the layout) take the same bytes to the places
    ``columns_of`` reads, so that the messages arrive equal."""
    ids, depth, parent, counts = laid_out(
        np, [(5, np.int32), (5, np.int32), (5, np.int64), (3, np.uint64)]
    )
    ids[:], depth[:], parent[:], counts[:] = [4, 9, 6, 0, 2], [1, 1, 2, 0, 3], range(5), [2, 0, 1]
    packed = Packed(ids, {"depth": depth, "parent": parent}, counts, at_most=5)
    apart = Update(np.array([7, 8], np.int64), {"depth": np.array([3, 4], np.int32)})
    empty = Packed(np.zeros(0, np.int32), {}, np.zeros(1, np.uint64))
    messages = [packed.piece(2), apart, empty.piece(0)]
    got, runs = delivered(messages)
    assert runs == [4, 1, 1, 1]  # the package's four arrays, then one each
    for message, arrived in zip(messages, got, strict=True):
        for array, copy in zip(arrays_of(message), arrays_of(arrived), strict=True):
            np.testing.assert_array_equal(copy, array)
    assert got[0].group == 2 and got[0].packed.at_most == 5
    layout = described(describe(messages))
    with pytest.raises(CommunicationError, match="rank 1 sends 3 arrays"):
        _spans(_sizes(layout), [1, 1, 1], src=1)
