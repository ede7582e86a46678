"""The run context: what the enactor tells operators about the run on a device."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class Arrivals:
    """What the others' values sent to a device's part are still waiting on: the enactor sets
    ``pending`` (a call that makes this device's queue wait for them) where it lets them
    arrive behind the next step's work on its own vertices; a pull that reads them calls
    :meth:`wait` first, after what it can do without them."""

    def __init__(self) -> None:
        self.pending = None

    def wait(self) -> None:
        """Queue the wait for the others' values, once (nothing where none are on the way)."""
        pending, self.pending = self.pending, None
        if pending is not None:
            pending()


@dataclass(frozen=True, eq=False)
class RunContext:
    """The run as one device sees it (Gunrock's context): set by the enactor on each device's
    part of the graph (``graph.context``), read by operators, so that none asks how the graph
    was cut; primitives never read it (a primitive on one device does not know that others
    exist).

    ``owned``: a bool mask of the vertices whose edges and results this device holds (None:
    every vertex); ``parts``: the devices of the run; ``device``: this one's index among them;
    ``degrees``: ``(out_degree, in_degree,
    num_edges)`` of the whole graph on this device's backend, for cost models (None: this
    graph's own), so that every device takes the same decision; ``arrivals``: the others'
    values still on their way here (:class:`Arrivals`).
    """

    owned: Any = None
    parts: int = 1
    degrees: tuple | None = None
    device: int = 0
    arrivals: Arrivals = field(default_factory=Arrivals)

    @property
    def global_view(self) -> bool:
        """Whether the frontier, state and edges this device sees are the whole run's (one
        device): then a decision taken from them alone is every device's (Beamer's rule by
        frontier size after a pull, several levels in one advance, one-device shortcuts). A
        part of a lifted run (``owned`` set) is not, even the only one: there each level is
        a superstep, as the lifted enactor counts them (on a GPU, levels run in one advance
        there gave later levels wrong depths: one NCCL rank, or one worker of bg.cluster)."""
        return self.parts == 1 and self.owned is None

    def to(self, backend) -> RunContext:
        """This context with its arrays on ``backend``."""
        if self.owned is None and self.degrees is None:
            return self
        owned = None if self.owned is None else backend.asarray(self.owned)
        degrees = None
        if self.degrees is not None:
            out_degree, in_degree, edges = self.degrees
            degrees = (backend.asarray(out_degree), backend.asarray(in_degree), edges)
        return RunContext(owned, self.parts, degrees, self.device)
