#!/usr/bin/env bash
# setup.sh - install dependencies, build tensorc into build/, and show what
# it does: the op graph of examples/softmax.tc, then a run of it on the CPU
# reference interpreter.
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
echo "== tensorc compile examples/softmax.tc --emit=graph"
build/tensorc compile examples/softmax.tc --emit=graph
echo
echo "== tensorc run examples/softmax.tc --fn softmax --shape N=4,D=8 --device=cpu"
build/tensorc run examples/softmax.tc --fn softmax --shape N=4,D=8 --device=cpu
