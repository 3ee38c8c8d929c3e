/* api_run.c - tc_run: checking the caller's arguments, then the runtime.
 *
 * The order is the contract tensorc.h documents, as a straight line:
 *
 *   1. match arguments to the function's slots (parameters in order, then
 *      the outputs that are not inout parameters) by name or position;
 *   2. check each one on the host: scalars' kinds and ranges, tensors'
 *      dtype, device, layout and alignment;
 *   3. bind the symbolic sizes from the tensor parameters (graph_bind, so
 *      shape errors read as they do in the CLI) and check each output's
 *      shape against them;
 *   4. check that no written tensor (an output, an inout parameter) shares
 *      memory with another argument, and that all are on one device;
 *   5. open the GPU (the context's tc_rt, runtime/rt.h), only now, so a
 *      machine without one still gets every argument error first;
 *   6. fetch the launch plan (api_unit), switching to the 64-bit plan when
 *      a size exceeds the 32-bit one's limits, and the compiled module;
 *   7. rt_run enqueues the plan on the caller's stream.
 *
 * Everything a call allocates on the host lives in an arena dropped at its
 * end, so repeated calls leave the program's own arena alone.
 */
#include "api_run.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "rt.h"

/* DLPack's bool type code: kDLBool, added in DLPack 0.8 (the headers of
 * older versions do not name it). */
#define TC_DL_BOOL 6


/* --- names for messages ------------------------------------------------------------- */

/* "float32", "bfloat16", "int64", "bool", "uint8", "float32x4". */
static const char *dl_dtype_name(tc_arena *a, DLDataType t)
{
    static const char *const codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
    const char *c = t.code < sizeof codes / sizeof *codes ? codes[t.code] : "type";
    if (t.code == TC_DL_BOOL && t.bits == 8 && t.lanes == 1)
        return "bool";
    if (t.lanes != 1)
        return arena_printf(a, "%s%dx%d", c, t.bits, t.lanes);
    return arena_printf(a, "%s%d", c, t.bits);
}

static tc_dtype from_dl(DLDataType t)
{
    if (t.lanes != 1)
        return TC_DT_NONE;
    switch (t.code) {
    case kDLFloat: return t.bits == 32 ? TC_F32 : t.bits == 16 ? TC_F16 : t.bits == 64 ? TC_F64 : TC_DT_NONE;
    case kDLBfloat: return t.bits == 16 ? TC_BF16 : TC_DT_NONE;
    case kDLInt: return t.bits == 32 ? TC_I32 : t.bits == 64 ? TC_I64 : TC_DT_NONE;
    case TC_DL_BOOL: return t.bits == 8 ? TC_BOOL : TC_DT_NONE;
    default: return TC_DT_NONE;
    }
}

DLDataType api_dl_dtype(tc_dtype t)
{
    DLDataType d = {kDLFloat, 32, 1};
    switch (t) {
    case TC_F64: d.bits = 64; break;
    case TC_F16: d.bits = 16; break;
    case TC_BF16: d.code = kDLBfloat; d.bits = 16; break;
    case TC_I32: d.code = kDLInt; break;
    case TC_I64: d.code = kDLInt; d.bits = 64; break;
    case TC_BOOL: d.code = TC_DL_BOOL; d.bits = 8; break;
    default: break;
    }
    return d;
}

/* DLPack's name for a tensorc dtype, for "pass a float32 tensor". */
static const char *dl_name_of(tc_dtype t)
{
    switch (t) {
    case TC_F32: return "float32";
    case TC_F16: return "float16";
    case TC_BF16: return "bfloat16";
    case TC_F64: return "float64";
    case TC_I32: return "int32";
    case TC_I64: return "int64";
    case TC_BOOL: return "bool";
    default: return "?";
    }
}

/* "f32[N, D]", "f32[*]", "f32" */
static const char *type_text(tc_arena *a, tc_dtype dt, bool star, int rank, const tc_dim *const *shape)
{
    tc_buf b;
    buf_init(&b, a);
    buf_puts(&b, dtype_name(dt));
    if (star) {
        buf_puts(&b, "[*]");
    } else if (rank > 0) {
        buf_putc(&b, '[');
        for (int i = 0; i < rank; i++) {
            if (i)
                buf_puts(&b, ", ");
            dim_print(&b, shape[i]);
        }
        buf_putc(&b, ']');
    }
    return buf_str(&b);
}

