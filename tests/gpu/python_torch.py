#!/usr/bin/env python3
"""python_torch.py - the Python package (python/tensorc) on a GPU, with
PyTorch (issue 16): run from a checkout whose build/ has libtensorc.so.

    python3 tests/gpu/python_torch.py [--build DIR] [--layers N] [--steps S]
                                      [--calls C] [--no-compile] [--only PARTS]

The package is imported from the checkout (python/ on sys.path; nothing is
installed) and loads BUILD/package/lib/libtensorc.so (or the versioned file
beside it, or $TENSORC_LIB): only that folder of a build is needed.
NVRTC and cuBLAS are found as tests/gpu/run.sh finds them (the toolkit's,
else a pip wheel's under site-packages/nvidia) unless $TENSORC_NVRTC /
$TENSORC_CUBLAS say.  Parts, each printing PASS/FAIL lines:

1. examples: every function of examples/*.tc, on the inputs and shapes of
   tests/numpy/check_examples.py, as torch CUDA tensors, on a non-default
   torch stream (torch.cuda.Stream(), non-blocking): the inputs are written
   on that stream after a 20 ms torch.cuda._sleep, so a kernel enqueued on
   any other stream would read stale inputs and fail.  Each function is
   called twice: with out= (the result must be the very tensor passed, same
   data_ptr; inout parameters keep theirs) and without (outputs allocated as
   torch CUDA tensors of the signature's dtype and shape).  Results are
   checked against torch's own computation of the function (eager PyTorch,
   where this script has it: all but adam, mlp_block, dense_gelu and the
   prelude tour; norm-wise relative error <= 2e-5 for f32, 2e-2 for
   f16/bf16) and against check_examples' float64 NumPy reference (all).
2. adamw: examples/adamw.tc over the 240-tensor set of the benchmark (per
   layer 4 x 1024x1024, 4096x1024, 1024x4096, 4 x 1024; --layers 24: 302M
   parameters), --steps steps, each one Function.foreach call (step 1 on
   plain lists, the rest on tensorc.TensorLists); the profiler must see
   exactly one tensorc kernel in steps 1 and 2; final p, m, v against
   torch.optim.AdamW(foreach=False) on the same data (norm-wise <= 1e-6).
3. overhead: wall-clock time per call through Python (mean of --calls
   calls after warm-up, then one synchronize) of gelu_chain on 1,024
   elements, with out= and with outputs allocated, next to eager PyTorch and
   torch.compile of the same function (--no-compile skips that), and one
   AdamW step over the set (tensorc foreach on lists and on TensorLists vs
   torch.optim.AdamW foreach=True and fused=True).  Printed as "overhead: ..." lines.
4. cupy / jax, if importable: softmax on their arrays, outputs of their kind.

--only examples,adamw,overhead,others runs those parts alone (overhead's
AdamW line needs adamw).

Last line "N passed, M failed"; exit 0 all passed, 1 a failure, 77 no torch
or no GPU.
"""
import argparse
import glob
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "numpy"))

passed = failed = 0


def say(*a):
    print(*a, flush=True)


def result(ok, label, why=""):
    global passed, failed
    passed += bool(ok)
    failed += not ok
    say(f"{'PASS' if ok else 'FAIL'} {label}{': ' + why if why else ''}")


def find_cuda_libs():
    """NVRTC and cuBLAS: as tests/gpu/run.sh looks for them."""
    import ctypes.util
    for env, pat in (("TENSORC_NVRTC", "libnvrtc.so*"), ("TENSORC_CUBLAS", "libcublas.so.1[23]")):
        if os.environ.get(env) or ctypes.util.find_library(pat.split(".so")[0][3:]):
            continue
        cands = sorted(glob.glob("/usr/local/cuda/lib64/" + pat), reverse=True)
        if not cands:
            for sp in sys.path:
                cands += glob.glob(os.path.join(sp, "nvidia", "**", pat), recursive=True)
            cands = sorted((c for c in cands if "builtins" not in c), reverse=True)
        if cands:
            os.environ[env] = cands[0]
            say(f"{env}={cands[0]}")


