#!/usr/bin/env python3
"""suite.py TENSORC ROOT WORKDIR - the generated kernels on a GPU, checked
against the reference interpreter.  Python's standard library only (the GPU
machine may have no NumPy); run by tests/gpu/run.sh.

Every job is one `tensorc run ... --device=cuda --check` (the CLI compares
each output with the interpreter on the same seeded inputs and exits 1 with
the worst element on a mismatch):

  examples   every function of examples/*.tc (and of tests/cli/edges.tc and
             scalar_red.tc: semantics.md's edges; tests/codegen/progs.tc: the
             programs the code generator once got wrong) at four shape classes:
               one    every size 1
               tiny   sizes 2 and 3
               odd    odd sizes that are not multiples of any vector width or
                      block (131, 1031, 37, ...; 100003 for [*])
               large  the biggest tensor ~40M elements (160 MB of f32, a few
                      times the L2 of an H100), or ~2M when the function has a
                      matmul (the reference interpreter's matmul is naive)
  vjp pairs  fn f_fwd, f_bwd = vjp(f, ...) in the examples: the forward is
             a function as above; the backward runs after it in the same job
             (at the forward's sizes and seed) on the saved values the
             forward wrote (--output, then --input, as tests/gpu/vjp.sh
             does: random saved values would be no test), with --check
  dtypes     functions whose signature has dtype variables (x: T[N]),
             from the examples and the prelude, with every variable bound to
             f16, then bf16 (--dtype), at the tiny, odd and large classes
  grad       (only when TC_GPU_CLASSES names it) the backwards of those
             programs, fn f_grad = grad(f), on the same input files plus
             random cotangents: backward kernels of random programs
  random     200 programs of tests/random/gen.py ($TC_GPU_RANDOM of them,
             seed $TC_GPU_SEED, default 1; TC_GPU_CLASSES=random runs
             only this class, or name a comma list of classes)
             at the sizes it chose, on the input files it wrote
  memcheck   compute-sanitizer --tool memcheck over the examples at the odd
             class and the first 20 random programs (skipped, and said so,
             when compute-sanitizer is not found)
  cache      one function run twice with --verbose in a fresh kernel cache:
             "cache: miss", then "cache: hit"
  bench      one --bench run, for its output's shape

(64-bit index plans need 2^31 elements, more than the reference interpreter
holds (2^30): tests/gpu/api.c checks them through tc_run instead.)

With --plumbing (tests/fakegpu/run.sh, no GPU: the driver is a fake whose
kernels do nothing) every job runs without --check and must exit 0: the
plans' arguments match the PTX signatures of their kernels and point into
live memory; the large class, memcheck and all but 40 random programs are
left out (all but 10 with TC_PLUMBING_QUICK=1, the sanitizer build's run in
scripts/test.sh, where NVRTC's allocations through ASan make each compile
slow); and --check must report the (unwritten) outputs as wrong.

TC_GPU_QUICK=1 keeps the tiny and odd classes, 50 random programs and 10
memcheck runs: a first look in a minute or two.

A job whose sizes break a constraint of the function ("... must be at
least ...", e.g. a slice of 8 elements at size 1) is skipped, not failed.
Prints one line per failure (the command and the end of its stderr), then
"N passed, M failed" last; exit status 1 on any failure.
"""
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

TIMEOUT = 900
QUICK = os.environ.get("TC_GPU_QUICK") == "1"
# the sanitizer build's fake-driver run (scripts/test.sh): 10 random programs
NRAND_PLUMB = 10 if os.environ.get("TC_PLUMBING_QUICK") == "1" else 40


def run(cmd, env=None, timeout=TIMEOUT):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return -1, "", "timed out after %d s" % timeout


# --- what a function looks like ------------------------------------------------

