#!/usr/bin/env bash
# run.sh - the GPU test suite in one command, on a GPU machine, from a build
# made elsewhere:  tests/gpu/run.sh [BUILD_DIR]   (default: build/)
#
# Prints the GPU and the shared libraries the binaries use, then runs
#   tc-gpu-smoke   the runtime alone, with a handwritten kernel;
#   tc-gpu-api     tc_run from C: 32-bit plans at 2^30 + 1 and 2^31 - 65
#                  elements, 64-bit ones at 2^31 - 3 and 2^31 + 5 (what the
#                  CLI's reference interpreter cannot hold), inout, matmul
#                  (size-1 batch dims too), argmin/argmax over every axis,
#                  repeated calls (api.c's header has the details);
#   tc-gpu-foreach tc_run_foreach from C: 1 to 2,000 groups, every element
#   tc-gpu-determinism  every reduction strategy run to run bitwise equal and
#                  batch invariant; repeated calls and captured replays
#                  (determinism.c's header has the details);
#   suite.py       the generated kernels: every example function at several
#                  shapes, f16/bf16 variants, 200 random programs, each with
#                  `tensorc run --device=cuda --check`, compute-sanitizer
#                  memcheck over a subset, the kernel cache and --bench
#                  (suite.py's header has the details);
#   launch_shapes.sh  the tuned pointwise, whole-tensor, column and tiled
#                  launch shapes at every knob setting (sched.c);
#   scans.sh, gather.py  scans, gather, iota and the class-index losses
#                  against the interpreter at awkward lengths;
#   vjp.sh         the examples' vjp pairs: each forward, then its backward on
#                  the values the forward saved, against the interpreter;
#   colpart.sh     column partials (issue 15): layernorm/rmsnorm backward and a
#                  softmax with a column sum at N = 1 ... 1000 around the 32
#                  rows of a block, and 16384 x 4096, against the interpreter;
#                  the same bits twice (not yet run on a GPU);
#   matmul.sh      the generated matmul kernel against the interpreter at
#                  every layout and dtype, M = 1 ... 200 (forced on it), K
#                  and N off every tile, batched, and the cost model's choice;
#   attention.sh   decode attention as one kernel (issue 13) against the
#                  interpreter: head dims 64 and 128, context 1 ... 8192,
#                  batch 1/3/8, groups 1 and 8, a mask, f16/bf16/f32, and
#                  bitwise determinism (about 2 minutes; quick: f16 only);
#   long_rows.sh   last (after adamw_torch.py): row reductions at lengths 1
#                  to 262144 (clusters on sm_90), deterministic and
#                  batch-invariant (about 3 minutes; quick: about 1.5: the
#                  lengths 8, 4104 and 65544 added by i14rows2 are not yet
#                  timed on a GPU);
# logs everything to ${OUT:-/tmp}/gpu-run.log (the suite's per-job log is
# ${OUT:-/tmp}/gpu-suite/suite.log), and prints "N passed, M failed" last
# (the sum of each part's own last line).  Needs python3 (standard library
# only) and nothing from the network.  TC_GPU_QUICK=1 runs a smaller suite
# (a minute or two); TC_GPU_API_SMALL=1 skips tc-gpu-api's 2^30- and 2^31-element runs
# (~18 GB of GPU memory).  Exit status: 0 all passed, 1 a failure, 3 no GPU.
set -u
build=${1:-build}
log=${OUT:-/tmp}/gpu-run.log
mkdir -p "$(dirname "$log")"
: >"$log"

say() { echo "$@" | tee -a "$log"; }

find_bin() { # the binary under the build dir, wherever CMake put it
    for p in "$build/$1" "$build/tests/$1"; do
        [ -x "$p" ] && { echo "$p"; return 0; }
    done
    return 1
}

say "== GPU"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$log"
else
    say "nvidia-smi not found"
fi

# NVRTC: the toolkit's usual place, else a pip wheel's (PyTorch's).
if [ -z "${TENSORC_NVRTC:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then
    cand=$(ls /usr/local/cuda/lib64/libnvrtc.so* 2>/dev/null | sort -r | head -1)
    [ -z "$cand" ] && cand=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null |
        xargs -r -I{} find {} -name 'libnvrtc.so*' 2>/dev/null | grep -v builtins | sort -r | head -1)
    [ -n "$cand" ] && export TENSORC_NVRTC=$cand && say "TENSORC_NVRTC=$cand"
fi
# cuBLAS (matmul steps) likewise.
if [ -z "${TENSORC_CUBLAS:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcublas\.so\.1[23]'; then
    cand=$(ls /usr/local/cuda/lib64/libcublas.so.1[23] 2>/dev/null | sort -r | head -1)
    [ -z "$cand" ] && cand=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null |
        xargs -r -I{} find {} -name 'libcublas.so.1[23]' 2>/dev/null | sort -r | head -1)
    [ -n "$cand" ] && export TENSORC_CUBLAS=$cand && say "TENSORC_CUBLAS=$cand"
