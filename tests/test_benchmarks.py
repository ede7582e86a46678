"""The multi-device benchmark and the BSP cost model, run small on NumPy."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from benchmarks import ab, bsp_model, host_reads, multi_gpu, timeline


def test_multi_gpu_benchmark_checks_answers_and_writes_supersteps(tmp_path, capsys):
    out = tmp_path / "rows.json"
    multi_gpu.main(
        [
            "--backend",
            "numpy",
            "--scale",
            "7",
            "--devices",
            "3",
            "--repeat",
            "1",
            "--algorithms",
            "bfs-auto",
            "pagerank",
            "--partitioners",
            "random",
            "--communicators",
            "selective",
            "butterfly",
            "--json",
            str(out),
        ]
    )
    rows = json.loads(out.read_text())
    assert [(r["algorithm"], r["P"]) for r in rows] == [
        ("bfs-auto", 1),
        ("bfs-auto", 3),
        ("bfs-auto", 3),
        ("pagerank", 1),
        ("pagerank", 3),
        ("pagerank", 3),
    ]
    steps = [s for r in rows if r["P"] == 3 for s in r["supersteps"]]
    assert all(0 <= s["comm_seconds"] <= s["seconds"] for s in steps)
    assert sum(s["bytes"] for s in steps) > 0
    assert "pagerank" in capsys.readouterr().out


def test_host_reads_benchmark_prints_each_primitive_s_reads(capsys):
    host_reads.main(["--scale", "8", "--devices", "3"])
    out = capsys.readouterr().out
    for name in ("bfs push", "bfs auto", "sssp", "cc", "pagerank"):
        assert f"P=3 {name}" in out
    assert "pickled collectives 0" in out and "parts of one GPU" in out
    host_reads.main(["--scale", "8", "--devices", "2", "--separate"])
    out = capsys.readouterr().out
    assert "GPUs of their own" in out and "P=2 bfs push" in out


def test_multi_gpu_benchmark_runs_a_grid(tmp_path):
    """``--grid 24``: the 24 x 24 grid instead of R-MAT, named so in the rows; SSSP on two
    bands of it takes no more supersteps than on one device (its light ones on one device
    alone, where they cost it what they cost one device)."""
    out = tmp_path / "rows.json"
    multi_gpu.main(
        [
            "--backend",
            "numpy",
            "--grid",
            "24",
            "--devices",
            "2",
            "--repeat",
            "1",
            "--algorithms",
            "sssp",
            "--partitioners",
            "edge_balanced",
            "--communicators",
            "selective",
            "--json",
            str(out),
        ]
    )
    rows = json.loads(out.read_text())
    assert [(r["graph"], r["P"]) for r in rows] == [("grid24", 1), ("grid24", 2)]
    assert rows[0]["edges"] == 2 * 2 * 24 * 23  # undirected: both directions of each edge
    assert len(rows[1]["supersteps"]) <= len(rows[0]["supersteps"])  # (light ones: rule 6)


def test_bsp_model_recovers_the_link_from_exact_supersteps():
    link = bsp_model.Link(latency=1e-4, sending=2e-4, message=5e-5, g=2e-11)

    def step(parts, rounds, messages, nbytes):
        seconds = (
            rounds * (link.latency + link.sending * (messages > 0))
            + (link.message * messages + link.g * nbytes) / parts
        )
        return {"rounds": rounds, "messages": messages, "bytes": nbytes, "comm_seconds": seconds}

    rows = [
        {
            "P": 2,
            "supersteps": [
                step(2, 1, 0, 0),
                step(2, 1, 2, 10**6),
                step(2, 2, 4, 10**8),
                step(2, 1, 1, 3 * 10**7),
            ],
        },
        {"P": 4, "supersteps": [step(4, 1, 12, 10**7), step(4, 1, 0, 0), step(4, 1, 3, 5 * 10**8)]},
    ]
    fitted = bsp_model.fit(rows)
    for name in ("latency", "sending", "message", "g"):
        assert getattr(fitted, name) == pytest.approx(getattr(link, name), rel=1e-6), name


def _row(parts, bsp_ms, comm_seconds, *, gpus=None, steps=2):
    supersteps = [{"comm_seconds": comm_seconds, "bytes": 10**8, "rounds": 1, "messages": parts}]
    return {
        "algorithm": "pagerank",
        "communicator": "selective",
        "bsp_ms": bsp_ms,
        "P": parts,
        "gpus": gpus or parts,
        "supersteps": supersteps * steps,
    }


def test_bsp_model_reproduces_two_devices_and_shrinks_only_the_work():
    one, two = {"bsp_ms": 100.0}, _row(2, 80.0, 0.005)
    link = bsp_model.Link(0.003, 0.0, 0.0, 0.002 / (10**8 / 2))  # the measured 5 ms a superstep
    at = {p: bsp_model.predict(one, two, link, p) for p in (2, 4, 8)}
    assert at[2] == pytest.approx(80.0)
    # W / P falls by 25 ms; an all-gather sends (P-1)/P of the updates: 1.5x the bytes of P=2
    assert at[4] - at[2] == pytest.approx(-25 + 2 * 2.0 * (0.75 / 0.5 - 1))
    assert np.isfinite(at[8]) and at[8] < at[4]


def test_bsp_model_grows_the_overhead_with_the_peers_of_a_measured_four():
    """With a run on four devices, a device's time beyond W / P and its exchange grows
    linearly with its peers through the two runs: four is reproduced, eight extrapolated."""
    one, two, four = {"bsp_ms": 100.0}, _row(2, 80.0, 0.0), _row(4, 60.0, 0.0)
    link = bsp_model.Link(0.0, 0.0, 0.0, 0.0)  # nothing exchanged: all beyond W / P is O
    o2, o4 = 80.0 - 50.0, 60.0 - 25.0  # O(2) and O(4), ms, with 1 and 3 peers
    assert bsp_model.predict(one, two, link, 4) == pytest.approx(25.0 + o2)  # from two only
    assert bsp_model.predict(one, two, link, 4, four) == pytest.approx(60.0)
    assert bsp_model.predict(one, two, link, 8, four) == pytest.approx(12.5 + o2 + 3 * (o4 - o2))


def test_bsp_model_splits_the_overhead_of_two_parts_on_one_gpu():
    """Two parts on one GPU ran all of W one after the other, and the host made both parts'
    calls: on two GPUs each process carries half of what they took beyond W and comm."""
    one, two = {"bsp_ms": 100.0}, _row(2, 130.0, 0.005, gpus=1)
    link = bsp_model.Link(0.003, 0.0, 0.0, 0.002 / (10**8 / 2))  # the measured 10 ms
    assert bsp_model.predict(one, two, link, 2) == pytest.approx(50 + 10 + 10)
    crossing = _row(2, 130.0, 0.5, steps=1)
    crossing["supersteps"][0].update(bytes=0, messages=0)
    assert bsp_model.fit([two, crossing]).latency == pytest.approx(0.5)  # from the crossing row


def test_ab_runs_each_commit_s_own_code_in_turn(capsys):
    try:
        subprocess.run(["git", "rev-parse", "HEAD"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    ab.main(
        [
            "HEAD",
            "HEAD",
            "--rounds",
            "2",
            "--grep",
            "^code",
            "--",
            "-c",
            "import bspgraph; print('code', bspgraph.__file__); print('other')",
        ]
    )
    lines = capsys.readouterr().out.splitlines()
    runs = [line.split("\t") for line in lines if "\t" in line]
    assert [label for label, _ in runs] == ["before", "after", "before", "after"]
    assert all(text.startswith("code ") and f"/{label}/bspgraph/" in text for label, text in runs)
    with pytest.raises(SystemExit, match="after: exit 3"):
        ab.main(
            [
                "HEAD",
                "HEAD",
                "--rounds",
                "1",
                "--",
                "-c",
                "import os, sys; sys.exit(3 if os.getcwd().endswith('after') else 0)",
            ]
        )


def test_timeline_sums_an_ncu_log(tmp_path, capsys):
    """ncu's CSV (after its own notes): durations in any unit, listed, or per name when many."""
    header = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
    rows = [("fill", "ns", "18,016"), ("visit_pull", "us", "293.6"), ("fill", "ms", "0.002")]
    log = tmp_path / "k.csv"
    log.write_text(
        "==PROF== Connected\n"
        + header
        + "".join(
            f'"{i}","{name}","gpu__time_duration.sum","{unit}","{value}"\n'
            for i, (name, unit, value) in enumerate(rows)
        )
    )
    timeline.kernel_table(str(log))
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[:3]] == ["fill", "visit_pull", "fill"]
    assert out[-1].split()[-2] == "313.6"  # 18.016 + 293.6 + 2.0 us
    timeline.LISTED, listed = 2, timeline.LISTED
    try:
        timeline.kernel_table(str(log))
    finally:
        timeline.LISTED = listed
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["visit_pull", "1x"] and out[1].split()[:3] == [
        "fill",
        "2x",
        "20.0",
    ]


