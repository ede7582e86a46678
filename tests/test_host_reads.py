"""The superstep's host reads, counted as a GPU would make them (``bg.testing.host_reads``).

On a GPU each read waits for the device's queue. The enactor reads every part's counts of a
phase together (one copy a GPU), so that the reads around the step do not grow with the parts:
the outputs' sizes (they size the messages), what a large output keeps at home (the Slab
choice), the owners' shares of the Updates (the split), and the next frontiers' sizes with the
returned vertices' out-edges. PageRank's own convergence test reads its L1 change on each
part.
"""

import numpy as np
import pytest

import bspgraph as bg
from benchmarks.host_reads import runs
from bspgraph.primitives.bfs import BFS
from bspgraph.testing import host_reads

AROUND = 4  # reads around the step a superstep, whatever the parts (the target design: 1)


@pytest.fixture(scope="module")
def rmat():
    graph = bg.generators.rmat(11, 16, seed=1, weights=True, backend="numpy")
    return graph, int(np.argmax(np.diff(graph.forward.offsets)))


@pytest.mark.parametrize("name", ["bfs push", "bfs auto", "sssp", "cc", "pagerank"])
@pytest.mark.parametrize("parts", [2, 3, 5])
def test_reads_around_the_step_do_not_grow_with_the_parts(rmat, name, parts):
    graph, _ = rmat
    primitive, params = runs(graph)[name]
    reads = host_reads(primitive, graph, devices=parts, **params)
    own = parts if name == "pagerank" else 0  # its convergence test, on each part
    assert len(reads.superstep) >= 2
    assert max(reads.superstep) <= AROUND + own, reads
    assert sum(reads.pickled) == 0
    expected, _ = bg.enact(runs(graph)[name][0], graph, backend="numpy", **params)
    for output, values in expected.items():
        if values is not None:
            np.testing.assert_allclose(reads.result[output], values, rtol=1e-9)


def test_a_read_the_step_does_not_make_is_counted(rmat):
    """The count can fail: a convergence test that reads a depth on every part adds a read a
    part and superstep."""
    graph, source = rmat

    class Reading(BFS):
        def converged(self, graph, frontier, state, iteration):
            int(state.depth[0])  # a host read on a GPU
            return super().converged(graph, frontier, state, iteration)

    plain = host_reads(BFS(direction="push"), graph, devices=3, source=source)
    reading = host_reads(Reading(direction="push"), graph, devices=3, source=source)
    assert [r - p for r, p in zip(reading.superstep, plain.superstep)] == [3] * len(plain.superstep)
