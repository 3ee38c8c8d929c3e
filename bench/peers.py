#!/usr/bin/env python3
"""peers.py - the peers of tc-bench: PyTorch eager and torch.compile (Inductor,
default mode) on the same cases, shapes and measurement rules, in one process
on one GPU.  Adapted from ../shared/bench/peers.py (whose figures suite.md
quotes); the case names are tc-bench's (bench/cases.c), so report.py can join
the two.

    python3 bench/peers.py [-o peers.json] [--quick] [CASE ...]

Measurement (suite.md):
  throughput cases  median of event-timed calls after warm-up, and wall time
                    per call of back-to-back calls synchronized at the end;
                    the lower is reported ("us")
  latency cases     wall time per call of 2000 back-to-back calls
  minimum bytes     each input read once, each output written once (the same
                    count as tc-bench's)
  ceiling           a 1 GiB device-to-device copy, bytes read + written

Inductor's first call (compile included) is recorded with fresh Inductor and
Triton caches.  AdamW (adamw: suite.md's 240 tensors; adamw_2000x4096: 2000
tensors of 4096 elements): eager foreach (torch's default on CUDA), fused
and, for the 240, for-loop, each with the host time of one opt.step() call
(median, the GPU idle when it starts); torch.compile of the step only with
BENCH_FULL=1 (it takes about a minute to compile).  Every case runs in its own try block: an error is
recorded in the JSON and the next case runs.  Progress goes to stderr.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import sys
import tempfile
import time
import traceback

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="ind_"))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tri_"))

import torch  # noqa: E402  (after the cache directories are set)
import torch.nn.functional as F  # noqa: E402

DEV = "cuda"
F32, BF16, F16 = torch.float32, torch.bfloat16, torch.float16
FULL = os.environ.get("BENCH_FULL") == "1"
WALL_TARGET_US = 250e3


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def ev_time(fn, iters=50, warm=5):
    """Median of event-timed calls after warm-up, in us."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)


