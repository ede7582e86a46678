"""Run ids: a cut renumbered so that every part owns one contiguous id range, and a run's
parameters and results translated between the caller's ids and the run's."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..backend import backend_of, ops
from ..backend.base import row_positions
from ..exceptions import ContractError
from ..graph.csr import CSR
from ..graph.graph import Graph

# What an init_frontier parameter holds (``Primitive.params``), and what a State's values are
# (``State.holds``): the only kinds a relabelling translates.
PARAMS = ("id", "per_vertex", "value")
HOLDS = ("values", "ids", "least id")


@dataclass(frozen=True, eq=False)
class Relabelling:
    """The run ids of a cut whose parts are not id ranges: part 0's vertices first, then part
    1's, and so on, each part's in the caller's order. ``order[r]`` is the caller's id of run
    id ``r`` and ``run_id[v]`` the run id of the caller's vertex ``v`` (host arrays of the
    graph's id dtype). Built once per graph and cut (the enactor caches it with the parts)."""

    order: np.ndarray
    run_id: np.ndarray
    _copies: dict = field(default_factory=dict, repr=False)  # (order, run_id) per backend

    @classmethod
    def of(cls, owner: np.ndarray, dtype) -> Relabelling | None:
        """The relabelling that makes every part of ``owner`` a range; None when each already
        is one, in part order (an edge_balanced cut), so that the run keeps the caller's ids."""
        if owner.size < 2 or bool((owner[1:] >= owner[:-1]).all()):
            return None
        order = np.argsort(owner, kind="stable").astype(dtype)
        run_id = np.empty_like(order)
        run_id[order] = np.arange(order.size, dtype=dtype)
        return cls(order, run_id)

    def owner(self, owner: np.ndarray) -> np.ndarray:
        """``owner`` in run ids: non-decreasing, each part one range."""
        return owner[self.order]

    def graph(self, host: Graph) -> Graph:
        """``host`` (a NumPy graph) in run ids: run vertex ``r`` has the edges of the caller's
        ``order[r]``, its neighbours renamed and each list sorted again by counting sorts
        (a transpose, which is the graph itself when undirected; twice when directed): O(V + E).
        The in-edges of a directed graph are built from these when first read."""
        import scipy.sparse as sp

        forward, n = host.forward, host.num_vertices
        degrees = np.diff(forward.offsets)[self.order]
        offsets = np.zeros_like(forward.offsets)
        np.cumsum(degrees, out=offsets[1:])
        positions = row_positions(
            forward.offsets[:-1][self.order].astype(np.int64), degrees.astype(np.int64)
        )
        renamed = sp.csr_matrix(
            (positions, self.run_id[forward.indices[positions]], offsets), shape=(n, n)
        )  # rows renamed, neighbours not yet sorted
        ordered = renamed.tocsc() if not host.directed else renamed.tocsc().tocsr()
        positions = ordered.data  # each edge's position in the caller's CSR
        weights = None if forward.weights is None else forward.weights[positions]
        csr = CSR(
            ordered.indptr.astype(forward.offsets.dtype, copy=False),
            ordered.indices.astype(forward.indices.dtype, copy=False),
            weights,
        )
        return Graph(csr, n, directed=host.directed, backend=host.backend, summary=host.summary)

    def params(self, primitive, params: dict) -> dict:
        """``params`` of ``primitive.init_frontier`` in run ids, by ``primitive.params``: an
        "id" renamed (an int stays an int; a list or array becomes an array on the same
        backend), a "per_vertex" array (first axis the vertices) permuted, a scalar
        "per_vertex" and a "value" as they are."""
        return {name: self._in(primitive.params[name], value) for name, value in params.items()}

    def results(self, primitive, result: dict) -> dict:
        """``result`` (``gather``'s, host or device arrays) in the caller's ids: every output
        state's rows permuted back, its values renamed by ``State.holds``."""
        result = dict(result)
        for spec in primitive.state:
            value = result.get(spec.name)
            if spec.output and value is not None:
                result[spec.name] = self._out(spec.holds, value)
        return result

    def _on(self, backend) -> tuple:
        """``(order, run_id)`` on ``backend`` (copied once per backend)."""
        if backend not in self._copies:
            with backend.activate():
                self._copies[backend] = backend.asarray(self.order), backend.asarray(self.run_id)
        return self._copies[backend]

    def _in(self, kind: str, value):
        if kind == "value" or np.ndim(value) == 0 and kind == "per_vertex":
            return value
        if np.ndim(value) == 0:  # one id
            return int(self.run_id[int(value)])
        if isinstance(value, (list, tuple)):  # ids or values on the host
            value = np.asarray(value)
        backend = backend_of(value)
        order, run_id = self._on(backend)
        with backend.activate():
            if kind == "id":
                return backend.xp.take(run_id, value)
            return backend.xp.take(value, order, axis=0)

    def _out(self, holds: str, values):
        backend = backend_of(values)
        order, run_id = self._on(backend)
        xp, n = backend.xp, self.order.size
        with backend.activate():
            if holds == "ids":  # a vertex id (a negative or out-of-range one means none)
                inside = (values >= 0) & (values < n)
                renamed = xp.take(order, xp.where(inside, values, 0))
                values = xp.where(inside, renamed, values).astype(values.dtype, copy=False)
            elif holds == "least id":  # a class named by its least member: least caller id
                least = backend.full(n, np.iinfo(values.dtype).max, values.dtype)
                ops.scatter_min(backend, least, values, order.astype(values.dtype, copy=False))
                values = xp.take(least, values)
            return xp.take(values, run_id, axis=0)


def check_declarations(primitive, params: dict) -> None:
    """ContractError unless ``primitive``'s ``params`` (when declared) name every parameter
    of this run with a known kind, and its states' ``holds`` are known kinds on integers."""
    kind = type(primitive).__name__
    for spec in primitive.state:
        if spec.holds not in HOLDS:
            raise ContractError(
                f"{kind}: State {spec.name!r} holds={spec.holds!r}; expected "
                f"one of {', '.join(map(repr, HOLDS))}"
            )
        if spec.holds != "values" and spec.dtype != "vertex":
            raise ContractError(
                f"{kind}: State {spec.name!r} holds {spec.holds}: its dtype "
                f"must be 'vertex', not {spec.dtype!r}"
            )
    if primitive.params is None:
        return
    for name in params:
        if primitive.params.get(name) not in PARAMS:
            raise ContractError(
                f"{kind}.params[{name!r}] is {primitive.params.get(name)!r}; declare what the "
                f"parameter holds: one of {', '.join(map(repr, PARAMS))}"
            )
