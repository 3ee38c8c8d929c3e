#!/usr/bin/env bash
# CLI tests: exit statuses, exact messages, --help/--version, compile and
# run end to end (.npy in and out, seeds, shapes, scalars, named and inout
# outputs).  Usage: tests/cli/run.sh [TENSORC_BIN]  (default: build/tensorc).
# Checks that need NumPy (to make and inspect .npy files) look for a python3
# that has it (python3, then /usr/bin/python3) and are counted as skipped
# when there is none.  Prints "N passed, M failed" last; exits 1 on failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tc=$(realpath "${1:-$root/build/tensorc}")
cd "$here"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass=0 fail=0 skip=0
. "$here/../lib.sh"
py=$(numpy_python) || py=

# t CMD...: run tensorc, keeping stdout, stderr and the exit status.
t() {
    "$tc" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
}
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL $1"
    [ -n "${2:-}" ] && printf '  %s\n' "$2"
    echo "  exit $rc; stderr:"; sed 's/^/    /' "$tmp/err" | head -8
}
# expect NAME RC: the last command exited RC.
expect() { if [ "$rc" -eq "$2" ]; then ok; else bad "$1" "want exit $2"; fi; }
# expect_err NAME RC TEXT: exit RC and TEXT somewhere in stderr.
expect_err() {
    if [ "$rc" -ne "$2" ]; then bad "$1" "want exit $2"
    elif ! grep -qF -- "$3" "$tmp/err"; then bad "$1" "stderr lacks: $3"
    else ok; fi
}
# expect_line NAME RC LINE: exit RC and stderr's first line is exactly LINE.
expect_line() {
    local first
    first=$(head -1 "$tmp/err")
    if [ "$rc" -ne "$2" ]; then bad "$1" "want exit $2"
    elif [ "$first" != "$3" ]; then bad "$1" "want: $3"$'\n'"  got:  $first"
    else ok; fi
}
# check NAME COND...: a shell condition.
check() { local n=$1; shift; if "$@"; then ok; else bad "$n" "condition failed: $*"; fi; }
# pycheck NAME CODE: a Python assertion over NumPy (skipped without NumPy).
pycheck() {
    if [ -z "$py" ]; then skip=$((skip + 1)); return; fi
    if (cd "$tmp" && "$py" -c "import numpy as np
$2") 2>"$tmp/pyerr"; then ok; else
        fail=$((fail + 1)); echo "FAIL $1"; sed 's/^/    /' "$tmp/pyerr" | tail -4
    fi
}
py_make() { # py_make CODE: make input files in $tmp (skipped without NumPy)
    [ -n "$py" ] && (cd "$tmp" && "$py" -c "import numpy as np
$1")
}

# --- usage, help, version ---------------------------------------------------------
t;                          expect_line "no command" 2 "error: no command given"
check "no command: usage" grep -q "^usage: " "$tmp/err"
t --help;                   expect "--help" 0
check "--help text" grep -q "tensorc compile FILE" "$tmp/out"
check "--help mentions run" grep -q "tensorc run FILE" "$tmp/out"
t run --help;               expect "run --help" 0
check "run --help text" grep -q "usage:" "$tmp/out"
t --version;                expect "--version" 0
check "--version text" [ "$out" = "tensorc 0.1.0" ]
t frob;                     expect_line "unknown command" 2 "error: unknown command 'frob'"
t --frob;                   expect_line "unknown top option" 2 "error: unknown option '--frob'"
t compile;                  expect_line "compile without FILE" 2 "error: 'tensorc compile' needs a FILE"
check "usage line for compile" grep -q "^usage: tensorc compile FILE" "$tmp/err"
check "pointer to the command's --help" grep -q "Run 'tensorc compile --help' for more." "$tmp/err"
# per-command help, and "did you mean" (tools/help.c's table, args.c's cli_suggest)
t compile --help;           expect "compile --help" 0
check "compile --help: its usage alone" grep -q "^usage: tensorc compile FILE" "$tmp/out"
check "compile --help: not run's" bash -c "! grep -q 'tensorc run FILE' '$tmp/out'"
t help explain;             expect "help explain" 0
check "help explain: its usage" grep -q "^usage: tensorc explain FILE" "$tmp/out"
t help nope;                expect_line "help of no command" 2 "error: no command 'nope' to help with"
t comple single.tc;         expect_line "mistyped command" 2 "error: unknown command 'comple' (did you mean 'compile'?)"
t --verison;                expect_line "mistyped option" 2 "error: unknown option '--verison' (did you mean '--version'?)"
t compile single.tc --emitt=fused; expect_line "mistyped compile option" 2 "error: unknown option '--emitt=fused' for 'tensorc compile' (did you mean '--emit'?)"
t run single.tc --chekc;    expect_line "mistyped run option" 2 "error: unknown option '--chekc' for 'tensorc run' (did you mean '--check'?)"
t explain single.tc --jsno; expect_line "mistyped explain option" 2 "error: unknown option '--jsno' for 'tensorc explain' (did you mean '--json'?)"
t compile single.tc --emit=fusde; expect_err "mistyped stage" 2 "unknown --emit stage 'fusde' (did you mean 'fused'?"
t cache stat;               expect_line "mistyped cache word" 2 "error: 'tensorc cache' needs one of: dir, stats, clear (did you mean 'stats'?)"
t compile single.tc --zzzzzz; expect_line "nothing near: no guess" 2 "error: unknown option '--zzzzzz' for 'tensorc compile'"
t compile single.tc --bogus; expect_line "unknown compile option" 2 "error: unknown option '--bogus' for 'tensorc compile'"
t compile single.tc --fn;   expect_line "missing option value" 2 "error: option '--fn' needs a value"
t compile single.tc --verbose=1; expect_line "flag with a value" 2 "error: option '--verbose' takes no value"
t compile a.tc b.tc;        expect_line "two files" 2 "error: unexpected argument 'b.tc' (FILE is 'a.tc')"
t compile single.tc --emit=llvm
expect_line "unknown stage" 2 "error: unknown --emit stage 'llvm' (stages: ast, graph, lowered, fused, sched, cuda, plan, explain, dot, ptx, cubin)"
t compile single.tc --arch=90; expect_line "bad arch" 2 "error: --arch must look like sm_80 or sm_90 (arch-specific sm_90a is not supported), not '90'"
# parsed strictly: atoi wrapped sm_4294967386 to sm_90
t compile single.tc --emit=ptx --arch=sm_4294967386; expect_line "arch overflow" 2 "error: --arch=sm_4294967386: no such architecture (the number after sm_ is major and minor version, e.g. sm_80, sm_90)"
t compile single.tc --emit=ptx --arch=sm_99999999999999999999; expect "arch far overflow" 2
t run;                      expect_line "run without FILE" 2 "error: 'tensorc run' needs a FILE"
t run single.tc --random --device=gpu; expect_line "bad device" 2 "error: --device must be cpu or cuda, not 'gpu'"
t run single.tc --random --seed=-1;  expect_line "bad seed" 2 "error: --seed must be a non-negative integer, not '-1'"
t run single.tc --random --shape N;  expect_line "bad shape" 2 "error: --shape expects NAME=SIZE[,NAME=SIZE...], got 'N'"
t run single.tc --random --shape N=x; expect_line "bad shape size" 2 "error: --shape N=x: the size must be a non-negative integer"
t run single.tc --random --shape N=2,N=3; expect_line "shape twice" 2 "error: --shape: N is given twice"
t run single.tc --random --input x;  expect_line "input without =" 2 "error: --input expects NAME=VALUE, got 'x'"
t run single.tc --random --input x=a.npy --input x=b.npy; expect_line "input twice" 2 "error: --input x is given twice"
t run single.tc --random --dtype T=f8; expect_line "bad dtype" 2 "error: --dtype T=f8: not a dtype (f32 f16 bf16 f64 i32 i64 bool)"
t run single.tc --random --bogus;    expect_line "unknown run option" 2 "error: unknown option '--bogus' for 'tensorc run'"

# --- the environment: no GPU (a driver that does not exist) -------------------------------
TENSORC_LIBCUDA=/nonexistent t run single.tc --random --device=cuda --shape N=4
expect_err "device cuda without a GPU" 3 "error: --device=cuda: no CUDA driver"
TENSORC_LIBCUDA=/nonexistent t run single.tc --random --check --shape N=4
expect_err "--check without a GPU" 3 "error: --check: no CUDA driver"
t cache;                    expect_line "cache without verb" 2 "error: 'tensorc cache' needs one of: dir, stats, clear"
t cache purge;              expect_line "cache bad verb" 2 "error: 'tensorc cache' needs one of: dir, stats, clear"
t cache dir x;              expect_line "cache extra arg" 2 "error: 'tensorc cache dir' takes no arguments, found 'x'"

# --- compile: the back half's stages, and explain ------------------------------------
# nglobals: the number of __global__ kernels in stdout.
nglobals() { cuda_kernels "$tmp/out"; }
t compile single.tc;        expect "default emit is cuda" 0
check "cuda: one kernel" [ "$(nglobals)" -eq 1 ]
check "cuda: extern \"C\" kernels" grep -q '^extern "C" __global__ ' "$tmp/out"
check "cuda: the launch plan" grep -q "^launch plan of only " "$tmp/out"
check "cuda: lines annotated with the .tc line" grep -q "// single.tc:2" "$tmp/out"
cuda_eq=$out
t compile single.tc --emit=cuda; expect "emit cuda" 0
check "--emit=cuda is the default" [ "$out" = "$cuda_eq" ]
t compile single.tc --emit=cuda -o "$tmp/k.cu"; expect "emit cuda -o" 0
check "emit cuda -o writes the source" [ "$(cat "$tmp/k.cu")" = "$cuda_eq" ]
t compile single.tc --emit=lowered; expect "emit lowered" 0
check "lowered: the function and the mul" bash -c "grep -q '^fn only(' '$tmp/out' && grep -q 'mul(' '$tmp/out'"
t compile single.tc --emit=fused; expect "emit fused" 0
check "fused: one kernel storing out" bash -c "[ \$(grep -c '^  kernel ' '$tmp/out') -eq 1 ] && grep -q -- '-> out' '$tmp/out'"
t compile single.tc --emit=sched; expect "emit sched" 0
check "sched: block and grid" grep -q "block \[" "$tmp/out"
t compile progs.tc --emit=cuda --fn smax; expect "cuda --fn" 0
check "cuda --fn: one kernel" [ "$(nglobals)" -eq 1 ]
check "cuda --fn: only that plan" bash -c "[ \$(grep -c '^launch plan of ' '$tmp/out') -eq 1 ] && grep -q '^launch plan of smax ' '$tmp/out'"
t compile progs.tc --emit=cuda; expect "cuda of a whole file" 0
check "cuda of a whole file: a plan per function" [ "$(grep -c '^launch plan of ' "$tmp/out")" -eq 11 ]
t compile progs.tc --emit=fused --fn nope; expect_err "fused --fn unknown" 1 "no function 'nope'"
# ptx and cubin need NVRTC (tests/nvrtc covers them fully): skipped when it is absent
kc=$tmp/kcache-compile
TENSORC_CACHE_DIR=$kc t compile single.tc --emit=ptx
if [ "$rc" -eq 3 ] && grep -q "NVRTC not found" "$tmp/err"; then
    echo "(5 ptx/cubin checks skipped: NVRTC not found)"
else
    expect "emit ptx" 0
    check "ptx: default arch sm_90" bash -c "grep -q '^.target sm_90' '$tmp/out' && grep -q '.entry' '$tmp/out'"
    TENSORC_CACHE_DIR=$kc t compile single.tc --emit=cubin --arch=sm_80 -o "$tmp/k.cubin"
    expect "emit cubin -o" 0
    check "cubin: an ELF file" [ "$(head -c 4 "$tmp/k.cubin" | od -An -c | tr -d ' ')" = '177ELF' ]
    TENSORC_CACHE_DIR=$kc t compile single.tc --emit=ptx -o /nonexistent/dir/k.ptx
    expect_err "ptx -o unwritable" 1 "cannot write '/nonexistent/dir/k.ptx'"
    # opt-in NVRTC options: line info in the PTX, and part of the cache key (a miss, not a hit)
    TENSORC_CACHE_DIR=$kc t compile single.tc --emit=ptx --lineinfo --verbose
    expect "ptx --lineinfo" 0
    check "--lineinfo: .loc lines in the PTX" grep -q '\.loc' "$tmp/out"
    check "--lineinfo: another cache entry" grep -q 'cache: miss' "$tmp/err"
    TENSORC_CACHE_DIR=$kc t compile single.tc --emit=ptx --fast-math --fast-math --lineinfo
    expect_err "--fast-math twice" 2 "--fast-math is given twice"
fi
t explain single.tc;        expect "explain" 0
check "explain: kernel count" [ "$(head -1 "$tmp/out")" = "fn only: 1 kernel" ]
t explain progs.tc --fn smax; expect "explain --fn" 0
check "explain --fn: the epilogue" bash -c "head -1 '$tmp/out' | grep -qx 'fn smax: 1 kernel' && grep -q 'epilogue' '$tmp/out'"
t explain progs.tc;         expect "explain a whole file" 0
check "explain a whole file: every function" [ "$(grep -c '^fn ' "$tmp/out")" -eq 11 ]
t explain;                  expect_line "explain without FILE" 2 "error: 'tensorc explain' needs a FILE"
t explain single.tc --bogus; expect_line "explain unknown option" 2 "error: unknown option '--bogus' for 'tensorc explain'"
t explain progs.tc --fn nope; expect_err "explain --fn unknown" 1 "no function 'nope'"
t explain broken.tc;        expect_err "explain program error" 1 "broken.tc:2:16: error: "

# --- the kernel cache (the unit test covers entries; here, the command) -------------------
cdir=$tmp/kcache/sub
TENSORC_CACHE_DIR=$cdir t cache dir; expect "cache dir" 0
check "cache dir: prints it" [ "$out" = "$cdir" ]
check "cache dir: creates it" [ -d "$cdir" ]
(unset TENSORC_CACHE_DIR; XDG_CACHE_HOME=$tmp/xdg t cache dir; [ "$out" = "$tmp/xdg/tensorc" ] && [ "$rc" -eq 0 ])
check "cache dir: XDG_CACHE_HOME" [ $? -eq 0 ]
(unset TENSORC_CACHE_DIR XDG_CACHE_HOME; HOME=$tmp/home t cache dir; [ "$out" = "$tmp/home/.cache/tensorc" ] && [ "$rc" -eq 0 ])
check "cache dir: HOME" [ $? -eq 0 ]
TENSORC_CACHE_DIR=$cdir t cache stats; expect "cache stats empty" 0
check "cache stats empty: output" [ "$out" = "dir: $cdir"$'\n'"entries: 0"$'\n'"bytes: 0"$'\n'"max bytes: 1073741824" ]
printf '0123456789' >"$cdir/00000000000000000000000000000001.tck"
printf '01234' >"$cdir/00000000000000000000000000000002.tck"
printf 'x' >"$cdir/.tmp-abcdef"; printf 'x' >"$cdir/notes.txt"
# files named like entries but not written by the cache (no header for their key) are not its own
TENSORC_CACHE_DIR=$cdir TENSORC_CACHE_MAX_MB=3 t cache stats; expect "cache stats" 0
check "cache stats: output" [ "$out" = "dir: $cdir"$'\n'"entries: 0"$'\n'"bytes: 0"$'\n'"max bytes: 3145728" ]
TENSORC_CACHE_DIR=$cdir t cache clear; expect "cache clear" 0
check "cache clear: output" [ "$out" = "removed 0 entries" ]
check "cache clear: foreign *.tck kept" [ -e "$cdir/00000000000000000000000000000001.tck" ]
check "cache clear: other files kept" [ -e "$cdir/notes.txt" ]
TENSORC_CACHE_DIR=$cdir TENSORC_CACHE_MAX_MB=lots t cache stats
expect_err "bad TENSORC_CACHE_MAX_MB warned" 0 "warning: TENSORC_CACHE_MAX_MB='lots' is not a positive whole number of MiB; using the default, 1024"
printf 'x' >"$tmp/afile"
TENSORC_CACHE_DIR=$tmp/afile/sub t cache stats; expect "cache unusable" 0
check "cache unusable: warning" grep -qxF "warning: kernel cache disabled: cannot create '$tmp/afile/sub': Not a directory" "$tmp/err"
check "cache unusable: empty" grep -qxF "entries: 0" "$tmp/out"

# --- compile ------------------------------------------------------------------------------
t compile missing.tc --emit=graph
expect_line "missing file" 1 "error: cannot read 'missing.tc': No such file or directory"
t run missing.tc;           expect_line "run missing file" 1 "error: cannot read 'missing.tc': No such file or directory"
t compile broken.tc --emit=graph; expect_err "program error" 1 "broken.tc:2:16: error: "
check "program error: source line" grep -qF "    return x + y" "$tmp/err"
check "program error: caret" grep -qxF "                   ^" "$tmp/err"
t compile single.tc --emit=graph; expect "emit graph" 0
graph_eq=$out
check "graph dump names the op" grep -q "mul" "$tmp/out"
t compile single.tc --emit graph; expect "emit graph (separate)" 0
check "--emit graph == --emit=graph" [ "$out" = "$graph_eq" ]
t compile single.tc --emit=graph -o "$tmp/g.txt"; expect "-o" 0
check "-o writes the dump" [ "$(cat "$tmp/g.txt")" = "$graph_eq" ]
check "-o prints nothing" [ -z "$out" ]
t compile single.tc --emit=graph -o"$tmp/g2.txt"; expect "-oFILE" 0
check "-oFILE writes the dump" [ "$(cat "$tmp/g2.txt")" = "$graph_eq" ]
t compile single.tc --emit=graph -o /nonexistent/dir/g.txt
expect_line "-o unwritable" 1 "error: -o: cannot write '/nonexistent/dir/g.txt': directory '/nonexistent/dir': No such file or directory"
t compile single.tc --emit=ast; expect "emit ast" 0
check "ast dump names the function" grep -q "only" "$tmp/out"
t compile progs.tc --emit=graph --fn smax; expect "compile --fn" 0
check "--fn dumps one function" bash -c "grep -q exp '$tmp/out' && ! grep -q id_f32 '$tmp/out'"
t compile progs.tc --emit=graph --fn nope; expect_err "compile --fn unknown" 1 "no function 'nope'"
t compile single.tc --emit=graph --fn softmax; expect "prelude function as entry" 0
check "prelude graph" grep -q "exp" "$tmp/out"
TENSORC_DUMP_DIR="$tmp/dumps" "$tc" compile single.tc --emit=ast >/dev/null 2>&1
check "TENSORC_DUMP_DIR ast" [ -s "$tmp/dumps/single.ast" ]
check "TENSORC_DUMP_DIR graph" [ "$(cat "$tmp/dumps/single.graph")" = "$graph_eq" ]
TENSORC_DEBUG=1 "$tc" compile single.tc --emit=ast >/dev/null 2>"$tmp/err"
check "TENSORC_DEBUG=1 times every stage" grep -q "^tensorc: compiled single.tc: 1 functions, .* ast .* ms, prelude .* graph .* lowered .* fused .* sched .* cuda .* plan .* ms" "$tmp/err"
TENSORC_DEBUG=4 "$tc" compile single.tc --emit=ast >/dev/null 2>"$tmp/err"
check "TENSORC_DEBUG=4 prints the graph" grep -q "^tensorc: graph of single.tc:" "$tmp/err"

# --- run: choosing the function, summaries, seeds -------------------------------------------
t run progs.tc --random --shape N=2
expect_err "several functions need --fn" 2 "error: progs.tc defines 11 functions ("
check "the list names them" grep -qF "id_f32, id_f64" "$tmp/err"
t run single.tc --random --shape N=3; expect "single function without --fn" 0
check "summary header" [ "$(head -1 "$tmp/out")" = "out: f32[3]" ]
t run progs.tc --random --fn nope;   expect_err "run --fn unknown" 1 "no function 'nope' here or in the prelude"
t run broken.tc;            expect_err "run program error" 1 "broken.tc:2:16: error: "
t run progs.tc --random --fn smax --shape N=2,D=3 --seed 7; expect "run summary" 0
check "summary: name and type" [ "$(head -1 "$tmp/out")" = "out: f32[2, 3]" ]
check "summary: two rows" [ "$(sed -n 2p "$tmp/out" | cut -c1-2)" = "[[" ]
check "summary: closing" bash -c "sed -n 3p '$tmp/out' | grep -q ']]\$'"
t run progs.tc --random --fn smax --shape N=2,D=3 --seed 7
first=$out
check "same seed, same summary" [ "$out" = "$first" ]
t run progs.tc --random --fn smax --shape N=64,D=128; expect "big summary" 0
check "big summary is cut" grep -qF "..." "$tmp/out"
check "big summary is short" [ "$(wc -l <"$tmp/out")" -le 10 ]

t run progs.tc --random --fn smax --shape N=4,D=8 --seed 1 --output out="$tmp/a.npy"; expect "run --output" 0
check "--output prints nothing" [ -z "$out" ]
t run progs.tc --random --fn smax --shape N=4,D=8 --seed 1 --output out="$tmp/b.npy"
t run progs.tc --random --fn smax --shape N=4,D=8 --seed 2 --output out="$tmp/c.npy"
check "same seed, same bytes" cmp -s "$tmp/a.npy" "$tmp/b.npy"
check "other seed, other bytes" bash -c "! cmp -s '$tmp/a.npy' '$tmp/c.npy'"
check "no temporary left" bash -c "! ls '$tmp'/*.tmp 2>/dev/null | grep -q ."
pycheck "softmax output" "a = np.load('a.npy'); assert a.dtype == np.float32 and a.shape == (4, 8), a
assert np.allclose(a.sum(-1), 1, atol=1e-6) and (a > 0).all()
assert len(np.unique(a)) > 8"

# --- run: dims ------------------------------------------------------------------------------
t run progs.tc --random --fn smax
expect_line "missing dim" 1 "progs.tc:27:9: error: size of N is not known: pass a tensor for parameter 'x' or --shape N=..."
t run progs.tc --random --fn smax --shape N=2,D=3,Q=4
expect_err "--shape of a size the function lacks" 1 "'Q' is not a size of function 'smax' (its sizes are N, D)"

if [ -n "$py" ]; then
py_make "
np.save('x43.npy', np.arange(12, dtype=np.float32).reshape(4, 3) - 5.5)
np.save('g5.npy', np.ones(5, np.float32))
np.save('g3.npy', np.array([1, 2, 3], np.float32))
np.save('x64.npy', np.ones((4, 3)))
for dt, name in [(np.float32, 'f32'), (np.float64, 'f64'), (np.float16, 'f16'), (np.int32, 'i32')]:
    np.save('rt_%s.npy' % name, (np.arange(6).reshape(2, 3) * 0.75 - 2).astype(dt))
np.save('rt_i64.npy', np.array([-(2**53), 2**53, 0, -1], np.int64))
np.save('rt_bool.npy', np.array([True, False, True]))
np.save('rt_bf16.npy', np.array([1.0, 1 + 2**-10, 3.14159, -2.5e-3], np.float32))
np.save('p34.npy', np.arange(12, dtype=np.float32).reshape(3, 4))
np.save('g34.npy', np.full((3, 4), 2, np.float32))
np.save('lr.npy', np.array(0.125))
"
fi

# .npy round trip through run: the output must be the input, byte for byte
for dt in f32 f64 f16 i32 i64 bool; do
    if [ -z "$py" ]; then skip=$((skip + 1)); continue; fi
    t run progs.tc --random --fn "id_$dt" --input x="$tmp/rt_$dt.npy" --output out="$tmp/rt_${dt}_out.npy"
    expect "identity $dt" 0
    check "identity $dt: same bytes" cmp -s "$tmp/rt_$dt.npy" "$tmp/rt_${dt}_out.npy"
done
if [ -n "$py" ]; then
    t run progs.tc --random --fn id_bf16 --input x="$tmp/rt_bf16.npy" --output out="$tmp/bf.npy"; expect "bf16 as f32" 0
fi
pycheck "bf16 rounds f32 input" "b = np.load('bf.npy'); assert b.dtype == np.float32
assert b.tolist() == [1.0, 1.0, 3.140625, -0.0025024414062500], b.tolist()"

if [ -n "$py" ]; then
    t run progs.tc --random --fn stats --input x="$tmp/x43.npy" --input g="$tmp/g5.npy"
    expect_err "shape mismatch names the parameter" 1 "'g'"
    t run progs.tc --random --fn stats --input x="$tmp/x64.npy" --input g="$tmp/g3.npy"
    expect_line "dtype mismatch" 1 "error: --input x: '$tmp/x64.npy' holds f64 values, but parameter 'x' is f32[N, D] (convert with a.astype(np.float32))"
    t run progs.tc --random --fn stats --input x="$tmp/x43.npy" --input g="$tmp/g3.npy" \
        --output y="$tmp/y.npy" --output s="$tmp/s.npy"
    expect "named results" 0
else
    skip=$((skip + 4))
fi
pycheck "named results' values" "x = np.load('x43.npy'); y = np.load('y.npy'); s = np.load('s.npy')
assert y.shape == (4, 3) and s.shape == (4,)
assert (y == x * np.array([1, 2, 3], np.float32)).all() and np.allclose(s, x.sum(-1))"
t run progs.tc --random --fn stats --shape N=2,D=2 --output zz=/dev/null
expect_line "unknown output" 1 "error: --output zz: function 'stats' has no output 'zz' (outputs: y, s)"
t run progs.tc --random --fn stats --shape N=2,D=2 --output s="$tmp/s2.npy"; expect "one output to a file" 0
check "the other is printed" [ "$(head -1 "$tmp/out")" = "y: f32[2, 2]" ]
check "the written one is not" bash -c "! grep -q '^s:' '$tmp/out'"
t run progs.tc --random --fn stats --shape N=2,D=2 --input zz=1
expect_line "unknown input" 1 "error: --input zz: function 'stats' has no parameter 'zz' (parameters: x, g)"
t run progs.tc --random --fn stats --shape N=2,D=2 --input x=3
expect_line "number for a tensor" 1 "error: --input x=3: parameter 'x' is a tensor (f32[N, D]): pass a .npy file"
t run progs.tc --random --fn stats --shape N=2,D=2 --input x="$tmp/none.npy"
expect_line "missing .npy" 1 "error: cannot read '$tmp/none.npy': No such file or directory"
printf 'not numpy' >"$tmp/junk.npy"
t run progs.tc --random --fn stats --shape N=2,D=2 --input x="$tmp/junk.npy"
expect_err "malformed .npy" 1 "'$tmp/junk.npy' is not a .npy file"

# --- run: inout, [*] and scalars ----------------------------------------------------------------
if [ -n "$py" ]; then
    t run progs.tc --random --fn update --input p="$tmp/p34.npy" --input g="$tmp/g34.npy" --output p="$tmp/p_new.npy"
    expect "inout output" 0
    t run progs.tc --random --fn update --input p="$tmp/p34.npy" --input g="$tmp/g34.npy" --input lr=0.25 \
        --output p="$tmp/p_lr.npy"
    expect "scalar input" 0
    t run progs.tc --random --fn update --input p="$tmp/p34.npy" --input g="$tmp/g34.npy" --input lr="$tmp/lr.npy" \
        --output p="$tmp/p_lrnpy.npy"
    expect "scalar as 0-d .npy" 0
else
    skip=$((skip + 3))
fi
pycheck "inout p keeps its shape, default lr" "p = np.load('p_new.npy'); assert p.shape == (3, 4), p.shape
assert (p == np.arange(12, dtype=np.float32).reshape(3, 4) - 1).all(), p"
pycheck "scalar lr=0.25" "p = np.load('p_lr.npy'); assert (p == np.arange(12, dtype=np.float32).reshape(3, 4) - 0.5).all(), p"
pycheck "scalar lr from .npy" "p = np.load('p_lrnpy.npy'); assert (p == np.arange(12, dtype=np.float32).reshape(3, 4) - 0.25).all(), p"
t run progs.tc --random --fn update --shape '*=5'; expect "[*] from --shape" 0
check "inout printed by name" [ "$(head -1 "$tmp/out")" = "p: f32[5]" ]
t run progs.tc --random --fn update
expect_err "[*] without a size" 1 "error: size of * is not known: pass a tensor for parameter 'p' or --shape *=..."
t run progs.tc --random --fn scale --shape '*=4' --input k=3 --input s=0.5; expect "int and float scalars" 0
t run progs.tc --random --fn scale --shape '*=4' --input k=2.5
expect_line "bad int scalar" 1 "error: --input k=2.5: '2.5' is not an i32 value (parameter 'k' is i32)"
t run progs.tc --random --fn scale --shape '*=4' --input s=abc
expect_line "bad float scalar" 1 "error: --input s=abc: 'abc' is not an f32 value (parameter 's' is f32)"
t run progs.tc --random --fn scale --shape '*=4' --input k=99999999999
expect_err "i32 out of range" 1 "is not an i32 value"
t run progs.tc --random --fn scale --shape '*=3' --seed 5; expect "random scalars" 0
# random inputs come from one stream per parameter name: x is the same
# whether or not g is given
if [ -n "$py" ]; then
    py_make "np.save('ones3.npy', np.ones(3, np.float32))"
    t run progs.tc --random --fn id_f32 --shape N=2,D=3 --seed 5 --output out="$tmp/x_rand.npy"
    t run progs.tc --random --fn stats --shape N=2,D=3 --seed 5 --input g="$tmp/ones3.npy" --output y="$tmp/y_rand.npy"
fi
pycheck "random streams are per parameter" "a = np.load('x_rand.npy'); b = np.load('y_rand.npy')
assert (a == b).all(), (a, b)
assert (a >= -1).all() and (a < 1).all() and len(np.unique(a)) == 6"
# --dtype binds an entry's dtype variables (else f32): rmsnorm(x: T[*], g: U[*])
# with T=bf16 reads x as bf16 (f32 on disk, rounded) and writes bf16 (f32 on
# disk, every value bf16-representable); with T=f32 the values are not.
py_make "x = np.linspace(-1.3, 2.1, 8).astype(np.float32); np.save('rx.npy', x)
np.save('rg.npy', np.linspace(0.5, 1.5, 8).astype(np.float32))"
for T in bf16 f32; do
    if [ -z "$py" ]; then skip=$((skip + 1)); continue; fi
    t run progs.tc --random --fn rmsnorm --dtype T=$T --dtype U=f32 --input x="$tmp/rx.npy" \
        --input g="$tmp/rg.npy" --output out="$tmp/rms_$T.npy"
    expect "run rmsnorm --dtype T=$T" 0
done
pycheck "--dtype T=bf16 output" "y = np.load('rms_bf16.npy'); f = np.load('rms_f32.npy')
assert y.dtype == np.float32 and y.shape == (8,), (y.dtype, y.shape)
assert (y.view(np.uint32) & 0xffff == 0).all(), y         # bf16 values
assert not (f.view(np.uint32) & 0xffff == 0).all(), f     # f32 ones are not
x = np.load('rx.npy'); xb = (x.view(np.uint32) + 0x8000 & 0xffff0000).view(np.float32)
ref = xb / np.sqrt(np.mean(xb * xb) + 1e-6) * np.load('rg.npy')
assert np.allclose(y, ref, rtol=1e-2, atol=0), (y, ref)"
t compile progs.tc --emit=graph --fn rmsnorm --dtype T=bf16
expect "compile --dtype" 0
check "compile --dtype: bf16 input" grep -qF "input x : bf16[*]" "$tmp/out"
check "compile --dtype: U stays f32" grep -qF "input g : f32[*]" "$tmp/out"
check "compile --dtype: bf16 result" grep -qF -- "-> (out: bf16[*])" "$tmp/out"
t compile progs.tc --emit=graph --fn rmsnorm
check "compile without --dtype: f32" grep -qF "input x : f32[*]" "$tmp/out"
t run progs.tc --random --fn rmsnorm --shape '*=4' --dtype Q=bf16
expect_line "--dtype unknown letter" 1 "progs.tc: error: function 'rmsnorm' has no dtype variable 'Q' (it has T, U)"
t run progs.tc --random --fn id_f32 --shape N=1,D=1 --dtype T=bf16
expect_line "--dtype on a function without dtype variables" 1 "progs.tc: error: function 'id_f32' has no dtype variable 'T' (it has none)"
t run progs.tc --random --fn rmsnorm --dtype T=bf16 --dtype T=f16
expect_line "--dtype twice" 2 "error: --dtype T is given twice"
t run progs.tc --random --fn rmsnorm --dtype t=bf16
expect_line "--dtype lower-case" 2 "error: --dtype t=...: a dtype variable is one capital letter"
t run progs.tc --random --fn rmsnorm --dtype T
expect_line "--dtype no value" 2 "error: --dtype expects LETTER=DTYPE (T=bf16), got 'T'"
t compile progs.tc --emit=graph --fn rmsnorm --dtype T=f8
expect_line "compile --dtype bad dtype" 2 "error: --dtype T=f8: not a dtype (f32 f16 bf16 f64 i32 i64 bool)"
t --help
check "--help: run --dtype" grep -qF "[--dtype T=bf16]" "$tmp/out"
check "--help: --dtype explained" grep -qF -- "--dtype T=bf16 binds the dtype variable T" "$tmp/out"

# --- run --groups: an elementwise function over tensor groups (CPU path; the
# one-launch GPU path is in tests/fakegpu/run.sh) ---------------------------------
# npy_shape FILE: the shape field of a .npy header, e.g. "(3, 4)"
npy_shape() { head -c 128 "$1" | tr -d '\0' | grep -ao "'shape': ([0-9, ]*)" | sed "s/'shape': //"; }
t run progs.tc --random --fn update --groups 5,0,3 --seed 4 --device=cpu; expect "--groups" 0
check "--groups: a summary per group" [ "$(grep -c '^p (group [0-9]): f32\[' "$tmp/out")" -eq 3 ]
check "--groups: group sizes" bash -c "grep -qxF 'p (group 0): f32[5]' '$tmp/out' && grep -qxF 'p (group 1): f32[0]' '$tmp/out' && grep -qxF 'p (group 2): f32[3]' '$tmp/out'"
check "--groups: an empty group prints []" [ "$(sed -n '/^p (group 1)/{n;p}' "$tmp/out")" = "[]" ]
# group i draws what a plain run with --seed S+i draws: compare the bytes
t run progs.tc --random --fn update --groups 5,0,3 --seed 4 --device=cpu --output p="$tmp/ga.npy,$tmp/gb.npy,$tmp/gc.npy"
expect "--groups --output list" 0
check "--groups --output: prints nothing" [ -z "$out" ]
t run progs.tc --random --fn update --shape '*=5' --seed 4 --device=cpu --output p="$tmp/sa.npy"
t run progs.tc --random --fn update --shape '*=3' --seed 6 --device=cpu --output p="$tmp/sc.npy"
check "group 0 is the plain run with seed S" cmp -s "$tmp/ga.npy" "$tmp/sa.npy"
check "group 2 is the plain run with seed S+2" cmp -s "$tmp/gc.npy" "$tmp/sc.npy"
check "group 1 wrote an empty array" [ "$(npy_shape "$tmp/gb.npy")" = "(0,)" ]
check "groups differ" bash -c "! cmp -s '$tmp/ga.npy' '$tmp/sc.npy'"
# --input lists set the groups and their sizes; the identity (x * 1 + 0) gives
# every file back byte for byte, the empty one included
t run progs.tc --random --fn scale --input x="$tmp/ga.npy,$tmp/gb.npy,$tmp/gc.npy" --input k=1 --input s=0 \
    --device=cpu --output out="$tmp/ra.npy,$tmp/rb.npy,$tmp/rc.npy"
expect "--input lists" 0
check "--input lists: round trip" bash -c "cmp -s '$tmp/ga.npy' '$tmp/ra.npy' && cmp -s '$tmp/gb.npy' '$tmp/rb.npy' && cmp -s '$tmp/gc.npy' '$tmp/rc.npy'"
t run progs.tc --random --fn scale --input x="$tmp/ga.npy,$tmp/gb.npy,$tmp/gc.npy" --input k=1 --input s=0 --device=cpu
check "--input lists: sizes from the files" bash -c "grep -qxF 'out (group 0): f32[5]' '$tmp/out' && grep -qxF 'out (group 1): f32[0]' '$tmp/out' && grep -qxF 'out (group 2): f32[3]' '$tmp/out'"
# a group of a list run is the plain run on that group's files (g from seed S+i)
t run progs.tc --random --fn update --input p="$tmp/ga.npy,$tmp/gc.npy" --input lr=0.25 --seed 9 --device=cpu \
    --output p="$tmp/la.npy,$tmp/lc.npy"
expect "--input list with a shared scalar" 0
t run progs.tc --random --fn update --input p="$tmp/gc.npy" --input lr=0.25 --seed 10 --device=cpu --output p="$tmp/pc.npy"
check "list group 1 == plain run of its file with seed S+1" cmp -s "$tmp/lc.npy" "$tmp/pc.npy"
check "the scalar is shared" bash -c "! cmp -s '$tmp/lc.npy' '$tmp/gc.npy'"
# --groups with a list: each file must have its group's size; shapes come back
t run progs.tc --random --fn smax --shape N=3,D=4 --device=cpu --output out="$tmp/x34.npy"
t run progs.tc --random --fn update --groups 12,0,3 --input p="$tmp/x34.npy,$tmp/gb.npy,$tmp/gc.npy" --device=cpu \
    --output p="$tmp/ua.npy,$tmp/ub.npy,$tmp/uc.npy"
expect "--groups with an --input list" 0
check "an output keeps its group's input shape" [ "$(npy_shape "$tmp/ua.npy")" = "(3, 4)" ]
# many groups: the first few printed, then a count
t run progs.tc --random --fn update --groups 1,2,3,4,5,6,7,8,9,10 --device=cpu; expect "ten groups" 0
check "ten groups: four shown" [ "$(grep -c '^p (group ' "$tmp/out")" -eq 4 ]
check "ten groups: the rest counted" grep -qxF "... 6 more groups not shown (--output NAME=FILE,FILE,... writes every group)" "$tmp/out"
t run progs.tc --random --fn update --groups 0,0 --device=cpu --output p="$tmp/e0.npy,$tmp/e1.npy"
expect "only empty groups" 0
check "only empty groups: both written" bash -c "[ \"\$(head -c 128 '$tmp/e1.npy' | tr -d '\\0' | grep -ao \"'shape': (0,)\")\" ]"
# errors: usage (2) for the option's own form, 1 for the program and its files
t run progs.tc --random --fn stats --groups 3 --device=cpu
expect_line "--groups: not elementwise (a parameter)" 1 "error: function 'stats' cannot run over tensor groups: parameter 'x' is f32[N, D], not [*] (--groups needs every tensor parameter [*] and every operation pointwise)"
t run progs.tc --random --fn rmsnorm --groups 3 --device=cpu
expect_line "--groups: not elementwise (an operation)" 1 "error: function 'rmsnorm' cannot run over tensor groups: 'mean' (line 22) is not pointwise (--groups needs every tensor parameter [*] and every operation pointwise)"
t run progs.tc --random --fn update --groups 4,-1 --device=cpu
expect_line "--groups negative" 2 "error: --groups 4,-1: '-1' is not a size (one element count per group, each a non-negative integer: --groups 1000,0,4097)"
check "--groups negative: usage line" grep -q "^usage: tensorc run FILE" "$tmp/err"
t run progs.tc --random --fn update --groups 4,x7 --device=cpu
expect_line "--groups not a number" 2 "error: --groups 4,x7: 'x7' is not a size (one element count per group, each a non-negative integer: --groups 1000,0,4097)"
t run progs.tc --random --fn update --groups 4,,7 --device=cpu
expect_line "--groups empty size" 2 "error: --groups 4,,7: '' is not a size (one element count per group, each a non-negative integer: --groups 1000,0,4097)"
t run progs.tc --random --fn update --groups 1 --groups 2 --device=cpu
expect_line "--groups twice" 2 "error: --groups is given twice"
t run progs.tc --random --fn update --groups 4 --shape '*=4' --device=cpu
expect_line "--groups with --shape" 2 "error: --shape does not go with --groups: each group's size comes from --groups or its --input files"
t run progs.tc --random --fn update --groups 5,0,3 --input p="$tmp/ga.npy,$tmp/gb.npy" --device=cpu
expect_line "--input list shorter than --groups" 2 "error: --input p lists 2 files, but --groups gives 3 groups"
t run progs.tc --random --fn update --groups 5,3 --input p="$tmp/ga.npy" --device=cpu
expect_line "one file for two groups" 2 "error: --input p lists 1 file, but --groups gives 2 groups"
t run progs.tc --random --fn update --input p="$tmp/ga.npy,$tmp/gc.npy" --input g="$tmp/ga.npy" --device=cpu
expect_line "--input lists disagree" 2 "error: --input g lists 1 file, but --input p lists 2 (one file per group)"
t run progs.tc --random --fn update --groups 5,3 --output p="$tmp/o1.npy" --device=cpu
expect_line "--output list shorter than the groups" 2 "error: --output p lists 1 file, but the run has 2 groups"
t run progs.tc --random --fn update --shape '*=3' --output p="$tmp/o1.npy,$tmp/o2.npy" --device=cpu
expect_line "--output list without groups" 2 "error: --output p lists files for groups, but neither --groups nor an --input list says how many groups there are"
t run progs.tc --random --fn update --groups 5,3 --input p="$tmp/ga.npy," --device=cpu
expect_line "--input list with an empty name" 2 "error: --input p: an empty file name in '$tmp/ga.npy,' (one .npy per group, separated by commas)"
t run progs.tc --random --fn update --groups 5,3 --input lr=1,2 --device=cpu
expect_line "a list for a scalar" 1 "error: --input lr=1,2: parameter 'lr' is a scalar (f32), shared by every group: give one value"
t run progs.tc --random --fn update --groups 5,3 --input zz="$tmp/ga.npy,$tmp/gc.npy" --device=cpu
expect_line "--groups: unknown input" 1 "error: --input zz: function 'update' has no parameter 'zz' (parameters: p, g, lr)"
t run progs.tc --random --fn update --groups 5,3 --output zz="$tmp/o1.npy,$tmp/o2.npy" --device=cpu
expect_line "--groups: unknown output" 1 "error: --output zz: function 'update' has no output 'zz' (outputs: p)"
t run progs.tc --random --fn update --groups 5,4 --input p="$tmp/ga.npy,$tmp/gc.npy" --device=cpu
expect_line "a file of the wrong size for --groups" 1 "error: --input p: group 1: '$tmp/gc.npy' has 3 elements, but --groups gives it 4"
t run progs.tc --random --fn update --input p="$tmp/ga.npy,$tmp/gc.npy" --input g="$tmp/ga.npy,$tmp/ga.npy" --device=cpu
expect_line "files of one group disagree" 1 "error: --input g: group 1: '$tmp/ga.npy' has 5 elements, but '$tmp/gc.npy' (--input p) has 3 (the tensors of a group have one element count)"
t run progs.tc --random --fn update --groups 5,3 --input p="$tmp/ga.npy,$tmp/none.npy" --device=cpu
expect_line "a missing file in a list" 1 "error: cannot read '$tmp/none.npy': No such file or directory"
t run progs.tc --random --fn update --groups 5,3 --check --device=cpu
expect_line "--groups --check on the CPU" 2 "error: --check compares or times the CUDA kernels: it needs --device=cuda (the default when there is a GPU)"
TENSORC_LIBCUDA=/nonexistent t run progs.tc --random --fn update --groups 5,3 --device=cuda
expect_err "--groups --device=cuda without a GPU" 3 "error: --device=cuda: no CUDA driver"
TENSORC_LIBCUDA=/nonexistent t run progs.tc --random --fn update --groups 5,3
expect "--groups without a GPU falls back to the CPU" 0
check "--groups fallback: the note" grep -q "^note: running on the CPU reference interpreter" "$tmp/err"
t --help
check "--help: --groups" grep -qF -- "--groups 1000,0,4097" "$tmp/out"

# --- a file with no functions (issue 11): an error, never an empty success -----------------
printf '# no functions here\n' >"$tmp/nofn.tc"
t compile "$tmp/nofn.tc"
expect_line "compile: no functions" 1 "$tmp/nofn.tc: error: the file defines no functions: nothing to compile"
check "compile: no functions: no output" [ ! -s "$tmp/out" ]
t compile "$tmp/nofn.tc" --emit=graph
expect "compile --emit=graph: no functions" 1
t explain "$tmp/nofn.tc"
expect_line "explain: no functions" 1 "$tmp/nofn.tc: error: the file defines no functions: nothing to explain"
t run "$tmp/nofn.tc" --random
expect_line "run: no functions" 1 "error: $tmp/nofn.tc: the file defines no functions: nothing to run"
check "run: no functions: the message ends its line" [ "$(tail -c 1 "$tmp/err" | od -An -c | tr -d ' ')" = '\n' ]

# --- inputs left out (issue 11): an error naming them, unless --random ---------------------
t run single.tc --shape N=3 --device=cpu
expect_line "a missing input is an error" 1 "error: function 'only': no --input for parameter x (give each with --input NAME=FILE.npy or NAME=VALUE, or --random for seeded random inputs)"
check "a missing input: nothing printed" [ ! -s "$tmp/out" ]
t run progs.tc --fn stats --shape N=2,D=2 --device=cpu
expect_line "two missing inputs are named" 1 "error: function 'stats': no --input for parameters x, g (give each with --input NAME=FILE.npy or NAME=VALUE, or --random for seeded random inputs)"
t run progs.tc --fn scale --shape '*=3' --input k=2 --device=cpu
expect_err "a scalar without a default is an input" 1 "no --input for parameters x, s ("
t run progs.tc --fn stats --shape N=2,D=2 --device=cpu --random --seed 3
expect_line "--random: a note lists the random inputs" 0 "note: random inputs (--seed 3): x, g"
t run progs.tc --fn update --groups 2,3 --device=cpu
expect_err "--groups: a missing input is an error" 1 "error: function 'update': no --input for parameters p, g ("
t run progs.tc --fn update --groups 2,3 --device=cpu --random
expect "--groups --random" 0
check "--groups --random: one note" [ "$(grep -c '^note: random inputs' "$tmp/err")" -eq 1 ]

# --- bad TENSORC_* values (issue 11): one warning each, never silently ignored -----------
TENSORC_DEBUG=yes t compile single.tc --emit=graph
expect "TENSORC_DEBUG=yes still compiles" 0
check "TENSORC_DEBUG=yes: one warning" [ "$(grep -c "^tensorc: warning: TENSORC_DEBUG='yes' is not an integer from 0 to 5" "$tmp/err")" -eq 1 ]
TENSORC_DEBUG=1 t compile single.tc --emit=graph
check "TENSORC_DEBUG=1: no warning" bash -c "! grep -q warning '$tmp/err'"
printf x >"$tmp/notadir"
TENSORC_DUMP_DIR=$tmp/notadir t compile progs.tc --emit=graph
expect "TENSORC_DUMP_DIR a file still compiles" 0
check "TENSORC_DUMP_DIR a file: one warning" [ "$(grep -c "^tensorc: warning: TENSORC_DUMP_DIR='$tmp/notadir' is not a directory" "$tmp/err")" -eq 1 ]
TENSORC_DUMP_DIR=$tmp/dumps t compile single.tc --emit=graph
check "TENSORC_DUMP_DIR: the dumps" [ -s "$tmp/dumps/single.graph" ]
fake=$(dirname "$tc")/tests/libtc-fake-cuda.so
if [ -f "$fake" ]; then
    TENSORC_FOREACH_WIDE=yes TENSORC_LIBCUDA=$fake TENSORC_CUBLAS=$fake TENSORC_CACHE_DIR=$tmp/cache \
        t run progs.tc --fn update --groups "$(seq -s, 1 300)" --device=cuda --random
    expect "TENSORC_FOREACH_WIDE=yes still runs" 0
    check "TENSORC_FOREACH_WIDE=yes: one warning" [ "$(grep -c "^tensorc: warning: TENSORC_FOREACH_WIDE='yes' is not an integer from 0 to 1" "$tmp/err")" -eq 1 ]
fi

# --- the edges of docs/semantics.md (issue 11): casts, % 0, 0 ** negative, wrapping powers --
py_make "np.save('ex.npy', np.array([-1, -0.5, 0, 0.25, 0.5, 1, -0.125], np.float32))
np.save('ek.npy', np.array([-10, -3, 0, 1, 2, 7, -1], np.int32))"
if [ -n "$py" ]; then
    outs=""
    for o in sat pinf pnan wide mod0 pneg pwrap fmod fpow; do outs="$outs --output $o=$tmp/e_$o.npy"; done
    t run edges.tc --input x="$tmp/ex.npy" --input k="$tmp/ek.npy" --device=cpu $outs
    expect "edges on the interpreter" 0
    pycheck "edges: every element as docs/semantics.md says" "
M, m = 2**31 - 1, -2**31
want = dict(sat=[m, m, 0, M, M, M, -1250000000], pinf=[m, m, 0, M, M, M, m],
            pnan=[0, 0, 0, 50, 70, 100, 0], wide=[-999999995904, -499999997952, 0, 249999998976, 499999997952, 999999995904, -124999999488],
            mod0=[0, 0, 0, 0, 0, 0, 1], pneg=[1, 0, 0, 1, 1, 0, 1],
            pwrap=[((k + 3) ** 25 + 2**31) % 2**32 - 2**31 for k in [-10, -3, 0, 1, 2, 7, -1]],
            fmod=[0, 0, 0, 0.25, 0, 0, 0.375], fpow=[np.inf] * 7)
for k, w in want.items():
    got = np.load('e_%s.npy' % k)
    assert got.tolist() == w, (k, got.tolist(), w)
"
    # a weak literal is rounded to the tensor's dtype where it meets it, as the kernels
    # do: x * 1e12 is f32(x) * f32(1e12) in f32 (the interpreter multiplied by the exact
    # 1e12, and --check saw i64(x * 1e12) differ from the GPU's)
    py_make "np.save('wx.npy', np.array([0.7839754819869995, -1.2590655088424683, 1.8016349077224731, 1.3151037693023682], np.float32))
np.save('wk.npy', np.array([1, 2, 3, 4], np.int32))"
    t run edges.tc --input x="$tmp/wx.npy" --input k="$tmp/wk.npy" --device=cpu --output wide="$tmp/w_wide.npy"
    expect "edges: literals rounded where they meet a tensor" 0
    pycheck "edges: i64(x * 1e12) as f32 arithmetic" "
x = np.load('wx.npy')
want = (x * np.float32(1e12)).astype(np.float32).astype(np.int64).tolist()
got = np.load('w_wide.npy').tolist()
assert got == want, (got, want)
"
fi
fake=$(dirname "$tc")/tests/libtc-fake-cuda.so
if [ -f "$fake" ]; then
    TENSORC_LIBCUDA=$fake TENSORC_CUBLAS=$fake TENSORC_CACHE_DIR=$tmp/cache \
        t run edges.tc --shape N=1000 --device=cuda --random
    expect "edges through NVRTC on the fake driver" 0
fi

# --- generic functions: checked where called, and as entries when asked for (issue 11) -----
t run generic.tc --fn proj --shape N=2,I=3,O=4 --device=cpu --random
expect "a copy of linear called with a matrix" 0
check "proj: its output" grep -q "^out: f32\[2, 4\]" "$tmp/out"
t run generic.tc --fn twice --shape N=3 --device=cpu --random
expect "an unused generic helper does not break another function" 0
t run generic.tc --fn to_bf16 --dtype T=bf16 --shape N=3 --device=cpu --random
expect "a function valid at T=bf16 runs with --dtype T=bf16" 0
t run generic.tc --fn to_bf16 --shape N=3 --device=cpu --random
expect_line "... and at T=f32 is refused, located" 1 "generic.tc:21:12: error: the result of 'to_bf16' is f32[N], but the signature declares bf16[N]"
t run generic.tc --fn swap --shape '*=3' --device=cpu --random
expect_line "swap asked for by name: its error" 1 "generic.tc:14:14: error: .T needs a tensor of rank 2 or more, but this is f32[*]"
t compile generic.tc --emit=graph
expect_line "the whole file compiles every entry: swap's error" 1 "generic.tc:14:14: error: .T needs a tensor of rank 2 or more, but this is f32[*]"
t compile generic.tc --fn twice --emit=cuda
expect "compile --fn of another function" 0

# --- reductions of rank-0 values (issue 11): interpreter and kernels ----------------------
t run scalar_red.tc --shape N=2 --input lr=0.5 --input k=3 --device=cpu --random
expect "scalar reductions on the CPU" 0
check "sum of an i32 scalar is i64" grep -qzF $'s: i64\n3\n' "$tmp/out"
check "var of one element is NaN" grep -qzF $'v: f32\nnan\n' "$tmp/out"
check "std with correction 0 is 0" grep -qzF $'d: f32\n0.\n' "$tmp/out"
check "argmax of a scalar is 0" grep -qzF $'i: i64\n0\n' "$tmp/out"
check "logsumexp of a scalar is itself" grep -qzF $'l: f32\n3.\n' "$tmp/out"
fake=$(dirname "$tc")/tests/libtc-fake-cuda.so
if [ -f "$fake" ]; then
    TENSORC_LIBCUDA=$fake TENSORC_CUBLAS=$fake TENSORC_CACHE_DIR=$tmp/cache \
        t run scalar_red.tc --shape N=2 --input lr=0.5 --input k=3 --device=cuda --random
    expect "scalar reductions through NVRTC on the fake driver" 0
fi

# --- integers exactly (issue 11): i64 near INT64_MAX through .npy, the interpreter, printing, --check
if [ -n "$py" ]; then
    "$py" -c "import numpy as np
m = np.iinfo(np.int64).max
np.save('$tmp/i64.npy', np.array([m, -m - 1] + [m - k for k in range(1, 513)], np.int64))
np.save('$tmp/i64s.npy', np.array([m - 1, m, 1], np.int64))"
    t run ints.tc --device=cpu --input x="$tmp/i64.npy" --output y="$tmp/i64y.npy" \
        --output up="$tmp/i64up.npy"
    expect "i64 round trip" 0
    check "i64 round trip: the same bytes" cmp -s "$tmp/i64.npy" "$tmp/i64y.npy"
    pycheck "i64 + 1 wraps, exactly" "x = np.load('i64.npy'); u = np.load('i64up.npy')
assert u.dtype == np.int64 and (u == x + 1).all() and u[0] == -2**63 and u[1] == -2**63 + 1, u[:4]"
    t run ints.tc --device=cpu --input x="$tmp/i64s.npy"
    want=$'y: i64[3]\n[9223372036854775806 9223372036854775807                   1]\n'
    want+=$'up: i64[3]\n[ 9223372036854775807 -9223372036854775808                    2]\n'
    want+=$'s: i64\n-2\ntop: i64\n9223372036854775807\nat: i64\n1\ncap: i64\n9223372036854775807'
    # the whole output: i64 printed exactly, + 1 and sum wrap, max and argmax exact,
    # a constant float cast saturating to the i64 maximum itself
    check "i64 printed exactly" [ "$out" = "$want" ]
    if [ -f "$fake" ]; then # the fake kernels leave 0xff bytes: -1 where INT64_MAX - 1 is right
        TENSORC_LIBCUDA=$fake TENSORC_CUBLAS=$fake TENSORC_CACHE_DIR=$tmp/cache \
            t run ints.tc --device=cuda --check --input x="$tmp/i64s.npy"
        expect_err "--check compares integers exactly" 1 "output 'y' differs from the reference interpreter at [0]: got -1, want 9223372036854775806 (integers must be equal)"
    fi
else
    skip=$((skip + 1))
fi

if [ "$skip" -gt 0 ]; then echo "($skip skipped: no python3 with NumPy)"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
