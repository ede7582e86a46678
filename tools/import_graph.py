"""Draw bspgraph's import graph and check its layering.

    python tools/import_graph.py            # edges between subpackages, cycles, is_gpu uses
    python tools/import_graph.py --modules  # every module -> the bspgraph modules it imports

Reads the sources (ast, nothing is imported): every ``import`` and ``from ... import``, at
module top or inside a function, that names a bspgraph module is an edge (importing a
submodule does not count as importing its package's ``__init__``). Prints the edges between
subpackages (``backend``, ``graph``, ``frontier``, ``primitives``, ``enactor``, ...: the first
name below ``bspgraph``), then any cycle among modules and among subpackages, any import of a
higher layer by a lower one (LAYERS), and any ``is_gpu`` outside ``bspgraph/backend/``.
Exits 1 when it finds a cycle, a layer broken or an ``is_gpu`` outside the backend, else 0.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

PACKAGE = "bspgraph"
ROOT = Path(__file__).resolve().parent.parent
# Lower layers first: a module of one may import only its own layer and those before it.
LAYERS = (("exceptions", "registry"), ("backend",), ("graph",), ("frontier",), ("primitives",))
IS_GPU = re.compile(r"\bis_gpu\b")


def modules(root: Path) -> dict[str, Path]:
    """Dotted name -> file of every module of the package under ``root``."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The bspgraph modules that module ``name`` (at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(base) if node.level else ""
            source = ".".join(p for p in (base, node.module or "") if p)
            targets = [f"{source}.{alias.name}" for alias in node.names]
            targets = [t if t in known else source for t in targets]
        else:
            continue
        for target in targets:
            while target and target not in known:  # "a.b.c" names module "a.b" and its c
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def subpackage(module: str) -> str:
    """The first name below bspgraph ("bspgraph" itself for the package's __init__)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer_of(sub: str) -> int | None:
    for rank, names in enumerate(LAYERS):
        if sub in names:
            return rank
    return None


def check(root: Path = ROOT) -> dict:
    """The module graph, the subpackage graph, their cycles, the layers broken
    (``(importer, imported)`` modules) and the ``is_gpu`` uses outside the backend
    (``path:line``)."""
    known = modules(root)
    graph = {name: imports(name, path, known) for name, path in known.items()}
    between: dict[str, set[str]] = {}
    for name, targets in graph.items():
        for target in targets:
            a, b = subpackage(name), subpackage(target)
            if a != b and a != PACKAGE:  # the package's __init__ imports everything
                between.setdefault(a, set()).add(b)
    broken = []
    for name, targets in graph.items():
        mine = layer_of(subpackage(name))
        for target in targets:
            theirs = layer_of(subpackage(target))
            if mine is not None and theirs is not None and theirs > mine:
                broken.append((name, target))
    backend = root / PACKAGE / "backend"
    gpu_tests = [
        f"{path.relative_to(root)}:{number}"
        for path in known.values()
        if backend not in path.parents
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if IS_GPU.search(line)
    ]
    return {
        "modules": graph,
        "subpackages": between,
        "module_cycles": cycles(graph),
        "subpackage_cycles": cycles(between),
        "broken_layers": sorted(broken),
        "is_gpu": gpu_tests,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", action="store_true", help="print every module's imports")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository root")
    args = parser.parse_args(argv)
    found = check(args.root)
    if args.modules:
        for name, targets in sorted(found["modules"].items()):
            print(f"{name} -> {', '.join(sorted(targets)) or '-'}")
        print()
    print("subpackage edges (importer -> imported):")
    for name, targets in sorted(found["subpackages"].items()):
        print(f"  {name} -> {', '.join(sorted(targets))}")
    problems = 0
    for kind in ("module_cycles", "subpackage_cycles"):
        for component in found[kind]:
            print(f"cycle ({kind.split('_')[0]}s): {' <-> '.join(component)}")
            problems += 1
    for importer, imported in found["broken_layers"]:
        print(f"layer broken: {importer} imports {imported}")
        problems += 1
    for place in found["is_gpu"]:
        print(f"is_gpu outside bspgraph/backend/: {place}")
        problems += 1
    print("ok" if not problems else f"{problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
