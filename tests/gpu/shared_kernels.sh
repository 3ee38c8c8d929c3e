#!/usr/bin/env bash
# shared_kernels.sh [BUILD_DIR] - on a GPU: the long chains of
# tests/compile_time/gen.sh, whose compact kernels are emitted once and
# launched by many steps over their own buffers (src/codegen/codegen.h),
# give what the reference interpreter gives (`tensorc run --check`), at
# shapes that exercise the looped rows path and several blocks.  (The
# 64-bit variant is the same text but for idx_t: tests/unit/test_codegen.)
# Prints "N passed, M failed".
set -u
build=${1:-build}
tc=$(realpath "$build/tensorc")
here=$(cd "$(dirname "$0")" && pwd)
gen=$here/../compile_time/gen.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TENSORC_CACHE_DIR=$work/cache
pass=0 fail=0
for spec in "reduce 250 R=37,D=1000" "reduce 1000 R=8,D=4099" "pointwise 2500 R=129,D=515" \
            "pointwise 10000 R=3,D=1001" "layernorm 32 R=65,D=768" "layernorm 128 R=9,D=2048"; do
    set -- $spec
    bash "$gen" "$1" "$2" >"$work/p.tc"
    if "$tc" run "$work/p.tc" --random --shape "$3" --device=cuda --check >"$work/out" 2>"$work/err"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $1 $2 at $3: $(grep -v '^note' "$work/err" | head -3)"
    fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
