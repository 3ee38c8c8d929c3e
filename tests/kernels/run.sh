#!/usr/bin/env bash
# Kernel counts: issue 3's "Must show" list, asserted on the generated code.
#
#   tests/kernels/run.sh [TENSORC_BIN]      (default: build/tensorc)
#
# For each case, `tensorc compile FILE --fn FN --emit=cuda` and count the
# `__global__` functions (the issue's measure).  Programs come from
# examples/ where one exists, else from tests/kernels/*.tc.  Two cases check
# more than a count:
#   - gelu(x @ w + b): one __global__ in f32 (the matmul a cuBLAS step
#     before the kernel that reads its result); in f16 the generated matmul
#     kernel and the epilogue (two __global__), and a plan whose matmul has
#     both engines guarded by M, each writing the buffer the epilogue reads;
#     with M a constant one engine alone (decode_proj: the generated kernel;
#     prefill_proj: cuBLAS); decode_bias_gelu (M = 16): the epilogue fused
#     into the generated kernel, one kernel and one step;
#   - AdamW: one kernel that writes three buffers, seen twice: the fused dump
#     (one kernel, stores -> m, v, p) and the launch plan (one step, the three
#     inout outputs written in place).
#   - issue 13's decode blocks (M = 16): RMSNorm -> matmul, the gated MLP and LoRA
#     one generated kernel each, no cuBLAS step, explain naming the rule;
#     with M symbolic the norm kernel and cuBLAS guarded by M > 16; a weight
#     past the L2 (40 MB) on cuBLAS, one of symbolic size guarded by its bytes too.
#   - codegen/keep.c's plan (tests/kernels/keep.tc): f32 softmax keeps its
#     exp for the epilogue; bf16 softmax, layernorm, log_softmax and
#     TENSORC_ROWS_KEEP=0 keep nothing; TENSORC_ROWS_PAIR=2 combines the max
#     and the sum once and rescales the kept exp (off by default); the
#     register rows' max is unpredicated unless TENSORC_MAX_NAN=0; the wide
#     softmax kernel takes its rows by ticket (a workspace) unless
#     TENSORC_ROWS_TICKET=0.
#   - the unrolled budget's heavy calls (sched_budget.c) and x ** 2 as a
#     product (codegen/emit.c).
#   - issue 15's layernorm and rmsnorm backward (grad and the vjp pair's
#     backward): two kernels, x and dout read by the first step alone, the
#     column partials passed to the second; explain and --emit=sched say so.
# Prints one line per check and "N passed, M failed" last; exits 1 on failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tc=$(realpath "${1:-$root/build/tensorc}")
if [ ! -x "$tc" ]; then echo "no tensorc binary at $tc (build first)"; exit 2; fi
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/../lib.sh"

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() {
    fail=$((fail + 1)); echo "FAIL $1"
    [ -n "${2:-}" ] && printf '     %s\n' "$2"
    return 0
}

# emit FILE FN STAGE: the dump in $tmp/out; 1 (with the error shown) if
# tensorc fails.
emit() {
    if ! "$tc" compile "$1" --fn "$2" --emit="$3" >"$tmp/out" 2>"$tmp/err"; then
        bad "$2 ($1): tensorc compile --emit=$3 failed" "$(head -6 "$tmp/err")"
        return 1
    fi
}

# globals: the kernels in $tmp/out (lib.sh's cuda_kernels); kernel_names:
# the names of every __global__ (the identifier before the last '(' of each
# __global__ line).
globals() { cuda_kernels "$tmp/out"; }
kernel_names() {
    sed -nE 's/.*__global__.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)\(.*$/\1/p' "$tmp/out" | tr '\n' ' '
}

# count FILE FN N: FN of FILE compiles to N kernels.
count() {
    emit "$1" "$2" cuda || return 0
    local n
    n=$(globals)
    if [ "$n" -eq "$3" ]; then ok "$2: $3 kernel(s)"
    else bad "$2 ($1): want $3 __global__, got $n" "kernels: $(kernel_names)"; fi
}

# plan_steps: the launch plan's step lines (the comment after the source).
# (a wide variant's step left out: it replaces the step before it for long rows)
plan_steps() { sed -n '/^launch plan of /,$p' "$tmp/out" | grep -E '^  step [0-9]+: ' | grep -vE '_w<<<'; }

ex=examples
kt=tests/kernels/counts.tc
count $ex/softmax.tc        softmax          1
# f32 rows of a length known at launch: the wide variant's step and the
# kernel's are guarded by the row's length, complementary (plan.h), so exactly
# one launches; a constant length past one block gets the wide kernel alone
if emit $ex/softmax.tc softmax cuda; then
    if sed -n '/^launch plan of /,$p' "$tmp/out" | tr '\n' '|' |
        grep -qE 'step 0 runs when D <= 16384:\|  step 0: [a-z_0-9]+_0<<<[^|]*\|  step 1 runs when D > 16384:\|  step 1: [a-z_0-9]+_0_w<<<'
    then ok "softmax: the 16-a-thread kernel for D <= 16384, the wide one past it"
    else bad "softmax: want two guarded steps" "$(sed -n '/^launch plan of /,$p' "$tmp/out" | tr '\n' '|')"; fi
fi
if emit $ex/softmax.tc softmax explain; then
    if grep -qE '^  rows: kernel 0 has a wide variant \(suffix _w\) for rows past 16384 elements' "$tmp/out"
    then ok "softmax: explain names the wide variant and its guard"
    else bad "softmax: explain does not name the wide variant"; fi
