#!/usr/bin/env bash
# tests/gpu/matmul.sh BUILD [OUTDIR] - the generated matmul kernel
# (src/codegen/matmul.cuh) against the reference interpreter on the GPU:
# every layout of examples/skinny_matmul.tc in f16, bf16 and f32 at
# M = 1, 3, 17, 33, 64, 65, 200 (TENSORC_MATMUL=generated: the kernel at
# every M, 16- and 64-row tiles), K and N not multiples of any tile (and 1),
# batched products, other seeds; then the cost model's own choice (M = 3:
# the kernel, M = 17: cuBLAS), the pointwise epilogues fused into the
# kernel (tests/gpu/matmul_epilogue.tc), the row-scale rule (an RMSNorm in the
# kernel: tests/gpu/matmul_norm.tc), the pair rule (two products of one x in
# one kernel: tests/gpu/matmul_pair.tc), the adapter rule (LoRA in one kernel:
# tests/gpu/matmul_lora.tc), the epilogue rule (M symbolic: the pointwise
# kernel in the generated one at M <= 16) and the examples with a matmul; with
# TC_MATMUL_KNOBS=1 the streaming variants' knobs too (below).  Prints
# "N passed, M failed"; exit 1 on failure.
set -u
build=${1:-build}
out=${2:-${OUT:-/tmp}}
mkdir -p "$out" || exit 1
tc="$build/tensorc"
jobs="$out/matmul_jobs.txt"
: >"$jobs"
for dt in f16 bf16 f32; do
    for fn in linear_t matmul_kn matmul_ta; do
        for M in 1 3 17 33 64; do
            for KN in K=1,N=1 K=37,N=13 K=1000,N=130 K=4096,N=520 K=600,N=4097; do
                echo "generated examples/skinny_matmul.tc --fn $fn --shape M=$M,$KN --dtype T=$dt" >>"$jobs"
            done
        done
        for M in 65 200; do
            echo "generated examples/skinny_matmul.tc --fn $fn --shape M=$M,K=1000,N=130 --dtype T=$dt" >>"$jobs"
        done
        for M in 3 17; do
            echo "- examples/skinny_matmul.tc --fn $fn --shape M=$M,K=1000,N=130 --dtype T=$dt" >>"$jobs"
        done
    done
    for B in 1 3; do
        for M in 1 17; do
            echo "generated examples/skinny_matmul.tc --fn batched --shape B=$B,M=$M,K=1000,N=130 --dtype T=$dt" >>"$jobs"
            echo "generated examples/skinny_matmul.tc --fn batched --shape B=$B,M=$M,K=37,N=13 --dtype T=$dt" >>"$jobs"
        done
    done
    for s in 1 2 3; do
        echo "generated examples/skinny_matmul.tc --fn linear_t --shape M=5,K=4097,N=77 --dtype T=$dt --seed $s" >>"$jobs"
    done
done
# fused epilogues (tests/gpu/matmul_epilogue.tc): under TENSORC_MATMUL=generated
# at every M (16- and 64-row tiles), one K slice and several (the combine);
# the *_16 functions fused by the cost model's own choice
ep=tests/gpu/matmul_epilogue.tc
for dt in f16 bf16 f32; do
    for fn in bias_gelu linear_residual gate_input cast_scale relu_clip; do
        for M in 1 3 16 17 64; do
            for KN in K=37,N=13 K=1000,N=130 K=4097,N=77; do
                # f32 (FMA path, fused only under the override): fewer
                [ $dt = f32 ] && [ $M != 3 ] && [ $M != 17 ] && continue
                # relu_clip keeps outputs in [0, 0.5], so --check's scale is 1
                # while a product over K = 4097 f32 terms is ~20 in size: its
                # f32 rounding (2.4e-5 on an H200, 2e-8 of the sum of |terms|)
                # passes 2e-5 of 1 with no error in the kernel; the other four
                # functions check that path at this K with the product's scale
                [ $dt = f32 ] && [ $fn = relu_clip ] && [ $KN = K=4097,N=77 ] && continue
                echo "generated $ep --fn $fn --shape M=$M,$KN --dtype T=$dt" >>"$jobs"
            done
        done
    done
    for fn in bias_gelu_16 linear_residual_16; do
        for KN in K=1,N=1 K=37,N=13 K=4097,N=77 K=4096,N=4096; do
            echo "- $ep --fn $fn --shape $KN --dtype T=$dt" >>"$jobs"
        done
    done
