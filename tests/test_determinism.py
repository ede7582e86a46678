"""Determinism: the same input and seed give the same graph, the same partition and the same
answer, run after run, in another process, and on any number of devices (BFS, SSSP, CC exactly;
PageRank's floating sums, added in another order on each device count, within 1e-12)."""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import bspgraph as bg
from bspgraph import partitioners

ROOT = Path(__file__).resolve().parents[1]
DEVICE_COUNTS = (1, 2, 3, 4, 5)
PARTITIONERS = sorted(set(partitioners.REGISTRY) - {"metis"})  # metis: tested when installed
COMMUNICATORS = ("selective", "broadcast", "butterfly")


NO_PYMETIS = importlib.util.find_spec("pymetis") is None
ALL_PARTITIONERS = [
    *PARTITIONERS,
    pytest.param("metis", marks=pytest.mark.skipif(NO_PYMETIS, reason="needs pymetis")),
]


@pytest.fixture(scope="module")
def graph():
    return bg.generators.rmat(8, 8, seed=11, weights=True, backend="numpy")


def digest(*arrays) -> str:
    """A hash of the arrays' dtypes, shapes and bytes."""
    sha = hashlib.sha256()
    for array in arrays:
        if array is None:
            sha.update(b"None")
            continue
        array = np.ascontiguousarray(array)
        sha.update(f"{array.dtype.str}{array.shape}".encode())
        sha.update(array.tobytes())
    return sha.hexdigest()


def graph_digest(g: bg.Graph) -> str:
    return digest(g.offsets, g.indices, g.weights, np.array([g.num_vertices, g.directed]))


# --- generators and partitioners ---------------------------------------------------------------
@pytest.mark.parametrize("weights", [False, True])
def test_rmat_same_seed_same_graph(weights):
    first = bg.generators.rmat(9, 8, seed=5, weights=weights, backend="numpy")
    again = bg.generators.rmat(9, 8, seed=5, weights=weights, backend="numpy")
    other = bg.generators.rmat(9, 8, seed=6, weights=weights, backend="numpy")
    assert graph_digest(first) == graph_digest(again)
    assert graph_digest(first) != graph_digest(other)
    assert first.summary == again.summary


@pytest.mark.parametrize("name", ALL_PARTITIONERS)
@pytest.mark.parametrize("parts", DEVICE_COUNTS)
def test_partition_same_seed_same_owner(graph, name, parts):
    first = partitioners.get(name)(graph, parts, seed=3)
    again = partitioners.get(name)(graph, parts, seed=3)
    assert first.dtype == np.int32 and np.array_equal(first, again)
    copy = bg.Graph.from_edges(
        *graph.edges(), num_vertices=graph.num_vertices, directed=False, backend="numpy"
    )
    on_copy = partitioners.get(name)(copy, parts, seed=3)
    assert np.array_equal(first, on_copy)  # a rebuilt graph of the same edges: the same owners
    if name in ("random", "biased") and parts > 1:
        assert not np.array_equal(first, partitioners.get(name)(graph, parts, seed=4))


# --- results: repeated runs and device counts --------------------------------------------------
def run_all(graph, source, **run):
    """Every primitive's answer as host arrays."""
    return {
        "bfs": bg.bfs(graph, source, **run).depth,
        "sssp": bg.sssp(graph, source, **run).distance,
        "cc": bg.connected_components(graph, **run).labels,
        "pagerank": bg.pagerank(graph, tol=1e-10, **run).rank,
    }


def source_of(graph) -> int:
    return int(np.argmax(np.diff(graph.offsets)))


def check_networkx(graph, source, got) -> None:
    """``run_all``'s answers are networkx's (PageRank within 1e-8)."""
    g, n = graph.to_networkx(), graph.num_vertices
    depth = nx.single_source_shortest_path_length(g, source)
    np.testing.assert_array_equal(got["bfs"], [depth.get(v, -1) for v in range(n)])
    distance = nx.single_source_dijkstra_path_length(g, source)
    np.testing.assert_allclose(got["sssp"], [distance.get(v, np.inf) for v in range(n)])
    labels = np.empty(n, dtype=np.int64)
    for component in (
        nx.weakly_connected_components if graph.directed else nx.connected_components
    )(g):
        labels[list(component)] = min(component)
    np.testing.assert_array_equal(got["cc"], labels)
    rank = nx.pagerank(g, tol=1e-10)
    np.testing.assert_allclose(got["pagerank"], [rank[v] for v in range(n)], rtol=0, atol=1e-8)


