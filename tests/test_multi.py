"""Every primitive gives networkx's answer on 2..5 virtual devices, for every partitioner and
communicator (NumPy, one process): the grid of tests/grid.py, one pytest parameter a cell; then
the multi-device cases written out by hand."""

import dataclasses
import sys

import networkx as nx
import numpy as np
import pytest
from grid import ROWS, cells, run_cell

import bspgraph as bg
from bspgraph import frontier as fr
from bspgraph.backend import NumpyBackend, ops
from bspgraph.enactor import solo


@pytest.mark.parametrize(("row", "partitioner", "communicator", "devices"), cells())
def test_grid(row, partitioner, communicator, devices):
    run_cell(row, partitioner, communicator, devices)


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
@pytest.mark.parametrize(
    ("partitioner", "communicator", "devices"),
    [("random", "selective", 3), ("edge_balanced", "broadcast", 2), ("biased", "selective", 5)],
)
def test_dense_messages_in_every_superstep(row, partitioner, communicator, devices, monkeypatch):
    """Slabs whenever anything travels (the threshold lowered to one vertex): every combiner's
    neutral value, blocks that are slices (edge_balanced) or ids, one's own block (pulls,
    replace) and whole columns (CC's links) all give networkx's answer."""
    capabilities = dataclasses.replace(NumpyBackend.capabilities, dense_share=1 << 40)
    monkeypatch.setattr(NumpyBackend, "capabilities", capabilities)
    run_cell(row, partitioner, communicator, devices)


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
@pytest.mark.parametrize(
    ("partitioner", "communicator", "devices"),
    [("random", "butterfly", 3), ("edge_balanced", "selective", 4)],
)
def test_next_frontier_marked_in_a_mask(row, partitioner, communicator, devices, monkeypatch):
    """The GPU's next frontier (returned and improved vertices marked in one mask, no
    compaction: a backend whose supersteps are costly) gives networkx's answer too."""
    capabilities = dataclasses.replace(NumpyBackend.capabilities, costly_supersteps=True)
    monkeypatch.setattr(NumpyBackend, "capabilities", capabilities)
    run_cell(row, partitioner, communicator, devices)


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
@pytest.mark.parametrize(
    ("partitioner", "communicator", "devices"),
    [("random", "selective", 3), ("edge_balanced", "butterfly", 2), ("biased", "broadcast", 5)],
)
def test_a_graph_under_the_floor_runs_alone_on_the_first_device(
    row, partitioner, communicator, devices, monkeypatch
):
    """Where the whole graph is under the backend's floor (a GPU's ``light_edges``: here every
    graph is), the first device runs every primitive's whole run from its first state (rule 6
    from the start, nothing handed over: PageRank's and CC's too), and gives networkx's
    answer."""
    capabilities = dataclasses.replace(
        NumpyBackend.capabilities, light_edges=1 << 40, costly_supersteps=True
    )
    monkeypatch.setattr(NumpyBackend, "capabilities", capabilities)
    run_cell(row, partitioner, communicator, devices)


@pytest.mark.parametrize("devices", [2, 3])
def test_a_whole_run_alone_is_one_device_s_run(devices, monkeypatch):
    """A whole run on the first device alone (the graph under the floor) takes one device's
    supersteps, every one there, and its answer, also for a primitive whose part sets only
    its own vertices' first state (PageRank's out-weights) or keeps what its device saw (CC);
    inside ``light_share`` (no floor) they are lifted again."""
    graph = bg.generators.rmat(10, 8, seed=1, backend="numpy")
    run = {"devices": devices, "partitioner": "random", "communicator": "selective"}
    calls = (
        (lambda **r: bg.pagerank(graph, **r), "rank"),
        (lambda **r: bg.connected_components(graph, **r), "labels"),
        (lambda **r: bg.core_number(graph, **r), "core"),
        (
            lambda **r: bg.bfs(graph, int(np.argmax(graph.out_degree())), direction="push", **r),
            "depth",
        ),
    )
    capabilities = dataclasses.replace(NumpyBackend.capabilities, light_edges=graph.num_edges)
    monkeypatch.setattr(NumpyBackend, "capabilities", capabilities)
    for call, field in calls:
        one, many = call(), call(**run)
        np.testing.assert_allclose(getattr(many, field), getattr(one, field), rtol=1e-12)
        assert [step.devices for step in many.stats.supersteps] == [1] * one.stats.iterations
        assert many.stats.iterations == one.stats.iterations
        assert many.stats.edges == one.stats.edges
        with solo.light_share(solo.LIGHT_SHARE):
            assert devices in [step.devices for step in call(**run).stats.supersteps]