done
# the row-scale rule (tests/gpu/matmul_norm.tc): an RMSNorm inside the
# generated kernel, one K slice and several, 16- and 64-row tiles (under the
# override), M = 16 fixed without it; rms_out is the rule's refusal
nm=tests/gpu/matmul_norm.tc
for dt in f16 bf16 f32; do
    for fn in rms_g rms_plain rms_bias_silu rms_out; do
        for M in 1 3 17 64; do
            for KN in K=1,N=1 K=37,N=13 K=1000,N=130 K=4097,N=77; do
                [ $dt = f32 ] && [ $M != 3 ] && continue
                echo "generated $nm --fn $fn --shape M=$M,$KN --dtype T=$dt" >>"$jobs"
            done
        done
        echo "- $nm --fn $fn --shape M=3,K=1000,N=130 --dtype T=$dt" >>"$jobs"
        echo "- $nm --fn $fn --shape M=17,K=1000,N=130 --dtype T=$dt" >>"$jobs"
    done
    for fn in rms_g_16 rms_bias_silu_16; do
        for KN in K=1,N=1 K=37,N=13 K=4097,N=77 K=4096,N=4096; do
            echo "- $nm --fn $fn --shape $KN --dtype T=$dt" >>"$jobs"
        done
    done
done
# the pair rule (tests/gpu/matmul_pair.tc): two products of one x in one
# kernel, likewise; mixed is the rule's refusal
pr=tests/gpu/matmul_pair.tc
for dt in f16 bf16 f32; do
    for fn in gated two_linear mixed; do
        for M in 1 3 17 64; do
            for KN in K=1,N=1 K=37,N=13 K=1000,N=130 K=4097,N=77; do
                [ $dt = f32 ] && [ $M != 3 ] && continue
                echo "generated $pr --fn $fn --shape M=$M,$KN --dtype T=$dt" >>"$jobs"
            done
        done
        echo "- $pr --fn $fn --shape M=3,K=1000,N=130 --dtype T=$dt" >>"$jobs"
        echo "- $pr --fn $fn --shape M=17,K=1000,N=130 --dtype T=$dt" >>"$jobs"
    done
    for fn in gated_16 gated_out_16; do
        for KN in K=1,N=1 K=37,N=13 K=4097,N=77 K=4096,N=4096; do
            echo "- $pr --fn $fn --shape $KN --dtype T=$dt" >>"$jobs"
        done
    done
done
# the adapter rule (tests/gpu/matmul_lora.tc): LoRA in one kernel, likewise,
# the rank within one 64-column chunk and past it; lora_out is the refusal
lr=tests/gpu/matmul_lora.tc
for dt in f16 bf16 f32; do
    for fn in lora lora_t lora_out; do
        for M in 1 3 17 64; do
            for KN in K=37,N=13,R=5 K=1000,N=130,R=16 K=4097,N=77,R=65; do
                [ $dt = f32 ] && [ $M != 3 ] && continue
                echo "lora+generated $lr --fn $fn --shape M=$M,$KN --dtype T=$dt" >>"$jobs"
            done
        done
        echo "lora $lr --fn $fn --shape M=3,K=1000,N=130,R=16 --dtype T=$dt" >>"$jobs"
        echo "lora $lr --fn $fn --shape M=17,K=1000,N=130,R=16 --dtype T=$dt" >>"$jobs"
    done
    for fn in lora_16 lora_t_16; do
        for KN in K=1,N=1,R=1 K=37,N=13,R=3 K=4097,N=77,R=130 K=4096,N=4096,R=16; do
            echo "lora $lr --fn $fn --shape $KN --dtype T=$dt" >>"$jobs"
        done
    done
done
# rows of whole 16-byte chunks (K, N, R multiples of 8, of no tile): the
# stages' plans of mmtile.cuh (copies without edge tests; x's rows past M
# stored as zeros) under the row-scale, pair and adapter rules, the ldmatrix
# fragments of every layout
for dt in f16 bf16; do
    for M in 1 3 17; do
        for fn in rms_g rms_plain; do
            echo "generated $nm --fn $fn --shape M=$M,K=1096,N=136 --dtype T=$dt" >>"$jobs"
        done
        for fn in gated mixed; do
            echo "generated $pr --fn $fn --shape M=$M,K=4096,N=520 --dtype T=$dt" >>"$jobs"
        done
        echo "lora+generated $lr --fn lora --shape M=$M,K=1096,N=136,R=16 --dtype T=$dt" >>"$jobs"
        for fn in linear_t matmul_kn matmul_ta; do
            echo "generated examples/skinny_matmul.tc --fn $fn --shape M=$M,K=2056,N=72 --dtype T=$dt" >>"$jobs"
        done
    done
