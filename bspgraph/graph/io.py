"""Graph files: Matrix Market and edge-list readers, and bspgraph's own npz format.

A file's format and compression are told by its content, never its name: gzip, bz2 and xz
files are read through Python's decompressors, a ``%%MatrixMarket`` banner makes a Matrix Market
file, a zip archive an npz. Parsing is done by public libraries: Matrix Market bodies of plain
digits and separators by the ``fast_matrix_market`` package (C++, threaded; so that its lenient
number parsing cannot misread a token), edge lists by ``pyarrow.csv`` (both in the ``files``
extra), and otherwise, or when those decline, by ``numpy.loadtxt``. Only when those fail does a
reader scan the file line by line in Python, to find the first bad line and name it in a
:class:`~bspgraph.exceptions.GraphFormatError`. The scan is a complete parser too, so a line
the fast paths decline but the scan accepts still loads. :func:`reading` reports the bytes read
to a callback (the command line's progress bar), through tqdm's stream wrapper.
"""

from __future__ import annotations

import bz2
import contextlib
import contextvars
import dataclasses
import gzip
import lzma
import os
import re
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Literal, NamedTuple

import numpy as np

from ..backend import Backend, get_backend, to_host
from ..exceptions import GraphFormatError
from .build import MAX_VERTICES
from .graph import CSR, Graph, Summary, index_dtype

PathLike = str | os.PathLike

MTX_FIELDS = ("pattern", "integer", "real")
MTX_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")
NPZ_VERSION = 1

_INTEGER = re.compile(r"[+-]?[0-9]+")
_UNSIGNED = re.compile(r"[0-9]+")
_EXCERPT_CHARS = 60
_INT64_LOW, _INT64_HIGH = -(2**63), 2**63 - 1
# what numpy.load and zipfile raise on a damaged archive (RuntimeError: encrypted member)
_UNREADABLE_ARCHIVE = (
    ValueError,
    OSError,
    EOFError,
    NotImplementedError,
    RuntimeError,
    zipfile.BadZipFile,
    zlib.error,
)
_UTF8_BOM = "\xef\xbb\xbf"  # as Latin-1 decodes it
_GZIP_MAGIC, _BZ2_MAGIC, _ZIP_MAGIC = b"\x1f\x8b", b"BZh", b"PK\x03\x04"
_XZ_MAGIC = b"\xfd7zXZ\x00"
_DECOMPRESSORS = (
    (_GZIP_MAGIC, lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")),
    (_BZ2_MAGIC, bz2.BZ2File),
    (_XZ_MAGIC, lzma.LZMAFile),
)
# the callback that :func:`reading` installs: told the count of bytes of every read of a file
_PROGRESS: contextvars.ContextVar[Callable[[int], object] | None] = contextvars.ContextVar(
    "bytes read", default=None
)
# a Matrix Market body of only these is parsed by fast_matrix_market
_DIGITS, _SEPARATORS = b"0123456789", b" \t\n"
_CHECK_BYTES = 1 << 20  # the plain-digits check: a chunk and its rest stay in cache
# host bytes per vertex while a reader's edges become a CSR: the counts and their scan (int64)
# and the offsets; a file that declares or implies more vertices than fit is refused up front
BUILD_BYTES_PER_VERTEX = 24


class _FieldError(Exception):
    """A field of one line is wrong; the scan adds the file and line."""


@dataclass(frozen=True)
class _MtxHeader:
    field: str
    symmetry: str
    num_vertices: int
    entries: int
    size_line: int
    body_offset: int  # byte offset of the line after the size line

    @property
    def directed(self) -> bool:
        """General and skew-symmetric files are directed (a skew entry's mirror has -value)."""
        return self.symmetry in ("general", "skew-symmetric")


# --- opening and sniffing -------------------------------------------------------------------------
def _open_binary(path: str) -> BinaryIO:
    """``path`` opened for reading bytes, through gzip, bz2 or xz when its first bytes say so;
    the bytes read from the file are reported to :func:`reading`'s callback, if any."""
    _check_not_directory(path)
    raw = open(path, "rb")  # noqa: SIM115 (closed by the stream returned, or below)
    try:
        magic = raw.read(len(_XZ_MAGIC))
        raw.seek(0)
        progress = _PROGRESS.get()
        source = raw
        if progress is not None:
            from tqdm.utils import CallbackIOWrapper

            source = CallbackIOWrapper(progress, raw, "read")
        for prefix, decompressor in _DECOMPRESSORS:
            if magic.startswith(prefix):
                return _Closing(decompressor(source), raw)
        return source if source is raw else _Closing(source, raw)
    except BaseException:
        raw.close()
        raise


class _Closing:
    """A stream that also closes the file beneath it (a decompressor given ``fileobj`` or tqdm's
    wrapper leaves it open)."""

    def __init__(self, stream, raw):
        self._stream, self._raw = stream, raw

    def __getattr__(self, name):
        return getattr(self._stream, name)

    def __iter__(self):
        if hasattr(type(self._stream), "__iter__"):
            return iter(self._stream)
        return iter(self._stream.readline, b"")  # tqdm's wrapper: lines through readline

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            if self._stream is not self._raw and hasattr(self._stream, "close"):
                with contextlib.suppress(AttributeError):
                    self._stream.close()
        finally:
            self._raw.close()


@contextlib.contextmanager
def reading(callback: Callable[[int], object]) -> Iterator[None]:
    """Report the bytes that the readers take from their files inside this block to
    ``callback(count)`` (tqdm's ``CallbackIOWrapper`` on each file; needs tqdm). A reader that
    declines a fast path reads again, so the counts may add up past the file's size."""
    token = _PROGRESS.set(callback)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def _check_not_directory(path: str) -> None:
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path}: is a directory; expected a graph file")


