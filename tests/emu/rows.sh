#!/usr/bin/env bash
# tests/emu/rows.sh [TENSORC_BIN] - rows kernels run on the host, no GPU.
#
# bench/cases' softmax (f32), rmsnorm_bf16 and cross-entropy rows kernels,
# as tensorc generates them (--emit=cuda), compiled as C++ against emu.h (a
# fiber per CUDA thread, barriers for __syncthreads, warp shuffles and
# the cluster barrier, a cluster's blocks at once with their own shared
# memory) and run at row lengths that take every path of codegen/rows.c:
# looped (1, 3, 4097), in one block's registers with the last items partly
# past the row (8, 13, 4104, 32776 bf16), exactly full (16384 f32, 32768
# bf16), split across a cluster of 8 (16392, 65544, 128256) and of 16
# (131080 f32, 262152 bf16).  Each output is checked against double
# precision in rows.cpp.  What it cannot see: timing, the hardware's own
# cluster scheduling, f16 (its conversions are inline PTX), sm_90 code paths
# other than the cluster's.  Then the column partials (fuse.h): a rows
# kernel carrying column sums and the kernel combining them, run by
# colpart.cpp against the interpreter (below).  TC_ROWS_QUICK=1 (the UBSan
# build of scripts/test.sh; the Release build runs all) leaves
# out the 16-block lengths (16,384 threads at once); TC_EMU_ONLY=colpart
# runs only the column partials' cases (below), =prefetch only their
# TENSORC_COLPART_PREFETCH and TENSORC_COL_ROWS cases, =wide only
# TENSORC_ROWS_REGS=32's, =pair only TENSORC_ROWS_PAIR's (=2, and =1 but
# in the quick run), TENSORC_MAX_NAN=0's and the rows' ticket's variants
# (TENSORC_ROWS_TICKET=0, and the ticket with TENSORC_CLUSTER_PUSH=0: not
# in the quick run; the softmax, rmsnorm and cross-entropy cases take their
# rows by ticket, a grid of two clusters for five rows: rows.cpp's
# EMU_CLUSTERS), and TENSORC_ROWS_PIPE's modes (f32 rows kept in their
# slots; bf16 rmsnorm at =1 and =0, not in the quick run).
# TC_EMU_QUICK=1 (scripts/test.sh's Release build, CI): 22 of the 32
# builds: the rows kernels whole; the column partials without their
# N = 1000 and D = 4096 shapes (TC_ROWS_QUICK's, about 30 s of emulation
# each; layernorm_grad's 1000 x 129 kept), the prefetch's kernels against
# the interpreter (layernorm_bwd, the mixed paths, bf16) but not their bits
# against the plain kernels' (the base builds and same_bits), nor rmsnorm or
# rank 3 with the prefetch; TENSORC_COL_ROWS 1 and 33 (not 8, alone or with
# the prefetch); TENSORC_ROWS_REGS=16's two kernels (not with the prefetch).
# Prints "N passed, M failed" last.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tc=$(realpath "${1:-$root/build/tensorc}")
cxx=${CXX:-g++}
if ! command -v "$cxx" >/dev/null; then echo "no C++ compiler ($cxx)"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# emu.h's runtime built once (rt.py: emu_rt.o and the precompiled emu.h, the
# flags below its own); each case's build compiles rows.cpp or colpart.cpp
# and its unit alone
if ! read -r rtdir rtobj < <(python3 "$here/rt.py" "$tc" 900 "$cxx"); then
    echo "FAIL: emu.h's runtime (tests/emu/rt.py) did not build"; echo "0 passed, 1 failed"; exit 1
