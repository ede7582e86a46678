"""The lifting contract: combiners, scalars, the next frontier, checked runs and assert_lifts,
with k-core (a primitive written from the docs) as the example that must lift unmodified."""

from unittest import mock

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import examples

import bspgraph as bg
from bspgraph import frontier as fr
from bspgraph.enactor import combiners, solo
from bspgraph.testing import assert_lifts, graphs

simple_undirected = graphs(directed=False, self_loops=False, max_vertices=14, max_edges=40)


def nx_core(graph: bg.Graph) -> np.ndarray:
    g = nx.Graph()
    g.add_nodes_from(range(graph.num_vertices))
    src, dst, _ = graph.edges()
    g.add_edges_from(zip(src.tolist(), dst.tolist()))
    core = nx.core_number(g)
    return np.array([core[v] for v in range(graph.num_vertices)], dtype=np.int64)


@examples(40)
@given(simple_undirected, st.integers(1, 5), st.sampled_from(bg.testing.COMMUNICATORS))
def test_core_number_is_networkx_on_every_device_count(graph, devices, communicator):
    result = bg.core_number(graph, devices=devices, communicator=communicator, check=True)
    np.testing.assert_array_equal(result.core, nx_core(graph))


@pytest.mark.parametrize("name", ["karate", "lollipop", "barabasi"])
def test_core_number_of_named_graphs(name):
    g = {
        "karate": nx.karate_club_graph(),
        "lollipop": nx.lollipop_graph(5, 6),
        "barabasi": nx.barabasi_albert_graph(300, 4, seed=2),
    }[name]
    graph = bg.Graph.from_networkx(g, weight=None)
    for devices in (1, 3):
        np.testing.assert_array_equal(bg.core_number(graph, devices=devices).core, nx_core(graph))


def test_core_number_refuses_directed_graphs_and_self_loops():
    with pytest.raises(ValueError, match="directed"):
        bg.core_number(bg.Graph.from_edges([0], [1], directed=True))
    with pytest.raises(ValueError, match="vertex 2 has a self-loop"):
        bg.core_number(bg.Graph.from_edges([0, 2], [1, 2], directed=False))


def test_kcore_lifts():
    assert_lifts(
        lambda graph, **run: bg.core_number(graph, **run), simple_undirected, max_examples=4
    )


class NaiveKCore(bg.primitives.KCore):
    """k-core with the degree combined by min: a degree lowered on two devices in one
    superstep keeps only one of the two changes."""

    communicate = {"degree": "min"}


def test_assert_lifts_catches_a_degree_combined_by_min():
    with pytest.raises(AssertionError, match="devices="):
        assert_lifts(
            NaiveKCore(),
            [bg.Graph.from_networkx(nx.karate_club_graph(), weight=None)],
            partitioners=["random"],
            communicators=["selective"],
        )


def test_assert_lifts_shrinks_to_a_small_failing_graph():
    with pytest.raises(AssertionError) as failure:
        assert_lifts(
            NaiveKCore(),
            simple_undirected,
            devices=[3],
            partitioners=["random"],
            communicators=["selective"],
            max_examples=60,
        )
    assert "edges" in str(failure.value)


class Uncommunicated(bg.primitives.KCore):
    """The degree not declared at all: changes at other devices' vertices stay where made."""

    state = (bg.State("degree", "int64"), bg.State("core", "int64", init=-1))
    communicate = {}


def test_a_checked_run_names_state_written_elsewhere_but_not_communicated():
    graph = bg.Graph.from_networkx(nx.complete_graph(5))
    with pytest.raises(bg.ContractError, match="'degree' of vertex .* not communicated"):
        bg.enact(Uncommunicated(), graph, devices=2, check=True)


class Unreturned(bg.Primitive):
    """Writes a communicated state but returns nothing: the change would not travel."""

    state = (bg.State("mark", "int64"),)
    communicate = {"mark": "max"}

    def init_frontier(self, graph, state):
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        state.mark[frontier.ids] = 1
        return fr.Frontier.empty(graph)


