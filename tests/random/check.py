#!/usr/bin/env python3
"""check.py TENSORC DIR - run every DIR/pNNN.tc from gen.py with
`tensorc run --device=cpu` and compare each output with the program's NumPy
float64 reference (pNNN.json).  Prints one line per failure and
'N passed, M failed' last; exit status 1 on any failure.

Error measure: max |got - ref| / max(max |ref|, 1e-3) per output.  Bounds:
1e-5 for f32 programs (the reference rounds each value to f32 as tensorc
does, so only libm and summation-order differences remain), 2e-2 when an
f16/bf16 value is involved (one ulp of bf16 is 8e-3 and a flipped rounding
propagates).
"""
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def r32(a):
    return np.asarray(a, dtype=np.float64).astype(np.float32).astype(np.float64)


def r16(a):
    return np.asarray(a, dtype=np.float64).astype(np.float32).astype(np.float16).astype(np.float64)


def rbf(a):
    # round-to-nearest-even to bf16 through the f32 bit pattern
    f = np.asarray(a, dtype=np.float64).astype(np.float32)
    u = np.ascontiguousarray(f).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32).astype(np.float64).reshape(f.shape)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def silu(x):
    return x * sigmoid(x)


def gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def logsumexp(x, axis, keepdims):
    m = np.max(x, axis=axis, keepdims=True)
    s = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return s if keepdims else np.squeeze(s, axis)


def make_input(rng, shape, scale):
    # random, never zero: magnitudes in [0.05, 2]
    mag = rng.uniform(0.05, 2.0, size=shape)
    sign = np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)
    return (mag * sign * scale).astype(np.float32)


def check_one(tensorc, d, base, idx):
    tc = os.path.join(d, base + ".tc")
    with open(os.path.join(d, base + ".json")) as f:
        desc = json.load(f)
    rng = np.random.default_rng(1000 + idx)
    env = {"np": np, "r32": r32, "r16": r16, "rbf": rbf, "sigmoid": sigmoid,
           "silu": silu, "gelu": gelu, "logsumexp": logsumexp}
    cmd = [tensorc, "run", tc, "--fn", "f", "--device=cpu"]
    for inp in desc["inputs"]:
        a = make_input(rng, tuple(inp["shape"]), inp.get("scale", 1.0))
        p = os.path.join(d, "%s.in.%s.npy" % (base, inp["name"]))
        np.save(p, a)
        env[inp["name"]] = a.astype(np.float64)
        cmd += ["--input", "%s=%s" % (inp["name"], p)]
    for k, v in desc["scalar_defaults"].items():
        env[k] = desc["scalars"].get(k, v)
    for k, v in desc["scalars"].items():
        cmd += ["--input", "%s=%r" % (k, v)]
    outs = {}
    for name in desc["outputs"]:
        outs[name] = os.path.join(d, "%s.out.%s.npy" % (base, name))
        cmd += ["--output", "%s=%s" % (name, outs[name])]
    try:
        pr = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "FAIL %s: tensorc timed out" % tc
    if pr.returncode != 0:
        msg = (pr.stderr or pr.stdout).strip().replace("\n", " | ")[:400]
        return "FAIL %s: tensorc exited %d: %s" % (tc, pr.returncode, msg)
    with np.errstate(all="ignore"):
        for line in desc["ref"]:
            exec(line, env)
    tol = 2e-2 if desc["lowp"] else 1e-5
    for name, var in desc["outputs"].items():
        ref = np.asarray(env[var], dtype=np.float64)
        try:
            got = np.load(outs[name]).astype(np.float64)
        except Exception as e:  # noqa: BLE001 - any unreadable output is a failure
            return "FAIL %s: output %s unreadable: %s" % (tc, name, e)
        if desc["inputs"] and desc["inputs"][0]["name"] == "x" and name == "x":
            ref = ref.reshape(got.shape) if ref.size == got.size else ref
        if got.shape != ref.shape:
            return "FAIL %s: output %s shape %s, expected %s" % (tc, name, got.shape, ref.shape)
        if not np.all(np.isfinite(ref)):
            return "FAIL %s: reference for %s not finite (generator bug)" % (tc, name)
        if ref.size == 0:
            continue
        err = np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-3)
        if not err <= tol:
            i = int(np.argmax(np.abs(got - ref)))
            return "FAIL %s: output %s error %.3g > %g (at flat %d: got %r, want %r)" % (
                tc, name, err, tol, i, got.flat[i], ref.flat[i])
    return None


def main():
    tensorc, d = sys.argv[1], sys.argv[2]
    jobs = int(os.environ.get("TC_RANDOM_JOBS", "2"))
    bases = sorted(f[:-3] for f in os.listdir(d) if f.endswith(".tc"))
    with ThreadPoolExecutor(jobs) as ex:
        res = list(ex.map(lambda b: check_one(tensorc, d, b, int(b[1:])), bases))
    bad = [r for r in res if r]
    for r in bad:
        print(r)
    print("%d passed, %d failed" % (len(res) - len(bad), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
