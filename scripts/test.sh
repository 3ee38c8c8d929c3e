#!/usr/bin/env bash
# test.sh - build tensorc in several configurations and run the tests:
#   build/        the release-style build (warnings as errors): every test,
#                 the emulators of the generated CUDA (tests/emu kernels.sh
#                 and scans.sh) on their TC_EMU_QUICK=1 subsets (every
#                 function, dtype class, knob value and shape class, fewer
#                 of their combinations: the scripts' headers say which);
#                 plain ctest runs them whole
#   build-asan/   gcc, AddressSanitizer + UBSan (TC_SANITIZE=ON), where leaks,
#                 overflows and undefined behaviour fail the tests: every test
#                 (at -O1, as ASan's documentation advises for speed: the
#                 reference interpreter's tests dominate this build's time),
#                 but the emulators (scan_emu, rows_emu, emu_*): they check the
#                 generated code, which the Release build runs (tensorc
#                 built by the same gcc), and the golden, kernels, codegen
#                 and grad tests take tensorc's same code paths under ASan
#   build-ubsan/  clang, -fsanitize=undefined,float-cast-overflow (TC_UBSAN=ON;
#                 gcc's UBSan does not check float -> int conversions): every
#                 test but the four that mostly wait for NVRTC or rebuild the
#                 package (nvrtc, fakegpu, adamw_example, package: two thirds
#                 of the suite's time), which the two builds above run;
#                 scan_emu and rows_emu on their quick subsets (TC_EMU_QUICK,
#                 TC_ROWS_QUICK): tensorc built by clang, whose order of
#                 evaluation differs from gcc's, generating the code; not
#                 emu_online (84 s; the golden test compares clang's
#                 cross-entropy kernel, which takes the online pair, with gcc's),
#                 emu_rowpipe and emu_attnknobs (2-3 minutes each: knob
#                 settings' bit-identity, which the Release build checks)
#   build-tsan/   clang, ThreadSanitizer (TC_TSAN=ON): unit/test_contexts,
#                 contexts compiling and running in several threads at once
#   build-fuzz/   clang, libFuzzer (tests/fuzz): every seed and reproducer of
#                 tests/fuzz/corpus, then TC_FUZZ_SECONDS (default 60) of
#                 fuzzing for each harness (the two at once, a core each)
# Prints each build's wall time and the total: 1182 s on 2 cores
# (2026-11-27, session 13, a fresh clone of dced8a1: Release 591, asan 312,
# ubsan 192, tsan 7, fuzz 80; past the 15 minutes CI should take: the
# Release build's slowest are nvrtc 152 s and the emulators, 70-111 s each).
# 2044 s in a fresh clone of 2340b8f (2026-11-27, session 15, with other
# work on the machine: Release 1013 (nvrtc 398, emu_matmul 231, fakegpu 156),
# asan 504, tsan 20, fuzz 132): still far past CI's 15 minutes.
# Exits non-zero if anything fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

. scripts/lib.sh

bash scripts/deps.sh
status=0
t0=$SECONDS
# suite DIR CTEST_ARGS -- CMAKE_ARGS...: configure, build, ctest
suite() {
    local dir=$1 ctest_args=$2 start=$SECONDS
    shift 2
    echo "== $dir: configure and build"
    mkdir -p "$dir"
    if ! quiet "$dir/test-configure.log" cmake -S . -B "$dir" "$@" ||
       ! quiet "$dir/test-build.log" cmake --build "$dir" -j2 $build_targets; then
        status=1
        return
    fi
    echo "== $dir: ctest $ctest_args"
    # shellcheck disable=SC2086
    if ! (cd "$dir" && ctest --output-on-failure -j2 $ctest_args); then
        status=1
    fi
    echo "== $dir: $((SECONDS - start)) s"
}
build_targets=
# the fake driver's kernel cache (tests/fakegpu/run.sh): filled by the
# Release build's NVRTC compiles, read by the ASan build's run
fakegpu_cache=$root/build/test-fakegpu-cache
rm -rf "$fakegpu_cache"
TC_EMU_QUICK=1 TC_FAKEGPU_CACHE=$fakegpu_cache suite build "" -DCMAKE_BUILD_TYPE=Release -DTC_WERROR=ON
# the sanitizers check tensorc's code, which is the same for every arch and
# every program's trip through NVRTC: a sample of the NVRTC compiles there
# (tests/nvrtc/run.sh) and 10 random programs on the fake driver (suite.py)
# LSan skips thread-local storage there: scanning NVRTC's crashed its tracer
# (tests/lsan.supp says more)
TC_NVRTC_QUICK=1 TC_PLUMBING_QUICK=1 TC_GPU_CLASSES=examples,edges,random TC_SWEEP_EMIT=cuda TC_SELFTEST_QUICK=1 \
    TC_FAKEGPU_CACHE=$fakegpu_cache \
    LSAN_OPTIONS="use_tls=0:print_suppressions=0:suppressions=$root/tests/lsan.supp" suite build-asan "-E ^(scan_emu|rows_emu|emu_.*)$" -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g -O1 -fno-omit-frame-pointer" \
    -DTC_WERROR=ON -DTC_SANITIZE=ON
TC_SWEEP_EMIT=cuda TC_SELFTEST_QUICK=1 TC_SAME_CUDA_REF=$root/build/tensorc suite build-ubsan \
    "-E ^(nvrtc|fakegpu|adamw_example|package|scan_emu|rows_emu|emu_(online|rowpipe|attnknobs|fastmath))$" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTC_UBSAN=ON -DTC_WERROR=ON
# TSan: the one test, and what it loads; ASLR off where setarch can (some
# kernels' mmap randomisation upsets clang 14's TSan: "unexpected memory mapping")
build_targets="--target test_contexts tc-fake-cuda"
norand=()
if setarch "$(uname -m)" -R true >/dev/null 2>&1; then norand=(setarch "$(uname -m)" -R); fi
TC_TSAN_WRAP="${norand[*]}"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
start=$SECONDS
echo "== build-tsan: configure and build"
mkdir -p build-tsan
if quiet build-tsan/test-configure.log cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang \
        -DCMAKE_BUILD_TYPE=Debug -DTC_TSAN=ON &&
   quiet build-tsan/test-build.log cmake --build build-tsan -j2 $build_targets; then
    echo "== build-tsan: ctest -R unit/test_contexts"
    # shellcheck disable=SC2086
    if ! (cd build-tsan && $TC_TSAN_WRAP ctest --output-on-failure -R '^unit/test_contexts$'); then
        status=1
    fi
else
    status=1
fi
echo "== build-tsan: $((SECONDS - start)) s"
unset TSAN_OPTIONS
start=$SECONDS
echo "== build-fuzz: build, then the corpus and ${TC_FUZZ_SECONDS:-60} s of each harness"
mkdir -p build-fuzz
if quiet build-fuzz/test-build.log bash tests/fuzz/build.sh build-fuzz; then
    bash tests/fuzz/run.sh build-fuzz "${TC_FUZZ_SECONDS:-60}" || status=1
else
    status=1
fi
echo "== build-fuzz: $((SECONDS - start)) s"
echo "== total: $((SECONDS - t0)) s"
if [ $status -eq 0 ]; then echo "== all tests passed"; else echo "== FAILURES (see above)"; fi
exit $status
