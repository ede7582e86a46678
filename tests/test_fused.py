"""The registry of fused kernels: lookups by (functor, backend, direction), hits and misses."""

import numpy as np
import pytest

import bspgraph as bg
from bspgraph import frontier as fr
from bspgraph.backend import fused
from bspgraph.frontier import host
from bspgraph.graph.context import RunContext


def test_a_numpy_kernel_is_found_by_name_or_by_functor_and_backend():
    numpy = bg.get_backend("numpy")
    assert fused.lookup("visit_unvisited", "numpy", "push") is host.visit_push
    functor = fr.functors.visit_unvisited(np.zeros(3, dtype=np.int32), 1)
    assert fused.lookup(functor, numpy, "pull") is host.visit_pull
    assert fused.lookup("relax_min", "numpy", "pull") is fused.lookup("relax_min", "cupy", "pull")


@pytest.mark.parametrize(
    "key",
    [
        ("visit_unvisited", "jax", "push"),  # an unknown backend
        ("no_such_functor", "numpy", "push"),
        ("relax_min", "numpy", "step"),  # a functor's kernels push, pull or repeat
        ("count_paths", "numpy", "push"),  # betweenness's kernel: CuPy only
    ],
)
def test_a_missing_kernel_is_none(key):
    assert fused.lookup(*key) is None


def test_the_kernels_of_one_algorithm_register_beside_it():
    """CC's link, TC's close_wedges, BC's count_paths, PageRank's damped_update: registered
    by their primitives' modules, each for the backends it has."""
    keys = set(fused.registered())
    for key in [
        ("link", "numpy", "step"),
        ("link", "cupy", "step"),
        ("link_pairs", "numpy", "step"),
        ("link_pairs", "cupy", "step"),
        ("link_replaced", "numpy", "step"),
        ("link_replaced", "cupy", "step"),
        ("close_wedges", "numpy", "step"),
        ("close_wedges", "cupy", "step"),
        ("count_paths", "cupy", "push"),
        ("damped_update", "cupy", "step"),
        ("damped_update", "numpy", "step"),
        ("damped_update", "numpy", "pull"),
        ("visit_unvisited", "cupy", "repeat"),
        ("relax_min", "cupy", "repeat"),
        ("relax_min", "numpy", "repeat"),
    ]:
        assert key in keys
        assert fused.lookup(*key).__module__.startswith(
            "bspgraph.primitives."
            if key[0]
            in (
                "link",
                "link_pairs",
                "link_replaced",
                "close_wedges",
                "count_paths",
                "damped_update",
            )
            else "bspgraph.frontier."
        )


def test_registering_and_errors():
    def kernel(graph, ids):
        return None

    key = ("test_functor", "numpy", "push")
    try:
        assert fused.register("test_functor", ("numpy",), "push")(kernel) is kernel
        assert fused.lookup(*key) is kernel
        fused.register("test_functor", "numpy", "push")(kernel)  # again: the same kernel

        def other(graph, ids):
            return None

        with pytest.raises(ValueError, match="registered already"):
            fused.register("test_functor", "numpy", "push")(other)
    finally:
        fused.REGISTRY.pop(key, None)
    with pytest.raises(ValueError, match=r"direction='sideways'.*expected one of"):
        fused.lookup("visit_unvisited", "numpy", "sideways")
    with pytest.raises(ValueError, match="direction='up'"):
        fused.register("x", "numpy", "up")


def test_a_functor_without_a_kernel_takes_the_generic_path():
    """count_paths has no NumPy kernel: fused_push says so (None) and advance calls it per
    edge, with the answer networkx's path counts give."""
    from bspgraph.primitives._bc_kernels import count_paths

    graph = bg.Graph.from_edges([0, 0, 1, 2], [1, 2, 3, 3], num_vertices=4, backend="numpy")
    depth = np.array([0, 1, 1, 9], dtype=np.int32)
    sigma = np.array([1.0, 1.0, 1.0, 0.0])
    functor = count_paths(depth, sigma, 2, graph.backend)
    frontier = fr.Frontier.from_ids(graph, [1, 2])
    assert functor.fused_push(graph, frontier.ids, frontier.out_edges) is None
    out = fr.advance(graph, frontier, functor, unique=True, direction="push")
    assert out.ids.tolist() == [3] and sigma[3] == 2.0 and depth[3] == 2


def test_link_without_a_kernel_for_the_backend_says_so(monkeypatch):
    graph = bg.Graph.from_edges([0], [1], num_vertices=2, backend="numpy")
    monkeypatch.delitem(fused.REGISTRY, ("link", "numpy", "step"))
    monkeypatch.delitem(fused.REGISTRY, ("link_pairs", "numpy", "step"))
    monkeypatch.delitem(fused.REGISTRY, ("link_replaced", "numpy", "step"))
    with pytest.raises(ValueError, match="no union-find kernel registered for backend 'numpy'"):
        fr.link(graph, np.arange(2))
    with pytest.raises(ValueError, match=r"link_pairs: no union-find kernel .* 'numpy'"):
        fr.link_pairs(graph, np.arange(2), np.array([0]), np.array([1]))
    graph.context = RunContext(parts=2)  # (a device of two: a combine ran)
    with pytest.raises(ValueError, match=r"link_replaced: no union-find kernel .* 'numpy'"):
        fr.link_replaced(graph, np.arange(2), np.arange(2), fr.Frontier.all(graph))
