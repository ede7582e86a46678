"""Test options: hypothesis profiles chosen by HYPOTHESIS_PROFILE ("ci", the default:
derandomized, the same examples every run; "random": new examples every run; "deep": 16 times
as many, new every run), GPU tests skipped without a GPU, slow tests skipped unless asked for
(--slow or -m slow), and a closing summary of the multi-device grid the run covered and of why
tests were skipped. NumPy runs its own paths (``BSPGRAPH_NUMBA=0``, in this process and the
ones it starts), as on CI, where numba is not installed: with it (the ``numba`` extra) a NumPy
BFS pulls with early exit and rule 6 takes levels the lift tests mean to see lifted;
test_numba.py compares the numba kernels with those paths itself."""

import itertools
import os
from collections import Counter

os.environ["BSPGRAPH_NUMBA"] = "0"  # (read when bspgraph's NumPy backend is imported)

import pytest
from hypothesis import settings
from strategies import PROFILE, SEED

settings.register_profile("ci", deadline=None, max_examples=60, derandomize=True, database=None)
settings.register_profile("random", deadline=None, max_examples=60)
settings.register_profile("default", settings.get_profile("random"))  # its name until issue 32
settings.register_profile("deep", deadline=None, max_examples=1000)  # a long search for bugs
settings.load_profile(PROFILE)


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", help="also run tests marked slow")


def pytest_report_header(config):
    how = "derandomized" if settings.default.derandomize else "random"
    return (
        f"hypothesis profile {PROFILE} ({how}, {settings.default.max_examples} examples a "
        f"property); grid seed BSPGRAPH_TEST_SEED={SEED}"
    )


def pytest_collection_modifyitems(config, items):
    from bspgraph.backend import gpu_count

    marker_expr = config.getoption("-m") or ""
    run_slow = config.getoption("--slow") or "slow" in marker_expr
    has_gpu = gpu_count() > 0
    for item in items:
        if "slow" in item.keywords and not run_slow:
            item.add_marker(pytest.mark.skip(reason="slow: run with --slow"))
        if "gpu" in item.keywords and not has_gpu:
            item.add_marker(pytest.mark.skip(reason="needs CuPy and a GPU"))


@pytest.fixture(params=["numpy", "cupy"])
def backend(request):
    """Each array backend; CuPy is skipped where no GPU is usable."""
    from bspgraph.backend import gpu_count

    if request.param == "cupy" and gpu_count() == 0:
        pytest.skip("needs CuPy and a GPU")
    return request.param


def _grid_axes(grid) -> set:
    """Every (partitioner, communicator, devices) of the grid."""
    return set(itertools.product(grid.PARTITIONERS, grid.COMMUNICATORS, grid.DEVICES))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The grid of primitive x partitioner x communicator x devices this run covered, and the
    reasons tests were skipped (so that a missing input, such as pymetis or the shared graphs,
    is seen and not only counted)."""
    import sys

    grid = sys.modules.get("grid")
    write = terminalreporter.write_line
    if grid is not None:
        covered = grid.COVERED
        total = len(grid.ROWS) * len(grid.PARTITIONERS) * len(grid.COMMUNICATORS)
        total *= len(grid.DEVICES)
        axes = _grid_axes(grid)
        in_grid = sum(key[1:] in axes for key in covered)
        terminalreporter.section("multi-device grid", sep="-")
        write(
            f"{in_grid} of {total} cells passed (hypothesis seed "
            f"BSPGRAPH_TEST_SEED={SEED}, profile {PROFILE}), and {len(covered) - in_grid} "
            f"hand-written cells off the grid; each also ran the empty graph and "
            f"{len(grid.TRIVIAL) - 1} edgeless ones"
        )
        for row in grid.ROWS:
            counts = [n for key, n in covered.items() if key[0] == row.name]
            if counts:
                write(
                    f"  {row.name:28} {len(counts):3} cells, examples a cell: "
                    f"{min(counts)}-{max(counts)} (asked {row.examples * grid.DEEP}), "
                    f"{sum(counts)} in all"
                )
            else:
                write(f"  {row.name:28}   0 cells")
        for partitioner in grid.PARTITIONERS:
            if not any(key[1] == partitioner for key in covered):
                write(f"  partitioner {partitioner}: no cell ran")
        if not grid.HAS_PYMETIS:
            write(f"  WARNING: {grid.NO_PYMETIS}", yellow=True, bold=True)
        if grid.KNOWN_BUGS:
            write(f"  {len(grid.KNOWN_BUGS)} cells are known bugs (strict xfail, see grid.py)")
    reasons = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        if isinstance(report.longrepr, tuple):
            reasons[report.longrepr[2].removeprefix("Skipped: ")] += 1
    if reasons:
        terminalreporter.section("skipped, by reason", sep="-")
        for reason, count in reasons.most_common():
            write(f"  {count:4}  {reason}")
