"""What the enactor sends between devices: the format each superstep takes (ids, Slabs, Bits)
chosen from the contract and the data, and a lifted traversal doing one device's work."""

import dataclasses
import functools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import examples

import bspgraph as bg
from bspgraph import comm
from bspgraph import frontier as fr
from bspgraph.backend import to_host
from bspgraph.backend.numpy_backend import NumpyBackend
from bspgraph.enactor import distributed, solo
from bspgraph.primitives.bc_forward import Forward
from bspgraph.testing import COMMUNICATORS, PARTITIONERS, graphs


class Hops(bg.Primitive):
    """A traversal as docs/writing-a-primitive.md teaches it, with no hint about messages:
    hops from a source, pushed along out-edges, combined with min."""

    state = (bg.State("hops", "int32", init="max", unset=-1),)
    communicate = {"hops": "min"}
    params = {"source": "id"}

    def init_frontier(self, graph, state, *, source):
        state.hops[source] = 0
        return fr.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        unvisited = np.iinfo(state.hops.dtype).max

        def visit(src, dst, eid, weight):
            new = state.hops[dst] == unvisited
            state.hops[dst[new]] = iteration + 1  # every writer stores the same value
            return new

        return fr.advance(graph, frontier, visit, direction="push", unique=True)


@pytest.fixture(scope="module")
def rmat():
    graph = bg.generators.rmat(scale=12, edge_factor=8, seed=3)
    source = int(np.argmax(to_host(graph.out_degree())))
    src, dst, _ = graph.edges()
    g = nx.DiGraph()
    g.add_nodes_from(range(graph.num_vertices))
    g.add_edges_from(zip(src.tolist(), dst.tolist()))
    hops = nx.single_source_shortest_path_length(g, source)
    expected = np.array([hops.get(v, -1) for v in range(graph.num_vertices)])
    return graph, source, expected


def _costly(monkeypatch) -> None:
    """NumPy standing in for a GPU: supersteps whose host reads cost (the enactor bounds the
    step's output by its frontier's out-edges and reads what it needs at once)."""
    capabilities = dataclasses.replace(NumpyBackend.capabilities, costly_supersteps=True)
    monkeypatch.setattr(NumpyBackend, "capabilities", capabilities)


@pytest.mark.parametrize("costly", [False, True])
@pytest.mark.parametrize("devices", [1, 2, 3, 4, 5])
def test_a_traversal_from_the_docs_sends_bits_in_its_heavy_supersteps(
    rmat, devices, costly, monkeypatch
):
    """Over a link (a transport whose messages are copied), a level whose vertices all took
    one value travels as a vertex set and that value: no hint in the primitive, and the
    answer is networkx's; also where reads cost (the GPU's path: what Bits need is read with
    the output's size)."""
    if costly:
        _costly(monkeypatch)
    graph, source, expected = rmat
    transport = comm.Local(devices, wire=True)
    state, stats = bg.enact(
        Hops(),
        graph,
        source=source,
        backend="numpy",
        transport=transport,
        partitioner="edge_balanced",
        communicator="selective",
    )
    np.testing.assert_array_equal(state["hops"], expected)
    if devices == 1:
        return
    heavy = [s for s in stats.supersteps if s.frontier * 8 >= graph.num_vertices]
    assert heavy, [s.frontier for s in stats.supersteps]
    formats = [(s.frontier, s.formats) for s in heavy]
    if costly:  # (a level its frontier's out-edges hold low goes as ids, unread)
        assert any("bits" in s.formats for s in heavy), formats
    else:
        assert all("bits" in s.formats for s in heavy), formats
    assert not any("slab" in s.formats for s in stats.supersteps)  # one value: never a Slab


@pytest.mark.parametrize("costly", [False, True])
def test_values_that_differ_travel_as_ids_or_slabs(rmat, costly, monkeypatch):
    """BFS with parents: the parents of a large level differ, so it takes no Bits (the
    first level may: every vertex there has the source as parent). Where a GPU's sizes are
    counted on the device (``costly``) the level's frontier foretells Bits, sent before their
    test is read: they misfire, and the Slab goes in a second round of the superstep."""
    if costly:
        _costly(monkeypatch)
    graph, source, expected = rmat
    r = bg.bfs(
        graph,
        source,
        parents=True,
        direction="push",
        backend="numpy",
        transport=comm.Local(3, wire=True),
        partitioner="edge_balanced",
    )
    np.testing.assert_array_equal(r.depth, expected)
    largest = max(r.stats.supersteps, key=lambda s: s.frontier)
    misfired = largest.rounds == 2 and "slab" in largest.formats
    assert largest.formats and ("bits" not in largest.formats or misfired), largest


