"""Writing a command's outputs: result arrays (CSV with an id column, or npy) and plots."""

from __future__ import annotations

import os

import numpy as np

from ..graph.io import atomic_output


def write_result(
    path: str, values: np.ndarray, ids: np.ndarray | None = None, name: str = "value"
) -> None:
    """``values`` to ``path``: a CSV of ``id,NAME`` rows (the file's ids; integers whole,
    floats with every digit, inf and nan as such) or an npy array in vertex order. Written to
    a temporary file and renamed (:func:`~bspgraph.graph.io.atomic_output`): an interrupt
    leaves no half-written output."""
    try:
        with atomic_output(path) as handle:
            if path.endswith(".csv"):
                if ids is None:
                    ids = np.arange(values.size)
                handle.write(f"id,{name}\n".encode())
                fmt = "%d" if values.dtype.kind in "iub" else "%.17g"
                table = np.empty(values.size, dtype=[("id", np.int64), ("value", values.dtype)])
                table["id"], table["value"] = ids, values
                np.savetxt(handle, table, delimiter=",", fmt=["%d", fmt])
            else:
                np.save(handle, values)
    except OSError as error:
        raise OSError(f"--output {path}: cannot write: {error.strerror or error}") from None


def check_writable(path: str, option: str) -> None:
    """Fail before a run, naming the user's ``path``, if it cannot be written."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"{option} {path}: is a directory")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{option} {path}: no such directory {directory}")
    if not os.access(directory, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise PermissionError(f"{option} {path}: not writable")


def import_matplotlib():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "--plot needs matplotlib; install it with: pip install matplotlib"
        ) from None
    return Figure


def plot(path: str, stats, title: str) -> None:
    """Frontier size and time per superstep (and messages, for several devices) as a PNG."""
    figure_class = import_matplotlib()
    steps = np.arange(1, len(stats.supersteps) + 1)
    frontier = [step.frontier for step in stats.supersteps]
    millis = [step.seconds * 1e3 for step in stats.supersteps]
    messages = [step.messages for step in stats.supersteps]
    panels = 3 if any(messages) else 2
    figure = figure_class(figsize=(7, 2.4 * panels), layout="constrained")
    axes = figure.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    axes[0].bar(steps, frontier, color="tab:blue")
    axes[0].set_ylabel("output frontier\n(vertices)")
    nonzero = [size for size in frontier if size]
    if nonzero and max(nonzero) > 100 * min(nonzero):  # BFS frontiers span decades
        axes[0].set_yscale("log")
    axes[1].bar(steps, millis, color="tab:orange")
    axes[1].set_ylabel("time (ms)")
    if panels == 3:
        axes[2].bar(steps, messages, color="tab:green")
        axes[2].set_ylabel("messages")
    axes[-1].set_xlabel("superstep")
    axes[-1].xaxis.get_major_locator().set_params(integer=True)
    axes[0].set_title(f"{title}: {len(steps)} supersteps, {stats.seconds * 1e3:.3g} ms")
    with atomic_output(path) as stream:
        figure.savefig(stream, dpi=100, format="png")
