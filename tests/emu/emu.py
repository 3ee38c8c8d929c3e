#!/usr/bin/env python3
"""emu.py TENSORC FILE FN SHAPE SEED - a function's scan kernels run on the host
against the reference interpreter, without a GPU.

The CUDA that `tensorc compile --emit=cuda` makes for FN is compiled as C++
with shim.h (the helpers the scan kernels use, as in helpers.cuh and
scan.cuh), and each launch of the plan is run block by block: one thread at
a time for the lane path (its shared memory is per-thread columns, no
barrier), or with EMU_MT=1 a std::thread per CUDA thread (shim_mt.h:
barriers and warp shuffles) for the block path of axes over 256.  Inputs are
uniform in [-1, 1); every output must be within 2e-5 (f32) or 1e-12 (f64) of
max(1, max |want|) of `tensorc run --device=cpu`.  glibc's expf/log1pf stand
in for CUDA's, so this checks the kernels' logic (indices, carries, stores,
fusion), not the GPU's rounding: tests/gpu/scans.sh does that.  Only plans
of scan kernels and f32/f64 buffers; prints PASS/FAIL and exits 1 on FAIL."""
import sys, re, subprocess, random, struct, os, tempfile
tc, path, fn, shape, seed = sys.argv[1:6]
sym = {k: int(v) for k, v in (p.split("=") for p in shape.split(","))}
src = subprocess.run([tc, "compile", path, "--fn", fn, "--emit=cuda"], capture_output=True, text=True, check=True).stdout
body = src[src.index("/* ---- fn"):src.index("/*\nlaunch plan")]
plan = src[src.index("launch plan of"):]
bufs, steps = [], []
for l in plan.splitlines():
    m = re.match(r"\s+buffer (\S+)\s+(param|output|temp)\s+(f32|f64)\[(.*?)\]", l)
    if m:
        DT = m.group(3)
        n = 1
        for d in m.group(4).split(","):
            n *= eval(d.strip(), {}, dict(sym))
        bufs.append((m.group(1), m.group(2), n))
    m = re.match(r"\s+step \d+: (\S+)<<<(.*), \[(\d+), 1, 1\]>>>\((.*)\)", l)
    if m:
        steps.append((m.group(1), m.group(2), int(m.group(3)), [a.strip() for a in m.group(4).split(",")]))
    elif "step" in l and "copy" in l:
        sys.exit("copy step: not emulated")
