/* api_interp.h - what the API's host-side calls share (api_introspect.c,
 * api_interp.c): dtype bindings given as arguments, and matching a call's
 * arguments to a function's parameters and outputs without a GPU. */
#ifndef TC_API_INTERP_H
#define TC_API_INTERP_H

#include "api_internal.h"
#include "rt.h"

/* A call's arguments with the dtype bindings (TC_ARG_DTYPE) taken out. */
typedef struct api_call_args {
    const tc_arg *args;
    size_t nargs;
    tc_arg *owned;          /* malloc'd copy, or NULL when args are the caller's */
} api_call_args;

/* The entry function fn of p for a call of `who` with args: tc_arg_dtype
 * bindings checked (each names a dtype variable of fn, once, with a dtype),
 * then api_entry_args (which applies them and binds the rest from the
 * tensors, unless dtypes_only: tc_run_foreach with no group, whose lists
 * may be empty); *rest is args without the bindings, to be freed with
 * api_call_args_free.  Errors in p->ctx. */
tc_status api_call_entry(tc_program *p, const char *who, const char *fn, const tc_arg *args,
                         size_t nargs, bool dtypes_only, const gfn **f, api_call_args *rest);
void api_call_args_free(api_call_args *rest);

/* The entry function fn of p built with dtypes[0..ndtypes) (tc_arg_dtype
 * bindings, each checked: a message starting with `who` names a wrong one)
 * through api_entry_ex, for the unstable calls that take bindings apart
 * from a call's arguments (tc_program_function_ex and its kin). */
tc_status api_entry_dtypes(tc_program *p, const char *who, const char *fn, const tc_arg *dtypes,
                           size_t ndtypes, const gfn **f);

/* One host-side call's arguments, matched and checked. */
typedef struct api_host_call {
    tc_program *p;
    const gfn *f;
    tc_arena *a;                  /* the program's scratch arena, reset by api_host_end */
    const DLTensor **params;      /* per parameter: its tensor (NULL for a scalar) */
    rt_scalar *scalars;           /* per parameter: a scalar's value (with data) */
    const DLTensor **outputs;     /* per output: its tensor (an inout one's parameter) */
    tc_dimbind *binds;            /* the signature's sizes, bound by the inputs */
    int nbinds;
} api_host_call;

/* Match args (without dtype bindings) to f's parameters and outputs by
 * name or position as tc_run does, check every input's dtype and shape
 * and bind the sizes, with extra[0..nextra) (tc_arg_size) too.  With data
 * (tc_run_cpu), every tensor parameter and output must be given, in host
 * memory, compact, with data, the outputs of the right dtype and shape,
 * and the scalars are checked (kinds, ranges, defaults); without, a tensor
 * parameter left out is bound from the others (its params[i] NULL).
 * Errors in p->ctx (TC_ERR_INVALID_ARG naming the argument). */
tc_status api_host_begin(api_host_call *c, tc_program *p, const gfn *f, const char *who,
                         const tc_arg *args, size_t nargs, bool data, const tc_dimbind *extra,
                         int nextra);
void api_host_end(api_host_call *c);

#endif
