#!/usr/bin/env python3
"""fastmath.py TENSORC WORKDIR [STRIDE] - helpers.cuh's f32 math on a GPU.

The functions TENSORC_FAST_MATH puts on the MUFU (log, log1p, sigmoid,
softplus, silu; logaddexp as logcumsumexp's step) run by `tensorc run
--device=cuda` over every STRIDE-th float (default 4099) of [-100, 100] and
of all positive floats, and the special values, with the knob unset (the
default, fast) and 0 (libm's); each result is compared with Python's double
math in ulps of the f32 result (results of at least 2^-126; logaddexp's in
ulps of its larger term), as tests/emu/fastmath.cpp does on the host, with
the same bounds: a fast function past its bound, or a special value (NaN,
infinities) different from the reference, fails.  The accurate functions'
figures are printed for comparison.  Standard library only;
TC_FASTMATH_DEVICE=cpu runs the interpreter instead (a dry run of the
harness).  Prints each function's largest error, "N passed, M failed" last;
exit 1 on failure."""
import math
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "random"))
import gen  # noqa: E402  (write_npy)

PROG = os.path.join(HERE, "fastmath.tc")
DEVICE = "--device=" + os.environ.get("TC_FASTMATH_DEVICE", "cuda")
# tests/emu/fastmath.cpp's bounds (ulps of the result), for the fast functions
BOUND = {"log": 5, "log1p": 5, "sigmoid": 8, "softplus": 8, "silu": 8, "logaddexp": 8}


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits & 0xffffffff))[0]


def key(v):  # floats in order as integers
    b = struct.unpack("<i", struct.pack("<f", v))[0]
    return -(b & 0x7fffffff) if b < 0 else b


def val(k):
    return f32((-k) | 0x80000000) if k < 0 else f32(k)


def sweep(lo, hi, stride):
    return [val(k) for k in range(key(lo), key(hi) + 1, stride)] + [hi]


SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.17549435e-38, -1.17549435e-38, 1e-45,
            1e-40, -1e-40, 3.40282347e38, -3.40282347e38, 1.0, -1.0, 0.5, 2.0, -0.5, 20.0,
            20.000002, 19.999998, -20.0, 88.72, -87.33, -103.9, -200.0, 200.0, 1e30, -1e30,
            0.99999994, 1.0000001, -0.99999994, -1.0000001]


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    hl = struct.unpack("<H", data[8:10])[0]
    body = data[10 + hl:]
    return list(struct.unpack("<%df" % (len(body) // 4), body))


def ulp_of(r):
    m, e = math.frexp(abs(r))
    return math.ldexp(1.0, max(e - 24, -149))


def sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def ref_log(x):
    return math.nan if x != x or x < 0 else -math.inf if x == 0 else math.log(x)


def ref_log1p(x):
    return math.nan if x != x or x < -1 else -math.inf if x == -1 else math.log1p(x)


def ref_softplus(x):
    if x != x:
        return x
    return x if x > 20 else math.log1p(math.exp(x))


def ref_silu(x):
    return x if x != x else x * sigmoid(x) if not math.isinf(x) else (x if x > 0 else -0.0)


def ref_lae(a, b):
    if a != a or b != b:
        return math.nan
    m, lo = max(a, b), min(a, b)
    if math.isinf(m):
        return m
    return m + math.log1p(math.exp(lo - m))


class Stat:
    def __init__(self, name):
        self.name, self.ulp, self.at, self.bad = name, 0.0, None, []

    def add(self, x, got, want, scale=0.0):
        if want != want or math.isinf(want) or got != got or math.isinf(got):
            ok = (got != got) if want != want else (got == want if math.isinf(want) else False)
            if not ok and not (math.isinf(got) and abs(want) > 3.4028234663852886e38):
                self.bad.append((x, got, want))
            return
        size = max(abs(want), scale)
        if size < 2.0 ** -126:
            return
        u = abs(got - want) / ulp_of(size)
        if u > self.ulp:
            self.ulp, self.at = u, x


def run(tc, work, fn, inp, outs, env):
    cmd = [tc, "run", PROG, "--fn", fn, DEVICE, "--input", "x=" + inp]
    for o in outs:
        cmd += ["--output", "%s=%s/%s.npy" % (o, work, o)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    return [read_npy("%s/%s.npy" % (work, o)) for o in outs]


def main():
    tc, work = sys.argv[1], sys.argv[2]
    stride = int(sys.argv[3]) if len(sys.argv) > 3 else 4099
    os.makedirs(work, exist_ok=True)
    xs = sweep(-100.0, 100.0, stride) + sweep(1e-45, 3.40282347e38, stride) + SPECIALS
    xs = [struct.unpack("<f", struct.pack("<f", x))[0] for x in xs]  # as f32
    inp = os.path.join(work, "x.npy")
    gen.write_npy(inp, (len(xs),), "f32", xs)
    pairs = []
    for a in (0.0, 1.0, -3.5, 47.25, -80.0, 1e4):
        for d in sweep(-100.0, 100.0, stride * 4):
            pairs += [a, struct.unpack("<f", struct.pack("<f", a + d))[0]]
    sp = [0.0, 1.0, math.inf, -math.inf, math.nan, -1e30, 1e30]
    pairs += [v for a in sp for b in sp for v in (a, b)]
    inp2 = os.path.join(work, "pairs.npy")
    gen.write_npy(inp2, (len(pairs) // 2, 2), "f32", pairs)
    passed = failed = 0
    for knob in ("", "0"):
        env = dict(os.environ)
        env.pop("TENSORC_FAST_MATH", None)
        if knob:
            env["TENSORC_FAST_MATH"] = knob
        lg, l1p, sg, spl, si = run(tc, work, "unary", inp, ["lg", "l1p", "sg", "sp", "si"], env)
        (lae,) = run(tc, work, "lae", inp2, ["out"], env)
        st = {n: Stat(n) for n in BOUND}
        for i, x in enumerate(xs):
            st["log"].add(x, lg[i], ref_log(x))
            st["log1p"].add(x, l1p[i], ref_log1p(x))
            st["sigmoid"].add(x, sg[i], sigmoid(x) if x == x else x)
            st["softplus"].add(x, spl[i], ref_softplus(x))
            if not x < -87.0:  # x times a subnormal sigmoid: libm's loses its digits too
                st["silu"].add(x, si[i], ref_silu(x))
        for i in range(len(pairs) // 2):
            a, b = pairs[2 * i], pairs[2 * i + 1]
            want = ref_lae(a, b)
            m = max(a, b)
            scale = max(abs(m), want - m) if want == want and not math.isinf(want) else 0.0
            st["logaddexp"].add((a, b), lae[2 * i + 1], want, scale)
        what = "accurate (TENSORC_FAST_MATH=0)" if knob else "fast (default)"
        print("%s, %d values:" % (what, len(xs)))
        for n, s in st.items():
            print("  %-10s max %.2f ulp (x = %r)" % (n, s.ulp, s.at))
            for x, got, want in s.bad[:5]:
                print("FAIL %s %s(%r) = %r, want %r" % (what, n, x, got, want))
            over = not knob and s.ulp > BOUND[n]
            if over:
                print("FAIL %s %s: %.2f ulp, bound %d" % (what, n, s.ulp, BOUND[n]))
            if s.bad or over:
                failed += 1
            else:
                passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
