#!/usr/bin/env bash
# Code generation end to end without a GPU (issue 11's code generator part).
#
#   tests/codegen/run.sh TENSORC FAKE_LIB
#
#   programs  tests/codegen/progs.tc (programs the code generator could not
#             build or got wrong): the file is one NVRTC unit and must
#             compile to CUBIN for sm_90; each function then runs on the
#             interpreter (--device=cpu) and on the fake driver
#             (--device=cuda, tests/fakegpu: every launch checked against
#             its kernel's PTX); the matmul-only functions also pass --check
#             there, since the fake cuBLAS computes (a size-1 batch dim given
#             its contiguous batch stride read past the buffer: NaN).
#   sweep     tests/nvrtc/sweep.py: every op of src/base/ops.def in every dtype
#             the checker accepts, in pointwise, rows, columns (plain, split,
#             split with vectors) and whole-tensor kernels, through NVRTC
#             (to PTX for sm_90: sweep.py says why not CUBIN).
#             By default the pointwise and reductions groups (every op's
#             spelling and literals in every dtype, casts, every reduction's
#             accumulator in every strategy); TC_SWEEP_GROUPS= (empty) runs
#             every group (rows and split too: ~10 more minutes on a busy
#             two-core machine); TC_CODEGEN_SWEEP=0 leaves the sweep out.
#
# Prints one line per check and "N passed, M failed" last; exits 1 on a
# failure, 77 (ctest's skip) when NVRTC is not installed.
set -u
tc=$(realpath "${1:?usage: run.sh TENSORC FAKE_LIB}")
lib=$(realpath "${2:?usage: run.sh TENSORC FAKE_LIB}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TENSORC_CACHE_DIR=$tmp/cache
cd "$root"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
    fail=$((fail + 1)); echo "FAIL $1"
    [ -n "${2:-}" ] && sed 's/^/     /' "$2" | head -20
    return 0
}

"$tc" compile tests/cli/single.tc --emit=ptx -o "$tmp/probe.ptx" 2>"$tmp/probe.err"
rc=$?
if [ $rc -eq 3 ] && grep -q "NVRTC not found" "$tmp/probe.err"; then
    echo "NVRTC is not installed: skipping"
    exit 77
fi

progs=tests/codegen/progs.tc
if "$tc" compile "$progs" --emit=cubin --arch=sm_90 -o "$tmp/progs.cubin" 2>"$tmp/err"; then
    ok "$progs compiles to CUBIN (sm_90)"
else
    bad "$progs does not compile to CUBIN" "$tmp/err"
fi

# function, sizes, and whether --check holds on the fake driver
while read -r fn shape check; do
    [ -z "$fn" ] && continue
    if "$tc" run "$progs" --fn "$fn" --shape "$shape" --random --device=cpu >"$tmp/out" 2>"$tmp/err"; then
        ok "$fn on the interpreter"
    else
        bad "$fn on the interpreter" "$tmp/err"
    fi
    args=(run "$progs" --fn "$fn" --shape "$shape" --random --device=cuda)
    [ "$check" = check ] && args+=(--check)
    if TENSORC_LIBCUDA=$lib TENSORC_CUBLAS=$lib "$tc" "${args[@]}" >"$tmp/out" 2>"$tmp/err"; then
        ok "$fn on the fake driver${check:+ (--check)}"
    else
        bad "$fn on the fake driver${check:+ (--check)}" "$tmp/err"
    fi
done <<'EOF'
col_count N=1000,D=37
relu_like N=1001
clamp64 N=1001
isinf64 N=1001
lse64 N=33,D=100
amin0 A=33,N=32,D=8
amax1 N=32,A=33,D=8
mm_w1 B=64,N=17,K=33,M=100 check
mm_a1 B=64,N=17,K=33,M=100 check
mm_mix B=4,H=3,N=17,K=33,M=100
kept_f16 B=2,N=3,D=40
EOF

if [ "${TC_CODEGEN_SWEEP:-1}" != 0 ]; then
    TC_SWEEP_GROUPS=${TC_SWEEP_GROUPS-pointwise,reductions} \
        python3 tests/nvrtc/sweep.py "$tc" "$tmp/sweep" >"$tmp/sweep.log" 2>&1
    rc=$?
    grep -v '^[0-9]* passed' "$tmp/sweep.log"
    if [ $rc -eq 0 ]; then
        ok "sweep: every op in every dtype and strategy compiles"
    else
        bad "sweep (tests/nvrtc/sweep.py) failed"
    fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
