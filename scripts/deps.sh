#!/usr/bin/env bash
# deps.sh - install what tensorc needs to build and test: a C11 compiler,
# make, CMake, flex, bison, pkg-config, cmocka, xxHash, DLPack's header, python3 with NumPy (the CLI and
# NumPy tests use it), graphviz and python3-jsonschema (tests/cli/formats.sh checks --emit=dot and --json) and venv, pip, setuptools and pytest (the Python package's tests), and clang with its sanitizer and libFuzzer runtimes
# (test.sh's UBSan, ThreadSanitizer and fuzzing builds).  Does nothing when everything is already there, so
# it is cheap to run before every build.  Debian/Ubuntu (apt-get); runs as
# root, or through sudo when there is one.
set -euo pipefail

have_numpy() {
    local py
    for py in python3 /usr/bin/python3; do
        if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import numpy' >/dev/null 2>&1; then
            return 0
        fi
    done
    return 1
}

missing=()
for cmd in gcc make cmake flex bison pkg-config; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
done
# cmocka: the header and the library, wherever the toolchain looks
if ! printf '#include <stdarg.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <setjmp.h>\n#include <cmocka.h>\nint main(void){return 0;}\n' |
        gcc -x c - -lcmocka -o /dev/null >/dev/null 2>&1; then
    missing+=(libcmocka-dev)
fi
[ -f /usr/include/xxhash.h ] || missing+=(libxxhash-dev)   # kernel cache keys
[ -f /usr/include/dlpack/dlpack.h ] || missing+=(libdlpack-dev)   # DLTensor in tensorc.h
have_numpy || missing+=(python3-numpy)
# the Python package (python/) installs into a venv with pip and is tested with pytest
/usr/bin/python3 -c 'import ensurepip, venv, setuptools, pytest' >/dev/null 2>&1 ||
    missing+=(python3-venv python3-pip python3-setuptools python3-pytest)
# graphviz's dot checks --emit=dot's output; python3-jsonschema checks --json's against docs/schema
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
/usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1 || missing+=(python3-jsonschema)
# clang, and the runtimes its -fsanitize=undefined,thread,fuzzer link against
# (Debian ships them apart, in libclang-rt-N-dev)
have_clang_rt() {
    command -v clang >/dev/null 2>&1 || return 1
    local san
    for san in undefined thread; do
        printf 'int main(void){return 0;}\n' |
            clang -x c - -fsanitize=$san -o /dev/null >/dev/null 2>&1 || return 1
    done
    printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){return 0;}\n' |
        clang -x c - -fsanitize=fuzzer -o /dev/null >/dev/null 2>&1
}
have_clang_rt || missing+=(clang libclang-rt-dev)
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "deps.sh: installing (missing: ${missing[*]})"
sudo=
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=sudo; else
        echo "deps.sh: need root (or sudo) to install: ${missing[*]}" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends \
    gcc libc6-dev make cmake flex bison pkg-config libcmocka-dev libxxhash-dev libdlpack-dev python3 \
    python3-numpy python3-venv python3-pip python3-setuptools python3-pytest clang libclang-rt-dev graphviz python3-jsonschema >/dev/null
if ! have_numpy; then
    echo "deps.sh: NumPy is still not importable from python3 or /usr/bin/python3" >&2
    exit 1
fi
if ! have_clang_rt; then
    echo "deps.sh: clang cannot link -fsanitize=undefined, thread or fuzzer (libclang-rt-dev?)" >&2
    exit 1
fi
