#!/usr/bin/env bash
# test.sh - build tensorc in several configurations and run the tests (what
# CI runs); the slowest tests run their quick subsets here, set below,
# and plain ctest runs them whole:
#   build/        the release-style build (warnings as errors): every test;
#                 the emulators of the generated CUDA (tests/emu, tests/cpuemu)
#                 on their TC_EMU_QUICK=1 subsets (each code path once, at the
#                 smallest shapes that take it: each script's header says what
#                 it keeps; emu.h's runtime compiled once per build tree,
#                 each case's g++ the unit alone: tests/emu/rt.py); nvrtc
#                 whole (every distinct kernel to CUBIN for sm_90, and for
#                 sm_80 every fourth unit to CUBIN, the rest to PTX:
#                 tests/nvrtc/run.sh); the codegen sweep to PTX (sweep.py);
#                 fakegpu fills TC_FAKEGPU_CACHE
#   build-asan/   gcc, AddressSanitizer + UBSan (TC_SANITIZE=ON), where leaks,
#                 overflows and undefined behaviour fail the tests: every test
#                 (at -O1, as ASan's documentation advises for speed: the
#                 reference interpreter's tests dominate this build's time),
#                 but the emulators (scan_emu, rows_emu, emu_*): they check the
#                 generated code, which the Release build runs (tensorc
#                 built by the same gcc), and the golden, kernels, codegen
#                 and grad tests take tensorc's same code paths under ASan.
#                 The sanitizers check tensorc's own code, the same for every
#                 arch and every trip through NVRTC, whose allocations through
#                 ASan's allocator were most of this build's time, so: a
#                 sample of the NVRTC compiles (TC_NVRTC_QUICK: tests/nvrtc/
#                 run.sh), the codegen sweep to CUDA, not through NVRTC
#                 (TC_SWEEP_EMIT=cuda: sweep.py), fakegpu's kernels from the
#                 Release run's cache (TC_FAKEGPU_CACHE) and 10 random programs
#                 (TC_PLUMBING_QUICK), its examples, edges and random classes
#                 (TC_GPU_CLASSES: suite.py), the self-test's rejections on
#                 each case's last output (TC_SELFTEST_QUICK: bench/selftest.c);
#                 random-cuda's NVRTC 1 in 8 and random-grad's 30 programs
#                 (tests/CMakeLists.txt, in every sanitizer build)
#   build-ubsan/  clang, -fsanitize=undefined,float-cast-overflow (TC_UBSAN=ON,
#                 -O2 without -g):
#                 tensorc built and checked by a second compiler (-Werror;
#                 clang evaluates operands in another order than gcc, which
#                 golden, kernels and emu_same_cuda catch).  Every test but
#                 the four that mostly wait for NVRTC or rebuild the
#                 package (nvrtc, fakegpu, adamw_example, package), which the
#                 two builds above run; the four whose time is the reference
#                 interpreter's arithmetic (bench_selftest, grad, random-grad,
#                 unit/test_fuzz), which the ASan build runs under gcc's
#                 UBSan, float-cast-overflow included there too (TC_SANITIZE),
#                 and whose fuzz corpus the fuzz build's clang ASan+UBSan
#                 harnesses replay; and the emulators: instead,
#                 emu_same_cuda (tests/emu/same_cuda.sh) compares clang-built
#                 tensorc's generated CUDA, for every program the emulators
#                 run and under their knobs, with the Release build's byte for
#                 byte (TC_SAME_CUDA_REF), so that the Release build's
#                 emulator runs hold for it (clang evaluates operands in
#                 another order than gcc); the codegen sweep as in ASan
#   build-tsan/   clang, ThreadSanitizer (TC_TSAN=ON): unit/test_contexts,
#                 contexts compiling and running in several threads at once
#   build-fuzz/   clang, libFuzzer (tests/fuzz): every seed and reproducer of
#                 tests/fuzz/corpus (the regression part), then TC_FUZZ_SECONDS
#                 (default 10; it was 30, then 60) of fuzzing for each harness (the two
#                 at once, a core each): a short look for new findings on
#                 every run, longer runs by hand (tests/fuzz/README.md)
# NVRTC's answers are remembered across the tests and the three builds above
# (tests/nvrtc/memo.c, loaded through TENSORC_NVRTC; build/test-nvrtc-memo,
# emptied first): NVRTC is deterministic, and each test keeps a fresh kernel
# cache of its own, so one unit was compiled again and again, test after
# test and build after build, under ASan's allocator in the ASan build.  Each
# distinct compile still runs through the real NVRTC once per run (every
# kernel of tests/nvrtc/run.sh for sm_80 and sm_90 in the Release build's
# nvrtc test, or in whichever test asked first), and tensorc's own code
# (nvrtc.c's checks, its cache, the loading) runs on the real NVRTC's bytes.
# Two tests asking for the same compile at once (suite.py's parallel jobs:
# 87 of fakegpu's 164 PTX units were compiled twice) wait for one another:
# the first compiles.  PTX units (the fake driver's, long_rows.tc's) are
# compiled at --Ofast-compile=mid, checked to give the same entries,
# parameters and shared declarations on all 193 of them (memo.c: fakegpu
# 126.5 + 7.5 -> 32.7 + 5.5 CPU-s alone); CUBINs as tensorc asks (min and
# mid changed shared memory sizes).  $nvrtc_memo/compiles.log: each real
# compile's CPU seconds.
# ctest -j2 starts the costliest tests first (their COST: tests/CMakeLists.txt,
# bench_selftest's in CMakeLists.txt).
# The sanitizer, TSan and fuzz builds are configured and built one after
# another in the background from the start, while the Release build and
# its ctest run (the builds' configure steps, links and one-core stretches
# were about a quarter of their 225 s of wall time, each on its own with a
# core idle); each suite's ctest waits for its build.  Prints each build's
# time (a background one's overlaps the tests), each ctest's, the total and
# the CPU of everything run.  876 s, all passed, for a fresh clone of
# 9b81bee (session 21, 2026-11-28, machine otherwise idle): Release build
# 74 + ctest 564 (codegen 74 with the sweep to PTX, was 227; nvrtc 303 with
# sm_80's PTX, was 438), asan ctest 178, ubsan 45, tsan 3, fuzz 12 (10 s a
# harness); 1494 u + 213 s of CPU.  The session's last tree (74d0c10, a
# fusion fix and test changes since) an hour later, also idle: 961 s, all
# passed, the Release ctest's tests 15-20 % slower alike (ctest 644: nvrtc
# 362, emu_matmul 191, codegen 87; asan's the same 178 s), 1654 u + 232 s:
# the machine's own variance is about the 24 s left under 15 minutes.  Before: 1064 s, all passed, for a fresh
# clone of 0572727's tree (ci-trim7, 2026-11-28, machine otherwise idle: 98.9 %
# busy): Release build 74 (beside the ASan build) + ctest 724, asan ctest
# 184, ubsan 47, tsan 2, fuzz 33; 1837 u + 250 s of CPU, so no less than
# about 1043 s on two cores however it is scheduled: under 900 s needs
# about 300 CPU-s fewer.  main's fresh clone (2c6b8b1) the same day: 1165 s,
# 2034 CPU-s, 87 % busy.  Earlier figures: 1418 s, all passed, for a
# fresh clone of 95cea45 (main after merging ci-trim5, 2026-11-28, session
# 18; load 2-3, not idle): Release 716, asan 421, ubsan 158, tsan 18, fuzz
# 105; 2405 u + 336 s of CPU.  2490 s, all passed, for a
# fresh clone of e75ad38 (ci-trim5, 2026-11-28) on this 2-core machine
# shared with another engineer's full fresh-clone run the whole time (load
# 5.3 on average, 3.6 to 6.9): Release 1283, asan 709, ubsan 297, tsan 29,
# fuzz 172; 2235 u + 297 s of CPU (the shared cores inflate both).  What
# ci-trim5 changed, each measured before and after on the same machine
# state: fakegpu alone 126.5 + 7.5 -> 32.7 + 5.5 CPU-s (memo.c's lock and
# PTX at mid; the Release run's fake-driver PTX compiles 151 -> 34 s of
# NVRTC, none twice); tc-bench --self-test 41.3 + 1.7 -> 21.3 + 1.0, the
# ASan build's quick one 69.6 + 6.0 -> 39.3 + 3.1 (bench/selftest.c); the
# UBSan build without -g, about 11 % of its 123 s of clang.  The Release
# run's NVRTC now (compiles.log): 578 CPU-s, 392 of them the CUBINs of
# whole files (nvrtc, codegen's progs.tc, fuse), 121 the sweep's two units
# (already --Ofast-compile=min), 34 the fake driver's PTX.  Still past 15
# minutes: about 2400 CPU-s are left.  Before, main (156982c) in a fresh
# worktree, this machine otherwise idle: Release 740 (ctest 694: nvrtc
# 370, fakegpu 161, codegen 159, emu_matmul 89, rows_emu 87), tsan 12,
# fuzz 80, 1530 CPU-s for those three; ASan 125 s of build and about 520
# to 660 of ctest CPU, UBSan 123 and 122.  1297 s, all passed, for a
# fresh clone of a71b8eb (main after the merge, 2026-11-28, session 16) on
# this 2-core machine otherwise idle: Release 739 (ctest 699: nvrtc 357,
# codegen 141, fakegpu 140, emu_matmul 105, bench_selftest 103, rows_emu
# 83), asan 342 (ctest 278), ubsan 121, tsan 11, fuzz 84.  Earlier, 1898 s
# for a fresh clone of a68ee79 (ci-trim2's tip) on 2 cores shared with
# another engineer's test runs (load 3.5 to 4.5 most of the time): Release
# 1168 (build 38, ctest 1128), asan 506 (build 125, ctest 379), ubsan 133
# (build 72, ctest 61), tsan 11, fuzz 80; 2640 s of CPU (user 2362, sys
# 278), so no less than about 1320 s on an idle two-core machine.  The
# slowest tests there, in wall seconds on the shared cores: nvrtc 406
# (every distinct kernel for two archs, two compiles at a time: about 430 s
# of CPU, the floor of this build), rows_emu 178, emu_matmul 156, fakegpu
# 155, codegen 146, bench_selftest 139, cpuemu 109, emu_matmul_knobs 104,
# emu_attnknobs 98, emu_online 81, scan_emu 73; ASan's bench_selftest 157,
# fakegpu 124.  The same emulator tests alone with ctest -j2 on a quieter
# machine: 470 s of test time where main's fresh clone had 910 (emu_matmul
# 252 -> 85, emu_matmul_knobs 139 -> 57, rows_emu 102 -> 77, scan_emu 87 ->
# 38, emu_attnknobs 85 -> 48, emu_online 69 -> 43).  Before (session 15,
# main's fresh clone on a nearly idle machine): 1822 s (Release 1020, asan
# 434, ubsan 239, tsan 15, fuzz 114); the last CI run: 3098 s.  Still past
# the 15 minutes CI should take: what is left is mostly NVRTC (nvrtc,
# fakegpu's 137 PTX units, codegen's sweep), the emulators' runs, the five
# builds (about 230 s of wall) and the ASan build's reference-interpreter
# tests.
# Exits non-zero if anything fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

