"""Communicators deliver exactly the right (id, value) set to every device, with exact counts."""

import threading
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import examples

import bspgraph as bg
from bspgraph import comm
from bspgraph.comm import (
    Broadcast,
    Butterfly,
    CommStats,
    Local,
    RoundStats,
    Selective,
    Slab,
    Transport,
    Update,
    concat,
    wire_bytes,
)

FANOUTS = [1, 2, 3, 4]


def communicators():
    return [Broadcast(), Selective(), *(Butterfly(fanout=f) for f in FANOUTS)]


def combine(a: Update, b: Update) -> Update:
    """min on depth (the parent of the smaller (depth, parent) travels with it), sum on mass."""
    for u in (a, b):  # the contract: two non-empty updates, each with distinct ids
        assert len(u) and len(np.unique(u.ids)) == len(u)
    u = concat([a, b])
    depth, parent, mass = u.values["depth"], u.values["parent"], u.values["mass"]
    order = np.lexsort((parent, depth, u.ids))
    ids = u.ids[order]
    first = np.ones(len(ids), dtype=bool)
    first[1:] = ids[1:] != ids[:-1]
    return Update(
        ids[first],
        {
            "depth": depth[order][first],
            "parent": parent[order][first],
            "mass": np.add.reduceat(mass[order], np.flatnonzero(first)),
        },
    )


def make_updates(rng, parts, num_vertices, id_dtype=np.int32):
    updates = []
    for _ in range(parts):
        size = rng.choice([0, num_vertices, int(rng.integers(0, num_vertices + 1))])
        ids = rng.choice(num_vertices, size=size, replace=False).astype(id_dtype)
        updates.append(
            Update(
                ids,
                {
                    "depth": rng.integers(0, 4, size).astype(np.int32),
                    "parent": rng.integers(0, num_vertices, size).astype(id_dtype),
                    "mass": rng.integers(0, 100, size).astype(np.int64),
                },
            )
        )
    return updates


def expected(updates, owner, to_all, d):
    """{id: (depth, parent, mass)}: device d's share of every other device's update."""
    out = {}
    for o, u in enumerate(updates):
        if o == d:
            continue
        for i, depth, parent, mass in zip(
            u.ids.tolist(),
            u.values["depth"].tolist(),
            u.values["parent"].tolist(),
            u.values["mass"].tolist(),
        ):
            if to_all or owner[i] == d:
                old = out.get(i)
                if old is None:
                    out[i] = (depth, parent, mass)
                else:
                    out[i] = (*min(old[:2], (depth, parent)), old[2] + mass)
    return out


def as_dict(inbox: list[Update]):
    """{id: (depth, parent, mass)}: an inbox folded as ``combine`` folds (a contribution that
    arrived twice shows in the mass)."""
    out = {}
    for update in inbox:
        ids = update.ids.tolist()
        assert ids and len(set(ids)) == len(ids), "non-empty, one entry per id"
        assert set(update.values) == {"depth", "parent", "mass"}
        columns = [update.values[n].tolist() for n in ("depth", "parent", "mass")]
        for k, i in enumerate(ids):
            depth, parent, mass = (c[k] for c in columns)
            old = out.get(i)
            out[i] = (
                (depth, parent, mass)
                if old is None
                else (*min(old[:2], (depth, parent)), old[2] + mass)
            )
    return out


def butterfly_formula(parts, fanout):
    """(messages, rounds), computed here independently of the implementation's plan."""
    radix = max(fanout, 2)
    digits = 0
    while radix ** (digits + 1) <= parts:
        digits += 1
    top = parts // radix**digits
    core = top * radix**digits
    extras = parts - core
    messages = core * (digits * (radix - 1) + (top - 1)) + 2 * extras
    rounds = digits + (top > 1) + 2 * (extras > 0)
    return messages, rounds