fi
# TENSORC_ROWS_PIPE (codegen/rows.c; on for f32 rows by default, =1 here):
# the wide kernel alone gets the pipe (the 16-a-thread one takes no
# cluster), and the plan says so; =0 or 16-bit rows, no trace of it
if TENSORC_ROWS_PIPE=1 emit $ex/softmax.tc softmax cuda; then
    if [ "$(grep -c 'tc_cp_async<16>' "$tmp/out")" -eq 2 ] &&
        [ "$(grep -c 'in a cluster: at most the resident clusters' "$tmp/out")" -eq 1 ] &&
        sed -n '/^launch plan of /,$p' "$tmp/out" | grep -A1 '_0_w<<<' | grep -q 'prefetched into 128 bytes a thread'
    then ok "softmax TENSORC_ROWS_PIPE=1: the wide kernel's row prefetched, 128 bytes a thread"
    else bad "softmax TENSORC_ROWS_PIPE=1: want the wide kernel's two copies and the plan's line"; fi
fi
if emit $ex/softmax.tc softmax cuda && cp "$tmp/out" "$tmp/default" &&
    TENSORC_ROWS_PIPE=1 emit $ex/softmax.tc softmax cuda; then
    if cmp -s "$tmp/out" "$tmp/default"
    then ok "softmax (f32): the pipe by default, as with TENSORC_ROWS_PIPE=1"
    else bad "softmax (f32): the default differs from TENSORC_ROWS_PIPE=1"; fi
fi
if TENSORC_ROWS_PIPE=0 emit $ex/softmax.tc softmax cuda; then
    if ! grep -qE 'tc_pipe|tc_cp_async|resident clusters' "$tmp/out"
    then ok "softmax: no pipe with TENSORC_ROWS_PIPE=0"
    else bad "softmax: pipe code with TENSORC_ROWS_PIPE=0"; fi
fi
printf 'fn s(x: bf16[N, D]) -> bf16[N, D] { return softmax(x, axis=-1) }\n' >"$tmp/sbf.tc"
# 16-bit rows: the row kept in its slots (TENSORC_ROWS_PIPE=2 by default):
# two stages (4 items of 16 bytes each: 128 bytes a thread), every pass
# reading the slots (tc_stg; the max's pass, the sum's and the epilogue: a
# vector each, one 16-byte read), no
# register array for the row a cluster shares; =0 none
if emit "$tmp/sbf.tc" s cuda && cp "$tmp/out" "$tmp/default"; then
    if [ "$(grep -c 'tc_cp_async<16>(tc_pipe + ((tc_stg + 0 + j)' "$tmp/out")" -eq 1 ] &&
        [ "$(grep -c 'tc_cp_async<16>(tc_pipe + (((4 - tc_stg) + 0 + j)' "$tmp/out")" -eq 1 ] &&
        grep -q 'tc_stg = 4 - tc_stg; /\* the prefetch' "$tmp/out" &&
        [ "$(grep -cE 'pc[0-9]+\[j\] = ' "$tmp/out")" -eq 1 ] && # the one-block rows' registers alone
        [ "$(grep -c '= tc_sget<unsigned short, 8>(tc_pipe, (tc_stg + 0 + j) \* blockDim.x + threadIdx.x);' "$tmp/out")" -eq 3 ] &&
        sed -n '/^launch plan of /,$p' "$tmp/out" | grep -q 'prefetched into 128 bytes a thread'
    then ok "softmax (bf16): the row kept in its slots by default, two stages"
    else bad "softmax (bf16): want the resident pipe by default"; fi
    # ... in a second kernel for rows past one block's (sched.h's pipe_split):
    # the plan's steps guarded by D, the short rows' kernel without cluster,
    # pipe or workspace
    plan=$(sed -n '/^launch plan of /,$p' "$tmp/out" | tr '\n' '|')
    if [[ $plan == *"step 0 runs when D <= 32768:|  step 0: tc_red_fused_cast_max_sub_exp_sum_div_0<<<N, [1024, 1, 1]>>>(in_x, out_out, N, D)|"* ]] &&
        [[ $plan == *"step 1 runs when D > 32768:|  step 1: tc_red_fused_cast_max_sub_exp_sum_div_0_w<<<"*"workspace)|"* ]] &&
        [ "$(sed -n '/void TC_ROWS_BOUNDS tc_red_fused_cast_max_sub_exp_sum_div_0(/,/^}/p' "$tmp/out" |
             grep -cE 'tc_pipe|tc_cluster_size|\bws\b')" -eq 0 ]
    then ok "softmax (bf16): the pipe's kernel for rows past 32768, the short rows' kernel without it"
    else bad "softmax (bf16): want the split by the row's length" "$plan"; fi
fi
if TENSORC_ROWS_PIPE=2 emit "$tmp/sbf.tc" s cuda; then
    if cmp -s "$tmp/out" "$tmp/default"
    then ok "softmax (bf16): the default is TENSORC_ROWS_PIPE=2"
    else bad "softmax (bf16): the default differs from TENSORC_ROWS_PIPE=2"; fi
fi
if TENSORC_ROWS_PIPE=0 emit "$tmp/sbf.tc" s cuda; then
    if ! grep -qE 'tc_pipe|tc_cp_async|resident clusters' "$tmp/out"
    then ok "softmax (bf16): no pipe with TENSORC_ROWS_PIPE=0"
    else bad "softmax (bf16): pipe code with TENSORC_ROWS_PIPE=0"; fi
