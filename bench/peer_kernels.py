#!/usr/bin/env python3
"""peer_kernels.py - what torch.compile (Inductor, default mode) generates for
tc-bench's memory-bound cases (issue 14): its output code, each Triton
kernel's launch configuration, metadata, PTX, cubin and SASS, and each
kernel's own GPU time.

    python3 -u bench/peer_kernels.py OUTDIR [--quick] [--budget S] [CASE ...]

The cases and their builders are bench/peers.py's (same shapes).  Inductor's
and Triton's caches are fresh, under OUTDIR/_cache, so every kernel is
compiled here and its files can be found.  For each case, OUTDIR/CASE/ gets:

  output_code.py     Inductor's wrapper: the Triton kernels' source, the
                     launch calls (a copy of each wrapper if there are several)
  kernels.json       per kernel: the chosen config (XBLOCK, R0_BLOCK ...,
                     num_warps, num_stages), registers, spills, shared memory,
                     the candidate configs, inductor_meta, triton_meta, and
                     the profiler's grid, block, registers and median time
  NAME.{ptx,cubin,json,ttgir,llir,sass}  the chosen compiled kernel (the json
                     is Triton's metadata); triton/HASH/ all compiled variants
  profile.json       every kernel launch of PROFILE_CALLS calls, from the trace
  error.txt          only when the case failed (the next case runs)

OUTDIR/_cache is removed at the end unless --keep-cache.
OUTDIR/summary.txt is a table of every case's kernels, OUTDIR/summary.json the
same with versions.  Progress goes to stdout.  New cases stop being started
once --budget seconds (default 100) have passed.
"""
import argparse
import gc
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import traceback

CASES_DEFAULT = ["gelu_chain", "bias_gelu", "fma4", "transpose_add", "layernorm", "rmsnorm_f32",
                 "col_sum", "softmax_32768x1024", "layernorm_bwd_16384x4096"]
PROFILE_CALLS = 20
T0 = time.perf_counter()


def say(*a):
    print("[%6.1fs]" % (time.perf_counter() - T0), *a, flush=True)


def jsonable(x, depth=0):
    """A JSON-safe copy (configs and metadata hold odd types)."""
    if depth > 6:
        return str(x)
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in x.items()}
    if isinstance(x, (list, tuple, set)):
        return [jsonable(v, depth + 1) for v in x]
    if hasattr(x, "_asdict"):
        return jsonable(x._asdict(), depth + 1)
    return str(x)


def write(path, data, mode="w"):
    with open(path, mode) as f:
        f.write(data)


def files_under(d):
    out = set()
    for root, _, names in os.walk(d):
        for n in names:
            out.add(os.path.join(root, n))
    return out


def config_dict(cfg):
    """A triton.Config's block sizes and launch settings."""
    d = {}
    try:
        d.update(dict(getattr(cfg, "kwargs", {}) or {}))
    except Exception:  # noqa: BLE001
        pass
    for k in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        v = getattr(cfg, k, None)
        if v is not None:
            d[k] = v
    return jsonable(d)


def find_tool(name):
    """cuobjdump/nvdisasm: on PATH, or the ones Triton ships."""
    p = shutil.which(name)
    if p:
        return p
    try:
        import triton
        for c in glob.glob(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin",
                                        name)):
            return c
    except Exception:  # noqa: BLE001
        pass
    return None


def sass_of(cubin_path):
    tool = find_tool("cuobjdump")
    if tool:
        cmd = [tool, "-sass", cubin_path]
    else:
        tool = find_tool("nvdisasm")
        if not tool:
            return None
        cmd = [tool, "-c", cubin_path]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return r.stdout if r.returncode == 0 else "# %s failed: %s\n" % (cmd, r.stderr[-2000:])
    except Exception as e:  # noqa: BLE001
        return "# %s failed: %s\n" % (cmd, e)


def autotuners(torch):
    """Every live Inductor Triton kernel object (CachingAutotuner), by id."""
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    except Exception:  # noqa: BLE001
        from torch._inductor.triton_heuristics import CachingAutotuner
    import warnings
    warnings.simplefilter("ignore", FutureWarning)  # touching torch.distributed's deprecated names
    out = {}
    for o in gc.get_objects():
        try:  # type(), not isinstance: a dead weakref.proxy raises on __class__
            if issubclass(type(o), CachingAutotuner):
                out[id(o)] = o
        except Exception:  # noqa: BLE001
            pass
    return out


def kernel_name(a):
    meta = getattr(a, "inductor_meta", None) or {}
    n = meta.get("kernel_name")
    if n:
        return n
    fn = getattr(a, "fn", None)
    return getattr(fn, "__name__", None) or getattr(fn, "name", None) or "kernel_%x" % id(a)


