#!/usr/bin/env bash
# run.sh TENSORC_BIN - build examples/c with Makefile.inc and run it on an
# example, then check every example against NumPy (check_examples.py).
# Needs a python3 with NumPy: tries python3, then /usr/bin/python3, then
# installs NumPy with pip as a last resort.
set -u
bin=${1:?usage: run.sh TENSORC_BIN}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

. "$here/../lib.sh"
py=$(numpy_python) || py=
if [ -z "$py" ]; then
    echo "run.sh: no python3 with numpy; trying pip install numpy" >&2
    python3 -m pip install --quiet numpy >&2 && py=python3
fi
if [ -z "$py" ] || ! "$py" -c 'import numpy' 2>/dev/null; then
    echo "run.sh: cannot find or install numpy" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

crc=0
# The C example, built against the library next to the tensorc binary.
build=$(cd "$(dirname "$bin")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if make -s -C "$root/examples/c" TENSORC_BUILD="$build" OUTDIR="$out" >"$out/make.log" 2>&1 \
   && "$out/compile_and_dump" "$root/examples/softmax.tc" graph softmax >"$out/dump" \
   && grep -q 'exp' "$out/dump"; then
    # A broken program must fail with a located message.
    printf 'fn f(x: f32[N]) -> f32[N] {\n    return x +\n}\n' >"$out/bad.tc"
    if "$out/compile_and_dump" "$out/bad.tc" >/dev/null 2>"$out/err"; then
        echo "FAIL examples/c: compile_and_dump accepted a broken program"; crc=1
    elif ! grep -q 'bad.tc:[0-9]*:[0-9]*: error' "$out/err"; then
        echo "FAIL examples/c: no located error: $(head -c 300 "$out/err")"; crc=1
    else
        echo "PASS examples/c: compile_and_dump builds with Makefile.inc, dumps and reports errors"
    fi
else
    echo "FAIL examples/c: $(tail -c 600 "$out/make.log" "$out/dump" 2>/dev/null)"; crc=1
fi

"$py" "$here/check_examples.py" "$bin" "$root/examples"
rc=$?
[ $crc -eq 0 ] || rc=1

exit $rc