@pytest.mark.parametrize("row", [r for r in ROWS if r.name.startswith("bfs")], ids=lambda r: r.name)
@pytest.mark.parametrize(
    ("partitioner", "communicator", "devices"),
    [("random", "selective", 3), ("edge_balanced", "broadcast", 2), ("biased", "butterfly", 5)],
)
def test_bfs_with_pulls_that_exit_early(row, partitioner, communicator, devices, monkeypatch):
    """A backend whose pull stops at a candidate's first frontier in-neighbour (a GPU's, not
    ``scans_whole_lists``): the levels a BFS pulls run on the first device alone (rule 6,
    ``pulls_early``) between lifted ones, and give networkx's answer."""
    capabilities = dataclasses.replace(NumpyBackend.capabilities, scans_whole_lists=False)
    monkeypatch.setattr(NumpyBackend, "capabilities", capabilities)
    run_cell(row, partitioner, communicator, devices)


def test_issue_example_three_devices_match_networkx():
    graph = bg.generators.rmat(12, 16, seed=2, backend="numpy")
    depth = nx.single_source_shortest_path_length(graph.to_networkx(), 0)
    expected = np.array([depth.get(v, -1) for v in range(graph.num_vertices)])
    np.testing.assert_array_equal(bg.bfs(graph, 0, devices=1).depth, expected)
    three = bg.bfs(graph, 0, devices=3, partitioner="edge_balanced", communicator="butterfly")
    np.testing.assert_array_equal(three.depth, expected)
    assert three.stats.devices == 3 and three.stats.supersteps[0].messages > 0


def test_broadcast_sends_p_times_p_minus_one_messages_a_superstep():
    graph = bg.generators.grid(6, 6, backend="numpy")
    result = bg.bfs(graph, 0, devices=4, communicator="broadcast", direction="push")
    assert all(step.messages == 4 * 3 for step in result.stats.supersteps)


def test_supersteps_time_their_exchanges_apart():
    graph = bg.generators.rmat(10, 16, seed=2, backend="numpy")
    steps = bg.pagerank(graph, devices=3, communicator="broadcast").stats.supersteps
    assert all(0 < step.comm_seconds <= step.seconds for step in steps)
    assert bg.pagerank(graph).stats.supersteps[0].comm_seconds == 0


def test_scratch_state_stays_out_of_the_result():
    graph = bg.generators.rmat(8, 8, seed=2, backend="numpy")
    from bspgraph.primitives.pagerank import PageRank

    primitive = PageRank(alpha=0.85, tol=1e-6, max_iter=100)
    state, _ = bg.enactor.enact(primitive, graph, teleport=np.full(256, 1 / 256))
    assert set(state) == {"rank", "dangling", "error"}


@pytest.mark.parametrize("devices", [0, -1, [], [0, -1], 2.0, "2", [0, 1.5], [True]])
def test_bad_device_counts_are_errors(devices):
    graph = bg.generators.grid(2, 2, backend="numpy")
    with pytest.raises(ValueError, match="devices"):
        bg.bfs(graph, 0, devices=devices)


def test_a_repeated_device_id_runs_several_parts_on_it():
    graph = bg.generators.rmat(9, 8, seed=3, backend="numpy")
    one = bg.bfs(graph, 0, parents=True)
    three = bg.bfs(graph, 0, parents=True, devices=[0, 0, 0], partitioner="random")
    assert three.stats.devices == 3
    np.testing.assert_array_equal(three.depth, one.depth)
    reached = np.flatnonzero(three.depth > 0)  # each parent is one level up, along an edge
    np.testing.assert_array_equal(three.depth[three.parent[reached]], three.depth[reached] - 1)
    src, dst, _ = graph.edges()
    edges = set(zip(src.tolist(), dst.tolist(), strict=True))
    assert all((int(p), int(v)) in edges for p, v in zip(three.parent[reached], reached))


@pytest.mark.parametrize(
    "call",
    [
        lambda g: bg.bfs(g, 0, device=2),
        lambda g: bg.pagerank(g, nstart=[1, 1, 1, 1]),
        lambda g: bg.connected_components(g, weight="w"),
    ],
)
def test_a_mistyped_keyword_is_named(call):
    """Not a TypeError from inside the primitive's init_frontier."""
    graph = bg.generators.grid(2, 2, backend="numpy")
    with pytest.raises(TypeError, match=r": unexpected keyword argument\(s\) '.*'; the run opt"):
        call(graph)


