"""The ``bspgraph`` command, run as a user runs it: a subprocess, its stdout, stderr and status."""

import json
import random
import shlex
import sys

import networkx as nx
import numpy as np
import pytest
from command_line import GRAPHS, bspgraph, needs_graphs

import bspgraph as bg
from bspgraph import cli


def ok(*args, **kwargs):
    done = bspgraph(*args, **kwargs)
    assert done.returncode == 0, done.stderr
    return done.stdout


def summary_of(text: str) -> dict:
    return dict(field.split("=", 1) for field in shlex.split(text))


# --- run --------------------------------------------------------------------------------------
def test_run_bfs_on_rmat_prints_a_summary():
    summary = summary_of(ok("run", "bfs", "rmat:10", "--source", "0"))
    assert summary["algorithm"] == "bfs"
    assert summary["vertices"] == "1024"
    graph = bg.generators.rmat(10, 16, seed=1, weights=True, backend="numpy")
    assert summary["edges"] == str(graph.num_edges)
    depth = bg.bfs(graph, 0, backend="numpy").depth
    assert summary["reached"] == str(int((depth >= 0).sum()))
    for key in ("supersteps", "seconds", "gteps"):
        assert float(summary[key]) >= 0


def test_run_bfs_on_a_written_mtx_matches_the_generated_graph(tmp_path):
    path = tmp_path / "r10.mtx"
    assert "wrote" in ok("generate", "rmat", "--scale", "10", "-o", path)
    from_file = json.loads(ok("run", "bfs", path, "--source", "4", "--json"))  # 1-based
    generated = json.loads(ok("run", "bfs", "rmat:10", "--source", "3", "--json"))
    for key in ("vertices", "edges", "directed", "supersteps", "reached", "depth"):
        assert from_file[key] == generated[key], key
    assert from_file["graph"] == str(path)


def test_run_json_has_the_summary_fields():
    summary = json.loads(ok("run", "sssp", "grid:4x5", "--source", "2", "--json"))
    assert summary["vertices"] == 20
    assert summary["edges"] == 2 * (3 * 5 + 4 * 4)
    assert summary["reached"] == 20
    assert summary["supersteps"] >= 1
    assert {"seconds", "gteps", "load_seconds", "backend", "devices"} <= summary.keys()


@pytest.mark.parametrize("suffix", [".npy", ".csv"])
def test_run_output_holds_the_bfs_depths(tmp_path, suffix):
    graph_path = tmp_path / "g.mtx"
    bg.write_mtx(bg.generators.rmat(8, 8, seed=3, backend="numpy"), graph_path)
    output = tmp_path / f"depth{suffix}"
    ok("run", "bfs", graph_path, "--source", "5", "--output", output)  # the file's vertex 5
    if suffix == ".npy":
        written = np.load(output)
    else:
        table = np.loadtxt(output, delimiter=",", skiprows=1, dtype=np.int64)
        np.testing.assert_array_equal(table[:, 0], np.arange(1, table.shape[0] + 1))
        written = table[:, 1]
    expected = bg.bfs(bg.read_mtx(graph_path, backend="numpy"), 4, backend="numpy").depth
    np.testing.assert_array_equal(written, expected)
    assert not list(tmp_path.glob("*.tmp-*"))  # written through a temporary file


def test_run_output_csv_keeps_float_values_exactly(tmp_path):
    output = tmp_path / "rank.csv"
    ok("run", "pagerank", "grid:5x3", "--output", output)
    expected = bg.pagerank(bg.generators.grid(5, 3, backend="numpy"), backend="numpy").rank
    written = np.loadtxt(output, delimiter=",", skiprows=1)[:, 1]
    np.testing.assert_array_equal(written, expected)


def test_run_pagerank_takes_a_tolerance(tmp_path):
    output = tmp_path / "rank.npy"
    ok("run", "pagerank", "rmat:8", "--tol", "1e-12", "--output", output)
    graph = bg.generators.rmat(8, 16, seed=1, weights=True, backend="numpy")
    expected = bg.pagerank(graph, tol=1e-12, backend="numpy").rank
    np.testing.assert_array_equal(np.load(output), expected)