# --- torch's own versions of the examples ---------------------------------------------

def torch_refs(torch):
    F = torch.nn.functional

    def l2n(x):
        return F.normalize(x, dim=-1, eps=1e-12)

    def adamw(a):
        p, g, m, v = a["p"].clone(), a["g"], a["m"].clone(), a["v"].clone()
        lr, b1, b2, eps, wd, step = (a[k] for k in ("lr", "beta1", "beta2", "eps", "wd", "step"))
        p.mul_(1 - lr * wd)  # torch.optim.AdamW's single-tensor step
        m.lerp_(g, 1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        denom = (v.sqrt() / math.sqrt(1 - b2 ** step)).add_(eps)
        p.addcdiv_(m, denom, value=-lr / (1 - b1 ** step))
        return {"p": p, "m": m, "v": v}

    def rms(x, eps):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps)

    return {
        "gelu_chain": lambda a: {"out": F.gelu(F.relu(a["x"] * 2 + 1) - 0.5) * 1.5},
        "fma4": lambda a: {"out": a["d"] + (a["a"] + a["b"]) * a["c"]},
        "bias_gelu": lambda a: {"out": F.gelu(a["x"] + a["b"])},
        "transpose_add": lambda a: {"out": a["x"].T + a["y"]},
        "softmax": lambda a: {"out": torch.softmax(a["x"], -1)},
        "layernorm": lambda a: {"out": F.layer_norm(a["x"], a["w"].shape, a["w"], a["b"],
                                                    a.get("eps", 1e-5))},
        "rmsnorm_f32": lambda a: {"out": rms(a["x"], 1e-6) * a["g"]},
        "rmsnorm_bf16": lambda a: {"out": rms(a["x"].float(), 1e-6).bfloat16() * a["g"]},
        "rmsnorm_matmul": lambda a: {"out": (rms(a["x"].float(), 1e-6).half() * a["g"]) @ a["w"]},
        "row_sum": lambda a: {"out": a["x"].sum(1)},
        "col_sum": lambda a: {"out": a["x"].sum(0)},
        "full_sum": lambda a: {"out": a["x"].sum()},
        "adamw": adamw,
        "sgd_momentum": lambda a: (lambda buf: {"buf": buf, "p": a["p"] - a["lr"] * buf})(
            0.9 * a["buf"] + a["g"]),
        "lion": lambda a: {
            "p": a["p"] * (1 - a["lr"] * a["wd"])
            - a["lr"] * torch.sign(0.9 * a["m"] + (1 - 0.9) * a["g"]),
            "m": 0.99 * a["m"] + (1 - 0.99) * a["g"]},
        "attention_scores": lambda a: {"out": torch.softmax(
            a["q"] @ a["k"].transpose(-1, -2) / math.sqrt(a["q"].shape[-1]), -1)},
        "masked_softmax": lambda a: {"out": torch.softmax(
            a["x"].masked_fill(~a["mask"], -math.inf), -1)},
        "normalize_rows": lambda a: {"out": F.normalize(a["x"], dim=-1, eps=1e-12)},
        "norm_residual": lambda a: {"out": l2n(a["x"] + a["a"] * l2n(a["h"] - a["x"]))},
        "layernorm_stats": lambda a: (lambda mu, rs: {
            "y": (a["x"] - mu[:, None]) * rs[:, None] * a["w"] + a["b"], "mean": mu,
            "rstd": rs})(a["x"].mean(-1),
                         torch.rsqrt(a["x"].var(-1, unbiased=False) + a.get("eps", 1e-5))),
        "swap_halves": lambda a: {"out": torch.cat([a["x"][:, 4:], a["x"][:, :4]], 1)},
        "strided_rows": lambda a: {"out": (a["x"][1:, ::2] + a["x"][-1, ::2]).flatten()},
        "permute_add": lambda a: {"out": a["x"].permute(2, 0, 1) + a["y"]},
        "transpose_flatten": lambda a: {"out": a["x"].T.reshape(-1)},
        "column_and_row": lambda a: {"first": a["x"][:, 0],
                                     "tiled": a["v"][None, :].expand_as(a["x"]) + a["x"][:, 0:1]},
        "stack2": lambda a: {"out": torch.stack([a["a"], a["b"]])},
    }


