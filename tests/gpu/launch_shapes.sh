#!/usr/bin/env bash
# launch_shapes.sh BUILD_DIR - the tuned launch shapes (src/sched/sched.c:
# unrolled vector loops of pointwise, whole-tensor and split-column kernels,
# column slices and blocks, foreach chunks, whole transposed tiles (scalar,
# or TENSORC_TILE_VEC's vectors, 32 x 32 or 64 x 64)) on the GPU against the reference
# interpreter (tensorc run --check), at sizes 1, 3, odd and off every
# vector, unroll and tile multiple, f32/f16/bf16, one or several tensor
# groups, NaN and inf; once per knob set below, so the paths the defaults
# do not take are checked too.  Jobs run in parallel
# (LS_JOBS, default the CPUs).  Prints FAIL lines (the command, the end of
# its output), then "N passed, M failed" last; exit 1 on any failure.
# LS_SETS="VARS|VARS" replaces the knob sets.
set -u
b=${1:-build}
tc=$(cd "$b" && pwd)/tensorc
here=$(cd "$(dirname "$0")" && pwd)
prog=$here/launch_shapes.tc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# knob sets: the defaults, then each knob away from them
sets=(
    ""
    "TENSORC_PW_UNROLL=1 TENSORC_FULL_UNROLL=1 TENSORC_COL_UNROLL=1 TENSORC_TILE_WHOLE=0"
    "TENSORC_PW_UNROLL=2 TENSORC_FULL_UNROLL=8 TENSORC_COL_UNROLL=8 TENSORC_COL_SPLIT=64 TENSORC_COL_X=64 TENSORC_FE_STEPS=4 TENSORC_FULL_GRID=2048"
    "TENSORC_PW_UNROLL=8 TENSORC_FULL_UNROLL=2 TENSORC_COL_UNROLL=3 TENSORC_COL_SPLIT=16 TENSORC_COL_X=16 TENSORC_FE_STEPS=16 TENSORC_FULL_GRID=512 TENSORC_TILE_WHOLE=1"
    # issue 14's Inductor-shaped launches (bench/causes.json) and the old foreach table read
    "TENSORC_PW_BLOCK=128 TENSORC_FE_STEPS=2 TENSORC_COL_X=16 TENSORC_COL_Y=8 TENSORC_COL_UNROLL=4 TENSORC_LOAD_EF=1 TENSORC_FE_PARAM=0"
    "TENSORC_PW_BLOCK=1024 TENSORC_PW_UNROLL=1 TENSORC_FE_STEPS=1 TENSORC_COL_Y=1 TENSORC_LOAD_EF=1"
    # TENSORC_TILE_VEC's whole tiles (16-byte accesses; the set above keeps the scalar whole tiles)
    "TENSORC_PW_ONCE=0 TENSORC_PW_UNROLL=4 TENSORC_TILE_VEC=1"
    # TENSORC_TILE_VEC=0: 32 x 32 tiles, scalar accesses (the default before session 22: 64 x 64
    # tiles, whole ones 4 vectors a thread a phase, partial ones 32 x 32 subtiles)
    "TENSORC_TILE_VEC=0"
    # the A/B winners of session 12 together (candidate defaults)
    "TENSORC_PW_BLOCK=128 TENSORC_FE_STEPS=2 TENSORC_COL_X=16 TENSORC_COL_Y=8 TENSORC_COL_UNROLL=8"
)
[ -n "${LS_SETS:-}" ] && IFS='|' read -r -a sets <<< "$LS_SETS"
jobs=$tmp/jobs
: > "$jobs"
add() { echo "$*" >> "$jobs"; }
for dt in f32 f16 bf16; do
    for n in 1 3 4097 12289 100003 1048579; do add --fn chain --dtype T=$dt --shape "*=$n" --seed $n; done
    add --fn chain --dtype T=$dt --groups 1000,0,4097,12289,1
    for n in 3 16387 1048577; do add --fn fma4 --dtype T=$dt --shape "*=$n" --seed $n; done
    for s in N=7,D=1031 N=33,D=4100; do add --fn bias_gelu --dtype T=$dt --shape $s; done
    for s in N=1031,D=37 N=777,D=1028; do add --fn col_sum --dtype T=$dt --shape $s; done
    for n in 4097 1048579; do add --fn full_sum --dtype T=$dt --shape "*=$n" --seed $n; done
    add --fn transpose_add --dtype T=$dt --shape N=517,M=1029
    add --fn transpose_add --dtype T=$dt --shape N=129,M=192
