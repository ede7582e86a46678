"""bg.cluster: runs from one Python call on worker processes, one a device (an MPI job of
NumPy workers here, driven through Dask), equal to networkx; faults end a call with one error."""

import importlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
import weakref

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import examples

import bspgraph as bg
from bspgraph.enactor import Primitive, State
from bspgraph.testing import COMMUNICATORS, PARTITIONERS

distributed = pytest.importorskip("distributed")
pytest.importorskip("mpi4py")
pytestmark = pytest.mark.mpi

import cloudpickle  # noqa: E402 (Dask's: the test primitives travel by value)

cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _graph(n=60, seed=3):
    """A connected-ish undirected graph with weights 1..9, a self-loop and a lone vertex."""
    g = nx.gnm_random_graph(n, 3 * n, seed=seed)
    rng = np.random.default_rng(seed)
    for u, v in g.edges:
        g.edges[u, v]["weight"] = int(rng.integers(1, 10))
    g.add_edge(5, 5, weight=1)
    g.add_node(n)
    return g


@pytest.fixture(scope="module")
def workers():
    cluster = bg.cluster(2, backend="numpy")
    yield cluster
    cluster.close()


def _check_every_primitive(g, run):
    graph = bg.Graph.from_networkx(g, weight="weight", backend="numpy")
    depth = bg.bfs(graph, 0, **run).depth
    hops = nx.single_source_shortest_path_length(g, 0)
    assert all(depth[v] == hops.get(v, -1) for v in g)
    distance = bg.sssp(graph, 0, **run).distance
    lengths = nx.single_source_dijkstra_path_length(g, 0)
    assert all(distance[v] == lengths[v] for v in lengths)
    labels = bg.connected_components(graph, **run).labels
    for component in nx.connected_components(g):
        assert {int(labels[v]) for v in component} == {min(component)}
    rank = bg.pagerank(graph, tol=1e-12, **run).rank
    expected = nx.pagerank(g, weight="weight", tol=1e-12)
    np.testing.assert_allclose(rank, [expected[v] for v in g], rtol=1e-6)
    centrality = bg.betweenness_centrality(graph, k=6, seed=1, **run).centrality
    expected = nx.betweenness_centrality(g, k=6, seed=1)
    np.testing.assert_allclose(centrality, [expected[v] for v in g], rtol=1e-9, atol=1e-12)
    simple = g.copy()  # (k-cores are of graphs without self-loops, in both)
    simple.remove_edges_from(list(nx.selfloop_edges(simple)))
    core = bg.core_number(bg.Graph.from_networkx(simple, backend="numpy"), **run).core
    assert all(core[v] == k for v, k in nx.core_number(simple).items())


def test_every_primitive_on_two_workers_equals_networkx(workers):
    _check_every_primitive(_graph(), {"cluster": workers})  # (NaN: a sampled source, as nx)


def test_workers_run_without_dask_s_profiler_and_monitors(workers):
    def settings():
        import dask

        return [
            dask.config.get(key)
            for key in (
                "distributed.worker.profile.enabled",
                "distributed.admin.system-monitor.interval",
                "distributed.worker.memory.monitor-interval",
                "distributed.admin.tick.interval",
            )
        ]

    seen = workers._client.run(settings)  # (Dask's own call on every worker)
    assert list(seen.values()) == [[False, "1h", "1h", "1h"]] * 2


def test_runs_hold_the_workers_event_loop_and_the_scheduler_keeps_them(workers):
    """A run goes on the worker's event loop (the actor's methods are coroutines: no thread
    beside the run), so a long run holds the loop: the scheduler gives workers no time to
    live, and they answer again once the run is over."""
    import inspect

    rank = importlib.import_module("bspgraph.enactor.cluster")._Rank
    assert inspect.iscoroutinefunction(rank.run) and inspect.iscoroutinefunction(rank.rank)
    assert workers._scheduler.scheduler.worker_ttl is None
    graph = bg.Graph.from_networkx(_graph(), backend="numpy")
    assert bg.bfs(graph, 0, cluster=workers).depth.shape == (graph.num_vertices,)
    assert len(workers._client.scheduler_info()["workers"]) == 2


@pytest.mark.parametrize("size", [3, 4])
def test_three_and_four_workers_equal_networkx(size):
    with bg.cluster(size, backend="numpy"):  # every run in the block goes to the workers
        _check_every_primitive(_graph(40, seed=size), {})