def describe(a, case_dir, tri_dir):
    """One kernel's chosen launcher and candidate configs; its compiled files copied."""
    name = kernel_name(a)
    k = {"name": name,
         "candidate_configs": [config_dict(c) for c in (getattr(a, "configs", None) or [])],
         "inductor_meta": jsonable(getattr(a, "inductor_meta", None)),
         "triton_meta": jsonable(getattr(a, "triton_meta", None)),
         "launchers": []}
    for L in getattr(a, "launchers", None) or []:
        d = {"config": config_dict(getattr(L, "config", None))}
        for f in ("n_regs", "n_spills", "shared", "cache_hash"):
            if getattr(L, f, None) is not None:
                d[f] = jsonable(getattr(L, f))
        k["launchers"].append(d)
        # the chosen compiled kernel's files: Triton's cache dir named by cache_hash,
        # else the binary Inductor kept (store_cubin)
        copied = False
        h = d.get("cache_hash")
        hdirs = [os.path.join(tri_dir, h)] if h else []
        if h and not os.path.isdir(hdirs[0]):
            hdirs = [x for x in glob.glob(os.path.join(tri_dir, "**", h), recursive=True) if os.path.isdir(x)]
        if hdirs:
            for p in glob.glob(os.path.join(hdirs[0], "*")):
                ext = os.path.splitext(p)[1]
                if ext in (".ptx", ".cubin", ".json", ".ttgir", ".ttir", ".llir", ".source"):
                    dst = os.path.join(case_dir, name + ext)
                    shutil.copyfile(p, dst)
                    copied = True
                    if ext == ".json":
                        try:
                            with open(p) as f:
                                d["triton_metadata"] = json.load(f)
                        except Exception:  # noqa: BLE001
                            pass
        b = getattr(L, "bin", None)
        if b is not None:  # what the cache dir lacks (Triton 3.6 keeps no .cubin there)
            asm = getattr(b, "asm", {}) or {}
            for ext, key in ((".ptx", "ptx"), (".cubin", "cubin"), (".ttgir", "ttgir"), (".llir", "llir")):
                if key in asm and not os.path.exists(os.path.join(case_dir, name + ext)):
                    v = asm[key]
                    write(os.path.join(case_dir, name + ext), v, "wb" if isinstance(v, bytes) else "w")
            md = getattr(b, "metadata", None)
            if md is not None and not copied:
                d["triton_metadata"] = jsonable(md)
        cub = os.path.join(case_dir, name + ".cubin")
        if os.path.exists(cub):
            s = sass_of(cub)
            if s:
                write(os.path.join(case_dir, name + ".sass"), s)
    return k


