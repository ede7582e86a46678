"""What a run did: per-superstep records and the run's totals."""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass


class _Count:
    """A count that may be set as a 0-d array on a device: read (once) when first asked for,
    so that a run does not wait for it (the traversed edges: a pass over every vertex)."""

    def __set_name__(self, owner, name: str):
        self.slot = "_" + name

    def __get__(self, stats, owner=None) -> int:
        if stats is None:  # the dataclass field's default
            return 0
        value = stats.__dict__[self.slot]
        if not isinstance(value, int):
            value = stats.__dict__[self.slot] = int(value)
        return value

    def __set__(self, stats, value) -> None:
        stats.__dict__[self.slot] = value


@dataclass(slots=True)  # (no per-record dict: a road's BFS keeps a thousand records)
class Superstep:
    """What one BSP superstep did: output frontier size, time, ``vertices``, the distinct
    vertices of the frontier over every device (``frontier`` counts a vertex once a device
    that holds it): on one device its size, on several counted in checked runs
    (``check=True``), else None; and communication (messages, bytes and rounds over all
    devices; ``comm_seconds``, the time from the end of this process's devices' step kernels
    to the end of the exchange on their own clocks (the longest of its GPUs': packing,
    sending, receiving; taken without waiting in the loop); ``sync_seconds``, its wall time in
    the superstep's collectives over processes, the scalars and the stop test: mostly waiting
    for the slowest process; near 0 in one process); ``formats``, what the devices' messages
    were: "ids" (vertex ids and values), "slab" (a value for every vertex of a block),
    "bits" (a vertex set and one value a column) and "bits+ids" (Bits beside the ids and
    values of the few that took others), each named when some device sent one (empty
    on one device); ``devices``, how many devices ran its step (1 where a lifted run's light
    superstep ran on one device alone: :mod:`bspgraph.enactor.solo`). The levels of a
    repeated advance (several supersteps in one launch) share its time evenly."""

    frontier: int
    seconds: float
    vertices: int | None = None
    messages: int = 0
    bytes: int = 0
    rounds: int = 0
    comm_seconds: float = 0.0
    sync_seconds: float = 0.0
    formats: tuple[str, ...] = ()
    devices: int = 1


class _Records:
    """``Stats.supersteps``, a list of :class:`Superstep`: the records that :meth:`Stats.record`
    was given are built when the list is first read (a road's BFS passes a thousand levels in
    one step, and most callers never read their records)."""

    def __set_name__(self, owner, name: str):
        self.slot = "_" + name

    def __get__(self, stats, owner=None) -> list:
        if stats is None:  # the dataclass field's default
            return ()
        records, pending = stats.__dict__[self.slot], stats.__dict__["_pending"]
        for sizes, seconds in pending:
            records.extend([Superstep(size, seconds, size) for size in sizes])
        pending.clear()
        return records

    def __set__(self, stats, value) -> None:
        stats.__dict__[self.slot], stats.__dict__["_pending"] = list(value), []


@dataclass
class Stats:
    """Iterations, wall time, per-superstep records and traversed edges of one run.

    ``seconds`` times the BSP run (allocation, supersteps, synchronisation); ``setup_seconds``
    what came before it (the memory check and the copy of the graph to the device; on several
    devices the partitioning; 0 when reused); ``gather_seconds`` what came after (the result
    read from the owners, copied to the host unless ``result_device``). One-time costs paid
    inside the call are apart from those three (and from the supersteps' seconds):
    ``prepare_seconds``, the per-graph structures built (a reverse CSR, renamed columns, ...:
    0 after ``Graph.prepare``), and ``compile_seconds``, the kernels built (compiled, or
    loaded from the disk cache) on their first launch in this process (0 on NumPy). Together
    the five add up to the whole call, but for the primitive's own checks before the run.
    ``backend`` names the backend the run took and ``backend_reason`` says why
    (``bspgraph.backend.choose``: asked for, or by the graph's size and the GPUs present).
    """

    iterations: int = 0
    seconds: float = 0.0
    setup_seconds: float = 0.0
    gather_seconds: float = 0.0
    prepare_seconds: float = 0.0
    compile_seconds: float = 0.0
    edges: int = _Count()  # a descriptor: int() on first read
    devices: int = 1
    supersteps: list[Superstep] = _Records()  # a descriptor: built on first read
    backend: str = ""
    backend_reason: str = ""

    @classmethod
    def combine(cls, runs: list[Stats]) -> Stats:
        """One record for several runs: counts and times added, supersteps concatenated."""
        return cls(
            iterations=sum(r.iterations for r in runs),
            seconds=sum(r.seconds for r in runs),
            setup_seconds=sum(r.setup_seconds for r in runs),
            gather_seconds=sum(r.gather_seconds for r in runs),
            edges=sum(r.edges for r in runs),
            prepare_seconds=sum(r.prepare_seconds for r in runs),
            compile_seconds=sum(r.compile_seconds for r in runs),
            devices=max((r.devices for r in runs), default=1),
            supersteps=[s for r in runs for s in r.supersteps],
            backend=runs[0].backend if runs else "",
            backend_reason=runs[0].backend_reason if runs else "",
        )

    def record(self, iteration: int, sizes: tuple[int, ...], seconds: float) -> float:
        """Add the supersteps of one device that ended at ``iteration``: their output frontier
        sizes ``sizes``, ``seconds`` each; tell the watchers (:func:`watching`) and return the
        seconds that took (0 without watchers, and the records built when first read)."""
        if not _WATCHERS.get():
            self.__dict__["_pending"].append((sizes, seconds))
            return 0.0
        steps = [Superstep(size, seconds, size) for size in sizes]
        self.supersteps.extend(steps)
        return told(iteration, steps)

    @property
    def gteps(self) -> float:
        """Traversed edges per second, in billions."""
        return self.edges / self.seconds / 1e9 if self.seconds > 0 else 0.0


_WATCHERS: contextvars.ContextVar[tuple[Callable[[int, Superstep], None], ...]] = (
    contextvars.ContextVar("superstep watchers", default=())
)


@contextlib.contextmanager
def watching(callback: Callable[[int, Superstep], None]) -> Iterator[None]:
    """Call ``callback(iteration, superstep)`` after every superstep of the runs made
    inside this block (this thread or task only): ``iteration`` counts from 1, ``superstep`` is
    the record that ``stats.supersteps`` keeps (output frontier size, seconds). A progress
    display is such a callback: it reads the records as the loop writes them, never polls.
    The callback runs between supersteps, outside their time and ``stats.seconds``; what it
    raises ends the run."""
    token = _WATCHERS.set((*_WATCHERS.get(), callback))
    try:
        yield
    finally:
        _WATCHERS.reset(token)


def told(iteration: int, steps: list[Superstep]) -> float:
    """Tell the watchers (:func:`watching`) of this thread or task about ``steps``, the
    supersteps that ended at ``iteration``; the seconds that took (0 without watchers)."""
    watchers = _WATCHERS.get()
    if not watchers:
        return 0.0
    started = time.perf_counter()
    for index, step in enumerate(steps, start=iteration - len(steps) + 1):
        for watcher in watchers:
            watcher(index, step)
    return time.perf_counter() - started
