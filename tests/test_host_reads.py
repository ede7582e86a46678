"""The superstep's host reads, counted as a GPU would make them (``bg.testing.host_reads``).

On a GPU each read waits for the device's queue. The enactor reads every part's counts of a
phase together (one copy a GPU), so that the reads around the step do not grow with the parts.
A frontier's out-edges bound what a step returns: where they foretell a Slab or make an Update
certain, no output's size is read before the exchange; in one memory a package goes to its
receivers as Pieces whose counts stay on the device, and a pull's output (a part's own
vertices) chooses its Slab without a count. What is left is the one read after the exchange:
the next frontiers' sizes and out-edges, the outputs', the packages' counts by owner, and
PageRank's convergence value (once where the parts share one memory).
"""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import examples, graphs

import bspgraph as bg
from benchmarks.host_reads import runs
from bspgraph._counting import READS, CountingBackend, counting, stepping_as_a_gpu
from bspgraph.comm import Update
from bspgraph.enactor import solo
from bspgraph.frontier import Frontier, read_counts
from bspgraph.primitives.bfs import BFS
from bspgraph.testing import host_reads

# Reads around the step a superstep, whatever the parts, a primitive's own included. With
# selective, one: the next frontiers' sizes, with the packages' counts by owner (in one memory
# they go to their receivers unread, as Pieces) and PageRank's convergence value. Broadcast's
# receivers filter what arrived by owner, and read those filters' counts.
AROUND = {"selective": 1, "broadcast": 3}


@pytest.fixture(scope="module")
def rmat():
    graph = bg.generators.rmat(11, 16, seed=1, weights=True, backend="numpy")
    return graph, int(np.argmax(np.diff(graph.forward.offsets)))


@pytest.mark.parametrize("name", ["bfs push", "bfs auto", "sssp", "cc", "pagerank", "bc forward"])
@pytest.mark.parametrize("parts", [2, 3, 5])
@pytest.mark.parametrize("communicator", ["selective", "broadcast"])
def test_reads_around_the_step_do_not_grow_with_the_parts(rmat, name, parts, communicator):
    """The gate of the distributed superstep: one host read a superstep with selective
    (broadcast's receivers keep their own entries of every arrived Update: all those filters'
    counts are read at once)."""
    graph, _ = rmat
    primitive, params = runs(graph)[name]
    reads = host_reads(primitive, graph, devices=parts, communicator=communicator, **params)
    assert len(reads.superstep) >= 2
    assert max(reads.superstep) <= AROUND[communicator], reads
    assert sum(reads.pickled) == 0
    expected, _ = bg.enact(runs(graph)[name][0], graph, backend="numpy", **params)
    for output, values in expected.items():
        if values is not None:
            np.testing.assert_allclose(reads.result[output], values, rtol=1e-9)


def test_a_read_the_step_does_not_make_is_counted(rmat):
    """The count can fail: a convergence test that reads a depth on every part adds a read a
    part and superstep."""
    graph, source = rmat

    class Reading(BFS):
        def converged(self, graph, frontier, state, iteration):
            int(state.depth[0])  # a host read on a GPU
            return super().converged(graph, frontier, state, iteration)

    plain = host_reads(BFS(direction="push"), graph, devices=3, source=source)
    reading = host_reads(Reading(direction="push"), graph, devices=3, source=source)
    assert [r - p for r, p in zip(reading.superstep, plain.superstep)] == [3] * len(plain.superstep)


def test_the_butterflys_merges_of_a_round_read_once(rmat):
    """On 5 parts (fanout 2: a fold-in, two rounds, a fold-out) every device's merges of a
    round read their counts together: SSSP's supersteps of Updates read at most 7 times around
    the step (a merge each read 13)."""
    graph, _ = rmat
    primitive, params = runs(graph)["sssp"]
    reads = host_reads(primitive, graph, devices=5, communicator="butterfly:2", **params)
    assert max(reads.superstep) <= 7, reads


@pytest.mark.parametrize("parts", [2, 3, 5])
def test_pagerank_reads_only_its_convergence_around_the_step(rmat, parts):
    """PageRank (``every_vertex``) builds no frontier from what arrived, and its convergence
    test reads only the combined scalar: a superstep reads it once, on the first part."""
    graph, _ = rmat
    primitive, params = runs(graph)["pagerank"]
    reads = host_reads(primitive, graph, devices=parts, **params)
    assert reads.superstep == [1] * len(reads.superstep)