done
echo "- examples/gated_mlp.tc --shape M=3,K=1000,N=130" >>"$jobs"
echo "- examples/gated_mlp.tc --shape M=16,K=4096,N=11008" >>"$jobs"
echo "- examples/lora.tc --shape M=5,K=1000,N=130,R=16" >>"$jobs"
echo "- examples/lora.tc --shape M=16,K=4096,N=4096,R=16" >>"$jobs"
echo "lora examples/lora.tc --shape M=16,K=4096,N=4096,R=16" >>"$jobs"
echo "- examples/rmsnorm_matmul.tc --fn rmsnorm_matmul --shape M=3,K=1000,N=130" >>"$jobs"
echo "- examples/rmsnorm_matmul.tc --fn rmsnorm_matmul --shape M=16,K=4096,N=4096" >>"$jobs"
echo "generated examples/rmsnorm_matmul.tc --fn rmsnorm_matmul --shape M=64,K=4096,N=4096" >>"$jobs"
echo "- examples/mlp_block.tc --fn mlp_block --shape N=3,D=64,H=256" >>"$jobs"
echo "- examples/mlp_block.tc --fn dense_gelu --shape N=17,D=100,H=33" >>"$jobs"
echo "- examples/attention_scores.tc --fn attention_scores --shape B=2,H=3,S=5,L=33,E=64" >>"$jobs"
# the epilogue rule (fuse.h's fuse_mm_epilogues; TC_MATMUL_FILTER=MATMUL_EPILOGUE
# selects these): M symbolic and no override, so at M <= 16 the generated
# kernel stores the pointwise kernel's values too (that kernel not
# launched), past 16 cuBLAS and the pointwise kernel; gated's gate reads
# both products, lora's sum x @ W from memory (lora_t under
# TENSORC_MATMUL_LORA=on: the adapter's other product), rms_bias_silu with
# the row-scale rule, cast_scale an f32 second output; K one slice and five
e="knobs:TENSORC_MATMUL_EPILOGUE=on"
for dt in f16 bf16; do
    for M in 1 3 16 17 64; do
        for KN in K=37,N=13 K=4097,N=77; do
            echo "$e+- $pr --fn gated --shape M=$M,$KN --dtype T=$dt" >>"$jobs"
            echo "$e+- $ep --fn bias_gelu --shape M=$M,$KN --dtype T=$dt" >>"$jobs"
            echo "$e+- $ep --fn cast_scale --shape M=$M,$KN --dtype T=$dt" >>"$jobs"
            echo "$e+- $nm --fn rms_bias_silu --shape M=$M,$KN --dtype T=$dt" >>"$jobs"
            echo "$e+- $lr --fn lora --shape M=$M,$KN,R=16 --dtype T=$dt" >>"$jobs"
            echo "$e+lora $lr --fn lora_t --shape M=$M,$KN,R=65 --dtype T=$dt" >>"$jobs"
            # the rule's edges: two left operands, a chain, its refusals
            for fn in two_sources mlp2 col_scaled; do
                echo "$e+- $ep --fn $fn --shape M=$M,$KN --dtype T=$dt" >>"$jobs"
            done
            echo "$e+- $ep --fn residual_io --shape M=$M,${KN%,N=*} --dtype T=$dt" >>"$jobs"
        done
    done
done
for M in 1 3 16 17 64; do
    echo "$e+- examples/gated_mlp.tc --shape M=$M,K=4096,N=11008" >>"$jobs"
    echo "$e+- examples/lora.tc --shape M=$M,K=4096,N=4096,R=16" >>"$jobs"
    echo "$e+lora examples/lora.tc --shape M=$M,K=4096,N=4096,R=16" >>"$jobs"
