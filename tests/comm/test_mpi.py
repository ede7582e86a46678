"""The MPI transport under a real ``mpiexec -n 1..4`` (oversubscribed, NumPy): every primitive
with every communicator equals networkx and the in-process run; faults end every rank non-zero
within a bounded time; ranks started with different inputs are told so on every rank."""

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import networkx as nx
import numpy as np
import pytest

import bspgraph as bg
from bspgraph.backend.numpy_backend import NumpyBackend

pytestmark = pytest.mark.mpi
pytest.importorskip("mpi4py", reason="transport 'mpi' needs mpi4py: pip install 'bspgraph[mpi]'")

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("mpi_driver.py")
MPIEXEC = next(
    (str(p) for p in (Path(sys.executable).with_name("mpiexec"),) if p.exists()),
    shutil.which("mpiexec"),
)
if MPIEXEC is None:
    pytest.skip("no mpiexec (pip install mpich, or an MPI library)", allow_module_level=True)
TIMEOUT = 60  # seconds: every mpiexec, faulty or not, must be over by then


def mpiexec(ranks, *command, env=None, timeout=TIMEOUT):
    """Run ``command`` on ``ranks`` ranks; return (returncode, stdout, stderr, seconds)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("BSPGRAPH_MPI_")}
    environment.update(PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", **(env or {}))
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # Open MPI refuses root without these
        environment.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    started = time.monotonic()
    done = subprocess.run(
        [MPIEXEC, "-n", str(ranks), *command],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def cli(*args):
    return [sys.executable, "-m", "bspgraph.cli", "run", *args, "--transport", "mpi"]


def write_mtx(path, src, dst, weight, n, kind="general"):
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate real {kind}\n{n} {n} {len(src)}\n")
        f.writelines(f"{a + 1} {b + 1} {w}\n" for a, b, w in zip(src, dst, weight))
    return path


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    """A directed weighted graph of 40 vertices: a few components, loops and duplicates."""
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 40, 90), rng.integers(0, 40, 90)
    return write_mtx(tmp_path_factory.mktemp("mpi") / "g.mtx", src, dst, rng.integers(1, 9, 90), 40)


def expected(path, source):
    graph = bg.read_mtx(path, backend="numpy")
    g = graph.to_networkx()
    n = graph.num_vertices
    depth = np.full(n, -1)
    for v, d in nx.single_source_shortest_path_length(g, source).items():
        depth[v] = d
    distance = np.full(n, np.inf)
    for v, d in nx.single_source_dijkstra_path_length(g, source).items():
        distance[v] = d
    labels = np.empty(n, dtype=np.int64)
    for component in nx.weakly_connected_components(g):
        labels[list(component)] = min(component)
    rank = nx.pagerank(g, tol=1e-10, max_iter=500)
    return graph, {
        "bfs": depth,
        "bfs_auto": depth,
        "sssp": distance,
        "cc": labels,
        "pagerank": np.array([rank[v] for v in range(n)]),
    }


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_every_primitive_and_communicator_equals_networkx(ranks, graph_file, tmp_path):
    check_driver(ranks, "mpi", graph_file, tmp_path)


def test_headers_too_long_for_their_slot_travel_apart(graph_file, tmp_path):
    """Every header longer than the Alltoall's slot (HEADER_WORDS lowered to 0 in the
    ranks): each round sends the headers in an Alltoallv of their own; the same answers and
    message counts."""
    check_driver(3, "mpi-long-headers", graph_file, tmp_path)


RESULT_ON_RANK_0 = """
import sys
import numpy as np
import bspgraph as bg
from bspgraph.comm.mpi import MPITransport
from bspgraph.enactor.solo import light_share
from bspgraph.primitives.bfs import BFS
from bspgraph.primitives.cc import CC

graph = bg.generators.rmat(9, 8, seed=3, backend="numpy")
transport = MPITransport(backend="numpy")
transport.result_rank = 0  # (as a cluster's workers run)
try:
    for share in (64, 0):  # the run ending on rank 0 alone (rule 6), and on every rank
        with light_share(share):
            for primitive, params in ((BFS(), {"source": 1}), (CC(), {})):
                result, _ = bg.enactor.enact(primitive, graph, transport=transport, **params)
                one, _ = bg.enactor.enact(primitive, graph, backend="numpy", **params)
                if transport.rank == 0:
                    assert result.keys() == one.keys()
                    for name, value in one.items():
                        assert np.array_equal(result[name], value), (share, name)
                else:
                    assert result == {}, result
