#!/usr/bin/env bash
# attention.sh TENSORC - decode attention as one kernel (issue 13; fuse.h's
# attention rule, src/codegen/attn.cuh) on the GPU, against the reference
# interpreter (`run --check`), from examples/attention_decode.tc:
#
#   1. attention_decode (head dim 128), attention_decode_d64 and
#      attention_gqa (the prelude's attention over [B, KVH, G, D]) and
#      attention_decode_masked (a random bool mask over the keys: rows whose
#      keys are all masked give NaN in both) in f16, bf16 and f32, at
#      context lengths 1, 129, 8191 and 8192, batch 1, 3 and 8, groups of 1
#      and 8 query heads per KV head (and 17: three groups of 8 rows, blocks of their own).
#   2. Bitwise determinism: the same call twice, outputs byte-identical.
#   3. Each function is one kernel (its --emit=plan has one step).
#   4. tests/gpu/attention_fma.tc (head dims 40 and 30) in f16 and bf16:
#      the FMA path, which an sm_75 GPU takes at every head dim.
#   5. The TENSORC_ATTN_* variants (chunk, warps, prefetch, the ring's
#      depth: sched_attn.c), the sets bench/README.md times
#      (TC_ATTN_KNOBS="CH/W/PF[/RING] ..." to change them; RING unset: its
#      default, the register path): attention_decode and attention_decode_masked in f16
#      at contexts 1, 129, 8192 (batch 1 and 8) and groups of 17 rows,
#      attention_decode_d64 and attention_d40 in bf16, and each variant's
#      output twice to the same bits.
#      CH/W/PF/RING/SPLIT: a fifth field sets TENSORC_ATTN_SPLIT (each of
#      SPLIT warps on its own keys of the chunk; W and RING then unused).
#   6. Batch invariance: batch item 0 of B=8 and the same item at B=1 give
#      the same bits (at 8192 and 38395 keys: the combine tree's 2 and 3
#      levels at chunk 128), by default and under TENSORC_ATTN_SPLIT=8 and
#      16 (TC_ATTN_INV="..." the knob settings, "-" the default).
#   7. The ring (TENSORC_ATTN_RING=1, 2, 3, 4 and 6; 0, the default) gives the
#      same bits as the register path (TENSORC_ATTN_RING=0): head dims 128,
#      96, 64 and 32, f16 and bf16, a mask, contexts 1, 129 and 8191, batch
#      1, 3 and 8, 4 and 8 warps (TC_ATTN_RINGS="1 2 ..." to change the
#      depths).
#
# TC_ATTN_DTYPES="f16" limits part 1.  Parts 1, 4 and 5's checks run
# TC_GPU_JOBS at once (tests/gpu/pjobs.sh, default 8).  Prints "N passed, M failed" last;
# exit 0 when none failed.
set -u
tc=$(realpath "${1:?usage: attention.sh TENSORC}")
here=$(cd "$(dirname "$0")" && pwd)
prog=$here/../../examples/attention_decode.tc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; sed 's/^/    /' "$work/err" | head -4; }

fns="attention_decode attention_decode_d64 attention_decode_masked attention_gqa"
for fn in $fns; do
    if "$tc" compile "$prog" --fn "$fn" --dtype T=f16 --emit=plan >"$work/plan" 2>"$work/err" &&
        [ "$(grep -c 'step [0-9]*:' "$work/plan")" = 1 ] && grep -q tc_attn "$work/plan"; then
        ok
    else
        bad "$fn: not one attention kernel"; cat "$work/plan" | head -20
    fi
done
. "$here/pjobs.sh"
for dt in ${TC_ATTN_DTYPES:-f16 bf16 f32}; do
    for fn in $fns; do
        for s in B=1,KVH=2,G=8,L=1 B=3,KVH=2,G=1,L=129 B=1,KVH=2,G=8,L=129 B=3,KVH=1,G=8,L=8191 \
                 B=1,KVH=2,G=8,L=8192 B=8,KVH=2,G=8,L=8192 B=2,KVH=1,G=17,L=300 B=1,KVH=1,G=8,L=38395; do
            pj_add "$fn $dt $s" "$tc" run "$prog" --fn "$fn" --shape "$s" --dtype "T=$dt" --random --seed 13 --check
        done
    done
