"""Files and the command line without silent guesses (issue 52): each defect as its command."""

import csv
import json
import shlex
from pathlib import Path

import networkx as nx
import pytest
from command_line import GRAPHS, bspgraph, needs_graphs

from bspgraph import cli


def call(capsys, *args):
    """``bspgraph ARGS`` in this process: (exit status, stdout, stderr)."""
    try:
        status = cli.main([str(arg) for arg in args])
    except SystemExit as exit_:  # argparse's usage errors
        status = exit_.code
    out, err = capsys.readouterr()
    return status, out, err


def summary_of(text: str) -> dict:
    return dict(field.split("=", 1) for field in shlex.split(text))


def read_csv(path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="") as stream:
        rows = list(csv.reader(stream))
    return rows[0], rows[1:]


@pytest.fixture
def mixed(tmp_path):
    """The issue's file: one line of three without a weight."""
    path = tmp_path / "m.txt"
    path.write_text("0 1 1.0\n1 2\n2 0 3\n")
    return path


# --- silent guesses -----------------------------------------------------------------------------
def test_a_line_without_a_weight_among_weighted_ones_is_an_error_naming_it(capsys, mixed, tmp_path):
    status, out, err = call(capsys, "run", "sssp", mixed, "--output", tmp_path / "d.csv")
    assert status == 1 and not out
    assert err.count("\n") == 1
    assert f"{mixed}:2:" in err and "--weighted" in err and "--no-weighted" in err
    assert not (tmp_path / "d.csv").exists()


def test_weighted_or_not_decides_a_mixed_file(capsys, mixed, tmp_path):
    status, _, err = call(capsys, "run", "sssp", mixed, "--weighted")
    assert status == 1 and f"{mixed}:2:" in err  # every line must then have one
    output = tmp_path / "d.csv"
    status, out, _ = call(
        capsys, "run", "sssp", mixed, "--no-weighted", "--source", "0", "--output", output
    )
    assert status == 0
    assert summary_of(out)["weights"] == "ignored"
    header, rows = read_csv(output)
    assert header == ["id", "distance"]
    assert rows == [["0", "0"], ["1", "1"], ["2", "2"]]


def test_a_weighted_file_runs_weighted_and_says_so(capsys, tmp_path):
    path = tmp_path / "w.txt"
    path.write_text("0 1 1.0\n1 2 5\n2 0 3\n0 2 9\n")
    status, out, _ = call(
        capsys, "run", "sssp", path, "--source", "0", "--output", tmp_path / "d.csv"
    )
    assert status == 0
    summary = summary_of(out)
    assert summary["weights"] == "used" and summary["directed"] == "True"
    _, rows = read_csv(tmp_path / "d.csv")
    assert [float(row[1]) for row in rows] == [0.0, 1.0, 6.0]
    status, out, _ = call(capsys, "run", "bfs", path, "--source", "0")
    assert summary_of(out)["weights"] == "ignored"  # bfs reads no weights


@needs_graphs
def test_karate_is_reported_and_written_in_its_own_1_based_ids(capsys, tmp_path):
    karate = GRAPHS / "karate.mtx"
    output = tmp_path / "depth.csv"
    status, out, _ = call(capsys, "run", "bfs", karate, "--output", output)
    assert status == 0
    summary = summary_of(out)
    assert summary["source"] == "34"  # the file's vertex 34, its highest-degree one
    assert summary["base"] == "1" and summary["directed"] == "False"
    header, rows = read_csv(output)
    assert header == ["id", "depth"]
    assert [int(row[0]) for row in rows] == list(range(1, 35))
    nx_graph = nx.Graph((int(u), int(v)) for u, v, *_ in _mtx_entries(karate))
    expected = nx.single_source_shortest_path_length(nx_graph, 34)
    assert {int(i): int(d) for i, d in rows} == expected
    status, again, _ = call(capsys, "run", "bfs", karate, "--source", "34")
    assert summary_of(again)["reached"] == summary["reached"]
    status, _, err = call(capsys, "run", "bfs", karate, "--source", "0")
    assert status == 1 and "1..34" in err


def _mtx_entries(path):
    lines = [line.split() for line in Path(path).read_text().splitlines() if line[:1] != "%"]
    return lines[1:]


@needs_graphs
def test_an_edge_list_has_the_vertices_that_appear_in_it(capsys):
    status, out, _ = call(capsys, "info", GRAPHS / "wiki-Vote.txt", "--json")
    assert status == 0
    facts = json.loads(out)
    nx_graph = nx.read_edgelist(GRAPHS / "wiki-Vote.txt", nodetype=int, create_using=nx.DiGraph)
    assert facts["vertices"] == nx_graph.number_of_nodes() == 7115
    assert facts["components"] == nx.number_weakly_connected_components(nx_graph) == 24
    assert facts["base"] == "listed" and facts["directed"] is True and facts["weighted"] is False
    status, out, _ = call(capsys, "info", GRAPHS / "wiki-Vote.txt", "--vertices", "range", "--json")
    assert json.loads(out)["vertices"] == 8298  # 0..8297, on request


