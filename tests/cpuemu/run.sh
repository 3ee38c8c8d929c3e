#!/usr/bin/env bash
# run.sh [BUILD_DIR] - every case of the CPU emulation (emu.py says what it
# checks): generate, compile with g++ -std=c++20, run; prints each case's
# "N passed, M failed, K misaligned vector accesses"; exit 1 on a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
b=$(cd "${1:-$here/../../build}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for c in "$here"/case*.py; do
    n=$(basename "$c" .py) out=
    if TC_BIN=$b/tensorc python3 "$c" "$tmp/$n.cpp" && g++ -std=c++20 -O1 -w -I"$here" -o "$tmp/$n" "$tmp/$n.cpp" &&
        out=$("$tmp/$n"); then
        echo "$n: $(echo "$out" | tail -1)"
    else
        echo "$n: FAILED"; echo "$out" | grep FAIL | head -5; fail=1
    fi
done
exit $fail
