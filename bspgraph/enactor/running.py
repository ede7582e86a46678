"""Where the runs of this context go: the cluster of the innermost ``with bg.cluster(P)``
block, else, for a run with ``devices=P`` on GPUs, the workers this process started for
such runs (None: this process). The enactor reads it; :mod:`.cluster` sets it."""

from __future__ import annotations

import contextvars
import os
import shutil
import sys
import warnings

RUNNER: contextvars.ContextVar = contextvars.ContextVar("bspgraph_cluster", default=None)


class GPUWorkers:
    """The workers, one process a GPU, that runs with ``devices=P`` on GPUs go to when no
    cluster is named: started by the first such run (which says so once), kept for the next
    ones, and stopped for another P (or with the process). ``start(P, backend=...)``: how to
    start them (``bg.cluster``'s class, which sets it where it is defined)."""

    def __init__(self) -> None:
        self.start = None
        self.cluster = None

    def for_run(self, device_ids: list[int], backend: str):
        """The cluster a run on ``device_ids`` (GPUs 0 .. P-1, P >= 2) goes to, started or
        kept; None where no cluster can start (no ``start``: bg.cluster's module not loaded)."""
        size = len(device_ids)
        if self.start is None:
            return None
        kept = self.cluster
        if kept is not None and (kept.size, kept.backend) != (size, backend):
            self.cluster.close()
            self.cluster = None
        if self.cluster is None:
            warnings.warn(
                f"devices={device_ids}: the run goes to {size} worker processes, one a GPU, "
                f"started now and kept for later runs (bg.cluster({size}) starts, reuses and "
                "closes them explicitly)",
                stacklevel=4,
            )
            self.cluster = self.start(size, backend=backend)
        return self.cluster


GPU_WORKERS = GPUWorkers()


def current():
    """The cluster of the innermost ``with`` block, or None."""
    return RUNNER.get()


def mpiexec() -> str | None:
    """The ``mpiexec`` that starts workers: the one beside this Python (a virtual
    environment's, where the ``mpi`` extra puts MPICH's, whether the environment is active
    or not: it matches that environment's mpi4py), else the PATH's; None where neither is."""
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return shutil.which("mpiexec")
