#!/usr/bin/env bash
# NVRTC in CI: every kernel tensorc generates for the programs here compiles
# for sm_80 and sm_90: to CUBIN for sm_90, and for sm_80 to CUBIN for every
# fourth program (TC_NVRTC_SM80_CUBIN=N: every Nth; 1: all), to PTX for the
# others (NVRTC's front end and NVVM for sm_80's code paths, not ptxas: ptxas
# was two thirds of a CUBIN's compile, 47 of 69 s for the sweep's reductions
# unit; the sampled units, the biggest first, take sm_80's ptxas over the
# helpers' inline PTX that sm_80 reaches, and sm_90's CUBIN over every unit).
#
#   tests/nvrtc/run.sh [TENSORC_BIN] [RANDOM_COUNT]   (defaults: build/tensorc, 30)
#
# Programs: every examples/*.tc, and every .tc under tests/ that the front end
# accepts (`--emit=graph` succeeds: tests/golden/extra, tests/kernels,
# tests/cli's programs, the fuzz corpus; tests/bad's are meant to fail and are
# left out).  Each file is one NVRTC unit (no --fn: all its functions'
# kernels in one compilation), built with `tensorc compile F --emit=cubin
# --arch=sm_80|sm_90 -o OUT`.  A CUBIN must be an ELF file for that arch
# holding one kernel entry per __global__ of the file's --emit=cuda
# (tests/nvrtc/cubin.py, one run for all after the compiles, reads its
# e_flags and symbol table: the checks a PTX's
# .target and .entry lines gave when a PTX for sm_90 was compiled beside the
# CUBINs, which repeated the CUBIN's first half).  A program each of whose
# kernels an earlier program of the list already has (the same text, the
# `// file:line` comments aside: the fuzz corpus's ex_*.tc copies of the
# examples, some doc_*.tc) is not compiled again (tests/nvrtc/units.py;
# TC_NVRTC_VERBOSE=1 names them and the programs that have their kernels).
# Then RANDOM_COUNT programs of the random generator (tests/random/
# gen.py, seed $TC_RANDOM_SEED or 1) go to CUBIN for sm_90; tests/gpu/long_rows.tc's
# rows kernels in f16 and bf16 to PTX for sm_80 and sm_90 (the cluster code
# in sm_90's alone, below: tensorc's --emit=ptx path); and one program
# compiled twice with --verbose must report "cache: miss", then "cache: hit"
# with the same bytes.
#
# TC_NVRTC_QUICK=1 (scripts/test.sh's ASan build, where tensorc's own code is
# what is checked, the same NVRTC wrapper and cache code for every program and
# arch): the sm_90 CUBIN of every twelfth program, 3 random programs (seed
# 1's first: --fn), long_rows.tc's f16 kernels for sm_90 (one PTX with the
# cluster code, one online pair), and the cache's miss and hit.
#
# The kernel cache is a fresh temporary directory (TENSORC_CACHE_DIR) shared
# by the compiles, so every compile is a real NVRTC run (no two units are the
# same text).  Compiles run two at a time, the biggest units first (the
# machines have two cores; TC_NVRTC_JOBS=N to change it).  A failure prints
# tensorc's stderr, which holds the NVRTC log.
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
export TENSORC_CACHE_DIR=$tmp/cache TC_NVRTC_HERE=$here
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

# one.sh ID FILE EMIT ARCH [FN DTYPE ROWS_ONLINE] (each "-" when not set):
# compile, check, and write "ok ..." or "FAIL ..." plus the log to
# $tmp/res/ID (the image stays in $tmp/img/ID.EMIT).  Kept a separate
# script so xargs can run it in parallel.
cat >"$tmp/one.sh" <<'EOF'
#!/usr/bin/env bash
tc=$1 tmp=$2 id=$3 f=$4 emit=$5 arch=$6 fn=${7:--} dt=${8:--} online=${9:--}
args=() env=() # --fn: the entry to build (random programs also define generic helpers)
[ "$fn" != - ] && args+=(--fn "$fn")
[ "$dt" != - ] && args+=(--dtype "T=$dt")
[ "$online" != - ] && env+=(TENSORC_ROWS_ONLINE="$online")
res=$tmp/res/$id out=$tmp/img/$id.$emit err=$tmp/img/$id.err
what="$f --emit=$emit --arch=$arch${args[*]:+ ${args[*]}}${env[*]:+ ${env[*]}}"
t0=$(date +%s.%N)
env "${env[@]}" "$tc" compile "$f" "${args[@]}" --emit="$emit" --arch="$arch" -o "$out" 2>"$err"
rc=$?
t1=$(date +%s.%N)
ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1000 }')
if [ $rc -ne 0 ]; then
    { echo "FAIL $what: tensorc exited $rc"; sed 's/^/    /' "$err" | head -40; } >"$res"
    exit 0
