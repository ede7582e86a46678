"""Reading the graph a command names, and the file's own ids that the command speaks."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass

import numpy as np

from ..backend import SMALL_GRAPH_EDGES, choose, to_host

MAX_RMAT_SCALE = 31  # 2**31 vertices; bspgraph supports at most 3e9 (graph.build.MAX_VERTICES)


@dataclass(frozen=True)
class FileIds:
    """The ids a file gives its vertices: vertex ``v`` is ``labels[v]`` (an edge list's listed
    ids) or ``base + v`` (Matrix Market: 1; npz and generated graphs: 0). ``rule`` says which,
    as the output prints it: ``1``, ``0``, ``1(auto)``, ``listed``."""

    rule: str
    base: int = 0
    labels: np.ndarray | None = None

    def of(self, vertices):
        """The file's ids of ``vertices`` (an int or an array)."""
        if self.labels is None:
            return vertices + self.base
        return self.labels[vertices]

    def column(self, count: int) -> np.ndarray:
        """The file's id of every vertex."""
        return self.of(np.arange(count, dtype=np.int64))

    def vertex(self, file_id: int, count: int, option: str) -> int:
        """The vertex of ``file_id``; ValueError naming ``option`` when there is none."""
        if self.labels is None:
            if not self.base <= file_id < self.base + count:
                last = self.base + count - 1
                raise ValueError(
                    f"{option} {file_id}: no such vertex; the ids run "
                    f"{self.base}..{last} (base {self.base})"
                )
            return file_id - self.base
        at = int(np.searchsorted(self.labels, file_id))
        if at == self.labels.size or self.labels[at] != file_id:
            raise ValueError(
                f"{option} {file_id}: no vertex of that id in the file ({self.labels.size} ids "
                f"listed, {self.labels[0] if self.labels.size else '-'}.."
                f"{self.labels[-1] if self.labels.size else '-'})"
            )
        return at


@dataclass
class Loaded:
    """A graph read for a command: the graph, its file's ids, and what the file held."""

    graph: object
    ids: FileIds
    file_weighted: bool  # the file had weights, or --no-weighted said to ignore them


def load_graph(
    spec: str,
    backend: str | None,
    *,
    undirected: bool = False,
    base=None,
    vertices=None,
    delimiter: str | None = None,
    weighted: bool | None = None,
    quiet: bool = True,
) -> Loaded:
    """A graph from a file or a generator spec: ``rmat:SCALE[:EDGE_FACTOR]`` or
    ``grid:ROWSxCOLS`` (``grid:N``: N x N), with the file's ids. A file's format is told by its
    content (:func:`~bspgraph.graph.io.sniff_format`); ``vertices``, ``base`` and ``delimiter``
    apply to edge lists, ``weighted=False`` to any graph (its weights dropped), ``undirected``
    to any directed graph (its edges then run both ways)."""
    from .. import graph as graph_module
    from ..graph.io import sniff_format

    kind, _, rest = spec.partition(":")
    if kind == "rmat" and rest:
        scale, _, edge_factor = rest.partition(":")
        scale = _spec_int(spec, scale)
        check_rmat_scale(scale, spec)
        graph = graph_module.generators.rmat(
            scale, _spec_int(spec, edge_factor or "16"), seed=1, weights=True, backend=backend
        )
        return _finish(graph, FileIds("0"), weighted, undirected, backend)
    if kind == "grid" and rest:
        rows, x, cols = rest.partition("x")  # grid:N is square; grid:Nx is malformed
        graph = graph_module.generators.grid(
            _spec_int(spec, rows), _spec_int(spec, cols if x else rows), backend=backend
        )
        return _finish(graph, FileIds("0"), weighted, undirected, backend)
    if not os.path.exists(spec):
        raise FileNotFoundError(f"{spec}: no such file (or use rmat:SCALE or grid:RxC)")
    file_format = sniff_format(spec)
    edge_list_options = {
        "vertices": vertices is not None,
        "base": base is not None,
        "delimiter": delimiter is not None,
        "weighted": weighted is True,
    }
    given = [f"--{name}" for name, set_ in edge_list_options.items() if set_]
    if file_format != "edgelist" and given:
        raise ValueError(
            f"{spec}: {', '.join(given)} applies to edge lists; this file is "
            f"{'Matrix Market' if file_format == 'mtx' else 'a bspgraph npz'}"
        )
    if vertices == "listed" and base is not None:
        raise ValueError(f"--base {base} goes with --vertices range: listed ids are the file's")
    with _read_progress(spec, quiet):
        if file_format == "mtx":
            graph, ids = graph_module.read_mtx(spec, backend=backend), FileIds("1", 1)
        elif file_format == "npz":
            graph, ids = graph_module.load_npz(spec, backend=backend), FileIds("0")
        else:
            listed = vertices != "range" and base is None
            graph = graph_module.read_edgelist(
                spec,
                vertices="listed" if listed else "range",
                base=None if listed else (base or "auto") if base in (None, "auto") else int(base),
                directed=not undirected,
                delimiter=delimiter,
                weighted=weighted,
                backend=backend,
            )
            if listed:
                ids = FileIds("listed", labels=graph.cache["ids"])
            else:
                chosen = graph.cache["base"]
                ids = FileIds(f"{chosen}(auto)" if base in (None, "auto") else str(chosen), chosen)
    return _finish(graph, ids, weighted, undirected, backend)


