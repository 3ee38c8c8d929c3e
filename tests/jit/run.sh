#!/usr/bin/env bash
# The kernel cache across processes, through tc-jit-probe (one jit_image
# call per process; built next to tensorc).  Usage:
#     tests/jit/run.sh [TENSORC_BIN]   (default: build/tensorc)
# Checks, each with its own fresh TENSORC_CACHE_DIR: miss then hit with the
# same image; a flipped payload byte is detected, recompiled to the same
# image and the entry is good again; 8 concurrent processes on an empty
# cache all succeed with the same image; a cache directory that cannot be
# created (a path under a regular file: tests may run as root, so
# permissions alone would not stop a write) warns and still compiles.
# NVRTC is required (CI has the toolkit): a probe exiting 3 is a failure.
# Prints "N passed, M failed" last; exits 1 on failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tc=$(realpath "${1:-$root/build/tensorc}")
probe=$(dirname "$tc")/tc-jit-probe
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

cat >"$tmp/k.cu" <<'CU'
extern "C" __global__ void k(float *__restrict__ y, const float *__restrict__ x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 2.0f * x[i] + y[i];
}
CU

# p DIR ARGS...: run the probe with cache DIR; sets out, err, rc, cache, img.
p() {
    local dir=$1
    shift
    TENSORC_CACHE_DIR=$dir "$probe" "$tmp/k.cu" --arch=90 --verbose "$@" \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
    cache=$(sed -n 's/^cache: //p' "$tmp/out")
    nv=$(sed -n 's/^nvrtc: //p' "$tmp/out")
    img=$(sed -n 's/^image: //p' "$tmp/out")
}

if [ ! -x "$probe" ]; then
    echo "FAIL: $probe not built"
    echo "0 passed, 1 failed"
    exit 1
fi

# --- miss, then hit in a new process, same image ----------------------------
c=$tmp/c1
p "$c"
if [ $rc -eq 0 ] && [ "$cache" = miss ] && [ -n "$img" ]; then ok; else bad "first run: rc=$rc out='$out' err='$err'"; fi
first=$img
p "$c"
if [ $rc -eq 0 ] && [ "$cache" = hit ] && [ "$img" = "$first" ]; then ok; else bad "second run: rc=$rc out='$out' (first image $first)"; fi
# A hit needs NVRTC's version for the key: the first run left it in
# nvrtc.facts, so the second did not load NVRTC (src/runtime/nvrtc_facts.h).
if [ -f "$c/nvrtc.facts" ] && [ "$nv" = "not loaded" ]; then ok; else bad "warm run loaded NVRTC: nvrtc '$nv', facts: $(ls "$c")"; fi
# Facts that do not describe the library are not trusted: a corrupt file, a
# different library size, another environment.  Each run still hits.
cp "$c/nvrtc.facts" "$tmp/facts.good"
echo garbage >"$c/nvrtc.facts"
p "$c"
if [ $rc -eq 0 ] && [ "$cache" = hit ] && [ "$nv" = loaded ] && cmp -s "$c/nvrtc.facts" "$tmp/facts.good"; then ok; else bad "corrupt facts: rc=$rc nvrtc '$nv' cache '$cache' (and the file rewritten?)"; fi
sed 's/^stat \([0-9]*\)/stat 1\1/' "$tmp/facts.good" >"$c/nvrtc.facts"
p "$c"
if [ $rc -eq 0 ] && [ "$cache" = hit ] && [ "$nv" = loaded ]; then ok; else bad "stale facts (library size): nvrtc '$nv'"; fi
lib=$(sed -n 's/^lib //p' "$tmp/facts.good")
CUDA_HOME=/nonexistent-cuda-home p "$c"
if [ $rc -eq 0 ] && [ "$cache" = hit ] && [ "$nv" = loaded ] && [ -n "$lib" ]; then ok; else bad "facts of another environment: nvrtc '$nv'"; fi
p "$c" # the environment as before: the facts file is back to the usual one
if [ $rc -eq 0 ] && [ "$cache" = hit ] && [ "$nv" = loaded ]; then ok; else bad "facts rewritten for the other environment, then: nvrtc '$nv'"; fi
p "$c"
if [ $rc -eq 0 ] && [ "$nv" = "not loaded" ]; then ok; else bad "facts back: nvrtc '$nv'"; fi
# PTX is another key: a miss, then a hit.
p "$c" --ptx
if [ $rc -eq 0 ] && [ "$cache" = miss ] && [ "$img" != "$first" ]; then ok; else bad "ptx run: rc=$rc out='$out'"; fi
p "$c" --ptx
if [ $rc -eq 0 ] && [ "$cache" = hit ]; then ok; else bad "ptx second run: rc=$rc out='$out'"; fi

