# lib.sh - helpers shared by the shell tests (sourced, not run).

# numpy_python: print the first of python3, /usr/bin/python3 that can import
# NumPy (the dev machine's python3 may be a pyenv one without it, while
# deps.sh installs Debian's python3-numpy); fail if neither can.
numpy_python() {
    local cand
    for cand in python3 /usr/bin/python3; do
        if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import numpy' 2>/dev/null; then
            echo "$cand"
            return 0
        fi
    done
    return 1
}

# cuda_kernels FILE: the __global__ functions of a `tensorc compile
# --emit=cuda` dump, a rows kernel's wide variant (`..._w`, sched.h's
# wide_split: launched instead of its kernel for long rows, never beside it,
# its step guarded) not counted
cuda_kernels() { grep '__global__' "$1" | grep -vcE '_w\($'; }
