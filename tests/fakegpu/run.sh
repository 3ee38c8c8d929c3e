#!/usr/bin/env bash
# run.sh TENSORC FAKE_LIB - `tensorc run --device=cuda` end to end without a
# GPU: the CUDA driver and cuBLAS are libtc-fake-cuda.so (fakecuda.c says
# what it checks), and tests/gpu/suite.py --plumbing runs every example and
# prelude function, 40 random programs, the cache and --bench through it.
# Each run must exit 0: every launch's arguments match the sizes of the
# generated kernel's parameters (read from its PTX) and every pointer points
# into live memory.  Kernels do not run, so results are not checked here
# (tests/gpu/run.sh does that on a GPU); --check must report them wrong.
# Prints "N passed, M failed" last.  Needs python3 (standard library).
set -u
tc=$(realpath "${1:?usage: run.sh TENSORC FAKE_LIB}")
lib=$(realpath "${2:?usage: run.sh TENSORC FAKE_LIB}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TENSORC_LIBCUDA=$lib TENSORC_CUBLAS=$lib
python3 "$here/../gpu/suite.py" "$tc" "$root" "$work" --plumbing