rng = random.Random(int(seed))
work = tempfile.mkdtemp(prefix="tc-emu-")
ES = 8 if DT == "f64" else 4
FC = "d" if ES == 8 else "f"
CT = "double" if ES == 8 else "float"
def wnpy(p, vals, shape):
    hdr = "{'descr': '<%s%d', 'fortran_order': False, 'shape': (%s), }" % ("f", ES, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    hdr += " " * (63 - (len(hdr) + 10) % 64) + "\n"
    with open(p, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + struct.pack("<%d%s" % (len(vals), FC), *vals))
def rnpy(p):
    b = open(p, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    n = (len(b) - 10 - hl) // ES
    return list(struct.unpack("<%d%s" % (n, FC), b[10 + hl:]))
# shapes of params from the signature line of --emit=graph? use the plan's dims
shapes = {}
for l in plan.splitlines():
    m = re.match(r"\s+buffer (\S+)\s+(param|output)\s+f(?:32|64)\[(.*?)\]", l)
    if m:
        shapes[m.group(1)] = [eval(d.strip(), {}, dict(sym)) for d in m.group(3).split(",")]
args = [tc, "run", path, "--fn", fn, "--device=cpu"]
for name, kind, n in bufs:
    if kind == "param":
        vals = [rng.uniform(-1, 1) for _ in range(n)]
        wnpy(f"{work}/{name}.npy", vals, shapes[name])
        args += ["--input", "%s=%s/%s.npy" % (name[3:], work, name)]
    if kind == "output":
        args += ["--output", "%s=%s/ref_%s.npy" % (name[4:], work, name)]
subprocess.run(args, check=True, capture_output=True)
# the host program
MT = os.environ.get("EMU_MT") == "1"
here = os.path.dirname(os.path.abspath(__file__))
cpp = ['#include "%s/shim%s.h"' % (here, "_mt" if MT else ""), body, "int main() {"]
for name, kind, n in bufs:
    cpp.append(f"  {CT} *{name} = ({CT} *)calloc({n} + 1, {ES});")
    if kind == "param":
        cpp.append(f'  {{ FILE *f = fopen("{work}/{name}.npy", "rb"); fseek(f, -{n} * {ES}, SEEK_END); if (fread({name}, {ES}, {n}, f) != {n}) return 2; fclose(f); }}')
    else:
        cpp.append(f"  for (int i = 0; i < {n}; i++) {name}[i] = NAN;")
for k, grid, block, a in steps:
    g = eval(grid.replace("/", "//"), {}, dict(sym))
    aa = [x if x in [b[0] for b in bufs] else str(eval(x, {}, dict(sym))) for x in a]
    cpp.append(f"  gridDim.x = {g}; blockDim.x = {block};")
    if MT:
        cpp.append(f"  for (unsigned b = 0; b < {g}; b++) {{ std::barrier<> br({block}); bar = &br; std::vector<std::barrier<> *> wb; for (unsigned w = 0; w < {block} / 32; w++) {{ wb.push_back(new std::barrier<>(32)); wbar[w] = wb.back(); }} std::vector<std::thread> th; for (unsigned t = 0; t < {block}; t++) th.emplace_back([=] {{ blockIdx.x = b; threadIdx.x = t; {k}({', '.join(aa)}); }}); for (auto &x : th) x.join(); }}")
    else:
        cpp.append(f"  for (unsigned b = 0; b < {g}; b++) for (unsigned t = 0; t < {block}; t++) {{ blockIdx.x = b; threadIdx.x = t; {k}({', '.join(aa)}); }}")
for name, kind, n in bufs:
    if kind == "output":
        cpp.append(f'  {{ FILE *f = fopen("{work}/got_{name}.bin", "wb"); fwrite({name}, {ES}, {n}, f); fclose(f); }}')
cpp.append("  return 0; }")
open(f"{work}/m.cpp", "w").write("\n".join(cpp))
r = subprocess.run([os.environ.get("CXX", "g++"), "-O1", "-w", "-std=c++20", "-pthread", "-o", f"{work}/m", f"{work}/m.cpp"], capture_output=True, text=True)
if r.returncode:
    sys.exit(r.stderr[:3000])
subprocess.run([f"{work}/m"], check=True)
worst = 0.0
ok = True
for name, kind, n in bufs:
    if kind != "output":
        continue
    want = rnpy(f"{work}/ref_{name}.npy")
    b = open(f"{work}/got_{name}.bin", "rb").read()
    got = list(struct.unpack("<%d%s" % (n, FC), b))
    scale = max([1.0] + [abs(w) for w in want if w == w and abs(w) != float("inf")])
    e = 0.0
    for g_, w in zip(got, want):
        if w != w:
            d = 0.0 if g_ != g_ else float("inf")
        elif g_ != g_:
            d = float("inf")
        else:
            d = abs(g_ - w) if abs(w) != float("inf") else (0.0 if g_ == w else float("inf"))
        e = max(e, d)
    rel = e / scale
    worst = max(worst, rel)
    if rel > (1e-12 if ES == 8 else 2e-5):
        ok = False
        print("  %s: max rel err %.3g" % (name, rel))
if os.environ.get("EMU_KEEP"):  # the outputs' bytes, for comparing two builds of a function
    for name, kind, n in bufs:
        if kind == "output":
            subprocess.run(["cp", f"{work}/got_{name}.bin", "%s.%s" % (os.environ["EMU_KEEP"], name)], check=True)
print("%s %s %s %s: max rel err %.3g" % ("PASS" if ok else "FAIL", os.path.basename(path), fn, shape, worst))
subprocess.run(["rm", "-rf", work])
sys.exit(0 if ok else 1)
