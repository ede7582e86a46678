"""A primitive's state on a device: allocated from its declarations, gathered at the end."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..backend import backend_of, ops, to_host
from ..exceptions import ContractError
from .contract import Primitive, State


def allocate(primitive: Primitive, graph) -> SimpleNamespace:
    """The primitive's state arrays on ``graph``'s backend, initialised."""
    xp, n = graph.xp, graph.num_vertices
    arrays = {}
    for spec in primitive.state:
        if spec.when is not None and not primitive.options.get(spec.when):
            arrays[spec.name] = None
            continue
        dtype = _dtype(spec.dtype, graph)
        lanes = spec.width(primitive.options)
        if lanes is not None:  # a row of lanes per vertex
            if spec.init == "id":
                raise ContractError(
                    f"{type(primitive).__name__}: State {spec.name!r} of lanes "
                    "cannot start from 'id'"
                )
            arrays[spec.name] = xp.full((n, int(lanes)), _initial_value(spec, dtype), dtype=dtype)
        elif spec.init == "id":
            arrays[spec.name] = xp.arange(n, dtype=dtype)
        else:
            arrays[spec.name] = graph.backend.full(n, _initial_value(spec, dtype), dtype)
    for scalar in primitive.scalars:
        arrays[scalar.name] = xp.asarray(scalar.init, dtype=scalar.dtype)
    return SimpleNamespace(**arrays)


def _dtype(name: str, graph) -> np.dtype:
    if name == "vertex":
        return graph.indices.dtype
    if name == "weight":
        return graph.weights.dtype if graph.weights is not None else np.dtype(np.float64)
    return np.dtype(name)


def _initial_value(spec: State, dtype: np.dtype):
    if spec.init == "max":
        return np.iinfo(dtype).max if dtype.kind in "iu" else np.inf
    if spec.init == "inf":
        return np.inf
    return spec.init


def gather(primitive: Primitive, state: SimpleNamespace, *, host: bool = True) -> dict:
    """Host copies of the output state arrays, with init sentinels replaced by ``unset``, and
    of the scalars; with ``host=False`` the arrays stay where they are (on the device)."""
    result = {scalar.name: to_host(getattr(state, scalar.name))[()] for scalar in primitive.scalars}
    for spec in primitive.state:
        if not spec.output:
            continue
        array = getattr(state, spec.name)
        if array is None:
            result[spec.name] = None
            continue
        if spec.unset is not None and spec.init in ("max", "inf"):
            backend = backend_of(array)
            with backend.activate():  # on the array's device, before the copy
                ops.replace(backend, array, _initial_value(spec, array.dtype), spec.unset)
        result[spec.name] = to_host(array) if host else array
    return result
