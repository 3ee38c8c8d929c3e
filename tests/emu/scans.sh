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
# checkpointing off (the two kernels).  A where between two logs
# (logform.c, function logs) with NaN/inf/huge inputs, and the knobs
# TENSORC_SCAN_UNROLL and TENSORC_SCAN_HOIST=0; logcumsumexp's (max, scaled
# sum) carry (function lse, NaN/inf too) and TENSORC_SCAN_LSE=0.  TENSORC_SCAN_ASYNC=1
# (bit for bit the synchronous staging), TENSORC_SCAN_PAIR_LSE=1 and
# TENSORC_SCAN_MINBLOCKS=9 at the end (quick: the minGRU's shapes under ASYNC, its
# gradient at 17 and 129 under PAIR_LSE, MINBLOCKS; all three off, measured slower).  tests/gpu/scans.sh checks T = 1, 3, 17, 64, 129 on a
# GPU.  Needs python3 and a C++20 compiler (g++); exit 77 (skipped) without.
# TC_EMU_QUICK=1 (scripts/test.sh, CI): 28 builds (the full set: 101; the
# quick subset before this one: 47), every function, path, checkpoint
# setting and knob once: each function's lengths in one build (emu.py
# compiles once for all the shapes of a call; the full set runs each length
# alone, from its own seed): the lane path's five functions at T = 1, 17,
# 129 (the minGRU gradient at 64 too) and the block path's three at 300 in
# their lane builds; pair_fwd and pair_rev at 1, 3, 17, 64, 129, and with
# K = 5 at 3, 17, 129; the constant-T pairs; the gradient with
# checkpointing off at 17 (not also at 300, nor pair_rev off, nor K = 5's
# gradient); f64's gradient at 300; logs, the minGRU with NaN/inf, the
# UNROLL and HOIST knobs, lse (NaN/inf and T = 64); TENSORC_SCAN_LSE=0 on lse
# and the gradient (not the forward alone: the gradient's walks recompute
# it); TENSORC_SCAN_ASYNC=1, _PAIR_LSE=1 and _MINBLOCKS=9 each once against
# the interpreter (not ASYNC's bits against the synchronous staging, nor
# PAIR_LSE at every length).
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
quick=0
[ "${TC_EMU_QUICK:-0}" = 1 ] && quick=1
# keep I J: under quick, whether case (I, J) of a cross product runs
keep() { [ $quick = 0 ] || [ $(( ($1 + $2) % 2 )) = 0 ]; }
if [ $quick = 1 ]; then
# quick (TC_EMU_QUICK=1, CI): a function's lengths in one build (several
# shapes share emu.py's compile; the full set below runs each length alone,
# from its own seed): every function, path, checkpoint setting and knob
# once, 28 builds
for fn in scanred scanred_rev planes; do
    # the lane path at T = 1, 17, 129 and the block path at 300
    one python3 "$here/emu.py" "$tc" "$s" $fn "B=2,L=1,H=33;B=2,L=17,H=33;B=2,L=129,H=33;B=2,L=300,H=3" 17