fi
printf 'fn s(x: f32[N, 65536]) -> f32[N, 65536] { return softmax(x, axis=-1) }\n' >"$tmp/wide.tc"
if emit "$tmp/wide.tc" s cuda; then
    if [ "$(globals)" -eq 1 ] && grep -q '__launch_bounds__(512, 2)' "$tmp/out" && ! grep -q 'runs when' "$tmp/out"
    then ok "softmax at a constant 65536: the wide kernel alone, unguarded"
    else bad "softmax at a constant 65536: want the wide kernel alone" "$(kernel_names)"; fi
fi
count $kt                   log_softmax_rows 1
count $ex/layernorm.tc      layernorm        1
count $ex/rmsnorm.tc        rmsnorm_f32      1
count $ex/rmsnorm.tc        rmsnorm_bf16     1
count $ex/gelu_chain.tc     gelu_chain       1
count $ex/fma4.tc           fma4             1
count $ex/bias_gelu.tc      bias_gelu        1
count $ex/transpose_add.tc  transpose_add    1
count $ex/row_sum.tc        row_sum          1
count $ex/col_sum.tc        col_sum          1
count $ex/normalize_rows.tc normalize_rows   1
count $ex/masked_softmax.tc masked_softmax   1
count $ex/norm_residual.tc  norm_residual    1
count $kt                   center_cols      2
# A full-tensor sum may be 1 or 2 kernels by the issue; tensorc does it in
# one (blocks' partials combined by the last block), so assert that.
count $ex/full_sum.tc       full_sum         1
count $kt                   full_sum_2d      1

# --- gelu(x @ w + b): the matmul is a plan step, plus one kernel ------------------
# (f32: cuBLAS at every M, sched_matmul.c)
count $kt gelu_linear 1
if emit $kt gelu_linear cuda; then
    plan_steps >"$tmp/steps"
    nmm=$(grep -cE '^  step [0-9]+: matmul ' "$tmp/steps")
    nall=$(wc -l <"$tmp/steps")
    if [ "$nmm" -eq 1 ] && [ "$nall" -eq 2 ]; then ok "gelu_linear: plan has one matmul step and one kernel step"
    else bad "gelu_linear: want 1 matmul step of 2 steps, got $nmm of $nall" "$(tr '\n' '|' <"$tmp/steps")"; fi
    # the matmul's result buffer (step 0: matmul BUF = ...) is an argument of step 1
    mmbuf=$(sed -nE 's/^  step 0: matmul ([A-Za-z0-9_]+) = .*/\1/p' "$tmp/steps")
    if [ -n "$mmbuf" ] && grep -E '^  step 1: ' "$tmp/steps" | grep -qE "[(, ]$mmbuf[,)]"; then
        ok "gelu_linear: the matmul comes first and the kernel reads its result ($mmbuf)"
    else bad "gelu_linear: step 0 is not a matmul whose result step 1 reads" "$(tr '\n' '|' <"$tmp/steps")"; fi
fi
# --- the same in f16, M symbolic: both engines of the matmul (sched_matmul.c),
# cuBLAS guarded by M > 16 and the generated kernel by M <= 16, each writing
# the buffer the epilogue kernel then reads: 2 __global__, 3 steps.
count $kt gelu_linear_f16 2
if emit $kt gelu_linear_f16 cuda; then
    sed -n '/^launch plan of /,$p' "$tmp/out" >"$tmp/plan"
    plan_steps >"$tmp/steps"
    nmm=$(grep -cE '^  step [0-9]+: matmul ' "$tmp/steps")
    ngen=$(grep -cE '^  step [0-9]+: tc_matmul_0<<<' "$tmp/steps")
    nall=$(wc -l <"$tmp/steps")
    if [ "$nmm" -eq 1 ] && [ "$ngen" -eq 1 ] && [ "$nall" -eq 3 ] &&
        grep -qE '^  step 0 runs when M( \+ 17\*\(\([^)]*\)\/41943041\))? > 16:' "$tmp/plan" && grep -qE '^  step 1 runs when M( \+ 17\*\(\([^)]*\)\/41943041\))? <= 16:' "$tmp/plan"; then
        ok "gelu_linear_f16: cuBLAS when M > 16, the generated kernel when M <= 16, then the epilogue"
    else bad "gelu_linear_f16: want a guarded cuBLAS step and a guarded tc_matmul step of 3" "$(tr '\n' '|' <"$tmp/plan")"; fi
    # both write the buffer that step 2 reads
    mmbuf=$(sed -nE 's/^  step 0: matmul ([A-Za-z0-9_]+) = .*/\1/p' "$tmp/steps")
    if [ -n "$mmbuf" ] && grep -E '^  step 1: ' "$tmp/steps" | grep -qE "[(, ]$mmbuf[,)]" &&
        grep -E '^  step 2: ' "$tmp/steps" | grep -qE "[(, ]$mmbuf[,)]"; then
        ok "gelu_linear_f16: both engines write $mmbuf and the kernel after them reads it"
    else bad "gelu_linear_f16: the matmul's buffer is not shared by steps 0-2" "$(tr '\n' '|' <"$tmp/steps")"; fi
fi
# constant M: one engine, chosen at compile time
count $kt decode_proj 1
if emit $kt decode_proj cuda; then
    plan_steps >"$tmp/steps"
    if [ "$(wc -l <"$tmp/steps")" -eq 1 ] && grep -qE '^  step 0: tc_matmul_0<<<' "$tmp/steps" &&
        ! grep -q 'runs when' "$tmp/out"; then ok "decode_proj: M = 4, the generated kernel alone, no cuBLAS step"
    else bad "decode_proj: want one unguarded tc_matmul step" "$(tr '\n' '|' <"$tmp/steps")"; fi
