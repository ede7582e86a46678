"""Frontier sets: union of sparse and dense parts; what a producer counted travels along."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import bspgraph as bg
from bspgraph import frontier as fr

N = 200
parts = st.lists(
    st.tuples(st.sets(st.integers(0, N - 1), max_size=N), st.booleans()), min_size=0, max_size=4
)


@given(parts)
def test_union_is_the_set_union_for_any_mix_of_ids_and_masks(members):
    graph = bg.Graph.from_edges([0], [1], num_vertices=N, backend="numpy")
    frontiers = []
    for ids, dense in members:
        ids = np.array(sorted(ids), dtype=np.int64)
        if dense:
            mask = np.zeros(N, dtype=bool)
            mask[ids] = True
            frontiers.append(fr.Frontier.from_mask(graph, mask))
        else:
            frontiers.append(fr.Frontier.from_ids(graph, np.random.default_rng(0).permutation(ids)))
    union = fr.Frontier.union(graph, *frontiers)
    expected = sorted(set().union(*(ids for ids, _ in members)))
    assert sorted(union.ids.tolist()) == expected
    assert len(union) == len(expected)
    for f, (ids, _) in zip(frontiers, members):  # the parts are left as they were
        assert sorted(f.ids.tolist()) == sorted(ids)


def test_out_edges_travel_with_the_frontier_and_spare_the_count():
    graph = bg.Graph.from_edges([0, 0, 1], [1, 2, 2], num_vertices=3, backend="numpy")
    counted = fr.Frontier.from_ids(graph, [0], out_edges=7)  # a producer's (wrong) count is used
    assert counted.out_edges == 7 and fr.Frontier.from_ids(graph, [0]).out_edges is None
    assert fr.count_out_edges(graph, counted) == 7
    assert fr.count_out_edges(graph, fr.Frontier.from_ids(graph, [0, 1])) == 3
    mask = np.array([True, True, False])
    assert fr.count_out_edges(graph, fr.Frontier.from_mask(graph, mask)) == 3


def test_level_limits_widen_only_where_every_list_is_short():
    """A repeated advance takes wide frontiers on a graph of short lists, at most
    num_edges / ALPHA out-edges (levels that a BFS would push anyway), never narrower than
    the default; one hub keeps the default limits."""
    from bspgraph.frontier.advance import ALPHA
    from bspgraph.frontier.kernels import LEVEL_EDGES, LEVEL_VERTICES, WIDE_LEVELS, level_limits

    grid = bg.generators.grid(1000, 1000, backend="numpy")  # 3,996,000 edges, degree <= 4
    assert level_limits(grid) == (WIDE_LEVELS[0], grid.num_edges // ALPHA)
    small = bg.generators.grid(100, 100, backend="numpy")
    assert level_limits(small) == (WIDE_LEVELS[0], LEVEL_EDGES)
    star = bg.Graph.from_edges(np.zeros(40, int), np.arange(1, 41), backend="numpy")
    assert level_limits(star) == (LEVEL_VERTICES, LEVEL_EDGES)
