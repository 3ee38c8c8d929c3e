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
# rows), and every output of the pair bit for bit (EMU_KEEP; any NaN equal to
# any NaN: same_bits).  The same for
# TENSORC_ROWS_KEEP and TENSORC_CLUSTER_PUSH, 0 against 1 (not quick).  emu.h lands a
# cp.async copy only when a wait retires it, so a slot read before its wait
# or another thread's slot shows (tried: both fail at N = 17).
# Default (ctest): f32 and bf16, rows of 65536 (every item in registers)
# and 131080 (16 blocks, the last items partly past the row) at N = 3, 17
# (about 4 minutes on an idle core).  TC_EMU_QUICK=1 (scripts/test.sh, CI):
# 131080 at N = 3 only (a cluster of 16, the last items partly past the
# row; cluster 0 takes rows 0 and 2, so the next row is prefetched once),
# each function in one dtype (softmax, logsumexp, layernorm f32; log_softmax,
# rmsnorm bf16): 5 pairs of 10 (the quick subset before: all 10 at N = 17).
# TC_ROWPIPE_FULL=1: the lengths
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
elif [ "${TC_EMU_QUICK:-0}" = 1 ]; then lens=131080 batches=3; fi # quick (scripts/test.sh): rows partly past the last items, 2 and 1 a cluster
shapes=""
for n in $batches; do for d in $lens; do shapes="$shapes;N=$n,D=$d"; done; done
# same_bits A B DTYPE: the same bits, any NaN equal to any NaN: a NaN's
# payload here is the host CPU's (x86 propagates an operand's, where the GPU
# gives its canonical NaN), so an expression kept rather than computed again
# (TENSORC_ROWS_KEEP) may carry another one (softmax_rows' all-NaN row:
# 0x7fc00000 against 0x7fffffff at one element)
same_bits() {
    cmp -s "$1" "$2" && return 0
    python3 - "$1" "$2" "$3" <<'PY'
import array
import sys
a, b = (open(f, "rb").read() for f in sys.argv[1:3])
code, exp, man = {"f32": ("I", 0x7f800000, 0x7fffff), "f16": ("H", 0x7c00, 0x3ff),
                  "bf16": ("H", 0x7f80, 0x7f)}.get(sys.argv[3], (None, 0, 0))
if code is None or len(a) != len(b) or len(a) % array.array(code).itemsize:
    sys.exit(1)
nan = lambda u: (u & exp) == exp and (u & man) != 0
sys.exit(0 if all(x == y or (nan(x) and nan(y)) for x, y in zip(array.array(code, a), array.array(code, b)))
         else 1)
PY
}
# pair KNOB GREP fn dtype [VAR=VALUE...]: the kernels with KNOB=0 and KNOB=1
# against the interpreter, and bit for bit against each other; GREP: what
# KNOB=1's --emit=cuda must show (the knob made a difference)
pair() {
    local knob=$1 want=$2 fn=$3 dt=$4; shift 4
    local tag="$fn-$dt $knob"
    if ! env "$@" "$knob=1" "$tc" compile "$prog" --fn "$fn" --dtype "T=$dt" 2>&1 | grep -q "$want"; then
        echo "FAIL $tag: $knob=1 made no such kernel ($want)"; fail=$((fail + 1)); return
    fi
    rm -f "$work/off".* "$work/on".*
    if ! env "$@" "$knob=0" EMU_KEEP="$work/off" python3 "$here/emu.py" "$tc" "$prog" "$fn" "$shapes" 14 \
            --dtype "T=$dt" --rows --clusters 2 --quiet >"$work/out" 2>&1 ||
        ! env "$@" "$knob=1" EMU_KEEP="$work/on" python3 "$here/emu.py" "$tc" "$prog" "$fn" "$shapes" 14 \
            --dtype "T=$dt" --rows --clusters 2 --quiet >>"$work/out" 2>&1; then
        echo "FAIL $tag:"; grep -v "^PASS" "$work/out" | head -8; fail=$((fail + 1)); return
    fi
    local n=0 f
    for f in "$work/off".*; do
        n=$((n + 1))
        if ! same_bits "$f" "$work/on.${f#"$work"/off.}" "$dt"; then
            echo "FAIL $tag: ${f#"$work"/off.}: not the same bits with $knob=1"; fail=$((fail + 1)); return
        fi
    done
    echo "ok $tag: $n outputs (N = $batches; D = $lens) the same bits, both within the interpreter's tolerance"
    pass=$((pass + 1))
}
one() { pair TENSORC_ROWS_PIPE "in a cluster: at most the resident clusters" "$@"; }
# quick: each function in one of the two dtypes (f32, bf16 in turn)
k=0
for dt in $dts; do
    k=$((k + 1))
    q() { [ "${TC_EMU_QUICK:-0}" != 1 ] || [ "${TC_ROWPIPE_FULL:-0}" = 1 ] || [ $(((k + $1) % 2)) = 0 ]; }
    q 1 && one softmax_rows "$dt"
    q 0 && one log_softmax_rows "$dt"
    q 1 && one logsumexp_rows "$dt" TENSORC_ROWS_ONLINE=0
    q 0 && one rmsnorm_rows "$dt"
    q 1 && one layernorm_rows "$dt"
done
# TENSORC_ROWS_KEEP (codegen/keep.c): f32 softmax's epilogue takes exp(x -
# max) from the sum pass's registers (16-bit rows keep nothing: their
# packed loads free too few registers), with the pipe as by default; and
# TENSORC_CLUSTER_PUSH (helpers.cuh: partials pushed with st.async onto
# mbarriers, or a cluster barrier a combine).  Not in the quick subset:
# rows.sh checks both defaults against double precision in every run.
if [ "${TC_EMU_QUICK:-0}" != 1 ]; then
    pair TENSORC_ROWS_KEEP "kept for the epilogue" softmax_rows f32
    pair TENSORC_CLUSTER_PUSH "const bool tc_push = true" softmax_rows f32
    pair TENSORC_CLUSTER_PUSH "const bool tc_push = true" rmsnorm_rows bf16
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