@pytest.mark.parametrize("parts", [2, 3, 5])
def test_a_superstep_whose_slabs_are_foreseen_reads_once(rmat, parts):
    """SSSP on rmat11: after the first superstep every frontier's out-edges foretell Slabs
    (they bound what a step returns), so no part's output size is read before the exchange:
    the next frontiers' read is the only one around the step (none where they are empty)."""
    graph, source = rmat
    primitive, params = runs(graph)["sssp"]
    reads = host_reads(primitive, graph, devices=parts, **params)
    assert len(reads.superstep) > 3 and max(reads.superstep[1:]) == 1


@pytest.mark.parametrize("name", ["bfs push", "bfs auto", "sssp", "cc", "pagerank", "bc forward"])
@pytest.mark.parametrize("communicator", bg.testing.COMMUNICATORS)
@pytest.mark.parametrize("parts", [3, 5])
def test_separate_gpus_run_each_ones_work_with_it_current(rmat, name, communicator, parts):
    """Parts each a GPU of its own: no operation runs on an array of another GPU than the
    current one (CuPy would read that GPU's memory unordered, or fault: the receivers' filters
    of broadcast and the butterfly once did; on 5 the butterfly merges on the way), and the
    answer is one device's."""
    graph, _ = rmat
    primitive, params = runs(graph)[name]
    reads = host_reads(
        primitive, graph, devices=parts, communicator=communicator, separate=True, **params
    )
    expected, _ = bg.enact(runs(graph)[name][0], graph, backend="numpy", **params)
    for output, values in expected.items():
        if values is not None:
            np.testing.assert_allclose(reads.result[output], values, rtol=1e-9)


@pytest.mark.parametrize("parts", [2, 3, 5])
def test_a_light_superstep_across_links_reads_once_a_gpu(rmat, parts):
    """Parts each a GPU of its own: a package of a few vertices crosses the link unread (its
    whole buffers and its counts), so BFS's last superstep reads once a GPU, its next
    frontier's size with the packages' counts, where reading each package's counts before
    sending it read twice."""
    graph, source = rmat
    with solo.light_share(0):  # (lifted: the light supersteps on every device, rule 6 off)
        reads = host_reads(
            BFS(direction="push"), graph, devices=parts, separate=True, source=source
        )
    assert reads.superstep[-1] == parts, reads


def test_an_operation_on_another_gpus_array_is_refused():
    """The check can fail: a kernel on device 1's array while device 0 is current."""
    from bspgraph.testing import CrossDeviceError

    on_one = CountingBackend(device=1).asarray(np.arange(4))
    assert on_one.home == 1 and on_one[1:].home == 1  # (a view stays where it is)
    with pytest.raises(CrossDeviceError, match="device 1 while device 0 is current"):
        on_one + 1
    with CountingBackend(device=1).activate():
        assert (on_one + 1).home == 1
        moved = CountingBackend(device=2).asarray(on_one)  # a peer copy
    assert moved.home == 2
    with pytest.raises(CrossDeviceError):
        on_one[np.array([0, 2])]


@pytest.mark.parametrize("name", ["bfs push", "bfs auto", "sssp", "bc forward"])
@pytest.mark.parametrize("wire", [None, True])
def test_a_transport_of_virtual_devices_keeps_them_on_one_gpu(rmat, name, wire):
    """``transport=comm.Local(2)`` (virtual devices: messages handed over as they are) where
    the run is on GPUs: its devices are parts of one GPU, and the answer is one device's.
    They were GPUs 0 and 1 once, and a kernel of one read the other's arrays (the gather of
    rule 6, a Slab or Bits: an illegal memory access on two H200 with ``wire=True``)."""
    graph, _ = rmat
    primitive, params = runs(graph)[name]
    expected, _ = bg.enact(runs(graph)[name][0], graph, backend="numpy", **params)
    backend = CountingBackend()  # (each device id its own "GPU", operations checked)
    with counting(backend):
        result, stats = bg.enact(
            primitive, graph, backend=backend, transport=bg.comm.Local(2, wire=wire), **params
        )
    assert stats.devices == 2
    for output, values in expected.items():
        if values is not None:
            np.testing.assert_allclose(result[output], values, rtol=1e-9)


def test_virtual_devices_on_several_gpus_and_a_link_that_is_not_are_refused(rmat):
    """A Local of virtual devices asked to run on GPUs 0 and 1, and a Local of two GPUs'
    backends told it is no link, are clear errors, not a kernel reading another GPU."""
    graph, source = rmat
    backend = CountingBackend()
    with counting(backend), pytest.raises(bg.DeviceError, match="virtual devices"):
        bg.bfs(graph, source, devices=[0, 1], backend=backend, transport=bg.comm.Local(2))
    with pytest.raises(ValueError, match="wire=False"):
        bg.comm.Local([backend.on_device(0), backend.on_device(1)], wire=False)


