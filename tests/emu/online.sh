#!/usr/bin/env bash
# tests/emu/online.sh [TENSORC_BIN] - the online pair (sched_online.c) on the
# host emulator: tests/emu/online.tc's logsumexp, plain max and sum of
# exp(x - max) (with and without keepdim), cross-entropy (the mean, and
# each row's loss) in f32, f16 and bf16, through emu.py --rows (each kernel against the interpreter; row
# r takes edge pattern r % 12 (emu.py's docstring): random, all -inf, a NaN, +inf, -inf first with
# a tied maximum, large values rising along the row, all equal; targets 0,
# V - 1, the ignore index, then random) at row lengths 1, 3, 8, 4096 (whole
# vectors), 4097, 65537 (looped, scalar), 128256 and 262144, rows 1 to 7;
# then the same with TENSORC_ROWS_ONLINE=0 (the two passes, for the A/B),
# and --emit=sched says which.  TC_EMU_QUICK=1 (scripts/test.sh, CI): 11
# builds of 44: each function once, in one dtype (lse f32, max_sumexp f16,
# max_sumexp_flat bf16, ce f32, ce_rows f16), at the lengths of each path
# (1, 3, 8, 4096, 4097, 65537, 128256; not 262144, which loops as 128256
# does) with every row pattern (0 to 11) in the same build (the full set: every
# function in every dtype, and rows 7 to 11 in builds of their own); the two
# passes once (lse bf16: rows.sh and rowpipe.sh run them too), the update an
# element at a time, lse2 with NaN/inf (not in bf16 with the row patterns),
# TENSORC_ONLINE_BLOCK=32 (not 1024), the batch-invariant pair at 4097 (not
# 65536), the --emit=sched checks all.  Prints "N passed, M failed" last.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tc=$(realpath "${1:-$root/build/tensorc}")
pass=0 fail=0
shapes="N=1,V=1;N=7,V=3;N=2,V=8;N=3,V=4096;N=7,V=4097;N=5,V=65537;N=7,V=128256;N=4,V=262144;N=7,V=262144"
small="N=1,V=1;N=7,V=3;N=7,V=4097;N=7,V=128256"
run() { # what emu.py's arguments
    local out
    out=$(python3 "$here/emu.py" "$tc" "$here/online.tc" "$@" 2>&1)
    echo "$out"
    pass=$((pass + $(grep -c '^PASS' <<<"$out")))
    fail=$((fail + $(grep -c '^FAIL' <<<"$out")))
    grep -q '^\(PASS\|FAIL\)' <<<"$out" || fail=$((fail + 1))
}
sched() { # knob-value fn want: --emit=sched names the online pair, or not
    local got
    got=$(TENSORC_ROWS_ONLINE=$1 "$tc" compile "$here/online.tc" --fn "$2" --emit=sched 2>&1 | grep -c 'online pair')
    if [ "$got" = "$3" ]; then pass=$((pass + 1)); else echo "FAIL sched $2 TENSORC_ROWS_ONLINE=$1: $got online pairs, want $3"; fail=$((fail + 1)); fi
}
# the vector update (TENSORC_ONLINE_VEC, helpers.cuh's tc_online_addv):
# rows 7 to 11's patterns too (infinities and NaNs at a vector's ends and
# inside it, the max turning finite at the row's end), and the update an
# element at a time (TENSORC_ONLINE_VEC=0) for the A/B
edges="N=12,V=1;N=12,V=3;N=12,V=8;N=12,V=4096;N=12,V=4097;N=12,V=65537;N=12,V=262144"
if [ "${TC_EMU_QUICK:-0}" = 1 ]; then
    # quick (CI): each function in one dtype (f32, f16, bf16 in turn) at the
    # lengths of each path (1, 3, 8, 4096, 4097, 65537 and 128256: no
    # 262144, looped as 128256 is) and rows 0 to 11's patterns in the same
    # build; the two passes once (rows.sh and rowpipe.sh run them too), the
    # element-at-a-time update, lse2, one other block (32: a warp's tree),
    # one length of the batch-invariant pair
    qs="N=1,V=1;N=7,V=3;N=2,V=8;N=3,V=4096;N=7,V=4097;N=5,V=65537;N=7,V=128256"
    qe="N=12,V=1;N=12,V=3;N=12,V=8;N=12,V=4096;N=12,V=4097;N=12,V=65537;N=12,V=128256"
    k=0
    for fn in lse max_sumexp max_sumexp_flat ce ce_rows; do
        sched "" $fn 1
        sched 0 $fn 0
        dt=$(echo f32 f16 bf16 | cut -d' ' -f$((k % 3 + 1)))
        k=$((k + 1))
        run $fn "$qs;$qe" 1 --rows --dtype T=$dt
    done
    TENSORC_ROWS_ONLINE=0 run lse "$small" 1 --rows --dtype T=bf16
    TENSORC_ONLINE_VEC=0 run max_sumexp "N=12,V=8;N=12,V=4096;N=12,V=65536" 2 --rows --dtype T=bf16
    run lse2 "N=3,A=3,B=5;N=2,A=1,B=1;N=3,A=100,B=200;N=3,A=3,B=4000" 1 --specials
    TENSORC_ONLINE_BLOCK=32 run ce_rows "$small" 1 --rows --dtype T=bf16
    lens=4097