fi
# an epilogue fused into the generated kernel (M = 16 fixed): one step, and
# explain names the rule
count $kt decode_bias_gelu 1
if emit $kt decode_bias_gelu cuda; then
    plan_steps >"$tmp/steps"
    if [ "$(wc -l <"$tmp/steps")" -eq 1 ] && grep -qE '^  step 0: tc_matmul_0<<<' "$tmp/steps"; then
        ok "decode_bias_gelu: one tc_matmul step, the epilogue inside it"
    else bad "decode_bias_gelu: want one tc_matmul step" "$(tr '\n' '|' <"$tmp/steps")"; fi
fi
if emit $kt decode_bias_gelu explain; then
    if grep -qE '^  fused .* matmul -> .*epilogue of the matmul' "$tmp/out"; then
        ok "decode_bias_gelu: explain names the matmul epilogue rule"
    else bad "decode_bias_gelu: explain does not show the epilogue rule" "$(head -8 "$tmp/out" | tr '\n' '|')"; fi
fi
# issue 13's decode blocks (M = 16): one kernel, one step, no cuBLAS, and
# explain names the rule that fused each
for fr in "decode_rmsnorm_matmul:row scale into the matmul" "decode_gated_mlp:two products of one left operand" \
    "decode_lora:a low-rank adapter beside its weight"; do
    fn=${fr%%:*} rule=${fr#*:}
    # the adapter rule is opt-in until its kernel has run on a GPU (fuse.h)
    if [ $fn = decode_lora ]; then export TENSORC_MATMUL_LORA=on; else unset TENSORC_MATMUL_LORA; fi
    count $kt $fn 1
    if emit $kt $fn cuda; then
        plan_steps >"$tmp/steps"
        if [ "$(wc -l <"$tmp/steps")" -eq 1 ] && grep -qE '^  step 0: tc_matmul_[0-9]+<<<' "$tmp/steps" &&
            ! grep -q 'runs when' "$tmp/out"; then ok "$fn: one tc_matmul step, no cuBLAS step"
        else bad "$fn: want one unguarded tc_matmul step" "$(tr '\n' '|' <"$tmp/steps")"; fi
    fi
    if emit $kt $fn explain; then
        if grep -qE "^  fused .* matmul: $rule" "$tmp/out"; then ok "$fn: explain names the rule ($rule)"
        else bad "$fn: explain does not show the rule" "$(grep fused "$tmp/out" | tr '\n' '|')"; fi
    fi
done
unset TENSORC_MATMUL_LORA
count $kt decode_lora 3   # without the opt-in: x @ W, x @ A, and (x @ A) @ B with the sum
count $kt decode_gated_col 2   # the first product read off its element: not a pair
# the same with M symbolic (examples/rmsnorm_matmul.tc): the rows kernel and
# cuBLAS guarded by M > 16, the generated kernel (the norm inside) by M <= 16
if emit $ex/rmsnorm_matmul.tc rmsnorm_matmul cuda; then
    sed -n '/^launch plan of /,$p' "$tmp/out" >"$tmp/plan"
    if grep -qE '^  step 0 runs when M( \+ 17\*\(\([^)]*\)\/41943041\))? > 16:' "$tmp/plan" && grep -qE '^  step 1 runs when M( \+ 17\*\(\([^)]*\)\/41943041\))? > 16:' "$tmp/plan" &&
        grep -qE '^  step 2 runs when M( \+ 17\*\(\([^)]*\)\/41943041\))? <= 16:' "$tmp/plan" && grep -qE '^  step 2: tc_matmul_1<<<.*\(in_x, in_w, ' "$tmp/plan"; then
        ok "rmsnorm_matmul: at M <= 16 one launch (the generated kernel reads x), else the norm and cuBLAS"
    else bad "rmsnorm_matmul: want the norm and cuBLAS guarded by M > 16, tc_matmul_1 on x by M <= 16" "$(tr '\n' '|' <"$tmp/plan")"; fi
fi
# issue 13 with M symbolic (the epilogue rule, fuse.h's fuse_mm_epilogues):
# at_m M: the plan's steps that run at that M (unguarded, or guarded by M
# against 16 and holding)
at_m() {
    sed -n '/^launch plan of /,$p' "$tmp/out" | awk -v m="$1" '
        /^  step [0-9]+ runs when M( \+ 17\*\(\([^)]*\)\/41943041\))? <= 16:/ { g[$2 + 0] = m <= 16; next }
        /^  step [0-9]+ runs when M( \+ 17\*\(\([^)]*\)\/41943041\))? > 16:/ { g[$2 + 0] = m > 16; next }
        /^  step [0-9]+ runs when / { g[$2 + 0] = 1; next }
        /^  step [0-9]+: / { n = $2 + 0; if (!(n in g) || g[n]) print }' | grep -vE '_w<<<'
}
# epi_steps FILE FN N16 G16 N17 C17 [ENV...]: N16 launches at M = 16, G16
# of them generated matmul kernels and the rest pointwise, no cuBLAS; N17
# at M = 17, C17 of them cuBLAS and the rest pointwise (the epilogue's
# kernel, launched there alone)
epi_steps() {
    local file=$1 fn=$2 n16=$3 m16=$4 n17=$5 c17=$6
    shift 6
    env "$@" "$tc" compile "$file" --fn "$fn" --emit=cuda >"$tmp/out" 2>"$tmp/err" ||
        { bad "$fn ($*): tensorc compile failed" "$(head -4 "$tmp/err")"; return 0; }
    at_m 16 >"$tmp/s16"
    at_m 17 >"$tmp/s17"
    local g16 k16 c k17
    g16=$(wc -l <"$tmp/s16") k16=$(grep -c ': tc_matmul_[0-9]*<<<' "$tmp/s16")
    k17=$(wc -l <"$tmp/s17") c=$(grep -c ': matmul .*(cuBLAS)' "$tmp/s17")
    if [ "$g16" -eq "$n16" ] && [ "$k16" -eq "$m16" ] && [ "$(grep -c ': tc_poi_' "$tmp/s16")" -eq $((n16 - m16)) ] &&
        [ "$k17" -eq "$n17" ] && [ "$c" -eq "$c17" ] && [ "$(grep -c ': tc_poi_' "$tmp/s17")" -eq $((n17 - c17)) ]; then
        ok "$fn${*:+ ($*)}, M symbolic: $m16 generated + $((n16 - m16)) at M = 16; $c17 cuBLAS + $((n17 - c17)) at M = 17"
    else bad "$fn${*:+ ($*)}, M symbolic: want $m16 tc_matmul + $((n16 - m16)) at M = 16, $c17 cuBLAS + $((n17 - c17)) at 17" \
        "M=16: $(tr '\n' '|' <"$tmp/s16") M=17: $(tr '\n' '|' <"$tmp/s17")"; fi
}
epi_steps $ex/gated_mlp.tc gated_mlp 1 1 3 2
epi_steps $ex/lora.tc lora 3 3 4 3                          # x @ W, x @ A, (x @ A) @ B with the sum
epi_steps $ex/lora.tc lora 1 1 4 3 TENSORC_MATMUL_LORA=on   # the adapter rule and the sum: one
epi_steps $kt gelu_linear_f16 1 1 2 1
epi_steps $ex/gated_mlp.tc gated_mlp 3 2 3 2 TENSORC_MATMUL_EPILOGUE=off   # every matmul apart, as before
epi_steps $ex/gated_mlp.tc gated_mlp 2 1 3 2 TENSORC_MATMUL_DUAL=off       # the pair alone, the gate apart
if emit $ex/gated_mlp.tc gated_mlp explain; then
    if grep -qE '^  fused +%5 matmul -> %6 mul: the epilogue rule' "$tmp/out"; then ok "gated_mlp: explain names the epilogue rule"
    else bad "gated_mlp: explain does not show the epilogue rule" "$(grep fused "$tmp/out" | tr '\n' '|')"; fi
    # its first line counts the launches as well as fusion's kernels
    if grep -q '^fn gated_mlp: 3 kernels, 1 launch where the generated matmul runs (2 kernels run only beside cuBLAS' "$tmp/out"
    then ok "gated_mlp: explain's first line says 1 launch where the generated matmul runs"
    else bad "gated_mlp: explain's first line does not count the launches" "$(head -1 "$tmp/out")"; fi
