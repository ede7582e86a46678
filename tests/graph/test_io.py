"""Readers and npz files: the real graphs in ../shared/graphs, malformed files, fuzzing."""

import contextlib
import math
import signal
from pathlib import Path
from unittest import mock

import networkx as nx
import numpy as np
import pytest
import scipy.io
from hypothesis import given
from hypothesis import strategies as st
from strategies import examples

import bspgraph.graph.io as graph_io
from bspgraph.exceptions import GraphFormatError
from bspgraph.graph import Graph, generators, load_npz, read_edgelist, read_mtx, save_npz
from bspgraph.graph.io import MTX_FIELDS, MTX_SYMMETRIES

GRAPHS = Path(__file__).resolve().parents[2].parent / "shared" / "graphs"
needs_graphs = pytest.mark.skipif(not GRAPHS.is_dir(), reason=f"real graphs unread: no {GRAPHS}")
MTX_FILES = sorted(path.name for path in GRAPHS.glob("*.mtx")) if GRAPHS.is_dir() else []

SMALL_MTX = b"""%%MatrixMarket matrix coordinate real general
% a comment
%%GraphBLAS type double
4 4 5
1 2 0.5
2 3 0
3 1 -2e1
4 4 nan
1 2 0.25
"""


def edge_weights(graph: Graph) -> dict[tuple[int, int], float]:
    src, dst, weight = graph.edges()
    values = np.ones(src.size) if weight is None else weight
    return dict(zip(zip(src.tolist(), dst.tolist()), values.tolist()))


def same_weights(got: dict, expected: dict) -> bool:
    return got.keys() == expected.keys() and all(
        got[key] == expected[key] or (math.isnan(got[key]) and math.isnan(expected[key]))
        for key in got
    )


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --- Matrix Market: real files ---------------------------------------------------------------
@needs_graphs
@pytest.mark.parametrize("name", MTX_FILES)
def test_real_mtx_matches_scipy(name):
    path = GRAPHS / name
    rows, _, entries, _, field, symmetry = scipy.io.mminfo(path)
    graph = read_mtx(path, backend="numpy")
    matrix = scipy.io.mmread(path).tocoo()  # symmetric files come back with both triangles
    expected: dict[tuple[int, int], float] = {}
    for i, j, value in zip(matrix.row.tolist(), matrix.col.tolist(), matrix.data.tolist()):
        value = 1.0 if field == "pattern" else float(value)
        expected[(i, j)] = value if (i, j) not in expected else min(expected[(i, j)], value)

    assert graph.num_vertices == rows
    assert graph.directed == (symmetry == "general")
    assert graph.weighted == (field != "pattern")
    assert same_weights(edge_weights(graph), expected)
    assert (
        graph.summary.duplicates_merged
        + len({(min(i, j), max(i, j)) if symmetry == "symmetric" else (i, j) for i, j in expected})
        == entries
    )


@needs_graphs
def test_karate():
    graph = read_mtx(GRAPHS / "karate.mtx", backend="numpy")
    assert (graph.num_vertices, graph.num_edges, graph.directed) == (34, 156, False)
    edges = {frozenset(edge) for edge in graph.to_networkx().edges}
    assert edges == {frozenset(edge) for edge in nx.karate_club_graph().edges}


@needs_graphs
def test_comments_and_nan_entry():
    graph = read_mtx(GRAPHS / "comments_west0067.mtx", backend="numpy")
    plain = read_mtx(GRAPHS / "west0067.mtx", backend="numpy")
    assert graph.num_edges == plain.num_edges + 1
    assert math.isnan(edge_weights(graph)[(0, 0)])


@needs_graphs
def test_explicit_zeros_are_edges():
    graph = read_mtx(GRAPHS / "zenios.mtx", backend="numpy")
    assert np.count_nonzero(graph.weights == 0) == 25877


@needs_graphs
def test_duplicate_entries_min_or_sum():
    low = read_mtx(GRAPHS / "gapbs-4w.mtx", backend="numpy")
    total = read_mtx(GRAPHS / "gapbs-4w.mtx", duplicates="sum", backend="numpy")
    assert low.num_edges == total.num_edges == 58
    assert np.all(low.weights <= total.weights) and np.any(low.weights < total.weights)
    src, dst, _ = low.edges()
    no_loops = read_mtx(GRAPHS / "gapbs-4.mtx", self_loops=False, backend="numpy")
    assert no_loops.num_edges == 58 - np.count_nonzero(src == dst)
    assert no_loops.summary.self_loops_dropped == 36  # self-loop entries, duplicates included


def test_small_mtx(tmp_path):
    graph = read_mtx(write(tmp_path, "small.mtx", SMALL_MTX), backend="numpy")
    assert graph.directed and graph.num_vertices == 4
    assert same_weights(
        edge_weights(graph), {(0, 1): 0.25, (1, 2): 0.0, (2, 0): -20.0, (3, 3): math.nan}
    )


def test_symmetric_pattern_with_both_triangles(tmp_path):
    text = b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n1 2\n3 3\n"
    graph = read_mtx(write(tmp_path, "s.mtx", text), backend="numpy")
    assert not graph.directed and not graph.weighted
    assert set(edge_weights(graph)) == {(0, 1), (1, 0), (2, 2)}


def test_integer_field_crlf_and_inline_comments(tmp_path):
    text = b"%%matrixmarket MATRIX Coordinate integer General\r\n\r\n2 2 2 % size\r\n1 2 7\r\n%c\r\n2 1 -3 % x\r\n"
    graph = read_mtx(write(tmp_path, "i.mtx", text), backend="numpy")
    assert edge_weights(graph) == {(0, 1): 7.0, (1, 0): -3.0}


def test_empty_matrix(tmp_path):
    graph = read_mtx(
        write(tmp_path, "e.mtx", b"%%MatrixMarket matrix coordinate pattern general\n5 5 0\n"),
        backend="numpy",
    )
    assert (graph.num_vertices, graph.num_edges) == (5, 0)


