"""Reading graph files on the CPU: bspgraph against scipy on the same rmat graph.

    python -m benchmarks.io [--scale 20] [--repeat 3] [--output benchmarks/data/io-....txt]

Generates R-MAT (``bg.generators.rmat(scale, 16, seed=1, weights=True)``), writes it as Matrix
Market, as bspgraph npz and as a SNAP-style edge list (``#`` comments, each undirected edge once,
1-based) in a temporary folder, and times, in this process, each reader against its baseline
(best of ``--repeat``, alternating): ``bg.read_mtx`` against ``scipy.io.mmread(...).tocsr()``,
``Graph.from_edges`` against scipy's COO -> CSR on the same (shuffled) arrays, ``bg.load_npz``
against ``np.load`` of the same arrays, ``bg.read_edgelist`` against ``np.loadtxt`` of its two
columns (parsing alone: no target). Peak memory of each read is measured in a fresh child
process from Linux's ``VmHWM`` (peak resident set, everything the process touched, not only
NumPy's arrays): reset through ``/proc/self/clear_refs`` after the imports, read after the call,
the difference compared with the graph's own size (offsets + indices + weights).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy
import scipy.io
import scipy.sparse as sp

import bspgraph as bg


def _best(call, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return min(times)


def _pair(ours, baseline, repeat: int) -> tuple[float, float]:
    """Best times of ``ours`` and ``baseline``, run alternately."""
    mine, theirs = [], []
    for _ in range(repeat):
        theirs.append(_best(baseline, 1))
        mine.append(_best(ours, 1))
    return min(mine), min(theirs)


_CHILD = """
import sys, numpy as np, scipy.io, scipy.sparse, bspgraph as bg
kind, path = sys.argv[1], sys.argv[2]
def hwm():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
with open("/proc/self/clear_refs", "w") as refs:  # the peak so far (a fork's) starts again
    refs.write("5")
before = hwm()
if kind == "read_mtx":
    g = bg.read_mtx(path, backend="numpy")
elif kind == "mmread":
    g = scipy.io.mmread(path).tocsr()
elif kind == "load_npz":
    g = bg.load_npz(path, backend="numpy")
elif kind == "read_edgelist":
    g = bg.read_edgelist(path, base=1, directed=False, backend="numpy")
print((hwm() - before) * 1024)
"""


def _peak(kind: str, path: str) -> int:
    """Bytes of peak resident memory that one read adds, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, kind, path],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ),
    )
    return int(done.stdout.split()[-1])


