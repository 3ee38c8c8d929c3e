#!/usr/bin/env python3
"""sweep.py TENSORC OUTDIR - every builtin op of src/base/ops.def, in every dtype
the checker accepts for it, in every kernel strategy, through NVRTC.

The ops come from src/base/ops.def itself (so a new op cannot be left out: one
with no spelling below fails the sweep).  For each op and each operand dtype
(f32 f64 f16 bf16 i32 i64 bool) it writes candidate functions:

  pointwise   the op over tensors, and with literals (max(x, 0),
              clamp(x, -2.0, 2.5), x ** 2, ...), in a pointwise kernel;
              every dtype to every dtype (casts)
  rows        sum of the op's result over the last axis (one form per op)
  split       max of it over the first axis of [N, D] (split columns)
  reductions  sum mean max min prod argmax argmin var std logsumexp of each
              dtype in rows, columns (plain, split, split with vectors) and
              full kernels; and the scans (cumsum cumprod cummax cummin
              logcumsumexp) of each dtype along the last and the first axis,
              reversed, chained with an epilogue and a last-element store
              (both paths of a scan kernel: a thread per lane, a block per
              lane), in the same group

Each candidate goes through the checker alone (`tensorc compile --emit=graph`);
the ones it accepts are written, grouped by strategy, into OUTDIR/*.tc, and
each group is compiled to PTX for sm_90 through NVRTC: its C++ front end and
NVVM, where generated code that is not valid CUDA fails (TC_SWEEP_EMIT=cubin
adds ptxas, which took 47 of the reductions group's 69 s and 123 CPU-s of
CI's NVRTC time for two groups; ptxas meets the same helpers' inline PTX in
every CUBIN of tests/nvrtc/run.sh).  TC_SWEEP_GROUPS
(a comma-separated list) keeps only those groups.  TC_SWEEP_EMIT=cuda
(scripts/test.sh's sanitizer builds, which check tensorc's own code: the
code generation of every op, not NVRTC's compile of its text, which the
Release build runs and which was most of the ASan build's codegen test)
stops each group at its CUDA source.  Prints one line per
failure (the program and the NVRTC log), counts per group, and "N passed,
M failed" last; exit status 1 on a failure.  run.sh calls it; by hand:
  python3 tests/nvrtc/sweep.py build/tensorc /tmp/sweep
"""
import concurrent.futures
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = ["f32", "f64", "f16", "bf16", "i32", "i64", "bool"]

# How the language spells each pointwise op of ops.def (x, y, z: tensors of
# the dtype under test; c: bool).  Unary ops not listed here are called by
# their ops.def spelling.  Several forms per op: literals must be printed in
# the operation's dtype.
FORMS = {
    "not": ["!x"],
    "add": ["x + y", "x + 1", "x + 0.5"],
    "sub": ["x - y", "1 - x", "x - 2.5"],
    "mul": ["x * y", "x * 2", "x * 0.5"],
    "div": ["x / y", "x / 2", "1.0 / x"],
    "mod": ["x % y", "x % 3", "x % 2.5"],
    "pow": ["x ** y", "x ** 2", "pow(x, 0.5)", "2 ** x"],
    "max": ["max(x, y)", "max(x, 0)", "max(x, -1.5)"],
    "min": ["min(x, y)", "min(x, 1)", "min(x, 2.5)"],
    "atan2": ["atan2(x, y)", "atan2(x, 1)"],
    "eq": ["x == y", "x == 1"],
    "ne": ["x != y", "x != 0.5"],
    "lt": ["x < y", "x < 0"],
    "le": ["x <= y", "x <= 2.5"],
    "gt": ["x > y", "x > 1"],
    "ge": ["x >= y", "x >= -0.5"],
    "and": ["x && y", "x && true"],
    "or": ["x || y", "x || 0"],
    "where": ["where(c, x, y)", "where(c, x, 0)", "where(c, 1.5, x)", "where(x, y, z)"],
    "clamp": ["clamp(x, y, z)", "clamp(x, -2.0, 2.5)", "clamp(x, 0, 1)"],
    # not pointwise, but emitted by the same code wherever they are read
    "iota": ["iota(N) + x", "where(iota(N) % 2 == 0, x, y)"],
    "gather": ["gather(x, i64(y) % N, axis=0)", "gather(x, i32(abs(y)) % N, axis=0) + x"],
}
SKIP = {"input", "scalar", "const", "dimval", "cast", "view", "copy", "concat", "matmul"}