fi
if emit $ex/lora.tc lora explain; then
    if grep -q '^fn lora: 4 kernels, 3 launches where the generated matmul runs (1 kernel runs only beside cuBLAS' "$tmp/out"
    then ok "lora: explain's first line says 3 launches where the generated matmul runs"
    else bad "lora: explain's first line does not count the launches" "$(head -1 "$tmp/out")"; fi
fi
if emit $ex/gated_mlp.tc gated_mlp sched; then
    if grep -qE "launched only when kernel 1's matmul runs on cuBLAS .*the epilogue rule" "$tmp/out"; then
        ok "gated_mlp: --emit=sched says the pointwise kernel runs only beside cuBLAS"
    else bad "gated_mlp: --emit=sched does not name the epilogue rule"; fi
fi
epi_steps $kt epi_off_element 2 1 2 1   # refused: the product read off its element
count $kt prefill_proj 0   # M = 512 > 16
if emit $kt prefill_proj cuda; then
    plan_steps >"$tmp/steps"
    if [ "$(wc -l <"$tmp/steps")" -eq 1 ] && grep -qE '^  step 0: matmul ' "$tmp/steps"; then
        ok "prefill_proj: M = 512, cuBLAS alone"
    else bad "prefill_proj: want one cuBLAS step" "$(tr '\n' '|' <"$tmp/steps")"; fi
fi
# the weight's bytes against the L2 (sched_matmul.c's MM_L2_BYTES, 40 MB)
count $kt big_weight 0
if emit $kt big_weight cuda && plan_steps >"$tmp/steps" && [ "$(wc -l <"$tmp/steps")" -eq 1 ] &&
    ! grep -q 'runs when' "$tmp/out"; then ok "big_weight: 90 MB, cuBLAS alone at every M"
else bad "big_weight: want one unguarded cuBLAS step" "$(tr '\n' '|' <"$tmp/out" | tail -c 600)"; fi
if emit $kt small_weight cuda && grep -qE '^  step 0 runs when M > 16:' "$tmp/out" &&
    grep -qE '^  step 1 runs when M <= 16:' "$tmp/out"; then ok "small_weight: 2 MB, guarded by M alone"
