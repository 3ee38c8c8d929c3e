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
 * The names are the peers' too (bench/peers.py): report.py joins on them.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#define M64 "67108864" /* 64M elements: 256 MB of f32 */

const bench_case bench_cases[] = {
    {"gelu_chain", "gelu_chain.tc", "gelu_chain", "*=" M64, "*=1048576", "*", false, CASE_PLAIN,
     NULL, NULL, NULL},
    {"fma4", "fma4.tc", "fma4", "*=" M64, "*=1048576", "*", false, CASE_PLAIN, NULL, NULL, NULL},
    {"bias_gelu", "bias_gelu.tc", "bias_gelu", "N=8192,D=8192", "N=64,D=8192", "N", false,
     CASE_PLAIN, NULL, NULL, NULL},
    {"transpose_add", "transpose_add.tc", "transpose_add", "N=8192,M=8192", "N=256,M=256", "M",
     false, CASE_PLAIN, NULL, NULL, NULL},
    {"softmax_16384x4096", "softmax.tc", "softmax", "N=16384,D=4096", "N=64,D=4096", "N", false,
     CASE_PLAIN, NULL, NULL, NULL},
    {"softmax_32768x1024", "softmax.tc", "softmax", "N=32768,D=1024", "N=64,D=1024", "N", false,
     CASE_PLAIN, NULL, NULL, NULL},
    {"layernorm", "layernorm.tc", "layernorm", "N=16384,D=4096", "N=64,D=4096", "N", false,
     CASE_PLAIN, NULL, NULL, NULL},
    {"rmsnorm_f32", "rmsnorm.tc", "rmsnorm_f32", "N=16384,D=4096", "N=64,D=4096", "N", false,
     CASE_PLAIN, NULL, NULL, NULL},
    {"rmsnorm_bf16", "rmsnorm.tc", "rmsnorm_bf16", "N=16384,D=4096", "N=64,D=4096", "N", false,
     CASE_PLAIN, NULL, NULL, NULL},
    {"row_sum", "row_sum.tc", "row_sum", "N=16384,D=4096", "N=64,D=4096", "N", false, CASE_PLAIN,
     NULL, NULL, NULL},
    {"col_sum", "col_sum.tc", "col_sum", "N=16384,D=4096", "N=256,D=4096", "D", false, CASE_PLAIN,
     NULL, NULL, NULL},
    {"full_sum", "full_sum.tc", "full_sum", "*=" M64, "*=1048576", NULL, false, CASE_PLAIN, NULL,
     NULL, NULL},
    {"small_softmax", "softmax.tc", "softmax", "N=32,D=128", "N=32,D=128", "N", true, CASE_PLAIN,
     NULL, NULL, NULL},
    {"small_chain", "gelu_chain.tc", "gelu_chain", "*=4096", "*=4096", "*", true, CASE_PLAIN, NULL,
     NULL, NULL},
    /* torch.optim.AdamW's defaults but weight decay 0.01, bias correction at step 1 */
    {"adamw", "adamw.tc", "adamw", "(240 tensors)", "*=1048576", "*", false, CASE_ADAMW,
     "lr=1e-3,beta1=0.9,beta2=0.999,eps=1e-8,wd=0.01,step=1", "v",
     "per-tensor launches (no foreach yet): 240 tc_run calls per step"},
    {"rmsnorm_matmul", "rmsnorm_matmul.tc", "rmsnorm_matmul", "M=16,K=4096,N=4096",
     "M=16,K=1024,N=1024", "M", false, CASE_PLAIN, NULL, NULL,
     "the matmul runs through cuBLAS; W (32 MB) fits in an H100/H200 L2, so back-to-back calls "
     "read it from L2 (the peers' too)"},
};

const int bench_ncases = (int)(sizeof bench_cases / sizeof *bench_cases);

const bench_case *case_find(const char *name)
{
    for (int i = 0; i < bench_ncases; i++)
        if (strcmp(bench_cases[i].name, name) == 0)
            return &bench_cases[i];
    return NULL;
}

/* suite.md: 24 x [4 x 1024x1024, 4096x1024, 1024x4096, 4 x 1024] = 240
 * tensors, 302M parameters. */
int64_t *adamw_sizes(bool quick, int *n)
{
    static const int64_t layer[10] = {1024 * 1024, 1024 * 1024, 1024 * 1024, 1024 * 1024,
                                      4096 * 1024, 1024 * 4096, 1024, 1024, 1024, 1024};
    int layers = quick ? 1 : 24;
    int64_t *s = malloc(sizeof *s * 10 * (size_t)layers);
    if (!s)
        return NULL;
    for (int l = 0; l < layers; l++)
        memcpy(s + 10 * l, layer, sizeof layer);
    *n = 10 * layers;
    return s;
}
