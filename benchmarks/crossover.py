"""Where a GPU starts to pay: each primitive's whole call on NumPy and on CuPy, by graph size.

    python -m benchmarks.crossover                      # rmat 6..18 and karate, 5 timed calls
    python -m benchmarks.crossover --scales 6 7 8 --repeat 3 --stop-after 0

For each graph (karate from ``../shared/graphs/karate.mtx`` when present, else networkx's
karate club; R-MAT of scales ``--scales``, Graph500 parameters, edge factor 16, weights 1..64)
and each primitive (bfs, sssp, pagerank, cc, bc from ``--bc-samples`` sources), it times the
whole call (result on the host) on the host graph with ``backend="numpy"`` and with
``backend="cupy"`` (the graph copied to the GPU in each call: the case ``backend=None``
decides for a host graph), and with the graph already on the GPU, for reference. Each is
the median of ``--repeat`` calls after one untimed call (kernel compilation, allocator pools).
It prints a row per graph and primitive, then for each primitive the smallest edge count from
which CuPy (host graph) wins at that size and at every larger one measured, and the median of
those: the value for ``bspgraph.backend.select.SMALL_GRAPH_EDGES``. With ``--stop-after K``
(default 2) a primitive is no longer measured once CuPy has won at K sizes in a row.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time

import numpy as np

import bspgraph as bg
from bspgraph.backend import get_backend

PRIMITIVES = ("bfs", "sssp", "pagerank", "cc", "bc")


def _calls(graph, source: int, samples: list[int]) -> dict:
    return {
        "bfs": lambda **run: bg.bfs(graph, source, **run),
        "sssp": lambda **run: bg.sssp(graph, source, **run),
        "pagerank": lambda **run: bg.pagerank(graph, **run),
        "cc": lambda **run: bg.connected_components(graph, **run),
        "bc": lambda **run: bg.betweenness_centrality(graph, sources=samples, **run),
    }


def _median_seconds(call, repeat: int, synchronize) -> float:
    call()  # untimed: compilation, pools, the graph's one-time structures
    times = []
    for _ in range(repeat):
        synchronize()
        started = time.perf_counter()
        call()
        synchronize()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _karate():
    for path in ("../shared/graphs/karate.mtx", "shared/graphs/karate.mtx"):
        if os.path.exists(path):
            return bg.read_mtx(path, backend="numpy")
    try:
        import networkx as nx
    except ImportError:
        return None
    return bg.Graph.from_networkx(nx.karate_club_graph(), weight=None, backend="numpy")


def _graphs(scales):
    karate = _karate()
    if karate is not None:
        yield "karate", karate
    for scale in scales:
        yield f"rmat{scale}", bg.generators.rmat(scale, 16, seed=1, weights=True, backend="numpy")


def crossover(rows: list[tuple], primitive: str) -> int | None:
    """The smallest edge count from which CuPy (host graph) wins at that size and every larger
    one measured for ``primitive``; None if it never does."""
    measured = sorted(
        (edges, copied < cpu) for _, which, edges, cpu, copied, _ in rows if which == primitive
    )
    found = None
    for edges, wins in reversed(measured):
        if not wins:
            break
        found = edges
    return found


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=list(range(6, 19)))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--bc-samples", type=int, default=4)
    parser.add_argument(
        "--stop-after",
        type=int,
        default=2,
        help="stop timing a primitive after CuPy won at this many sizes in a row (0: never stop)",
    )
    parser.add_argument("--primitives", nargs="+", default=list(PRIMITIVES))
    parser.add_argument(
        "--device-backend",
        default="cupy",
        help="the accelerated backend (numpy: a dry run of the harness)",
    )
    args = parser.parse_args(argv)
    gpu = get_backend(args.device_backend)  # DeviceError / ImportError without a GPU
    xp = gpu.xp
    device = (
        xp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        if hasattr(xp, "cuda")
        else "no GPU (dry run)"
    )
    print(
        f"{device}, {xp.__name__} {xp.__version__}; whole calls, median of {args.repeat} "
        "after one untimed; ms",
        flush=True,
    )
    print(
        f"{'graph':<8} {'primitive':<9} {'edges':>10} {'numpy':>9} {'cupy':>9} "
        f"{'on gpu':>9} {'winner':>7}",
        flush=True,
    )
    rows, streak = [], dict.fromkeys(args.primitives, 0)
    for name, host in _graphs(args.scales):
        degree = np.diff(host.offsets)
        source = int(np.argmax(degree))
        rng = np.random.default_rng(1)
        count = min(args.bc_samples, host.num_vertices)
        samples = sorted(rng.choice(host.num_vertices, size=count, replace=False).tolist())
        device_graph = host.to(gpu)
        on_host, on_gpu = _calls(host, source, samples), _calls(device_graph, source, samples)
        for primitive in args.primitives:
            if args.stop_after and streak[primitive] >= args.stop_after:
                continue
            mine, theirs = on_host[primitive], on_gpu[primitive]
            cpu = _median_seconds(
                functools.partial(mine, backend="numpy"), args.repeat, lambda: None
            )
            copied = _median_seconds(
                functools.partial(mine, backend=gpu.name), args.repeat, gpu.synchronize
            )
            resident = _median_seconds(
                functools.partial(theirs, backend=gpu.name), args.repeat, gpu.synchronize
            )
            rows.append((name, primitive, host.num_edges, cpu, copied, resident))
            streak[primitive] = streak[primitive] + 1 if copied < cpu else 0
            print(
                f"{name:<8} {primitive:<9} {host.num_edges:>10,} {cpu * 1e3:9.3f} "
                f"{copied * 1e3:9.3f} {resident * 1e3:9.3f} "
                f"{'cupy' if copied < cpu else 'numpy':>7}",
                flush=True,
            )
        del device_graph, on_gpu
        if hasattr(xp, "get_default_memory_pool"):
            xp.get_default_memory_pool().free_all_blocks()
    print("\nCuPy (host graph, copied each call) wins from, and at every larger size measured:")
    found = []
    for primitive in args.primitives:
        edges = crossover(rows, primitive)
        print(f"  {primitive:<9} " + ("never" if edges is None else f"{edges:,} edges"))
        if edges is not None:
            found.append(edges)
    if found:
        print(f"SMALL_GRAPH_EDGES (the median over primitives): {int(statistics.median(found)):,}")


if __name__ == "__main__":
    main()
