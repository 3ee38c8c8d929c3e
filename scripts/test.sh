#!/usr/bin/env bash
# test.sh - build tensorc twice and run every test in both builds:
#   build/       the release-style build (warnings as errors)
#   build-asan/  AddressSanitizer + UBSan (TC_SANITIZE=ON), where leaks,
#                overflows and undefined behaviour fail the tests
# Exits non-zero if anything fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

. scripts/lib.sh

bash scripts/deps.sh
status=0
for cfg in "build -DCMAKE_BUILD_TYPE=Release -DTC_WERROR=ON" \
           "build-asan -DCMAKE_BUILD_TYPE=Debug -DTC_WERROR=ON -DTC_SANITIZE=ON"; do
    set -- $cfg
    dir=$1
    shift
    echo "== $dir: configure and build"
    mkdir -p "$dir"
    quiet "$dir/test-configure.log" cmake -S . -B "$dir" "$@"
    quiet "$dir/test-build.log" cmake --build "$dir" -j2
    echo "== $dir: ctest"
    if ! (cd "$dir" && ctest --output-on-failure -j2); then
        status=1
    fi
done
if [ $status -eq 0 ]; then echo "== all tests passed"; else echo "== FAILURES (see above)"; fi
exit $status