def test_a_second_call_on_a_graph_sends_nothing_and_sets_nothing_up(workers, monkeypatch):
    """The first call sends each worker its own part only (cut here), rank 0 the whole graph
    beside it (its light supersteps alone: rule 6); a second call on the same graph and cut
    sends nothing and sets nothing up; another cut sends parts again."""
    graph = bg.generators.rmat(9, 8, seed=4, backend="numpy")
    sent = []
    parts = workers._parts
    monkeypatch.setattr(workers, "_parts", lambda *a: sent.extend(parts(*a)) or sent[-2:])
    first = bg.bfs(graph, 1, cluster=workers)
    assert [part.partition.device for part in sent] == [0, 1]
    assert sum(part.num_edges for part in sent) == graph.num_edges  # (out-edges: owners')
    assert sent[0].partition.whole.num_edges == graph.num_edges and not sent[1].partition.whole
    assert 1 in [step.devices for step in first.stats.supersteps]
    sent.clear()
    second = bg.bfs(graph, 1, cluster=workers)
    assert first.stats.setup_seconds > 0 and second.stats.setup_seconds == 0 and not sent
    bg.bfs(graph, 1, cluster=workers, partitioner="edge_balanced")
    assert len(sent) == 2
    assert np.array_equal(second.depth, bg.bfs(graph, 1, backend="numpy").depth)
    assert second.stats.devices == 2


def test_betweenness_is_one_call_a_batch_and_its_phases_hand_over_on_the_workers(workers):
    """Betweenness' forward and backward runs, every batch's, go to the workers as one chain
    (one call, not one a run): the depths and path counts never come back here, and the
    centralities equal networkx's, batched or one source at a time; a path count past
    float64 on the workers is the PathCountOverflow of one process."""
    g = _graph(50, seed=8)
    graph = bg.Graph.from_networkx(g, backend="numpy")
    calls = []
    enact = type(workers).enact
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(type(workers), "enact", lambda *a, **k: calls.append(a[1]) or enact(*a, **k))
        for batch, k in ((1, 2), (2, 3)):  # two sources one at a time, three in two batches
            got = bg.betweenness_centrality(graph, k=k, seed=5, batch=batch, cluster=workers)
            want = nx.betweenness_centrality(g, k=k, seed=5)
            np.testing.assert_allclose(got.centrality, [want[v] for v in g], rtol=1e-9)
            single = bg.betweenness_centrality(graph, k=k, seed=5, batch=batch, backend="numpy")
            assert len(got.stats.supersteps) == len(single.stats.supersteps)
    assert [type(call).__name__ for call in calls] == ["Dependencies"] * 2  # a call a run
    src, dst = [], []
    for k in range(1100):  # 2^1100 shortest paths along 1100 diamonds: past float64
        src += [3 * k, 3 * k, 3 * k + 1, 3 * k + 2]
        dst += [3 * k + 1, 3 * k + 2, 3 * k + 3, 3 * k + 3]
    diamonds = bg.Graph.from_edges(src, dst, directed=False, backend="numpy")
    with pytest.raises(bg.PathCountOverflow, match=r"from source 0, vertex 3072"):
        bg.betweenness_centrality(diamonds, [0], cluster=workers)
    assert bg.bfs(graph, 3, cluster=workers).depth[3] == 0  # (the workers kept on)


class _Failing(Primitive):
    """A BFS-like primitive whose stop test on device 1 raises, kills its process, or
    stalls for 3 s, in its first call: after the run's agreement, while rank 0 waits in the
    first collective (a GPU's whole run of a graph under the floor goes to rank 0 alone, so
    a fault in a later step of rank 1 would never come)."""

    state = (State("depth", "vertex", init="max", unset=-1),)
    communicate = {"depth": "min"}

    def init_frontier(self, graph, state, *, source):
        state.depth[source] = 0
        return bg.frontier.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        visit = bg.frontier.functors.visit_unvisited(state.depth, iteration + 1)
        return bg.frontier.advance(graph, frontier, visit)

    def converged(self, graph, frontier, state, iteration):
        if graph.context.device == 1 and iteration == 0:  # (a test's planted fault)
            if self.options["how"] == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.options["how"] == "stall":  # (a stop test that answers late, then goes on)
                time.sleep(3)
            else:
                raise RuntimeError("planted fault")
        return super().converged(graph, frontier, state, iteration)