done
# the FMA path in f16 and bf16 (head dim 40): every head dim's path on an
# sm_75 GPU, where attn.cuh used to run the tensor-core path with its mma
# compiled out (zeros; found on the host emulator, tests/emu)
for dt in ${TC_ATTN_DTYPES:-f16 bf16}; do
    [ "$dt" = f32 ] && continue
    for s in B=1,KVH=2,G=8,L=1 B=3,KVH=1,G=17,L=300 B=2,KVH=2,G=8,L=8192; do
        pj_add "attention_d40 $dt $s" "$tc" run "$here/attention_fma.tc" --fn attention_d40 --shape "$s" \
            --dtype "T=$dt" --random --seed 13 --check
        pj_add "attention_d30 $dt $s" "$tc" run "$here/attention_fma.tc" --fn attention_d30 --shape "$s" \
            --dtype "T=$dt" --random --seed 13 --check
    done
done
# the checks so far first: the serial runs below compile their kernels cold
pj_run
for fn in $fns; do
    for i in 1 2; do
        "$tc" run "$prog" --fn "$fn" --shape B=8,KVH=2,G=8,L=8192 --dtype T=f16 --random --seed 5 \
            --output "out=$work/o$i.npy" >/dev/null 2>"$work/err"
    done
    if cmp -s "$work/o1.npy" "$work/o2.npy"; then ok; else bad "$fn: not deterministic"; fi
done
# 6. Batch invariance: batch item 0 at B=8 and alone at B=1 give the same
# bits (the split, and so the combine tree, depends on the context alone),
# at 8192 keys (64 splits: two levels) and 38395 (300: three)
for L in 8192 38395; do
    if python3 - "$work" "$L" <<'PY' 2>"$work/err"
import random, struct, sys
d, L = sys.argv[1], int(sys.argv[2])
rnd = random.Random(3)
# random f16 bits with the exponent's top bit clear: finite, |x| < 2
table = bytes(b & 0xBF for b in range(256))
def save(path, shape, data):  # .npy version 1.0, little-endian f16
    hdr = "{'descr': '<f2', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % n for n in shape)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(data)
