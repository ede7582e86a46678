"""The cost of a light superstep on NumPy: the enactor's own time, and whole light supersteps.

    python -m benchmarks.light_steps             # 2,000 supersteps of each, median of 5 runs

Three rows, each in microseconds per superstep (the median over ``--repeat`` runs):

- ``enactor``: a primitive whose step hands back a frontier of 4 vertices it built before the
  run and does nothing else: what the one-device loop itself spends on a superstep (the
  frontier's size, the stop test, the superstep's record, the clocks), measured as the run's
  ``stats.seconds`` less the time inside ``step``;
- ``bfs path`` and ``sssp path``: BFS and SSSP along a path of ``--length`` vertices (one
  vertex a level): a whole light superstep, the operators' dispatch and their NumPy calls on a
  frontier of one vertex included.

The issue's gate (issue 54): ``enactor`` at most 30 us on NumPy. Never asserted in a test.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import bspgraph as bg
from bspgraph import frontier as fr
from bspgraph.enactor import Primitive, State, enact

GATE_US = 30.0


class Idle(Primitive):
    """Supersteps that do nothing: the step returns a frontier of a few vertices built once."""

    state = (State("seen", "int64"),)

    def init_frontier(self, graph, state):
        self.inside, self.frontier = 0.0, fr.Frontier.from_ids(graph, [0, 1, 2, 3])
        return self.frontier

    def step(self, graph, frontier, state, iteration):
        started = time.perf_counter()
        out = self.frontier
        self.inside += time.perf_counter() - started
        return out

    def converged(self, graph, frontier, state, iteration):
        return iteration >= self.options["supersteps"]


def enactor_us(graph, supersteps: int) -> float:
    """The loop's own microseconds a superstep: stats.seconds less the time inside step."""
    primitive = Idle(supersteps=supersteps)
    _, stats = enact(primitive, graph, backend="numpy")
    return (stats.seconds - primitive.inside) / stats.iterations * 1e6


def per_step_us(call) -> float:
    stats = call().stats
    return stats.seconds / stats.iterations * 1e6


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=2000, help="vertices of the path")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    n = args.length
    ids = np.arange(n - 1)
    path = bg.Graph.from_edges(ids, ids + 1, num_vertices=n, directed=False, backend="numpy")
    rows = {
        "enactor": lambda: enactor_us(path, n),
        "bfs path": lambda: per_step_us(lambda: bg.bfs(path, 0, backend="numpy")),
        "sssp path": lambda: per_step_us(lambda: bg.sssp(path, 0, backend="numpy")),
    }
    print(
        f"path of {n} vertices, {n - 1} supersteps a run; us a superstep, median of "
        f"{args.repeat} runs after one warm-up"
    )
    for name, measure in rows.items():
        measure()
        us = statistics.median(measure() for _ in range(args.repeat))
        gate = f"  (gate {GATE_US:.0f} us: {'met' if us <= GATE_US else 'not met'})"
        print(f"{name:<10} {us:8.1f} us{gate if name == 'enactor' else ''}", flush=True)


if __name__ == "__main__":
    main()