@st.composite
def exchanges(draw):
    parts = draw(st.integers(1, 5))
    num_vertices = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    owner = rng.integers(0, parts, num_vertices).astype(np.int32)
    id_dtype = draw(st.sampled_from([np.int32, np.int64]))
    return parts, num_vertices, owner, make_updates(rng, parts, num_vertices, id_dtype)


@given(exchanges(), st.booleans())
def test_every_communicator_delivers_exactly_the_right_set(case, to_all):
    parts, num_vertices, owner, updates = case
    for pattern in communicators():
        transport = Local(parts, record=True)
        received, stats = pattern.exchange(
            updates, owner=owner, to_all=to_all, combine=combine, transport=transport
        )
        assert len(received) == parts
        for d in range(parts):
            assert as_dict(received[d]) == expected(updates, owner, to_all, d), (pattern, d)
        check_counts(pattern, stats, transport, updates, owner, to_all, num_vertices)


def packed_by_owner(update: Update, owner, parts: int) -> Update:
    """``update`` with its entries grouped by owner and ``bounds`` set (as pack_best does)."""
    keys = owner[update.ids]
    grouped = update.take(np.argsort(keys, kind="stable"))
    bounds = tuple(np.cumsum([0, *np.bincount(keys, minlength=parts)]).tolist())
    return Update(grouped.ids, grouped.values, bounds)


@given(exchanges(), st.booleans())
def test_updates_packed_by_owner_are_delivered_alike(case, to_all):
    """Selective sends a packed Update's slices (no split): the same inboxes and counts."""
    parts, num_vertices, owner, updates = case
    packed = [packed_by_owner(u, owner, parts) for u in updates]
    for pattern in communicators():
        transport = Local(parts, record=True)
        received, stats = pattern.exchange(
            packed, owner=owner, to_all=to_all, combine=combine, transport=transport
        )
        for d in range(parts):
            assert as_dict(received[d]) == expected(updates, owner, to_all, d), (pattern, d)
        check_counts(pattern, stats, transport, updates, owner, to_all, num_vertices)


def test_update_bounds_are_checked_and_slice_by_owner():
    u = Update(np.array([4, 9, 2]), {"depth": np.array([1, 2, 3])}, bounds=(0, 2, 2, 3))
    pieces = u.by_owner(skip=1)
    assert pieces[1] is None and pieces[0].ids.tolist() == [4, 9] and len(pieces[2]) == 1
    with pytest.raises(ValueError, match=r"Update\(bounds=\(0, 2\)\): expected offsets"):
        Update(np.array([4, 9, 2]), {}, bounds=(0, 2))


def check_counts(pattern, stats, transport, updates, owner, to_all, num_vertices):
    parts = transport.size
    log = transport.log
    assert stats.rounds == len(log)
    assert stats.messages == sum(len(r) for r in log)
    assert stats.bytes == sum(m.bytes for r in log for m in r)
    if isinstance(pattern, Broadcast):
        assert stats.messages == parts * (parts - 1) == Broadcast.message_count(parts)
        assert stats.rounds == int(parts > 1)
    elif isinstance(pattern, Selective):
        nonempty = [len(u) > 0 for u in updates]
        if to_all:
            want = (parts - 1) * sum(nonempty)
        else:
            want = sum(len(set(owner[u.ids].tolist()) - {d}) for d, u in enumerate(updates))
        assert stats.messages == want
        assert all(m.ids for r in log for m in r)  # only non-empty messages
        assert stats.rounds == int(parts > 1)
    else:
        messages, rounds = butterfly_formula(parts, pattern.fanout)
        assert (stats.messages, stats.rounds) == (messages, rounds)
        assert (pattern.message_count(parts), pattern.rounds(parts)) == (messages, rounds)
        # every message is one combined Update: at most V ids; a round's inbox at most (f-1)·V
        assert stats.max_ids <= num_vertices
        assert stats.max_inbox_ids <= (pattern.radix - 1) * num_vertices
        for r in log:  # at most f - 1 sends per device per round
            per_device = np.bincount([m.src for m in r], minlength=parts)
            assert per_device.max(initial=0) <= pattern.radix - 1