def normwise(got, want):
    """max |got - want| / max |want| over want's finite elements; NaN and
    inf must be in the same places (else inf)."""
    import numpy as np
    g = got.double().cpu().numpy().reshape(-1)
    w = (want.double().cpu().numpy() if hasattr(want, "cpu")
         else np.asarray(want, np.float64)).reshape(-1)
    if g.shape != w.shape:
        return math.inf
    for f in (np.isnan, np.isposinf, np.isneginf):
        if not np.array_equal(f(g), f(w)):
            return math.inf
    fin = np.isfinite(w)
    if not fin.any():
        return 0.0
    scale = np.abs(w[fin]).max()
    d = np.abs(g[fin] - w[fin]).max()
    return d / scale if scale > 0 else d


TOL_TORCH = {"f32": 2e-5, "f64": 1e-9, "f16": 2e-2, "bf16": 2e-2, "bool": 0, "i32": 0, "i64": 0}


def part_examples(torch, tensorc, ce):
    import numpy as np
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
           "f64": torch.float64, "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}
    refs = torch_refs(torch)
    progs = {}
    # A context of its own, used on the side stream only: a context that changes
    # streams waits for the device first (tensorc.h), which would hide a kernel
    # enqueued on the wrong stream.
    ctx = tensorc.Context()
    side = torch.cuda.Stream()
    assert side != torch.cuda.default_stream()
    seen = set()
    for file, fn, shapes, make, ref, *_ in ce.CASES:
        if file not in progs:
            progs[file] = ctx.compile_file(os.path.join(ROOT, "examples", file))
        f = progs[file][fn]
        for dims in shapes:
            label = f"examples {fn} " + ",".join(f"{k}={v}" for k, v in dims.items())
            seen.add((file, fn))
            try:
                ins = make(ce.Gen(77), dims)
                want_np = ref({k: np.asarray(v) for k, (v, _) in ins.items()}, dims)
                host = {}
                for k, (v, dt) in ins.items():
                    v = np.asarray(v)
                    if v.ndim == 0 and dt != "bool":
                        host[k] = int(v) if dt in ("i32", "i64") else float(v)
                    else:
                        host[k] = torch.from_numpy(np.ascontiguousarray(v)).to(tdt[dt])
                why = []
                src = {k: (v.cuda() if torch.is_tensor(v) else v) for k, v in host.items()}
                for with_out in (True, False):
                    # the call's tensors, zeroed on the default stream and synchronised
                    dev = {k: (torch.zeros_like(v) if torch.is_tensor(v) else v)
                           for k, v in src.items()}
                    torch.cuda.synchronize()
                    outs = None
                    with torch.cuda.stream(side):
                        # ~20 ms, then the inputs: a kernel enqueued on any other stream
                        # would run first and read zeros
                        torch.cuda._sleep(40_000_000)
                        for k, v in dev.items():
                            if torch.is_tensor(v):
                                v.copy_(src[k])
                        if with_out:
                            shapes_ = f.output_shapes(**dev)
                            outs = {o.name: torch.empty(s, dtype=tdt[dt], device="cuda")
                                    for o, (s, dt) in zip(f.outputs, shapes_) if not o.inout}
                        ptrs = {k: v.data_ptr() for k, v in dev.items() if torch.is_tensor(v)}
                        r = f(**dev, out=outs if with_out else None)
                    side.synchronize()
                    r = r if isinstance(r, tuple) else (r,)
                    got = {}
                    for o, t in zip(f.outputs, r):
                        if not torch.is_tensor(t) or not t.is_cuda:
                            why.append(f"{o.name} is {type(t).__name__}, not a CUDA tensor")
                            continue
                        if o.inout and (t is not dev[o.name] or t.data_ptr() != ptrs[o.name]):
                            why.append(f"inout {o.name} is not the tensor passed")
                        if with_out and not o.inout and (t is not outs[o.name]
                                                         or t.data_ptr() != outs[o.name].data_ptr()):
                            why.append(f"out {o.name} is not the tensor passed in out=")
                        got[o.name] = t
                    for name, (w, dt) in want_np.items():
                        t = got.get(name)
                        if t is None:
                            continue
                        if t.dtype != tdt[dt] or tuple(t.shape) != np.asarray(w).shape:
                            why.append(f"{name}: {t.dtype}{tuple(t.shape)}, expected "
                                       f"{tdt[dt]}{np.asarray(w).shape}")
                            continue
                        e = normwise(t, w)
                        tol = max(ce.TOL.get(dt, 0), TOL_TORCH[dt])
                        if not e <= tol:
                            why.append(f"{name}: vs NumPy f64 {e:.3g} > {tol:g}")
                    if fn in refs:
                        for name, w in refs[fn](src).items():
                            t = got.get(name)
                            if t is None:
                                continue
                            dt = next(o.dtype for o in f.outputs if o.name == name)
                            e = normwise(t, w)
                            if not e <= TOL_TORCH.get(dt, 2e-5):
                                why.append(f"{name}: vs torch {e:.3g} > {TOL_TORCH.get(dt)}")
                result(not why, label, "; ".join(why) or
                       ("vs torch and NumPy" if fn in refs else "vs NumPy (no torch version here)"))
            except Exception as e:  # one case's failure must not stop the others
                result(False, label, f"{type(e).__name__}: {e}")
    # every example function was covered
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.tc"))):
        file = os.path.basename(path)
        p = progs.get(file) or tensorc.compile_file(path)
        for fn in p.functions:
            if (file, fn) not in seen:
                result(False, f"examples {fn}", "no case in check_examples.py")