static const char *ints_text(tc_arena *a, int n, const int64_t *v)
{
    tc_buf b;
    buf_init(&b, a);
    buf_putc(&b, '[');
    for (int i = 0; i < n; i++)
        buf_printf(&b, "%s%lld", i ? ", " : "", (long long)v[i]);
    buf_putc(&b, ']');
    return buf_str(&b);
}

/* --- the call's state ------------------------------------------------------------- */

typedef struct {
    const DLTensor *t;
    uint64_t addr;          /* data + byte_offset */
    uint64_t bytes;
    const char *what;       /* "parameter 'x'", "output 'out'" */
    bool written;           /* an output or an inout parameter */
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
} run_job;

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

static const run_labels *labels(tc_program *p, const gfn *f)
{
    for (const run_labels *l = p->run_labels; l; l = l->next)
        if (l->f == f)
            return l;
    tc_arena *a = p->arena;
    run_labels *l = ARENA_NEW(a, run_labels);
    l->f = f;
    l->pwhat = ARENA_ARRAY(a, const char *, f->nparams + 1);
    l->ptype = ARENA_ARRAY(a, const char *, f->nparams + 1);
    l->owhat = ARENA_ARRAY(a, const char *, f->noutputs + 1);
    l->otype = ARENA_ARRAY(a, const char *, f->noutputs + 1);
    for (int i = 0; i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        l->pwhat[i] = arena_printf(a, "parameter '%s'", g->name);
        l->ptype[i] = type_text(a, g->dtype, g->star, g->rank, g->shape);
    }
    for (int i = 0; i < f->noutputs; i++) {
        const gnode *n = f->outputs[i].node;
        l->owhat[i] = arena_printf(a, "output '%s'", f->outputs[i].name);
        l->otype[i] = type_text(a, n->dtype, false, n->rank, n->shape);
    }
    l->next = p->run_labels;
    p->run_labels = l;
    return l;
}

static const char *slot_name(const run_job *j, int s)
{
    return s < j->f->nparams ? j->f->params[s].name : j->f->outputs[j->slot_output[s]].name;
}

