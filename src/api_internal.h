/* api_internal.h - what the library's own tools see behind tensorc.h.
 *
 * tensorc.h keeps tc_ctx and tc_program opaque.  The command-line driver
 * (tools/) and the tests need a little more: the op graph of one function,
 * size binding and the reference interpreter, with errors landing in the
 * context like every other call.  This header gives them that without making
 * it public API: nothing here is stable.
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

struct tc_rt;                   /* the GPU side of a context (runtime/rt.h) */

struct tc_ctx {
    struct tc_rt *rt;       /* NULL until the first GPU call; owned by the runtime */
    tc_diag diag;           /* the last error; its text is what tc_errmsg returns */
    char *err_file;         /* copy of the last error's file name: the source may be gone */
    int err_line, err_col;
};

/* A compiled program: everything lives in its arena and goes with it. */
typedef struct tc_extra_graph {
    struct tc_extra_graph *next;
    tc_graph *graph;
    /* a specialization: fn built with these dtype bindings (ndts > 0) */
    const char *fn;
    tc_dtypebind dts[26];
    int ndts;
} tc_extra_graph;

struct tc_program {
    tc_ctx *ctx;
    tc_arena *arena;
    const tc_source *src;       /* the user's source (a copy, NUL-terminated) */
    ast_program *ast;
    const ast_program **prelude;
    int nprelude;
    tc_graph *graph;            /* every function of the user's file */
    tc_extra_graph *extra;      /* prelude and generic functions built on demand as entry
                                 * points, and specializations (dtype bindings) */
    struct pipe_fn *pipes;      /* lowered, fused, ... entry functions (pipeline.h) */
    struct cg_unit *file_unit[2]; /* the CUDA of every function of the file, 32/64-bit indices */
    struct run_labels *run_labels; /* tc_run's message texts per function (api_run.c) */
    tc_arena *run_scratch;      /* tc_run's per-call memory, reset after each call, kept */
    const char **fn_names;      /* tc_program_functions' list, made on first use */
    struct api_desc *descs;     /* tc_program_function's descriptions (api_introspect.c) */
};

/* Clear the context's last error (every API call starts with this). */
void api_begin(tc_ctx *ctx);
/* The TENSORC_* variable name as an integer in [lo, hi]; unset or empty
 * gives def, and so does any other value, with one warning on stderr per
 * process (*warned: the caller's static flag). */
int api_env_int(const char *name, int lo, int hi, int def, atomic_flag *warned);
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

/* The dump of one stage ("graph", "lowered", "fused", "explain", ...) of
 * entry f of p, in a protected call. */
tc_status api_dump(tc_program *p, const gfn *f, const char *stage, const char **out);

/* pipe_unit (pipeline.h) in a protected call: the CUDA source and launch
 * plan for entry f.  TC_OK, or an error in p->ctx. */
struct cg_unit;
struct tc_plan;
tc_status api_unit(tc_program *p, const gfn *f, bool idx64, const struct cg_unit **unit,
                   const struct tc_plan **plan);
/* The same for f's own unit with the wide foreach table (codegen.h). */
tc_status api_unit_wide(tc_program *p, const gfn *f, bool idx64, const struct cg_unit **unit,
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