# --- AdamW over the 240 tensors --------------------------------------------------------------

def tensor_set(layers):
    layer = [(1024, 1024)] * 4 + [(4096, 1024), (1024, 4096)] + [(1024,)] * 4
    return layer * layers


HYPER = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, wd=0.01)


def count_tc_kernels(torch, fn):
    """How many kernels named tc_* the profiler saw while fn ran (None: no profiler)."""
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        names = [e.name for e in prof.events() if e.device_type.name == "CUDA"]
        return sum(1 for n in names if n.startswith("tc_")), len(names)
    except Exception as e:  # pragma: no cover - depends on the machine
        say(f"note: profiler unavailable ({type(e).__name__}: {e})")
        return None


def part_adamw(torch, tensorc, layers, steps):
    shapes = tensor_set(layers)
    gen = torch.Generator().manual_seed(0)
    p0 = [torch.randn(s, generator=gen).cuda() for s in shapes]
    g = [torch.randn(s, generator=gen).cuda() for s in shapes]
    n = sum(t.numel() for t in p0)
    label = f"adamw {len(shapes)} tensors, {n / 1e6:.0f}M parameters, {steps} steps"
    a = tensorc.compile_file(os.path.join(ROOT, "examples", "adamw.tc")).adamw
    p = [t.clone() for t in p0]
    m = [torch.zeros_like(t) for t in p0]
    v = [torch.zeros_like(t) for t in p0]
    ptrs = [t.data_ptr() for t in p]
    launches = []
    lists = [tensorc.TensorList(x) for x in (p, g, m, v)]  # exported once, for steps 2..
    for step in range(1, steps + 1):
        def one():  # step 1 on plain lists, the others on the TensorLists
            return a.foreach(*((p, g, m, v) if step == 1 else lists), step=step, **HYPER)
        if step <= 2:
            c = count_tc_kernels(torch, one)
            if c is not None:
                launches.append(c)
        else:
            one()
    torch.cuda.synchronize()
    tp = [torch.nn.Parameter(t.clone()) for t in p0]
    for t, gg in zip(tp, g):
        t.grad = gg.clone()
    opt = torch.optim.AdamW(tp, lr=HYPER["lr"], betas=(HYPER["beta1"], HYPER["beta2"]),
                            eps=HYPER["eps"], weight_decay=HYPER["wd"], foreach=False)
    for _ in range(steps):
        opt.step()
    torch.cuda.synchronize()
    worst = {"p": 0.0, "m": 0.0, "v": 0.0}
    for i, t in enumerate(tp):
        st = opt.state[t]
        for k, mine, theirs in (("p", p[i], t.detach()), ("m", m[i], st["exp_avg"]),
                                ("v", v[i], st["exp_avg_sq"])):
            d = (mine - theirs).abs().max().item() / max(theirs.abs().max().item(), 1e-30)
            worst[k] = max(worst[k], d)
    why = []
    if any(x > 1e-6 for x in worst.values()):
        why.append("max norm-wise error " + ", ".join(f"{k} {x:.3g}" for k, x in worst.items()))
    if [t.data_ptr() for t in p] != ptrs:
        why.append("p moved")
    for k, (tc, total) in enumerate(launches):
        if tc != 1:
            why.append(f"step {k + 1} ran {tc} tensorc kernels ({total} in all)")
    detail = ("errors " + ", ".join(f"{k} {x:.2g}" for k, x in worst.items())
              + ("".join(f"; step {k + 1}: {tc} tensorc kernel, {total} kernels in all"
                         for k, (tc, total) in enumerate(launches))
                 if launches else "; launches not counted (no profiler)"))
    result(not why, label, "; ".join(why) or detail)
    return a, p, g, m, v