fi
rtflags=(-std=c++17 -O1 -w -DEMU_ARCH=900 -DEMU_RT_EXTERN -I"$rtdir")
pass=0 fail=0
big=1 quick=0
[ "${TC_ROWS_QUICK:-0}" = 1 ] && big=0
[ "${TC_EMU_QUICK:-0}" = 1 ] && quick=1
one() { # name file fn define lengths...
    local name=$1 file=$2 fn=$3 def=$4; shift 4
    if ! "$tc" compile "$root/bench/cases/$file" --fn "$fn" --emit=cuda -o "$work/$name.gen.cu" 2>"$work/err" ||
        ! python3 "$here/mk.py" "$work/$name.gen.cu" "$work/$name.cu" 2>>"$work/err" ||
        ! "$cxx" "${rtflags[@]}" -I"$here" -I"$work" -D"$def" ${EMU_DEFS:-} -DEMU_UNIT="\"$name.cu\"" \
            "$here/rows.cpp" "$rtobj" -o "$work/$name" 2>>"$work/err"; then
        echo "FAIL $name: could not build"; head -20 "$work/err"; fail=$((fail + 1)); return
    fi
    if "$work/$name" "$@" >"$work/$name.out" 2>&1; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
    cat "$work/$name.out"
}
sm="1 3 8 13 4097 4104 16384 16392 65544"
rm="1 3 8 13 4104 32768 32776 65544"
ce="1 3 8 4104 32776 128256"
[ $big = 1 ] && sm="$sm 131080" && rm="$rm 262152"
if [ -z "${TC_EMU_ONLY:-}" ]; then
    EMU_DEFS=-DEMU_SPLIT=1 one softmax softmax.tc softmax EMU_SOFTMAX $sm
    TENSORC_ROWS_REGS=16 one softmax_narrow softmax.tc softmax EMU_SOFTMAX $sm
    # 8 a thread (Inductor's rows shape: 512 threads for 4096; clusters past 8192)
    TENSORC_ROWS_REGS=8 EMU_DEFS=-DEMU_PER=8 one softmax_r8 softmax.tc softmax EMU_SOFTMAX $sm 4096 8192 8200
    one rmsnorm rmsnorm.tc rmsnorm_bf16 EMU_RMSNORM $rm
    # the two passes with the cluster (the online pair is emu_online's, online.sh)
    TENSORC_ROWS_ONLINE=0 one cross_entropy cross_entropy.tc cross_entropy_loss EMU_CE $ce
fi
# the max and sum of exp in one combine (sched_online.c's sched_rpair; off
# by default): =2 in every register path, =1 where a cluster shares the row
# (the quick run leaves it: =2 takes the same code there)
if [ -z "${TC_EMU_ONLY:-}" ] || [ "${TC_EMU_ONLY:-}" = pair ]; then
    TENSORC_ROWS_PAIR=2 EMU_DEFS=-DEMU_SPLIT=1 one softmax_pair2 softmax.tc softmax EMU_SOFTMAX $sm
    [ "$quick" = 1 ] || TENSORC_ROWS_PAIR=1 EMU_DEFS=-DEMU_SPLIT=1 one softmax_pair1 softmax.tc softmax EMU_SOFTMAX $sm
    # TENSORC_MAX_NAN=0: the max by tc_max's tests, predicated past the row's end
    [ "$quick" = 1 ] || TENSORC_MAX_NAN=0 EMU_DEFS=-DEMU_SPLIT=1 one softmax_maxnan0 softmax.tc softmax EMU_SOFTMAX $sm
    # the rows' ticket: off (every step-th row, no workspace), and carried
    # by the cluster barrier's exchange (TENSORC_CLUSTER_PUSH=0)
    [ "$quick" = 1 ] || TENSORC_ROWS_TICKET=0 EMU_DEFS="-DEMU_SPLIT=1 -DEMU_TICKET=0" one softmax_ticket0 softmax.tc softmax EMU_SOFTMAX $sm
    [ "$quick" = 1 ] || TENSORC_CLUSTER_PUSH=0 EMU_DEFS=-DEMU_SPLIT=1 one softmax_push0 softmax.tc softmax EMU_SOFTMAX $sm
    # the pipe's modes (TENSORC_ROWS_PIPE): f32 rows kept in their slots (=2;
    # 16-bit rows' default, the rmsnorm case above), bf16 in registers (=1)
    # and without the pipe (=0: no ticket, no workspace)
    TENSORC_ROWS_PIPE=2 EMU_DEFS=-DEMU_SPLIT=1 one softmax_resident softmax.tc softmax EMU_SOFTMAX $sm
    [ "$quick" = 1 ] || TENSORC_ROWS_PIPE=1 EMU_DEFS=-DEMU_PSPLIT=0 one rmsnorm_pipe1 rmsnorm.tc rmsnorm_bf16 EMU_RMSNORM $rm
    [ "$quick" = 1 ] || TENSORC_ROWS_PIPE=0 EMU_DEFS="-DEMU_TICKET=0 -DEMU_PSPLIT=0" one rmsnorm_pipe0 rmsnorm.tc rmsnorm_bf16 EMU_RMSNORM $rm
    [ "${TC_EMU_ONLY:-}" = pair ] && { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }
fi
# softmax f32 as compiled (two variants, the wide one past 16384: sched.h's
# wide_split) and with TENSORC_ROWS_REGS=16 (one 16-a-thread kernel, its
# cluster of 1024-thread blocks); TENSORC_ROWS_REGS=32 (sched.c: twice the
# row a thread, blocks of at most 512, for every length): the same paths at the lengths where they change (one block's
# registers now hold 16384 f32 / 32768 bf16 at 512 threads; clusters of 8
# and 16 of 512-thread blocks: 131080 f32 is 16 x 512 x 32, 262152 bf16 8 x
# 512 x 64)
if [ -z "${TC_EMU_ONLY:-}" ] || [ "${TC_EMU_ONLY:-}" = wide ]; then
    wsm="1 3 8 13 4097 16384 16392 65544"
    wrm="1 13 32768 32776 65544"
    [ $big = 1 ] && wsm="$wsm 131080 262144" && wrm="$wrm 262152"
    TENSORC_ROWS_REGS=32 EMU_DEFS=-DEMU_WIDE=2 one softmax_wide softmax.tc softmax EMU_SOFTMAX $wsm
    TENSORC_ROWS_REGS=32 EMU_DEFS="-DEMU_WIDE=2 -DEMU_PSPLIT=0" one rmsnorm_wide rmsnorm.tc rmsnorm_bf16 EMU_RMSNORM $wrm