def test_unknown_partitioner_is_named():
    graph = bg.generators.grid(2, 2, backend="numpy")
    with pytest.raises(ValueError, match="metiss"):
        bg.bfs(graph, 0, devices=2, partitioner="metiss")


def test_components_join_across_a_lopsided_cut():
    """Found by hypothesis: the device owning almost no edges pushed while the other pulled,
    and the edge 0 - 1 between them was skipped by both."""
    src, dst = [0, 0, 0, 1, 2, 3, 4, 6], [0, 1, 6, 0, 2, 3, 4, 0]
    graph = bg.Graph.from_edges(
        np.array(src), np.array(dst), num_vertices=11, directed=False, backend="numpy"
    )
    for communicator in ("broadcast", "selective", "butterfly"):
        labels = bg.connected_components(
            graph, devices=2, partitioner="random", communicator=communicator
        ).labels
        assert labels.tolist() == [0, 0, 2, 3, 4, 5, 0, 7, 8, 9, 10]


@pytest.mark.parametrize("devices", [2, 3])
def test_ordered_columns_on_each_device_leave_the_answers(devices, monkeypatch):
    """Each device part renames the columns of its own lists (by its rows' degrees): PageRank
    and SSSP give the answers of the lists as stored, to the bit."""
    graph = bg.generators.rmat(10, 8, seed=3, weights=True)
    plain = bg.pagerank(graph, devices=devices).rank, bg.sssp(graph, 0, devices=devices).distance
    for name, value in (("ORDERED_VERTICES", 1), ("SKEW", 1), ("ORDER_AFTER", 1)):
        monkeypatch.setattr(bg.frontier.operators, name, value)
    graph = bg.generators.rmat(10, 8, seed=3, weights=True)  # fresh parts, fresh caches
    ordered = bg.pagerank(graph, devices=devices).rank, bg.sssp(graph, 0, devices=devices).distance
    np.testing.assert_array_equal(ordered[0], plain[0])
    np.testing.assert_array_equal(ordered[1], plain[1])


@pytest.mark.parametrize(
    ("partitioner", "communicator", "devices"),
    [("edge_balanced", "selective", 3), ("random", "butterfly", 4), ("biased", "broadcast", 2)],
)
def test_direction_optimising_bfs_takes_one_devices_directions(
    partitioner, communicator, devices, monkeypatch
):
    """Every device takes the direction one device takes, level by level: the frontier's
    out-edges come from the superstep's tally, and after a superstep in which every device
    pulled, Beamer's switch by frontier size (``pulled_from``) holds on each. (Every level
    on every device: no light superstep on one device alone.)"""
    monkeypatch.setattr(solo, "LIGHT_SHARE", 0)
    advance = __import__("sys").modules["bspgraph.frontier.advance"]
    taken = []
    for direction in ("pull", "push"):
        module = getattr(advance, direction)

        def run(graph, frontier, op, _run=module.run, _direction=direction, **options):
            taken.append((graph.context.device, _direction, frontier.pulled_from is not None))
            return _run(graph, frontier, op, **options)

        monkeypatch.setattr(module, "run", run)
    graph = bg.generators.rmat(12, 16, seed=2, backend="numpy")
    source = int(np.argmax(graph.out_degree()))
    one = bg.bfs(graph, source, backend="numpy").depth
    alone = [direction for _, direction, _ in taken]
    taken.clear()
    many = bg.bfs(
        graph,
        source,
        backend="numpy",
        devices=devices,
        partitioner=partitioner,
        communicator=communicator,
    ).depth
    np.testing.assert_array_equal(many, one)
    levels = [taken[i : i + devices] for i in range(0, len(taken), devices)]
    assert [{direction for _, direction, _ in level} for level in levels] == [
        {direction} for direction in alone
    ]
    assert "pull" in alone and any(after_pull for *_, after_pull in taken)


def test_a_run_ends_with_its_transfers_settled():
    """A run on several devices waits for what its transport queued before it returns
    (``Transport.settle`` after the result's exchange): a process that goes on to other work
    has nothing in flight that a watchdog would take for a hang."""
    calls = []

    class Watched(bg.comm.Local):
        def exchange_round(self, sends, *, num_vertices):
            calls.append("exchange")
            return super().exchange_round(sends, num_vertices=num_vertices)

        def settle(self):
            calls.append("settle")

    graph = bg.generators.rmat(8, 8, seed=3, backend="numpy")
    bg.bfs(graph, 0, transport=Watched(3), communicator="selective")
    assert calls.count("settle") == 1 and calls[-1] == "settle" and "exchange" in calls


