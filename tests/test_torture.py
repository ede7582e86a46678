"""Torture graphs: a hub of degree 10^6, a chain of 10^5, many tiny components, isolated
vertices, zero-weight and equal-weight edges. Each answer is checked exactly, by construction or
against networkx; a few multi-device runs are included (the slowest ones are marked slow)."""

import networkx as nx
import numpy as np
import pytest

import bspgraph as bg

LEAVES = 10**6  # the hub's degree
CHAIN = 10**5
SHORT_CHAIN = 10**4  # the default run of the slower chain tests; 10^5 is marked slow
HUB = LEAVES // 2  # in the middle: labels and parents must come through it


# --- a star: one vertex of degree 10^6 ----------------------------------------------------------
def star(directed: bool, inward: bool = False, weights=None) -> bg.Graph:
    leaves = np.delete(np.arange(LEAVES + 1), HUB)
    hub = np.full(LEAVES, HUB)
    src, dst = (leaves, hub) if inward else (hub, leaves)
    return bg.Graph.from_edges(
        src, dst, weights, num_vertices=LEAVES + 1, directed=directed, backend="numpy"
    )


@pytest.fixture(scope="module")
def undirected_star():
    return star(directed=False)


def test_star_bfs_from_the_hub_and_from_a_leaf(undirected_star):
    expected = np.ones(LEAVES + 1, dtype=np.int64)
    expected[HUB] = 0
    assert np.array_equal(bg.bfs(undirected_star, HUB).depth, expected)

    result = bg.bfs(undirected_star, 7, parents=True)
    expected = np.full(LEAVES + 1, 2)
    expected[[7, HUB]] = [0, 1]
    assert np.array_equal(result.depth, expected)
    parents = np.full(LEAVES + 1, HUB)
    parents[[7, HUB]] = [-1, 7]
    assert np.array_equal(result.parent, parents)
    assert result.stats.iterations == 3  # depth 1, depth 2, then an empty frontier


@pytest.mark.parametrize("direction", ["push", "pull"])
def test_star_bfs_pinned_directions(undirected_star, direction):
    depth = bg.bfs(undirected_star, 3, direction=direction).depth
    assert depth[3] == 0 and depth[HUB] == 1 and np.count_nonzero(depth == 2) == LEAVES - 1


def test_directed_stars_out_and_in():
    out = star(directed=True)
    depth = bg.bfs(out, HUB).depth
    assert depth[HUB] == 0 and np.all(np.delete(depth, HUB) == 1)
    assert np.count_nonzero(bg.bfs(out, 9).depth >= 0) == 1  # a leaf reaches nothing
    inward = star(directed=True, inward=True)
    depth = bg.bfs(inward, 9).depth
    assert (depth[9], depth[HUB], np.count_nonzero(depth >= 0)) == (0, 1, 2)
    assert np.count_nonzero(bg.bfs(inward, HUB).depth >= 0) == 1


def test_star_sssp_with_zero_and_equal_weights():
    weights = (np.arange(LEAVES) % 4).astype(np.float64)  # 0, 1, 2, 3: a quarter weigh nothing
    graph = star(directed=False, weights=weights)
    leaf_weight = np.insert(weights, HUB, 0.0)  # the weight of each vertex's edge to the hub
    for source in (HUB, 0, 1):  # a zero-weight leaf and a weight-1 leaf
        expected = leaf_weight + leaf_weight[source]
        expected[HUB] = leaf_weight[source]
        expected[source] = 0.0
        assert np.array_equal(bg.sssp(graph, source).distance, expected)


def test_star_connected_components(undirected_star):
    assert not bg.connected_components(undirected_star).labels.any()  # all label 0, via the hub
    assert not bg.connected_components(star(directed=True, inward=True)).labels.any()


def star_pagerank(alpha: float, tol: float, *, dangling_leaves: bool) -> tuple[float, float]:
    """networkx.pagerank's power iteration on the star, by symmetry on (hub, leaf) alone."""
    n, total = LEAVES, LEAVES + 1
    hub = leaf = 1.0 / total
    for _ in range(1000):
        dangling = n * leaf if dangling_leaves else 0.0
        if dangling_leaves:  # hub -> leaves only: leaves are dangling
            new_hub = alpha * dangling / total + (1 - alpha) / total
        else:
            new_hub = alpha * n * leaf + (1 - alpha) / total
        new_leaf = alpha * (hub / n + dangling / total) + (1 - alpha) / total
        error = abs(new_hub - hub) + n * abs(new_leaf - leaf)
        hub, leaf = new_hub, new_leaf
        if error < total * tol:
            return hub, leaf
    raise AssertionError("no convergence")


