"""Partitioners: which device owns each vertex (random, biased, edge_balanced, metis).

A partitioner is called as ``partitioner(graph, parts, seed=0)`` and returns ``owner``, a host
int32 array with ``owner[v]`` in ``[0, parts)``; :func:`report` measures the result (balance,
border sizes, edge cut). Pick one by name with :func:`get`.

Examples
--------
>>> import bspgraph as bg
>>> from bspgraph import partitioners
>>> g = bg.generators.grid(4, 4, backend="numpy")
>>> owner = partitioners.get("edge_balanced")(g, 2)
>>> partitioners.report(g, owner, 2).vertices
(8, 8)
"""

from __future__ import annotations

from ..registry import lookup
from .base import Partitioner, PartitionReport, report
from .edge_balanced import EdgeBalanced
from .metis import Metis
from .randomized import BiasedRandom, Random

REGISTRY: dict[str, type[Partitioner]] = {
    "random": Random,
    "biased": BiasedRandom,
    "edge_balanced": EdgeBalanced,
    "metis": Metis,  # needs pymetis: building it without raises ImportError with the pip command
}


def get(name_or_instance: str | Partitioner) -> Partitioner:
    """The partitioner called ``name_or_instance`` (built with its defaults), or the instance.

    Parameters
    ----------
    name_or_instance : str or Partitioner
        A key of :data:`REGISTRY` ("random", "biased", "edge_balanced", "metis"), or an
        instance such as ``BiasedRandom(tolerance=1.05)``.

    Raises
    ------
    ValueError
        An unknown name; the message lists the valid ones.
    ImportError
        "metis" without pymetis installed.
    """
    return lookup(REGISTRY, name_or_instance, Partitioner, "partitioner")


__all__ = [
    "REGISTRY",
    "BiasedRandom",
    "EdgeBalanced",
    "Metis",
    "PartitionReport",
    "Partitioner",
    "Random",
    "get",
    "report",
]
