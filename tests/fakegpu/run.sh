#!/usr/bin/env bash
# run.sh TENSORC FAKE_LIB - `tensorc run --device=cuda` end to end without a
# GPU: the CUDA driver and cuBLAS are libtc-fake-cuda.so (fakecuda.c says
# what it checks), and tests/gpu/suite.py --plumbing runs every example and
# prelude function, 40 random programs, the cache and --bench through it.
# Each run must exit 0: every launch's arguments match the sizes of the
# generated kernel's parameters (read from its PTX) and every pointer points
# into live memory.  Kernels do not run, so results are not checked here
# (tests/gpu/run.sh does that on a GPU); --check must report them wrong.
# Then `run --groups` (tensor groups, api_run_foreach): exactly one launch
# over several groups, over more groups than the kernel parameter's table
# holds (the table goes through device memory), and over none with
# elements (no launch).  Prints suite.py's "N passed, M failed", then the
# groups' own tally last.  Needs python3 (standard library).
#
# TC_FAKEGPU_CACHE=DIR: suite.py's kernel cache is DIR (created, mode 700)
# instead of a fresh one.  scripts/test.sh gives the Release and ASan builds
# the same DIR, emptied before the Release build: the Release run compiles
# every unit through NVRTC, the ASan run (tensorc's code under ASan, the same
# generated source) finds them there, so its plans, launches and module loads
# are checked without NVRTC's allocations through ASan's allocator, which were
# most of its time.  The cache's miss, then hit (suite.py's own cache
# directory) and the groups below always start fresh.
set -u
tc=$(realpath "${1:?usage: run.sh TENSORC FAKE_LIB}")
lib=$(realpath "${2:?usage: run.sh TENSORC FAKE_LIB}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TENSORC_LIBCUDA=$lib TENSORC_CUBLAS=$lib
if [ -n "${TC_FAKEGPU_CACHE:-}" ]; then
    mkdir -p "$TC_FAKEGPU_CACHE" && chmod 700 "$TC_FAKEGPU_CACHE" && ln -s "$(realpath "$TC_FAKEGPU_CACHE")" "$work/cache" ||
        { echo "FAIL TC_FAKEGPU_CACHE=$TC_FAKEGPU_CACHE: cannot use it"; exit 1; }
    echo "kernel cache: $TC_FAKEGPU_CACHE ($(find "$TC_FAKEGPU_CACHE" -maxdepth 1 -name '*.tck' | wc -l) entries)"
fi
python3 "$here/../gpu/suite.py" "$tc" "$root" "$work" --plumbing
status=$?

# --- run --groups: one launch over tensor groups -------------------------------------------
export TENSORC_CACHE_DIR=$work/groups-cache
pass=0 fail=0
# t CMD...: tensorc with every launch logged; rc, stdout, stderr kept
t() {
    TC_FAKE_CUDA_LOG=1 "$tc" "$@" >"$work/out" 2>"$work/err"
    rc=$?
}
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL $1: $2 (exit $rc)"
    sed 's/^/    /' "$work/err" | grep -v '^    fakecuda: launch' | head -6
}
expect() { if [ "$rc" -eq "$2" ]; then ok; else bad "$1" "want exit $2"; fi; }
check() { local n=$1; shift; if "$@"; then ok; else bad "$n" "condition failed: $*"; fi; }
launches() { grep -c '^fakecuda: launch ' "$work/err"; }
grid_x() { sed -n 's/^fakecuda: launch [^<]*<<<(\([0-9]*\), .*/\1/p' "$work/err"; }
sgd=$root/examples/sgd_momentum.tc

# the plan's table capacity and elements per block, from its comment:
# "foreach: ... 8192 elements a block; up to 84 groups in the kernel parameter"
"$tc" compile "$sgd" --emit=cuda >"$work/cuda" 2>&1
cap=$(sed -n 's/.*up to \([0-9]*\) groups in the kernel parameter.*/\1/p' "$work/cuda")
chunk=$(sed -n 's/.*foreach: .* \([0-9]*\) elements a block.*/\1/p' "$work/cuda")
check "the plan states the table's capacity" [ -n "$cap" ]
check "the plan states the elements a block" [ -n "$chunk" ]
cap=${cap:-84} chunk=${chunk:-8192}
blocks() { local b=0 n; for n in "$@"; do b=$((b + (n + chunk - 1) / chunk)); done; echo $b; }

# several groups, one empty, one larger than a block: one launch, every block
t run "$sgd" --random --groups 1000,0,$((chunk + 1)),3 --device=cuda --input lr=0.01
expect "groups: exit" 0
check "groups: exactly one launch" [ "$(launches)" -eq 1 ]
check "groups: a block per chunk of each group" [ "$(grid_x)" -eq "$(blocks 1000 0 $((chunk + 1)) 3)" ]
check "groups: a summary per group" [ "$(grep -c '^p (group [0-3]): f32\[' "$work/out")" -eq 4 ]

# more groups with elements than the parameter holds (and an empty one):
# the table goes to device memory first, still one launch, through a second
# build of the kernel whose parameter holds one group (TC_VAR_SMALL: a
# second cache entry; the fake driver checks the launch's parameter sizes
# against its PTX); TENSORC_FOREACH_SMALL=0 keeps the 4 KB table's build
# (the knobs are part of the cache key: no count of entries for it)
entries() { find "$TENSORC_CACHE_DIR" -maxdepth 1 -name '*.tck' | wc -l; }
before=$(entries)
n=$((cap + 16))
sizes=0
for i in $(seq 1 $n); do sizes="$sizes,$((i * 37))"; done
t run "$sgd" --random --groups "$sizes" --device=cuda
expect "groups past the parameter: exit" 0
check "groups past the parameter: exactly one launch" [ "$(launches)" -eq 1 ]
check "groups past the parameter: every group's blocks" [ "$(grid_x)" -eq "$(blocks ${sizes//,/ })" ]
check "groups past the parameter: four shown, the rest counted" \
    grep -qxF "... $((n + 1 - 4)) more groups not shown (--output NAME=FILE,FILE,... writes every group)" "$work/out"
