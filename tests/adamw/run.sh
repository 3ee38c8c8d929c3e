#!/usr/bin/env bash
# run.sh BUILD_DIR FAKE_LIB - examples/c/run_adamw (issue 6: 10 AdamW steps,
# one tc_run_foreach each, over suite.md's tensor set) without a GPU.
#
# Builds run_adamw with Makefile.inc against BUILD_DIR, then:
#   1. without a driver (where this machine has none): it prints the
#      kernel's signature, a foreach kernel (its group table, tc_fe_table),
#      says "no GPU: skipped running" and exits 0;
#   2. on tests/fakegpu's driver (FAKE_LIB), which runs no kernel:
#      - --steps 0 (nothing runs; the values must come back): every check
#        matches, exit 0: the upload, download, and check agree;
#      - 9 layers (90 tensors, more than the 84 groups the kernel's
#        parameter table holds: the table goes through device memory),
#        2 steps: each step is one tc_run_foreach and one launch (the fake
#        driver counts them), and since no kernel ran, the check must find
#        every tensor of p, m and v wrong and exit 1;
#   3. with NumPy: --in/--out round trip (--steps 0): p, g and v from .npy,
#      m missing (zeros); the files written hold the same values, and
#      shapes.txt names the 10 tensors; a file of the wrong size or dtype is
#      refused by name;
#   4. usage errors exit 2.
# Prints PASS/FAIL/SKIP per check and "N passed, M failed" last.  Exit 77
# (skipped) without cuda.h (run_adamw is not built) or NVRTC.
set -u
build=$(realpath "${1:?usage: run.sh BUILD_DIR FAKE_LIB}")
fake=$(realpath "${2:?usage: run.sh BUILD_DIR FAKE_LIB}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TENSORC_CACHE_DIR=$work/cache
unset TENSORC_LIBCUDA
pass=0 fail=0
ok() { echo "PASS $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
show() { tail -n 20 "$1" | sed 's/^/    /'; }

. "$root/tests/lib.sh"

cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda_home/include/cuda.h" ]; then
    echo "SKIP run_adamw: no cuda.h under $cuda_home: not built"
    echo "0 passed, 0 failed"
    exit 77
fi
if ! make -C "$root/examples/c" TENSORC_BUILD="$build" OUTDIR="$work/bin" "$work/bin/run_adamw" \
        >"$work/make.log" 2>&1; then
    bad "build run_adamw with Makefile.inc"; show "$work/make.log"
    echo "$pass passed, $fail failed"
    exit 1
fi
ra=$work/bin/run_adamw
if ! "$build/tensorc" compile "$root/examples/adamw.tc" --emit=ptx >/dev/null 2>&1; then
    echo "SKIP run_adamw: NVRTC is not available (tensorc compile --emit=ptx fails)"
    echo "0 passed, 0 failed"
    exit 77
fi

# --- 1. no driver --------------------------------------------------------------------
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
    echo "SKIP no driver: this machine has libcuda"
else
    "$ra" --layers 1 >"$work/nogpu.out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^no GPU: skipped running' "$work/nogpu.out" &&
        grep -q 'tc_fe_table<4, [0-9]*> fe' "$work/nogpu.out"; then
        ok "no driver: the foreach kernel's signature, then 'no GPU: skipped running', exit 0"
    else
        bad "no driver (exit $rc)"; show "$work/nogpu.out"
    fi
fi

# --- 2. the fake driver ----------------------------------------------------------------
# (In a TC_SANITIZE build, LeakSanitizer reports the fake driver's own table
# of allocations, which it never frees, once the library is unloaded at exit
# (a 'direct leak' from an unknown module under cuMemAlloc_v2); that would
# fail the runs that must exit 0, so leak detection is off for these runs.
# Everything else ASan checks still applies.)
export TENSORC_LIBCUDA=$fake
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
"$ra" --layers 1 --steps 0 >"$work/zero.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c '^check [pmv]: 10 tensors match the CPU' "$work/zero.out")" -eq 3 ] &&
    grep -q '^launches: 0 in 0 steps' "$work/zero.out"; then
    ok "fake driver, --steps 0: p, m, v of 10 tensors come back and match"
else
    bad "fake driver, --steps 0 (exit $rc; want 0 and three matching checks)"; show "$work/zero.out"
fi

"$ra" --layers 9 --steps 2 >"$work/two.out" 2>&1
rc=$?
steps_one=$(grep -cE '^step +[12]: tc_run_foreach .*; 1 launch$' "$work/two.out")
mism=$(grep -cE '^check [pmv]: MISMATCH in 90 of 90 tensors' "$work/two.out")
if [ $rc -eq 1 ] && grep -q '^tc_run: 2 AdamW steps ok, one tc_run_foreach call each over 90 tensors' "$work/two.out" &&
    [ "$steps_one" -eq 2 ] && grep -q '^launches: 2 in 2 steps' "$work/two.out" && [ "$mism" -eq 3 ]; then
    ok "fake driver, 90 tensors, 2 steps: one tc_run_foreach and one launch per step; no kernel ran, so every tensor is a MISMATCH (exit 1)"
else
    bad "fake driver, 90 tensors (exit $rc, $steps_one one-launch steps, $mism MISMATCH lines)"; show "$work/two.out"
fi

# --- 3. .npy in and out -----------------------------------------------------------------
if py=$(numpy_python); then
    mkdir -p "$work/in" "$work/out" "$work/bad"
    "$py" - "$work" <<'EOF'
import sys, numpy as np
w = sys.argv[1]
n = 12587008  # one layer
r = np.random.default_rng(5)
np.save(w + "/in/p.npy", r.standard_normal(n).astype(np.float32))
np.save(w + "/in/g.npy", r.standard_normal((2, n // 2)).astype(np.float32))  # any shape
np.save(w + "/in/v.npy", r.uniform(0, 1, n).astype(np.float32))
np.save(w + "/bad/p.npy", np.zeros(n + 1, np.float32))
np.save(w + "/bad/g.npy", np.zeros(n, np.float64))
EOF
    "$ra" --layers 1 --steps 0 --in "$work/in" --out "$work/out" >"$work/io.out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && "$py" - "$work" <<'EOF'
import sys, numpy as np
w = sys.argv[1]
i = {k: np.load(w + "/in/%s.npy" % k).reshape(-1) for k in "pv"}
o = {k: np.load(w + "/out/%s.npy" % k) for k in "pmv"}
shapes = open(w + "/out/shapes.txt").read().split()
ok = (all(o[k].dtype == np.float32 and o[k].shape == (12587008,) for k in o)
      and np.array_equal(i["p"], o["p"]) and np.array_equal(i["v"], o["v"]) and not o["m"].any()
      and shapes == ["1024x1024"] * 4 + ["4096x1024", "1024x4096"] + ["1024"] * 4)
sys.exit(0 if ok else 1)
EOF
    then
        ok "--in/--out: p, v read and written back unchanged, m zeros, shapes.txt names the tensors"
    else
        bad "--in/--out round trip (exit $rc)"; show "$work/io.out"
    fi
    "$ra" --layers 1 --steps 0 --in "$work/bad" >"$work/bad.out" 2>&1
    rc=$?
    if [ $rc -eq 1 ] && grep -q 'bad/p.npy: 12587009 values; the tensor set has 12587008' "$work/bad.out"; then
        ok "--in: a file of the wrong size is refused by name"
    else
        bad "--in with a wrong-size p.npy (exit $rc)"; show "$work/bad.out"
    fi
    "$py" -c "import numpy as np; np.save('$work/bad/p.npy', np.zeros(12587008, np.float32))"
    "$ra" --layers 1 --steps 0 --in "$work/bad" >"$work/bad2.out" 2>&1
    rc=$?
    if [ $rc -eq 1 ] && grep -q "bad/g.npy: want little-endian float32 in C order, the header says {'descr': '<f8'" "$work/bad2.out"; then
        ok "--in: a float64 file is refused by name"
    else
        bad "--in with a float64 g.npy (exit $rc)"; show "$work/bad2.out"
    fi
else
    echo "SKIP --in/--out: no python3 with NumPy"
fi
unset TENSORC_LIBCUDA
export ASAN_OPTIONS=${ASAN_OPTIONS%detect_leaks=0}

# --- 4. usage ----------------------------------------------------------------------------
for args in "--layers 0" "--layers 65" "--steps -1" "--scalars f16" "--bogus" "--in"; do
    # shellcheck disable=SC2086
    "$ra" $args >"$work/usage.out" 2>&1
    rc=$?
    if [ $rc -eq 2 ]; then ok "usage: run_adamw $args exits 2"
    else bad "usage: run_adamw $args exited $rc, not 2"; show "$work/usage.out"; fi
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
