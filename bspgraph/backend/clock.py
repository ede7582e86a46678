"""One-time costs paid inside a call, timed where they are paid: per-graph preparations
("prepare": a reverse CSR, a renaming of columns, a sampled CSR, ...) and kernel compilations
("compile": the first launch of a kernel this process has not built yet).

Code that builds such a thing wraps the work in ``with clock.paying(kind):``; the enactor reads
:func:`paid` before and after each phase of a run, reports the payments of the call in
``Stats.prepare_seconds`` and ``Stats.compile_seconds``, and takes them out of the phase they
fell in (setup, loop, gather), so that the phases and the payments add up to the whole call.
A payment made inside another (a kernel compiled while a reverse CSR is built) counts once,
for the inner kind. Counts are per thread: a run reads only its own thread's payments.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

KINDS = ("prepare", "compile")
_local = threading.local()


def _totals() -> dict[str, float]:
    totals = getattr(_local, "totals", None)
    if totals is None:
        totals = _local.totals = dict.fromkeys(KINDS, 0.0)
    return totals


@contextmanager
def paying(kind: str) -> Iterator[None]:
    """Time the body as a payment of ``kind`` ("prepare" or "compile"), less the payments made
    inside it (those count for their own kind).

    Raises
    ------
    ValueError
        An unknown ``kind``.
    """
    if kind not in KINDS:
        raise ValueError(f"clock.paying({kind!r}): expected one of {', '.join(map(repr, KINDS))}")
    totals = _totals()
    inner = sum(totals.values())
    started = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - started
        totals[kind] += max(elapsed - (sum(totals.values()) - inner), 0.0)


def paid() -> dict[str, float]:
    """Seconds paid so far in this thread, by kind (a copy: subtract two readings)."""
    return dict(_totals())


def since(before: dict[str, float]) -> dict[str, float]:
    """Seconds paid in this thread since the reading ``before``, by kind."""
    now = _totals()
    return {kind: now[kind] - before[kind] for kind in KINDS}


def spent_since(before: dict[str, float]) -> float:
    """Seconds paid in this thread since the reading ``before``, every kind together: what a
    phase timed from that reading takes out of its time."""
    return sum(since(before).values())