# --- Matrix Market: malformed files ----------------------------------------------------------
HEADER = b"%%MatrixMarket matrix coordinate real general\n"
BAD_MTX = [
    ("empty", b"", 1, "missing '%%MatrixMarket' banner"),
    ("no banner", b"3 3 1\n1 2 1\n", 1, "missing '%%MatrixMarket' banner"),
    ("short banner", b"%%MatrixMarket matrix coordinate\n1 1 0\n", 1, "the banner must read"),
    ("complex", HEADER.replace(b"real", b"complex") + b"1 1 0\n", 1, "field 'complex'"),
    ("unknown symmetry", HEADER.replace(b"general", b"antisymmetric"), 1, "symmetry 'anti"),
    (
        "skew pattern",
        HEADER.replace(b"real general", b"pattern skew-symmetric") + b"2 2 1\n2 1\n",
        1,
        "no values to negate",
    ),
    ("dense", HEADER.replace(b"coordinate", b"array") + b"1 1\n1\n", 1, "format 'array'"),
    ("no size line", HEADER + b"% only a comment\n", 3, "before the size line"),
    ("bad size line", HEADER + b"3 3\n", 2, "bad size line"),
    ("text in size line", HEADER + b"3 x 1\n", 2, "bad size line"),
    ("rectangular", HEADER + b"3 4 1\n1 2 1\n", 2, "3 x 4"),
    ("truncated", HEADER + b"3 3 3\n1 2 1\n2 3 1\n", 5, "after 2 of the 3 entries"),
    ("truncated mid-line", HEADER + b"3 3 2\n1 2 1\n2 3", 4, "expected 3 fields"),
    ("extra entry", HEADER + b"3 3 1\n1 2 1\n2 3 1\n", 4, "more entries than the 1"),
    ("too many fields", HEADER + b"3 3 1\n1 2 1 4\n", 3, "expected 3 fields"),
    (
        "pattern with value",
        HEADER.replace(b"real", b"pattern") + b"3 3 1\n1 2 1\n",
        3,
        "expected 2",
    ),
    ("non-integer id", HEADER + b"3 3 2\n1 2 1\n2.0 3 1\n", 4, "row id '2.0' is not an integer"),
    ("id zero", HEADER + b"3 3 1\n0 1 1\n", 3, "row id 0 out of range 1..3"),
    ("id past n", HEADER + b"3 3 2\n1 2 1\n2 4 1\n", 4, "column id 4 out of range 1..3"),
    ("huge id", HEADER + b"3 3 1\n1 99999999999999999999999 1\n", 3, "out of range 1..3"),
    ("text value", HEADER + b"3 3 1\n1 2 abc\n", 3, "value 'abc' is not a number"),
    (
        "real in integer field",
        HEADER.replace(b"real", b"integer") + b"2 2 1\n1 2 1.5\n",
        3,
        "value '1.5' is not an integer",
    ),
    ("binary", bytes(range(256)) * 4, 1, "missing '%%MatrixMarket' banner"),
    ("binary body", HEADER + b"3 3 1\n\xff\xfe\x00 1 2\n", 3, "row id"),
    ("carriage returns", HEADER + b"3 3 1\r1 2 1\r", 2, "carriage return"),
]


@pytest.mark.parametrize(
    "data, line, problem", [case[1:] for case in BAD_MTX], ids=[case[0] for case in BAD_MTX]
)
def test_malformed_mtx(tmp_path, data, line, problem):
    path = write(tmp_path, "bad.mtx", data)
    with pytest.raises(GraphFormatError) as error:
        read_mtx(path, backend="numpy")
    assert str(error.value).startswith(f"{path}:{line}: ")
    assert problem in error.value.problem
    assert (error.value.path, error.value.line) == (str(path), line)


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_mtx(tmp_path / "absent.mtx")


# --- edge lists ------------------------------------------------------------------------------
def read_pairs(path: Path, base: int) -> list[tuple[int, int]]:
    """An independent parse: the first two fields of every non-blank line, minus ``base``."""
    lines = path.read_text().splitlines()
    return [(int(f[0]) - base, int(f[1]) - base) for f in map(str.split, lines) if f]


@needs_graphs
@pytest.mark.parametrize(
    "name, base, directed, vertices",
    [
        ("gapbs-4.el", 0, True, 14),
        ("USPowerGrid.txt", 1, False, 4941),
        ("wiki-Vote.txt", 0, True, 8298),
        ("p2p-Gnutella08.txt", 0, True, 6301),
        ("email-Eu-core.txt", 0, True, 1005),
        ("polbook.txt", 0, False, 105),
        ("facebook_combined.txt", 0, False, 4039),
        ("luxembourg_osm.headerless.txt", 1, False, 114599),
    ],
)
def test_real_edge_lists(name, base, directed, vertices):
    path = GRAPHS / name
    graph = read_edgelist(path, base=base, directed=directed, backend="numpy")
    pairs = read_pairs(path, base)
    if not directed:
        pairs += [(v, u) for u, v in pairs]
    assert graph.num_vertices == vertices and graph.directed == directed and not graph.weighted
    assert set(edge_weights(graph)) == set(pairs)


@needs_graphs
def test_gapbs_edge_list_equals_its_mtx():
    from_el = read_edgelist(GRAPHS / "gapbs-4.el", vertices="range", backend="numpy")
    from_mtx = read_mtx(GRAPHS / "gapbs-4.mtx", backend="numpy")
    assert edge_weights(from_el) == edge_weights(from_mtx)


@needs_graphs
@pytest.mark.parametrize(
    "name, networkx_graph",
    [
        ("les_miserables.wel", nx.les_miserables_graph),
        ("florentine_families.el", nx.florentine_families_graph),
        ("davis_southern_women.el", nx.davis_southern_women_graph),
    ],
)
def test_networkx_exports(name, networkx_graph):
    graph = read_edgelist(GRAPHS / name, directed=False, backend="numpy")
    expected = nx.convert_node_labels_to_integers(networkx_graph())
    assert graph.weighted == name.endswith(".wel")
    got = graph.to_networkx()
    assert sorted(got.nodes) == sorted(expected.nodes)
    assert {frozenset(e) for e in got.edges} == {frozenset(e) for e in expected.edges}
    if graph.weighted:
        assert all(got[u][v]["weight"] == w for u, v, w in expected.edges(data="weight"))


