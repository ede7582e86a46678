"""Testing helpers for primitives, your own included: does it lift to several devices?

:func:`assert_lifts` runs a primitive (or a function that runs one) on random graphs drawn by
hypothesis, on 1 to 5 virtual devices with every partitioner and communicator, and asserts that
each run gives the one-device answer, or fails with a ContractError naming the state that never
settled where a lifted run does not converge; a failure shrinks to the smallest graph that
shows it. It needs hypothesis (``pip install hypothesis``, in the ``dev`` extra). :func:`host_reads` counts,
superstep by superstep, the host reads a run on several parts would make on a GPU; with
``separate=True`` it also checks that each part's work runs with its own GPU current
(:class:`CrossDeviceError` where it does not).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ._counting import CrossDeviceError
from .enactor import Primitive, Stats, enact
from .enactor.checks import Reference
from .enactor.solo import light_share
from .exceptions import ContractError
from .graph import Graph

__all__ = [
    "COMMUNICATORS",
    "PARTITIONERS",
    "CrossDeviceError",
    "HostReads",
    "assert_lifts",
    "graphs",
    "host_reads",
]

PARTITIONERS = ("random", "biased", "edge_balanced")
COMMUNICATORS = ("broadcast", "selective", "butterfly:1", "butterfly:2", "butterfly:3")
LIGHT_SHARES = (0, 1)  # the cells' light supersteps: on every device, or on one alone


def graphs(
    *,
    max_vertices: int = 16,
    max_edges: int = 48,
    directed: bool | None = None,
    weighted: bool | None = None,
    self_loops: bool = True,
):
    """A hypothesis strategy of small NumPy Graphs: the empty graph, single vertices, isolated
    vertices, several components, sinks, duplicate edges, self-loops (unless ``self_loops`` is
    False) and integer weights 0..9 (when ``weighted`` is None or True) all occur.
    ``directed`` / ``weighted``: None draws either."""
    from hypothesis import strategies as st

    @st.composite
    def draw_graph(draw):
        n = draw(st.integers(0, max_vertices))
        m = draw(st.integers(0, max_edges if n else 0))
        ids = st.integers(0, max(n - 1, 0))
        src = np.array(draw(st.lists(ids, min_size=m, max_size=m)), dtype=np.int64)
        dst = np.array(draw(st.lists(ids, min_size=m, max_size=m)), dtype=np.int64)
        weights = draw(st.lists(st.integers(0, 9), min_size=m, max_size=m))
        is_weighted = draw(st.booleans()) if weighted is None else weighted
        is_directed = draw(st.booleans()) if directed is None else directed
        return Graph.from_edges(
            src,
            dst,
            np.array(weights, dtype=float) if is_weighted else None,
            num_vertices=n,
            directed=is_directed,
            self_loops=self_loops,
            backend="numpy",
        )

    return draw_graph()


def assert_lifts(
    primitive_or_function: Primitive | Callable[..., Any],
    graphs: Any = None,
    *,
    params: dict | Callable[[Graph], dict] | None = None,
    devices: Iterable[int] = range(1, 6),
    partitioners: Sequence[str] = PARTITIONERS,
    communicators: Sequence[Any] = COMMUNICATORS,
    max_examples: int = 20,
    rtol: float = 1e-9,
    atol: float = 1e-12,
) -> None:
    """Assert that a primitive gives its one-device answer on every device count x partitioner
    x communicator, in checked runs (``enact(check=True)``) on NumPy virtual devices.

    Parameters
    ----------
    primitive_or_function : Primitive or callable
        A Primitive instance (run with ``bspgraph.enact``; its result is the dict of state
        arrays and scalars), or a function ``f(graph, **run)`` that passes ``run`` (devices,
        partitioner, communicator, backend, check) on to ``enact`` or a built-in primitive and
        returns arrays, a dict or a result dataclass (``stats`` is left out of comparisons).
    graphs : hypothesis strategy of Graph, or a sequence of Graphs, optional
        Default :func:`graphs`. A strategy is searched for ``max_examples`` graphs, and a
        failure shrinks to the smallest failing one; a sequence is run as it is.
    params : dict or callable graph -> dict, optional
        Keyword arguments of ``init_frontier`` (e.g. ``lambda g: {"source": 0}``), for a
        Primitive instance; skip a graph by returning None.
    devices, partitioners, communicators
        The grid; communicators by name ("butterfly:2" for a fanout of 2) or instance.
    rtol, atol
        Tolerances for floating-point results; everything else must be equal.

    Raises
    ------
    AssertionError
        A run differs from the one-device run; the message names the run, the first
        differing value and the graph's edges.
    ContractError
        A step breaks the lifting contract in a way a checked run detects (named state and
        vertex), on one device or several; or a lifted run takes more than max(4 x the
        one-device run's supersteps, 64) (a combiner that loses the owner's change, a step
        that reads other vertices' state without ``needs_all``): the message names the state
        that kept changing, the scalars and devices that never converged, and the vertices
        whose communicated state a device holds otherwise than its owner.
    """
    run = _runner(primitive_or_function, params)
    cells = [(p, part, comm) for p in devices for part in partitioners for comm in communicators]

    def check(graph: Graph) -> None:
        one_device = Reference()  # its supersteps: a lifted run may take max(4 x them, 64)
        expected = run(graph, devices=1, backend="numpy", check=one_device)
        if expected is _SKIP:
            return
        for index, (p, partitioner, communicator) in enumerate(cells):
            share = LIGHT_SHARES[index % len(LIGHT_SHARES)]  # (every superstep everywhere, or
            # every one that may on one device alone: contract rule 6, cell by cell in turn)
            cell = (
                f"devices={p}, partitioner={partitioner!r}, communicator={communicator!r}, "
                f"light_share={share}"
            )
            try:
                with light_share(share):
                    got = run(
                        graph,
                        devices=p,
                        partitioner=partitioner,
                        communicator=communicator,
                        backend="numpy",
                        check=one_device,
                    )
            except ContractError as error:  # the run and the graph named, as for a difference
                raise ContractError(f"{error}\n({cell} on {_describe(graph)})") from error
            _assert_same(expected, got, f"{cell} on {_describe(graph)}", rtol, atol)

    if isinstance(graphs, Graph) or (
        isinstance(graphs, Sequence) and not hasattr(graphs, "example")
    ):
        for graph in [graphs] if isinstance(graphs, Graph) else graphs:
            check(graph.to("numpy"))
        return
    from hypothesis import HealthCheck, given, settings

    strategy = _default_graphs() if graphs is None else graphs
    slow = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
    search = settings(
        max_examples=max_examples, deadline=None, database=None, suppress_health_check=slow
    )(given(strategy)(check))
    search()


_SKIP = object()


def _default_graphs():
    return graphs()


def _runner(target, params) -> Callable[..., Any]:
    """``f(graph, **run)`` for a Primitive instance (through ``enact``) or a function."""
    if not isinstance(target, Primitive):
        if not callable(target):
            raise TypeError(f"assert_lifts: expected a Primitive or a function, got {target!r}")
        return target

    def run_primitive(graph, **run):
        given = params(graph) if callable(params) else (params or {})
        if given is None:
            return _SKIP
        return enact(target, graph, **given, **run)[0]

    return run_primitive


def _assert_same(expected, got, where: str, rtol: float, atol: float) -> None:
    if isinstance(expected, Stats):
        return
    if dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        for field in dataclasses.fields(expected):
            _assert_same(
                getattr(expected, field.name),
                getattr(got, field.name),
                f"{field.name} ({where})",
                rtol,
                atol,
            )
    elif isinstance(expected, dict):
        assert set(expected) == set(got), f"keys {sorted(got)} != {sorted(expected)} ({where})"
        for key in expected:
            _assert_same(expected[key], got[key], f"{key!r} ({where})", rtol, atol)
    elif isinstance(expected, (tuple, list)):
        assert len(expected) == len(got), f"{len(got)} values != {len(expected)} ({where})"
        for k, (a, b) in enumerate(zip(expected, got)):
            _assert_same(a, b, f"[{k}] ({where})", rtol, atol)
    elif expected is None or got is None:
        assert expected is got, f"{got!r} != {expected!r} ({where})"
    else:
        a, b = np.asarray(expected), np.asarray(got)
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=where)
        else:
            np.testing.assert_array_equal(b, a, err_msg=where)


def _describe(graph: Graph) -> str:
    """The graph and its edges (as a test would rebuild it)."""
    src, dst, weight = graph.edges()
    edges = list(zip(src.tolist(), dst.tolist()))
    weights = "" if weight is None else f", weights {weight.tolist()}"
    return (
        f"{graph.num_vertices} vertices, {'directed' if graph.directed else 'undirected'}, "
        f"edges {edges}{weights}"
    )


@dataclasses.dataclass(frozen=True)
class HostReads:
    """What a run on several parts would read to the host, superstep by superstep (each list
    has one entry a superstep), and the run's ``result`` (the state arrays).

    ``superstep``: the reads around the primitive's step, over every part (the package, the
    exchange, the combine, the next frontier, convergence, the tally's counts); ``step``:
    those within the steps (NumPy's kernels': a GPU's kernels keep their own counts);
    ``pickled``: the collectives of pickled objects."""

    superstep: list[int]
    step: list[int]
    pickled: list[int]
    result: dict


def host_reads(
    primitive: Primitive,
    graph: Graph,
    *,
    devices: int = 2,
    partitioner: str = "edge_balanced",
    communicator: Any = "selective",
    separate: bool = False,
    **params: Any,
) -> HostReads:
    """Count the host reads of a run of ``primitive`` on ``devices`` parts, as a GPU makes them.

    The run's arrays live on a NumPy backend with a GPU's capabilities whose every conversion of a
    device value to a Python one (``int``, ``bool``, ``item``, an index, a count the backend
    returns as a host integer) counts one read (``bspgraph._counting``); the transport counts
    its pickled collectives. Each step's output is left counted on the device, as a GPU's
    kernels leave it (a list and its tally, a mask and its count). On a GPU each read waits
    for the queue: the target design's superstep makes one, the tally's. ``params`` go to
    ``init_frontier``. Reads of arrays
    made by NumPy directly rather than through the backend are not seen (the counts are a
    floor). Not thread-safe (one global counter).

    ``separate``: each part a GPU of its own (messages cross a link), not parts of one GPU;
    every operation on an array checks that its GPU is current, as CuPy needs, and raises
    :class:`CrossDeviceError` where it is not.
    """
    from . import comm
    from ._counting import READS, CountingBackend, counting, stepping_as_a_gpu

    backend = CountingBackend()
    marks: list[tuple[int, int, int]] = []  # (reads around, reads within, pickled) at a tally
    within = [0]
    pickled = [0]

    class CountingLocal(comm.Local):
        def allgather(self, value):
            pickled[0] += 1
            return super().allgather(value)

        def allgather_numbers(self, values):
            marks.append((READS.count, within[0], pickled[0]))
            return super().allgather_numbers(values)

    step = stepping_as_a_gpu(primitive.step)

    def counted_step(graph, frontier, state, iteration):  # its reads counted apart
        before = READS.count
        try:
            return step(graph, frontier, state, iteration)
        finally:
            within[0] += READS.count - before
            READS.count = before

    primitive.step = counted_step  # this instance only
    try:
        with counting(backend):
            device_ids = list(range(devices)) if separate else [0] * devices
            result, _ = enact(
                primitive,
                graph,
                devices=device_ids,
                partitioner=partitioner,
                communicator=communicator,
                backend=backend,
                transport=CountingLocal([backend.on_device(d) for d in device_ids]),
                **params,
            )
    finally:
        del primitive.step

    def per_superstep(k: int) -> list[int]:  # between tallies (the last: the edges' sum)
        return [b[k] - a[k] for a, b in zip(marks, marks[1:])][:-1]

    return HostReads(per_superstep(0), per_superstep(1), per_superstep(2), result)
