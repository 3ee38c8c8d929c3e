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
#   fastmath.py    the f32 functions TENSORC_FAST_MATH puts on the MUFU (log,
#                  log1p, sigmoid, softplus, silu, logaddexp) in ulps against
#                  double precision, fast and accurate;
#   vjp.sh         the examples' vjp pairs: each forward, then its backward on
#                  the values the forward saved, against the interpreter;
#   matmul.sh      the generated matmul kernel against the interpreter at
#                  every layout and dtype, M = 1 ... 200 (forced on it), K
#                  and N off every tile, batched, and the cost model's choice;
#   attention.sh   decode attention as one kernel (issue 13) against the
#                  interpreter: head dims 64 and 128, context 1 ... 8192,
#                  batch 1/3/8, groups 1 and 8, a mask, f16/bf16/f32, and
#                  bitwise determinism (about 2 minutes; quick: f16 only);
#   colpart.sh     column partials (issue 15, and their knobs): layernorm/rmsnorm backward and a
#                  softmax with a column sum at N = 1 ... 1000 around the 32
#                  rows of a block, and 16384 x 4096, against the interpreter;
#                  the same bits twice (not yet run on a GPU);
#   long_rows.sh   row reductions at lengths 1 to 262144 (clusters on
#                  sm_90), deterministic and batch-invariant (about 3
#                  minutes; quick: about 1.5);
#   adamw_torch.py AdamW through tc_run_foreach against torch's, when python3
#                  has torch;
# the parts from suite.py on one after another (TC_GPU_PARALLEL=N: N at
# once), each into ${OUT:-/tmp}/gpu-suite.NAME.out with its wall time, all
# logged to ${OUT:-/tmp}/gpu-run.log in order at the end (the suite's per-job log is ${OUT:-/tmp}/gpu-suite/suite.log), and prints "N passed, M failed" last
# (the sum of each part's own last line).  Needs python3 (standard library
# only) and nothing from the network.  TC_GPU_QUICK=1 runs a smaller suite,
# still longer than one call: its parts took, on one H200 (sessions 19-20,
# seconds): suite 126, matmul 235, scans 178 (4 jobs), fastmath 24, vjp 49,
# gather 88, adamw 12, colpart past 110, launch shapes ~250 and attention
# ~300-490 (three parts at once), long_rows past 525 (part 1 alone 417;
# since session 21 its quick part 1 has ~300 checks fewer and parts 2-4
# run side by side: not yet timed); session 21, three at once: suite 346,
# gather 284: about 2000 in all, past a session's device time; plan the
# calls by part.
# TC_GPU_API_SMALL=1 skips tc-gpu-api's 2^30- and 2^31-element runs
# (~18 GB of GPU memory).  TC_GPU_PARTS="bins colpart vjp" runs only those
# (bins: the four test binaries; the parts: suite matmul scans fastmath vjp
# colpart gather shapes attention long_rows adamw), so that a suite longer than
# one call of a GPU machine can be split over calls.  Exit status: 0 all passed, 1 a failure, 3 no GPU.
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

# summary NAME RC < OUTPUT: p and f from the output's last "N passed, M
# failed" line; none is a failure, and so is a non-zero exit after a clean
# summary (a crash after it)
summary() {
    local last
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
    if [ -n "$last" ]; then
        p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
        [ "$2" -ne 0 ] && [ "$f" -eq 0 ] && f=1
    else
        say "$1 exited $2 without a summary"; p=0 f=1
    fi
    return 0
}

passed=0 failed=0 nogpu=0
# want NAME: TC_GPU_PARTS names it (or is unset)
want() { case " ${TC_GPU_PARTS:-all} " in *" all "* | *" $1 "*) return 0 ;; *) return 1 ;; esac; }
parallel=${TC_GPU_PARALLEL:-1}
if ! want bins; then # still find out whether there is a GPU: parts run without one would not test it
    bins=()
    smoke=$(find_bin tc-gpu-smoke) && { "$smoke" >/dev/null 2>&1; [ $? -eq 3 ] && nogpu=1; }
