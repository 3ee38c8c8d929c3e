#!/usr/bin/env bash
# tests/emu/fastmath.sh [STRIDE] - ctest emu_fastmath: the f32 math of
# src/codegen/helpers.cuh and scan.cuh (log, log1p, sigmoid, softplus, silu,
# logaddexp: TC_FAST_MATH, TENSORC_FAST_MATH=0 turns it off) on the host
# against double precision, every STRIDE-th float (default 4099; 1: every
# float, minutes) with the MUFU's approximations exact and at their
# documented bounds (fastmath.cpp).  Then the accurate functions
# (TC_FAST_MATH=0) the same way, for comparison (only their special values
# are checked).  Needs a C++20 compiler; exit 77 (skipped) without.
# TC_EMU_QUICK=1 (scripts/test.sh, CI): STRIDE 32771 by default, every
# function, range, special value and MUFU bound as before on 8 times fewer
# floats (the densest windows every 512th float instead of every 64th); the
# bounds are the same, so a coarser sweep can only find less (4099 found the
# figures fastmath.cpp quotes).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cxx=${CXX:-g++}
if ! echo '#include <barrier>' | "$cxx" -std=c++20 -x c++ -fsyntax-only - 2>/dev/null; then
    echo "SKIP: no C++20 compiler ($cxx)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the helpers as a unit embeds them (codegen/unit.c), inline PTX made emu_ptx
{ echo 'typedef int idx_t;'; cat "$root/src/codegen/helpers.cuh" "$root/src/codegen/scan.cuh"; } >"$tmp/h.cu"
python3 "$here/unit.py" "$tmp/h.cu" "$tmp/fastmath_unit.cu" || { echo "FAIL: unit.py"; exit 1; }
fail=0
for fast in 1 0; do
    if ! "$cxx" -std=c++20 -O2 -w -DTC_FAST_MATH=$fast -I"$here" -I"$tmp" "$here/fastmath.cpp" \
        -o "$tmp/fastmath$fast" 2>"$tmp/err"; then
        echo "FAIL: could not build (TC_FAST_MATH=$fast)"; head -30 "$tmp/err"; exit 1
    fi
    stride=4099
    [ "${TC_EMU_QUICK:-0}" = 1 ] && stride=32771
    "$tmp/fastmath$fast" "${1:-$stride}" || fail=1
done
exit $fail
