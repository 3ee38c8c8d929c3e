#!/usr/bin/env bash
# tensorc doctor: with the fake driver (tests/fakegpu), without a driver, a
# bad cache directory.  Usage: tests/cli/doctor.sh TENSORC_BIN FAKE_LIBCUDA.
# Prints "N passed, M failed" last; exits 1 on failure.
set -u
tc=$(realpath "$1")
fake=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && printf '  %s\n' "$2"; sed 's/^/    /' out | head -10; }
check() { local n=$1; shift; if "$@"; then ok; else bad "$n" "condition failed: $*"; fi; }
has() { grep -qE -- "$1" out; }
mkdir -m 700 cache
export TENSORC_CACHE_DIR=$tmp/cache

# with the fake driver (NVRTC is on this machine: the CI has the toolkit)
TENSORC_LIBCUDA=$fake "$tc" doctor >out 2>&1; rc=$?
check "fake: exit 0" [ $rc -eq 0 ]
check "fake: driver path and version" has "^driver: $fake \\(CUDA [0-9]+\\.[0-9]+\\)$"
check "fake: gpu line" has "^gpu 0:  Fake GPU, compute capability [0-9]+\\.[0-9], 80\\.0 GiB, [0-9]+ SMs$"
check "fake: nvrtc line" has "^nvrtc:  /.*libnvrtc[^ ]* \\([0-9]+\\.[0-9]+; sm_[0-9]+ to sm_[0-9]+, [0-9]+ archs\\)$"
check "fake: cublas line" has "^cublas: "
check "fake: cache verdict" has "^cache:  $tmp/cache: yours, mode 0700: used; 0 entries, 0\\.0 MiB of 1024 MiB$"
check "fake: verdict" has "^ok: --device=cuda can run here$"

# no driver: where it looked and why, exit 3
TENSORC_LIBCUDA=$tmp/nowhere/libcuda.so.1 "$tc" doctor >out 2>&1; rc=$?
check "no driver: exit 3" [ $rc -eq 3 ]
check "no driver: why and where" has "^driver: not found: no CUDA driver \\($tmp/nowhere/libcuda.so.1 not found\\).*\\(looked for $tmp/nowhere/libcuda.so.1, from TENSORC_LIBCUDA\\)$"
check "no driver: verdict" has "^not usable for --device=cuda: no CUDA driver$"

# a cache others can write: refused, and said so
chmod 777 cache
TENSORC_LIBCUDA=$fake "$tc" doctor >out 2>&1; rc=$?
check "open cache: still exit 0" [ $rc -eq 0 ]
check "open cache: mode shown" has "^cache:  $tmp/cache: yours, mode 0777$"
check "open cache: why" has "kernel cache disabled: '$tmp/cache' can be written by anyone"
chmod 700 cache

"$tc" doctor extra >out 2>&1; rc=$?
check "doctor takes no arguments" [ $rc -eq 2 ]
"$tc" --help >out 2>&1
check "--help lists doctor" has "tensorc doctor"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
