"""``bspgraph bench``: the median of repeated runs, over one or several sources."""

from __future__ import annotations

import statistics
import time

from .load import load
from .options import SOURCED
from .progress import Progress
from .running import (
    ALGORITHMS,
    call_checked,
    check_weights,
    findings,
    pick_sources,
    print_summary,
    run_kwargs,
    summarize,
    warm_imports,
)
from .write import check_writable, import_matplotlib, plot


def bench(args) -> int:
    """Median of ``--repeat`` timed runs after ``--warmup`` untimed ones, per source; over
    several sources (``--sources K``) the mean time and the harmonic mean of GTEPS."""
    if args.plot:
        import_matplotlib()  # fail before the runs, not after them
        check_writable(args.plot, "--plot")
    started = time.perf_counter()
    loaded = load(args)
    graph = loaded.graph
    seconds = time.perf_counter() - started
    sources, rule = pick_sources(loaded, args) if args.algorithm in SOURCED else ([None], "")
    check_weights(args, loaded)
    warm_imports()
    field, call = ALGORITHMS[args.algorithm]
    run = run_kwargs(args)
    medians, rates, middles = [], [], []
    with Progress(f"bench {args.algorithm}", quiet=args.quiet):
        for source in sources:
            args.source = source
            for _ in range(args.warmup):
                call_checked(call, graph, args, run)
            results = [call_checked(call, graph, args, run) for _ in range(args.repeat)]
            times = [result.stats.seconds for result in results]
            median = statistics.median(times)
            middle = min(results, key=lambda r: abs(r.stats.seconds - median))  # at the median
            medians.append((median, min(times), max(times)))
            rates.append(middle.stats.edges / median / 1e9 if median > 0 else 0.0)
            middles.append(middle)
    result = middles[0]
    summary = summarize(args, loaded, result.stats, seconds)
    if args.algorithm in SOURCED:
        named = [int(loaded.ids.of(source)) for source in sources]
        summary.update(source=named[0] if len(named) == 1 else named, source_rule=rule)
    summary.update(findings(args.algorithm, result, getattr(result, field), loaded))
    positive = [rate for rate in rates if rate > 0]
    summary.update(
        {
            "repeat": args.repeat,
            "warmup": args.warmup,
            "seconds": round(statistics.mean(m[0] for m in medians), 6),
            "min_seconds": round(min(m[1] for m in medians), 6),
            "max_seconds": round(max(m[2] for m in medians), 6),
            "gteps": round(statistics.harmonic_mean(positive) if positive else 0.0, 4),
        }
    )
    if len(sources) > 1:
        summary["sources"] = len(sources)
    if args.plot:
        devices = f"{args.devices} device" + ("s" if args.devices > 1 else "")
        plot(args.plot, result.stats, f"{args.algorithm} on {args.graph}, {devices}")
        summary["plot"] = args.plot
    print_summary(summary, args.json)
    return 0