@pytest.mark.parametrize("costly", [False, True])
def test_values_found_to_differ_are_not_tested_for_bits_again(rmat, costly, monkeypatch):
    """SSSP's distances differ within a superstep: once the one-value test that Bits need (a
    pass a column and a host read; also foretold Bits' guard, where reads cost) found them
    so, the rest of the run tests nothing; the next run on the same cut tests the supersteps
    the first left untested, and the one after that none (each found to differ); a BFS's
    hops, one value a level, are tested at every heavy level of every run. Both give one
    device's answer."""
    from bspgraph.enactor import distributed

    if costly:
        _costly(monkeypatch)
    tested = []
    level = distributed._level
    monkeypatch.setattr(distributed, "_level", lambda *a: tested.append(a) or level(*a))
    graph = bg.generators.rmat(scale=12, edge_factor=8, seed=3, weights=True)
    source = int(np.argmax(to_host(graph.out_degree())))
    expected = bg.sssp(graph, source).distance
    run = dict(backend="numpy", partitioner="edge_balanced", communicator="selective")
    counts = []
    for _ in range(3):
        tested.clear()
        got = bg.sssp(graph, source, transport=comm.Local(3, wire=True), **run)
        np.testing.assert_allclose(got.distance, expected)
        counts.append(len(tested))
    assert counts[0] >= 1 and counts[1] >= 1 and counts[2] == 0, counts
    hops_graph, hops_source, hops = rmat
    for _ in range(2):
        tested.clear()
        state, stats = bg.enact(
            Hops(), hops_graph, source=hops_source, transport=comm.Local(3, wire=True), **run
        )
        np.testing.assert_array_equal(state["hops"], hops)
        assert len(tested) >= 3 and any("bits" in s.formats for s in stats.supersteps)


def test_a_superstep_that_took_one_value_travels_as_bits_in_later_runs(rmat, monkeypatch):
    """Where reads cost (a GPU's path), a Slab chosen unread has its one-value test read
    beside the next frontiers, superstep by superstep: connected components' first superstep
    varies (its foretold Bits misfire once, in the cut's first run), its second takes one
    value (the labels of the trees it joined), and from the cut's third run on travels as
    Bits; SSSP, whose supersteps all vary, never misfires again. Every run gives one device's
    answer."""
    _costly(monkeypatch)
    graph = rmat[0]
    expected = bg.connected_components(graph, backend="numpy").labels
    run = dict(backend="numpy", partitioner="edge_balanced", communicator="selective")
    transport = comm.Local(2, wire=True)
    formats = []
    for _ in range(3):
        r = bg.connected_components(graph, transport=transport, **run)
        np.testing.assert_array_equal(r.labels, expected)
        formats.append([(s.formats, s.rounds) for s in r.stats.supersteps])
    assert formats[0][0] == (("slab", "bits"), 2), formats  # (a misfire: its Slab again)
    assert formats[1][0] == (("slab",), 1) and formats[1][1:] == formats[0][1:], formats
    assert formats[2][1] == (("bits",), 1), formats
    weighted = bg.generators.rmat(scale=12, edge_factor=8, seed=3, weights=True)
    source = rmat[1]
    distances = bg.sssp(weighted, source, backend="numpy").distance
    for i in range(3):
        r = bg.sssp(weighted, source, transport=comm.Local(2, wire=True), **run)
        np.testing.assert_array_equal(r.distance, distances)
        again = [(s.rounds, s.formats) for s in r.stats.supersteps]
        assert i == 0 or all(rounds <= 1 and "bits" not in f for rounds, f in again), again


