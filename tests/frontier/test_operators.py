"""advance / filter / compute semantics on small literal graphs, push and pull alike."""

import dataclasses
import importlib
from unittest import mock

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import examples, graphs

import bspgraph as bg
from bspgraph import frontier as fr
from bspgraph.backend import NumpyBackend, ops


@pytest.fixture
def graph():
    # 0 -> 1, 0 -> 2, 1 -> 2, 2 -> 2 (self-loop), 3 -> 0; 4 isolated
    return bg.Graph.from_edges([0, 0, 1, 2, 3], [1, 2, 2, 2, 0], num_vertices=5, backend="numpy")


def test_advance_push_calls_functor_on_every_out_edge(graph):
    seen = []

    def record(src, dst, eid, weight):
        seen.extend(zip(src.tolist(), dst.tolist(), eid.tolist()))
        return dst != 1

    out = fr.advance(graph, fr.Frontier.from_ids(graph, [0, 2]), record, direction="push")
    assert sorted(seen) == [(0, 1, 0), (0, 2, 1), (2, 2, 3)]  # advance keeps self-loops
    assert sorted(out.ids.tolist()) == [2, 2]
    unique = fr.advance(graph, fr.Frontier.from_ids(graph, [0, 2]), record, unique=True)
    assert unique.ids.tolist() == [2]


def test_advance_pull_scans_in_edges_of_candidates(graph):
    candidates = np.array([False, True, True, False, False])
    out = fr.advance(
        graph,
        fr.Frontier.from_ids(graph, [0]),
        lambda s, d, e, w: None,
        direction="pull",
        candidates=candidates,
    )
    assert out.ids.tolist() == [1, 2]


def test_pull_without_candidates_is_an_error(graph):
    with pytest.raises(ValueError, match="candidates"):
        fr.advance(graph, fr.Frontier.from_ids(graph, [0]), lambda *a: None, direction="pull")


@pytest.mark.parametrize("fused", [True, False])
def test_a_pull_from_the_functor_s_own_candidates_equals_one_from_its_mask(fused, monkeypatch):
    """candidates="functor": a fused pull tests the functor's own condition with no mask; the
    generic pull builds the mask from ``op.candidates``; both give the mask's answer."""
    graph = bg.generators.rmat(8, 8, seed=5, backend="numpy")
    if not fused:
        monkeypatch.setattr(fr.functors.visit_unvisited, "fused_pull", None)
    runs = []
    for candidates in ("functor", "mask"):
        depth = np.full(graph.num_vertices, np.iinfo(np.int32).max, dtype=np.int32)
        depth[::3] = 0  # visited: never candidates
        visit = fr.functors.visit_unvisited(depth, 1, None)
        chosen = visit.candidates(graph) if candidates == "mask" else candidates
        out = fr.advance(
            graph,
            fr.Frontier.from_mask(graph, depth == 0),
            visit,
            direction="pull",
            candidates=chosen,
        )
        runs.append((sorted(out.ids.tolist()), depth))
    assert runs[0][0] == runs[1][0] and runs[0][0]
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    with pytest.raises(ValueError, match="candidates"):  # a functor without candidates
        fr.advance(
            graph,
            fr.Frontier.from_ids(graph, [0]),
            lambda *a: None,
            direction="pull",
            candidates="functor",
        )


def test_filter_and_compute(graph):
    frontier = fr.Frontier.all(graph)
    assert fr.filter(graph, frontier, lambda ids: ids % 2 == 0).ids.tolist() == [0, 2, 4]
    total = []
    fr.compute(graph, "vertices", lambda ids: total.append(int(ids.sum())))
    assert total == [10]


def test_frontier_converts_between_forms(graph):
    sparse = fr.Frontier.from_ids(graph, [3, 1])
    assert sparse.mask.tolist() == [False, True, False, True, False]
    dense = fr.Frontier.from_mask(graph, sparse.mask)
    assert dense.ids.tolist() == [1, 3] and len(dense) == 2 and dense


def test_cost_model_pulls_on_a_large_frontier():
    graph = bg.generators.rmat(10, 16, seed=1, backend="numpy")
    everything = fr.Frontier.all(graph)
    few = np.zeros(graph.num_vertices, dtype=bool)
    few[:3] = True
    from bspgraph.frontier.advance import choose_direction

    assert choose_direction(graph, everything, few) == "pull"
    assert choose_direction(graph, fr.Frontier.from_ids(graph, [0]), ~few) == "push"


