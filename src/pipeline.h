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
#include "fuse/fuse.h"
#include "lower/lir.h"

typedef struct pipe_fn {
    struct pipe_fn *next;
    const gfn *g;
    lfn *l;
    ffn *fu;
} pipe_fn;

/* Whether stage names a dump tc_program_dump can give now. */
bool pipe_stage_known(const char *stage);
/* Whether stage is a name of the pipeline at all (built or not). */
bool pipe_stage_valid(const char *stage);

/* The pipeline of g (an entry function of p), built up to fusion on first use. */
pipe_fn *pipe_get(tc_program *p, const gfn *g, const void *opts);

/* Append the dump of stage ("lowered", "fused", "explain") to b. */
void pipe_print(tc_buf *b, const pipe_fn *pf, const char *stage);

#endif