def test_a_checked_run_names_a_change_the_step_did_not_return():
    graph = bg.Graph.from_edges([0], [1], num_vertices=3)
    with pytest.raises(bg.ContractError, match="changed 'mark' of vertex 0 but did not return"):
        bg.enact(Unreturned(), graph, check=True)


@pytest.mark.parametrize(
    ("communicate", "message"),
    [
        ({"mark": "sum"}, "unknown combiner 'sum'; expected one of 'min', 'max', 'replace', 'add'"),
        ({"other": "min"}, "no State named 'other'"),
        ({"mark": combiners.Add(follows="mark")}, "follows 'mark', which is not"),
        ({"mark": "min", "flag": "replace"}, "cannot be mixed"),
        ({"flag": "add"}, "'add' needs numbers, not bool"),
    ],
)
def test_contract_errors_name_the_state(communicate, message):
    primitive = type(
        "Bad",
        (Unreturned,),
        {
            "state": (bg.State("mark", "int64"), bg.State("flag", "bool")),
            "communicate": communicate,
        },
    )()
    with pytest.raises(bg.ContractError, match=message.replace("(", r"\(")):
        bg.enact(primitive, bg.Graph.from_edges([0], [1]))


def test_a_registered_combiner_is_found_by_name():
    @combiners.register
    class BitOr(combiners.Combiner):
        name = "bit_or"

        def apply(self, xp, current, incoming, won=None, tied=None):
            combined = current | incoming
            return combined, combined != current

        def reduce(self, values):
            return int(np.bitwise_or.reduce(values))

    try:
        assert isinstance(combiners.get("bit_or", "here"), BitOr)
    finally:
        del combiners.COMBINERS["bit_or"]


class Reach(bg.Primitive):
    """BFS reachability that counts, in a scalar, the vertices each superstep reached and
    stops when a superstep reached none anywhere: a global stop written once. Every device
    sees every update (``needs_all``), so a vertex counts as new only where it is."""

    state = (bg.State("seen", "int64"),)
    scalars = (bg.Scalar("reached", "int64", init=1),)
    communicate = {"seen": "max"}
    needs_all = True

    def init_frontier(self, graph, state, *, source):
        state.seen[source] = 1
        return fr.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        seen = state.seen

        def visit(src, dst, eid, weight):
            new = seen[dst] == 0
            seen[dst[new]] = 1
            return new

        reached = fr.advance(graph, frontier, visit, direction="push", unique=True)
        state.reached[...] = len(reached)  # this device's work: 0 everywhere means done
        return reached

    def converged(self, graph, frontier, state, iteration):
        return int(state.reached) == 0


@examples(30)
@given(graphs(), st.integers(2, 5), st.sampled_from(bg.testing.COMMUNICATORS), st.data())
def test_scalars_are_combined_before_converged(graph, devices, communicator, data):
    if graph.num_vertices == 0:
        return
    source = data.draw(st.integers(0, graph.num_vertices - 1))
    one, one_stats = bg.enact(Reach(), graph, source=source)
    several, stats = bg.enact(
        Reach(), graph, source=source, devices=devices, communicator=communicator, check=True
    )
    np.testing.assert_array_equal(several["seen"], one["seen"])
    assert stats.iterations == one_stats.iterations  # the same superstep sees "none reached"


def test_result_device_on_numpy_gives_host_arrays_on_one_device_and_several():
    graph = bg.generators.grid(4, 5, backend="numpy")
    for devices in (1, 3):
        result = bg.bfs(graph, 0, parents=True, devices=devices, result_device=True)
        assert isinstance(result.depth, np.ndarray) and isinstance(result.parent, np.ndarray)
        np.testing.assert_array_equal(result.depth, bg.bfs(graph, 0).depth)
        centrality = bg.betweenness_centrality(graph, devices=devices, result_device=True)
        np.testing.assert_allclose(
            centrality.centrality, bg.betweenness_centrality(graph).centrality
        )


