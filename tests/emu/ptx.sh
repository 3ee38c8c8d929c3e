#!/usr/bin/env bash
# tests/emu/ptx.sh - emu.h's inline PTX checked against the PTX ISA's
# definitions (ptx_check.cu, run by ptx_check.cpp): ldmatrix feeding
# mma.sync, movmatrix, cp.async groups and zero fill, cvt rounding, the
# 16-bit pairs' products (mul.rn.f16x2, fma.rn.bf16x2), mov.b32, max.NaN
# and min.NaN.f32.  Exit 77 (skip) without python3 or a C++17 compiler.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cxx=${CXX:-g++}
command -v python3 >/dev/null && command -v "$cxx" >/dev/null || { echo "SKIP: no python3 or $cxx"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/unit.py" "$here/ptx_check.cu" "$work/unit.cu" &&
    "$cxx" -std=c++17 -O1 -w -I"$here" -I"$work" -DEMU_UNIT='"unit.cu"' "$here/ptx_check.cpp" -o "$work/m" &&
    "$work/m"