def test_workers_start_with_the_mpiexec_beside_this_python(tmp_path, monkeypatch):
    """bg.cluster's launcher: the ``mpiexec`` beside the running Python (a virtual
    environment's, active or not, as the ``mpi`` extra installs MPICH's), else the PATH's;
    None without either (then a run on several GPUs stays in this process, said once)."""
    from bspgraph.enactor import running

    venv, elsewhere = tmp_path / "venv" / "bin", tmp_path / "elsewhere"
    venv.mkdir(parents=True)
    elsewhere.mkdir()
    monkeypatch.setattr(sys, "executable", str(venv / "python"))
    monkeypatch.setenv("PATH", str(elsewhere))
    assert running.mpiexec() is None
    on_path = elsewhere / "mpiexec"
    on_path.write_text("#!/bin/sh\n")
    on_path.chmod(0o755)
    assert running.mpiexec() == str(on_path)
    beside = venv / "mpiexec"
    beside.write_text("#!/bin/sh\n")
    beside.chmod(0o755)
    assert running.mpiexec() == str(beside)


@pytest.mark.parametrize("devices", [2, 3, 5])
def test_light_supersteps_run_on_one_device_and_heavy_ones_on_all(devices):
    """Rule 6: the first superstep (a source's few out-edges) and the last light ones run on
    the first device alone, the heavy ones in between on every device, and the run gives one
    device's answers; a traversal takes one device's levels, each frontier one device's (a
    lifted superstep counts a needs_all frontier once a device). (SSSP's lifted levels are
    its own: a part's relaxations run ahead.)"""
    graph = bg.generators.rmat(12, 16, seed=1, weights=True, backend="numpy")
    source = int(np.argmax(graph.out_degree()))
    run = {"devices": devices, "partitioner": "random", "communicator": "selective"}
    for call, field in (
        (lambda **r: bg.bfs(graph, source, parents=True, **r), "depth"),
        (lambda **r: bg.betweenness_centrality(graph, sources=[source], **r), "centrality"),
        (lambda **r: bg.sssp(graph, source, **r), "distance"),
    ):
        one, many = call(), call(**run)
        np.testing.assert_allclose(getattr(many, field), getattr(one, field), equal_nan=True)
        ran_on = [step.devices for step in many.stats.supersteps]
        assert ran_on[0] == 1 and devices in ran_on and 1 in ran_on[ran_on.index(devices) :]
        sizes = [step.frontier // step.devices for step in many.stats.supersteps]
        if field != "distance":
            assert sizes == [step.frontier for step in one.stats.supersteps]
            assert many.stats.edges == one.stats.edges
        alone = [step for step in many.stats.supersteps if step.devices == 1]
        assert all(step.formats == () for step in alone)  # (no message but their changes)
    with solo.light_share(0):  # never: every superstep on every device
        steps = bg.bfs(graph, source, **run).stats.supersteps
    assert {step.devices for step in steps} == {devices}


@pytest.mark.parametrize("devices", [2, 3])
def test_a_small_graph_s_frontiers_under_the_backend_s_floor_run_on_one_device(
    devices, monkeypatch
):
    """Rule 6's floor (``Capabilities.light_edges``: a GPU's lifted superstep costs more than
    one device's step over a few million edges, whatever the graph's size): where every
    frontier's out-edges are under it, the first device runs every superstep alone (a push
    BFS's after its first, which each device takes from its own vertices), with one device's
    answers and levels; inside ``light_share`` the floor is off (E / share only), and the
    heavy levels are on every device again."""
    graph = bg.generators.rmat(12, 16, seed=1, weights=True, backend="numpy")
    source = int(np.argmax(graph.out_degree()))
    run = {"devices": devices, "partitioner": "random", "communicator": "selective"}
    calls = (
        (lambda **r: bg.bfs(graph, source, **r), "depth", 1),
        (lambda **r: bg.sssp(graph, source, **r), "distance", 1),
        (lambda **r: bg.bfs(graph, source, direction="push", **r), "depth", devices),
    )
    capabilities = dataclasses.replace(  # (and its frontiers' out-edges counted, as a GPU's;
        # the whole graph just above it: else the whole run goes to the first device)
        NumpyBackend.capabilities,
        light_edges=graph.cost_degrees()[2] - 1,
        costly_supersteps=True,
    )
    monkeypatch.setattr(NumpyBackend, "capabilities", capabilities)
    for call, field, first in calls:
        one, many = call(), call(**run)
        np.testing.assert_allclose(getattr(many, field), getattr(one, field))
        ran_on = [step.devices for step in many.stats.supersteps]
        assert ran_on == [first] + [1] * (len(ran_on) - 1)
        assert [step.frontier for step in many.stats.supersteps[1:]] == [
            step.frontier for step in one.stats.supersteps[1:]
        ]
        with solo.light_share(solo.LIGHT_SHARE):
            assert devices in [step.devices for step in call(**run).stats.supersteps]


@pytest.mark.parametrize("devices", [2, 3])
def test_a_bfs_pulls_its_early_exit_levels_on_one_device(devices, monkeypatch):
    """Rule 6 where a pull stops each candidate at its first frontier in-neighbour (a GPU's,
    not ``scans_whole_lists``): such a pull costs about a pass over the vertices, so the
    levels a direction-optimising BFS pulls are light and the first device runs the whole BFS
    alone, where the heavy ones ran on every device; a push BFS's heavy levels stay on every
    device. One device's depths and levels either way."""
    from bspgraph.frontier.advance import pull

    graph = bg.generators.rmat(12, 16, seed=1, backend="numpy")
    source = int(np.argmax(graph.out_degree()))
    run = {"devices": devices, "partitioner": "random", "communicator": "selective"}
    pulls = []
    counted = pull.run
    monkeypatch.setattr(pull, "run", lambda *a, **k: pulls.append(1) or counted(*a, **k))
    scanned = bg.bfs(graph, source, **run)
    assert pulls and devices in [step.devices for step in scanned.stats.supersteps]
    capabilities = dataclasses.replace(NumpyBackend.capabilities, scans_whole_lists=False)
    monkeypatch.setattr(NumpyBackend, "capabilities", capabilities)
    one = bg.bfs(graph, source)
    for direction, alone in (("auto", True), ("push", False)):
        many = bg.bfs(graph, source, direction=direction, **run)
        np.testing.assert_array_equal(many.depth, one.depth)
        # (a direction-optimising BFS's frontier is every device's: counted once a device)
        shares = [step.devices if alone else 1 for step in many.stats.supersteps]
        sizes = [step.frontier // share for step, share in zip(many.stats.supersteps, shares)]
        assert sizes == [step.frontier for step in one.stats.supersteps]
        ran_on = {step.devices for step in many.stats.supersteps}
        assert ran_on == {1} if alone else devices in ran_on


@pytest.mark.parametrize("devices", [2, 3, 5])
@pytest.mark.parametrize("communicator", ["selective", "broadcast", "butterfly"])
def test_light_supersteps_gather_each_devices_own_state_first(devices, communicator):
    """Rule 6 where each device holds only its own vertices' state and frontier (push BFS,
    a batch of BFS: not needs_all): the first superstep runs on every device (the first one
    would take every vertex's first state), the last light ones on the first device after
    it took the others' own state and frontiers in one exchange round, and the run is one
    device's: its answers, levels, frontiers and traversed edges."""
    graph = bg.generators.rmat(12, 16, seed=1, backend="numpy")
    source = int(np.argmax(graph.out_degree()))
    run = {"devices": devices, "partitioner": "random", "communicator": communicator}
    for call, field in (
        (lambda **r: bg.bfs(graph, source, direction="push", parents=True, **r), "depth"),
        (lambda **r: bg.bfs(graph, sources=[source, 7], **r), "depth"),
    ):
        one, many = call(), call(**run)
        np.testing.assert_array_equal(getattr(many, field), getattr(one, field))
        steps = many.stats.supersteps
        assert [step.frontier for step in steps] == [step.frontier for step in one.stats.supersteps]
        assert many.stats.edges == one.stats.edges
        ran_on = [step.devices for step in steps]
        assert ran_on[0] == devices and ran_on[-1] == 1, ran_on
        assert steps[-1].rounds == 1 and steps[-1].bytes > 0  # the gather, no changes after
    parents = bg.bfs(graph, source, direction="push", parents=True, **run).parent
    reached = parents >= 0
    depth = bg.bfs(graph, source).depth
    np.testing.assert_array_equal(depth[parents[reached]] + 1, depth[reached])


class PairedLevels(bg.Primitive):
    """A push BFS whose step on a whole graph takes a second level after a first of at most
    two vertices, as a GPU's levels kernel does: the level passed comes back only as a size
    (``Frontier.passed``), its vertices unlisted; on a part, one level a step."""

    state = (bg.State("depth", "vertex", init="max", unset=-1),)
    communicate = {"depth": "min"}
    params = {"source": "id"}

    def init_frontier(self, graph, state, *, source):
        state.depth[source] = 0
        return fr.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        def level(start, depth):
            visit = fr.functors.visit_unvisited(state.depth, depth)
            return fr.advance(graph, start, visit, direction="push", unique=True)

        reached = level(frontier, iteration + 1)
        if graph.context.global_view and 0 < len(reached) <= 2:
            passed = len(reached)
            reached = level(reached, iteration + 2)
            reached.passed = (passed,)
        return reached


@pytest.mark.parametrize("devices", [2, 3, 5])
def test_light_supersteps_hand_over_a_level_passed_unlisted(devices):
    """Rule 6 where each device holds only its own vertices' state (not ``needs_all``) and
    a step of the first device's passes a level whose vertices it does not list (a GPU's
    levels kernel): after the first superstep on every device, the first device takes the
    others' own state, and where its frontier is heavy again it hands over the vertices
    whose state differs from what it took (a snapshot), those of the level passed
    included; on a chain it runs the rest of the BFS. One device's depths, levels and
    frontiers, the chain's first vertices the first device's own or others'."""
    chain = [(v, v + 1) for v in range(4)]  # 0 -> 1 -> 2 -> 3 -> 4, a hub of 300 leaves
    fan = [(4, leaf) for leaf in range(5, 305)] + [(leaf, 305) for leaf in range(5, 305)]
    for edges, spread in ((chain + fan, True), ([(v, v + 1) for v in range(200)], False)):
        src, dst = np.array(edges).T
        graph = bg.Graph.from_edges(src, dst, directed=True, backend="numpy")
        one, one_stats = bg.enact(PairedLevels(), graph, source=0)
        expected = nx.single_source_shortest_path_length(graph.to_networkx(), 0)
        assert {v: int(d) for v, d in enumerate(one["depth"]) if d >= 0} == expected
        for partitioner in ("random", "edge_balanced"):
            many, stats = bg.enact(
                PairedLevels(),
                graph,
                source=0,
                devices=devices,
                partitioner=partitioner,
                check=True,
            )
            np.testing.assert_array_equal(many["depth"], one["depth"])
            steps = stats.supersteps
            assert [s.frontier for s in steps] == [s.frontier for s in one_stats.supersteps]
            ran_on = [step.devices for step in steps]
            assert ran_on[:5] == [devices, 1, 1, 1, 1], ran_on
            assert (devices in ran_on[5:]) == spread, ran_on
            ended = steps[4 if spread else -1]  # (the stretch's end: the others' state
            assert ended.rounds == 1 + spread  # taken, its changes sent, where not the run's)


class ReachCount(bg.Primitive):
    """A push traversal whose ``hits`` (reached in-neighbours) add up over devices: each
    device holds only its own vertices' sums (not needs_all), the others' partial ones
    travel as changes."""

    state = (bg.State("depth", "vertex", init="max", unset=-1), bg.State("hits", "int64"))
    communicate = {"depth": "min", "hits": "add"}
    params = {"source": "id"}

    def init_frontier(self, graph, state, *, source):
        state.depth[source] = 0
        return fr.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        reached = fr.filter(graph, frontier, lambda ids: state.depth[ids] == iteration)
        depth, hits, backend = state.depth, state.hits, graph.backend

        def touch(src, dst, eid, weight):
            ops.scatter_add(backend, hits, dst, graph.xp.ones(dst.shape, np.int64))
            depth[dst[depth[dst] == np.iinfo(depth.dtype).max]] = iteration + 1
            return graph.xp.ones(dst.shape, bool)

        return fr.advance(graph, reached, touch, direction="push", unique=True)


class ReachCountMarked(ReachCount):
    """ReachCount whose step returns its vertices as a mask (as a GPU's pull or a kernel's
    output does)."""

    def step(self, graph, frontier, state, iteration):
        reached = super().step(graph, frontier, state, iteration)
        return fr.Frontier.from_mask(graph, reached.mask)


def test_sums_of_a_marked_output_are_sent_once(monkeypatch):
    """Where the next frontier is marked in a mask (a GPU's path: NumPy standing in for one,
    ``costly_supersteps``), an ``add`` state's baselines take the values at a step's returned
    vertices through its mask: each change travels once, and the sums are one device's on
    2, 3 and 5 devices."""
    capabilities = dataclasses.replace(NumpyBackend.capabilities, costly_supersteps=True)
    monkeypatch.setattr(NumpyBackend, "capabilities", capabilities)
    graph = bg.generators.rmat(10, 8, seed=3, backend="numpy")
    source = int(np.argmax(graph.out_degree()))
    one, _ = bg.enact(ReachCount(), graph, source=source)
    for devices in (2, 3, 5):
        with solo.light_share(0):  # (every superstep lifted)
            many, _ = bg.enact(
                ReachCountMarked(), graph, source=source, devices=devices, partitioner="random"
            )
        np.testing.assert_array_equal(many["hits"], one["hits"])
        np.testing.assert_array_equal(many["depth"], one["depth"])


@pytest.mark.parametrize("share", [1, 2])
def test_light_supersteps_keep_sums_held_by_their_owners(share):
    """Rule 6 with an ``add`` state held by its owners: the first device takes their sums
    (and their baselines), runs the light levels alone, and every device takes its totals:
    one device's sums on 2, 3 and 5 devices, with the light levels alone or none of them."""
    graph = bg.generators.rmat(10, 8, seed=3, backend="numpy")
    source = int(np.argmax(graph.out_degree()))
    one, _ = bg.enact(ReachCount(), graph, source=source)
    for devices in (2, 3, 5):
        for partitioner in ("random", "edge_balanced"):
            with solo.light_share(share):
                many, stats = bg.enact(
                    ReachCount(),
                    graph,
                    source=source,
                    devices=devices,
                    partitioner=partitioner,
                    check=True,
                )
            np.testing.assert_array_equal(many["hits"], one["hits"])
            np.testing.assert_array_equal(many["depth"], one["depth"])
            assert stats.supersteps[-1].devices == 1
    bg.testing.assert_lifts(
        ReachCount(), params=lambda g: {"source": 0} if g.num_vertices else None, max_examples=8
    )


def test_after_light_supersteps_the_first_device_sends_only_its_new_sums():
    """A light level between heavy ones (a chain to a hub): the first device took the owners'
    sums and their baselines with them, so what it adds after the light level travels as
    its own change, not again as the sums it took."""
    edges = [(0, 1), (1, 2), *((2, v) for v in range(3, 10)), (0, 4), (6, 5), (9, 9), (5, 2)]
    edges += [(6, 8), (9, 6), (7, 0), (6, 3), (5, 8)]
    src, dst = np.array(edges).T
    graph = bg.Graph.from_edges(src, dst, num_vertices=10, directed=True, backend="numpy")
    one, _ = bg.enact(ReachCount(), graph, source=0)
    with solo.light_share(3):
        many, stats = bg.enact(
            ReachCount(), graph, source=0, devices=2, partitioner="random", check=True
        )
    assert [step.devices for step in stats.supersteps] == [2, 1, 2, 2, 2]
    np.testing.assert_array_equal(many["hits"], one["hits"])


class MinLabel(bg.Primitive):
    """Labels by the least vertex id pushed along edges, every vertex in the first frontier:
    on parts each device's first frontier is its own vertices (``Frontier.all``), so that
    two parts of one shape hold first frontiers alike in size and out-edges, not in ids."""

    needs_all = True
    state = (bg.State("label", "int64"),)
    communicate = {"label": "min"}
    params = {}

    def init_frontier(self, graph, state):
        state.label[...] = graph.xp.arange(graph.num_vertices)
        return fr.Frontier.all(graph)

    def step(self, graph, frontier, state, iteration):
        label = state.label

        def push(src, dst, eid, weight):
            before = label[dst].copy()
            ops.scatter_min(graph.backend, label, dst, label[src])
            return label[dst] < before

        return fr.advance(graph, frontier, push, direction="push", unique=True)


def test_light_supersteps_need_one_frontier_not_frontiers_alike_in_size():
    """Two paths of four vertices, a part each: the parts' first frontiers are alike in size
    and out-edges but not one frontier, so no superstep runs on the first device alone (it
    compares them), and the labels are one device's; SSSP, whose frontiers after a run-ahead
    level count a vertex two devices returned twice, takes its light levels alone after
    the first device found them one."""
    graph = bg.Graph.from_edges([0, 1, 2, 4, 5, 6], [1, 2, 3, 5, 6, 7], directed=False)
    one, _ = bg.enact(MinLabel(), graph)
    with solo.light_share(1):  # (every frontier light)
        many, stats = bg.enact(MinLabel(), graph, devices=2, partitioner="edge_balanced")
    np.testing.assert_array_equal(many["label"], one["label"])
    assert {step.devices for step in stats.supersteps} == {2}
    rmat = bg.generators.rmat(14, 16, seed=1, weights=True, backend="numpy")
    source = int(np.argmax(rmat.out_degree()))
    with solo.light_share(8):
        run = bg.sssp(rmat, source, devices=2, partitioner="edge_balanced", check=True)
    np.testing.assert_allclose(run.distance, bg.sssp(rmat, source).distance)
    ran_on = [step.devices for step in run.stats.supersteps]
    assert ran_on[:4] == [1, 2, 2, 2] and set(ran_on[4:]) == {1}, ran_on


@pytest.mark.parametrize("parts", [2, 3])
def test_betweenness_backward_starts_on_the_first_device_without_a_gather(parts):
    """Betweenness' backward phase starts from the deepest level on every device (18
    vertices from rmat11's hub: more than a source, at most FEW_IDS): the tally compares
    those ids, so the first device runs the light levels at once, with one round (its
    hand-over: two Updates to each other device), no gather to compare the frontiers first;
    the dependencies are one device's."""
    from bspgraph.primitives.bc_backward import Backward
    from bspgraph.primitives.bc_batched_backward import level_bounds
    from bspgraph.primitives.bc_forward import Forward

    graph = bg.generators.rmat(11, 16, seed=1, weights=True, backend="numpy")
    forward, _ = bg.enact(Forward(), graph, source=int(np.argmax(graph.out_degree())))
    deepest = int((forward["depth"] == forward["depth"].max()).sum())
    assert 1 < deepest <= solo.FEW_IDS
    run = dict(depth=forward["depth"], sigma=forward["sigma"])
    backward = Backward(bounds=level_bounds(forward["depth"]))
    one, _ = bg.enact(backward, graph, **run)
    many, stats = bg.enact(backward, graph, devices=parts, partitioner="edge_balanced", **run)
    np.testing.assert_allclose(many["delta"], one["delta"], rtol=1e-12)
    first = stats.supersteps[0]
    assert (first.devices, first.rounds, first.messages) == (1, 1, 2 * (parts - 1))


@pytest.mark.parametrize("parts", [2, 3])
def test_connected_components_keeps_each_devices_own_replaced_labels(parts):
    """CC's later steps link the labels that another device's smaller ones replaced on this
    one (``previous``, each device's own, not alike): no superstep of it runs on one device
    alone, so that none of those links is lost. Parts whose counts stay on the device, as a
    GPU's (where its frontiers joined and one device linked only its own pairs: 24 of 2048
    vertices kept their own labels), and NumPy parts, with every frontier light."""
    from bspgraph.primitives.cc import CC

    graph = bg.generators.rmat(11, 16, seed=2, weights=True, backend="numpy")
    expected = bg.connected_components(graph).labels
    assert not solo.takes_part(CC())
    with solo.light_share(1):
        reads = bg.testing.host_reads(CC(), graph, devices=parts, separate=False)
        run = bg.connected_components(graph, devices=parts, partitioner="edge_balanced")
    np.testing.assert_array_equal(reads.result["labels"], expected)
    np.testing.assert_array_equal(run.labels, expected)
    assert {step.devices for step in run.stats.supersteps} == {parts}


def test_a_checked_run_names_a_state_declared_alike_that_differs():
    """CC's ``previous`` (what each device's own step left) declared alike: a checked run on
    two parts stops at the first superstep where the devices hold different values, naming
    the state and the vertices, rather than let one device run for all."""
    import dataclasses

    from bspgraph.primitives.cc import CC

    state = tuple(dataclasses.replace(spec, alike=spec.name == "previous") for spec in CC.state)
    claimed = type("ClaimedAlike", (CC,), {"state": state})()
    graph = bg.generators.rmat(9, 8, seed=2, backend="numpy")
    with pytest.raises(bg.ContractError, match="'previous' is declared alike but differs"):
        bg.enact(claimed, graph, devices=2, partitioner="edge_balanced", check=True)


def test_without_the_whole_graph_every_superstep_runs_on_every_device(monkeypatch):
    """Where the first device has no whole graph (a one-device run would not fit there, or
    it was given a part only), the first collective tells every device so, and no superstep
    runs on one device alone."""
    graph = bg.generators.rmat(12, 16, seed=1, backend="numpy")
    source = int(np.argmax(graph.out_degree()))
    monkeypatch.setattr(bg.enactor.distributed, "whole_graph", lambda *args: None)
    run = bg.bfs(graph, source, devices=3, partitioner="random")
    assert {step.devices for step in run.stats.supersteps} == {3}
    np.testing.assert_array_equal(run.depth, bg.bfs(graph, source).depth)
