/* cases.c - the benchmark suite of ../shared/bench/suite.md, one row per case.
 *
 * Each case names a program in bench/cases/ (copies of the examples, so the
 * benchmark does not move when an example is edited), the function, and its
 * sizes by symbol.  `small` is the shape the cold/warm children and --quick
 * use: the generated code does not depend on sizes (only a 32- or 64-bit
 * index plan does, and every small shape stays on the 32-bit one, as every
 * full one does), so compile time is measured on it without paying for a
 * reference check of 64M elements twice more.  Row sizes (D) are kept, so
 * the same row strategy runs.
 *
 * `split` declares the symbol along which the function's rows are
 * independent (softmax's N, a pointwise [*]): the reference check runs in
 * chunks of it on every core.  check.c refuses a split the shapes contradict
 * (the symbol reduced away, or used twice); a wrong declaration could only
 * make a check fail, not pass.
 *
 * Foreach cases (CASE_FOREACH: AdamW over a model's tensors) run one
 * tc_run_foreach per step over a set of tensor groups, `set` (and
 * `set_quick` for --quick, see foreach_sizes); their `shape` and `small`
 * are one group's, which is what cold/warm and the self-test compile and run
 * (tc_run on an elementwise function is the same kernel over one group).
 *
 * The names are the peers' too (bench/peers.py): report.py joins on them.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#define M64 "67108864" /* 64M elements: 256 MB of f32 */
#define GRAD_NOTE "the gradient alone (recomputes the forward's scans); state drawn from [0, 1); f32 tolerance 1e-4"


