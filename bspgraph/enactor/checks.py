"""A checked run (``enact(..., check=True)``): after every step, the state compared with a
snapshot taken before it, so that a change the enactor could not carry to other devices is an
error naming the state and the vertex, not a wrong answer on several devices; and a lifted run
that takes more than ``max(4 x`` the one-device run's supersteps ``, 64)`` fails, naming what
never settled (:class:`Watch`), rather than run on forever."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..backend import to_host
from ..exceptions import ContractError


def snapshot(graph, state) -> dict[str, np.ndarray]:
    """Host copies of every per-vertex state array (rows of lanes too)."""
    return {
        name: to_host(array).copy()
        for name, array in vars(state).items()
        if array is not None and getattr(array, "ndim", 0) >= 1
    }


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
        # (levels run in one call on one device, ``passed``, return their last level only;
        # on a part among several the advance runs them so only where every level returns)
        if combiner is not None and not output.passed:
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
                how = (
                    "is not communicated"
                    if combiner is None
                    else "is 'replace': the owner's value wins"
                )
                raise ContractError(
                    f"{kind}.step (superstep {iteration}) changed {name!r} of vertex "
                    f"{int(np.flatnonzero(foreign)[0])}, which this device does not own, and "
                    f"{name!r} {how}: the change is lost on several devices; communicate it "
                    f"with a combiner, or write it only for owned vertices (graph.owned_ids())"
                )


def verify_alike(primitive, iteration: int, snapshots: dict) -> None:
    """ContractError where a state declared ``alike`` (``State.alike``) holds different values
    on two devices of this process as superstep ``iteration`` begins (``snapshots``: each
    device's :func:`snapshot`): one device running light supersteps for all (rule 6) would
    not see what the others hold."""
    first, *others = snapshots
    for name in (spec.name for spec in primitive.state if spec.alike):
        mine = snapshots[first].get(name)
        for d in others if mine is not None else ():
            theirs = snapshots[d][name]
            differs = (mine != theirs) & ~(_nan(mine) & _nan(theirs))
            if differs.ndim > 1:  # rows of lanes: a vertex differs when any lane does
                differs = differs.reshape(differs.shape[0], -1).any(axis=1)
            if differs.any():
                raise ContractError(
                    f"{type(primitive).__name__}: {name!r} is declared alike but differs "
                    f"between devices {first} and {d} as superstep {iteration} begins, at "
                    f"vertices {_ids(np.flatnonzero(differs))}: a state that keeps what each "
                    f"device saw of its own supersteps is not alike (State(..., alike=False))"
                )


def _nan(array: np.ndarray) -> np.ndarray:
    return np.isnan(array) if array.dtype.kind == "f" else np.zeros(array.shape, dtype=bool)


MINIMUM_SUPERSTEPS = 64  # a lifted run may always take this many
SUPERSTEPS_FACTOR = 4  # ... or this many times its one-device run's
WINDOW = 8  # the last supersteps before the limit, watched to say what never settled
SHOWN = 8  # vertices named per finding


def superstep_limit(one_device: int) -> int:
    """The supersteps a lifted run may take when one device takes ``one_device``."""
    return max(SUPERSTEPS_FACTOR * one_device, MINIMUM_SUPERSTEPS)


class Reference:
    """The one-device run that checked lifted runs are measured against, passed as ``check=``
    (it is true): a checked run on one device records its supersteps here (the most of every
    run it is passed to: a driver may enact several primitives), and a checked run on several
    devices may take :func:`superstep_limit` of them. :func:`bspgraph.testing.assert_lifts`
    passes one to its one-device run, then to every lifted run; ``check=True`` finds the
    one-device count itself, by a one-device run, once a lifted run has gone on for long."""

    def __init__(self, supersteps: int | None = None):
        self.supersteps = supersteps

    def __bool__(self) -> bool:
        return True

    def saw(self, supersteps: int) -> None:
        self.supersteps = max(self.supersteps or 0, int(supersteps))

    def __repr__(self) -> str:
        return f"Reference(supersteps={self.supersteps})"


class Watch:
    """One checked lifted run's guard against running forever (``check`` inside the run: it is
    true). :meth:`superstep` is called after every superstep that did not end the run; from
    :data:`WINDOW` supersteps before the limit it keeps host copies of every device's state to
    see what keeps changing, and past the limit it raises ContractError naming it: the states
    that changed and at which vertices, the scalars and the devices whose ``converged`` stayed
    False, the frontier, and the vertices whose communicated state a device holds otherwise
    than its owner (a combiner that drops the owner's change, or a step that reads other
    vertices' state without ``needs_all``).

    ``reference``: the one-device run's supersteps, an int, a :class:`Reference`, or a
    function that runs it and returns them (called only when the run reaches
    ``MINIMUM_SUPERSTEPS - WINDOW`` supersteps)."""

    def __init__(self, primitive, reference: int | Reference | Callable[[], int]):
        self.primitive = primitive
        self.reference = reference
        self.limit: int | None = None
        self.one_device: int | None = None
        self.seen: list[tuple[int, dict]] = []  # (superstep, {device: {name: host array}})

    def __bool__(self) -> bool:
        return True

    def superstep(
        self, iteration: int, devices: dict, states: dict, frontiers: dict, converged: dict
    ) -> None:
        """After superstep ``iteration`` (supersteps done), the run not yet converged: nothing
        until the window before the limit; past the limit, the ContractError."""
        if self.limit is None:
            if iteration < MINIMUM_SUPERSTEPS - WINDOW:
                return
            self.one_device = self._one_device()
            self.limit = superstep_limit(self.one_device)
        if iteration < self.limit - WINDOW:
            return
        self.seen.append((iteration, {d: snapshot(devices[d], states[d]) for d in states}))
        if iteration >= self.limit:
            raise ContractError(self._report(iteration, devices, states, frontiers, converged))

    def _one_device(self) -> int:
        reference = self.reference
        if isinstance(reference, Reference):
            reference = reference.supersteps
        return int(reference() if callable(reference) else reference)

    def _report(self, iteration, devices, states, frontiers, converged) -> str:
        kind = type(self.primitive).__name__
        communicated = set(self.primitive.communicate)
        lines = [
            f"{kind}: a lifted run on {len(states)} devices did not converge in {iteration} "
            f"supersteps, where one device takes {self.one_device} (a checked run may take "
            f"max({SUPERSTEPS_FACTOR} x {self.one_device}, {MINIMUM_SUPERSTEPS})); what never "
            "settled:"
        ]
        lines += self._changing(communicated)
        stuck = sorted(d for d, done in converged.items() if not done)
        if stuck:
            lines.append(f"- converged stayed False on device(s) {stuck}")
        nan = False
        for spec in self.primitive.scalars:
            values = {d: to_host(getattr(states[d], spec.name)).item() for d in states}
            lines.append(f"- scalar {spec.name!r}: {_listed(values)}")
            nan = nan or any(value != value for value in values.values())
        if nan and self.primitive.reads_neighbours:
            lines.append(
                "- NaN with reads_neighbours: a checked run sets the communicated values a "
                "device neither owns nor names in its lists to NaN, and the step read one; "
                "declare reads_neighbours only for a step that reads others' vertices through "
                "its lists alone"
            )
        held = {d: to_host(frontiers[d].ids) for d in frontiers}
        if not self.primitive.every_vertex and any(len(ids) for ids in held.values()):
            lines.append(f"- the frontier: {_listed({d: _ids(ids) for d, ids in held.items()})}")
        lines += self._disagreeing(communicated, devices)
        if self.primitive.params is not None:
            lines.append("(vertex ids as the run numbers them: each part one id range)")
        return "\n".join(lines)

    def _changing(self, communicated: set) -> list[str]:
        """Which state changed, at which vertices, over the watched supersteps."""
        first, *later = [copies for _, copies in self.seen]
        lines, previous = [], first
        changed: dict[str, np.ndarray] = {}
        times: dict[str, int] = {}
        for copies in later:
            for d, arrays in copies.items():
                for name, new in arrays.items():
                    old = previous[d][name]
                    moved = (old != new) & ~(_nan(old) & _nan(new))
                    if moved.ndim > 1:
                        moved = moved.reshape(moved.shape[0], -1).any(axis=1)
                    if moved.any():
                        changed[name] = changed.get(name, False) | moved
                        times[name] = times.get(name, 0) + 1
            previous = copies
        for name in sorted(changed):
            how = "communicated" if name in communicated else "not communicated"
            lines.append(
                f"- {name!r} ({how}) kept changing: at vertices "
                f"{_ids(np.flatnonzero(changed[name]))} over the last {len(later)} "
                "supersteps"
            )
        if not changed:
            lines.append(
                f"- no state changed in the last {len(later)} supersteps, yet the run did not stop"
            )
        return lines

    def _disagreeing(self, communicated: set, devices: dict) -> list[str]:
        """Vertices whose communicated state a device holds otherwise than their owner."""
        _, copies = self.seen[-1]
        if len(copies) < 2:
            return []
        owners = {d: devices[d].context.owned for d in copies}
        if any(owned is None for owned in owners.values()):
            return []
        owners = {d: to_host(owned) for d, owned in owners.items()}
        lines = []
        for name in sorted(communicated):
            if any(name not in arrays for arrays in copies.values()):
                continue
            owner_value = np.empty_like(next(iter(copies.values()))[name])
            for d, owned in owners.items():
                owner_value[owned] = copies[d][name][owned]
            found = []
            for d, arrays in copies.items():
                held = arrays[name]
                differs = (held != owner_value) & ~(_nan(held) & _nan(owner_value))
                if differs.ndim > 1:
                    differs = differs.reshape(differs.shape[0], -1).any(axis=1)
                for v in np.flatnonzero(differs)[:SHOWN]:
                    owner = next(o for o, owned in owners.items() if owned[v])
                    found.append(
                        f"vertex {int(v)}: {_value(owner_value[v])} on its owner "
                        f"(device {owner}), {_value(held[v])} on device {d}"
                    )
            if found:
                hint = (
                    "every device sees every update (needs_all): is the combiner the one under "
                    "which each copy reaches the owner's value?"
                    if self.primitive.needs_all
                    else "a step that reads other vertices' state (a pull, a vote over "
                    "neighbours) needs needs_all = True"
                )
                lines.append(
                    f"- {name!r} differs from its owner's value at "
                    f"{'; '.join(found[:SHOWN])} ({hint})"
                )
        return lines


def _ids(ids) -> str:
    ids = [int(v) for v in ids]
    return str(ids) if len(ids) <= SHOWN else f"{ids[:SHOWN]} and {len(ids) - SHOWN} more"


def _value(value) -> str:
    return str(value.tolist() if hasattr(value, "tolist") else value)


def _listed(values: dict) -> str:
    return ", ".join(f"{value} on device {d}" for d, value in values.items())
