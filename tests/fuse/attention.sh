#!/usr/bin/env bash
# attention.sh TENSORC FAKE_LIB - fusion's attention rule without a GPU
# (values are compared on one: tests/gpu/attention.sh).
#   1. Every function of examples/attention_decode.tc (f16, f32) and
#      tests/golden/extra/attention_half.tc is one kernel step, the attention
#      kernel, and `explain` prints the rule.
#   2. tests/fuse/attention_fallback.tc: the take_* functions are one
#      attention kernel; the miss_* ones (symbolic head dim, p or the scores
#      also an output, softmax without the max or over another axis, k or v
#      with the head dim not contiguous, a head dim past 256) keep the
#      general path; TENSORC_ATTENTION=off keeps it everywhere.
#   3. The attention kernel through NVRTC (CUBIN sm_80, sm_90) and launched
#      on the fake driver, which checks the launch against its parameters.
# Prints "N passed, M failed"; exits 77 when NVRTC is not installed.
set -u
tc=$(realpath "${1:?usage: attention.sh TENSORC FAKE_LIB}")
lib=$(realpath "${2:?usage: attention.sh TENSORC FAKE_LIB}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TENSORC_CACHE_DIR=$work/cache
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; head -6 "$work/err" 2>/dev/null | sed 's/^/    /'; }

# one_attn FILE FN [ARGS]: one plan step, the attention kernel, the rule explained
one_attn() {
    local f=$1 fn=$2
    shift 2
    if ! "$tc" compile "$f" --fn "$fn" "$@" --emit=plan >"$work/plan" 2>"$work/err"; then
        bad "$fn $*: compile"; return
    fi
    if [ "$(grep -c '^  step [0-9]*:' "$work/plan")" = 1 ] && grep -q 'tc_attn_' "$work/plan"; then
        ok
    else
        bad "$fn $*: not one attention kernel"; sed 's/^/    /' "$work/plan" | head -12
    fi
}
ex=$root/examples/attention_decode.tc
for fn in attention_decode attention_decode_masked attention_decode_d64 attention_gqa; do
    one_attn "$ex" $fn --dtype T=f16
    one_attn "$ex" $fn --dtype T=f32
done
for fn in gqa_f16 mha_bf16; do one_attn "$root/tests/golden/extra/attention_half.tc" $fn; done
if "$tc" explain "$ex" --fn attention_decode >"$work/ex" 2>"$work/err" &&
    grep -q '^  fused   %[0-9]* matmul -> %[0-9]* matmul: attention rule' "$work/ex"; then
    ok
else
    bad "explain does not print the attention rule"
fi
if "$tc" compile "$ex" --fn attention_decode --dtype T=f16 --emit=sched >"$work/sched" 2>"$work/err" &&
    grep -q 'attention (flash-decoding)' "$work/sched" && grep -q 'tensor cores' "$work/sched"; then
    ok
else
    bad "--emit=sched does not give the strategy"
fi

fb=$here/attention_fallback.tc
for fn in $(grep -o '^fn [a-z_0-9]*' "$fb" | cut -c4-); do
    if ! "$tc" compile "$fb" --fn "$fn" --emit=plan >"$work/plan" 2>"$work/err"; then
        bad "$fn: compile"; continue
    fi
    case $fn in
    take_*) grep -q 'tc_attn_' "$work/plan" && ok || bad "$fn: not fused" ;;
    *) if grep -q 'tc_attn_' "$work/plan" || [ "$(grep -c '^  step [0-9]*:' "$work/plan")" -lt 2 ]; then
           bad "$fn: fused, but it is not the pattern"
       else ok; fi ;;
    esac
done
TENSORC_ATTENTION=off "$tc" compile "$ex" --fn attention_decode --dtype T=f16 --emit=plan >"$work/plan" 2>"$work/err"
grep -q 'tc_attn_' "$work/plan" && bad "TENSORC_ATTENTION=off: still fused" || ok

"$tc" compile "$ex" --fn attention_decode --dtype T=f16 --emit=ptx -o "$work/probe.ptx" 2>"$work/err"
if [ $? -eq 3 ] && grep -q "NVRTC not found" "$work/err"; then
    echo "NVRTC is not installed: skipping the rest ($pass passed so far)"
    [ $fail -eq 0 ] && exit 77 || exit 1
fi
for arch in sm_80 sm_90; do
    for dt in f16 bf16 f32; do
        if "$tc" compile "$ex" --fn attention_decode_masked --dtype T=$dt --emit=cubin --arch=$arch \
            -o "$work/a.cubin" 2>"$work/err"; then ok; else bad "CUBIN $arch $dt"; fi
    done
done
for s in B=1,KVH=2,G=8,L=8192 B=3,KVH=1,G=3,L=129; do
    if env TENSORC_LIBCUDA="$lib" TENSORC_CUBLAS="$lib" TC_FAKE_CUDA_LOG=1 "$tc" run "$ex" \
        --fn attention_decode_masked --dtype T=f16 --shape $s --random --device=cuda >"$work/out" 2>"$work/err" &&
        [ "$(grep -c '^fakecuda: launch' "$work/err")" = 1 ]; then
        ok
    else
        bad "fake driver $s: want one launch"
    fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
