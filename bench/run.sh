#!/usr/bin/env bash
# run.sh BUILD_DIR - the whole benchmark on a GPU machine, from a build made
# elsewhere (tc-bench needs no CUDA toolkit to build, only the driver and
# NVRTC to run):
#
#   1. tc-bench --self-test    the reference check and JSON helpers (no GPU)
#   2. tc-bench                every case of suite.md through the C API
#   3. bench/peers.py          PyTorch eager and torch.compile, same cases
#   4. bench/report.py         OUT/<date>-<gpu>.md and .png, the inputs kept
#                              beside them as .tensorc.json and .peers.json
#   5. tc-bench-host           tensorc's own host time per call (tc_run_foreach
#                              over 240 and 2,000 tensors, a small tc_run, a
#                              replay), warm and with the caches evicted, into
#                              OUT/<date>-host.txt (bench/README.md)
#
# Results go to ${OUT:-bench/results}; the raw JSON and logs of each step to
# ${BENCH_WORK:-OUT/raw}, where a later call finds them: with BENCH_STEPS a
# long run can be split over several calls on one machine.  A step that
# fails is said and the others still run; the report shows every error.
#
# Environment:
#   OUT=DIR             where the results go (default: bench/results)
#   BENCH_WORK=DIR      raw JSON and logs (default: OUT/raw)
#   BENCH_STEPS="..."   which of: selftest tc peers report host (default: all five)
#   BENCH_QUICK=1       small shapes, few iterations: a smoke test (the report
#                       is named ...-quick.md and says so)
#   BENCH_CASES="a b"   only these cases (tc-bench --list names them)
#   BENCH_DEADLINE=S    the peers begin no case past S seconds from run.sh's
#                       start less a minute (the slowest case so far
#                       counted), so the report and host steps still run
#                       inside a device call's limit (say 540 for 600)
#   BENCH_SET=suite     suite.md's first 18 cases (about 150 s on an H200 with
#                       the peers), BENCH_SET=issues the others (issues 13-15:
#                       about 350 s); unset, all 43: longer than one 10-minute
#                       device call (BENCH_CASES, when given, wins)
#   BENCH_FULL=1        also torch.compile the AdamW step (about a minute)
#   TC_BENCH_ARGS="..." more tc-bench options (--compile-reps N, --seed N, ...)
#
# Exit status: 0 when every step ran and every case was checked and timed,
# 1 otherwise (the results written are still valid for what they show).
set -u
build=${1:?usage: bash bench/run.sh BUILD_DIR   (see the comment at the top)}
build=$(cd "$build" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/results}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
work=${BENCH_WORK:-$out/raw}
mkdir -p "$work" || exit 2
steps=${BENCH_STEPS:-selftest tc peers report host}
tcb=$build/tc-bench
quick=()
[ "${BENCH_QUICK:-0}" = 1 ] && quick=(--quick)
read -r -a cases <<< "${BENCH_CASES:-}"
suite=(gelu_chain fma4 bias_gelu transpose_add softmax_16384x4096 softmax_32768x1024 layernorm rmsnorm_f32
       rmsnorm_bf16 row_sum col_sum full_sum small_softmax small_chain small_chain4 adamw adamw_2000x4096
       rmsnorm_matmul)
if [ ${#cases[@]} = 0 ] && [ -n "${BENCH_SET:-}" ]; then
    case $BENCH_SET in
    suite) cases=("${suite[@]}") ;;
    issues)
        # every case tc-bench lists that is not the suite's
        while read -r name _; do
            case " ${suite[*]} " in *" $name "*) ;; *) cases+=("$name") ;; esac
        done < <("$build/tc-bench" --list) ;;
    *) printf 'run.sh: BENCH_SET is suite or issues, not %s\n' "$BENCH_SET" >&2; exit 2 ;;
    esac
fi
read -r -a extra <<< "${TC_BENCH_ARGS:-}"
status=0

say() { printf 'run.sh: %s\n' "$*" >&2; }
t_start=$(date +%s)
has() { case " $steps " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

if [ ! -x "$tcb" ]; then
    say "no tc-bench in $build: build it with cmake --build $build --target tc-bench"
    exit 2
fi
say "tc-bench: $tcb; results: $out; raw JSON and logs: $work"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null \
    | sed 's/^/run.sh: GPU: /' >&2

if has selftest; then
    if "$tcb" --self-test --cases "$here/cases" > "$work/selftest.log" 2>&1; then
        say "self-test passed"
    else
        say "SELF-TEST FAILED: the reference check itself is suspect; see $work/selftest.log"
        cat "$work/selftest.log" >&2
        status=1
    fi
fi

if has tc; then
    say "tc-bench (all of it takes a few minutes; progress below) ..."
    "$tcb" --cases "$here/cases" -o "$work/tensorc.json" "${quick[@]}" "${extra[@]}" "${cases[@]}" \
        2> >(tee "$work/tensorc.log" >&2)
    rc=$?
    wait
    case $rc in
        0) say "tc-bench: every case checked and timed" ;;
        1) say "tc-bench: some cases failed; their errors are in the JSON and the report"; status=1 ;;
        3) say "tc-bench: no GPU or driver here (see above)"; status=1 ;;
        *) say "tc-bench exited with status $rc"; status=1 ;;
    esac
fi

if has peers; then
    if ! python3 -c 'import torch' 2>/dev/null; then
        say "peers: python3 cannot import torch here; skipping PyTorch (the report will say so)"
        status=1
    else
        say "peers.py ..."
        deadline=()
        [ -n "${BENCH_DEADLINE:-}" ] && deadline=(--deadline $((t_start + BENCH_DEADLINE - 60)))
        python3 "$here/peers.py" -o "$work/peers.json" "${quick[@]}" "${deadline[@]}" "${cases[@]}" \
            2> >(tee "$work/peers.log" >&2)
        rc=$?
        wait
        [ $rc = 0 ] || { say "peers.py exited with status $rc (see $work/peers.log)"; status=1; }
    fi
fi

if has report; then
    if [ ! -s "$work/tensorc.json" ]; then
        say "report: no $work/tensorc.json (did the tc step run?)"
        exit 1
    fi
    peers=()
    [ -s "$work/peers.json" ] && peers=(--peers "$work/peers.json")
    md=$(python3 "$here/report.py" --tc "$work/tensorc.json" "${peers[@]}" --out-dir "$out" --keep-json) || {
        say "report.py failed"; exit 1; }
    for log in tensorc peers selftest; do
        [ -f "$work/$log.log" ] && cp "$work/$log.log" "${md%.md}.$log.log"
    done
    [ -f "${md%.md}.png" ] && say "results: $md and ${md%.md}.png" || say "results: $md (no chart: see the file)"
    [ -z "${BENCH_WORK:-}" ] && rm -rf "$work" # the inputs are kept beside the results
fi
if has host; then
    hb=$build/tc-bench-host
    if [ ! -x "$hb" ]; then
        say "no tc-bench-host in $build: build it with cmake --build $build --target tc-bench-host"
        status=1
    else
        hf=$out/$(date -u +%Y-%m-%d)-host.txt
        ex=$here/../examples/adamw.tc
        { "$hb" --adamw "$ex" && "$hb" --adamw "$ex" --cold --calls 400; } > "$hf" 2>&1 || { say "tc-bench-host failed (see $hf)"; status=1; }
        say "host time: $hf"
        cat "$hf" >&2
    fi
fi

exit $status