@examples(20)
@given(
    graphs(max_vertices=24, max_edges=70, weighted=True),
    st.integers(2, 4),
    st.sampled_from(PARTITIONERS),
    st.data(),
)
def test_what_a_cut_learns_of_its_values_leaves_every_later_run_right(
    graph, devices, partitioner, data
):
    """Where reads cost (NumPy standing in for a GPU) over a link, one cut's runs of SSSP,
    connected components and BFS from drawn sources, in turn and again: what each run
    learnt of which supersteps take one value (Bits foretold there in later runs, whatever
    the source) never changes an answer: each is one device's."""
    if not graph.num_vertices:
        return
    sources = data.draw(st.lists(st.integers(0, graph.num_vertices - 1), min_size=2, max_size=2))
    share = data.draw(st.sampled_from([0, 1]), label="light share (rule 6)")
    calls = {
        "sssp": (lambda source, **run: bg.sssp(graph, source, **run), "distance"),
        "cc": (lambda source, **run: bg.connected_components(graph, **run), "labels"),
        "bfs": (lambda source, **run: bg.bfs(graph, source, direction="push", **run), "depth"),
    }
    transport = comm.Local(devices, wire=True)
    capabilities = NumpyBackend.capabilities
    NumpyBackend.capabilities = dataclasses.replace(capabilities, costly_supersteps=True)
    try:
        for name in ["sssp", "cc", "bfs", "sssp", "cc", "bfs", "sssp", "cc"]:
            call, field = calls[name]
            for source in sources:
                expected = getattr(call(source, backend="numpy"), field)
                with solo.light_share(share):
                    got = call(
                        source, backend="numpy", transport=transport, partitioner=partitioner
                    )
                np.testing.assert_array_equal(getattr(got, field), expected, err_msg=name)
    finally:
        NumpyBackend.capabilities = capabilities


def _traversal(name):
    if name == "hops":
        return lambda graph, source, **run: bg.enact(Hops(), graph, source=source, **run)[1]
    if name == "path counts":  # betweenness' forward phase
        return lambda graph, source, **run: bg.enact(Forward(), graph, source=source, **run)[1]
    return lambda graph, source, **run: bg.bfs(graph, source, direction=name, **run).stats


@examples(30)
@given(
    graphs(max_vertices=24, max_edges=70, weighted=False),
    st.integers(2, 5),
    st.sampled_from(PARTITIONERS),
    st.sampled_from(COMMUNICATORS),
    st.booleans(),
    st.data(),
)
def test_a_lifted_traversal_does_one_devices_work(
    graph, devices, partitioner, communicator, wire, data
):
    """Every traversal (betweenness' path counts too), on P devices: the same supersteps and
    the same frontier (its distinct vertices, counted in checked runs) as on one device; a
    device re-expanding a vertex that arrived unchanged would show as a larger frontier or a
    longer run."""
    if not graph.num_vertices:
        return
    source = data.draw(st.integers(0, graph.num_vertices - 1), label="source")
    share = data.draw(st.sampled_from([0, 1, 4]), label="light share (rule 6)")
    for name in ("push", "pull", "auto", "hops", "path counts"):
        run = _traversal(name)
        one = run(graph, source, backend="numpy", check=True)
        transport = comm.Local(devices, wire=True) if wire else None
        with solo.light_share(share):  # (light supersteps on one device: never, some, all)
            many = run(
                graph,
                source,
                backend="numpy",
                check=True,
                partitioner=partitioner,
                communicator=communicator,
                devices=None if wire else devices,
                transport=transport,
            )
        expected = [s.frontier for s in one.supersteps]
        assert [s.vertices for s in many.supersteps] == expected, (name, devices)


@pytest.mark.gpu
@pytest.mark.parametrize("devices", [2, 3])
def test_bits_on_a_gpu_equal_one_device(rmat, devices):
    """Parts of one GPU over a simulated link: Bits packed, sent, unfolded and applied by the
    CuPy kernels give the one-device answer of BFS (push and auto), SSSP and CC. (BFS auto
    with every superstep on every part: rule 6 runs its pulled levels on the first alone.)"""
    graph, source, expected = rmat
    run = dict(backend="cupy", devices=[0] * devices, partitioner="edge_balanced")
    link = lambda: comm.Local(devices, wire=True)  # noqa: E731
    for direction, share in (("push", solo.LIGHT_SHARE), ("auto", 0)):
        with solo.light_share(share):
            r = bg.bfs(graph, source, direction=direction, transport=link(), **run)
        np.testing.assert_array_equal(r.depth, expected)
        assert any("bits" in s.formats for s in r.stats.supersteps), direction
    state, _ = bg.enact(Hops(), graph, source=source, transport=link(), **run)
    np.testing.assert_array_equal(state["hops"], expected)
    weighted = bg.generators.rmat(scale=12, edge_factor=8, seed=3, weights=True)
    distance = bg.sssp(weighted, source, transport=link(), **run).distance
    np.testing.assert_allclose(distance, bg.sssp(weighted, source, backend="numpy").distance)
    labels = bg.connected_components(graph, transport=link(), **run).labels
    np.testing.assert_array_equal(labels, bg.connected_components(graph, backend="numpy").labels)


