"""The ``bspgraph`` networkx backend: ``nx.pagerank(G, backend="bspgraph")``.

networkx finds :class:`BackendInterface` through the ``networkx.backends`` entry point (and the
function list through ``networkx.backend_info`` -> ``_nx_bspgraph:get_info``), converts its
graph arguments with :meth:`BackendInterface.convert_from_nx` (cached on the graph), and calls
the function of the same name; see docs/networkx-backend.md.
"""

from __future__ import annotations

import inspect
import sys

from . import algorithms, centrality, paths, traversal  # noqa: F401 (they register their functions)
from .graph import NxGraph, from_networkx, to_networkx

# networkx's tests of behaviour networkx documents as unspecified, where bspgraph differs
DIFFERENT_BY_DESIGN = {
    ("test_strongly_connected", "test_condensation_mapping_and_members"): (
        "strongly connected components come in the order of their least node, not Tarjan's "
        "(networkx promises no order); the test expects condensation's numbering by Tarjan's"
    ),
}


class BackendInterface:
    """What networkx's dispatcher calls: conversions, ``can_run``, and one attribute per
    implemented function (networkx's name and signature; see :mod:`bspgraph.nx.algorithms`)."""

    @staticmethod
    def convert_from_nx(
        G,
        edge_attrs=None,
        node_attrs=None,
        preserve_edge_attrs=False,
        preserve_node_attrs=False,
        preserve_graph_attrs=False,
        name=None,
        graph_name=None,
    ):
        """A networkx graph as a bspgraph backend graph (:class:`~bspgraph.nx.graph.NxGraph`).

        Nodes are numbered ``0..n-1`` in the graph's node order and mapped back in results.
        ``edge_attrs`` (``{name: default}``) are the edge attributes the call needs, such as
        ``{"weight": 1}`` for ``pagerank``; ``preserve_edge_attrs=True`` keeps every numeric
        one, ``node_attrs``/``preserve_node_attrs`` and ``preserve_graph_attrs`` keep node and
        graph data for :meth:`convert_to_nx`. ``name`` (the function) and ``graph_name`` (the
        argument) are not used: one conversion serves every function.

        Raises
        ------
        NotImplementedError
            An edge attribute to convert holds non-numbers (networkx then tries the next
            backend, or itself with ``fallback_to_nx``).
        """
        return from_networkx(
            G,
            edge_attrs=edge_attrs,
            node_attrs=node_attrs,
            preserve_edge_attrs=preserve_edge_attrs,
            preserve_node_attrs=preserve_node_attrs,
            preserve_graph_attrs=preserve_graph_attrs,
        )

    @staticmethod
    def on_start_tests(items) -> None:
        """Mark networkx's own tests that assert what networkx leaves unspecified and bspgraph
        does otherwise (xfail, with the reason), as nx-cugraph does."""
        import pytest

        for item in items:
            reason = DIFFERENT_BY_DESIGN.get((item.module.__name__.rsplit(".", 1)[-1], item.name))
            if reason is not None:
                item.add_marker(pytest.mark.xfail(reason=reason))

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        """A backend graph as a networkx graph; any other result (already in networkx's
        shape: a dict, a number, a generator of sets) as it is."""
        if isinstance(obj, NxGraph):
            return to_networkx(obj)
        return obj

    @staticmethod
    def can_run(name, args, kwargs):
        """True, or a string saying why bspgraph cannot run ``name`` with these arguments
        (the argument and its value, :func:`~bspgraph.nx.algorithms.refused`).

        networkx keeps that string for its debug log: called with ``backend="bspgraph"`` it
        raises its own NotImplementedError ("... for the given arguments"). Where the call
        named this backend, the refusal is raised here instead, as the same NotImplementedError
        with the reason: ``betweenness_centrality(weight='w') is not served by bspgraph``.
        Through ``backend_priority`` the string goes back, and networkx runs the call itself
        (with ``fallback_to_nx``)."""
        func = algorithms.ALGORITHMS.get(name)
        if func is None:
            return f"bspgraph does not implement {name}"
        try:
            bound = inspect.signature(func).bind(*args, **kwargs)
        except TypeError:
            return True  # let the call raise networkx's TypeError
        reason = func.can_run(bound.arguments)
        if isinstance(reason, str) and _named_backend() == "bspgraph":
            raise NotImplementedError(
                f"'{name}' is not implemented by 'bspgraph' backend for the given arguments: "
                f"{reason}. No other "
                "backends will be attempted, because the backend was specified with the "
                "`backend='bspgraph'` keyword argument."
            )
        return reason

    @staticmethod
    def should_run(name, args, kwargs):
        """Always: converting costs one pass over the graph, as any backend's does."""
        return True


def _named_backend() -> str | None:
    """The ``backend=`` keyword of the networkx call being dispatched (None when it named none,
    or where this networkx keeps it elsewhere): read from the dispatcher's frame
    (``_dispatchable._call_if_any_backends_installed``, networkx 3.3 to 3.6)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_call_if_any_backends_installed":
            return frame.f_locals.get("backend")
        frame = frame.f_back
    return None


for _name, _func in algorithms.ALGORITHMS.items():
    setattr(BackendInterface, _name, staticmethod(_func))
