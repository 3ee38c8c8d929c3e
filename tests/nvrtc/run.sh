#!/usr/bin/env bash
# NVRTC in CI: every program compiles to PTX and CUBIN for sm_80 and sm_90.
#
#   tests/nvrtc/run.sh [TENSORC_BIN] [RANDOM_COUNT]   (defaults: build/tensorc, 30)
#
# Programs: every examples/*.tc, and every .tc under tests/ that the front end
# accepts (`--emit=graph` succeeds: tests/golden/extra, tests/kernels,
# tests/cli's programs; tests/bad's are meant to fail and are left out).  Each
# file is one NVRTC unit (no --fn: all its functions' kernels in one
# compilation), built three ways with `tensorc compile F --emit=ptx|cubin
# --arch=... -o OUT`: PTX for sm_90, CUBIN for sm_80 and sm_90 (a CUBIN is
# the PTX then ptxas, so a PTX for sm_80 beside its CUBIN only repeated
# it; TC_NVRTC_QUICK=1: the sm_90 CUBIN of every fourth program alone).  A PTX must target that arch
# and hold one .entry per __global__ of the file's --emit=cuda; a CUBIN must
# be an ELF file.  Then RANDOM_COUNT programs of the random generator (tests/random/
# gen.py, seed $TC_RANDOM_SEED or 1) go to CUBIN for sm_90, and one program
# compiled twice with --verbose must report "cache: miss", then "cache: hit"
# with the same bytes.
#
# The kernel cache is a fresh temporary directory (TENSORC_CACHE_DIR), so
# every compile is a real NVRTC run.  Compiles run two at a time (the
# machines have two cores; TC_NVRTC_JOBS=N to change it): minutes on two
# idle cores (about 150 programs; a twelfth of the compiles with TC_NVRTC_QUICK).  A
# failure prints tensorc's stderr, which holds the NVRTC log.
# Prints one line per failure (TC_NVRTC_VERBOSE=1: per compile, with its
# time), a summary per group, and "N passed, M failed" last; exits 1 on
# failure, and 77 (ctest's SKIP_RETURN_CODE) when NVRTC is not installed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tc=$(realpath "${1:-$root/build/tensorc}")
nrandom=${2:-30}
seed=${TC_RANDOM_SEED:-1}
if [ ! -x "$tc" ]; then echo "no tensorc binary at $tc (build first)"; exit 2; fi
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TENSORC_CACHE_DIR=$tmp/cache
jobs=${TC_NVRTC_JOBS:-2}
start=$SECONDS

# --- is NVRTC there? -----------------------------------------------------------------
"$tc" compile tests/cli/single.tc --emit=ptx -o "$tmp/probe.ptx" 2>"$tmp/probe.err"
rc=$?
if [ $rc -eq 3 ] && grep -q "NVRTC not found" "$tmp/probe.err"; then
    echo "NVRTC is not installed: skipping ($(head -1 "$tmp/probe.err"))"
    exit 77
elif [ $rc -ne 0 ]; then
    echo "FAIL probe: tensorc compile tests/cli/single.tc --emit=ptx exited $rc"
    sed 's/^/    /' "$tmp/probe.err" | head -30
    echo "0 passed, 1 failed"
    exit 1
fi

