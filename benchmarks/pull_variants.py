"""PageRank's pull product on rmat24 (values gathered through 521M in-list entries), in variants
that might keep the gathered values in L2, each checked against the row reduction as it is.

    PYTHONPATH=. python3 -m benchmarks.pull_variants [--scale 24]

Variants (all on the in-lists renamed in degree order, as ``operators.gathered`` does):
- ``as is``: ``ops.spmv`` (the row reduction), float64 values, float32 weights;
- ``streamed``: the same kernel with the index and weight loads marked evict-first
  (``__ldcs``), so that the stream of entries does not push the values out of L2;
- ``float32``: float32 values (half the bytes to keep in L2; an accuracy trade, not networkx's);
- ``S segments``: the columns cut into S ranges of equal count, one CSR each (built once),
  reduced one after another and added up: each pass gathers from a range that fits in L2.
Median of 9 calls (CUDA events) after a warm-up; the table prints last.
"""

from __future__ import annotations

import argparse
import statistics

import bspgraph as bg
import bspgraph.backend as backend_module
from bspgraph.backend import ops
from bspgraph.frontier import operators

STREAMED_SOURCE = backend_module._ROW_REDUCE.replace(
    "values[indices[e]]", "values[__ldcs(indices + e)]"
).replace("(VAL)weights[e]", "(VAL)__ldcs(weights + e)")


def median_ms(cp, fn, calls: int = 9) -> float:
    fn()
    times = []
    for _ in range(calls):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def segments(cp, offsets, indices, weights, bounds):
    """One CSR (offsets, indices, weights) per column range [bounds[k], bounds[k + 1])."""
    parts = []
    for low, high in zip(bounds[:-1], bounds[1:]):
        inside = (indices >= low) & (indices < high)
        seen = cp.concatenate([cp.zeros(1, dtype=cp.int64), cp.cumsum(inside, dtype=cp.int64)])
        counts = seen[offsets[1:]] - seen[offsets[:-1]]
        part_offsets = cp.concatenate([cp.zeros(1, dtype=cp.int64), cp.cumsum(counts)])
        parts.append((part_offsets.astype(offsets.dtype), indices[inside], weights[inside]))
        del inside, seen
    return parts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=24)
    args = parser.parse_args()
    graph = bg.generators.rmat(args.scale, 16, seed=1, weights=True, backend="cupy")
    backend, cp, n = graph.backend, graph.xp, graph.num_vertices
    rows = graph.reverse
    columns, renamed = operators._order_columns(graph, "in")
    active = int((graph.cost_degrees()[1] > 0).sum())
    l2 = cp.cuda.Device().attributes["L2CacheSize"]
    print(
        f"rmat{args.scale}: {n} vertices, {active} with in-edges, {rows.indices.size} entries, "
        f"L2 {l2 / 2**20:.0f} MiB, weights {rows.weights.dtype}",
        flush=True,
    )
    values = cp.random.random(n)[columns]
    values32 = values.astype(cp.float32)

    def spmv(vals, offsets=rows.offsets, indices=renamed, weights=rows.weights):
        return ops.spmv(backend, offsets, indices, weights, vals, n)

    expected = spmv(values)
    table = []

    def record(name, fn, rtol=1e-12):
        got = fn()
        error = float(cp.abs(got - expected).max() / cp.abs(expected).max())
        table.append((name, median_ms(cp, fn), error))
        print(f"{name:<22} {table[-1][1]:8.3f} ms  max rel error {error:.1e}", flush=True)
        assert error < rtol, name

    record("as is", lambda: spmv(values))
    record("float32 values", lambda: spmv(values32), rtol=1e-5)
    plain = backend_module._ROW_REDUCE
    backend_module._ROW_REDUCE = STREAMED_SOURCE
    try:
        record("streamed", lambda: spmv(values))
        record("streamed float32", lambda: spmv(values32), rtol=1e-5)
    finally:
        backend_module._ROW_REDUCE = plain
    for count in (2, 3, 4, 6):
        bounds = [active * k // count for k in range(count)] + [n]
        parts = segments(cp, rows.offsets, renamed, rows.weights, bounds)

        def segmented(parts=parts):
            out = spmv(values, *parts[0])
            for part in parts[1:]:
                out += spmv(values, *part)
            return out

        record(f"{count} segments", segmented)
        if count == 2:
            backend_module._ROW_REDUCE = STREAMED_SOURCE
            try:
                record("2 segments streamed", segmented)
            finally:
                backend_module._ROW_REDUCE = plain
        del parts
        cp.get_default_memory_pool().free_all_blocks()
    print(f"\n{'variant':<22} {'ms':>8} {'vs as is':>8}")
    for name, ms, _ in table:
        print(f"{name:<22} {ms:8.3f} {table[0][1] / ms:7.2f}x")


if __name__ == "__main__":
    main()
