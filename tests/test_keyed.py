"""The keyed kernels (``bspgraph.enactor._keyed_kernels``) on each array library: the CUDA
kernels on a GPU and NumPy's array operations with their semantics give the same packages,
listings and applied blocks, and read no count to the host."""

from types import SimpleNamespace

import numpy as np
import pytest

import bspgraph as bg
from bspgraph.backend import fused, to_host
from bspgraph.comm import Packed, Piece
from bspgraph.comm.message import Bits, Slab
from bspgraph.enactor import combiners
from bspgraph.enactor._keyed_kernels import MODES

BACKENDS = ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)]


def kernels_of(graph, state, columns, mode="min", adds=False):
    return fused.lookup("keyed", graph.backend, "step")(graph, state, columns, MODES[mode], adds)


@pytest.fixture(params=BACKENDS)
def graph(request):
    return bg.generators.rmat(12, 8, seed=2, backend=request.param)


@pytest.mark.parametrize("parts", [2, 5])
@pytest.mark.parametrize("follower", [False, True])
@pytest.mark.parametrize("listed", [False, True])
def test_a_package_packed_by_owner_holds_every_entry_in_its_owners_slice(
    graph, parts, follower, listed
):
    """Each other owner's entries in its slice, with their values; the sender's own (owner
    1 here) left out: its slice is empty. A kernel's list packs its counted ids only (the
    count read on the device)."""
    xp, n = graph.xp, graph.num_vertices
    rng = np.random.default_rng(parts)
    owner = rng.integers(0, parts, n).astype(np.int32)
    depth = rng.integers(0, 100, n).astype(np.int32)
    parent = rng.integers(0, n, n).astype(graph.indices.dtype)
    state = SimpleNamespace(
        depth=xp.asarray(depth), parent=xp.asarray(parent) if follower else None
    )
    ids = rng.choice(n, 3000, replace=False).astype(graph.indices.dtype)
    kernels = kernels_of(graph, state, ("depth", "parent" if follower else None))
    if listed:  # 3000 listed, then ids beyond the count
        rest = np.setdiff1d(np.arange(n), ids)[:500].astype(ids.dtype)
        count = xp.asarray(np.array([ids.size, 0], dtype=np.uint64))
        packed = kernels.pack(
            xp.asarray(owner), parts, 1, xp.asarray(np.concatenate([ids, rest])), count
        )
    else:
        packed = kernels.pack(xp.asarray(owner), parts, 1, xp.asarray(ids))
    update = packed.update(to_host(packed.counts).tolist())  # (the enactor reads every part's)
    counts = np.bincount(owner[ids], minlength=parts)
    counts[1] = 0
    assert update.bounds == tuple(np.cumsum([0, *counts]))
    got = to_host(update.ids)
    for o, piece in enumerate(update.by_owner()):
        mine = to_host(piece.ids)
        expected = [] if o == 1 else ids[owner[ids] == o].tolist()
        assert sorted(mine.tolist()) == sorted(expected)
        np.testing.assert_array_equal(to_host(piece.values["depth"]), depth[mine])
        if follower:
            np.testing.assert_array_equal(to_host(piece.values["parent"]), parent[mine])
    assert sorted(got.tolist()) == sorted(ids[owner[ids] != 1].tolist())


