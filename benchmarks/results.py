"""Write benchmarks/RESULTS.md from benchmarks/data/: the current figures only, one table per
device and topic, each with its command, device, date and commit as its data file records them.

    python -m benchmarks.results          # writes benchmarks/RESULTS.md
    python -m benchmarks.results --check  # exit 1 if the page differs from what it would write

Each topic reads one data file, the newest of that topic when this script last chose (``TOPICS``:
record a newer run in benchmarks/data/ and point its topic at it). Nothing here is typed in: the
rows and the run's facts are parsed from the file, and a file that no longer parses is an
error, not a blank. The history (the page's earlier sections, every run) stays in git and in
benchmarks/data/.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
PAGE = HERE / "RESULTS.md"


@dataclass(frozen=True)
class Run:
    """What a data file says of its run, and its table (markdown lines)."""

    device: str
    date: str
    commit: str
    command: str
    table: list[str]
    notes: list[str]


def _match(pattern: str, text: str, what: str, name: str) -> re.Match:
    found = re.search(pattern, text, re.MULTILINE)
    if found is None:
        raise ValueError(f"benchmarks/data/{name}: no {what} (pattern {pattern!r})")
    return found


def _table(
    header: list[str], rows: list[list[str]], right_from: int = 1, right_to: int | None = None
) -> list[str]:
    """A markdown table, its columns from ``right_from`` to ``right_to`` right-aligned."""
    right_to = len(header) if right_to is None else right_to
    align = ["---:" if right_from <= k < right_to else "---" for k in range(len(header))]
    return [f"| {' | '.join(cells)} |" for cells in (header, align, *rows)]


def _comments(text: str) -> list[str]:
    return [line[1:].strip() for line in text.splitlines() if line.startswith("#")]


def _gpu_header(text: str, name: str) -> re.Match:
    """A GPU run's first line: "# DEVICE, CuPy X, DATE, code of COMMIT: COMMAND"."""
    return _match(
        r"^# (?P<device>.+?), CuPy [\d.]+, (?P<date>\d{4}-\d\d-\d\d), code of "
        r"(?P<commit>\w+): (?P<command>.+)$",
        text,
        "header",
        name,
    )


# --- one topic a parser ---------------------------------------------------------------------------
def one_gpu(name: str, text: str) -> Run:
    """benchmarks.gpu's per-algorithm lines under each graph's line: the whole call, the BSP
    loop, the baseline."""
    head = _gpu_header(text, name)
    graphs = re.findall(r"^(rmat\d+): (.+)$", text, re.MULTILINE)
    if not graphs:
        raise ValueError(f"benchmarks/data/{name}: no graph line")
    rows = []
    for graph, block in zip(
        (g for g, _ in graphs), re.split(r"^rmat\d+: .+$", text, flags=re.MULTILINE)[1:]
    ):
        for found in re.finditer(
            r"^  (\S+): ([\d.]+) ms \(bsp ([\d.]+) ms[^)]*\), baseline ([\d.]+) ms ?(.*)$",
            block,
            re.MULTILINE,
        ):
            algorithm, ms, bsp, base, note = found.groups()
            speedup = f"{float(base) / float(ms):.2f}x"
            rows.append([graph, algorithm, ms, bsp, base, speedup, note.strip(" ()")])
    if not rows:
        raise ValueError(f"benchmarks/data/{name}: no algorithm lines")
    table = _table(
        [
            "graph",
            "algorithm",
            "ms (whole call)",
            "bsp ms",
            "cupyx baseline ms",
            "speed-up",
            "note",
        ],
        rows,
        right_from=2,
        right_to=6,
    )
    notes = [f"{g}: {facts}" for g, facts in graphs] + _comments(text)[1:]
    return Run(head["device"], head["date"], head["commit"], head["command"], table, notes)


def _multi_rows(lines: list[str]) -> dict[tuple[str, int], list[str]]:
    """benchmarks.multi_gpu's rows by (algorithm, P): its whitespace-split columns."""
    rows = {}
    for line in lines:
        cells = line.split()
        if len(cells) == 12 and cells[1].isdigit():
            rows[(cells[0], int(cells[1]))] = cells
    return rows


