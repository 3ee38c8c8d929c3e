#!/usr/bin/env bash
# Golden dumps: for every examples/*.tc and tests/golden/extra/*.tc, the
# output of `tensorc compile F --emit=STAGE` for every stage the stage table
# (src/driver/stages.def) marks SF_GOLDEN must equal its golden file NAME.EXT:
#     ast -> NAME.ast      graph -> NAME.graph    lowered -> NAME.lowered
#     fused -> NAME.fused  sched -> NAME.sched    cuda -> NAME.cu
# (cuda without --fn is the file's one NVRTC unit: every function's kernels
# and, in the trailing comment, every launch plan).  The helpers every unit
# starts with (between its first line and the first "/* ---- fn") are the
# same for all files: they are compared once, against helpers.cu, and left
# out of each NAME.cu, so a kernel's golden shows just its kernels.
#
#   tests/golden/run.sh [TENSORC_BIN] [--update]
#
# TENSORC_BIN defaults to build/tensorc.  --update rewrites the golden files
# from the current output (review the diff before committing it).  Each file
# is compiled from its own directory by its base name, so locations in the
# dumps ("softmax.tc:7:9") do not depend on where the tree lives.  Prints a
# unified diff for each mismatch and "N passed, M failed" last.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
update=0 bin=
for a in "$@"; do
    case $a in
    --update) update=1 ;;
    *) bin=$a ;;
    esac
done
tc=$(realpath "${bin:-$root/build/tensorc}")
if [ ! -x "$tc" ]; then echo "no tensorc binary at $tc (build first)"; exit 2; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the stages dumped and the golden file extension of each: the SF_GOLDEN
# lines of the stage table, src/driver/stages.def (STAGE(ID, "name", "ext", flags, ...))
stages=() exts=()
while IFS='|' read -r name e; do stages+=("$name"); exts+=("$e"); done < <(
    sed -n 's/^STAGE([A-Z_]*, *"\([a-z]*\)", *"\([a-z]*\)", *\([^,]*SF_GOLDEN[^,]*\),.*/\1|\2/p' "$root/src/driver/stages.def")
if [ ${#stages[@]} -eq 0 ]; then echo "no SF_GOLDEN stage in $root/src/driver/stages.def"; exit 2; fi
ext() { local i; for i in "${!stages[@]}"; do [ "${stages[$i]}" = "$1" ] && echo "${exts[$i]}"; done; }

pass=0 fail=0
declare -A seen=()
for f in "$root"/examples/*.tc "$here"/extra/*.tc; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .tc)
    if [ -n "${seen[$name]:-}" ]; then
        echo "FAIL $f: the name '$name' is also used by ${seen[$name]}"; fail=$((fail + 1)); continue
    fi
    seen[$name]=$f
    for stage in "${stages[@]}"; do
        golden=$here/$name.$(ext "$stage")
        (cd "$(dirname "$f")" && "$tc" compile "$(basename "$f")" --emit=$stage) >"$tmp/out" 2>"$tmp/err"
        rc=$?
        if [ $rc -eq 0 ] && [ "$stage" = cuda ]; then
            # line 1, then from the first function on; the helpers apart
            awk 'NR == 1 { print; next } /^\/\* ---- fn / { started = 1 } started { print }' "$tmp/out" >"$tmp/kernels"
            awk 'NR > 1 && /^\/\* ---- fn / { exit } NR > 1 { print }' "$tmp/out" >"$tmp/helpers"
            if [ $update -eq 1 ] && [ -z "${helpers_done:-}" ]; then
                cmp -s "$tmp/helpers" "$here/helpers.cu" || { cp "$tmp/helpers" "$here/helpers.cu"; echo "updated helpers.cu"; }
                helpers_done=1
            fi
            if ! cmp -s "$tmp/helpers" "$here/helpers.cu"; then
                echo "FAIL $name.cu: its helpers differ from tests/golden/helpers.cu:"
                diff -u "$here/helpers.cu" "$tmp/helpers" | head -20
                fail=$((fail + 1)); continue
            fi
            mv "$tmp/kernels" "$tmp/out"
        fi
        if [ $rc -ne 0 ]; then
            echo "FAIL $name.$(ext "$stage"): tensorc exited $rc"; sed 's/^/    /' "$tmp/err" | head -6
            fail=$((fail + 1)); continue
        fi
        if [ $update -eq 1 ]; then
            if ! cmp -s "$tmp/out" "$golden"; then cp "$tmp/out" "$golden"; echo "updated $(basename "$golden")"; fi
            pass=$((pass + 1))
        elif [ ! -e "$golden" ]; then
            echo "FAIL $(basename "$golden"): no golden file (run tests/golden/run.sh --update)"; fail=$((fail + 1))
        elif cmp -s "$tmp/out" "$golden"; then
            pass=$((pass + 1))
        else
            echo "FAIL $(basename "$golden") differs from tests/golden/$(basename "$golden"):"
            diff -u "$golden" "$tmp/out" | head -40
            fail=$((fail + 1))
        fi
    done
done
# golden files whose program is gone
for g in $(for e in "${exts[@]}"; do echo "$here"/*."$e"; done); do
    [ "$(basename "$g")" = helpers.cu ] && continue
    [ -e "$g" ] || continue
    name=$(basename "${g%.*}")
    if [ -z "${seen[$name]:-}" ]; then
        if [ $update -eq 1 ]; then rm "$g"; echo "removed $(basename "$g")"
        else echo "FAIL $(basename "$g"): no examples/$name.tc or extra/$name.tc"; fail=$((fail + 1)); fi
    fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
