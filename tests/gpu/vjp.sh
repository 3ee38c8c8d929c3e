#!/usr/bin/env bash
# vjp.sh BUILD_DIR - the vjp pairs of the examples on the GPU (issue 15):
# each forward run with --check (against the interpreter), its saved values
# written to .npy, then the backward run on those values with --check, at
# awkward shapes (every size 1, odd, past a tile, a long row).  The inputs
# are seeded by name, so both runs see the same x, w, dout.  (Random saved
# values would be no test: a negative variance makes everything NaN.)
# Prints PASS/FAIL lines; exit 1 on any failure.
set -u
b=${1:-build}
tc=$b/tensorc
ex=$(cd "$(dirname "$0")/../../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
step() { # label, then tensorc run's arguments
    local label=$1; shift
    if out=$("$tc" run "$@" --device=cuda --random --check 2>&1); then
        echo "PASS $label"
    else
        echo "FAIL $label: tensorc run $*"; echo "$out" | tail -5; fail=1
    fi
}
pair() { # file, forward, backward, saved names (comma list), shape, seed
    local file=$1 fwd=$2 bwd=$3 saved=$4 shape=$5 seed=$6 outs=() ins=()
    for s in ${saved//,/ }; do
        outs+=(--output "$s=$tmp/$s.npy"); ins+=(--input "$s=$tmp/$s.npy")
    done
    step "$fwd [$shape]" "$ex/$file" --fn "$fwd" --shape "$shape" --seed "$seed" "${outs[@]}"
    step "$bwd [$shape]" "$ex/$file" --fn "$bwd" --shape "$shape" --seed "$seed" "${ins[@]}"
}
# (N = 31, 33, 63, 65, 16384: blocks of 64 rows carrying dw, db as column partials)
for shape in N=1,D=1 N=3,D=17 N=129,D=1031 N=64,D=4096 N=5,D=20000 N=31,D=129 N=33,D=4096 N=63,D=129 N=65,D=4096 N=16384,D=4096; do
    pair layernorm_backward.tc layernorm_fwd layernorm_bwd saved_mean,saved_var "$shape" 3
    pair layernorm_backward.tc rmsnorm_fwd rmsnorm_bwd saved_mean "$shape" 4
done
for shape in N=1,D=1,H=1 N=3,D=17,H=5 N=129,D=67,H=131; do
    pair mlp_backward.tc mlp_fwd mlp_bwd saved_matmul "$shape" 5
done
# the minGRU: nothing saved (its scans are recomputed); T up to 64, as suite.py
# checks mingru_grad (at 129 its f32 log-space error nears --check's 2e-5)
for shape in B=1,T=1,H=1 B=2,T=3,H=5 B=3,T=17,H=33 B=4,T=64,H=128; do
    pair mingru_backward.tc mingru_fwd mingru_bwd "" "$shape" 6
done
exit $fail