@pytest.mark.parametrize("devices", [1, 3])
def test_watchers_are_told_every_superstep_on_any_device_count(rmat, devices):
    """``enactor.watching`` (the command line's progress line) sees each superstep's record
    as the loop writes it, on one device and on several."""
    graph, source, _ = rmat
    seen = []
    with bg.enactor.watching(lambda iteration, step: seen.append((iteration, step))):
        r = bg.bfs(graph, source, direction="push", backend="numpy", devices=devices)
    assert [i for i, _ in seen] == list(range(1, r.stats.iterations + 1))
    assert [step for _, step in seen] == r.stats.supersteps


class _UnnamedHops(Hops):
    """Hops without ``params``: its run keeps the caller's ids (no relabelling into ranges),
    so a random cut gives the owners no id ranges."""

    params = None


@pytest.mark.parametrize("partitioner", ["random", "edge_balanced"])
def test_packages_cross_unread_only_where_the_round_takes_them(rmat, partitioner, monkeypatch):
    """Over a link that carries counts (NCCL's), a small package crosses unread only where
    the round is the mixed one that takes it (owners' id ranges, a direct pattern): where a
    random cut gives no ranges, a package sent unread reached a round that takes Updates only
    (two H200: a user's push traversal without ``params`` failed in its first superstep)."""
    _costly(monkeypatch)
    runs = []
    made = distributed.LiftedRun.__init__

    def kept(self, *args, **kwargs):
        made(self, *args, **kwargs)
        runs.append(self)

    monkeypatch.setattr(distributed.LiftedRun, "__init__", kept)
    graph, source, expected = rmat
    transport = comm.Local(2, wire=True)
    transport.carries_counts = True
    state, _ = bg.enact(
        _UnnamedHops(), graph, source=source, transport=transport, partitioner=partitioner
    )
    np.testing.assert_array_equal(state["hops"], expected)
    assert runs and all(run.lent == (run.blocks is not None) for run in runs)
    assert any(run.lent for run in runs) == (partitioner == "edge_balanced")


class Tagged(bg.Primitive):
    """A traversal whose reached vertices take one tag but for every 29th (by the caller's
    ids), which takes another: values that travel as Bits beside the others' ids, to their
    owners."""

    state = (
        bg.State("tag", "int32", init="max", unset=-1),
        bg.State("odd", "int32", init=0, output=False),  # 1: the tag a reached vertex takes, + 1
    )
    communicate = {"tag": "min"}
    params = {"source": "id", "odd": "per_vertex"}

    def init_frontier(self, graph, state, *, source, odd):
        state.odd[...] = graph.backend.asarray(odd)
        state.tag[source] = 1
        return fr.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        unvisited = np.iinfo(state.tag.dtype).max

        def visit(src, dst, eid, weight):
            new = state.tag[dst] == unvisited
            state.tag[dst[new]] = 1 + state.odd[dst[new]]  # (by vertex: writers agree)
            return new

        return fr.advance(graph, frontier, visit, direction="push", unique=True)


@examples(30)
@given(
    graphs(max_vertices=60, max_edges=200),
    st.integers(2, 5),
    st.sampled_from(PARTITIONERS),
    st.data(),
)
def test_values_of_one_but_a_few_travel_as_bits_and_ids_and_every_answer_stays_right(
    graph, devices, partitioner, data
):
    """Over a link, supersteps whose returned vertices took one value but for a few go as
    Bits and the others' ids (to every device: connected components' labels; to owners: a
    traversal's tags), run after run on one cut: every answer is one device's, and the
    components networkx's (each labelled by its least vertex)."""
    transport = comm.Local(devices, wire=True)
    run = dict(backend="numpy", transport=transport, partitioner=partitioner)
    g = nx.Graph()
    g.add_nodes_from(range(graph.num_vertices))
    g.add_edges_from(zip(*(a.tolist() for a in graph.edges()[:2]), strict=True))
    expected = np.arange(graph.num_vertices)
    for component in nx.connected_components(g):
        expected[list(component)] = min(component)
    source = data.draw(st.integers(0, max(0, graph.num_vertices - 1)))
    odd = (np.arange(graph.num_vertices) % 29 == 0).astype(np.int32)
    tagged = functools.partial(bg.enact, Tagged(), graph, source=source, odd=odd)
    tags = graph.num_vertices and tagged(backend="numpy")[0]["tag"]
    for _ in range(2):
        np.testing.assert_array_equal(bg.connected_components(graph, **run).labels, expected)
        if graph.num_vertices:
            np.testing.assert_array_equal(tagged(**run)[0]["tag"], tags)


