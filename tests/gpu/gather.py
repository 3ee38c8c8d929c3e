#!/usr/bin/env python3
"""gather.py TENSORC WORKDIR - gather, iota and the class-index losses on a GPU.

Standard library only (the GPU machine may have no NumPy).  Every job is a
`tensorc run ... --device=cuda`; most with --check (the reference
interpreter on the same inputs), at the row lengths issue 14 names:

  losses    tests/gpu/gather.tc's ce, ce_ig (ignore_index 0, i32 targets)
            and nll at V = 1, 3, 8, 4097, 4104, 65537, 65544, 128256 (and
            N = 1, 5, 64; 8, 4104, 65544 and 128256 are whole vectors,
            kept in registers, 65544 and 128256 across a cluster), f32, f16
            and bf16 (--dtype T=...), targets at 0 and V-1 among random
            ones, ignored rows (-100), one not ignored but out of range
            (V: the loss is NaN on both sides), and every row ignored (NaN)
  gather    take (last axis), take_rows (first axis, of a computed value),
            take_int at C = 1, 3, 4097, 65537 with in-range indices
  range     an index out of range (C and -1): on the GPU the element is
            NaN (floats) or 0 (i32) and the others are right; with --check
            the interpreter's located error; under compute-sanitizer
            memcheck no invalid read
  repeat    the bf16 loss at 64 x 65537 three times: identical bits
  random    tests/random/gen.py's gather family (every seed-5 program of
            it among the first $TC_GATHER_RANDOM=1500; TC_GATHER_FAMILIES
            =gather,arg for more) with --check
  rows      lang_reductions.tc's argmax/argmin rows at D = 1, 3, 4097, 65537

TC_GATHER_GROUPS=ce,nll,... keeps the jobs of those groups (the first word
of each label).  Prints one line per failure, "N passed, M failed" last; exit 1 on failure.
"""
import concurrent.futures
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "random"))
import gen  # noqa: E402  (write_npy, round_bf16)

PROG = os.path.join(HERE, "gather.tc")
DEVICE = "--device=" + os.environ.get("TC_GATHER_DEVICE", "cuda")  # cpu: a dry run of the harness
DRY = DEVICE == "--device=cpu"