def _finish(graph, ids: FileIds, weighted, undirected: bool, backend) -> Loaded:
    """Drop the weights (``weighted=False``) and the directions (``undirected``) asked for."""
    from ..graph import CSR, Graph

    file_weighted = graph.weighted or weighted is False  # --no-weighted: said "ignored"
    if weighted is False and graph.weighted:
        graph = Graph(
            CSR(graph.forward.offsets, graph.forward.indices),
            graph.num_vertices,
            directed=graph.directed,
            backend=graph.backend,
        )
    if undirected and graph.directed:  # a directed Matrix Market or npz file
        src, dst, weight = graph.edges()
        graph = Graph.from_edges(
            src, dst, weight, num_vertices=graph.num_vertices, directed=False, backend=backend
        )
    return Loaded(graph, ids, file_weighted)


def check_rmat_scale(scale: int, what: str) -> None:
    """ValueError naming ``what`` when an R-MAT graph of ``scale`` is past what bspgraph builds."""
    if scale > MAX_RMAT_SCALE:
        raise ValueError(
            f"{what}: an R-MAT graph of 2**{scale} vertices; bspgraph supports at "
            f"most 3e9 vertices (scale {MAX_RMAT_SCALE})"
        )


def _spec_int(spec: str, text: str) -> int:
    """An integer field of a generator spec, or a ValueError that shows the expected form."""
    if not text.strip().isdigit():
        form = "rmat:SCALE[:EDGE_FACTOR]" if spec.startswith("rmat") else "grid:ROWSxCOLS"
        raise ValueError(
            f"{spec}: expected {form} with non-negative integers, e.g. rmat:10, grid:8x8"
        )
    return int(text)


@contextlib.contextmanager
def _read_progress(path: str, quiet: bool):
    """A tqdm bar of the bytes read from ``path`` while the readers read it, fed by tqdm's
    stream wrapper on their files (:func:`bspgraph.graph.io.reading`). Shown only on a
    terminal, when tqdm is installed and not ``quiet``; after 2 s (a quick read shows none)."""
    from ..graph.io import reading

    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if tqdm is None or quiet or not sys.stderr.isatty():
        yield
        return
    size = os.path.getsize(path)
    with tqdm(
        total=size,
        desc=f"reading {os.path.basename(path)}",
        unit="B",
        unit_scale=True,
        leave=False,
        file=sys.stderr,
        delay=2,
    ) as bar:

        def advance(count: int) -> None:
            bar.update(min(count, size - bar.n))  # a declined fast path reads again

        with reading(advance):
            yield


def load(args) -> Loaded:
    """The graph that ``args`` names, read with its file options; tc needs it undirected.

    Without ``--backend`` the graph goes where ``backend=None`` would run it
    (:func:`bspgraph.backend.choose`: NumPy for a small graph, even where a GPU is usable),
    read on the host first (a generated graph is made on the host only when its expected edge
    count is small); ``args.backend_reason`` says why."""
    backend = args.backend
    if backend is None and _expected_edges(args.graph) < SMALL_GRAPH_EDGES:
        backend = "numpy"  # on the host first: the choice below sees its edges
    loaded = load_graph(
        args.graph, backend, **file_options(args), quiet=getattr(args, "quiet", False)
    )
    name, args.backend_reason = choose(args.backend, loaded.graph)
    loaded.graph = loaded.graph.to(name)
    if getattr(args, "algorithm", None) == "tc" and loaded.graph.directed:
        raise ValueError(
            f"tc: {args.graph} is a directed graph; triangles are counted on undirected graphs "
            "(hint: --undirected counts the triangles of the undirected graph beneath it)"
        )
    return loaded


def file_options(args) -> dict:
    return {
        "undirected": args.undirected,
        "base": args.base,
        "vertices": args.vertices,
        "delimiter": args.delimiter,
        "weighted": args.weighted,
    }


def _expected_edges(spec: str) -> float:
    """The edges a generator spec makes at most (rmat: 2 x edge factor x 2^scale, grid: 4 per
    vertex); a file's: 0 (it is read on the host, then placed by its edge count)."""
    kind, _, rest = spec.partition(":")
    try:
        if kind == "rmat" and rest:
            scale, _, edge_factor = rest.partition(":")
            return 2.0 * int(edge_factor or "16") * 2 ** min(int(scale), 64)
        if kind == "grid" and rest:
            rows, x, cols = rest.partition("x")
            return 4.0 * int(rows) * int(cols if x else rows)
    except ValueError:  # a malformed spec: load_graph says what is wrong
        return 0.0
    return 0.0


def host(array) -> np.ndarray:
    return np.asarray(to_host(array))
