"""Edge arrays to CSR on any backend: validate, symmetrise, merge duplicates, sort, count."""

from __future__ import annotations

import numpy as np

from ..backend import Backend, ops
from .csr import CSR, Summary, csr_of_sorted, index_dtype

MAX_VERTICES = 3_000_000_000  # the merge key src * n + dst must fit in int64


def build_graph(src, dst, weight, **options) -> dict:
    """See :meth:`Graph.from_edges`: the keyword arguments of the Graph it builds."""
    edges = [src, dst, weight]
    del src, dst, weight
    return build_owned(edges, **options)


def build_owned(
    edges: list, *, num_vertices, directed, duplicates, self_loops, backend: Backend
) -> dict:
    """:func:`build_graph` of ``[src, dst, weight]``, a list it empties: arrays that only the
    list held are freed as soon as the build has its own copy (a reader's parsed entries)."""
    src, dst, weight = edges
    edges.clear()
    xp = backend.xp
    if duplicates not in ("min", "sum"):
        raise ValueError(f"Graph.from_edges(duplicates={duplicates!r}): expected 'min' or 'sum'")
    src, dst = backend.asarray(src), backend.asarray(dst)
    if src.ndim != 1 or src.shape != dst.shape:
        raise ValueError(
            f"Graph.from_edges: src and dst must be 1-D of one length, got {src.shape} and {dst.shape}"
        )
    for name, ids in (("src", src), ("dst", dst)):
        if ids.size and ids.dtype.kind not in "iu":
            if ids.dtype.kind == "f" and bool(
                backend.all(xp.isfinite(ids) & (ids == xp.floor(ids)))
            ):
                continue
            raise ValueError(
                f"Graph.from_edges: {name} ids must be integers, got dtype {ids.dtype}"
            )
    del ids  # the loop's last: dst, which the build frees early
    if xp is not np or src.dtype.kind == "f":
        src, dst = src.astype(np.int64, copy=False), dst.astype(np.int64, copy=False)
    if weight is not None:
        weight = backend.asarray(weight)
        if weight.shape != src.shape:
            raise ValueError(
                f"Graph.from_edges: weight has shape {weight.shape}, expected {src.shape}"
            )
        if weight.dtype.kind not in "iufb":
            raise ValueError(f"Graph.from_edges: weights must be numbers, got dtype {weight.dtype}")
        if weight.dtype != np.float32:
            weight = weight.astype(np.float64, copy=False)

    num_vertices = _check_ids(src, dst, num_vertices, xp)
    if num_vertices > MAX_VERTICES:
        raise ValueError(f"Graph.from_edges: {num_vertices} vertices; at most 3e9 supported")
    if xp is np:
        edges = [src, dst, weight]
        del src, dst, weight
        return _build_on_host(edges, num_vertices, directed, duplicates, self_loops, backend)
    src, dst, weight, loops, self_loop_count, dropped = _self_loops(
        src, dst, weight, self_loops, backend
    )
    del loops
    key, weight = _edge_keys(src, dst, weight, max(num_vertices, 1), directed, xp)
    del src, dst  # from here on only the keys: an edge's int64 once, not its ids twice
    order = xp.argsort(key, kind="stable")
    key = key[order]
    if weight is not None:
        weight = weight[order]
    del order
    first = xp.ones(key.shape, dtype=bool)
    first[1:] = key[1:] != key[:-1]
    if directed:
        merged = int(key.size - int(backend.count(first)))
    else:  # count each merged undirected edge once: in its src <= dst direction
        forward = key // max(num_vertices, 1) <= key % max(num_vertices, 1)
        merged = int(backend.count(~first & forward))
    if weight is not None and merged:  # the min (NaN-skipping) or sum of each run of copies
        weight = ops.reduce_runs(backend, weight, first, duplicates, index_dtype(int(first.size)))
    elif weight is not None:
        weight = weight[first]
    key = key[first]
    del first
    src, dst = key // max(num_vertices, 1), key % max(num_vertices, 1)
    del key
    forward = csr_of_sorted(src, dst, weight, num_vertices, backend)
    summary = Summary(num_vertices, int(dst.size), bool(directed), merged, self_loop_count, dropped)
    return {
        "forward": forward,
        "num_vertices": num_vertices,
        "directed": directed,
        "backend": backend,
        "summary": summary,
    }