# --- the programs ------------------------------------------------------------------------
progs=()
for f in examples/*.tc; do progs+=("$f"); done
while IFS= read -r f; do
    case $f in tests/bad/*) continue ;; esac
    if "$tc" compile "$f" --emit=graph >/dev/null 2>&1; then progs+=("$f"); fi
done < <(find tests -name '*.tc' | sort)

# one.sh FILE EMIT ARCH: compile, check, and write "ok ..." or "FAIL ..." plus
# the log to $tmp/res/<id>.  Kept a separate script so xargs can run it in
# parallel.
cat >"$tmp/one.sh" <<'EOF'
#!/usr/bin/env bash
tc=$1 tmp=$2 f=$3 emit=$4 arch=$5
id=$(printf '%s.%s.%s' "$f" "$emit" "$arch" | tr '/' '_')
res=$tmp/res/$id out=$tmp/img/$id.$emit err=$tmp/img/$id.err
t0=$(date +%s.%N)
fnarg=() # TC_NVRTC_FN: the entry to build (random programs also define generic helpers)
[ -n "${TC_NVRTC_FN:-}" ] && fnarg=(--fn "$TC_NVRTC_FN")
"$tc" compile "$f" "${fnarg[@]}" --emit="$emit" --arch="$arch" -o "$out" 2>"$err"
rc=$?
t1=$(date +%s.%N)
ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1000 }')
what="$f --emit=$emit --arch=$arch"
if [ $rc -ne 0 ]; then
    { echo "FAIL $what: tensorc exited $rc"; sed 's/^/    /' "$err" | head -40; } >"$res"
    exit 0
fi
if [ ! -s "$out" ]; then echo "FAIL $what: empty output" >"$res"; exit 0; fi
if [ "$emit" = ptx ]; then
    want=$("$tc" compile "$f" "${fnarg[@]}" --emit=cuda 2>/dev/null | grep -o '__global__' | wc -l)
    got=$(grep -c '^[.a-z ]*\.entry ' "$out")
    if ! grep -q "^\.target $arch\$" "$out"; then
        echo "FAIL $what: the PTX does not target $arch ($(grep -m1 '^\.target' "$out"))" >"$res"; exit 0
    fi
    if [ "$got" -ne "$want" ]; then
        echo "FAIL $what: $got .entry in the PTX, $want __global__ in the source" >"$res"; exit 0
    fi
else
    if [ "$(head -c 4 "$out" | od -An -tx1 | tr -d ' \n')" != 7f454c46 ]; then
        echo "FAIL $what: the CUBIN is not an ELF file" >"$res"; exit 0
    fi
fi
echo "ok   $what ($ms ms)" >"$res"
EOF
mkdir -p "$tmp/res" "$tmp/img"

# run_all LIST: each line "FILE EMIT ARCH", two at a time.
run_all() {
    xargs -P "$jobs" -L 1 bash "$tmp/one.sh" "$tc" "$tmp" <"$1"
}

pass=0 fail=0
# collect LIST GROUP: count and print the results of LIST's jobs.
collect() {
    local f emit arch id p=0 n=0
    while read -r f emit arch; do
        id=$(printf '%s.%s.%s' "$f" "$emit" "$arch" | tr '/' '_')
        if [ ! -e "$tmp/res/$id" ]; then
            echo "FAIL $f --emit=$emit --arch=$arch: no result (the job died)"; fail=$((fail + 1)); n=$((n + 1))
        elif grep -q '^ok ' "$tmp/res/$id"; then
            [ -n "${TC_NVRTC_VERBOSE:-}" ] && cat "$tmp/res/$id"
            pass=$((pass + 1)); p=$((p + 1))
        else
            cat "$tmp/res/$id"; fail=$((fail + 1)); n=$((n + 1))
        fi
    done <"$1"
    echo "$2: $p passed, $n failed"
}

: >"$tmp/list"
# A CUBIN is NVRTC's PTX then ptxas: a PTX of the same arch beside it would
# compile everything twice.  So the PTX (its .entry count checked) for sm_90,
# CUBINs for both.  TC_NVRTC_QUICK=1 (scripts/test.sh's sanitizer build, where
# tensorc's own code is what is checked, the same code for every arch): the
# sm_90 CUBIN alone.
# There, every fourth program and 8 random ones: the sanitizers watch
# tensorc's NVRTC wrapper and cache, which every program takes the same way
# (the codegen test runs every program's code generation under them), and
# NVRTC's allocations through ASan's allocator made this test half of the
# sanitizer build's time.
if [ "${TC_NVRTC_QUICK:-0}" = 1 ]; then
    ways="cubin:sm_90"
    some=()
    for i in "${!progs[@]}"; do [ $((i % 4)) -eq 0 ] && some+=("${progs[$i]}"); done
    progs=("${some[@]}")
    [ "$nrandom" -gt 8 ] && nrandom=8
else
    ways="ptx:sm_90 cubin:sm_80 cubin:sm_90"
fi
for f in "${progs[@]}"; do
    for w in $ways; do echo "$f ${w%:*} ${w#*:}" >>"$tmp/list"; done
done
run_all "$tmp/list"
collect "$tmp/list" "${#progs[@]} programs x ${ways// /, }"

# --- random programs to CUBIN sm_90 -------------------------------------------------------------
if [ "$nrandom" -gt 0 ]; then
    py=$(command -v python3 || command -v /usr/bin/python3 || true)
    if [ -z "$py" ]; then
        echo "FAIL random programs: no python3 to run tests/random/gen.py"; fail=$((fail + 1))
    elif ! "$py" tests/random/gen.py --seed "$seed" --count "$nrandom" --out "$tmp/random" >"$tmp/gen.err" 2>&1; then
        echo "FAIL random programs: gen.py failed"; sed 's/^/    /' "$tmp/gen.err" | head -10; fail=$((fail + 1))
    else
        : >"$tmp/rlist"
        for f in "$tmp"/random/*.tc; do echo "$f cubin sm_90" >>"$tmp/rlist"; done
        TC_NVRTC_FN=f run_all "$tmp/rlist"
        collect "$tmp/rlist" "$nrandom random programs (seed $seed) x cubin sm_90"
        # keep the programs of a failing run to look at
        if grep -q FAIL "$tmp"/res/*random* 2>/dev/null; then
            keep=$(mktemp -d /tmp/tc-nvrtc-random.XXXXXX)
            cp "$tmp"/random/*.tc "$keep"/ && echo "random programs kept in $keep"
        fi
    fi
fi

# --- long rows: cluster code for sm_90, compiled out for sm_80 ----------------------------------
# tests/gpu/long_rows.tc's row reductions (f32 is among the programs
# above) in f16 and bf16 (sched.h, "Clusters"): the sm_90 PTX exchanges
# partials through distributed shared memory (mapa, barrier.cluster), the
# sm_80 one has neither.  logsumexp_rows and max_sumexp_rows are online
# pairs (sched_online.c: one pass, no cluster on either arch), and with
# TENSORC_ROWS_ONLINE=0 (":two") logsumexp_rows has the cluster code again.
lr=0
for spec in softmax_rows log_softmax_rows logsumexp_rows:online max_sumexp_rows:online rmsnorm_rows \
        layernorm_rows logsumexp_rows:two; do
    fn=${spec%%:*} online=1 cl=1
    case $spec in *:online) cl=0;; *:two) online=0;; esac
    for dt in f16 bf16; do
        for arch in sm_80 sm_90; do
            o=$tmp/long_rows.$fn.$dt.$arch.$online
            if ! TENSORC_ROWS_ONLINE=$online "$tc" compile tests/gpu/long_rows.tc --fn $fn --dtype T=$dt --emit=ptx \
                    --arch=$arch -o "$o.ptx" 2>"$o.err"; then
                echo "FAIL long_rows.tc $fn T=$dt $arch: NVRTC"; sed 's/^/    /' "$o.err" | head -10
                fail=$((fail + 1)) lr=$((lr + 1))
                continue
            fi
            n_mapa=$(grep -c 'mapa' "$o.ptx")
            n_bar=$(grep -c 'barrier.cluster' "$o.ptx")
            if { [ "$arch" = sm_90 ] && [ $cl = 1 ] && { [ "$n_mapa" -lt 1 ] || [ "$n_bar" -lt 1 ]; }; } ||
                { { [ "$arch" = sm_80 ] || [ $cl = 0 ]; } && [ $((n_mapa + n_bar)) -ne 0 ]; }; then
                echo "FAIL long_rows.tc $spec T=$dt $arch: $n_mapa mapa, $n_bar barrier.cluster"
                fail=$((fail + 1)) lr=$((lr + 1))
            else
                pass=$((pass + 1))
            fi
        done
    done
done
echo "long_rows.tc x f16, bf16 x sm_80, sm_90 (cluster code for sm_90 only, none in online pairs): $((28 - lr)) passed, $lr failed"

# --- the kernel cache: a miss, then a hit with the same image ------------------------------------
vdir=$tmp/vcache
for i in 1 2; do
    TENSORC_CACHE_DIR=$vdir "$tc" compile examples/softmax.tc --emit=cubin --arch=sm_80 --verbose \
        -o "$tmp/v$i.cubin" 2>"$tmp/v$i.err"
    echo $? >"$tmp/v$i.rc"
done
if [ "$(cat "$tmp/v1.rc")" -ne 0 ] || [ "$(cat "$tmp/v2.rc")" -ne 0 ]; then
    echo "FAIL --verbose cache: tensorc exited $(cat "$tmp/v1.rc"), $(cat "$tmp/v2.rc")"
    sed 's/^/    /' "$tmp/v1.err" "$tmp/v2.err" | head -20; fail=$((fail + 1))
elif ! grep -q "cache: miss" "$tmp/v1.err" || ! grep -q "cache: hit" "$tmp/v2.err"; then
    echo "FAIL --verbose cache: want 'cache: miss' then 'cache: hit', got:"
    sed 's/^/    /' "$tmp/v1.err" "$tmp/v2.err" | head -10; fail=$((fail + 1))
elif ! cmp -s "$tmp/v1.cubin" "$tmp/v2.cubin"; then
    echo "FAIL --verbose cache: the cached CUBIN differs from the compiled one"; fail=$((fail + 1))
else
    echo "ok   --verbose: cache: miss, then cache: hit with the same CUBIN"; pass=$((pass + 1))
fi

echo "($((SECONDS - start)) s, $jobs jobs)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
