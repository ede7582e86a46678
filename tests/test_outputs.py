"""Outputs go through a temporary file and a rename: an interrupt while writing leaves neither a
half-written result nor a stray temporary file, and an existing result stays as it was."""

import numpy as np
import pytest

import bspgraph as bg
from bspgraph import cli
from bspgraph.graph import io as graph_io

VALUES = np.arange(100_000, dtype=np.float64)


def interrupted(handle, *args, **kwargs):
    """A writer (np.save, np.savetxt, np.savez) that writes part of its output, then is
    interrupted as by Ctrl-C."""
    handle.write(b"half of the output")
    raise KeyboardInterrupt


def test_cli_write_then_rename(tmp_path):
    for name in ("result.npy", "result.csv"):
        cli.write_result(str(tmp_path / name), VALUES)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.csv", "result.npy"]
    assert np.array_equal(np.load(tmp_path / "result.npy"), VALUES)
    written = np.loadtxt(tmp_path / "result.csv", delimiter=",", skiprows=1)
    assert np.array_equal(written[:, 1], VALUES) and np.array_equal(
        written[:, 0], range(VALUES.size)
    )


@pytest.mark.parametrize("name, writer", [("result.npy", "save"), ("result.csv", "savetxt")])
def test_cli_write_interrupted_leaves_no_file(tmp_path, monkeypatch, name, writer):
    monkeypatch.setattr(np, writer, interrupted)
    with pytest.raises(KeyboardInterrupt):
        cli.write_result(str(tmp_path / name), VALUES)
    assert not (tmp_path / name).exists()
    assert list(tmp_path.iterdir()) == [], "the temporary file was left behind"


def test_cli_write_interrupted_keeps_the_previous_result(tmp_path, monkeypatch):
    target = tmp_path / "result.npy"
    np.save(target, VALUES[:3])
    monkeypatch.setattr(np, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cli.write_result(str(target), VALUES)
    assert np.array_equal(np.load(target), VALUES[:3])
    assert [p.name for p in tmp_path.iterdir()] == ["result.npy"]


def test_cli_run_output_leaves_only_the_result(tmp_path, capsys):
    target = tmp_path / "depth.npy"
    args = ["run", "bfs", "grid:4x4", "--backend", "numpy", "--source", "0", "--output"]
    assert cli.main([*args, str(target)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["depth.npy"]
    expected = bg.bfs(bg.generators.grid(4, 4, backend="numpy"), 0).depth
    assert np.array_equal(np.load(target), expected)


def test_save_npz_interrupted_leaves_no_file(tmp_path, monkeypatch):
    graph = bg.generators.grid(5, 5, backend="numpy")
    target = tmp_path / "graph.npz"
    monkeypatch.setattr(np, "savez", interrupted)
    with pytest.raises(KeyboardInterrupt):
        graph_io.save_npz(graph, target)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    small = bg.generators.grid(2, 2, backend="numpy")
    graph_io.save_npz(small, target)
    monkeypatch.setattr(np, "savez", interrupted)
    with pytest.raises(KeyboardInterrupt):
        graph_io.save_npz(graph, target)
    assert [p.name for p in tmp_path.iterdir()] == ["graph.npz"]
    assert graph_io.load_npz(target, backend="numpy").num_vertices == 4  # the previous one


def test_atomic_output_on_error_and_on_success(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(OSError, match="disk full"):
        with graph_io.atomic_output(target, "w") as stream:
            stream.write("partial")
            raise OSError("disk full")
    assert list(tmp_path.iterdir()) == []
    with graph_io.atomic_output(target, "w", encoding="ascii") as stream:
        stream.write("whole\n")
    assert target.read_text() == "whole\n" and len(list(tmp_path.iterdir())) == 1
