"""Typed errors of bspgraph: every one names the problem and where it happened."""

from __future__ import annotations


class BspgraphError(Exception):
    """Base class of every error bspgraph raises on purpose."""


class GraphFormatError(BspgraphError, ValueError):
    """A graph file is malformed; the message starts with ``file:line:``."""

    def __init__(self, path: str, line: int | None, problem: str):
        self.path, self.line, self.problem = str(path), line, problem
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")


class DeviceError(BspgraphError, ValueError):
    """A device request cannot be met (unknown backend, too many devices, too little memory)."""


class OutOfDeviceMemory(DeviceError):  # noqa: N818 (the name the issue asks for)
    """A run needs more device memory than is free; the message gives both amounts."""


class CommunicationError(BspgraphError, RuntimeError):
    """A transport peer failed or disagreed; raised on every rank, never a hang."""


class WorkerError(CommunicationError):
    """A worker of a cluster (``bg.cluster``) failed or died: the call ended on every worker,
    and the message names the rank, its device and the cause."""


class FrontierError(BspgraphError, ValueError):
    """A frontier's recorded facts disagree with its members: a push found more vertices
    than its list had room for, the frontier's ``out_edges`` under its members' out-degrees."""


class ConvergenceError(BspgraphError, RuntimeError):
    """An iterative primitive did not reach its tolerance within its iteration limit."""


class PathCountOverflow(BspgraphError, OverflowError):  # noqa: N818 (as OverflowError reads)
    """A count exceeds its floating-point type (shortest paths on a large grid): the result
    would be inf or NaN."""


class DistanceOverflow(BspgraphError, OverflowError):  # noqa: N818 (as OverflowError reads)
    """A shortest path is longer than its floating-point type holds (float32 weights near
    its largest value): the vertex would read as unreachable (inf)."""


class ContractError(BspgraphError, TypeError):
    """A primitive breaks the lifting contract (docs/writing-a-primitive.md): an unknown or
    unfitting combiner, or, in a checked run, a state changed where the enactor cannot carry
    the change to other devices. The message names the primitive, the state and the vertex."""