@pytest.mark.parametrize("how", ["raise", "kill"])
def test_a_worker_that_fails_ends_the_call_with_one_error_and_the_next_starts_afresh(how):
    graph = bg.generators.grid(8, 8, backend="numpy")
    with bg.cluster(2, backend="numpy") as workers:
        started = time.monotonic()
        with pytest.raises(bg.WorkerError, match="rank 1|KILLED|signal") as failure:
            bg.enact(_Failing(how=how), graph, source=0)
        assert time.monotonic() - started < 5
        if how == "raise":
            assert "planted fault" in str(failure.value)
        depth = bg.bfs(graph, 0).depth  # new workers
        assert np.array_equal(depth, bg.bfs(graph, 0, backend="numpy").depth)
        assert "running" in repr(workers)


def test_large_results_come_back_through_shared_memory(workers, monkeypatch):
    """Rank 0 writes each large result array to a file of shared memory and the caller maps
    it (then removes it): the same answers, no file left; with no room there, through Dask."""
    import glob
    import importlib

    module = importlib.import_module("bspgraph.enactor.cluster")

    def handing(limit):
        workers._client.run(lambda: setattr(module, "HANDED_BYTES", limit))

    g = _graph()
    handing(1)  # every array, however small
    try:
        _check_every_primitive(g, {"cluster": workers})
        depth = bg.bfs(bg.Graph.from_networkx(g, backend="numpy"), 0, cluster=workers).depth
        assert type(depth) is np.ndarray and isinstance(depth.base, np.memmap)  # (the map)
    finally:
        handing(1 << 20)
    assert not glob.glob(os.path.join(module.SHARED, workers._prefix + "-*"))
    result = {"depth": np.arange(5), "iterations": 3}
    monkeypatch.setattr(module, "HANDED_BYTES", 1)
    handed = module._handed_over(result, "bspgraph-test-room")
    assert isinstance(handed["depth"], module.Handed) and handed["iterations"] == 3
    np.testing.assert_array_equal(module._taken(handed["depth"]), result["depth"])
    assert not os.path.exists(handed["depth"].path)
    monkeypatch.setattr(module, "SHARED", "/nonexistent")  # no shared memory: left as it is
    assert module._handed_over(result, "bspgraph-test-room") is result


def test_workers_placed_on_named_hosts_equal_networkx():
    """hosts=: the workers started by mpiexec -hosts (this machine, by name), the scheduler
    reached by this machine's name; a host list given as one string is refused."""
    with bg.cluster(2, backend="numpy", hosts=["localhost"]) as workers:
        assert workers.hosts == ["localhost"]
        g = _graph(30, seed=5)
        depth = bg.bfs(bg.Graph.from_networkx(g, backend="numpy"), 0).depth
        hops = nx.single_source_shortest_path_length(g, 0)
        assert all(depth[v] == hops.get(v, -1) for v in g)
    with pytest.raises(ValueError, match="hosts"):
        bg.cluster(2, backend="numpy", hosts="localhost")