def test_edge_list_options(tmp_path):
    path = write(tmp_path, "e.csv", b"# header\n1, 2, 0.5\n2,3,4 % note\n\n3 ,1,2\r\n")
    graph = read_edgelist(path, base=1, delimiter=",", num_vertices=5, backend="numpy")
    assert graph.num_vertices == 5 and graph.weighted
    assert edge_weights(graph) == {(0, 1): 0.5, (1, 2): 4.0, (2, 0): 2.0}
    unweighted = read_edgelist(path, base=1, delimiter=",", weighted=False, backend="numpy")
    assert not unweighted.weighted and unweighted.num_vertices == 3


@pytest.mark.parametrize("data", [b"0 1 5\n1 2\n2 0 3\n", b"0 1\n1 2 5\n"])
def test_a_weight_on_some_lines_only_is_refused_naming_the_line(tmp_path, data):
    path = write(tmp_path, "mixed.el", data)
    with pytest.raises(GraphFormatError) as error:
        read_edgelist(path, backend="numpy")
    assert error.value.line == 2 and "line 1" in error.value.problem
    assert "weighted=False" in error.value.problem and "weighted=True" in error.value.problem
    assert not read_edgelist(path, weighted=False, backend="numpy").weighted
    assert read_edgelist(write(tmp_path, "w.el", b"0 1 5\n1 2 6 9\n"), backend="numpy").weighted


@pytest.mark.parametrize("pyarrow", [True, False])
def test_a_mixed_file_is_refused_by_every_parser(tmp_path, monkeypatch, pyarrow):
    if not pyarrow:
        monkeypatch.setattr(graph_io, "_read_pyarrow", lambda *args: None)
    path = write(tmp_path, "mixed.el", b"0 1\n1 2 5\n2 0\n")
    with pytest.raises(GraphFormatError, match="line 1"):
        read_edgelist(path, backend="numpy")


def test_listed_vertices_are_the_ids_in_the_file(tmp_path):
    path = write(tmp_path, "sparse.el", b"# a comment\n10 30\n30 -7\n1000000000000 10\n")
    graph = read_edgelist(path, backend="numpy")
    assert graph.num_vertices == 4
    np.testing.assert_array_equal(graph.cache["ids"], [-7, 10, 30, 10**12])
    ids = graph.cache["ids"]
    src, dst, _ = graph.edges()
    assert sorted(zip(ids[src].tolist(), ids[dst].tolist())) == [(10, 30), (30, -7), (10**12, 10)]
    dense = read_edgelist(write(tmp_path, "d.el", b"3 5\n5 4\n"), backend="numpy")
    np.testing.assert_array_equal(dense.cache["ids"], [3, 4, 5])
    ranged = read_edgelist(write(tmp_path, "r.el", b"3 5\n5 4\n"), vertices="range")
    assert ranged.num_vertices == 6 and "ids" not in ranged.cache
    with pytest.raises(ValueError, match="vertices='range'"):
        read_edgelist(path, vertices="listed", base=1)


def test_a_byte_order_mark_is_not_part_of_the_first_id(tmp_path):
    path = write(tmp_path, "bom.el", b"\xef\xbb\xbf1 2\n2 3\n")
    np.testing.assert_array_equal(read_edgelist(path, backend="numpy").cache["ids"], [1, 2, 3])
    with pytest.raises(GraphFormatError) as error:
        read_edgelist(write(tmp_path, "bad.el", b"\xef\xbb\xbfx 2\n"), backend="numpy")
    assert error.value.line == 1 and "'x'" in error.value.problem


def test_edge_list_without_edges(tmp_path):
    path = write(tmp_path, "c.el", b"# nothing\n\n")
    graph = read_edgelist(path, num_vertices=3, backend="numpy")
    assert (graph.num_vertices, graph.num_edges) == (3, 0)
    with pytest.raises(GraphFormatError, match="no edges .*pass num_vertices"):
        read_edgelist(path, backend="numpy")


BAD_EDGE_LISTS = [
    ("one field", b"0 1\n1\n", {}, 2, "expected 2 fields"),
    ("weight missing", b"0 1 2\n1 2\n", {"weighted": True}, 2, "expected 3 fields"),
    ("non-integer id", b"0 1\n1.0 2\n", {}, 2, "vertex id '1.0' is not an integer"),
    ("text id", b"0 1\n\n# c\nalpha 2\n", {}, 4, "vertex id 'alpha' is not an integer"),
    ("below base", b"1 2\n0 1\n", {"base": 1}, 2, "vertex id 0 is below the base 1"),
    ("negative", b"0 1\n3 -1\n", {"base": 0}, 2, "vertex id -1 is below the base 0"),
    ("past int64", b"0 1\n3 9223372036854775808\n", {}, 2, "does not fit in 64 bits"),
    ("past num_vertices", b"0 1\n1 5\n", {"num_vertices": 3}, 2, "vertex id 5 out of range 0..2"),
    ("text weight", b"0 1 2\n1 2 heavy\n", {}, 2, "weight 'heavy' is not a number"),
    ("wrong delimiter", b"0,1\n1;2\n", {"delimiter": ","}, 2, "expected 2 fields"),
    ("binary", b"0 1\n\x00\xff\xfe\x01 2\n", {}, 2, "is not an integer"),
    ("carriage returns", b"0 1\r1 2\r", {}, 1, "carriage return"),
    # (where every other line ends in LF, pyarrow's reader had split it there, silently)
    ("carriage return in a line", b"0 0\n0 0\r0 0\n0 0\n", {}, 2, "carriage return"),
    # (pyarrow's reader had taken both as hexadecimal integers, silently)
    ("hexadecimal id", b"1 0\n0x1 0\n", {}, 2, "vertex id '0x1' is not an integer"),
    ("hexadecimal id, upper", b"0 0X1F\n", {}, 1, "vertex id '0X1F' is not an integer"),
]


@pytest.mark.parametrize(
    "data, options, line, problem",
    [case[1:] for case in BAD_EDGE_LISTS],
    ids=[case[0] for case in BAD_EDGE_LISTS],
)
def test_malformed_edge_list(tmp_path, data, options, line, problem):
    path = write(tmp_path, "bad.el", data)
    with pytest.raises(GraphFormatError) as error:
        read_edgelist(path, backend="numpy", **options)
    assert str(error.value).startswith(f"{path}:{line}: ")
    assert problem in error.value.problem


@pytest.mark.parametrize("options", [{"base": 2}, {"num_vertices": -1}])
def test_edge_list_bad_options(tmp_path, options):
    with pytest.raises(ValueError, match="read_edgelist"):
        read_edgelist(write(tmp_path, "e.el", b"0 1\n"), **options)


