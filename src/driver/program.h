/* program.h - what a context and a compiled program hold.
 *
 * tensorc.h keeps tc_ctx and tc_program opaque; the driver (compile.c)
 * fills a program stage by stage and the API (src/api/) reads it, so the
 * two structures live here, below both.  Nothing here is stable.
 */
#ifndef TC_PROGRAM_H
#define TC_PROGRAM_H

#include "tensorc.h"

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "knobs.h"
#include "graph/bind.h"
#include "graph/graph.h"

struct tc_rt;                   /* the GPU side of a context (src/runtime/rt.h) */
struct tc_fnc;                  /* the driver's per-function and per-unit records (compile.h) */
struct tc_unitc;
/* The driver's trace hook (compile.h says when it is called); stage is a
 * tc_stage (src/driver/stages.def). */
typedef void tc_trace_fn(void *user, tc_program *p, int stage, const gfn *const *fns, int n,
                         unsigned variant, double ms);

struct tc_ctx {
    struct tc_rt *rt;       /* NULL until the first GPU call; owned by the runtime */
    tc_trace_fn *trace;     /* the trace hook (compile.h's tc_drv_set_trace), or NULL */
    void *trace_user;
    tc_diag diag;           /* the last error; its text is what tc_errmsg returns */
    char *err_file;         /* copy of the last error's file name: the source may be gone */
    int err_line, err_col;
    tc_knobs knobs;         /* the tuning knobs, read from the environment once (tc_ctx_create) */
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
    struct tc_fnc *fncs;        /* each entry function's lowered, fused, scheduled forms */
    struct tc_unitc *units;     /* the generated units, by (functions, variant) (compile.h) */
    struct run_labels *run_labels; /* tc_run's message texts per function (api_run.c) */
    tc_arena *run_scratch;      /* tc_run's per-call memory, reset after each call, kept */
    const char **fn_names;      /* tc_program_functions' list, made on first use */
    struct api_desc *descs;     /* tc_program_function's descriptions (api_introspect.c) */
    /* the module of the unit the last tc_run loaded, in ctx->rt (api_run.c):
     * a repeated call skips rt_load's search by source text */
    const void *loaded_unit;
    struct rt_module *loaded_mod;
    struct api_memos *memos;    /* the last calls tc_run/tc_run_foreach checked (api_run_memo.h) */
};

#endif