@contextlib.contextmanager
def _decompression_errors(path: str):
    """Turn a damaged gzip or bz2 stream's errors into a GraphFormatError naming the file."""
    try:
        yield
    except (EOFError, OSError, zlib.error) as error:
        if isinstance(error, FileNotFoundError | IsADirectoryError | PermissionError):
            raise
        if not _compressed(path):
            raise
        raise GraphFormatError(path, None, f"damaged compressed data: {error}") from None


def _compressed(path: str) -> bool:
    with open(path, "rb") as raw:
        magic = raw.read(len(_XZ_MAGIC))
    return any(magic.startswith(prefix) for prefix, _ in _DECOMPRESSORS)


def sniff_format(path: PathLike) -> Literal["mtx", "npz", "edgelist"]:
    """The format of the graph file at ``path``, told by its content (not its name).

    A zip archive is ``"npz"`` (:func:`save_npz`), a file whose first line is a
    ``%%MatrixMarket`` banner (any case, after an optional UTF-8 byte order mark, inside gzip or
    bz2 or xz too) is ``"mtx"``, anything else ``"edgelist"``.

    Raises
    ------
    OSError
        The file cannot be opened or decompressed, or ``path`` is a directory.
    """
    name = os.fspath(path)
    _check_not_directory(name)
    with open(name, "rb") as raw:
        if raw.read(4) == _ZIP_MAGIC:
            return "npz"
    with _open_binary(name) as stream:
        try:
            first = stream.readline(256)
        except (OSError, EOFError, zlib.error) as error:
            raise OSError(f"{name}: cannot be decompressed: {error}") from None
    first = first.removeprefix(_UTF8_BOM.encode("latin-1")).lstrip()
    return "mtx" if first.lower().startswith(b"%%matrixmarket") else "edgelist"


# --- Matrix Market ------------------------------------------------------------------------------
def read_mtx(
    path: PathLike,
    *,
    backend: str | Backend | None = None,
    self_loops: bool = True,
    duplicates: Literal["min", "sum"] = "min",
) -> Graph:
    """Read a Matrix Market ``coordinate`` file (plain, gzip or bz2) as a graph.

    Entry ``i j [value]`` is the edge ``i-1 -> j-1`` (ids are 1-based in the file) weighted by
    ``value``; every stored entry is an edge, explicit zeros and NaN values included. ``general``
    files are directed (row to column); ``symmetric`` and ``hermitian`` files undirected;
    ``skew-symmetric`` files directed, each entry ``i j v`` also giving ``j -> i`` weighted
    ``-v``. ``pattern`` files are unweighted. Lines starting with ``%`` are comments (a ``%``
    also ends a line's data), blank lines are skipped. Duplicate entries merge as in
    :meth:`Graph.from_edges`.

    Raises
    ------
    GraphFormatError
        The file is not Matrix Market ``coordinate`` ``pattern``/``integer``/``real``, the
        matrix is not square, the size line is bad or declares more vertices than bspgraph
        supports (3e9) or this host's memory can build, an entry has the wrong number of fields,
        an id that is not an integer or not in ``1..n``, a value that is not a number, or there
        are more or fewer entries than the size line declares. The message starts with
        ``path:line:``.
    OSError
        The file cannot be opened or decompressed, or ``path`` is a directory.
    """
    name = os.fspath(path)
    with _decompression_errors(name):
        with _open_binary(name) as stream:
            header = _read_mtx_header(stream, name)
            entries = _load_mtx_library(name, stream, header)
            if entries is None:
                stream.seek(header.body_offset)
                entries = _load_mtx_fast(stream, header)
        if entries is None:
            entries = _scan_mtx_body(name, header)
    if header.symmetry == "skew-symmetric":
        entries = _mirror_negated(*entries)
    edges = list(entries)
    del entries  # the builder frees each array once it has its copy
    return _build_owned(
        edges,
        num_vertices=header.num_vertices,
        directed=header.directed,
        duplicates=duplicates,
        self_loops=self_loops,
        backend=backend,
    )


def _build_owned(edges: list, **options) -> Graph:
    """:meth:`Graph.from_edges` on arrays that only ``edges`` holds: the builder drops each as
    soon as it has its copy, so a reader's arrays do not outlive their use."""
    from .build import build_owned

    return Graph(**build_owned(edges, **{**options, "backend": get_backend(options["backend"])}))


def _mirror_negated(src, dst, weight):
    """A skew-symmetric file's entries and their mirrors ``j -> i`` weighted ``-value``."""
    other = src != dst
    mirrored = None if weight is None else np.concatenate([weight, -weight[other]])
    return np.concatenate([src, dst[other]]), np.concatenate([dst, src[other]]), mirrored


