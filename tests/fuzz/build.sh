#!/usr/bin/env bash
# build.sh [BUILD_DIR] - build the libFuzzer harnesses (fuzz_compile,
# fuzz_npy) with clang, ASan and UBSan into BUILD_DIR (default
# build-fuzz/).  tests/fuzz/README.md says how to run them.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$root/build-fuzz}
cc=${CC:-clang}
mkdir -p "$dir"
# Debug keeps assert() on; -O1 for speed (Debug alone is -O0)
cmake -S "$root" -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O1 \
      -DTC_FUZZ=ON -DTC_TESTS=OFF >"$dir/fuzz-configure.log" 2>&1 ||
    { tail -30 "$dir/fuzz-configure.log" >&2; exit 1; }
cmake --build "$dir" -j2 --target fuzz_compile fuzz_npy
echo "built $dir/tests/fuzz/fuzz_compile and $dir/tests/fuzz/fuzz_npy"
