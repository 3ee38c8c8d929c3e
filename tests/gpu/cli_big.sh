#!/usr/bin/env bash
# cli_big.sh TENSORC [FAKE_LIB] - `tensorc run` with tensors of more than
# 2^30 elements (issue 11): the CLI holds them for --device=cuda runs; the
# CPU reference interpreter, which cannot, refuses a CPU run or --check at
# once, naming the tensor, before allocating anything.
#
#   with FAKE_LIB (ctest, no GPU; tests/fakegpu's driver stands in for
#   libcuda): the refusals; then, only with TC_TEST_BIG_MEMORY=1 (about
#   11 GB of host memory, a minute), a --device=cuda run of a reduction
#   over 2^30 + 1 bools that must exit 0 and launch its kernel (the fake
#   runs no kernels: the value is not checked).  Without the variable that
#   part prints SKIP.
#   without FAKE_LIB (on a GPU machine: tests/gpu/cli_big.sh build/tensorc):
#   the refusals, then at N = 2^30 + 1, each result checked in full:
#     count  sum(x == x) over f32[N] is exactly N (i64);
#     zero   x && false over bool[N], written to .npy: every byte 0 (the
#            CLI poisons outputs with 0xff, so an element no kernel wrote
#            shows);
#     sub    x - x over f32[N], written to .npy: every byte 0 (+0.0).
#   It needs about 30 GB of host memory and 9 GB of GPU memory.
# Prints PASS/FAIL/SKIP per check and "N passed, M failed" last.
set -u
tc=$(realpath "${1:?usage: cli_big.sh TENSORC [FAKE_LIB]}")
fake=${2:+$(realpath "$2")}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TENSORC_CACHE_DIR=$work/cache
pass=0 fail=0
ok() { echo "PASS $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
show() { tail -n 8 "$1" | sed 's/^/    /'; }
N=1073741825 # 2^30 + 1
cat >"$work/big.tc" <<'EOF'
fn count(x: f32[N]) -> i64 {
    return sum(x == x)
}
fn zero(x: bool[N]) -> bool[N] {
    return x && false
}
fn sub(x: f32[N]) -> f32[N] {
    return x - x
}
fn any1(x: bool[N]) -> i64 {
    return sum(x)
}
EOF
[ -n "$fake" ] && export TENSORC_LIBCUDA=$fake

# --- the interpreter's refusals: at once, before any allocation -------------------
# (ulimit: a run that did allocate its 2^30-element inputs would fail here)
refuse() { # refuse LABEL WANT ARGS...
    local label=$1 want=$2
    shift 2
    (ldd "$tc" | grep -q asan || ulimit -v 4000000 # ASan reserves terabytes of address space
     "$tc" run "$work/big.tc" --shape N=$N --random "$@") >"$work/out" 2>"$work/err"
    local rc=$?
    if [ $rc -eq 1 ] && grep -q "parameter 'x' has $N elements, more than the CPU reference interpreter holds (1073741824): $want" "$work/err"; then
        ok "$label: refused, naming the tensor"
    else
        bad "$label: exit $rc, expected 1 with '$want'"; show "$work/err"
    fi
}
refuse "--device=cpu at 2^30 + 1" "run it on the GPU" --fn any1 --device=cpu
if [ -n "$fake" ]; then
    refuse "--device=cuda --check at 2^30 + 1" "run without --check" --fn any1 --device=cuda --check
fi

# --- runs at 2^30 + 1 -------------------------------------------------------------------
if [ -n "$fake" ]; then
    if [ "${TC_TEST_BIG_MEMORY:-0}" != 1 ]; then
        echo "SKIP --device=cuda at 2^30 + 1 on the fake driver: needs about 11 GB (TC_TEST_BIG_MEMORY=1)"
    else
        TC_FAKE_CUDA_LOG=1 "$tc" run "$work/big.tc" --fn any1 --device=cuda --shape N=$N --random \
            >"$work/out" 2>"$work/err"
        rc=$?
        if [ $rc -eq 0 ] && grep -q '^fakecuda: launch' "$work/err" && grep -q '^out: i64' "$work/out"; then
            ok "--device=cuda at 2^30 + 1 elements on the fake driver: runs, launches"
        else
            bad "--device=cuda at 2^30 + 1 on the fake driver: exit $rc"; show "$work/err"
        fi
    fi
else
    "$tc" run "$work/big.tc" --fn count --device=cuda --shape N=$N --random >"$work/out" 2>"$work/err"
    rc=$?
    if [ $rc -eq 0 ] && grep -qx "$N" "$work/out"; then
        ok "count over $N f32 elements is $N"
    else
        bad "count: exit $rc, expected $N"; show "$work/out"; show "$work/err"
    fi
    for fn in zero sub; do
        "$tc" run "$work/big.tc" --fn $fn --device=cuda --shape N=$N --random \
            --output out="$work/$fn.npy" >"$work/out" 2>"$work/err"
        rc=$?
        # every data byte after the .npy header is 0
        if [ $rc -eq 0 ] && python3 - "$work/$fn.npy" $N >"$work/check" 2>&1 <<'EOF'
import struct, sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, 'rb') as f:
    magic = f.read(8)
    assert magic[:6] == b'\x93NUMPY', magic
    hlen = struct.unpack('<H' if magic[6] == 1 else '<I', f.read(2 if magic[6] == 1 else 4))[0]
    header = f.read(hlen).decode('latin1')
    assert "'shape': (%d,)" % n in header, header
    total = bad = 0
    while True:
        chunk = f.read(1 << 24)
        if not chunk:
            break
        total += len(chunk)
        bad += len(chunk) - chunk.count(0)
    size = 1 if "'|b1'" in header else 4
    assert total == n * size, (total, n * size)
    assert bad == 0, '%d nonzero bytes' % bad
print('ok')
EOF
        then
            ok "$fn over $N elements: every element right"
        else
            bad "$fn: exit $rc"; show "$work/err"; show "$work/check"
        fi
        rm -f "$work/$fn.npy"
    done
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
