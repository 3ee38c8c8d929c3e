#!/usr/bin/env bash
# setup.sh - from a fresh Debian or Ubuntu machine to tensorc's kernels:
#   1. install what is missing (scripts/deps.sh: compiler, CMake, flex,
#      bison, cmocka, xxHash, DLPack, NumPy; nothing when all is there);
#   2. build build/ (Release, warnings as errors);
#   3. compile examples/softmax.tc and show what it becomes: the CUDA
#      kernel and its launch plan (no GPU needed);
#   4. run it: on the GPU, checked against the reference interpreter
#      (`tensorc run --check`), when a GPU is present; else on the CPU
#      reference interpreter, saying why.
# Running on the GPU needs the NVIDIA driver and NVRTC (the CUDA toolkit,
# or its NVRTC package); building needs neither.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

. scripts/lib.sh

bash scripts/deps.sh
echo "== configuring and building build/ (Release, warnings as errors)"
mkdir -p build
quiet build/setup-configure.log cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTC_WERROR=ON
quiet build/setup-build.log cmake --build build -j2
echo "   build/tensorc: $(build/tensorc --version)"

echo
echo "== tensorc compile examples/softmax.tc   (the CUDA kernels and their launch plan)"
build/tensorc compile examples/softmax.tc

echo
echo "== tensorc run examples/softmax.tc --shape N=1024,D=1000 --random --check"
# Exit status 3 means no usable GPU here (no driver, no device, or no NVRTC);
# the message says which.
status=0
build/tensorc run examples/softmax.tc --shape N=1024,D=1000 --random --check 2>build/setup-run.err || status=$?
if [ $status -eq 3 ]; then
    echo "   no GPU to run on: $(sed 's/^error: //' build/setup-run.err | head -n 1)"
    echo
    echo "== tensorc run examples/softmax.tc --shape N=4,D=8 --device=cpu --random   (the reference interpreter)"
    build/tensorc run examples/softmax.tc --shape N=4,D=8 --device=cpu --random
else
    cat build/setup-run.err >&2
    [ $status -eq 0 ] || exit $status
fi
