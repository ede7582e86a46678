"""Frontier: a set of vertices held as sparse ids, a dense mask, or both, converted on demand."""

from __future__ import annotations

from ..backend import ops, read_together
from ..exceptions import FrontierError
from ..graph.graph import index_dtype

SPARSE_SHARE = 16  # a frontier of fewer than V / SPARSE_SHARE vertices is best held as ids


class Frontier:
    """A set of vertices of a graph with ``num_vertices`` vertices on one backend.

    Sparse form: ``ids`` (unique vertex ids, any order). Dense form: ``mask`` (bool per vertex).
    Each is computed from the other on first use and cached; neither is modified in place.
    ``out_edges``, ``passed``, ``passed_edges``, ``pulled_from`` and ``owned_only`` are what
    a producer knew: the members' out-edges, the sizes of the levels a repeated advance went
    through before this one (each a superstep) and their out-edges (None where not counted),
    the size of the frontier an early-exit pull made this one from, and whether every member
    is a vertex this device owns (a pull on a part whose in-lists are its own vertices').
    ``edges_before``: the out-edges of the frontiers that a traversal of a visit-once functor
    advanced from before this one (0 on a run's first frontier, set by the enactor; advance
    adds its input's; None where one was not counted). ``partial``: the enactor's mark of a
    frontier that is only this device's share of the run's (several devices, a primitive
    without ``needs_all``): advance never pulls from it.
    ``at_most`` bounds the size while it is counted on the device (the enactor's, from the
    step's input: it chooses messages and paths, never sizes a buffer). A GPU kernel's count of the members and
    their out-edges may stay on the device until the size, ids or out-edges are first asked
    for (:meth:`listed`, ``from_mask(counted=...)``): one host read, deferred.
    Build one with :meth:`from_ids`, :meth:`from_mask`, :meth:`listed`, :meth:`all` or
    :meth:`empty`.
    """

    __slots__ = (
        "num_vertices",
        "backend",
        "_ids",
        "_mask",
        "_size",
        "_out_edges",
        "_counted",
        "passed",
        "passed_edges",
        "pulled_from",
        "owned_only",
        "at_most",
        "edges_before",
        "partial",
    )

    def __init__(self, num_vertices: int, backend, *, ids=None, mask=None, out_edges=None):
        if ids is None and mask is None:
            raise ValueError("Frontier needs ids or a mask")
        self.num_vertices, self.backend = int(num_vertices), backend
        self._ids, self._mask, self._size = ids, mask, None
        self._out_edges = out_edges  # the members' out-degrees (cost_degrees) summed, if known
        self._counted = None  # (counts, size, out_edges, listed): counts, device arrays (or
        # ints) whose values in turn are the members beyond size and their out-edges beyond
        # out_edges (0 when left out); listed, the producer's list: see listed
        self.passed: tuple[int, ...] = ()  # a repeated advance: the sizes of the levels before
        self.passed_edges: tuple[int, ...] | None = ()  # ... and their out-edges, if counted
        self.owned_only = False  # every member owned by this device (a part's pull)
        self.at_most: int | None = None  # the most members, while the size is on the device
        self.pulled_from: int | None = None  # an early-exit pull: its input's size (kept by
        # the enactor on several devices only where every device pulled from one frontier)
        self.edges_before: int | None = None  # a visit-once traversal's edges so far
        self.partial = False  # this device's share only of the run's frontier

    @classmethod
    def from_ids(cls, graph, ids, *, out_edges: int | None = None) -> Frontier:
        """The frontier of the unique vertex ``ids`` (a sequence or array) of ``graph``;
        ``out_edges``, when the producer counted it, spares the direction test a host read."""
        ids = graph.backend.asarray(ids).astype(graph.indices.dtype, copy=False)
        return cls(graph.num_vertices, graph.backend, ids=ids, out_edges=out_edges)

    @classmethod
    def from_mask(
        cls, graph, mask, *, size: int | None = None, out_edges: int | None = None, counted=None
    ) -> Frontier:
        """The frontier of the vertices where the bool array ``mask`` is True; ``size`` (its
        count of True) and ``out_edges``, when the producer counted them, spare host reads.
        ``counted``: ``(counts, size, out_edges)`` where the producer's count is still on the
        device (``counts``: the members beyond ``size``, and their out-edges beyond
        ``out_edges`` unless that is None), read when first asked for: the producer's
        host read deferred."""
        frontier = cls(graph.num_vertices, graph.backend, mask=mask, out_edges=out_edges)
        frontier._size = size
        frontier._counted = None if counted is None else ((counted[0],), *counted[1:], None)
        return frontier

    @classmethod
    def listed(cls, graph, out, counts) -> Frontier:
        """The vertices ``out[:counts[0]]`` (distinct), ``counts[1]`` their out-edges: a
        producer's list and count still on the device (two integers), read when first asked
        for (the size, the ids, the out-edges): the producer's host read deferred."""
        frontier = cls(graph.num_vertices, graph.backend, ids=out)
        frontier._counted = ((counts,), 0, 0, out)
        return frontier

    @classmethod
    def all(cls, graph) -> Frontier:
        """Every vertex of ``graph`` (every vertex it owns, on one device of several), its
        size and out-edges known (those of a part's vertices summed once per graph)."""
        if graph.context.owned is not None:
            index = graph.owned_index()
            size = index.stop - index.start if isinstance(index, slice) else index.shape[0]
            edges = graph.cached(
                ("owned out-edges",),
                lambda: int(graph.backend.total(graph.cost_degrees()[0][index])),
            )
            return cls.from_mask(graph, graph.context.owned, size=int(size), out_edges=edges)
        n = graph.num_vertices
        return cls.from_mask(
            graph, graph.xp.ones(n, dtype=bool), size=n, out_edges=int(graph.cost_degrees()[2])
        )

    @classmethod
    def empty(cls, graph) -> Frontier:
        """No vertex."""
        return cls.from_ids(graph, graph.xp.zeros(0, dtype=graph.indices.dtype))

    @classmethod
    def union(cls, graph, *frontiers: Frontier) -> Frontier:
        """The vertices in any of ``frontiers``: their ids merged and deduplicated when few, a
        mask when many (so that a small union costs no O(V) pass)."""
        parts = [f for f in frontiers if len(f)]
        if len(parts) <= 1:
            return parts[0] if parts else cls.empty(graph)
        if sum(len(f) for f in parts) * SPARSE_SHARE < graph.num_vertices:
            ids = graph.xp.concatenate([f.ids for f in parts])
            return cls.from_ids(graph, ops.unique(graph.backend, ids))
        dense = [f for f in parts if f.is_dense]
        mask = (
            graph.backend.copy(dense[0].mask)
            if dense
            else graph.xp.zeros(graph.num_vertices, dtype=bool)
        )
        for f in parts:
            if f.is_dense:
                mask |= f.mask
            else:
                mask[graph.backend.index(f.ids)] = True
        return cls.from_mask(graph, mask)

    @property
    def xp(self):
        return self.backend.xp

    @property
    def ids(self):
        """Vertex ids (ascending when converted from the mask)."""
        if self._counted is not None:
            self._read_counts()
        if self._ids is None:
            dtype = index_dtype(self.num_vertices)  # a known size spares the GPU a host read
            self._ids = self.backend.nonzero(self._mask, dtype, self._size)
        return self._ids

    @property
    def mask(self):
        """Bool array, True for members (of a producer's list still counted on the device,
        marked by a kernel that reads the count: no host read)."""
        if self._mask is None:
            listing = self.listing
            if listing is not None:
                ids, count = listing
                self._mask = ops.mask_of(self.backend, ids, self.num_vertices, count=count)
                return self._mask
            if self._counted is not None:
                self._read_counts()
            self._mask = ops.mask_of(self.backend, self._ids, self.num_vertices)
        return self._mask

    @property
    def listing(self) -> tuple | None:
        """``(ids, count)`` where a producer's list is still counted on the device: its ids
        and that count (a device array whose first entry says how many of ``ids`` lead; the
        rest are not members); else None. No host read."""
        counts, size, _, listed = self._counted or (None, 0, 0, None)
        return (listed, counts[0]) if listed is not None and size == 0 else None

    @property
    def size_known(self) -> bool:
        """Whether the size is known on the host (no count pending on the device)."""
        return self._counted is None and (self._size is not None or self._ids is not None)

    @property
    def is_dense(self) -> bool:
        return self._ids is None

    @property
    def out_edges(self) -> int | None:
        """The members' out-degrees (``cost_degrees``) summed, where the producer counted them."""
        if self._counted is not None:
            self._read_counts()
        return self._out_edges

    @out_edges.setter
    def out_edges(self, value: int | None) -> None:
        if self._counted is not None:
            self._read_counts()
        self._out_edges = value

    def defer_counts(self, out_degree=None) -> None:
        """Queue on the device the count of the members, where it is not known, and with
        ``out_degree`` (a degree per vertex) their degrees summed, where not known: read at
        the first use, or with other frontiers' by :func:`read_counts` (no host read here);
        where a count is pending without the out-edges, every member's are queued beside it."""
        if self._counted is not None:
            counts, size, out_edges, listed = self._counted
            if out_degree is not None and out_edges is None:
                edges = self.backend.masked_total(out_degree, **self._members())
                self._counted = ((*counts, edges), size, 0, listed)
            return
        count_members = self._size is None and self._ids is None
        count_edges = out_degree is not None and self._out_edges is None
        if count_edges and (self._size == 0 or self._ids is not None and not self._ids.shape[0]):
            self._out_edges, count_edges = 0, False  # no member: no edge, no kernel
        if not (count_members or count_edges):
            return
        members = self.backend.count(self._mask) if count_members else 0
        if not count_edges:
            self._counted = ((members,), 0, self._out_edges, None)
            return
        edges = self.backend.masked_total(out_degree, **self._members())
        self._counted = ((members, edges), 0 if count_members else len(self), 0, None)

    def _members(self) -> dict:
        """The members as they are held, for :meth:`Backend.masked_total`: ``ids`` or ``mask``."""
        return {"ids": self._ids} if self._ids is not None else {"mask": self._mask}

    def _read_counts(self, values: list[int] | None = None) -> None:
        """Take the deferred counts in: ``values`` when read already (:func:`read_counts`),
        else read here."""
        counts, size, out_edges, listed = self._counted
        if values is None:  # the deferred host read
            values = self.backend.read([c for c in counts if not isinstance(c, int)])
            values = _spliced(counts, values)
        members, edges = values[0], sum(values[1:])  # (out-edges not counted: 0 there)
        if listed is not None and members > listed.shape[0]:  # (a kernel wrote the room only)
            raise FrontierError(
                f"a kernel found {members} vertices and its list had room for "
                f"{listed.shape[0]} (a push's room: its frontier's out_edges, then less than "
                "its members' out-degrees)"
            )
        self._counted, self._size = None, size + int(members)
        self._out_edges = None if out_edges is None else out_edges + int(edges)
        if listed is not None:
            self._ids = listed[: self._size]

    @property
    def wide(self) -> bool:
        """Whether it holds V / SPARSE_SHARE vertices or more: a set best passed over whole
        (as a mask) rather than through its ids."""
        return len(self) * SPARSE_SHARE >= self.num_vertices

    def __len__(self) -> int:
        if self._counted is not None:
            self._read_counts()
        if self._size is None:
            ids, mask = self._ids, self._mask
            self._size = int(ids.shape[0] if ids is not None else self.backend.count(mask))
        return self._size

    def __bool__(self) -> bool:
        return len(self) > 0

    def __repr__(self) -> str:
        form = "dense" if self.is_dense else "sparse"
        return f"Frontier({len(self)} of {self.num_vertices} vertices, {form})"