@pytest.mark.parametrize(  # (replace has no value for "nothing sent": it never takes Bits)
    ("dense", "mode"),
    [("slab", "min"), ("slab", "max"), ("slab", "replace"), ("bits", "min"), ("bits", "max")],
)
def test_a_slab_applied_in_one_pass_equals_the_combiners(graph, mode, dense):
    """apply_block against the combiners' own apply, on a block of a float key with a
    follower (min and max) or alone (replace): a Slab, or Bits (one value where a bit is set,
    nothing elsewhere)."""
    xp, n = graph.xp, graph.num_vertices
    rng = np.random.default_rng(7)
    key = rng.integers(0, 20, n).astype(np.float64)
    follower = rng.integers(0, n, n).astype(np.int32) if mode != "replace" else None
    size = 1003  # (Bits: a last byte not whole)
    block = slice(n // 3, n // 3 + size)
    incoming = rng.integers(0, 20, size).astype(np.float64)
    incoming_follower = rng.integers(0, n, size).astype(np.int32)
    if dense == "bits":  # what Bits stand for: the one value at the set bits
        inside = rng.random(size) < 0.3
        incoming = np.where(inside, 9.0, np.inf if mode == "min" else -np.inf)
        incoming_follower = np.full(size, 5, dtype=np.int32)
    state = SimpleNamespace(
        key=xp.array(key), follower=None if follower is None else xp.array(follower)
    )
    kernels = kernels_of(graph, state, ("key", None if follower is None else "follower"), mode)
    marked_before = np.zeros(n, dtype=bool)
    marked_before[::7] = True  # (a returned vertex: marked already, not counted again)
    mark = xp.array(marked_before)
    values = {"key": xp.asarray(incoming), "follower": xp.asarray(incoming_follower)}
    message = Slab(None, values)
    if dense == "bits":
        one = {"key": xp.asarray([9.0]), "follower": xp.asarray([5], dtype=np.int32)}
        message = Bits.of(None, xp.asarray(inside), one)
    tally = kernels.apply_block(block, message, mark)
    combined, changed = combiners.get(mode, "test").apply(np, key[block], incoming)
    expected_key = key.copy()
    expected_key[block] = combined
    np.testing.assert_array_equal(to_host(state.key), expected_key)
    expected_mark = marked_before.copy()
    expected_mark[block] |= changed
    np.testing.assert_array_equal(to_host(mark), expected_mark)
    fresh = np.flatnonzero(expected_mark & ~marked_before)
    degree = to_host(graph.cost_degrees()[0])
    assert to_host(tally).tolist() == [fresh.size, int(degree[fresh].sum())]
    if follower is not None:
        expected_follower = follower.copy()
        expected_follower[block] = np.where(changed, incoming_follower, follower[block])
        np.testing.assert_array_equal(to_host(state.follower), expected_follower)


@pytest.mark.parametrize("follower", [False, True])
def test_pieces_and_a_counted_list_are_listed_as_their_entries(graph, follower):
    """``list`` of a returned list with its count on the device and of two Pieces (groups
    of packages counted on the device, one of them empty) beside an Update: the key combined
    entry by entry in turn (a follower along with its winner), and each winner, and each
    returned vertex kept, listed once with its out-edges; the same as plain arithmetic."""
    xp, n = graph.xp, graph.num_vertices
    rng = np.random.default_rng(3)
    depth = rng.integers(5, 50, n).astype(np.int32)
    parent = np.full(n, -1, dtype=graph.indices.dtype)
    state = SimpleNamespace(depth=xp.array(depth), parent=xp.array(parent) if follower else None)
    kernels = kernels_of(graph, state, ("depth", "parent" if follower else None))
    owner = xp.asarray(rng.integers(0, 3, n).astype(np.int32))
    # a sender's state and package: its groups by owner 0, 1, 2 (owner 1, the sender, empty)
    sent = rng.choice(n, 600, replace=False).astype(graph.indices.dtype)
    sender = SimpleNamespace(
        depth=xp.asarray(rng.integers(0, 50, n).astype(np.int32)),
        parent=xp.asarray(np.arange(n, dtype=graph.indices.dtype)),
    )
    packing = kernels_of(graph, sender, ("depth", "parent" if follower else None))
    packed = packing.pack(owner, 3, 1, xp.asarray(sent))
    pieces = [Piece(packed, 2), Piece(packed, 1)]  # (group 1: the sender's own, empty)
    arrived = np.array([4, 9, 16], dtype=graph.indices.dtype)
    update = bg.comm.Update(
        xp.asarray(arrived),
        {"depth": xp.asarray(np.zeros(3, np.int32)), "parent": xp.asarray(arrived)},
    )
    returned_ids = np.concatenate([rng.choice(n, 50, replace=False), [0, 1, 2]]).astype(
        arrived.dtype
    )
    listed = (xp.asarray(returned_ids), xp.asarray(np.array([50, 0], dtype=np.uint64)))
    keep = rng.random(n) < 0.5
    frontier = kernels.list(listed, xp.asarray(keep), [pieces[0], update, pieces[1]], 1)
    # plain arithmetic, in the same order
    expected, seen = [], set()
    first = returned_ids[:50]
    expected += [v for v in first[keep[first]].tolist() if not (v in seen or seen.add(v))]
    owners = to_host(owner)
    key, follows = depth.copy(), parent.copy()
    sender_depth = to_host(sender.depth)
    for ids, values, fol in (
        (sent[owners[sent] == 2], sender_depth[sent[owners[sent] == 2]], sent[owners[sent] == 2]),
        (arrived, np.zeros(3, np.int32), arrived),
    ):
        won = values < key[ids]
        key[ids[won]] = values[won]
        follows[ids[won]] = fol[won]
        expected += [v for v in ids[won].tolist() if not (v in seen or seen.add(v))]
    assert sorted(to_host(frontier.ids).tolist()) == sorted(expected)
    degree = to_host(graph.cost_degrees()[0])
    assert frontier.out_edges == int(degree[expected].sum())
    np.testing.assert_array_equal(to_host(state.depth), key)
    if follower:
        np.testing.assert_array_equal(to_host(state.parent), follows)
    packed.learn(to_host(packed.counts).tolist())
    assert len(pieces[1]) == 0 and len(pieces[0]) == int((owners[sent] == 2).sum())


@pytest.mark.parametrize("adds", [False, True])
def test_many_arrivals_are_combined_and_marked_in_a_mask(graph, adds):
    """``apply_updates`` (a heavy level's Updates: many arrived vertices, marked in a mask
    where ``list`` would list them): an Update and a Piece (a package's group counted on the
    device) beside an empty one, in turn, combined into a min key and its follower (taken
    where the key wins, or with ``adds`` added where it ties: Brandes' path counts), the
    vertices they changed marked (those marked before stay so), each entry's vertex taking
    the added follower's value as its baseline; the same as the combiners' arithmetic."""
    xp, n = graph.xp, graph.num_vertices
    rng = np.random.default_rng(5)
    depth = rng.integers(1, 6, n).astype(np.int32)
    sigma = rng.integers(1, 9, n).astype(np.float64)
    base = sigma - rng.integers(0, 3, n)
    state = SimpleNamespace(depth=xp.array(depth), sigma=xp.array(sigma))
    kernels = kernels_of(graph, state, ("depth", "sigma"), adds=adds)
    kernels.bases = {"sigma": xp.array(base)} if adds else {}
    ids = rng.choice(n, 2 * n // 3, replace=False).astype(graph.indices.dtype)
    first, second = ids[: n // 3], ids[n // 3 :]  # (distinct from each other too)
    arriving = (depth[ids] + rng.integers(-1, 2, ids.size)).astype(np.int32)  # win, tie, lose
    change = rng.integers(0, 3, ids.size).astype(np.float64)  # zeros among them
    update = bg.comm.Update(
        xp.asarray(first),
        {"depth": xp.asarray(arriving[: n // 3]), "sigma": xp.asarray(change[: n // 3])},
    )
    sender = SimpleNamespace(depth=xp.zeros(n, np.int32), sigma=xp.zeros(n))
    sender.depth[xp.asarray(second)] = xp.asarray(arriving[n // 3 :])
    sender.sigma[xp.asarray(second)] = xp.asarray(change[n // 3 :])
    packing = kernels_of(graph, sender, ("depth", "sigma"), adds=adds)
    owner = xp.zeros(n, dtype=np.int32)
    owner[xp.asarray(second)] = 1
    packed = packing.pack(owner, 3, 0, xp.asarray(second))  # (group 0: the sender's own)
    mark = xp.asarray(rng.random(n) < 0.1)
    before = to_host(mark).copy()
    empty = bg.comm.Update(
        xp.asarray(first[:0]), {"depth": xp.zeros(0, np.int32), "sigma": xp.zeros(0)}
    )
    kernels.apply_updates([update, Piece(packed, 1), empty], mark)
    won, tied = arriving < depth[ids], arriving == depth[ids]
    if adds:
        combined, changed = combiners.Add(follows="depth").apply(np, sigma[ids], change, won, tied)
    else:
        combined, changed = np.where(won, change, sigma[ids]), won
    expected_depth, expected_sigma = depth.copy(), sigma.copy()
    expected_depth[ids], expected_sigma[ids] = np.minimum(arriving, depth[ids]), combined
    np.testing.assert_array_equal(to_host(state.depth), expected_depth)
    np.testing.assert_array_equal(to_host(state.sigma), expected_sigma)
    expected_mark = before.copy()
    expected_mark[ids[changed]] = True
    np.testing.assert_array_equal(to_host(mark), expected_mark)
    if adds:
        expected_base = base.copy()
        expected_base[ids] = expected_sigma[ids]
        np.testing.assert_array_equal(to_host(kernels.bases["sigma"]), expected_base)


def test_a_piece_is_handed_over_in_one_memory_and_crosses_a_link_whole():
    """The in-process transport hands a Piece over as it is, counted once its package's
    counts are read; across devices (``wire``) its package's whole buffers and counts cross,
    a copy, its bytes counted when sent, the message once the sender's counts are read and
    only where it holds entries (as a transport that reads them first sends none)."""
    counts = np.array([0, 2], dtype=np.uint64)
    packed = Packed(np.array([5, 8, 0]), {"depth": np.array([1, 2, 0], np.int32)}, counts)
    local = bg.comm.Local(2)
    inbox, stats = local.exchange_round([(0, 1, packed.piece(1))], num_vertices=10)
    assert inbox[1] == [stats.pending[0][2]] and stats.messages == 0
    traffic = bg.comm.CommStats.of([stats])
    with pytest.raises(RuntimeError, match="still on the device"):
        traffic.settled()
    packed.learn(counts.tolist())
    settled = traffic.settled()
    assert (settled.messages, settled.bytes, settled.max_ids) == (1, 2 * (8 + 4), 2)
    np.testing.assert_array_equal(inbox[1][0].update().ids, [5, 8])

    sent = Packed(packed.ids.copy(), {"depth": packed.values["depth"].copy()}, counts.copy())
    inbox, stats = bg.comm.Local(2, wire=True).exchange_round(
        [(0, 1, sent.piece(1))], num_vertices=10
    )
    (arrived,) = inbox[1]
    assert arrived.crossed and arrived.packed is not sent and arrived.packed.ids is not sent.ids
    assert (stats.messages, stats.bytes) == (0, 3 * 8 + 2 * 8 + 3 * 4)  # ids, counts, depth
    _, empty = bg.comm.Local(2, wire=True).exchange_round([(0, 1, sent.piece(0))], num_vertices=10)
    sent.learn(counts.tolist())
    settled = bg.comm.CommStats.of([stats, empty]).settled()
    assert (settled.messages, settled.bytes, settled.max_ids) == (1, 2 * 52, 2)  # one non-empty
    with pytest.raises(RuntimeError, match="still on the device"):
        len(arrived)  # the copy's counts: read where it arrived
    arrived.packed.learn(to_host(arrived.packed.counts).tolist())
    np.testing.assert_array_equal(arrived.update().ids, [5, 8])


@pytest.mark.parametrize("follower", [False, True])
def test_a_package_for_every_device_gathers_a_counted_list(graph, follower):
    """``gather``: a kernel's list and its count on the device (ids beyond the count are not
    members) make one group, the list itself beside its values, nothing read."""
    xp, n = graph.xp, graph.num_vertices
    depth = np.arange(n, dtype=np.int32) * 3
    parent = np.arange(n, dtype=graph.indices.dtype)[::-1].copy()
    state = SimpleNamespace(
        depth=xp.asarray(depth), parent=xp.asarray(parent) if follower else None
    )
    kernels = kernels_of(graph, state, ("depth", "parent" if follower else None))
    listed = np.array([7, 3, 11, 5, 9], dtype=graph.indices.dtype)  # 3 counted, then others
    tally = xp.asarray(np.array([3, 0], dtype=np.uint64))
    packed = kernels.gather(xp.asarray(listed), tally)
    assert to_host(packed.counts).tolist() == [3]
    packed.learn([3])
    update = Piece(packed, 0).update()
    np.testing.assert_array_equal(to_host(update.ids), [7, 3, 11])
    np.testing.assert_array_equal(to_host(update.values["depth"]), depth[[7, 3, 11]])
    if follower:
        np.testing.assert_array_equal(to_host(update.values["parent"]), parent[[7, 3, 11]])


def test_an_added_follower_travels_as_changes_and_adds_up_on_a_tie(graph):
    """A follower added on a tie of its key (``Add(follows="depth")``, Brandes' path counts):
    ``gather`` sends its changes since the baseline; ``list`` takes an arriving change where
    the key wins, adds it where the key ties (a zero change changes nothing), keeps the value
    where the key loses, lists what changed, and every vertex it touched takes its value as
    the baseline; ``apply_block`` combines a Slab as ``Add(follows=...)`` itself does."""
    xp, n = graph.xp, graph.num_vertices
    rng = np.random.default_rng(11)
    depth = rng.integers(1, 6, n).astype(np.int32)
    sigma = rng.integers(1, 9, n).astype(np.float64)
    base = sigma - rng.integers(0, 3, n)  # some vertices changed since the baseline
    state = SimpleNamespace(depth=xp.array(depth), sigma=xp.array(sigma))
    kernels = kernels_of(graph, state, ("depth", "sigma"), adds=True)
    kernels.bases = {"sigma": xp.array(base)}
    listed = np.array([7, 3, 11, 5], dtype=graph.indices.dtype)  # 3 counted
    packed = kernels.gather(xp.asarray(listed), xp.asarray(np.array([3, 0], np.uint64)))
    packed.learn([3])
    sent = Piece(packed, 0).update()
    np.testing.assert_array_equal(to_host(sent.values["sigma"]), (sigma - base)[[7, 3, 11]])

    ids = rng.choice(np.arange(20, n), 400, replace=False).astype(graph.indices.dtype)
    arriving = (depth[ids] + rng.integers(-1, 2, ids.size)).astype(np.int32)  # win, tie, lose
    change = rng.integers(0, 3, ids.size).astype(np.float64)  # zeros among them
    update = bg.comm.Update(
        xp.asarray(ids), {"depth": xp.asarray(arriving), "sigma": xp.asarray(change)}
    )
    returned = np.array([0, 1, 2], dtype=graph.indices.dtype)
    frontier = kernels.list(xp.asarray(returned), None, [update], 1)
    add = combiners.Add(follows="depth")
    won, tied = arriving < depth[ids], arriving == depth[ids]
    expected_sigma = sigma.copy()
    expected_sigma[ids], changed = add.apply(np, sigma[ids], change, won, tied)
    expected_depth = depth.copy()
    expected_depth[ids] = np.minimum(arriving, depth[ids])
    np.testing.assert_array_equal(to_host(state.depth), expected_depth)
    np.testing.assert_array_equal(to_host(state.sigma), expected_sigma)
    expected = sorted([*returned.tolist(), *ids[changed].tolist()])
    assert sorted(to_host(frontier.ids).tolist()) == expected
    expected_base = base.copy()
    touched = np.concatenate([returned, ids])
    expected_base[touched] = expected_sigma[touched]
    np.testing.assert_array_equal(to_host(kernels.bases["sigma"]), expected_base)

    block = slice(n // 2, n // 2 + 500)
    held_depth, held_sigma = to_host(state.depth)[block].copy(), to_host(state.sigma)[block].copy()
    incoming = (held_depth + rng.integers(-1, 2, 500)).astype(np.int32)
    incoming_sigma = rng.integers(0, 3, 500).astype(np.float64)
    mark = xp.zeros(n, dtype=bool)
    values = {"depth": xp.asarray(incoming), "sigma": xp.asarray(incoming_sigma)}
    tally = kernels.apply_block(block, Slab(None, values), mark)
    won, tied = incoming < held_depth, incoming == held_depth
    combined, changed = add.apply(np, held_sigma, incoming_sigma, won, tied)
    np.testing.assert_array_equal(to_host(state.sigma)[block], combined)
    np.testing.assert_array_equal(to_host(state.depth)[block], np.minimum(incoming, held_depth))
    np.testing.assert_array_equal(
        np.flatnonzero(to_host(mark)), np.flatnonzero(changed) + block.start
    )
    assert int(to_host(tally)[0]) == int(changed.sum())

    block = slice(n // 4, n // 4 + 501)  # Bits (one value a column), a length not of whole bytes
    held_depth, held_sigma = to_host(state.depth)[block].copy(), to_host(state.sigma)[block].copy()
    inside = rng.random(501) < 0.4
    one = {"depth": xp.asarray([3], dtype=np.int32), "sigma": xp.asarray([2.0])}
    mark = xp.zeros(n, dtype=bool)
    tally = kernels.apply_block(block, Bits.of(None, xp.asarray(inside), one), mark)
    won, tied = inside & (3 < held_depth), inside & (held_depth == 3)
    combined, changed = add.apply(np, held_sigma, np.where(inside, 2.0, 0.0), won, tied)
    np.testing.assert_array_equal(to_host(state.sigma)[block], combined)
    np.testing.assert_array_equal(to_host(state.depth)[block], np.where(won, 3, held_depth))
    np.testing.assert_array_equal(
        np.flatnonzero(to_host(mark)), np.flatnonzero(changed) + block.start
    )
    assert int(to_host(tally)[0]) == int(changed.sum())
