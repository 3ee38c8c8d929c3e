"""emu.py - the generated kernels of tests/gpu/launch_shapes.tc run on the
CPU (prelude.h emulates the CUDA they use), to check the tuned launch shapes'
index logic without a GPU: each case*.py builds one C++ program from
`tensorc compile --emit=cuda` under several knob settings (sched.c) and
compares the outputs bitwise between them, or exactly against a reference
on small-integer data where the summation order differs (whole-tensor
kernels).  Vector loads and stores count misaligned addresses (a GPU would
fault).  run.sh runs every case (ctest cpuemu).  The threads, barriers and shared
memory are tests/emu/emu.h's (the emulator's core).  The
block reductions here combine in thread order, not the GPU's tree: only
agreement between kernels under this same emulation is meaningful."""
import os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "emu"))
import unit  # tests/emu/unit.py: __shared__ per block, inline PTX interpreted
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TC = os.environ.get("TC_BIN", os.path.join(ROOT, "build", "tensorc"))
PROG = os.path.join(ROOT, "tests", "gpu", "launch_shapes.tc")
# TC_EMU_QUICK=1 (scripts/test.sh, CI): each case keeps every kernel kind,
# knob and its extreme values, and fewer of the values between and of the
# shapes (each case*.py's docstring says which); the build (one kernel
# a variant) is most of a case's time.  quick(FULL, KEEP): FULL, or under
# quick the items of FULL at the indexes KEEP.
QUICK = os.environ.get("TC_EMU_QUICK") == "1"


def quick(full, keep):
    return [full[i] for i in keep] if QUICK else full

def gen(tcfile, fn, env, tag, dtype=None):
    e = dict(os.environ, **env)
    args = [TC, "compile", tcfile, "--emit=cuda"] + (["--fn", fn] if fn else [])
    args += ["--dtype", "T=" + dtype] if dtype else []
    out = subprocess.run(args, env=e, capture_output=True, text=True, check=True).stdout
    lines = out.split("\n")
    s = next(i for i, l in enumerate(lines) if l.startswith('extern "C" __global__'))
    t = next(i for i in range(s, len(lines)) if lines[i] == "}")
    ktext = "\n".join(lines[s:t + 1])
    name = re.search(r"(tc_\w+)\(", ktext).group(1)
    ktext = unit.rewrite(ktext.replace(name, "K_" + tag))
    sig = ktext[ktext.index("(") + 1: ktext.index(")\n{")]
    params = [p.strip().split()[-1] for p in sig.split(",")]
    plan = re.search(r"<<<(.*), \[(\d+), (\d+), 1\]>>>", out)
    chunk = re.search(r"(\d+) elements a block", out)
    fe = re.search(r"tc_fe_table<(\d+), (\d+)>", ktext)
    ptrs = re.findall(r"\*__restrict__ (\w+) = \(.*\)grp\.ptr\[(\d+)\]", ktext)
    return dict(text=ktext, tag=tag, params=params, grid=plan.group(1), bx=int(plan.group(2)),
                by=int(plan.group(3)), chunk=int(chunk.group(1)) if chunk else None,
                fe=(int(fe.group(1)), int(fe.group(2))) if fe else None, ptrs=ptrs,
                sync="__syncthreads" in ktext or "tc_block_reduce" in ktext)

def evalgrid(expr, sizes):
    e = expr.replace("(* ", "(STAR ").replace("(*)", "(STAR)")
    for k, v in sizes.items():
        e = re.sub(r"\b%s\b" % ("STAR" if k == "*" else k), str(v), e)
    return eval(e.replace("/", "//"))