@pytest.mark.parametrize(
    "tol", [1e-6, pytest.param(1e-9, marks=pytest.mark.slow)], ids=["tol=1e-6", "tol=1e-9"]
)
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "dangling leaves"])
def test_star_pagerank(undirected_star, directed, tol):
    """networkx's stopping rule (L1 change < num_vertices * tol) stops the default run after a
    few iterations, far from the fixed point: the same iterates as networkx are expected."""
    graph = star(directed=True) if directed else undirected_star
    hub, leaf = star_pagerank(0.85, tol, dangling_leaves=directed)
    rank = bg.pagerank(graph, tol=tol).rank
    expected = np.full(LEAVES + 1, leaf)
    expected[HUB] = hub
    np.testing.assert_allclose(rank, expected, rtol=1e-9)
    assert rank.sum() == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize(
    "partitioner", ["edge_balanced", pytest.param("random", marks=pytest.mark.slow)]
)
def test_star_on_devices(undirected_star, partitioner):
    expected = np.full(LEAVES + 1, 2)  # from leaf 11: the hub at 1, every other leaf at 2
    expected[[11, HUB]] = [0, 1]
    several = bg.bfs(undirected_star, 11, devices=3, partitioner=partitioner)
    assert np.array_equal(several.depth, expected)
    labels = bg.connected_components(undirected_star, devices=2, partitioner=partitioner)
    assert not labels.labels.any()


# --- a chain of 10^5 ----------------------------------------------------------------------------
def chain(length: int, directed: bool, weights=None) -> bg.Graph:
    return bg.Graph.from_edges(
        np.arange(length - 1),
        np.arange(1, length),
        weights,
        num_vertices=length,
        directed=directed,
        backend="numpy",
    )


def test_chain_bfs_depth_is_the_index():
    graph = chain(CHAIN, directed=True)
    result = bg.bfs(graph, 0, parents=True)
    assert np.array_equal(result.depth, np.arange(CHAIN))
    assert np.array_equal(result.parent, np.arange(-1, CHAIN - 1))
    assert result.stats.iterations == CHAIN  # CHAIN - 1 levels, then an empty frontier


LENGTHS = pytest.mark.parametrize(
    "length", [SHORT_CHAIN, pytest.param(CHAIN, marks=pytest.mark.slow)], ids=["1e4", "1e5"]
)


@LENGTHS
def test_chain_sssp_and_components(length):
    graph = chain(length, directed=False)
    assert np.array_equal(bg.sssp(graph, length - 1).distance, np.arange(length)[::-1])
    assert not bg.connected_components(graph).labels.any()


@LENGTHS
def test_chain_on_devices(length):
    graph = chain(length, directed=False)
    depth = bg.bfs(graph, 0, devices=2, partitioner="edge_balanced").depth
    assert np.array_equal(depth, np.arange(length))
    labels = bg.connected_components(graph, devices=3).labels
    assert not labels.any()


@LENGTHS
def test_zero_weight_chain_then_a_unit_edge(length):
    weights = np.zeros(length - 1)
    weights[-1] = 1.0
    distance = bg.sssp(chain(length, directed=True, weights=weights), 0).distance
    assert not distance[:-1].any() and distance[-1] == 1.0