static const char *slot_list(run_job *j)
{
    tc_buf b;
    buf_init(&b, j->a);
    buf_puts(&b, "parameters ");
    if (j->f->nparams == 0)
        buf_puts(&b, "none");
    for (int i = 0; i < j->f->nparams; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", j->f->params[i].name);
    buf_puts(&b, "; outputs ");
    int n = 0;
    for (int k = 0; k < j->f->noutputs; k++) {
        const goutput *o = &j->f->outputs[k];
        buf_printf(&b, "%s%s%s", n++ ? ", " : "", o->name, o->inout_param >= 0 ? " (inout)" : "");
    }
    if (n == 0)
        buf_puts(&b, "none");
    return buf_str(&b);
}

/* Step 1. */
static bool match_slots(run_job *j)
{
    const gfn *f = j->f;
    j->slot_output = ARENA_ARRAY(j->a, int, f->nparams + f->noutputs + 1);
    j->nslots = f->nparams;
    for (int k = 0; k < f->noutputs; k++)
        if (f->outputs[k].inout_param < 0)
            j->slot_output[j->nslots++] = k;
    j->given = ARENA_ARRAY(j->a, int, j->nslots + 1);
    for (int s = 0; s < j->nslots; s++)
        j->given[s] = -1;
    for (size_t i = 0; i < j->nargs; i++) {
        const char *name = j->args[i].name;
        int s = -1;
        if (!name) {
            if (i >= (size_t)j->nslots)
                return ERR(j, "tc_run: argument %zu has no name, and function '%s' takes %d "
                           "(%s)", i, f->name, j->nslots, slot_list(j)), false;
            s = (int)i;
        } else {
            for (int k = 0; k < f->nparams && s < 0; k++)
                if (strcmp(f->params[k].name, name) == 0)
                    s = k;
            for (int k = f->nparams; k < j->nslots && s < 0; k++)
                if (strcmp(slot_name(j, k), name) == 0)
                    s = k;
            for (int k = 0; k < f->noutputs && s < 0; k++) /* an inout result: its parameter */
                if (f->outputs[k].inout_param >= 0 && strcmp(f->outputs[k].name, name) == 0)
                    s = f->outputs[k].inout_param;
            if (s < 0)
                return ERR(j, "tc_run: function '%s' has no parameter or output '%s' (%s)",
                           f->name, name, slot_list(j)), false;
        }
        if (j->given[s] >= 0)
            return ERR(j, "tc_run: '%s' is given twice (arguments %d and %zu)", slot_name(j, s),
                       j->given[s], i), false;
        j->given[s] = (int)i;
    }
    return true;
}

/* Step 2 for a scalar parameter. */
static bool check_scalar(run_job *j, int pi)
{
    const gparam *g = &j->f->params[pi];
    rt_scalar *v = &j->scalars[pi];
    if (j->given[pi] < 0) {
        if (!g->has_default)
            return ERR(j, "tc_run: scalar parameter '%s' (%s) of function '%s' is missing", g->name,
                       dtype_name(g->dtype), j->f->name), false;
        double x = dtype_round(g->dtype, g->def);
        *v = (rt_scalar){x, (int64_t)x};
        return true;
    }
    const tc_arg *a = &j->args[j->given[pi]];
    if (a->kind == TC_ARG_TENSOR)
        return ERR(j, "tc_run: parameter '%s' is a scalar (%s): pass a number (tc_arg_%s), not a "
                   "tensor", g->name, dtype_name(g->dtype),
                   dtype_is_float(g->dtype) ? "float" : dtype_is_int(g->dtype) ? "int" : "bool"), false;
    if (a->kind != TC_ARG_FLOAT && a->kind != TC_ARG_INT && a->kind != TC_ARG_BOOL)
        return ERR(j, "tc_run: argument '%s' has an unknown kind %d", g->name, (int)a->kind), false;
    if (dtype_is_float(g->dtype)) {
        if (a->kind == TC_ARG_BOOL)
            return ERR(j, "tc_run: parameter '%s' is %s: pass a number (tc_arg_float), not a bool",
                       g->name, dtype_name(g->dtype)), false;
        double x = dtype_round(g->dtype, a->kind == TC_ARG_FLOAT ? a->v.f : (double)a->v.i);
        int64_t i = x >= -9.2e18 && x <= 9.2e18 ? (int64_t)x : 0; /* NaN, inf: no integer view */
        *v = (rt_scalar){x, i};
        return true;
    }
    if (dtype_is_int(g->dtype)) {
        if (a->kind != TC_ARG_INT)
            return ERR(j, "tc_run: parameter '%s' is %s: pass an integer (tc_arg_int), not a %s",
                       g->name, dtype_name(g->dtype), a->kind == TC_ARG_FLOAT ? "float" : "bool"),
                   false;
        if (g->dtype == TC_I32 && (a->v.i < INT32_MIN || a->v.i > INT32_MAX))
            return ERR(j, "tc_run: parameter '%s' is i32, and %lld is out of its range", g->name,
                       a->v.i), false;
        *v = (rt_scalar){(double)a->v.i, a->v.i};
        return true;
    }
    if (a->kind != TC_ARG_BOOL)
        return ERR(j, "tc_run: parameter '%s' is bool: pass tc_arg_bool, not a%s", g->name,
                   a->kind == TC_ARG_FLOAT ? " float" : "n integer"), false;
    *v = (rt_scalar){a->v.b != 0, a->v.b != 0};
    return true;
}

/* Step 2 for one tensor: what it is, checked against dtype.  On success
 * *numel is its element count and the use is recorded. */
static bool check_tensor(run_job *j, const char *what, int slot, tc_dtype dt, const char *type,
                         bool written, int64_t *numel)
{
    const tc_arg *a = &j->args[j->given[slot]];
    if (a->kind != TC_ARG_TENSOR)
        return ERR(j, "tc_run: %s is a tensor (%s): pass a DLTensor (tc_arg_tensor), not a number",
                   what, type), false;
    const DLTensor *t = a->v.tensor;
    if (!t)
        return ERR(j, "tc_run: %s: the DLTensor pointer is NULL", what), false;
    tc_dtype have = from_dl(t->dtype);
    if (have != dt)
        return ERR(j, "tc_run: %s is %s, but the tensor is %s (pass a %s tensor)", what, type,
                   dl_dtype_name(j->a, t->dtype), dl_name_of(dt)), false;
    if (t->device.device_type != kDLCUDA && t->device.device_type != kDLCUDAManaged)
        return ERR(j, "tc_run: %s is not in CUDA device memory (DLPack device type %d; tc_run "
                   "needs kDLCUDA or kDLCUDAManaged)", what, (int)t->device.device_type), false;
    if (j->device < 0) {
        j->device = t->device.device_id;
        j->device_what = what;
    } else if (t->device.device_id != j->device) {
        return ERR(j, "tc_run: %s is on cuda:%d, but %s is on cuda:%d: every tensor of a call "
                   "must be on one device", what, t->device.device_id, j->device_what, j->device),
               false;
    }
    if (t->ndim < 0 || t->ndim > TC_MAX_RANK)
        return ERR(j, "tc_run: %s has rank %d; tensorc handles ranks 0 to %d", what, t->ndim,
                   TC_MAX_RANK), false;
    if (t->ndim > 0 && !t->shape)
        return ERR(j, "tc_run: %s has rank %d but no shape array", what, t->ndim), false;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0 || (t->shape[i] > 0 && n > INT64_MAX / 16 / t->shape[i]))
            return ERR(j, "tc_run: %s has shape %s: dim %d is out of range", what,
                       ints_text(j->a, t->ndim, t->shape), i), false;
        n *= t->shape[i];
    }
    /* Compact row-major; a dim of size 1 may have any stride (PyTorch
     * gives them odd ones), and an empty tensor has no layout to check. */
    if (t->strides && n > 0) {
        int64_t want = 1;
        for (int i = t->ndim - 1; i >= 0; i--) {
            if (t->shape[i] != 1 && t->strides[i] != want) {
                int64_t rm[TC_MAX_RANK];
                int64_t s = 1;
                for (int k = t->ndim - 1; k >= 0; k--) {
                    rm[k] = s;
                    s *= t->shape[k];
                }
                return ERR(j, "tc_run: %s has shape %s and strides %s: tc_run needs compact "
                           "row-major tensors (strides %s, or NULL); make it contiguous first",
                           what, ints_text(j->a, t->ndim, t->shape),
                           ints_text(j->a, t->ndim, t->strides), ints_text(j->a, t->ndim, rm)),
                       false;
            }
            want *= t->shape[i];
        }
    }
    uint64_t addr = (uint64_t)(uintptr_t)t->data + t->byte_offset;
    if (!t->data)
        return ERR(j, "tc_run: %s has a NULL data pointer", what), false;
    if (addr % (uint64_t)dtype_size(dt) != 0)
        return ERR(j, "tc_run: %s starts at 0x%llx (data + byte_offset), which is not aligned to "
                   "its %d-byte elements", what, (unsigned long long)addr, dtype_size(dt)), false;
    j->uses[j->nuses++] = (tensor_use){t, addr, (uint64_t)n * (uint64_t)dtype_size(dt), what, written};
    *numel = n;
    return true;
}

