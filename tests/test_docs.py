"""Every Python block of README.md and docs/*.md runs as written (in a temporary directory;
a file's blocks share one namespace, in order). A block that needs a GPU is skipped, said why."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
NEEDS_GPU = re.compile(r"""backend=["']cupy["']|devices=\[0, 0\]|import cupy""")
# documents whose blocks are excerpts of a whole program run elsewhere, not programs themselves
EXCERPTS = {
    "writing-a-primitive.md": "its blocks are excerpts of examples/label_propagation.py, which "
    "tests/test_examples.py runs whole",
}


def _blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text())


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: path.name)
def test_python_blocks_run_as_written(path, tmp_path, monkeypatch):
    blocks = _blocks(path)
    if not blocks:
        pytest.skip(f"{path.name} has no Python block")
    if path.name in EXCERPTS:
        pytest.skip(EXCERPTS[path.name])
    monkeypatch.chdir(tmp_path)
    import bspgraph as bg

    bg.write_mtx(bg.generators.grid(6, 6, backend="numpy"), "graph.mtx")  # the docs' graph.mtx
    namespace = {"__name__": f"docs_{path.stem}"}
    skipped = []
    for number, block in enumerate(blocks, start=1):
        if NEEDS_GPU.search(block):
            skipped.append(number)  # needs CuPy and a GPU: the GPU machine's runs cover it
            continue
        code = compile(block, f"{path.name} block {number}", "exec")
        exec(code, namespace)  # noqa: S102 (the documentation's own code)
    assert len(skipped) < len(blocks), f"every block of {path.name} needs a GPU"