def _build_on_host(
    edges: list,
    num_vertices: int,
    directed: bool,
    duplicates: str,
    self_loops: bool,
    backend: Backend,
) -> dict:
    """The NumPy build: one counting sort by source and a sort within each row (scipy's
    COO -> CSR in C++, without its summing of duplicates), then one merge pass; no int64 keys."""
    src, dst, weight = edges
    edges.clear()
    ids = index_dtype(num_vertices)
    src, dst = src.astype(ids, copy=False), dst.astype(ids, copy=False)
    src, dst, weight, loops, self_loop_count, dropped = _self_loops(
        src, dst, weight, self_loops, backend
    )
    edges = [src, dst, weight]
    del src, dst, weight
    loops = loops if self_loop_count and not directed else None
    if directed:
        offsets, indices, weight = _sorted_rows(edges, num_vertices)
    else:
        edges.append(loops)
        del loops
        offsets, indices, weight = _mirrored_rows(edges, num_vertices)
    offsets, indices, weight, merged = _merge_duplicates(
        offsets, indices, weight, duplicates, directed
    )
    offsets = offsets.astype(index_dtype(int(indices.size)), copy=False)
    forward = CSR(offsets, indices.astype(ids, copy=False), weight)
    summary = Summary(
        num_vertices, int(indices.size), bool(directed), merged, self_loop_count, dropped
    )
    return {
        "forward": forward,
        "num_vertices": num_vertices,
        "directed": directed,
        "backend": backend,
        "summary": summary,
    }


def _self_loops(src, dst, weight, keep: bool, backend: Backend):
    """``(src, dst, weight, loops, self_loops, dropped)``: the self-loop mask and count, and
    with ``keep=False`` the edges without them (then the count is 0 and ``dropped`` says how
    many went)."""
    loops = src == dst
    count = int(backend.count(loops))
    if keep or not count:
        return src, dst, weight, loops, count, 0
    kept = ~loops
    weight = None if weight is None else weight[kept]
    return src[kept], dst[kept], weight, loops[kept], 0, count


def _sorted_rows(edges: list, num_vertices: int):
    """``(offsets, indices, weights)`` of ``[src, dst, weight]`` (emptied), each row's targets
    sorted, duplicates kept.

    scipy's ``coo_array.tocsr`` is a counting sort by row (O(E)) followed by ``sum_duplicates``;
    marking the input canonical skips the summing, ``sort_indices`` then sorts each row in place.
    """
    import scipy.sparse as sp

    src, dst, weight = edges
    edges.clear()
    count = int(src.size)
    if count == 0:
        offsets = np.zeros(num_vertices + 1, dtype=np.int64)
        return offsets, dst, weight
    data = np.empty(count, dtype=bool) if weight is None else weight  # unweighted: a placeholder
    weighted = weight is not None
    coo = sp.coo_array((data, (src, dst)), shape=(num_vertices, num_vertices))
    del src, dst, weight, data  # the COO holds them now, and only until the CSR is made
    coo.has_canonical_format = True  # do not sum duplicates: _merge_duplicates merges them
    csr = coo.tocsr()
    del coo
    csr.sort_indices()
    return csr.indptr, csr.indices, csr.data if weighted else None