. scripts/lib.sh

bash scripts/deps.sh
status=0
t0=$SECONDS
# build_tree DIR CMAKE_ARGS...: configure and build DIR ($build_targets, else
# all); "STATUS SECONDS" in DIR/test-build.rc when done (read by wait_build)
build_tree() {
    local dir=$1 start=$SECONDS rc=0
    shift
    mkdir -p "$dir"
    rm -f "$dir/test-build.rc"
    if ! quiet "$dir/test-configure.log" cmake -S . -B "$dir" "$@" ||
       ! quiet "$dir/test-build.log" cmake --build "$dir" -j2 $build_targets; then
        rc=1
    fi
    echo "$rc $((SECONDS - start))" >"$dir/test-build.rc"
}
# wait_build DIR: wait for DIR's build (the background chain below); fails
# if it failed
wait_build() {
    local rc secs start=$SECONDS
    while [ ! -e "$1/test-build.rc" ]; do
        if ! kill -0 "$bg" 2>/dev/null && [ ! -e "$1/test-build.rc" ]; then
            echo "== $1: the background builds ended without building it"; return 1
        fi
        sleep 1
    done
    read -r rc secs <"$1/test-build.rc"
    if [ "$1" = build ]; then
        echo "== $1: configure and build: $secs s"
    else
        echo "== $1: configure and build: $secs s (in the background; waited $((SECONDS - start)) s for it)"
    fi
    return "$rc"
}
# suite DIR CTEST_ARGS: wait for DIR's build, ctest
suite() {
    local dir=$1 ctest_args=$2 start=$SECONDS
    if ! wait_build "$dir"; then
        status=1
        return
    fi
    echo "== $dir: ctest $ctest_args"
    # NVRTC's answers remembered (tests/nvrtc/memo.c): the real NVRTC is
    # the Release build's (tensorc doctor names it), the memory starts empty;
    # PTX (the fake driver's compiles, and long_rows.tc's) at
    # --Ofast-compile=mid, CUBINs as tensorc asks (memo.c says why)
    # (an absolute path: ctest runs the unit tests, the bench's and others in
    # $dir/tests or $dir, where a relative one named no file, and tensorc
    # fell back to the real NVRTC: those tests' compiles were never
    # remembered, and in the ASan build they ran through ASan's allocator)
    local memo_env=()
    if [ -n "$nvrtc_real" ] && [ -e "$dir/tests/libnvrtc-memo.so" ]; then
        memo_env=(TENSORC_NVRTC="$root/$dir/tests/libnvrtc-memo.so" TC_NVRTC_MEMO_REAL="$nvrtc_real"
                  TC_NVRTC_MEMO_DIR="$nvrtc_memo" TC_NVRTC_MEMO_FAST=ptx=mid
                  TC_NVRTC_MEMO_LOG="$nvrtc_memo/compiles.log")
    fi
    # shellcheck disable=SC2086
    if ! (cd "$dir" && env "${memo_env[@]}" ctest --output-on-failure -j2 $ctest_args); then
        status=1
    fi
    echo "== $dir: ctest $((SECONDS - start)) s"
}
build_targets=
# The four other builds (ASan, UBSan, TSan, fuzz: about 150 s of two cores'
# compiling, a quarter of it on one core, configure and links) are made one
# after another in the background, from the start, while the Release build
# and its ctest run: the cores stay busy through the builds' serial
# stretches, and each suite's ctest starts on a build that is (mostly)
# there.  Each build's log in DIR/test-build.log, as before.
rm -f build-asan/test-build.rc build-ubsan/test-build.rc build-tsan/test-build.rc build-fuzz/test-build.rc
(
    # -g1: line tables and function names, all that ASan's and LSan's
    # reports print (file:line, inlined frames too); -g's variable locations
    # only a debugger reads, and gcc's var-tracking for them was 30 % of
    # this build's CPU (173 -> 120 s)
    build_tree build-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g1 -O1 -fno-omit-frame-pointer" \
        -DTC_WERROR=ON -DTC_SANITIZE=ON
    # (RelWithDebInfo's -O2 without -g: UBSan's reports carry their own source
    # locations; the same code, 11 % less clang time)
    build_tree build-ubsan -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG" -DTC_UBSAN=ON -DTC_WERROR=ON
    # TSan: the one test, and what it loads
    build_targets="--target test_contexts tc-fake-cuda" build_tree build-tsan -DCMAKE_C_COMPILER=clang \
        -DCMAKE_BUILD_TYPE=Debug -DTC_TSAN=ON
    start=$SECONDS rc=0
    mkdir -p build-fuzz
    quiet build-fuzz/test-build.log bash tests/fuzz/build.sh build-fuzz || rc=1
    echo "$rc $((SECONDS - start))" >build-fuzz/test-build.rc
) &
bg=$!
trap 'kill "$bg" 2>/dev/null || true' EXIT
echo "== build: configure and build"
build_tree build -DCMAKE_BUILD_TYPE=Release -DTC_WERROR=ON
read -r rc _ <build/test-build.rc
# (doctor exits 1 without a GPU: its nvrtc line is still there)
nvrtc_real=
if [ "$rc" = 0 ]; then
    nvrtc_real=$(TENSORC_CACHE_DIR="$root/build/test-doctor-cache" build/tensorc doctor 2>/dev/null |
                 sed -n 's/^nvrtc:  *\(\/[^ ]*\) (.*/\1/p' || true)
    rm -rf "$root/build/test-doctor-cache"