def _load_mtx_library(path: str, stream: BinaryIO, header: _MtxHeader):
    """All entries as ``(src, dst, weight)`` 0-based, parsed by the ``fast_matrix_market``
    package (``read_coo``, one triangle of a symmetric file), or None.

    Only a body of plain digits and separators, exactly ``entries`` lines of exactly the
    field count, is given to it: there its number parsing is exact (elsewhere it reads "1.5"
    as 1 in an integer file, or "1e" as 1, silently). Any error it raises declines too; the
    other paths then name the line. Without the package (the ``files`` extra), None:
    ``numpy.loadtxt`` reads the body.
    """
    try:
        import fast_matrix_market
    except ImportError:
        return None
    stream.seek(header.body_offset)
    if not _plain_body(stream, header):
        return None
    stream.seek(0)
    plain = _PROGRESS.get() is None and not _compressed(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (values, (src, dst)), shape = fast_matrix_market.read_coo(
                path if plain else stream, generalize_symmetry=False
            )
    except (ValueError, OverflowError, RuntimeError, TypeError, OSError):
        return None
    if shape != (header.num_vertices, header.num_vertices) or src.size != header.entries:
        return None
    weight = None
    if header.field != "pattern":
        weight = values.astype(np.float64, copy=False)
    del values
    return src, dst, weight


def _plain_body(stream: BinaryIO, header: _MtxHeader) -> bool:
    """Whether the rest of ``stream`` is ``entries`` lines of only digits, spaces and tabs,
    with ``fields - 1`` separators in all per line: then, since fast_matrix_market refuses a
    line with too few fields, every line holds exactly the fields it should.

    One pass deletes the digits; what is left is compared with the separators of lines with
    one space between fields (``"  \\n"`` repeated for 3 fields), else counted.
    """
    fields = 2 if header.field == "pattern" else 3
    period = b" " * (fields - 1) + b"\n"
    regular = b""  # period repeated, as long as the longest rest so far
    phase = 0  # where the rest so far ends in the period; None once it is irregular
    separators = lines = 0
    last = b"\n"
    while chunk := stream.read(_CHECK_BYTES):
        rest = chunk.translate(None, _DIGITS)
        last = chunk[-1:]
        del chunk
        if phase is not None:
            if len(regular) < len(rest) + fields:
                regular = period * (len(rest) // fields + 2)
            if regular[phase : phase + len(rest)] == rest:
                newlines = (phase + len(rest)) // fields
                lines += newlines
                separators += len(rest) - newlines
                phase = (phase + len(rest)) % fields
                continue
            phase = None
        if rest.translate(None, _SEPARATORS):
            return False
        newlines = rest.count(b"\n")
        lines += newlines
        separators += len(rest) - newlines
    lines += last != b"\n"
    return lines == header.entries and separators == header.entries * (fields - 1)


def _read_mtx_header(stream: BinaryIO, path: str) -> _MtxHeader:
    """Parse the banner and the size line; leave ``stream`` at the first entry line."""
    banner_text = _decode(stream.readline()).removeprefix(_UTF8_BOM)
    banner = banner_text.split()
    if not banner or banner[0].lower() != "%%matrixmarket":
        raise GraphFormatError(
            path, 1, f"missing '%%MatrixMarket' banner, found {_excerpt(banner_text)}"
        )
    if len(banner) != 5:
        raise GraphFormatError(
            path,
            1,
            "the banner must read '%%MatrixMarket matrix coordinate <field> <symmetry>', "
            f"found {_excerpt(banner_text)}",
        )
    kind, layout, field, symmetry = (word.lower() for word in banner[1:])
    for word, value, allowed, note in (
        ("object", kind, ("matrix",), ""),
        ("format", layout, ("coordinate",), ""),
        ("field", field, MTX_FIELDS, ""),
        (
            "symmetry",
            symmetry,
            MTX_SYMMETRIES,
            " (general = directed, symmetric or hermitian = undirected, skew-symmetric = directed "
            "with negated mirrors)",
        ),
    ):
        if value not in allowed:
            raise GraphFormatError(
                path,
                1,
                f"{word} {value!r} is not supported: only {', '.join(allowed)}{note}; "
                f"banner {_excerpt(banner_text)}",
            )

    line_number = 1
    while True:
        raw = stream.readline()
        line_number += 1
        if not raw:
            raise GraphFormatError(
                path, line_number, "file ends before the size line 'rows columns entries'"
            )
        text = _strip_comment(_line_text(raw, path, line_number), "%")
        fields = text.split()
        if fields:
            break
    if len(fields) != 3 or not all(_UNSIGNED.fullmatch(field_text) for field_text in fields):
        raise GraphFormatError(
            path,
            line_number,
            "bad size line: expected 3 non-negative integers 'rows columns entries', found "
            f"{_excerpt(text)}",
        )
    rows, columns, entries = (int(field_text) for field_text in fields)
    if rows != columns:
        raise GraphFormatError(
            path, line_number, f"the matrix is {rows} x {columns}: a graph needs a square matrix"
        )
    if symmetry == "skew-symmetric" and field == "pattern":
        raise GraphFormatError(
            path, 1, "a skew-symmetric pattern file has no values to negate (not Matrix Market)"
        )
    too_many = _too_many_vertices(rows, "the size line declares")
    if too_many:
        raise GraphFormatError(path, line_number, too_many)
    return _MtxHeader(field, symmetry, rows, entries, line_number, stream.tell())


def _load_mtx_fast(stream: BinaryIO, header: _MtxHeader):
    """All entries as ``(src, dst, weight)`` 0-based, or None when anything looks wrong."""
    value_dtype = {"pattern": None, "integer": np.int64, "real": np.float64}[header.field]
    table = _loadtxt(stream, value_dtype, comments="%", delimiter=None, usecols=None)
    if table is None or table.shape[0] != header.entries:
        return None
    src, dst = table["src"], table["dst"]
    if src.size and (
        min(src.min(), dst.min()) < 1 or max(src.max(), dst.max()) > header.num_vertices
    ):
        return None
    weight = None if value_dtype is None else table["weight"].astype(np.float64)
    return src - 1, dst - 1, weight


def _scan_mtx_body(path: str, header: _MtxHeader):
    """Parse the entries line by line: the same result as the fast path, or the first error."""
    num_fields = 2 if header.field == "pattern" else 3
    described = "'row column'" if num_fields == 2 else "'row column value'"
    size = f"the size line (line {header.size_line})"
    src: list[int] = []
    dst: list[int] = []
    weight: list[float] = []
    last_entry_line = header.size_line
    for line_number, fields in _data_lines(path, header.body_offset, header.size_line + 1, "%"):
        try:
            if len(src) == header.entries:
                raise _FieldError(f"more entries than the {header.entries} declared by {size}")
            if len(fields) != num_fields:
                raise _FieldError(
                    f"expected {num_fields} fields {described}, found {len(fields)}: "
                    f"{_excerpt(' '.join(fields))}"
                )
            src.append(_parse_id(fields[0], "row", 1, header.num_vertices) - 1)
            dst.append(_parse_id(fields[1], "column", 1, header.num_vertices) - 1)
            if num_fields == 3:
                if header.field == "integer":
                    weight.append(float(_parse_integer(fields[2], "value")))
                else:
                    weight.append(_parse_number(fields[2], "value"))
        except _FieldError as error:
            raise GraphFormatError(path, line_number, str(error)) from None
        last_entry_line = line_number
    if len(src) < header.entries:
        raise GraphFormatError(
            path,
            last_entry_line + 1,
            f"file ends after {len(src)} of the {header.entries} entries declared by {size} "
            "(truncated?)",
        )
    return (
        np.array(src, dtype=np.int64),
        np.array(dst, dtype=np.int64),
        None if num_fields == 2 else np.array(weight, dtype=np.float64),
    )


# --- edge lists ---------------------------------------------------------------------------------
def read_edgelist(
    path: PathLike,
    *,
    vertices: Literal["listed", "range"] | None = None,
    base: int | Literal["auto"] | None = None,
    directed: bool = True,
    weighted: bool | None = None,
    comments: str | None = "#%",
    delimiter: str | None = None,
    num_vertices: int | None = None,
    duplicates: Literal["min", "sum"] = "min",
    self_loops: bool = True,
    backend: str | Backend | None = None,
) -> Graph:
    """Read a text edge list, one edge ``u v [weight]`` per line.

    Fields are separated by whitespace, or by ``delimiter``; any character of ``comments`` starts
    a comment that runs to the end of the line; blank lines are skipped, CRLF line ends and a
    UTF-8 byte order mark are fine.

    Which vertices: ``vertices="listed"`` (the default unless ``base`` or ``num_vertices`` is
    given) makes a vertex of every id that appears in the file and no other, as networkx's
    ``read_edgelist`` and SNAP read it: vertex ``k`` is the ``k``-th smallest id, and
    ``graph.cache["ids"]`` holds the file's id of every vertex (any integers, negative ones too).
    ``vertices="range"`` makes the dense range instead: ids are ``base``-based (0, the default,
    or 1), ``num_vertices`` defaults to the largest id + 1 - ``base``, and ``"auto"`` takes 1
    when no id 0 appears and the largest id equals the number of distinct ids (SNAP-style
    1-based files), else 0; ``graph.cache["base"]`` says which.

    Weights: ``weighted=None`` takes the third field as the weight when the first data line has
    one, and then every line must have one, as a line without one must when the first has none
    (a mixed file is refused naming the first line that differs); ``weighted=True`` requires
    a weight on every line, ``weighted=False`` ignores them. Fields after those used are
    ignored. ``directed=False`` makes each edge undirected.

    Raises
    ------
    GraphFormatError
        No edges and no ``num_vertices``; a line with too few fields, a weight on some lines
        and not others (``weighted=None``), an id that is not an integer, below ``base``, (with
        ``num_vertices``) past the last vertex or (without) so large that its graph would not
        fit (3e9 vertices, or this host's memory), or a weight that is not a number. The message
        starts with ``path:line:``.
    ValueError
        ``vertices`` is not "listed" or "range", "listed" with ``base`` or ``num_vertices``,
        ``base`` is not 0, 1 or "auto" (which needs ``num_vertices=None``), or
        ``num_vertices`` is negative or too large to build here.
    OSError
        The file cannot be opened.
    """
    if vertices is None:
        vertices = "listed" if base is None and num_vertices is None else "range"
    if vertices not in ("listed", "range"):
        raise ValueError(f"read_edgelist(vertices={vertices!r}): expected 'listed' or 'range'")
    listed = vertices == "listed"
    if listed and (base is not None or num_vertices is not None):
        raise ValueError(
            "read_edgelist(vertices='listed'): the vertices are the ids in the file; "
            "base and num_vertices go with vertices='range'"
        )
    base = 0 if base is None else base
    auto = isinstance(base, str) and base == "auto"
    if not auto and (isinstance(base, bool) or base not in (0, 1)):
        raise ValueError(f"read_edgelist(base={base!r}): expected 0, 1 or 'auto'")
    if auto and num_vertices is not None:
        raise ValueError("read_edgelist(base='auto'): give base 0 or 1 with num_vertices")
    base = 0 if auto else base
    if num_vertices is not None and num_vertices < 0:
        raise ValueError(f"read_edgelist(num_vertices={num_vertices!r}): must be >= 0")
    too_many = None if num_vertices is None else _too_many_vertices(num_vertices, "")
    if too_many:
        raise ValueError(f"read_edgelist(num_vertices={num_vertices}): {too_many}")
    name = os.fspath(path)
    comments = comments or ""
    # listed ids are labels: no base, no range, any integer (the scan's low bound: none)
    low = None if listed else base
    with _decompression_errors(name):
        edges = _load_edgelist_fast(name, low, weighted, comments, delimiter, num_vertices)
        if edges is None:
            edges = _scan_edgelist(name, low, weighted, comments, delimiter, num_vertices)
    if edges[0].size == 0 and num_vertices is None:
        raise GraphFormatError(
            name, None, "no edges (an empty edge list); pass num_vertices for a graph without edges"
        )
    ids = None
    if listed:
        src, dst, weight = edges
        ids, src, dst = _listed(src, dst)
        edges, num_vertices = (src, dst, weight), ids.size
    edges = list(edges)
    graph = _build_owned(
        edges,
        num_vertices=num_vertices,
        directed=directed,
        duplicates=duplicates,
        self_loops=self_loops,
        backend=backend,
    )
    if listed:
        graph.cache["ids"] = ids
        return graph
    if auto:
        graph = _one_based_if_so(graph)
    graph.cache.setdefault("base", base)
    return graph


def _listed(src: np.ndarray, dst: np.ndarray):
    """``(ids, src, dst)``: the distinct ids of ``src`` and ``dst`` sorted, and both renamed to
    their positions among them. Ids within a few times the edge count of each other are
    marked in a table (O(E + range)); others sorted (``numpy.unique``)."""
    if src.size == 0:
        return np.zeros(0, dtype=np.int64), src, dst
    low = int(min(src.min(), dst.min()))
    span = int(max(src.max(), dst.max())) - low + 1
    if span <= 4 * src.size + 1024:
        seen = np.zeros(span, dtype=bool)
        seen[src - low] = True
        seen[dst - low] = True
        ids = np.flatnonzero(seen)
        del seen
        position = np.full(span, -1, dtype=index_dtype(ids.size))
        position[ids] = np.arange(ids.size, dtype=position.dtype)
        return ids + low, position[src - low], position[dst - low]
    ids, inverse = np.unique(np.concatenate([src, dst]), return_inverse=True)
    inverse = inverse.astype(index_dtype(ids.size), copy=False)
    return ids, inverse[: src.size], inverse[src.size :]


def _one_based_if_so(graph: Graph) -> Graph:
    """``graph`` (read 0-based) without its vertex 0 when that vertex has no edges and every
    other vertex has some: the file was 1-based. Otherwise ``graph`` itself."""
    xp, offsets, indices = graph.xp, graph.forward.offsets, graph.forward.indices
    n = graph.num_vertices
    if n == 0 or int(offsets[1]) != 0:
        return graph
    seen = xp.diff(offsets) > 0
    seen[indices] = True
    if bool(seen[0]) or int(graph.backend.count(seen)) != n - 1:
        return graph
    forward = CSR(offsets[1:], indices - 1, graph.forward.weights)
    summary = dataclasses.replace(graph.summary, vertices=n - 1)
    shifted = Graph(forward, n - 1, directed=graph.directed, backend=graph.backend, summary=summary)
    shifted.cache["base"] = 1
    return shifted


def _first_fields(path: str, comments: str, delimiter: str | None) -> list[str] | None:
    """The fields of the first line that holds data, or None."""
    lines = _data_lines(path, 0, 1, comments, delimiter)
    first = next(lines, None)
    lines.close()
    return None if first is None else first[1]


def _load_edgelist_fast(path, base, weighted, comments, delimiter, num_vertices):
    """All edges as ``(src, dst, weight)`` (``base`` removed; None: ids as they are), or None
    when anything looks wrong: pyarrow.csv, else ``numpy.loadtxt``. Neither where the text
    holds a carriage return that ends no line (both would end a line there, or a comment
    swallow it); not pyarrow where it holds a hexadecimal prefix (it would read "0x1F" as
    31): the scan refuses those, naming the line."""
    first = _first_fields(path, comments, delimiter)
    if first is None:
        return None
    with _open_binary(path) as stream:  # (one pass over the text, byte searches a chunk)
        _skip_bom(stream)
        facts = _text_facts(stream, comments)
    if facts.lone_carriage_return:
        return None
    decided = weighted is None
    if decided:
        weighted = len(first) >= 3
    table = None if facts.hex_prefix else _read_pyarrow(path, first, weighted, comments, delimiter)
    if table is None:
        # weighted=None: every line has the first's field count when it has 2 or 3, so that a
        # line with or without a weight unlike the first declines (the scan names it)
        usecols = (0, 1, 2) if weighted else (0, 1)
        if decided and len(first) <= 3:
            usecols = None
        with _open_binary(path) as stream:
            _skip_bom(stream)
            table = _loadtxt(
                stream,
                np.float64 if weighted else None,
                comments=comments,
                delimiter=delimiter,
                usecols=usecols,
                path=None if _compressed(path) or _PROGRESS.get() or _has_bom(path) else path,
                facts=facts,
            )
        if table is None:
            return None
        table = (table["src"], table["dst"], table["weight"] if weighted else None)
    src, dst, weight = table
    if src.size and base is not None:
        if min(src.min(), dst.min()) < base:
            return None
        high = max(src.max(), dst.max())
        if num_vertices is not None and high >= base + num_vertices:
            return None
        if num_vertices is None and _too_many_vertices(int(high) - base + 1, ""):
            return None  # the scan names the line
        src, dst = src - base, dst - base
    return src, dst, weight


def _skip_bom(stream: BinaryIO) -> None:
    if stream.read(3) != _UTF8_BOM.encode("latin-1"):
        stream.seek(0)


def _has_bom(path: str) -> bool:
    with _open_binary(path) as stream:
        return stream.read(3) == _UTF8_BOM.encode("latin-1")


def _read_pyarrow(path, first, weighted, comments, delimiter):
    """``(src, dst, weight)`` by ``pyarrow.csv`` (threaded), or None: pyarrow is absent, or
    the file is not lines of ``len(first)`` fields split by one tab, one space or
    ``delimiter`` (a comment line is skipped; a comment after data declines)."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pa_csv
    except ImportError:
        return None
    separator = delimiter or ("\t" if "\t" in _first_line(path) else " ")
    if len(separator) != 1:
        return None
    marks = tuple(comments)

    def comment_or_refuse(row) -> str:
        return "skip" if row.text.lstrip().startswith(marks) and marks else "error"

    width = len(first)
    types = {"f0": pa.int64(), "f1": pa.int64()}
    if weighted:
        types["f2"] = pa.float64()
    try:
        with _open_binary(path) as stream:
            _skip_bom(stream)
            table = pa_csv.read_csv(
                stream,
                read_options=pa_csv.ReadOptions(autogenerate_column_names=True, block_size=1 << 24),
                parse_options=pa_csv.ParseOptions(
                    delimiter=separator, quote_char=False, invalid_row_handler=comment_or_refuse
                ),
                convert_options=pa_csv.ConvertOptions(
                    column_types=types,
                    include_columns=list(types),
                    quoted_strings_can_be_null=False,
                ),
            )
    except (pa.ArrowException, ValueError, OSError, EOFError):
        return None
    if table.num_columns != len(types) or any(column.null_count for column in table.columns):
        return None
    if width < 3 and weighted:
        return None
    columns = [np.asarray(table.column(index).to_numpy()) for index in range(len(types))]
    del table
    return columns[0], columns[1], columns[2] if weighted else None


def _first_line(path: str) -> str:
    with _open_binary(path) as stream:
        return _decode(stream.readline(1 << 16))


def _scan_edgelist(path, base, weighted, comments, delimiter, num_vertices):
    """Parse the edges line by line: the same result as the fast paths, or the first error.
    ``base`` None: ids as they are (listed vertices)."""
    high = None if num_vertices is None or base is None else base + num_vertices - 1
    src: list[int] = []
    dst: list[int] = []
    weight_fields: list[tuple[int, str | None]] = []
    limit = None if num_vertices is not None or base is None else _vertex_limit()
    first_line, first_weighted = None, None
    for line_number, fields in _data_lines(path, 0, 1, comments, delimiter):
        try:
            if first_line is None:
                first_line, first_weighted = line_number, len(fields) >= 3
            needed = 3 if weighted else 2
            if len(fields) < needed:
                layout = "'u v weight' (weighted=True)" if weighted else "'u v [weight]'"
                raise _FieldError(
                    f"expected {needed} fields {layout}, found {len(fields)}: "
                    f"{_excerpt(' '.join(fields))}"
                )
            if weighted is None and (len(fields) >= 3) != first_weighted:
                has, lacks = (
                    ("no weight", "has one") if first_weighted else ("a weight", "has none")
                )
                raise _FieldError(
                    f"this line has {has} ({len(fields)} fields) where line {first_line} {lacks}: "
                    "a weight on every line or none (weighted=True / --weighted requires them, "
                    "weighted=False / --no-weighted ignores them)"
                )
            for ids, text in ((src, fields[0]), (dst, fields[1])):
                if base is None:
                    vertex = _parse_integer(text, "vertex id")
                    if not _INT64_LOW <= vertex <= _INT64_HIGH:
                        raise _FieldError(f"vertex id {text} does not fit in 64 bits")
                else:
                    vertex = _parse_id(text, "vertex", base, high) - base
                if limit is not None and vertex >= limit[0]:
                    raise _FieldError(
                        _too_many_vertices(vertex + 1, f"vertex id {text} implies", limit)
                    )
                ids.append(vertex)
        except _FieldError as error:
            raise GraphFormatError(path, line_number, str(error)) from None
        weight_fields.append((line_number, fields[2] if len(fields) >= 3 else None))
    if weighted is None:
        weighted = bool(first_weighted)
    weight = None
    if weighted:
        weight = np.empty(len(weight_fields), dtype=np.float64)
        for index, (line_number, text) in enumerate(weight_fields):
            try:
                weight[index] = _parse_number(text, "weight")
            except _FieldError as error:
                raise GraphFormatError(path, line_number, str(error)) from None
    return np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), weight


# --- shared text parsing ------------------------------------------------------------------------
def _loadtxt(
    stream: BinaryIO, value_dtype, *, comments: str, delimiter, usecols, path=None, facts=None
):
    """``numpy.loadtxt`` into fields src, dst[, weight]; None when it rejects the text.

    ``path``: the file that ``stream`` reads plainly from its start, which numpy then reads
    itself (1.5x faster than through a Python stream), unless its name would make numpy
    decompress it. ``facts``: the rest of ``stream``'s :func:`_text_facts` under
    ``comments``, where the caller has them (else read here, one pass).
    """
    dtype = [("src", np.int64), ("dst", np.int64)]
    if value_dtype is not None:
        dtype.append(("weight", value_dtype))
    if facts is None:
        start = stream.tell()
        facts = _text_facts(stream, comments)
        stream.seek(start)
    if facts.lone_carriage_return:
        return None  # loadtxt would let a comment swallow it; the scan names the line
    comments = facts.comments
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an input without data lines warns
            # numpy < 2 parses "1.7" as the integer 1 with only a DeprecationWarning: decline
            warnings.simplefilter("error", DeprecationWarning)
            return np.loadtxt(
                stream if path is None or _numpy_decompresses(path) else path,
                dtype=dtype,
                comments=list(comments) or None,
                delimiter=delimiter,
                usecols=usecols,
                ndmin=1,
                encoding="latin-1",
            )
    except (ValueError, OverflowError, DeprecationWarning):
        return None


def _numpy_decompresses(path: str) -> bool:
    """Whether ``numpy.loadtxt`` would decompress a file of this name (by its extension)."""
    return path.lower().endswith((".gz", ".bz2", ".xz", ".lzma", ".zip", ".zst"))


class _TextFacts(NamedTuple):
    """What a scan of a text finds (:func:`_text_facts`)."""

    lone_carriage_return: bool  # a carriage return that ends no line
    comments: str  # which of the comment characters asked about occur
    hex_prefix: bool  # "0x" or "0X", which pyarrow reads as a hexadecimal integer


def _text_facts(stream: BinaryIO, comments: str, chunk: int = 1 << 24) -> _TextFacts:
    """Whether the rest of ``stream`` holds a carriage return not followed by a line feed,
    which characters of ``comments`` occur in it (``numpy.loadtxt`` parses in C with one
    comment character or none, but line by line in Python with more: 20 s against 1.5 s for
    rmat20's edge list under the default ``"#%"``), and whether it holds a hexadecimal prefix
    (up to the first lone carriage return: what follows is not read)."""
    previous = b""
    marks = {mark: mark.encode("latin-1") for mark in comments if ord(mark) < 256}
    seen: set[str] = set()
    lone = hexed = False
    while data := stream.read(chunk):
        if previous == b"\r" and not data.startswith(b"\n"):
            lone = True
        if b"\r" in data and data.count(b"\r") != data.count(b"\r\n") + data.endswith(b"\r"):
            lone = True
        seen.update(mark for mark, byte in marks.items() if mark not in seen and byte in data)
        if not hexed and (b"x" in data or b"X" in data):  # (a byte search; rare in numbers)
            pairs = previous + data
            hexed = b"0x" in pairs or b"0X" in pairs
        previous = data[-1:]
        if lone:
            break
    lone = lone or previous == b"\r"
    return _TextFacts(lone, "".join(mark for mark in comments if mark in seen), hexed)


def _available_memory() -> int | None:
    """Bytes of host memory available now (psutil's ``available``; without psutil, free pages
    by ``os.sysconf``), or None when unknown."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        return int(psutil.virtual_memory().available)
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _vertex_limit() -> tuple[int, int | None]:
    """``(most vertices a reader accepts, available bytes or None)``."""
    available = _available_memory()
    if available is None:
        return MAX_VERTICES, None
    return min(MAX_VERTICES, available // BUILD_BYTES_PER_VERTEX), available


def _too_many_vertices(count: int, what: str, limit=None) -> str | None:
    """Why a graph of ``count`` vertices cannot be built here, or None when it can.

    ``what`` leads the message ("the size line declares"); ``limit`` is a :func:`_vertex_limit`.
    """
    most, available = limit or _vertex_limit()
    if count <= most:
        return None
    lead = f"{what} {count} vertices" if what else f"{count} vertices"
    if count > MAX_VERTICES:
        return f"{lead}; bspgraph supports at most {MAX_VERTICES}"
    need = count * BUILD_BYTES_PER_VERTEX
    return (
        f"{lead}, which need about {need / 2**30:.1f} GiB to build; "
        f"{(available or 0) / 2**30:.1f} GiB of memory available"
    )


def _data_lines(
    path: str, offset: int, first_line: int, comments: str, delimiter: str | None = None
) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of every line from byte ``offset`` on that holds data."""
    with _open_binary(path) as stream:
        stream.seek(offset)
        for line_number, raw in enumerate(stream, start=first_line):
            if line_number == 1 and offset == 0:
                raw = raw.removeprefix(_UTF8_BOM.encode("latin-1"))
            text = _strip_comment(_line_text(raw, path, line_number), comments)
            if delimiter is None:
                fields = text.split()
            elif text.strip():
                fields = [field.strip() for field in text.split(delimiter)]
            else:
                fields = []
            if fields:
                yield line_number, fields


def _parse_integer(text: str, what: str) -> int:
    if not _INTEGER.fullmatch(text):
        raise _FieldError(f"{what} {_excerpt(text)} is not an integer")
    return int(text)


def _parse_id(text: str, what: str, low: int, high: int | None) -> int:
    value = _parse_integer(text, f"{what} id")
    if high is None and value < low:
        raise _FieldError(f"{what} id {value} is below the base {low}")
    if high is not None and not low <= value <= high:
        raise _FieldError(f"{what} id {value} out of range {low}..{high}")
    return value


def _parse_number(text: str, what: str) -> float:
    try:
        if "_" in text:
            raise ValueError
        return float(text)
    except ValueError:
        raise _FieldError(f"{what} {_excerpt(text)} is not a number") from None


def _decode(raw: bytes) -> str:
    """Text of a line: Latin-1 maps every byte to a character, so decoding never fails."""
    return raw.decode("latin-1")


def _line_text(raw: bytes, path: str, line_number: int) -> str:
    """The decoded line, refusing a carriage return that does not end it."""
    text = _decode(raw)
    if "\r" in text.rstrip("\r\n"):
        raise GraphFormatError(
            path, line_number, "a carriage return inside a line (only LF or CRLF ends lines)"
        )
    return text


def _strip_comment(text: str, comments: str) -> str:
    """``text`` up to its first comment character."""
    for comment in comments:
        text = text.split(comment, 1)[0]
    return text


def _excerpt(text: str) -> str:
    text = text.strip()
    if len(text) > _EXCERPT_CHARS:
        text = text[:_EXCERPT_CHARS] + "..."
    return repr(text)


# --- npz ----------------------------------------------------------------------------------------
def save_npz(graph: Graph, path: PathLike) -> None:
    """Write ``graph`` (forward CSR, weights, direction, build summary) to ``path`` as npz.

    The file is written at ``path`` exactly (no ``.npz`` is appended), through a temporary file
    and a rename (:func:`atomic_output`); :func:`load_npz` reads it.
    """
    arrays = {
        "bspgraph_npz_version": np.int64(NPZ_VERSION),
        "num_vertices": np.int64(graph.num_vertices),
        "directed": np.bool_(graph.directed),
        "offsets": to_host(graph.forward.offsets),
        "indices": to_host(graph.forward.indices),
        "duplicates_merged": np.int64(graph.summary.duplicates_merged),
        "self_loops": np.int64(graph.summary.self_loops),
        "self_loops_dropped": np.int64(graph.summary.self_loops_dropped),
    }
    if graph.weighted:
        arrays["weights"] = to_host(graph.forward.weights)
    with atomic_output(path) as stream:
        np.savez(stream, **arrays)


@contextlib.contextmanager
def atomic_output(path: PathLike, mode: str = "wb", **open_options) -> Iterator:
    """A stream onto a temporary file beside ``path``, renamed over ``path`` on success.

    An error or an interrupt (KeyboardInterrupt included) while writing removes the temporary
    and leaves ``path`` as it was: never a half-written file. ``open_options`` go to ``open``.
    """
    path = os.fspath(path)
    temporary = f"{path}.tmp-{os.getpid()}"
    try:
        with open(temporary, mode, **open_options) as stream:
            yield stream
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise


def load_npz(
    path: PathLike, backend: str | Backend | None = None, *, validate: bool = False
) -> Graph:
    """Read a graph written by :func:`save_npz`, on ``backend``.

    Always checked (O(V + E), no sort): the arrays and their types, offsets rising from 0 to
    the edge count, targets in range, one weight per edge. ``validate=True`` also checks what
    :func:`save_npz` guarantees but only a rebuild can confirm: each row's targets sorted and
    distinct, and every edge of an undirected graph stored in both directions with one weight.

    Raises
    ------
    GraphFormatError
        The file is not a readable npz archive, was not written by :func:`save_npz`, or its
        arrays do not form a valid graph.
    OSError
        The file cannot be opened, or ``path`` is a directory.
    """
    name = os.fspath(path)
    _check_not_directory(name)
    with open(name, "rb") as stream:
        try:
            with np.load(stream, allow_pickle=False) as archive:
                arrays = {key: archive[key] for key in archive.files}
        except _UNREADABLE_ARCHIVE as error:
            raise GraphFormatError(name, None, f"not a readable npz archive: {error}") from None
    offsets, indices, weights, num_vertices, directed, counts = _check_npz(name, arrays, validate)
    del arrays
    backend = get_backend(backend)
    forward = CSR(
        backend.asarray(offsets.astype(index_dtype(indices.size), copy=False)),
        backend.asarray(indices.astype(index_dtype(num_vertices), copy=False)),
        None if weights is None else backend.asarray(weights),
    )
    summary = Summary(num_vertices, int(indices.size), directed, *counts)
    return Graph(forward, num_vertices, directed=directed, backend=backend, summary=summary)


def _check_npz(path: str, arrays: dict[str, np.ndarray], validate: bool):
    """The validated contents of a save_npz archive, or a GraphFormatError naming the problem."""

    def corrupt(problem: str) -> GraphFormatError:
        return GraphFormatError(path, None, f"not a valid bspgraph npz file: {problem}")

    def scalar(key: str, kind: str):
        if key not in arrays:
            raise corrupt(f"'{key}' is missing")
        value = arrays[key]
        if value.shape != () or value.dtype.kind not in kind:
            raise corrupt(
                f"'{key}' must be a scalar of kind {kind!r}, got {value.dtype} {value.shape}"
            )
        return value.item()

    def vector(key: str, kind: str) -> np.ndarray:
        if key not in arrays:
            raise corrupt(f"'{key}' is missing")
        value = arrays[key]
        if value.ndim != 1 or value.dtype.kind not in kind:
            raise corrupt(f"'{key}' must be 1-D of kind {kind!r}, got {value.dtype} {value.shape}")
        return value

    version = scalar("bspgraph_npz_version", "iu")
    if version != NPZ_VERSION:
        raise corrupt(f"version {version}, this bspgraph reads version {NPZ_VERSION}")
    num_vertices = scalar("num_vertices", "iu")
    directed = bool(scalar("directed", "b"))
    counts = tuple(
        scalar(key, "iu") for key in ("duplicates_merged", "self_loops", "self_loops_dropped")
    )
    offsets = vector("offsets", "iu")
    indices = vector("indices", "iu")
    weights = vector("weights", "f") if "weights" in arrays else None

    if num_vertices < 0 or min(counts) < 0:
        raise corrupt("negative vertex or summary count")
    if offsets.size != num_vertices + 1:
        raise corrupt(
            f"{offsets.size} offsets for {num_vertices} vertices (need {num_vertices + 1})"
        )
    if offsets[0] != 0 or offsets[-1] != indices.size or np.any(offsets[1:] < offsets[:-1]):
        raise corrupt(f"offsets must rise from 0 to the {indices.size} edges")
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= num_vertices):
        raise corrupt(f"an edge target outside 0..{num_vertices - 1}")
    if weights is not None and weights.size != indices.size:
        raise corrupt(f"{weights.size} weights for {indices.size} edges")
    if validate:
        _check_npz_rows(
            offsets.astype(np.int64),
            indices.astype(np.int64),
            weights,
            num_vertices,
            directed,
            corrupt,
        )
    return offsets, indices, weights, num_vertices, directed, counts


def _check_npz_rows(offsets, indices, weights, num_vertices: int, directed: bool, corrupt):
    """load_npz(validate=True): rows sorted and distinct, an undirected graph mirrored."""
    src = np.repeat(np.arange(num_vertices, dtype=np.int64), np.diff(offsets))
    key = src * max(num_vertices, 1) + indices
    if np.any(np.diff(key) <= 0):
        raise corrupt("the targets of a vertex must be sorted and distinct")
    if not directed:
        order = np.argsort(indices * max(num_vertices, 1) + src, kind="stable")
        mirrored = np.array_equal(src[order], indices) and np.array_equal(indices[order], src)
        if not mirrored or (
            weights is not None and not np.array_equal(weights[order], weights, equal_nan=True)
        ):
            raise corrupt("an undirected graph must hold every edge in both directions")
