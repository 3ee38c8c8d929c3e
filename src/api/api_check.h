/* api_check.h - what tc_run (api_run.c) and tc_run_foreach (api_foreach.c)
 * share: a call's state and the checks of its arguments, then the launch.
 * Internal; see api_run.c's header for the order of the steps. */
#ifndef TC_API_CHECK_H
#define TC_API_CHECK_H

#include <stdint.h>

#include "api_run.h"
#include "rt.h"

typedef struct tensor_use {
    const DLTensor *t;
    uint64_t addr;          /* data + byte_offset */
    uint64_t bytes;
    const char *what;       /* "parameter 'x'", "output 'out'" */
    bool written;           /* an output or an inout parameter */
    int group;              /* tc_run_foreach's group, else -1 */
} tensor_use;

typedef struct {
    tc_program *p;
    const gfn *f;
    const tc_arg *args;
    size_t nargs;
    tc_arena *a;
    tc_diag *d;
    tc_status st;           /* the first argument error */
    /* slots: params, then outputs that are not inout */
    int nslots;
    int *slot_output;       /* per slot >= nparams: the gfn output index */
    int *given;             /* per slot: the args index, or -1 */
    /* results */
    tc_dimbind *binds;
    int nbinds;
    uint64_t *params;       /* per param: tensor address */
    rt_scalar *scalars;     /* per param */
    uint64_t *outputs;      /* per output: address, 0 for inout */
    tensor_use *uses;
    int nuses;
    int device;             /* the tensors' device_id, -1 before the first */
    const char *device_what;
    const char *who;        /* "tc_run" or "tc_run_foreach", for messages */
    int group;              /* tc_run_foreach: the group being checked, else -1 */
    int device_group;       /* the group of device_what */
} run_job;

/* The first argument error, as TC_ERR_INVALID_ARG (messages start with
 * api_who(j)). */
#define ERR(j, ...) ((j)->st = diag_set((j)->d, TC_ERR_INVALID_ARG, (tc_loc){0}, __VA_ARGS__))

/* The names and types of a function's parameters and outputs as messages
 * show them ("parameter 'x'", "f32[N, D]"), made once per function and kept
 * in the program: printing them on every call was a fifth of tc_run's host
 * time. */
typedef struct run_labels {
    struct run_labels *next;
    const gfn *f;
    const char **pwhat, **ptype;    /* per parameter */
    const char **owhat, **otype;    /* per output */
} run_labels;


/* "tc_run", or "tc_run_foreach: group 3" while a group is checked: made
 * only for a message, so checking a thousand tensors formats nothing. */
const char *api_who(const run_job *j);

/* The names and types of f's parameters and outputs for messages, made
 * once per function and kept in p. */
const run_labels *api_labels(tc_program *p, const gfn *f);
const char *api_slot_name(const run_job *j, int s);
/* "f32[N, D]", "f32[*]", "f32" */
const char *api_type_text(tc_arena *a, tc_dtype dt, bool star, int rank, const tc_dim *const *shape);

/* Step 1: arguments to slots, by name or position. */
bool api_match_slots(run_job *j);
/* Step 2: scalar parameter pi; one DLTensor t for `what` (recorded in
 * j->uses; *numel its element count). */
bool api_check_scalar(run_job *j, int pi);
bool api_check_dl(run_job *j, const char *what, const DLTensor *t, tc_dtype dt, const char *type,
                  bool written, int64_t *numel);

/* Steps 1 to 4 for tc_run's job (a run_job *), in a protected call: the
 * first argument error in j->st. */
void api_check_call(void *j);

/* The call's scratch arena, kept in p and reset after each call. */
tc_arena *api_scratch(tc_program *p);
/* A call's start: the context's last error cleared, args/nargs checked,
 * the scratch arena; NULL with *st (reported) on error.  who: "tc_run". */
tc_arena *api_call_begin(tc_program *p, const char *who, const tc_arg *args, size_t nargs,
                         tc_status *st);

/* Which tensor the driver refused, when one is not device memory it knows
 * (asked only after a failure st): TC_ERR_INVALID_ARG naming it, else st. */
tc_status api_blame(tc_diag *d, struct tc_rt *rt, const tensor_use *uses, int nuses,
                    const char *who, tc_status st);

/* Steps 5 to 7 for a checked job (api_run.c says more); G NULL for tc_run. */
tc_status api_launch(run_job *j, const uint64_t *params, const uint64_t *outputs,
                     const rt_groups *G, int nonempty, void *stream, api_run_info *info,
                     bool *reported);

#endif
