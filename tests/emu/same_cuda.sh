#!/usr/bin/env bash
# tests/emu/same_cuda.sh TENSORC REF_TENSORC - two builds of tensorc generate
# the same CUDA: `--emit=cuda` (every kernel and the launch plan, which is all
# that emu.py and rows.sh take from tensorc) byte for byte, for every program
# the emulators run and then some.  ctest emu_same_cuda in the UBSan build
# (clang), against the Release build's tensorc (gcc: REF_TENSORC, from
# scripts/test.sh's TC_SAME_CUDA_REF): clang evaluates operands in another
# order than gcc, and a difference in the generated code would be a bug the
# emulators see only in one build.  Where the text is the same, the Release
# build's emulator runs (scan_emu, rows_emu, ...) hold for the UBSan build's
# tensorc too, and the UBSan build watches tensorc's code generation for
# every program below, which it did by running scan_emu and rows_emu (their
# quick subsets, about 3 minutes of emulation) before.
#
# Programs: every function of every .tc of examples/, tests/gpu/, tests/emu/
# and bench/cases/ alone (--fn, as the emulators compile them), with no
# --dtype and with T=f16 and T=bf16; the scan
# programs (scans.sh's) under each scan knob scans.sh sets, the rows and
# column-partial programs (rows.sh's) under each of rows.sh's settings.  A
# function that neither build compiles (a dtype it has no T for) is skipped;
# one that only one build compiles, or whose text differs, fails (the first
# lines of the diff shown).  Prints "N passed, M failed" last; exit 77
# (skipped) when REF_TENSORC is not given or not there.
set -u
tc=$(realpath "${1:?usage: same_cuda.sh TENSORC REF_TENSORC}")
ref=${2:-${TC_SAME_CUDA_REF:-}}
if [ -z "$ref" ] || [ ! -x "$ref" ]; then
    echo "SKIP: no reference tensorc (REF_TENSORC or TC_SAME_CUDA_REF: scripts/test.sh gives the Release build's)"
    exit 77
fi
ref=$(realpath "$ref")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0
# same ENV... -- FILE ARGS...: both builds' --emit=cuda of FILE
same() {
    local env=()
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    env "${env[@]}" "$tc" compile "$@" --emit=cuda >"$tmp/a" 2>"$tmp/ae"
    local ra=$?
    env "${env[@]}" "$ref" compile "$@" --emit=cuda >"$tmp/b" 2>"$tmp/be"
    local rb=$?
    if [ $ra -ne 0 ] && [ $rb -ne 0 ]; then
        skip=$((skip + 1)); [ -n "${TC_SAME_CUDA_VERBOSE:-}" ] && echo "skip ${env[*]} $*: $(head -1 "$tmp/ae")"
    elif [ $ra -ne $rb ]; then
        echo "FAIL ${env[*]} $*: exit $ra here, $rb in the reference build"
        head -3 "$tmp/ae" "$tmp/be" | sed 's/^/    /'
        fail=$((fail + 1))
    elif ! cmp -s "$tmp/a" "$tmp/b"; then
        echo "FAIL ${env[*]} $*: the generated CUDA differs from the reference build's"
        diff "$tmp/b" "$tmp/a" | head -10 | sed 's/^/    /'
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
}
# fns FILE: its functions (each compiled alone, --fn, as the emulators do)
fns() { sed -n 's/^fn \([A-Za-z_][A-Za-z0-9_]*\).*/\1/p' "$1"; }
# each ENV... -- FILE ARGS...: same for each function of FILE
each() {
    local env=() fn
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    for fn in $(fns "$1"); do same "${env[@]}" -- "$@" --fn "$fn"; done
}
for f in examples/*.tc tests/gpu/*.tc tests/emu/*.tc bench/cases/*.tc; do
    each -- "$f"
    each -- "$f" --dtype T=f16
    each -- "$f" --dtype T=bf16
done
# scans.sh's programs under its knobs (the f64 minGRU: its file made f64)
sed 's/f32/f64/g' examples/mingru_backward.tc >"$tmp/mingru64.tc"
each -- "$tmp/mingru64.tc"
for k in TENSORC_SCAN_CHECKPOINT=5 TENSORC_SCAN_CHECKPOINT=off TENSORC_SCAN_UNROLL=4 TENSORC_SCAN_UNROLL=16 \
        TENSORC_SCAN_HOIST=0 TENSORC_SCAN_LSE=0 TENSORC_SCAN_ASYNC=1 TENSORC_SCAN_PAIR_LSE=1 TENSORC_SCAN_MINBLOCKS=9; do
    for f in tests/gpu/scans.tc examples/mingru.tc examples/mingru_backward.tc "$tmp/mingru64.tc"; do
        each "$k" -- "$f"
    done
done
# rows.sh's programs under its settings (the column partials at COL_SPLIT=4, as it runs them)
for k in TENSORC_ROWS_REGS=8 TENSORC_ROWS_REGS=16 TENSORC_ROWS_REGS=32 TENSORC_ROWS_ONLINE=0 TENSORC_ROWS_PAIR=2 TENSORC_MAX_NAN=0; do
    for f in bench/cases/softmax.tc bench/cases/rmsnorm.tc bench/cases/cross_entropy.tc; do
        each "$k" -- "$f"
    done
done
for k in "" TENSORC_COLPART_PREFETCH=1 TENSORC_COL_ROWS=1 TENSORC_COL_ROWS=8 TENSORC_COL_ROWS=33 \
        TENSORC_ROWS_REGS=16 "TENSORC_ROWS_REGS=16 TENSORC_COLPART_PREFETCH=1" \
        "TENSORC_ROWS_REGS=16 TENSORC_COL_ROWS=16 TENSORC_COLPART_PREFETCH=1"; do
    # shellcheck disable=SC2086
    each TENSORC_COL_SPLIT=4 $k -- examples/layernorm_backward.tc
    # shellcheck disable=SC2086
    each TENSORC_COL_SPLIT=4 $k -- tests/emu/colpart.tc --dtype T=bf16
done
echo "($skip skipped: programs neither build compiles, as a dtype they have no variable for)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
