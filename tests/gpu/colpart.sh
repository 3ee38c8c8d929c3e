#!/usr/bin/env bash
# colpart.sh BUILD_DIR - column partials on the GPU (issue 15, fuse.h): a
# rows kernel that also sums column reductions per block of 32 rows, and
# the kernel that combines the partials (layernorm's and rmsnorm's backward:
# x and dout read once).  First run on an H200 on 2026-11-27: 89 of 89
# checks passed (part 1 through layernorm_grad at 16384 x 4096, 71 s, where
# the call's limit stopped it).
#
#   1. layernorm_grad, rmsnorm_grad (examples/layernorm_backward.tc) in f32,
#      tests/emu/colpart.tc's layernorm_grad in bf16 and softmax_colsum in
#      f32, at N = 1, 3, 31, 33, 1000 (around the 32 rows of a block) and
#      D = 1, 3, 129, 4096, and the bench size 16384 x 4096, and colpart.tc's
#      rank-3 forms (rows over two axes, or the column sum over two), against
#      the interpreter (`run --check`).  (The vjp pairs' backwards: vjp.sh.)
#   2. Bitwise determinism: the same call twice, outputs byte-identical
#      (dw, db summed in a fixed order whatever the launch).
# Prints PASS/FAIL lines; exit 1 on any failure.
set -u
b=${1:-build}
tc=$b/tensorc
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # label, then tensorc run's arguments
    local label=$1; shift
    if out=$("$tc" run "$@" --device=cuda --random --check 2>&1); then
        echo "PASS $label"
    else
        echo "FAIL $label: tensorc run $*"; echo "$out" | tail -5; fail=1
    fi
}
lb=$root/examples/layernorm_backward.tc
cp=$root/tests/emu/colpart.tc
for n in 1 3 31 33 1000; do
    for d in 1 3 129 4096; do
        s=N=$n,D=$d
        check "layernorm_grad f32 [$s]" "$lb" --fn layernorm_grad --shape "$s" --seed 1
        check "rmsnorm_grad f32 [$s]" "$lb" --fn rmsnorm_grad --shape "$s" --seed 2
        check "layernorm_grad bf16 [$s]" "$cp" --fn layernorm_grad --dtype T=bf16 --shape "$s" --seed 3
        check "softmax_colsum f32 [$s]" "$cp" --fn softmax_colsum --shape "$s" --seed 4
    done
done
for s in B=1,T=1,D=1 B=3,T=11,D=129 B=7,T=5,D=4096 B=33,T=32,D=3; do
    check "colpart_3d_cols2 [$s]" "$cp" --fn colpart_3d_cols2 --shape "$s" --seed 8
done
for s in B=1 B=31 B=33 B=1000; do
    check "colpart_3d_rows2 [$s]" "$cp" --fn colpart_3d_rows2 --shape "$s" --seed 9
done
check "layernorm_grad f32 [N=16384,D=4096]" "$lb" --fn layernorm_grad --shape N=16384,D=4096 --seed 5
check "rmsnorm_grad f32 [N=16384,D=4096]" "$lb" --fn rmsnorm_grad --shape N=16384,D=4096 --seed 6
# the same call twice: the same bits
for s in N=33,D=129 N=1000,D=4096 N=16384,D=4096; do
    for k in 1 2; do
        "$tc" run "$lb" --fn layernorm_grad --shape "$s" --random --seed 7 --device=cuda \
            --output dx="$tmp/dx$k.npy" --output dw="$tmp/dw$k.npy" --output db="$tmp/db$k.npy" >/dev/null 2>&1
    done
    if cmp -s "$tmp/dx1.npy" "$tmp/dx2.npy" && cmp -s "$tmp/dw1.npy" "$tmp/dw2.npy" &&
        cmp -s "$tmp/db1.npy" "$tmp/db2.npy" && [ -s "$tmp/dw1.npy" ]; then
        echo "PASS layernorm_grad [$s]: the same bits twice"
    else
        echo "FAIL layernorm_grad [$s]: two runs differ (or did not run)"; fail=1
    fi
    rm -f "$tmp"/*.npy
done
exit $fail