else bad "small_weight: want the guards on M alone" "$(grep 'runs when' "$tmp/out" | tr '\n' '|')"; fi
if emit $kt any_weight cuda && grep -qF 'step 0 runs when M + 17*((2*N*K)/41943041) > 16:' "$tmp/out" &&
    grep -qF 'step 1 runs when M + 17*((2*N*K)/41943041) <= 16:' "$tmp/out"; then
    ok "any_weight: guarded by M and the weight's bytes"
else bad "any_weight: want the guards on M and 2*N*K" "$(grep 'runs when' "$tmp/out" | tr '\n' '|')"; fi

# --- AdamW: one kernel writing p, m and v ----------------------------------------------
count $ex/adamw.tc adamw 1
if emit $ex/adamw.tc adamw fused; then
    nk=$(grep -cE '^  kernel [0-9]+ ' "$tmp/out")
    stores=$(grep -E '^ +stores ' "$tmp/out" | head -1)
    names=$(grep -oE -- '-> [A-Za-z_][A-Za-z0-9_]*' <<<"$stores" | cut -c4- | sort | tr '\n' ' ')
    if [ "$nk" -eq 1 ] && [ "$names" = "m p v " ]; then ok "adamw: the fused kernel stores -> m, p, v"
    else bad "adamw: want 1 kernel storing m, p, v; got $nk kernel(s)" "$stores"; fi
fi
if emit $ex/adamw.tc adamw cuda; then
    nsteps=$(plan_steps | wc -l)
    inplace=$(sed -n '/^launch plan of /,$p' "$tmp/out" | grep -cE '^  buffer out_[pmv] +output .*written in place into io_[pmv]')
    if [ "$nsteps" -eq 1 ] && [ "$inplace" -eq 3 ]; then ok "adamw: plan has one launch writing 3 buffers in place"
    else bad "adamw: want 1 step and 3 in-place outputs, got $nsteps step(s), $inplace in place" \
        "$(sed -n '/^launch plan of /,$p' "$tmp/out" | tr '\n' '|')"; fi
fi

# --- the other optimizers (issue 6): one kernel each, as AdamW -----------------------
count $ex/adam.tc adam 1
count $ex/lion.tc lion 1

# --- issue 15: layernorm / rmsnorm backward, x and dout read once -------------------
# Two kernels (the rows kernel carries dw, db as column partials; the second
# sums the partials), and from the plan: only step 0 reads x and dout, and
# step 1 reads the partials step 0 writes.
read_once() { # FILE FN
    emit "$1" "$2" cuda || return 0
    local s0 s1
    s0=$(plan_steps | grep -E '^  step 0: ')
    s1=$(plan_steps | grep -E '^  step 1: ')
    if [ "$(plan_steps | wc -l)" -eq 2 ] && grep -qE '[(, ]in_x[,)]' <<<"$s0" && grep -qE '[(, ]in_dout[,)]' <<<"$s0" &&
        ! grep -qE '[(, ]in_(x|dout)[,)]' <<<"$s1" && grep -qE '[(, ]cpart[0-9]+[,)]' <<<"$s0" &&
        grep -qE '[(, ]cpart[0-9]+[,)]' <<<"$s1"; then
        ok "$2: x and dout read once (step 0), step 1 sums the partials"
    else
        bad "$2: want x and dout in step 0 only and the partials passed to step 1" "$s0 | $s1"
    fi
}
for fn in layernorm_grad layernorm_bwd rmsnorm_grad rmsnorm_bwd; do
    count $ex/layernorm_backward.tc $fn 2
    read_once $ex/layernorm_backward.tc $fn
done
if emit $ex/layernorm_backward.tc layernorm_grad explain; then
    if grep -qE '^  fused .* sum: column partials' "$tmp/out"; then ok "layernorm_grad: explain names the column partials"
    else bad "layernorm_grad: explain does not name the column partials"; fi
fi
if emit $ex/layernorm_backward.tc layernorm_bwd sched; then
    if grep -qE '^    column partials: ' "$tmp/out" && grep -qE "^    sums kernel 0's partials" "$tmp/out"; then
        ok "layernorm_bwd: --emit=sched shows the column partials and their combine"
    else bad "layernorm_bwd: --emit=sched does not show the column partials"; fi
fi
# the column partials' knobs (issue 15): TENSORC_COLPART_PREFETCH=1 copies
# x's and dout's slices (not w's: the same in every row) and the plan gives
# the kernel its bytes; off, no trace of it; TENSORC_COL_ROWS=16 blocks of 16
# rows and partials of (N + 15)/16 rows; TENSORC_ROWS_REGS=16 blocks of at
# most 512 threads, 16 elements each
if TENSORC_COLPART_PREFETCH=1 emit $ex/layernorm_backward.tc layernorm_bwd cuda; then
    if [ "$(grep -c 'tc_cp_async<16>' "$tmp/out")" -eq 4 ] && ! grep -q 'tc_cp_async<16>(.*in_w' "$tmp/out" &&
        sed -n '/^launch plan of /,$p' "$tmp/out" | grep -A1 '^  step 0: ' | grep -q 'prefetched into 64 bytes a thread'
    then ok "layernorm_bwd TENSORC_COLPART_PREFETCH=1: x and dout prefetched (two copies twice), 64 bytes a thread"
    else bad "layernorm_bwd TENSORC_COLPART_PREFETCH=1: want x's and dout's copies and the plan's line"; fi
fi
if emit $ex/layernorm_backward.tc layernorm_bwd cuda; then
    if ! grep -qE 'tc_pipe|tc_cp_async|prefetched' "$tmp/out"
    then ok "layernorm_bwd: no prefetch without TENSORC_COLPART_PREFETCH=1"
    else bad "layernorm_bwd: prefetch code without TENSORC_COLPART_PREFETCH=1"; fi