# --- a corrupted entry is recompiled, never loaded --------------------------
c=$tmp/c2
p "$c"
entries=("$c"/*.tck)
if [ $rc -eq 0 ] && [ ${#entries[@]} -eq 1 ] && [ -f "${entries[0]}" ]; then
    ok
    f=${entries[0]}
    size=$(stat -c %s "$f")
    # Flip the low bit of the last byte: the payload's, not the header's.
    b=$(tail -c 1 "$f" | od -An -tu1 | tr -d ' ')
    printf "\\$(printf %03o $((b ^ 1)))" | dd of="$f" bs=1 seek=$((size - 1)) conv=notrunc status=none
    b2=$(tail -c 1 "$f" | od -An -tu1 | tr -d ' ')
    if [ "$b2" -eq $((b ^ 1)) ]; then ok; else bad "could not corrupt $f ($b -> $b2)"; fi
    p "$c"
    if [ $rc -eq 0 ] && [ "$cache" = miss ] && [ "$img" = "$first" ]; then ok; else bad "after corruption: rc=$rc out='$out' (want miss, $first)"; fi
    p "$c"
    if [ $rc -eq 0 ] && [ "$cache" = hit ] && [ "$img" = "$first" ]; then ok; else bad "after recompiling: rc=$rc out='$out' (want hit, $first)"; fi
else
    bad "corruption setup: rc=$rc, entries: ${entries[*]}"
fi

# --- 8 concurrent processes on an empty cache -------------------------------
c=$tmp/c3
pids=()
for i in 1 2 3 4 5 6 7 8; do
    TENSORC_CACHE_DIR=$c "$probe" "$tmp/k.cu" --arch=90 >"$tmp/par$i.out" 2>"$tmp/par$i.err" &
    pids+=($!)
done
allok=1
for i in 1 2 3 4 5 6 7 8; do
    if ! wait "${pids[$((i - 1))]}"; then allok=0; bad "concurrent process $i failed: $(cat "$tmp/par$i.err")"; fi
done
[ $allok -eq 1 ] && ok
same=1
for i in 2 3 4 5 6 7 8; do
    cmp -s "$tmp/par1.out" "$tmp/par$i.out" || same=0
done
if [ $same -eq 1 ] && [ "$(sed -n 's/^image: //p' "$tmp/par1.out")" = "$first" ]; then ok; else bad "concurrent outputs differ: $(cat "$tmp"/par*.out | sort | uniq -c)"; fi
n=$(find "$c" -maxdepth 1 -name '*.tck' | wc -l)
left=$(find "$c" -maxdepth 1 ! -name '*.tck' ! -name nvrtc.facts -type f | wc -l)
if [ "$n" -eq 1 ] && [ "$left" -eq 0 ]; then ok; else bad "after concurrent runs: $n entries, $left other files"; fi
p "$c"
if [ $rc -eq 0 ] && [ "$cache" = hit ] && [ "$img" = "$first" ]; then ok; else bad "after concurrent runs: rc=$rc out='$out'"; fi

# --- an unusable cache directory: a warning, and still a result -------------
: >"$tmp/plainfile"
p "$tmp/plainfile/cache"
if [ $rc -eq 0 ] && [ "$cache" = miss ] && [ "$img" = "$first" ]; then ok; else bad "unusable dir: rc=$rc out='$out' err='$err'"; fi
if [[ "$err" == *warning*"$tmp/plainfile"* ]] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]; then ok; else bad "unusable dir: want one warning naming it, got '$err'"; fi

# --- a compile error: exit 1 with NVRTC's log --------------------------------
printf 'extern "C" __global__ void k(float *y)\n{\n    y[0] = nope;\n}\n' >"$tmp/k.cu"
p "$tmp/c4"
if [ $rc -eq 1 ] && [[ "$err" == *"nope"* ]] && [ -z "$(find "$tmp/c4" -name '*.tck')" ]; then ok; else bad "compile error: rc=$rc err='$err'"; fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
