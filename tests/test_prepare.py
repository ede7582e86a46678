"""Graph.prepare, the one-time costs in Stats (prepare, compile) and backend=None by size."""

import time
from types import SimpleNamespace

import numpy as np
import pytest

import bspgraph as bg
from bspgraph.backend import CupyBackend, clock, select
from bspgraph.backend import cuda as cuda_module
from bspgraph.frontier import operators
from bspgraph.graph.graph import PREPARATIONS

UNDIRECTED = (
    "bfs",
    "sssp",
    "pagerank",
    "cc",
    "bc",
    "tc",
    "core_number",
    "closeness",
    "harmonic",
    "eigenvector",
    "katz",
    "hits",
    "pagerank_from",
)
DIRECTED = (
    "bfs",
    "sssp",
    "pagerank",
    "cc",
    "bc",
    "closeness",
    "harmonic",
    "katz",
    "hits",
    "pagerank_from",
    "strongly_connected_components",
)


def _call(name: str, graph, **run):
    """One call of the algorithm ``name`` and its result's arrays (for comparison)."""
    if name == "bfs":
        r = bg.bfs(graph, 0, **run)
        return r, [r.depth]
    if name == "sssp":
        r = bg.sssp(graph, 0, **run)
        return r, [r.distance]
    if name == "pagerank":
        r = bg.pagerank(graph, **run)
        return r, [r.rank]
    if name == "cc":
        r = bg.connected_components(graph, **run)
        return r, [r.labels]
    if name == "bc":
        r = bg.betweenness_centrality(graph, sources=[0, 1, 2], **run)
        return r, [r.centrality]
    if name == "tc":
        r = bg.triangle_count(graph, **run)
        return r, [r.per_vertex]
    if name == "core_number":
        r = bg.core_number(graph, **run)
        return r, [r.core]
    if name == "closeness":
        r = bg.closeness_centrality(graph, **run)
        return r, [r.centrality]
    if name == "harmonic":
        r = bg.harmonic_centrality(graph, **run)
        return r, [r.centrality]
    if name == "eigenvector":
        r = bg.eigenvector_centrality(graph, max_iter=1000, **run)
        return r, [r.centrality]
    if name == "katz":
        r = bg.katz_centrality(graph, alpha=1e-4, **run)
        return r, [r.centrality]
    if name == "hits":
        r = bg.hits(graph, max_iter=1000, **run)
        return r, [r.hubs, r.authorities]
    if name == "strongly_connected_components":
        r = bg.strongly_connected_components(graph, **run)
        return r, [r.labels]
    if name == "pagerank_from":
        r = bg.pagerank_from(graph, **run)
        return r, [r.rank]
    raise AssertionError(name)


@pytest.fixture
def ordered(monkeypatch):
    """Columns renamed in degree order on small graphs as well (the code path of large ones)."""
    monkeypatch.setattr(operators, "ORDERED_VERTICES", 1)
    monkeypatch.setattr(operators, "SKEW", 1)


def _graph(directed: bool):
    graph = bg.generators.rmat(7, 8, seed=3, weights=True, backend="numpy")
    if not directed:
        return graph
    src, dst, weight = graph.edges()
    keep = (src < dst) | (src % 3 == 0)  # some edges one way only: a directed graph
    return bg.Graph.from_edges(
        src[keep], dst[keep], weight[keep], num_vertices=graph.num_vertices, backend="numpy"
    )


def test_every_algorithm_has_a_preparation():
    assert set(UNDIRECTED) | set(DIRECTED) == set(PREPARATIONS)


@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_a_run_after_prepare_pays_no_preparation_and_answers_the_same(directed, ordered):
    for name in DIRECTED if directed else UNDIRECTED:
        fresh, prepared = _graph(directed), _graph(directed)
        assert prepared.prepare([name]) is prepared  # chainable
        first, want = _call(name, fresh)
        assert first.stats.prepare_seconds > 0, name  # the first call builds them, and says so
        result, got = _call(name, prepared)
        assert result.stats.prepare_seconds == 0, name
        assert result.stats.compile_seconds == 0, name  # NumPy compiles nothing
        for a, b in zip(want, got):
            np.testing.assert_array_equal(a, b, err_msg=name)
        again, _ = _call(name, fresh)  # a later call on the unprepared graph: built already
        assert again.stats.prepare_seconds == 0, name


def test_prepare_all_is_every_algorithm(ordered):
    graph = _graph(False).prepare()
    for name in UNDIRECTED:
        assert _call(name, graph)[0].stats.prepare_seconds == 0, name