@pytest.mark.parametrize("fanout", FANOUTS)
@pytest.mark.parametrize("to_all", [False, True])
def test_butterfly_counts_for_p_up_to_17(fanout, to_all):
    rng = np.random.default_rng(fanout)
    for parts in range(1, 18):
        owner = rng.integers(0, parts, 50).astype(np.int32)
        updates = make_updates(rng, parts, 50)
        pattern = Butterfly(fanout=fanout)
        transport = Local(parts, record=True)
        received, stats = pattern.exchange(
            updates, owner=owner, to_all=to_all, combine=combine, transport=transport
        )
        for d in range(parts):
            assert as_dict(received[d]) == expected(updates, owner, to_all, d)
        check_counts(pattern, stats, transport, updates, owner, to_all, 50)


@pytest.mark.parametrize(
    "parts, fanout, messages, rounds",
    [
        (1, 2, 0, 0),
        (2, 2, 2, 1),
        (16, 1, 64, 4),  # the paper's fanout 1 on 16 GPUs: 64 messages
        (16, 2, 64, 4),
        (16, 4, 96, 2),  # groups 0-3, then 0,4,8,12 (the paper's Fig. 2)
        (8, 2, 24, 3),
        (9, 1, 26, 5),  # 8-device butterfly, device 8 folds onto device 0
        (3, 4, 6, 1),  # r >= P: one round of broadcast
        (12, 4, 60, 2),  # mixed radix 4 x 3
        (5, 4, 14, 3),
        (27, 3, 162, 3),
    ],
)
def test_butterfly_formula_literals(parts, fanout, messages, rounds):
    pattern = Butterfly(fanout=fanout)
    assert (pattern.message_count(parts), pattern.rounds(parts)) == (messages, rounds)
    assert butterfly_formula(parts, fanout) == (messages, rounds)


def test_butterfly_follows_the_papers_partners():
    transport = Local(16, record=True)
    updates = [Update(np.array([d], np.int32), {}) for d in range(16)]
    Butterfly(fanout=4).exchange(
        updates,
        owner=np.arange(16),
        to_all=True,
        combine=lambda a, b: concat([a, b]),
        transport=transport,
    )
    into_zero = [sorted(m.src for m in r if m.dst == 0) for r in transport.log]
    assert into_zero == [[1, 2, 3], [4, 8, 12]]
    transport = Local(16, record=True)
    Butterfly(fanout=1).exchange(
        updates,
        owner=np.arange(16),
        to_all=True,
        combine=lambda a, b: concat([a, b]),
        transport=transport,
    )
    assert [sorted(m.src for m in r if m.dst == 0) for r in transport.log] == [[1], [2], [4], [8]]