@needs_graphs
def test_pagerank_of_an_edge_list_is_networkx_on_the_files_ids(capsys, tmp_path):
    output = tmp_path / "rank.csv"
    status, out, _ = call(
        capsys, "run", "pagerank", GRAPHS / "wiki-Vote.txt", "--tol", "1e-10", "--output", output
    )
    assert status == 0
    nx_graph = nx.read_edgelist(GRAPHS / "wiki-Vote.txt", nodetype=int, create_using=nx.DiGraph)
    expected = nx.pagerank(nx_graph, tol=1e-10)
    header, rows = read_csv(output)
    assert header == ["id", "rank"]
    got = {int(i): float(r) for i, r in rows}
    assert got.keys() == expected.keys()
    assert max(abs(got[v] - expected[v]) for v in got) < 1e-8
    top = max(expected, key=expected.get)
    assert summary_of(out)["top_vertex"] == str(top)


@needs_graphs
def test_a_directed_run_reaching_under_1_percent_names_undirected(capsys):
    road = GRAPHS / "luxembourg_osm.headerless.txt"
    status, out, err = call(capsys, "run", "bfs", road)
    assert status == 0
    assert summary_of(out)["reached"] == "18"
    assert "18 of 114599" in err and "--undirected" in err
    status, out, err = call(capsys, "run", "bfs", road, "--undirected")
    assert status == 0 and "--undirected" not in err
    assert summary_of(out)["reached"] == "114599"


# --- confusing messages -------------------------------------------------------------------------
@pytest.fixture
def negative_mtx(tmp_path):
    path = tmp_path / "neg.mtx"
    path.write_text(
        "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 2 -1.5\n2 3 2\n3 1 0.5\n1 3 4\n"
    )
    return path


def test_pagerank_on_negative_entries_says_so_and_names_no_weighted(capsys, negative_mtx, tmp_path):
    status, _, err = call(capsys, "run", "pagerank", negative_mtx)
    assert status == 1 and err.count("\n") == 1
    assert "negative" in err and "--no-weighted" in err and "NaN" not in err
    output = tmp_path / "rank.csv"
    status, out, _ = call(
        capsys, "run", "pagerank", negative_mtx, "--no-weighted", "--output", output
    )
    assert status == 0 and summary_of(out)["weights"] == "ignored"
    expected = nx.pagerank(nx.DiGraph([(1, 2), (2, 3), (3, 1), (1, 3)]), weight=None)
    _, rows = read_csv(output)
    assert {int(i): pytest.approx(expected[int(i)], abs=1e-5) for i, _ in rows} == {
        int(i): float(r) for i, r in rows
    }


def test_a_usage_error_is_one_line_with_a_pointer_to_help():
    done = bspgraph("run", "bfs", "grid:3", "--sorce", "1")
    assert done.returncode == 2 and not done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "--sorce" in lines[0] and "bspgraph run --help" in lines[0]


def test_a_byte_order_mark_does_not_garble_a_message(capsys, tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf0 1\n1 x\n")
    status, _, err = call(capsys, "info", path)
    assert status == 1 and f"{path}:2:" in err
    assert "\xef" not in err and "ï»¿" not in err and "'x'" in err
    path.write_bytes(b"\xef\xbb\xbf0 1\n1 2\n")
    status, out, _ = call(capsys, "info", path, "--json")
    assert status == 0 and json.loads(out)["vertices"] == 3


def test_generate_rmat_scale_99_names_the_scale(capsys, tmp_path):
    status, _, err = call(capsys, "generate", "rmat", "--scale", "99", "-o", tmp_path / "g.mtx")
    assert status != 0 and err.count("\n") == 1
    assert "--scale 99" in err and "dimension" not in err
    assert not list(tmp_path.iterdir())


def test_pagerank_that_does_not_converge_names_the_max_iter_option(capsys):
    status, _, err = call(capsys, "run", "pagerank", "rmat:8", "--max-iter", "2", "--tol", "1e-15")
    assert status == 1 and "--max-iter" in err and "max_iter" not in err


def test_plot_is_an_option_of_run_too(capsys, tmp_path):
    status, _, err = call(capsys, "run", "bfs", "grid:4", "--plot", tmp_path / "steps.png")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert status == 1 and "pip install matplotlib" in err
    else:
        assert status == 0 and (tmp_path / "steps.png").stat().st_size > 0


# --- progress -----------------------------------------------------------------------------------
def test_a_piped_run_prints_no_progress():
    done = bspgraph("run", "pagerank", "rmat:10")
    assert done.returncode == 0 and done.stderr == ""


def test_the_progress_line_follows_the_supersteps(capsys):
    from bspgraph.cli.progress import Progress

    class Terminal:
        written = ""

        def write(self, text):
            Terminal.written += text

        def flush(self):
            pass

        def isatty(self):
            return True

    with Progress("bfs", stream=Terminal(), delay=0, mininterval=0) as progress:
        assert progress.active
        import bspgraph as bg

        bg.bfs(bg.generators.grid(6, 6, backend="numpy"), 0, backend="numpy")
    assert "superstep" in Terminal.written and "frontier" in Terminal.written
    with Progress("bfs", stream=Terminal(), delay=0, quiet=True) as progress:
        assert not progress.active


def test_the_enactor_reports_every_superstep_to_a_watcher():
    import bspgraph as bg
    from bspgraph.enactor import watching

    seen = []
    graph = bg.generators.grid(5, 5, backend="numpy")
    with watching(lambda iteration, step: seen.append((iteration, step.frontier))):
        result = bg.bfs(graph, 0, backend="numpy")
    assert [iteration for iteration, _ in seen] == list(range(1, result.stats.iterations + 1))
    assert [size for _, size in seen] == [step.frontier for step in result.stats.supersteps]
    bg.bfs(graph, 0, backend="numpy")  # no watcher: nothing more
    assert len(seen) == result.stats.iterations
