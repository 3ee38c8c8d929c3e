#!/usr/bin/env bash
# long_rows.sh TENSORC - row reductions at every row length on the GPU
# (issue 14): rows past one block's registers are split across a
# thread-block cluster on sm_90 (src/sched/sched.h, "Clusters").
#
#   1. softmax, log_softmax, logsumexp, rmsnorm and layernorm
#      (tests/gpu/long_rows.tc) in f32, f16 and bf16 at row lengths 1, 3, 8,
#      4097, 4104, 65537, 65544 and 262144 (8, 4104, 65544: whole vectors
#      whose last items per thread fall partly past the row: the predicated
#      loads of codegen/rows.c), against the reference interpreter
#      (`run --check`).  The input's rows: random, one NaN, +inf, -inf, and
#      large values (1e4: exp overflows without the max).
#      logsumexp_rows and max_sumexp_rows (the online pair, sched_online.c:
#      one pass, no cluster) take a sixth row, all -inf, and run again with
#      TENSORC_ROWS_ONLINE=0 (the two passes, rows in registers or a cluster).
#      Both again on five rows of infinities and NaNs at a vector's ends
#      and inside it (xe), with TENSORC_ONLINE_VEC=1 and 0.  Every function
#      at every length again with TENSORC_ROWS_REGS=8/16/32 and
#      TENSORC_ROWS_PAIR=1/2 (the max and sum of exp in one combine), f32
#      and bf16.
#   2. Bitwise determinism: the same call twice, outputs byte-identical.
#   3. Batch invariance: a row alone (N=1) and the same row first in a
#      batch of 1024 (--random fills rows in order, so row 0 is the same
#      data) give identical bits.
#   4. TENSORC_ROWS_PIPE=0, 1 and 2 (off; a persistent grid of clusters,
#      each prefetching its next row, the row then in registers; or kept in
#      its slots, two stages: codegen/rows.c; the defaults are 1 for f32 and
#      2 for 16-bit rows): part 1's checks at 65537, 65544 and 262144 (f32,
#      bf16, f16; five rows: a cluster a row), and in parts 2 and 3 the
#      batch of 1024 (256) again with each: the same bits as the default
#      (rows loop over the resident clusters there), and a random batch of
#      100 against the interpreter (--check); the batch again with
#      TENSORC_ROWS_TICKET=0 (each cluster every step-th row, not rows by
#      ticket): the same bits.
#
# TC_LONG_ROWS_QUICK=1: part 1's knob sets (REGS, PAIR) at 4097, 65544 and
# 262144 only (a row of one block, of a cluster with a partial vector, the
# longest), parts 2 and 3 for softmax f32 and rmsnorm bf16 only (batches of
# 256 at 262144);
# TC_LONG_ROWS_DTYPES="f16", TC_LONG_ROWS_LENS="65537": part 1 for those only;
# TC_LONG_ROWS_PARTS=1 part 1 alone.  Part 1's checks run TC_GPU_JOBS at once
# (tests/gpu/pjobs.sh, default 8).  TENSORC_CLUSTER_MAX (runtime/rt.c) sets the
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

lens=${TC_LONG_ROWS_LENS:-1 3 8 4097 4104 65537 65544 262144}