else
for fn in lse max_sumexp max_sumexp_flat ce ce_rows; do
    sched "" $fn 1
    sched 0 $fn 0
    for dt in f32 f16 bf16; do
        run $fn "$shapes" 1 --rows --dtype T=$dt
        TENSORC_ROWS_ONLINE=0 run $fn "$small" 1 --rows --dtype T=$dt
    done
done
for dt in f32 f16 bf16; do
    run max_sumexp "$edges" 2 --rows --dtype T=$dt
done
run lse "$edges" 3 --rows --dtype T=bf16
run ce_rows "$edges" 4 --rows --dtype T=bf16
TENSORC_ONLINE_VEC=0 run max_sumexp "N=12,V=8;N=12,V=4096;N=12,V=65536" 2 --rows --dtype T=bf16
# over two trailing axes: scalar items, rows past them loop (A*B past 8 x 512)
run lse2 "N=3,A=3,B=5;N=2,A=1,B=1;N=3,A=100,B=200;N=3,A=3,B=4000" 1 --specials
run lse2 "N=7,A=100,B=200" 1 --rows --dtype T=bf16
# other blocks (TENSORC_ONLINE_BLOCK): other trees, the same answers
for b in 32 1024; do
    TENSORC_ONLINE_BLOCK=$b run ce_rows "$small" 1 --rows --dtype T=bf16
done
lens="4097 65536"
fi
# batch-invariant: row 0 alone and in a batch of 7 (emu.py fills rows in
# order from the seed, so row 0 is the same data) gives the same bits
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for v in $lens; do
    EMU_KEEP=$work/one run lse "N=1,V=$v" 5 --dtype T=bf16 >/dev/null
    EMU_KEEP=$work/seven run lse "N=7,V=$v" 5 --dtype T=bf16 >/dev/null
    if cmp -s -n 4 "$work/one.out_out" "$work/seven.out_out"; then pass=$((pass + 1))
    else echo "FAIL lse V=$v: row 0 alone differs from row 0 of 7"; fail=$((fail + 1)); fi
done
# not a pair: softmax writes the row (it stays on the registers' and the cluster's path)
got=$("$tc" compile "$root/bench/cases/softmax.tc" --fn softmax --emit=sched 2>&1 | grep -c 'online pair')
if [ "$got" = 0 ]; then pass=$((pass + 1)); else echo "FAIL softmax has an online pair"; fail=$((fail + 1)); fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