def split_top(s):
    """Split on commas outside brackets and parentheses."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_signature(line):
    """'fn f(x: f32[N, D], eps: f32 = 1e-05) -> (out: f32[N, D])' ->
    (params [(name, dims or None)], symbols in order of appearance)."""
    m = re.match(r"fn \w+\((.*)\) -> \(.*\)$", line.strip())
    if not m:
        return None, None
    params, syms = [], []
    for p in split_top(m.group(1)):
        name, _, ty = p.partition(":")
        ty = ty.split("=")[0].strip()
        b = re.search(r"\[(.*)\]", ty)
        if not b:
            params.append((name.strip(), None))
            continue
        dims = [d.strip() for d in split_top(b.group(1))]
        params.append((name.strip(), dims))
        for d in dims:
            if (re.fullmatch(r"[A-Za-z_]\w*", d) or d == "*") and d not in syms:
                syms.append(d)
    return params, syms


def parse_outputs(line):
    """'fn f(...) -> (out: f32[N, D], saved_mean: f32[N, 1])' -> ['out', 'saved_mean']."""
    m = re.match(r"fn \w+\(.*\) -> \((.*)\)$", line.strip())
    return [o.partition(":")[0].strip() for o in split_top(m.group(1))] if m else []


def dtype_vars(source, fn):
    """The dtype variables of fn's signature in its source text."""
    m = re.search(r"\bfn\s+%s\s*\(" % re.escape(fn), source)
    if not m:
        return []
    end = source.find("{", m.end())
    sig = source[m.end():end if end >= 0 else None]
    found = re.findall(r"(?::|->)\s*(?:inout\s+)?\(?\s*([A-Z])\b(?!\w)", sig)
    found += re.findall(r",\s*\w+\s*:\s*([A-Z])\b(?!\w)", sig)  # further named results
    return sorted(set(found))


def numel(dims, sizes):
    n = 1
    for d in dims:
        n *= sizes[d] if d in sizes else int(d) if d.isdigit() else 1
    return n


