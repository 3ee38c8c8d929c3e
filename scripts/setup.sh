#!/usr/bin/env bash
# setup.sh - install dependencies, build tensorc into build/, and show what
# it does: the op graph of examples/softmax.tc, then a run of it on the CPU
# reference interpreter.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# quiet LOG CMD...: run CMD with its output in LOG; show the log if it fails.
quiet() {
    local log=$1
    shift
    if ! "$@" >"$log" 2>&1; then
        echo "failed: $*" >&2
        tail -40 "$log" >&2
        return 1
    fi
}

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