def test_prepare_builds_the_columns_in_degree_order(ordered):
    graph = _graph(True).prepare("pagerank")
    assert isinstance(graph.cache[("ordered columns", "in")], tuple)


def test_prepare_refuses_an_unknown_name_and_lists_the_valid_ones():
    graph = _graph(False)
    with pytest.raises(ValueError, match=r"'bfz'.*'bc', 'bfs', 'cc', .*'tc'"):
        graph.prepare(["bfs", "bfz"])
    assert not graph.cache  # nothing built before the check


def test_a_preparation_is_out_of_the_loop_and_the_phases_add_up(monkeypatch):
    graph = _graph(False)
    original = bg.primitives.PageRank.prepare

    def slow(self, graph):
        original(self, graph)
        graph.cached("slow structure", lambda: time.sleep(0.2))

    monkeypatch.setattr(bg.primitives.PageRank, "prepare", slow)
    started = time.perf_counter()
    stats = bg.pagerank(graph).stats
    whole = time.perf_counter() - started
    assert stats.prepare_seconds >= 0.2
    assert stats.seconds < 0.2 and sum(s.seconds for s in stats.supersteps) < 0.2
    parts = (
        stats.seconds
        + stats.prepare_seconds
        + stats.compile_seconds
        + stats.setup_seconds
        + stats.gather_seconds
    )
    assert parts <= whole and parts >= 0.9 * whole - 0.005


@pytest.mark.parametrize("devices", [1, 2, 3])
def test_a_lazy_build_inside_a_step_is_taken_out_of_the_loop(monkeypatch, devices):
    """On several devices too: each part builds its own, and the lifted loop and its
    supersteps are timed without them, as one device's are."""
    graph = _graph(False)
    original = bg.primitives.CC.step

    def step(self, graph, frontier, state, iteration):
        graph.cached("built in a step", lambda: time.sleep(0.1))
        return original(self, graph, frontier, state, iteration)

    monkeypatch.setattr(bg.primitives.CC, "step", step)
    stats = bg.connected_components(graph, devices=devices, backend="numpy").stats
    assert stats.prepare_seconds >= 0.1 * devices and stats.seconds < 0.1
    assert all(s.seconds < 0.1 for s in stats.supersteps)


def test_clock_counts_a_nested_payment_once_for_its_own_kind():
    before = clock.paid()
    with clock.paying("prepare"):
        time.sleep(0.02)
        with clock.paying("compile"):
            time.sleep(0.05)
    paid = clock.since(before)
    assert 0.05 <= paid["compile"] < 0.06 + 0.05
    assert 0.02 <= paid["prepare"] < 0.05
    with pytest.raises(ValueError, match="'prepare', 'compile'"):
        with clock.paying("load"):
            pass


class _FakeCupy:
    """Stands in for cupy: a RawKernel whose compile takes 10 ms, and CuPy's compiler module."""

    def __init__(self):
        self.compiled = []

        def compile_module(*args, **kwargs):
            time.sleep(0.01)
            return "module"

        self.cuda = SimpleNamespace(
            compiler=SimpleNamespace(_compile_module_with_cache=compile_module)
        )

    def RawKernel(self, source, name, **options):  # noqa: N802 (cupy's spelling)
        def build():
            time.sleep(0.01)
            self.compiled.append(name)

        return SimpleNamespace(source=source, name=name, compile=build)


def test_a_kernel_is_compiled_when_made_and_its_time_paid_as_compile():
    cupy = _FakeCupy()
    before = clock.paid()
    kernel = cuda_module.compile_kernel(cupy, "extern C k(T x) {}", "k", T="int")
    assert cupy.compiled == ["k"] and kernel.source == "extern C k(int x) {}"
    assert clock.since(before)["compile"] >= 0.01
    before = clock.paid()
    assert cuda_module.compile_kernel(cupy, "extern C k(T x) {}", "k", T="int") is kernel
    assert clock.since(before)["compile"] == 0  # built once


def test_cupys_own_compilations_are_paid_as_compile():
    cupy = _FakeCupy()
    assert cuda_module.time_compilation(cupy)
    wrapped = cupy.cuda.compiler._compile_module_with_cache
    assert cuda_module.time_compilation(cupy)  # once: not wrapped twice
    assert cupy.cuda.compiler._compile_module_with_cache is wrapped
    before = clock.paid()
    assert wrapped("source", ()) == "module"
    assert clock.since(before)["compile"] >= 0.01
    assert not cuda_module.time_compilation(SimpleNamespace(cuda=SimpleNamespace()))


