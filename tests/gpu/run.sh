#!/usr/bin/env bash
# run.sh - the GPU test suite in one command, on a GPU machine, from a build
# made elsewhere:  tests/gpu/run.sh [BUILD_DIR]   (default: build/)
#
# Prints the GPU and the shared libraries the binaries use, runs every GPU
# test program, logs everything to ${OUT:-/tmp}/gpu-run.log, and prints
# "N passed, M failed" last (the sum of each program's own last line).
# For now the suite is tc-gpu-smoke; the generated kernels (issue 3) add the
# examples and random programs here.  Exit status: 0 all passed, 1 a failure,
# 3 no GPU.
set -u
build=${1:-build}
log=${OUT:-/tmp}/gpu-run.log
mkdir -p "$(dirname "$log")"
: >"$log"

say() { echo "$@" | tee -a "$log"; }

find_bin() { # the binary under the build dir, wherever CMake put it
    for p in "$build/$1" "$build/tests/$1"; do
        [ -x "$p" ] && { echo "$p"; return 0; }
    done
    return 1
}

say "== GPU"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$log"
else
    say "nvidia-smi not found"
fi

# NVRTC: the toolkit's usual place, else a pip wheel's (PyTorch's).
if [ -z "${TENSORC_NVRTC:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then
    cand=$(ls /usr/local/cuda/lib64/libnvrtc.so* 2>/dev/null | sort -r | head -1)
    [ -z "$cand" ] && cand=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null |
        xargs -r -I{} find {} -name 'libnvrtc.so*' 2>/dev/null | grep -v builtins | sort -r | head -1)
    [ -n "$cand" ] && export TENSORC_NVRTC=$cand && say "TENSORC_NVRTC=$cand"
fi

programs=(tc-gpu-smoke)
bins=()
for prog in "${programs[@]}"; do
    if b=$(find_bin "$prog"); then bins+=("$b"); else say "missing: $prog (build it in $build)"; fi
done
say "== ldd"
for b in "${bins[@]}" $(find_bin tensorc || true); do
    say "$b:"
    ldd "$b" 2>&1 | tee -a "$log"
done

passed=0 failed=0 nogpu=0
[ ${#bins[@]} -lt ${#programs[@]} ] && failed=$((failed + ${#programs[@]} - ${#bins[@]}))
for b in "${bins[@]}"; do
    say "== $b"
    out=$("$b" 2>&1); rc=$?
    echo "$out" | tee -a "$log"
    last=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
    if [ $rc -eq 3 ]; then
        nogpu=1
    elif [ -n "$last" ]; then
        p=${last%% passed*}; f=${last#*, }; f=${f%% failed*}
        passed=$((passed + p)); failed=$((failed + f))
        [ $rc -ne 0 ] && [ "$f" -eq 0 ] && failed=$((failed + 1))  # crashed after its summary
    else
        say "$b exited $rc without a summary"
        failed=$((failed + 1))
    fi
done

say "log: $log"
say "$passed passed, $failed failed"
[ $failed -ne 0 ] && exit 1
[ $nogpu -ne 0 ] && exit 3
exit 0
