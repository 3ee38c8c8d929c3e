#!/usr/bin/env bash
# run.sh BUILD_DIR [SECONDS] - run the libFuzzer harnesses built by
# build.sh in BUILD_DIR: first every file of the seed corpus once (the
# reproducers of past findings live there, so this is a regression test),
# then SECONDS (default 60) of fuzzing each, the harnesses at the same time
# (one process each, one core each on CI's two: the same fuzzing time as
# one after the other, in half the wall time; TC_FUZZ_SERIAL=1 runs them
# one after the other), from a scratch copy of the corpus.  Exits non-zero on any
# finding (crash, sanitizer report, TC_ERR_INTERNAL, leak, timeout, out of
# memory); the input that caused it is kept in BUILD_DIR/fuzz-artifacts/
# and named in the output.
set -u
build=$(realpath "${1:?usage: run.sh BUILD_DIR [SECONDS]}")
secs=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
art=$build/fuzz-artifacts
mkdir -p "$art"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work   # fuzz_npy's scratch files (each harness its own below)
status=0
# the lines of a libFuzzer log that say what went wrong
findings='^fuzz_(compile|npy): |runtime error|ERROR: |^SUMMARY|Test unit written'
# harness H: its seeds, then its fuzzing; its report in $work/H.out, its
# status in $work/H.rc
harness() {
    local h=$1 status=0 bin=$build/tests/fuzz/fuzz_$h dict=() opts runs
    export TMPDIR=$work/tmp-$h
    if [ ! -x "$bin" ]; then
        echo "FAIL fuzz_$h: $bin not built (tests/fuzz/build.sh)"
        return 1
    fi
    [ "$h" = compile ] && dict=(-dict="$here/tc.dict")
    opts=(-timeout=20 -rss_limit_mb=2048 -max_len=4096 -artifact_prefix="$art/$h-" "${dict[@]}")
    # each file by name, so the log names the one that fails
    if ! "$bin" "${opts[@]}" "$here/corpus/$h"/* >"$work/$h-seeds.log" 2>&1; then
        echo "FAIL fuzz_$h: $(grep '^Running: ' "$work/$h-seeds.log" | tail -1 | sed 's/^Running: //') fails:"
        grep -E "$findings" "$work/$h-seeds.log" | head -20
        return 1
    fi
    mkdir -p "$work/$h"
    if "$bin" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 "$work/$h" \
            "$here/corpus/$h" >"$work/$h.log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$h.log")
        echo "PASS fuzz_$h: ${runs:-?} executions in ${secs} s, no finding"
    else
        echo "FAIL fuzz_$h: a finding (reproduce: $bin FILE):"
        grep -E "$findings" "$work/$h.log" | head -20
        status=1
    fi
    return $status
}
hs=(compile npy)
for h in "${hs[@]}"; do
    # each its own scratch directory (fuzz_npy's files)
    mkdir -p "$work/tmp-$h"
    if [ "${TC_FUZZ_SERIAL:-0}" = 1 ]; then
        (harness "$h" >"$work/$h.out" 2>&1; echo $? >"$work/$h.rc")
    else
        (harness "$h" >"$work/$h.out" 2>&1; echo $? >"$work/$h.rc") &
    fi
done
wait
for h in "${hs[@]}"; do
    cat "$work/$h.out"
    [ "$(cat "$work/$h.rc" 2>/dev/null)" = 0 ] || status=1
done
exit $status
