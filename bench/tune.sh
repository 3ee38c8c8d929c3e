#!/usr/bin/env bash
# tune.sh BUILD_DIR - tc-bench over several settings of the scheduler's
# tuning knobs in one run (one GPU call answers many questions): each set
# of environment variables (src/sched/sched.c reads them when a program is
# compiled; the generated source differs, so each set also gets a kernel
# cache of its own) runs `tc-bench --no-ceiling --compile-reps 0` over the
# cases, every figure checked against the reference interpreter as usual.
#
#   TUNE_SETS="name=KNOB=V KNOB=V;name2=..."   the sets (';' between them;
#                    a set's name, '=', then its variables; "base=" for none)
#   TUNE_CASES="gelu_chain col_sum"           the cases (tc-bench --list)
#   OUT=DIR          where tune-NAME.json, .log and tune.md go (default .)
#
# Knobs: TENSORC_PW_UNROLL, TENSORC_FE_STEPS, TENSORC_FULL_UNROLL,
# TENSORC_FULL_GRID, TENSORC_COL_UNROLL, TENSORC_COL_SPLIT, TENSORC_COL_X,
# TENSORC_TILE_WHOLE, TENSORC_TILE_VEC, TENSORC_PW_BLOCK, TENSORC_COL_Y (sched.c's knob() calls say
# what each does), TENSORC_FE_PARAM, TENSORC_PW_ONCE, TENSORC_LOAD_EF (codegen;
# README.md's knob table),
# TENSORC_SCAN_CHECKPOINT (sched_ckpt.c: off, or the interval K),
# TENSORC_ATTN_CHUNK, TENSORC_ATTN_WARPS, TENSORC_ATTN_PREFETCH, TENSORC_ATTN_RING, TENSORC_ATTN_SPLIT (sched_attn.c;
# bench/README.md has the decode attention sets), TENSORC_MATMUL_KSLICE,
# _STAGES, _BK, _RESIDENT, _FENCE, _NORM, _DUAL (the generated matmul's variants:
# bench/README.md has their A/B set), TENSORC_COL_ROWS, TENSORC_COLPART_PREFETCH
# (the column partials: bench/README.md's set).  Prints a
# table (microseconds, case by set) and writes it to OUT/tune.md.
set -u
build=$(cd "${1:?usage: bench/tune.sh BUILD_DIR}" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-.}
mkdir -p "$out"
read -r -a cases <<< "${TUNE_CASES:?TUNE_CASES names the cases}"
IFS=';' read -r -a sets <<< "${TUNE_SETS:?TUNE_SETS names the sets}"
names=()
for s in "${sets[@]}"; do
    name=${s%%=*} vars=${s#*=}
    names+=("$name")
    echo "tune.sh: $name: $vars" >&2
    # shellcheck disable=SC2086
    env $vars TENSORC_CACHE_DIR="$out/cache-$name" "$build/tc-bench" --cases "$here/cases" \
        --no-ceiling --compile-reps 0 -o "$out/tune-$name.json" "${cases[@]}" 2> "$out/tune-$name.log"
    echo "tune.sh: $name: exit $?" >&2
done
python3 - "$out" "${names[@]}" <<'PY' | tee "$out/tune.md"
import json, sys
out, names = sys.argv[1], sys.argv[2:]
res, order = {}, []
for n in names:
    try:
        d = json.load(open(f"{out}/tune-{n}.json"))
    except Exception as e:
        print(f"{n}: no JSON ({e})")
        continue
    dev = d.get("device", "?")
    for c in d.get("cases", []):
        r = c.get("result") or {}
        name = c.get("name")
        if name not in order:
            order.append(name)
        res[(name, n)] = ("%.2f" % r["time_us"]) if r.get("status") == "ok" else "ERR %s" % r.get("error")
print("device:", dev)
print("| case | " + " | ".join(names) + " |")
print("| --- |" + " ---: |" * len(names))
for c in order:
    print(f"| {c} | " + " | ".join(res.get((c, n), "-") for n in names) + " |")
PY
