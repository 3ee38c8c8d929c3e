#!/usr/bin/env bash
# run.sh [--cuda] TENSORC_BIN [COUNT] [SEED] - generate COUNT (default 200)
# random programs from SEED (default 1, or $TC_RANDOM_SEED) with gen.py, run
# each with `tensorc run --device=cpu` on gen.py's inputs and compare with its
# NumPy reference (check.py).  With --cuda, also compile each to CUDA
# (--emit=cuda) and one in $TC_RANDOM_NVRTC_EVERY (default 20) through NVRTC
# (--emit=cubin) and run it on the fake driver (libtc-fake-cuda.so beside
# TENSORC_BIN under tests/, or $TC_FAKE_CUDA).  $TC_RANDOM_AVOID leaves
# features out (gen.py says which).  Prints one line per failure with its
# class, a table of failures by class, and 'N passed, M failed' last.
# Needs a python3 with NumPy: tries python3, then /usr/bin/python3.
#
# At scale, one program at a time, failures kept in WORK/fail:
#   check.py TENSORC --cuda --seed S --count 20000 --work WORK
set -u
cuda=()
if [ "${1:-}" = "--cuda" ]; then
    cuda=(--cuda --nvrtc-every "${TC_RANDOM_NVRTC_EVERY:-20}")
    [ -n "${TC_FAKE_CUDA:-}" ] && cuda+=(--fake "$TC_FAKE_CUDA")
    shift
fi
bin=${1:?usage: run.sh [--cuda] TENSORC_BIN [COUNT] [SEED]}
count=${2:-200}
seed=${3:-${TC_RANDOM_SEED:-1}}
here=$(cd "$(dirname "$0")" && pwd)

. "$here/../lib.sh"
py=$(numpy_python) || py=
if [ -z "$py" ]; then
    echo "run.sh: no python3 with numpy" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

out=$(mktemp -d)
# Keep the programs of a failing run so they can be inspected.
keep=0
trap '[ $keep -eq 1 ] || rm -rf "$out"' EXIT
"$py" "$here/gen.py" --seed "$seed" --count "$count" --out "$out" || { echo "0 passed, 1 failed"; exit 1; }
"$py" "$here/check.py" "$bin" "$out" "${cuda[@]}"
rc=$?
if [ $rc -ne 0 ]; then
    keep=1
    echo "run.sh: seed $seed; programs kept in $out" >&2
fi
exit $rc
