#!/usr/bin/env bash
# run.sh [BUILD_DIR [PYTEST_ARGS...]] - the Python package's tests, as a newcomer installs it:
# a fresh virtual environment (--system-site-packages, for NumPy and pytest
# from Debian), `pip install ./python` of a copy of the checkout's python/
# (so parallel runs do not share setuptools' build folders), with the
# library from BUILD_DIR (default build/) copied in by setup.py, then pytest
# over tests/python from outside the checkout, so the installed package is
# what is imported (test_installed_copy checks it).  The GPU path is tested
# on tests/fakegpu's driver (BUILD_DIR/tests/libtc-fake-cuda.so).
# Offline: pip uses --no-build-isolation --no-index (setuptools from Debian).
# A sanitizer build's library needs its runtime preloaded into python: the
# ASan and UBSan libraries it links to (gcc's TC_SANITIZE) are; a TC_UBSAN or
# TC_TSAN build (clang, runtimes linked into executables) is skipped (exit 77).  Exit status: pytest's.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
[ $# -gt 0 ] && shift  # the rest goes to pytest
lib=$build/package/lib/libtensorc.so
[ -f "$lib" ] || { echo "run.sh: $lib not built" >&2; exit 1; }
if grep -Eq '^TC_(UBSAN|TSAN):BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
    echo "run.sh: skipped: clang sanitizer build (its runtime is not loaded into python)"
    exit 77
fi

py=
for cand in python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null 2>&1 &&
       "$cand" -c 'import numpy, pytest, venv, setuptools' >/dev/null 2>&1; then
        py=$cand
        break
    fi
done
[ -n "$py" ] || { echo "run.sh: no python3 with numpy, pytest, venv and setuptools (scripts/deps.sh)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" -m venv --system-site-packages "$work/venv"
cp -r "$root/python" "$work/python"
rm -rf "$work/python/build" "$work/python"/*.egg-info "$work/python/tensorc/libtensorc.so"
TENSORC_LIB=$lib "$work/venv/bin/pip" install -q --no-build-isolation --no-index "$work/python"

# the sanitizer runtimes the library links to (gcc's ASan and UBSan), first in the process
preload=$(ldd "$lib" | awk '/lib(asan|ubsan)\.so/ {print $3}' | tr '\n' ' ')
if [ -n "$preload" ]; then
    export ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}  # python's own allocations
fi
fake=$build/tests/libtc-fake-cuda.so
[ -f "$fake" ] || fake=
cd "$work"
env -u TENSORC_LIB TC_PY_EXPECT_INSTALLED=1 TENSORC_CACHE_DIR="$work/cache" \
    ${preload:+LD_PRELOAD="$preload"} \
    ${fake:+TC_FAKE_CUDA="$fake" TENSORC_LIBCUDA="$fake" TENSORC_CUBLAS="$fake"} \
    "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/python" "$@"
