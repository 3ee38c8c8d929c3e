/* compile.h - the compiler driver: one straight line from source to CUDA.
 *
 * compile.c reads top to bottom as the pipeline runs:
 *
 *     parse       the user's source and the prelude      -> ASTs     (ast)
 *     graph       names, dtypes, shapes; calls inlined   -> op graph (graph)
 *     lower       views become index arithmetic          -> LIR      (lowered)
 *     fuse        anchors merged into kernels            -> kernels  (fused, explain)
 *     schedule    a strategy and launch shape per kernel -> sched    (sched)
 *     codegen     CUDA text and one launch plan per fn   -> unit     (cuda, plan)
 *
 * each followed by its verifier (graph_verify, lir_verify, fuse_verify,
 * sched_verify, plan_verify inside codegen, plan_check) and by the trace
 * hook (TENSORC_DEBUG's timings and dumps, TENSORC_DUMP_DIR's files, and a
 * caller's hook).  tc_compile runs all of it for every function of the file
 * (one CUDA unit), so any stage's error comes back from tc_compile with its
 * location.  NVRTC is not run there: it needs the device's architecture,
 * and a unit's first tc_run compiles it (or finds it in the kernel cache),
 * timed as the `nvrtc` stage.
 *
 * Variants of a unit (64-bit index arithmetic, the wide foreach table) and
 * other entry points (a prelude function, a dtype specialization, one
 * function alone for --emit --fn) go through the same function,
 * tc_drv_unit, memoized in the program by (functions, variant); per
 * function, lowering and fusion run once and scheduling once per index
 * width.  Choosing the variant for a call is one step before it
 * (api_run.c's choose_variant), never a retry.
 *
 * Everything here runs inside the API's protected call (diag_protect):
 * errors unwind through the program's diagnostics.
 */
#ifndef TC_COMPILE_H
#define TC_COMPILE_H

#include "program.h"
#include "codegen/codegen.h"
#include "fuse/fuse.h"
#include "lower/lir.h"
#include "sched/sched.h"

/* The stages (src/driver/stages.def). */
typedef enum {
#define STAGE(id, name, ext, flags, what) STAGE_##id,
#include "stages.def"
#undef STAGE
    STAGE_COUNT
} tc_stage;

enum { SF_TEXT = 1, SF_EMIT = 2, SF_BINARY = 4, SF_GOLDEN = 8, SF_VIEW = 16, SF_RUN = 32 };

typedef struct tc_stage_info {
    const char *name, *ext;
    unsigned flags;
    const char *what;
} tc_stage_info;

extern const tc_stage_info tc_stages[STAGE_COUNT];

/* The stage called name, or -1. */
int tc_stage_find(const char *name);
/* "ast, graph, lowered, ...": the stages with every bit of flags, for
 * messages (in a). */
const char *tc_stage_names(tc_arena *a, unsigned flags);

/* A unit's variant: bits. */
/* TC_VAR_WIDE: a foreach table of 32 KB in the kernel parameter;
 * TC_VAR_SMALL: one group in it (the groups always uploaded), so a launch,
 * or a graph node's update, copies ~100 bytes of parameter, not 4 KB. */
enum { TC_VAR_IDX64 = 1, TC_VAR_WIDE = 2, TC_VAR_SMALL = 4 };

/* One function's stages, kept in the program. */
typedef struct tc_fnc {
    struct tc_fnc *next;
    const gfn *g;
    lfn *l;
    ffn *fu;
    sfn *s[2];              /* scheduled with 32-bit, 64-bit indices */
} tc_fnc;

/* A generated unit: its functions and variant, kept in the program. */
typedef struct tc_unitc {
    struct tc_unitc *next;
    const gfn *const *fns;
    int nfns;
    unsigned variant;
    cg_unit *u;
} tc_unitc;

/* tc_compile's body: parse p->src through codegen of every function of the
 * file (p->src set by the caller). */
void tc_drv_program(tc_program *p);

/* The unit of fns[0..n) with variant (TC_VAR_*), generated on first use. */
const cg_unit *tc_drv_unit(tc_program *p, const gfn *const *fns, int n, unsigned variant);

/* The unit that runs entry g with variant, and g's plan in it: for a
 * function of the user's file, the unit of all of the file's functions (one
 * NVRTC compile serves them all) unless the variant is wide; for any other
 * entry (a prelude function, a dtype-specialized build), a unit of its own. */
const cg_unit *tc_drv_entry(tc_program *p, const gfn *g, unsigned variant, const tc_plan **plan);

/* Append stage's text for fns[0..n) to b, as --emit=STAGE shows it: per
 * function, a blank line between them; sched, cuda and plan those of the
 * unit of fns with variant.  ast is the whole file's. */
void tc_drv_print(tc_buf *b, tc_program *p, tc_stage stage, const gfn *const *fns, int n,
                  unsigned variant);

/* The JSON form of stage (STAGE_EXPLAIN or STAGE_PLAN) for fns[0..n), as
 * docs/json.md describes it: one document (compile_json.c). */
void tc_drv_json(tc_buf *b, tc_program *p, tc_stage stage, const gfn *const *fns, int n,
                 unsigned variant);

/* The trace hook (tc_trace_fn, program.h): called after each stage of each compile has run and been
 * verified, with the functions it ran for (none for parse and prelude) and
 * the unit's variant; ms the stage's time.  The hook may print the stage
 * (tc_drv_print) or fail the compile with diag_error on p->ctx's diagnostics
 * (the tests use this to fail a compile in lowering with a located error).
 * TENSORC_DEBUG and TENSORC_DUMP_DIR are served before it. */
void tc_drv_set_trace(tc_ctx *ctx, tc_trace_fn *fn, void *user);

/* TENSORC_DEBUG's stages, read from the environment: bit s set when stage s
 * is to be timed (every stage, with any value but 0) or printed (its name
 * in the list, or 4: graph, 5: graph and ast).  0 when unset. */
typedef struct tc_debug {
    bool timing;
    unsigned print;         /* 1u << stage */
} tc_debug;
tc_debug tc_debug_get(void);
/* One TENSORC_DEBUG line for the runtime's stage (nvrtc): "tensorc: nvrtc
 * NAME: 12.3 ms (compiled)". */
void tc_debug_runtime(tc_stage stage, const char *name, double ms, const char *how);

/* Milliseconds on the monotonic clock. */
double tc_now_ms(void);

#endif
