#!/usr/bin/env bash
# tests/emu/rows.sh [TENSORC_BIN] - rows kernels run on the host, no GPU.
#
# bench/cases' softmax (f32), rmsnorm_bf16 and cross-entropy rows kernels,
# as tensorc generates them (--emit=cuda), compiled as C++ against emu.h (a
# std::thread per CUDA thread, barriers for __syncthreads, warp shuffles and
# the cluster barrier, a cluster's blocks at once with their own shared
# memory) and run at row lengths that take every path of codegen/rows.c:
# looped (1, 3, 4097), in one block's registers with the last items partly
# past the row (8, 13, 4104, 32776 bf16), exactly full (16384 f32, 32768
# bf16), split across a cluster of 8 (16392, 65544, 128256) and of 16
# (131080 f32, 262152 bf16).  Each output is checked against double
# precision in rows.cpp.  What it cannot see: timing, the hardware's own
# cluster scheduling, f16 (its conversions are inline PTX), sm_90 code paths
# other than the cluster's.  TC_EMU_QUICK=1 leaves out the 16-block lengths
# (16,384 threads at once).  Prints "N passed, M failed" last.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tc=$(realpath "${1:-$root/build/tensorc}")
cxx=${CXX:-g++}
if ! command -v "$cxx" >/dev/null; then echo "no C++ compiler ($cxx)"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
big=1
[ "${TC_EMU_QUICK:-0}" = 1 ] && big=0
one() { # name file fn define lengths...
    local name=$1 file=$2 fn=$3 def=$4; shift 4
    if ! "$tc" compile "$root/bench/cases/$file" --fn "$fn" --emit=cuda -o "$work/$name.gen.cu" 2>"$work/err" ||
        ! python3 "$here/mk.py" "$work/$name.gen.cu" "$work/$name.cu" 2>>"$work/err" ||
        ! "$cxx" -std=c++17 -O1 -pthread -w -I"$here" -I"$work" -D"$def" -DEMU_UNIT="\"$name.cu\"" \
            "$here/rows.cpp" -o "$work/$name" 2>>"$work/err"; then
        echo "FAIL $name: could not build"; head -20 "$work/err"; fail=$((fail + 1)); return
    fi
    if "$work/$name" "$@" >"$work/$name.out" 2>&1; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
    cat "$work/$name.out"
}
sm="1 3 8 13 4097 4104 16384 16392 65544"
rm="1 3 8 13 4104 32768 32776 65544"
ce="1 3 8 4104 32776 128256"
[ $big = 1 ] && sm="$sm 131080" && rm="$rm 262152"
one softmax softmax.tc softmax EMU_SOFTMAX $sm
one rmsnorm rmsnorm.tc rmsnorm_bf16 EMU_RMSNORM $rm
one cross_entropy cross_entropy.tc cross_entropy_loss EMU_CE $ce
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