@pytest.mark.parametrize("devices", [1, 2])
def test_stats_split_setup_loop_and_gather(devices):
    graph = bg.generators.rmat(10, 8, seed=1, backend="numpy")
    stats = bg.bfs(graph, 0, devices=devices).stats
    assert stats.setup_seconds >= 0 and stats.seconds > 0 and stats.gather_seconds > 0
    both = bg.enactor.Stats.combine([stats, stats])
    assert both.gather_seconds == 2 * stats.gather_seconds
    reached = np.flatnonzero(bg.bfs(graph, 0).depth >= 0)
    assert type(stats.edges) is int and stats.edges == int(graph.out_degree()[reached].sum())
    assert both.edges == 2 * stats.edges


def test_stats_read_a_count_left_on_the_device_when_asked():
    stats = bg.enactor.Stats(seconds=2.0, edges=np.array(6_000_000_000))  # a 0-d array
    assert stats.gteps == 3.0 and type(stats.edges) is int
    assert bg.enactor.Stats().edges == 0 and "edges=6000000000" in repr(stats)


class CountingLocal(bg.comm.Local):
    """The in-process transport, counting its collectives (pickled: allgather; buffer) and
    the bytes of every array handed to it (ids and values; a Piece's entries, once its
    package's counts are read)."""

    def __init__(self, devices):
        super().__init__(devices)
        self.pickled = self.buffers = self.arrays = 0
        self.pieces = []

    @property
    def handed(self) -> int:
        return self.arrays + sum(len(p) * p.entry_bytes for p in self.pieces)

    def exchange_round(self, sends, *, num_vertices):
        for _, _, message in sends:
            if isinstance(message, bg.comm.Piece):
                self.pieces.append(message)
                continue
            arrays = [*message.values.values()]
            arrays += [message.ids] if isinstance(message, bg.comm.Update) else []
            self.arrays += sum(array.nbytes for array in arrays)
        return super().exchange_round(sends, num_vertices=num_vertices)

    def allgather(self, value):
        self.pickled += 1
        return super().allgather(value)

    def allgather_numbers(self, values):
        self.buffers += 1
        return super().allgather_numbers(values)


@pytest.mark.parametrize("name", ["bfs", "sssp", "cc", "pagerank", "core"])
def test_no_pickled_collective_in_the_superstep(name):
    """The tally of a superstep (frontier sizes, traffic, convergence) and the scalars travel
    as int64 buffers: at most two buffer collectives a superstep, none pickled."""
    graph = bg.generators.rmat(9, 8, seed=2, weights=True, backend="numpy")
    transport = CountingLocal(3)
    calls = {
        "bfs": lambda **r: bg.bfs(graph, 1, **r),
        "sssp": lambda **r: bg.sssp(graph, 1, **r),
        "cc": lambda **r: bg.connected_components(graph, **r),
        "pagerank": lambda **r: bg.pagerank(graph, **r),
        "core": lambda **r: bg.core_number(graph, **r),
    }
    result = calls[name](transport=transport)
    assert transport.pickled == 0
    assert 0 < transport.buffers <= 2 * result.stats.iterations + 2


@pytest.mark.parametrize("name", ["bfs-auto", "bfs-push", "sssp", "cc", "pagerank"])
@pytest.mark.parametrize("communicator", ["selective", "broadcast", "butterfly"])
def test_bytes_counted_are_the_bytes_handed_to_the_transport(name, communicator):
    """stats.supersteps' bytes sum to the bytes of the arrays the exchanges handed to the
    transport (Updates' ids and values, Slabs' values), over every superstep."""
    graph = bg.generators.rmat(9, 8, seed=3, weights=True, backend="numpy")
    calls = {
        "bfs-auto": lambda **r: bg.bfs(graph, 1, **r),
        "bfs-push": lambda **r: bg.bfs(graph, 1, direction="push", **r),
        "sssp": lambda **r: bg.sssp(graph, 1, **r),
        "pagerank": lambda **r: bg.pagerank(graph, **r),
        "cc": lambda **r: bg.connected_components(graph, **r),
    }
    for parts in (2, 3, 5):
        transport = CountingLocal(parts)
        stats = calls[name](transport=transport, communicator=communicator).stats
        assert sum(step.bytes for step in stats.supersteps) == transport.handed > 0