fi
if [ ! -s "$out" ]; then echo "FAIL $what: empty output" >"$res"; exit 0; fi
want=$(env "${env[@]}" "$tc" compile "$f" "${args[@]}" --emit=cuda 2>/dev/null | grep -o '__global__' | wc -l)
if [ "$emit" = ptx ]; then
    got=$(grep -c '^[.a-z ]*\.entry ' "$out")
    if ! grep -q "^\.target $arch\$" "$out"; then
        echo "FAIL $what: the PTX does not target $arch ($(grep -m1 '^\.target' "$out"))" >"$res"; exit 0
    fi
    if [ "$got" -ne "$want" ]; then
        echo "FAIL $what: $got .entry in the PTX, $want __global__ in the source" >"$res"; exit 0
    fi
else # a CUBIN: checked after the compiles, all in one python (cubin.py --batch writes $res)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$res" "$out" "$arch" "$want" "$ms" "$what" >>"$tmp/cubin.todo"
    exit 0
fi
echo "ok   $what ($ms ms)" >"$res"
EOF
mkdir -p "$tmp/res" "$tmp/img"

pass=0 fail=0
# job GROUP FILE EMIT ARCH [FN DTYPE ROWS_ONLINE]: one line of
# $tmp/GROUP.list ("GROUP.N FILE ..."), its id in $tmp/GROUP.ids
nj=0
job() {
    local g=$1
    shift
    nj=$((nj + 1))
    echo "$g.$nj $*" >>"$tmp/$g.list"
    echo "$g.$nj" >>"$tmp/$g.ids"
}
# collect GROUP TITLE: count and print the results of GROUP's jobs.
collect() {
    local id p=0 n=0
    [ -e "$tmp/$1.ids" ] || : >"$tmp/$1.ids"
    while read -r id; do
        if [ ! -e "$tmp/res/$id" ]; then
            echo "FAIL $(grep -h "^$id " "$tmp"/*.list): no result (the job died)"; fail=$((fail + 1)); n=$((n + 1))
        elif grep -q '^ok ' "$tmp/res/$id"; then
            [ -n "${TC_NVRTC_VERBOSE:-}" ] && cat "$tmp/res/$id"
            pass=$((pass + 1)); p=$((p + 1))
        else
            cat "$tmp/res/$id"; fail=$((fail + 1)); n=$((n + 1))
        fi
    done <"$tmp/$1.ids"
    echo "$2: $p passed, $n failed"
}

# The sm_80 and sm_90 CUBINs of each program with a kernel no earlier one
# has (units.py), the biggest units first.  TC_NVRTC_QUICK=1 (the sanitizer
# build: tensorc's wrapper and cache, which every program and arch takes
# the same way; the codegen test runs every program's code generation under
# them, and NVRTC's allocations through ASan's allocator make each compile
# slow): the sm_90 CUBIN of every twelfth program.
quick=0
[ "${TC_NVRTC_QUICK:-0}" = 1 ] && quick=1
todo=() nsame=0
sm80_every=${TC_NVRTC_SM80_CUBIN:-4}
if [ $quick = 1 ]; then
    for i in "${!progs[@]}"; do [ $((i % 12)) -eq 0 ] && todo+=("${progs[$i]}"); done
    [ "$nrandom" -gt 3 ] && nrandom=3
else
    python3 "$here/units.py" "$tc" "${progs[@]}" >"$tmp/units"
    nsame=$(grep -c '^same ' "$tmp/units")
    [ -n "${TC_NVRTC_VERBOSE:-}" ] &&
        sed -n 's/^same \([^ ]*\) [0-9]* as \(.*\)/same kernels: \1 (compiled with \2)/p' "$tmp/units"
    while read -r _ f _ _; do todo+=("$f"); done < <(grep '^keep ' "$tmp/units" | sort -k4,4nr -k2,2)
fi
for i in "${!todo[@]}"; do
    f=${todo[$i]}
    if [ $quick = 1 ]; then
        job prog "$f" cubin sm_90
    else
        # sm_80: every fourth unit (of the biggest first) to CUBIN, the
        # others to PTX (ptxas was two thirds of a CUBIN's NVRTC time)
        if [ $((i % sm80_every)) -eq 0 ]; then job prog "$f" cubin sm_80
        else job prog "$f" ptx sm_80; fi
        job prog "$f" cubin sm_90
    fi
done