def _phases(*options: str) -> str:
    """What ``python -m benchmarks.phases --backend numpy --scale 8 OPTIONS`` prints."""
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.phases", "--backend", "numpy", "--scale", "8", *options],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": "."},
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    ).stdout


def test_phases_benchmark_times_each_phase_of_the_superstep():
    out = _phases("--parts", "1", "3", "--algorithms", "bfs-push", "sssp")
    assert "bfs-push on 3 part(s)" in out and "sssp on the one-device loop" in out
    assert "sssp on 1 part(s)" in out  # the multi-device enactor's own cost
    assert "_next_frontier " in out and "_exchange " in out and " step " in out


def test_phases_benchmark_on_the_host_prints_each_superstep():
    out = _phases("--parts", "2", "--host", "--algorithms", "sssp")
    header, *rows = out.split("sssp on 2 part(s): ")[1].splitlines()
    supersteps = int(header.split(", ")[-1].split()[0])
    assert len(rows) == supersteps  # a row a superstep: its frontier, time, phases
    assert all(" us  other " in row and "step " in row for row in rows)
    assert "_parts" not in out.split("sssp on 2 part(s)")[1]  # setup is no superstep's


def test_phases_benchmark_inner_times_the_calls_inside_each_superstep():
    out = _phases("--parts", "2", "--wire", "--inner", "--algorithms", "bfs-auto")
    header, *rows = out.split("bfs-auto on 2 part(s): ")[1].splitlines()
    supersteps = int(header.split(", ")[-1].split()[0])
    assert len(rows) == supersteps
    assert all(" us  other " in row and "[exchange_mixed] " in row for row in rows)
    assert any("[ops.one_value] " in row for row in rows)  # a dense level's choice of Bits