def test_a_scalar_reduced_by_replace_is_a_contract_error():
    primitive = type("Bad", (Unreturned,), {"scalars": (bg.Scalar("total", reduce="replace"),)})()
    with pytest.raises(bg.ContractError, match=r"scalars\['total'\]: a scalar reduces with"):
        bg.enact(primitive, bg.Graph.from_edges([0], [1]))


def test_every_vertex_without_a_converged_of_its_own_is_a_contract_error():
    """Its frontier is never empty: the default converged would never hold."""
    primitive = type("Endless", (Unreturned,), {"every_vertex": True})()
    with pytest.raises(bg.ContractError, match=r"Endless.every_vertex: .* converged of its own"):
        bg.enact(primitive, bg.Graph.from_edges([0], [1]))


@pytest.mark.parametrize("parts", [2, 3, 5])
@pytest.mark.parametrize("communicator", ["selective", "broadcast", "butterfly"])
def test_every_vertex_primitives_get_every_owned_vertex_and_one_devices_answer(parts, communicator):
    """PageRank and HITS (``every_vertex``): each superstep's frontier on a part is every
    vertex it owns, built from nothing that arrived, and the answer is one device's."""
    graph = bg.generators.rmat(9, 8, seed=3, weights=True, backend="numpy")
    seen = []
    from bspgraph.primitives.pagerank import PageRank

    step = PageRank.step

    def recording(self, graph, frontier, state, iteration):
        seen.append((len(frontier), graph.owned_index()))
        return step(self, graph, frontier, state, iteration)

    run = {"devices": parts, "communicator": communicator, "partitioner": "edge_balanced"}
    with mock.patch.object(PageRank, "step", recording):
        ranks = bg.pagerank(graph, **run).rank
    owned = [
        index.stop - index.start if isinstance(index, slice) else len(index) for _, index in seen
    ]
    assert len(seen) > parts and [size for size, _ in seen] == owned
    np.testing.assert_allclose(ranks, bg.pagerank(graph).rank, rtol=1e-9, atol=1e-12)
    hits, one = bg.hits(graph, **run), bg.hits(graph)
    np.testing.assert_allclose(hits.hubs, one.hubs, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(hits.authorities, one.authorities, rtol=1e-7, atol=1e-12)


def test_hits_lifts_on_every_device_count_partitioner_and_communicator():
    """HITS (``every_vertex``, out of the networkx grid: networkx computes it with ARPACK):
    its one-device answer on 1-5 virtual devices, every partitioner and communicator, on
    hypothesis's graphs (empty, edgeless, directed, disconnected, weighted); a run that does
    not converge must not converge on one device either."""

    def hits(graph, **run):
        try:
            result = bg.hits(graph, max_iter=2000, **run)
        except bg.ConvergenceError:
            return {"refused": np.ones(1)}
        except ValueError:  # no edge of positive weight: refused alike on every device count
            return {"undefined": np.ones(1)}
        return {"hubs": result.hubs, "authorities": result.authorities}

    bg.testing.assert_lifts(hits, max_examples=8, rtol=1e-6, atol=1e-9)


def test_hits_without_a_weighted_edge_is_refused_by_name():
    """Every score 0 cannot be normalized: a ValueError saying so, not NaN ranks."""
    with pytest.raises(ValueError, match="hits: the graph's 0 edges hold no positive weight"):
        bg.hits(bg.Graph.from_edges([], [], num_vertices=3))
    with pytest.raises(ValueError, match="2 edges hold no positive weight"):
        bg.hits(bg.Graph.from_edges([0, 1], [1, 2], [0.0, 0.0]))
    assert bg.hits(bg.Graph.from_edges([], [], num_vertices=3), normalized=False).hubs.sum() == 0


@pytest.mark.parametrize("name", ["add", "min", "max"])
def test_scalars_in_one_memory_reduce_as_numbers_do(name):
    """Parts in one memory reduce their scalars' 0-d arrays where they are (no host read):
    the same value as the reduction of the numbers, and arrays stay arrays."""
    from bspgraph.enactor import combiners

    combiner = combiners.get(name, "test")
    values = [2.5, -1.0, 7.25, 0.5]
    arrays = [np.asarray(v) for v in values]
    reduced = combiner.reduce(arrays)
    assert (
        float(reduced) == combiner.reduce(values) == {"add": 9.25, "min": -1.0, "max": 7.25}[name]
    )
    assert np.ndim(reduced) == 0 and all(float(a) == v for a, v in zip(arrays, values))


class NeighboursOfNeighbours(bg.Primitive):
    """For each vertex, the degrees of its neighbours summed: a reduction over every list of
    a reduction over every list, which reads the lists of vertices other devices own
    (``replicate_graph``)."""

    state = (bg.State("reach", "float64"),)
    replicate_graph = True

    def init_frontier(self, graph, state):
        return bg.frontier.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        degree = bg.frontier.neighbor_reduce(graph, graph.xp.ones(graph.num_vertices), "sum")
        reach = bg.frontier.neighbor_reduce(graph, degree, "sum")
        mine = graph.owned_index()
        state.reach[mine] = reach[mine]
        return bg.frontier.Frontier.empty(graph)


@pytest.mark.parametrize("devices", [2, 3])
def test_a_replicated_part_reduces_every_list_not_only_its_range(devices):
    """An edge_balanced part owns one range of vertices; when it holds the whole graph
    (``replicate_graph``), its reductions still cover every list."""
    graph = bg.generators.rmat(9, 8, seed=4)
    matrix = graph.to_scipy()
    expected = matrix @ (matrix @ np.ones(graph.num_vertices))
    state, _ = bg.enact(
        NeighboursOfNeighbours(), graph, devices=devices, partitioner="edge_balanced"
    )
    np.testing.assert_allclose(state["reach"], expected)


@pytest.mark.parametrize("name", ["bfs-auto", "bfs-push", "sssp", "cc", "pagerank"])
@pytest.mark.parametrize("partitioner", ["edge_balanced", "random", "biased"])
def test_a_local_transport_with_a_backend_a_device_is_a_link(name, partitioner):
    """The in-process transport as several GPUs of one process get it (``Local(backends)``,
    a link: each message moved by its receiver's backend, each device choosing Slabs by bytes
    and cutting them by ranges): every primitive on 2, 3 and 5 devices equals one device. On
    NumPy the backends are equal, so the link is declared here; the moves copy nothing."""
    from bspgraph.backend import get_backend

    hub = lambda g: int(np.argmax(np.diff(g.forward.offsets)))  # noqa: E731
    calls = {
        "bfs-auto": lambda g, **r: bg.bfs(g, hub(g), **r).depth,
        "bfs-push": lambda g, **r: bg.bfs(g, hub(g), direction="push", **r).depth,
        "sssp": lambda g, **r: bg.sssp(g, hub(g), **r).distance,
        "cc": lambda g, **r: bg.connected_components(g, **r).labels,
        "pagerank": lambda g, **r: bg.pagerank(g, **r).rank,
    }
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 600, (2, 5000))  # directed, with sinks and 100 isolated vertices
    for graph in (
        bg.generators.rmat(10, 12, seed=5, weights=True, backend="numpy"),
        bg.Graph.from_edges(
            src,
            dst,
            rng.integers(1, 10, 5000).astype(float),
            num_vertices=700,
            directed=True,
            backend="numpy",
        ),
    ):
        expected = calls[name](graph)
        for parts in (2, 3, 5):
            transport = MovingLocal([get_backend("numpy")] * parts)
            assert not transport.wire  # one backend: one memory
            transport.wire = True  # as between GPUs
            with solo.light_share(0):  # (every superstep moves messages: none on one alone)
                result = calls[name](graph, transport=transport, partitioner=partitioner)
            np.testing.assert_allclose(result, expected, rtol=1e-9, atol=1e-12)
            assert sum(transport.moved.values()) > 0  # Updates, Slabs or Bits
            if name == "pagerank":  # every owned value every superstep: fewer bytes as Slabs,
                assert transport.moved["Gathered"] > 0  # each receiver's proxies only