def wall_per_call(fn, n, warm=20):
    """Wall time per call of n back-to-back calls, synchronized at the end, in us."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


def measure(fn, latency, quick, iters=50):
    """Both clocks; 'us' is the figure the table uses."""
    if latency:
        ev = ev_time(fn, iters=200, warm=20)
        n = 200 if quick else 2000
        wall = wall_per_call(fn, n)
        return {"event_us": ev, "wall_us": wall, "wall_calls": n, "us": wall}
    ev = ev_time(fn, iters=20 if quick else iters)
    n = int(min(1000, max(20, WALL_TARGET_US / max(ev, 1e-3))))
    if quick:
        n = min(n, 50)
    wall = wall_per_call(fn, n, warm=3)
    return {"event_us": ev, "wall_us": wall, "wall_calls": n, "us": min(ev, wall)}


def nbytes(*ts):
    return sum(t.numel() * t.element_size() for t in ts)


# --- the cases: name -> (shape, small shape, latency, builder) ------------------
# A builder takes the sizes and returns (fn, args, bytes_min).

def b_gelu_chain(s):
    x = torch.randn(s["*"], device=DEV)
    return (lambda x: F.gelu(torch.relu(x * 2.0 + 1.0) - 0.5) * 1.5), (x,), 2 * nbytes(x)


def b_fma4(s):
    a, b, c, d = [torch.randn(s["*"], device=DEV) for _ in range(4)]
    return (lambda a, b, c, d: d + (a + b) * c), (a, b, c, d), 5 * nbytes(a)


def b_bias_gelu(s):
    x = torch.randn(s["N"], s["D"], device=DEV)
    b = torch.randn(s["D"], device=DEV)
    return (lambda x, b: F.gelu(x + b)), (x, b), 2 * nbytes(x) + nbytes(b)


def b_transpose_add(s):
    x = torch.randn(s["N"], s["M"], device=DEV)
    y = torch.randn(s["M"], s["N"], device=DEV)
    return (lambda x, y: x.t() + y), (x, y), 3 * nbytes(x)


def b_softmax(s):
    x = torch.randn(s["N"], s["D"], device=DEV)
    return (lambda x: torch.softmax(x, dim=-1)), (x,), 2 * nbytes(x)


def b_logsumexp(s):
    x = torch.randn(s["N"], s["D"], device=DEV)
    return (lambda x: torch.logsumexp(x, dim=-1)), (x,), nbytes(x) + s["N"] * 4


def b_chain4(s):
    x = torch.randn(s["N"], s["D"], device=DEV)

    def fn(x):
        a = x - x.sum(0, keepdim=True)
        b = a - a.sum(1, keepdim=True)
        c = b - b.sum(0, keepdim=True)
        return c - c.sum(1, keepdim=True)
    return fn, (x,), 2 * nbytes(x)


def b_layernorm(s):
    x = torch.randn(s["N"], s["D"], device=DEV)
    w = torch.randn(s["D"], device=DEV)
    b = torch.randn(s["D"], device=DEV)
    d = s["D"]
    return (lambda x, w, b: F.layer_norm(x, (d,), w, b, 1e-5)), (x, w, b), 2 * nbytes(x) + 2 * nbytes(w)


def b_rmsnorm_f32(s):
    x = torch.randn(s["N"], s["D"], device=DEV)
    w = torch.randn(s["D"], device=DEV)
    fn = lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w  # noqa: E731
    return fn, (x, w), 2 * nbytes(x) + nbytes(w)


def b_rmsnorm_bf16(s):
    x = torch.randn(s["N"], s["D"], device=DEV).to(BF16)
    w = torch.randn(s["D"], device=DEV).to(BF16)

    def fn(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(BF16) * w
    return fn, (x, w), 2 * nbytes(x) + nbytes(w)


def b_row_sum(s):
    x = torch.randn(s["N"], s["D"], device=DEV)
    return (lambda x: x.sum(-1)), (x,), nbytes(x) + s["N"] * 4


def b_col_sum(s):
    x = torch.randn(s["N"], s["D"], device=DEV)
    return (lambda x: x.sum(0)), (x,), nbytes(x) + s["D"] * 4


def b_full_sum(s):
    x = torch.randn(s["*"], device=DEV)
    return (lambda x: x.sum()), (x,), nbytes(x) + 4


def b_rmsnorm_matmul(s):
    x = torch.randn(s["M"], s["K"], device=DEV, dtype=F16)
    g = torch.randn(s["K"], device=DEV, dtype=F16)
    w = torch.randn(s["K"], s["N"], device=DEV, dtype=F16)

    def fn(x, g, w):
        xf = x.float()
        y = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).half() * g
        return y @ w
    return fn, (x, g, w), nbytes(x, g, w) + s["M"] * s["N"] * 2


def log_g(x):
    return torch.where(x >= 0, (F.relu(x) + 0.5).log(), -F.softplus(-x))


def b_mingru(s):
    """../shared/bench/peers2.py's formulation: the state prepended as step 0."""
    B, T, H = s["B"], s["T"], s["H"]
    comb = torch.randn(B, T, 3 * H, device=DEV)
    st = torch.rand(B, 1, H, device=DEV) + 0.1

    def fn(combined, state):
        hidden, gate, proj = combined.chunk(3, dim=-1)
        log_coeffs = -F.softplus(gate)
        log_values = -F.softplus(-gate) + log_g(hidden)
        log_values = torch.cat([state.log(), log_values], dim=1)
        log_coeffs = F.pad(log_coeffs, (0, 0, 1, 0))
        a_star = log_coeffs.cumsum(dim=1)
        h = torch.exp(a_star + torch.logcumsumexp(log_values - a_star, dim=1))[:, 1:]
        return torch.sigmoid(proj) * h, h[:, -1:]
    return fn, (comb, st), nbytes(comb, st) + (B * T * H + B * H) * 4


