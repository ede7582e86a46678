"""Device memory: the estimate before a run, the typed error when it does not fit, and the int32
to int64 switch past 2**31 (checked without allocating billions of elements)."""

import tracemalloc
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest

import bspgraph as bg
from bspgraph import memory
from bspgraph.backend import NumpyBackend
from bspgraph.exceptions import DeviceError, OutOfDeviceMemory
from bspgraph.frontier import operators
from bspgraph.frontier.advance import push
from bspgraph.graph import csr as csr_module
from bspgraph.graph.build import _check_ids
from bspgraph.graph.graph import INT32_MAX, index_dtype
from bspgraph.primitives import BFS, CC, SCC, SSSP, TC, PageRank

GiB = 2**30


@dataclass(frozen=True)
class FakeGPU(NumpyBackend):
    """NumPy arrays, but a GPU's answer to "how much memory is free"."""

    free: int = field(default=0, compare=False)  # equal to itself with any amount free

    def free_bytes(self) -> int:
        return self.free


def fake_gpu(free: int, device: int = 3) -> FakeGPU:
    return FakeGPU(np, device, free)


def shape(num_vertices, num_edges, *, directed=True, weights=None):
    """A stand-in graph with sizes and dtypes only: no V-long arrays."""
    weights = None if weights is None else np.zeros(0, dtype=weights)
    forward = SimpleNamespace(weights=weights)
    return SimpleNamespace(
        num_vertices=num_vertices,
        num_edges=num_edges,
        directed=directed,
        weighted=weights is not None,
        weights=weights,
        forward=forward,
    )


PRIMITIVES = {
    "bfs": BFS(parents=False, direction="auto"),
    "bfs-push": BFS(parents=False, direction="push"),
    "bfs-parents": BFS(parents=True, direction="auto"),
    "sssp": SSSP(),
    "cc": CC(),
    "pagerank": PageRank(alpha=0.85, tol=1e-6, max_iter=100),
    "tc": TC(),
}


# --- the estimate ----------------------------------------------------------------------------
def test_estimate_by_hand_for_sssp():
    graph = bg.Graph.from_edges(
        [0, 1, 2], [1, 2, 0], [1.0, 2.0, 3.0], num_vertices=5, backend="numpy"
    )
    n, m = 5, 3
    expected = (
        (n + 1) * 4  # offsets
        + m * (4 + 8)  # int32 ids, float64 weights
        + n * 4  # out-degrees
        + (n + 1) * 4
        + m * (4 + 8 + 4)
        + n * 4  # directed: the in-CSR its pulls build, degrees
        + n * 8  # distance (the weight dtype)
        + 2 * n * (4 + 1)  # two frontiers, ids and mask
        + n * (2 * 4 + 4 + 8)  # fused output (two halves of the levels' queue), queued, scan
    )  # (relax_min's push and pull are kernels: no per-edge temporaries)
    assert memory.estimate(SSSP(), graph) == expected
    with_parents = expected + n * 4 + m * memory.PUSH_BYTES_PER_EDGE  # the functor's chunks
    assert memory.estimate(SSSP(parents=True), graph) == with_parents


def test_estimate_counts_the_reverse_only_when_pulling_a_directed_graph():
    directed = shape(1000, 50_000)
    undirected = shape(1000, 50_000, directed=False)
    reverse = (1000 + 1) * 4 + 50_000 * (4 + 4) + 1000 * 4  # in-CSR with edge ids, in-degrees
    pull, push_only = PRIMITIVES["bfs"], PRIMITIVES["bfs-push"]
    assert memory.estimate(pull, directed) - memory.estimate(push_only, directed) == reverse
    assert memory.estimate(pull, undirected) == memory.estimate(push_only, undirected)
    in_sample = (1000 + 1) * 4 + 2 * 1000 * 4  # CC never pulls: only its in-lists' sample
    assert memory.estimate(CC(), directed) - memory.estimate(CC(), undirected) == in_sample


