/* sched_budget.c - a kernel's work as the unrolled-code budget sees it
 * (sched.c's UNROLLED and FN_UNROLLED): fusion's count of nodes computed
 * (fuse.h's work, one a node a pass), plus what a few library calls cost
 * beyond one node.  CUDA's sinf and cosf carry their large-argument
 * reduction (Payne-Hanek) inline at every use, some 150 SASS instructions
 * each, and powf and atan2f are near 100: a rows kernel of two trig calls
 * unrolled 16 and 32 elements a thread (the narrow and the wide variant)
 * took NVRTC 18.6 s to CUBIN for sm_90 (tests/fuzz/corpus/compile/
 * rand_p007.tc; 2.8 s with the calls out of line), where its fusion work
 * (14 nodes) passed every budget.  Each counts HEAVY nodes, so such kernels
 * go compact (library math called, rows looped) or unroll less, as a long
 * chain of cheap nodes does. */
#include "sched/sched.h"

enum { HEAVY = 32 };

static bool heavy_op(int op)
{
    return op == OP_sin || op == OP_cos || op == OP_pow || op == OP_atan2;
}

int sched_work(const fkernel *k)
{
    int64_t w = k->work;
    for (int i = 0; i < k->ninl; i++)
        if (k->inl[i]->kind == LK_POINTWISE && heavy_op(k->inl[i]->op) && !lir_pow_square(k->inl[i]))
            w += HEAVY - 1;
    return w > 1 << 30 ? 1 << 30 : (int)w;
}
