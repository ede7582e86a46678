"""Whole-array reductions on one GPU: the backend's (one module of two-pass kernels) against
CuPy's own, with CUB and without.

    PYTHONPATH=. python3 -m benchmarks.reductions                  # 2^24 and 2^26 entries
    PYTHONPATH=. python3 -m benchmarks.reductions --log2 20 24 --calls 50

For each reduction that bspgraph's steps make (``Backend.total``, ``count``, ``any``, ``all``,
``largest``, ``smallest``) and each dtype it meets there, three ways, each after its warm-up
(compilations not timed):

- ``cub``: CuPy's own call (``x.sum()``, ``cupy.count_nonzero(m)``, ``m.any()``, ...) with
  CUB in both the routine and the reduction accelerators (CuPy's default: a precompiled
  ``cub::DeviceReduce`` where the call qualifies, a JIT-compiled CUB block reduction else);
- ``plain``: the same call with the reduction accelerators off (what bspgraph's calls get
  inside ``Backend.activate()`` for whatever is not routed through the backend);
- ``ours``: the backend's method.

Columns "us": the mean of ``--calls`` calls queued back to back, one synchronisation at the
end (launch cost hidden behind the kernels when they are longer); "read us": each call
followed by a host read of its value (``.item()``), as most call sites do. TB/s is over the
bytes of the input read once.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bspgraph.backend import get_backend

from .row_reduce import mean_ms


def read_us(cp, fn, calls: int) -> float:
    """Mean microseconds of ``fn().item()`` (a launch, the kernels, a copy to the host)."""
    fn().item()
    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn().item()
    return (time.perf_counter() - start) / calls * 1e6


def cases(cp, backend, size: int, rng):
    """(name, input bytes, CuPy's own call, the backend's call) per reduction and dtype."""
    ints = cp.asarray(rng.integers(0, 1 << 20, size, dtype=np.int32))
    longs = ints.astype(np.int64)
    floats = cp.asarray(rng.random(size))
    singles = floats.astype(np.float32)
    mask = cp.asarray(rng.random(size) < 0.5)
    none = cp.zeros(size, dtype=bool)
    return [
        ("total int32", ints, lambda: ints.sum(), lambda: backend.total(ints)),
        ("total int64", longs, lambda: longs.sum(), lambda: backend.total(longs)),
        ("total float32", singles, lambda: singles.sum(), lambda: backend.total(singles)),
        ("total float64", floats, lambda: floats.sum(), lambda: backend.total(floats)),
        ("count bool", mask, lambda: cp.count_nonzero(mask), lambda: backend.count(mask)),
        ("any bool (none)", none, lambda: none.any(), lambda: backend.any(none)),
        ("all bool", mask, lambda: mask.all(), lambda: backend.all(mask)),
        ("largest int32", ints, lambda: ints.max(), lambda: backend.largest(ints)),
        ("smallest float64", floats, lambda: floats.min(), lambda: backend.smallest(floats)),
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=int, nargs="+", default=[24, 26], help="sizes: 2^k")
    parser.add_argument("--calls", type=int, default=100, help="timed calls a cell")
    args = parser.parse_args(argv)
    backend = get_backend("cupy")
    cp = backend.xp
    accelerator = cp._core._accelerator
    saved = accelerator.get_routine_accelerators(), accelerator.get_reduction_accelerators()
    print(
        f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, CuPy {cp.__version__}, "
        f"accelerators (routine, reduction) {saved}"
    )
    header = (
        f"{'reduction':<17} {'2^k':>3} {'MB':>6} {'cub us':>8} {'plain us':>9} "
        f"{'ours us':>8} {'TB/s':>5} {'cub read us':>11} {'ours read us':>12}"
    )
    print(header, flush=True)
    rows = []
    rng = np.random.default_rng(1)
    for log2 in args.log2:
        for name, values, theirs, ours in cases(cp, backend, 1 << log2, rng):
            assert float(theirs()) == float(ours()) or "float" in name, name  # the same answer
            timed = {}
            for how, reduction in (("cub", ["cub"]), ("plain", [])):
                accelerator.set_routine_accelerators(["cub"])
                accelerator.set_reduction_accelerators(reduction)
                try:
                    timed[how] = mean_ms(cp, theirs, calls=args.calls, warmup=2) * 1e3
                    if how == "cub":
                        timed["cub read"] = read_us(cp, theirs, args.calls)
                finally:
                    accelerator.set_routine_accelerators(saved[0])
                    accelerator.set_reduction_accelerators(saved[1])
            timed["ours"] = mean_ms(cp, ours, calls=args.calls, warmup=2) * 1e3
            timed["ours read"] = read_us(cp, ours, args.calls)
            rate = values.nbytes / timed["ours"] / 1e6
            rows.append(
                f"{name:<17} {log2:3d} {values.nbytes / 1e6:6.1f} {timed['cub']:8.1f} "
                f"{timed['plain']:9.1f} {timed['ours']:8.1f} {rate:5.2f} "
                f"{timed['cub read']:11.1f} {timed['ours read']:12.1f}"
            )
            print(rows[-1], flush=True)
    print("\n" + header)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
