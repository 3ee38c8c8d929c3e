/* plan_check.h - the launch plan's verifier, run by the driver (compile.c)
 * on every plan codegen makes, after codegen's own plan_verify (index
 * bounds).  plan_check.c lists the rules. */
#ifndef TC_PLAN_CHECK_H
#define TC_PLAN_CHECK_H

#include "codegen/codegen.h"

/* Check plan pl of entry g (in unit u).  A broken rule is TC_ERR_INTERNAL
 * through d, naming the step or buffer. */
void plan_check(const tc_plan *pl, const cg_unit *u, const gfn *g, tc_arena *a, tc_diag *d);

#endif
