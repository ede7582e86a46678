"""A checked run (``enact(..., check=True)``): after every step, the state compared with a
snapshot taken before it, so that a change the enactor could not carry to other devices is an
error naming the state and the vertex, not a wrong answer on several devices."""

from __future__ import annotations

import numpy as np

from ..backend import to_host
from ..exceptions import ContractError


def snapshot(graph, state) -> dict[str, np.ndarray]:
    """Host copies of every per-vertex state array (rows of lanes too)."""
    return {name: to_host(array).copy() for name, array in vars(state).items()
            if array is not None and getattr(array, "ndim", 0) >= 1}  # fmt: skip


def verify(primitive, contract, iteration: int, graph, before: dict, state, output) -> None:
    """ContractError when ``step`` changed (rules 1 and 2 of the contract):

    - a communicated state at a vertex it did not return (the change would not travel);
    - an output state that is not communicated, or a ``replace`` state, at a vertex this device
      does not own (the result is read from owners: the change would be lost).
    """
    kind = type(primitive).__name__
    returned = to_host(output.mask)
    owned = graph.context.owned
    owned = np.ones(graph.num_vertices, dtype=bool) if owned is None else to_host(owned)
    outputs = {spec.name for spec in primitive.state if spec.output}
    for name, old in before.items():
        new = to_host(getattr(state, name))
        changed = (old != new) & ~(_nan(old) & _nan(new))
        if changed.ndim > 1:  # rows of lanes: a vertex changed when any lane did
            changed = changed.reshape(changed.shape[0], -1).any(axis=1)
        combiner = contract.combiners.get(name)
        if combiner is not None:
            lost = changed & ~returned
            if lost.any():
                raise ContractError(
                    f"{kind}.step (superstep {iteration}) changed {name!r} of vertex "
                    f"{int(np.flatnonzero(lost)[0])} but did not return that vertex: on several "
                    f"devices the change would not travel; return every vertex whose "
                    f"communicated state changed"
                )
        if (combiner is None and name in outputs) or (combiner is not None and combiner.owner_only):
            foreign = changed & ~owned
            if foreign.any():
                how = ("is not communicated" if combiner is None
                       else "is 'replace': the owner's value wins")  # fmt: skip
                raise ContractError(
                    f"{kind}.step (superstep {iteration}) changed {name!r} of vertex "
                    f"{int(np.flatnonzero(foreign)[0])}, which this device does not own, and "
                    f"{name!r} {how}: the change is lost on several devices; communicate it "
                    f"with a combiner, or write it only for owned vertices (graph.owned_ids())"
                )


def _nan(array: np.ndarray) -> np.ndarray:
    return np.isnan(array) if array.dtype.kind == "f" else np.zeros(array.shape, dtype=bool)
