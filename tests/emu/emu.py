#!/usr/bin/env python3
"""emu.py TENSORC FILE FN SHAPE[;SHAPE...] SEED [--dtype T=bf16]... [--arch N] [--grid-caps N,...]
[--specials] [--rows]
- a function's whole launch plan run on the host (emu.h), against the
reference interpreter, without a GPU.  Several shapes (';' between them)
share one compile of the host program.

`tensorc compile FILE --fn FN --emit=cuda` (the environment passes through:
TENSORC_MATMUL=generated, TENSORC_MATMUL_LORA=on, the knobs of sched.c) gives
the unit and its launch plan; unit.py readies the unit for emu.h, and a C++
program built here runs the plan as exec.c would: every step whose guard
holds, kernels at the plan's grid (at least 1) and block, cuBLAS steps by a
plain f32-accumulating product, copies; temporaries in their plan slots (a
slot as large as its largest), outputs and temporaries filled with NaN
bytes first, every buffer 256-byte aligned, one workspace that must be all
zero again after every kernel (the plan's promise).  Inputs: floats
uniform in [-1, 1) (rounded to f16/bf16), integers in [-10, 10), bools
50/50, from SEED (--specials: NaN, inf and -inf in each float input of 4 or
more elements); scalars their default, else a value in (0, 1].  The same
inputs go to `tensorc run --device=cpu`, and every output must match it:
integers and bools exactly, floats within the tolerance of `run --check`
(f16/bf16 1e-2, f32 2e-5; f64 1e-12 here) of max(1, max |want|), the
loosest of the plan's float dtypes, NaN where the reference has NaN, the
same infinities.  --grid-caps 1,3 runs the plan again with each generated
matmul's grid capped at each (its work items are grid-strided and each
tile's K slices sum in slice order, whoever is last: the same bits at any
grid) and requires the same bits as at the plan's grid.  --rows: the last
axis of each float input of rank 2 or more is a row, and row r takes
pattern r % 12 (the edges of a reduction over rows: random; all -inf; a NaN
in the middle; +inf last; -inf first and the maximum twice; large values
rising along the row, so a running maximum grows at every element; all
equal; +inf first and NaN last; -inf beside the maximum in the middle and
-inf last; -inf and +inf close together in the middle; NaN first; all -inf
but a finite last element), and an integer input of rank 1 the rows' targets: 0, V - 1, -100
(ignore_index), then a random class, V the floats' last dimension.  --arch N compiles the unit for __CUDA_ARCH__ N (900 by
default; 750 takes the paths without cp.async, mma.sync and clusters).
Foreach kernels run over one group (the whole tensors, as a call without
--groups); outputs written in place alias their inputs.  Prints a PASS or
FAIL line a shape; exit 0 when all pass, 1 on FAIL, 2 when the plan cannot
be emulated.  EMU_KEEP=PREFIX writes each output's bytes (the first
shape's) to PREFIX.NAME (shape i's to PREFIX.NAME.si), to compare two builds
of a function bit for bit (tests/grad/ckpt.sh: with and without scan
checkpointing; tests/emu/rowpipe.sh).  --clusters R: a rows kernel with a
cluster path is launched as runtime/exec.c sizes it (clusters of 8, then
16, blocks of 256 threads or more: emu.h's emu_size), a cluster a row, a
step of TENSORC_ROWS_PIPE ("in a cluster: at most the resident clusters")
at most R clusters, as a device holding R at once.  EMU_KEEP_WORK=1 keeps
the work directory of a passing run too."""
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import unit  # noqa: E402
import rt  # noqa: E402

argv = sys.argv[1:]
opts = {"dtype": [], "arch": "900", "quiet": False, "caps": [], "specials": False, "rows": False, "clusters": 0}
pos = []
i = 0
while i < len(argv):
    a = argv[i]
    if a == "--dtype":
        opts["dtype"].append(argv[i + 1])
        i += 1
    elif a == "--grid-caps":
        opts["caps"] = [int(x) for x in argv[i + 1].split(",")]
        i += 1
    elif a == "--clusters":
        opts["clusters"] = int(argv[i + 1])
        i += 1
    elif a == "--arch":
        opts["arch"] = argv[i + 1]
        i += 1
    elif a == "--specials":
        opts["specials"] = True
    elif a == "--rows":
        opts["rows"] = True
    elif a == "--quiet":
        opts["quiet"] = True
    else:
        pos.append(a)
    i += 1