done
one python3 "$here/emu.py" "$tc" "$s" rows "N=3,L=129" 129
one python3 "$here/emu.py" "$tc" "$s" chain "B=2,L=129,H=33" 129
one python3 "$here/emu.py" "$tc" "$s" walk_red_twice "N=3,L=129;N=1,L=1;N=5,L=17" 7
one python3 "$here/emu.py" "$tc" "$root/examples/mingru.tc" mingru "B=2,T=1,H=33;B=2,T=17,H=33;B=2,T=129,H=33" 17
one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=1,H=33;B=2,T=17,H=33;B=2,T=64,H=33;B=2,T=129,H=33" 17
# the checkpointed pairs, the compiler's K and K = 5; constant T (one segment; three)
one python3 "$here/emu.py" "$tc" "$s" pair_fwd "B=2,L=1,H=33;B=2,L=3,H=33;B=2,L=17,H=33;B=2,L=64,H=33;B=2,L=129,H=33" 17
one python3 "$here/emu.py" "$tc" "$s" pair_rev "B=2,L=1,H=33;B=2,L=3,H=33;B=2,L=17,H=33;B=2,L=64,H=33;B=2,L=129,H=33" 17
TENSORC_SCAN_CHECKPOINT=5 one python3 "$here/emu.py" "$tc" "$s" pair_fwd "B=2,L=3,H=33;B=2,L=17,H=33;B=2,L=129,H=33" 3
TENSORC_SCAN_CHECKPOINT=5 one python3 "$here/emu.py" "$tc" "$s" pair_rev "B=2,L=3,H=33;B=2,L=17,H=33;B=2,L=129,H=33" 3
one python3 "$here/emu.py" "$tc" "$s" pair_short "B=2,H=33" 5
one python3 "$here/emu.py" "$tc" "$s" pair_k "B=2,H=33" 21
TENSORC_SCAN_CHECKPOINT=off one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=17,H=33" 17
one python3 "$here/emu.py" "$tc" "$tmp/mingru64.tc" mingru_grad "B=2,T=300,H=3" 300
# logform.c's where between two logs and the minGRU with NaN/inf/huge inputs;
# the knobs TENSORC_SCAN_UNROLL and TENSORC_SCAN_HOIST=0
one python3 "$here/emu.py" "$tc" "$s" logs "B=2,L=17,H=33;B=1,L=1,H=5;B=2,L=300,H=3" 17 --specials
one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru "B=2,T=67,H=33" 67 --specials
TENSORC_SCAN_UNROLL=4 one python3 "$here/emu.py" "$tc" "$root/examples/mingru.tc" mingru "B=2,T=19,H=33" 19
TENSORC_SCAN_UNROLL=16 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=19,H=33" 19
TENSORC_SCAN_HOIST=0 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=19,H=33" 19
# logcumsumexp's (max, scaled sum) carry, and TENSORC_SCAN_LSE=0 (the lse
# function and the minGRU gradient's walks)
one python3 "$here/emu.py" "$tc" "$s" lse "B=2,L=17,H=33;B=1,L=1,H=5;B=2,L=129,H=3" 17 --specials
one python3 "$here/emu.py" "$tc" "$s" lse "B=2,L=64,H=33" 64
TENSORC_SCAN_LSE=0 one python3 "$here/emu.py" "$tc" "$s" lse "B=2,L=17,H=33" 17 --specials
TENSORC_SCAN_LSE=0 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=19,H=33" 19
# the knobs measured slower (session 14, off): each against the interpreter
# (ASYNC's bits against the synchronous staging: the full set)
TENSORC_SCAN_ASYNC=1 one python3 "$here/emu.py" "$tc" "$root/examples/mingru.tc" mingru "B=3,T=1,H=33;B=1,T=17,H=33;B=3,T=9,H=33;B=5,T=129,H=7" 7
TENSORC_SCAN_PAIR_LSE=1 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=3,T=17,H=33;B=2,T=129,H=5" 17
TENSORC_SCAN_MINBLOCKS=9 one python3 "$here/emu.py" "$tc" "$root/examples/mingru.tc" mingru "B=3,T=17,H=33" 17
else
one python3 "$here/emu.py" "$tc" "$s" rows "N=3,L=129" 129
one python3 "$here/emu.py" "$tc" "$s" chain "B=2,L=129,H=33" 129
one python3 "$here/emu.py" "$tc" "$s" walk_red_twice "N=3,L=129;N=1,L=1;N=5,L=17" 7
li=0
for L in 1 17 129; do
    fi=0
    for fn in scanred scanred_rev planes mingru mingru_grad; do
        f=$s sh="B=2,L=$L,H=33"
        case $fn in
            mingru) f=$root/examples/mingru.tc sh="B=2,T=$L,H=33";;
            mingru_grad) f=$root/examples/mingru_backward.tc sh="B=2,T=$L,H=33";;
        esac
        # quick: T = 129 for each, and 1 or 17 by turns (scanred 1, scanred_rev 17, planes 1, ...)
        [ $L = 129 ] || keep $li $fi && one python3 "$here/emu.py" "$tc" "$f" $fn "$sh" "$L"
        fi=$((fi + 1))
    done
    li=$((li + 1))