def b_mingru_grad(s):
    """tensorc's mingru_grad: (combined, state, dout, dnext) -> (dcombined,
    dstate), here the forward and torch.autograd.grad (torch saves what its
    backward needs in the forward: ../shared/bench/peers2.py's fwd+bwd)."""
    B, T, H = s["B"], s["T"], s["H"]
    comb = torch.randn(B, T, 3 * H, device=DEV).requires_grad_(True)
    st = (torch.rand(B, 1, H, device=DEV) + 0.1).requires_grad_(True)
    go = torch.randn(B, T, H, device=DEV)
    gn = torch.randn(B, 1, H, device=DEV)
    fwd = b_mingru(s)[0]

    def fn(combined, state, dout, dnext):
        o, n = fwd(combined, state)
        return torch.autograd.grad((o, n), (combined, state), (dout, dnext))
    return fn, (comb, st, go, gn), nbytes(comb, st, go, gn) + nbytes(comb, st)


def b_gated_mlp(s):
    x = torch.randn(s["M"], s["K"], device=DEV, dtype=F16)
    w1 = torch.randn(s["K"], s["N"], device=DEV, dtype=F16) * 0.02
    w3 = torch.randn(s["K"], s["N"], device=DEV, dtype=F16) * 0.02

    def fn(x, w1, w3):
        return F.silu(x @ w1) * (x @ w3)
    return fn, (x, w1, w3), nbytes(x, w1, w3) + s["M"] * s["N"] * 2


def b_lora(s):
    x = torch.randn(s["M"], s["K"], device=DEV, dtype=F16)
    w = torch.randn(s["K"], s["N"], device=DEV, dtype=F16) * 0.02
    a = torch.randn(s["K"], s["R"], device=DEV, dtype=F16) * 0.02
    b = torch.randn(s["R"], s["N"], device=DEV, dtype=F16) * 0.02

    def fn(x, w, a, b):
        return x @ w + (x @ a) @ b
    return fn, (x, w, a, b), nbytes(x, w, a, b) + s["M"] * s["N"] * 2


def b_cross_entropy(s):
    # F.cross_entropy over bf16 logits with i64 targets, mean over rows (the
    # language model's loss); targets in [0, 20) like tc-bench's nonneg i64
    x = torch.randn(s["N"], s["V"], device=DEV).to(BF16)
    t = torch.randint(0, 20, (s["N"],), device=DEV, dtype=torch.int64)
    return (lambda x, t: F.cross_entropy(x, t)), (x, t), nbytes(x, t) + 2


def b_layernorm_bwd(s):
    """aten's layer-norm backward from the saved mean and rstd, as autograd runs it."""
    N, D = s["N"], s["D"]
    x = torch.randn(N, D, device=DEV)
    w = torch.randn(D, device=DEV)
    b = torch.randn(D, device=DEV)
    dout = torch.randn(N, D, device=DEV)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, (D,), w, b, 1e-5)

    def fn(dout, x, mean, rstd, w, b):
        return torch.ops.aten.native_layer_norm_backward(dout, x, (D,), mean, rstd, w, b,
                                                         [True, True, True])
    return fn, (dout, x, mean, rstd, w, b), 3 * nbytes(x) + nbytes(mean, rstd) + 4 * nbytes(w)


def b_rmsnorm_bwd(s):
    """rmsnorm's backward from the saved mean of squares, as written by hand."""
    N, D = s["N"], s["D"]
    x = torch.randn(N, D, device=DEV)
    g = torch.randn(D, device=DEV)
    dout = torch.randn(N, D, device=DEV)
    ms = x.pow(2).mean(-1, keepdim=True)

    def fn(x, g, ms, dout):
        rstd = torch.rsqrt(ms + 1e-6)
        xhat = x * rstd
        gd = dout * g
        dx = rstd * (gd - xhat * (gd * xhat).mean(-1, keepdim=True))
        return dx, (dout * xhat).sum(0)
    return fn, (x, g, ms, dout), 3 * nbytes(x) + nbytes(ms) + 2 * nbytes(g)


