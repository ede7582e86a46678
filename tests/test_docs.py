"""Every Python block of README.md and docs/*.md runs as written (in a temporary directory;
a file's blocks share one namespace, in order). A block that needs a GPU is skipped, said why.

A block right after an ``<!-- excerpt of PATH -->`` line is a cut of that file (relative to the
repository), which another test runs whole: it is not run, but each of its runs of lines
between ``...`` placeholder lines must appear in PATH as written, in order, up to a common
indentation (blank lines aside), so that the excerpt cannot drift from the program."""

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^(?:<!-- excerpt of (\S+) -->\n)?```python\n(.*?)^```", re.S | re.M)
NEEDS_GPU = re.compile(r"""backend=["']cupy["']|devices=\[0, 0\]|import cupy""")


def _blocks(path: Path) -> list[tuple[str, str]]:
    """(the file a block is an excerpt of, or "", the block) for each Python block."""
    return BLOCK.findall(path.read_text())


def _missing(excerpt: str, source: str) -> str | None:
    """The first run of the excerpt's lines not found in ``source`` after the previous run,
    or None when the excerpt is a faithful cut of it."""
    lines = [line.rstrip() for line in source.splitlines() if line.strip()]
    runs, run = [], []
    for line in excerpt.splitlines():
        if line.strip() == "...":
            runs.append(run)
            run = []
        elif line.strip():
            run.append(line.rstrip())
    runs.append(run)
    start = 0
    for run in filter(None, runs):
        wanted = textwrap.dedent("\n".join(run))
        found = (
            at
            for at in range(start, len(lines) - len(run) + 1)
            if textwrap.dedent("\n".join(lines[at : at + len(run)])) == wanted
        )
        at = next(found, None)
        if at is None:
            return "\n".join(run)
        start = at + len(run)
    return None


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: path.name)
def test_python_blocks_run_as_written(path, tmp_path, monkeypatch):
    blocks = _blocks(path)
    if not blocks:
        pytest.skip(f"{path.name} has no Python block")
    monkeypatch.chdir(tmp_path)
    import bspgraph as bg

    bg.write_mtx(bg.generators.grid(6, 6, backend="numpy"), "graph.mtx")  # the docs' graph.mtx
    namespace = {"__name__": f"docs_{path.stem}"}
    skipped, ran = [], 0
    for number, (of, block) in enumerate(blocks, start=1):
        if of:
            missing = _missing(block, (ROOT / of).read_text())
            assert missing is None, f"{path.name} block {number} is not in {of}:\n{missing}"
            continue
        if NEEDS_GPU.search(block):
            skipped.append(number)  # needs CuPy and a GPU: the GPU machine's runs cover it
            continue
        code = compile(block, f"{path.name} block {number}", "exec")
        exec(code, namespace)  # noqa: S102 (the documentation's own code)
        ran += 1
    if skipped:
        assert ran, f"every block of {path.name} to run needs a GPU"


def test_an_excerpt_that_drifted_is_caught():
    source = "def f(x):\n    y = x + 1\n\n    z = y * 2\n    return z\n"
    assert _missing("    y = x + 1\n    z = y * 2\n", source) is None  # blank lines aside
    assert _missing("def f(x):\n    ...\n    return z\n", source) is None
    assert _missing("y = x + 1\nz = y * 2\n", source) is None  # up to a common indentation
    assert _missing("def f(x):\n    y = x + 2\n", source) == "def f(x):\n    y = x + 2"
    assert _missing("    return z\n    ...\n    y = x + 1\n", source) == "    y = x + 1"  # order
    assert _missing("def f(x):\ny = x + 1\n", source) is not None  # indentation within a run