def _write_snap(graph, path: str) -> None:
    """``graph``'s edges, each undirected edge once (row > column), as a SNAP-style list."""
    from bspgraph.graph.write import _write_entries

    src, dst, _ = graph.edges()
    lower = src > dst
    with open(path, "w", encoding="ascii", newline="\n") as stream:
        stream.write(
            f"# Undirected graph: rmat\n# Nodes: {graph.num_vertices} Edges: "
            f"{int(lower.sum())}\n# FromNodeId\tToNodeId\n"
        )
        _write_entries(stream, src[lower], dst[lower], None)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", help="also write the table and facts here")
    args = parser.parse_args(argv)

    lines = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    say(
        f"# benchmarks.io  scale={args.scale} repeat={args.repeat} commit={commit} "
        f"date={time.strftime('%Y-%m-%d %H:%M')}"
    )
    say(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, python "
        f"{platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    graph = bg.generators.rmat(args.scale, 16, seed=1, weights=True, backend="numpy")
    own = sum(a.nbytes for a in (graph.offsets, graph.indices, graph.weights))
    own_unweighted = graph.offsets.nbytes + graph.indices.nbytes
    say(f"# graph: {graph!r}, own size {own / 2**20:.0f} MiB")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        mtx, npz = os.path.join(folder, "g.mtx"), os.path.join(folder, "g.npz")
        snap = os.path.join(folder, "g.txt")
        bg.write_mtx(graph, mtx)
        bg.save_npz(graph, npz)
        _write_snap(graph, snap)
        say(
            f"# files: .mtx {os.path.getsize(mtx) / 2**20:.0f} MiB, .npz "
            f"{os.path.getsize(npz) / 2**20:.0f} MiB, SNAP edge list "
            f"{os.path.getsize(snap) / 2**20:.0f} MiB"
        )

        read = bg.read_mtx(mtx, backend="numpy")
        assert np.array_equal(read.indices, graph.indices)
        assert np.array_equal(read.weights, graph.weights)
        own_read = sum(a.nbytes for a in (read.offsets, read.indices, read.weights))
        say(f"# read back from .mtx: float64 weights, own size {own_read / 2**20:.0f} MiB")
        del read
        mine, theirs = _pair(
            lambda: bg.read_mtx(mtx, backend="numpy"),
            lambda: scipy.io.mmread(mtx).tocsr(),
            args.repeat,
        )
        rows.append(
            ("read .mtx into a graph", "bg.read_mtx", mine, "scipy.io.mmread + tocsr", theirs, 1.2)
        )

        src, dst, weight = graph.edges()
        order = np.random.default_rng(0).permutation(src.size)
        src, dst, weight = src[order], dst[order], weight[order].astype(np.float64)
        n = graph.num_vertices
        mine, theirs = _pair(
            lambda: bg.Graph.from_edges(src, dst, weight, num_vertices=n, backend="numpy"),
            lambda: sp.coo_array((weight, (src, dst)), shape=(n, n)).tocsr(),
            args.repeat,
        )
        rows.append(
            (
                "build from shuffled edges",
                "Graph.from_edges",
                mine,
                "scipy coo_array.tocsr",
                theirs,
                1.2,
            )
        )

        def np_load():
            with np.load(npz) as archive:
                return {key: archive[key] for key in archive.files}

        mine, theirs = _pair(lambda: bg.load_npz(npz, backend="numpy"), np_load, args.repeat)
        rows.append(("load .npz", "bg.load_npz", mine, "np.load of its arrays", theirs, 2.0))
        valid = _best(lambda: bg.load_npz(npz, backend="numpy", validate=True), 1)

        # the largest ids may be isolated: num_vertices says how many there are
        listed = bg.read_edgelist(
            snap, base=1, directed=False, num_vertices=graph.num_vertices, backend="numpy"
        )
        assert np.array_equal(listed.offsets, graph.offsets)
        assert np.array_equal(listed.indices, graph.indices)
        del listed
        mine, theirs = _pair(
            lambda: bg.read_edgelist(snap, base=1, directed=False, backend="numpy"),
            lambda: np.loadtxt(snap, dtype=np.int64, comments="#"),
            args.repeat,
        )
        rows.append(
            (
                "read SNAP edge list into a graph",
                "bg.read_edgelist",
                mine,
                "np.loadtxt (parse only)",
                theirs,
                None,
            )
        )

        say()
        say("| step | bspgraph | s | baseline | s | ratio | target |")
        say("|---|---|---:|---|---:|---:|---:|")
        for step, ours, mine, base, theirs, target in rows:
            ratio = mine / theirs
            mark = (
                "-" if target is None else f"<= {target}x {'met' if ratio <= target else 'MISSED'}"
            )
            say(f"| {step} | {ours} | {mine:.2f} | {base} | {theirs:.2f} | {ratio:.2f}x | {mark} |")
        say(f"\nload_npz(validate=True): {valid:.2f} s")
        peaks = {
            kind: _peak(kind, path)
            for kind, path in (
                ("read_mtx", mtx),
                ("mmread", mtx),
                ("load_npz", npz),
                ("read_edgelist", snap),
            )
        }
        say("\n| read | peak added (MiB) | / graph's own size | target |")
        say("|---|---:|---:|---:|")
        for kind, peak in peaks.items():
            target = {"mmread": "(baseline)", "read_edgelist": "-"}.get(kind, "<= 2x")
            # .mtx values come back as float64; the edge list has no weights
            size = {"load_npz": own, "read_edgelist": own_unweighted}.get(kind, own_read)
            say(f"| {kind} | {peak / 2**20:.0f} | {peak / size:.2f}x | {target} |")
    if args.output:
        with open(args.output, "w") as stream:
            stream.write("\n".join(lines) + "\n")
            stream.write(json.dumps({"rows": rows, "peaks": peaks, "own": own}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
