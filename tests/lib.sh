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