# --- many tiny components, isolated vertices ----------------------------------------------------
def tiny_components(count: int, seed: int):
    """Components of 1..4 vertices (paths plus random chords), ids shuffled; and the expected
    label of each vertex (the smallest id of its component)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, size=count)
    n = int(sizes.sum())
    start = np.repeat(np.cumsum(sizes) - sizes, sizes)  # each vertex's component start
    position = np.arange(n)
    path = position[position > start]  # edge from the previous vertex of the same component
    chords = rng.integers(0, n, size=n // 3)
    chords = chords[sizes[np.searchsorted(np.cumsum(sizes), chords, side="right")] > 2]
    other = start[chords] + rng.integers(0, 3, size=chords.size)  # a vertex of the component
    src, dst = np.concatenate([path - 1, chords]), np.concatenate([path, other])
    relabel = rng.permutation(n)
    src, dst = relabel[src], relabel[dst]
    label = np.full(n, n)
    np.minimum.at(label, relabel[start], relabel)  # label[first vertex] = min id of component
    expected = np.empty(n, dtype=np.int64)
    expected[relabel] = label[relabel[start]]
    return n, src, dst, expected


@pytest.mark.parametrize("directed", [False, True])
def test_many_tiny_components(directed):
    n, src, dst, expected = tiny_components(30_000, seed=4)
    graph = bg.Graph.from_edges(src, dst, num_vertices=n, directed=directed, backend="numpy")
    assert np.array_equal(bg.connected_components(graph).labels, expected)
    assert np.array_equal(bg.connected_components(graph, devices=3).labels, expected)
    if not directed:
        for source in (0, n // 2, n - 1):
            depth = bg.bfs(graph, source).depth
            assert np.array_equal(depth >= 0, expected == expected[source])


def test_many_tiny_components_match_networkx():
    n, src, dst, _ = tiny_components(300, seed=9)
    graph = bg.Graph.from_edges(src, dst, num_vertices=n, directed=False, backend="numpy")
    nx_graph = graph.to_networkx()
    labels = bg.connected_components(graph).labels
    for component in nx.connected_components(nx_graph):
        assert set(labels[list(component)].tolist()) == {min(component)}


def test_isolated_vertices():
    n = 100_000
    rng = np.random.default_rng(2)
    ends = rng.choice(n, size=40, replace=False)
    graph = bg.Graph.from_edges(
        ends[:20],
        ends[20:],
        rng.integers(0, 3, 20).astype(float),
        num_vertices=n,
        directed=False,
        backend="numpy",
    )
    isolated = int(np.setdiff1d(np.arange(n), ends)[123])
    depth = bg.bfs(graph, isolated).depth
    assert depth[isolated] == 0 and np.count_nonzero(depth >= 0) == 1
    distance = bg.sssp(graph, isolated).distance
    assert distance[isolated] == 0 and np.count_nonzero(np.isfinite(distance)) == 1
    labels = bg.connected_components(graph).labels
    lonely = np.setdiff1d(np.arange(n), ends)
    assert np.array_equal(labels[lonely], lonely)
    assert np.array_equal(bg.connected_components(graph, devices=5).labels, labels)


def test_no_edges_at_all():
    for n in (1, 2, 1000):
        graph = bg.Graph.from_edges([], [], num_vertices=n, backend="numpy")
        assert np.array_equal(bg.connected_components(graph).labels, np.arange(n))
        assert np.count_nonzero(bg.bfs(graph, n - 1).depth >= 0) == 1
        np.testing.assert_allclose(bg.pagerank(graph).rank, 1.0 / n, rtol=1e-12)
        assert np.array_equal(bg.bfs(graph, 0, devices=5).depth[:1], [0])


def test_isolated_vertices_pagerank_matches_networkx():
    rng = np.random.default_rng(3)
    n = 2000
    src, dst = rng.integers(0, n, 60), rng.integers(0, n, 60)
    graph = bg.Graph.from_edges(src, dst, num_vertices=n, backend="numpy")  # directed: dangling
    expected = nx.pagerank(graph.to_networkx(), tol=1e-10, max_iter=300)
    rank = bg.pagerank(graph, tol=1e-10, max_iter=300).rank
    np.testing.assert_allclose(rank, [expected[v] for v in range(n)], rtol=1e-8)


# --- zero-weight and equal-weight edges for SSSP, against networkx ------------------------------
def networkx_distances(graph: bg.Graph, source: int) -> np.ndarray:
    lengths = nx.single_source_dijkstra_path_length(graph.to_networkx(), source)
    distance = np.full(graph.num_vertices, np.inf)
    distance[list(lengths)] = list(lengths.values())
    return distance


@pytest.mark.parametrize(
    "weights",
    ["zero-or-one", "all-zero", "all-equal-0.1", "mostly-zero"],
)
@pytest.mark.parametrize("directed", [False, True])
def test_sssp_zero_and_equal_weights_match_networkx(weights, directed):
    rmat = bg.generators.rmat(10, 4, seed=6, backend="numpy")
    src, dst, _ = rmat.edges()
    rng = np.random.default_rng(7)
    weight = {
        "zero-or-one": rng.integers(0, 2, src.size).astype(float),
        "all-zero": np.zeros(src.size),
        "all-equal-0.1": np.full(src.size, 0.1),
        "mostly-zero": np.where(rng.random(src.size) < 0.9, 0.0, 2.5),
    }[weights]
    keep = src < dst if not directed else np.ones(src.size, dtype=bool)
    graph = bg.Graph.from_edges(
        src[keep],
        dst[keep],
        weight[keep],
        num_vertices=rmat.num_vertices,
        directed=directed,
        backend="numpy",
    )
    source = int(np.argmax(np.diff(graph.offsets)))
    expected = networkx_distances(graph, source)
    assert np.array_equal(bg.sssp(graph, source).distance, expected)
    assert np.array_equal(bg.sssp(graph, source, devices=3).distance, expected)
    if weights == "all-equal-0.1":  # every shortest path has the BFS depth's hops
        depth = bg.bfs(graph, source).depth
        reached = depth >= 0
        assert np.array_equal(np.isfinite(expected), reached)


def test_zero_weight_cycle_and_parallel_ties():
    # 0 -> 1 -> 2 -> 0 weigh 0; 0 -> 3 weighs 5 directly and 0 -> 2 -> 3 weighs 0 + 5: a tie
    src = [0, 1, 2, 0, 2, 3, 3]
    dst = [1, 2, 0, 3, 3, 4, 4]
    weight = [0.0, 0.0, 0.0, 5.0, 5.0, 0.0, 1.0]  # a duplicate 3 -> 4 keeps the minimum, 0
    graph = bg.Graph.from_edges(src, dst, weight, num_vertices=6, backend="numpy")
    for devices in (1, 2, 4):
        distance = bg.sssp(graph, 1, devices=devices).distance
        assert distance.tolist() == [0.0, 0.0, 0.0, 5.0, 5.0, np.inf]