fi
# Column partials (fuse.h): a rows kernel carrying column sums and the
# kernel combining them (colpart.cpp), against the interpreter: rows
# N = 1, 3, 63, 65 (around the 64 rows of a block), 1000; D = 1, 3, 129
# (looped rows), 132/136 (in registers, the last items partly past the
# row), 4096 (f32: 8 elements a thread, 512 threads).  TC_ROWS_QUICK=1
# leaves out 4096 and keeps N = 1000 for layernorm f32 at D = 129 alone
# (each such shape takes about 30 s of emulation).
colpart() { # name file fn-define dtype shapes...
    local name=$1 file=$2 def=$3 dt=$4; shift 4
    local flags=(); [ "$dt" = bf16 ] && flags=(--dtype T=bf16)
    mkdir -p "$work/$name.d"
    if ! TENSORC_COL_SPLIT=4 "$tc" compile "$file" --fn "$(fn_of "$def")" "${flags[@]}" --emit=cuda \
            -o "$work/$name.gen.cu" 2>"$work/err" ||
        ! mix "$name" "$work/$name.gen.cu" 2>>"$work/err" ||
        ! python3 "$here/mk.py" "$work/$name.gen.cu" "$work/$name.cu" 2>>"$work/err" ||
        ! "$cxx" "${rtflags[@]}" -I"$here" -I"$work" -D"$def" ${EMU_DEFS:-} -DEMU_UNIT="\"$name.cu\"" \
            "$here/colpart.cpp" "$rtobj" -o "$work/$name" 2>>"$work/err"; then
        echo "FAIL $name: could not build"; head -20 "$work/err"; fail=$((fail + 1)); return
    fi
    local env=(); case $name in *_mix) env=(EMU_MIXED_PATHS=1);; esac
    if env "${env[@]}" "$work/$name" "$tc" "$file" "$work/$name.d" "$@" >"$work/$name.out" 2>&1; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
    cat "$work/$name.out"
}
# a *_mix case: odd rows take the registers' path, even rows the loop (the
# generated condition edited here; contiguous rows never mix by themselves),
# so a block's sums come from both (codegen/rows.c's tc_looped)
mix() { # name unit
    case $1 in *_mix) ;; *) return 0;; esac
    grep -q 'if (0 < len && len <= ' "$2" || { echo "mix: no registers' condition in $2"; return 1; }
    sed -i 's/if (0 < len \&\& len <= /if ((row \& 1) \&\& 0 < len \&\& len <= /' "$2"
}
fn_of() {
    case $1 in EMU_RMS) echo rmsnorm_grad;; EMU_SMX) echo softmax_colsum;; EMU_LNBWD) echo layernorm_bwd;;
        EMU_3D) echo colpart_3d_cols2;;
        *) echo layernorm_grad;; esac
}
small="1,1 3,1 63,3 65,3 1,129 3,129 63,129 65,129"
wide="" more=""
[ $big = 1 ] && [ $quick = 0 ] && wide="33,4096" more="1000,3 1000,129"
if [ "${TC_EMU_ONLY:-}" = wide ]; then echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; fi
if [ "${TC_EMU_ONLY:-}" != prefetch ]; then
colpart ln_colpart "$root/examples/layernorm_backward.tc" EMU_LN f32 $small 1000,129 3,132 33,132 $wide
colpart ln_colpart_mix "$root/examples/layernorm_backward.tc" EMU_LN f32 1,132 2,132 33,132 64,4 65,4
colpart lnbwd_colpart "$root/examples/layernorm_backward.tc" EMU_LNBWD f32 1,1 3,3 33,129 33,132 $more
colpart rms_colpart "$root/examples/layernorm_backward.tc" EMU_RMS f32 $small 33,132 $more
colpart ln_bf16_colpart "$here/colpart.tc" EMU_LN_BF16 bf16 $small 3,136 33,136 $more
colpart smx_colpart "$here/colpart.tc" EMU_SMX f32 $small 33,132 $more
colpart 3d_colpart "$here/colpart.tc" EMU_3D f32 1,3 11,129 11,132 $more   # B,D of [B, 3, D]
fi
# TENSORC_COLPART_PREFETCH=1 (issue 15): each row's slices copied into
# shared memory (cp.async, emu.h) while the block's previous row reduces:
# the bench case's kernel at rows in registers (132, 4), looped (129), a
# block's rows grid-stride (N = 100: 4 blocks of rows on the run's grid of
# 2, the prefetch crossing into the next block of rows), rows that switch
# paths (_mix: a prefetched row that loops), bf16 (8 a vector), rmsnorm,
# rank 3 (rows over two axes); each case's outputs must have the same bits
# as the same case without the prefetch (same_bits).  TENSORC_COL_ROWS: 1,
# 8, 33 rows a block (the partials' shape with them; -DEMU_COL_ROWS).
same_bits() { # name base: every output file of both runs byte-identical
    local n=0 f
    for f in "$work/$2.d"/bits_*.bin; do
        [ -e "$f" ] || continue
        if [ -e "$work/$1.d/${f##*/}" ] && cmp -s "$f" "$work/$1.d/${f##*/}"; then n=$((n + 1)); else
            echo "FAIL $1: ${f##*/} differs from $2's (or is missing)"; fail=$((fail + 1)); return; fi
    done
    echo "$1: $n outputs the same bits as $2"; pass=$((pass + 1))
}
pfs="1,1 3,3 31,132 33,129 33,132 100,132 100,4 1000,4 3,4096 31,4097"
# quick (TC_EMU_QUICK=1, CI): the prefetch's kernels against the interpreter
# (layernorm_bwd, the mixed paths, bf16), not its bits against the plain
# kernels' (base and same_bits), rmsnorm or rank 3 with it; TENSORC_COL_ROWS 1
# and 33, not 8 (with the prefetch or without)
[ $quick = 0 ] && colpart lnbwd_colpart_base "$root/examples/layernorm_backward.tc" EMU_LNBWD f32 $pfs
TENSORC_COLPART_PREFETCH=1 colpart lnbwd_colpart_pf "$root/examples/layernorm_backward.tc" EMU_LNBWD f32 $pfs
[ $quick = 0 ] && same_bits lnbwd_colpart_pf lnbwd_colpart_base
TENSORC_COLPART_PREFETCH=1 colpart ln_colpart_pf_mix "$root/examples/layernorm_backward.tc" EMU_LN f32 1,132 2,132 33,132 65,4
[ $quick = 0 ] && TENSORC_COLPART_PREFETCH=1 colpart rms_colpart_pf "$root/examples/layernorm_backward.tc" EMU_RMS f32 3,132 100,132
[ $quick = 0 ] && colpart ln_bf16_colpart_base "$here/colpart.tc" EMU_LN_BF16 bf16 3,136 100,136 33,8
TENSORC_COLPART_PREFETCH=1 colpart ln_bf16_colpart_pf "$here/colpart.tc" EMU_LN_BF16 bf16 3,136 100,136 33,8
[ $quick = 0 ] && same_bits ln_bf16_colpart_pf ln_bf16_colpart_base
[ $quick = 0 ] && TENSORC_COLPART_PREFETCH=1 colpart 3d_colpart_pf "$here/colpart.tc" EMU_3D f32 1,3 11,132 40,4
for r in 1 8 33; do
    [ $quick = 1 ] && [ $r = 8 ] && continue
    TENSORC_COL_ROWS=$r EMU_DEFS=-DEMU_COL_ROWS=$r colpart lnbwd_colpart_r$r "$root/examples/layernorm_backward.tc" \
        EMU_LNBWD f32 1,1 3,3 33,129 100,132 70,4