def test_repeated_runs_are_identical(graph):
    source = source_of(graph)
    first, again = run_all(graph, source), run_all(graph, source)
    for name in first:
        assert digest(first[name]) == digest(again[name]), name
    parents = [bg.bfs(graph, source, parents=True).parent for _ in range(3)]
    assert digest(parents[0]) == digest(parents[1]) == digest(parents[2])
    several = [run_all(graph, source, devices=3, seed=2) for _ in range(2)]
    for name in several[0]:
        assert digest(several[0][name]) == digest(several[1][name]), name


@pytest.mark.parametrize("partitioner", ALL_PARTITIONERS)
@pytest.mark.parametrize("communicator", COMMUNICATORS)
def test_every_device_count_gives_the_same_answer(graph, partitioner, communicator):
    source = source_of(graph)
    one = run_all(graph, source)
    check_networkx(graph, source, one)
    for devices in DEVICE_COUNTS[1:]:
        got = run_all(
            graph,
            source,
            devices=devices,
            partitioner=partitioner,
            communicator=communicator,
            seed=devices,
        )
        for name in ("bfs", "sssp", "cc"):
            assert got[name].dtype == one[name].dtype
            assert np.array_equal(got[name], one[name]), (name, devices)
        np.testing.assert_allclose(got["pagerank"], one["pagerank"], rtol=0, atol=1e-12)


def test_directed_graph_on_every_device_count():
    rmat = bg.generators.rmat(8, 4, seed=12, weights=True, backend="numpy")
    src, dst, weight = rmat.edges()
    keep = (src + dst) % 3 != 0  # drop one direction of some edges: a directed graph
    graph = bg.Graph.from_edges(
        src[keep], dst[keep], weight[keep], num_vertices=256, backend="numpy"
    )
    source = source_of(graph)
    one = run_all(graph, source)
    check_networkx(graph, source, one)
    for devices in DEVICE_COUNTS[1:]:
        got = run_all(graph, source, devices=devices, partitioner="biased")
        for name in ("bfs", "sssp", "cc"):
            assert np.array_equal(got[name], one[name]), (name, devices)
        np.testing.assert_allclose(got["pagerank"], one["pagerank"], rtol=0, atol=1e-12)


# --- another process, another hash seed --------------------------------------------------------
SCRIPT = """
import hashlib, json, sys
import numpy as np
import bspgraph as bg
from bspgraph import partitioners

def digest(*arrays):
    sha = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        sha.update(f"{a.dtype.str}{a.shape}".encode())
        sha.update(a.tobytes())
    return sha.hexdigest()

g = bg.generators.rmat(8, 8, seed=11, weights=True, backend="numpy")
out = {"graph": digest(g.offsets, g.indices, g.weights)}
for name in ("random", "biased", "edge_balanced"):
    out[name] = digest(partitioners.get(name)(g, 3, seed=3))
s = int(np.argmax(np.diff(g.offsets)))
for devices in (1, 3):
    run = {"devices": devices, "seed": 1}
    out[f"bfs{devices}"] = digest(bg.bfs(g, s, parents=devices == 1, **run).depth)
    out[f"sssp{devices}"] = digest(bg.sssp(g, s, **run).distance)
    out[f"cc{devices}"] = digest(bg.connected_components(g, **run).labels)
    out[f"pagerank{devices}"] = digest(bg.pagerank(g, tol=1e-10, **run).rank)
json.dump(out, sys.stdout)
"""


def test_other_processes_with_other_hash_seeds_agree():
    """Nothing depends on Python's string hashing or on process state."""
    results = []
    for hash_seed in ("0", "12345"):
        path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        env = {
            **os.environ,
            "PYTHONHASHSEED": hash_seed,
            "PYTHONPATH": path,
            "BSPGRAPH_BACKEND": "numpy",
        }
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        results.append(json.loads(done.stdout))
    assert results[0] == results[1]