def b_mlp_bwd(s):
    """y = x + gelu(x @ w1.T + b1) @ w2.T: its backward from the saved x @ w1.T,
    as autograd runs it (gelu_backward, four products)."""
    N, D, H = s["N"], s["D"], s["H"]
    x = torch.randn(N, D, device=DEV)
    w1 = torch.randn(H, D, device=DEV) * 0.05
    b1 = torch.randn(H, device=DEV)
    w2 = torch.randn(D, H, device=DEV) * 0.05
    dout = torch.randn(N, D, device=DEV)
    m = x @ w1.T

    def fn(x, w1, b1, w2, m, dout):
        h = m + b1
        a = F.gelu(h)
        dw2 = dout.T @ a
        dh = torch.ops.aten.gelu_backward(dout @ w2, h)
        return dout + dh @ w1, dh.T @ x, dh.sum(0), dw2
    return fn, (x, w1, b1, w2, m, dout), nbytes(x, w1, b1, w2, m, dout) + nbytes(x, w1, b1, w2)


def b_gqa_decode(s):
    """../shared/bench/peers2.py's GQA decode: the math formulation (eager and
    torch.compile), with SDPA beside it (run_case)."""
    B, L = s["B"], s["L"]
    q = torch.randn(B, 16, 1, 128, device=DEV, dtype=F16)
    k = torch.randn(B, 2, L, 128, device=DEV, dtype=F16)
    v = torch.randn(B, 2, L, 128, device=DEV, dtype=F16)

    def fn(q, k, v):
        b, hq, _, d = q.shape
        hk = k.shape[1]
        qg = q.view(b, hk, hq // hk, d)
        sc = torch.einsum("bkgd,bknd->bkgn", qg.float(), k.float()) / math.sqrt(d)
        p = torch.softmax(sc, dim=-1)
        return torch.einsum("bkgn,bknd->bkgd", p, v.float()).to(q.dtype).reshape(b, hq, 1, d)
    return fn, (q, k, v), nbytes(q, k, v) + nbytes(q)


def sdpa_gqa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


M64 = 64 << 20
CASES = {
    # name: (shape, small shape (tc-bench's --quick), latency, builder)
    "gelu_chain": ({"*": M64}, {"*": 1 << 20}, False, b_gelu_chain),
    "fma4": ({"*": M64}, {"*": 1 << 20}, False, b_fma4),
    "bias_gelu": ({"N": 8192, "D": 8192}, {"N": 64, "D": 8192}, False, b_bias_gelu),
    "transpose_add": ({"N": 8192, "M": 8192}, {"N": 256, "M": 256}, False, b_transpose_add),
    "softmax_16384x4096": ({"N": 16384, "D": 4096}, {"N": 64, "D": 4096}, False, b_softmax),
    "softmax_32768x1024": ({"N": 32768, "D": 1024}, {"N": 64, "D": 1024}, False, b_softmax),
    "layernorm": ({"N": 16384, "D": 4096}, {"N": 64, "D": 4096}, False, b_layernorm),
    "rmsnorm_f32": ({"N": 16384, "D": 4096}, {"N": 64, "D": 4096}, False, b_rmsnorm_f32),
    "rmsnorm_bf16": ({"N": 16384, "D": 4096}, {"N": 64, "D": 4096}, False, b_rmsnorm_bf16),
    "row_sum": ({"N": 16384, "D": 4096}, {"N": 64, "D": 4096}, False, b_row_sum),
    "col_sum": ({"N": 16384, "D": 4096}, {"N": 256, "D": 4096}, False, b_col_sum),
    "full_sum": ({"*": M64}, {"*": 1 << 20}, False, b_full_sum),
    "small_softmax": ({"N": 32, "D": 128}, {"N": 32, "D": 128}, True, b_softmax),
    "small_chain": ({"*": 4096}, {"*": 4096}, True, b_gelu_chain),
    "small_chain4": ({"N": 32, "D": 128}, {"N": 32, "D": 128}, True, b_chain4),
    "adamw": (None, None, False, None),  # run_adamw
    "adamw_2000x4096": (None, None, False, None),
    "rmsnorm_matmul": ({"M": 16, "K": 4096, "N": 4096}, {"M": 16, "K": 1024, "N": 1024}, False,
                       b_rmsnorm_matmul),
    "mingru_fwd_B512_T64_H128_f32": ({"B": 512, "T": 64, "H": 128}, {"B": 8, "T": 64, "H": 128},
                                     False, b_mingru),
    "mingru_fwd_B1024_T64_H256_f32": ({"B": 1024, "T": 64, "H": 256}, {"B": 8, "T": 64, "H": 256},
                                      False, b_mingru),
    "mingru_fwd_B2048_T64_H512_f32": ({"B": 2048, "T": 64, "H": 512}, {"B": 8, "T": 64, "H": 512},
                                      False, b_mingru),
    # issue 15: backward passes from saved values (bench/cases.c)
    "layernorm_bwd_16384x4096": ({"N": 16384, "D": 4096}, {"N": 64, "D": 4096}, False,
                                 b_layernorm_bwd),
    "rmsnorm_bwd_16384x4096": ({"N": 16384, "D": 4096}, {"N": 64, "D": 4096}, False,
                               b_rmsnorm_bwd),
    "mlp_bwd_N1024_D512_H2048": ({"N": 1024, "D": 512, "H": 2048}, {"N": 64, "D": 512, "H": 2048},
                                 False, b_mlp_bwd),
    "mingru_grad_B512_T64_H128_f32": ({"B": 512, "T": 64, "H": 128}, {"B": 8, "T": 64, "H": 128},
                                      False, b_mingru_grad),
    "mingru_grad_B1024_T64_H256_f32": ({"B": 1024, "T": 64, "H": 256}, {"B": 8, "T": 64, "H": 256},
                                      False, b_mingru_grad),
    "mingru_grad_B2048_T64_H512_f32": ({"B": 2048, "T": 64, "H": 512}, {"B": 8, "T": 64, "H": 512},
                                      False, b_mingru_grad),
    # issue 13: the M sweep, the gated MLP and LoRA at decode shapes
    "rmsnorm_matmul_m1": ({"M": 1, "K": 4096, "N": 4096}, {"M": 1, "K": 1024, "N": 1024}, False,
                          b_rmsnorm_matmul),
    "rmsnorm_matmul_m64": ({"M": 64, "K": 4096, "N": 4096}, {"M": 64, "K": 1024, "N": 1024}, False,
                           b_rmsnorm_matmul),
    "rmsnorm_matmul_m256": ({"M": 256, "K": 4096, "N": 4096}, {"M": 256, "K": 256, "N": 256},
                            False, b_rmsnorm_matmul),
    "rmsnorm_matmul_m1024": ({"M": 1024, "K": 4096, "N": 4096}, {"M": 256, "K": 256, "N": 256},
                             False, b_rmsnorm_matmul),
    "rmsnorm_matmul_m4096": ({"M": 4096, "K": 4096, "N": 4096}, {"M": 256, "K": 256, "N": 256},
                             False, b_rmsnorm_matmul),
    "gated_mlp": ({"M": 16, "K": 4096, "N": 11008}, {"M": 16, "K": 1024, "N": 1024}, False,
                  b_gated_mlp),
    "lora": ({"M": 16, "K": 4096, "N": 4096, "R": 16}, {"M": 16, "K": 1024, "N": 1024, "R": 16}, False,
             b_lora),
    "gqa_decode_b1": ({"B": 1, "L": 8192}, {"B": 1, "L": 512}, False, b_gqa_decode),
    "gqa_decode_b8": ({"B": 8, "L": 8192}, {"B": 8, "L": 512}, False, b_gqa_decode),
    "cross_entropy_4096x128256": ({"N": 4096, "V": 128256}, {"N": 64, "V": 128256}, False,
                                  b_cross_entropy),
    # long rows (issue 14)
    "softmax_1024x65536": ({"N": 1024, "D": 65536}, {"N": 4, "D": 65536}, False, b_softmax),
    "softmax_512x131072": ({"N": 512, "D": 131072}, {"N": 4, "D": 131072}, False, b_softmax),
    "softmax_256x262144": ({"N": 256, "D": 262144}, {"N": 4, "D": 262144}, False, b_softmax),
    "logsumexp_256x262144": ({"N": 256, "D": 262144}, {"N": 4, "D": 262144}, False, b_logsumexp),
    "rmsnorm_bf16_1024x65536": ({"N": 1024, "D": 65536}, {"N": 4, "D": 65536}, False,
                                b_rmsnorm_bf16),
    "rmsnorm_bf16_256x262144": ({"N": 256, "D": 262144}, {"N": 4, "D": 262144}, False,
                                b_rmsnorm_bf16),
}


def shape_text(s):
    """tc-bench's spelling: "N=16384,D=4096"."""
    return ",".join("%s=%d" % kv for kv in s.items())


def run_case(name, quick):
    shape, small, latency, build = CASES[name]
    sizes = small if quick else shape
    fn, args, bytes_min = build(sizes)
    row = {"name": name, "shape": shape_text(sizes), "kind": "latency" if latency else "throughput",
           "bytes_min": bytes_min}
    row["eager"] = measure(lambda: fn(*args), latency, quick)
    torch._dynamo.reset()
    cf = torch.compile(fn)
    t0 = time.perf_counter()
    cf(*args)
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    row["inductor"] = measure(lambda: cf(*args), latency, quick)
    row["inductor"]["first_call_s"] = first
    if name.startswith("gqa_decode"):
        # SDPA eager (the peer to beat) and torch.compile of it, and the math
        # formulation under max-autotune-no-cudagraphs (issue 13's table)
        row["sdpa"] = measure(lambda: sdpa_gqa(*args), latency, quick)
        torch._dynamo.reset()
        cs = torch.compile(sdpa_gqa)
        cs(*args)
        row["inductor_sdpa"] = measure(lambda: cs(*args), latency, quick)
        torch._dynamo.reset()
        cm = torch.compile(fn, mode="max-autotune-no-cudagraphs")
        cm(*args)
        torch.cuda.synchronize()
        row["inductor_max_autotune"] = measure(lambda: cm(*args), latency, quick)
    if latency:  # CUDA graphs: what Inductor offers for launch-bound work (not the table's figure)
        torch._dynamo.reset()
        cg = torch.compile(fn, mode="reduce-overhead")
        cg(*args)
        torch.cuda.synchronize()
        row["inductor_reduce_overhead"] = measure(lambda: cg(*args), latency, quick)
    return row


def adamw_shapes(name, quick):
    """The tensor sets of tc-bench's foreach cases (bench/cases.c, foreach_sizes)."""
    if name == "adamw_2000x4096":
        return [(4096,)] * 2000
    layer = [(1024, 1024)] * 4 + [(4096, 1024), (1024, 4096)] + [(1024,)] * 4
    return layer * (1 if quick else 24)


def adamw_params(shapes):
    ps = [torch.randn(s, device=DEV, requires_grad=True) for s in shapes]
    for p in ps:
        p.grad = torch.randn_like(p)
    return ps


def host_time(fn, iters=20):
    """Median host time of one call, in us, each started with the GPU idle."""
    ts = []
    for _ in range(iters):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(ts)


def run_adamw(name, quick):
    shapes = adamw_shapes(name, quick)
    nel = sum(math.prod(s) for s in shapes)
    row = {"name": name, "shape": "%d tensors, %d parameters" % (len(shapes), nel),  # as tc-bench spells it
           "kind": "throughput", "bytes_min": nel * 4 * 7}  # read p, g, m, v; write p, m, v
    variants = {}
    impls = ("foreach", "fused") if name == "adamw_2000x4096" else ("foreach", "fused", "forloop")
    for impl in impls:
        ps = adamw_params(shapes)
        kw = {"foreach": impl == "foreach", "fused": impl == "fused"} if impl != "forloop" else {"foreach": False}
        opt = torch.optim.AdamW(ps, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, **kw)
        variants[impl] = measure(opt.step, False, quick, iters=20)
        variants[impl]["host_us"] = host_time(opt.step)
        log("  %s eager %s: %.1f us (host %.1f us)" % (name, impl, variants[impl]["us"], variants[impl]["host_us"]))
        del opt, ps
        torch.cuda.empty_cache()
    row["eager"] = dict(variants["foreach"], variant="foreach (torch's default on CUDA)")
    row["eager_fused"] = variants["fused"]
    if "forloop" in variants:
        row["eager_forloop"] = variants["forloop"]
    if not FULL:
        row["inductor"] = {"skipped": "torch.compile of the AdamW step is skipped (about a minute "
                                      "of compilation); set BENCH_FULL=1 to run it"}
        return row
    ps = adamw_params(shapes)
    opt = torch.optim.AdamW(ps, lr=torch.tensor(1e-3, device=DEV), betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01, foreach=True, capturable=True)

    @torch.compile(fullgraph=False)
    def cstep():
        opt.step()
    torch._dynamo.reset()
    t0 = time.perf_counter()
    cstep()
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    row["inductor"] = dict(measure(cstep, False, quick, iters=20), first_call_s=first)
    row["inductor"]["host_us"] = host_time(cstep)
    return row


def ceiling(quick):
    n = (256 << 20) if quick else (1 << 30)
    x = torch.empty(n, dtype=torch.uint8, device=DEV).random_(0, 255)
    y = torch.empty_like(x)
    us = ev_time(lambda: y.copy_(x), iters=20)
    return {"bytes": n, "counted": "bytes read + bytes written", "us": us,
            "GBps": 2 * n / (us * 1e-6) / 1e9}


def write(res, path):
    """res as JSON into path (stdout without one), through a temporary file:
    a run killed midway (a device call's time limit) leaves the cases it
    finished, marked incomplete, for report.py."""
    text = json.dumps(res, indent=1)
    if not path:
        print(text)
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text + "\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", help="write the JSON here (default: stdout)")
    ap.add_argument("--quick", action="store_true", help="tc-bench's small shapes: a smoke test")
    ap.add_argument("--deadline", type=float, default=0,
                    help="a Unix time: no case is begun that the slowest case so far would take past it "
                         "(the JSON then says which were left)")
    ap.add_argument("cases", nargs="*", help="case names (default: all)")
    a = ap.parse_args()
    unknown = [c for c in a.cases if c not in CASES]
    if unknown:
        ap.error("no case %s; the cases are: %s" % (", ".join(unknown), " ".join(CASES)))
    names = a.cases or list(CASES)

    res = {"tool": "peers", "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
           "quick": a.quick, "full": FULL, "cases": [], "complete": False, "asked": names}
    try:
        import triton
        res["triton"] = triton.__version__
    except Exception as e:  # noqa: BLE001
        res["triton"] = "not found (%s)" % e
    res["torch"] = torch.__version__
    res["cuda"] = torch.version.cuda
    if not torch.cuda.is_available():
        res["error"] = "torch.cuda.is_available() is False: no GPU for the peers"
    else:
        res["device"] = torch.cuda.get_device_name(0)
        torch.manual_seed(0)
        try:
            res["ceiling"] = ceiling(a.quick)
            log("peers: copy %.3f TB/s" % (res["ceiling"]["GBps"] / 1e3))
        except Exception as e:  # noqa: BLE001
            res["ceiling"] = {"error": "%s: %s" % (type(e).__name__, e)}
        slowest = 0.0
        for name in names:
            if a.deadline and time.time() + slowest > a.deadline:
                res["cut"] = "--deadline: %d cases left" % (len(names) - len(res["cases"]))
                log("peers: %s" % res["cut"])
                break
            t0 = time.perf_counter()
            try:
                row = run_adamw(name, a.quick) if name.startswith("adamw") else run_case(name, a.quick)
            except Exception as e:  # noqa: BLE001
                row = {"name": name, "error": "%s: %s" % (type(e).__name__, e),
                       "traceback": traceback.format_exc()[-3000:]}
            row["case_wall_s"] = time.perf_counter() - t0
            slowest = max(slowest, row["case_wall_s"])
            res["cases"].append(row)
            log("peers: %s: %s" % (name, row.get("error") or "eager %.2f us, inductor %s" % (
                row["eager"]["us"], "%.2f us" % row["inductor"]["us"] if "us" in row.get("inductor", {})
                else "skipped")))
            torch._dynamo.reset()
            torch.cuda.empty_cache()
            if a.output:
                write(res, a.output)
    res["complete"] = "cut" not in res
    write(res, a.output)
    return 1 if "error" in res else 0


if __name__ == "__main__":
    sys.exit(main())