done
for s in N=1,D=1 N=3,D=5 N=5,D=4096 N=17,D=8190 N=1000,D=12; do add --fn bias_gelu --shape $s; done
for s in N=3,D=5 N=33,D=4100 N=1000,D=12; do add --fn two_out --shape $s; done
for s in N=1,M=1 N=3,M=5 N=33,M=65 N=100,M=31 N=1024,M=96 N=63,M=65 N=64,M=64 N=127,M=129; do
    add --fn transpose_add --shape $s
done
for s in B=2,N=65,M=130 B=3,N=64,M=64 B=1,N=33,M=7; do add --fn transpose3 --shape $s; done
add --fn transpose3 --dtype T=bf16 --shape B=2,N=129,M=70
for s in N=64,M=128 N=65,M=129 N=3,M=70; do add --fn transpose_three --shape $s; done
for s in N=1,D=1 N=3,D=5 N=4097,D=130 N=16385,D=4 N=300,D=4096 N=513,D=4099; do add --fn col_sum --shape $s; done
for s in N=1031,D=37 N=4097,D=130 N=513,D=4099; do add --fn col_stats --shape $s; done
for s in B=3,N=1031,D=37 B=2,N=513,D=128 B=5,N=2,D=4; do add --fn mid_mean --shape $s; done
for n in 1 3 65537 16777217; do add --fn full_sum --shape "*=$n" --seed $n; done
for s in N=1,D=1 N=33,D=4100 N=1000,D=1031; do add --fn full_stats --shape $s; done
# NaN and inf at fixed places (needs NumPy here)
if python3 - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
def save(name, shape, marks):
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    f = x.reshape(-1)
    for i, v in marks:
        f[i] = v
    np.save(f"{d}/{name}.npy", x)
save("v", (4103,), [(0, np.nan), (5, np.inf), (4102, -np.inf), (2049, np.nan)])
save("vinf", (4099,), [(7, np.inf), (4000, np.inf)])
save("m", (1031, 132), [(0, np.nan), (133, np.inf), (133 + 132, -np.inf), (1030 * 132 + 131, np.nan)])
save("b", (132,), [(3, np.inf), (131, np.nan)])
PY
then
    add --fn chain --input x="$tmp/v.npy"
    add --fn full_sum --input x="$tmp/v.npy"
    add --fn full_sum --input x="$tmp/vinf.npy"
    add --fn col_sum --input x="$tmp/m.npy"
    add --fn col_stats --input x="$tmp/m.npy"
    add --fn full_stats --input x="$tmp/m.npy"
    add --fn bias_gelu --input x="$tmp/m.npy" --input b="$tmp/b.npy"
else
    echo "SKIP NaN/inf inputs: no NumPy"
fi
all=$tmp/all
: > "$all"
for i in "${!sets[@]}"; do
    while IFS= read -r line; do
        printf '%s\t%s\n' "${sets[$i]}" "$line" >> "$all"
    done < "$jobs"
done
one() {
    local knobs=${1%%$'\t'*} args=${1#*$'\t'}
    set -f
    local out
    # shellcheck disable=SC2086
    if out=$(env $knobs "$tc" run "$prog" $args --device=cuda --random --check 2>&1); then
        echo PASS
    else
        printf 'FAIL %s tensorc run %s\n%s\n' "$knobs" "$args" "$(echo "$out" | tail -4)"
    fi
}
export -f one
export tc prog
res=$tmp/res
tr '\n' '\0' < "$all" | xargs -0 -P "${LS_JOBS:-$(nproc)}" -I{} bash -c 'one "$1"' _ {} > "$res"
grep -v '^PASS$' "$res"
pass=$(grep -c '^PASS$' "$res")
total=$(wc -l < "$all")
echo "launch_shapes.sh: $total jobs ($(wc -l < "$jobs") a knob set)"
echo "$pass passed, $((total - pass)) failed"
[ "$pass" -eq "$total" ]
