/* api_internal.h - what the API's files share behind tensorc.h.
 *
 * tensorc.h keeps tc_ctx and tc_program opaque.  The API's own files, and
 * the unit tests that look inside, need a little more: the op graph of one
 * function, size binding and the reference interpreter, with errors landing
 * in the context like every other call.  Nothing here is stable or public;
 * tools/ and bench/ use tensorc.h alone (tests/package/includes.sh).
 */
#ifndef TC_API_INTERNAL_H
#define TC_API_INTERNAL_H

#include <stdatomic.h>

#include "tensorc.h"

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "graph/bind.h"
#include "graph/graph.h"
#include "ref/ref.h"

#include "program.h"

/* Clear the context's last error (every API call starts with this). */
void api_begin(tc_ctx *ctx);
/* Finish a call that failed with st: keep a copy of the location (the
 * program's arena may be freed) and return st. */
tc_status api_fail(tc_ctx *ctx, tc_status st);

/* The entry function fn of p: a function of the user's file, or of the
 * prelude (built on first use).  fn NULL: the file's only function; with
 * several, TC_ERR_INVALID_ARG naming them.  Errors are set in p->ctx. */
tc_status api_entry(tc_program *p, const char *fn, const gfn **out);
/* api_entry for tc_run and tc_run_foreach: the dtype variables of fn's
 * signature bound from the dtypes of the tensors args passes for them
 * (x: T[N] given a bf16 tensor binds T = bf16); unbound ones stay f32. */
/* The tc_dtype of a DLPack dtype (one lane), or TC_DT_NONE. */
tc_dtype api_from_dl(DLDataType t);
tc_status api_entry_args(tc_program *p, const char *fn, const tc_arg *args, size_t nargs,
                         const gfn **out);
/* api_entry with the entry's dtype variables bound (graph_build_ex): with
 * ndts > 0 the function is built afresh, specialized, and not cached. */
tc_status api_entry_ex(tc_program *p, const char *fn, const tc_dtypebind *dts, int ndts,
                       const gfn **out);

/* The pieces of entry lookup the dumps share (api.c): the AST function
 * named name in prog, or NULL; "a, b, c", the user's functions; the body of
 * api_entry_ex in a protected call (an entry_job); the located error of the
 * first function of the file that did not build as an entry point (for
 * whole-file dumps), if any. */
const ast_fn *api_find_ast_fn(const ast_program *prog, const char *name);
/* The function whose parameters af has: af, or for a derived function
 * (fn g = grad(f)) its forward's, through chains; af itself if one is
 * missing. */
const ast_fn *api_params_fn(const tc_program *p, const ast_fn *af);
const char *api_fn_list(tc_program *p);
typedef struct {
    tc_program *p;
    const char *fn;
    const tc_dtypebind *dts;
    int ndts;
    const gfn *out;
} entry_job;
void api_entry_body(void *arg);
void api_report_unbuilt(tc_program *p);

/* The dump of one stage ("graph", "lowered", "fused", "explain", ...; see
 * src/driver/stages.def) of entry f of p, in a protected call. */
tc_status api_dump(tc_program *p, const gfn *f, const char *stage, const char **out);
/* The JSON form (docs/json.md) of stage "explain" or "plan": of entry f,
 * else of function fn (NULL: every function of the file). */
tc_status api_dump_json(tc_program *p, const gfn *f, const char *stage, const char *fn,
                        const char **out);

/* compile.h's tc_drv_entry in a protected call: the CUDA source and launch
 * plan for entry f with variant (compile.h's TC_VAR_* bits).  TC_OK, or an
 * error in p->ctx. */
struct cg_unit;
struct tc_plan;
tc_status api_unit_variant(tc_program *p, const gfn *f, unsigned variant,
                           const struct cg_unit **unit, const struct tc_plan **plan);
/* The same with 32- or 64-bit indices. */
tc_status api_unit(tc_program *p, const gfn *f, bool idx64, const struct cg_unit **unit,
                   const struct tc_plan **plan);

/* The CUDA source NVRTC compiles for entry f (its own unit), or with f NULL
 * for every function of the file (one unit): what --emit=ptx|cubin compile. */
tc_status api_cuda_source(tc_program *p, const gfn *f, const char **src);

/* graph_bind in a protected call, allocating from p's arena. */
tc_status api_bind(tc_program *p, const gfn *f, const bind_arg *args, const tc_dimbind *extra,
                   int nextra, tc_dimbind **out, int *nout);

/* ref_run in a protected call. */
tc_status api_ref_run(tc_program *p, const gfn *f, const tc_dimbind *b, int nb,
                      const ref_tensor *args, ref_tensor *outs);

#endif