def _rounds(text: str, marker: str) -> list[dict]:
    """The rounds of a benchmarks.multi_gpu file, split at lines starting with ``marker``."""
    blocks = re.split(rf"^{marker}.*$", text, flags=re.MULTILINE)[1:]
    return [_multi_rows(block.splitlines()) for block in blocks]


def _against_one(rounds: list[dict], name: str) -> list[list[str]]:
    """Per algorithm: bsp ms on one device and on P, and the speed-up, each round."""
    rows = []
    for (algorithm, parts), cells in rounds[0].items():
        if parts == 1:
            continue
        one = [r[(algorithm, 1)][5] for r in rounds]
        many = [r[(algorithm, parts)][5] for r in rounds]
        speedup = [r[(algorithm, parts)][8] for r in rounds]
        rows.append(
            [
                algorithm,
                str(parts),
                " / ".join(one),
                " / ".join(many),
                " / ".join(speedup),
                cells[9],
            ]
        )
    if not rows:
        raise ValueError(f"benchmarks/data/{name}: no rows on several devices")
    return rows


MULTI_HEADER = ["algorithm", "P", "bsp ms, one", "bsp ms, P", "speed-up", "supersteps on P"]


def several_gpus(name: str, text: str) -> Run:
    """benchmarks.multi_gpu over NCCL: one GPU against P, two rounds."""
    head = _match(
        r"^# (?P<device>.+?), (?P<date>\d{4}-\d\d-\d\d): (?P<what>.+)$", text, "header", name
    )
    commit = _match(r"Code of (\w+)", text, "commit", name).group(1)
    command = " ".join(
        c.rstrip("\\").strip() for c in _comments(text) if c.startswith(("mpiexec", "--"))
    )
    rounds = _rounds(text, "# round")
    table = _table(MULTI_HEADER, _against_one(rounds, name), right_from=1)
    order = " / ".join(str(r + 1) for r in range(len(rounds)))
    notes = [
        f"{head['what']}; " + (f"rounds {order} in each cell" if len(rounds) > 1 else "one round")
    ]
    notes += [c for c in _comments(text)[1:] if c.startswith("(")]
    return Run(head["device"], head["date"], commit, command, table, notes)


def one_call(name: str, text: str) -> Run:
    """benchmarks.one_call: a run from one Python call on bg.cluster workers against the same
    run under mpiexec, both on one machine (issue 50's gates)."""
    head = _match(
        r"^# (?P<device>.+?), (?P<date>\d{4}-\d\d-\d\d): (?P<what>.+)$", text, "header", name
    )
    commit = _match(r"Code of (\w+)", text, "commit", name).group(1)
    command = " && ".join(c for c in _comments(text) if c.startswith(("mpiexec", "python")))
    rows = []
    for line in text.splitlines():
        cells = line.split()
        if len(cells) == 12 and cells[1].isdigit() and not line.startswith("#"):
            algorithm, parts, _, _, bsp_mpi, bsp_one, bsp_ratio, *whole, setup, gates = cells
            rows.append([algorithm, parts, bsp_mpi, bsp_one, bsp_ratio, *whole, setup, gates])
    if not rows:
        raise ValueError(f"benchmarks/data/{name}: no one_call lines")
    header = ["algorithm", "P", "bsp ms, mpiexec", "bsp ms, one call", "ratio (<= 1.15)"]
    header += ["whole ms, mpiexec", "whole ms, one call", "ratio (<= 1.3)", "setup s again"]
    table = _table([*header, "gates"], rows, right_from=1, right_to=9)
    notes = [head["what"], *(c for c in _comments(text)[1:] if c.startswith("("))]
    return Run(head["device"], head["date"], commit, command, table, notes)


def cpu(name: str, text: str) -> Run:
    """benchmarks.multi_gpu on NumPy virtual devices: the new code's rows, P = 2 and 4."""
    head = _match(
        r"^# (?P<device>.+?), (?P<what>rmat\d+[^,]*), (?P<date>\d{4}-\d\d-\d\d): .+ "
        r"against (?P<commit>\w+) \(new\)",
        text,
        "header",
        name,
    )
    command = _match(r"^#\s+(PYTHONPATH=.+)$", text, "command", name).group(1)
    rows = []
    for parts in ("P2", "P4"):
        rounds = [
            _multi_rows(
                line.split("\t", 1)[1]
                for line in text.splitlines()
                if line.startswith(f"new r{r} {parts}\t")
            )
            for r in (1, 2)
        ]
        rows += _against_one(rounds, name)
    table = _table(MULTI_HEADER, rows)
    notes = [
        f"{head['what']}; P parts over one device (parts of one process), rounds 1 / 2 in each cell"
    ]
    return Run(head["device"], head["date"], head["commit"], command, table, notes)