fi
if TENSORC_COL_ROWS=16 emit $ex/layernorm_backward.tc layernorm_bwd plan; then
    if grep -qE '^  buffer cpart[0-9]+ +temp +f32\[\(N \+ 15\)/16, D\]' "$tmp/out" &&
        plan_steps | grep -q '^  step 0: .*<<<(N + 15)/16, '
    then ok "layernorm_bwd TENSORC_COL_ROWS=16: blocks of 16 rows, partials of (N + 15)/16 rows"
    else bad "layernorm_bwd TENSORC_COL_ROWS=16: want a block per 16 rows" "$(plan_steps | head -1)"; fi
fi
if TENSORC_ROWS_REGS=16 emit $ex/layernorm_backward.tc layernorm_bwd sched; then
    if grep -q '^    block \[512, 1, 1\]' "$tmp/out" && grep -q '(32..512 threads, 16 elements each' "$tmp/out"
    then ok "layernorm_bwd TENSORC_ROWS_REGS=16: 16 elements a thread, blocks of at most 512"
    else bad "layernorm_bwd TENSORC_ROWS_REGS=16: want 16 a thread in blocks of at most 512"; fi
fi
count $ex/col_sum.tc col_sum 1   # a column sum alone: no rows kernel to carry it
# refused: the row statistic read at another row (m.T), or a column max: the
# column kernel reads x itself
for fn in colpart_other_row colpart_max; do
    emit $kt $fn cuda || continue
    if [ "$(plan_steps | wc -l)" -eq 2 ] && plan_steps | tail -1 | grep -qE '[(, ]in_x[,)]' &&
        ! grep -q cpart "$tmp/out"; then ok "$fn: not carried as column partials"
    else bad "$fn: want the column kernel to read x itself" "$(plan_steps | tr '\n' '|')"; fi
done
# refused: the column kernel's epilogue reads another kernel's buffer
if emit $kt colpart_epilogue explain; then
    if grep -qE "^  refused .* column partials: the column kernel's epilogue reads a buffer" "$tmp/out"; then
        ok "colpart_epilogue: not carried, explain says why"
    else bad "colpart_epilogue: want the refusal in explain" "$(head -c 600 "$tmp/out")"; fi
fi
if "$tc" run $kt --fn colpart_epilogue --shape N=67,D=9 --random --device=cpu >/dev/null 2>"$tmp/err"; then
    ok "colpart_epilogue: compiles and runs on the interpreter"
else bad "colpart_epilogue: run failed" "$(head -3 "$tmp/err")"; fi
if emit $kt colpart_other_row explain; then
    if grep -qE '^  refused .* column partials: .* at another row' "$tmp/out"; then
        ok "colpart_other_row: explain says why it is not carried"
    else bad "colpart_other_row: explain does not say why the column sum is not carried"; fi
fi

# codegen/keep.c: f32 softmax's epilogue takes the sum pass's exp(x - max)
# from registers (the loads' array dies with that pass); nothing is kept
# where the kept array would take more registers than it frees (bf16: the
# loads are packed), where it saves no library math (layernorm's x - mean,
# log_softmax's x - max), or under TENSORC_ROWS_KEEP=0
keep_lines() { # FN [VAR=VALUE...]: the kept slots' stores in its --emit=cuda
    local fn=$1; shift
    env "$@" "$tc" compile tests/kernels/keep.tc --fn "$fn" >"$tmp/out" 2>"$tmp/err" ||
        { echo -1; return; }
    grep -c "kept for the epilogue" "$tmp/out"
}
n=$(keep_lines softmax_rows)
if [ "$n" -gt 0 ] && ! grep -qE "expf\(.*\) \* rcp" "$tmp/out" &&
    grep -qE "= \(pc[0-9]+\[j \* 4 \+ 0\]\) \* rcp" "$tmp/out"
then ok "softmax_rows f32: the epilogue multiplies the kept exp ($n kept stores), no expf of its own"
else bad "softmax_rows f32: no kept exp in the epilogue ($n kept stores)"; fi
n=$("$tc" compile tests/kernels/keep.tc --fn softmax_rows --dtype T=bf16 2>&1 | grep -c "kept for the epilogue")
if [ "$n" = 0 ]; then ok "softmax_rows bf16: nothing kept (its packed loads free half an f32 array)"
else bad "softmax_rows bf16: $n kept stores"; fi
for fn in layernorm_rows log_softmax_rows; do
    n=$(keep_lines $fn)
    if [ "$n" = 0 ]; then ok "$fn: nothing kept (no library math saved)"
    else bad "$fn: $n kept stores"; fi
done
n=$(keep_lines softmax_rows TENSORC_ROWS_KEEP=0)
if [ "$n" = 0 ]; then ok "softmax_rows f32, TENSORC_ROWS_KEEP=0: nothing kept"
else bad "softmax_rows f32, TENSORC_ROWS_KEEP=0: $n kept stores"; fi

# TENSORC_ROWS_PAIR=2 (sched_online.c's sched_rpair, off by default): the
# max and the sum of exp combined once, the kept exp rescaled to the row's
# max; the default keeps the two combines
n=$(keep_lines softmax_rows TENSORC_ROWS_PAIR=2)
if [ "$n" -gt 0 ] && grep -qE "tc_ms tcp[0-9]+ = tc_ms\{acc[0-9]+, acc[0-9]+\}" "$tmp/out" &&
    grep -qE "tcf[0-9]+ = expf\(acc[0-9]+ - r[0-9]+\)" "$tmp/out" &&
    grep -qE "\(pc[0-9]+\[j \* 4 \+ 0\] \* tcf[0-9]+\)" "$tmp/out"