@examples(25)
@given(
    graphs(),
    st.integers(2, 5),
    st.sampled_from(["edge_balanced", "random"]),
    st.sampled_from(bg.testing.COMMUNICATORS),
    st.sampled_from(["bfs auto", "bfs push", "sssp", "cc", "bc forward"]),
    st.booleans(),
)
def test_runs_counted_as_a_gpu_makes_them_give_one_devices_answer(
    graph, parts, partitioner, communicator, name, separate
):
    """The paths a GPU takes (Slabs foreseen from a frontier's out-edges, sizes counted on the
    device), on parts of one GPU or on GPUs of their own, on awkward graphs: the one-device
    answer."""
    graph, _ = graph
    if graph.num_vertices == 0:
        return
    primitive, params = runs(graph)[name]
    reads = host_reads(
        primitive,
        graph,
        devices=parts,
        partitioner=partitioner,
        communicator=communicator,
        separate=separate,
        **params,
    )
    expected, _ = bg.enact(runs(graph)[name][0], graph, backend="numpy", **params)
    for output, values in expected.items():
        if values is not None:
            np.testing.assert_array_equal(reads.result[output], values)


def test_a_listed_frontiers_mask_marks_its_first_count_of_ids():
    """A kernel's list and its count on the device: the mask marks the counted ids only,
    picking them as a kernel reads the count (no read)."""
    backend = CountingBackend()
    with counting(backend):
        out = backend.asarray(np.array([4, 1, 7, 0, 0], dtype=np.int32))  # 3 listed, then junk
        tally = backend.asarray(np.array([3, 12], dtype=np.uint64))
        frontier = Frontier.listed(SimpleNamespace(num_vertices=9, backend=backend), out, tally)
        ids, count = frontier.listing  # a packer takes them as they are
        assert ids is out and count is tally
        before = READS.count
        mask = frontier.mask
        assert READS.count - before == 0
        assert np.flatnonzero(mask).tolist() == [1, 4, 7]
        other = backend.asarray(np.array([5, 6], dtype=np.int64))
        assert read_counts([frontier], [(backend, other)]) == [[5, 6]]  # read together
        assert frontier.size_known and len(frontier) == 3 and frontier.listing is None


def test_a_merge_reads_its_count_once_and_gathers_every_column():
    """The butterfly's combine on the way (``distributed.merge``): one read (how many ids),
    then every column gathered at the first entries' positions, the key's best first and
    its follower along."""
    from bspgraph.enactor.contract import contract_of
    from bspgraph.enactor.distributed import merge

    backend = CountingBackend()
    with counting(backend):
        ids = backend.asarray(np.array([5, 2, 5, 9, 2, 5], dtype=np.int32))
        depth = backend.asarray(np.array([3, 4, 1, 2, 4, 2], dtype=np.int32))
        parent = backend.asarray(np.array([10, 11, 12, 13, 14, 15], dtype=np.int32))
        before = READS.count
        (merged,) = merge(
            contract_of(BFS(parents=True)), Update(ids, {"depth": depth, "parent": parent})
        )
        assert READS.count - before == 1
    assert np.asarray(merged.ids).tolist() == [2, 5, 9]
    assert np.asarray(merged.values["depth"]).tolist() == [4, 1, 2]
    assert np.asarray(merged.values["parent"]).tolist() in ([11, 12, 13], [14, 12, 13])


def test_a_producers_count_takes_the_out_edges_along_in_its_read():
    """A frontier counted by its producer without out-edges (a Slab's fused apply) gets every
    member's out-edges queued beside that count: both come back in one read."""
    backend = CountingBackend()
    with counting(backend):
        graph = SimpleNamespace(num_vertices=6, backend=backend)
        mask = backend.asarray(np.array([1, 0, 1, 1, 0, 0], dtype=bool))
        tally = backend.asarray(np.array([1, 0], dtype=np.uint64))  # one marked beyond 2 known
        frontier = Frontier.from_mask(graph, mask, counted=(tally, 2, None))
        degree = backend.asarray(np.array([5, 7, 1, 2, 9, 9], dtype=np.int64))
        frontier.defer_counts(degree)
        before = READS.count
        read_counts([frontier])
        assert READS.count - before == 1
        assert (len(frontier), frontier.out_edges) == (3, 8)