def sizes_for(cls, params, syms, matmul):
    if cls == "one":
        return {s: 1 for s in syms}
    if cls == "tiny":
        return {s: (2, 3)[i % 2] for i, s in enumerate(syms)}
    base = [37, 67, 13, 7, 5] if matmul and cls == "odd" else [131, 1031, 37, 13, 7]
    if cls == "large":
        base = [1031, 67, 37, 13, 7]
    sizes = {s: base[i % len(base)] for i, s in enumerate(syms)}
    if "*" in sizes:
        sizes["*"] = 100003
    if cls == "large":
        target = 2_000_000 if matmul else 40_000_000
        tensors = [d for _, d in params if d]
        if not tensors:
            return sizes
        big = max(tensors, key=lambda d: numel(d, sizes))
        grow = next((d for d in big if d in sizes), None)
        if grow is None:
            return sizes
        rest = max(1, numel(big, sizes) // sizes[grow])
        sizes[grow] = max(1, target // rest) | 1
    return sizes


def second_moment(work, n):
    """An optimizer's v (a running mean of g * g) as a .npy of n float32 values
    in [0, 1): random v in [-1, 1) makes sqrt(v) NaN or not depending on how
    a sum that cancels near 0 rounds, so --check would compare NaN with a
    number.  Standard library only: the .npy header is written by hand."""
    import random
    import struct
    path = os.path.join(work, "v_%d.npy" % n)
    if not os.path.exists(path):
        rnd = random.Random(n)
        head = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
        head += " " * (63 - (len(head) + 10) % 64) + "\n"
        with open(path, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
            for i in range(0, n, 65536):
                k = min(65536, n - i)
                f.write(struct.pack("<%df" % k, *(rnd.random() for _ in range(k))))
    return path


# Log-space scans over a long axis in f32 (exp(a + logcumsumexp(x - a)),
# a = cumsum(...)) cancel terms of size |a|, which grows with T: at T = 1031
# the f32 result is 1e-4 away from the f64 reference (PyTorch's f32 too),
# past --check's 2e-5.  These functions keep T at 129 here (the backward,
# which goes through both scans again, at 64: 2.2e-5 at T = 129 on an
# H200); the long,
# block-parallel scan path is checked on conditioned data by
# tests/gpu/scans.sh (T = 4097).
LONG_SCAN_CAP = {("examples/mingru.tc", "mingru"): {"T": 129},
                 ("examples/mingru_backward.tc", "mingru_bwd"): {"T": 64},
                 ("examples/scans.tc", "decayed"): {"T": 129},
                 ("examples/mingru_backward.tc", "mingru"): {"T": 129},
                 ("examples/mingru_backward.tc", "mingru_grad"): {"T": 64},
                 ("examples/mingru_backward.tc", "mingru_fwd"): {"T": 129}}


def shape_arg(sizes):
    return ",".join("%s=%d" % kv for kv in sizes.items())


# --- the jobs ---------------------------------------------------------------------

class Suite:
    def __init__(self, tc, root, work, plumbing=False):
        self.tc, self.root, self.work = tc, root, work
        self.plumbing = plumbing
        self.jobs = []          # (label, cmd, env)
        self.skipped = []       # (label, reason)
        self.env = dict(os.environ, TENSORC_CACHE_DIR=os.path.join(work, "cache"))

    def graph_line(self, path, fn, dts=()):
        cmd = [self.tc, "compile", path, "--emit=graph", "--fn", fn]
        for d in dts:
            cmd += ["--dtype", d]
        rc, out, err = run(cmd, self.env, 120)
        if rc != 0:
            return None, err.strip().splitlines()[0] if err.strip() else "exit %d" % rc, False
        first = next((l for l in out.splitlines() if l.startswith("fn ")), None)
        return first, None, " matmul(" in out or "= matmul" in out

    def add_function(self, path, fn, classes, dts=(), check_cmd_extra=()):
        line, why, matmul = self.graph_line(path, fn, dts)
        where = "prelude" if path.startswith(self.work) else os.path.relpath(path, self.root)
        label = "%s:%s%s" % (where, fn, "".join(" --dtype " + d for d in dts))
        if line is None:
            self.skipped.append((label, "does not build as an entry point: %s" % why))
            return
        params, syms = parse_signature(line)
        if params is None:
            self.skipped.append((label, "cannot read its signature: %s" % line))
            return
        for cls in classes:
            if cls == "large" and (self.plumbing or QUICK) or cls == "one" and QUICK:
                continue
            sizes = sizes_for(cls, params, syms, matmul)
            for d, cap in LONG_SCAN_CAP.get((where, fn), {}).items():
                if d in sizes and sizes[d] > cap:
                    sizes[d] = cap
            cmd = [self.tc, "run", path, "--fn", fn, "--device=cuda", "--random", "--seed", "7"]
            if not self.plumbing:
                cmd.append("--check")
            if sizes:
                cmd += ["--shape", shape_arg(sizes)]
            for d in dts:
                cmd += ["--dtype", d]
            cmd += list(check_cmd_extra)
            if ("v", ["*"]) in params and "*" in sizes and not dts:
                cmd += ["--input", "v=" + second_moment(self.work, sizes["*"])]
            self.jobs.append(("%s [%s]" % (label, cls), cmd, self.env))

    def add_pair(self, path, fwd, bwd, classes):
        """The backward of a vjp pair on what its forward saved: one job,
        the forward writing the saved values (.npy), then the backward
        reading them, both at the same sizes and seed."""
        where = os.path.relpath(path, self.root)
        label = "%s:%s (on %s's saved values)" % (where, bwd, fwd)
        fline, why, matmul = self.graph_line(path, fwd)
        bline, bwhy, _ = self.graph_line(path, bwd)
        if fline is None or bline is None:
            self.skipped.append((label, "does not build as an entry point: %s" % (why or bwhy)))
            return
        fparams, fsyms = parse_signature(fline)
        bparams, bsyms = parse_signature(bline)
        if fparams is None or bparams is None:
            self.skipped.append((label, "cannot read the signatures: %s / %s" % (fline, bline)))
            return
        saved = [n for n, _ in bparams if n in parse_outputs(fline)]
        syms = fsyms + [x for x in bsyms if x not in fsyms]
        for cls in classes:
            if cls == "large" and (self.plumbing or QUICK) or cls == "one" and QUICK:
                continue
            sizes = sizes_for(cls, fparams + bparams, syms, matmul)
            for key in ((where, fwd), (where, bwd)):
                for d, cap in LONG_SCAN_CAP.get(key, {}).items():
                    if d in sizes and sizes[d] > cap:
                        sizes[d] = cap
            d = os.path.join(self.work, "vjp", "%s-%s-%s" % (os.path.basename(path), bwd, cls))
            common = ["--device=cuda", "--random", "--seed", "7"] + ([] if self.plumbing else ["--check"])
            if sizes:
                common += ["--shape", shape_arg(sizes)]
            f = [self.tc, "run", path, "--fn", fwd] + common
            b = [self.tc, "run", path, "--fn", bwd] + common
            for n in saved:
                f += ["--output", "%s=%s" % (n, os.path.join(d, n + ".npy"))]
                b += ["--input", "%s=%s" % (n, os.path.join(d, n + ".npy"))]
            script = "mkdir -p %s && %s && %s" % (shlex.quote(d), " ".join(map(shlex.quote, f)),
                                                  " ".join(map(shlex.quote, b)))
            self.jobs.append(("%s [%s]" % (label, cls), ["/bin/sh", "-c", script], self.env))

    def examples(self):
        exdir = os.path.join(self.root, "examples")
        for name in sorted(os.listdir(exdir)):
            if not name.endswith(".tc"):
                continue
            path = os.path.join(exdir, name)
            with open(path) as f:
                src = f.read()
            for fwd, bwd in re.findall(r"^fn\s+(\w+)\s*,\s*(\w+)\s*=\s*vjp\s*\(", src, re.M):
                self.add_pair(path, fwd, bwd, ["one", "tiny", "odd", "large"])
            for fn in re.findall(r"^fn\s+(\w+)", src, re.M):
                self.add_function(path, fn, ["one", "tiny", "odd", "large"])
                dv = dtype_vars(src, fn)
                for low in ("f16", "bf16"):
                    if dv:
                        self.add_function(path, fn, ["tiny", "odd", "large"],
                                          ["%s=%s" % (v, low) for v in dv])

    def edges(self):
        # the edges of docs/semantics.md and rank-0 reductions (issue 11), and
        # the programs the code generator once could not build or got wrong
        for path in (os.path.join(self.root, "tests", "cli", "edges.tc"),
                     os.path.join(self.root, "tests", "cli", "scalar_red.tc"),
                     os.path.join(self.root, "tests", "codegen", "progs.tc")):
            with open(path) as f:
                src = f.read()
            for fn in re.findall(r"^fn\s+(\w+)", src, re.M):
                self.add_function(path, fn, ["one", "tiny", "odd", "large"])

    def prelude(self):
        pdir = os.path.join(self.root, "prelude")
        # --fn reaches the prelude from any file that does not define the name itself
        host = os.path.join(self.work, "host.tc")
        with open(host, "w") as f:
            f.write("fn tc_suite_host(x: f32[N]) -> f32[N] {\n    return x\n}\n")
        for name in sorted(os.listdir(pdir)):
            if not name.endswith(".tc"):
                continue
            with open(os.path.join(pdir, name)) as f:
                src = f.read()
            for fn in re.findall(r"^fn\s+(\w+)", src, re.M):
                dv = dtype_vars(src, fn)
                for low in ("f32", "f16", "bf16"):
                    dts = ["%s=%s" % (v, low) for v in dv] if low != "f32" else []
                    if dv or low == "f32":
                        self.add_function(host, fn, ["tiny", "odd", "large"], dts)

    def random(self, count=None, seed=1):
        """tests/random/gen.py's programs (every family: arg-reductions with
        ties, batched matmuls with size-1 batch dims, integer reductions, f64,
        elementwise functions over --groups, ...) on gen.py's own input files,
        so ties and NaN positions are the ones the generator meant."""
        if count is None:
            count = int(os.environ.get("TC_GPU_RANDOM", "200"))
        gen = os.path.join(self.root, "tests", "random", "gen.py")
        out = os.path.join(self.work, "random")
        # on a GPU, mmep programs may take weights of 40 MB and just past it,
        # the two sides of the weight rule's launch guard (gen.py's BIGW)
        env = dict(os.environ, TC_RANDOM_BIGW="0" if self.plumbing else "1")
        rc, _, err = run([sys.executable, gen, "--seed", str(seed), "--count", str(count), "--out", out], env=env)
        if rc != 0:
            self.jobs.append(("random: gen.py", [sys.executable, "-c", "import sys; sys.exit(1)"], None))
            print("gen.py failed: %s" % err.strip()[:400])
            return []
        progs = []
        bases = sorted(f[:-3] for f in os.listdir(out) if f.endswith(".tc"))
        for base in bases[:NRAND_PLUMB] if self.plumbing else bases[:50] if QUICK else bases:
            with open(os.path.join(out, base + ".json")) as f:
                desc = json.load(f)
            cmd = [self.tc, "run", os.path.join(out, base + ".tc"), "--fn", desc.get("fn", "f"),
                   "--device=cuda", "--seed", "3"]
            for k, v in desc.get("dtype_bind", {}).items():
                cmd += ["--dtype", "%s=%s" % (k, v)]
            groups = desc.get("groups")
            for inp in desc["inputs"]:
                files = inp["files"] if groups else [inp["file"]]
                cmd += ["--input", "%s=%s" % (inp["name"], ",".join(os.path.join(out, f) for f in files))]
            if groups:
                cmd += ["--groups", ",".join(map(str, groups))]
            if not self.plumbing:
                cmd.append("--check")
            for k, v in desc.get("scalars", {}).items():
                cmd += ["--input", "%s=%r" % (k, v)]
            label = "random %s (%s)" % (base, desc.get("family", "dag"))
            self.jobs.append((label, cmd, self.env))
            progs.append((label, cmd))
        return progs


    def grad(self, count=None, seed=1):
        """The backwards of gen.py's programs (TC_GPU_CLASSES=grad; not in
        the default classes): each program with `fn f_grad = grad(f)`
        appended, run with --check on gen.py's input files plus random
        cotangents.  Only programs whose backward builds (not elementwise,
        a float input and output) and whose generator promised finite
        values (desc "nonfinite" unset: a backward multiplies infinities
        by zeros where rounding decides)."""
        if count is None:
            count = int(os.environ.get("TC_GPU_RANDOM", "200"))
        gen = os.path.join(self.root, "tests", "random", "gen.py")
        out = os.path.join(self.work, "grad")
        rc, _, err = run([sys.executable, gen, "--seed", str(seed), "--count", str(count), "--out", out])
        if rc != 0:
            self.jobs.append(("grad: gen.py", [sys.executable, "-c", "import sys; sys.exit(1)"], None))
            print("gen.py failed: %s" % err.strip()[:400])
            return
        bases = sorted(f[:-3] for f in os.listdir(out) if f.endswith(".tc"))
        for base in bases[:NRAND_PLUMB] if self.plumbing else bases[:50] if QUICK else bases:
            with open(os.path.join(out, base + ".json")) as f:
                desc = json.load(f)
            if desc.get("groups") is not None or desc.get("nonfinite") or desc.get("fn", "f") != "f":
                continue
            path = os.path.join(out, base + ".grad.tc")
            with open(os.path.join(out, base + ".tc")) as f, open(path, "w") as g:
                g.write(f.read() + "\nfn f_grad = grad(f)\n")
            dts = []
            for k, v in desc.get("dtype_bind", {}).items():
                dts += ["--dtype", "%s=%s" % (k, v)]
            rc, _, _ = run([self.tc, "compile", path, "--fn", "f_grad", "--emit=graph"] + dts)
            if rc != 0:
                continue  # no float input or output: nothing to differentiate
            cmd = [self.tc, "run", path, "--fn", "f_grad", "--device=cuda", "--seed", "3",
                   "--random"] + dts
            for inp in desc["inputs"]:
                cmd += ["--input", "%s=%s" % (inp["name"], os.path.join(out, inp["file"]))]
            if not self.plumbing:
                cmd.append("--check")
            for k, v in desc.get("scalars", {}).items():
                cmd += ["--input", "%s=%r" % (k, v)]
            self.jobs.append(("grad %s (%s)" % (base, desc.get("family", "dag")), cmd, self.env))


def sanitizer():
    cands = [shutil.which("compute-sanitizer")]
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home:
            cands.append(os.path.join(home, "bin", "compute-sanitizer"))
    return next((c for c in cands if c and os.access(c, os.X_OK)), None)


def judge(label, rc, out, err, plumbing=False):
    """None when it passed, 'skip: ...' when the sizes do not apply, else the failure."""
    if rc == 0 and (plumbing or "check: OK" in out):
        return None
    if rc == 1 and "must be at least" in err:
        return "skip: " + err.strip().splitlines()[0]
    tail = " | ".join(err.strip().splitlines()[-6:]) or out.strip()[-300:]
    return "FAIL %s: exit %d: %s" % (label, rc, tail[:1200])


def main():
    args = [a for a in sys.argv[1:] if a not in ("--list", "--plumbing")]
    if len(args) != 3:
        print("usage: suite.py TENSORC ROOT WORKDIR [--list] [--plumbing]", file=sys.stderr)
        return 2
    tc, root, work = args
    os.makedirs(work, exist_ok=True)
    plumbing = "--plumbing" in sys.argv
    s = Suite(tc, root, work, plumbing)
    check = [] if plumbing else ["--check"]
    if "--list" in sys.argv:  # what would run, without a GPU
        s.examples()
        s.edges()
        s.prelude()
        s.random()
        for label, cmd, _ in s.jobs:
            print("%s\n    %s" % (label, " ".join(cmd)))
        for label, why in s.skipped:
            print("skip %s: %s" % (label, why))
        print("%d jobs, %d skipped" % (len(s.jobs), len(s.skipped)))
        return 0
    passed, failed, skipped = 0, [], s.skipped
    log = open(os.path.join(work, "suite.log"), "w")

    def record(label, cmd, res):
        nonlocal passed
        rc, out, err = res
        log.write("== %s\n$ %s\nexit %d\n%s%s\n" % (label, " ".join(cmd), rc, out[-2000:], err[-4000:]))
        v = judge(label, rc, out, err, plumbing)
        if v is None:
            passed += 1
        elif v.startswith("skip: "):
            skipped.append((label, v[6:]))
        else:
            failed.append(v)
            print(v, flush=True)

    # cache: a fresh directory, so the first run compiles and the second finds it
    cenv = dict(os.environ, TENSORC_CACHE_DIR=os.path.join(work, "cache-check"))
    ccmd = [tc, "run", os.path.join(root, "examples", "softmax.tc"), "--device=cuda", "--random"] + check + [
            "--shape", "N=33,D=65", "--verbose"]
    r1 = run(ccmd, cenv)
    if r1[0] == 3:  # no GPU, no driver, no NVRTC: every job would say the same
        print("no GPU: %s" % (r1[2].strip() or "tensorc exited 3"))
        print("0 passed, 0 failed")
        return 3
    r2 = run(ccmd, cenv)
    for label, res, want in (("cache miss", r1, "cache: miss"), ("cache hit", r2, "cache: hit")):
        if res[0] == 0 and want not in res[2]:
            res = (1, res[1], res[2] + "\n(--verbose did not print '%s')" % want)
        record(label, ccmd, res)

    # bench, once, alone on the GPU
    bcmd = [tc, "run", os.path.join(root, "examples", "softmax.tc"), "--device=cuda", "--random"] + check + [
            "--bench", "--shape", "N=4096,D=4099" if not plumbing else "N=64,D=65"]
    res = run(bcmd, s.env)
    if res[0] == 0 and not re.search(r"^bench: softmax on .*\n.*step.*GB/s.*\n +0 .*tc_red_", res[1], re.M):
        res = (1, res[1], res[2] + "\n(--bench printed no table)")
    record("bench", bcmd, res)

    if plumbing:  # kernels do not run: --check must see the poisoned outputs
        kcmd = [tc, "run", os.path.join(root, "examples", "softmax.tc"), "--device=cuda", "--random", "--check",
                "--shape", "N=3,D=5"]
        rc, out, err = run(kcmd, s.env)
        want = "error: --check: output 'out' differs from the reference interpreter at [0, 0]: got"
        record("--check sees unwritten outputs", kcmd,
               (0, "", "") if rc == 1 and want in err else (1, out, err + "\n(wanted exit 1 and: %s)" % want))

    # TC_GPU_CLASSES=random (or a comma list of examples, edges, prelude,
    # random) runs only those classes, for checking one change quickly
    want = set(filter(None, os.environ.get("TC_GPU_CLASSES", "examples,edges,prelude,random").split(",")))
    unknown = want - {"examples", "edges", "prelude", "random", "grad"}
    if unknown:
        print("TC_GPU_CLASSES: unknown class %s" % ", ".join(sorted(unknown)), file=sys.stderr)
        return 2
    for name in ("examples", "edges", "prelude"):
        if name in want:
            getattr(s, name)()
    progs = s.random(seed=int(os.environ.get("TC_GPU_SEED", "1"))) if "random" in want else []
    if "grad" in want:
        s.grad(seed=int(os.environ.get("TC_GPU_SEED", "1")))

    san = None if plumbing else sanitizer()
    if plumbing:
        pass
    elif san:
        mem = [(label, cmd, env) for label, cmd, env in s.jobs  # a vjp pair's job is a shell's
               if label.endswith("[odd]") and " --dtype " not in label and label.startswith("examples/")
               and cmd[0] == tc]
        mem += [(label, cmd, s.env) for label, cmd in progs[:20]]
        for label, cmd, env in mem[:10] if QUICK else mem:
            s.jobs.append(("memcheck " + label, [san, "--tool", "memcheck", "--error-exitcode", "99"] + cmd, env))
    else:
        print("memcheck: skipped (compute-sanitizer not found in PATH, $CUDA_HOME/bin or /usr/local/cuda/bin)")

    # Small jobs many at a time; large ones (the reference interpreter holds
    # every value of every node as a double: several GB each) four at a time.
    small = [j for j in s.jobs if not j[0].endswith("[large]")]
    large = [j for j in s.jobs if j[0].endswith("[large]")]
    nsmall = min(2, os.cpu_count() or 2) if plumbing else max(1, min(16, os.cpu_count() or 4))
    for jobs, workers in ((small, nsmall), (large, 4)):
        with concurrent.futures.ThreadPoolExecutor(workers) as ex:
            futs = {ex.submit(run, cmd, env): (label, cmd) for label, cmd, env in jobs}
            for fut in concurrent.futures.as_completed(futs):
                label, cmd = futs[fut]
                record(label, cmd, fut.result())

    for label, why in skipped:
        log.write("skip %s: %s\n" % (label, why))
    log.close()
    print("%d skipped (sizes a function does not accept, or not an entry point); see %s"
          % (len(skipped), os.path.join(work, "suite.log")))
    print("%d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
