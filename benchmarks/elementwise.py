"""CuPy's element-wise kernels against the backend's grid-stride passes, on one GPU.

    PYTHONPATH=. python3 -m benchmarks.elementwise

CuPy launches a thread per element (128 a block); ``Backend.full``, ``greater`` and
``nonzero`` loop over the array from a grid of at most STREAM_BLOCKS blocks. Each row is the
mean of 200 calls after 20, on 2^24 entries (an rmat24 state array), with the bytes it moves.
"""

from __future__ import annotations

import numpy as np

from bspgraph.backend import get_backend, ops

from .row_reduce import mean_ms

SIZE = 1 << 24


def main() -> None:
    backend = get_backend("cupy")
    cp = backend.xp
    depth = cp.full(SIZE, 7, dtype=cp.int32)
    mask = cp.asarray(np.random.default_rng(1).random(SIZE) < 0.05)
    count = int(mask.sum())
    rows = [
        ("full int32", 4 * SIZE, lambda: cp.full(SIZE, 7, cp.int32),
         lambda: backend.full(SIZE, 7, np.int32)),
        ("depth > 3", 5 * SIZE, lambda: depth > 3, lambda: ops.greater(backend, depth, 3)),
        ("nonzero (5% set)", SIZE + 4 * count, lambda: cp.flatnonzero(mask),
         lambda: backend.nonzero(mask, np.int32, count)),
    ]  # fmt: skip
    print(f"{'operation':<18} {'MB':>6} {'cupy us':>8} {'TB/s':>5} {'backend us':>10} {'TB/s':>5}")
    for name, moved, plain, ours in rows:
        a, b = (mean_ms(cp, fn, calls=200, warmup=20) * 1e3 for fn in (plain, ours))
        print(
            f"{name:<18} {moved / 1e6:6.1f} {a:8.1f} {moved / a / 1e6:5.2f} {b:10.1f} "
            f"{moved / b / 1e6:5.2f}"
        )


if __name__ == "__main__":
    main()
