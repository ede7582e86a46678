"""Readers and npz files: the real graphs in ../shared/graphs, malformed files, fuzzing."""

import math
from pathlib import Path
from unittest import mock

import networkx as nx
import numpy as np
import pytest
import scipy.io
from hypothesis import given, settings
from hypothesis import strategies as st

import bspgraph.graph.io as graph_io
from bspgraph.exceptions import GraphFormatError
from bspgraph.graph import Graph, generators, load_npz, read_edgelist, read_mtx, save_npz

GRAPHS = Path(__file__).resolve().parents[2].parent / "shared" / "graphs"
needs_graphs = pytest.mark.skipif(not GRAPHS.is_dir(), reason=f"{GRAPHS} is absent")
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
    ("hermitian", HEADER.replace(b"general", b"hermitian"), 1, "symmetry 'hermitian'"),
    ("skew", HEADER.replace(b"general", b"skew-symmetric"), 1, "symmetry 'skew-symmetric'"),
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
    from_el = read_edgelist(GRAPHS / "gapbs-4.el", backend="numpy")
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


def test_weighted_only_when_every_line_has_a_weight(tmp_path):
    path = write(tmp_path, "mixed.el", b"0 1 5\n1 2\n")
    assert not read_edgelist(path, backend="numpy").weighted
    assert read_edgelist(write(tmp_path, "w.el", b"0 1 5\n1 2 6 9\n"), backend="numpy").weighted


def test_edge_list_without_edges(tmp_path):
    graph = read_edgelist(
        write(tmp_path, "c.el", b"# nothing\n\n"), num_vertices=3, backend="numpy"
    )
    assert (graph.num_vertices, graph.num_edges) == (3, 0)


BAD_EDGE_LISTS = [
    ("one field", b"0 1\n1\n", {}, 2, "expected 2 fields"),
    ("weight missing", b"0 1 2\n1 2\n", {"weighted": True}, 2, "expected 3 fields"),
    ("non-integer id", b"0 1\n1.0 2\n", {}, 2, "vertex id '1.0' is not an integer"),
    ("text id", b"0 1\n\n# c\nalpha 2\n", {}, 4, "vertex id 'alpha' is not an integer"),
    ("below base", b"1 2\n0 1\n", {"base": 1}, 2, "vertex id 0 is below the base 1"),
    ("negative", b"0 1\n3 -1\n", {}, 2, "vertex id -1 is below the base 0"),
    ("past num_vertices", b"0 1\n1 5\n", {"num_vertices": 3}, 2, "vertex id 5 out of range 0..2"),
    ("text weight", b"0 1 2\n1 2 heavy\n", {}, 2, "weight 'heavy' is not a number"),
    ("wrong delimiter", b"0,1\n1;2\n", {"delimiter": ","}, 2, "expected 2 fields"),
    ("binary", b"0 1\n\x00\xff\xfe\x01 2\n", {}, 2, "is not an integer"),
    ("carriage returns", b"0 1\r1 2\r", {}, 1, "carriage return"),
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
    with pytest.raises(GraphFormatError, match="not a valid bspgraph npz") as error:
        load_npz(path, backend="numpy")
    assert problem in str(error.value) and str(error.value).startswith(f"{path}: ")


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


def read_all_ways(path: Path) -> None:
    """Each reader gives a Graph or a GraphFormatError, the same with its fast path off."""
    for read, fast_path in ((read_mtx, "_load_mtx_fast"), (read_edgelist, "_load_edgelist_fast")):
        result = outcome(read, path)
        with mock.patch.object(graph_io, fast_path, return_value=None):
            assert same_outcome(result, outcome(read, path))


@settings(max_examples=200, deadline=None)
@given(mutated_texts())
def test_fuzz_mutated_mtx(tmp_path_factory, data):
    read_all_ways(write(tmp_path_factory.mktemp("fuzz"), "f.mtx", data))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_random_bytes(tmp_path_factory, data):
    read_all_ways(write(tmp_path_factory.mktemp("fuzz"), "f.mtx", data))
    path = write(tmp_path_factory.mktemp("fuzz"), "f.npz", data)
    with pytest.raises(GraphFormatError):
        load_npz(path, backend="numpy")
