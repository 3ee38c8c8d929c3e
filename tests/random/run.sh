#!/usr/bin/env bash
# run.sh TENSORC_BIN [COUNT] [SEED] - generate COUNT (default 200) random
# programs from SEED (default 1, or $TC_RANDOM_SEED) with gen.py, run each
# with `tensorc run --device=cpu` and compare with its NumPy reference
# (check.py).  Prints one line per failure and 'N passed, M failed' last.
# Needs a python3 with NumPy: tries python3, then /usr/bin/python3.
set -u
bin=${1:?usage: run.sh TENSORC_BIN [COUNT] [SEED]}
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
"$py" "$here/check.py" "$bin" "$out"
rc=$?
if [ $rc -ne 0 ]; then
    keep=1
    echo "run.sh: seed $seed; programs kept in $out" >&2
fi
exit $rc
