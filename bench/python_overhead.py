#!/usr/bin/env python3
"""python_overhead.py [--calls N] [--stub] - the Python package's own cost per
call, on the CPU: gelu_chain (examples/gelu_chain.tc) on 4 f32 elements,
with out= given and with the output allocated, for NumPy arrays and for a
DLPack-only producer (an object with just __dlpack__ and
__dlpack_device__, as torch, CuPy and JAX tensors are seen).  --stub
replaces the final C call (tc_run_cpu) with nothing, so the figure is the
package's argument handling alone.  Prints one line per case: the mean of
--calls calls after 200 warm-up calls, in microseconds.  The package is
imported from the environment (install it, or set PYTHONPATH=python and
TENSORC_LIB=build/package/lib/libtensorc.so).  The GPU's figures beside
torch.compile come from tests/gpu/python_torch.py; this one needs no GPU.
"""
import argparse
import os
import time

import numpy as np

import tensorc
import tensorc._core as core

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class DL:
    """A tensor seen only through DLPack (its memory is a NumPy array's)."""

    def __init__(self, a):
        self.a = a
        self.shape = a.shape

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def per_call(fn, calls):
    for _ in range(200):
        fn()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--stub", action="store_true")
    args = ap.parse_args()
    gc = tensorc.compile_file(os.path.join(ROOT, "examples", "gelu_chain.tc")).gelu_chain
    if args.stub:
        core.Program._run = lambda *a, **k: None
        core.Program._run_arr = lambda *a, **k: None  # the call of this version (a prepared array)
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    out = np.empty_like(x)
    rows = [("NumPy, out= given", lambda: gc(x, out=out)),
            ("NumPy, output allocated", lambda: gc(x))]
    if not args.stub:  # a DLPack producer's outputs are allocated in NumPy only on the CPU
        rows.append(("DLPack producer, out= given", lambda: gc(DL(x), out=out)))
    for what, fn in rows:
        print(f"python overhead: gelu_chain on 4 f32, {what}{', C call stubbed' if args.stub else ''}: "
              f"{per_call(fn, args.calls):.2f} us per call (mean of {args.calls})")


if __name__ == "__main__":
    main()