done
# who fences around the K slices' ticket (TENSORC_MATMUL_FENCE: the default
# one thread above; 2 one thread's fence.acq_rel; 0 every thread, the old)
# and the work items slice by slice (TENSORC_MATMUL_ORDER=1), the weight's
# copies with the L2's prefetch, the kernel for 5 or 6 blocks a SM
# (TENSORC_MATMUL_STREAM=l2pf, occ5, occ6), at the decode
# shapes and with many slices (K = 16400: 17)
for f in FENCE=0 FENCE=2 ORDER=1 STREAM=l2pf STREAM=occ5 STREAM=occ6; do
    echo "knobs:TENSORC_MATMUL_$f+- examples/rmsnorm_matmul.tc --fn rmsnorm_matmul --shape M=16,K=4096,N=4096" >>"$jobs"
    echo "knobs:TENSORC_MATMUL_$f+- examples/gated_mlp.tc --shape M=16,K=4096,N=11008" >>"$jobs"
    echo "knobs:TENSORC_MATMUL_$f+lora examples/lora.tc --shape M=16,K=4096,N=4096,R=16" >>"$jobs"
    echo "knobs:TENSORC_MATMUL_$f+generated $nm --fn rms_g --shape M=17,K=16400,N=130 --dtype T=bf16" >>"$jobs"
done
# 128- and 256-column 16-row tiles (TENSORC_MATMUL_BN, issue 13's wide
# row pieces; TC_MATMUL_FILTER=MATMUL_BN selects these): the decode shapes
# by the cost model's own choice (the adapter rule falls back to 64), N off
# the wide tile, the kernel's K-slice rule (KS 256 to 1024: K 4096 at N 520
# is 16 slices of 256; K 16400 at N 4097 keeps 1024), TENSORC_MATMUL_KSLICE
# over it, batch, and the stage knobs beside it
for bn in 128 256; do
    k="knobs:TENSORC_MATMUL_BN=$bn"
    echo "$k+- examples/rmsnorm_matmul.tc --fn rmsnorm_matmul --shape M=16,K=4096,N=4096" >>"$jobs"
    echo "$k+- examples/rmsnorm_matmul.tc --fn rmsnorm_matmul --shape M=1,K=4096,N=4096" >>"$jobs"
    echo "$k+- examples/gated_mlp.tc --shape M=16,K=4096,N=11008" >>"$jobs"
    echo "$k+- examples/gated_mlp.tc --shape M=1,K=4096,N=11008" >>"$jobs"
    echo "$k+- examples/lora.tc --shape M=16,K=4096,N=4096,R=16" >>"$jobs"
    echo "$k+lora examples/lora.tc --shape M=16,K=4096,N=4096,R=16" >>"$jobs"
    for dt in f16 bf16; do
        for M in 1 3 17; do
            echo "$k+generated $nm --fn rms_g --shape M=$M,K=4097,N=200 --dtype T=$dt" >>"$jobs"
            echo "$k+generated $pr --fn gated --shape M=$M,K=1000,N=4097 --dtype T=$dt" >>"$jobs"
            echo "$k+generated examples/skinny_matmul.tc --fn matmul_ta --shape M=$M,K=1000,N=300 --dtype T=$dt" >>"$jobs"
            echo "$k+generated examples/skinny_matmul.tc --fn matmul_kn --shape M=$M,K=4096,N=520 --dtype T=$dt" >>"$jobs"
        done
        echo "$k+generated examples/skinny_matmul.tc --fn linear_t --shape M=1,K=16400,N=4097 --dtype T=$dt" >>"$jobs"
        echo "$k+generated examples/skinny_matmul.tc --fn batched --shape B=3,M=3,K=1000,N=300 --dtype T=$dt" >>"$jobs"
    done
done
for kn in TENSORC_MATMUL_BN=256,TENSORC_MATMUL_KSLICE=512 TENSORC_MATMUL_BN=256,TENSORC_MATMUL_STAGES=2 \
          TENSORC_MATMUL_BN=256,TENSORC_MATMUL_BK=64,TENSORC_MATMUL_STAGES=2 TENSORC_MATMUL_BN=256,TENSORC_MATMUL_RESIDENT=1 \
          TENSORC_MATMUL_BN=128,TENSORC_MATMUL_STAGES=8 TENSORC_MATMUL_BN=256,TENSORC_MATMUL_FENCE=2; do
    echo "knobs:$kn+- examples/rmsnorm_matmul.tc --fn rmsnorm_matmul --shape M=16,K=4096,N=4096" >>"$jobs"
    echo "knobs:$kn+- examples/gated_mlp.tc --shape M=16,K=4096,N=11008" >>"$jobs"
    echo "knobs:$kn+generated $nm --fn rms_g --shape M=3,K=16400,N=130 --dtype T=bf16" >>"$jobs"
