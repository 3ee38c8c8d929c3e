#!/usr/bin/env bash
# knobs.sh TENSORC FAKE_LIB - the tuning knobs (src/base/knobs.h, README.md's
# "Tuning knobs") are part of the kernel cache key: on the fake driver
# (tests/fakegpu), a program run under other knobs is a cache miss even
# where its generated source is the same (TENSORC_MATMUL_LORA=on on a
# softmax, which has no matmul: checked first), and a hit under the same
# knobs; a knob that changes the source (TENSORC_PW_UNROLL=4) likewise.
# The matmul streaming variants: a launch with dynamic shared memory past
# 48 KB (TENSORC_MATMUL_STAGES=8), which the fake driver takes only once
# cuFuncSetAttribute raised the kernel's limit; --emit=sched/plan show
# them; stages past 227 KB are a located error.  The attention ring's
# dynamic shared memory likewise.
# Prints PASS/FAIL per check and "N passed, M failed" last; exit 1 on a
# failure, 77 without NVRTC.
set -u
tc=$(realpath "${1:?usage: knobs.sh TENSORC FAKE_LIB}")
fake=$(realpath "${2:?usage: knobs.sh TENSORC FAKE_LIB}")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TENSORC_LIBCUDA=$fake TENSORC_CUBLAS=$fake TENSORC_CACHE_DIR=$work/cache
unset TENSORC_MATMUL_LORA TENSORC_PW_UNROLL TENSORC_MATMUL_STAGES TENSORC_MATMUL_BK TENSORC_MATMUL_RESIDENT TENSORC_ATTN_RING
pass=0 fail=0
check() { local what=$1; shift; if "$@"; then echo "PASS $what"; pass=$((pass + 1)); else echo "FAIL $what"; fail=$((fail + 1)); fi; }
sm=$root/examples/softmax.tc
gelu=$root/examples/gelu_chain.tc
# cache FILE SHAPE: "miss" or "hit", what --verbose says of the run's kernels
cache() {
    "$tc" run "$1" --device=cuda --random --shape "$2" --verbose >"$work/out" 2>&1
    local rc=$?
    [ $rc = 3 ] && { echo "skipped: $(tail -1 "$work/out")"; exit 77; }
    sed -n 's/.*cache: \([a-z]*\).*/\1/p' "$work/out" | head -1
}
"$tc" compile "$sm" --emit=cuda >"$work/plain.cu" 2>&1
TENSORC_MATMUL_LORA=on "$tc" compile "$sm" --emit=cuda >"$work/lora.cu" 2>&1
check "softmax's source is the same under TENSORC_MATMUL_LORA=on" cmp -s "$work/plain.cu" "$work/lora.cu"
check "softmax: a miss first" [ "$(cache "$sm" N=3,D=5)" = miss ]
check "softmax: then a hit" [ "$(cache "$sm" N=3,D=5)" = hit ]
check "softmax under TENSORC_MATMUL_LORA=on: a miss (other knobs)" [ "$(TENSORC_MATMUL_LORA=on cache "$sm" N=3,D=5)" = miss ]
check "softmax under TENSORC_MATMUL_LORA=on again: a hit" [ "$(TENSORC_MATMUL_LORA=on cache "$sm" N=3,D=5)" = hit ]
check "softmax with no knobs: still a hit" [ "$(cache "$sm" N=3,D=5)" = hit ]
check "gelu_chain: a miss first" [ "$(cache "$gelu" '*=1000')" = miss ]
check "gelu_chain under TENSORC_PW_UNROLL=4: a miss" [ "$(TENSORC_PW_UNROLL=4 cache "$gelu" '*=1000')" = miss ]
check "gelu_chain under TENSORC_PW_UNROLL=4 again: a hit" [ "$(TENSORC_PW_UNROLL=4 cache "$gelu" '*=1000')" = hit ]
# TENSORC_MATMUL_STAGES=8: 93312 bytes of dynamic shared memory a block (8 stages
# of an x tile, a W tile and a row of g), which
# the fake driver launches only after cuFuncSetAttribute raised the limit
rms=$root/examples/rmsnorm_matmul.tc
check "rmsnorm_matmul: a miss first" [ "$(cache "$rms" M=3,K=1100,N=77)" = miss ]
check "rmsnorm_matmul under TENSORC_MATMUL_STAGES=8 (dynamic shared memory past 48 KB): a miss" \
    [ "$(TENSORC_MATMUL_STAGES=8 cache "$rms" M=3,K=1100,N=77)" = miss ]