# --- npz -------------------------------------------------------------------------------------
def assert_same_graph(got: Graph, expected: Graph) -> None:
    assert got.num_vertices == expected.num_vertices and got.directed == expected.directed
    assert got.summary == expected.summary
    for name in ("offsets", "indices"):
        a, b = getattr(got, name), getattr(expected, name)
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert got.weighted == expected.weighted
    if expected.weighted:
        assert got.weights.dtype == expected.weights.dtype
        assert np.array_equal(got.weights, expected.weights, equal_nan=True)


@pytest.mark.parametrize(
    "graph",
    [
        Graph.from_edges(
            [0, 1, 1, 3], [1, 2, 2, 3], [1.0, np.nan, 0.5, 2.0], num_vertices=6, backend="numpy"
        ),
        Graph.from_edges([0, 1, 2], [1, 2, 2], directed=False, self_loops=False, backend="numpy"),
        Graph.from_edges([], [], num_vertices=0, backend="numpy"),
        generators.rmat(6, 4, weights=True, seed=2, backend="numpy"),
    ],
    ids=["directed weighted", "undirected", "empty", "rmat float32"],
)
def test_npz_round_trip(tmp_path, graph: Graph):
    path = tmp_path / "graph.bin"  # kept as named: no .npz appended
    save_npz(graph, path)
    assert path.exists()
    assert_same_graph(load_npz(path, backend="numpy"), graph)


def test_npz_round_trip_keeps_summary_and_default_summary(tmp_path):
    merged = Graph.from_edges([0, 0, 1, 1, 1], [0, 0, 2, 2, 1], directed=False, backend="numpy")
    assert merged.summary.duplicates_merged == 2 and merged.summary.self_loops == 3
    bare = Graph(merged.forward, 3, directed=False, backend=merged.backend)  # summary: zeros
    for graph in (merged, bare):
        save_npz(graph, tmp_path / "g.npz")
        assert_same_graph(load_npz(tmp_path / "g.npz", backend="numpy"), graph)


def corrupt_archive(tmp_path: Path, change) -> Path:
    graph = Graph.from_edges([0, 1, 2], [1, 2, 0], [1.0, 2.0, 3.0], directed=False, backend="numpy")
    save_npz(graph, tmp_path / "good.npz")
    with np.load(tmp_path / "good.npz") as archive:
        arrays = dict(archive)
    change(arrays)
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize(
    "change, problem",
    [
        (lambda a: a.pop("bspgraph_npz_version"), "'bspgraph_npz_version' is missing"),
        (lambda a: a.update(bspgraph_npz_version=np.int64(99)), "version 99"),
        (lambda a: a.update(num_vertices=np.int64(4)), "offsets for 4 vertices"),
        (lambda a: a.update(offsets=np.array([0, 2, 1, 6])), "offsets must rise"),
        (lambda a: a.update(indices=np.array([1, 2, 0, 2, 0, 5])), "edge target outside"),
        (lambda a: a.update(indices=np.array([2, 1, 0, 2, 0, 1])), "sorted and distinct"),
        (lambda a: a.update(weights=np.arange(6.0)), "both directions"),
        (lambda a: a.update(weights=np.ones(5)), "5 weights for 6 edges"),
        (lambda a: a.update(weights=np.array(["x"] * 6)), "'weights' must be 1-D"),
        (lambda a: a.update(directed=np.int64(1)), "'directed' must be a scalar"),
    ],
)
def test_npz_corrupt_arrays(tmp_path, change, problem):
    path = corrupt_archive(tmp_path, change)
    full_check_only = problem in ("sorted and distinct", "both directions")
    if full_check_only:  # what only a rebuild confirms: behind validate=True
        load_npz(path, backend="numpy")
    with pytest.raises(GraphFormatError, match="not a valid bspgraph npz") as error:
        load_npz(path, backend="numpy", validate=full_check_only)
    assert problem in str(error.value) and str(error.value).startswith(f"{path}: ")


def test_npz_cheap_checks_keep_the_stored_arrays(tmp_path):
    graph = generators.rmat(8, 4, seed=1, backend="numpy")
    save_npz(graph, tmp_path / "g.npz")
    for validate in (False, True):
        assert_same_graph(load_npz(tmp_path / "g.npz", backend="numpy", validate=validate), graph)


@pytest.mark.parametrize("data", [b"", b"not an archive", b"PK\x03\x04garbage"])
def test_npz_not_an_archive(tmp_path, data):
    path = write(tmp_path, "junk.npz", data)
    with pytest.raises(GraphFormatError, match="not a readable npz archive"):
        load_npz(path, backend="numpy")


# --- fuzzing: a Graph or a GraphFormatError, nothing else, with or without the fast path -----------------------------------
VALID_TEXTS = [
    SMALL_MTX,
    b"%%MatrixMarket matrix coordinate pattern symmetric\n5 5 4\n2 1\n3 2\n5 5\n4 1\n",
    b"%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 3 -4\n3 2 12\n",
]
NOISE = st.sampled_from(list(b"0123456789 \t\n\r%.-+eEnax\x00\xff#,"))


@st.composite
def mutated_texts(draw):
    data = bytearray(draw(st.sampled_from(VALID_TEXTS)))
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["replace", "insert", "delete", "truncate"]))
        if action == "replace":
            data[position] = draw(NOISE)
        elif action == "insert":
            data.insert(position, draw(NOISE))
        elif action == "delete":
            del data[position]
        else:
            del data[position:]
        if not data:
            break
    return bytes(data)


def outcome(read, path: Path):
    """What ``read`` makes of ``path``: the error message, or the graph's edges."""
    try:
        graph = read(path, backend="numpy")
    except GraphFormatError as error:
        assert str(error).startswith(f"{path}:")
        return str(error)
    src, dst, weight = graph.edges()
    return graph.num_vertices, graph.directed, src.tolist(), dst.tolist(), weight