done
# TENSORC_MATMUL_KAUTO=1 and 2 (TC_MATMUL_FILTER=MATMUL_KAUTO): 64-wide tiles
# take the launch-time K slices too (few tiles over a long K: a LoRA's x @ A
# at N = 16 gets 16 slices of 256 at 1, 32 of 128 at 2), the rules and
# layouts under it
for ka in 1 2; do
    k="knobs:TENSORC_MATMUL_KAUTO=$ka"
    echo "$k+- examples/lora.tc --shape M=16,K=4096,N=4096,R=16" >>"$jobs"
    echo "$k+- examples/rmsnorm_matmul.tc --fn rmsnorm_matmul --shape M=16,K=4096,N=4096" >>"$jobs"
    echo "$k+- examples/gated_mlp.tc --shape M=1,K=4096,N=11008" >>"$jobs"
    for dt in f16 bf16; do
        for M in 1 3 17; do
            echo "$k+generated examples/skinny_matmul.tc --fn linear_t --shape M=$M,K=4100,N=16 --dtype T=$dt" >>"$jobs"
            echo "$k+generated $nm --fn rms_g --shape M=$M,K=4097,N=13 --dtype T=$dt" >>"$jobs"
            echo "$k+generated $pr --fn gated --shape M=$M,K=4100,N=77 --dtype T=$dt" >>"$jobs"
        done
    done
    echo "$k+generated examples/skinny_matmul.tc --fn matmul_ta --shape M=3,K=4100,N=13 --dtype T=f32" >>"$jobs"
done

# a value two outputs return, computed by cuBLAS, the generated matmul or
# the attention kernel (the plan copies it: tests/gpu/outputs_twice.tc)
ot=tests/gpu/outputs_twice.tc
for dt in f16 bf16 f32; do
    for M in 1 17; do
        echo "- $ot --fn mm_twice --shape M=$M,K=1000,N=130 --dtype T=$dt" >>"$jobs"
        echo "- $ot --fn mm_twice_silu --shape M=$M,K=37,N=13 --dtype T=$dt" >>"$jobs"
        echo "- $ot --fn rms_mm_fwd --shape M=$M,K=1000,N=130 --dtype T=$dt" >>"$jobs"
    done
    echo "- $ot --fn attn_twice --shape B=2,KVH=2,G=8,L=129 --dtype T=$dt" >>"$jobs"
done

# TC_MATMUL_KNOBS=1: the streaming variants too (TENSORC_MATMUL_STAGES, _BK,
# _RESIDENT, _FENCE=0 and 2, _NORM=off, _ORDER=1, _STREAM, README's knob table), each setting over a quick set: the
# row-scale, pair and adapter rules and plain layouts at M = 1, 3, 17 (K, N
# off every tile, several K slices) under the override, and the decode
# shapes by the cost model's own choice.  A job's first word is then
# "knobs:VAR=V,VAR=V+FORCE".
if [ "${TC_MATMUL_KNOBS:-0}" = 1 ]; then
    R=TENSORC_MATMUL_RESIDENT
    for kn in TENSORC_MATMUL_STAGES={2,3,5,6,8} TENSORC_MATMUL_BK={32,128} $R=1 $R=7 \
              TENSORC_MATMUL_STAGES=6,$R=1 TENSORC_MATMUL_STAGES=4,TENSORC_MATMUL_BK=128,$R=1 \
              TENSORC_MATMUL_FENCE=0 TENSORC_MATMUL_FENCE=2 TENSORC_MATMUL_NORM=off TENSORC_MATMUL_FENCE=0,$R=1 \
              TENSORC_MATMUL_ORDER=1 TENSORC_MATMUL_ORDER=1,$R=7 \
              TENSORC_MATMUL_STREAM=l2pf TENSORC_MATMUL_STREAM=occ6 TENSORC_MATMUL_STREAM=occ6,$R=1 \
              TENSORC_MATMUL_BN=256 TENSORC_MATMUL_BN=128 TENSORC_MATMUL_BN=256,$R=1; do
        for dt in f16 bf16; do
            for M in 1 3 17; do
                echo "knobs:$kn+generated $nm --fn rms_g --shape M=$M,K=4097,N=77 --dtype T=$dt" >>"$jobs"
                echo "knobs:$kn+generated $pr --fn gated --shape M=$M,K=1000,N=130 --dtype T=$dt" >>"$jobs"
                echo "knobs:$kn+lora+generated $lr --fn lora --shape M=$M,K=4097,N=77,R=65 --dtype T=$dt" >>"$jobs"
                echo "knobs:$kn+generated examples/skinny_matmul.tc --fn matmul_ta --shape M=$M,K=1000,N=130 --dtype T=$dt" >>"$jobs"
            done
        done
        echo "knobs:$kn+generated examples/skinny_matmul.tc --fn linear_t --shape M=3,K=1000,N=130 --dtype T=f32" >>"$jobs"
        echo "knobs:$kn+- examples/rmsnorm_matmul.tc --fn rmsnorm_matmul --shape M=16,K=4096,N=4096" >>"$jobs"
        echo "knobs:$kn+- examples/gated_mlp.tc --shape M=16,K=4096,N=11008" >>"$jobs"
        echo "knobs:$kn+lora examples/lora.tc --shape M=16,K=4096,N=4096,R=16" >>"$jobs"
    done
