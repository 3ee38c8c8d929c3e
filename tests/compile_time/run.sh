#!/usr/bin/env bash
# run.sh TENSORC - the compile budget (src/fuse/fuse.h) holds: programs that
# grow without bound (gen.sh writes them) compile in bounded time, linearly.
#
#   1. Through NVRTC to CUBIN for sm_90, CPU seconds (user + sys, so the
#      bound holds on a loaded machine) under BOUND (default 10):
#      a 32-step layernorm + residual stack, 2,500- and 10,000-statement
#      pointwise chains, 100- and 200-statement softmax-like chains; the
#      larger at most 1.5 times as slow per statement (+0.5 s) as the
#      smaller.
#   2. Fusion and code generation alone (--emit=cuda), under BOUND each at
#      1x, 2x and 4x sizes: layernorm 32/64/128 steps, pointwise
#      2,500/5,000/10,000 statements, softmax-like 250/500/1,000; the
#      source and the time at 4x at most 4.5x (source) and 6x (time, plus
#      0.3 s for noise) those at 1x.
#
# Measured on the 2-core development machine, through NVRTC to CUBIN
# (CPU seconds, cold kernel cache; the machine was shared, so elapsed time
# was 2 to 3 times these); before compact kernels (sched.h) in brackets:
#                              1x            2x            4x
#   layernorm 32/64/128 steps  0.45 [1.27]   0.67 [2.43]   1.34 [4.21]
#   pointwise 2.5k/5k/10k      0.54 [0.97]   1.10 [1.85]   2.06 [3.65]
#   softmax-like 100/200/400   1.24 [4.63]   2.34 [9.20]   4.47 [20.8]
#   softmax-like 1,000: 11.7 s (fusion + CUDA 0.29 s, 3.1 MB of CUDA; 1.26 s
#   and 1.2 GB before plan_verify's limits were deduplicated).  About 11 ms
#   of NVRTC a statement, most of it a fixed cost per kernel (about 35 ms a
#   kernel of 8 passes, 4 statements); the issue's 2 s goal is met by the
#   layernorm stack and (nearly) the pointwise chain, not this one.
# Exits 77 when NVRTC is not installed (part 2 still runs first).
set -u
tc=$(realpath "${1:?usage: run.sh TENSORC}")
here=$(cd "$(dirname "$0")" && pwd)
bound=${BOUND:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TENSORC_CACHE_DIR=$work/cache
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# cpu FILE ARGS...: run tensorc, set $secs to its CPU seconds and $rc
cpu() {
    local out=$1
    shift
    local TIMEFORMAT='%3U %3S'
    local t
    t=$({ time "$tc" "$@" >"$out" 2>"$work/err"; } 2>&1)
    rc=$?
    t=$(tail -1 <<<"$t")
    secs=$(awk '{ printf "%.3f", $1 + $2 }' <<<"$t")
}
under() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

# --- 2. fusion and codegen, 1x 2x 4x ------------------------------------------------
for spec in "layernorm 32" "pointwise 2500" "reduce 250"; do
    set -- $spec
    kind=$1 n=$2
    declare -A T S
    for m in 1 2 4; do
        f=$work/$kind$m.tc
        bash "$here/gen.sh" "$kind" $((n * m)) >"$f"
        cpu "$work/$kind$m.cu" compile "$f" --emit=cuda
        if [ $rc -ne 0 ]; then
            bad "$kind x$m: --emit=cuda exited $rc: $(head -3 "$work/err")"
            continue
        fi
        T[$m]=$secs
        S[$m]=$(wc -c <"$work/$kind$m.cu")
        echo "$kind $((n * m)): fusion + CUDA ${secs} s CPU, ${S[$m]} bytes"
        if under "$secs" "$bound"; then ok; else bad "$kind $((n * m)): ${secs} s > $bound s"; fi
    done
    if [ -n "${T[1]:-}" ] && [ -n "${T[4]:-}" ]; then
        if under "${S[4]}" "$(awk -v s="${S[1]}" 'BEGIN { print 4.5 * s }')"; then ok; else
            bad "$kind: source grows faster than linearly (${S[1]} -> ${S[4]} bytes at 4x)"; fi
        if under "${T[4]}" "$(awk -v t="${T[1]}" 'BEGIN { print 6 * t + 0.3 }')"; then ok; else
            bad "$kind: time grows faster than linearly (${T[1]} -> ${T[4]} s at 4x)"; fi
    fi
    unset T S
done

# --- compact kernels (sched.h): past the budget, library math and block
# reductions are called; ordinary kernels (the examples) are not compact
bash "$here/gen.sh" reduce 250 >"$work/c.tc"
"$tc" compile "$work/c.tc" --emit=sched >"$work/c.sched" 2>"$work/err" &&
    "$tc" compile "$work/c.tc" --emit=cuda >"$work/c.cu" 2>>"$work/err"
if grep -q "compact: library math and block reductions called" "$work/c.sched" &&
    grep -q "tc_block_reduce_ni(acc" "$work/c.cu" && grep -q "= tc_ni_exp_f(" "$work/c.cu" &&
    ! grep -q "expf(t" "$work/c.cu"; then ok; else bad "reduce 250: kernels not compact"; fi
for ex in softmax layernorm rmsnorm; do
    if "$tc" compile "$here/../../examples/$ex.tc" --emit=cuda 2>"$work/err" | grep -q "tc_ni_\|_ni("; then
        bad "examples/$ex.tc: compact code in an ordinary kernel"; else ok; fi
done

# --- 1. through NVRTC ----------------------------------------------------------------
"$tc" compile "$here/../cli/single.tc" --emit=ptx -o "$work/probe.ptx" 2>"$work/err"
if [ $? -eq 3 ] && grep -q "NVRTC not found" "$work/err"; then
    echo "$pass passed, $fail failed (NVRTC not installed: CUBIN bounds skipped)"
    [ $fail -eq 0 ] || exit 1
    exit 77
fi
# each at 1x and Mx: under BOUND, and growing at most 1.5 M times + 0.5 s
for spec in "layernorm 32 1" "pointwise 2500 4" "reduce 100 2"; do
    set -- $spec
    kind=$1 n=$2 m=$3
    declare -A C
    for x in 1 $m; do
        [ "$x" = 1 ] || [ "$m" != 1 ] || continue
        [ -z "${C[$x]:-}" ] || continue
        f=$work/nv_${kind}_$x.tc
        bash "$here/gen.sh" "$kind" $((n * x)) >"$f"
        cpu "$work/out.txt" compile "$f" --emit=cubin --arch=sm_90 -o "$work/out.cubin"
        if [ $rc -ne 0 ]; then
            bad "$kind $((n * x)): --emit=cubin exited $rc: $(head -3 "$work/err")"
            continue
        fi
        C[$x]=$secs
        echo "$kind $((n * x)): CUBIN sm_90 in ${secs} s CPU"
        if under "$secs" "$bound"; then ok; else bad "$kind $((n * x)): CUBIN took ${secs} s CPU > $bound s"; fi
    done
    if [ "$m" != 1 ] && [ -n "${C[1]:-}" ] && [ -n "${C[$m]:-}" ]; then
        if under "${C[$m]}" "$(awk -v t="${C[1]}" -v m="$m" 'BEGIN { print 1.5 * m * t + 0.5 }')"; then ok; else
            bad "$kind: CUBIN time grows faster than linearly (${C[1]} -> ${C[$m]} s at ${m}x)"; fi
    fi
    unset C
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