def run(cmd, timeout=600):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return -1, "", "timed out"


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    hl = struct.unpack("<H", data[8:10])[0]
    head = data[10:10 + hl].decode()
    descr = head.split("'descr': '")[1].split("'")[0]
    fmt = {"<f4": "f", "<f2": "e", "<f8": "d", "<i4": "i", "<i8": "q"}[descr]
    body = data[10 + hl:]
    return list(struct.unpack("<%d%s" % (len(body) // struct.calcsize(fmt), fmt), body))


class Jobs:
    def __init__(self, tc, work):
        self.tc, self.work, self.n = tc, work, 0
        self.jobs = []  # (label, cmd, judge(rc, out, err) -> None or why)

    def npy(self, shape, dtype, vals):
        self.n += 1
        path = os.path.join(self.work, "in%d.npy" % self.n)
        gen.write_npy(path, shape, dtype, vals)
        return path

    def cmd(self, fn, inputs, dtype=None, check=True, extra=()):
        c = [self.tc, "run", PROG, "--fn", fn, DEVICE]
        if dtype:
            c += ["--dtype", "T=%s" % dtype]
        for k, v in inputs.items():
            c += ["--input", "%s=%s" % (k, v)]
        return c + (["--check"] if check and not DRY else []) + list(extra)

    def add(self, label, cmd, judge=None):
        self.jobs.append((label, cmd, judge or checked))


def checked(rc, out, err):
    if rc == 0 and ("check: OK" in out or DRY):
        return None
    return "exit %d: %s" % (rc, (" | ".join(err.strip().splitlines()[-4:]) or out[-300:])[:800])


def logits(rng, n, v, dt):
    vals = [rng.gauss(0, 3) for _ in range(n * v)]
    return [gen.round_bf16(x) for x in vals] if dt == "bf16" else vals


def losses(j, rng):
    for dt in ("f32", "f16", "bf16"):
        for v in (1, 3, 8, 4097, 4104, 65537, 65544, 128256):
            for n in (1, 5, 64):
                if n * v > 2_000_000:
                    continue
                x = j.npy([n, v], dt, logits(rng, n, v, dt))
                t = [rng.randrange(v) for _ in range(n)]
                t[0] = 0
                if n > 1:
                    t[-1] = v - 1
                if n > 2:
                    t[1] = -100
                ti = j.npy([n], "i64", t)
                j.add("ce %s %dx%d" % (dt, n, v), j.cmd("ce", {"x": x, "t": ti}, dt))
                j.add("nll %s %dx%d" % (dt, n, v), j.cmd("nll", {"x": x, "t": ti}, dt))
                t32 = j.npy([n], "i32", [min(max(k, 0), v - 1) for k in t])
                j.add("ce_ig %s %dx%d" % (dt, n, v), j.cmd("ce_ig", {"x": x, "t": t32}, dt))
        x = j.npy([3, 5], dt, logits(rng, 3, 5, dt))
        j.add("ce %s all ignored" % dt, j.cmd("ce", {"x": x, "t": j.npy([3], "i64", [-100] * 3)}, dt))
        # a target not ignored but out of range: NaN on both sides
        j.add("ce %s target 5 of 5" % dt, j.cmd("ce", {"x": x, "t": j.npy([3], "i64", [0, 5, 4])}, dt))


def gathers(j, rng):
    for c in (1, 3, 4097, 65537):
        for n, k in ((1, 1), (5, 3), (7, 33)):
            if n * c > 2_000_000:
                continue
            for dt in ("f32", "bf16", "f16"):
                x = j.npy([n, c], dt, logits(rng, n, c, dt))
                i = j.npy([n, k], "i64", [rng.randrange(c) for _ in range(n * k)])
                j.add("take %s %dx%d k%d" % (dt, n, c, k), j.cmd("take", {"x": x, "i": i}, dt))
                r = j.npy([k, c], "i64", [rng.randrange(n) for _ in range(k * c)])
                j.add("take_rows %s %dx%d k%d" % (dt, n, c, k), j.cmd("take_rows", {"x": x, "i": r}, dt))
            xi = j.npy([n, c], "i32", [rng.randrange(-1000, 1000) for _ in range(n * c)])
            ii = j.npy([n, k], "i32", [rng.randrange(c) for _ in range(n * k)])
            j.add("take_int %dx%d k%d" % (n, c, k), j.cmd("take_int", {"x": xi, "i": ii}))


def out_of_range(j):
    n, c, k = 3, 5, 4
    xs = [float(10 * r + q) for r in range(n) for q in range(c)]
    idx = [0, c, 2, -1, 4, 4, 1, 0, c + 7, -5, 3, 2]
    want_f = [xs[r * c + idx[r * k + q]] if 0 <= idx[r * k + q] < c else None
              for r in range(n) for q in range(k)]
    x = j.npy([n, c], "f32", xs)
    xi = j.npy([n, c], "i32", [int(v) for v in xs])
    i64 = j.npy([n, k], "i64", idx)
    i32 = j.npy([n, k], "i32", idx)
    for fn, xin, iin, integer in (("take", x, i64, False), ("take_int", xi, i32, True)):
        out = os.path.join(j.work, "oor_%s.npy" % fn)

        def judge(rc, so, se, out=out, integer=integer):
            if rc != 0:
                return "exit %d: %s" % (rc, se.strip()[-400:])
            got = read_npy(out)
            for e, (g, w) in enumerate(zip(got, want_f)):
                if w is None and not (g == 0 if integer else math.isnan(g)):
                    return "element %d: %r, expected %s" % (e, g, "0" if integer else "NaN")
                if w is not None and g != w:
                    return "element %d: %r, expected %r" % (e, g, w)
            return None
        j.add("range %s on the GPU" % fn,
              j.cmd(fn, {"x": xin, "i": iin}, None, check=False, extra=["--output", "out=" + out]), judge)

        def jcheck(rc, so, se):
            ok = rc != 0 and "gather: index 5 is out of range for axis 1 of size 5" in se
            return None if ok else "expected the interpreter's located error: exit %d: %s" % (rc, se[-300:])
        j.add("range %s --check" % fn, j.cmd(fn, {"x": xin, "i": iin}), jcheck)
        san = shutil.which("compute-sanitizer") or (
            "/usr/local/cuda/bin/compute-sanitizer" if os.access("/usr/local/cuda/bin/compute-sanitizer", os.X_OK) else None)
        if san:
            def jmem(rc, so, se):
                return None if rc == 0 else "memcheck exit %d: %s" % (rc, (so + se)[-600:])
            j.add("range %s memcheck" % fn, [san, "--tool", "memcheck", "--error-exitcode", "99"] +
                  j.cmd(fn, {"x": xin, "i": iin}, None, check=False), jmem)


def repeat(j, rng):
    n, v = 64, 65537
    x = j.npy([n, v], "bf16", logits(rng, n, v, "bf16"))
    t = j.npy([n], "i64", [rng.randrange(v) for _ in range(n)])
    outs = [os.path.join(j.work, "rep%d.npy" % r) for r in range(3)]
    cmd = [j.tc, "run", PROG, "--fn", "ce", DEVICE, "--dtype", "T=bf16", "--input", "x=" + x,
           "--input", "t=" + t]
    script = " && ".join(" ".join(cmd + ["--output", "out=" + o]) for o in outs)

    def judge(rc, so, se):
        if rc != 0:
            return "exit %d: %s" % (rc, se[-300:])
        b = [open(o, "rb").read() for o in outs]
        return None if b[0] == b[1] == b[2] else "the three runs differ"
    j.add("repeat bf16 64x65537: identical bits", ["sh", "-c", script], judge)


def randoms(j):
    out = os.path.join(j.work, "random")
    count = int(os.environ.get("TC_GATHER_RANDOM", "1500"))
    rc, _, err = run([sys.executable, os.path.join(ROOT, "tests", "random", "gen.py"), "--seed", "5",
                      "--count", str(count), "--out", out])
    if rc != 0:
        j.add("random: gen.py", ["false"], lambda *a: "gen.py failed: " + err[-300:])
        return
    fams = os.environ.get("TC_GATHER_FAMILIES", "gather").split(",")
    for base in sorted(f[:-5] for f in os.listdir(out) if f.endswith(".json")):
        desc = json.load(open(os.path.join(out, base + ".json")))
        if desc.get("family") not in fams:
            continue
        cmd = [j.tc, "run", os.path.join(out, base + ".tc"), "--fn", "f", DEVICE] + ([] if DRY else ["--check"])
        for inp in desc["inputs"]:
            cmd += ["--input", "%s=%s" % (inp["name"], os.path.join(out, inp["file"]))]
        j.add("random %s" % base, cmd)
    # the rows kernels' vectors (sched_widest): argmax rows, f32 and i64
    for d in (1, 3, 4097, 65537):
        for n in (1, 7):
            j.add("rows indices %dx%d" % (n, d), [j.tc, "run", os.path.join(ROOT, "tests", "golden", "extra", "lang_reductions.tc"),
                  "--fn", "indices", DEVICE, "--random", "--shape", "N=%d,D=%d" % (n, d)] + ([] if DRY else ["--check"]))


def main():
    tc, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    j = Jobs(tc, work)
    rng = random.Random(14)
    losses(j, rng)
    gathers(j, rng)
    out_of_range(j)
    repeat(j, rng)
    randoms(j)
    only = set(filter(None, os.environ.get("TC_GATHER_GROUPS", "").split(",")))
    if only:  # TC_GATHER_GROUPS=ce,nll: only the jobs of those groups
        j.jobs = [job for job in j.jobs if job[0].split()[0] in only]
    passed, failed = 0, []
    counts = {}
    with concurrent.futures.ThreadPoolExecutor(min(16, os.cpu_count() or 4)) as ex:
        futs = {ex.submit(run, cmd): (label, judge) for label, cmd, judge in j.jobs}
        for fut in concurrent.futures.as_completed(futs):
            label, judge = futs[fut]
            why = judge(*fut.result())
            grp = label.split()[0]
            counts[grp] = counts.get(grp, 0) + 1
            if why:
                failed.append("FAIL %s: %s" % (label, why))
            else:
                passed += 1
    for f in sorted(failed):
        print(f)
    print("jobs by group: %s" % ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    print("%d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
