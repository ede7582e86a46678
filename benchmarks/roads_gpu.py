"""Road networks and meshes on one GPU: luxembourg_osm and the 1000 x 1000 grid (issue 54).

    PYTHONPATH=. python3 -m benchmarks.roads_gpu
    PYTHONPATH=. python3 -m benchmarks.roads_gpu --base /tmp/base   # against another checkout

BFS, SSSP and connected components from the source ``benchmarks.cpu --roads`` picks, PageRank,
and on luxembourg_osm betweenness from its 20 sources (a grid's path counts overflow float64),
on CuPy: the median of ``--repeat`` whole calls after a warm-up (the result on the host), each
answer checked against bspgraph on NumPy. With ``--base``, the same rows from the ``bspgraph``
of another checkout (a folder holding its package), in processes that alternate with this
one's for ``--rounds`` rounds, each row's median beside and the speed-up. The high-diameter
graphs' thousands of light levels are what the rows measure: each superstep's launches and
host reads, not its edges.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SHARED_GRAPHS = Path(__file__).resolve().parents[2] / "shared" / "graphs"
LUXEMBOURG = "luxembourg_osm.headerless.txt"
BC_SOURCES = 20


def graphs(folder: Path):
    """(name, host graph) of the two graphs, as ``benchmarks.cpu --roads`` builds them."""
    import bspgraph as bg

    yield (
        "luxembourg_osm",
        bg.read_edgelist(folder / LUXEMBOURG, base=1, directed=False, backend="numpy"),
    )
    yield "grid1000", bg.generators.grid(1000, 1000, weights=True, seed=1, backend="numpy")


def measure(folder: Path, repeat: int) -> list[dict]:
    """Every row of this process's ``bspgraph`` on the GPU, checked against NumPy."""
    import bspgraph as bg
    from bspgraph.backend import get_backend, to_host

    gpu, rows = get_backend("cupy"), []
    for name, host in graphs(folder):
        rng = np.random.default_rng(1)  # benchmarks.cpu's draws: its source, then its sources
        candidates = np.flatnonzero(np.asarray(host.out_degree()) > 0)
        source = int(rng.choice(candidates))
        sources = np.sort(rng.choice(candidates, size=BC_SOURCES, replace=False)).tolist()
        graph = host.to(gpu)
        calls = {
            "bfs": (lambda g, s=source: bg.bfs(g, s), "depth"),
            "sssp": (lambda g, s=source: bg.sssp(g, s), "distance"),
            "cc": (lambda g: bg.connected_components(g), "labels"),
            "pagerank": (lambda g: bg.pagerank(g), "rank"),
        }
        if not name.startswith("grid"):
            calls["bc"] = (
                lambda g, s=sources: bg.betweenness_centrality(g, sources=s),
                "centrality",
            )
        for algorithm, (call, field) in calls.items():
            expected = getattr(call(host), field)
            result = call(graph)  # the warm-up: kernels compiled, the graph prepared
            got = to_host(getattr(result, field))
            if not np.allclose(got, expected, rtol=1e-9, atol=1e-15, equal_nan=True):
                raise AssertionError(f"{name} {algorithm}: the GPU's answer differs from NumPy's")
            times = []
            for _ in range(repeat):
                started = time.perf_counter()
                call(graph)
                times.append(time.perf_counter() - started)
            rows.append(
                {
                    "graph": name,
                    "algorithm": algorithm,
                    "ms": statistics.median(times) * 1e3,
                    "supersteps": result.stats.iterations,
                }
            )
    return rows


def _in_process(folder: Path, repeat: int, package: str | None) -> list[dict]:
    """:func:`measure` in a new process, its ``bspgraph`` from ``package`` (a folder; None:
    this checkout's)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = package or str(Path(__file__).resolve().parents[1])
    command = [sys.executable, str(Path(__file__).resolve()), "--graphs", str(folder.resolve())]
    command += ["--repeat", str(repeat), "--rows"]  # (a script: its folder first on the path)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _commit(folder: str) -> str:
    done = subprocess.run(
        ["git", "-C", folder, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or "?"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=Path, default=SHARED_GRAPHS, help="holds " + LUXEMBOURG)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--base", help="a folder holding another checkout's bspgraph package")
    parser.add_argument("--base-commit", help="the base's commit, for the header")
    parser.add_argument("--commit", help="this checkout's commit (default: git's HEAD here)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds with --base")
    parser.add_argument("--rows", action="store_true", help="print the rows as JSON (internal)")
    args = parser.parse_args(argv)
    if args.rows:
        print(json.dumps(measure(args.graphs, args.repeat)))
        return
    import cupy

    from bspgraph.backend import get_backend

    ours, theirs = [], []
    for _ in range(args.rounds if args.base else 1):
        ours.append(_in_process(args.graphs, args.repeat, None))
        if args.base:
            theirs.append(_in_process(args.graphs, args.repeat, args.base))
    device = cupy.cuda.runtime.getDeviceProperties(get_backend("cupy").device)["name"].decode()
    here = str(Path(__file__).resolve().parents[1])
    base = f" against {args.base_commit or _commit(args.base)}" if args.base else ""
    print(
        f"# one {device}, CuPy {cupy.__version__}, {datetime.date.today()}, code of "
        f"{args.commit or _commit(here)}{base}: python -m benchmarks.roads_gpu"
        + (f" --base BASE --rounds {args.rounds}" if args.base else "")
        + f" --repeat {args.repeat}"
    )
    for k, row in enumerate(ours[0]):
        ms = statistics.median(run[k]["ms"] for run in ours)
        line = f"  {row['graph']} {row['algorithm']}: {ms:.1f} ms"
        if theirs:
            before = statistics.median(run[k]["ms"] for run in theirs)
            line += f" (base {before:.1f} ms, {before / ms:.2f}x)"
        print(f"{line}, {row['supersteps']} supersteps", flush=True)


if __name__ == "__main__":
    main()