/* Steps 2 and 3 for the parameters. */
static bool check_params(run_job *j)
{
    const gfn *f = j->f;
    const run_labels *L = labels(j->p, f);
    bind_arg *ba = ARENA_ARRAY(j->a, bind_arg, f->nparams + 1);
    for (int i = 0; i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        if (g->scalar) {
            if (!check_scalar(j, i))
                return false;
            continue;
        }
        const char *what = L->pwhat[i];
        const char *type = L->ptype[i];
        if (j->given[i] < 0)
            return ERR(j, "tc_run: %s (%s) of function '%s' is missing", what, type, f->name), false;
        int64_t n;
        if (!check_tensor(j, what, i, g->dtype, type, g->inout, &n))
            return false;
        const DLTensor *t = j->args[j->given[i]].v.tensor;
        j->params[i] = j->uses[j->nuses - 1].addr;
        ba[i].given = true;
        if (g->star) { /* any shape: its element count binds "*" */
            ba[i].rank = 1;
            ba[i].shape[0] = n;
        } else {
            ba[i].rank = t->ndim;
            for (int k = 0; k < t->ndim; k++)
                ba[i].shape[k] = t->shape[k];
        }
    }
    j->st = graph_bind(f, ba, NULL, 0, j->a, j->d, &j->binds, &j->nbinds);
    return j->st == TC_OK;
}