done
li=0
for L in 1 3 17 64 129; do
    # quick: pair_fwd at 1 and 17, pair_rev at 3 and 64, both at 129
    keep $li 0 || [ $L = 129 ] && one python3 "$here/emu.py" "$tc" "$s" pair_fwd "B=2,L=$L,H=33" "$L"
    keep $li 1 || [ $L = 129 ] && one python3 "$here/emu.py" "$tc" "$s" pair_rev "B=2,L=$L,H=33" "$L"
    li=$((li + 1))
done
li=0
for L in 3 17 129; do
    # quick: pair_fwd at 3 and 129, pair_rev at 17
    keep $li 0 && TENSORC_SCAN_CHECKPOINT=5 one python3 "$here/emu.py" "$tc" "$s" pair_fwd "B=2,L=$L,H=33" "$L"
    keep $li 1 && TENSORC_SCAN_CHECKPOINT=5 one python3 "$here/emu.py" "$tc" "$s" pair_rev "B=2,L=$L,H=33" "$L"
    li=$((li + 1))
done
one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=64,H=33" 64
# a where between two logs (codegen's logform.c), NaN/inf/huge inputs, lane
# and block paths; the walks unrolled (TENSORC_SCAN_UNROLL) and the pair's
# carry-free work left in the reversed walk (TENSORC_SCAN_HOIST=0)
one python3 "$here/emu.py" "$tc" "$s" logs "B=2,L=17,H=33;B=1,L=1,H=5;B=2,L=300,H=3" 17 --specials
one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru "B=2,T=67,H=33" 67 --specials
TENSORC_SCAN_UNROLL=4 one python3 "$here/emu.py" "$tc" "$root/examples/mingru.tc" mingru "B=2,T=19,H=33" 19
TENSORC_SCAN_UNROLL=16 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=19,H=33" 19
TENSORC_SCAN_HOIST=0 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=19,H=33" 19
# logcumsumexp carried as (max, scaled sum) (scan.c, TENSORC_SCAN_LSE): its
# value, exp(v + it) and the like with no log, NaN/inf inputs; and off
one python3 "$here/emu.py" "$tc" "$s" lse "B=2,L=17,H=33;B=1,L=1,H=5;B=2,L=129,H=3" 17 --specials
one python3 "$here/emu.py" "$tc" "$s" lse "B=2,L=64,H=33" 64
TENSORC_SCAN_LSE=0 one python3 "$here/emu.py" "$tc" "$s" lse "B=2,L=17,H=33" 17 --specials
TENSORC_SCAN_LSE=0 one python3 "$here/emu.py" "$tc" "$root/examples/mingru.tc" mingru "B=2,T=19,H=33" 19
TENSORC_SCAN_LSE=0 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=19,H=33" 19
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
# TENSORC_SCAN_ASYNC=1 (scan_stage.c: the lane walk's loads copied by
# cp.async a chunk ahead into two buffers): each function against the
# interpreter and its outputs bit for bit those of the synchronous staging
# (EMU_KEEP), chunk edges included (8 steps a chunk for the minGRU: T = 1,
# 3, 8, 9, 17, 64, 129, 256; B and H odd); f64 (8-byte copies), bf16 (two
# bytes: staged as before), sm_75 (plain copies); quick: fewer shapes
async_same() { # ARGS...: emu.py's arguments, run with TENSORC_SCAN_ASYNC 0 and 1
    local k=$tmp/keep n
    rm -f "$k".*
    EMU_KEEP=$k.0 TENSORC_SCAN_ASYNC=0 python3 "$here/emu.py" "$tc" "$@" --quiet >/dev/null || { echo "FAIL async (sync run) $*"; fail=1; return; }
    EMU_KEEP=$k.1 TENSORC_SCAN_ASYNC=1 one python3 "$here/emu.py" "$tc" "$@"
    for n in "$k".0.*; do
        cmp -s "$n" "$k.1.${n#"$k".0.}" || { echo "FAIL async: ${n#"$k".0.} not the synchronous bits ($*)"; fail=1; }
    done
}
shapes="B=3,T=1,H=33;B=1,T=17,H=1;B=3,T=9,H=33;B=5,T=129,H=7"
[ $quick = 1 ] || shapes="$shapes;B=3,T=3,H=33;B=3,T=8,H=33;B=3,T=64,H=33;B=1,T=256,H=3"
async_same "$root/examples/mingru.tc" mingru "$shapes" 7
# (quick, CI: the three knobs below measured slower on the H200, session 14,
# and stay off; one run each of the rest keeps them compiling and right)
if [ $quick = 0 ]; then
    async_same "$root/examples/mingru.tc" mingru "B=3,T=17,H=33" 17 --arch 750
    async_same "$s" lse "B=3,L=17,H=33;B=1,L=1,H=5;B=2,L=129,H=3" 17 --specials
    async_same "$s" chain "B=3,L=17,H=33;B=1,L=9,H=5" 9 --dtype T=f64
    async_same "$s" chain "B=3,L=17,H=33" 9 --dtype T=bf16
    async_same "$s" rows "N=3,L=129;N=1,L=1" 5
    async_same "$s" ints "N=3,L=17" 5
    async_same "$s" walk_red_twice "N=3,L=129;N=1,L=1;N=5,L=17" 7
    async_same "$s" logs "B=2,L=17,H=33;B=1,L=1,H=5" 17 --specials
    for fn in scanred scanred_rev planes; do
        async_same "$s" $fn "B=3,L=17,H=33;B=1,L=3,H=5" 3
    done
