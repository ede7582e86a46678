"""A/B of two commits: one benchmark command, run from each commit's code in turn.

    python -m benchmarks.ab b340680 HEAD --rounds 3 --grep "^rmat24" -- \
        -m benchmarks.gpu --scale 24 --algorithms bfs

Each commit's ``bspgraph`` and ``benchmarks`` are exported (``git archive``) to a temporary
folder. The command (the arguments to this Python after ``--``) runs in that folder, so that
``-m`` imports its code: before, after, before, after, ... for ``--rounds`` rounds. The
processes alternate because the spread between processes, and between machines, is larger
than most changes (benchmarks/RESULTS.md, series 9). Lines of the output that match
``--grep`` (a regular expression; every line when left out) are printed, prefixed with
"before" or "after". Give file arguments as absolute paths.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile


def export(commit: str, folder: str) -> None:
    """``bspgraph`` and ``benchmarks`` as of ``commit`` into ``folder``."""
    archive = subprocess.run(
        ["git", "archive", commit, "bspgraph", "benchmarks"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        usage="%(prog)s BEFORE AFTER [options] -- PYTHON_ARGS...",
    )
    parser.add_argument("before", help="a commit (any git revision)")
    parser.add_argument("after", help="the commit to compare with it")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--grep", help="print only the output lines this expression matches")
    argv = sys.argv[1:] if argv is None else list(argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args, command = parser.parse_args(argv[:cut]), argv[cut + 1 :]
    if not command:
        parser.error("give the command after --, e.g. -- -m benchmarks.gpu --scale 22")
    pattern = re.compile(args.grep) if args.grep else None
    with tempfile.TemporaryDirectory() as root:
        folders = {}
        for label, commit in (("before", args.before), ("after", args.after)):
            folders[label] = os.path.join(root, label)
            os.mkdir(folders[label])
            export(commit, folders[label])
            print(f"{label}: {commit}", flush=True)
        for _ in range(args.rounds):
            for label, folder in folders.items():
                env = dict(os.environ, PYTHONPATH=folder)
                done = subprocess.run(
                    [sys.executable, *command], cwd=folder, env=env, capture_output=True, text=True
                )
                if done.returncode:
                    sys.exit(f"{label}: exit {done.returncode}\n{done.stderr[-2000:]}")
                for line in done.stdout.splitlines():
                    if pattern is None or pattern.search(line):
                        print(f"{label}\t{line}", flush=True)


if __name__ == "__main__":
    main()