then ok "softmax_rows f32, TENSORC_ROWS_PAIR=2: one combine of the pair, the kept exp rescaled"
else bad "softmax_rows f32, TENSORC_ROWS_PAIR=2: not the pair's plan ($n kept stores)"; fi
n=$(keep_lines softmax_rows)
if ! grep -q "tc_ms tcp" "$tmp/out"; then ok "softmax_rows f32: no pair by default"
else bad "softmax_rows f32: the pair taken by default"; fi
# TENSORC_MAX_NAN (helpers.cuh): the register rows' max unpredicated by
# default, predicated (and tc_max's tests) with 0
if grep -qE "^ +acc[0-9]+ = tc_op_max\(\)\(acc[0-9]+, pc" "$tmp/out" && ! grep -q "define TC_MAX_NAN 0" "$tmp/out"
then ok "softmax_rows f32: the max unpredicated (TENSORC_MAX_NAN)"
else bad "softmax_rows f32: the max still predicated by default"; fi
keep_lines softmax_rows TENSORC_MAX_NAN=0 >/dev/null
if grep -qE "acc[0-9]+ = tc_in \? tc_op_max" "$tmp/out" && grep -q "define TC_MAX_NAN 0" "$tmp/out"
then ok "softmax_rows f32, TENSORC_MAX_NAN=0: the max predicated, by tc_max"
else bad "softmax_rows f32, TENSORC_MAX_NAN=0: not the old form"; fi

# TENSORC_ROWS_TICKET (rows.c's ticket_loop, on by default): the wide
# softmax kernel's plan step takes the workspace (its ticket) and the
# narrow one none; with 0 neither does, and --emit=sched says which
plan_steps() { env "$@" "$tc" compile bench/cases/softmax.tc --fn softmax --emit=plan 2>&1 | grep -E "^  step [0-9]+: "; }
if plan_steps | grep -q "_w<<<.*, workspace)$" && ! plan_steps | grep -q "_0<<<.*workspace" &&
    "$tc" compile bench/cases/softmax.tc --fn softmax --emit=sched | grep -q "TENSORC_ROWS_TICKET"
then ok "softmax f32: the wide kernel takes its rows by ticket (the workspace), the narrow one not"
else bad "softmax f32: no ticket in the wide kernel's plan" "$(plan_steps)"; fi
if ! plan_steps TENSORC_ROWS_TICKET=0 | grep -q workspace &&
    ! TENSORC_ROWS_TICKET=0 "$tc" compile bench/cases/softmax.tc --fn softmax --emit=sched | grep -q "TENSORC_ROWS_TICKET"
then ok "softmax f32, TENSORC_ROWS_TICKET=0: every step-th row, no workspace"
else bad "softmax f32, TENSORC_ROWS_TICKET=0: a workspace or ticket still" "$(plan_steps TENSORC_ROWS_TICKET=0)"; fi

# The unrolled budget weighs sin, cos, pow and atan2 (sched_budget.c): a rows
# kernel of two trig calls (a fuzz program that took NVRTC 18.6 s for sm_90
# unrolled) goes compact; x ** 2 is a product (codegen/emit.c), not powf, and
# not weighed
if "$tc" compile tests/fuzz/corpus/compile/rand_p007.tc --fn f --emit=sched 2>&1 | grep -q "^    compact:"
then ok "rand_p007 (sin, cos in a row reduction): compact, library math called"
else bad "rand_p007: not compact (NVRTC unrolls its trig 48 times a thread)"; fi
if emit tests/golden/extra/lang_functions.tc moments cuda && ! grep -q "powf(" "$tmp/out" &&
    grep -qE "t[0-9]+ \* t[0-9]+; +// lang_functions.tc:11" "$tmp/out" && grep -q "_w(" "$tmp/out"
then ok "lang_functions (x - mu) ** 2: a product, no powf; the wide rows kernel kept"
else bad "lang_functions: (x - mu) ** 2 not a product, or the wide kernel lost"; fi

# An f32 logcumsumexp carried as (max, sum) (scan.cuh): its step keeps
# far-below terms precise only where its value is read (logform.c's
# cg_lse_value_read): the minGRU reads it only as exp(a + s) (the cheap
# step), scans.tc's chain subtracts a from it (the value, compensated)
if emit $ex/mingru.tc mingru cuda && grep -q "tc_lse_add<false>(" "$tmp/out" && ! grep -q "tc_lse_add<true>(" "$tmp/out"
then ok "mingru: the logcumsumexp read only through exp takes the cheap step"
else bad "mingru: want tc_lse_add<false> alone" "$(grep -o 'tc_lse_add<[a-z]*>' "$tmp/out" | sort | uniq -c | tr '\n' ' ')"; fi
if emit tests/gpu/scans.tc chain cuda && grep -q "tc_lse_add<true>(" "$tmp/out" && grep -q "tc_lse_value(" "$tmp/out"
then ok "scans chain: the logcumsumexp whose value is read takes the compensated step"
else bad "scans chain: want tc_lse_add<true>" "$(grep -o 'tc_lse_add<[a-z]*>' "$tmp/out" | sort | uniq -c | tr '\n' ' ')"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