def test_butterfly_messages_stay_bounded_when_every_device_changes_everything():
    parts, num_vertices = 8, 64
    owner = np.arange(num_vertices) % parts
    full = Update(
        np.arange(num_vertices, dtype=np.int32),
        {
            "depth": np.zeros(num_vertices, np.int32),
            "parent": np.zeros(num_vertices, np.int32),
            "mass": np.ones(num_vertices, np.int64),
        },
    )
    for to_all in (False, True):
        pattern = Butterfly(fanout=2)
        received, stats = pattern.exchange(
            [full] * parts, owner=owner, to_all=to_all, combine=combine, transport=Local(parts)
        )
        assert stats.max_ids <= num_vertices  # combined on the way: never P·V
        for d in range(parts):  # the sum counts every other device once
            assert {mass for _, _, mass in as_dict(received[d]).values()} == {parts - 1}
            assert len(received[d]) <= pattern.radix  # combined on the way, the last round not
        _, broadcast = Broadcast().exchange(
            [full] * parts, owner=owner, to_all=to_all, combine=combine, transport=Local(parts)
        )
        assert broadcast.max_inbox_ids == (parts - 1) * num_vertices
        # all-gather: the whole vertex set each round; routing: half of it goes each way
        assert stats.max_inbox_ids == (num_vertices if to_all else num_vertices // 2)
        assert stats.bytes < broadcast.bytes


def test_bytes_are_the_ids_and_values_handed_over():
    few = Update(np.array([1, 5], np.int32), {"x": np.zeros(2, np.float64)})
    many = Update(np.arange(20, dtype=np.int64), {"x": np.zeros(20, np.float64)})
    slab = Slab(1, {"x": np.zeros(7, np.float32), "y": np.zeros(7, np.int64)})
    assert (wire_bytes(few), wire_bytes(many), wire_bytes(slab)) == (8 + 16, 160 + 160, 28 + 56)
    transport = Local(2, record=True)
    _, stats = transport.exchange_round([(0, 1, few), (1, 0, many)], num_vertices=64)
    assert stats == RoundStats(messages=2, bytes=24 + 320, max_ids=20, max_inbox_ids=20)
    assert [(m.src, m.dst, m.ids, m.bytes) for m in transport.log[0]] == [
        (0, 1, 2, 24),
        (1, 0, 20, 320),
    ]


@given(exchanges(), st.booleans())
def test_message_bytes_are_what_the_message_holds(case, to_all):
    parts, num_vertices, owner, updates = case
    per_id = updates[0].ids.dtype.itemsize + sum(
        v.dtype.itemsize for v in updates[0].values.values()
    )
    for pattern in communicators():
        transport = Local(parts, record=True)
        pattern.exchange(updates, owner=owner, to_all=to_all, combine=combine, transport=transport)
        for message in (m for r in transport.log for m in r):
            assert message.bytes == message.ids * per_id


def test_local_transport_with_backends_moves_to_each_device():
    backends = [bg.get_backend("numpy")] * 3
    owner = np.array([0, 1, 2, 0])
    updates = make_updates(np.random.default_rng(0), 3, 4)
    for pattern in communicators():
        received, _ = pattern.exchange(
            updates, owner=owner, combine=combine, transport=Local(backends)
        )
        for d in range(3):
            assert as_dict(received[d]) == expected(updates, owner, False, d)


def test_one_device_receives_nothing():
    update = make_updates(np.random.default_rng(1), 1, 5)[0]
    for pattern in communicators():
        received, stats = pattern.exchange(
            [update],
            owner=np.zeros(5, np.int32),
            to_all=True,
            combine=combine,
            transport=Local(1),
        )
        assert received == [[]]
        assert stats == CommStats()


class _Threaded(Transport):
    """One rank of P, in a thread: sends go to a shared mailbox, a barrier ends each round, as
    a one-process-per-device transport (NCCL, MPI) would behave."""

    def __init__(self, shared, rank, size):
        self.shared, self.size, self.local, self.round = shared, size, (rank,), 0

    def exchange_round(self, sends, *, num_vertices):
        box, lock, barrier = self.shared
        (rank,) = self.local
        with lock:
            for src, dst, update in sends:
                assert src == rank, "a rank sends only from its own device"
                box[self.round, dst].append((src, update))
        barrier.wait(timeout=10)
        with lock:
            arrived = sorted(box.pop((self.round, rank), []), key=lambda item: item[0])
        self.round += 1
        inbox = [[] for _ in range(self.size)]
        inbox[rank] = [u for _, u in arrived]
        nbytes = sum(wire_bytes(u) for _, _, u in sends)
        return inbox, RoundStats(len(sends), nbytes)


@pytest.mark.parametrize("parts", [3, 5, 6])
@pytest.mark.parametrize("to_all", [False, True])
def test_patterns_run_one_device_per_process(parts, to_all):
    """The same pattern code on one-rank transports gives the in-process answer and counts."""
    rng = np.random.default_rng(parts)
    owner = rng.integers(0, parts, 30).astype(np.int32)
    updates = make_updates(rng, parts, 30)
    for pattern in communicators():
        reference, reference_stats = pattern.exchange(
            updates, owner=owner, to_all=to_all, combine=combine, transport=Local(parts)
        )
        shared = (defaultdict(list), threading.Lock(), threading.Barrier(parts))
        results, errors = [None] * parts, []

        def rank_main(rank, pattern=pattern, shared=shared, results=results, errors=errors):
            mine = [updates[d] if d == rank else None for d in range(parts)]
            try:
                results[rank] = pattern.exchange(
                    mine,
                    owner=owner,
                    to_all=to_all,
                    combine=combine,
                    transport=_Threaded(shared, rank, parts),
                )
            except Exception as error:  # reported below, in the main thread
                errors.append(error)
                shared[2].abort()

        threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(parts)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        for rank, (received, _stats) in enumerate(results):
            assert all(received[d] is None for d in range(parts) if d != rank)
            assert as_dict(received[rank]) == as_dict(reference[rank])
        assert sum(s.messages for _, s in results) == reference_stats.messages
        assert sum(s.bytes for _, s in results) == reference_stats.bytes
        assert {s.rounds for _, s in results} == {reference_stats.rounds}


def test_get_by_name_and_instance():
    assert isinstance(comm.get("broadcast"), Broadcast)
    assert isinstance(comm.get("selective"), Selective)
    assert isinstance(comm.get("butterfly"), Butterfly) and comm.get("butterfly").fanout == 2
    custom = comm.Butterfly(fanout=4)
    assert comm.get(custom) is custom and repr(custom) == "Butterfly(fanout=4)"
    assert comm.get("butterfly:3").fanout == 3 and comm.get("butterfly:1").radix == 2
    assert set(comm.REGISTRY) == {"broadcast", "selective", "butterfly"}
    for bad in ("butterfly:", "butterfly:x", "butterfly:-1"):
        with pytest.raises(ValueError, match=r"expected 'butterfly:F' with F an integer"):
            comm.get(bad)
    with pytest.raises(ValueError, match=r"Butterfly\(fanout=0\)"):
        comm.get("butterfly:0")


def test_get_unknown_name_lists_the_valid_ones():
    with pytest.raises(ValueError) as error:
        comm.get("butterfy")
    assert str(error.value) == (
        "unknown communicator 'butterfy'; expected one of 'broadcast', 'butterfly', "
        "'selective', or a Communicator instance"
    )


@pytest.mark.parametrize("fanout", [0, -2, 2.0, True])
def test_bad_fanout(fanout):
    with pytest.raises(ValueError, match=r"Butterfly\(fanout=.*\): expected an integer >= 1"):
        Butterfly(fanout=fanout)


def test_fanout_one_is_the_pairwise_butterfly():
    assert Butterfly(fanout=1).plan(13) == Butterfly(fanout=2).plan(13)


def test_bad_arguments_name_the_call():
    update = Update(np.array([0]), {})
    with pytest.raises(ValueError, match=r"Selective.exchange\(updates=...\): 1 updates for 2"):
        Selective().exchange([update], owner=np.zeros(1), combine=combine, transport=Local(2))
    with pytest.raises(ValueError, match=r"Butterfly.exchange\(updates\[1\]=None\)"):
        Butterfly().exchange([update, None], owner=np.zeros(1), combine=combine, transport=Local(2))
    with pytest.raises(
        ValueError, match=r"send 1 -> 1: expected two different devices in \[0, 2\)"
    ):
        Local(2).exchange_round([(1, 1, update)], num_vertices=1)
    with pytest.raises(ValueError, match=r"send 0 -> 2"):
        Local(2).exchange_round([(0, 2, update)], num_vertices=1)
    with pytest.raises(ValueError, match=r"Local\(devices=0\)"):
        Local(0)


def test_update_checks_its_shape():
    with pytest.raises(ValueError, match=r"Update\(ids=...\): ids must be a 1-D array"):
        Update(np.zeros((2, 2)), {})
    with pytest.raises(
        ValueError, match=r"Update\(values\['depth'\]\): expected an array with 2 rows"
    ):
        Update(np.array([1, 2]), {"depth": np.zeros(3)})
    u = Update(np.array([1, 2]), {"depth": np.array([5, 6])})
    assert len(u.empty()) == 0 and u.empty().values["depth"].dtype == u.values["depth"].dtype
    assert concat([u, u]).ids.tolist() == [1, 2, 1, 2]
    with pytest.raises(ValueError, match=r"value names differ"):
        concat([u, Update(np.array([3]), {"parent": np.array([0])})])


@pytest.mark.gpu
@pytest.mark.parametrize("to_all", [False, True])
def test_cupy_updates_equal_numpy(to_all):
    cupy_backend = bg.get_backend("cupy")
    xp = cupy_backend.xp
    rng = np.random.default_rng(5)
    parts = 5
    owner = rng.integers(0, parts, 200).astype(np.int32)
    updates = make_updates(rng, parts, 200)
    on_gpu = [
        Update(xp.asarray(u.ids), {n: xp.asarray(v) for n, v in u.values.items()}) for u in updates
    ]

    def combine_gpu(a, b):
        host = combine(
            *(
                Update(
                    bg.backend.to_host(u.ids),
                    {n: bg.backend.to_host(v) for n, v in u.values.items()},
                )
                for u in (a, b)
            )
        )
        return Update(xp.asarray(host.ids), {n: xp.asarray(v) for n, v in host.values.items()})

    for pattern in communicators():
        received, stats = pattern.exchange(
            on_gpu,
            owner=owner,
            to_all=to_all,
            combine=combine_gpu,
            transport=Local([cupy_backend] * parts),
        )
        for d in range(parts):
            host = [
                Update(u.ids.get(), {n: v.get() for n, v in u.values.items()}) for u in received[d]
            ]
            assert as_dict(host) == expected(updates, owner, to_all, d)


@given(st.integers(1, 7), st.lists(st.integers(0, 6), max_size=40))
def test_split_keeps_each_keys_entries_in_order(count, keys):
    """By masks (up to SPLIT_BY_MASKS pieces) or by a sort (more): the same pieces."""
    from bspgraph.comm.base import split

    keys = np.array([k % count for k in keys], dtype=np.int32)
    update = Update(np.arange(keys.size) * 3, {"value": np.arange(keys.size) * 0.5})
    pieces = split(update, keys, count)
    assert len(pieces) == count
    for k, piece in enumerate(pieces):
        where = np.flatnonzero(keys == k)
        np.testing.assert_array_equal(piece.ids, where * 3)
        np.testing.assert_array_equal(piece.values["value"], where * 0.5)


# --- dense messages (Slabs) -------------------------------------------------------------------


def blocks_of(owner, parts):
    """Each device's owned vertices: a slice when contiguous, else their ids (as the enactor)."""
    blocks = []
    for d in range(parts):
        ids = np.flatnonzero(owner == d)
        contiguous = ids.size == 0 or ids[-1] - ids[0] + 1 == ids.size
        start = int(ids[0]) if ids.size else 0
        blocks.append(slice(start, start + ids.size) if contiguous else ids)
    return blocks


@given(parts=st.integers(2, 5), n=st.integers(1, 40), data=st.data())
def test_dense_exchange_delivers_each_block_to_its_owner(parts, n, data):
    owner = np.array(data.draw(st.lists(st.integers(0, parts - 1), min_size=n, max_size=n)))
    if data.draw(st.booleans()):  # contiguous ranges, as edge_balanced cuts
        owner = np.sort(owner)
    blocks = blocks_of(owner, parts)
    columns = [np.arange(n) * 10 + d for d in range(parts)]  # device d's value of vertex v
    slabs = [comm.Slab(None, {"x": column}) for column in columns]
    for pattern in (Selective(), Broadcast()):
        received, stats = pattern.exchange_dense(slabs, blocks=blocks, transport=Local(parts))
        for d in range(parts):
            got = {s.block for s in received[d]}
            assert got == {d} and len(received[d]) == parts - 1  # one from every other device
            for slab in received[d]:
                values = slab.values["x"]
                assert len(values) == np.count_nonzero(owner == d)
                senders = set((values - np.arange(n)[blocks[d]] * 10).tolist())
                assert senders <= set(range(parts)) - {d} and len(senders) <= 1
        assert stats.messages == parts * (parts - 1) and stats.rounds == 1
        # selective: every block once from every other device; broadcast: whole columns
        whole = parts if isinstance(pattern, Broadcast) else 1
        assert stats.bytes == whole * (parts - 1) * n * 8


@given(parts=st.integers(2, 5), n=st.integers(1, 30), data=st.data())
def test_dense_exchange_to_all_sends_each_slab_as_it_is(parts, n, data):
    owner = np.sort(
        np.array(data.draw(st.lists(st.integers(0, parts - 1), min_size=n, max_size=n)))
    )
    blocks = blocks_of(owner, parts)
    own = [comm.Slab(d, {"x": np.full(np.count_nonzero(owner == d), d)}) for d in range(parts)]
    for pattern in (Selective(), Broadcast()):
        received, stats = pattern.exchange_dense(
            own, blocks=blocks, to_all=True, transport=Local(parts)
        )
        for d in range(parts):
            assert sorted(s.block for s in received[d]) == [o for o in range(parts) if o != d]
            assert all((s.values["x"] == s.block).all() for s in received[d])
        assert stats.bytes == (parts - 1) * n * 8  # each block once to every other device


@given(
    st.lists(
        st.tuples(
            st.integers(0, 6),  # ids
            st.sampled_from([np.int32, np.int64]),
            st.lists(
                st.tuples(
                    st.sampled_from(["depth", "sigma", "é", "flag"]),
                    st.sampled_from([np.int32, np.int64, np.float32, np.float64, bool, np.uint16]),
                    st.integers(0, 3),
                ),  # extra axis: 0 none, else lanes
                max_size=3,
                unique_by=lambda c: c[0],
            ),
        ),
        max_size=4,
    )
)
@examples(40)
def test_the_wire_format_gives_back_every_update(specs):
    """pack/unpack (the MPI transport's buffers): ids and every column come back with their
    dtype, shape and values, for empty Updates, lanes and odd item sizes."""
    from bspgraph.comm.message import describe, described, pack, unpack

    rng = np.random.default_rng(len(specs))
    updates = []
    for count, id_dtype, columns in specs:
        values = {}
        for name, dtype, lanes in columns:
            shape = (count, lanes) if lanes else (count,)
            values[name] = (rng.random(shape) * 100).astype(dtype)
        updates.append(Update(rng.permutation(50)[:count].astype(id_dtype), values))
    back = unpack(*pack(updates))
    assert len(back) == len(updates)
    layout = described(describe(updates))  # the NCCL transport's headers: shapes alone
    assert [(kind, n, arrays) for kind, n, arrays, _ in layout] == [
        (
            Update,
            len(u),
            [(None, u.ids.dtype, u.ids.shape)]
            + [(k, c.dtype, c.shape) for k, c in u.values.items()],
        )
        for u in updates
    ]
    for sent, got in zip(updates, back):
        assert got.ids.dtype == sent.ids.dtype
        np.testing.assert_array_equal(got.ids, sent.ids)
        assert list(got.values) == list(sent.values)
        for name, column in sent.values.items():
            assert got.values[name].dtype == column.dtype
            np.testing.assert_array_equal(got.values[name], column)


@given(parts=st.integers(2, 5), n=st.integers(1, 30), data=st.data())
def test_a_slab_to_all_goes_to_each_receiver_as_its_proxies(parts, n, data):
    """With ``gathers`` (the positions of a block each receiver's lists name), selective
    sends a block's Slab to each receiver as those entries only (Gathered), which arrive as
    such over the wire too (pack/unpack), with the bytes of those entries alone."""
    from bspgraph.comm.message import Gathered, pack, unpack

    owner = np.sort(
        np.array(data.draw(st.lists(st.integers(0, parts - 1), min_size=n, max_size=n)))
    )
    blocks = blocks_of(owner, parts)
    sizes = [int(np.count_nonzero(owner == d)) for d in range(parts)]
    gathers = {
        d: {
            o: np.flatnonzero(
                data.draw(st.lists(st.booleans(), min_size=sizes[d], max_size=sizes[d]))
            )
            for o in range(parts)
            if o != d
        }
        for d in range(parts)
    }
    own = [comm.Slab(d, {"x": np.arange(sizes[d]) * 10 + d}) for d in range(parts)]
    received, stats = Selective().exchange_mixed(
        own, owner=owner, blocks=blocks, to_all=True, transport=Local(parts), gathers=gathers
    )
    for d in range(parts):
        got = sorted(received[d], key=lambda s: s.block)  # (none from a block it names not)
        assert [s.block for s in got] == [o for o in range(parts) if o != d and len(gathers[o][d])]
        for slab in got:
            (back,) = unpack(*pack([slab]))
            assert type(slab) is type(back) is Gathered and back.block == slab.block
            expected = gathers[slab.block][d] * 10 + slab.block
            np.testing.assert_array_equal(back.values["x"], expected)
    named = sum(len(p) for per_sender in gathers.values() for p in per_sender.values())
    assert stats.bytes == named * 8


# --- Bits: a vertex set and one value a column ---------------------------------------------------
@given(
    st.lists(st.booleans(), max_size=70),
    st.sampled_from([None, 0, 3]),
    st.sampled_from([np.int32, np.int64, np.float64]),
    st.integers(0, 70),
    st.integers(0, 70),
)
@examples(60)
def test_bits_travel_and_unfold_as_the_slab_they_stand_for(flags, block, dtype, start, stop):
    """Bits hold V / 8 bytes and a value; on the wire (pack/unpack, NCCL's header) and when
    cut to a block (aligned: a view; else re-packed) they unfold to the values at the set
    bits and the absent value elsewhere."""
    from bspgraph.comm.message import Bits, describe, described, pack, unpack

    mask = np.array(flags, dtype=bool)
    value = np.array([7], dtype=dtype)
    bits = Bits.of(block, mask, {"depth": value})
    assert len(bits) == mask.size and wire_bytes(bits) == -(-mask.size // 8) + value.nbytes
    (back,) = unpack(*pack([bits]))
    ((kind, count, arrays, got_block),) = described(describe([bits]))
    assert (kind, count, got_block) == (Bits, mask.size, block)
    assert [shape for _, _, shape in arrays] == [(-(-mask.size // 8),), (1,)]
    for message in (bits, back):
        slab = message.slab({"depth": -1})
        assert slab.block == block
        np.testing.assert_array_equal(slab.values["depth"], np.where(mask, 7, -1).astype(dtype))
    lo, hi = sorted((min(start, mask.size), min(stop, mask.size)))
    cut = bits.cut(1, slice(lo, hi))
    np.testing.assert_array_equal(cut.mask(), mask[lo:hi])
    assert cut.block == 1 and len(cut) == hi - lo
    ids = np.flatnonzero(np.arange(mask.size) % 3 == 0)
    np.testing.assert_array_equal(bits.cut(2, ids).mask(), mask[ids])