check "groups past the parameter: the small table's own build" [ "$(entries)" -eq $((before + 1)) ]
TENSORC_FOREACH_SMALL=0 t run "$sgd" --random --groups "$sizes" --device=cuda
expect "groups past the parameter, 4 KB table: exit" 0
check "groups past the parameter, 4 KB table: exactly one launch" [ "$(launches)" -eq 1 ]

# the same with TENSORC_FOREACH_WIDE=1: a third build of the kernel with a
# 32 KB table, still one launch
before=$(entries)
TENSORC_FOREACH_WIDE=1 t run "$sgd" --random --groups "$sizes" --device=cuda
expect "groups past the parameter, wide: exit" 0
check "groups past the parameter, wide: exactly one launch" [ "$(launches)" -eq 1 ]
check "groups past the parameter, wide: its own build" [ "$(entries)" -eq $((before + 1)) ]

# only empty groups: nothing to launch, --check compares nothing, --bench says so
t run "$sgd" --random --groups 0,0,0 --device=cuda --check --bench
expect "empty groups: exit" 0
check "empty groups: no launch" [ "$(launches)" -eq 0 ]
check "empty groups: check" grep -qxF "check: OK (3 groups, all empty: nothing to compare)" "$work/out"
check "empty groups: bench" grep -qxF "bench: nothing to time: every group is empty (no launch)" "$work/out"

# --check compares every group with the interpreter: kernels do not run here,
# so group 1 (group 0 is empty) must differ: an inout p keeps its input
t run "$sgd" --random --groups 0,100,7 --device=cuda --check
expect "groups --check: a mismatch" 1
check "groups --check: names the group" grep -qF "error: --check: group 1: output 'p' differs from the reference interpreter" "$work/err"

# --bench times the one launch, its bytes those of every group
t run "$sgd" --random --groups 100,0,7 --device=cuda --bench --output p="$work/p0.npy,$work/p1.npy,$work/p2.npy" \
    --output buf="$work/b0.npy,$work/b1.npy,$work/b2.npy"
expect "groups --bench" 0
check "groups --bench: the header" grep -q "^bench: sgd_momentum over 3 groups on " "$work/out"
check "groups --bench: one step" [ "$(grep -c '^  0 ' "$work/out")" -eq 1 ]
check "groups --output: a file per group" bash -c "[ -s '$work/p0.npy' ] && [ -s '$work/p1.npy' ] && [ -s '$work/b2.npy' ]"

# a function that is not elementwise: the message, before anything is uploaded
t run "$root/tests/cli/progs.tc" --fn stats --random --groups 3,4 --device=cuda
expect "groups: not elementwise" 1
check "groups: not elementwise message" grep -qxF "error: function 'stats' cannot run over tensor groups: parameter 'x' is f32[N, D], not [*] (--groups needs every tensor parameter [*] and every operation pointwise)" "$work/err"
check "groups: not elementwise, no launch" [ "$(launches)" -eq 0 ]

# long rows: a cluster launch (sched.h, "Clusters"), sized from the row length alone
sm=$root/examples/softmax.tc
cluster_line() { sed -n 's/^fakecuda: cluster [^ ]* (\([0-9]*\), 1, 1)$/\1/p' "$work/err"; }
t run "$sm" --fn softmax --random --shape N=3,D=65537 --device=cuda
expect "cluster: exit" 0
check "cluster: 8 blocks a row of 65537" [ "$(cluster_line)" = 8 ]
check "cluster: grid of 3 rows x 8" [ "$(grid_x)" = 24 ]
t run "$sm" --fn softmax --random --shape N=5,D=32768 --device=cuda
# (f32 rows past 16384 take the wide kernel, 32 a thread: sched.c)
check "cluster: 4 blocks of 256 threads a row of 32768" [ "$(cluster_line)" = 4 ]
check "cluster: grid of 5 rows x 4" [ "$(grid_x)" = 20 ]
check "cluster: blocks of 256 threads" grep -q "^fakecuda: launch .*, (256, 1, 1)>>>" "$work/err"
t run "$sm" --fn softmax --random --shape N=5,D=16384 --device=cuda
check "cluster: none for a row of 16384" [ -z "$(cluster_line)" ]
check "cluster: grid of 5 rows" [ "$(grid_x)" = 5 ]
TENSORC_CLUSTER_MAX=16 t run "$sm" --fn softmax --random --shape N=2,D=262144 --device=cuda
check "cluster: 16 blocks (non-portable) a row of 262144" [ "$(cluster_line)" = 16 ]
# --bench over a plan with guarded steps: the one guarded off is named so,
# the wide kernel (rows past 16384) is the one timed
t run "$sm" --fn softmax --random --shape N=2,D=65537 --device=cuda --bench
expect "bench: guarded steps" 0
check "bench: the narrow step not run at a row of 65537" grep -qE '^  0 .*\(not run at these sizes\)$' "$work/out"
check "bench: the wide kernel timed" grep -qE '^  1 .*_w$' "$work/out"

echo "run --groups: $pass passed, $fail failed"
[ "$status" -eq 0 ] && [ "$fail" -eq 0 ]
