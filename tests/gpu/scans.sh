#!/usr/bin/env bash
# scans.sh BUILD_DIR - the scans on the GPU against the reference
# interpreter (tensorc run --check) at T = 1, 3, 17, 64, 129 and 4097 (the
# last two block-parallel), every float dtype, integers, NaN/inf; then
# examples/mingru.tc at T = 17, 64 and 129 (at 257 f32's
# own error in the log-space form, a cancelling a + s, reaches 2e-5).  (The benchmark sizes are
# checked and timed by tc-bench: bench/run.sh.)  Needs a GPU; prints PASS/FAIL lines and
# exits 1 on any failure.
set -u
b=${1:-build}
tc=$b/tensorc
here=$(cd "$(dirname "$0")" && pwd)
prog=$here/scans.tc
fail=0
run() {
    if out=$("$tc" run "$@" --device=cuda --random --check 2>&1); then
        echo "PASS $*"
    else
        echo "FAIL $*"; echo "$out" | tail -5; fail=1
    fi
}
for dt in f32 f16 bf16 f64; do
    for L in 1 3 17 64 129 4097; do
        run "$prog" --fn rows --dtype T=$dt --shape N=5,L=$L --seed $L
        run "$prog" --fn chain --dtype T=$dt --shape B=3,L=$L,H=33 --seed $L
    done
done
for L in 1 17 129 4097; do
    run "$prog" --fn ints --shape N=7,L=$L --seed $L
done
# NaN and inf: inputs with them at fixed places (needs NumPy here)
tmp=$(mktemp -d)
if python3 - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(1)
x = rng.standard_normal((4, 67)).astype(np.float32)
x[0, 5] = np.nan; x[1, 0] = np.inf; x[2, 7] = -np.inf; x[3, 3] = np.inf; x[3, 9] = -np.inf
np.save(f"{d}/x.npy", x)
for B, T, H in ((2, 17, 8), (64, 64, 128), (3, 129, 5)):
    np.save(f"{d}/c{B}.npy", rng.uniform(-1, 1, (B, T, 3, H)).astype(np.float32))
    np.save(f"{d}/s{B}.npy", (rng.random((B, 1, H)) + 0.1).astype(np.float32))
PY
then
    run "$prog" --fn rows --shape N=4,L=67 --input x="$tmp/x.npy"
    for B in 2 64 3; do
        run "$here/../../examples/mingru.tc" --input combined="$tmp/c$B.npy" --input state="$tmp/s$B.npy"
    done
else
    echo "SKIP NaN/inf and minGRU inputs: no NumPy"
fi
rm -rf "$tmp"
[ $fail -eq 0 ] && echo "scans.sh: all passed" || echo "scans.sh: FAILURES"
exit $fail