tc, path, fn, shapes, seed = pos[:5]
shapes = [x for x in shapes.split(";") if x.strip()]
sym = {}
dtflags = sum((["--dtype", d] for d in opts["dtype"]), [])
tail = "%s%s" % ("".join(" " + d for d in opts["dtype"]), "" if opts["arch"] == "900" else " arch " + opts["arch"])
for k in ("TENSORC_MATMUL", "TENSORC_MATMUL_LORA"):
    if os.environ.get(k):
        tail += " %s=%s" % (k, os.environ[k])
label = "%s %s %s%s" % (os.path.basename(path), fn, ";".join(shapes), tail)


def die(code, msg):
    print("%s %s: %s" % ("FAIL" if code == 1 else "SKIP", label, msg))
    sys.exit(code)


r = subprocess.run([tc, "compile", path, "--fn", fn, "--emit=cuda"] + dtflags, capture_output=True, text=True)
if r.returncode:
    die(1, "tensorc compile: " + r.stderr.strip()[:800])
src = r.stdout
plan = src[src.index("launch plan of"):]


def ev(expr):
    expr = re.sub(r"(^|\()\s*\*(?=\s*([-+)/*]|$))", lambda m: m.group(1) + str(sym.get("*", 0)), expr.strip())
    e = re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: str(sym[m.group(1)]) if m.group(1) in sym else m.group(1), expr)
    return eval(e.replace("/", "//"), {"__builtins__": {}}, {})


# ---- the plan (its expressions evaluated per shape) ----
SIZES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i32": 4, "i64": 8, "bool": 1}
CT = {"f16": "unsigned short", "bf16": "unsigned short", "f32": "float", "f64": "double", "i32": "int",
      "i64": "long long", "bool": "unsigned char"}
bufs = {}     # name -> dict(kind, dt, dims (text), slot)
steps = []    # (kind, ...)
guard = {}    # step -> (expr, op, value)
fe_chunk = {} # step -> elements a block of a foreach kernel (one group here: the whole tensors)
grid_cap = {} # step -> a resident grid (TENSORC_MATMUL_RESIDENT): the grid is at most this
pipe = set()  # steps of TENSORC_ROWS_PIPE: at most the resident clusters (--clusters R: R)
for line in plan.splitlines():
    m = re.match(r"\s+buffer (\S+)\s+(\w+)\s+(\w+)(?:\[(.*?)\])?(.*)", line)
    if m:
        slot = re.search(r"slot (\d+)", m.group(5))
        alias = re.search(r"written in place into (\w+)", m.group(5))
        bufs[m.group(1)] = dict(kind=m.group(2), dt=m.group(3),
                                dims=[d for d in (m.group(4) or "").split(",") if d.strip()],
                                slot=int(slot.group(1)) if slot else None, alias=alias.group(1) if alias else None)
        continue
    m = re.match(r"\s+step (\d+) runs when (.*) (>|<=) (-?\d+):", line)
    if m:
        guard[int(m.group(1))] = (m.group(2), m.group(3), int(m.group(4)))
        continue
    m = re.match(r"\s+step (\d+): (\w+)<<<(.*), \[(\d+), (\d+), (\d+)\]>>>\((.*)\)\s*$", line)
    if m:
        steps.append(("kernel", int(m.group(1)), m.group(2), m.group(3), [int(m.group(k)) for k in (4, 5, 6)],
                      [a.strip() for a in unit._split(m.group(7), ",")] if m.group(7).strip() else []))
        continue
    m = re.match(r"\s+step (\d+): matmul (\S+) = (\S+?)(\.T)? @ (\S+?)(\.T)? \(cuBLAS\)", line)
    if m:
        steps.append(["matmul", int(m.group(1)), m.group(2), m.group(3), bool(m.group(4)), m.group(5),
                      bool(m.group(6)), "1", "0", "0", "0"])
        continue
    m = re.match(r"\s+batch (.*), strides \(elements\): a (.*), b (.*), c (.*)$", line)
    if m:
        steps[-1][7:11] = [m.group(1), m.group(2), m.group(3), m.group(4)]
        continue
    m = re.match(r"\s+step (\d+): copy (\S+) -> (\S+)", line)
    if m:
        steps.append(("copy", int(m.group(1)), m.group(2), m.group(3)))
        continue
    m = re.match(r"\s+grid at most (\d+) \(resident blocks\)", line)
    if m:
        grid_cap[steps[-1][1]] = int(m.group(1))
        continue
    if re.match(r"\s+in a cluster: at most the resident clusters", line):
        pipe.add(steps[-1][1])
        continue
    m = re.match(r"\s+foreach: one launch over any number of groups, (\d+) elements a block", line)
    if m:
        fe_chunk[steps[-1][1]] = int(m.group(1))
        continue
    if re.match(r"\s+step \d+", line):
        die(2, "a plan step emu.py does not know: " + line.strip())


