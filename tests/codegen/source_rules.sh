#!/usr/bin/env bash
# source_rules.sh SRC_DIR - code generation builds its text and never reads
# it back (issue 12): no file under src/codegen calls strstr, strncmp,
# strrchr or strpbrk (the calls that search or re-parse text), and none is
# over 700 lines.  Comments are not code: a line whose first word is a
# comment's is skipped.
set -u
src=${1:?usage: source_rules.sh SRC_DIR}/src/codegen
fail=0
shopt -s nullglob
hits=$(grep -nE '\b(strstr|strncmp|strrchr|strpbrk)[[:space:]]*\(' "$src"/*.c "$src"/*.h |
    grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/\*|\*|//)')
if [ -n "$hits" ]; then
    echo "FAIL src/codegen searches text (build it instead):"
    echo "$hits" | sed 's/^/    /'
    fail=1
fi
for f in "$src"/*.c "$src"/*.h "$src"/*.cuh; do
    n=$(wc -l <"$f")
    if [ "$n" -gt 700 ]; then
        echo "FAIL ${f#"$1"/}: $n lines (at most 700)"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "src/codegen: no text searched, every file at most 700 lines"
exit $fail