class Prog:
    def __init__(self):
        self.kernels, self.body, self.n, self.seen = [], [], 0, {}
    def tag(self):
        self.n += 1
        return "k%d" % self.n
    def kernel(self, tcfile, fn, env, dtype=None):
        """The kernel of fn under env, generated and written once: the
        generated code does not depend on the sizes (they are parameters),
        so every case of the same (file, function, knobs) launches the same
        function; one copy a kernel, not one a case, keeps the unit small
        (case2.py: 4 times fewer kernels, the compile 4 times shorter)."""
        key = (tcfile, fn, tuple(sorted(env.items())), dtype)
        if key not in self.seen:
            self.seen[key] = gen(tcfile, fn, env, self.tag(), dtype)
            self.kernels.append(self.seen[key]["text"])
        return self.seen[key]

    def plain(self, tcfile, fn, variants, sizes, ins, outs, off=None, specials=False, cap=None, grid=None, refs=None,
              dtype=None):
        """ins/outs: name -> numel; every variant's outputs compared with the first's bitwise
        (refs: {out: C expression of the reference check} instead, for reductions).
        dtype: the dtype variable T's binding (f32 unbound); f16 or bf16 read
        the same float buffers as 16-bit elements (numel of them: the first
        half of each buffer, whose every bit pattern is some f16/bf16)."""
        off = off or {}
        b = self.body
        b.append("{ /* %s %s %s %s */" % (fn, sizes, off, dtype or ""))
        for name, n in ins.items():
            b.append("float *in_%s = mk(%d, %d, %s);" % (name, n, off.get(name, 0), int(specials)))
        for k, v in sizes.items():
            if k != "*":
                b.append("const idx_t sz_%s = %d;" % (k, v))
        b.append("const idx_t sz_n = %d;" % sizes.get("*", 0))
        b.append("std::vector<float*> res;")
        for vi, env in enumerate(variants):
            k = self.kernel(tcfile, fn, env, dtype)
            g = evalgrid(k["grid"], sizes) if grid is None else grid
            if cap:
                g = min(g, cap[vi] if isinstance(cap, list) else cap)
            b.append("{")
            for name, n in outs.items():
                b.append("float *out_%s = zeros(%d, %d);" % (name, n, off.get("out_" + name, 0)))
            b.append("void *ws = calloc(1, 64 << 20);")
            args = []
            for p in k["params"]:
                half = dtype in ("f16", "bf16") and (p.startswith("in_") or p.startswith("out_"))
                args.append("(unsigned short *)" + p if half else p)
            b.append("launch(%d, %d, %d, %s, [&] { K_%s(%s); });" % (g, k["bx"], k["by"], "true" if k["sync"] else "false",
                     k["tag"], ", ".join(args)))
            for name in outs:
                b.append("res.push_back(out_%s);" % name)
            b.append("}")
        no = len(outs)
        names = list(outs)
        for vi in range(1, len(variants)):
            for j, name in enumerate(names):
                if refs:
                    continue
                b.append('same("%s %s %s v%d %s", res[%d], res[%d], %d);' % (fn, sizes, off, vi, name, j, vi * no + j, outs[name]))
        if refs:
            for vi in range(len(variants)):
                for j, name in enumerate(names):
                    b.append("{ const float *got = res[%d]; %s }" % (vi * no + j, refs[name].replace("VNAME", '"%s %s v%d %s"' % (fn, sizes, vi, name))))
        b.append("}")

    def foreach(self, tcfile, fn, variants, groups, nin, specials=False):
        b = self.body
        b.append("{ /* foreach %s %s */" % (fn, groups))
        b.append("std::vector<float*> res;")
        ins = []
        for gi, (n, off) in enumerate(groups):
            for i in range(nin):
                b.append("float *g%d_in%d = mk(%d, %d, %d);" % (gi, i, n, off, int(specials)))
        for vi, env in enumerate(variants):
            k = self.kernel(tcfile, fn, env)
            NT, CAP = k["fe"]
            order = sorted(k["ptrs"], key=lambda t: int(t[1]))
            b.append("{")
            b.append("static tc_fe_table<%d, %d> fe; fe.dev = nullptr; fe.ngroups = %d;" % (NT, CAP, len(groups)))
            first = 0
            for gi, (n, off) in enumerate(groups):
                b.append("float *g%d_out = zeros(%d, %d); res.push_back(g%d_out);" % (gi, n, off, gi))
                ii = 0
                for name, slot in order:
                    src = "g%d_out" % gi if name.startswith("out_") else "g%d_in%d" % (gi, ii)
                    if not name.startswith("out_"):
                        ii += 1
                    b.append("fe.g[%d].ptr[%s] = (unsigned long long)%s;" % (gi, slot, src))
                b.append("fe.g[%d].n = %d; fe.g[%d].first = %d;" % (gi, n, gi, first))
                first += -(-n // k["chunk"])
            if env.get("TC_EMU_FE_DEV") == "1":  # the table through device memory (fe.dev), as past CAP groups
                b.append("fe.dev = fe.g;")
            b.append("launch(%d, %d, %d, false, [&] { K_%s(fe); });" % (first, k["bx"], k["by"], k["tag"]))
            b.append("}")
        G = len(groups)
        for vi in range(1, len(variants)):
            for gi, (n, off) in enumerate(groups):
                b.append('same("%s group %d (n %d, off %d) v%d", res[%d], res[%d], %d);' % (fn, gi, n, off, vi, gi, vi * G + gi, n))
        b.append("}")

    def write(self, path):
        with open(path, "w") as f:
            f.write('#include "prelude.h"\n')
            for k in self.kernels:
                f.write(k.replace('extern "C" ', "static ") + "\n")
            f.write("int main() {\n" + "\n".join(self.body) + '\nprintf("%d passed, %d failed, %d misaligned vector accesses\\n", npass, nfail, (int)misaligned);\nreturn nfail != 0 || misaligned;\n}\n')