def profile_kernels(torch, cf, args, case_dir):
    """Every kernel launch of PROFILE_CALLS calls: name, grid, block, registers, us."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(PROFILE_CALLS):
            cf(*args)
        torch.cuda.synchronize()
    trace = os.path.join(case_dir, "trace.json")
    prof.export_chrome_trace(trace)
    with open(trace) as f:
        ev = json.load(f)
    ev = ev.get("traceEvents", ev) if isinstance(ev, dict) else ev
    launches = []
    for e in ev:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        if str(e.get("cat", "")).lower() not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        a = e.get("args", {}) or {}
        launches.append({"name": e.get("name"), "cat": e.get("cat"), "us": e.get("dur"),
                         "grid": a.get("grid"), "block": a.get("block"),
                         "registers": a.get("registers per thread"),
                         "shared": a.get("shared memory"),
                         "occupancy": a.get("est. achieved occupancy %")})
    os.remove(trace)
    write(os.path.join(case_dir, "profile.json"), json.dumps(launches, indent=1) + "\n")
    per = {}
    for L in launches:
        p = per.setdefault(L["name"], {"calls": 0, "us": [], "grid": L["grid"], "block": L["block"],
                                       "registers": L["registers"], "shared": L["shared"],
                                       "occupancy": L["occupancy"]})
        p["calls"] += 1
        if L["us"] is not None:
            p["us"].append(float(L["us"]))
    for p in per.values():
        p["median_us"] = statistics.median(p["us"]) if p["us"] else None
        p["min_us"] = min(p["us"]) if p["us"] else None
        del p["us"]
    return per


def run_case(torch, peers, name, quick, out, ind_dir, tri_dir):
    case_dir = os.path.join(out, name)
    os.makedirs(case_dir, exist_ok=True)
    shape, small, _, build = peers.CASES[name]
    sizes = small if quick else shape
    fn, args, bytes_min = build(sizes)
    row = {"name": name, "shape": peers.shape_text(sizes), "bytes_min": bytes_min}

    before_ind = files_under(ind_dir)
    before_tri = files_under(tri_dir)
    try:
        before_at = autotuners(torch)  # held, so that no new kernel can reuse an old one's id
    except Exception as e:  # noqa: BLE001
        say("  (kernel objects not listed: %s)" % e)
        before_at = {}
    codes = []
    try:
        from torch._inductor.graph import GraphLowering
        from unittest import mock
        orig = GraphLowering.save_output_code

        def save_output_code(code, *a, **kw):
            codes.append(code)
            return orig(code, *a, **kw) if callable(orig) else None
        patcher = mock.patch.object(GraphLowering, "save_output_code", staticmethod(save_output_code))
    except Exception as e:  # noqa: BLE001
        say("  (no output code hook: %s; the cache's copy is used)" % e)
        patcher = None

    torch._dynamo.reset()
    cf = torch.compile(fn)
    t = time.perf_counter()
    if patcher is not None:
        with patcher:
            cf(*args)
    else:
        cf(*args)
    torch.cuda.synchronize()
    row["first_call_s"] = time.perf_counter() - t
    cf(*args)  # autotuning (if any) done on the first call; this one runs the chosen configs
    torch.cuda.synchronize()
    say("  compiled in %.1f s" % row["first_call_s"])

    # the wrapper: the hook's copy, else the new .py files in Inductor's cache
    new_ind = sorted(files_under(ind_dir) - before_ind)
    if not codes:
        for p in new_ind:
            if p.endswith(".py"):
                with open(p) as f:
                    c = f.read()
                if "async_compile" in c or "def call(" in c:
                    codes.append(c)
    for i, c in enumerate(codes):
        write(os.path.join(case_dir, "output_code.py" if i == 0 else "output_code_%d.py" % i), c)
    row["output_codes"] = len(codes)
    for p in new_ind:  # Inductor's autotune choices
        if p.endswith(".best_config"):
            shutil.copyfile(p, os.path.join(case_dir, os.path.basename(p)))

    # every compiled Triton variant of this case (autotune candidates included)
    new_tri = sorted(files_under(tri_dir) - before_tri)
    for p in new_tri:
        rel = os.path.relpath(p, tri_dir)
        if os.path.splitext(p)[1] in (".ptx", ".cubin", ".json", ".ttgir", ".llir", ".source"):
            dst = os.path.join(case_dir, "triton", rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(p, dst)

    kernels = {}
    try:
        after_at = autotuners(torch)
    except Exception as e:  # noqa: BLE001
        say("  (kernel objects not listed: %s)" % e)
        after_at = {}
    for k, a in after_at.items():
        if k in before_at:
            continue
        try:
            d = describe(a, case_dir, tri_dir)
        except Exception as e:  # noqa: BLE001
            d = {"name": kernel_name(a), "error": "%s: %s" % (type(e).__name__, e)}
        if d["name"] not in kernels or d.get("launchers"):  # one per name, the one that ran
            kernels[d["name"]] = d
    del before_at
    row["kernels"] = [kernels[n] for n in sorted(kernels)]

    try:
        per = profile_kernels(torch, cf, args, case_dir)
        for k in row["kernels"]:
            if k["name"] in per:
                k["profile"] = per.pop(k["name"])
        row["other_launches"] = per  # kernels that are not Triton's (aten, memset, copies)
    except Exception as e:  # noqa: BLE001
        row["profile_error"] = "%s: %s" % (type(e).__name__, e)
    row["inductor_event_us"] = peers.ev_time(lambda: cf(*args), iters=30)
    write(os.path.join(case_dir, "kernels.json"), json.dumps(jsonable(row), indent=1) + "\n")
    del fn, args, cf
    return row


def table(rows):
    lines = ["%-26s %-40s %-22s %4s %3s %5s %6s %-16s %-12s %9s" % (
        "case", "kernel", "config", "warp", "stg", "regs", "smem", "grid", "block", "us")]
    for r in rows:
        if "error" in r:
            lines.append("%-26s ERROR %s" % (r["name"], r["error"]))
            continue
        for k in r.get("kernels", []):
            L = (k.get("launchers") or [{}])[0]
            c = dict(L.get("config") or {})
            warps, stages = c.pop("num_warps", ""), c.pop("num_stages", "")
            p = k.get("profile", {})
            lines.append("%-26s %-40s %-22s %4s %3s %5s %6s %-16s %-12s %9s" % (
                r["name"], k["name"][:40], ",".join("%s=%s" % kv for kv in c.items())[:22], warps, stages,
                L.get("n_regs", p.get("registers", "")), L.get("shared", p.get("shared", "")),
                p.get("grid", ""), p.get("block", ""),
                "%.1f" % p["median_us"] if p.get("median_us") is not None else "-"))
        for n, p in (r.get("other_launches") or {}).items():
            lines.append("%-26s %-40s %-22s %4s %3s %5s %6s %-16s %-12s %9s" % (
                r["name"], "(other) " + str(n)[:32], "", "", "", p.get("registers") or "", "",
                p.get("grid", ""), p.get("block", ""),
                "%.1f" % p["median_us"] if p.get("median_us") is not None else "-"))
        lines.append("%-26s %-40s %s us (all kernels, events), first call %.1f s" % (
            r["name"], "(whole call)", "%.1f" % r.get("inductor_event_us", float("nan")),
            r.get("first_call_s", float("nan"))))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--quick", action="store_true", help="peers.py's small shapes (a smoke test)")
    ap.add_argument("--budget", type=float, default=100.0,
                    help="start no new case after this many seconds (default 100)")
    ap.add_argument("--keep-cache", action="store_true",
                    help="keep OUTDIR/_cache (Inductor's and Triton's caches; removed by default, "
                    "what matters is copied into the case folders)")
    ap.add_argument("cases", nargs="*", help="case names (default: issue 14's nine)")
    a = ap.parse_args()

    out = os.path.abspath(a.outdir)
    ind_dir = os.path.join(out, "_cache", "inductor")
    tri_dir = os.path.join(out, "_cache", "triton")
    os.makedirs(ind_dir, exist_ok=True)
    os.makedirs(tri_dir, exist_ok=True)
    # before torch is imported (peers.py only sets them when unset)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = ind_dir
    os.environ["TRITON_CACHE_DIR"] = tri_dir
    # compile in this process: no worker pool to start, and the kernels' objects are here
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    say("importing torch")
    import torch
    import peers
    try:
        import torch._inductor.config as icfg
        icfg.triton.store_cubin = True  # the launcher keeps its binary (a fallback for the files)
    except Exception as e:  # noqa: BLE001
        say("(store_cubin not set: %s)" % e)

    names = a.cases or CASES_DEFAULT
    unknown = [n for n in names if n not in peers.CASES or peers.CASES[n][3] is None]
    if unknown:
        ap.error("no such case: %s" % " ".join(unknown))
    res = {"tool": "peer_kernels", "torch": torch.__version__, "cuda": torch.version.cuda,
           "quick": a.quick, "cases": []}
    try:
        import triton
        res["triton"] = triton.__version__
    except Exception as e:  # noqa: BLE001
        res["triton"] = "not found (%s)" % e
    if not torch.cuda.is_available():
        say("no GPU: torch.cuda.is_available() is False")
        return 1
    res["device"] = torch.cuda.get_device_name(0)
    say("torch %s, triton %s, %s; %d cases into %s" % (torch.__version__, res["triton"], res["device"],
                                                     len(names), out))
    torch.manual_seed(0)
    for name in names:
        if time.perf_counter() - T0 > a.budget:
            say("%s: skipped (the %.0f s budget is spent)" % (name, a.budget))
            res["cases"].append({"name": name, "error": "skipped: budget"})
            continue
        say("%s ..." % name)
        t = time.perf_counter()
        try:
            row = run_case(torch, peers, name, a.quick, out, ind_dir, tri_dir)
            for k in row["kernels"]:
                p = k.get("profile", {})
                L = (k.get("launchers") or [{}])[0]
                say("  %s %s regs=%s grid=%s block=%s %s us" % (
                    k["name"], L.get("config"), L.get("n_regs"), p.get("grid"), p.get("block"),
                    "%.1f" % p["median_us"] if p.get("median_us") is not None else "?"))
            say("  whole call %.1f us (events)" % row["inductor_event_us"])
        except Exception as e:  # noqa: BLE001
            tb = traceback.format_exc()
            row = {"name": name, "error": "%s: %s" % (type(e).__name__, e), "traceback": tb[-4000:]}
            os.makedirs(os.path.join(out, name), exist_ok=True)
            write(os.path.join(out, name, "error.txt"), tb)
            say("  FAILED: %s" % row["error"])
        row["case_wall_s"] = time.perf_counter() - t
        res["cases"].append(row)
        try:
            torch._dynamo.reset()
            gc.collect()
            torch.cuda.empty_cache()
        except Exception:  # noqa: BLE001
            pass
    write(os.path.join(out, "summary.json"), json.dumps(jsonable(res), indent=1) + "\n")
    txt = table(res["cases"])
    write(os.path.join(out, "summary.txt"), txt)
    print(txt, flush=True)
    if not a.keep_cache:
        shutil.rmtree(os.path.join(out, "_cache"), ignore_errors=True)
    say("done")
    return 0 if not any("error" in r for r in res["cases"]) else 2


if __name__ == "__main__":
    sys.exit(main())
