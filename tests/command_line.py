"""The command line run as a user runs it, for tests/test_cli*.py: ``python -m bspgraph.cli``
in a subprocess from the repository root, and the real graphs of ../shared/graphs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GRAPHS = ROOT.parent / "shared" / "graphs"
needs_graphs = pytest.mark.skipif(not GRAPHS.is_dir(), reason=f"{GRAPHS} is absent")


def bspgraph(*args, env=None):
    """Run ``python -m bspgraph.cli ARGS`` from the repository root; the CompletedProcess
    (stdout and stderr piped)."""
    environment = dict(os.environ, **(env or {}))
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), environment.get("PYTHONPATH")])
    )
    return subprocess.run(
        [sys.executable, "-m", "bspgraph.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environment,
        timeout=300,
    )