class MovingLocal(bg.comm.Local):
    """The in-process transport, counting the messages it moves to their receivers by kind."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.moved = {"Update": 0, "Slab": 0, "Gathered": 0, "Bits": 0}

    def _move(self, message, dst):
        self.moved[type(message).__name__] += 1
        return super()._move(message, dst)


@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_a_power_iteration_receives_only_the_vertices_its_lists_name(directed):
    """Duplicate-1-hop (``reads_neighbours``): each device's part names some vertices of the
    others' blocks in its lists (``layout.proxies``: what it reads from each owner, and each
    owner's positions of them); a power iteration's superstep moves those values alone, 8
    bytes each over a link, and the ranks equal one device's."""
    from bspgraph.backend import get_backend
    from bspgraph.enactor.layout import cut, proxies

    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 300, (2, 1500))  # with isolated vertices and sinks
    graph = bg.Graph.from_edges(src, dst, num_vertices=340, directed=directed, backend="numpy")
    for parts in (2, 3, 5):
        devices = dict(enumerate(cut(graph, parts, partitioner="edge_balanced", relabel=False)))
        owner = devices[0].partition.owner
        blocks = [slice(*np.flatnonzero(owner == d)[[0, -1]] + [0, 1]) for d in range(parts)]
        each = lambda fn, on, *per: {d: fn(on[d], *(p[d] for p in per)) for d in on}  # noqa: E731
        found = proxies(bg.comm.Local(parts), devices, blocks, each)
        named = 0
        for d, (reads, _) in found.items():
            lists = [devices[d].forward] + ([devices[d].reverse] if directed else [])
            columns = np.unique(np.concatenate([csr.indices for csr in lists]))
            for o in range(parts):
                if o == d:
                    continue
                mine = columns[owner[columns] == o]
                np.testing.assert_array_equal(reads[o], mine)
                np.testing.assert_array_equal(found[o][1][d] + blocks[o].start, mine)
                named += len(mine)
        link = bg.comm.Local([get_backend("numpy")] * parts)
        link.wire = True  # as between GPUs (in one memory a whole block is handed as a view)
        result = bg.pagerank(graph, transport=link, partitioner="edge_balanced")
        assert all(step.bytes == 8 * named for step in result.stats.supersteps)
        np.testing.assert_allclose(result.rank, bg.pagerank(graph).rank, rtol=1e-12, atol=0)