# inputs: x (5 rows), and w, b (one row), as f32 .npy (bf16 travels as f32) and f16
python3 - "$work" $lens <<'EOF'
import random, struct, sys
work, lens = sys.argv[1], [int(v) for v in sys.argv[2:]]
def npy1(path, shape, vals, code):
    hdr = "{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }" % (
        "f4" if code == "f" else "f2", "".join("%d, " % s for s in shape))
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(vals), code), *vals))
def npy(path, shape, vals):  # f32, and f16 beside it (PATH-f16.npy)
    npy1(path, shape, vals, "f")
    npy1(path[:-4] + "-f16.npy", shape, vals, "e")
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
    npy("%s/xm%d.npy" % (work, n), (6, n), rows + [float("-inf")] * n)
    # the vector update's edges (tests/emu/emu.py's rows 7 to 11): +inf
    # first and NaN last; -inf beside the max inside a vector, -inf last;
    # -inf and +inf in one vector; NaN first; all -inf but the last
    inf, nan, e = float("inf"), float("nan"), []
    for k in range(5):
        row = [r.uniform(-4, 4) for _ in range(n)]
        if k == 0: row[0], row[n - 1] = inf, nan
        if k == 1: row[n // 2], row[min(n // 2 + 1, n - 1)], row[n - 1] = -inf, 5.0, -inf
        if k == 2: row[n // 2], row[min(n // 2 + 3, n - 1)] = -inf, inf
        if k == 3: row[0] = nan
        if k == 4: row = [-inf] * (n - 1) + [-2.0]
        e += row
    npy("%s/xe%d.npy" % (work, n), (5, n), e)
    npy("%s/w%d.npy" % (work, n), (n,), [r.uniform(0.5, 1.5) for _ in range(n)])
    npy("%s/b%d.npy" % (work, n), (n,), [r.uniform(-1, 1) for _ in range(n)])
EOF

inputs() { # fn len dtype: the --input arguments
    local e=
    [ "$3" = f16 ] && e=-f16
    case $1 in
    rmsnorm_rows) echo "--input x=$work/x$2$e.npy --input g=$work/w$2$e.npy" ;;
    layernorm_rows) echo "--input x=$work/x$2$e.npy --input w=$work/w$2$e.npy --input b=$work/b$2$e.npy" ;;
    logsumexp_rows|max_sumexp_rows) echo "--input x=$work/xm$2$e.npy" ;;
    *) echo "--input x=$work/x$2$e.npy" ;;
    esac
}

fns="softmax_rows log_softmax_rows logsumexp_rows max_sumexp_rows rmsnorm_rows layernorm_rows"
echo "== against the interpreter"
SECONDS=0
. "$here/pjobs.sh"
for fn in $fns; do
    for dt in ${TC_LONG_ROWS_DTYPES:-f32 f16 bf16}; do
        for n in $lens; do
            # shellcheck disable=SC2046
            pj_add "$fn $dt D=$n: --check" "$tc" run "$prog" --fn "$fn" --dtype T=$dt $(inputs $fn $n $dt) \
                --device=cuda --check
        done
    done
done

# the online pair's kernels with it off (TENSORC_ROWS_ONLINE=0): the two passes
for fn in logsumexp_rows max_sumexp_rows; do
    for dt in ${TC_LONG_ROWS_DTYPES:-f32 f16 bf16}; do
        for n in $lens; do
            # shellcheck disable=SC2046
            pj_add "$fn $dt D=$n TENSORC_ROWS_ONLINE=0: --check" env TENSORC_ROWS_ONLINE=0 "$tc" run "$prog" \
                --fn "$fn" --dtype T=$dt $(inputs $fn $n $dt) --device=cuda --check
        done
    done
done
# the online pair's vector update (TENSORC_ONLINE_VEC, helpers.cuh's
# tc_online_addv) at its edges, and an update an element (=0) for the A/B
for fn in logsumexp_rows max_sumexp_rows; do
    for dt in ${TC_LONG_ROWS_DTYPES:-f32 f16 bf16}; do
        e=; [ "$dt" = f16 ] && e=-f16
        for n in $lens; do
            for v in 1 0; do
                pj_add "$fn $dt D=$n edges TENSORC_ONLINE_VEC=$v: --check" env TENSORC_ONLINE_VEC=$v "$tc" run \
                    "$prog" --fn "$fn" --dtype T=$dt --input x=$work/xe$n$e.npy --device=cuda --check
            done
        done
    done