/* Step 3 for the outputs. */
static bool check_outputs(run_job *j)
{
    const gfn *f = j->f;
    for (int s = f->nparams; s < j->nslots; s++) {
        const goutput *o = &f->outputs[j->slot_output[s]];
        const gnode *n = o->node;
        const run_labels *L = labels(j->p, f);
        const char *what = L->owhat[j->slot_output[s]];
        const char *type = L->otype[j->slot_output[s]];
        if (j->given[s] < 0)
            return ERR(j, "tc_run: %s (%s) of function '%s' is missing: pass a tensor for it",
                       what, type, f->name), false;
        int64_t numel;
        if (!check_tensor(j, what, s, n->dtype, type, true, &numel))
            return false;
        const DLTensor *t = j->args[j->given[s]].v.tensor;
        int64_t want[TC_MAX_RANK], wn = 1;
        for (int k = 0; k < n->rank; k++) {
            const char *unbound = NULL;
            if (!dim_eval(n->shape[k], j->binds, j->nbinds, &want[k], &unbound))
                return (j->st = diag_set(j->d, TC_ERR_INTERNAL, (tc_loc){0},
                                         "tc_run: %s: dim %d uses '%s', which no parameter binds",
                                         what, k, unbound ? unbound : "?")), false;
            wn *= want[k];
        }
        bool same = t->ndim == n->rank;
        for (int k = 0; same && k < n->rank; k++)
            same = t->shape[k] == want[k];
        if (!same && !(n->rank == 1 && numel == wn))
            return ERR(j, "tc_run: %s is %s = %s, but the tensor has shape %s", what, type,
                       ints_text(j->a, n->rank, want), ints_text(j->a, t->ndim, t->shape)), false;
        j->outputs[j->slot_output[s]] = j->uses[j->nuses - 1].addr;
    }
    return true;
}

/* Step 4: kernels assume an output aliases nothing (__restrict__). */
static bool check_overlaps(run_job *j)
{
    for (int i = 0; i < j->nuses; i++) {
        const tensor_use *u = &j->uses[i];
        if (!u->written || u->bytes == 0)
            continue;
        for (int k = 0; k < j->nuses; k++) {
            const tensor_use *v = &j->uses[k];
            if (k == i || v->bytes == 0 || (v->written && k < i))
                continue;
            if (u->addr < v->addr + v->bytes && v->addr < u->addr + u->bytes)
                return ERR(j, "tc_run: %s and %s share memory: %s is written, so it may not "
                           "overlap another argument (an inout parameter updates in place)",
                           u->what, v->what, u->what), false;
        }
    }
    return true;
}

static void check_body(void *arg)
{
    run_job *j = arg;
    const gfn *f = j->f;
    int np = f->nparams + 1, no = f->noutputs + 1;
    j->params = ARENA_ARRAY(j->a, uint64_t, np);
    j->scalars = ARENA_ARRAY(j->a, rt_scalar, np);
    j->outputs = ARENA_ARRAY(j->a, uint64_t, no);
    j->uses = ARENA_ARRAY(j->a, tensor_use, np + no);
    j->device = -1;
    if (match_slots(j) && check_params(j) && check_outputs(j))
        check_overlaps(j);
}

/* --- the GPU --------------------------------------------------------------------------- */

tc_status api_gpu(tc_ctx *ctx, int ordinal, struct tc_rt **out)
{
    *out = NULL;
    bool made = !ctx->rt;
    if (made && !(ctx->rt = rt_new(ordinal, NULL)))
        return diag_set(&ctx->diag, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
    struct tc_rt *rt = ctx->rt;
    if (!rt->dev && rt->ordinal < 0 && ordinal >= 0)
        rt->ordinal = ordinal;
    if (rt->dev && ordinal >= 0 && ordinal != rt->ordinal)
        return diag_set(&ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0},
                        "the tensors are on cuda:%d, but this context runs on cuda:%d (one "
                        "context per device)", ordinal, rt->ordinal);
    tc_status st = rt_open(rt, &ctx->diag);
    if (st != TC_OK) {
        if (made) { /* it holds nothing yet: a CPU-only context keeps no GPU state */
            rt_free(rt);
            ctx->rt = NULL;
        }
        return st;
    }
    *out = rt;
    return TC_OK;
}