@pytest.mark.parametrize("ordered", [False, True], ids=["ids", "degree-order"])
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_a_part_sums_its_own_entries_before_the_others_values_arrive(
    monkeypatch, directed, ordered
):
    """With the others' values still on their way (``context.arrivals``, as the enactor
    leaves them when they cross on a second GPU stream), a part's pull over every list sums
    the entries of its own vertices, waits once, then the others': each owned row's sum is the
    whole graph's, with the lists' columns as they are and in degree order."""
    from bspgraph.enactor.layout import cut
    from bspgraph.frontier import operators

    if ordered:  # (rmat's columns are skewed; put in order from the ORDER_AFTER-th pull)
        monkeypatch.setattr(operators, "ORDERED_VERTICES", 0)
        monkeypatch.setattr(operators, "SKEW", 1)
    rmat = bg.generators.rmat(10, 8, seed=3, weights=True, backend="numpy")
    src, dst, weight = rmat.edges()
    keep = src <= dst  # (each undirected edge once: directed, a graph with sinks)
    graph = bg.Graph.from_edges(
        src[keep], dst[keep], weight[keep], num_vertices=rmat.num_vertices, directed=directed
    )
    values = np.random.default_rng(5).random(graph.num_vertices)
    whole = fr.neighbor_reduce(graph, values, "sum", direction="in", weighted=True)
    for part in cut(graph, 3, partitioner="edge_balanced", relabel=False):
        span = operators.owned_range(part)
        arrived = values.copy()
        arrived[: span.start], arrived[span.stop :] = np.nan, np.nan  # not yet here
        waits = []

        def pending(waits=waits, arrived=arrived):
            waits.append(1)
            arrived[:] = values

        for _ in range(operators.ORDER_AFTER + 1):
            arrived[: span.start], arrived[span.stop :] = np.nan, np.nan
            part.context.arrivals.pending = pending
            sums = fr.neighbor_reduce(part, arrived, "sum", direction="in", weighted=True)
            assert part.context.arrivals.pending is None
            np.testing.assert_allclose(sums[span], whole[span], rtol=1e-12, atol=1e-15)
            assert not sums[: span.start].any() and not sums[span.stop :].any()
        assert len(waits) == operators.ORDER_AFTER + 1
        lists = operators._ordered_key(part, "in")[1]  # (undirected: the out-lists, once)
        kept = part.cache[("own and other entries", lists, True)][0]
        assert (kept is part.reverse.indices) != ordered  # (rebuilt once put in order)
        part.context.arrivals.pending = pending  # the other direction (HITS' hubs)
        fr.neighbor_reduce(part, arrived, "sum", direction="out", weighted=True)
        splits = [key for key in part.cache if key[0] == "own and other entries"]
        assert len(splits) == (2 if directed else 1)
        if ordered:  # the split holds the renamed entries; a pull made whole makes them again
            key = operators._ordered_key(part, "in")
            assert part.cache[key][1] is None
            sums = fr.neighbor_reduce(part, values, "sum", direction="in", weighted=True)
            np.testing.assert_allclose(sums[span], whole[span], rtol=1e-12, atol=1e-15)
            assert part.cache[key][1] is not None