def test_precompiled_headers_are_switched_on_unless_the_user_chose(monkeypatch):
    monkeypatch.delenv("CUPY_NVRTC_USE_PCH", raising=False)
    compiler = SimpleNamespace(_use_pch=False)
    assert cuda_module.use_precompiled_headers(
        SimpleNamespace(cuda=SimpleNamespace(compiler=compiler))
    )
    assert compiler._use_pch is True
    monkeypatch.setenv("CUPY_NVRTC_USE_PCH", "0")  # the user's choice stands
    compiler = SimpleNamespace(_use_pch=False)
    assert not cuda_module.use_precompiled_headers(
        SimpleNamespace(cuda=SimpleNamespace(compiler=compiler))
    )
    assert compiler._use_pch is False
    monkeypatch.delenv("CUPY_NVRTC_USE_PCH")
    assert not cuda_module.use_precompiled_headers(SimpleNamespace(cuda=SimpleNamespace()))


# ---- backend=None by size (issue 29, item 6) --------------------------------------------------
@pytest.fixture
def a_gpu(monkeypatch):
    """CuPy "usable": the size rule decides (a run that did pick CuPy would fail here)."""
    monkeypatch.delenv(select.ENV_VAR, raising=False)
    monkeypatch.setattr(select, "gpu_count", lambda: 1)


def test_a_small_host_graph_runs_on_numpy_when_a_gpu_is_usable(a_gpu):
    graph = _graph(False)
    assert graph.num_edges < select.SMALL_GRAPH_EDGES
    for name in UNDIRECTED:  # batched ones (bc, closeness) size their batches by the same choice
        stats = _call(name, graph)[0].stats
        assert stats.backend == "numpy", name
        assert (
            "SMALL_GRAPH_EDGES" in stats.backend_reason and "launch-bound" in stats.backend_reason
        )
    stats = bg.bfs(graph, sources=[0, 1, 2]).stats
    assert stats.backend == "numpy"


def test_a_large_host_graph_is_chosen_for_the_gpu(a_gpu, monkeypatch):
    graph = _graph(False)
    monkeypatch.setattr(select, "SMALL_GRAPH_EDGES", graph.num_edges)
    name, reason = select.choose(None, graph)
    assert name == "cupy" and f">= SMALL_GRAPH_EDGES = {graph.num_edges:,}" in reason


def test_a_backend_given_always_wins(a_gpu, monkeypatch):
    graph = _graph(False)
    monkeypatch.setattr(select, "SMALL_GRAPH_EDGES", 0)  # every graph "large"
    stats = bg.bfs(graph, 0, backend="numpy").stats
    assert (stats.backend, stats.backend_reason) == ("numpy", "backend='numpy' given")
    assert select.choose("cupy", graph)[0] == "cupy"  # even for a small graph
    monkeypatch.setattr(select, "SMALL_GRAPH_EDGES", 1 << 40)
    assert select.choose("cupy", graph) == ("cupy", "backend='cupy' given")
    numpy_backend = bg.get_backend("numpy")
    assert select.choose(numpy_backend, graph)[0] is numpy_backend
    monkeypatch.setenv(select.ENV_VAR, "numpy")
    assert select.choose(None, graph) == ("numpy", "$BSPGRAPH_BACKEND=numpy")


def test_a_graph_on_a_gpu_stays_on_that_gpu():
    """The choice is the graph's own backend, device and all: a graph on GPU 1 (an MPI or
    NCCL rank's) is not run, nor are a driver's arrays made, on GPU 0."""
    gpu1 = SimpleNamespace(capabilities=CupyBackend.capabilities, name="cupy", device=1)
    chosen, reason = select.choose(None, SimpleNamespace(backend=gpu1, num_edges=10))
    assert chosen is gpu1 and "lives on cupy" in reason


@pytest.mark.gpu
def test_the_cupy_backend_defaults_to_the_current_gpu():
    cupy = pytest.importorskip("cupy")
    if bg.backend.gpu_count() < 2:
        pytest.skip("needs two GPUs")
    with cupy.cuda.Device(1):
        assert bg.get_backend("cupy").device == 1
    assert bg.get_backend("cupy").device == cupy.cuda.runtime.getDevice()


def test_without_a_gpu_the_choice_says_so(monkeypatch):
    monkeypatch.delenv(select.ENV_VAR, raising=False)
    monkeypatch.setattr(select, "gpu_count", lambda: 0)
    stats = bg.pagerank(_graph(False)).stats
    assert (stats.backend, stats.backend_reason) == ("numpy", "no GPU usable")
    stats = bg.bfs(_graph(False), 0, devices=2).stats  # several devices: no size rule
    assert (stats.backend, stats.backend_reason) == ("numpy", "no GPU usable")