fi
# the fake driver's kernel cache (tests/fakegpu/run.sh): filled by the
# Release build's NVRTC compiles, read by the ASan build's run
fakegpu_cache=$root/build/test-fakegpu-cache
rm -rf "$fakegpu_cache"
# NVRTC's memory (tests/nvrtc/memo.c), shared by every test of the Release,
# ASan and UBSan builds: emptied here, so each distinct compile runs through
# the real NVRTC once, in the first test to ask for it
nvrtc_memo=$root/build/test-nvrtc-memo
rm -rf "$nvrtc_memo"
mkdir -p "$nvrtc_memo"
TC_EMU_QUICK=1 TC_FAKEGPU_CACHE=$fakegpu_cache suite build ""
# the sanitizers check tensorc's code, which is the same for every arch and
# every program's trip through NVRTC: a sample of the NVRTC compiles there
# (tests/nvrtc/run.sh) and 10 random programs on the fake driver (suite.py)
# LSan skips thread-local storage there: scanning NVRTC's crashed its tracer
# (tests/lsan.supp says more).
TC_NVRTC_QUICK=1 TC_PLUMBING_QUICK=1 TC_GPU_CLASSES=examples,edges,random TC_SWEEP_EMIT=cuda TC_SELFTEST_QUICK=1 \
    TC_FAKEGPU_CACHE=$fakegpu_cache \
    LSAN_OPTIONS="use_tls=0:print_suppressions=0:suppressions=$root/tests/lsan.supp" suite build-asan "-E ^(scan_emu|rows_emu|emu_.*)$"