def test_a_part_s_split_lets_the_renamed_lists_go(monkeypatch):
    """Once a part's lists are split into its own entries and the others' (the others' values
    on their way), nothing holds the lists' renamed entries any more (neither the renaming
    nor the row ranges of an earlier whole pull): the split replaces them, not beside them."""
    import gc
    import weakref

    from bspgraph.enactor.layout import cut
    from bspgraph.frontier import operators

    monkeypatch.setattr(operators, "ORDERED_VERTICES", 0)
    monkeypatch.setattr(operators, "SKEW", 1)
    graph = bg.generators.rmat(10, 8, seed=3, weights=True, backend="numpy")
    values = np.random.default_rng(5).random(graph.num_vertices)
    whole = fr.neighbor_reduce(graph, values, "sum", direction="in", weighted=True)
    part = list(cut(graph, 2, partitioner="edge_balanced", relabel=False))[1]
    span = operators.owned_range(part)
    for _ in range(operators.ORDER_AFTER + 1):  # whole pulls: the lists renamed, in ranges
        fr.neighbor_reduce(part, values, "sum", direction="in", weighted=True)
    renamed = weakref.ref(part.cache[operators._ordered_key(part, "in")][1])
    part.context.arrivals.pending = lambda: None
    sums = fr.neighbor_reduce(part, values, "sum", direction="in", weighted=True)
    gc.collect()
    assert renamed() is None
    np.testing.assert_allclose(sums[span], whole[span], rtol=1e-12, atol=1e-15)


def test_an_advance_waits_for_the_others_values_before_its_functor_reads_them():
    """A functor may read the others' values through the lists (``reads_neighbours``): with
    them on their way (``context.arrivals``), an advance waits for them before it visits."""
    from bspgraph.enactor.layout import cut

    graph = bg.generators.rmat(8, 4, seed=1, backend="numpy")
    part = next(iter(cut(graph, 2, partitioner="edge_balanced", relabel=False)))
    seen = []
    part.context.arrivals.pending = lambda: seen.append("waited")

    def op(src, dst, eid, weight):
        seen.append("visited")
        return None

    fr.advance(part, bg.frontier.Frontier.all(part), op, direction="push")
    assert seen[0] == "waited" and "visited" in seen and part.context.arrivals.pending is None


class MirroredKatz(bg.primitives.Katz):
    """Katz whose pull also reads each vertex's mirror image ``n - 1 - v``, a vertex its lists
    need not name: a step that reads beyond its lists."""

    def pull(self, graph, values, direction="in"):
        return super().pull(graph, values, direction) + 0.01 * values[::-1]


