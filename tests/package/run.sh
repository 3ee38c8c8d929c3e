#!/usr/bin/env bash
# run.sh BUILD_DIR FAKE_LIB - tensorc as a package, the way a user gets it:
#
#   1. `cmake --install` BUILD_DIR into an empty prefix; the files are there
#      and the installed tensorc runs;
#   2. examples/c builds against that prefix with CMake find_package(tensorc),
#      against the build tree with find_package (tensorc_DIR=BUILD_DIR), with
#      pkg-config (tensorc-static) against the prefix (skipped, said so, without pkg-config),
#      and with Makefile.inc against the build tree;
#   3. every program built runs: compile_and_dump prints a graph;
#      run_softmax and run_adamw print their kernel and exit 0, saying
#      "no GPU: skipped running" on a machine without one (or checking their
#      result against the CPU where there is a GPU);
#   4. with the fake driver (FAKE_LIB, tests/fakegpu) standing in for
#      libcuda, run_softmax and run_adamw go through tc_run: their DLTensors
#      and scalars pass its checks and every launch is in bounds ("tc_run:
#      ok"); the fake runs no kernels, so their CPU check must then report a
#      MISMATCH and exit 1, which shows the check can fail.  Skipped without
#      NVRTC.
# The GPU programs need cuda.h: without the CUDA toolkit they are not built,
# and the test exits 77 (skipped) once the rest has passed.
# Prints PASS/FAIL/SKIP per step and "N passed, M failed" last.
set -u
build=$(realpath "${1:?usage: run.sh BUILD_DIR FAKE_LIB}")
fake=$(realpath "${2:?usage: run.sh BUILD_DIR FAKE_LIB}")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TENSORC_CACHE_DIR=$work/cache
unset TENSORC_LIBCUDA
pass=0 fail=0 skipped=0
ok() { echo "PASS $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
skip() { echo "SKIP $*"; skipped=$((skipped + 1)); }
# the last lines of a log, indented, after a failure
show() { tail -n 25 "$1" | sed 's/^/    /'; }

cuda_home=${CUDA_HOME:-/usr/local/cuda}
have_cuda_h=0
[ -f "$cuda_home/include/cuda.h" ] && have_cuda_h=1

# --- 1. install ------------------------------------------------------------------
prefix=$work/prefix
if cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then
    missing=
    for f in include/tensorc.h bin/tensorc; do
        [ -f "$prefix/$f" ] || missing="$missing $f"
    done
    lib=$(find "$prefix" -name libtensorc.a | head -n 1)
    pc=$(find "$prefix" -name tensorc.pc | head -n 1)
    cfg=$(find "$prefix" -name tensorcConfig.cmake | head -n 1)
    ver=$(find "$prefix" -name tensorcConfigVersion.cmake | head -n 1)
    [ -n "$lib" ] || missing="$missing libtensorc.a"
    [ -n "$pc" ] || missing="$missing tensorc.pc"
    [ -n "$cfg" ] || missing="$missing tensorcConfig.cmake"
    [ -n "$ver" ] || missing="$missing tensorcConfigVersion.cmake"
    if [ -n "$missing" ]; then
        bad "install: missing$missing"
    elif ! v=$("$prefix/bin/tensorc" --version 2>&1) || [ -z "$v" ]; then
        bad "install: the installed tensorc does not run: $v"
    else
        ok "install: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')($v)"
    fi
else
    bad "install: cmake --install failed"; show "$work/install.log"
fi

# --- 2. build examples/c four ways ------------------------------------------------
# cmake_build DIR DESCRIPTION ARGS...: configure and build examples/c into DIR
cmake_build() {
    local dir=$1 what=$2
    shift 2
    if cmake -S "$root/examples/c" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.log" 2>&1 &&
        cmake --build "$dir" -j2 >>"$dir.log" 2>&1; then
        ok "build: $what"
        built+=("$dir")
    else
        bad "build: $what"; show "$dir.log"
    fi
}
built=()
cmake_build "$work/cmake-install" "CMake find_package(tensorc) from the install prefix" \
    -DCMAKE_PREFIX_PATH="$prefix"
cmake_build "$work/cmake-tree" "CMake find_package(tensorc) from the build tree" \
    -Dtensorc_DIR="$build"

if command -v pkg-config >/dev/null 2>&1; then
    if PKG_CONFIG_PATH=$(dirname "$pc") make -C "$root/examples/c" TENSORC_PKG=tensorc-static \
            OUTDIR="$work/pkgconfig" >"$work/pkgconfig.log" 2>&1; then
        ok "build: make with pkg-config (tensorc-static) from the install prefix"
        built+=("$work/pkgconfig")
    else
        bad "build: make with pkg-config"; show "$work/pkgconfig.log"
    fi
else
    skip "build: make with pkg-config: pkg-config is not installed"
fi

if make -C "$root/examples/c" TENSORC_BUILD="$build" OUTDIR="$work/makefile-inc" \
        >"$work/makefile-inc.log" 2>&1; then
    ok "build: make with Makefile.inc from the build tree"
    built+=("$work/makefile-inc")
else
    bad "build: make with Makefile.inc"; show "$work/makefile-inc.log"
fi

# --- 3. run what was built --------------------------------------------------------
for dir in "${built[@]}"; do
    name=$(basename "$dir")
    if "$dir/compile_and_dump" "$root/examples/softmax.tc" graph softmax >"$dir.dump" 2>&1 &&
        grep -q 'softmax' "$dir.dump"; then
        ok "$name: compile_and_dump"
    else
        bad "$name: compile_and_dump"; show "$dir.dump"
    fi
    [ $have_cuda_h = 1 ] || continue
    for prog in run_softmax run_adamw; do
        out=$dir.$prog.out
        if [ ! -x "$dir/$prog" ]; then
            bad "$name: $prog was not built"
            continue
        fi
        (cd "$root" && "$dir/$prog") >"$out" 2>&1
        rc=$?
        if [ $rc -ne 0 ]; then
            bad "$name: $prog exited $rc"; show "$out"
        elif ! grep -q '__global__' "$out"; then
            bad "$name: $prog printed no kernel"; show "$out"
        elif grep -q '^no GPU: skipped running' "$out"; then
            ok "$name: $prog compiles, shows its kernel, skips the GPU ($(grep '^no GPU' "$out"))"
        elif grep -q '^check.*match' "$out" && ! grep -q MISMATCH "$out"; then
            ok "$name: $prog ran on the GPU and matches the CPU"
        else
            bad "$name: $prog: neither skipped nor checked"; show "$out"
        fi
    done
done

# --- 4. through tc_run with the fake driver ---------------------------------------
if [ $have_cuda_h = 0 ]; then
    skip "run_softmax, run_adamw: no cuda.h under $cuda_home (CUDA toolkit): not built"
elif [ ${#built[@]} -eq 0 ]; then
    bad "fake driver: nothing was built"
elif ! "$build/tensorc" compile "$root/examples/softmax.tc" --emit=ptx >/dev/null 2>&1; then
    skip "fake driver: NVRTC is not available (tensorc compile --emit=ptx fails)"
else
    dir=${built[0]}
    for prog in run_softmax run_adamw; do
        out=$work/fake.$prog.out
        args=(); [ $prog = run_adamw ] && args=(--layers 1) # 10 tensors: the 240 take a minute under ASan
        (cd "$root" && TENSORC_LIBCUDA=$fake "$dir/$prog" "${args[@]}") >"$out" 2>&1
        rc=$?
        if [ $rc -eq 1 ] && grep -q '^device 0: Fake GPU' "$out" && grep -q '^tc_run: .*ok' "$out" &&
            grep -q 'MISMATCH' "$out"; then
            ok "fake driver: $prog passes tc_run's checks, launches in bounds, and its check fails on unrun kernels"
        else
            bad "fake driver: $prog (exit $rc; expected 1 with 'tc_run: ok' and a MISMATCH)"; show "$out"
        fi
    done
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ] || exit 1
[ $have_cuda_h = 1 ] || exit 77
exit 0