def files(name: str, text: str) -> Run:
    """benchmarks.io: its own tables, as it wrote them."""
    head = _match(
        r"^# (?P<command>benchmarks\.io .+?) commit=(?P<commit>\w+) "
        r"date=(?P<date>\d{4}-\d\d-\d\d)",
        text,
        "header",
        name,
    )
    device = _match(r"^# (x86_64.+)$", text, "machine line", name).group(1)
    lines = text.splitlines()
    table = [line for line in lines if line.startswith("|")]
    split = next(k for k in range(1, len(table)) if table[k].startswith("| read |"))
    table = table[:split] + [""] + [line for line in lines if line.startswith("load_npz(")]
    table += [""] + [line for line in lines if line.startswith("|")][split:]
    notes = [c for c in _comments(text)[2:]]
    return Run(device, head["date"], head["commit"], head["command"], table, notes)


def many_sources(name: str, text: str) -> Run:
    """benchmarks.many_sources: its table, as it wrote it."""
    head = _match(
        r"^# (?P<date>\d{4}-\d\d-\d\d), (?P<device>.+?), CuPy [\d.]+, commit "
        r"(?P<commit>\w+)",
        text,
        "header",
        name,
    )
    command = _match(r"^# (PYTHONPATH=.+)$", text, "command", name).group(1)
    table = [line for line in text.splitlines() if line.startswith("|")]
    notes = [line for line in text.splitlines() if line.startswith("backend ")]
    return Run(head["device"], head["date"], head["commit"], command, table, notes)


def first_minute(name: str, text: str) -> Run:
    """benchmarks.cold_start: each primitive's first and second call in a fresh process, each
    run of the file a column."""
    head = _match(
        r"^# (?P<date>\d{4}-\d\d-\d\d)[^,]*, (?P<device>.+?), CuPy [\d.]+, commit "
        r"(?P<commit>\w+)",
        text,
        "header",
        name,
    )
    command = _match(r"^# (PYTHONPATH=.+)$", text, "command", name).group(1)
    first = text.split(command, 1)[1].split("\n# PYTHONPATH=", 1)[0]  # that command's runs
    runs = []
    for block in re.split(r"^rmat\d+: .+$", first, flags=re.MULTILINE)[1:]:
        cells = {}
        for line in block.splitlines():
            words = line.split()
            if len(words) in (2, 5) and re.fullmatch(r"[\d.]+", words[1]):
                cells[words[0]] = words[1:]
        runs.append(cells)
    if not runs:
        raise ValueError(f"benchmarks/data/{name}: no runs")
    rows = [
        [primitive, *(" / ".join(run[primitive][k] for run in runs) for k in (0, 1, 2, 3))]
        for primitive in runs[0]
        if primitive != "all"
    ]
    rows.append(["all (first calls)", " / ".join(run["all"][0] for run in runs), "", "", ""])
    table = _table(["primitive", "first call s", "second call s", "compiles", "compile s"], rows)
    graph = _match(r"^(rmat\d+: .+)$", text, "graph line", name).group(1)
    notes = [
        f"{graph}; runs {' / '.join(str(k + 1) for k in range(len(runs)))} of the command "
        "in each cell; the file's other calls (after bg.warmup, with a filled kernel "
        "cache) are in the data file"
    ]
    return Run(head["device"], head["date"], head["commit"], command, table, notes)


def roads(name: str, text: str) -> Run:
    """benchmarks.cpu --roads: its two tables (the rows; the issue's targets), as it wrote
    them."""
    head = _match(
        r"^# (?P<device>.+?), (?P<date>\d{4}-\d\d-\d\d), commit (?P<commit>\w+): "
        r"(?P<command>.+)$",
        text,
        "header",
        name,
    )
    lines = text.splitlines()
    table = [line for line in lines if line.startswith("|")]
    split = next((k for k in range(1, len(table)) if table[k].startswith("| target |")), None)
    if not table or split is None:
        raise ValueError(f"benchmarks/data/{name}: no rows or no targets table")
    table = table[:split] + [""] + table[split:]
    notes = [line for line in lines if line.startswith("ms: ")]
    return Run(head["device"], head["date"], head["commit"], head["command"], table, notes)