def same_outcome(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if a[:4] != b[:4] or (a[4] is None) != (b[4] is None):
        return False
    return a[4] is None or np.array_equal(a[4], b[4], equal_nan=True)


@contextlib.contextmanager
def time_limit(seconds: float):
    """Fail, rather than hang, when the body runs longer than ``seconds``."""

    def expire(signum, frame):
        raise TimeoutError(f"a read took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


MTX_FAST_PATHS = ("_load_mtx_library", "_load_mtx_fast")  # fast_matrix_market, numpy.loadtxt
EDGE_LIST_FAST_PATHS = ("_load_edgelist_fast",)


def read_all_ways(path: Path) -> None:
    """Each reader gives a Graph or a GraphFormatError, the same with its fast path off, and
    never runs for more than 20 s."""
    for read, fast_paths in ((read_mtx, MTX_FAST_PATHS), (read_edgelist, EDGE_LIST_FAST_PATHS)):
        with time_limit(20):
            result = outcome(read, path)
            for declined in range(1, len(fast_paths) + 1):
                with contextlib.ExitStack() as stack:
                    for fast_path in fast_paths[:declined]:
                        stack.enter_context(
                            mock.patch.object(graph_io, fast_path, return_value=None)
                        )
                    assert same_outcome(result, outcome(read, path))


@examples(200)
@given(mutated_texts())
def test_fuzz_mutated_mtx(tmp_path_factory, data):
    read_all_ways(write(tmp_path_factory.mktemp("fuzz"), "f.mtx", data))


@examples(200)
@given(st.binary(max_size=300))
def test_fuzz_random_bytes(tmp_path_factory, data):
    read_all_ways(write(tmp_path_factory.mktemp("fuzz"), "f.mtx", data))
    path = write(tmp_path_factory.mktemp("fuzz"), "f.npz", data)
    with pytest.raises(GraphFormatError):
        load_npz(path, backend="numpy")


# --- fuzzing by grammar: valid files read back exactly, one defect is named at its line --------
# A drawn file is valid, or holds exactly one defect on a known line. A valid file must give the
# graph built from its entries by a separate oracle; a defective one a GraphFormatError naming
# that line. Host memory is patched to 1 MiB, so that ids and sizes past what fits (2**31 and
# beyond) are refused at once rather than tried.
SMALL_MEMORY = 2**20
HUGE = [str(2**31), str(2**31 + 5), str(2**63), str(2**64), "99999999999999999999999"]
MTX_BAD_IDS = ["0", "-1", "1.0", "1e3", "0x1", "x", "1_0", "٣", *HUGE]
MTX_BAD_REALS = ["abc", "1_0", "0x1p3", "1#2", "--1", "1e", "e5", "1,5", "i"]
MTX_BAD_INTEGERS = ["1.5", "1e3", "abc", "nan", "inf", "0x10", "1_0"]
REALS = ["1", "-2.5", "0", "1e-3", "NaN", "inf", "-Inf", "+3.", ".5", "1E400", "-0.0", "007"]
INTEGERS = ["7", "-3", "+4", "0", "9223372036854775807", "99999999999999999999", "-012"]
SPACES = st.sampled_from([" ", "  ", "\t", " \t "])


def spell_id(draw, value: int) -> str:
    return draw(st.sampled_from([str(value), f"+{value}", f"00{value}"]))


def min_weight(old: float | None, new: float) -> float:
    """What a duplicate keeps: the smaller weight, NaN only when every copy is NaN."""
    if old is None or (math.isnan(old) and not math.isnan(new)):
        return new
    return old if math.isnan(new) else min(old, new)


@st.composite
def mtx_files(draw):
    """(bytes, expected): expected is ("graph", n, directed, weighted, {(u, v): w}) or
    ("error", line)."""
    n = draw(st.integers(1, 6))
    field = draw(st.sampled_from(MTX_FIELDS))
    symmetric = draw(st.booleans())
    count = draw(st.integers(0, 8))
    entries = []
    for _ in range(count):
        i, j = draw(st.integers(1, n)), draw(st.integers(1, n))
        if field == "pattern":
            value_text, value = None, 1.0
        elif field == "integer":
            value_text = draw(st.sampled_from(INTEGERS))
            value = float(int(value_text))
        else:
            value_text = draw(st.sampled_from(REALS))
            value = float(value_text)
        entries.append([spell_id(draw, i), spell_id(draw, j), value_text, i - 1, j - 1, value])

    banner = ["%%MatrixMarket", "matrix", "coordinate", field, MTX_SYMMETRIES[symmetric]]
    if draw(st.booleans()):
        banner = [word.upper() if draw(st.booleans()) else word for word in banner]
    size = [str(n), str(n), str(count)]
    defect = draw(
        st.sampled_from(
            ["none"] * 6
            + ["banner", "size", "count", "huge size", "id", "value", "fields", "carriage return"]
        )
    )
    if defect in ("id", "value", "fields") and not entries:
        defect = "none"
    if defect == "value" and field == "pattern":
        defect = "fields"
    bad_entry = draw(st.integers(0, max(count - 1, 0)))
    if defect == "banner":
        # not "hermitian": a supported symmetry (read as symmetric), so no defect
        banner[draw(st.integers(1, 4))] = draw(st.sampled_from(["array", "complex", "vector", "x"]))
    elif defect == "size":
        size = draw(
            st.sampled_from(
                [
                    [str(n), str(n)],
                    [str(n), str(n + 1), str(count)],
                    [str(n), str(n), str(count), "1"],
                    ["-1", "-1", str(count)],
                    [f"{n}.0", f"{n}.0", str(count)],
                ]
            )
        )
    elif defect == "count":
        size[2] = draw(
            st.sampled_from(
                [str(count + 1), "99999999999999999999"] + ([str(count - 1)] if count else [])
            )
        )
    elif defect == "huge size":
        size[0] = size[1] = draw(st.sampled_from([str(SMALL_MEMORY), *HUGE]))
    elif defect == "id":
        bad_id = draw(st.sampled_from([*MTX_BAD_IDS, str(n + 1)]))
        entries[bad_entry][draw(st.integers(0, 1))] = bad_id
    elif defect == "value":
        bad = MTX_BAD_INTEGERS if field == "integer" else MTX_BAD_REALS
        entries[bad_entry][2] = draw(st.sampled_from(bad))
    elif defect == "fields":
        entries[bad_entry][2] = "1 2" if field != "pattern" else "1"
        if field != "pattern" and draw(st.booleans()):
            entries[bad_entry][2] = None  # one field short

    lines: list[str] = []
    prefix = "\ufeff" if draw(st.booleans()) else ""
    lines.append(prefix + draw(SPACES).join(banner))
    for _ in range(draw(st.integers(0, 2))):
        lines.append(draw(st.sampled_from(["% a comment", "%", "", "%%GraphBLAS type double"])))
    size_line = len(lines) + 1
    lines.append(draw(SPACES).join(size) + draw(st.sampled_from(["", " % size", " "])))
    entry_lines = []
    for entry in entries:
        while draw(st.integers(0, 4)) == 4:
            lines.append(draw(st.sampled_from(["", "% between", "   "])))
        fields = [text for text in entry[:3] if text is not None]
        lines.append(draw(SPACES).join(fields) + draw(st.sampled_from(["", " ", " % note"])))
        entry_lines.append(len(lines))
    while draw(st.integers(0, 3)) == 3:
        lines.append(draw(st.sampled_from(["", "% trailing comment"])))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    cr_line = draw(st.integers(1, len(lines)))
    text = ending.join(lines) + draw(st.sampled_from([ending, ""]))
    if defect == "carriage return":
        text = ending.join(lines[: cr_line - 1] + [lines[cr_line - 1] + "\rx"] + lines[cr_line:])
        text += ending
    data = text.encode("utf-8")  # the prefix, if any, is a UTF-8 byte order mark

    if defect == "none":
        edges: dict[tuple[int, int], float] = {}
        for *_, u, v, value in entries:
            for key in [(u, v), (v, u)] if symmetric else [(u, v)]:
                edges[key] = min_weight(edges.get(key), value)
        return data, ("graph", n, not symmetric, field != "pattern", edges)
    if defect in ("banner",):
        return data, ("error", 1)
    if defect in ("size", "huge size"):
        return data, ("error", size_line)
    if defect == "carriage return":
        return data, ("error", cr_line)
    if defect == "count":
        declared = int(size[2])
        if declared < count:
            return data, ("error", entry_lines[declared])
        return data, ("error", (entry_lines[-1] if entry_lines else size_line) + 1)
    return data, ("error", entry_lines[bad_entry])


EDGE_BAD_IDS = ["-1", "x", "1.0", "1e3", "0x1", "", *HUGE]
EDGE_BAD_WEIGHTS = ["abc", "1_0", "0x1p3", "--1", "1e", "w"]


@st.composite
def edge_list_files(draw):
    """(bytes, options, expected) for read_edgelist; expected as for :func:`mtx_files`."""
    base = draw(st.sampled_from([0, 1]))
    delimiter = draw(st.sampled_from([None, ","]))
    count = draw(st.integers(1, 8))
    weighted = draw(st.booleans())
    rows = []
    for _ in range(count):
        u, v = draw(st.integers(0, 6)), draw(st.integers(0, 6))
        weight_text = draw(st.sampled_from(REALS)) if weighted else None
        extra = draw(st.sampled_from([None, None, None, "x", "3"])) if weighted else None
        rows.append([spell_id(draw, u + base), spell_id(draw, v + base), weight_text, extra, u, v])
    defect = draw(
        st.sampled_from(["none"] * 4 + ["id", "base", "weight", "one field", "carriage return"])
    )
    bad = draw(st.integers(0, count - 1))
    if defect == "id":
        rows[bad][draw(st.integers(0, 1))] = draw(st.sampled_from(EDGE_BAD_IDS))
        if rows[bad][0] == "" or rows[bad][1] == "":
            defect = "one field"  # an empty id is a missing field
            rows[bad][:4] = [rows[bad][0] or rows[bad][1], None, None, None]
    elif defect == "base":
        rows[bad][0] = str(base - 1)
    elif defect == "weight":
        if not weighted:
            defect = "none"
        else:
            rows[bad][2] = draw(st.sampled_from(EDGE_BAD_WEIGHTS))
    elif defect == "one field":
        rows[bad][1:4] = [None, None, None]
    separator = st.sampled_from([",", ", ", " ,"]) if delimiter else SPACES
    lines, row_lines = [], []
    for row in rows:
        while draw(st.integers(0, 4)) == 4:
            lines.append(draw(st.sampled_from(["", "# comment", "% comment", "  "])))
        fields = [text for text in row[:4] if text is not None]
        lines.append(draw(separator).join(fields) + draw(st.sampled_from(["", " # note"])))
        row_lines.append(len(lines))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    if defect == "carriage return":
        index = row_lines[bad] - 1
        lines[index] = lines[index] + "\r" + lines[index]
    data = (ending.join(lines) + ending).encode("latin-1")
    options = {"base": base, "delimiter": delimiter}
    if defect == "none":
        edges: dict[tuple[int, int], float] = {}
        for row in rows:
            edges[(row[4], row[5])] = min_weight(
                edges.get((row[4], row[5])), float(row[2]) if weighted else 1.0
            )
        n = 1 + max(max(row[4], row[5]) for row in rows)
        return data, options, ("graph", n, True, weighted, edges)
    return data, options, ("error", row_lines[bad])


def check_expected(read, path: Path, expected, **options) -> None:
    """``read`` (fast path on and off) gives the expected graph or error, within 20 s."""
    fast = MTX_FAST_PATHS if read is read_mtx else EDGE_LIST_FAST_PATHS
    for declined in range(len(fast) + 1):
        patches = [mock.patch.object(graph_io, "_available_memory", return_value=SMALL_MEMORY)]
        patches += [
            mock.patch.object(graph_io, name, return_value=None) for name in fast[:declined]
        ]
        with contextlib.ExitStack() as stack, time_limit(20):
            for patch in patches:
                stack.enter_context(patch)
            if expected[0] == "error":
                with pytest.raises(GraphFormatError) as error:
                    read(path, backend="numpy", **options)
                assert (error.value.path, error.value.line) == (str(path), expected[1]), str(
                    error.value
                )
                assert str(error.value).startswith(f"{path}:{expected[1]}: ")
                continue
            graph = read(path, backend="numpy", **options)
        _, n, directed, weighted, edges = expected
        assert (graph.num_vertices, graph.directed, graph.weighted) == (n, directed, weighted)
        assert same_weights(edge_weights(graph), edges)


@examples(300)
@given(mtx_files())
def test_fuzz_mtx_grammar(tmp_path_factory, case):
    data, expected = case
    check_expected(read_mtx, write(tmp_path_factory.mktemp("fuzz"), "g.mtx", data), expected)


@examples(300)
@given(edge_list_files())
def test_fuzz_edge_list_grammar(tmp_path_factory, case):
    data, options, expected = case
    path = write(tmp_path_factory.mktemp("fuzz"), "g.el", data)
    check_expected(read_edgelist, path, expected, **options)


# --- every truncation of a valid file -----------------------------------------------------------
TRUNCATED_SOURCES = [
    *VALID_TEXTS,
    b"# an edge list\n0 1 0.5\n1 12 2\n\n12 3 -1e3\r\n3 0 7 extra\n",
    b"%%MatrixMarket matrix coordinate real symmetric\n% c\n12 12 3\n12 1 2.5\n3 3 1e-2\n10 9 7\n",
]


@pytest.mark.parametrize("source", range(len(TRUNCATED_SOURCES)))
def test_every_truncation(tmp_path, source):
    """Each prefix of a valid file reads as a graph or as a GraphFormatError, the same with the
    fast path off; a Matrix Market prefix that still reads is the whole file's graph, bar the
    last value's digits."""
    text = TRUNCATED_SOURCES[source]
    full = outcome(read_mtx, write(tmp_path, "full.mtx", text))
    for cut in range(len(text)):
        path = write(tmp_path, f"cut{cut}.mtx", text[:cut])
        read_all_ways(path)
        got = outcome(read_mtx, path)
        if not isinstance(got, str) and not isinstance(full, str):
            assert got[:4] == full[:4], cut  # vertices, direction and edges: all there


@pytest.mark.parametrize(
    "data, line, problem",
    [
        (b"0 1\n5 99999999999\n", 2, "implies 100000000000 vertices; bspgraph supports at most"),
        (b"0 1\n5 99999999999999999999999\n", 2, "bspgraph supports at most 3000000000"),
        (b"0 1\n1 2147483648\n", 2, "vertex id 2147483648 implies 2147483649 vertices, which need"),
    ],
)
def test_edge_list_ids_past_what_fits(tmp_path, monkeypatch, data, line, problem):
    monkeypatch.setattr(graph_io, "_available_memory", lambda: 16 * 2**30)
    path = write(tmp_path, "huge.el", data)
    with pytest.raises(GraphFormatError) as error:
        read_edgelist(path, vertices="range", backend="numpy")
    assert error.value.line == line and problem in error.value.problem
    assert "GiB of memory available" in str(error.value) or "at most" in str(error.value)


@pytest.mark.parametrize(
    "size, problem",
    [
        (b"2147483653 2147483653 1", "declares 2147483653 vertices, which need about 48.0 GiB"),
        (b"99999999999 99999999999 0", "declares 99999999999 vertices; bspgraph supports at most"),
    ],
)
def test_mtx_size_past_what_fits(tmp_path, monkeypatch, size, problem):
    monkeypatch.setattr(graph_io, "_available_memory", lambda: 16 * 2**30)
    path = write(tmp_path, "huge.mtx", HEADER.replace(b"real", b"pattern") + size + b"\n1 2\n")
    with pytest.raises(GraphFormatError) as error:
        read_mtx(path, backend="numpy")
    assert error.value.line == 2 and problem in error.value.problem
    assert "16.0 GiB of memory available" in str(error.value) or "at most" in str(error.value)


def test_edge_list_num_vertices_past_what_fits(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_io, "_available_memory", lambda: 2**30)
    path = write(tmp_path, "e.el", b"0 1\n")
    with pytest.raises(ValueError, match=r"num_vertices=100000000\).*need about 2\.2 GiB"):
        read_edgelist(path, num_vertices=10**8)
    monkeypatch.setattr(graph_io, "_available_memory", lambda: None)  # unknown: only the 3e9
    with pytest.raises(ValueError, match="at most 3000000000"):
        read_edgelist(path, num_vertices=10**10)


# --- formats told by content, compression, symmetries, the library path ------------------------
KARATE_TEXT = GRAPHS / "karate.mtx"


@needs_graphs
@pytest.mark.parametrize("name", ["KARATE.MTX", "karate.txt", "karate.mtx.gz", "karate.bz2"])
def test_format_and_compression_are_told_by_content(tmp_path, name):
    import bz2
    import gzip

    data = KARATE_TEXT.read_bytes()
    if name.endswith(".gz"):
        data = gzip.compress(data)
    elif name.endswith(".bz2"):
        data = bz2.compress(data)
    path = write(tmp_path, name, data)
    assert graph_io.sniff_format(path) == "mtx"
    graph = read_mtx(path, backend="numpy")
    assert edge_weights(graph) == edge_weights(read_mtx(KARATE_TEXT, backend="numpy"))


def test_sniff_format(tmp_path):
    save_npz(Graph.from_edges([0], [1], backend="numpy"), tmp_path / "g.bin")
    assert graph_io.sniff_format(tmp_path / "g.bin") == "npz"
    assert graph_io.sniff_format(write(tmp_path, "g.mtx", b"0 1\n")) == "edgelist"
    assert graph_io.sniff_format(write(tmp_path, "b", b"\xef\xbb\xbf%%matrixmarket x\n")) == "mtx"
    with pytest.raises(IsADirectoryError, match="is a directory"):
        graph_io.sniff_format(tmp_path)


def test_damaged_gzip_is_a_format_error(tmp_path):
    path = write(tmp_path, "g.mtx.gz", b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(GraphFormatError, match="damaged compressed data"):
        read_mtx(path, backend="numpy")


def test_skew_symmetric_and_hermitian(tmp_path):
    skew = HEADER.replace(b"general", b"skew-symmetric") + b"3 3 2\n2 1 5\n3 1 -1.5\n"
    graph = read_mtx(write(tmp_path, "k.mtx", skew), backend="numpy")
    assert graph.directed
    expected = {(1, 0): 5.0, (0, 1): -5.0, (2, 0): -1.5, (0, 2): 1.5}
    assert edge_weights(graph) == expected
    matrix = scipy.io.mmread(tmp_path / "k.mtx").tocoo()  # the same matrix
    assert edge_weights(graph) == dict(
        zip(zip(matrix.row.tolist(), matrix.col.tolist()), matrix.data.tolist())
    )
    hermitian = HEADER.replace(b"general", b"hermitian") + b"3 3 2\n2 1 5\n3 3 1\n"
    graph = read_mtx(write(tmp_path, "h.mtx", hermitian), backend="numpy")
    assert not graph.directed and edge_weights(graph) == {(1, 0): 5.0, (0, 1): 5.0, (2, 2): 1.0}


@pytest.mark.parametrize(
    "body, library",
    [
        (b"3 3 2\n1 2 4\n3 1 7\n", True),  # plain digits: fast_matrix_market
        (b"3 3 2\n1 2 4\r\n3 1 7\n", False),  # anything else: numpy.loadtxt or the scan
        (b"3 3 2\n1 2 4 9\n3 1\n", False),  # 5 fields in 2 lines: one line has too many
        (b"3 3 2\n1 2 -4\n3 1 7\n", False),
    ],
)
def test_library_parses_only_plain_bodies(tmp_path, body, library):
    path = write(tmp_path, "p.mtx", HEADER.replace(b"real", b"integer") + body)
    with open(path, "rb") as stream:
        header = graph_io._read_mtx_header(stream, str(path))
        assert (graph_io._load_mtx_library(str(path), stream, header) is not None) == library


@pytest.mark.parametrize("field", [b"real", b"integer", b"pattern"])
@pytest.mark.parametrize("duplicates", ["min", "sum"])
@pytest.mark.parametrize("self_loops", [True, False])
def test_library_equals_the_scan(tmp_path, field, duplicates, self_loops):
    """An undirected file parsed by fast_matrix_market (one triangle, mirrored by the build,
    rows unsorted, self-loops twice until one copy goes) gives the graph and summary of the
    line scan."""
    pytest.importorskip("fast_matrix_market")
    entries = [(2, 1, 5), (3, 3, 2), (1, 2, 4), (3, 3, 7), (4, 3, 1), (4, 1, 9), (2, 2, 3)]
    lines = [f"{i} {j}" if field == b"pattern" else f"{i} {j} {v}" for i, j, v in entries]
    body = f"4 4 {len(entries)}\n" + "\n".join(lines) + "\n"
    banner = HEADER.replace(b"general", b"symmetric").replace(b"real", field)
    path = write(tmp_path, "s.mtx", banner + body.encode())
    with open(path, "rb") as stream:
        header = graph_io._read_mtx_header(stream, str(path))
        assert graph_io._load_mtx_library(str(path), stream, header) is not None
    options = {"duplicates": duplicates, "self_loops": self_loops, "backend": "numpy"}
    graph = read_mtx(path, **options)
    with mock.patch.object(graph_io, "_load_mtx_library", return_value=None):
        scanned = read_mtx(path, **options)
    assert edge_weights(graph) == edge_weights(scanned) and graph.summary == scanned.summary
    assert graph.summary.self_loops == (3 if self_loops else 0)
    for row in range(4):  # rows sorted and distinct
        targets = graph.indices[graph.offsets[row] : graph.offsets[row + 1]]
        assert np.all(np.diff(targets) > 0)


@pytest.mark.parametrize(
    "field, value", [(b"integer", b"1.5"), (b"real", b"1e"), (b"real", b"1.2.3"), (b"real", b"1_0")]
)
def test_what_the_library_would_misread_is_named(tmp_path, field, value):
    path = write(tmp_path, "m.mtx", HEADER.replace(b"real", field) + b"2 2 1\n1 2 " + value + b"\n")
    with pytest.raises(GraphFormatError) as error:
        read_mtx(path, backend="numpy")
    assert error.value.line == 3 and "is not" in error.value.problem


@pytest.mark.parametrize("name", ["g.el", "plain.gz", "PLAIN.BZ2"])
@pytest.mark.parametrize(
    "data",
    [b"0 1\n1 2\n", b"# c\n0 1\n1 2 # e\n", b"% c\n0 1\n1 2\n", b"# c\n% d\n0 1 % e\n1 2\n"],
)
def test_edge_list_fast_path_comments_and_names(tmp_path, name, data):
    """numpy reads the file by its path with only the comment characters it holds, unless the
    name would make numpy decompress a plain file; the graph is the line scan's."""
    path = write(tmp_path, name, data)
    with mock.patch.object(graph_io, "_scan_edgelist", side_effect=AssertionError("declined")):
        graph = read_edgelist(path, backend="numpy")
    assert edge_weights(graph) == {(0, 1): 1.0, (1, 2): 1.0}
    with open(path, "rb") as stream:
        assert graph_io._text_facts(stream, "#%")[1] == "".join(
            mark for mark in "#%" if mark.encode() in data
        )


def test_float_ids_refused_on_every_numpy(tmp_path):
    """numpy < 2 reads "1.7" as the integer 1 with only a DeprecationWarning; it is declined."""
    path = write(tmp_path, "f.el", b"0 1\n1.7 2\n")
    with pytest.raises(GraphFormatError, match=r":2: vertex id '1\.7' is not an integer"):
        read_edgelist(path, backend="numpy")


@pytest.mark.parametrize(
    "data, base, vertices",
    [
        (b"1 2\n2 3\n3 1\n", 1, 3),  # no 0, largest id = number of ids: 1-based
        (b"0 1\n1 2\n", 0, 3),
        (b"1 2\n2 4\n", 0, 5),  # 3 is missing: 0-based, vertices 0 and 3 isolated
    ],
)
def test_edge_list_base_auto(tmp_path, data, base, vertices):
    graph = read_edgelist(write(tmp_path, "a.el", data), base="auto", backend="numpy")
    assert graph.cache["base"] == base and graph.num_vertices == vertices
    explicit = read_edgelist(tmp_path / "a.el", base=base, backend="numpy")
    assert edge_weights(graph) == edge_weights(explicit)
    assert graph.summary == explicit.summary


@needs_graphs
def test_us_power_grid_base_auto_undirected_matches_networkx():
    graph = read_edgelist(GRAPHS / "USPowerGrid.txt", base="auto", directed=False, backend="numpy")
    expected = nx.read_edgelist(GRAPHS / "USPowerGrid.txt", nodetype=int)
    assert graph.cache["base"] == 1 and graph.num_vertices == expected.number_of_nodes() == 4941
    assert {frozenset(e) for e in graph.to_networkx().edges} == {
        frozenset((u - 1, v - 1)) for u, v in expected.edges
    }
