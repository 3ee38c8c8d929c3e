#!/usr/bin/env bash
# tests/emu/scans.sh TENSORC - the scan kernels on the host (emu.py) against the
# interpreter, without a GPU: every scan kind forwards and reversed, a
# reduction over the scanned axis in the walk, plane stores, and the minGRU
# forward and gradient, in f32 at T = 1, 17, 129 on the lane path and 300 on
# the block path (the minGRU gradient there in f64: f32's own log-space
# error passes 2e-5).  Checkpointed pairs (sched_ckpt.c: a forward walk and
# the reversed walk reading it, one kernel): the minGRU gradient and
# pair_fwd/pair_rev (every scan kind, both directions) at T = 1, 3, 17, 64,
# 129 with the compiler's K (4; the gradient also at 1, 17, 129 above
# and tests/grad/ckpt.sh), K = 5 (TENSORC_SCAN_CHECKPOINT) at T = 3, 17, 129,
# constant T = 5 and 21 (one segment, no checkpoint; three), the gradient
# at T = 300 (f64) on the pair's lane path, and with
# checkpointing off (the two kernels).  tests/gpu/scans.sh checks T = 1, 3, 17, 64, 129 on a
# GPU.  Needs python3 and a C++20 compiler (g++); exit 77 (skipped) without.
set -u
tc=$(realpath "${1:-build/tensorc}")
cxx=${CXX:-g++}
if ! echo '#include <barrier>' | "$cxx" -std=c++20 -x c++ -fsyntax-only - 2>/dev/null; then
    echo "SKIP: no C++20 compiler ($cxx)"
    exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
s=$root/tests/gpu/scans.tc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/f32/f64/g' "$root/examples/mingru_backward.tc" > "$tmp/mingru64.tc"
fail=0
one() { "$@" || fail=1; }
one python3 "$here/emu.py" "$tc" "$s" rows "N=3,L=129" 129
one python3 "$here/emu.py" "$tc" "$s" chain "B=2,L=129,H=33" 129
one python3 "$here/emu.py" "$tc" "$s" walk_red_twice "N=3,L=129;N=1,L=1;N=5,L=17" 7
for L in 1 17 129; do
    for fn in scanred scanred_rev planes; do
        one python3 "$here/emu.py" "$tc" "$s" $fn "B=2,L=$L,H=33" "$L"
    done
    one python3 "$here/emu.py" "$tc" "$root/examples/mingru.tc" mingru "B=2,T=$L,H=33" "$L"
    one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=$L,H=33" "$L"
done
for L in 1 3 17 64 129; do
    for fn in pair_fwd pair_rev; do
        one python3 "$here/emu.py" "$tc" "$s" $fn "B=2,L=$L,H=33" "$L"
    done
done
for L in 3 17 129; do
    for fn in pair_fwd pair_rev; do
        TENSORC_SCAN_CHECKPOINT=5 one python3 "$here/emu.py" "$tc" "$s" $fn "B=2,L=$L,H=33" "$L"
    done
done
one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=64,H=33" 64
one python3 "$here/emu.py" "$tc" "$s" pair_short "B=2,H=33" 5
one python3 "$here/emu.py" "$tc" "$s" pair_k "B=2,H=33" 21
TENSORC_SCAN_CHECKPOINT=5 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=17,H=33" 17
TENSORC_SCAN_CHECKPOINT=off one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=17,H=33" 17
TENSORC_SCAN_CHECKPOINT=off one python3 "$here/emu.py" "$tc" "$s" pair_rev "B=2,L=17,H=33" 17
for fn in scanred scanred_rev planes; do
    EMU_MT=1 one python3 "$here/emu.py" "$tc" "$s" $fn "B=2,L=300,H=3" 300
done
EMU_MT=1 TENSORC_SCAN_CHECKPOINT=off one python3 "$here/emu.py" "$tc" "$tmp/mingru64.tc" mingru_grad "B=2,T=300,H=3" 300
one python3 "$here/emu.py" "$tc" "$tmp/mingru64.tc" mingru_grad "B=2,T=300,H=3" 300
[ $fail -eq 0 ] && echo "emu: all passed" || echo "emu: FAILURES"
exit $fail