@pytest.mark.parametrize("parts", [2, 3])
def test_a_heavy_bits_level_reads_once_a_gpu(rmat, parts):
    """Parts each a GPU of its own: a heavy level of push BFS sends Bits that its frontier's
    out-edges foretell, unread, their one-value test with them; its only read is the next
    frontiers' (with the test), where the output's size and the test were read first."""
    graph, source = rmat
    reads = host_reads(BFS(direction="push"), graph, devices=parts, separate=True, source=source)
    assert len(reads.superstep) >= 2 and max(reads.superstep[1:]) == parts, reads


def test_foretold_bits_that_misfire_are_sent_again_and_remembered(rmat):
    """SSSP's changed distances differ: its first heavy level's foretold Bits fail their
    test, reach the receivers as the combiner's absent value, and go again as a Slab in a
    second round of the superstep; the next run on the cut does not foretell them. Both
    give one device's answer."""
    graph, source = _fresh(rmat), rmat[1]  # (a cut of its own: nothing remembered yet)
    expected, _ = bg.enact(bg.primitives.SSSP(), graph, backend="numpy", source=source)
    runs = _on_one_cut(graph, [bg.primitives.SSSP(), bg.primitives.SSSP()], source=source)
    for result, _, _ in runs:
        np.testing.assert_array_equal(result["distance"], expected["distance"])
    first, again = ([(s.rounds, s.formats) for s in stats.supersteps] for _, stats, _ in runs)
    assert (2, ("slab", "bits")) in first, first
    assert all(rounds <= 1 and "bits" not in formats for rounds, formats in again), again


def test_a_misfire_is_remembered_for_the_primitive_and_its_options(rmat):
    """BFS with parents misfires (the parents of a level differ); BFS without them, on the
    same cut after it, still sends its Bits foretold: it reads as often as after itself on
    a cut of its own, and gives one device's answer."""
    graph, source = _fresh(rmat), rmat[1]  # (a cut of its own: nothing remembered yet)
    bfs = [BFS(direction="push", parents=True), BFS(direction="push")]
    (_, with_parents, _), (result, _, reads) = _on_one_cut(graph, bfs, source=source)
    assert any(s.rounds == 2 for s in with_parents.supersteps), with_parents.supersteps
    plain = [BFS(direction="push"), BFS(direction="push")]  # (a cut's first run reads it)
    _, (_, _, alone) = _on_one_cut(_fresh(rmat), plain, source=source)
    assert reads == alone
    expected, _ = bg.enact(BFS(direction="push"), graph, backend="numpy", source=source)
    np.testing.assert_array_equal(result["depth"], expected["depth"])


def _on_one_cut(graph, primitives, **params):
    """Each of ``primitives`` run in turn on two counted "GPUs" of one transport (one cut of
    ``graph``), stepping as a GPU's kernels do: their results, stats and host reads."""
    backend = CountingBackend()
    runs = []
    with counting(backend):
        transport = bg.comm.Local([backend.on_device(0), backend.on_device(1)])
        for primitive in primitives:
            primitive.step = stepping_as_a_gpu(primitive.step)
            before = READS.count
            result, stats = bg.enact(
                primitive, graph, backend=backend, transport=transport, **params
            )
            runs.append((result, stats, READS.count - before))
    return runs


def _fresh(rmat):
    """A copy of the fixture's graph: a cut of it remembers nothing of the runs before."""
    graph, _ = rmat
    return bg.Graph.from_edges(*graph.edges(), num_vertices=graph.num_vertices, backend="numpy")


@pytest.mark.parametrize("name", ["bfs push", "sssp"])
def test_a_checked_run_on_gpus_of_their_own_reads_no_other_gpus_arrays(rmat, name):
    """``check=True`` counts each superstep's distinct frontier vertices: a mask frontier's
    ids are made on its own GPU (made with the first current, a later step on the second
    read them across GPUs), and the answer is one device's."""
    graph, _ = rmat
    primitive, params = runs(graph)[name]
    expected, _ = bg.enact(runs(graph)[name][0], graph, backend="numpy", **params)
    backend = CountingBackend()
    with counting(backend):
        transport = bg.comm.Local([backend.on_device(0), backend.on_device(1)])
        result, _ = bg.enact(
            primitive, graph, backend=backend, transport=transport, check=True, **params
        )
    for output, values in expected.items():
        if values is not None:
            np.testing.assert_allclose(result[output], values, rtol=1e-9)
