/* pipeline.h - one function through the back half of the compiler.
 *
 * The op graph of an entry function goes through lowering, fusion,
 * scheduling and code generation once per program; the results are kept in
 * the program (its arena) so dumps, `explain` and runs share them.  Every
 * call here runs inside the API's protected call: errors unwind through the
 * program's diagnostics.
 */
#ifndef TC_PIPELINE_H
#define TC_PIPELINE_H

#include "api_internal.h"
#include "codegen/codegen.h"
#include "fuse/fuse.h"
#include "lower/lir.h"
#include "sched/sched.h"

typedef struct pipe_fn {
    struct pipe_fn *next;
    const gfn *g;
    lfn *l;
    ffn *fu;
    sfn *s[2];              /* scheduled with 32-bit, 64-bit indices */
    cg_unit *own[2];        /* a unit of this function alone */
    cg_unit *wide[2];       /* ... with a 32 KB foreach table (codegen.h) */
} pipe_fn;

/* Whether stage names a dump tc_program_dump can give now. */
bool pipe_stage_known(const char *stage);
/* Whether stage is a name of the pipeline at all (built or not). */
bool pipe_stage_valid(const char *stage);

/* The pipeline of g (an entry function of p), built up to fusion on first use. */
pipe_fn *pipe_get(tc_program *p, const gfn *g, const void *opts);

/* The generated unit (CUDA source and one launch plan per function, see
 * codegen.h and plan.h) that holds g's kernels, built on first use and kept
 * in the program: for a function of the user's file, the unit of all of the
 * file's functions (one NVRTC compile serves them all); for any other entry
 * (a prelude function, a dtype-specialized build) a unit of its own.
 * *plan is g's plan.  idx64 selects 64-bit index arithmetic (needed when a
 * size in the 32-bit plan's `limits` reaches 2^31).  Not protected: call it
 * inside the API's protected call (api_unit in api_internal.h is). */
struct cg_unit;
struct tc_plan;
const struct cg_unit *pipe_unit(tc_program *p, const gfn *g, bool idx64, const struct tc_plan **plan);

/* Append the dump of stage ("lowered", "fused", "sched", "cuda", "explain")
 * to b.  cuda is the function's own unit with its launch plan as a comment. */
void pipe_print(tc_buf *b, tc_program *p, pipe_fn *pf, const char *stage);
/* The unit of pf's function alone (what --emit=cuda --fn shows). */
cg_unit *pipe_own_unit(tc_program *p, pipe_fn *pf, bool idx64);
/* pf's unit of its own with the wide foreach table (codegen.h), built on
 * first use: for tc_run_foreach calls with more groups than 4 KB hold. */
cg_unit *pipe_wide_unit(tc_program *p, pipe_fn *pf, bool idx64);
/* The unit of every function of the user's file (cuda for a whole file). */
cg_unit *pipe_file_unit(tc_program *p, bool idx64);
/* The source plus the launch plans as a trailing comment. */
void pipe_print_unit(tc_buf *b, const cg_unit *u, const gfn *const *fns, int n);

#endif