const bench_case bench_cases[] = {
    {"gelu_chain", "gelu_chain.tc", "gelu_chain", "*=" M64, "*=1048576", "*", false, CASE_PLAIN,
     NULL, NULL, NULL, NULL, NULL, 0},
    {"fma4", "fma4.tc", "fma4", "*=" M64, "*=1048576", "*", false, CASE_PLAIN, NULL, NULL, NULL,
     NULL, NULL, 0},
    {"bias_gelu", "bias_gelu.tc", "bias_gelu", "N=8192,D=8192", "N=64,D=8192", "N", false,
     CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"transpose_add", "transpose_add.tc", "transpose_add", "N=8192,M=8192", "N=256,M=256", "M",
     false, CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"softmax_16384x4096", "softmax.tc", "softmax", "N=16384,D=4096", "N=64,D=4096", "N", false,
     CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"softmax_32768x1024", "softmax.tc", "softmax", "N=32768,D=1024", "N=64,D=1024", "N", false,
     CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"layernorm", "layernorm.tc", "layernorm", "N=16384,D=4096", "N=64,D=4096", "N", false,
     CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"rmsnorm_f32", "rmsnorm.tc", "rmsnorm_f32", "N=16384,D=4096", "N=64,D=4096", "N", false,
     CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"rmsnorm_bf16", "rmsnorm.tc", "rmsnorm_bf16", "N=16384,D=4096", "N=64,D=4096", "N", false,
     CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"row_sum", "row_sum.tc", "row_sum", "N=16384,D=4096", "N=64,D=4096", "N", false, CASE_PLAIN,
     NULL, NULL, NULL, NULL, NULL, 0},
    {"col_sum", "col_sum.tc", "col_sum", "N=16384,D=4096", "N=256,D=4096", "D", false, CASE_PLAIN,
     NULL, NULL, NULL, NULL, NULL, 0},
    {"full_sum", "full_sum.tc", "full_sum", "*=" M64, "*=1048576", NULL, false, CASE_PLAIN, NULL,
     NULL, NULL, NULL, NULL, 0},
    {"small_softmax", "softmax.tc", "softmax", "N=32,D=128", "N=32,D=128", "N", true, CASE_PLAIN,
     NULL, NULL, NULL, NULL, NULL, 0},
    {"small_chain", "gelu_chain.tc", "gelu_chain", "*=4096", "*=4096", "*", true, CASE_PLAIN, NULL,
     NULL, NULL, NULL, NULL, 0},
    /* four kernels a call: the per-kernel figure of a captured replay (issue 14) */
    {"small_chain4", "chain4.tc", "chain4", "N=32,D=128", "N=32,D=128", NULL, true, CASE_PLAIN,
     NULL, NULL, "four kernels (column and row sums in turn) and three temporaries", NULL, NULL, 0},
    /* torch.optim.AdamW's defaults but weight decay 0.01, bias correction at
     * step 1; one tc_run_foreach per step over suite.md's 240 tensors, and
     * over 2000 small ones (issue 6) */
    {"adamw", "adamw.tc", "adamw", "*=1048576", "*=1048576", "*", false, CASE_FOREACH,
     "lr=1e-3,beta1=0.9,beta2=0.999,eps=1e-8,wd=0.01,step=1", "v",
     "one tc_run_foreach call per step over all the tensors", "transformer:24", "transformer:1", 0},
    {"adamw_2000x4096", "adamw.tc", "adamw", "*=4096", "*=4096", "*", false, CASE_FOREACH,
     "lr=1e-3,beta1=0.9,beta2=0.999,eps=1e-8,wd=0.01,step=1", "v",
     "one tc_run_foreach call per step over 2000 tensors of 4096 elements", "4096*2000",
     "4096*2000", 0},
    {"rmsnorm_matmul", "rmsnorm_matmul.tc", "rmsnorm_matmul", "M=16,K=4096,N=4096",
     "M=16,K=1024,N=1024", "M", false, CASE_PLAIN, NULL, NULL,
     "the matmul runs in tensorc's generated kernel (M <= 16; TENSORC_MATMUL=cublas for cuBLAS); "
     "W (32 MB) fits in an H100/H200 L2, so back-to-back calls read it from L2 (the peers' too)",
     NULL, NULL, 0},
    /* issue 15: the log-space minGRU forward (suite.md), one scan kernel */
    {"mingru_fwd_B512_T64_H128_f32", "mingru.tc", "mingru", "B=512,T=64,H=128", "B=8,T=64,H=128", "B",
     false, CASE_PLAIN, NULL, "state", "combined is [B, T, 3, H]: the same memory as the peers' [B, T, 3H]; state drawn from [0, 1) (its log is step 0)", NULL, NULL, 0},
    {"mingru_fwd_B1024_T64_H256_f32", "mingru.tc", "mingru", "B=1024,T=64,H=256", "B=8,T=64,H=256", "B",
     false, CASE_PLAIN, NULL, "state", "combined is [B, T, 3, H]: the same memory as the peers' [B, T, 3H]; state drawn from [0, 1) (its log is step 0)", NULL, NULL, 0},
    {"mingru_fwd_B2048_T64_H512_f32", "mingru.tc", "mingru", "B=2048,T=64,H=512", "B=8,T=64,H=512", "B",
     false, CASE_PLAIN, NULL, "state", "combined is [B, T, 3, H]: the same memory as the peers' [B, T, 3H]; state drawn from [0, 1) (its log is step 0)", NULL, NULL, 0},
    /* issue 15: backward passes of vjp pairs (the backward alone, given what
     * its forward saved; the peers get the same saved values).  No split:
     * dw and db sum over the rows. */
    {"layernorm_bwd_16384x4096", "layernorm_backward.tc", "layernorm_bwd", "N=16384,D=4096",
     "N=64,D=4096", NULL, false, CASE_PLAIN, NULL, "saved_var",
     "dx, dw, db from x, w, dout and the saved mean and variance (peers: aten's "
     "native_layer_norm_backward); compile time is the pair's file", NULL, NULL, 0},
    {"rmsnorm_bwd_16384x4096", "rmsnorm_backward.tc", "rmsnorm_bwd", "N=16384,D=4096",
     "N=64,D=4096", NULL, false, CASE_PLAIN, NULL, "saved_mean",
     "dx, dg from x, g, dout and the saved mean of squares", NULL, NULL, 0},
    {"mlp_bwd_N1024_D512_H2048", "mlp_backward.tc", "mlp_bwd", "N=1024,D=512,H=2048",
     "N=16,D=128,H=512", NULL, false, CASE_PLAIN, NULL, NULL,
     "gelu MLP block: dx, dw1, db1, dw2 from the saved x @ w1.T (four cuBLAS f32 products); "
     "small so the f64 reference check stays short", NULL, NULL, 0},
    /* issue 15: its gradient, mingru_grad(combined, state, dout, dnext) ->
     * (dcombined, dstate): grad() recomputes the forward's scans inside (no
     * forward state is saved between calls), so a training step is this and
     * the forward case above; the peers run their forward and autograd
     * backward, as torch.autograd.grad from the same inputs does.
     * Tolerance 1e-4: the gradient through 64 log-space steps loses more than
     * 1e-5 to f32 rounding (H200, 2026-11-27: 1.03e-5 and 1.08e-5 of the
     * scale at B1024 and B2048, the same bits with and without checkpoints),
     * while the same kernels in f64 (mingru_backward.tc with f64 types) match
     * the interpreter to 1.4e-14: the arithmetic is right, f32 is the limit */
    {"mingru_grad_B512_T64_H128_f32", "mingru_backward.tc", "mingru_grad", "B=512,T=64,H=128", "B=8,T=64,H=128",
     "B", false, CASE_PLAIN, NULL, "state", GRAD_NOTE, NULL, NULL, 1e-4},
    {"mingru_grad_B1024_T64_H256_f32", "mingru_backward.tc", "mingru_grad", "B=1024,T=64,H=256", "B=8,T=64,H=256",
     "B", false, CASE_PLAIN, NULL, "state", GRAD_NOTE, NULL, NULL, 1e-4},
    {"mingru_grad_B2048_T64_H512_f32", "mingru_backward.tc", "mingru_grad", "B=2048,T=64,H=512", "B=8,T=64,H=512",
     "B", false, CASE_PLAIN, NULL, "state", GRAD_NOTE, NULL, NULL, 1e-4},
    /* issue 13: the same at other M (the generated kernel up to 16, cuBLAS
     * above), a gated MLP and a LoRA projection at decode shapes */
    {"rmsnorm_matmul_m1", "rmsnorm_matmul.tc", "rmsnorm_matmul", "M=1,K=4096,N=4096",
     "M=1,K=1024,N=1024", NULL, false, CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"rmsnorm_matmul_m64", "rmsnorm_matmul.tc", "rmsnorm_matmul", "M=64,K=4096,N=4096",
     "M=64,K=1024,N=1024", "M", false, CASE_PLAIN, NULL, NULL, "cuBLAS (M > 16)", NULL, NULL, 0},
    {"rmsnorm_matmul_m256", "rmsnorm_matmul.tc", "rmsnorm_matmul", "M=256,K=4096,N=4096",
     "M=256,K=256,N=256", "M", false, CASE_PLAIN, NULL, NULL, "cuBLAS (M > 16)", NULL, NULL, 0},
    {"rmsnorm_matmul_m1024", "rmsnorm_matmul.tc", "rmsnorm_matmul", "M=1024,K=4096,N=4096",
     "M=256,K=256,N=256", "M", false, CASE_PLAIN, NULL, NULL, "cuBLAS (M > 16)", NULL, NULL, 0},
    {"rmsnorm_matmul_m4096", "rmsnorm_matmul.tc", "rmsnorm_matmul", "M=4096,K=4096,N=4096",
     "M=256,K=256,N=256", "M", false, CASE_PLAIN, NULL, NULL, "cuBLAS (M > 16)", NULL, NULL, 0},
    {"gated_mlp", "gated_mlp.tc", "gated_mlp", "M=16,K=4096,N=11008", "M=16,K=1024,N=1024", "M",
     false, CASE_PLAIN, NULL, NULL,
     "two cuBLAS products and the gate's kernel (each 90 MB weight passes the L2, where cuBLAS "
     "streams faster); at 40 MB or less, one generated kernel (the pair and epilogue rules)",
     NULL, NULL, 0},
    {"lora", "lora.tc", "lora", "M=16,K=4096,N=4096,R=16", "M=16,K=1024,N=1024,R=16", "M", false,
     CASE_PLAIN, NULL, NULL,
     "three generated matmul kernels, the sum in the last (the epilogue rule): 3 launches; "
     "1 with TENSORC_MATMUL_LORA=on",
     NULL, NULL, 0},
    /* issue 13: decode attention, 16 query heads over 2 KV heads, head dim
     * 128, context 8192: one kernel (fusion's attention rule) */
    {"gqa_decode_b1", "gqa_decode.tc", "gqa_decode", "B=1,KVH=2,G=8,L=8192", "B=1,KVH=2,G=8,L=512",
     NULL, false, CASE_PLAIN, NULL, NULL, "one attention kernel (flash-decoding)", NULL, NULL, 0},
    {"gqa_decode_b8", "gqa_decode.tc", "gqa_decode", "B=8,KVH=2,G=8,L=8192", "B=8,KVH=2,G=8,L=512",
     "B", false, CASE_PLAIN, NULL, NULL, "one attention kernel (flash-decoding)", NULL, NULL, 0},
    /* F.cross_entropy of a language model's last layer (issue 14): one rows
     * kernel over the logits, a small one for the mean over rows; no split
     * (the mean reads every row), so the reference runs whole */
    {"cross_entropy_4096x128256", "cross_entropy.tc", "cross_entropy_loss", "N=4096,V=128256",
     "N=64,V=128256", NULL, false, CASE_PLAIN, NULL, "target",
     "bf16 logits, i64 targets in [0, 20), mean over rows (ignore_index -100)", NULL, NULL, 0},
    /* long rows (issue 14): past one block's registers, split across a
     * thread-block cluster on sm_90 (src/sched/sched.h, "Clusters") */
    {"softmax_1024x65536", "softmax.tc", "softmax", "N=1024,D=65536", "N=4,D=65536", "N", false,
     CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"softmax_512x131072", "softmax.tc", "softmax", "N=512,D=131072", "N=4,D=131072", "N", false,
     CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"softmax_256x262144", "softmax.tc", "softmax", "N=256,D=262144", "N=4,D=262144", "N", false,
     CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    /* logsumexp writes nothing row-sized: one online pass (sched_online.c) */
    {"logsumexp_256x262144", "logsumexp.tc", "logsumexp_rows", "N=256,D=262144", "N=4,D=262144",
     "N", false, CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"rmsnorm_bf16_1024x65536", "rmsnorm.tc", "rmsnorm_bf16", "N=1024,D=65536", "N=4,D=65536",
     "N", false, CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
    {"rmsnorm_bf16_256x262144", "rmsnorm.tc", "rmsnorm_bf16", "N=256,D=262144", "N=4,D=262144",
     "N", false, CASE_PLAIN, NULL, NULL, NULL, NULL, NULL, 0},
};

const int bench_ncases = (int)(sizeof bench_cases / sizeof *bench_cases);

const bench_case *case_find(const char *name)
{
    for (int i = 0; i < bench_ncases; i++)
        if (strcmp(bench_cases[i].name, name) == 0)
            return &bench_cases[i];
    return NULL;
}

/* "transformer:L": suite.md's set, L x [4 x 1024x1024, 4096x1024,
 * 1024x4096, 4 x 1024] (24 layers: 240 tensors, 302M parameters);
 * "SIZE*COUNT": COUNT groups of SIZE elements. */
int64_t *foreach_sizes(const bench_case *c, bool quick, int *n)
{
    static const int64_t layer[10] = {1024 * 1024, 1024 * 1024, 1024 * 1024, 1024 * 1024,
                                      4096 * 1024, 1024 * 4096, 1024, 1024, 1024, 1024};
    const char *set = quick ? c->set_quick : c->set;
    char *end;
    long long a, b = 0;
    if (!set)
        return NULL;
    bool tr = strncmp(set, "transformer:", 12) == 0;
    a = strtoll(tr ? set + 12 : set, &end, 10);
    if (!tr && *end == '*')
        b = strtoll(end + 1, &end, 10);
    if (*end || a < 1 || (!tr && (b < 1 || b > 1 << 21)) || (tr && a > 1000))
        return NULL;
    int count = tr ? 10 * (int)a : (int)b;
    int64_t *s = malloc(sizeof *s * (size_t)count);
    if (!s)
        return NULL;
    for (int i = 0; i < count; i++)
        s[i] = tr ? layer[i % 10] : (int64_t)a;
    *n = count;
    return s;
}
