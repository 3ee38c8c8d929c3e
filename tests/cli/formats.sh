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

# --- --json ---------------------------------------------------------------------------
# validate SCHEMA FILE: FILE is one JSON document valid under docs/schema/SCHEMA.json
pyjs=
for cand in python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import jsonschema' 2>/dev/null; then pyjs=$cand; break; fi
done
[ -n "$pyjs" ] || echo "SKIP: python3-jsonschema is not installed (scripts/deps.sh installs it): --json is only checked to parse"
validate() {
    local py=${pyjs:-python3}
    "$py" - "$root/docs/schema/$1.json" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[2]))          # strict JSON: no NaN, no trailing commas
try:
    import jsonschema
except ImportError:
    sys.exit(0)
jsonschema.Draft202012Validator.check_schema(json.load(open(sys.argv[1])))
jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(doc)
PY
}
# every example's explain and plan documents, validated in one python
# process (one start and one import of jsonschema, where a process each was
# most of this test's time): a line each, "ok LABEL" or "FAIL LABEL: why"
: >"$tmp/validate.list"
for f in "$root"/examples/*.tc "$here"/progs.tc "$here"/edges.tc; do
    name=$(basename "$f" .tc)
    if "$tc" explain "$f" --json >"$tmp/$name.explain.json" 2>"$tmp/err"; then
        printf 'explain\t%s\texplain --json %s\n' "$tmp/$name.explain.json" "$name" >>"$tmp/validate.list"
    else bad "explain --json $name" "$tmp/err"; fi
    if "$tc" compile "$f" --emit=plan --json >"$tmp/$name.plan.json" 2>"$tmp/err"; then
        printf 'plan\t%s\t--emit=plan --json %s\n' "$tmp/$name.plan.json" "$name" >>"$tmp/validate.list"
    else bad "--emit=plan --json $name" "$tmp/err"; fi
done
"${pyjs:-python3}" - "$root/docs/schema" "$tmp/validate.list" >"$tmp/validated" 2>&1 <<'PY'
import json, sys
try:
    import jsonschema
except ImportError:
    jsonschema = None
schemas = {}
for line in open(sys.argv[2]):
    schema, path, label = line.rstrip("\n").split("\t")
    try:
        doc = json.load(open(path))          # strict JSON: no NaN, no trailing commas
        if jsonschema:
            if schema not in schemas:
                sch = json.load(open("%s/%s.json" % (sys.argv[1], schema)))
                jsonschema.Draft202012Validator.check_schema(sch)
                schemas[schema] = jsonschema.Draft202012Validator(sch)
            schemas[schema].validate(doc)
        print("ok %s" % label)
    except Exception as e:
        print("FAIL %s: %s" % (label, str(e).replace("\n", " ")[:600]))
PY
pass=$((pass + $(grep -c '^ok ' "$tmp/validated")))
fail=$((fail + $(grep -c '^FAIL ' "$tmp/validated")))
grep -v '^ok ' "$tmp/validated"
# every document listed got its line (a python that died part way fails here)
[ "$(grep -c '^\(ok\|FAIL\) ' "$tmp/validated")" = "$(wc -l <"$tmp/validate.list")" ] && ok ||
    bad "every explain and plan document validated ($(wc -l <"$tmp/validate.list") listed)" "$tmp/validated"
# the JSON says what the text says: as many kernels and decisions as explain's lines
"$tc" explain "$root/examples/layernorm.tc" >"$tmp/ln.txt"
python3 - "$tmp/layernorm.explain.json" "$tmp/ln.txt" <<'PY' 2>"$tmp/err" && ok || bad "explain --json matches explain" "$tmp/err"
import json, sys
doc = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read().splitlines()
dec = sum(1 for f in doc["functions"] for d in f["decisions"] if not d["superseded"])
tdec = sum(1 for l in text if l.split()[0] in ("fused", "refused", "split") and "->" in l)
ker = sum(len(f["kernels"]) for f in doc["functions"])
tker = sum(1 for l in text if l.startswith("  kernel "))
assert (dec, ker) == (tdec, tker), ((dec, ker), (tdec, tker))
PY
# the attention rule (examples/attention_decode.tc): its kernel is of kind "attention", the
# refusals between the pattern's nodes are marked superseded and left out of the text, which
# says how many; the rule's own decision stands
"$tc" explain "$root/examples/attention_decode.tc" >"$tmp/att.txt"
python3 - "$tmp/attention_decode.explain.json" "$tmp/att.txt" <<'PY' 2>"$tmp/err" && ok || bad "explain: the attention kernel and its superseded refusals" "$tmp/err"
import json, re, sys
doc = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
f = doc["functions"][0]
assert doc["version"] == 2
assert [k["kind"] for k in f["kernels"]] == ["attention"], [k["kind"] for k in f["kernels"]]
sup = [d for d in f["decisions"] if d["superseded"]]
assert sup and all(d["outcome"] in ("refused", "split") for d in sup), sup
rule = [d for d in f["decisions"] if d["outcome"] == "fused" and d["why"].startswith("attention rule")]
assert len(rule) == 1 and not rule[0]["superseded"], rule
first = text.split("\n\n")[0]
assert not re.search(r"^  refused", first, re.M), first
assert "(%d earlier decisions between nodes the attention rule" % len(sup) in first, first
PY
# a file name that needs escaping
cp "$root/examples/softmax.tc" "$tmp/we\"ird\\ name.tc"
"$tc" explain "$tmp/we\"ird\\ name.tc" --json >"$tmp/esc.json" 2>"$tmp/err" && validate explain "$tmp/esc.json" 2>>"$tmp/err" &&
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["file"].endswith("we\"ird\\ name.tc")' "$tmp/esc.json" &&
    ok || bad "explain --json: an escaped file name" "$tmp/err"
# a document the schema must refuse (the check can fail): a decision without its reason
if [ -n "$pyjs" ]; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["functions"][0]["decisions"][0]["why"]; json.dump(d, open(sys.argv[2],"w"))' \
        "$tmp/softmax.explain.json" "$tmp/broken.json"
    validate explain "$tmp/broken.json" 2>/dev/null && bad "the schema refuses a decision without 'why'" || ok
fi
# --json where it does not belong
"$tc" compile "$root/examples/softmax.tc" --emit=fused --json 2>"$tmp/err"
[ $? = 2 ] && grep -q -- "--json is for --emit=plan and --emit=explain" "$tmp/err" && ok || bad "--emit=fused --json: usage error" "$tmp/err"
"$tc" run "$root/examples/softmax.tc" --random --json 2>"$tmp/err" >/dev/null
[ $? = 2 ] && grep -q -- "--json goes with --bench" "$tmp/err" && ok || bad "run --json without --bench: usage error" "$tmp/err"
# cache stats --json, on a cache of its own
TENSORC_CACHE_DIR="$tmp/cache" "$tc" cache stats --json >"$tmp/cache.json" 2>"$tmp/err" && validate cache-stats "$tmp/cache.json" 2>>"$tmp/err" &&
    ok || bad "cache stats --json" "$tmp/err"
# run --bench --json on the fake driver (tests/fakegpu), when given: stdout is the document alone
fake=${2:-}
if [ -n "$fake" ]; then
    TENSORC_LIBCUDA=$fake TENSORC_CUBLAS=$fake TENSORC_CACHE_DIR="$tmp/cache" "$tc" run "$root/examples/mlp_block.tc" \
        --fn mlp_block --random --shape N=4,D=8,H=16 --bench --json >"$tmp/bench.json" 2>"$tmp/err" &&
        validate bench "$tmp/bench.json" 2>>"$tmp/err" && grep -q '^out: f32\[4, 8\]' "$tmp/err" && ok ||
        bad "run --bench --json" "$tmp/err"
    # --groups: one launch timed; the outputs shown go to stderr
    TENSORC_LIBCUDA=$fake TENSORC_CUBLAS=$fake TENSORC_CACHE_DIR="$tmp/cache" "$tc" run "$root/examples/sgd_momentum.tc" \
        --random --groups 100,0,7,3,5,9 --bench --json >"$tmp/gbench.json" 2>"$tmp/err" &&
        validate bench "$tmp/gbench.json" 2>>"$tmp/err" && grep -q '"function": "sgd_momentum over 6 groups"' "$tmp/gbench.json" &&
        grep -q 'more groups not shown' "$tmp/err" && ok || bad "run --groups --bench --json" "$tmp/err"
    # every group empty: nothing timed, no document
    TENSORC_LIBCUDA=$fake TENSORC_CUBLAS=$fake TENSORC_CACHE_DIR="$tmp/cache" "$tc" run "$root/examples/sgd_momentum.tc" \
        --random --groups 0,0 --bench --json >"$tmp/ebench.json" 2>"$tmp/err" && [ ! -s "$tmp/ebench.json" ] &&
        grep -q "nothing to time" "$tmp/err" && ok || bad "run --groups 0,0 --bench --json: no document" "$tmp/err"
else
    echo "SKIP: no fake CUDA driver given: run --bench --json is not checked"; skip=$((skip + 2))
fi

echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