quiet() { "$@" >/dev/null 2>&1; }
check "rmsnorm_matmul under TENSORC_MATMUL_STAGES=8 TENSORC_MATMUL_RESIDENT=1 runs" \
    quiet env TENSORC_MATMUL_STAGES=8 TENSORC_MATMUL_RESIDENT=1 "$tc" run "$rms" --device=cuda --random \
    --shape M=3,K=1100,N=77
# the variants are shown where they are set, and refused where the stages
# pass a block's 227 KB (a located error, exit status 1)
check "--emit=sched names TENSORC_MATMUL_STAGES=8 and RESIDENT=1" bash -c \
    "TENSORC_MATMUL_STAGES=8 TENSORC_MATMUL_RESIDENT=1 '$tc' compile '$rms' --emit=sched | grep -q '8 stages (TENSORC_MATMUL_STAGES), resident blocks'"
check "--emit=plan: 93312 bytes of dynamic shared memory, a grid of at most 264" bash -c \
    "TENSORC_MATMUL_STAGES=8 TENSORC_MATMUL_RESIDENT=1 '$tc' compile '$rms' --emit=plan | tr '\n' ' ' | grep -q 'grid at most 264 (resident blocks) *dynamic shared memory 93312 bytes'"
check "--emit=sched without the knobs names none" bash -c "! '$tc' compile '$rms' --emit=sched | grep -q 'TENSORC_MATMUL_'"
TENSORC_MATMUL=generated TENSORC_MATMUL_STAGES=8 TENSORC_MATMUL_BK=128 "$tc" compile "$rms" --emit=cuda >/dev/null 2>"$work/err"
rc=$?
check "STAGES=8 BK=128 with 64-row tiles (288896 bytes): refused, located" \
    bash -c "[ $rc = 1 ] && grep -q 'rmsnorm_matmul.tc:[0-9]*:[0-9]*: error: .*288896 bytes' '$work/err'"
# the attention kernel's ring (TENSORC_ATTN_RING=4: 131072 bytes of dynamic
# shared memory at head dim 128), launched past 48 KB the same way; the
# register path (0, the default) asks for none
att=$root/examples/attention_decode.tc
check "attention_decode (f16) with the ring's 131072 bytes of dynamic shared memory runs" \
    quiet env TENSORC_ATTN_RING=4 "$tc" run "$att" --fn attention_decode --dtype T=f16 --device=cuda --random --shape B=1,KVH=2,G=8,L=129
check "--emit=plan under TENSORC_ATTN_RING=4: 131072 bytes of dynamic shared memory" bash -c \
    "TENSORC_ATTN_RING=4 '$tc' compile '$att' --fn attention_decode --dtype T=f16 --emit=plan | grep -q 'dynamic shared memory 131072 bytes'"
# a ring of exactly 48 KB (head dim 96, 2 stages) beside the kernel's ~5 KB
# of static shared memory: past the default 48 KB together, so the limit is
# raised too (the GPU refused this launch when only the ring was counted)
check "attention_d96 (f16) with a 49152-byte ring beside its static shared memory runs" \
    quiet env TENSORC_ATTN_RING=2 "$tc" run "$root/tests/gpu/attention_fma.tc" --fn attention_d96 --dtype T=f16 --device=cuda --random --shape B=1,KVH=2,G=8,L=129
check "--emit=plan by default (the register path): none" bash -c \
    "! '$tc' compile '$att' --fn attention_decode --dtype T=f16 --emit=plan | grep -q 'dynamic shared'"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