# --- overhead ----------------------------------------------------------------------------------

def per_call(torch, fn, calls):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def part_overhead(torch, tensorc, calls, compile_too, adamw_state):
    gc = tensorc.compile_file(os.path.join(ROOT, "examples", "gelu_chain.tc")).gelu_chain
    F = torch.nn.functional
    x = torch.randn(1024, device="cuda")
    out = torch.empty_like(x)

    def eager(x):
        return F.gelu(F.relu(x * 2 + 1) - 0.5) * 1.5

    rows = [("tensorc, out= given", per_call(torch, lambda: gc(x, out=out), calls)),
            ("tensorc, output allocated", per_call(torch, lambda: gc(x), calls)),
            ("torch eager (5 kernels)", per_call(torch, lambda: eager(x), calls))]
    if compile_too:
        try:
            comp = torch.compile(eager)
            comp(x)
            rows.append(("torch.compile (default mode)", per_call(torch, lambda: comp(x), calls)))
        except Exception as e:  # pragma: no cover - depends on the machine
            say(f"note: torch.compile failed: {type(e).__name__}: {str(e)[:200]}")
    for what, us in rows:
        say(f"overhead: gelu_chain on 1,024 f32, {what}: {us:.1f} us per call "
            f"(mean of {calls} calls)")
    result(all(us < 1e4 for _, us in rows), "overhead measured")
    if adamw_state is None:
        return
    a, p, g, m, v = adamw_state
    steps = 10
    t_tc = per_call(torch, lambda: a.foreach(p, g, m, v, step=2, **HYPER), steps)
    lists = [tensorc.TensorList(x) for x in (p, g, m, v)]
    t_tl = per_call(torch, lambda: a.foreach(*lists, step=2, **HYPER), steps)
    t0 = time.perf_counter()
    for _ in range(steps):
        a.foreach(p, g, m, v, step=2, **HYPER)
    t_host = (time.perf_counter() - t0) / steps * 1e6
    torch.cuda.synchronize()
    tp = [torch.nn.Parameter(t.clone()) for t in p]
    for t, gg in zip(tp, g):
        t.grad = gg
    line = (f"overhead: adamw step over {len(p)} tensors: tensorc foreach {t_tc:.0f} us "
            f"(lists; host time of the call {t_host:.0f} us), {t_tl:.0f} us (TensorLists)")
    for kind in ("foreach", "fused"):
        try:
            opt = torch.optim.AdamW(tp, lr=1e-3, weight_decay=0.01, **{kind: True})
            line += f", torch.optim.AdamW({kind}=True) {per_call(torch, opt.step, steps):.0f} us"
        except Exception as e:  # pragma: no cover
            line += f", torch {kind}: {type(e).__name__}"
    say(line)


