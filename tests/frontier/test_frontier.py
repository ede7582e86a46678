"""Frontier sets: union of sparse and dense parts; what a producer counted travels along."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bspgraph as bg
from bspgraph import frontier as fr
from bspgraph.exceptions import FrontierError

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


class Counts:
    """Counts left on a device: read once, through ``tolist`` (as a CuPy array's ``get``)."""

    def __init__(self, *values):
        self.values, self.reads = list(values), 0

    def ravel(self):
        return self

    def tolist(self):
        self.reads += 1
        return self.values


def test_a_count_left_on_the_device_is_read_once_when_first_asked_for():
    graph = bg.Graph.from_edges([0, 0, 1], [1, 2, 2], num_vertices=10, backend="numpy")
    out = np.array([5, 2, 9, 7, 7], dtype=np.int32)  # a kernel's list: its first 3 are set
    counts = Counts(3, 17)
    listed = fr.Frontier.listed(graph, out, counts)
    assert counts.reads == 0 and not listed.is_dense
    assert listed.ids.tolist() == [5, 2, 9] and len(listed) == 3 and listed.out_edges == 17
    assert np.flatnonzero(listed.mask).tolist() == [2, 5, 9] and counts.reads == 1
    set_first = fr.Frontier.listed(graph, out, Counts(2, 4))
    set_first.out_edges = 11  # (what the enactor's tally knows) after the producer's count
    assert set_first.ids.tolist() == [5, 2] and set_first.out_edges == 11
    mask = np.zeros(10, dtype=bool)
    mask[[1, 4, 6]] = True  # 2 members known (size 2, 5 out-edges), one more counted
    counts = Counts(1, 3)
    marked = fr.Frontier.from_mask(graph, mask, counted=(counts, 2, 5))
    assert marked.is_dense and counts.reads == 0
    assert len(marked) == 3 and marked.out_edges == 8 and counts.reads == 1
    unknown = fr.Frontier.from_mask(graph, mask, counted=(Counts(1, 3), 2, None))
    assert unknown.out_edges is None and len(unknown) == 3


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


def test_a_hub_s_frontier_goes_the_usual_way_not_through_the_levels_kernel():
    """A levels kernel reads a row with one warp: a frontier whose rows average more than
    LONG_ROWS out-edges (a hub's) is not taken on, one of short rows is, up to the limits;
    an uncounted one never is."""
    from bspgraph.frontier import Frontier
    from bspgraph.frontier.kernels import LONG_ROWS, startable

    leaves = 2 * LONG_ROWS
    src = np.concatenate([np.zeros(leaves, int), np.arange(1, 10)])
    dst = np.concatenate([np.arange(1, leaves + 1), np.arange(2, 11)])
    graph = bg.Graph.from_edges(src, dst, backend="numpy")
    degree = graph.out_degree()

    def frontier(ids, counted=True):
        ids = np.asarray(ids)
        return Frontier.from_ids(graph, ids, out_edges=int(degree[ids].sum()) if counted else None)

    assert not startable(graph, frontier([0]))  # the hub alone: 4,096 edges a row
    assert startable(graph, frontier([0, *range(1, LONG_ROWS)]))  # on average at most LONG_ROWS
    assert startable(graph, frontier([1, 2, 3]))
    assert not startable(graph, frontier([1, 2, 3], counted=False))


def test_a_list_that_found_more_than_its_room_says_so_when_read():
    """A push kernel's list has room for its frontier's out-edges: a count past it (out_edges
    that undercount the members) is an error when read, never a list cut short."""
    graph = bg.Graph.from_edges([0, 0, 1], [1, 2, 2], num_vertices=10, backend="numpy")
    overfull = fr.Frontier.listed(graph, np.array([5, 2], dtype=np.int32), Counts(3, 9))
    with pytest.raises(FrontierError, match="found 3 vertices and its list had room for 2"):
        len(overfull)
