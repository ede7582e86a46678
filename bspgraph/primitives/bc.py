"""Betweenness centrality by Brandes: per source, count shortest paths forward, accumulate back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..backend import backend_for, backend_of, to_host
from ..enactor import Add, Primitive, State, Stats, enact
from ..exceptions import PathCountOverflow
from ..frontier import lanes
from ..frontier.advance import BETA
from ..frontier.operators import prepare_reduction
from ..graph.graph import register_preparation
from ._batch import batch_width, batches, checked_sources, lane_edges, sampled_sources
from ._bc_kernels import count_paths


@dataclass(frozen=True)
class BCResult:
    """``centrality[v]``: the betweenness of ``v`` (float64), scaled as networkx scales it."""

    centrality: np.ndarray
    stats: Stats


class Forward(Primitive):
    """Level-synchronous BFS that counts shortest paths: ``sigma[w] = sum of sigma[v]`` over
    the edges ``v -> w`` with ``depth[w] = depth[v] + 1``."""

    state = (State("depth", "vertex", init="max", unset=-1), State("sigma", "float64"))
    communicate = {"depth": "min", "sigma": Add(follows="depth")}  # counted at the least depth
    params = {"source": "id"}

    def init_frontier(self, graph, state, *, source):
        state.depth[source], state.sigma[source] = 0, 1.0
        return fr.Frontier.from_ids(graph, [source])

    def step(self, graph, frontier, state, iteration):
        if _heavy(graph, frontier):  # one device, a heavy level: path counts in one product
            unvisited = fr.Frontier.from_mask(graph, state.depth > iteration + 1)
            paths = fr.neighbor_reduce(graph, state.sigma, "sum", direction="in",
                                       frontier=unvisited, sources=frontier)  # fmt: skip
            hit = graph.xp.flatnonzero(paths > 0)
            reached = unvisited.ids[hit]
            state.depth[reached], state.sigma[reached] = iteration + 1, paths[hit]
            return fr.Frontier.from_ids(graph, reached)
        count = count_paths(state.depth, state.sigma, iteration + 1, graph.backend)
        return fr.advance(graph, frontier, count, unique=True, direction="push")

    def traversed_edges(self, graph, state):
        unset = np.iinfo(state.depth.dtype).max
        return graph.backend.total_below(graph.out_degree(), state.depth, unset)

    def prepare(self, graph):
        super().prepare(graph)
        graph.cost_degrees()  # a heavy level's pull reads the in-edges


def _heavy(graph, frontier) -> bool:
    """On one device (others do not see every depth), whether the level's out-edges are many
    (advance's BETA): then a sparse product beats a functor called on each edge."""
    edges = graph.cost_degrees()[2]
    return graph.context.global_view and fr.count_out_edges(graph, frontier) * BETA >= edges


class Backward(Primitive):
    """Dependencies from the deepest level up: ``delta[v] = sum of sigma[v] / sigma[w] *
    (1 + delta[w])`` over the edges ``v -> w`` with ``depth[w] = depth[v] + 1``."""

    state = (
        State("depth", "int64", output=False),
        State("sigma", "float64", output=False),
        State("delta", "float64"),
    )
    communicate = {"delta": "replace"}
    params = {"depth": "per_vertex", "sigma": "per_vertex"}
    needs_all = True  # a vertex reads the dependencies of its successors, owned or not

    def init_frontier(self, graph, state, *, depth, sigma):
        state.depth[...] = graph.backend.asarray(depth)
        state.sigma[...] = graph.backend.asarray(sigma)
        return _at_depth(graph, state, self.options["deepest"])  # delta 0: final already

    def step(self, graph, frontier, state, iteration):
        deepest = self.options["deepest"]  # plus.times over the out-edges into the level below
        # the level below: the frontier itself on one device (on several, what changed there)
        below = (
            frontier if graph.context.global_view else _at_depth(graph, state, deepest - iteration)
        )
        share = graph.xp.zeros(graph.num_vertices)  # (1 + delta) / sigma, there only
        share[below.ids] = (1 + state.delta[below.ids]) / state.sigma[below.ids]
        level = _at_depth(graph, state, deepest - 1 - iteration)  # the same on every device
        ids = level.ids  # a vertex's out-edges are on its owner: elsewhere its sum is 0, replaced
        state.delta[ids] = state.sigma[ids] * fr.neighbor_reduce(
            graph,
            share,
            "sum",
            frontier=level,
            sources=below if graph.context.global_view else None,
        )  # one device: a push from ``below`` when its edges are fewer
        return level  # their dependencies are final: the enactor sends them

    def converged(self, graph, frontier, state, iteration):
        return self.options["deepest"] - 1 - iteration < 1  # level 0 is the source: no delta


class BatchedForward(Primitive):
    """:class:`Forward` from ``lanes`` sources at once: ``depth`` and ``sigma`` are rows of
    lanes, and a level's path counts for the whole batch are one product (the frontier's
    ``sigma`` times the adjacency matrix, masked by the unvisited lanes)."""

    state = (
        State("depth", "vertex", init="max", unset=-1, lanes="lanes"),
        State("sigma", "float64", lanes="lanes"),
    )
    communicate = {"depth": "min", "sigma": "add"}  # lane by lane
    params = {"sources": "id"}
    needs_all = True  # every device knows every depth: counts add up only at the new level

    def init_frontier(self, graph, state, *, sources):
        ids = graph.backend.asarray(sources).astype(graph.indices.dtype, copy=False)
        lanes = graph.xp.arange(len(sources))
        state.depth[ids, lanes], state.sigma[ids, lanes] = 0, 1.0
        return fr.Frontier.from_ids(graph, graph.backend.unique(ids))

    def step(self, graph, frontier, state, iteration):
        xp, rows = graph.xp, frontier.ids
        level = xp.where(state.depth[rows] == iteration, state.sigma[rows], 0.0)
        paths = fr.advance_lanes(graph, frontier, level)  # plus.times over the level's edges
        new = (paths > 0) & (state.depth == np.iinfo(state.depth.dtype).max)
        xp.copyto(state.depth, state.depth.dtype.type(iteration + 1), where=new)
        xp.copyto(state.sigma, paths, where=new)
        return fr.Frontier.from_mask(graph, new.any(axis=1))

    def traversed_edges(self, graph, state):
        return lane_edges(graph, state.depth)

    def prepare(self, graph):
        super().prepare(graph)
        lanes.prepare(graph, "in", np.float64)  # a dense level's path counts


class BatchedBackward(Primitive):
    """:class:`Backward` for ``lanes`` sources at once: a level's dependencies for the whole
    batch are one product (the adjacency matrix times ``(1 + delta) / sigma`` of the level
    below)."""

    state = (
        State("depth", "vertex", output=False, lanes="lanes"),
        State("sigma", "float64", output=False, lanes="lanes"),
        State("delta", "float64", lanes="lanes"),
    )
    communicate = {"delta": "replace"}
    params = {"depth": "per_vertex", "sigma": "per_vertex"}
    needs_all = True  # a vertex reads the dependencies of its successors, owned or not

    def init_frontier(self, graph, state, *, depth, sigma):
        state.depth[...] = graph.backend.asarray(depth)
        state.sigma[...] = graph.backend.asarray(sigma)
        return fr.Frontier.empty(graph)  # the deepest level's dependencies are 0: final

    def step(self, graph, frontier, state, iteration):
        xp, level = graph.xp, self.options["deepest"] - 1 - iteration
        below = state.depth == level + 1
        share = xp.where(below, (1 + state.delta) / xp.where(below, state.sigma, 1.0), 0.0)
        members = fr.filter(graph, fr.Frontier.all(graph),  # the rows this device owns there
                            lambda ids: (state.depth[ids] == level).any(axis=1))  # fmt: skip
        rows = members.ids
        sums = fr.reduce_lanes(graph, share, members)  # plus.times over their out-edges
        state.delta[rows] = xp.where(state.depth[rows] == level, state.sigma[rows] * sums,
                                     state.delta[rows])  # fmt: skip
        return members

    def converged(self, graph, frontier, state, iteration):
        return self.options["deepest"] - 1 - iteration < 1  # level 0 holds the sources

    def prepare(self, graph):
        super().prepare(graph)
        lanes.prepare(graph, "out", np.float64)  # a dense level's dependencies


def _prepare(graph) -> None:
    """What betweenness builds, one source at a time or batched, and up front what the
    products of its heavy levels over every list build lazily."""
    for primitive in (Forward(), Backward(deepest=1), BatchedForward(lanes=2),
                      BatchedBackward(lanes=2, deepest=1)):  # fmt: skip
        primitive.prepare(graph)
    prepare_reduction(graph, "in")
    prepare_reduction(graph, "out")


register_preparation("bc", _prepare)


def _at_depth(graph, state, depth: int):
    """The vertices at ``depth`` (the source is at 0), in id order."""
    return fr.Frontier.from_mask(graph, state.depth == depth)


def betweenness_centrality(
    graph,
    sources: Sequence[int] | None = None,
    *,
    k: int | None = None,
    seed=None,
    batch: int | None = None,
    normalized: bool = True,
    endpoints: bool = False,
    **run,
) -> BCResult:
    """Betweenness centrality of every vertex, as ``networkx.betweenness_centrality`` (unweighted).

    Brandes' algorithm over batches of ``batch`` sources: :class:`BatchedForward` counts
    shortest paths level by level (``sigma``) from every source of the batch at once,
    :class:`BatchedBackward` accumulates dependencies from the deepest level up (``delta``),
    one sparse product a level for the whole batch (LAGraph's and GraphBLAST's formulation),
    and the dependencies are summed over the sources. With ``batch=1``, one source at a time
    (:class:`Forward`, :class:`Backward`: fused kernels and push or pull per level). The sums
    are rescaled as networkx rescales them, ``sources`` (or a sample of ``k``) as networkx's
    sample of ``k = len(sources)`` sources.

    Parameters
    ----------
    graph : Graph
    sources : sequence of int, optional
        Distinct source vertices; None (default) means every vertex (or a sample of ``k``).
    k : int, optional
        networkx's ``k``: ``k`` sources sampled as networkx samples them for ``seed``
        (``seed.sample(list(G), k)``), so that the answer is networkx's for the same ``seed``.
    seed : int, random.Random or None
        networkx's ``seed`` for the sample (None: the ``random`` module's state).
    batch : int, optional
        Sources per batched run (default: as many as fit, up to 1024); 1: one at a time.
    normalized : bool
        Divide by the number of (source, target) pairs, else only halve on undirected graphs.
    endpoints : bool
        Count the endpoints of each shortest path as on it.
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``: see :func:`enact`.

    Returns
    -------
    BCResult
        ``centrality`` (float64) and ``stats`` summed over both phases of every batch.

    Raises
    ------
    ValueError
        ``sources`` is not a sequence (an int: networkx's k is ``k=``), is empty, repeats a
        vertex or holds an id that is not a vertex; both ``sources`` and ``k``; ``k`` out of
        ``[1, num_vertices]``; ``batch`` below 1.
    PathCountOverflow
        A source has more shortest paths to some vertex than float64 holds (large grids).
    """
    n, where = graph.num_vertices, "betweenness_centrality"
    if sources is not None and k is not None:
        raise ValueError(f"{where}: expected sources= or k=, not both")
    if k is not None:
        sources = sampled_sources(graph, k, seed, where)
        if not sources:
            raise ValueError(f"{where}(k=0): expected at least one source")
    elif sources is None:
        sources = range(n)
    else:
        sources = checked_sources(graph, sources, where)
        if not sources:
            raise ValueError(f"{where}(sources=[]): expected at least one source")
    on_device = run.pop("result_device", False)
    target = backend_for(run.get("backend"), graph)
    width = batch_width(target, graph, len(sources), batch, where)
    accumulate = _one_by_one if width == 1 else _batched
    with target.activate():  # (CuPy: the sums over lanes on its plain reduction kernels)
        total, runs = accumulate(graph, sources, width, endpoints, run)
    if total is None:
        centrality = np.zeros(n)
        return BCResult(target.asarray(centrality) if on_device else centrality,
                        Stats.combine(runs))  # fmt: skip
    k = None if len(sources) == n else len(sources)
    centrality = _rescale(
        total, n, k, sources, normalized=normalized, directed=graph.directed, endpoints=endpoints
    )  # on the device: one copy of the result to the host, unless asked to stay
    return BCResult(centrality if on_device else to_host(centrality), Stats.combine(runs))


def _one_by_one(graph, sources, width, endpoints, run):
    """The dependencies summed over ``sources``, one source at a time."""
    total, runs = None, []
    for source in sources:  # one device: the phases hand over and add up on it
        forward, forward_stats = enact(Forward(), graph, source=source, result_device=True, **run)
        reached = forward["depth"] >= 0
        _check_counts(forward, [source])
        deepest = int(forward["depth"].max())
        backward, backward_stats = enact(Backward(deepest=deepest), graph, depth=forward["depth"],
                                         sigma=forward["sigma"], result_device=True, **run)  # fmt: skip
        runs += [forward_stats, backward_stats]
        dependency = backward["delta"] + (1 if endpoints else 0)
        dependency[~reached] = 0
        dependency[source] = backend_of(reached).count(reached) - 1 if endpoints else 0
        total = dependency if total is None else total + dependency
    return total, runs


def _batched(graph, sources, width, endpoints, run):
    """The dependencies summed over ``sources``, ``width`` sources a run."""
    total, runs = None, []
    for batch in batches(sources, width):
        forward, forward_stats = enact(BatchedForward(lanes=len(batch)), graph, sources=batch,
                                       result_device=True, **run)  # fmt: skip
        depth = forward["depth"]
        _check_counts(forward, batch)
        deepest = int(depth.max())
        backward, backward_stats = enact(BatchedBackward(lanes=len(batch), deepest=deepest),
                                         graph, depth=depth, sigma=forward["sigma"],
                                         result_device=True, **run)  # fmt: skip
        runs += [forward_stats, backward_stats]
        dependency = backward["delta"].sum(axis=1)  # 0 at unreached vertices and the sources
        if endpoints:  # each reached target, and each source for its targets
            xp = backend_of(depth).xp
            dependency += (depth > 0).sum(axis=1)
            picked = backend_of(depth).asarray(batch)
            dependency[picked] += (depth >= 0).sum(axis=0)[xp.arange(len(batch))] - 1
        total = dependency if total is None else total + dependency
    return total, runs


def _check_counts(forward: dict, sources: list[int]) -> None:
    """PathCountOverflow when a shortest-path count is infinite (past float64's 1.8e308, as
    from a corner of a 600 x 600 grid): every dependency would be NaN. ``forward``'s arrays
    are one value a vertex (one source) or rows of a lane per source."""
    sigma = forward["sigma"]
    overflow = backend_of(sigma).xp.isinf(sigma)
    if bool(backend_of(sigma).any(overflow)):
        first = int(backend_of(sigma).xp.flatnonzero(overflow)[0])
        vertex, lane = divmod(first, len(sources)) if sigma.ndim > 1 else (first, 0)
        depth = forward["depth"][vertex] if sigma.ndim == 1 else forward["depth"][vertex, lane]
        raise PathCountOverflow(
            f"betweenness_centrality: from source {sources[lane]}, vertex {vertex} (depth "
            f"{int(depth)}) has more shortest paths than float64 holds "
            "(1.8e308); its dependencies would be NaN"
        )


def _rescale(centrality, n, k, sources, *, normalized, directed, endpoints):
    """networkx's ``_rescale``: divide by the (source, target) pairs counted, per source sample."""
    pairs = n if endpoints else n - 1  # the targets each source could count (networkx's N)
    if pairs < 2:
        return centrality

    def scale(k):  # a source sample of size k
        return 1 / (k * (pairs - 1)) if normalized else pairs / (k * (1 if directed else 2))

    if k is None or endpoints:
        return centrality * scale(pairs if k is None else k)
    out = centrality * scale(k)  # a sampled source never counts itself as a target
    picked = backend_of(centrality).asarray(list(sources))
    out[picked] = centrality[picked] * scale(k - 1) if k > 1 else np.nan
    return out