def test_a_traversal_of_one_value_but_a_few_sends_bits_and_ids_to_owners(rmat):
    """A traversal whose heavy levels take one value but for a few (every 29th vertex's
    tag differs) sends them as Bits and the others' ids over a link, fewer bytes than their
    Slabs, and gives one device's answer."""
    graph, source, _ = rmat
    odd = (np.arange(graph.num_vertices) % 29 == 0).astype(np.int32)
    tagged = functools.partial(bg.enact, Tagged(), graph, source=source, odd=odd, backend="numpy")
    expected, _ = tagged()
    state, stats = tagged(transport=comm.Local(2, wire=True))
    np.testing.assert_array_equal(state["tag"], expected["tag"])
    mostly = [s for s in stats.supersteps if "bits+ids" in s.formats]
    assert mostly, [s.formats for s in stats.supersteps]
    assert all(s.bytes < graph.num_vertices * 4 for s in mostly), [s.bytes for s in mostly]


def test_a_device_whose_changed_labels_are_all_its_own_sends_its_block_as_bits_and_ids():
    """Where every label a device changed is of its own vertices (two components a part, one
    large, one a pair), its message covers its block only: Bits of the large one's root and
    the pair's one other label as an id; the labels are networkx's."""
    half = 40
    src = np.r_[np.arange(half - 3), half - 2]  # a path of 38 vertices and a pair
    graph = bg.Graph.from_edges(
        np.r_[src, src + half],
        np.r_[src + 1, src + 1 + half],
        num_vertices=2 * half,
        directed=False,
    )
    expected = np.r_[np.zeros(half - 2), [half - 2] * 2, [half] * (half - 2), [2 * half - 2] * 2]
    with solo.light_share(0):
        r = bg.connected_components(
            graph, backend="numpy", transport=comm.Local(2, wire=True), partitioner="edge_balanced"
        )
    np.testing.assert_array_equal(r.labels, expected)
    assert r.stats.supersteps[0].formats == ("bits+ids",), r.stats.supersteps
    assert r.stats.supersteps[0].bytes == 2 * (-(-half // 8) + 4 + 8), r.stats.supersteps


def test_where_reads_cost_one_value_but_a_few_goes_as_bits_and_ids_when_asked(rmat, monkeypatch):
    """Where reads cost (NumPy standing in for a GPU) and ``MOSTLY_READ`` asks for it,
    connected components' first superstep (most labels one root: its foretold Bits misfire
    once, in the cut's first run) travels as Bits and the others' ids from the cut's second
    run on, a fraction of its Slab's bytes; its second takes one value (Bits from the first
    run on); every run gives one device's answer."""
    _costly(monkeypatch)
    monkeypatch.setattr(distributed, "MOSTLY_READ", True)
    graph = bg.generators.rmat(scale=12, edge_factor=8, seed=3)  # (a cut of its own)
    expected = bg.connected_components(graph, backend="numpy").labels
    run = dict(backend="numpy", partitioner="edge_balanced", communicator="selective")
    transport = comm.Local(2, wire=True)
    formats, sent = [], []
    for _ in range(3):
        r = bg.connected_components(graph, transport=transport, **run)
        np.testing.assert_array_equal(r.labels, expected)
        formats.append([(s.formats, s.rounds) for s in r.stats.supersteps])
        sent.append([s.bytes for s in r.stats.supersteps])
    assert formats[0][0] == (("slab", "bits"), 2), formats  # (a misfire: its Slab again)
    assert formats[0][1] == (("bits",), 1), formats
    assert formats[1][0] == formats[2][0] == (("bits+ids",), 1), formats
    slabs = 2 * graph.num_vertices * np.dtype(graph.indices.dtype).itemsize  # one each way
    assert sent[1][0] * 3 < slabs, (sent, slabs)