if any(b.get("alias") for b in bufs.values()):
    opts["caps"] = []  # outputs written in place: a second run would start from the first's


def dims(name):
    return [ev(d) for d in bufs[name]["dims"]]


def numel(name):
    n = 1
    for d in dims(name):
        n *= d
    return n


def emu_size(ln, per, bmax):
    """runtime/exec.c's row-kernel sizing (emu.h's emu_size): (blocks a cluster, threads a block)"""
    cl, b = 1, 256
    if ln > bmax * per:
        for tries in range(4):
            cap, bm = (8 if tries % 2 == 0 else 16), (512 if tries < 2 and bmax > 512 else bmax)
            b = 256
            while True:
                cl = 1
                while cl < cap and ln > b * per * cl:
                    cl *= 2
                if ln <= b * per * cl or b >= bm:
                    break
                b *= 2
            if ln <= b * per * cl:
                break
        ln = (ln + cl - 1) // cl
    want = (ln + per - 1) // per
    bb = 32
    while bb < bmax and bb < want:
        bb *= 2
    return cl, bb


def runs(st):
    if st[1] not in guard:
        return True
    e, op, v = guard[st[1]]
    return ev(e) > v if op == ">" else ev(e) <= v


# ---- the signature's scalars (a value each, the same for both runs) ----
r = subprocess.run([tc, "compile", path, "--fn", fn, "--emit=graph"] + dtflags, capture_output=True, text=True)
sig = r.stdout.split("\n", 1)[0]
if r.returncode or not sig.startswith("fn "):
    die(1, "tensorc compile --emit=graph: " + r.stderr.strip()[:800])
params = unit._split(sig[sig.index("(") + 1:unit._balanced(sig, sig.index("("))], ",")
rng = random.Random(int(seed))
scalars = {}
for p in params:
    pm = re.match(r"\s*(\w+)\s*:\s*(\w+)\s*(?:=\s*(.*?))?\s*$", p, re.S)
    if pm and "[" not in p:
        name, dt, dflt = pm.groups()
        if dflt is not None:
            v = float(dflt) if dt in ("f16", "bf16", "f32", "f64") else int(dflt) if dt != "bool" else dflt == "true"
        elif dt in ("f16", "bf16", "f32", "f64"):
            v = round(rng.uniform(0.05, 1.0), 4)
        elif dt == "bool":
            v = True
        else:
            v = rng.randint(1, 10)
        scalars[name] = (dt, v)


def f2bf_all(vals):
    """each float rounded to bf16 (to nearest, ties to even, on its f32
    rounding), as a list of 16-bit patterns: one struct call for them all"""
    us = struct.unpack("<%dI" % len(vals), struct.pack("<%df" % len(vals), *vals))
    return [((u + 0x7fff + ((u >> 16) & 1)) >> 16) & 0xffff for u in us]


def bf2f_all(hs):
    """16-bit bf16 patterns as floats (exact)"""
    return struct.unpack("<%df" % len(hs), struct.pack("<%dI" % len(hs), *[h << 16 for h in hs]))