def roads_gpu(name: str, text: str) -> Run:
    """benchmarks.roads_gpu: a row a graph and algorithm, against the base checkout."""
    head = _match(
        r"^# (?P<device>.+?), CuPy [\d.]+, (?P<date>\d{4}-\d\d-\d\d), code of "
        r"(?P<commit>\w+) against (?P<base>\w+): (?P<command>.+)$",
        text,
        "header",
        name,
    )
    rows = [
        list(found.groups())
        for found in re.finditer(
            r"^  (\S+) (\S+): ([\d.]+) ms \(base ([\d.]+) ms, ([\d.]+x)\), (\d+) supersteps$",
            text,
            re.MULTILINE,
        )
    ]
    if not rows:
        raise ValueError(f"benchmarks/data/{name}: no rows")
    header = ["graph", "algorithm", "ms (whole call)", f"ms at {head['base']}", "speed-up"]
    table = _table([*header, "supersteps"], rows, right_from=2)
    notes = _comments(text)[1:]
    return Run(head["device"], head["date"], head["commit"], head["command"], table, notes)


def memory(name: str, text: str) -> Run:
    """benchmarks.memory_peak: a device's peak memory on 1, 2 and 4 parts against the
    estimate, a row a primitive, with the ratio at the most parts against one GPU."""
    head = _match(
        r"^# (?P<device>.+?), CuPy [\d.]+, .*?(?P<date>\d{4}-\d\d-\d\d), code of "
        r"(?P<commit>\w+): (?P<what>.+)$",
        text,
        "header",
        name,
    )
    command = _match(
        r"^#   (?P<command>python -m benchmarks\.memory_peak .+)$", text, "command", name
    )
    found = re.findall(
        r"^(\w+)\s+P=(\d+): measured\s+([\d.]+) GiB .*?estimated\s+([\d.]+),", text, re.MULTILINE
    )
    if not found:
        raise ValueError(f"benchmarks/data/{name}: no rows")
    runs: dict[str, dict[int, tuple[float, float]]] = {}
    for primitive, parts, measured, estimated in found:
        runs.setdefault(primitive, {})[int(parts)] = (float(measured), float(estimated))
    counts = sorted({parts for by_parts in runs.values() for parts in by_parts})
    most = counts[-1]
    rows = []
    for primitive, by_parts in runs.items():
        cells = [f"{by_parts[p][0]:.2f} / {by_parts[p][1]:.2f}" for p in counts]
        one, last = by_parts[counts[0]], by_parts[most]
        ratio = f"{last[0] / one[0]:.2f}x / {last[1] / one[1]:.2f}x"
        rows.append([primitive, *cells, ratio])
    header = ["primitive", *(f"GiB on P={p}" for p in counts), f"P={most} against P={counts[0]}"]
    notes = [
        "measured / estimated in each cell: " + head["what"],
        *(c for c in _comments(text)[2:] if not c.startswith("against one GPU")),
    ]
    return Run(
        head["device"],
        head["date"],
        head["commit"],
        command["command"],
        _table(header, rows),
        notes,
    )


def parts_of_one_gpu(name: str, text: str) -> Run:
    """benchmarks.phases' plain times: each algorithm on the one-device loop and on P parts of
    the same device (the lift's own cost: one device's work would be 1.0x)."""
    head = _gpu_header(text, name)
    timing = r"whole ([\d.]+) ms, bsp ([\d.]+) ms, (\d+) supersteps"
    one = dict(
        (found[0], found[1:])
        for found in re.findall(rf"^(\S+) on the one-device loop: {timing}$", text, re.MULTILINE)
    )
    rows = []
    for algorithm, parts, whole, bsp, steps in re.findall(
        rf"^(\S+) on (\d+) part\(s\): {timing}$", text, re.MULTILINE
    ):
        if algorithm not in one:
            raise ValueError(f"benchmarks/data/{name}: {algorithm} has no one-device line")
        one_whole, one_bsp, one_steps = one[algorithm]
        ratio = f"{float(bsp) / float(one_bsp):.2f}x"
        rows.append(
            [algorithm, parts, one_bsp, bsp, ratio, one_whole, whole, f"{one_steps} / {steps}"]
        )
    if not rows:
        raise ValueError(f"benchmarks/data/{name}: no algorithm lines")
    header = ["algorithm", "parts", "bsp ms, one", "bsp ms, parts", "parts / one"]
    header += ["whole ms, one", "whole ms, parts", "supersteps"]
    table = _table(header, rows, right_from=1, right_to=7)
    return Run(
        head["device"], head["date"], head["commit"], head["command"], table, _comments(text)[1:]
    )


