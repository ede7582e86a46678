"""Betweenness centrality by Brandes: per source, count shortest paths forward, accumulate back."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import frontier as fr
from ..backend import backend_of, get_backend, to_host
from ..enactor import Add, Primitive, State, Stats, enact
from ..exceptions import PathCountOverflow
from ..frontier.advance import BETA
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
        return graph.backend.sum_below(graph.out_degree(), state.depth, unset)


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


def _at_depth(graph, state, depth: int):
    """The vertices at ``depth`` (the source is at 0), in id order."""
    return fr.Frontier.from_mask(graph, state.depth == depth)


def betweenness_centrality(
    graph, sources=None, *, normalized: bool = True, endpoints: bool = False, **run
) -> BCResult:
    """Betweenness centrality of every vertex, as ``networkx.betweenness_centrality`` (unweighted).

    Brandes' algorithm, one source at a time: :class:`Forward` counts shortest paths level by
    level (``sigma``), :class:`Backward` accumulates dependencies from the deepest level up
    (``delta``), and the host sums ``delta`` over the sources. The sums are rescaled as networkx
    rescales them; a list of ``sources`` is treated as networkx's sample of ``k = len(sources)``
    sources (``nx.betweenness_centrality(G, k, seed=...)`` with the same sample).

    Parameters
    ----------
    graph : Graph
    sources : sequence of int, optional
        Distinct source vertices; None (default) means every vertex.
    normalized : bool
        Divide by the number of (source, target) pairs, else only halve on undirected graphs.
    endpoints : bool
        Count the endpoints of each shortest path as on it.
    **run
        ``devices``, ``partitioner``, ``communicator``, ``backend``, ``seed``: see :func:`enact`.

    Returns
    -------
    BCResult
        ``centrality`` (float64) and ``stats`` summed over both phases of every source.

    Raises
    ------
    ValueError
        ``sources`` is not a sequence (an int: networkx's k is a count), is empty, repeats a
        vertex, or holds an id that is not a vertex.
    PathCountOverflow
        A source has more shortest paths to some vertex than float64 holds (large grids).
    """
    n = graph.num_vertices
    if sources is None:
        sources = range(n)
    else:
        where = "betweenness_centrality"
        if isinstance(sources, (int, np.integer)) or np.ndim(sources) > 1:  # (networkx's k)
            raise ValueError(
                f"{where}(sources={sources!r}): expected a sequence of vertex ids (for "
                "networkx's k, pass k sampled vertices, e.g. rng.choice(n, k, replace=False))"
            )
        sources = [graph.check_vertex(s, name="sources", where=where) for s in sources]
        if not sources or len(set(sources)) != len(sources):
            raise ValueError(
                f"{where}(sources={sources!r}): expected distinct vertices, at least one"
            )
    on_device = run.pop("result_device", False)
    total, runs = None, []
    for source in sources:  # one device: the phases hand over and add up on it
        forward, forward_stats = enact(Forward(), graph, source=source, result_device=True, **run)
        reached = forward["depth"] >= 0
        _check_counts(forward, source)
        deepest = int(forward["depth"].max())
        backward, backward_stats = enact(Backward(deepest=deepest), graph, depth=forward["depth"],
                                         sigma=forward["sigma"], result_device=True, **run)  # fmt: skip
        runs += [forward_stats, backward_stats]
        dependency = backward["delta"] + (1 if endpoints else 0)
        dependency[~reached] = 0
        dependency[source] = reached.sum() - 1 if endpoints else 0
        total = dependency if total is None else total + dependency
    if total is None:
        centrality = np.zeros(n)
        return BCResult(get_backend(run.get("backend")).asarray(centrality) if on_device
                        else centrality, Stats.combine(runs))  # fmt: skip
    k = None if len(sources) == n else len(sources)
    centrality = _rescale(
        total, n, k, sources, normalized=normalized, directed=graph.directed, endpoints=endpoints
    )  # on the device: one copy of the result to the host, unless asked to stay
    return BCResult(centrality if on_device else to_host(centrality), Stats.combine(runs))


def _check_counts(forward: dict, source: int) -> None:
    """PathCountOverflow when a shortest-path count is infinite (past float64's 1.8e308, as
    from a corner of a 600 x 600 grid): every dependency would be NaN."""
    sigma = forward["sigma"]
    overflow = backend_of(sigma).xp.isinf(sigma)
    if bool(overflow.any()):
        vertex = int(backend_of(sigma).xp.flatnonzero(overflow)[0])
        raise PathCountOverflow(
            f"betweenness_centrality: from source {source}, vertex {vertex} (depth "
            f"{int(forward['depth'][vertex])}) has more shortest paths than float64 holds "
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