fi
# TENSORC_SCAN_PAIR_LSE=1 (scan.c: a checkpointed pair's forward walks carry
# logcumsumexp as (max, scaled sum), checkpoints stored as values): the
# minGRU gradient and pair_fwd/pair_rev at T = 1, 3, 17, 64, 129, K = 5 and
# 1, the constant-T pairs, NaN/inf; TENSORC_SCAN_MINBLOCKS=9 (a register cap)
TENSORC_SCAN_PAIR_LSE=1 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=3,T=17,H=33;B=2,T=129,H=5" 17
if [ $quick = 0 ]; then
    for L in 1 3 17 64 129; do
        TENSORC_SCAN_PAIR_LSE=1 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=3,T=$L,H=33" $L
        TENSORC_SCAN_PAIR_LSE=1 one python3 "$here/emu.py" "$tc" "$s" pair_fwd "B=3,L=$L,H=33" $L
        TENSORC_SCAN_PAIR_LSE=1 one python3 "$here/emu.py" "$tc" "$s" pair_rev "B=3,L=$L,H=33" $L
    done
    TENSORC_SCAN_PAIR_LSE=1 TENSORC_SCAN_CHECKPOINT=5 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=1,T=3,H=5;B=1,T=17,H=5;B=1,T=129,H=5" 17
    TENSORC_SCAN_PAIR_LSE=1 TENSORC_SCAN_CHECKPOINT=1 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=19,H=33" 19
    TENSORC_SCAN_PAIR_LSE=1 one python3 "$here/emu.py" "$tc" "$s" pair_short "B=3,H=33" 5
    TENSORC_SCAN_PAIR_LSE=1 one python3 "$here/emu.py" "$tc" "$s" pair_k "B=3,H=33" 21
    TENSORC_SCAN_PAIR_LSE=1 one python3 "$here/emu.py" "$tc" "$root/examples/mingru_backward.tc" mingru_grad "B=2,T=67,H=33" 67 --specials
fi
TENSORC_SCAN_MINBLOCKS=9 one python3 "$here/emu.py" "$tc" "$root/examples/mingru.tc" mingru "B=3,T=17,H=33" 17
fi
[ $fail -eq 0 ] && echo "emu: all passed" || echo "emu: FAILURES"
exit $fail
