/* codegen.h - CUDA C for scheduled kernels, and their launch plans.
 *
 * One NVRTC program (a "unit") holds the kernels of one or more entry
 * functions: every function of a file, or one function when asked for by
 * name.  Kernels are numbered across the unit so their extern "C" names are
 * unique: tc_red_fused_max_sub_exp_sum_div_0, tc_poi_fused_add_gelu_1, ...
 *
 * The source starts with a few inline helpers (f16/bf16 conversions, NaN-
 * propagating max/min, block reductions, vector loads) instead of cuda_fp16.h
 * and friends, which cost NVRTC ~15-20 ms each.  Then one __global__ per
 * kernel: __restrict__ pointers (in_x, out_y, bufN), the symbolic sizes it
 * uses (sz_N, ...), scalars (s_eps), each statement commented with the .tc
 * line it came from.  f16/bf16 are loaded and stored as 16-bit and computed
 * in f32.
 *
 * Identical kernels are emitted once.  The fusion budget cuts a long chain
 * into many compact kernels (sched.h) that are the same code but for their
 * buffers; a compact kernel names its buffers by position (p0, p1, ... in
 * the order it first uses them), and one whose code (built a second time
 * without line comments, to compare) equals an earlier kernel's of the
 * same function is not emitted: its plan step launches the earlier one
 * with its own buffers (plan.h: steps refer to plan->kernels by index).
 * The kernel's heading lists the kernels it also runs for.  A
 * 1,000-statement softmax-like chain is 250 kernels of 10 distinct codes,
 * so NVRTC's time stops growing with the chain.  Ordinary kernels keep
 * their buffers' names and are never shared.
 */
#ifndef TC_CODEGEN_H
#define TC_CODEGEN_H

#include "codegen/plan.h"
#include "sched/sched.h"

typedef struct cg_unit {
    const char *source;     /* NUL-terminated CUDA C */
    tc_plan **plans;        /* one per function, in the order given */
    int nplans;
    int nkernels;
} cg_unit;

/* Generate the unit for fns[0..n) (each scheduled with the same idx64).
 * Errors unwind through d. */
cg_unit *codegen_unit(const sfn *const *fns, int n, bool idx64, tc_arena *a, tc_diag *d);

/* Kernel parameter bytes a foreach kernel's group table may fill: the
 * classic 4 KB every driver and GPU take, or the 32,764 bytes of CUDA 12.1+
 * drivers on Volta and newer (a "wide" unit, made only for calls with more
 * groups than the 4 KB table holds, so plain launches stay small), or none
 * (a "small" unit, for the same calls: a table of one group, the groups in
 * device memory, a parameter of ~100 bytes to copy at each launch). */
enum { CG_FE_PARAM_BYTES = 4096, CG_FE_PARAM_BYTES_WIDE = 32764, CG_FE_PARAM_BYTES_SMALL = 0 };

/* codegen_unit with the foreach table's parameter budget (above). */
cg_unit *codegen_unit_ex(const sfn *const *fns, int n, bool idx64, int fe_param_bytes,
                         tc_arena *a, tc_diag *d);

/* The plan in words, for --emit=cuda's trailing comment and TENSORC_DEBUG. */
void plan_print(tc_buf *b, const tc_plan *p, const gfn *g);
struct tc_json;
/* The same plan as one object of docs/schema/plan.json's "functions"
 * (plan_json.c, for --emit=plan --json). */
void plan_json(struct tc_json *j, const tc_plan *p, const gfn *g);

#endif
