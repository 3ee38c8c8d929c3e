#!/usr/bin/env bash
# gpu.sh [TENSORC] - on a machine with a GPU: issue 11's fusion programs
# (issue11.tc) run on the GPU and compared with the interpreter (--check),
# at shapes that exercise several blocks and partial ones; the elementwise
# function over tensor groups in one launch.  Prints "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
tc=$(realpath "${1:-$here/../../build/tensorc}")
pass=0 fail=0
run() {
    if "$tc" run "$here/issue11.tc" --device=cuda --random --check "$@" >/dev/null; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: tensorc run issue11.tc --check $*"
    fi
}
for shape in N=37,D=19 N=4096,D=1000 N=3,D=70000; do
    for fn in cyc bn smc; do
        run --fn $fn --shape $shape
    done
done
run --fn step --shape '*=1000003'
run --fn step --groups 1000,0,4097,1048577
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