for n, shape in (("q", (8, 2, 8, 1, 128)), ("k", (8, 2, 1, L, 128)), ("v", (8, 2, 1, L, 128))):
    count = 1
    for x in shape:
        count *= x
    data = bytearray(rnd.randbytes(2 * count))
    data[1::2] = data[1::2].translate(table)
    save(f"{d}/{n}8.npy", shape, data)
    save(f"{d}/{n}1.npy", (1,) + shape[1:], data[: len(data) // 8])
PY
    then
      for kn in ${TC_ATTN_INV:-- TENSORC_ATTN_SPLIT=8 TENSORC_ATTN_SPLIT=16}; do
        [ "$kn" = - ] && kn=
        rm -f "$work/b1.npy" "$work/b8.npy"
        for b in 1 8; do
            env $kn "$tc" run "$prog" --fn attention_decode --dtype T=f16 --input "q=$work/q$b.npy" --input "k=$work/k$b.npy" \
                --input "v=$work/v$b.npy" --output "out=$work/b$b.npy" >/dev/null 2>>"$work/err"
        done
        # the data after each header: batch 1's must be batch 8's first eighth
        if python3 -c "import sys
def data(p):
    b = open(p, 'rb').read()
    return b[10 + int.from_bytes(b[8:10], 'little'):]
a, b = data(sys.argv[1]), data(sys.argv[2])
sys.exit(0 if a and len(b) == 8 * len(a) and a == b[:len(a)] else 1)" "$work/b1.npy" "$work/b8.npy" 2>>"$work/err"; then
            ok
        else
            bad "batch 1 and 8 differ at L=$L ${kn:-(default)}"
        fi
      done
    else
        bad "batch invariance: could not write the inputs"
    fi
done
# 7. the ring against the register path: the same bits (side by side: a
# job runs both and compares their outputs)
fma=$here/attention_fma.tc
ringcmp='d=$(mktemp -d); trap "rm -rf $d" EXIT; tc=$1 f=$2 fn=$3 s=$4 dt=$5 w=$6; shift 6
run() { env TENSORC_ATTN_WARPS=$w "$@" "$tc" run "$f" --fn "$fn" --shape "$s" --dtype "T=$dt" --random --seed 7 \
    --output "out=$d/$x.npy" >/dev/null; }
x=a run TENSORC_ATTN_RING=0 && x=b run "$@" && [ -s "$d/a.npy" ] && cmp "$d/a.npy" "$d/b.npy"'
for rg in ${TC_ATTN_RINGS:-1 2 3 4 6}; do
    R=(TENSORC_ATTN_RING=$rg)
    [ "$rg" = - ] && R=() # the default depth
    for r in "$prog attention_decode B=1,KVH=2,G=8,L=8191 f16" "$prog attention_decode B=8,KVH=2,G=8,L=8191 bf16" \
             "$prog attention_decode B=3,KVH=1,G=17,L=129 f16" "$prog attention_decode_masked B=3,KVH=2,G=8,L=8191 bf16" \
             "$prog attention_decode_masked B=1,KVH=2,G=8,L=1 f16" "$prog attention_decode_d64 B=8,KVH=2,G=8,L=1000 bf16" \
             "$fma attention_d96 B=3,KVH=2,G=8,L=8191 f16" "$fma attention_d32 B=1,KVH=1,G=17,L=300 bf16"; do
        read -r f fn s dt <<<"$r"
        for w in 4 8; do
            # 8 warps: attention_decode, at the depths that fit (3 at most at head dim 128)
            [ $w = 8 ] && { [ "$fn" != attention_decode ] || [ "$rg" -gt 3 ]; } && continue
            pj_add "ring ${rg/-/default} ($w warps) = ring 0: $fn $dt $s" bash -c "$ringcmp" _ "$tc" "$f" "$fn" "$s" \
                "$dt" "$w" "${R[@]}"
        done
    done
done
pj_run
# the TENSORC_ATTN_* variants (CH/W/PF[/RING]; 512/4/1 is the default above, also run as a knob set)
for v in ${TC_ATTN_KNOBS:-64/4/1 128/4/1 256/4/1 512/4/1 256/8/1 128/8/1 64/8/1 256/4/2/0 128/4/2/0 64/8/2/0 512/4/1/0 512/4/1/3 512/4/1/4 512/4/1/6 512/8/1/2 128/4/1/1 512/4/2//8 512/4/1//8 512/4/1//16 512/4/1//4 64/4/2//16 256/4/2//8}; do
    IFS=/ read -r c w p rg sp <<<"$v"
    K=(TENSORC_ATTN_CHUNK=$c TENSORC_ATTN_WARPS=$w TENSORC_ATTN_PREFETCH=$p)
    [ -n "$rg" ] && K+=(TENSORC_ATTN_RING=$rg)
    [ -n "$sp" ] && K+=(TENSORC_ATTN_SPLIT=$sp)
    runs=()
    for fn in attention_decode attention_decode_masked; do
        for s in B=1,KVH=2,G=8,L=1 B=3,KVH=1,G=17,L=129 B=1,KVH=2,G=8,L=8192 B=8,KVH=2,G=8,L=8192; do
            runs+=("$prog $fn $s f16")
        done
    done
    runs+=("$prog attention_decode_d64 B=3,KVH=2,G=8,L=1000 bf16" "$here/attention_fma.tc attention_d40 B=3,KVH=1,G=17,L=300 bf16")
    for r in "${runs[@]}"; do
        read -r f fn s dt <<<"$r"
        pj_add "$v: $fn $dt $s" env "${K[@]}" "$tc" run "$f" --fn "$fn" --shape "$s" --dtype "T=$dt" --random \
            --seed 13 --check
    done
    for i in 1 2; do
        env "${K[@]}" "$tc" run "$prog" --fn attention_decode --shape B=8,KVH=2,G=8,L=8192 --dtype T=f16 --random \
            --seed 5 --output "out=$work/o$i.npy" >/dev/null 2>"$work/err"
    done
    if [ -s "$work/o1.npy" ] && cmp -s "$work/o1.npy" "$work/o2.npy"; then ok; else bad "$v: not deterministic"; fi
    rm -f "$work/o1.npy" "$work/o2.npy"
done
pj_run
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
