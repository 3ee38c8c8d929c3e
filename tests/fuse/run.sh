#!/usr/bin/env bash
# run.sh TENSORC FAKE_LIB - issue 11's fusion programs (issue11.tc) end to
# end without a GPU: each function compiles through NVRTC to CUBIN for
# sm_90, runs on the CPU interpreter, and runs with --device=cuda on the
# fake driver (tests/fakegpu: every launch checked against its kernel's
# parameters; kernels do not execute, so values are compared on a GPU:
# tests/fuse/gpu.sh).  The elementwise function runs over tensor groups in
# one launch (tc_run_foreach's path).  Prints "N passed, M failed"; exits 77
# when NVRTC is not installed.
set -u
tc=$(realpath "${1:?usage: run.sh TENSORC FAKE_LIB}")
lib=$(realpath "${2:?usage: run.sh TENSORC FAKE_LIB}")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TENSORC_CACHE_DIR=$work/cache
prog=$here/issue11.tc
pass=0 fail=0
t() {
    "$@" >"$work/out" 2>"$work/err"
    rc=$?
}
check() {
    local name=$1
    shift
    t "$@"
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name (exit $rc): $*"
        head -8 "$work/err" | sed 's/^/    /'
    fi
}

t "$tc" compile "$prog" --fn cyc --emit=ptx -o "$work/probe.ptx"
if [ $rc -eq 3 ] && grep -q "NVRTC not found" "$work/err"; then
    echo "NVRTC is not installed: skipping"
    exit 77
fi

# inputs: .npy files written here (python3, standard library)
python3 - "$work" <<'PY'
import struct, sys, random
random.seed(1)
def npy(path, shape):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % dims
    hdr += " " * (63 - (len(hdr) + 10) % 64) + "\n"
    n = 1
    for d in shape:
        n *= d
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%df" % n, *[random.uniform(-1, 1) for _ in range(n)]))
w = sys.argv[1]
npy(w + "/x.npy", (37, 19))
for name, n in (("p", 1000), ("m", 1000), ("g", 1000), ("p2", 4097), ("m2", 4097), ("g2", 4097)):
    npy("%s/%s.npy" % (w, name), (n,))
PY

for fn in cyc bn smc step; do
    check "$fn: CUBIN sm_90" "$tc" compile "$prog" --fn $fn --emit=cubin --arch=sm_90 -o "$work/$fn.cubin"
done
# the whole file as one NVRTC unit
check "issue11.tc: CUBIN sm_90" "$tc" compile "$prog" --emit=cubin -o "$work/all.cubin"

for fn in cyc bn smc; do
    check "$fn: interpreter" "$tc" run "$prog" --fn $fn --input x="$work/x.npy" --device=cpu
    check "$fn: fake driver" env TENSORC_LIBCUDA="$lib" TENSORC_CUBLAS="$lib" \
        "$tc" run "$prog" --fn $fn --input x="$work/x.npy" --device=cuda
done
check "step: fake driver" env TENSORC_LIBCUDA="$lib" TENSORC_CUBLAS="$lib" \
    "$tc" run "$prog" --fn step --input p="$work/p.npy" --input m="$work/m.npy" \
    --input g="$work/g.npy" --device=cuda
# foreach: one launch over two groups (was refused: two kernels)
check "step: foreach over groups (fake driver)" env TENSORC_LIBCUDA="$lib" TENSORC_CUBLAS="$lib" \
    TC_FAKE_CUDA_LOG=1 "$tc" run "$prog" --fn step --input p="$work/p.npy,$work/p2.npy" \
    --input m="$work/m.npy,$work/m2.npy" --input g="$work/g.npy,$work/g2.npy" --device=cuda
launches=$(grep -c '^fakecuda: launch' "$work/err")
if [ "$launches" -eq 1 ]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL step: foreach: want 1 launch, got $launches"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
