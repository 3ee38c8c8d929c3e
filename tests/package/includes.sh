#!/usr/bin/env bash
# includes.sh ROOT - what tools/ and bench/ include: they are written
# against include/tensorc.h alone.  A "#include "X"" there may name
# tensorc.h or a header of the same folder (cli.h, host.h, npy.h, bench.h);
# the list below of internal includes still allowed is empty, and stays so.
# The test fails on an include that is not listed (a dependence on the
# library's insides: give the API what is needed instead) and on a listed
# one that is gone.  It prints how many remain.
set -u
root=$(realpath "${1:?usage: includes.sh ROOT}")
# FILE HEADER: the includes of internal headers still there
known='
'
found=$(cd "$root" && for f in tools/*.c tools/*.h bench/*.c bench/*.h; do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r h; do
        [ "$h" = tensorc.h ] && continue
        [ -f "$(dirname "$f")/$h" ] && continue
        echo "$f $h"
    done
done | sort -u)
want=$(echo "$known" | sed '/^$/d' | sort -u)
new=$(comm -23 <(echo "$found") <(echo "$want"))
gone=$(comm -13 <(echo "$found") <(echo "$want"))
fail=0
if [ -n "$new" ]; then
    echo "FAIL tools/ or bench/ include internal headers not in the list (use include/tensorc.h):"
    echo "$new" | sed 's/^/    /'
    fail=1
fi
if [ -n "$gone" ]; then
    echo "FAIL listed includes that are gone: take them out of tests/package/includes.sh:"
    echo "$gone" | sed 's/^/    /'
    fail=1
fi
n=$(echo "$found" | sed '/^$/d' | wc -l)
echo "$n internal includes remain in tools/ and bench/ (the goal is 0)"
if [ $fail -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