done
# TENSORC_ROWS_REGS (sched.c): 16, the 16-a-thread kernel alone (its
# cluster of 1024-thread blocks, which the compiler's choice no longer takes
# for f32); 32, twice the row a thread in blocks of at most 512 at every
# length; 8, 8 f32 a thread (Inductor's 512 x 8 for a 4096 row; 16-bit rows
# keep their own).  TENSORC_ROWS_PAIR (sched_online.c, off by default): the
# max and sum of exp in one combine, 1 in rows a cluster shares, 2 in every
# register row (the functions with the pair take it).  Each: every function
# at every length, f32 and bf16
klens=$lens
if [ "${TC_LONG_ROWS_QUICK:-0}" = 1 ]; then
    klens=
    for n in $lens; do case $n in 4097|65544|262144) klens="$klens $n" ;; esac; done
fi
for k in TENSORC_ROWS_REGS=8 TENSORC_ROWS_REGS=16 TENSORC_ROWS_REGS=32 TENSORC_ROWS_PAIR=1 TENSORC_ROWS_PAIR=2; do
    for fn in $fns; do
        for dt in ${TC_LONG_ROWS_DTYPES:-f32 bf16}; do
            [ "$dt" = f16 ] && continue
            for n in $klens; do
                # shellcheck disable=SC2046
                pj_add "$fn $dt D=$n $k: --check" env "$k" "$tc" run "$prog" \
                    --fn "$fn" --dtype T=$dt $(inputs $fn $n $dt) --device=cuda --check
            done
        done
    done
done
# TENSORC_ROWS_PIPE=0, 1 and 2 (the row in registers, or kept in its
# slots: the default for 16-bit rows): every function where a cluster takes the row
for pm in 0 1 2; do
    for fn in $fns; do
        for dt in ${TC_LONG_ROWS_DTYPES:-f32 f16 bf16}; do
            for n in $lens; do
                case $n in 65537|65544|262144) ;; *) continue ;; esac
                # shellcheck disable=SC2046
                pj_add "$fn $dt D=$n TENSORC_ROWS_PIPE=$pm: --check" env TENSORC_ROWS_PIPE=$pm TENSORC_ROWS_ONLINE=0 \
                    "$tc" run "$prog" --fn "$fn" --dtype T=$dt $(inputs $fn $n $dt) --device=cuda --check
            done
        done
    done
done
pj_run

# the data bytes of an .npy (its header is 64-byte aligned, v1)
data() { local h; h=$(od -An -tu2 -j8 -N2 "$1" | tr -d ' '); tail -c +$((11 + h)) "$1"; }

if [ "${TC_LONG_ROWS_PARTS:-}" = 1 ]; then
    echo "($SECONDS s)"; echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit
