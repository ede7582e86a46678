"""Many sources at once (issue 29): batched betweenness and closeness against one source at a
time and networkx, in one run on one device.

    PYTHONPATH=. python3 -m benchmarks.many_sources                   # NumPy
    PYTHONPATH=. python3 -m benchmarks.many_sources --backend cupy    # one GPU
    PYTHONPATH=. python3 -m benchmarks.many_sources --scale 16 --sources 256 --single 16 --batch 64

Rows (each the best of ``--repeat`` runs after one untimed call, answers checked):

1. betweenness from every source of email-Eu-core (SNAP, 1,005 vertices, 25,571 directed
   edges, ../shared/graphs): batched (``bg.betweenness_centrality``), one source a run
   (``batch=1``) and networkx;
2. betweenness from ``--sources`` sources sampled on rmat<``--scale``> (networkx's sample for
   seed 1): batched, and one source a run over the first ``--single`` of them, scaled to all
   of them when fewer ("x N/single" in the row; default: all on CuPy, 8 on NumPy);
3. closeness of email-Eu-core: batched (``bg.closeness_centrality``) and networkx.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import networkx as nx
import numpy as np

import bspgraph as bg

EMAIL = Path(__file__).resolve().parents[1].parent / "shared" / "graphs" / "email-Eu-core.txt"


def best(call, repeat: int) -> tuple[float, object]:
    """The fastest of ``repeat`` timed calls after an untimed one, and its result."""
    result = call()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - started)
    return min(times), result


def as_vector(mapping: dict, n: int) -> np.ndarray:
    return np.array([mapping[v] for v in range(n)], dtype=np.float64)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="numpy", choices=["numpy", "cupy"])
    parser.add_argument("--scale", type=int, default=20, help="R-MAT scale of row 2")
    parser.add_argument("--sources", type=int, default=1024, help="sampled sources of row 2")
    parser.add_argument(
        "--single",
        type=int,
        default=None,
        help="one-source runs timed in row 2 (default: all on cupy, 8 on numpy)",
    )
    parser.add_argument(
        "--batch",
        type=int,
        default=None,
        help="sources a batch in row 2 (default: the library's choice)",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--email", type=Path, default=EMAIL)
    args = parser.parse_args(argv)
    backend = args.backend
    rows = []

    def row(name, seconds, baseline, baseline_seconds, note=""):
        rows.append(
            {
                "row": name,
                "seconds": seconds,
                "baseline": baseline,
                "baseline_seconds": baseline_seconds,
                "note": note,
            }
        )
        speedup = baseline_seconds / seconds if seconds > 0 else float("inf")
        print(
            f"| {name} | {seconds:.3f} | {baseline} | {baseline_seconds:.3f} | "
            f"{speedup:.1f}x | {note} |",
            flush=True,
        )

    host = bg.read_edgelist(args.email, vertices="range", directed=True, backend="numpy")
    email = host.to(backend)
    g = host.to_networkx()
    n = host.num_vertices
    print(f"backend {backend}; email-Eu-core: {n} vertices, {host.num_edges} edges")
    print("| what | bspgraph batched (s) | against | its time (s) | speed-up | note |")
    print("|---|---|---|---|---|---|")

    # 1. every-source betweenness of email-Eu-core
    batched_s, batched = best(lambda: bg.betweenness_centrality(email).centrality, args.repeat)
    single_s, single = best(lambda: bg.betweenness_centrality(email, batch=1).centrality, 1)
    started = time.perf_counter()
    expected = as_vector(nx.betweenness_centrality(g), n)
    nx_s = time.perf_counter() - started
    np.testing.assert_allclose(batched, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(single, expected, rtol=1e-9, atol=1e-12)
    row("BC, every source, email-Eu-core", batched_s, "one source a run", single_s)
    row("BC, every source, email-Eu-core", batched_s, "networkx", nx_s)

    # 2. sampled sources on R-MAT
    rmat = bg.generators.rmat(args.scale, 16, seed=1, backend="numpy").to(backend)
    sources = random.Random(1).sample(range(rmat.num_vertices), args.sources)  # networkx's, k=
    single_count = args.single or (len(sources) if backend == "cupy" else 8)
    single_count = min(single_count, len(sources))
    repeat = 1 if args.scale >= 16 else args.repeat
    batched_s, _ = best(
        lambda: bg.betweenness_centrality(rmat, k=args.sources, seed=1, batch=args.batch), repeat
    )
    few = sources[:single_count]
    few_s, _ = best(lambda: bg.betweenness_centrality(rmat, few, batch=1), 1)
    check = bg.betweenness_centrality(rmat, few[:2], normalized=False).centrality
    np.testing.assert_allclose(
        bg.betweenness_centrality(rmat, few[:2], batch=1, normalized=False).centrality,
        check,
        rtol=1e-9,
        atol=1e-9,
    )
    scaled = few_s * len(sources) / single_count
    note = f"batch={args.batch}" if args.batch else "batch: the library's choice"
    if single_count < len(sources):
        note += f"; one source a run timed on {single_count}, x {len(sources) / single_count:g}"
    row(
        f"BC, {len(sources)} sampled sources, rmat{args.scale} "
        f"({rmat.num_vertices} vertices, {rmat.num_edges} edges)",
        batched_s,
        f"{len(sources)} one-source runs",
        scaled,
        note,
    )

    # 3. closeness of email-Eu-core
    batched_s, batched = best(lambda: bg.closeness_centrality(email).centrality, args.repeat)
    started = time.perf_counter()
    expected = as_vector(nx.closeness_centrality(g), n)
    nx_s = time.perf_counter() - started
    np.testing.assert_allclose(batched, expected, rtol=1e-12)
    row("closeness, email-Eu-core", batched_s, "networkx", nx_s)
    return rows


if __name__ == "__main__":
    main()