def test_after_an_early_exit_pull_the_frontier_size_alone_picks_the_direction(monkeypatch):
    """Beamer's switch back: pull again while the frontier grows or holds more than
    n / BACK_BETA vertices, without counting the candidates' in-edges."""
    advance = importlib.import_module("bspgraph.frontier.advance")
    graph = bg.generators.rmat(10, 16, seed=1, backend="numpy")
    n = graph.num_vertices
    depth = np.full(n, np.iinfo(np.int32).max, dtype=np.int32)
    depth[:2] = 0
    op = fr.functors.visit_unvisited(depth, 1)
    pulled = fr.advance(
        graph, fr.Frontier.from_ids(graph, [0, 1]), op, direction="pull", candidates=depth > 1
    )
    assert pulled.pulled_from == 2  # an early-exit pull on one device records its input's size
    assert fr.advance(graph, pulled, lambda *a: None, direction="push").pulled_from is None

    def no_count(*args):
        raise AssertionError("the candidates' in-edges were counted after a pull")

    monkeypatch.setattr(advance, "choose_direction", no_count)
    for size, came_from, expected in [
        (n // 40, n // 80, "pull"),  # grew
        (n // 10, n // 5, "pull"),  # more than n / BACK_BETA
        (n // 40, n // 20, "push"),
    ]:
        frontier = fr.Frontier.from_ids(graph, np.arange(size))
        frontier.pulled_from = came_from
        assert advance.stays_pulled(graph, frontier) == (expected == "pull")
        ran = []
        for name in ("push", "pull"):
            monkeypatch.setattr(
                getattr(advance, name),
                "run",
                lambda *a, name=name, ran=ran, **k: ran.append(name) or pulled,
            )
        fr.advance(graph, frontier, op, candidates=depth > 1)
        assert ran == [expected]


@pytest.mark.parametrize("scans_whole_lists", [False, True])
def test_pulls_early_foretells_a_bfs_advance_level_by_level(scans_whole_lists, monkeypatch):
    """``pulls_early`` (rule 6's light pulls) says, from what each frontier of a
    direction-optimising BFS carries, whether its next advance pulls: after a counted push
    and after a pull alike; never where the backend's pull scans whole lists."""
    advance = importlib.import_module("bspgraph.frontier.advance")
    capabilities = dataclasses.replace(
        NumpyBackend.capabilities, scans_whole_lists=scans_whole_lists
    )
    monkeypatch.setattr(NumpyBackend, "capabilities", capabilities)
    graph = bg.generators.rmat(12, 16, seed=1, backend="numpy")
    depth = np.full(graph.num_vertices, np.iinfo(np.int32).max, dtype=np.int32)
    source = int(np.argmax(graph.out_degree()))
    depth[source] = 0
    frontier = fr.Frontier.from_ids(graph, [source])
    frontier.edges_before = 0  # (as the enactor starts a run)
    ran, pulls = [], []
    counted = advance.pull.run
    monkeypatch.setattr(advance.pull, "run", lambda *a, **k: ran.append(1) or counted(*a, **k))
    level = 0
    while len(frontier):
        foretold = advance.pulls_early(graph, frontier, advance.count_out_edges(graph, frontier))
        before = len(ran)
        level += 1
        op = fr.functors.visit_unvisited(depth, level)
        frontier = fr.advance(graph, frontier, op, candidates="functor", unique=True)
        pulls.append(len(ran) > before)
        assert foretold == (pulls[-1] and not scans_whole_lists), (level, pulls)
    assert pulls[0] is False and any(pulls)  # (a push first: the first pull foretold by its count)


@pytest.mark.parametrize("direction", ["auto", "pull"])
def test_candidates_all_is_every_vertex_counted_without_a_pass(direction, monkeypatch):
    advance = importlib.import_module("bspgraph.frontier.advance")
    graph = bg.generators.rmat(9, 16, seed=2, weights=True, backend="numpy")
    start = fr.Frontier.from_ids(graph, np.arange(graph.num_vertices))  # heavy: auto pulls
    results = []
    for candidates in (np.ones(graph.num_vertices, dtype=bool), "all"):
        distance = np.full(graph.num_vertices, np.inf)
        distance[: graph.num_vertices // 2] = np.arange(graph.num_vertices // 2)
        relax = fr.functors.relax_min(distance, graph.backend)
        if isinstance(candidates, str):
            monkeypatch.setattr(ops, "masked_sum", None)  # no counting pass
        out = fr.advance(graph, start, relax, direction=direction, candidates=candidates)
        results.append((out.ids.tolist(), distance.tolist()))
    assert results[0] == results[1]
    assert advance.choose_direction(graph, start, "all") == "pull"
    with pytest.raises(ValueError, match="candidates='every'"):
        fr.advance(graph, start, relax, candidates="every")


@pytest.mark.parametrize("direction", ["push", "pull"])
def test_fused_relax_equals_the_generic_functor(direction):
    graph = bg.generators.rmat(10, 8, seed=4, weights=True, backend="numpy")
    frontier = fr.Frontier.from_ids(graph, np.arange(0, graph.num_vertices, 7))
    results = []
    for fused in (True, False):
        distance = np.full(graph.num_vertices, np.inf, dtype=np.float32)
        distance[frontier.ids] = 0
        distance[1::7] = 3.0  # some candidates start above the frontier, some may not improve
        functor = fr.functors.relax_min(distance, graph.backend)
        op = functor if fused else (lambda *edge, f=functor: f(*edge))  # hides the fused paths
        candidates = distance > 0 if direction == "pull" else None
        out = fr.advance(
            graph,
            frontier,
            op,
            unique=True,
            direction=direction,
            candidates=candidates,
            early_exit=False,
        )
        results.append((np.sort(out.ids), distance))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


@pytest.mark.parametrize("weighted", [True, False])
def test_relax_push_through_the_padded_table_equals_the_rows(weighted, monkeypatch):
    """On a mesh NumPy's relax_push reads whole rows of its padded table (pads of weight inf):
    the same distances, bit for bit, and the same improved vertices as over the CSR rows,
    also in passes of a few rows each; lists of uneven lengths get no table."""
    host = importlib.import_module("bspgraph.frontier.host")
    graph = bg.generators.grid(30, 20, weights=weighted, seed=5, backend="numpy")
    assert host._padded(graph) is not None
    rng = np.random.default_rng(1)
    ids = np.sort(rng.choice(graph.num_vertices, 90, replace=False)).astype(graph.indices.dtype)
    dtype = np.float64 if graph.weights is None else graph.weights.dtype
    start = (rng.random(graph.num_vertices) * 20).astype(dtype)
    start[ids] = rng.random(ids.shape[0]) * 5  # low sources: many improve, some do not
    start[ids[::9]] = np.inf  # (sources not reached yet: nothing improves from them)
    for chunk in (None, 4 * 7):  # one pass, passes of about 7 rows
        if chunk is not None:
            monkeypatch.setattr(host, "HOST_CHUNK_EDGES", chunk)
        results = []
        for padded in (host._padded, lambda graph: None):
            monkeypatch.setattr(host, "_padded", padded)
            distance = start.copy()
            out = host.relax_push(graph, ids, None, distance)
            results.append((np.sort(out.ids).tolist(), distance))
        monkeypatch.undo()
        assert results[0][0] == results[1][0] != []
        np.testing.assert_array_equal(results[0][1], results[1][1])
    star = bg.Graph.from_edges([0, 0, 0, 1], [1, 2, 3, 2], num_vertices=4, directed=False)
    assert host._padded(star) is None  # pads: 2 / 3 of the entries


@examples(60)
@given(
    graphs(),
    st.sampled_from(["min", "sum"]),
    st.sampled_from(["out", "in"]),
    st.none() | st.integers(1, 3),
    st.booleans(),
)
def test_neighbor_reduce_over_each_list(case, reduce, direction, sample, weighted):
    """Against a loop over the CSR: every list, or its first ``sample`` entries; weights multiply
    a sum; an empty list gives the identity."""
    graph, _ = case
    weighted = weighted and reduce == "sum"
    rng = np.random.default_rng(graph.num_edges)
    values = rng.integers(0, 50, graph.num_vertices).astype(float if reduce == "sum" else np.int64)
    got = fr.neighbor_reduce(
        graph, values, reduce, direction=direction, weighted=weighted, sample=sample
    )
    csr = graph.forward if direction == "out" else graph.reverse
    for u in range(graph.num_vertices):
        entries = range(csr.offsets[u], csr.offsets[u + 1])[:sample]
        terms = [
            values[csr.indices[e]] * (csr.weights[e] if weighted and csr.weights is not None else 1)
            for e in entries
        ]
        expected = min(terms, default=np.iinfo(np.int64).max) if reduce == "min" else sum(terms)
        assert got[u] == pytest.approx(expected)
    with pytest.MonkeyPatch.context() as patch:  # through degree-ordered lists: the same sums
        patch.setattr(fr.operators, "ORDERED_VERTICES", 1)
        patch.setattr(fr.operators, "ORDER_AFTER", 1)
        patch.setattr(fr.operators, "SKEW", 1)
        graph.cache.clear()
        hot = fr.neighbor_reduce(
            graph, values, reduce, direction=direction, weighted=weighted, sample=sample
        )
        graph.cache.clear()
    np.testing.assert_array_equal(hot, got)


def test_ordered_columns_leave_pulls_unchanged():
    """Pulls (PageRank's sums, relax_min's min-plus) gather through columns renamed in degree
    order once ORDERED_VERTICES, SKEW and ORDER_AFTER allow: the same results, to the bit."""
    graph = bg.generators.rmat(10, 8, seed=3, weights=True)

    def pulls():
        distance = np.random.default_rng(1).random(graph.num_vertices) * 50
        distance[::3] = np.inf
        relax = fr.functors.relax_min(distance, graph.backend)
        fr.advance(
            graph,
            fr.Frontier.from_mask(graph, np.isfinite(distance)),
            relax,
            direction="pull",
            candidates=np.ones(graph.num_vertices, dtype=bool),
        )
        return bg.pagerank(graph).rank, distance

    plain = pulls()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fr.operators, "ORDERED_VERTICES", 1)
        patch.setattr(fr.operators, "ORDER_AFTER", 1)
        patch.setattr(fr.operators, "SKEW", 1)
        graph.cache.clear()  # the plain run cached "not ordered"
        ordered = pulls()
        parts = bg.pagerank(graph, devices=[0, 0], partitioner="edge_balanced").rank
    columns, _ = graph.cache[("ordered columns", "out")]  # undirected: one CSR
    named = np.flatnonzero(graph.out_degree() > 0)
    assert named.size < graph.num_vertices  # rmat: isolated vertices, never gathered
    np.testing.assert_array_equal(np.sort(columns), named)
    np.testing.assert_array_equal(ordered[0], plain[0])
    np.testing.assert_array_equal(ordered[1], plain[1])
    np.testing.assert_allclose(parts, plain[0], rtol=1e-12, atol=0)  # each part its own order


def test_columns_are_ordered_at_the_order_after_th_pull(monkeypatch):
    graph = bg.generators.rmat(8, 8, seed=3)
    monkeypatch.setattr(fr.operators, "ORDERED_VERTICES", 1)
    monkeypatch.setattr(fr.operators, "SKEW", 1)
    for call in range(1, fr.operators.ORDER_AFTER + 1):
        fr.neighbor_reduce(graph, np.ones(graph.num_vertices), "sum", direction="in")
        ordered = graph.cache[("ordered columns", "out")]
        assert isinstance(ordered, tuple) == (call == fr.operators.ORDER_AFTER)


def test_neighbor_reduce_sample_needs_every_row(graph):
    with pytest.raises(ValueError, match="sample"):
        fr.neighbor_reduce(graph, np.zeros(5), "min", sample=0)
    with pytest.raises(ValueError, match="sample"):
        fr.neighbor_reduce(
            graph, np.zeros(5), "min", sample=2, frontier=fr.Frontier.from_ids(graph, [0])
        )


@examples(60)
@given(graphs(), st.sampled_from(["out", "in"]), st.none() | st.integers(1, 3), st.data())
def test_link_joins_the_ends_of_each_edge(case, direction, sample, data):
    """From a forest with parent[x] <= x (chains, not flat): afterwards both ends of every
    edge linked (every list, its first ``sample`` entries, or the lists of a frontier) share
    a root; the roots are networkx's components of the forest's and those edges' union, each
    labelled by its least id; parent[x] <= x still."""
    graph, _ = case
    n = graph.num_vertices
    rng = np.random.default_rng(n + graph.num_edges)
    parent = np.arange(n)
    chained = rng.random(n) < 0.4
    parent[chained] = (rng.random(chained.sum()) * np.flatnonzero(chained)).astype(np.int64)
    parent = parent.astype(graph.indices.dtype)
    members = None
    if sample is None and n:
        members = data.draw(st.none() | st.lists(st.integers(0, n - 1), unique=True))
    frontier = None if members is None else fr.Frontier.from_ids(graph, members)
    forest = nx.Graph()
    forest.add_nodes_from(range(n))
    forest.add_edges_from((x, int(parent[x])) for x in range(n))
    csr = graph.forward if direction == "out" else graph.reverse
    for u in range(n) if members is None else members:
        entries = range(csr.offsets[u], csr.offsets[u + 1])[:sample]
        forest.add_edges_from((u, int(csr.indices[e])) for e in entries)
    fr.link(graph, parent, direction=direction, frontier=frontier, sample=sample)
    assert (parent <= np.arange(n)).all()
    roots = parent.copy()
    while (roots[roots] != roots).any():
        roots = roots[roots]
    for component in nx.connected_components(forest):
        assert set(roots[list(component)].tolist()) == {min(component)}


@examples(60)
@given(st.integers(1, 40), st.data())
def test_link_pairs_joins_the_two_vertices_of_each_pair(n, data):
    """From a forest with parent[x] <= x (chains, not flat) and pairs in any order, repeated,
    some inside one tree: afterwards both vertices of every pair share a root; the roots
    are networkx's components of the forest's and the pairs' union, each labelled by its
    least id; parent[x] <= x still."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    parent = np.arange(n)
    chained = rng.random(n) < 0.4
    parent[chained] = (rng.random(chained.sum()) * np.flatnonzero(chained)).astype(np.int64)
    ids = st.integers(0, n - 1)
    pairs = data.draw(st.lists(st.tuples(ids, ids), max_size=3 * n))
    dtype = data.draw(st.sampled_from([np.int32, np.int64]))
    parent = parent.astype(dtype)
    graph = bg.Graph.from_edges([], [], num_vertices=n, backend="numpy")
    forest = nx.Graph()
    forest.add_nodes_from(range(n))
    forest.add_edges_from((x, int(parent[x])) for x in range(n))
    forest.add_edges_from(pairs)
    a = np.array([p[0] for p in pairs], dtype=np.int64)  # cast to parent's dtype
    b = np.array([p[1] for p in pairs], dtype=np.int64)
    fr.link_pairs(graph, parent, a, b)
    assert parent.dtype == dtype and (parent <= np.arange(n)).all()
    roots = parent.copy()
    while (roots[roots] != roots).any():
        roots = roots[roots]
    for component in nx.connected_components(forest):
        assert set(roots[list(component)].tolist()) == {min(component)}


def test_link_pairs_literal():
    graph = bg.Graph.from_edges([], [], num_vertices=6, backend="numpy")
    parent = np.array([0, 1, 2, 3, 4, 4])  # 5 below 4
    fr.link_pairs(graph, parent, np.array([4, 3]), np.array([2, 1]))  # lists are cast
    assert parent[4] == 2 and parent[3] == 1 and parent[5] in (2, 4)  # 4's tree under 2
    before = parent.copy()
    fr.link_pairs(graph, parent, [], [])
    assert (parent == before).all()  # no pairs: nothing moves


def test_link_pairs_checks_its_arguments():
    graph = bg.Graph.from_edges([0], [1], num_vertices=3, backend="numpy")
    with pytest.raises(ValueError, match=r"link_pairs\(a, b\): expected two 1-D arrays"):
        fr.link_pairs(graph, np.arange(3), np.array([0, 1]), np.array([2]))
    with pytest.raises(ValueError, match="shapes"):
        fr.link_pairs(graph, np.arange(3), np.zeros((1, 2), dtype=int), np.zeros((1, 2), dtype=int))


def test_link_checks_its_arguments(graph):
    with pytest.raises(ValueError, match="direction"):
        fr.link(graph, np.arange(5), direction="both")
    with pytest.raises(ValueError, match="sample"):
        fr.link(graph, np.arange(5), sample=1, frontier=fr.Frontier.from_ids(graph, [0]))


@examples(60)
@given(st.lists(st.floats(0, 1, exclude_max=True), max_size=60))
def test_flatten_points_every_vertex_at_its_root(fractions):
    """fr.flatten on any forest with ``parent[x] <= x`` (chains, stars, roots alone): every
    vertex at the root pointer jumping reaches, roots unmoved."""
    n = len(fractions)
    parent = np.array([int(f * (x + 1)) for x, f in enumerate(fractions)], dtype=np.int64)
    expected = parent.copy()
    while (expected[expected] != expected).any():
        expected = expected[expected]
    graph = bg.Graph.from_edges([], [], num_vertices=n, backend="numpy")
    fr.flatten(graph, parent)
    np.testing.assert_array_equal(parent, expected)


@pytest.mark.parametrize("light", [True, False])
def test_lane_pairs_equal_the_products_over_the_lanes(light, monkeypatch):
    """advance_pairs / reduce_pairs give the sums of advance_lanes / reduce_lanes at the pairs,
    on a light level (edges gathered, summed per pair) and a heavy one (the products)."""
    from bspgraph.frontier import lanes

    monkeypatch.setattr(lanes, "LIGHT_SHARE", 0 if light else 10**9)
    graph = bg.generators.grid(6, 7, backend="numpy")
    rng = np.random.default_rng(3)
    width, n = 5, graph.num_vertices
    values = np.where(rng.random((n, width)) < 0.3, rng.integers(1, 9, (n, width)), 0.0)
    rows, lanes_of = np.nonzero(values[:20])  # the pairs of the first 20 rows
    frontier = fr.Frontier.from_ids(graph, np.arange(20))
    dense = fr.advance_lanes(graph, frontier, values[:20])
    got_rows, got_lanes, sums = fr.advance_pairs(
        graph, rows, lanes_of, values[rows, lanes_of], width
    )
    want_rows, want_lanes = np.nonzero(dense)
    assert np.array_equal(got_rows, want_rows) and np.array_equal(got_lanes, want_lanes)
    assert np.array_equal(sums, dense[want_rows, want_lanes])
    reduced = fr.reduce_lanes(graph, values, frontier)
    got_rows, got_lanes, sums = fr.reduce_pairs(graph, values, rows, lanes_of)
    assert np.array_equal(got_rows, rows) and np.array_equal(got_lanes, lanes_of)
    assert np.array_equal(sums, reduced[rows, lanes_of])


@examples(40)
@given(
    st.integers(1, 40),
    st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), max_size=90),
    st.booleans(),
    st.booleans(),
    st.data(),
)
def test_every_level_at_once_on_short_rows_equals_level_by_level(n, pairs, directed, parents, data):
    """On NumPy without numba, a BFS from one vertex of a graph whose out-lists are all short
    runs every level in one call (scipy's breadth-first order): the depths are networkx's, each
    parent sits one level up along an edge, and the supersteps' frontiers are the levels."""

    pairs = [(u % n, v % n) for u, v in pairs]
    src = np.array([u for u, _ in pairs], dtype=np.int64)
    dst = np.array([v for _, v in pairs], dtype=np.int64)
    graph = bg.Graph.from_edges(src, dst, num_vertices=n, directed=directed, backend="numpy")
    source = data.draw(st.integers(0, n - 1), label="source")
    if not fr.operators.short_rows(graph):
        return
    run = bg.bfs(graph, source, parents=parents, direction="push", backend="numpy")
    g = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(pairs)
    hops = nx.single_source_shortest_path_length(g, source)
    np.testing.assert_array_equal(run.depth, [hops.get(v, -1) for v in range(n)])
    if parents:
        for v in np.flatnonzero(run.depth > 0):
            assert g.has_edge(int(run.parent[v]), int(v))
            assert run.depth[run.parent[v]] == run.depth[v] - 1
    levels = np.bincount([d for d in hops.values() if d > 0]).tolist()[1:]
    assert [s.frontier for s in run.stats.supersteps] == [*levels, 0]


def test_every_level_at_once_deeper_than_the_markers_first_built():
    """A search with more levels than the markers first built (``host.MARKED_LEVELS``) runs
    again over a longer chain: on a path, BFS depths and unweighted SSSP distances are hops,
    and every level is a superstep."""
    from bspgraph.frontier import host

    n = 3 * host.MARKED_LEVELS
    path = bg.Graph.from_edges(np.arange(n - 1), np.arange(1, n), directed=False, backend="numpy")
    for source in (0, n // 3):
        hops = np.abs(np.arange(n) - source)
        run = bg.bfs(path, source, parents=True, direction="push", backend="numpy")
        np.testing.assert_array_equal(run.depth, hops)
        assert run.parent[source] == -1
        assert (np.abs(run.parent[hops > 0] - np.flatnonzero(hops > 0)) == 1).all()
        assert len(run.stats.supersteps) == hops.max() + 1  # (the last one empty)
        np.testing.assert_array_equal(bg.sssp(path, source, backend="numpy").distance, hops)
    assert host._marked(path)[1] > n - 1


@examples(40)
@given(
    st.integers(1, 40),
    st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39), st.integers(1, 9)), max_size=90),
    st.booleans(),
    st.booleans(),
    st.data(),
)
def test_every_distance_at_once_on_short_rows_equals_networkx(n, edges, directed, weighted, data):
    """On NumPy, SSSP from one vertex of a graph whose out-lists are all short and whose
    weights are positive takes every distance in one call (scipy's Dijkstra; unweighted, its
    breadth-first order): networkx's distances, and the supersteps count the shortest-path
    tree's levels (every reached vertex once)."""

    edges = [(u % n, v % n, w if weighted else 1) for u, v, w in edges]
    src, dst, weight = (
        np.array([e[k] for e in edges], dtype=t) for k, t in enumerate((np.int64, np.int64, float))
    )
    graph = bg.Graph.from_edges(
        src, dst, weight if weighted else None, num_vertices=n, directed=directed, backend="numpy"
    )
    source = data.draw(st.integers(0, n - 1), label="source")
    if not fr.operators.short_rows(graph):
        return
    run = bg.sssp(graph, source, backend="numpy")
    g = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(range(n))
    for u, v, w in edges:  # duplicates merge into the lightest
        if not g.has_edge(u, v) or g[u][v]["weight"] > w:
            g.add_edge(u, v, weight=w)
    want = nx.single_source_dijkstra_path_length(g, source)
    np.testing.assert_array_equal(run.distance, [want.get(v, np.inf) for v in range(n)])
    assert sum(s.frontier for s in run.stats.supersteps) == len(want) - 1


@pytest.mark.parametrize("push_columns", [0, 1 << 40])
@examples(60)
@given(graphs(), st.sampled_from(["out", "in"]), st.integers(2, 4), st.data())
def test_neighbor_reduce_from_sources_on_parts(push_columns, case, direction, parts, data):
    """On the parts of a cut (each holding its own vertices' lists), sums over the edges from
    ``sources``: with ``adds_up`` the parts' sums add up to the whole graph's, whichever
    direction the whole graph's counts chose (a push sums the edges into a part's own sources,
    a pull its own frontier vertices' lists: every part the same); without it each part pulls,
    the whole sums of the frontier vertices it owns. Where a push also passes over every
    column at a high cost (``push_columns``, as cuSPARSE's product does on a GPU), the sums
    are pulled: the same sums, nothing pushed."""
    from bspgraph.backend.numpy_backend import NumpyBackend
    from bspgraph.enactor.layout import _subgraph

    graph, _ = case
    n = graph.num_vertices
    pick = st.lists(st.integers(0, max(n - 1, 0)), unique=True, max_size=n) if n else st.just([])
    frontier = fr.Frontier.from_ids(graph, sorted(data.draw(pick)))
    sources = fr.Frontier.from_ids(graph, sorted(data.draw(pick)))
    values = np.random.default_rng(n).random(n)
    capabilities = dataclasses.replace(NumpyBackend.capabilities, push_columns=push_columns)
    pushed = mock.Mock(wraps=ops.spmv_transposed)
    with (
        mock.patch.object(NumpyBackend, "capabilities", capabilities),
        mock.patch.object(ops, "spmv_transposed", pushed),
    ):
        expected = fr.neighbor_reduce(
            graph, values, "sum", direction=direction, frontier=frontier, sources=sources
        )
        owner = np.random.default_rng(parts).integers(0, parts, n)
        added, owned_sums = np.zeros(len(frontier)), np.zeros(len(frontier))
        for device in range(parts):
            part = _subgraph(graph, owner, device, parts, replicate=False)
            on_part = [fr.Frontier.from_ids(part, f.ids) for f in (frontier, sources)]
            run = dict(direction=direction, frontier=on_part[0], sources=on_part[1])
            added += fr.neighbor_reduce(part, values, "sum", adds_up=True, **run)
            mine = owner[frontier.ids] == device
            owned_sums[mine] = fr.neighbor_reduce(part, values, "sum", **run)[mine]
    np.testing.assert_allclose(added, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(owned_sums, expected, rtol=1e-12, atol=1e-12)
    assert not (push_columns and pushed.called)
