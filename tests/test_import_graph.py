"""tools/import_graph.py: the layering of bspgraph (no import cycle anywhere, lower layers never
importing higher ones, no is_gpu above the backend), and the script's own findings on a small
tree."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools/import_graph.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def found(tool):
    return tool.check(ROOT)


LOWER = ("backend", "graph", "frontier")


def test_no_import_cycle(found):
    assert found["module_cycles"] == []
    assert found["subpackage_cycles"] == []
    assert found["subpackages"]["backend"] <= {"exceptions"}  # the backend imports no layer


def test_lower_layers_never_import_higher_ones(found):
    assert found["broken_layers"] == []
    for sub in LOWER:
        assert "primitives" not in found["subpackages"].get(sub, set())


def test_no_is_gpu_above_the_backend(found):
    assert found["is_gpu"] == []


def _tree(tmp_path, files: dict[str, str]) -> Path:
    for name, text in {"bspgraph/__init__.py": "", **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_script_reports_cycles_layers_and_is_gpu(tool, tmp_path, capsys):
    root = _tree(
        tmp_path,
        {
            "bspgraph/frontier/__init__.py": "from . import ops\n",
            "bspgraph/frontier/ops.py": "def f():\n    from ..primitives import bfs\n",
            "bspgraph/primitives/__init__.py": "",
            "bspgraph/primitives/bfs.py": "from ..frontier.ops import f\nX = g.backend.is_gpu\n",
        },
    )
    assert tool.main(["--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "frontier -> primitives" in out and "primitives -> frontier" in out
    assert "cycle (modules): bspgraph.frontier.ops <-> bspgraph.primitives.bfs" in out
    assert "cycle (subpackages): frontier <-> primitives" in out
    assert "layer broken: bspgraph.frontier.ops imports bspgraph.primitives.bfs" in out
    assert "is_gpu outside bspgraph/backend/: bspgraph/primitives/bfs.py:2" in out


def test_a_clean_tree_passes(tool, tmp_path, capsys):
    root = _tree(
        tmp_path,
        {
            "bspgraph/backend/__init__.py": "IS = 'is_gpu'  # allowed here\n",
            "bspgraph/frontier/__init__.py": "from ..backend import IS\nfrom . import ops\n",
            "bspgraph/frontier/ops.py": "from .. import backend\n",
        },
    )
    assert tool.main(["--root", str(root), "--modules"]) == 0
    out = capsys.readouterr().out
    assert "bspgraph.frontier -> bspgraph.backend, bspgraph.frontier.ops" in out
    assert out.rstrip().endswith("ok")
