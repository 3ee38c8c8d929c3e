#!/usr/bin/env python3
"""test_report.py - report.py on made-up inputs, in a temporary directory.

    python3 bench/test_report.py [TC_BENCH FAKE_CUDA_LIB]

1. Every field report.py reads from tc-bench's JSON must be one tc-bench
   writes (a string literal in bench/*.c): the two are only run together on
   a GPU, so a renamed field would otherwise first show up as empty columns.
2. SAMPLE inputs (labelled so in every field that could be mistaken for a
   result, and never written under bench/results) with known answers: the
   ratios, the fraction of the ceiling, the verdicts of the targets, a case
   whose check failed (no figure shown), a child that crashed (its error
   shown), the quick-run banner, a cause from --causes, and the two foreach
   (AdamW) cases' table: TB/s at 28 bytes per parameter, host time, launches,
   the ratios to PyTorch fused and foreach, the host-time target.
3. With a tc-bench binary and tests/fakegpu's library: a real --quick run
   on the fake driver (kernels do not run, so every check must fail) goes
   through report.py, which must show no figure at all; the foreach cases
   must have gone through one tc_run_foreach with one launch per step.

Prints what failed; exit status 1 if anything did.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "report.py")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def fields_in_c():
    names = set()
    for path in glob.glob(os.path.join(HERE, "*.c")):
        with open(path) as f:
            names |= set(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', f.read()))
    return names


def fields_read_by_report():
    with open(REPORT) as f:
        src = f.read()
    return set(re.findall(r'\.get\("([A-Za-z_][A-Za-z0-9_]*)"', src))


PEER_ONLY = {"eager", "inductor", "us", "skipped", "first_call_s", "eager_fused", "eager_forloop",
             "inductor_reduce_overhead", "torch", "triton", "cuda", "full", "cases",
             "sdpa", "inductor_sdpa", "inductor_max_autotune", "complete", "asked", "cut"}
PARAMS_240 = 302088192      # suite.md's 240 tensors


def sample_tc(quick=False):
    def result(name, kind, us, bytes_min, status="ok", shape="N=1,D=1"):
        r = {"name": name, "program": "x.tc", "fn": name, "shape": shape, "kind": kind, "note": None,
             "device": "SAMPLE GPU", "launches_per_step": 1, "bytes_min": bytes_min,
             "check": {"ok": status == "ok", "max_rel_err": 1e-7, "tol": 1e-5, "split": True,
                       "worst": "output 'out' at [3]: got 1, want 2 (SAMPLE)"},
             "status": status, "stage": None if status == "ok" else "check", "error": None}
        if status == "ok":
            r.update({"event_us": us, "wall_us": us * 1.1, "time_us": us, "time_from": "event",
                      "GBps": bytes_min / (us * 1e3)})
        return r

    def foreach(r, groups, host_us):
        r.update({"call": "tc_run_foreach", "groups": groups, "launches_per_step": 1, "host_us": host_us})
        return r

    def runs(ms):
        return {"runs": [{"mode": "cold", "ok": True, "total_ms": ms, "compile_ms": 1, "run_call_ms": ms - 2,
                          "sync_ms": 1}], "median_ms": ms, "ok_runs": 1}
    cases = [
        # 4e8 bytes in 100 us = 4 TB/s; Inductor 120 us -> 1.2x
        {"name": "gelu_chain", "result": result("gelu_chain", "throughput", 100.0, 4e8, shape="*=67108864"),
         "cold": runs(120.0), "warm": runs(1.5)},
        # 3 TB/s, Inductor 90 us -> 0.9x: missed both ways
        {"name": "softmax_16384x4096", "result": result("softmax_16384x4096", "throughput", 100.0, 3e8),
         "cold": runs(200.0), "warm": runs(3.0)},
        {"name": "layernorm", "result": result("layernorm", "throughput", 0, 1e8, status="check_failed"),
         "cold": runs(100.0), "warm": runs(1.0)},
        {"name": "row_sum", "result": {"status": "error", "stage": "child",
                                       "error": "the child process died of signal 11 (SAMPLE)",
                                       "log_tail": "SAMPLE LOG"}, "cold": runs(100.0), "warm": runs(1.0)},
        {"name": "small_softmax", "result": dict(result("small_softmax", "latency", 4.0, 32768),
                                                 replay={"kernels": 1, "calls": 2000, "us": 2.5,
                                                         "us_per_kernel": 2.5, "error": None}),
         "cold": runs(90.0), "warm": runs(1.0)},
        # issue 13's and 15's own targets: 5 us against SDPA's 8 (1.6x) and a 6 us bound: met;
        # a forward + backward pair at 200 ms of cold compile is under its own 250 ms bound
        {"name": "gqa_decode_b1", "result": result("gqa_decode_b1", "throughput", 5.0, 8e6),
         "cold": runs(120.0), "warm": runs(1.0)},
        {"name": "mingru_fwdbwd_B512_T64_H128", "result": result("mingru_fwdbwd_B512_T64_H128", "throughput",
                                                                 130.0, 4e8), "cold": runs(200.0),
         "warm": runs(1.0)},
        # 28 * 302088192 bytes in 2100 us = 4.028 TB/s (101 % of 4 TB/s); host 42 us: met
        {"name": "adamw", "result": foreach(result("adamw", "throughput", 2100.0, 28 * PARAMS_240,
                                                   shape="240 tensors, %d parameters" % PARAMS_240),
                                            240, 42.0), "cold": runs(140.0), "warm": runs(1.0)},
        # 28 * 8192000 bytes in 80 us = 2.867 TB/s (72 %)
        {"name": "adamw_2000x4096", "result": foreach(result("adamw_2000x4096", "throughput", 80.0,
                                                             28 * 8192000,
                                                             shape="2000 tensors, 8192000 parameters"),
                                                      2000, 61.0), "cold": runs(140.0), "warm": runs(1.0)},
    ]
    return {"tool": "tc-bench", "tensorc_version": "0.1.0", "date": "2000-01-01", "time": "SAMPLE",
            "host": "SAMPLE DATA (test_report.py)", "quick": quick, "device": "NVIDIA SAMPLE GPU 80GB",
            "arch": 90, "sm_count": 132, "compile_reps": 1,
            "ceiling": {"copy": {"bytes": 2**30, "GBps": 4000.0, "error": None},
                        "sum": {"bytes": 2**30, "GBps": 3900.0, "status": "ok", "error": None},
                        "ceiling_GBps": 4000.0},
            "cases": cases, "failed_cases": 2}


def sample_peers():
    def adamw(name, foreach, fused, shape, forloop=None):
        r = {"name": name, "shape": shape, "kind": "throughput", "bytes_min": 1,
             "eager": {"us": foreach, "host_us": 300.0, "variant": "foreach"},
             "eager_fused": {"us": fused, "host_us": 25.0},
             "inductor": {"skipped": "SAMPLE: set BENCH_FULL=1"}}
        if forloop:
            r["eager_forloop"] = {"us": forloop, "host_us": 9000.0}
        return r

    def peer(name, eager, ind, kind="throughput", shape="N=1,D=1"):
        return {"name": name, "shape": shape, "kind": kind, "bytes_min": 1,
                "eager": {"us": eager}, "inductor": {"us": ind, "first_call_s": 0.5}}
    return {"tool": "peers", "date": "2000-01-01", "torch": "SAMPLE", "triton": "SAMPLE", "cuda": "SAMPLE",
            "device": "NVIDIA SAMPLE GPU 80GB", "ceiling": {"GBps": 4100.0},
            "cases": [peer("gelu_chain", 700.0, 120.0, shape="*=67108864"),
                      peer("softmax_16384x4096", 200.0, 90.0, shape="N=16384,D=4096"),
                      peer("layernorm", 180.0, 128.0), peer("row_sum", 68.0, 61.0),
                      peer("small_softmax", 7.5, 28.9, kind="latency"),
                      dict(peer("gqa_decode_b1", 20.0, 50.0), sdpa={"us": 8.0}),
                      peer("mingru_fwdbwd_B512_T64_H128", 1640.0, 637.0),
                      adamw("adamw", 6600.0, 2400.0, "240 tensors, %d parameters" % PARAMS_240, forloop=30000.0),
                      adamw("adamw_2000x4096", 400.0, 100.0, "2000 tensors, 8192000 parameters")]}


def run_report(tmp, tc, peers, extra=()):
    tcp, pp = os.path.join(tmp, "tc.json"), os.path.join(tmp, "peers.json")
    with open(tcp, "w") as f:
        json.dump(tc, f)
    args = [sys.executable, REPORT, "--tc", tcp, "--out-dir", os.path.join(tmp, "out")]
    if peers is not None:
        with open(pp, "w") as f:
            json.dump(peers, f)
        args += ["--peers", pp]
    p = subprocess.run(args + list(extra), capture_output=True, text=True)
    check(p.returncode == 0, "report.py exited %d: %s" % (p.returncode, p.stderr))
    path = p.stdout.strip()
    text = open(path).read() if path and os.path.exists(path) else ""
    return path, text


def row(text, name):
    for line in text.splitlines():
        if line.startswith("| %s |" % name):
            return [c.strip() for c in line.strip("|").split("|")]
    return None


def main():
    missing = fields_read_by_report() - fields_in_c() - PEER_ONLY
    check(not missing, "report.py reads fields tc-bench never writes: %s" % sorted(missing))

    with tempfile.TemporaryDirectory() as tmp:
        causes = os.path.join(tmp, "causes.json")
        with open(causes, "w") as f:
            json.dump({"softmax_16384x4096": "SAMPLE CAUSE: two passes over the row"}, f)
        path, text = run_report(tmp, sample_tc(), sample_peers(), ["--causes", causes, "--keep-json"])
        check(path.endswith("2000-01-01-sample-gpu-80gb.md"), "file name from date and device: %s" % path)
        r = row(text, "gelu_chain")
        check(r is not None and r[2] == "100.0" and r[3] == "4.000" and r[4] == "100 %" and r[5] == "1.20"
              and r[6] == "7.00", "gelu_chain row: %s" % r)
        r = row(text, "softmax_16384x4096")
        check(r is not None and r[5] == "0.90" and r[4] == "75 %", "softmax row: %s" % r)
        r = row(text, "layernorm")
        check(r is not None and "check failed" in r[2] and r[3] == "–" and r[5] == "–",
              "a failed check shows no figure: %s" % r)
        r = row(text, "row_sum")
        check(r is not None and "error" in r[2], "a crashed child shows as an error: %s" % r)
        check("signal 11 (SAMPLE)" in text and "SAMPLE LOG" in text, "the crash's message and log are shown")
        r = row(text, "small_softmax")
        check(r is not None and r[2] == "4.00" and r[3] == "2.50" and r[4] == "1" and r[5] == "2.50"
              and r[7] == "28.90" and r[9] == "7.22", "latency row: %s" % r)
        check(re.search(r"\| gelu_chain: at least 1.0x Inductor, 93 % of the ceiling \| met \|", text) is not None,
              "gelu_chain target met")
        check(re.search(r"\| softmax_16384x4096: at least 1.2x Inductor \| \*\*missed\*\* \|", text) is not None,
              "softmax speed-up target missed")
        check(re.search(r"\| gqa_decode_b1: at least 1.25x SDPA, at most 6 µs \| met \| 5.00 µs, 1.60x SDPA \|",
                        text) is not None, "an SDPA target with a time bound, met")
        check(re.search(r"\| mingru_fwdbwd_B512_T64_H128: at least 5.0x Inductor, at most 127 µs \| \*\*missed\*\* "
                        r"\| 130.00 µs, 4.90x Inductor \|", text) is not None, "a case's own target, missed")
        check("mingru_fwdbwd_B512_T64_H128 (200.00 ms" not in text, "a pair's own cold bound (250 ms)")
        check(re.search(r"suite geomean.*over 2 cases", text) is not None,
              "only the suite's cases count in the geomean: %s" % re.findall(r"suite geomean[^\n]*", text))
        check("SAMPLE CAUSE: two passes over the row" in text, "the cause from --causes is shown")
        check(re.search(r"suite geomean.*\*\*missed\*\*", text) is not None, "geomean missed (failed cases)")
        check(re.search(r"small_softmax: at most 4 us per call \| met", text) is not None, "latency target met")
        check(re.search(r"small_softmax: a captured replay at most 2 µs per kernel \| \*\*missed\*\* \| "
                        r"2.50 µs per kernel \(2.50 µs per replay of 1\)", text) is not None,
              "replay target missed, with its figure")
        check(re.search(r"cold compile of one program: at most 150 ms \(250 for a forward \+ backward pair\) \| \*\*missed\*\* \| worst 200.00 ms "
                        r"\(softmax_16384x4096\)", text) is not None, "cold target missed, worst case named")
        check(re.search(r"warm start of one program: at most 2 ms \| \*\*missed\*\* .*above: "
                        r"softmax_16384x4096 \(3.00 ms\)", text) is not None, "warm target missed")
        check("the ratios compare different work" in text, "a shape mismatch with the peers is flagged")
        # the foreach table: case, tensors, us, TB/s, of ceiling, host, launches, fused, x fused,
        # foreach, x foreach, compiled, hosts, err
        sect = text[text.find("## Optimizer steps"):text.find("## Latency cases")]
        r = row(sect, "adamw")
        check(r is not None and r[2] == "2100.0" and r[3] == "4.028" and r[4] == "101 %" and r[5] == "42.0"
              and r[6] == "1" and r[7] == "2400.0" and r[8] == "1.14" and r[9] == "6600.0" and r[10] == "3.14"
              and r[11] == "skipped" and r[12] == "25.0 / 300.0", "adamw foreach row: %s" % r)
        r = row(sect, "adamw_2000x4096")
        check(r is not None and r[2] == "80.00" and r[3] == "2.867" and r[4] == "72 %" and r[5] == "61.0"
              and r[8] == "1.25" and r[10] == "5.00", "adamw_2000x4096 foreach row: %s" % r)
        check(row(sect, "gelu_chain") is None, "only foreach cases in the optimizer table")
        check(re.search(r"\| adamw: host time per step at most 10 µs \(one tc_run_foreach\) \| \*\*missed\*\* "
                        r"\| 42.0 µs", text) is not None, "the host-time target is missed")
        check(re.search(r"\| adamw_2000x4096: host time per step at most 60 µs \(one tc_run_foreach\) \| "
                        r"\*\*missed\*\* \| 61.0 µs", text) is not None, "the 2000-tensor host-time target")
        r = row(text, "adamw")
        check(r is not None and "fused 2400.0 µs, for-loop 30000.0 µs" in r[10], "adamw note names fused and for-loop: %s" % r)
        check(os.path.exists(path[:-3] + ".tensorc.json") and os.path.exists(path[:-3] + ".peers.json"),
              "--keep-json copies the inputs")
        try:
            import matplotlib  # noqa: F401
            check(os.path.exists(path[:-3] + ".png"), "the chart is written")
        except ImportError:
            check("chart skipped: matplotlib is not installed" in text, "a missing matplotlib is said")

        # a peers' run killed midway (peers.py writes after each case): said, with what is missing
        cut = dict(sample_peers(), complete=False, asked=["gelu_chain", "layernorm", "col_sum", "full_sum"])
        cut["cases"] = cut["cases"][:1]
        path, text = run_report(tmp, sample_tc(), cut)
        check("peers.py was cut after 1 of its cases (killed: a time limit?); no peer figures for "
              "layernorm, col_sum, full_sum" in text, "a cut peers' run is said")
        r = row(text, "gelu_chain")
        check(r is not None and r[5] == "1.20", "the cut run's finished cases still count: %s" % r)
        cut["cut"] = "--deadline: 3 cases left"
        path, text = run_report(tmp, sample_tc(), cut)
        check("peers.py was cut after 1 of its cases (--deadline: 3 cases left)" in text, "a deadline's cut is said")

        path, text = run_report(tmp, sample_tc(quick=True), None)
        check(path.endswith("-quick.md") and text.startswith("> **Quick smoke run**"), "quick runs are labelled")
        check("peers: torch not run" in text, "no peers JSON is said")

        path, text = run_report(tmp, {"tool": "tc-bench", "error": "no CUDA driver (SAMPLE)", "date": "2000-01-01"}, None)
        check("tc-bench did not run: no CUDA driver (SAMPLE)" in text, "tc-bench's own error is shown")

        if len(sys.argv) == 3:
            tcb, lib = sys.argv[1], sys.argv[2]
            env = dict(os.environ, TENSORC_LIBCUDA=lib, TENSORC_CUBLAS=lib)
            out = os.path.join(tmp, "fake.json")
            p = subprocess.run([tcb, "--quick", "--compile-reps", "1", "--cases", os.path.join(HERE, "cases"),
                                "-o", out, "small_chain", "softmax_32768x1024", "adamw", "adamw_2000x4096"],
                               capture_output=True, text=True, env=env)
            check(p.returncode == 1, "tc-bench on the fake driver: every check fails, exit 1 (got %d): %s"
                  % (p.returncode, p.stderr[-2000:]))
            d = json.load(open(out))
            check(all(c["result"].get("status") == "check_failed" for c in d["cases"]),
                  "fake driver: all check_failed: %s" % [c["result"].get("status") for c in d["cases"]])
            fe = [c["result"] for c in d["cases"] if c["name"].startswith("adamw")]
            check(len(fe) == 2 and all(r.get("call") == "tc_run_foreach" and r.get("launches_per_step") == 1
                                       for r in fe) and [r.get("groups") for r in fe] == [10, 2000],
                  "fake driver: the foreach cases ran one tc_run_foreach, one launch per step: %s"
                  % [(r.get("call"), r.get("launches_per_step"), r.get("groups")) for r in fe])
            path, text = run_report(tmp, d, None)
            # the throughput and latency tables (4) and the optimizer table (2)
            check(text.count("**check failed**") == 6 and "TB/s | of ceiling" in text,
                  "fake run: failed checks, no figures")
    print("test_report: %s" % ("%d failed" % len(failures) if failures else "all passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
