"""write_mtx: what read_mtx (and scipy) read back is the graph that was written."""

import numpy as np
import pytest
import scipy.io
from hypothesis import given
from strategies import graphs

import bspgraph as bg


def assert_same_graph(a: bg.Graph, b: bg.Graph):
    assert (a.num_vertices, a.num_edges, a.directed) == (b.num_vertices, b.num_edges, b.directed)
    np.testing.assert_array_equal(a.offsets, b.offsets)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert (a.weights is None) == (b.weights is None)
    if a.weights is not None:
        np.testing.assert_array_equal(a.weights.astype(np.float64), b.weights)


@given(graphs())
def test_round_trip(tmp_path_factory, case):
    graph, _ = case
    path = tmp_path_factory.mktemp("write") / "g.mtx"
    bg.write_mtx(graph, path)
    assert_same_graph(graph, bg.read_mtx(path, backend="numpy"))


def test_header_symmetric_lower_triangle_and_comment(tmp_path):
    graph = bg.Graph.from_edges(
        [0, 1, 2], [1, 2, 2], num_vertices=4, directed=False, backend="numpy"
    )
    path = tmp_path / "g.mtx"
    bg.write_mtx(graph, path, comment="two lines\nof comment")
    lines = path.read_text().splitlines()
    assert lines[:4] == [
        "%%MatrixMarket matrix coordinate pattern symmetric",
        "% two lines",
        "% of comment",
        "4 4 3",
    ]
    assert sorted(lines[4:]) == ["2 1", "3 2", "3 3"]  # row >= column, the self-loop once


def test_weights_print_exactly_and_briefly(tmp_path):
    weights32 = np.array([17, 0.1, 3e-8], dtype=np.float32)
    graph = bg.Graph.from_edges([0, 1, 2], [1, 2, 0], weights32, backend="numpy")
    path = tmp_path / "w.mtx"
    bg.write_mtx(graph, path)
    body = path.read_text().splitlines()[2:]
    assert body[0] == "1 2 17"
    np.testing.assert_array_equal(
        bg.read_mtx(path, backend="numpy").weights.astype(np.float32), graph.weights
    )
    weights64 = np.array([0.1, 1 / 3, np.inf])
    graph = bg.Graph.from_edges([0, 1, 2], [1, 2, 0], weights64, backend="numpy")
    bg.write_mtx(graph, path)
    assert_same_graph(graph, bg.read_mtx(path, backend="numpy"))


@pytest.mark.parametrize("directed", [False, True])
def test_scipy_reads_it(tmp_path, directed):
    graph = bg.generators.rmat(6, 4, seed=2, weights=True, backend="numpy")
    if directed:
        src, dst, w = graph.edges()
        graph = bg.Graph.from_edges(src[::2], dst[::2], w[::2], num_vertices=64, backend="numpy")
    path = tmp_path / "g.mtx"
    bg.write_mtx(graph, path)
    matrix = scipy.io.mmread(path)
    np.testing.assert_array_equal(matrix.toarray(), graph.to_scipy().toarray())


def test_empty_graph_and_large_chunks(tmp_path, monkeypatch):
    path = tmp_path / "e.mtx"
    bg.write_mtx(bg.Graph.from_edges([], [], num_vertices=3, backend="numpy"), path)
    assert path.read_text().splitlines()[-1] == "3 3 0"
    assert bg.read_mtx(path, backend="numpy").num_vertices == 3
    monkeypatch.setattr("bspgraph.graph.write._ROWS_PER_CHUNK", 7)  # several chunks
    graph = bg.generators.grid(5, 6, weights=True, backend="numpy")
    bg.write_mtx(graph, path)
    assert_same_graph(graph, bg.read_mtx(path, backend="numpy"))
