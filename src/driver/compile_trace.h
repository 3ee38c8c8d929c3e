/* compile_trace.h - what runs after every stage of a compile (compile.c):
 * TENSORC_DEBUG's timings and printed stages, TENSORC_DUMP_DIR's files, and
 * the context's trace hook (compile.h).  Internal to the driver. */
#ifndef TC_COMPILE_TRACE_H
#define TC_COMPILE_TRACE_H

#include "compile.h"

typedef struct tc_trace {
    tc_program *p;
    tc_debug dbg;
    const char *dir;            /* TENSORC_DUMP_DIR, or NULL */
    bool program;               /* tc_compile's: dumps are NAME.EXT */
    const gfn *const *fns;      /* the unit being built (none while parsing) */
    int n;
    unsigned variant;
    const cg_unit *unit;        /* its CUDA and plans, once codegen has run */
    double ms[STAGE_COUNT];
    unsigned ran;               /* 1u << stage */
} tc_trace;

/* A compile starts: the environment read once for all of its stages. */
void tc_trace_begin(tc_trace *t, tc_program *p, bool program);
/* The unit its next stages build. */
void tc_trace_unit(tc_trace *t, const gfn *const *fns, int n, unsigned variant);
/* Stage s has run (and been verified) since t0: time it, print it, dump
 * it, call the hook. */
void tc_trace_stage(tc_trace *t, tc_stage s, double t0);
/* The compile is done: TENSORC_DEBUG's line of times. */
void tc_trace_end(tc_trace *t);

/* Stage s of the unit being built (every stage up to s has run; u its
 * CUDA and plans for cuda and plan), as tc_drv_print gives it. */
void tc_drv_print_built(tc_buf *b, tc_program *p, tc_stage s, const gfn *const *fns, int n,
                        unsigned variant, const cg_unit *u);

#endif