def test_estimate_counts_optional_state_and_generic_pull_temporaries():
    graph = shape(1000, 50_000)
    assert (
        memory.estimate(PRIMITIVES["bfs-parents"], graph)
        - memory.estimate(PRIMITIVES["bfs"], graph)
    ) == 1000 * 4
    pagerank = memory.estimate(PRIMITIVES["pagerank"], graph)  # an SpMV: no per-edge temporaries
    assert pagerank < 50_000 * memory.PULL_BYTES_PER_EDGE

    class GenericPull(PageRank):  # a primitive whose pull runs operators over every in-edge
        pull_kind = "generic"

    generic = memory.estimate(GenericPull(alpha=0.85, tol=1e-6, max_iter=100), graph)
    assert generic - pagerank == 50_000 * memory.PULL_BYTES_PER_EDGE  # (it never pushes)

    class GenericPush(BFS):  # a traversal whose push calls its functor on chunks of edges
        push_kind = "generic"

    pushed = min(50_000, push.CHUNK_EDGES) * memory.PUSH_BYTES_PER_EDGE
    bfs = PRIMITIVES["bfs-push"]
    assert (
        memory.estimate(GenericPush(**bfs.options), graph) - memory.estimate(bfs, graph) == pushed
    )


def test_betweenness_and_scc_count_their_products_not_every_in_edge():
    """Brandes' phases are sparse products, pulled or pushed from a few sources (their rows
    copied: at most a quarter of the entries), batched ones products over the lanes (their
    temporaries a vertex and lane), and SCC's backward step a min over rows, not operators over
    every in-edge: on rmat26's shape Brandes from one source or eight fits one H200, and so
    does SCC (the estimate once asked for 199 GiB of each)."""
    from bspgraph.primitives.bc_backward import Backward
    from bspgraph.primitives.bc_batched_backward import BatchedBackward
    from bspgraph.primitives.bc_batched_forward import BatchedForward
    from bspgraph.primitives.bc_forward import Forward

    rmat26 = shape(2**26, 2_103_827_300, directed=False, weights="float32")
    phases = (Forward(), Backward(bounds=(0, 1, 1)))
    for phase in phases:
        assert memory.estimate(phase, rmat26) < 60 * GiB
    graph = shape(1000, 50_000, directed=False, weights="float32")

    scc = memory.estimate(SCC(), shape(2**26, 2_103_827_300))  # a min over rows, and colours
    assert scc < 60 * GiB  # pushed by its functor in chunks (the estimate once: 199 GiB)

    def batched(lanes):  # forward phases of lanes sources at once, and their backward ones
        return [BatchedForward(lanes=lanes), BatchedBackward(lanes=lanes, bounds=(0, 1, 1))]

    assert all(memory.estimate(phase, rmat26) < 100 * GiB for phase in batched(8))
    more = [
        memory.estimate(p, rmat26) - memory.estimate(q, rmat26)
        for p, q in zip(*map(batched, (16, 8)))
    ]
    state = (4 + 8, 8 + 8 + 8 + 4 + 8)  # depth and sigma; sigma, delta, share, rows, columns
    assert more == [2**26 * 8 * (held + memory.LANE_WORK_BYTES) for held in state]

    class Pulled(Forward):  # the same phase, never pushing a product
        push_kind = "fused"

    copied = -(-50_000 // 4) * memory.PRODUCT_PUSH_BYTES
    assert memory.estimate(Forward(), graph) - memory.estimate(Pulled(), graph) == copied


def test_estimate_counts_columns_in_degree_order_on_large_graphs(monkeypatch):
    graph = shape(1000, 50_000, directed=False)
    plain = {name: memory.estimate(PRIMITIVES[name], graph) for name in PRIMITIVES}
    monkeypatch.setattr(operators, "ORDERED_VERTICES", 1000)
    for name in ("pagerank", "sssp"):  # their pulls reduce every list
        assert memory.estimate(PRIMITIVES[name], graph) - plain[name] == 51_000 * 4
    for name in ("bfs", "cc", "tc"):  # BFS's pull stops at a parent; CC and TC never pull
        assert memory.estimate(PRIMITIVES[name], graph) == plain[name]


def test_estimate_counts_the_lists_a_primitive_samples_or_copies():
    graph = shape(1000, 50_000, directed=False)

    class Unsampled(CC):
        sampled_entries = 0

    class Uncopied(TC):
        list_copies = 0.0

    sample = (1000 + 1) * 4 + 2 * 1000 * 4  # the first two entries of each list, kept
    sample += 2 * 1000 * memory.SAMPLE_BUILD_BYTES + 1000 * 4  # while it is built
    assert memory.estimate(CC(), graph) - memory.estimate(Unsampled(), graph) == sample
    oriented = (1000 + 1) * 8 + 25_000 * 4  # half the edges, int64 offsets
    oriented += 50_000 * memory.COPY_BUILD_BYTES_PER_EDGE
    assert memory.estimate(TC(), graph) - memory.estimate(Uncopied(), graph) == oriented


def test_push_temporaries_are_bounded_by_the_chunk():
    small, large = shape(10, push.CHUNK_EDGES), shape(10, 4 * push.CHUNK_EDGES)
    csr_growth = 3 * push.CHUNK_EDGES * (4 + 4 + 4)  # only the stored out- and in-lists grow
    generic = SSSP(parents=True)  # (its push calls the functor on chunks of edges)
    assert memory.estimate(generic, large) - memory.estimate(generic, small) == csr_growth


def test_a_power_iteration_counts_its_iterates_not_an_advance_s_buffers():
    """A primitive that works on every vertex never advances: its frontier is a mask of
    every vertex (on a part, the owned mask counted with the part), and it holds its pulled
    sums and new iterates (memory.POWER_BYTES a vertex) where a traversal holds two frontiers'
    ids and masks and an advance's buffers; on a part, no listing's stamps nor lowered
    levels either, and its lists split into its own entries and the others' (for the
    others' values to arrive behind its pull)."""
    graph = shape(1000, 50_000, directed=False)

    class Listed(PageRank):
        every_vertex = False

    pagerank = PRIMITIVES["pagerank"]
    listed = Listed(**pagerank.options)
    ids = 4  # (int32 ids: 1000 vertices)
    advancing = 2 * (ids + 1) + (2 * ids + memory.QUEUED_BYTES + 8)
    one = memory.estimate(listed, graph) - memory.estimate(pagerank, graph)
    assert one == 1000 * (advancing - 1 - memory.POWER_BYTES)
    four = memory.estimate(listed, graph, devices=4) - memory.estimate(pagerank, graph, devices=4)
    edges = 50_000 // 4  # a part's (unweighted): its lists split into its own entries and others'
    split = edges * ids + 1000 * (3 * 4 + ids)  # (int32 offsets; and while built, a count a
    # row and each vertex's index on its side)
    assert four == 1000 * (advancing - memory.POWER_BYTES + 4 + 4) - split


def test_estimate_on_several_devices_splits_the_edges():
    graph = shape(1000, 1_000_000, directed=False)
    one = memory.estimate(CC(), graph)
    four = memory.estimate(CC(), graph, devices=4)
    assert four < one / 2
    replicated = memory.estimate(TC(), graph, devices=4)  # TC gives every device the whole graph
    assert replicated > memory.estimate(TC(), graph)


def generic(primitive):
    """``primitive`` with every advance it makes taken as a functor's (``push_kind`` and
    ``pull_kind`` "generic"): NumPy's host kernels hold per-edge temporaries as those do."""
    kinds = {
        kind: "generic"
        for kind in ("push_kind", "pull_kind")
        if getattr(primitive, kind) is not None
    }
    return type("Generic" + type(primitive).__name__, (type(primitive),), kinds)(
        **primitive.options
    )


@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
@pytest.mark.parametrize("name", ["bfs", "bfs-parents", "sssp", "pagerank"])
def test_estimate_covers_what_a_numpy_run_allocates(name, directed):
    """A proxy for the GPU's generic path: NumPy's peak (tracemalloc) plus the graph fits the
    estimate with every advance generic (a GPU's fused kernels hold no per-edge temporaries:
    tests/test_gpu.py measures those runs against the estimate as it is; CC's NumPy links
    are scipy's, with no GPU counterpart)."""
    rmat = bg.generators.rmat(12, 16, seed=1, weights=True, backend="numpy")
    src, dst, weight = rmat.edges()
    source = int(np.argmax(np.diff(rmat.offsets)))
    bg.bfs(bg.generators.grid(3, 3, backend="numpy"), 0)  # lazy imports outside the measure

    def build():
        return bg.Graph.from_edges(
            src, dst, weight, num_vertices=rmat.num_vertices, directed=directed, backend="numpy"
        )

    runs = {
        "bfs": lambda g: bg.bfs(g, source),
        "bfs-parents": lambda g: bg.bfs(g, source, parents=True),
        "sssp": lambda g: bg.sssp(g, source),
        "cc": bg.connected_components,
        "pagerank": bg.pagerank,
    }
    graph = build()
    resident = memory._resident_bytes(graph)
    tracemalloc.start()
    try:
        runs[name](graph)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    estimate = memory.estimate(generic(PRIMITIVES[name]), build())
    assert resident + peak <= estimate
    assert estimate <= 8 * (resident + peak)  # and not far above it (1.6-5.2 times, measured)


@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_scc_estimate_as_declared_covers_a_numpy_run(directed):
    """SCC as it declares itself (its colours pushed by a functor in chunks, its backward min
    a row reduction): NumPy's peak (tracemalloc) plus the graph fits the estimate, and not far
    below it (1.3-1.4 times on rmat 12-16, measured), where the generic push's chunk is what a
    GPU's functor holds too."""
    rmat = bg.generators.rmat(12, 16, seed=1, weights=True, backend="numpy")
    src, dst, weight = rmat.edges()
    bg.strongly_connected_components(bg.generators.grid(3, 3, backend="numpy"))  # lazy imports

    def build():
        return bg.Graph.from_edges(
            src, dst, weight, num_vertices=rmat.num_vertices, directed=directed, backend="numpy"
        )

    graph = build()
    resident = memory._resident_bytes(graph)
    tracemalloc.start()
    try:
        bg.strongly_connected_components(graph)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    estimate = memory.estimate(SCC(), build())
    assert resident + peak <= estimate <= 3 * (resident + peak)


# --- the check and the enactor ---------------------------------------------------------------
def test_check_is_a_no_op_on_the_cpu(monkeypatch):
    """No estimate, no error on NumPy, for a graph no memory holds (which a GPU refuses)."""
    huge = shape(10**12, 10**13)
    with pytest.raises(OutOfDeviceMemory):
        memory.check(SSSP(), huge, fake_gpu(2**40))

    def estimate(*args, **kwargs):
        raise AssertionError("estimated on the CPU")

    monkeypatch.setattr(memory, "estimate", estimate)
    assert memory.check(SSSP(), huge, bg.get_backend("numpy")) is None


def test_check_raises_with_need_and_free():
    graph = bg.generators.grid(30, 30, backend="numpy")
    need = memory.estimate(SSSP(), graph)
    memory.check(SSSP(), graph, fake_gpu(need))  # exactly enough
    with pytest.raises(OutOfDeviceMemory) as error:
        memory.check(SSSP(), graph, fake_gpu(need - 1, device=2))
    message = str(error.value)
    assert isinstance(error.value, DeviceError) and isinstance(error.value, ValueError)
    mib = 2**20
    assert f"needs {need / mib:.2f} MiB, {(need - 1) / mib:.2f} MiB free on GPU 2" in message
    assert "SSSP on 900 vertices, 3480 edges" in message


def test_check_counts_a_resident_graph_as_available():
    backend = fake_gpu(0)
    graph = bg.generators.grid(30, 30, backend="numpy").to(backend)
    need, resident = memory.estimate(CC(), graph), memory._resident_bytes(graph)
    assert 0 < resident < need
    memory.check(CC(), graph, fake_gpu(need - resident))
    with pytest.raises(OutOfDeviceMemory):
        memory.check(CC(), graph, fake_gpu(need - resident - 1))
    memory.check(CC(), graph.to("numpy"), fake_gpu(need))  # not resident on the "GPU"
    with pytest.raises(OutOfDeviceMemory):
        memory.check(CC(), graph.to("numpy"), fake_gpu(need - 1))


@pytest.mark.parametrize(
    "run",
    [
        lambda g, b: bg.bfs(g, 0, backend=b),
        lambda g, b: bg.sssp(g, 0, backend=b),
        lambda g, b: bg.connected_components(g, backend=b),
        lambda g, b: bg.pagerank(g, backend=b),
    ],
    ids=["bfs", "sssp", "cc", "pagerank"],
)
def test_enact_checks_before_the_run(run):
    graph = bg.generators.rmat(8, 8, seed=3, weights=True, backend="numpy")
    with pytest.raises(OutOfDeviceMemory, match=r"needs \d+\.\d\d MiB, 0\.00 MiB free on GPU 3"):
        run(graph, fake_gpu(1000))
    plenty = run(graph, fake_gpu(64 * GiB))
    expected = run(graph, "numpy")
    for name in ("depth", "distance", "labels", "rank"):
        if hasattr(expected, name):
            assert np.array_equal(getattr(plenty, name), getattr(expected, name))


# --- int32 -> int64 past 2**31 ---------------------------------------------------------------
def test_index_dtype_switches_past_int32():
    assert INT32_MAX == 2**31 - 1
    assert index_dtype(0) == np.int32
    assert index_dtype(2**31 - 1) == np.int32
    assert index_dtype(2**31) == np.int64
    assert index_dtype(2**31 + 5) == np.int64
    assert index_dtype(2**40) == np.int64


def test_ids_checked_for_huge_vertex_counts_without_v_arrays():
    """The id check of Graph.from_edges handles a count past 2**31 with 3 edges (it allocates
    nothing V-long; the CSR offsets would: 2**31 + 6 entries, which is why no Graph is built)."""
    src = np.array([0, 1, 2**31 + 4])
    dst = np.array([2**31 + 4, 2**31, 0])
    assert _check_ids(src, dst, 2**31 + 5, np) == 2**31 + 5
    assert _check_ids(src, dst, None, np) == 2**31 + 5
    with pytest.raises(ValueError, match=r"vertex 2147483652 out of range \[0, 2147483652\)"):
        _check_ids(src, dst, 2**31 + 4, np)


def test_estimate_uses_int64_ids_past_2_31():
    below, above = shape(2**31 - 1, 3), shape(2**31 + 5, 3)
    bfs = PRIMITIVES["bfs-push"]
    per_vertex_below = memory.estimate(bfs, below) / below.num_vertices
    per_vertex_above = memory.estimate(bfs, above) / above.num_vertices
    # five id arrays (depth, two frontiers' ids, the fused output's two halves) grow from 4 to 8
    assert per_vertex_above - per_vertex_below == pytest.approx(5 * 4, abs=0.01)
    with pytest.raises(
        OutOfDeviceMemory, match=r"2147483653 vertices, 3 edges needs 124.00 GiB, 16.00 GiB free"
    ):
        memory.check(bfs, above, fake_gpu(16 * GiB))


class _RecordingCupy:
    """Stands in for cupy: RawKernel returns the source it would compile (compiling nothing)."""

    def RawKernel(self, source, name, **options):  # noqa: N802 (cupy's spelling)
        return SimpleNamespace(source=source, name=name, compile=lambda: None)


@pytest.mark.parametrize(
    "kernel, types",
    [
        ("_VISIT", {"id": np.int64, "off": np.int64, "depth": np.int64}),
        ("_VISIT_PULL", {"id": np.int64, "off": np.int64, "depth": np.int64}),
        ("_RELAX", {"id": np.int64, "off": np.int64, "dist": np.float64}),
        ("_VISIT", {"id": np.int32, "off": np.int64, "depth": np.int32}),
        ("_VISIT_LEVELS", {"id": np.int64, "off": np.int64, "depth": np.int64, "deg": np.int64}),
        ("_RELAX_LEVELS", {"id": np.int64, "off": np.int64, "dist": np.float64, "deg": np.int64}),
    ],
)
def test_fused_kernels_take_64_bit_ids(kernel, types):
    """The CUDA sources get 'long long' ids and offsets for int64 arrays, and no placeholder is
    left; the edge index (e) and the frontier scan are 64-bit whatever the id type."""
    from bspgraph.frontier import kernels

    source = kernels.typed_kernel(_RecordingCupy(), getattr(kernels, kernel), "k", **types).source
    c_types = {np.int32: "int", np.int64: "long long", np.float64: "double"}
    for placeholder in ("ID", "OFF", "DEPTH", "DIST"):
        assert not __import__("re").search(rf"\b{placeholder}\b", source)
    assert f"const {c_types[types['id']]}* indices" in source
    if kernel.endswith("_LEVELS"):  # a row's bounds and its entries' positions are OFF
        assert f"{c_types[types['off']]} start = 0, end = 0;" in source
    elif kernel != "_VISIT_PULL":
        assert f"const {c_types[types['off']]}* starts" in source
        assert "long long e = (long long)(small ? offsets[ids[lo]] : starts[lo])" in source
        assert "const long long* scan" in source


@pytest.mark.parametrize("name", ["bfs", "sssp", "cc", "pagerank", "bc", "tc"])
def test_int64_path_at_small_scale(monkeypatch, name):
    """With the int32 limit lowered to 40, a 64-vertex graph gets int64 ids and offsets, as a
    graph past 2**31 would, and every primitive gives the int32 graph's answer."""
    rmat = bg.generators.rmat(6, 4, seed=5, weights=True, backend="numpy")
    src, dst, weight = rmat.edges()
    runs = {
        "bfs": lambda g: bg.bfs(g, 1, parents=True).depth,
        "sssp": lambda g: bg.sssp(g, 1).distance,
        "cc": lambda g: bg.connected_components(g).labels,
        "pagerank": lambda g: bg.pagerank(g, tol=1e-10).rank,
        "bc": lambda g: bg.betweenness_centrality(g).centrality,
        "tc": lambda g: bg.triangle_count(g).per_vertex,
    }
    expected = runs[name](rmat)
    monkeypatch.setattr(csr_module, "INT32_MAX", 40)
    wide = bg.Graph.from_edges(src, dst, weight, num_vertices=64, directed=False, backend="numpy")
    assert wide.indices.dtype == np.int64 and wide.offsets.dtype == np.int64
    assert wide.reverse.offsets.dtype == np.int64
    got = runs[name](wide)
    assert np.allclose(got, expected, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_estimate_for_one_part_of_several():
    graph = shape(1000, 1_000_000)  # directed: a part carries its in-edges as well
    sssp = SSSP(parents=True)  # (a push through its functor: per-edge temporaries)
    even = memory.estimate(sssp, graph, devices=4)
    assert memory.estimate(sssp, graph, devices=4, edges=250_000) == even
    heavy = memory.estimate(sssp, graph, devices=4, edges=900_000)
    # out- and in-edges (int32 ids), and the push temporaries of 650_000 more edges
    assert heavy - even == 2 * 650_000 * 4 + 650_000 * memory.PUSH_BYTES_PER_EDGE
    with pytest.raises(OutOfDeviceMemory, match=r"\(4 devices\) needs"):
        memory.check(sssp, graph, fake_gpu(even), devices=4, edges=900_000)


@pytest.mark.gpu
def test_check_on_a_real_gpu():
    gpu = bg.get_backend("cupy")
    graph = bg.generators.grid(30, 30, backend="numpy")
    memory.check(SSSP(), graph, gpu)
    memory.check(SSSP(), graph.to(gpu), gpu)
    with pytest.raises(OutOfDeviceMemory, match=r"GiB free on GPU 0"):
        memory.check(SSSP(), shape(2**36, 2**38, weights=np.float32), gpu)
