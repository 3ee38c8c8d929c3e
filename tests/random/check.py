#!/usr/bin/env python3
"""check.py - run gen.py's programs through tensorc and compare each with its
NumPy reference; count and classify the failures.

  check.py TENSORC DIR [--cuda] [--nvrtc-every K] [--fake LIB]
      every DIR/pNNN.tc that gen.py wrote
  check.py TENSORC --seed S --count N [--first I] --work DIR [--log FILE] [--cuda] ...
      generate and check N programs one at a time (the at-scale mode): each
      program's files are removed when it passes, kept under DIR/fail/ when
      it fails; FILE gets one JSON line per failure

Every program runs with `tensorc run --device=cpu` (the reference
interpreter) on gen.py's input files, and each output is compared with the
reference.  With --cuda each program is also compiled to CUDA
(`tensorc compile --emit=cuda`, every stage), and one in K (--nvrtc-every,
default 20) through NVRTC (`--emit=cubin`) and run with --device=cuda on the
fake driver LIB (tests/fakegpu: kernels do not run, but every launch's
arguments are checked against the kernel's PTX; default: libtc-fake-cuda.so
beside TENSORC under tests/), with --groups for elementwise programs.

Failure classes:
  internal  "a bug in tensorc" (TC_ERR_INTERNAL) at any stage
  crash     killed by a signal or an exit status tensorc never uses
  timeout   no answer within 120 s
  reject    exit 1 on a valid program (the checker, a constraint, a stage)
  nvrtc     --emit=cubin failed in NVRTC (invalid CUDA)
  fake      the run on the fake driver failed otherwise (arguments, pointers)
  wrong     an output's dtype, shape, NaN/inf positions or values differ
  gen       the reference itself failed (a generator bug)

A program that computes in f16 (an f16 input, output, binding or cast) whose
reference overflows f16's range (an output not finite where no op makes NaN
or inf) is skipped, not failed: products of sums and scans pass 65504 at the
generator's larger shapes (seed 6 #1305: a column sum times a double cumsum;
seed 39 #678: exp of a logcumsumexp), and tensorc's output there is as
undefined as the reference's.  Skips are printed (SKIP) and
counted on a line of their own.

Comparison: integer and bool outputs exactly; float outputs must have NaN
and inf at the same positions (inf with the same sign), then
max |got - ref| / max(max |ref|, F) over the finite elements must be at
most 1e-5 (f32, f64: the reference rounds each value to its dtype as tensorc
does, so only libm and summation-order differences remain) or 2e-2 when an
f16/bf16 value is involved (one ulp of bf16 is 8e-3).  F is 1e-3, or the
program's desc["floor"] where its result is a difference of larger values
(cross_entropy: logsumexp minus the target's logit, each of order 1 to 10,
so a loss of 0.002 carries their f32 rounding: seed 31 #677 measured 1.3e-5
of it against a floor of 1e-3).

Prints one line per failure, a table of failures by class and stage, and
'N passed, M failed' last (skipped programs in neither); exit status 1 on
any failure.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

_erf = np.vectorize(math.erf, otypes=[np.float64])
TIMEOUT = 120


def r32(a):
    return np.asarray(a, dtype=np.float64).astype(np.float32).astype(np.float64)


def r16(a):
    return np.asarray(a, dtype=np.float64).astype(np.float32).astype(np.float16).astype(np.float64)


def rbf(a):
    # round-to-nearest-even to bf16 through the f32 bit pattern (NaN stays NaN)
    f = np.asarray(a, dtype=np.float64).astype(np.float32)
    u = np.ascontiguousarray(f).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    out = u.astype(np.uint32).view(np.float32).astype(np.float64).reshape(f.shape)
    return np.where(np.isnan(f), np.nan, out)


def r64(a):
    return np.asarray(a, dtype=np.float64)


def ri32(a):
    a = np.asarray(a).astype(np.int64)
    return ((a + 2 ** 31) % 2 ** 32) - 2 ** 31


def ri64(a):
    return np.asarray(a).astype(np.int64)


def rb(a):
    return np.asarray(a).astype(bool)


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


# scans: f64 along the axis (NumPy's accumulate: NaN propagates through
# maximum/minimum, logaddexp keeps -inf and +inf), rounded once per element
def scan(kind, x, axis, reverse):
    x = np.asarray(x, dtype=np.float64)
    if reverse:
        x = np.flip(x, axis)
    y = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum,
         "cummin": np.minimum, "logcumsumexp": np.logaddexp}[kind].accumulate(x, axis=axis)
    return np.flip(y, axis) if reverse else y


# the prelude's softmax and log_softmax: f32 math, each node rounded
def softmax(x, axis, R):
    xf = r32(x)
    e = r32(np.exp(r32(xf - np.max(xf, axis=axis, keepdims=True))))
    return R(r32(e / r32(np.sum(e, axis=axis, keepdims=True))))


def log_softmax(x, axis, R):
    xf = r32(x)
    s = r32(xf - np.max(xf, axis=axis, keepdims=True))
    return R(r32(s - r32(np.log(r32(np.sum(r32(np.exp(s)), axis=axis, keepdims=True))))))


# the prelude's cross_entropy (class indices, mean over the rows not
# ignored; NaN when all are) in float64
def cross_entropy(x, t, ignore):
    keep = t != ignore
    if not keep.any():
        return np.array(np.nan)
    rows = np.nonzero(keep)[0]
    lse = logsumexp(x, -1, False)
    return np.array(np.mean(lse[rows] - x[rows, t[rows].astype(np.int64)]))


ENV = {"np": np, "cross_entropy": cross_entropy, "r32": r32, "r16": r16, "rbf": rbf, "r64": r64, "ri32": ri32, "ri64": ri64,
       "rb": rb, "sigmoid": sigmoid, "silu": silu, "gelu": gelu, "logsumexp": logsumexp,
       "scan": scan,
       "softmax": softmax, "log_softmax": log_softmax}

NP_DTYPE = {"f32": np.float32, "bf16": np.float32, "f16": np.float16, "f64": np.float64,
            "i32": np.int32, "i64": np.int64, "bool": np.bool_}


# the prefixes of tensorc's TC_ERR_INTERNAL messages (the CLI prints the
# message, not the code): a verifier or a pass found its own input malformed
INTERNAL = ("reference interpreter:", "fusion:", "graph verifier:", "codegen:", "lowering:",
            "lowered IR:", "scheduling:", "plan ")


class Fail(Exception):
    def __init__(self, cls, stage, msg):
        super().__init__(msg)
        self.cls, self.stage, self.msg = cls, stage, msg


def classify(stage, pr):
    """None when the tensorc command pr succeeded, else a Fail."""
    if pr is None:
        return Fail("timeout", stage, "no answer in %d s" % TIMEOUT)
    if pr.returncode == 0:
        return None
    msg = (pr.stderr or pr.stdout).strip().replace("\n", " | ")[:600]
    if "a bug in tensorc" in msg or "internal" in msg.lower() or any(
            "error: " + k in msg for k in INTERNAL):
        return Fail("internal", stage, msg)
    if pr.returncode < 0 or pr.returncode > 3:
        return Fail("crash", stage, "exit %d: %s" % (pr.returncode, msg))
    if stage == "cubin" and "nvrtc" in msg.lower():
        return Fail("nvrtc", stage, msg)
    if stage == "fake":
        return Fail("fake", stage, msg)
    return Fail("reject", stage, "exit %d: %s" % (pr.returncode, msg))


def run(cmd, env=None):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                              timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return None


def compare(name, got, ref, dtype, tol, floor):
    if dtype in ("i32", "i64", "bool"):
        if got.dtype != NP_DTYPE[dtype]:
            raise Fail("wrong", "cpu", "output %s has dtype %s, expected %s" % (name, got.dtype, dtype))
        if not np.array_equal(got.astype(np.int64), ref.astype(np.int64)):
            bad = np.argwhere(got.astype(np.int64) != ref.astype(np.int64))[0]
            raise Fail("wrong", "cpu", "output %s differs at %s: got %r, want %r" % (
                name, list(map(int, bad)), got[tuple(bad)], ref[tuple(bad)]))
        return
    want = NP_DTYPE[dtype]
    if got.dtype != want:
        raise Fail("wrong", "cpu", "output %s has dtype %s, expected %s" % (name, got.dtype, dtype))
    got = got.astype(np.float64)
    if ref.size == 0:
        return
    gn, rn = np.isnan(got), np.isnan(ref)
    if not np.array_equal(gn, rn):
        i = int(np.argmax(gn != rn))
        raise Fail("wrong", "cpu", "output %s: NaN positions differ (at flat %d: got %r, want %r)"
                   % (name, i, got.flat[i], ref.flat[i]))
    gi, ri = np.isinf(got), np.isinf(ref)
    if not np.array_equal(gi, ri) or not np.array_equal(got[ri], ref[ri]):
        i = int(np.argmax((gi != ri) | (ri & (got != ref))))
        raise Fail("wrong", "cpu", "output %s: inf positions differ (at flat %d: got %r, want %r)"
                   % (name, i, got.flat[i], ref.flat[i]))
    fin = ~(rn | ri)
    if not fin.any():
        return
    with np.errstate(invalid="ignore"):
        d = np.where(fin, np.abs(got - ref), 0.0)
    err = np.max(d) / max(np.max(np.abs(ref[fin])), floor)
    if not err <= tol:
        i = int(np.argmax(d))
        raise Fail("wrong", "cpu", "output %s error %.3g > %g (at flat %d: got %r, want %r)" % (
            name, err, tol, i, got.flat[i], ref.flat[i]))


def is_f16(desc, src):
    """Whether desc's program computes in f16: an input, output or binding,
    or a value cast to it in its source src (seed 39 #678: exp of a
    logcumsumexp in f16 past 65504)."""
    return "f16" in list(desc.get("dtype_bind", {}).values()) + [i["dtype"] for i in desc["inputs"]] + \
        list(desc["out_dtypes"].values()) or re.search(r"\bf16\(", src) is not None


def check_one(tensorc, d, base, cuda=False, nvrtc=False, fake=None, cache=None):
    """None when program d/base passes, else a Fail."""
    try:
        _check(tensorc, d, base, cuda, nvrtc, fake, cache)
    except Fail as f:
        return f
    return None


def _check(tensorc, d, base, cuda, nvrtc, fake, cache):
    tc = os.path.join(d, base + ".tc")
    with open(os.path.join(d, base + ".json")) as f:
        desc = json.load(f)
    fn = desc.get("fn", "f")
    groups = desc.get("groups")
    common = ["--fn", fn]
    for k, v in desc.get("dtype_bind", {}).items():
        common += ["--dtype", "%s=%s" % (k, v)]
    args = []
    for inp in desc["inputs"]:
        if groups:
            args += ["--input", "%s=%s" % (inp["name"], ",".join(os.path.join(d, f) for f in inp["files"]))]
        else:
            args += ["--input", "%s=%s" % (inp["name"], os.path.join(d, inp["file"]))]
    if groups:
        args += ["--groups", ",".join(map(str, groups))]
    for k, v in desc["scalars"].items():
        args += ["--input", "%s=%r" % (k, v)]
    outs = {}
    oargs = []
    for name in desc["outputs"]:
        if groups:
            outs[name] = [os.path.join(d, "%s.out.%s.g%d.npy" % (base, name, g)) for g in range(len(groups))]
            oargs += ["--output", "%s=%s" % (name, ",".join(outs[name]))]
        else:
            outs[name] = [os.path.join(d, "%s.out.%s.npy" % (base, name))]
            oargs += ["--output", "%s=%s" % (name, outs[name][0])]

    # the interpreter
    f = classify("cpu", run([tensorc, "run", tc, "--device=cpu"] + common + args + oargs))
    if f:
        raise f
    tol = 2e-2 if desc["lowp"] else 1e-5
    for g in range(len(groups) if groups else 1):
        env = dict(ENV)
        for inp in desc["inputs"]:
            a = np.load(os.path.join(d, inp["files"][g] if groups else inp["file"]))
            env[inp["name"]] = a if inp["dtype"] in ("i32", "i64", "bool") else a.astype(np.float64)
            if inp["dtype"] in ("i32", "i64"):
                env[inp["name"]] = a.astype(np.int64)
        for k, v in desc["scalar_defaults"].items():
            env[k] = desc["scalars"].get(k, v)
        try:
            with np.errstate(all="ignore"):
                for line in desc["ref"]:
                    exec(line, env)
        except Exception as e:  # noqa: BLE001 - the generator wrote a bad reference
            raise Fail("gen", "ref", "reference failed: %s: %s" % (type(e).__name__, e))
        for name, var in desc["outputs"].items():
            ref = np.asarray(env[var])
            try:
                got = np.load(outs[name][g])
            except Exception as e:  # noqa: BLE001 - any unreadable output is a failure
                raise Fail("wrong", "cpu", "output %s unreadable: %s" % (name, e))
            if groups:
                ref = np.broadcast_to(ref, got.shape) if ref.size == 1 else ref
            if got.shape != ref.shape:
                raise Fail("wrong", "cpu", "output %s shape %s, expected %s" % (name, got.shape, ref.shape))
            if not desc.get("nonfinite") and desc["out_dtypes"][name] not in ("i32", "i64", "bool") \
                    and not np.all(np.isfinite(ref)):
                with open(tc) as fh:
                    f16 = is_f16(desc, fh.read())
                if f16:
                    raise Fail("skip", "ref", "reference for %s overflowed f16" % name)
                raise Fail("gen", "ref", "reference for %s not finite (generator bug)" % name)
            compare(name, got, ref, desc["out_dtypes"][name], tol, desc.get("floor", 1e-3))
    if cuda:
        f = classify("cuda", run([tensorc, "compile", tc, "--emit=cuda", "-o",
                                  os.path.join(d, base + ".cu")] + common))
        if f:
            raise f
    if not nvrtc:
        return
    env = dict(os.environ, TENSORC_LIBCUDA=fake, TENSORC_CUBLAS=fake, TENSORC_CACHE_DIR=cache)
    f = classify("cubin", run([tensorc, "compile", tc, "--emit=cubin", "-o",
                                     os.path.join(d, base + ".cubin")] + common, env))
    if f:
        raise f
    fargs = []
    for name in desc["outputs"]:
        if groups:
            fargs += ["--output", "%s=%s" % (name, ",".join(p + ".fake.npy" for p in outs[name]))]
        else:
            fargs += ["--output", "%s=%s" % (name, outs[name][0] + ".fake.npy")]
    f = classify("fake", run([tensorc, "run", tc, "--device=cuda"] + common + args + fargs, env))
    if f:
        raise f


def default_fake(tensorc):
    p = os.path.join(os.path.dirname(os.path.abspath(tensorc)), "tests", "libtc-fake-cuda.so")
    return p if os.path.exists(p) else None


def report(fails, n, t0, skips=()):
    by = {}
    for f in fails:
        by.setdefault((f.cls, f.stage), 0)
        by[(f.cls, f.stage)] += 1
    if by:
        print("failures by class and stage:")
        for (c, s), k in sorted(by.items()):
            print("  %-9s %-6s %d" % (c, s, k))
    print("%d programs in %.0f s" % (n, time.time() - t0))
    if skips:
        print("%d skipped (their f16 reference overflowed)" % len(skips))
    print("%d passed, %d failed" % (n - len(fails) - len(skips), len(fails)))


def main():
    argv = sys.argv[1:]
    opts = {}
    pos = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--cuda":
            opts["cuda"] = True
        elif a in ("--nvrtc-every", "--fake", "--seed", "--count", "--first", "--work", "--log", "--jobs"):
            opts[a[2:]] = argv[i + 1]
            i += 1
        else:
            pos.append(a)
        i += 1
    tensorc = pos[0]
    cuda = opts.get("cuda", False)
    every = int(opts.get("nvrtc-every", "20"))
    fake = opts.get("fake") or default_fake(tensorc)
    if cuda and not fake:
        print("check.py: --cuda needs the fake driver (--fake LIB)", file=sys.stderr)
        return 2
    jobs = int(opts.get("jobs", os.environ.get("TC_RANDOM_JOBS", "2")))
    t0 = time.time()
    if "seed" not in opts:
        d = pos[1]
        cache = os.path.join(d, "cache")
        bases = sorted(f[:-3] for f in os.listdir(d) if f.endswith(".tc"))

        def one(b):
            k = int(b[1:])
            return check_one(tensorc, d, b, cuda, cuda and k % every == 0, fake, cache)
        with ThreadPoolExecutor(jobs) as ex:
            res = list(ex.map(one, bases))
        fails, skips = [], []
        for b, f in zip(bases, res):
            if f and f.cls == "skip":
                skips.append(f)
                print("SKIP %s: %s" % (os.path.join(d, b + ".tc"), f.msg))
            elif f:
                f.prog = os.path.join(d, b + ".tc")
                fails.append(f)
                print("FAIL %s [%s %s]: %s" % (f.prog, f.cls, f.stage, f.msg))
        report(fails, len(bases), t0, skips)
        return 1 if fails else 0
    # at scale: one program at a time, generated, checked, removed unless it failed
    seed, count, first = int(opts["seed"]), int(opts["count"]), int(opts.get("first", "0"))
    work = opts["work"]
    tmp = os.path.join(work, "tmp")
    faild = os.path.join(work, "fail")
    cache = os.path.join(work, "cache")
    os.makedirs(tmp, exist_ok=True)
    os.makedirs(faild, exist_ok=True)
    log = open(opts.get("log", os.path.join(work, "fails.jsonl")), "a")
    fails, skips = [], []
    fams = {}
    for i in range(first, first + count):
        base = "s%d_%06d" % (seed, i)
        gen.write_program(tmp, seed, i, base)
        with open(os.path.join(tmp, base + ".json")) as f:
            fam = json.load(f)["family"]
        fams[fam] = fams.get(fam, 0) + 1
        f = check_one(tensorc, tmp, base, cuda, cuda and i % every == 0, fake, cache)
        if f and f.cls == "skip":
            skips.append(f)
            print("SKIP %s %d #%d: %s" % (fam, seed, i, f.msg), flush=True)
            f = None
        if f:
            fails.append(f)
            f.prog = os.path.join(faild, base + ".tc")
            print("FAIL %s [%s %s]: %s" % (f.prog, f.cls, f.stage, f.msg), flush=True)
            log.write(json.dumps({"prog": f.prog, "seed": seed, "i": i, "family": fam, "class": f.cls,
                                  "stage": f.stage, "msg": f.msg}) + "\n")
            log.flush()
        for name in os.listdir(tmp):
            if name.startswith(base + "."):
                if f:
                    shutil.move(os.path.join(tmp, name), os.path.join(faild, name))
                else:
                    os.remove(os.path.join(tmp, name))
        if (i - first + 1) % 500 == 0:
            print("... %d programs, %d failed, %.0f s" % (i - first + 1, len(fails), time.time() - t0),
                  flush=True)
    print("families: %s" % ", ".join("%s %d" % kv for kv in sorted(fams.items())))
    report(fails, count, t0, skips)
    shutil.rmtree(cache, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