@dataclass(frozen=True)
class Topic:
    title: str
    data: str  # the file under benchmarks/data/: the newest of the topic
    parse: Callable[[str, str], Run]


TOPICS = (
    Topic("One GPU", "gpu-rmat24-h200-b94791b.txt", one_gpu),
    Topic("Several GPUs", "x2-nccl-rmat25-h200-17364a1.txt", several_gpus),
    Topic("Several GPUs at rmat26", "x2-nccl-rmat26-h200-c84df3a.txt", several_gpus),
    Topic("Several GPUs on a small graph", "x2-nccl-rmat18-h200-e6fccc7.txt", several_gpus),
    Topic("Several GPUs on a grid", "x2-nccl-grid1024-h200-e6fccc7.txt", several_gpus),
    Topic("One Python call (two GPUs)", "x2-one-call-rmat25-h200-17364a1.txt", one_call),
    Topic("One Python call (one GPU)", "one-call-1gpu-rmat25-h200-615d38b.txt", one_call),
    Topic(
        "A Dask deployment's workers (two GPUs)",
        "x2-deployment-one-call-rmat25-h200-f296824.txt",
        one_call,
    ),
    Topic("Parts of one GPU", "parts-h200-rmat25-f9ae8cc.txt", parts_of_one_gpu),
    Topic("CPU", "cpu-rmat18-gates-43e8355.txt", cpu),
    Topic("Roads and meshes (CPU)", "cpu-roads-411b32d.txt", roads),
    Topic("Roads and meshes (one GPU)", "h200-roads-6683312.txt", roads_gpu),
    Topic("Files", "io-cpu-a55ce57.txt", files),
    Topic("Many sources", "many-sources-h100-1dddd7f.txt", many_sources),
    Topic("First minute", "cold-start-h100-337cdd2.txt", first_minute),
    Topic("Memory of one device", "memory-rmat24-h200-e543e83.txt", memory),
    Topic("Memory of one device at rmat26", "memory-rmat26-h200-3a55709.txt", memory),
)

INTRO = """\
# Measured results

The current figures, one table per device and topic. This page is written by
`python -m benchmarks.results` from the data files in `benchmarks/data/` (do not edit it by
hand: `tests/test_results_page.py` checks that it is what the script writes). To update a
table, record the run in a new data file and point its topic (`benchmarks/results.py`,
`TOPICS`) at it. Earlier figures and their analyses are in the data files and in this page's
git history (`git log -p benchmarks/RESULTS.md`).

GTEPS = directed edges of reached vertices / time. Each figure was measured in one run
against its baseline on the same device; "ms (whole call)" is the public call (allocation and
the copy of the result to the host included), "bsp ms" its BSP loop (`stats.seconds`).
"""


def render() -> str:
    parts = [INTRO]
    for topic in TOPICS:
        run = topic.parse(topic.data, (DATA / topic.data).read_text())
        parts.append(f"## {topic.title}\n")
        parts.append(
            f"- device: {run.device}\n- date: {run.date}\n- commit: {run.commit}\n"
            f"- data: `benchmarks/data/{topic.data}`\n- command:\n\n"
            f"      {run.command}\n"
        )
        parts.append("\n".join(run.table) + "\n")
        if run.notes:
            parts.append("\n".join(f"> {note}" for note in run.notes) + "\n")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    page = render()
    if args.check:
        if PAGE.read_text() != page:
            print("benchmarks/RESULTS.md differs from `python -m benchmarks.results`")
            return 1
        return 0
    PAGE.write_text(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