def edge_ring(count: int, num_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)``: room for ``count`` undirected edges that the host build mirrors without a
    copy. Both are views of one array laid out ``[src; dst; src]``, so that its first two thirds
    are the rows of both directions and its last two the columns; a reader parses into them."""
    ring = np.empty(3 * count, dtype=index_dtype(max(num_vertices, 2 * count)))
    return ring[:count], ring[count : 2 * count]


def _ring_of(src, dst):
    """The array under ``src`` and ``dst`` when they are an untouched :func:`edge_ring`."""
    ring, count = src.base, src.size
    if (
        ring is None
        or dst.base is not ring
        or ring.ndim != 1
        or ring.size != 3 * count
        or ring.dtype != src.dtype
        or not (ring.flags.c_contiguous and src.flags.c_contiguous and dst.flags.c_contiguous)
    ):
        return None
    start = ring.__array_interface__["data"][0]
    if (
        src.__array_interface__["data"][0] != start
        or dst.__array_interface__["data"][0] != start + count * ring.itemsize
    ):
        return None
    return ring


def _mirrored_rows(edges: list, num_vertices: int):
    """``(offsets, indices, weights)`` of both directions of each edge of ``[src, dst, weight,
    loops]`` (emptied; a self-loop once: ``loops`` marks them, None when there are none), rows
    sorted, duplicates kept.

    The mirrored edges are never materialised: one counting sort (scipy's ``coo_tocsr``) of the
    ids laid out ``[src; dst; src]`` (:func:`edge_ring`) places each direction's target and its
    edge's number, the rows are sorted on those (rarely needed: a file sorted by row or column
    comes out sorted), and the weights are gathered once by edge number. Beside the graph it
    builds, that holds the ids (3 per edge), the input weights and two arrays of edge numbers:
    about 1.85x the graph's own size, where materialising the mirrored copy needs 2.3x.
    """
    from scipy.sparse import _sparsetools

    src, dst, weight, loops = edges
    edges.clear()
    count = int(src.size)
    if count == 0:
        return np.zeros(num_vertices + 1, dtype=np.int64), dst, weight
    ring = _ring_of(src, dst)
    if ring is None:
        into_src, into_dst = edge_ring(count, num_vertices)
        into_src[:] = src
        into_dst[:] = dst
        ring = into_src.base
        del into_src, into_dst
    del src, dst
    ring[2 * count :] = ring[:count]
    mirrored = 2 * count
    offsets = np.empty(num_vertices + 1, dtype=ring.dtype)
    indices = np.empty(mirrored, dtype=ring.dtype)
    numbered = weight is not None or loops is not None
    if numbered:  # entry e and its mirror count + e carry the edge's number e
        numbers = np.empty(mirrored, dtype=index_dtype(count))
        numbers[:count] = np.arange(count, dtype=numbers.dtype)
        numbers[count:] = numbers[:count]
        order = np.empty_like(numbers)
    else:  # nothing to carry: the targets ride as their own payload
        numbers, order = ring[count:], indices
    # entry e is row ring[e], column ring[e + count]: the edges, then their mirrors
    _sparsetools.coo_tocsr(
        num_vertices,
        num_vertices,
        mirrored,
        ring[:mirrored],
        ring[count:],
        numbers,
        offsets,
        indices,
        order,
    )
    del ring, numbers
    if not _sparsetools.csr_has_sorted_indices(num_vertices, offsets, indices):
        _sparsetools.csr_sort_indices(num_vertices, offsets, indices, order)
    if loops is not None:  # each self-loop is there twice, side by side: drop one copy
        copies = np.flatnonzero(loops[order])
        drop = np.zeros(mirrored, dtype=bool)
        drop[copies] = True
        drop[copies[np.unique(order[copies], return_index=True)[1]]] = False
        del copies
        offsets, indices, order = _drop_positions(offsets, drop, indices, order)
        del drop
    if weight is not None:
        weight = _gather(weight, order)
    return offsets, indices, weight


def _gather(values, positions, block: int = 1 << 20):
    """``values[positions]``, by ``np.take`` a block at a time: it is faster than indexing
    (about 0.4 s against 0.8 for rmat20's 31M weights) and copies only a block of
    ``positions`` as intp, not all of them."""
    out = np.empty(positions.size, dtype=values.dtype)
    for start in range(0, positions.size, block):
        stop = start + block
        np.take(values, positions[start:stop], out=out[start:stop], mode="clip")
    return out


def _drop_positions(offsets, drop, *arrays):
    """``offsets`` and ``arrays`` of a CSR without the positions where ``drop`` is true."""
    positions = np.flatnonzero(drop)
    rows = np.searchsorted(offsets, positions, side="right") - 1
    offsets = offsets.astype(np.int64)
    offsets[1:] -= np.cumsum(np.bincount(rows, minlength=offsets.size - 1))
    keep = ~drop
    return (offsets, *(array[keep] for array in arrays))


def _merge_duplicates(offsets, indices, weight, duplicates: str, directed: bool):
    """Merge repeated targets within each sorted row (weights by min or sum); also return the
    number merged (an undirected edge counted once, in its src <= dst direction)."""
    count = int(indices.size)
    if count == 0:
        return offsets, indices, weight, 0
    first = np.empty(count, dtype=bool)
    first[0] = True
    np.not_equal(indices[1:], indices[:-1], out=first[1:])
    starts = offsets[:-1][offsets[1:] > offsets[:-1]]
    first[starts] = True
    del starts
    if np.count_nonzero(first) == count:
        return offsets, indices, weight, 0
    repeats = np.flatnonzero(~first)
    rows = np.searchsorted(offsets, repeats, side="right") - 1
    merged = int(repeats.size if directed else np.count_nonzero(rows <= indices[repeats]))
    if weight is not None:  # fold each repeat into the first copy of its run, in place
        chain = np.ones(repeats.size, dtype=bool)
        np.not_equal(np.diff(repeats), 1, out=chain[1:])
        run_first = (repeats[chain] - 1)[np.cumsum(chain) - 1]
        ufunc = np.fmin if duplicates == "min" else np.add  # fmin: NaN only if every copy is
        ufunc.at(weight, run_first, weight[repeats])
    indices, weight = (_drop(array, repeats, first) for array in (indices, weight))
    removed = np.bincount(rows, minlength=offsets.size - 1)
    offsets = offsets.astype(np.int64)
    offsets[1:] -= np.cumsum(removed)
    return offsets, indices, weight, merged


def _drop(array, positions, keep):
    """``array`` without ``positions`` (sorted; ``keep`` is their complement as a mask): a few
    are closed up in place, segment by segment, many through the mask."""
    if array is None:
        return None
    if positions.size > 4096:
        return array[keep]
    bounds = [*positions.tolist(), array.size]
    write = bounds[0]
    for start, stop in zip(bounds[:-1], bounds[1:]):
        array[write : write + stop - start - 1] = array[start + 1 : stop]
        write += stop - start - 1
    return array[:write]


def _check_ids(src, dst, num_vertices, xp) -> int:
    if num_vertices is not None and (
        isinstance(num_vertices, bool)
        or not isinstance(num_vertices, (int, np.integer))
        or num_vertices < 0
    ):
        raise ValueError(
            f"Graph.from_edges(num_vertices={num_vertices!r}): expected an integer >= 0"
        )
    if src.size == 0:
        return int(num_vertices or 0)
    low = int(min(int(src.min()), int(dst.min())))
    high = int(max(int(src.max()), int(dst.max())))
    if low < 0:
        index = int(xp.nonzero((src < 0) | (dst < 0))[0][0])
        bad = int(src[index]) if int(src[index]) < 0 else int(dst[index])
        raise ValueError(f"Graph.from_edges: edge {index} has negative vertex id {bad}")
    if num_vertices is None:
        return high + 1
    num_vertices = int(num_vertices)
    if high >= num_vertices:
        index = int(xp.nonzero((src >= num_vertices) | (dst >= num_vertices))[0][0])
        bad = int(src[index]) if int(src[index]) >= num_vertices else int(dst[index])
        raise ValueError(
            f"Graph.from_edges: edge {index} has vertex {bad} out of range [0, {num_vertices})"
        )
    return num_vertices


def _edge_keys(src, dst, weight, num_vertices: int, directed: bool, xp):
    """``src * num_vertices + dst`` per stored edge (both directions of an undirected edge, a
    self-loop once) and the weights to match."""
    key = src * num_vertices + dst
    if directed:
        return key, weight
    other = src != dst
    key = xp.concatenate([key, dst[other] * num_vertices + src[other]])
    return key, (None if weight is None else xp.concatenate([weight, weight[other]]))