TC_SWEEP_EMIT=cuda TC_SELFTEST_QUICK=1 TC_SAME_CUDA_REF=$root/build/tensorc suite build-ubsan \
    "-E ^(nvrtc|fakegpu|adamw_example|package|scan_emu|rows_emu|emu_(online|rowpipe|attnknobs|fastmath)|bench_selftest|grad|random-grad|unit/test_fuzz)$"
# TSan: ASLR off where setarch can (some kernels' mmap randomisation upsets
# clang 14's TSan: "unexpected memory mapping")
norand=()
if setarch "$(uname -m)" -R true >/dev/null 2>&1; then norand=(setarch "$(uname -m)" -R); fi
TC_TSAN_WRAP="${norand[*]}"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
start=$SECONDS
if wait_build build-tsan; then
    echo "== build-tsan: ctest -R unit/test_contexts"
    # shellcheck disable=SC2086
    if ! (cd build-tsan && $TC_TSAN_WRAP ctest --output-on-failure -R '^unit/test_contexts$'); then
        status=1
    fi
else
    status=1
fi
echo "== build-tsan: ctest $((SECONDS - start)) s"
unset TSAN_OPTIONS
start=$SECONDS
if wait_build build-fuzz; then
    echo "== build-fuzz: the corpus and ${TC_FUZZ_SECONDS:-10} s of each harness"
    bash tests/fuzz/run.sh build-fuzz "${TC_FUZZ_SECONDS:-10}" || status=1
else
    status=1
fi
echo "== build-fuzz: $((SECONDS - start)) s"
wait "$bg" || true
echo "== total: $((SECONDS - t0)) s"
# (times in this shell: in a pipe or $(...) it reports a subshell's)
times >build/test-times.txt
echo "== CPU of every process run (user, system): $(tail -1 build/test-times.txt)"
if [ $status -eq 0 ]; then echo "== all tests passed"; else echo "== FAILURES (see above)"; fi
exit $status