# --- random programs to CUBIN sm_90 -------------------------------------------------------------
if [ "$nrandom" -gt 0 ]; then
    py=$(command -v python3 || command -v /usr/bin/python3 || true)
    if [ -z "$py" ]; then
        echo "FAIL random programs: no python3 to run tests/random/gen.py"; fail=$((fail + 1))
    elif ! "$py" tests/random/gen.py --seed "$seed" --count "$nrandom" --out "$tmp/random" >"$tmp/gen.err" 2>&1; then
        echo "FAIL random programs: gen.py failed"; sed 's/^/    /' "$tmp/gen.err" | head -10; fail=$((fail + 1))
    else
        for f in "$tmp"/random/*.tc; do job random "$f" cubin sm_90 f; done
    fi
fi

# --- long rows: cluster code for sm_90, compiled out for sm_80 ----------------------------------
# tests/gpu/long_rows.tc's row reductions (f32 is among the programs
# above) in f16 and bf16 (sched.h, "Clusters"): the sm_90 PTX exchanges
# partials through distributed shared memory (mapa, barrier.cluster), the
# sm_80 one has neither.  logsumexp_rows and max_sumexp_rows are online
# pairs (sched_online.c: one pass, no cluster on either arch), and with
# TENSORC_ROWS_ONLINE=0 (":two") logsumexp_rows has the cluster code again.
# Quick: f16 for sm_90, softmax_rows (a cluster) and logsumexp_rows (a pair).
lrspecs="softmax_rows log_softmax_rows logsumexp_rows:online max_sumexp_rows:online rmsnorm_rows layernorm_rows
         logsumexp_rows:two" lrdts="f16 bf16" lrarchs="sm_80 sm_90"
[ $quick = 1 ] && lrspecs="softmax_rows logsumexp_rows:online" lrdts=f16 lrarchs=sm_90
for spec in $lrspecs; do
    fn=${spec%%:*} online=1
    case $spec in *:two) online=0;; esac
    for dt in $lrdts; do
        for arch in $lrarchs; do
            job "lr" tests/gpu/long_rows.tc ptx "$arch" "$fn" "$dt" "$online"
            echo "$spec $dt $arch" >>"$tmp/lr.specs"
        done
    done
done

# every compile above, two at a time: long rows and random programs (a
# second or two each) first, then the programs from the biggest unit down,
# so that the last to finish are small
cat "$tmp/lr.list" "$tmp/random.list" "$tmp/prog.list" 2>/dev/null |
    xargs -P "$jobs" -L 1 bash "$tmp/one.sh" "$tc" "$tmp"
# the CUBINs' checks, one python for all (a start of python3 a CUBIN was a
# tenth of a second each); a CUBIN it could not judge has no result: a failure
[ -s "$tmp/cubin.todo" ] && python3 "$here/cubin.py" --batch "$tmp/cubin.todo"
ways="cubin sm_90, sm_80 (cubin every ${sm80_every}th, else ptx)"
[ $quick = 1 ] && ways="cubin sm_90"
collect prog "${#todo[@]} of ${#progs[@]} programs x $ways ($nsame: no kernel of their own)"
if [ -e "$tmp/random.ids" ]; then
    collect random "$nrandom random programs (seed $seed) x cubin sm_90"
    # keep the programs of a failing run to look at
    if grep -q FAIL "$tmp"/res/random.* 2>/dev/null; then
        kept=$(mktemp -d /tmp/tc-nvrtc-random.XXXXXX)
        cp "$tmp"/random/*.tc "$kept"/ && echo "random programs kept in $kept"
    fi
fi
# long rows: each PTX compiled (collect), then its cluster code
collect lr "long_rows.tc x ${lrdts// /, } x ${lrarchs// /, }: NVRTC"
lr=0 nlr=0
while read -r id && read -r spec dt arch <&3; do
    nlr=$((nlr + 1))
    o=$tmp/img/$id.ptx cl=1
    case $spec in *:online) cl=0;; esac
    grep -q '^ok ' "$tmp/res/$id" 2>/dev/null || continue # counted by collect
    n_mapa=$(grep -c 'mapa' "$o")
    n_bar=$(grep -c 'barrier.cluster' "$o")
    if { [ "$arch" = sm_90 ] && [ $cl = 1 ] && { [ "$n_mapa" -lt 1 ] || [ "$n_bar" -lt 1 ]; }; } ||
        { { [ "$arch" = sm_80 ] || [ $cl = 0 ]; } && [ $((n_mapa + n_bar)) -ne 0 ]; }; then
        echo "FAIL long_rows.tc $spec T=$dt $arch: $n_mapa mapa, $n_bar barrier.cluster"
        fail=$((fail + 1)) lr=$((lr + 1))
    else
        pass=$((pass + 1))
    fi
done <"$tmp/lr.ids" 3<"$tmp/lr.specs"
echo "long_rows.tc x ${lrdts// /, } x ${lrarchs// /, } (cluster code for sm_90 only, none in online pairs): $((nlr - lr)) passed, $lr failed"

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