def test_one_call_compares_a_cluster_run_with_an_mpiexec_run_row_by_row():
    """benchmarks.one_call: the rows both runs hold, their ratios and whether each gate
    holds (bsp, whole call, and a later call's setup at 0)."""
    from benchmarks import one_call

    def row(algorithm, bsp, whole, again=0.0):
        key = {"algorithm": algorithm, "P": 2, "partitioner": "edge_balanced"}
        times = {"bsp_ms": bsp, "ms": whole, "setup_again_s": again}
        return {**key, "communicator": "selective", **times}

    mpiexec = {("bfs", 2, "edge_balanced", "selective"): row("bfs", 10.0, 12.0)}
    mpiexec[("cc", 2, "edge_balanced", "selective")] = row("cc", 10.0, 12.0)
    one = {("bfs", 2, "edge_balanced", "selective"): row("bfs", 11.0, 15.0)}
    one[("cc", 2, "edge_balanced", "selective")] = row("cc", 12.0, 12.0, again=0.5)
    lines = one_call.compare(mpiexec, one)
    assert lines[1].split()[-1] == "met" and " 1.10x" in lines[1] and " 1.25x" in lines[1]
    assert lines[2].split()[-1] == "missed"  # 1.2x the BSP time, and set up again


@pytest.mark.mpi
def test_multi_gpu_benchmark_runs_on_cluster_workers(tmp_path):
    """--transport cluster: the runs from this process on bg.cluster workers, checked against
    one device's answers, a later call setting nothing up."""
    pytest.importorskip("distributed")
    pytest.importorskip("mpi4py")
    out = tmp_path / "one.json"
    multi_gpu.main(
        "--backend numpy --scale 7 --transport cluster --devices 2 --repeat 1 --algorithms "
        f"bfs-push cc --partitioners edge_balanced --communicators selective --json {out}".split()
    )
    rows = [r for r in json.loads(out.read_text()) if r["P"] == 2]
    assert [(r["algorithm"], r["transport"]) for r in rows] == [
        ("bfs-push", "cluster"),
        ("cc", "cluster"),
    ]
    assert all(r["setup_again_s"] == 0 for r in rows)


def test_setting_ab_sets_each_arm_before_its_runs_and_reports_both(monkeypatch, capsys):
    """The setting holds arm A's or B's value in each run (warm runs A, B, A, B; then ABBA),
    the arms' answers are checked equal, and each arm reports its light supersteps and bsp."""
    from benchmarks import setting_ab
    from bspgraph.enactor import distributed

    seen = []
    call, field = setting_ab.ALGORITHMS["bfs-push"]

    def watched(graph, source, run):
        seen.append(distributed.KEYED_SHARE)
        return call(graph, source, run)

    monkeypatch.setitem(setting_ab.ALGORITHMS, "bfs-push", (watched, field))
    monkeypatch.setattr(distributed, "KEYED_SHARE", distributed.KEYED_SHARE)  # restored after
    argv = ["bspgraph.enactor.distributed", "KEYED_SHARE", "4", "8", "--scale", "8"]
    rows = setting_ab.main([*argv, "--devices", "3", "--runs", "2", "--algorithms", "bfs-push"])
    assert seen == [4, 8, 4, 8] + [4, 8, 8, 4]
    assert [(r["arm"], r["value"]) for r in rows] == [("A", 4), ("B", 8)]
    assert all(r["bsp_ms"] > 0 and r["light_us"] for r in rows)
    assert "bfs-push  KEYED_SHARE=8" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="no setting"):
        setting_ab.main(["bspgraph.enactor.distributed", "NO_SUCH", "1", "2"])