def test_assert_lifts_catches_reads_beyond_the_lists_declared_as_neighbours():
    """``reads_neighbours`` declared by a step that reads vertices its lists do not name: they
    go stale on the devices that do not own them, and a checked run (gathering as a link does,
    in one memory too) sets them to NaN: assert_lifts names the cause; the same step without
    the declaration lifts (every value goes to every device)."""
    graph = bg.Graph.from_networkx(nx.path_graph(12), weight=None)
    katz = {"alpha": 0.1, "tol": 1e-10, "max_iter": 500, "weighted": False}
    params = {"start": 0.0, "beta": 1.0}
    with pytest.raises(bg.ContractError, match="NaN with reads_neighbours"):
        assert_lifts(
            MirroredKatz(**katz),
            [graph],
            params=params,
            partitioners=["edge_balanced"],
            communicators=["selective"],
        )
    honest = type("Honest", (MirroredKatz,), {"reads_neighbours": False})(**katz)
    assert_lifts(
        honest, [graph], params=params, partitioners=["edge_balanced"], communicators=["selective"]
    )


@given(
    st.lists(st.integers(0, 255), min_size=0, max_size=41),
    st.sampled_from([np.uint8, np.int32, np.float64, bool]),
    st.integers(0, 40),
    st.integers(1, 5),
)
def test_a_parameter_arrays_checksum_tells_arrays_apart_in_any_passes(raw, dtype, at, words):
    """What processes compare of a GPU's parameter array (betweenness' depth and sigma): its
    dtype, shape and a position-weighted sum, the same however many words a pass takes, and
    another where one entry differs."""
    from bspgraph.enactor import layout

    array = np.asarray(raw).astype(dtype)
    whole = layout._checksum(array)
    with mock.patch.object(layout, "CHECKSUM_WORDS", words):
        assert layout._checksum(array) == whole
    assert layout._checksum(array.copy()) == whole
    if at < len(array):
        changed = array.copy()
        changed[at] = not changed[at] if dtype is bool else changed[at] + 1
        assert layout._checksum(changed) != whole
    assert layout._checksum(array[: len(array) // 2]) != whole or len(array) == 0


@examples(30)
@given(st.data())
def test_a_combine_that_needs_no_changes_writes_what_one_that_does_writes(data):
    """_combine without ``changes`` (a message applied where nothing is marked) leaves the
    state as the one that finds the changed vertices does, for every combiner, at ids and
    over a slice."""
    from types import SimpleNamespace

    from bspgraph.enactor.contract import Contract
    from bspgraph.enactor.distributed import _combine

    n = data.draw(st.integers(1, 12))
    name = data.draw(st.sampled_from(["min", "max", "replace", "add"]))
    combiner = combiners.get(name, "test")
    values = st.lists(st.integers(-5, 5), min_size=n, max_size=n)
    held = np.array(data.draw(values), dtype=np.int64)
    where = data.draw(
        st.one_of(
            st.just(slice(None)),
            st.lists(st.integers(0, n - 1), unique=True).map(lambda ids: np.array(ids, np.int64)),
        )
    )
    count = n if isinstance(where, slice) else where.shape[0]
    incoming = np.array(data.draw(values), dtype=np.int64)[:count]
    contract = Contract({"x": combiner}, {}, combiner.owner_only, None)
    states = [SimpleNamespace(x=held.copy()) for _ in range(2)]
    changed = _combine(contract, states[0], where, {"x": incoming}, np)
    assert _combine(contract, states[1], where, {"x": incoming}, np, changes=False) is None
    np.testing.assert_array_equal(states[1].x, states[0].x)
    assert changed.shape == (count,)


def test_a_lifted_run_s_only_part_is_no_global_view():
    """A part of a lifted run is never the whole run's view, even the only part: operators
    then take no one-device shortcut (several levels in one advance), whose supersteps the
    lifted enactor would not count; a graph of its own is."""
    from bspgraph.enactor.layout import cut

    graph = bg.generators.rmat(8, 4, seed=1, backend="numpy")
    assert graph.context.global_view
    for parts in (1, 2):
        assert not any(part.context.global_view for part in cut(graph, parts))