done
[ $quick = 0 ] && TENSORC_COL_ROWS=8 TENSORC_COLPART_PREFETCH=1 EMU_DEFS=-DEMU_COL_ROWS=8 colpart lnbwd_colpart_r8_pf \
    "$root/examples/layernorm_backward.tc" EMU_LNBWD f32 1,1 3,3 33,129 100,132 70,4
# TENSORC_ROWS_REGS=16 with column partials: 16 elements a thread, blocks of
# at most 512 (rows of 8192 in registers, 8196 loops), with the prefetch
# (the same bits as without it) and with 16 rows a block too.  (Against the
# 8-a-thread kernel the bits differ: a row's block reductions add in
# another order.)
r16="1,1 3,3 33,129 33,264 100,132 17,8192 3,8196"
# (quick: the two 16-a-thread kernels against the interpreter, no prefetch pair)
EMU_DEFS="-DEMU_PER=16 -DEMU_BMAX=512" TENSORC_ROWS_REGS=16 colpart lnbwd_colpart_g16 \
    "$root/examples/layernorm_backward.tc" EMU_LNBWD f32 $r16
[ $quick = 0 ] && EMU_DEFS="-DEMU_PER=16 -DEMU_BMAX=512" TENSORC_ROWS_REGS=16 TENSORC_COLPART_PREFETCH=1 colpart lnbwd_colpart_g16_pf \
    "$root/examples/layernorm_backward.tc" EMU_LNBWD f32 $r16
[ $quick = 0 ] && same_bits lnbwd_colpart_g16_pf lnbwd_colpart_g16
[ $quick = 0 ] && EMU_DEFS="-DEMU_PER=16 -DEMU_BMAX=512 -DEMU_COL_ROWS=16" TENSORC_ROWS_REGS=16 TENSORC_COL_ROWS=16 \
    TENSORC_COLPART_PREFETCH=1 colpart lnbwd_colpart_g16_r16_pf "$root/examples/layernorm_backward.tc" EMU_LNBWD f32 \
    1,1 33,129 100,132 40,4
EMU_DEFS="-DEMU_PER=16 -DEMU_BMAX=512" TENSORC_ROWS_REGS=16 colpart ln_bf16_colpart_g16 "$here/colpart.tc" \
    EMU_LN_BF16 bf16 3,136 100,264 33,16
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
