#!/usr/bin/env bash
# tests/emu/rowpipe.sh [TENSORC_BIN] - TENSORC_ROWS_PIPE=1 on the host, no GPU.
#
# The rows kernels of tests/gpu/long_rows.tc (softmax, log_softmax,
# logsumexp with TENSORC_ROWS_ONLINE=0 (the two passes; the online pair has
# no pipe), rmsnorm, layernorm) through emu.py --clusters: each kernel with
# a cluster path launched as runtime/exec.c sizes it (clusters of 8 and 16
# blocks), today's kernel a cluster a row, the pipelined one (codegen/rows.c:
# the next row's slice prefetched with cp.async into shared memory) at 2
# clusters, so each cluster takes rows in turn (N = 3: 2 and 1 rows, N = 17:
# 9 and 8).  Both against the interpreter (emu.py, --rows: the special
# rows), and every output of the pair bit for bit (EMU_KEEP).  emu.h lands a
# cp.async copy only when a wait retires it, so a slot read before its wait
# or another thread's slot shows (tried: both fail at N = 17).
# Default (ctest): f32 and bf16, rows of 65536 (every item in registers)
# and 131080 (16 blocks, the last items partly past the row) at N = 3, 17
# (about 4 minutes on an idle core; TC_EMU_QUICK=1: 131080 at N = 17 only).  TC_ROWPIPE_FULL=1: the lengths
# 16385 65536 65537 131072 262144 at N = 1, 3, 17 in f32, bf16 and f16 (about
# 15 minutes on one core).  Prints "N passed, M failed" last.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tc=$(realpath "${1:-$root/build/tensorc}")
prog=$root/tests/gpu/long_rows.tc
command -v "${CXX:-g++}" >/dev/null || { echo "no C++ compiler"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
lens="65536 131080" dts="f32 bf16" batches="3 17"
if [ "${TC_ROWPIPE_FULL:-0}" = 1 ]; then lens="16385 65536 65537 131072 262144" dts="f32 bf16 f16" batches="1 3 17"
elif [ "${TC_EMU_QUICK:-0}" = 1 ]; then lens=131080 batches=17; fi # quick (scripts/test.sh): rows partly past the last items, 9 and 8 a cluster
shapes=""
for n in $batches; do for d in $lens; do shapes="$shapes;N=$n,D=$d"; done; done
one() { # fn dtype [VAR=VALUE...]
    local fn=$1 dt=$2; shift 2
    local tag=$fn-$dt
    if ! env "$@" TENSORC_ROWS_PIPE=1 "$tc" compile "$prog" --fn "$fn" --dtype "T=$dt" --emit=plan 2>&1 |
            grep -q "in a cluster: at most the resident clusters"; then
        echo "FAIL $tag: TENSORC_ROWS_PIPE=1 made no pipelined kernel"; fail=$((fail + 1)); return
    fi
    rm -f "$work/off".* "$work/on".*
    if ! env "$@" EMU_KEEP="$work/off" python3 "$here/emu.py" "$tc" "$prog" "$fn" "$shapes" 14 --dtype "T=$dt" \
            --rows --clusters 2 --quiet >"$work/out" 2>&1 ||
        ! env "$@" TENSORC_ROWS_PIPE=1 EMU_KEEP="$work/on" python3 "$here/emu.py" "$tc" "$prog" "$fn" "$shapes" 14 \
            --dtype "T=$dt" --rows --clusters 2 --quiet >>"$work/out" 2>&1; then
        echo "FAIL $tag:"; grep -v "^PASS" "$work/out" | head -8; fail=$((fail + 1)); return
    fi
    local n=0 f
    for f in "$work/off".*; do
        n=$((n + 1))
        if ! cmp -s "$f" "$work/on.${f#"$work"/off.}"; then
            echo "FAIL $tag: ${f#"$work"/off.}: not the same bits with TENSORC_ROWS_PIPE=1"; fail=$((fail + 1)); return
        fi
    done
    echo "ok $tag: $n outputs (N = $batches; D = $lens) the same bits, both within the interpreter's tolerance"
    pass=$((pass + 1))
}
for dt in $dts; do
    one softmax_rows "$dt"
    one log_softmax_rows "$dt"
    one logsumexp_rows "$dt" TENSORC_ROWS_ONLINE=0
    one rmsnorm_rows "$dt"
    one layernorm_rows "$dt"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
