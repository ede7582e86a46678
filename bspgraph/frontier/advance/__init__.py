"""The advance operator: from a frontier along edges to a new frontier; push or pull by cost."""

from __future__ import annotations

from typing import Literal

from ...backend import ops
from ..frontier import Frontier
from ..operators import largest_degree, owned_range
from . import pull, push

DIRECTIONS = ("auto", "push", "pull")
ALPHA = 14  # Beamer: pull once the frontier's out-edges exceed the candidates' in-edges / ALPHA
# The same for a GPU pull without early exit (whole in-lists streamed, no atomics): an estimate;
# on rmat24 it turns SSSP's two heaviest supersteps to pulls (31 -> 22 ms on an H200).
SCAN_ALPHA = 4
HOST_ALPHA = 2  # where a pull scans whole in-lists at about push's cost per edge (NumPy)
BETA = 64  # ... considered only while the frontier's out-edges exceed num_edges / BETA
# After an early-exit pull, Beamer's (and GAPBS's) rule by the frontier's size alone: pull
# again while the frontier grows or holds more than num_vertices / BACK_BETA vertices (no pass
# over the candidates to count their in-edges). GAPBS's beta.
BACK_BETA = 18


def advance(
    graph,
    frontier: Frontier,
    op,
    *,
    direction: Literal["auto", "push", "pull"] = "auto",
    candidates=None,
    unique: bool = False,
    early_exit: bool | None = None,
    output: Literal["vertices", "none"] = "vertices",
    repeat: bool = False,
) -> Frontier:
    """Visit the edges leaving ``frontier``; return the frontier of destinations ``op`` keeps.

    ``op(src, dst, eid, weight) -> keep-mask`` (None: keep all; False: none) runs on whole arrays,
    possibly in several chunks. Push expands the frontier's out-edges; pull makes each vertex of
    ``candidates`` (a bool mask of the vertices whose state may still change, a function
    returning one, called only when pull is considered, "all": every vertex, whose in-edges
    the cost model counts without a pass, or "functor": those of ``op.candidates(graph)``,
    which a fused pull tests itself, with no mask) scan its in-edges for frontier members.
    ``direction="auto"`` picks pull by Beamer's cost model when ``candidates`` is given and
    the frontier's out-edges exceed ``num_edges / BETA`` (a functor whose pull is a product,
    ``op.pull_is_product``, is then pulled without the test); after an early-exit pull it
    pulls again by the frontier's size alone (:func:`stays_pulled`). It never pulls from a
    ``partial`` frontier (one device's share of the run's: the other members are elsewhere).
    A visit-once functor (``op.visits_once``: BFS's) keeps count of the edges its traversal
    has advanced along (``Frontier.edges_before``): on an undirected graph its candidates'
    in-edges are the rest, and the test makes no pass over them.
    Pull stops a candidate at its first kept edge when ``early_exit``
    (default: ``op.early_exit``, else False), and always returns distinct vertices; push returns
    distinct vertices when ``unique`` (advance and filter fused). With ``output="none"`` the
    functor runs only for its side effects and the result is empty (Gunrock's output type
    none). Advance keeps self-loops. With ``repeat`` (a pushed functor with a
    ``fused_repeat``: ``visit_unvisited`` on CuPy or with numba, ``relax_min`` on CuPy) a small
    frontier may be advanced again from its own output, level after level, in one call; the
    frontier returned is the last level's, with the sizes of those before it in ``passed``
    (each a superstep to the caller). On a part of a graph among several only a
    label-correcting functor repeats (``relax_min``, also on NumPy there), and returns every
    vertex its levels changed: the levels of a part's own region in one superstep.

    Raises
    ------
    ValueError
        An unknown ``direction``, ``direction="pull"`` without ``candidates`` or from a
        ``partial`` frontier, ``candidates`` a string other than "all" and "functor", or
        "functor" for a functor without ``candidates``.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"advance(direction={direction!r}): expected one of {DIRECTIONS}")
    if output not in ("vertices", "none"):
        raise ValueError(f"advance(output={output!r}): expected 'vertices' or 'none'")
    if output == "none":
        op = _Discard(op)
    if direction == "pull" and candidates is None:
        raise ValueError("advance(direction='pull'): pull needs candidates (a bool mask)")
    graph.context.arrivals.wait()  # (a functor may read the others' values through the lists)
    if direction == "pull" and frontier.partial:
        raise ValueError(
            "advance(direction='pull'): the frontier is this device's share of the run's "
            "only; a primitive that pulls declares needs_all, so that every device sees it all"
        )
    if isinstance(candidates, str) and candidates not in ("all", "functor"):
        raise ValueError(
            f"advance(candidates={candidates!r}): expected a bool mask, a "
            "function returning one, 'all' or 'functor'"
        )
    functor = isinstance(candidates, str) and candidates == "functor"
    if functor and not hasattr(op, "candidates"):
        raise ValueError(
            f"advance(candidates='functor'): {type(op).__name__} has no candidates(graph)"
        )
    traced = direction == "auto" and getattr(op, "visits_once", False)  # its edges counted
    exit_first = getattr(op, "early_exit", False) if early_exit is None else early_exit
    if frontier.partial:
        direction = "push"
    if direction == "auto" and candidates is not None and exit_first and frontier.pulled_from:
        direction = "pull" if stays_pulled(graph, frontier) else "push"
    frontier_edges = None
    if direction == "auto" and (candidates is None or _surely_light(graph, frontier)):
        direction = "push"  # a light frontier: pull would scan most in-edges for nothing
    if direction == "auto":
        frontier_edges = count_out_edges(graph, frontier)
        if frontier_edges * BETA < graph.cost_degrees()[2]:
            direction = "push"
        elif getattr(op, "pull_is_product", False):
            direction = "pull"  # a product over the fewer edges: never dearer than a push
    unvisited = _unvisited_edges(graph, frontier, op) if direction == "auto" else None
    if unvisited is not None:  # counted: no pass over the candidates
        direction = choose_direction(
            graph, frontier, candidates, frontier_edges, exit_first, unvisited
        )
    if direction != "push" and callable(candidates):
        candidates = candidates()
    if direction == "auto":
        if functor:  # the test counts their in-edges: the mask, once
            candidates = op.candidates(graph)
        direction = choose_direction(graph, frontier, candidates, frontier_edges, exit_first)
    if direction == "pull":
        result = pull.run(graph, frontier, op, candidates=candidates, early_exit=exit_first)
        result.owned_only = owned_range(graph) is not None  # (in-lists in its rows only)
        if exit_first:  # on several devices the enactor keeps it only where all pulled alike
            result.pulled_from = len(frontier)
    else:
        result = _repeated(graph, frontier, op) if repeat else None
        if result is None:  # no kernel, or too large a frontier to start
            result = push.run(graph, frontier, op, unique=unique)
    if output == "none":
        return Frontier.empty(graph)
    if traced:
        result.edges_before = _edges_through(graph, frontier, result)
    return result


def _surely_light(graph, frontier: Frontier) -> bool:
    """Whether ``frontier`` holds fewer than num_edges / BETA out-edges by its size times the
    longest out-list: light without counting them (a mesh's or a road's small frontiers: no
    pass over the ids, on a GPU no host read)."""
    if not frontier.size_known:
        return False
    return len(frontier) * largest_degree(graph) * BETA < graph.cost_degrees()[2]


def _unvisited_edges(graph, frontier: Frontier, op) -> int | None:
    """The in-edges of a visit-once functor's candidates, on an undirected graph whose
    traversal has kept count: every edge but those of the vertices its frontiers held (this
    one's and ``edges_before``); else None."""
    if not getattr(op, "visits_once", False):
        return None
    return _edges_left(graph, frontier, count_out_edges(graph, frontier))


def _edges_left(graph, frontier: Frontier, frontier_edges: int) -> int | None:
    """The edges of an undirected graph that a traversal which kept count (``edges_before``)
    has not advanced along, ``frontier``'s ``frontier_edges`` out-edges counted as left; None
    where it did not count or the graph is directed."""
    if graph.directed or frontier.edges_before is None:
        return None
    return graph.cost_degrees()[2] - frontier.edges_before - frontier_edges


def _edges_through(graph, frontier: Frontier, result: Frontier) -> int | None:
    """``result``'s ``edges_before``: ``frontier``'s, its out-edges and those of the levels a
    repeated advance passed through (None where one is not counted)."""
    if frontier.edges_before is None or result.passed_edges is None:
        return None
    return frontier.edges_before + count_out_edges(graph, frontier) + sum(result.passed_edges)


def _repeated(graph, frontier: Frontier, op) -> Frontier | None:
    """``op``'s levels from ``frontier`` in one call (:meth:`Functor.fused_repeat`): on one
    device, the last level's frontier; on a part among several, only for a label-correcting
    functor on a part that keeps most of its edges inside (RUN_AHEAD_SHARE), every vertex the
    levels changed (all of them travel; those owned here are relaxed from again next
    superstep, which finds the ones already final unchanged). None where it does not apply."""
    repeated = getattr(op, "fused_repeat", None)
    if repeated is None:
        return None
    if graph.context.global_view:
        return repeated(graph, frontier)
    if not getattr(op, "label_correcting", False) or _inside_share(graph) < RUN_AHEAD_SHARE:
        return None
    return repeated(graph, frontier, every_level=True)


RUN_AHEAD_SHARE = 0.9  # a part's levels run ahead where this share of its edges stays inside it
SHARE_CHUNK = 1 << 24  # edges counted at a time (a bool each): no part-sized temporary


def _inside_share(graph) -> float:
    """The share of this part's edges whose two ends it owns (once per part): where most
    leave it (a random cut), levels that run ahead die within a few levels, and what they
    changed is advanced from again in the next superstep; where most stay (a road network
    cut into regions), a superstep covers a region."""

    def share():
        indices, owned = graph.indices, graph.context.owned
        inside = sum(
            int(graph.backend.count(owned[indices[at : at + SHARE_CHUNK]]))
            for at in range(0, indices.shape[0], SHARE_CHUNK)
        )
        return inside / max(indices.shape[0], 1)

    return graph.cached(("inside share",), share)


class _Discard:
    """``op`` with its output dropped: the generic call keeps nothing, so no frontier of every
    edge is built; a fused kernel, if ``op`` has one, still runs (its output is dropped)."""

    def __init__(self, op):
        self.op = op

    def __call__(self, src, dst, eid, weight):
        self.op(src, dst, eid, weight)
        return False

    def __getattr__(self, name):  # name, early_exit, fused_push, fused_pull
        return getattr(self.op, name)


def many_out_edges(graph, frontier: Frontier) -> bool:
    """Whether ``frontier``'s out-edges are many, num_edges / BETA or more (the share from
    which advance considers a pull): then a sparse product over the level beats a functor
    called on each edge."""
    return count_out_edges(graph, frontier) * BETA >= graph.cost_degrees()[2]


def count_out_edges(graph, frontier: Frontier) -> int:
    """The out-edges of ``frontier`` in the whole graph (``cost_degrees``: the same count on
    every device): its producer's count when it made one, else a sum over its ids or mask,
    kept as the frontier's ``out_edges`` for later readers (the enactor's message choice)."""
    if frontier.out_edges is None:
        out_degree = graph.cost_degrees()[0]
        if frontier.is_dense:  # after a pull: no ids needed
            frontier.out_edges = ops.masked_sum(graph.backend, out_degree, frontier.mask)
        else:
            frontier.out_edges = ops.sum_at(graph.backend, out_degree, frontier.ids)
    return frontier.out_edges


def stays_pulled(graph, frontier: Frontier) -> bool:
    """Beamer's rule after an early-exit pull: pull again while the frontier grows (it holds
    at least ``frontier.pulled_from`` vertices) or holds more than num_vertices / BACK_BETA."""
    size = len(frontier)
    return size >= frontier.pulled_from or size * BACK_BETA > graph.num_vertices


def pulls_early(graph, frontier: Frontier, frontier_edges: int | None) -> bool:
    """Whether an auto advance of a visit-once functor (a BFS's) pulls from ``frontier`` (of
    ``frontier_edges`` out-edges, None: not counted), by what the frontier carries, where the
    backend's pull stops a candidate at its first frontier in-neighbour (not
    ``scans_whole_lists``): such a pull costs about a pass over the vertices, whatever the
    frontier. After an early-exit pull, :func:`stays_pulled`; after a traversal that kept
    count (``edges_before``), Beamer's test against the edges it has not advanced along; else
    False (what the functor is, the frontier does not say)."""
    if graph.backend.capabilities.scans_whole_lists:
        return False
    if frontier.pulled_from:
        return stays_pulled(graph, frontier)
    if frontier_edges is None or frontier_edges * BETA < graph.cost_degrees()[2]:
        return False
    unvisited = _edges_left(graph, frontier, frontier_edges)
    return unvisited is not None and (
        choose_direction(graph, frontier, None, frontier_edges, True, unvisited) == "pull"
    )


def choose_direction(
    graph,
    frontier: Frontier,
    candidates,
    frontier_edges=None,
    early_exit: bool = True,
    candidate_edges: int | None = None,
) -> str:
    """Beamer's rule: "pull" when the frontier's out-edges exceed the candidates' (a bool mask,
    or "all") in-edges / alpha (ALPHA on the GPU, SCAN_ALPHA for a pull without early exit,
    HOST_ALPHA where the backend's pull scans whole lists: ``Capabilities.scans_whole_lists``);
    ``candidate_edges``: those in-edges, where counted already (no pass over them)."""
    if frontier_edges is None:
        frontier_edges = count_out_edges(graph, frontier)
    if candidate_edges is None and isinstance(candidates, str):  # "all": every in-edge
        candidate_edges = graph.cost_degrees()[2]
    elif candidate_edges is None:
        candidate_edges = ops.masked_sum(graph.backend, graph.cost_degrees()[1], candidates)
    if graph.backend.capabilities.scans_whole_lists:  # early exit saves nothing
        alpha = HOST_ALPHA
    else:
        alpha = ALPHA if early_exit else SCAN_ALPHA
    return "pull" if frontier_edges * alpha > candidate_edges else "push"