# --- other libraries ------------------------------------------------------------------------

def part_others(tensorc):
    import importlib.util
    import numpy as np
    sm = tensorc.compile_file(os.path.join(ROOT, "examples", "softmax.tc")).softmax
    x = np.random.default_rng(0).standard_normal((33, 257)).astype(np.float32)
    e = np.exp(x - x.max(1, keepdims=True))
    want = e / e.sum(1, keepdims=True)
    if importlib.util.find_spec("cupy"):
        try:
            import cupy
            with cupy.cuda.Stream(non_blocking=True):
                y = sm(cupy.asarray(x))
                cupy.cuda.get_current_stream().synchronize()
            ok = isinstance(y, cupy.ndarray) and np.abs(cupy.asnumpy(y) - want).max() < 1e-6
            result(ok, "cupy softmax (on a CuPy stream, output a cupy array)")
        except Exception as ex:
            result(False, "cupy softmax", f"{type(ex).__name__}: {ex}")
    else:
        say("SKIP cupy: not installed")
    if importlib.util.find_spec("jax"):
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        try:
            import jax
            import jax.numpy as jnp
            xs = jax.device_put(jnp.asarray(x), jax.devices("gpu")[0])
            y = sm(xs)
            ok = isinstance(y, jax.Array) and np.abs(np.asarray(y) - want).max() < 1e-6
            result(ok, "jax softmax (output a jax array)")
        except Exception as ex:
            result(False, "jax softmax", f"{type(ex).__name__}: {ex}")
    else:
        say("SKIP jax: not installed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--only", default="examples,adamw,overhead,others")
    args = ap.parse_args()
    parts = set(args.only.split(","))
    try:
        import torch
    except ImportError:
        say("SKIP: no torch")
        return 77
    if not torch.cuda.is_available():
        say("SKIP: torch sees no GPU")
        return 77
    # libtensorc.so, or the file it links to (a copy of the folder may have lost the links)
    libs = sorted(glob.glob(os.path.join(os.path.abspath(args.build), "package", "lib",
                                         "libtensorc.so*")), key=len)
    libs = [x for x in libs if os.path.isfile(x)]
    if not os.environ.get("TENSORC_LIB") and libs:
        os.environ["TENSORC_LIB"] = libs[0]
    find_cuda_libs()
    import tensorc
    import check_examples as ce
    say(f"GPU {torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"tensorc {tensorc.library_version} from {tensorc.library_path}")
    if "examples" in parts:
        part_examples(torch, tensorc, ce)
    state = None
    try:
        if "adamw" in parts:
            state = part_adamw(torch, tensorc, args.layers, args.steps)
    except Exception as e:
        result(False, "adamw", f"{type(e).__name__}: {e}")
    try:
        if "overhead" in parts:
            part_overhead(torch, tensorc, args.calls, not args.no_compile, state)
    except Exception as e:
        result(False, "overhead", f"{type(e).__name__}: {e}")
    state = None
    torch.cuda.empty_cache()
    if "others" in parts:
        part_others(tensorc)
    say(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