fi
want bins && [ ${#bins[@]} -lt ${#programs[@]} ] && failed=$((failed + ${#programs[@]} - ${#bins[@]}))
for b in "${bins[@]}"; do
    say "== $b"
    out=$("$b" 2>&1); rc=$?
    echo "$out" | tee -a "$log"
    if [ $rc -eq 3 ]; then
        nogpu=1
    else
        summary "$b" $rc <<<"$out"
        passed=$((passed + p)); failed=$((failed + f))
    fi
done

# The generated kernels, through tensorc itself: the parts below are
# independent (each its own programs, work files and tally), each into its
# own log ($work.NAME.out), printed here in order when all are done.  One
# at a time by default: all at once on an H200 machine's 16 cores
# (2026-11-27) they starved each other (suite.py keeps every core busy, and
# the reference interpreter of the large shapes is the CPU's): colpart and
# vjp had not finished in 9 minutes what takes them 71 and 90 s alone.
# TC_GPU_PARALLEL=N runs N at once.  Inside a part the checks run side by
# side already (TC_GPU_JOBS, default 8: pjobs.sh; vjp.sh, colpart.sh and
# scans.sh too since session 19, where vjp took 126 s one at a time).
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${OUT:-/tmp}/gpu-suite
rm -rf "$work" "$work".*.out "$work".*.rc "$work".*.secs
names=() pids=() modes=()
# part NAME MODE CMD...: run CMD (in the repository root) into $work.NAME.out;
# MODE is how its result is read: "last" (its last "N passed, M failed"
# line), "count" (its PASS and FAIL lines; none at all is a failure) or "rc"
# (exit 0 passes, 77 is skipped, else a failure)
part() {
    local name=$1 mode=$2
    shift 2
    want "$name" || return 0
    names+=("$name") modes+=("$mode")
    if [ "$parallel" -le 1 ]; then
        run_part "$name" "$@"
        pids+=("")
    else
        while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
        run_part "$name" "$@" &
        pids+=($!)
    fi
}
run_part() {
    local name=$1 t0=$SECONDS
    shift
    (cd "$root" && "$@") >"$work.$name.out" 2>&1
    local rc=$?
    echo $rc >"$work.$name.rc"
    echo $((SECONDS - t0)) >"$work.$name.secs"
    # as it ends, not only at the end: a call cut by its time limit still
    # shows which parts finished and how (their whole logs come at the end)
    echo "-- $name ended: exit $rc after $((SECONDS - t0)) s: $(grep -c '^PASS' "$work.$name.out") PASS," \
        "$(grep -c '^FAIL' "$work.$name.out") FAIL lines; last: $(tail -1 "$work.$name.out" | cut -c1-120)"
}
tc=
if [ $nogpu -ne 0 ]; then
    say "no GPU: the generated kernels' parts not run"
elif ! tc=$(find_bin tensorc); then
    say "missing: tensorc (build it in $build)"
    failed=$((failed + 1))
elif ! command -v python3 >/dev/null; then
    say "python3 not found: the suite's parts cannot run"
    failed=$((failed + 1))
    tc=
else
    tc=$(realpath "$tc")
    tcdir=$(dirname "$tc")
    quick=${TC_GPU_QUICK:-0}
    # suite.py: every example function at several shapes, random programs,
    # memcheck, the cache, --bench
    part suite last python3 "$here/suite.py" "$tc" "$root" "$work"
    # the generated matmul kernel at every layout and dtype, M = 1 ... 200,
    # K and N off every tile, and the cost model's own choice; quick: every
    # third job of the shape grids (every function, dtype and rule still)
    mm_sample=1
    [ "$quick" = 1 ] && mm_sample=3
    part matmul last env TC_MATMUL_SAMPLE="${TC_MATMUL_SAMPLE:-$mm_sample}" bash "$here/matmul.sh" "$tcdir" "${OUT:-/tmp}"
    # scans (T = 1 ... 4097 in every dtype, integers, NaN/inf, the minGRU)
    part scans count bash "$here/scans.sh" "$tcdir"
    # helpers.cuh's f32 math on the MUFU (TENSORC_FAST_MATH) against double
    # precision, in ulps, with the knob unset and 0 (seconds)
    part fastmath last python3 "$here/fastmath.py" "$tc" "$work.fastmath"
    # the examples' vjp pairs
    part vjp count bash "$here/vjp.sh" "$tcdir"
    # column partials: layernorm/rmsnorm backward, a softmax with a column sum
    part colpart count bash "$here/colpart.sh" "$tcdir"
    # gather, iota and the class-index losses (row lengths 1 ... 128256,
    # targets at 0 and V-1, ignored rows, out-of-range indices); quick: the
    # random programs from the first 300 generated instead of 1500
    gr=1500
    [ "$quick" = 1 ] && gr=300
    part gather last env TC_GATHER_RANDOM=$gr python3 "$here/gather.py" "$tc" "$work.gather"
    # the tuned launch shapes at every knob set
    part shapes last bash "$here/launch_shapes.sh" "$tcdir"
    # decode attention as one kernel (issue 13), run to run bitwise; quick:
    # f16 only
    at_dtypes="f16 bf16 f32"
    [ "$quick" = 1 ] && at_dtypes=f16
    part attention last env TC_ATTN_DTYPES="$at_dtypes" bash "$here/attention.sh" "$tc"
    # long rows (issue 14): five row reductions in f32, f16, bf16 at lengths
    # 1 to 262144 (clusters on sm_90), deterministic and batch-invariant
    part long_rows last env TC_LONG_ROWS_QUICK="$quick" bash "$here/long_rows.sh" "$tc"
    # AdamW over suite.md's 240 tensors, one tc_run_foreach per step, against
    # torch.optim.AdamW(foreach=False) (issue 6), when python3 has torch; it
    # takes examples/c's run_adamw from BUILD/examples/run_adamw (make -C
    # examples/c TENSORC_BUILD=BUILD OUTDIR=BUILD/examples, where cuda.h is),
    # or builds it here if it can.  Quick: 2 layers (20 tensors) instead of 24.
    adamw_layers=24
    [ "$quick" = 1 ] && adamw_layers=2
    if python3 -c 'import torch' >/dev/null 2>&1; then
        part adamw rc python3 "$here/adamw_torch.py" --build "$(realpath "$build")" --layers $adamw_layers
    else
        say "adamw_torch.py: skipped: python3 cannot import torch"
    fi
fi

for i in "${!names[@]}"; do
    name=${names[$i]} out=$work.${names[$i]}.out
    [ -n "${pids[$i]}" ] && wait "${pids[$i]}"
    rc=$(cat "$work.$name.rc" 2>/dev/null || echo 1)
    say "== $name (exit $rc, $(cat "$work.$name.secs" 2>/dev/null || echo '?') s)"
    tee -a "$log" <"$out"
    case ${modes[$i]} in
    last)
        summary "$name" "$rc" <"$out" ;;
    count)
        p=$(grep -c '^PASS ' "$out"); f=$(grep -c '^FAIL ' "$out")
        [ "$p" -gt 0 ] || f=$((f + 1)) # nothing ran: a failure, not a pass
        say "$name: $p passed, $f failed" ;;
    rc)
        p=0 f=0
        if [ "$rc" -eq 0 ]; then p=1; elif [ "$rc" -eq 77 ]; then say "$name: skipped"; else f=1; fi ;;
    esac
    passed=$((passed + p)); failed=$((failed + f))
done

say "log: $log"
say "$passed passed, $failed failed"
[ $failed -ne 0 ] && exit 1
[ $nogpu -ne 0 ] && exit 3
exit 0