@pytest.mark.parametrize(
    ("algorithm", "finding"),
    [
        ("bfs", {"reached": 12, "depth": 3, "source": 5}),
        ("sssp", {"reached": 12}),
        ("cc", {"components": 1}),
        ("pagerank", {}),
        ("bc", {}),
        ("tc", {"triangles": 0}),
    ],
)
def test_run_every_algorithm(capsys, algorithm, finding):
    assert cli.main(["run", algorithm, "grid:3x4", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["algorithm"] == algorithm
    assert finding.items() <= summary.items()
    if algorithm in ("pagerank", "bc"):  # the top vertex (any of a tie) and value, as networkx's
        nx_graph = bg.generators.grid(3, 4, backend="numpy").to_networkx()
        scores = (nx.pagerank if algorithm == "pagerank" else nx.betweenness_centrality)(nx_graph)
        top = max(scores.values())
        assert summary["top_value"] == pytest.approx(top, rel=1e-6)
        assert scores[summary["top_vertex"]] == pytest.approx(top, rel=1e-6)


class _Sample(random.Random):
    """A random source for networkx whose sample is the given vertices."""

    def __init__(self, vertices):
        super().__init__(0)
        self.vertices = list(vertices)

    def sample(self, population, k):
        assert k == len(self.vertices)
        return self.vertices


def test_run_bc_samples_sources(capsys, tmp_path):
    output = tmp_path / "bc.npy"
    assert (
        cli.main(
            [
                "run",
                "bc",
                "grid:4x4",
                "--samples",
                "3",
                "--seed",
                "2",
                "--json",
                "--output",
                str(output),
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    sources = np.random.default_rng(2).choice(16, size=3, replace=False)  # --samples, --seed
    nx_graph = bg.generators.grid(4, 4, backend="numpy").to_networkx()
    scores = nx.betweenness_centrality(nx_graph, k=3, seed=_Sample(sources.tolist()))
    expected = np.array([scores[v] for v in range(16)])
    np.testing.assert_allclose(np.load(output), expected, rtol=1e-12)
    assert summary["top_value"] == pytest.approx(expected.max(), rel=1e-12)


def test_run_on_several_devices_with_a_butterfly():
    summary = json.loads(
        ok(
            "run",
            "bfs",
            "grid:6x6",
            "--devices",
            "3",
            "--partitioner",
            "edge_balanced",
            "--fanout",
            "2",
            "--source",
            "0",
            "--json",
        )
    )
    assert summary["devices"] == 3
    assert summary["reached"] == 36
    assert summary["depth"] == 10
    assert summary["messages"] > 0


def test_run_kwargs_pass_the_transport_only_when_not_local():
    parser = cli.parser()
    local = cli.run_kwargs(parser.parse_args(["run", "bfs", "grid:2x2"]))
    assert "transport" not in local
    assert local["devices"] == 1
    mpi = cli.run_kwargs(parser.parse_args(["run", "bfs", "grid:2x2", "--transport", "mpi"]))
    assert mpi["transport"] == "mpi"
    fanout = cli.run_kwargs(parser.parse_args(["run", "bfs", "grid:2x2", "--fanout", "3"]))
    assert isinstance(fanout["communicator"], bg.comm.Butterfly)


# --- generate and info --------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".mtx", ".npz"])
def test_generate_then_info_round_trip(tmp_path, suffix):
    path = tmp_path / f"grid{suffix}"
    ok("generate", "grid", "--rows", "5", "--cols", "7", "-o", path)
    info = json.loads(ok("info", path, "--json"))
    expected = bg.generators.grid(5, 7, backend="numpy")
    assert info["vertices"] == 35
    assert info["edges"] == expected.num_edges
    assert info["undirected_edges"] == 4 * 7 + 5 * 6
    assert info["directed"] is False
    assert (info["degree_min"], info["degree_max"]) == (2, 4)
    assert info["degree_mean"] == pytest.approx(expected.num_edges / 35, abs=1e-3)
    assert info["components"] == 1
    assert info["diameter_estimate"] == 4 + 6  # exact on a grid


def test_info_counts_components_and_prints_a_table(tmp_path):
    path = tmp_path / "two.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n5 5 3\n1 2\n2 3\n4 5\n")
    text = ok("info", path)
    facts = dict(line.split(None, 1) for line in text.splitlines())
    assert facts["directed"] == "True"
    assert facts["components"] == "2"
    assert facts["largest_component"] == "3"
    assert facts["out_degree_max"] == "1"
    assert facts["in_degree_min"] == "0"


def test_generate_rmat_matches_the_rmat_spec(tmp_path):
    path = tmp_path / "r.npz"
    ok("generate", "rmat", "--scale", "7", "--edge-factor", "4", "-o", path)
    written = bg.load_npz(path, backend="numpy")
    generated = bg.generators.rmat(7, 4, seed=1, weights=True, backend="numpy")
    np.testing.assert_array_equal(written.indices, generated.indices)
    np.testing.assert_array_equal(written.weights, generated.weights)


# --- bench --------------------------------------------------------------------------------------
def test_bench_reports_the_median(capsys):
    assert cli.main(["bench", "cc", "grid:6x6", "--repeat", "3", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["repeat"] == 3
    assert summary["min_seconds"] <= summary["seconds"] <= summary["max_seconds"]
    assert summary["components"] == 1


def test_bench_plot_draws_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "bfs.png"
    ok("bench", "bfs", "grid:8x8", "--repeat", "2", "--plot", path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_plot_without_matplotlib_names_the_install_command(capsys, monkeypatch):
    for name in ("matplotlib", "matplotlib.figure"):
        monkeypatch.setitem(sys.modules, name, None)  # makes importing it raise ImportError
    status = cli.main(["bench", "bfs", "grid:3x3", "--repeat", "1", "--plot", "x.png"])
    assert status == 1
    error = capsys.readouterr().err
    assert "pip install matplotlib" in error
    assert error.count("\n") == 1


# --- errors -------------------------------------------------------------------------------------
def test_bad_file_exits_1_with_one_line_naming_file_and_line(tmp_path):
    path = tmp_path / "bad.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 x\n")
    done = bspgraph("run", "bfs", path)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert f"{path}:4:" in done.stderr
    assert "Traceback" not in done.stderr


def test_missing_file_exits_1():
    done = bspgraph("info", "no/such/graph.mtx")
    assert done.returncode == 1
    assert "no/such/graph.mtx" in done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "spec, form",
    [("rmat:ten", "rmat:SCALE"), ("grid:3x", "grid:ROWSxCOLS"), ("grid:3xy", "grid:ROWSxCOLS")],
)
def test_bad_generator_spec_exits_1(spec, form, capsys):
    assert cli.main(["run", "bfs", spec]) == 1
    assert form in capsys.readouterr().err


def test_square_grid_spec():
    assert cli.load_graph("grid:3", "numpy").graph.num_vertices == 9


def test_source_out_of_range_exits_1(capsys):
    assert cli.main(["run", "bfs", "grid:2x2", "--source", "9"]) == 1
    assert "--source 9: no such vertex; the ids run 0..3" in capsys.readouterr().err


def test_unknown_algorithm_exits_2():
    done = bspgraph("run", "dfs", "rmat:4")
    assert done.returncode == 2
    assert "invalid choice" in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["run", "bfs", "grid:2x2", "--fanout", "2", "--communicator", "broadcast"],
        ["run", "bfs", "grid:2x2", "--output", "depth.txt"],
        ["generate", "grid", "--rows", "2", "-o", "grid.txt"],
        ["bench", "bfs", "grid:2x2", "--repeat", "0"],
        ["run", "bfs", "grid:2x2", "--partitioner", "metiss"],
    ],
)
def test_usage_errors_exit_2(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"bspgraph {args[0]}" in err and "--help" in err


# --- files as a user has them (issue 28) -----------------------------------------------------------


@needs_graphs
def test_one_based_undirected_edge_list():
    summary = json.loads(ok("run", "cc", GRAPHS / "USPowerGrid.txt", "--undirected", "--json"))
    assert (summary["vertices"], summary["components"]) == (4941, 1)
    assert summary["base"] == "listed" and summary["directed"] is False
    ranged = json.loads(
        ok("run", "cc", GRAPHS / "USPowerGrid.txt", "--undirected", "--vertices", "range", "--json")
    )
    assert (ranged["vertices"], ranged["base"]) == (4941, "1(auto)")
    bfs = json.loads(ok("run", "bfs", GRAPHS / "USPowerGrid.txt", "--undirected", "--json"))
    assert bfs["reached"] == 4941 and bfs["source_rule"] == "highest-degree"
    zero = json.loads(
        ok("run", "cc", GRAPHS / "USPowerGrid.txt", "--undirected", "--base", "0", "--json")
    )
    assert (zero["vertices"], zero["components"]) == (4942, 2)  # vertex 0 stands alone


@needs_graphs
@pytest.mark.parametrize("name", ["KARATE.MTX", "karate.txt", "karate.mtx.gz"])
def test_format_is_told_by_content(tmp_path, name):
    import gzip

    data = (GRAPHS / "karate.mtx").read_bytes()
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    info = json.loads(ok("info", path, "--json"))
    assert (info["vertices"], info["undirected_edges"]) == (34, 78)


def test_tc_on_a_directed_file_names_undirected(tmp_path):
    path = tmp_path / "t.el"
    path.write_text("0 1\n1 2\n2 0\n2 3\n")
    done = bspgraph("run", "tc", path)
    assert done.returncode == 1 and "--undirected" in done.stderr
    assert done.stderr.count("\n") == 1
    assert summary_of(ok("run", "tc", path, "--undirected"))["triangles"] == "1"


def test_bench_averages_over_random_sources_with_edges(capsys):
    assert cli.main(["bench", "bfs", "rmat:8", "--sources", "3", "--repeat", "1", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    graph = bg.generators.rmat(8, 16, seed=1, weights=True, backend="numpy")
    degree = np.diff(graph.offsets)
    assert summary["sources"] == 3 and len(summary["source"]) == 3
    assert all(degree[v] > 0 for v in summary["source"])
    assert summary["source_rule"].startswith("random") and summary["gteps"] > 0


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda tmp: ["run", "bfs", "grid:2x2", "--output", tmp / "no" / "d.npy"], "no such directory"),
        (lambda tmp: ["run", "bfs", tmp], "is a directory"),
        (lambda tmp: ["run", "bfs", tmp / "e.el"], "no edges"),
        (lambda tmp: ["run", "bfs", "rmat:4", "--base", "1"], ""),
        (lambda tmp: ["run", "bfs", tmp / "g.mtx", "--base", "1"], "applies to edge lists"),
    ],
)  # fmt: skip
def test_clear_errors_before_the_run(tmp_path, capsys, make, message):
    (tmp_path / "e.el").write_text("# nothing\n")
    bg.write_mtx(bg.generators.grid(2, 2, backend="numpy"), tmp_path / "g.mtx")
    status = cli.main([str(arg) for arg in make(tmp_path)])
    error = capsys.readouterr().err
    assert status == (0 if not message else 1), error
    assert message in error and "Errno" not in error
    assert not list(tmp_path.glob("**/*.tmp-*"))


def test_devices_below_one_and_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", "bfs", "grid:2x2", "--devices", "-2"])
    assert exit_info.value.code == 2
    assert "expected an integer >= 1, got '-2'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out.strip() == f"bspgraph {bg.__version__}"


@needs_graphs
def test_info_diameter_of_a_directed_graph():
    info = json.loads(ok("info", GRAPHS / "wiki-Vote.txt", "--json"))
    assert info["directed"] is True and info["diameter_estimate"] == 10  # longest finite distance


def test_warmup_runs_every_primitive_and_says_where_kernels_are_kept():
    out = ok("warmup", "--backend", "numpy", "--scale", "8")
    assert out.startswith("warmup on numpy: 53 calls") and "no kernel cache on disk" in out
    report = bg.warmup("numpy", scale=6)
    assert report.calls == 53 and report.cache_dir is None


def test_run_reports_the_parts_of_the_call_and_the_backend_chosen():
    summary = json.loads(ok("run", "pagerank", "rmat:8", "--json"))
    parts = ("seconds", "prepare_seconds", "compile_seconds", "setup_seconds", "gather_seconds")
    assert all(summary[key] >= 0 for key in parts)
    assert summary["compile_seconds"] == 0  # NumPy compiles nothing
    assert sum(summary[key] for key in parts) <= summary["call_seconds"]
    assert summary["backend"] == "numpy" and summary["backend_reason"]
