#!/usr/bin/env python3
"""adamw_torch.py - tensorc's AdamW (tc_run_foreach, one launch per step)
against torch.optim.AdamW(foreach=False) on the same GPU, same data.

    python3 tests/gpu/adamw_torch.py [--bin RUN_ADAMW] [--build DIR] [--layers N]
                                     [--steps S] [--scalars f64|f32] [--work DIR] [--keep]

1. The tensor set of suite.md (per layer 4 x 1024x1024, 4096x1024, 1024x4096,
   4 x 1024; --layers 24, the default, is 240 tensors, 302M parameters): p and
   g drawn from a normal distribution with a fixed seed (torch.Generator 0,
   on the CPU), written as flat float32 .npy files (every tensor's values one
   after the other).
2. examples/c's run_adamw (--bin; else BUILD/examples/run_adamw, else built
   here with make against --build, default build/, when cuda.h is there)
   runs S steps (default 10), one tc_run_foreach call each over all the
   tensors, from m = v = 0 as torch.optim starts, checks every tensor against
   its own CPU computation in double, and writes the final p, m, v.
3. torch.optim.AdamW(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01,
   foreach=False) takes the same S steps on the same tensors, with the same
   gradients (kept between steps: nothing zeroes them).
4. Per tensor, tensorc's p, m, v against torch's param, exp_avg, exp_avg_sq.
   The relative error is norm-wise: max |tensorc - torch| / max |torch| over
   the tensor's elements (elementwise relative error is meaningless where a
   value cancels to near zero, as p - lr * update can).  Every tensor's must
   be <= 1e-6 for p, m and v.

--scalars picks run_adamw's program: f64 (the default) declares the
hyperparameters f64, so 1 - beta2 and the bias corrections are computed in
double and rounded once, as torch.optim does with its Python floats (and as
examples/adamw.tc declares them); f32 is language.md's adamw as written, whose
1 - beta2 is computed in f32 from beta2
rounded to f32 (0.00099998713 instead of 0.001): its v then differs from
torch's by 1.3e-5 and this check fails on v (p does not show it: from a zero
state the factor cancels in v / (1 - beta2^step)); the script prints that
bias-corrected comparison too, for information.

Needs torch with CUDA and nothing else (no NumPy: .npy files are read and
written by hand).  Data goes to --work (default: a temporary directory,
removed unless --keep): 2 x 1.2 GB in, 3 x 1.2 GB out for 24 layers.
Prints one line per part and a last line "PASS ..." or "FAIL ..."; exit
status 0 pass, 1 fail, 2 usage or a missing program, 77 torch or a GPU
missing (a skip).
"""
import argparse
import ctypes
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
LR, BETAS, EPS, WD = 1e-3, (0.9, 0.999), 1e-8, 0.01
TOL = 1e-6


def say(*a):
    print(*a, flush=True)


def tensor_set(layers):
    layer = [(1024, 1024)] * 4 + [(4096, 1024), (1024, 4096)] + [(1024,)] * 4
    return layer * layers


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# --- .npy without NumPy: float32, C order, flat ----------------------------------

def npy_write(path, t):
    """t: a contiguous float32 CPU tensor, written flat."""
    import torch
    assert t.dtype == torch.float32 and t.is_contiguous() and t.device.type == "cpu"
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % t.numel()
    total = (10 + len(hdr) + 1 + 63) // 64 * 64
    hdr = hdr + " " * (total - 10 - len(hdr) - 1) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode("latin1"))
        f.write(ctypes.string_at(t.data_ptr(), t.numel() * 4))


