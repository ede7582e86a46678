"""Test options: a reproducible seed (BSPGRAPH_TEST_SEED), GPU tests skipped without a GPU,
slow tests skipped unless asked for (--slow or -m slow), hypothesis profiles chosen by
HYPOTHESIS_PROFILE ("default", "ci", or "deep": 1,000 examples a property)."""

import os

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("default", deadline=None, max_examples=60, derandomize=False)
settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True)
settings.register_profile("deep", deadline=None, max_examples=1000)  # a long search for bugs
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

SEED = int(os.environ.get("BSPGRAPH_TEST_SEED", np.random.SeedSequence().entropy % 2**32))


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", help="also run tests marked slow")


def pytest_report_header(config):
    return f"BSPGRAPH_TEST_SEED={SEED}"


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


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


@pytest.fixture(params=["numpy", "cupy"])
def backend(request):
    """Each array backend; CuPy is skipped where no GPU is usable."""
    from bspgraph.backend import gpu_count

    if request.param == "cupy" and gpu_count() == 0:
        pytest.skip("needs CuPy and a GPU")
    return request.param
