#!/usr/bin/env bash
# long_rows.sh TENSORC - row reductions at every row length on the GPU
# (issue 14): rows past one block's registers are split across a
# thread-block cluster on sm_90 (src/sched/sched.h, "Clusters").
#
#   1. softmax, log_softmax, logsumexp, rmsnorm and layernorm
#      (tests/gpu/long_rows.tc) in f32, f16 and bf16 at row lengths 1, 3,
#      4097, 65537 and 262144, against the reference interpreter
#      (`run --check`).  The input's rows: random, one NaN, +inf, -inf, and
#      large values (1e4: exp overflows without the max).
#   2. Bitwise determinism: the same call twice, outputs byte-identical.
#   3. Batch invariance: a row alone (N=1) and the same row first in a
#      batch of 1024 (--random fills rows in order, so row 0 is the same
#      data) give identical bits.
#
# TC_LONG_ROWS_QUICK=1: parts 2 and 3 for softmax and rmsnorm only.  TENSORC_CLUSTER_MAX (runtime/rt.c) sets the
# largest cluster.  Prints "N passed, M failed" last; exit 0 when none failed.
set -u
tc=$(realpath "${1:?usage: long_rows.sh TENSORC}")
here=$(cd "$(dirname "$0")" && pwd)
prog=$here/long_rows.tc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; sed 's/^/    /' "$work/err" | head -4; }

lens="1 3 4097 65537 262144"

# inputs: x (5 rows), and w, b (one row), as f32 .npy (bf16 and f16 travel as f32)
python3 - "$work" $lens <<'EOF'
import random, struct, sys
work, lens = sys.argv[1], [int(v) for v in sys.argv[2:]]
def npy(path, shape, vals):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % s for s in shape)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%df" % len(vals), *vals))
r = random.Random(14)
for n in lens:
    rows = []
    for k in range(5):
        row = [r.uniform(-4, 4) for _ in range(n)]
        if k == 1: row[n // 2] = float("nan")
        if k == 2: row[n - 1] = float("inf")
        if k == 3: row[0] = float("-inf")
        if k == 4: row = [v * 2500 for v in row]
        rows += row
    npy("%s/x%d.npy" % (work, n), (5, n), rows)
    npy("%s/w%d.npy" % (work, n), (n,), [r.uniform(0.5, 1.5) for _ in range(n)])
    npy("%s/b%d.npy" % (work, n), (n,), [r.uniform(-1, 1) for _ in range(n)])
EOF

inputs() { # fn len: the --input arguments
    case $1 in
    rmsnorm_rows) echo "--input x=$work/x$2.npy --input g=$work/w$2.npy" ;;
    layernorm_rows) echo "--input x=$work/x$2.npy --input w=$work/w$2.npy --input b=$work/b$2.npy" ;;
    *) echo "--input x=$work/x$2.npy" ;;
    esac
}

fns="softmax_rows log_softmax_rows logsumexp_rows rmsnorm_rows layernorm_rows"
echo "== against the interpreter"
for fn in $fns; do
    for dt in f32 f16 bf16; do
        for n in $lens; do
            # shellcheck disable=SC2046
            if "$tc" run "$prog" --fn "$fn" --dtype T=$dt $(inputs $fn $n) --device=cuda --check \
                >"$work/out" 2>"$work/err"; then ok; else bad "$fn $dt D=$n: --check"; fi
        done
    done
done

# the data bytes of an .npy (its header is 64-byte aligned, v1)
data() { local h; h=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' '); tail -c +$((11 + h)) "$1"; }

echo "== deterministic and batch-invariant"
inv_fns=$fns
[ "${TC_LONG_ROWS_QUICK:-0}" = 1 ] && inv_fns="softmax_rows rmsnorm_rows"
for fn in $inv_fns; do
    for dt in f32 bf16; do
        for n in 4097 65537 262144; do
            rows=1024
            [ $n = 262144 ] && [ "$fn" != softmax_rows ] && rows=256
            a=(run "$prog" --fn "$fn" --dtype T=$dt --random --seed 3 --device=cuda)
            if ! "$tc" "${a[@]}" --shape N=$rows,D=$n --output out=$work/b1.npy >/dev/null 2>"$work/err" ||
                ! "$tc" "${a[@]}" --shape N=$rows,D=$n --output out=$work/b2.npy >/dev/null 2>"$work/err" ||
                ! "$tc" "${a[@]}" --shape N=1,D=$n --output out=$work/s.npy >/dev/null 2>"$work/err"; then
                bad "$fn $dt D=$n: a run failed"
                continue
            fi
            if cmp -s "$work/b1.npy" "$work/b2.npy"; then ok; else bad "$fn $dt D=$n N=$rows: two runs differ"; fi
            data "$work/s.npy" >"$work/s.bin"
            size=$(stat -c %s "$work/s.bin")
            if cmp -s -n "$size" "$work/s.bin" <(data "$work/b1.npy"); then ok
            else bad "$fn $dt D=$n: the row alone differs from row 0 of $rows"; fi
        done
    done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
