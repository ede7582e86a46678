"""Where the runs of this context go: the cluster of the innermost ``with bg.cluster(P)``
block (None: this process). The enactor reads it; :mod:`.cluster` sets it."""

from __future__ import annotations

import contextvars

RUNNER: contextvars.ContextVar = contextvars.ContextVar("bspgraph_cluster", default=None)


def current():
    """The cluster of the innermost ``with`` block, or None."""
    return RUNNER.get()