def npy_read(path):
    """A flat float32 CPU tensor from a .npy file."""
    import torch
    with open(path, "rb") as f:
        pre = f.read(12)
        if pre[:6] != b"\x93NUMPY":
            raise ValueError("%s: not a .npy file" % path)
        if pre[6] == 1:
            hlen, start = struct.unpack("<H", pre[8:10])[0], 10
        else:
            hlen, start = struct.unpack("<I", pre[8:12])[0], 12
        f.seek(start)
        hdr = f.read(hlen).decode("latin1")
        if "'<f4'" not in hdr or "'fortran_order': False" not in hdr:
            raise ValueError("%s: not little-endian float32 in C order: %s" % (path, hdr.strip()))
        shape = [int(x) for x in re.search(r"'shape': \(([^)]*)\)", hdr).group(1).split(",") if x.strip()]
        buf = bytearray(4 * numel(shape))
        if f.readinto(buf) != len(buf):
            raise ValueError("%s: fewer than %d float32 values" % (path, numel(shape)))
    return torch.frombuffer(buf, dtype=torch.float32)


# --- run_adamw --------------------------------------------------------------------

def find_run_adamw(a, work):
    if a.bin:
        return a.bin if os.access(a.bin, os.X_OK) else None
    build = os.path.abspath(a.build)
    for cand in (os.path.join(build, "examples", "run_adamw"), os.path.join(build, "run_adamw")):
        if os.access(cand, os.X_OK):
            return cand
    cuda_h = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include", "cuda.h")
    if not os.path.exists(cuda_h) or not shutil.which("make"):
        say("run_adamw: not found under %s and cannot be built here (no %s or no make); build it "
            "where the CUDA toolkit is: make -C examples/c TENSORC_BUILD=%s OUTDIR=%s/examples"
            % (build, cuda_h, build, build))
        return None
    out = os.path.join(work, "bin")
    p = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "examples", "c"),
                        "TENSORC_BUILD=" + build, "OUTDIR=" + out, out + "/run_adamw"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        say("run_adamw: building it failed:\n" + (p.stdout + p.stderr)[-2000:])
        return None
    return os.path.join(out, "run_adamw")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="the run_adamw program (default: BUILD/examples/run_adamw, or build it)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="tensorc's build directory")
    ap.add_argument("--layers", type=int, default=24, help="layers of 10 tensors (default 24: 240 tensors)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--scalars", choices=("f64", "f32"), default="f64",
                    help="run_adamw's hyperparameter dtype (see the top of this file)")
    ap.add_argument("--work", help="where the .npy files go (default: a temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    if not 1 <= a.layers <= 64 or not 1 <= a.steps <= 1000:
        ap.error("--layers takes 1 to 64, --steps 1 to 1000")

    try:
        import torch
    except ImportError as e:
        say("SKIP adamw_torch: torch is not importable (%s)" % e)
        return 77
    if not torch.cuda.is_available():
        say("SKIP adamw_torch: torch.cuda.is_available() is False: no GPU for torch")
        return 77

    work = a.work or tempfile.mkdtemp(prefix="adamw_torch_")
    os.makedirs(os.path.join(work, "in"), exist_ok=True)
    os.makedirs(os.path.join(work, "out"), exist_ok=True)
    try:
        return compare(a, torch, work)
    finally:
        if not a.keep and not a.work:
            shutil.rmtree(work, ignore_errors=True)
        elif a.keep:
            say("work directory kept: %s" % work)


def compare(a, torch, work):
    shapes = tensor_set(a.layers)
    total = sum(numel(s) for s in shapes)
    say("tensor set: %d tensors, %d parameters; %d steps; torch %s on %s"
        % (len(shapes), total, a.steps, torch.__version__, torch.cuda.get_device_name(0)))
    run_adamw = find_run_adamw(a, work)
    if not run_adamw:
        say("FAIL adamw_torch: no run_adamw program")
        return 2

    gen = torch.Generator().manual_seed(0)
    p0 = torch.randn(total, generator=gen, dtype=torch.float32)
    g0 = torch.randn(total, generator=gen, dtype=torch.float32)
    npy_write(os.path.join(work, "in", "p.npy"), p0)
    npy_write(os.path.join(work, "in", "g.npy"), g0)

    # tensorc
    cmd = [run_adamw, "--layers", str(a.layers), "--steps", str(a.steps), "--scalars", a.scalars,
           "--in", os.path.join(work, "in"), "--out", os.path.join(work, "out")]
    say("$ " + " ".join(cmd))
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    say("run_adamw exited %d after %.1f s; its report:" % (p.returncode, time.perf_counter() - t0))
    for line in p.stdout.splitlines():
        if re.match(r"(device|tensor set|initial|step|tc_run|steps|launches|check|wrote)", line):
            say("  " + line)
    if p.returncode != 0 or "no GPU" in p.stdout:
        say((p.stdout + p.stderr)[-3000:])
        say("FAIL adamw_torch: run_adamw did not run and check its %d steps (exit %d)" % (a.steps, p.returncode))
        return 1
    with open(os.path.join(work, "out", "shapes.txt")) as f:
        got_shapes = f.read().split()
    want_shapes = ["x".join(str(d) for d in s) for s in shapes]
    if got_shapes != want_shapes:
        say("FAIL adamw_torch: run_adamw's tensors are not this script's: %s ..." % got_shapes[:12])
        return 1
    outs = {k: npy_read(os.path.join(work, "out", k + ".npy")) for k in ("p", "m", "v")}

    # torch.optim.AdamW, the for-loop implementation
    params, off = [], 0
    for s in shapes:
        n = numel(s)
        t = torch.nn.Parameter(p0[off:off + n].view(*s).cuda().clone())
        t.grad = g0[off:off + n].view(*s).cuda().clone()
        params.append(t)
        off += n
    opt = torch.optim.AdamW(params, lr=LR, betas=BETAS, eps=EPS, weight_decay=WD, foreach=False)
    for _ in range(a.steps):
        opt.step()
    torch.cuda.synchronize()

    # per tensor, norm-wise
    names = {"p": None, "m": "exp_avg", "v": "exp_avg_sq"}
    worst = {k: (0.0, -1) for k in names}
    bad = {k: 0 for k in names}
    vhat_worst = (0.0, -1)
    b2 = BETAS[1]
    # the bias correction each side applies to v (tensorc's in f32 when its scalars are)
    c2_tc = 1.0 - torch.tensor(b2, dtype=torch.float32).pow(a.steps).item() if a.scalars == "f32" \
        else 1.0 - b2 ** a.steps
    c2_torch = 1.0 - b2 ** a.steps
    off = 0
    for i, (s, prm) in enumerate(zip(shapes, params)):
        n = numel(s)
        st = opt.state[prm]
        for k, key in names.items():
            want = (prm.detach() if key is None else st[key]).reshape(-1).double()
            got = outs[k][off:off + n].cuda().double()
            scale = want.abs().max().item()
            diff = (got - want).abs().max().item()
            if got.isnan().any().item():
                diff = float("inf")
            err = diff / scale if scale > 0 else diff
            if not err <= TOL:
                bad[k] += 1
            if not err <= worst[k][0]:
                worst[k] = (err, i)
            if k == "v":
                gh, wh = got / c2_tc, want / c2_torch
                e = ((gh - wh).abs().max() / wh.abs().max()).item()
                if not e <= vhat_worst[0]:
                    vhat_worst = (e, i)
        off += n

    for k in names:
        err, i = worst[k]
        say("%s vs torch's %s: worst relative error %.3g (tensor %d, %s); %d of %d tensors above %g"
            % (k, names[k] or "param", err, i, want_shapes[i], bad[k], len(shapes), TOL))
    say("(information) v / (1 - beta2^%d), each side's own constant: worst relative error %.3g (tensor %d)"
        % (a.steps, vhat_worst[0], vhat_worst[1]))
    summary = "%d tensors x (p, m, v) after %d steps, --scalars %s: worst p %.2g, m %.2g, v %.2g (tolerance %g)" % (
        len(shapes), a.steps, a.scalars, worst["p"][0], worst["m"][0], worst["v"][0], TOL)
    if any(bad.values()):
        say("FAIL adamw_torch: %s" % summary)
        if a.scalars == "f32" and not bad["p"] and not bad["m"]:
            say("(expected with f32 scalars: see the top of tests/gpu/adamw_torch.py)")
        return 1
    say("PASS adamw_torch: tensorc (tc_run_foreach) matches torch.optim.AdamW(foreach=False): %s" % summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