fi

programs=(tc-gpu-smoke tc-gpu-api tc-gpu-foreach tc-gpu-determinism)
bins=()
for prog in "${programs[@]}"; do
    if b=$(find_bin "$prog"); then bins+=("$b"); else say "missing: $prog (build it in $build)"; fi
done
say "== ldd"
for b in "${bins[@]}" $(find_bin tensorc || true); do
    say "$b:"
    ldd "$b" 2>&1 | tee -a "$log"
done

passed=0 failed=0 nogpu=0
[ ${#bins[@]} -lt ${#programs[@]} ] && failed=$((failed + ${#programs[@]} - ${#bins[@]}))
for b in "${bins[@]}"; do
    say "== $b"
    out=$("$b" 2>&1); rc=$?
    echo "$out" | tee -a "$log"
    last=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
    if [ $rc -eq 3 ]; then
        nogpu=1
    elif [ -n "$last" ]; then
        p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
        passed=$((passed + p)); failed=$((failed + f))
        [ $rc -ne 0 ] && [ "$f" -eq 0 ] && failed=$((failed + 1))  # crashed after its summary
    else
        say "$b exited $rc without a summary"
        failed=$((failed + 1))
    fi
done

# The generated kernels, through tensorc itself.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${OUT:-/tmp}/gpu-suite
if [ $nogpu -ne 0 ]; then
    say "no GPU: suite.py not run"
elif ! tc=$(find_bin tensorc); then
    say "missing: tensorc (build it in $build)"
    failed=$((failed + 1))
elif ! command -v python3 >/dev/null; then
    say "python3 not found: the suite (suite.py) cannot run"
    failed=$((failed + 1))
else
    rm -rf "$work"
    say "== suite.py ($tc)"
    python3 "$here/suite.py" "$(realpath "$tc")" "$root" "$work" 2>&1 | tee "$work.out" | tee -a "$log"
    rc=${PIPESTATUS[0]}
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work.out" | tail -1)
    if [ $rc -eq 3 ]; then
        nogpu=1
    elif [ -n "$last" ]; then
        p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
        passed=$((passed + p)); failed=$((failed + f))
        [ $rc -ne 0 ] && [ "$f" -eq 0 ] && failed=$((failed + 1))
    else
        say "suite.py exited $rc without a summary"
        failed=$((failed + 1))
    fi
fi

# The generated matmul kernel at every layout and dtype, M = 1 ... 200,
# K and N off every tile, and the cost model's own choice (tests/gpu/matmul.sh; cd'd to the root: it names
# examples/ relatively).
if [ $nogpu -eq 0 ] && tc=$(find_bin tensorc); then
    say "== matmul.sh"
    (cd "$root" && bash "$here/matmul.sh" "$(dirname "$(realpath "$tc")")" "${OUT:-/tmp}") 2>&1 | tee "$work.matmul.out" | tee -a "$log"
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work.matmul.out" | tail -1)
    if [ -n "$last" ]; then
        p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
        passed=$((passed + p)); failed=$((failed + f))
    else
        say "matmul.sh ended without a summary"
        failed=$((failed + 1))
    fi
fi

# The scans (tests/gpu/scans.sh: T = 1 ... 4097 in every dtype, integers,
# NaN/inf, the minGRU) and gather, iota and the class-index losses
# (tests/gpu/gather.py: row lengths 1 ... 128256, targets at 0 and V-1,
# ignored rows, out-of-range indices, repeated bits), against the
# interpreter.  TC_GPU_QUICK=1: gather.py's random programs from the first
# 300 generated instead of 1500.
if [ $nogpu -eq 0 ] && tc=$(find_bin tensorc); then
    say "== scans.sh"
    (cd "$root" && bash "$here/scans.sh" "$(dirname "$(realpath "$tc")")") 2>&1 | tee "$work.scans.out" | tee -a "$log"
    p=$(grep -c '^PASS ' "$work.scans.out"); f=$(grep -c '^FAIL ' "$work.scans.out")
    [ "$p" -gt 0 ] || f=$((f + 1)) # nothing ran: a failure, not a pass
    say "scans.sh: $p passed, $f failed"
    passed=$((passed + p)); failed=$((failed + f))
    say "== vjp.sh"
    (cd "$root" && bash "$here/vjp.sh" "$(dirname "$(realpath "$tc")")") 2>&1 | tee "$work.vjp.out" | tee -a "$log"
    p=$(grep -c '^PASS ' "$work.vjp.out"); f=$(grep -c '^FAIL ' "$work.vjp.out")
    [ "$p" -gt 0 ] || f=$((f + 1))
    say "vjp.sh: $p passed, $f failed"
    passed=$((passed + p)); failed=$((failed + f))
    say "== colpart.sh"
    (cd "$root" && bash "$here/colpart.sh" "$(dirname "$(realpath "$tc")")") 2>&1 | tee "$work.colpart.out" | tee -a "$log"
    p=$(grep -c '^PASS ' "$work.colpart.out"); f=$(grep -c '^FAIL ' "$work.colpart.out")
    [ "$p" -gt 0 ] || f=$((f + 1))
    say "colpart.sh: $p passed, $f failed"
    passed=$((passed + p)); failed=$((failed + f))
    say "== gather.py"
    gr=1500
    [ "${TC_GPU_QUICK:-0}" = 1 ] && gr=300
    (cd "$root" && TC_GATHER_RANDOM=$gr python3 "$here/gather.py" "$(realpath "$tc")" "$work.gather") 2>&1 |
        tee "$work.gather.out" | tee -a "$log"
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work.gather.out" | tail -1)
    if [ -n "$last" ]; then
        p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
        passed=$((passed + p)); failed=$((failed + f))
    else
        say "gather.py ended without a summary"; failed=$((failed + 1))
    fi
    # the tuned launch shapes at every knob set (tests/gpu/launch_shapes.sh)
    say "== launch_shapes.sh"
    (cd "$root" && bash "$here/launch_shapes.sh" "$(dirname "$(realpath "$tc")")") 2>&1 |
        tee "$work.shapes.out" | tee -a "$log"
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work.shapes.out" | tail -1)
    if [ -n "$last" ]; then
        p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
        passed=$((passed + p)); failed=$((failed + f))
    else
        say "launch_shapes.sh ended without a summary"; failed=$((failed + 1))
    fi
fi

# Decode attention as one kernel (issue 13: fusion's attention rule,
# src/codegen/attn.cuh) against the interpreter, and run to run bitwise
# (tests/gpu/attention.sh).  TC_GPU_QUICK=1: f16 only.
if [ $nogpu -eq 0 ] && tc=$(find_bin tensorc); then
    say "== attention.sh"
    at_dtypes="f16 bf16 f32"
    [ "${TC_GPU_QUICK:-0}" = 1 ] && at_dtypes=f16
    (cd "$root" && TC_ATTN_DTYPES="$at_dtypes" bash "$here/attention.sh" "$(realpath "$tc")") 2>&1 |
        tee "$work.attention.out" | tee -a "$log"
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work.attention.out" | tail -1)
    if [ -n "$last" ]; then
        p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
        passed=$((passed + p)); failed=$((failed + f))
    else
        say "attention.sh ended without a summary"; failed=$((failed + 1))
    fi
fi

# AdamW over suite.md's 240 tensors, one tc_run_foreach per step, against
# torch.optim.AdamW(foreach=False) (issue 6): tests/gpu/adamw_torch.py, when
# python3 has torch.  It takes examples/c's run_adamw from
# BUILD/examples/run_adamw (make -C examples/c TENSORC_BUILD=BUILD
# OUTDIR=BUILD/examples, where cuda.h is), or builds it here if it can.
# TC_GPU_QUICK=1: 2 layers (20 tensors) instead of 24.
adamw_layers=24
[ "${TC_GPU_QUICK:-0}" = 1 ] && adamw_layers=2
if [ $nogpu -ne 0 ]; then
    say "no GPU: adamw_torch.py not run"
elif ! python3 -c 'import torch' >/dev/null 2>&1; then
    say "adamw_torch.py: skipped: python3 cannot import torch"
else
    say "== adamw_torch.py (--layers $adamw_layers)"
    python3 "$here/adamw_torch.py" --build "$build" --layers $adamw_layers 2>&1 | tee "$work.adamw.out" | tee -a "$log"
    rc=${PIPESTATUS[0]}
    if [ $rc -eq 0 ]; then passed=$((passed + 1))
    elif [ $rc -eq 77 ]; then say "adamw_torch.py: skipped"
    else failed=$((failed + 1)); fi
fi

# Long rows (issue 14): five row reductions in f32, f16, bf16 at row lengths
# 1 to 262144 against the interpreter, NaN/inf rows, bitwise determinism and
# batch invariance (tests/gpu/long_rows.sh; sm_90 splits them across
# clusters).  TC_GPU_QUICK=1: its quick form.
if [ $nogpu -ne 0 ]; then
    say "no GPU: long_rows.sh not run"
elif tc=$(find_bin tensorc); then
    say "== long_rows.sh"
    lr_quick=0
    [ "${TC_GPU_QUICK:-0}" = 1 ] && lr_quick=1
    TC_LONG_ROWS_QUICK=$lr_quick bash "$here/long_rows.sh" "$tc" 2>&1 | tee "$work.long_rows.out" | tee -a "$log"
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work.long_rows.out" | tail -1)
    if [ -n "$last" ]; then
        p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
        passed=$((passed + p)); failed=$((failed + f))
    else
        say "long_rows.sh exited without a summary"; failed=$((failed + 1))
    fi
fi

say "log: $log"
say "$passed passed, $failed failed"
[ $failed -ne 0 ] && exit 1
[ $nogpu -ne 0 ] && exit 3
exit 0