NPY = {"f16": "<f2", "bf16": "<f4", "f32": "<f4", "f64": "<f8", "i32": "<i4", "i64": "<i8", "bool": "|b1"}
PK = {"f16": "e", "f32": "f", "f64": "d", "i32": "i", "i64": "q", "bool": "B"}


def npy_write(p, dt, shape, raw):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        NPY[dt], ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    hdr += " " * (63 - (len(hdr) + 10) % 64) + "\n"
    with open(p, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + raw)


def npy_read(p):
    b = open(p, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    h = b[10:10 + hl].decode()
    descr = re.search(r"'descr': '(.*?)'", h).group(1)
    code = {"<f2": "e", "<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "|b1": "B", "|u1": "B"}[descr]
    n = (len(b) - 10 - hl) // struct.calcsize(code)
    return list(struct.unpack("<%d%s" % (n, code), b[10 + hl:]))


def carg(a):
    if a in bufs:
        return "emu_p{%s}" % a
    if a == "workspace":
        return "emu_p{workspace}"
    if a in scalars:
        dt, v = scalars[a]
        return "(%s)%s" % ({"f16": "float", "bf16": "float"}.get(dt, CT[dt]), int(v) if dt == "bool" else repr(v))
    return "(long long)%d" % ev(a)


def edge_rows(vals, v):
    """--rows: row r of length v takes pattern r % 12 (the docstring's)"""
    inf = float("inf")
    for r in range(len(vals) // v):
        row, k = vals[r * v:(r + 1) * v], r % 12
        if k == 1:
            row = [-inf] * v
        elif k == 2:
            row[v // 2] = float("nan")
        elif k == 3:
            row[v - 1] = inf
        elif k == 4:
            row[0] = -inf
            row[v // 3] = row[v - 1] = 3.0
        elif k == 5:
            row = [-60.0 + 120.0 * i / v + x for i, x in enumerate(row)]
        elif k == 6:
            row = [0.75] * v
        elif k == 7:  # +inf first, NaN last
            row[0], row[v - 1] = inf, float("nan")
        elif k == 8:  # -inf inside a vector beside the maximum, -inf last
            row[v // 2] = -inf
            row[min(v // 2 + 1, v - 1)] = 5.0
            row[v - 1] = -inf
        elif k == 9:  # -inf and +inf inside one vector
            row[v // 2] = -inf
            row[min(v // 2 + 3, v - 1)] = inf
        elif k == 10:  # NaN first
            row[0] = float("nan")
        elif k == 11:  # all -inf but the last, finite (the max turns finite at the end)
            row = [-inf] * (v - 1) + [-2.0]
        vals[r * v:(r + 1) * v] = row
    return vals


work = tempfile.mkdtemp(prefix="tc-emu-")
outs = [n for n, b in bufs.items() if b["kind"] == "output"]
cpp = ['#include "emu.h"', "#line 1 \"unit.cu\"", unit.rewrite(src[:src.index("/*\nlaunch plan")]),
       '#include "%s/plan.h"' % here, "int main(int argc, char **argv) {", "  const int which = atoi(argv[1]);"]
for si, shape in enumerate(shapes):
    sym.clear()
    sym.update({k: int(v) for k, v in (p.split("=") for p in shape.split(",") if p)})
    d = "%s/%d" % (work, si)
    os.mkdir(d)
    # ---- inputs, the interpreter's outputs ----
    args = [tc, "run", path, "--fn", fn, "--device=cpu", "--shape", shape] + dtflags
    rowlen = 1
    for name, b in bufs.items():
        if b["kind"] == "param" and b["dt"] in ("f16", "bf16", "f32", "f64") and len(dims(name)) >= 2:
            rowlen = dims(name)[-1]
    for name, b in bufs.items():
        if b["kind"] != "param":
            continue
        dt, n = b["dt"], numel(name)
        if dt in ("f16", "bf16", "f32", "f64"):
            rnd = rng.random  # rng.uniform(-1, 1)'s values: -1 + 2 * random()
            vals = [-1 + 2 * rnd() for _ in range(n)]
            if opts["specials"] and n >= 4: # NaN, inf and -inf at a few places
                vals[n // 2], vals[n - 1], vals[n // 3] = float("nan"), float("inf"), float("-inf")
            if opts["rows"] and len(dims(name)) >= 2:
                vals = edge_rows(vals, dims(name)[-1])
        elif dt == "bool":
            vals = [rng.random() < 0.5 for _ in range(n)]
        elif opts["rows"] and len(dims(name)) == 1:
            vals = [[0, rowlen - 1, -100][i] if i < 3 else rng.randint(0, rowlen - 1) for i in range(n)]
        else:
            vals = [rng.randint(-10, 9) for _ in range(n)]
        if dt == "bf16":
            dev = f2bf_all(vals)
            raw_npy = struct.pack("<%dI" % n, *[h << 16 for h in dev])  # bf16 widened to f32
            raw_dev = struct.pack("<%dH" % n, *dev)
        else:
            raw_dev = raw_npy = struct.pack("<%d%s" % (n, PK[dt]), *vals)
        npy_write("%s/%s.npy" % (d, name), dt, dims(name), raw_npy)
        open("%s/%s.bin" % (d, name), "wb").write(raw_dev)
        args += ["--input", "%s=%s/%s.npy" % (re.sub(r"^(in|io)_", "", name), d, name)]
    for name, (dt, v) in scalars.items():
        args += ["--input", "%s=%s" % (name, ("true" if v else "false") if dt == "bool" else repr(v))]
    for name in outs:
        args += ["--output", "%s=%s/ref_%s.npy" % (name[4:] if name.startswith("out_") else name, d, name)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        die(1, "the interpreter at %s: %s" % (shape, r.stderr.strip()[:800]))
    # ---- this shape's run in the host program ----
    cpp.append("  if (which == %d) {" % si)
    slots = {}
    for name, b in bufs.items():
        if b["kind"] == "temp" and b["slot"] is not None:
            slots[b["slot"]] = max(slots.get(b["slot"], 0), numel(name) * SIZES[b["dt"]])
    for s_, nb in slots.items():
        cpp.append("    void *slot%d = emu_buf(%d, 0xff);" % (s_, nb))
    for name, b in bufs.items():
        nb = numel(name) * SIZES[b["dt"]]
        if b["kind"] == "param":
            cpp.append('    void *%s = emu_load("%s/%s.bin", %d);' % (name, d, name, nb))
        elif b["kind"] == "temp" and b["slot"] is not None:
            cpp.append("    void *%s = slot%d;" % (name, b["slot"]))
        elif b.get("alias"):
            cpp.append("    void *%s = %s; /* written in place */" % (name, b["alias"]))
        else:
            cpp.append("    void *%s = emu_buf(%d, 0xff);" % (name, nb))
    cpp.append("    unsigned char *workspace = (unsigned char *)emu_buf(EMU_WS, 0);")
    caps = [0] + opts["caps"]
    cpp.append("    static const long long caps[] = {%s};" % ", ".join(map(str, caps)))
    cpp.append("    for (int v = 0; v < %d; v++) {" % len(caps))
    cpp.append("    if (v) {")
    for s_, nb in slots.items():
        cpp.append("      memset(slot%d, 0xff, %d);" % (s_, nb))
    for name, b in bufs.items():
        if b["kind"] == "output" and not b.get("alias"):
            cpp.append("      memset(%s, 0xff, %d);" % (name, numel(name) * SIZES[b["dt"]]))
    cpp.append("    }")
    for st in steps:
        if not runs(st):
            continue
        if st[0] == "kernel":
            _, i, k, grid, block, a = st
            if i in fe_chunk: # a foreach kernel: a table of one group, its buffers in the kernel's slots
                kt = src[src.index(" " + k + "("):]
                kt = kt[:kt.index("\n}\n")]
                nt, cap = re.search(r"tc_fe_table<(\d+), (\d+)>", kt).groups()
                names = [x.strip() for x in a[0][a[0].index("{") + 1:a[0].index("}")].split(",")]
                cpp.append("    static tc_fe_table<%s, %s> fe%d; fe%d.dev = nullptr; fe%d.ngroups = 1;" % (nt, cap, i, i, i))
                for nm, slot in re.findall(r"\*__restrict__ (\w+) = \(.*\)grp\.ptr\[(\d+)\]", kt):
                    if nm not in names:
                        die(2, "foreach kernel %s: buffer %s not in the plan's group" % (k, nm))
                    cpp.append("    fe%d.g[0].ptr[%s] = (unsigned long long)%s;" % (i, slot, nm))
                n = numel(names[0])
                cpp.append("    fe%d.g[0].n = %d; fe%d.g[0].first = 0;" % (i, n, i))
                cpp.append("    emu_launch(dim3(%d), dim3(%d, %d, %d), 1, [&] { %s(%s); });"
                           % (max(1, -(-n // fe_chunk[i])), block[0], block[1], block[2], k,
                              ", ".join(["fe%d" % i] + [carg(x) for x in a[1:]])))
                continue
            kt = src[src.index(" " + k + "("):] if opts["clusters"] else ""
            kt = kt[:kt.find("\n}\n")]
            if "tc_cluster_rank()" in kt:
                # --clusters R: a rows kernel with a cluster path sized as
                # runtime/exec.c sizes it (emu.h's emu_size: clusters of 8,
                # then 16, blocks of 256 or more), a cluster a row, or at
                # most R clusters for a TENSORC_ROWS_PIPE step (its rows loop)
                per = int(re.search(r"len <= (\d+) \* blockDim\.x \* ncl", kt).group(1))
                ln = ev(re.sub(r"\bsz_(\w+)", r"\1", re.search(r"const idx_t rows = .*?, len = (.*?);", kt).group(1)))
                ncl, blk = emu_size(ln, per, block[0])
                nrows = max(1, ev(grid))
                if i in pipe and ncl > 1:
                    nrows = min(nrows, opts["clusters"])
                cpp.append("    emu_launch(dim3(%d), dim3(%d, 1, 1), %d, [&] { %s(%s); });"
                           % (nrows * ncl, blk, ncl, k, ", ".join(carg(x) for x in a)))
                cpp.append('    emu_ws_zero(workspace, "%s");' % k)
                continue
            g = "%d" % max(1, min(ev(grid), grid_cap.get(i, 1 << 31)))
            if k.startswith("tc_matmul_"): # work items grid-strided: any grid, the same bits
                g = "v ? std::min(%s, caps[v]) : %s" % (g + "LL", g)
            cpp.append("    emu_launch(dim3(%s), dim3(%d, %d, %d), 1, [&] { %s(%s); });"
                       % (g, block[0], block[1], block[2], k, ", ".join(carg(x) for x in a)))
            cpp.append('    emu_ws_zero(workspace, "%s");' % k)
        elif st[0] == "matmul":
            _, i, c, a, ta, b, tb, batch, sa, sb, sc = st
            dm, dn = dims(c)[-2:]
            dk = dims(a)[-2] if ta else dims(a)[-1]
            dt = bufs[c]["dt"]
            cpp.append("    emu_blas<%s>((const %s *)%s, (const %s *)%s, (%s *)%s, %d, %d, %d, %d, %d, %d, %d, %d, %d);"
                       % ({"f16": "1", "bf16": "2", "f32": "0", "f64": "3"}[dt], CT[dt], a, CT[dt], b, CT[dt], c,
                          dm, dn, dk, int(ta), int(tb), ev(batch), ev(sa), ev(sb), ev(sc)))
        else:
            _, i, s_, d_ = st
            cpp.append("    memcpy(%s, %s, %d);" % (d_, s_, numel(d_) * SIZES[bufs[d_]["dt"]]))
    for name in outs:
        cpp.append('    emu_save(("%s/got" + std::to_string(v) + "_%s.bin").c_str(), %s, %d);'
                   % (d, name, name, numel(name) * SIZES[bufs[name]["dt"]]))
    cpp.append("    }")
    cpp.append("  }")
cpp.append("  return 0;\n}")
open(work + "/m.cpp", "w").write("\n".join(cpp) + "\n")
cxx = os.environ.get("CXX", "g++")
# emu.h's runtime built once (rt.py: emu_rt.o and the precompiled emu.h),
# the unit alone here
try:
    rtdir, rtobj = rt.runtime(cxx, opts["arch"], rt.base(tc))
except (RuntimeError, OSError) as e:
    die(1, "emu.h's runtime (tests/emu/rt.py): %s" % e)
r = subprocess.run([cxx] + rt.flags(opts["arch"]) + ["-I" + rtdir, "-o", work + "/m", work + "/m.cpp", rtobj],
                   capture_output=True, text=True)
if r.returncode:
    die(1, "the host build (kept in %s): %s" % (work, r.stderr[:3000]))

# ---- run and compare, shape by shape ----
TOL = {"f16": 1e-2, "bf16": 1e-2, "f32": 2e-5, "f64": 1e-12}
tol = max([TOL.get(b["dt"], 0) for b in bufs.values()] + [0])
allok = True
for si, shape in enumerate(shapes):
    sym.clear()
    sym.update({k: int(v) for k, v in (p.split("=") for p in shape.split(",") if p)})
    d = "%s/%d" % (work, si)
    lab = "%s %s %s%s" % (os.path.basename(path), fn, shape, tail)
    r = subprocess.run([work + "/m", str(si)], capture_output=True, text=True)
    if r.returncode:
        print("FAIL %s: the host run (kept in %s): %s" % (lab, work, (r.stdout + r.stderr).strip()[-1500:]))
        allok = False
        continue
    ok, worst, notes = True, 0.0, []
    for name in outs:
        dt, n = bufs[name]["dt"], numel(name)
        want = npy_read("%s/ref_%s.npy" % (d, name))
        raw = open("%s/got0_%s.bin" % (d, name), "rb").read()
        if os.environ.get("EMU_KEEP"):  # the output's bytes, to compare two builds of a function
            open("%s.%s%s" % (os.environ["EMU_KEEP"], name, ".s%d" % si if si else ""), "wb").write(raw)
        for v, cap in enumerate(opts["caps"], 1):
            if open("%s/got%d_%s.bin" % (d, v, name), "rb").read() != raw:
                ok = False
                notes.append("%s: not the same bits with the matmul grid capped at %d" % (name, cap))
        if dt == "bf16":
            got = bf2f_all(struct.unpack("<%dH" % n, raw))
        else:
            got = list(struct.unpack("<%d%s" % (n, PK[dt]), raw))
        if len(want) != n:
            ok = False
            notes.append("%s: %d elements, the reference %d" % (name, n, len(want)))
            continue
        if dt not in TOL:
            bad = [j for j in range(n) if int(got[j]) != int(want[j])]
            if bad:
                ok = False
                notes.append("%s[%d] = %s, want %s (%d differ)" % (name, bad[0], got[bad[0]], want[bad[0]], len(bad)))
            continue
        inf = float("inf")
        scale = max([1.0] + [abs(w) for w in want if w == w and abs(w) != inf])
        # each element's error: |got - want|, 0 where both are NaN or the
        # same infinity, inf where one alone is NaN or an infinity differs
        # (a NaN difference is one of those; the others give their own)
        dds = [abs(g_ - w) for g_, w in zip(got, want)]
        for j in [j for j, dd in enumerate(dds) if dd != dd]:
            g_, w = got[j], want[j]
            dds[j] = 0.0 if g_ == w or (g_ != g_ and w != w) else inf
        e = max(dds, default=0.0)
        at = dds.index(e) if e > 0 else -1  # the first of the largest
        rel = e / scale
        worst = max(worst, rel)
        if rel > tol:
            ok = False
            notes.append("%s[%d] = %.9g, want %.9g (max rel err %.3g, tolerance %g)"
                         % (name, at, got[at], want[at], rel, tol))
    nk = sum(1 for s_ in steps if s_[0] == "kernel" and runs(s_))
    print("%s %s: %d kernel launch(es), max rel err %.3g%s" % ("PASS" if ok else "FAIL", lab, nk, worst,
                                                              "" if ok else "; " + "; ".join(notes)))
    allok &= ok
if allok and not os.environ.get("EMU_KEEP_WORK"):
    subprocess.run(["rm", "-rf", work])
else:
    print("  (kept in %s)" % work)
sys.exit(0 if allok else 1)