fi
echo "== deterministic and batch-invariant ($SECONDS s)"
# det_one FN DTYPE N: parts 2-4 for one row length, in a folder of its own
# (the lengths run TC_GPU_JOBS at once: one after another they took 220 s of
# the quick run); prints a FAIL line (and the error's first lines) per failed
# check, then "RESULT passed failed"
det_one() {
    local fn=$1 dt=$2 n=$3 w=$work/d.$1.$2.$3 np=0 nf=0 o=out rows=1024
    mkdir -p "$w"
    ok() { np=$((np + 1)); }
    bad() { nf=$((nf + 1)); echo "FAIL $*"; sed 's/^/    /' "$w/err" | head -4; }
    [ "$fn" = max_sumexp_rows ] && o=s # the output compared (max_sumexp_rows has m and s, no out)
    [ $n = 262144 ] && { [ "$fn" != softmax_rows ] || [ "${TC_LONG_ROWS_QUICK:-0}" = 1 ]; } && rows=256
    local a=(run "$prog" --fn "$fn" --dtype T=$dt --random --seed 3 --device=cuda)
    if ! "$tc" "${a[@]}" --shape N=$rows,D=$n --output $o=$w/b1.npy >/dev/null 2>"$w/err" ||
        ! "$tc" "${a[@]}" --shape N=$rows,D=$n --output $o=$w/b2.npy >/dev/null 2>"$w/err" ||
        ! "$tc" "${a[@]}" --shape N=1,D=$n --output $o=$w/s.npy >/dev/null 2>"$w/err"; then
        bad "$fn $dt D=$n: a run failed"
        echo "RESULT $np $nf"
        return
    fi
    if cmp -s "$w/b1.npy" "$w/b2.npy"; then ok; else bad "$fn $dt D=$n N=$rows: two runs differ"; fi
    # TENSORC_ROWS_PIPE=1 (part 4): the same bits, its rows looping over the resident
    # clusters (the online pair has no pipe: its two passes, TENSORC_ROWS_ONLINE=0, on and off)
    if [ $n != 4097 ]; then
        local e=(TENSORC_ROWS_ONLINE=1) ref=$w/b1.npy pm
        case $fn in logsumexp_rows|max_sumexp_rows)
            e=(TENSORC_ROWS_ONLINE=0) ref=$w/q.npy
            env "${e[@]}" "$tc" "${a[@]}" --shape N=$rows,D=$n --output $o=$ref >/dev/null 2>"$w/err" ;;
        esac
        for pm in 0 1 2; do
            if env "${e[@]}" TENSORC_ROWS_PIPE=$pm "$tc" "${a[@]}" --shape N=$rows,D=$n --output $o=$w/p.npy \
                    >/dev/null 2>"$w/err" && cmp -s "$ref" "$w/p.npy"; then ok
            else bad "$fn $dt D=$n N=$rows ${e[*]}: TENSORC_ROWS_PIPE=$pm differs (or failed)"; fi
            [ $pm = 0 ] && continue
            if env "${e[@]}" TENSORC_ROWS_PIPE=$pm "$tc" "${a[@]}" --shape N=100,D=$n --check >/dev/null \
                    2>"$w/err"; then ok
            else bad "$fn $dt D=$n N=100 ${e[*]} TENSORC_ROWS_PIPE=$pm: --check"; fi
        done
        # the rows' ticket (TENSORC_ROWS_TICKET, on with the pipe): every row of the
        # batch the same bits as each cluster taking every step-th row
        if env "${e[@]}" TENSORC_ROWS_TICKET=0 "$tc" "${a[@]}" --shape N=$rows,D=$n \
                --output $o=$w/t0.npy >/dev/null 2>"$w/err" && cmp -s "$ref" "$w/t0.npy"; then ok
        else bad "$fn $dt D=$n N=$rows ${e[*]}: TENSORC_ROWS_TICKET=0 differs (or failed)"; fi
    fi
    data "$w/s.npy" >"$w/s.bin"
    local size
    size=$(stat -c %s "$w/s.bin")
    if cmp -s -n "$size" "$w/s.bin" <(data "$w/b1.npy"); then ok
    else bad "$fn $dt D=$n: the row alone differs from row 0 of $rows"; fi
    echo "RESULT $np $nf"
    rm -rf "$w"
}
pairs=
for fn in $fns; do pairs="$pairs $fn:f32 $fn:bf16"; done
[ "${TC_LONG_ROWS_QUICK:-0}" = 1 ] && pairs="softmax_rows:f32 rmsnorm_rows:bf16"
k=0
for pair in $pairs; do
    for n in 4097 65537 65544 262144; do
        k=$((k + 1))
        while [ "$(jobs -rp | wc -l)" -ge "${TC_GPU_JOBS:-8}" ]; do wait -n; done
        det_one "${pair%:*}" "${pair#*:}" $n >"$work/det.$k" 2>&1 &
    done
done
wait
for i in $(seq 1 $k); do
    grep -v '^RESULT' "$work/det.$i"
    read -r np nf < <(awk '/^RESULT/ { print $2, $3 }' "$work/det.$i")
    if [ -z "${np:-}" ]; then
        fail=$((fail + 1)); echo "FAIL check $i of parts 2-4 gave no result"
    else
        pass=$((pass + np)) fail=$((fail + nf))
    fi
done
echo "($SECONDS s)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
