"""The filter and compute operators."""

from __future__ import annotations

from .frontier import Frontier


def filter(graph, frontier: Frontier, pred) -> Frontier:  # noqa: A001 (Gunrock's name; call as fr.filter)
    """The members ``v`` of ``frontier`` for which ``pred(ids)`` is True (a vectorised predicate)."""
    ids = frontier.ids
    return Frontier.from_ids(graph, ids[pred(ids)]) if ids.size else frontier


def compute(graph, frontier: Frontier | str, fn) -> None:
    """Call ``fn(ids)`` once on the vertex ids of ``frontier`` ("vertices": all that ``graph``
    owns, which is every vertex on one device)."""
    if isinstance(frontier, str):
        if frontier != "vertices":
            raise ValueError(f"compute({frontier!r}): expected a Frontier or 'vertices'")
        fn(graph.owned_ids())
    else:
        fn(frontier.ids)