tc_status api_run(tc_program *p, const gfn *f, const tc_arg *args, size_t nargs, void *stream,
                  api_run_info *info)
{
    tc_ctx *ctx = p->ctx;
    tc_diag *d = &ctx->diag;
    api_begin(ctx);
    if (!args && nargs)
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "tc_run: args is NULL but nargs is %zu", nargs));
    if (nargs > INT_MAX)
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "tc_run: %zu arguments", nargs));
    tc_arena *a = arena_new(d);
    if (!a)
        return api_fail(ctx, diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory"));
    run_job j = {.p = p, .f = f, .args = args, .nargs = nargs, .a = a, .d = d, .st = TC_OK};
    tc_status st = diag_protect(d, check_body, &j);
    if (st == TC_OK)
        st = j.st;

    /* Step 5: the device the tensors are on (the context may have one already). */
    struct tc_rt *rt = NULL;
    if (st == TC_OK) {
        if (ctx->rt && ctx->rt->ordinal >= 0 && j.device >= 0 && j.device != ctx->rt->ordinal)
            st = diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                          "tc_run: %s is on cuda:%d, but this context runs on cuda:%d (set "
                          "tc_options.device, or use one context per device)",
                          j.device_what, j.device, ctx->rt->ordinal);
        else
            st = api_gpu(ctx, j.device, &rt);
    }

    /* Step 6: the plan, 64-bit when the sizes need it, and its module. */
    const cg_unit *unit = NULL;
    const tc_plan *plan = NULL;
    rt_module *mod = NULL;
    bool reported = false; /* api_unit has called api_fail itself, keeping the location */
    if (st == TC_OK) {
        st = api_unit(p, f, false, &unit, &plan);
        if (st == TC_OK && rt_needs_idx64(plan, j.binds, j.nbinds, NULL, NULL))
            st = api_unit(p, f, true, &unit, &plan);
        reported = st != TC_OK;
    }
    if (st == TC_OK)
        st = rt_load(rt, unit->source, &mod, d);

    /* Step 7. */
    if (st == TC_OK) {
        rt_args ra = {j.binds, j.nbinds, j.params, j.scalars, f->nparams, j.outputs, f->noutputs};
        void *const *events = info && info->events && info->nevents >= plan->nsteps + 1 ? info->events
                                                                                       : NULL;
        st = rt_run(rt, mod, plan, &ra, stream, events, d);
    }
    if (info && st == TC_OK) {
        info->plan = plan;
        info->origin = (int)rt->origin;
        info->jit_ms = rt->jit_ms;
        info->arch = rt->jit_arch;
        info->ptx = rt->jit_ptx;
    }
    arena_free(a);
    return st == TC_OK || reported ? st : api_fail(ctx, st);
}

/* --- the public calls ---------------------------------------------------------------------- */

tc_status tc_ctx_create_ex(tc_ctx **ctx, const tc_options *opts)
{
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    *ctx = NULL;
    tc_options o = TC_OPTIONS_INIT;
    if (opts)
        o = *opts;
    if (o.device < TC_DEVICE_AUTO)
        return TC_ERR_INVALID_ARG;
    tc_status st = tc_ctx_create(ctx);
    if (st != TC_OK)
        return st;
    if (!((*ctx)->rt = rt_new(o.device, o.cache_dir))) {
        tc_ctx_free(*ctx);
        *ctx = NULL;
        return TC_ERR_NOMEM;
    }
    rt_set_options((*ctx)->rt, o.fast_math != 0, o.line_info != 0);
    return TC_OK;
}

tc_status tc_run(tc_program *p, const char *fn, const tc_arg *args, size_t nargs, void *stream)
{
    if (!p)
        return TC_ERR_INVALID_ARG;
    const gfn *f;
    tc_status st = api_entry(p, fn, &f);
    if (st != TC_OK)
        return st;
    return api_run(p, f, args, nargs, stream, NULL);
}

const char *tc_program_source(tc_program *p, const char *fn)
{
    if (!p)
        return NULL;
    const char *src = NULL;
    if (!fn)
        return api_cuda_source(p, NULL, &src) == TC_OK ? src : NULL;
    const gfn *f;
    const cg_unit *unit;
    const tc_plan *plan;
    if (api_entry(p, fn, &f) != TC_OK || api_unit(p, f, false, &unit, &plan) != TC_OK)
        return NULL;
    return unit->source;
}