@pytest.mark.parametrize("backend", ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def test_workers_join_a_dask_scheduler_given_by_address(monkeypatch, backend):
    """scheduler=: the workers join a scheduler already running (here one with a worker of
    its own, which gets no run), runs equal networkx (NumPy workers, or on GPUs: two where
    there are), and closing stops only these workers; an address without a scheme is refused,
    and one where nothing answers is a DeviceError."""
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.scheduler.worker-ttl": None}):
        running = LocalCluster(
            n_workers=1,
            processes=False,
            threads_per_worker=1,
            protocol="tcp",
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address=":0",
        )
    own = Client(running)
    try:
        theirs = set(own.scheduler_info(n_workers=-1)["workers"])
        address = running.scheduler_address
        size = 2 if backend == "numpy" else min(2, bg.backend.gpu_count())
        with bg.cluster(size, backend=backend, scheduler=address) as workers:
            assert address in repr(workers)
            ours = set(workers._workers())
            assert len(ours) == size and not ours & theirs
            g = _graph(30, seed=7)
            graph = bg.Graph.from_networkx(g, weight="weight", backend="numpy")
            depth = bg.bfs(graph, 0).depth
            hops = nx.single_source_shortest_path_length(g, 0)
            assert all(depth[v] == hops.get(v, -1) for v in g)
            labels = bg.connected_components(graph).labels
            for component in nx.connected_components(g):
                assert {int(labels[v]) for v in component} == {min(component)}
        assert set(own.scheduler_info(n_workers=-1)["workers"]) == theirs  # (theirs kept)
    finally:
        own.close()
        running.close()
    with pytest.raises(ValueError, match="scheduler"):
        bg.cluster(2, backend="numpy", scheduler="127.0.0.1:8786")
    monkeypatch.setattr(importlib.import_module("bspgraph.enactor.cluster"), "CONNECT_TIMEOUT", 1.0)
    with pytest.raises(bg.DeviceError, match="no Dask scheduler answered at tcp://127.0.0.1:9"):
        bg.cluster(2, backend="numpy", scheduler="tcp://127.0.0.1:9")


def test_stopping_ends_what_a_finished_job_left_behind():
    """An MPI job whose mpiexec ended first (a rank that failed to start) may leave a rank or
    its launcher's proxy running in the job's process group: stopping the workers kills that
    group still (a worker left so spun on, retrying its scheduler, after the call failed)."""
    module = importlib.import_module("bspgraph.enactor.cluster")
    job = subprocess.Popen(
        ["sh", "-c", "sleep 60 & echo $!"],
        stdout=subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    left = int(job.stdout.readline())
    job.wait()  # (the job's first process ended; its child runs on in the group)
    job.stdout.close()
    workers = object.__new__(module.Cluster)  # (its state after a failed start)
    workers._job, workers._opened, workers._held, workers._client = job, {}, {}, None
    workers._prefix, workers._log = "bspgraph-test-stopping", tempfile.TemporaryFile()
    workers._finalizer = weakref.finalize(workers, lambda: None)
    workers._stop()
    deadline = time.monotonic() + 5
    while _running(left) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _running(left)


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_launcher_s_boxed_message_is_the_cause_given():
    """When the workers' job ends before they start, the error names what the launcher said:
    the first line inside its box of dashes (Open MPI's refusal to run as root), not the
    box's border; else its last line with words."""
    from bspgraph.enactor.cluster import _launcher_says

    border = "-" * 74
    text = f"{border}\nmpirun has detected an attempt to run as root.\n\nRunning as root is\n{border}\n"
    assert _launcher_says(text) == "mpirun has detected an attempt to run as root."
    assert _launcher_says("starting\n[proxy] bad host name: nowhere\n=====\n") == (
        "[proxy] bad host name: nowhere"
    )
    assert _launcher_says("") == "no output"


def test_open_mpi_s_launcher_places_and_reports_as_mpich_s(tmp_path):
    """Open MPI's mpiexec (the GPU machines'): hosts= places ranks with --host, oversubscribed
    and in turn over the hosts (MPICH: -hosts), and no rank is bound to a core (Open MPI binds
    one or two ranks to a core each by default: a worker's threads would share it); a rank that
    dies is named from its notice."""
    from bspgraph.enactor.cluster import _launcher, _open_mpi_noticed, _placement

    fake = tmp_path / "mpiexec"
    fake.write_text("#!/bin/sh\necho 'mpiexec (OpenRTE) 4.1.6'\n")
    fake.chmod(0o755)
    assert _launcher(str(fake)) == "Open MPI"
    placed = ["--host", "a,b", "--oversubscribe", "--map-by", "node", "--bind-to", "none"]
    assert _placement(str(fake), ["a", "b"]) == placed
    assert _placement(str(fake), None) == ["--bind-to", "none"]
    hydra = tmp_path / "hydra"
    hydra.write_text("#!/bin/sh\necho 'HYDRA build details:'\n")
    hydra.chmod(0o755)
    assert _placement(str(hydra), ["a", "b"]) == ["-hosts", "a,b"]
    assert _placement(str(hydra), None) == []
    border = "-" * 74
    text = (
        f"{border}\nPrimary job  terminated normally, but 1 process returned\n{border}\n"
        f"{border}\nmpiexec noticed that process rank 1 with PID 0 on node vm exited on "
        f"signal 9 (Killed).\n{border}\n"
    )
    assert _open_mpi_noticed(text) == (1, "exited on signal 9 (killed)")
    assert _open_mpi_noticed("nothing noticed") is None


def test_graphs_past_what_a_worker_keeps_are_sent_again(workers):
    """A worker keeps the parts of its last KEPT_GRAPHS cuts; the caller keeps the same
    account, so that a graph whose parts went is sent again, not looked for."""
    from bspgraph.enactor.cluster import KEPT_GRAPHS

    graphs = [bg.Graph.from_networkx(_graph(30, seed=s), backend="numpy") for s in range(6)]
    assert len(graphs) > KEPT_GRAPHS + 1
    for graph in [*graphs, graphs[0], graphs[-1]]:
        depth = bg.bfs(graph, 0, cluster=workers).depth
        np.testing.assert_array_equal(depth, bg.bfs(graph, 0, backend="numpy").depth)
    assert bg.bfs(graphs[-1], 0, cluster=workers).stats.setup_seconds == 0


@pytest.mark.gpu
def test_gpu_workers_lend_large_results_through_cuda_ipc(monkeypatch):
    """On GPUs rank 0 lends each large result array from its GPU memory (CUDA IPC) and the
    caller copies it to the host, or to its own GPU with ``result_device``; the caller lends
    large GPU params to the workers alike (a backward run of betweenness given the depths and
    path counts of a forward run made here; betweenness itself hands them over on the
    workers, lending none): the one-GPU answers, every large array borrowed, no file of
    shared memory made."""
    import glob
    import importlib

    import cupy

    from bspgraph.backend import gpu_count

    module = importlib.import_module("bspgraph.enactor.cluster")
    borrowed = []
    borrow = module._borrowed
    monkeypatch.setattr(module, "_borrowed", lambda v, *a: borrowed.append(v) or borrow(v, *a))
    from bspgraph.primitives.bc_backward import Backward
    from bspgraph.primitives.bc_batched_backward import level_bounds
    from bspgraph.primitives.bc_forward import Forward

    host = bg.generators.rmat(18, 8, seed=2, backend="numpy")  # results of 1 MiB and more
    graph = host.to("cupy")
    forward, _ = bg.enactor.enact(Forward(), graph, source=3, result_device=True)  # (here)
    backward = Backward(bounds=level_bounds(forward["depth"]))
    with bg.cluster(min(2, gpu_count()), backend="cupy") as workers:
        depth = bg.bfs(host, 3).depth
        again = bg.bfs(host, 3).depth  # (the same buffer lent again: its handle open here)
        rank = bg.pagerank(host, result_device=True).rank
        assert not glob.glob(os.path.join(module.SHARED, workers._prefix + "-*"))
        assert len(workers._opened) == 2  # one a result size
        centrality = bg.betweenness_centrality(host, sources=[3], batch=1).centrality
        assert not workers._lending  # (its depths and path counts stayed on the workers)
        delta, _ = bg.enactor.enact(backward, host, result_device=True, **forward)
        assert len(workers._lending) == 2  # depths and path counts, lent to the workers
    assert not workers._opened and not workers._lending  # (closed with the workers)
    assert type(depth) is np.ndarray and isinstance(rank, cupy.ndarray)
    assert len(borrowed) > 3 and {v.shape for v in borrowed} == {(graph.num_vertices,)}
    assert np.array_equal(depth, bg.bfs(graph, 3, backend="cupy").depth)
    assert np.array_equal(again, depth) and again is not depth
    expected = bg.pagerank(graph, backend="cupy").rank
    np.testing.assert_allclose(cupy.asnumpy(rank), expected, rtol=1e-9)
    expected = bg.betweenness_centrality(graph, sources=[3], batch=1).centrality
    np.testing.assert_allclose(centrality, expected, rtol=1e-9, atol=1e-12)
    expected, _ = bg.enactor.enact(backward, graph, result_device=True, **forward)
    np.testing.assert_allclose(cupy.asnumpy(delta["delta"]), cupy.asnumpy(expected["delta"]))


def test_a_result_goes_when_the_caller_drops_it(workers):
    """No reference cycle holds a run's result once the caller lets it go (a wait's traceback
    once kept the callers' frames, and with them the result, until a collection: on GPUs
    the next call could not reuse its page-locked memory)."""
    import gc
    import weakref

    graph = bg.generators.rmat(10, 8, seed=3, backend="numpy")
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _ in range(2):
            result = bg.pagerank(graph, cluster=workers)
            rank = weakref.ref(result.rank)
            del result
            assert rank() is None
    finally:
        if collecting:
            gc.enable()


@pytest.mark.parametrize(
    ("ids", "backend", "gpus", "expected"),
    [
        ([0, 1], "cupy", 2, "cupy"),
        ([0, 1, 2, 3], None, 4, "cupy"),
        ([0, 0], "cupy", 2, None),  # parts of one GPU: this process
        ([1, 2], "cupy", 4, None),  # other ids: this process
        ([0], "cupy", 2, None),
        ([0, 1], "numpy", 2, None),  # NumPy virtual devices: this process
        ([0, 1], "cupy", 1, None),  # more GPUs than the machine has: this process says so
    ],
)
def test_which_device_lists_go_to_gpu_workers(monkeypatch, ids, backend, gpus, expected):
    loop = importlib.import_module("bspgraph.enactor.loop")
    monkeypatch.setattr(loop, "gpu_count", lambda: gpus)
    monkeypatch.setattr("bspgraph.backend.select.gpu_count", lambda: gpus)
    assert loop._on_gpus(ids, backend) == expected


def test_devices_on_gpus_go_to_workers_started_once_and_kept(monkeypatch):
    """A run with ``devices=P`` on GPUs and no cluster named goes to P worker processes,
    started by the first such run (which says so), kept for the next ones (nothing sent or
    set up again), and stopped for another P (NumPy workers stand in for GPU ones here)."""
    loop = importlib.import_module("bspgraph.enactor.loop")
    running = importlib.import_module("bspgraph.enactor.running")
    monkeypatch.setattr(loop, "_on_gpus", lambda ids, backend: "numpy" if len(ids) > 1 else None)
    g = _graph(40, seed=7)
    graph = bg.Graph.from_networkx(g, weight="weight", backend="numpy")
    hops = nx.single_source_shortest_path_length(g, 0)
    try:
        with pytest.warns(UserWarning, match="2 worker processes, one a GPU, started now"):
            first = bg.bfs(graph, 0, devices=2)
        workers = running.GPU_WORKERS.cluster
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (said once)
            again = bg.bfs(graph, 0, devices=2)
        assert running.GPU_WORKERS.cluster is workers and "running" in repr(workers)
        assert again.stats.setup_seconds == 0 and again.stats.devices == 2
        assert all(first.depth[v] == again.depth[v] == hops.get(v, -1) for v in g)
        with pytest.warns(UserWarning, match="3 worker processes"):
            distance = bg.sssp(graph, 0, devices=3).distance
        assert running.GPU_WORKERS.cluster is not workers and "stopped" in repr(workers)
        lengths = nx.single_source_dijkstra_path_length(g, 0)
        assert all(distance[v] == lengths[v] for v in lengths)
    finally:
        if running.GPU_WORKERS.cluster is not None:
            running.GPU_WORKERS.cluster.close()
            running.GPU_WORKERS.cluster = None


@pytest.fixture(scope="module")
def deployment():
    """A Dask deployment of three worker processes, started apart from bspgraph (as a
    user's ``dask worker``s or dask-cuda's are): no MPI job between them."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=3, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as running,
        Client(running) as client,
    ):
        yield client


@pytest.mark.parametrize(
    "backend, size",
    [("numpy", 2), ("numpy", 3)] + [pytest.param("cupy", s, marks=pytest.mark.gpu) for s in (2, 3)],
)
def test_a_deployment_s_own_workers_equal_networkx(deployment, backend, size):
    """bg.cluster(client=...): the runs go to the deployment's own workers (the first
    ``size``), which meet over their Dask connections; every primitive equals networkx, and a
    second call on the graph sends nothing and sets nothing up. On GPUs (two or more), two
    workers that see the same GPUs drive one each and move payloads over NCCL; three on two
    GPUs share them, over the host."""
    if backend == "cupy" and bg.backend.gpu_count() < 2:
        pytest.skip("needs two GPUs")
    graph = bg.generators.rmat(9, 8, seed=4, backend="numpy")
    expected = bg.bfs(graph, 1).depth
    with bg.cluster(size, client=deployment, backend=backend) as workers:
        assert workers.size == size and "running" in repr(workers)
        assert distributed.default_client() is deployment  # (the caller's, still its default)
        _check_every_primitive(_graph(), {})
        first, again = bg.bfs(graph, 1), bg.bfs(graph, 1)
        assert first.stats.devices == size and again.stats.setup_seconds == 0
        assert np.array_equal(again.depth, expected)
    assert "stopped" in repr(workers)
    assert len(deployment.scheduler_info(n_workers=-1)["workers"]) == 3  # (theirs, kept)


@pytest.mark.parametrize(
    "backend, how",
    [("numpy", "raise"), ("numpy", "kill")]
    + [pytest.param("cupy", how, marks=pytest.mark.gpu) for how in ("raise", "kill")],
)
def test_a_deployment_s_worker_that_fails_ends_the_call_and_the_next_starts_afresh(
    deployment, backend, how
):
    """A rank that raises, or whose worker dies, ends the call on every rank within 5 s with
    one WorkerError naming it; the workers stay the user's (a dead one its nanny restarts),
    and the next call runs on them (on GPUs, a peer waiting in NCCL for the dead one is
    released)."""
    if backend == "cupy" and bg.backend.gpu_count() < 2:
        pytest.skip("needs two GPUs")
    graph = bg.generators.grid(8, 8, backend="numpy")
    expected = bg.bfs(graph, 0).depth
    with bg.cluster(2, client=deployment, backend=backend) as workers:
        started = time.monotonic()
        with pytest.raises(bg.WorkerError, match="rank 1 of 2 \\(worker tcp://") as failure:
            bg.enact(_Failing(how=how), graph, source=0)
        assert time.monotonic() - started < 5
        assert ("planted fault" if how == "raise" else "was lost") in str(failure.value)
        deployment.wait_for_workers(3, timeout=30)
        assert np.array_equal(bg.bfs(graph, 0).depth, expected)
        assert "running" in repr(workers)


def test_a_deployment_s_worker_still_listed_after_it_died_is_not_called(deployment, monkeypatch):
    """A worker killed mid-run that the scheduler still lists as alive (it notices a death
    a heartbeat later): the session is ended on the living worker only (a call to the dead
    one may wait 30 s for its connection), and the call ends within 5 s."""
    from distributed import Client

    module = importlib.import_module("bspgraph.enactor.cluster")  # (bg.cluster: the function)
    graph = bg.generators.grid(8, 8, backend="numpy")
    expected = bg.bfs(graph, 0).depth
    called, run = [], Client.run

    def recorded(client, function, *args, workers=None, **kwargs):
        called.append((function.__name__, list(workers or [])))
        return run(client, function, *args, workers=workers, **kwargs)

    with bg.cluster(2, client=deployment, backend="numpy") as workers:
        listed = {address: {} for address in workers._addresses}
        with monkeypatch.context() as patched:
            patched.setattr(module, "_every_worker", lambda client: listed)
            patched.setattr(Client, "run", recorded)
            started = time.monotonic()
            with pytest.raises(bg.WorkerError, match="rank 1 of 2 .*was lost"):
                bg.enact(_Failing(how="kill"), graph, source=0)
            assert time.monotonic() - started < 5
        assert ("_end_session", [workers._addresses[0]]) in called
        assert not any(workers._addresses[1] in sent for _, sent in called)
        deployment.wait_for_workers(3, timeout=30)
        assert np.array_equal(bg.bfs(graph, 0).depth, expected)


@pytest.mark.parametrize("communicator", COMMUNICATORS)
def test_a_deployment_runs_every_cut_and_communicator(deployment, communicator):
    """Each communicator's rounds over a deployment's three workers, on each cut: BFS (push,
    and direction-optimising), SSSP and PageRank equal networkx."""
    g = _graph(40, seed=11)
    graph = bg.Graph.from_networkx(g, weight="weight", backend="numpy")
    hops = nx.single_source_shortest_path_length(g, 0)
    lengths = nx.single_source_dijkstra_path_length(g, 0)
    expected = nx.pagerank(g, weight="weight", tol=1e-12)
    with bg.cluster(3, client=deployment, backend="numpy"):
        for partitioner in PARTITIONERS:
            run = {"partitioner": partitioner, "communicator": communicator}
            for direction in ("push", "auto"):
                depth = bg.bfs(graph, 0, direction=direction, **run).depth
                assert all(depth[v] == hops.get(v, -1) for v in g), (partitioner, direction)
            distance = bg.sssp(graph, 0, **run).distance
            assert all(distance[v] == lengths[v] for v in lengths), partitioner
            rank = bg.pagerank(graph, tol=1e-12, **run).rank
            np.testing.assert_allclose(rank, [expected[v] for v in g], rtol=1e-6)


def test_a_deployment_s_rank_that_waits_too_long_ends_the_call(deployment):
    """A rank whose peer answers later than the timeout (BSPGRAPH_MPI_TIMEOUT on the
    workers) ends the call with one WorkerError naming the peer, never a hang; the stalled
    rank's run ends at its next collective, and the next call runs on its worker after it."""
    graph = bg.generators.grid(8, 8, backend="numpy")
    kept = deployment.run(_set_timeout, "1")
    try:
        with bg.cluster(2, client=deployment, backend="numpy"):
            started = time.monotonic()
            with pytest.raises(bg.WorkerError, match="no answer from rank 1"):
                bg.enact(_Failing(how="stall"), graph, source=0)
            assert time.monotonic() - started < 3
    finally:
        for address, value in kept.items():
            deployment.run(_set_timeout, value, workers=[address])
    with bg.cluster(2, client=deployment, backend="numpy"):  # (once rank 1's stall ends)
        assert bg.bfs(graph, 0).depth[63] == 14


def _set_timeout(value: str | None) -> str | None:
    """On a worker: BSPGRAPH_MPI_TIMEOUT set to ``value`` (None: unset); what it was."""
    kept = os.environ.pop("BSPGRAPH_MPI_TIMEOUT", None)
    if value is not None:
        os.environ["BSPGRAPH_MPI_TIMEOUT"] = value
    return kept


def test_a_deployment_too_small_or_with_hosts_is_refused(deployment):
    with pytest.raises(bg.DeviceError, match="5 workers asked for, the deployment has 3"):
        bg.cluster(5, client=deployment, backend="numpy")
    with pytest.raises(ValueError, match="no hosts or scheduler"):
        bg.cluster(2, client=deployment, hosts=["a"])
    with pytest.raises(ValueError, match="a count of workers"):
        bg.cluster()


def _collectives(session: str, rank: int, addresses: list, counts: list, root: int) -> dict:
    """On a deployment's worker (a task): EngineComm's collectives, as the transports call
    them, with ``counts[src][dst]`` int64 values from each rank to each."""
    from distributed import get_worker

    from bspgraph.comm import engine

    worker = get_worker()
    engine.install(worker)
    comm = engine.EngineComm(worker, session, rank, addresses, timeout=20)
    size = len(addresses)
    sent = np.concatenate(
        [np.full(n, 100 * rank + dst, dtype=np.int64) for dst, n in enumerate(counts[rank])]
    )
    out = np.array(counts[rank], dtype=np.int64)
    into = np.array([counts[src][rank] for src in range(size)], dtype=np.int64)
    received = np.empty(int(into.sum()), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(out)[:-1]]).astype(np.int64)
    at = np.concatenate([[0], np.cumsum(into)[:-1]]).astype(np.int64)
    comm.Alltoallv([sent, (out, starts), None], [received, (into, at), None])
    rows = np.arange(size * 2, dtype=np.int64).reshape(size, 2) + 10 * rank
    arriving = np.empty_like(rows)
    comm.Alltoall(rows, arriving)
    gathered = np.empty((size, 3), dtype=np.int64)
    comm.Allgather(np.full(3, rank, dtype=np.int64), gathered)
    result = {
        "alltoallv": received.tolist(),
        "alltoall": arriving.tolist(),
        "Allgather": gathered.tolist(),
        "allgather": comm.allgather({"rank": rank}),
        "bcast": comm.bcast(f"from {rank}" if rank == root else None, root=root),
        "split": (comm.Split_type().Get_rank(), comm.Split_type().Get_size()),
    }
    engine.forget(session)
    return result