def read_counts(frontiers, arrays=()) -> list[list[int]]:
    """Read the deferred counts of ``frontiers`` (a producer's, :meth:`Frontier.defer_counts`)
    together, and the small integer ``arrays`` (``(backend, array)`` pairs: other counts on the
    devices) with them: one host read per device
    (:func:`~bspgraph.backend.read_together`), where one each would wait for the device as
    many times. The values of ``arrays``, in order."""
    pending = [frontier for frontier in frontiers if frontier._counted is not None]
    arrays = list(arrays)
    if not pending and not arrays:  # nothing on a device (NumPy's counts are known)
        return []
    values = iter(
        read_together(
            [
                *arrays,
                *(
                    (frontier.backend, count)
                    for frontier in pending
                    for count in frontier._counted[0]
                    if not isinstance(count, int)
                ),
            ]
        )
    )
    asked = [next(values) for _ in arrays]
    for frontier in pending:
        counts = frontier._counted[0]
        read = [next(values) for count in counts if not isinstance(count, int)]
        frontier._read_counts(_spliced(counts, read))
    return asked


def _spliced(counts: tuple, read: list[list[int]]) -> list[int]:
    """The values of ``counts`` (arrays and ints), the arrays' as ``read`` (in turn)."""
    arrays = iter(read)
    return [v for c in counts for v in ([c] if isinstance(c, int) else next(arrays))]