fi

# TC_MATMUL_FILTER=REGEX: only the jobs whose line matches (a quick look at one part)
if [ -n "${TC_MATMUL_FILTER:-}" ]; then
    grep -E -- "$TC_MATMUL_FILTER" "$jobs" >"$jobs.f" || true
    mv "$jobs.f" "$jobs"
fi
# TC_MATMUL_SAMPLE=N: every Nth job of the shape grids, and every job that is
# one of a kind (the examples, the knob settings, the whole-chunk shapes), so
# that one GPU call still reaches every function, dtype and rule (the whole
# list took over 5 minutes on an H200 with 14 jobs at once)
if [ "${TC_MATMUL_SAMPLE:-1}" -gt 1 ]; then
    awk -v n="$TC_MATMUL_SAMPLE" '/^knobs:|outputs_twice|examples\/(gated_mlp|lora|rmsnorm_matmul|mlp_block|attention_scores)|K=1096|K=2056|K=4096,N=520/ ||
        (NR - 1) % n == 0' \
        "$jobs" >"$jobs.f"
    mv "$jobs.f" "$jobs"
fi
one() ( # a subshell: a job's knobs stay its own
    local force=$1 label=$1
    shift
    local log kv=()
    log=$(mktemp)
    if [ "${force#knobs:}" != "$force" ]; then # knobs:VAR=V,VAR=V+FORCE
        local k=${force#knobs:}
        IFS=, read -ra kv <<<"${k%%+*}"
        force=${k#*+}
    fi
    [ ${#kv[@]} -gt 0 ] && export "${kv[@]}"
    if [ "$force" = generated ]; then
        TENSORC_MATMUL=generated timeout 300 "$tc" run "$@" --random --check --device=cuda >"$log" 2>&1
    elif [ "$force" = lora ] || [ "$force" = lora+generated ]; then
        # the adapter rule is opt-in (TENSORC_MATMUL_LORA=on) until these pass on a GPU
        if [ "$force" = lora ]; then m=; else m=generated; fi
        TENSORC_MATMUL_LORA=on TENSORC_MATMUL=$m timeout 300 "$tc" run "$@" --random --check --device=cuda >"$log" 2>&1
    else
        timeout 300 "$tc" run "$@" --random --check --device=cuda >"$log" 2>&1
    fi
    local rc=$?
    if [ $rc -eq 0 ]; then echo "PASS $label $*"; else echo "FAIL($rc) $label $*"; tail -4 "$log" | sed 's/^/    /'; fi
    rm -f "$log"
)
export -f one
export tc
# compile each unit once first (the kernel cache), then run in parallel
xargs -P "${TC_GPU_JOBS:-12}" -L 1 bash -c 'one "$@"' _ <"$jobs" >"$out/matmul_results.txt" 2>&1
pass=$(grep -c '^PASS' "$out/matmul_results.txt")
fail=$(grep -c '^FAIL' "$out/matmul_results.txt")
grep -A4 '^FAIL' "$out/matmul_results.txt" | head -80
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
