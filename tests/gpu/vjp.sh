#!/usr/bin/env bash
# vjp.sh BUILD_DIR - the vjp pairs of the examples on the GPU (issue 15):
# each forward run with --check (against the interpreter), its saved values
# written to .npy, then the backward run on those values with --check, at
# awkward shapes (every size 1, odd, past a tile, a long row).  The inputs
# are seeded by name, so both runs see the same x, w, dout.  (Random saved
# values would be no test: a negative variance makes everything NaN.)
# A pair (its forward, then its backward) is one job; the pairs run
# TC_GPU_JOBS at once (tests/gpu/pjobs.sh, default 8: one after another they
# took 126 s on an H200 machine, most of it the interpreter of the
# 16384 x 4096 shapes on one core).  Prints a PASS or FAIL line a pair (the
# failing run's command and last lines); exit 1 on any failure.
# VJP_DEVICE=cpu: a dry run of the script on the interpreter alone (no GPU);
# VJP_SHAPES: the layernorm and rmsnorm shapes instead of the list below.
set -u
if [ "${1:-}" = --pair ]; then # --pair TENSORC FILE FWD BWD SAVED SHAPE SEED: one pair
    tc=$2 file=$3 fwd=$4 bwd=$5 saved=$6 shape=$7 seed=$8
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    outs=() ins=() dev=(--device="${VJP_DEVICE:-cuda}" --random --check)
    [ "${VJP_DEVICE:-cuda}" = cpu ] && dev=(--device=cpu --random) # --check compares with the GPU's
    for s in ${saved//,/ }; do
        outs+=(--output "$s=$tmp/$s.npy"); ins+=(--input "$s=$tmp/$s.npy")
    done
    for step in fwd bwd; do
        if [ $step = fwd ]; then set -- "$file" --fn "$fwd" "${outs[@]}"; else set -- "$file" --fn "$bwd" "${ins[@]}"; fi
        if ! out=$("$tc" run "$@" --shape "$shape" --seed "$seed" "${dev[@]}" 2>&1); then
            echo "$out" | tail -3
            echo "tensorc run $* --shape $shape --seed $seed ${dev[*]}"
            exit 1
        fi
    done
    exit 0
fi
b=${1:-build}
tc=$(realpath "$b/tensorc")
ex=$(cd "$(dirname "$0")/../../examples" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/pjobs.sh"
pass=0 fail=0
pair() { # file, forward, backward, saved names (comma list), shape, seed
    pj_add "$2/$3 [$5]" bash "$0" --pair "$tc" "$ex/$1" "$2" "$3" "$4" "$5" "$6"
}
# (N = 31, 33, 63, 65, 16384: blocks of 64 rows carrying dw, db as column partials)
for shape in ${VJP_SHAPES:-N=1,D=1 N=3,D=17 N=129,D=1031 N=64,D=4096 N=5,D=20000 N=31,D=129 N=33,D=4096 N=63,D=129 N=65,D=4096 N=16384,D=4096}; do
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
TC_GPU_VERBOSE=1 pj_run
[ "$fail" -eq 0 ]