@given(data=st.data())
@examples(6)
def test_a_deployment_s_collectives_are_mpi_s(deployment, data):
    """EngineComm's collectives among three workers give what MPI's would: each rank's
    pieces of any sizes (none included) in rank order, rows, gathers and a broadcast from
    any root; workers of one host that see the same GPUs split in rank order."""
    addresses = sorted(deployment.scheduler_info(n_workers=-1)["workers"])
    size = len(addresses)
    counts = data.draw(
        st.lists(
            st.lists(st.integers(0, 5), min_size=size, max_size=size), min_size=size, max_size=size
        )
    )
    root = data.draw(st.integers(0, size - 1))
    session = f"test-{time.time_ns()}"
    futures = [
        deployment.submit(
            _collectives, session, r, addresses, counts, root, workers=[a], pure=False
        )
        for r, a in enumerate(addresses)
    ]
    results = deployment.gather(futures)
    for rank, got in enumerate(results):
        expected = [100 * src + rank for src in range(size) for _ in range(counts[src][rank])]
        assert got["alltoallv"] == expected
        assert got["alltoall"] == [
            [2 * rank + 10 * src, 2 * rank + 1 + 10 * src] for src in range(size)
        ]
        assert got["Allgather"] == [[src] * 3 for src in range(size)]
        assert got["allgather"] == [{"rank": src} for src in range(size)]
        assert got["bcast"] == f"from {root}"
        assert got["split"] == (rank, size)