except BaseException:
    import traceback
    traceback.print_exc()
    transport.comm.Abort(1)
print("ok", transport.rank, flush=True)
"""


def test_a_transport_s_result_rank_alone_returns_the_result():
    """With ``Transport.result_rank`` 0 (a cluster's workers) rank 0 returns the whole result,
    the one-device answer, and the other ranks an empty one: whether the run ended on rank 0
    alone (rule 6) or on every rank (each owner sending its vertices to rank 0 only)."""
    code, out, err, _ = mpiexec(3, sys.executable, "-c", RESULT_ON_RANK_0)
    assert code == 0, err[-2000:]
    assert out.count("ok") == 3  # (every rank's checks passed; their lines may interleave)


KEPT_TRANSPORT = """
import threading
import numpy as np
import bspgraph as bg
from bspgraph.enactor import distributed

graph = bg.generators.rmat(8, 8, seed=2, backend="numpy")
expected = bg.bfs(graph, 3, backend="numpy").depth
for _ in range(3):
    assert np.array_equal(bg.bfs(graph, 3, transport="mpi", backend="numpy").depth, expected)
watchdogs = [t for t in threading.enumerate() if t.name == "bspgraph-mpi-watchdog"]
assert len(distributed._NAMED) == 1 and len(watchdogs) == 1, (distributed._NAMED, watchdogs)
(kept,) = distributed._NAMED.values()  # what a primitive's own work takes: the rank's
assert bg.enactor.run_backend(graph, {"transport": "mpi", "backend": "numpy"}) is kept.backend
print("ok", flush=True)
"""


def test_runs_naming_a_transport_keep_one_for_the_process():
    """``transport="mpi"`` on three runs: one MPITransport for the process (one watchdog
    thread, one communicator), made by the first run and kept, as a caller keeps one."""
    code, out, err, _ = mpiexec(2, sys.executable, "-c", KEPT_TRANSPORT)
    assert code == 0, err[-2000:]
    assert out.count("ok") == 2


ON_ITS_GPU = """
import cupy as cp
import numpy as np
from mpi4py import MPI
import bspgraph as bg

graph = bg.generators.rmat(10, 8, seed=2, backend="numpy")
sources = [0, 5, 9]
expected = bg.betweenness_centrality(graph, sources=sources, backend="numpy").centrality
result = bg.betweenness_centrality(graph, sources=sources, transport="nccl")
np.testing.assert_allclose(result.centrality, expected, rtol=1e-9, atol=1e-12)
if MPI.COMM_WORLD.Get_rank() == 1:  # nothing of rank 1's on rank 0's GPU
    with cp.cuda.Device(0):
        held = cp.get_default_memory_pool().total_bytes()
    assert held == 0, held
print("ok", flush=True)
"""


@pytest.mark.gpu
def test_a_primitive_s_own_work_runs_on_its_rank_s_gpu():
    """Betweenness over ``transport="nccl"`` (named, made by the first run): its sums and
    batch sizes around the runs on each rank's GPU, none on GPU 0 from rank 1, and NumPy's
    answer (pytest -m gpu on two GPUs)."""
    from bspgraph.backend import gpu_count

    if gpu_count() < 2:
        pytest.skip("needs 2 GPUs")
    code, out, err, _ = mpiexec(2, sys.executable, "-c", ON_ITS_GPU)
    assert code == 0, err[-2000:]
    assert out.count("ok") == 2


@pytest.mark.gpu
@pytest.mark.parametrize("transport", ["mpi-cupy", "nccl"])
def test_gpu_transports_on_two_gpus(transport, graph_file, tmp_path):
    """Run on a machine with 2 GPUs (and on 4 too where it has 4): pytest -m gpu
    tests/comm/test_mpi.py."""
    from bspgraph.backend import gpu_count

    if gpu_count() < 2:
        pytest.skip("needs 2 GPUs")
    for ranks in sorted({2, min(gpu_count(), 4)}):
        (tmp_path / str(ranks)).mkdir()
        check_driver(ranks, transport, graph_file, tmp_path / str(ranks))


def test_phases_benchmark_prints_every_rank_s_supersteps():
    """benchmarks.phases over MPI: each rank's supersteps, the transport's steps inside."""
    code, out, err, _ = mpiexec(
        2,
        sys.executable,
        "-m",
        "benchmarks.phases",
        "--transport",
        "mpi",
        "--backend",
        "numpy",
        "--scale",
        "8",
        "--algorithms",
        "sssp",
    )
    assert code == 0, err
    for rank in (0, 1):
        rows = [line for line in out.splitlines() if line.startswith(f"rank {rank}:    ")]
        assert rows and all("(Alltoall) " in row and "(Allgather) " in row for row in rows)
        assert all("(slots) " in row and "(start round) " in row for row in rows)
        assert any("(pack) " in row and "(unpack) " in row for row in rows)  # a message sent


@pytest.mark.gpu
def test_transport_benchmark_on_two_gpus():
    """benchmarks.transport (NCCL) runs its three measurements on two GPUs."""
    from bspgraph.backend import gpu_count

    if gpu_count() < 2:
        pytest.skip("needs 2 GPUs")
    code, out, err, _ = mpiexec(
        2, sys.executable, "-m", "benchmarks.transport", "--sizes", "8", "--repeat", "2"
    )
    assert code == 0, err
    assert out.splitlines()[-1].split()[0] == "8"


def check_driver(ranks, transport, graph_file, tmp_path):
    code, out, err, _ = mpiexec(
        ranks, sys.executable, str(DRIVER), str(graph_file), str(tmp_path / "out"), "0", transport
    )
    assert code == 0, err
    graph, truth = expected(graph_file, 0)
    results = [dict(np.load(tmp_path / f"out.rank{r}.npz")) for r in range(ranks)]
    # one agreement a run, and one outcome a stretch of supersteps on the first device alone
    # (rule 6), none in the others
    pickled, runs, alone = results[0].pop("pickled")
    assert pickled <= runs + alone, f"{pickled} pickled collectives in {runs} runs, {alone} alone"
    for rank, result in enumerate(results):  # a run ends with its transfers waited for
        assert result.pop("settled"), "a rank ended its runs with a transfer still watched"
        # scalars: NCCL reduces them on the GPU, in place; other transports leave them as they
        # are (the enactor then reduces them on the host)
        took, *values = result.pop("reduced").tolist()
        if transport == "nccl":
            assert took and values == [ranks * (ranks + 1) / 2, ranks - 1, 5], values
        else:
            assert not took and values == [rank + 1, rank, rank + 5], values
    assert len(results[0]) == 4 * 2 * (5 + 2)  # communicators x paths x (results + counts)
    for key, values in results[0].items():
        for other in results[1:]:  # every rank returns the whole result
            np.testing.assert_array_equal(other[key], values, err_msg=key)
        algorithm, communicator, how, *counts = key.split("/")
        if counts:  # messages per superstep, as the in-process run on as many devices counts
            with in_process(communicator, ranks) as run:
                local = bg.bfs(
                    graph,
                    0,
                    direction="push" if algorithm == "bfs" else "auto",
                    seed=0 if how == "whole" else 3,
                    **run,
                    partitioner="biased" if how == "whole" else "edge_balanced",
                )
            here = [[s.messages, s.rounds] for s in local.stats.supersteps]
            if transport in ("mpi-cupy", "nccl"):  # a GPU's messages are foretold from the
                # frontiers' out-edges, not chosen from counts: the same supersteps
                assert values.shape[1] == len(here), (key, values, here)
            else:
                np.testing.assert_array_equal(values, np.array(here).T, err_msg=key)
        elif algorithm == "pagerank":
            np.testing.assert_allclose(values, truth[algorithm], rtol=1e-5, atol=1e-8, err_msg=key)
        else:
            np.testing.assert_array_equal(values, truth[algorithm], err_msg=key)


class WireLocal(bg.comm.Local):
    """The in-process transport, its devices choosing Slabs as over a wire (by bytes)."""

    wire = True


@contextlib.contextmanager
def in_process(communicator: str, ranks: int):
    """The arguments of a run on ``ranks`` devices in this process that sends what the ranks
    send: with selective, Slabs where they hold fewer bytes, each device choosing for
    itself; with the others (whose ranks always send Updates), Updates."""
    chosen = bg.comm.Butterfly(fanout=3) if communicator == "butterfly3" else communicator
    if communicator == "selective":
        yield {"transport": WireLocal(ranks), "communicator": chosen}
        return
    capabilities = dataclasses.replace(NumpyBackend.capabilities, dense_share=0)
    with mock.patch.object(NumpyBackend, "capabilities", capabilities):
        yield {"devices": ranks, "communicator": chosen}


@pytest.mark.parametrize("algorithm, field", [("bfs", "depth"), ("sssp", "distance")])
def test_cli_rank_zero_writes_the_gathered_result(algorithm, field, graph_file, tmp_path):
    output = tmp_path / "result.npy"
    code, out, err, _ = mpiexec(
        3,
        *cli(
            algorithm,
            str(graph_file),
            "--source",
            "3",
            "--communicator",
            "butterfly",
            "--output",
            str(output),
        ),
    )
    assert code == 0, err
    assert out.count(f"algorithm={algorithm}") == 1 and "devices=3" in out  # rank 0 prints
    graph, truth = expected(graph_file, 2)  # --source 3: the .mtx file's vertex 3
    assert f"edges={graph.num_edges} " in out  # the whole graph's, not rank 0's part
    np.testing.assert_array_equal(np.load(output), truth[algorithm])


@pytest.mark.parametrize("kind", ["raise", "kill"])
def test_a_failing_rank_ends_every_rank_non_zero(kind, graph_file):
    code, out, err, seconds = mpiexec(
        4,
        *cli("bfs", str(graph_file), "--communicator", "selective"),
        env={"BSPGRAPH_MPI_FAULT": f"1:2:{kind}"},
    )
    assert code != 0 and seconds < TIMEOUT
    if kind == "raise":
        assert "rank 1 of 4 failed: CommunicationError: injected fault" in err, (
            code,
            out,
            err,
            seconds,
        )


def test_a_hung_rank_is_caught_by_the_watchdog(graph_file):
    env = {"BSPGRAPH_MPI_FAULT": "2:1:hang", "BSPGRAPH_MPI_TIMEOUT": "3"}
    code, out, err, seconds = mpiexec(3, *cli("bfs", str(graph_file)), env=env)
    assert code != 0 and seconds < 30
    assert "no answer from the other ranks for 3 s" in err, (code, out, err, seconds)


def test_ranks_with_different_graphs_are_told_on_every_rank(graph_file, tmp_path):
    other = write_mtx(tmp_path / "other.mtx", [0, 1], [1, 2], [1, 1], 40)
    code, out, err, seconds = mpiexec(
        1, *cli("bfs", str(graph_file)), ":", "-n", "1", *cli("bfs", str(other))
    )
    edges = bg.read_mtx(graph_file, backend="numpy").num_edges
    assert code != 0 and seconds < TIMEOUT
    assert err.count(f"graph 'edges' differs (rank 0: {edges}, rank 1: 2)") == 2, err


def test_ranks_with_different_options_are_told_on_every_rank(graph_file):
    code, out, err, _ = mpiexec(
        1,
        *cli("bfs", str(graph_file), "--source", "1"),
        ":",
        "-n",
        "1",
        *cli("bfs", str(graph_file), "--source", "2"),
    )
    assert code != 0
    assert err.count("'parameters' differs") == 2, err


def test_multi_gpu_benchmark_runs_several_sizes_in_one_job(tmp_path):
    """benchmarks.multi_gpu --sizes: P = 2 on the first two of three ranks (a sub-communicator;
    the third waits), then P = 3; a fanout by name; every answer asserted equal to one device's
    inside the job; the model reads the rows and prints the measured P = 3 beside nothing."""
    from benchmarks import bsp_model

    out = tmp_path / "rows.json"
    code, stdout, err, _ = mpiexec(
        3,
        sys.executable,
        "-m",
        "benchmarks.multi_gpu",
        "--transport",
        "mpi",
        "--backend",
        "numpy",
        "--scale",
        "7",
        "--sizes",
        "2",
        "3",
        "--repeat",
        "1",
        "--algorithms",
        "bfs-push",
        "sssp",
        "--partitioners",
        "random",
        "--communicators",
        "selective",
        "butterfly:3",
        "--json",
        str(out),
    )
    assert code == 0, err
    rows = json.loads(out.read_text())
    assert [(r["algorithm"], r["P"], r["communicator"]) for r in rows] == [
        (algorithm, p, c)
        for algorithm in ("bfs-push", "sssp")
        for p, c in [
            (1, "-"),
            (2, "selective"),
            (2, "butterfly:3"),
            (3, "selective"),
            (3, "butterfly:3"),
        ]
    ]
    assert all(r["supersteps"][0]["rounds"] == (r["P"] > 1) for r in rows)  # fanout 3: one round
    assert [len(r["sync_ms_ranks"]) for r in rows if r["P"] > 1] == [2, 2, 3, 3] * 2
    assert all(0 <= s["sync_seconds"] <= s["seconds"] for r in rows for s in r["supersteps"])
    assert "P = 2, 3 over transport mpi" in stdout
    bsp_model.main([str(out), "--fit-on", "2"])