def ops_def():
    """(id, spelling, kind) of every op in src/base/ops.def."""
    out = []
    with open(os.path.join(ROOT, "src", "base", "ops.def")) as f:
        for line in f:
            m = re.match(r'OP\((\w+),\s*"([^"]+)",\s*OPK_(\w+),', line)
            if m:
                out.append(m.groups())
    return out


def check(tc, path):
    p = subprocess.run([tc, "compile", path, "--emit=graph"], capture_output=True, text=True)
    return p.returncode == 0


def main():
    tc, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(outdir, "cand"), exist_ok=True)
    cands = {}  # group -> [(name, text)]
    missing = []

    def add(group, name, text):
        cands.setdefault(group, []).append((name, text))

    pointwise = []  # (tag, expr)
    reductions = []
    scans = []
    for oid, spelling, kind in ops_def():
        if oid in SKIP:
            continue
        if kind == "REDUCE":
            reductions.append(spelling)
            continue
        if kind == "SCAN":
            scans.append(spelling)
            continue
        forms = FORMS.get(oid)
        if forms is None and kind == "UNARY":
            forms = ["%s(x)" % spelling]
        if forms is None:
            missing.append(oid)
            continue
        for i, e in enumerate(forms):
            pointwise.append(("%s%d" % (oid, i), e))

    for dt in DTYPES:
        seen = set()
        for tag, e in pointwise:
            n = "%s_%s" % (tag, dt)
            add("pointwise", "p_" + n, "fn p_%s(x: %s[N], y: %s[N], z: %s[N], c: bool[N]) -> R[N] { return %s }"
                % (n, dt, dt, dt, e))
            # inside reductions the op is emitted by the same code; one form
            # per op, in a rows and a split-column kernel, where it meets
            # the accumulators of its result's dtype
            op = tag.rstrip("0123456789")
            if op in seen:
                continue
            seen.add(op)
            two = "x: %s[N, D], y: %s[N, D], z: %s[N, D], c: bool[N, D]" % (dt, dt, dt)
            add("rows", "r_" + n, "fn r_%s(%s) -> R[N] { return sum(%s, axis=1) }" % (n, two, e))
            add("split", "s_" + n, "fn s_%s(%s) -> R[D] { return max(%s, axis=0) }" % (n, two, e))
        for to in DTYPES:
            add("pointwise", "k_%s_%s" % (dt, to), "fn k_%s_%s(x: %s[N]) -> R[N] { return %s(x) }"
                % (dt, to, dt, to))
        for red in reductions:
            n = "%s_%s" % (red, dt)
            add("reductions", "rr_" + n, "fn rr_%s(x: %s[N, D]) -> R[N] { return %s(x, axis=1) }" % (n, dt, red))
            add("reductions", "rc_" + n, "fn rc_%s(x: %s[8, D]) -> R[D] { return %s(x, axis=0) }" % (n, dt, red))
            add("reductions", "rs_" + n, "fn rs_%s(x: %s[N, D]) -> R[D] { return %s(x, axis=0) }" % (n, dt, red))
            add("reductions", "rt_" + n, "fn rt_%s(x: %s[A, N, D]) -> R[N] { return %s(x, axis=[0, 2]) }"
                % (n, dt, red))
            add("reductions", "rf_" + n, "fn rf_%s(x: %s[N, D]) -> R { return %s(x) }" % (n, dt, red))
            # a stored element-level value and its reduction: split columns
            # with element stores, rows with an epilogue
            add("reductions", "re_" + n, "fn re_%s(x: %s[N, D]) -> (R[N, D], S[D]) "
                "{ y = x * 2; return y, %s(y, axis=0) }" % (n, dt, red))

        for sc in scans:
            n = "%s_%s" % (sc, dt)
            add("reductions", "sl_" + n, "fn sl_%s(x: %s[N, D]) -> R[N, D] { return %s(x, axis=1) }"
                % (n, dt, sc))
            add("reductions", "sf_" + n, "fn sf_%s(x: %s[N, D]) -> R[N, D] { return %s(x, axis=0, reverse=true) }"
                % (n, dt, sc))
            add("reductions", "sc_" + n, "fn sc_%s(x: %s[B, T, H]) -> (y: R[B, T, H], z: R[B, 1, H]) "
                "{ a = %s(x * 2, axis=1); b = cumsum(a, axis=1) + a; return b, b[:, -1:, :] }"
                % (n, dt, sc))
            # a checkpointed pair (sched_ckpt.c): the scan read only by a
            # reversed walk, one kernel with 16-bit register arrays for f16
            add("reductions", "sp_" + n, "fn sp_%s(x: %s[B, T, H]) -> (y: R[B, T, H], z: S[B, 1, H]) "
                "{ a = %s(x, axis=1); return cumsum(a * x, axis=1, reverse=true), sum(x, axis=1, keepdim=true) }"
                % (n, dt, sc))

    # TC_SWEEP_GROUPS=pointwise,reductions: only those groups (the ctest
    # default: every op's spelling and every accumulator; rows and split
    # take several minutes more on a busy two-core machine)
    want = os.environ.get("TC_SWEEP_GROUPS")
    if want:
        cands = {g: f for g, f in cands.items() if g in want.split(",")}
    # the checker decides which candidates are valid programs
    jobs = []
    for group, fns in cands.items():
        for name, text in fns:
            path = os.path.join(outdir, "cand", name + ".tc")
            with open(path, "w") as f:
                f.write(text + "\n")
            jobs.append((group, name, text, path))
    with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("TC_NVRTC_JOBS", "2"))) as ex:
        ok = list(ex.map(lambda j: check(tc, j[3]), jobs))
    accepted = {}
    for (group, name, text, path), good in zip(jobs, ok):
        if good:
            accepted.setdefault(group, []).append(text)

    passed = failed = 0
    if missing:
        print("FAIL ops.def ops with no spelling in sweep.py: %s" % ", ".join(missing))
        failed += 1
    env = dict(os.environ)
    # TC_SWEEP_EMIT=cuda (the sanitizer builds: tensorc's code generation
    # is what they check, NVRTC's compile of the same text is the Release
    # build's): the groups' CUDA source, not through NVRTC
    emit = os.environ.get("TC_SWEEP_EMIT", "ptx")
    what = {"ptx": "compile to PTX", "cubin": "compile to CUBIN",
            "cuda": "generate CUDA (not compiled: TC_SWEEP_EMIT=cuda)"}[emit]

    def compile_group(item):
        group, texts = item
        path = os.path.join(outdir, group + ".tc")
        with open(path, "w") as f:
            f.write("\n".join(texts) + "\n")
        p = subprocess.run([tc, "compile", path, "--emit=" + emit, "--arch=sm_90", "-o",
                            os.path.join(outdir, group + "." + emit)], capture_output=True, text=True, env=env)
        return group, len(texts), p.returncode, p.stderr

    with concurrent.futures.ThreadPoolExecutor(int(os.environ.get("TC_NVRTC_JOBS", "2"))) as ex:
        for group, n, rc, err in ex.map(compile_group, sorted(accepted.items())):
            total = len(cands[group])
            if rc == 0:
                print("ok   %s: %d functions (of %d candidates) %s" % (group, n, total, what))
                passed += 1
            else:
                print("FAIL %s: %d functions (%s/%s.tc): tensorc exited %d" % (group, n, outdir, group, rc))
                # the errors, not NVRTC's warnings about unused temporaries
                lines, shown = err.splitlines(), 0
                for i, line in enumerate(lines):
                    if "error" in line and shown < 10:
                        shown += 1
                        for l2 in lines[i:i + 5]:
                            print("    " + l2)
                failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
