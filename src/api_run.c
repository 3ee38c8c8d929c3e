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
 * Everything a call allocates on the host lives in a scratch arena reset at
 * its end, so repeated calls leave the program's own arena alone.
 * tc_run_foreach (api_foreach.c) runs the same steps over many groups,
 * through the pieces api_check.h shares.
 */
#include "api_check.h"
#include "api_interp.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "rt.h"

/* A scalar's integer view: truncated, saturating, NaN 0 (as a float-to-int
 * cast does on the device); converting NaN, inf or a double beyond int64 to
 * int64_t is undefined in C. */
static int64_t int_view(double x)
{
    if (x != x)
        return 0;
    if (x >= 9223372036854775807.0)
        return INT64_MAX;
    if (x < -9223372036854775807.0)
        return INT64_MIN;
    return (int64_t)x;
}

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

tc_dtype api_from_dl(DLDataType t)
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
const char *api_type_text(tc_arena *a, tc_dtype dt, bool star, int rank, const tc_dim *const *shape)
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

const run_labels *api_labels(tc_program *p, const gfn *f)
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
        l->ptype[i] = api_type_text(a, g->dtype, g->star, g->rank, g->shape);
    }
    for (int i = 0; i < f->noutputs; i++) {
        const gnode *n = f->outputs[i].node;
        l->owhat[i] = arena_printf(a, "output '%s'", f->outputs[i].name);
        l->otype[i] = api_type_text(a, n->dtype, false, n->rank, n->shape);
    }
    l->next = p->run_labels;
    p->run_labels = l;
    return l;
}

const char *api_slot_name(const run_job *j, int s)
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
bool api_match_slots(run_job *j)
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
                return ERR(j, "%s: argument %zu has no name, and function '%s' takes %d "
                           "(%s)", api_who(j), i, f->name, j->nslots, slot_list(j)), false;
            s = (int)i;
        } else {
            for (int k = 0; k < f->nparams && s < 0; k++)
                if (strcmp(f->params[k].name, name) == 0)
                    s = k;
            for (int k = f->nparams; k < j->nslots && s < 0; k++)
                if (strcmp(api_slot_name(j, k), name) == 0)
                    s = k;
            for (int k = 0; k < f->noutputs && s < 0; k++) /* an inout result: its parameter */
                if (f->outputs[k].inout_param >= 0 && strcmp(f->outputs[k].name, name) == 0)
                    s = f->outputs[k].inout_param;
            if (s < 0)
                return ERR(j, "%s: function '%s' has no parameter or output '%s' (%s)", api_who(j),
                           f->name, name, slot_list(j)), false;
        }
        if (j->given[s] >= 0)
            return ERR(j, "%s: '%s' is given twice (arguments %d and %zu)", api_who(j), api_slot_name(j, s),
                       j->given[s], i), false;
        j->given[s] = (int)i;
    }
    return true;
}

/* Step 2 for a scalar parameter. */
bool api_check_scalar(run_job *j, int pi)
{
    const gparam *g = &j->f->params[pi];
    rt_scalar *v = &j->scalars[pi];
    if (j->given[pi] < 0) {
        if (!g->has_default)
            return ERR(j, "%s: scalar parameter '%s' (%s) of function '%s' is missing", api_who(j), g->name,
                       dtype_name(g->dtype), j->f->name), false;
        double x = dtype_round(g->dtype, g->def);
        *v = (rt_scalar){x, int_view(x)};
        return true;
    }
    const tc_arg *a = &j->args[j->given[pi]];
    if (a->kind == TC_ARG_TENSOR || a->kind == TC_ARG_TENSORS)
        return ERR(j, "%s: parameter '%s' is a scalar (%s): pass a number (tc_arg_%s), not a "
                   "tensor", api_who(j), g->name, dtype_name(g->dtype),
                   dtype_is_float(g->dtype) ? "float" : dtype_is_int(g->dtype) ? "int" : "bool"), false;
    if (a->kind != TC_ARG_FLOAT && a->kind != TC_ARG_INT && a->kind != TC_ARG_BOOL)
        return ERR(j, "%s: argument '%s' has an unknown kind %d", api_who(j), g->name, (int)a->kind), false;
    if (dtype_is_float(g->dtype)) {
        if (a->kind == TC_ARG_BOOL)
            return ERR(j, "%s: parameter '%s' is %s: pass a number (tc_arg_float), not a bool", api_who(j),
                       g->name, dtype_name(g->dtype)), false;
        double x = dtype_round(g->dtype, a->kind == TC_ARG_FLOAT ? a->v.f : (double)a->v.i);
        *v = (rt_scalar){x, int_view(x)};
        return true;
    }
    if (dtype_is_int(g->dtype)) {
        if (a->kind != TC_ARG_INT)
            return ERR(j, "%s: parameter '%s' is %s: pass an integer (tc_arg_int), not a %s", api_who(j),
                       g->name, dtype_name(g->dtype), a->kind == TC_ARG_FLOAT ? "float" : "bool"),
                   false;
        if (g->dtype == TC_I32 && (a->v.i < INT32_MIN || a->v.i > INT32_MAX))
            return ERR(j, "%s: parameter '%s' is i32, and %lld is out of its range", api_who(j), g->name,
                       a->v.i), false;
        *v = (rt_scalar){(double)a->v.i, a->v.i};
        return true;
    }
    if (a->kind != TC_ARG_BOOL)
        return ERR(j, "%s: parameter '%s' is bool: pass tc_arg_bool, not a%s", api_who(j), g->name,
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
    if (a->kind == TC_ARG_TENSORS)
        return ERR(j, "%s: %s takes one tensor (tc_arg_tensor): lists of tensors are for "
                   "tc_run_foreach", api_who(j), what), false;
    if (a->kind != TC_ARG_TENSOR)
        return ERR(j, "%s: %s is a tensor (%s): pass a DLTensor (tc_arg_tensor), not a number", api_who(j),
                   what, type), false;
    return api_check_dl(j, what, a->v.tensor, dt, type, written, numel);
}

/* The checks of one DLTensor t (check_tensor; tc_run_foreach per group). */
bool api_check_dl(run_job *j, const char *what, const DLTensor *t, tc_dtype dt, const char *type,
                     bool written, int64_t *numel)
{
    if (!t)
        return ERR(j, "%s: %s: the DLTensor pointer is NULL", api_who(j), what), false;
    tc_dtype have = api_from_dl(t->dtype);
    if (have != dt)
        return ERR(j, "%s: %s is %s, but the tensor is %s (pass a %s tensor)", api_who(j), what, type,
                   dl_dtype_name(j->a, t->dtype), dl_name_of(dt)), false;
    if (t->device.device_type != kDLCUDA && t->device.device_type != kDLCUDAManaged)
        return ERR(j, "%s: %s is not in CUDA device memory (DLPack device type %d; tc_run "
                   "needs kDLCUDA or kDLCUDAManaged)", api_who(j), what, (int)t->device.device_type), false;
    /* a negative id would pass for "no device yet" below and skip the one-device check */
    if (t->device.device_id < 0)
        return ERR(j, "%s: %s is on cuda:%d: a CUDA device_id is 0 or more", api_who(j), what,
                   t->device.device_id), false;
    if (j->device < 0) {
        j->device = t->device.device_id;
        j->device_what = what;
        j->device_group = j->group;
    } else if (t->device.device_id != j->device) {
        return ERR(j, "%s: %s is on cuda:%d, but %s%s is on cuda:%d: every tensor of a call "
                   "must be on one device", api_who(j), what, t->device.device_id,
                   j->device_group >= 0 ? arena_printf(j->a, "group %d's ", j->device_group) : "",
                   j->device_what, j->device), false;
    }
    if (t->ndim < 0 || t->ndim > TC_MAX_RANK)
        return ERR(j, "%s: %s has rank %d; tensorc handles ranks 0 to %d", api_who(j), what, t->ndim,
                   TC_MAX_RANK), false;
    if (t->ndim > 0 && !t->shape)
        return ERR(j, "%s: %s has rank %d but no shape array", api_who(j), what, t->ndim), false;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) { /* no division: this runs per tensor per call */
        int64_t m;
        if (t->shape[i] < 0 || __builtin_mul_overflow(n, t->shape[i], &m) || m > INT64_MAX / 16)
            return ERR(j, "%s: %s has shape %s: dim %d is out of range", api_who(j), what,
                       ints_text(j->a, t->ndim, t->shape), i), false;
        n = m;
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
                return ERR(j, "%s: %s has shape %s and strides %s: tc_run needs compact "
                           "row-major tensors (strides %s, or NULL); make it contiguous first", api_who(j),
                           what, ints_text(j->a, t->ndim, t->shape),
                           ints_text(j->a, t->ndim, t->strides), ints_text(j->a, t->ndim, rm)),
                       false;
            }
            want *= t->shape[i];
        }
    }
    uint64_t addr = (uint64_t)(uintptr_t)t->data + t->byte_offset;
    if (!t->data && !(n == 0 && j->group >= 0)) /* PyTorch's empty tensors have none */
        return ERR(j, "%s: %s has a NULL data pointer", api_who(j), what), false;
    uint64_t esize = (uint64_t)dtype_size(dt); /* a power of two: no division */
    if (addr & (esize - 1))
        return ERR(j, "%s: %s starts at 0x%llx (data + byte_offset), which is not aligned to "
                   "its %d-byte elements", api_who(j), what, (unsigned long long)addr, dtype_size(dt)), false;
    j->uses[j->nuses++] = (tensor_use){t, addr, (uint64_t)n * esize, what, written,
                                       j->group};
    *numel = n;
    return true;
}

/* Steps 2 and 3 for the parameters. */
static bool check_params(run_job *j)
{
    const gfn *f = j->f;
    const run_labels *L = api_labels(j->p, f);
    bind_arg *ba = ARENA_ARRAY(j->a, bind_arg, f->nparams + 1);
    for (int i = 0; i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        if (g->scalar) {
            if (!api_check_scalar(j, i))
                return false;
            continue;
        }
        const char *what = L->pwhat[i];
        const char *type = L->ptype[i];
        if (j->given[i] < 0)
            return ERR(j, "%s: %s (%s) of function '%s' is missing", api_who(j), what, type, f->name), false;
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
        const run_labels *L = api_labels(j->p, f);
        const char *what = L->owhat[j->slot_output[s]];
        const char *type = L->otype[j->slot_output[s]];
        if (j->given[s] < 0)
            return ERR(j, "%s: %s (%s) of function '%s' is missing: pass a tensor for it", api_who(j),
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
            return ERR(j, "%s: %s is %s = %s, but the tensor has shape %s", api_who(j), what, type,
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
                return ERR(j, "%s: %s and %s share memory: %s is written, so it may not "
                           "overlap another argument (an inout parameter updates in place)", api_who(j),
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
    if (api_match_slots(j) && check_params(j) && check_outputs(j))
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

/* The call's scratch arena: kept in the program and reset after each call,
 * so calls made again and again (an optimizer step) reuse its memory
 * instead of faulting fresh pages in (a third of a 240-group call's host
 * time when each call had its own arena).  Messages are copied into the
 * diagnostics, so nothing outlives the reset. */
tc_arena *api_scratch(tc_program *p)
{
    if (!p->run_scratch)
        p->run_scratch = arena_new(&p->ctx->diag);
    return p->run_scratch;
}

/* Steps 5 to 7 for a checked job: the device, the plan and its module, the
 * run (over groups when G is not NULL; params and outputs are then a
 * non-empty group's, and j->binds bind "*" to the largest group). */
/* Whether to pass more groups than the 4 KB table holds in a 32 KB kernel
 * parameter (CUDA 12.1+ drivers on Volta and newer) instead of uploading
 * the table.  Off unless TENSORC_FOREACH_WIDE=1: measured on the H200
 * (AdamW over 240 tensors), the 32 KB launch cost more host time than the
 * upload (72.6 vs 39.0 us a call in examples/c/run_adamw, 54.5 vs 42.3 in
 * tc-bench), and the wide build compiled slower (cold 202 vs 25 ms). */
static bool wide_params(struct tc_rt *rt)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    if (api_env_int("TENSORC_FOREACH_WIDE", 0, 1, 0, &warned) != 1)
        return false;
    return drv_version(rt->dev) >= 12010 && drv_arch(rt->dev) >= 70;
}

/* A launch, copy or cuBLAS call the driver refused is the caller's fault,
 * not tensorc's, when a tensor is not device memory the driver knows (a
 * host pointer, a freed one): say which, as TC_ERR_INVALID_ARG.  Asked only
 * after a failure, so a good call pays nothing. */
static tc_status blame_pointer(run_job *j, struct tc_rt *rt, tc_status st)
{
    for (int i = 0; i < j->nuses; i++) {
        const tensor_use *u = &j->uses[i];
        if (!u->bytes || drv_ptr_known(rt->dev, u->addr, u->bytes) != 0)
            continue;
        return diag_set(j->d, TC_ERR_INVALID_ARG, (tc_loc){0},
                        "%s%s%s: %s (0x%llx, %llu bytes) is not in CUDA device memory the driver "
                        "knows: pass memory from cudaMalloc/cuMemAlloc (or a CUDA tensor's); "
                        "the driver said: %s", j->who,
                        u->group >= 0 ? ": group " : "",
                        u->group >= 0 ? arena_printf(j->a, "%d", u->group) : "", u->what,
                        (unsigned long long)u->addr, (unsigned long long)u->bytes,
                        j->d->brief ? j->d->brief : tc_status_str(st));
    }
    return st;
}

tc_status api_launch(run_job *j, const uint64_t *params, const uint64_t *outputs,
                        const rt_groups *G, int nonempty, void *stream, api_run_info *info,
                        bool *reported)
{
    tc_program *p = j->p;
    tc_ctx *ctx = p->ctx;
    tc_diag *d = j->d;
    const gfn *f = j->f;

    /* Step 5: the device the tensors are on (the context may have one already). */
    struct tc_rt *rt = NULL;
    tc_status st;
    if (ctx->rt && ctx->rt->ordinal >= 0 && j->device >= 0 && j->device != ctx->rt->ordinal)
        st = diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                      "%s: %s is on cuda:%d, but this context runs on cuda:%d (set "
                      "tc_options.device, or use one context per device)", j->who,
                      j->device_what, j->device, ctx->rt->ordinal);
    else
        st = api_gpu(ctx, j->device, &rt);

    /* Step 6: the plan, 64-bit when the sizes need it, and its module. */
    const cg_unit *unit = NULL;
    const tc_plan *plan = NULL;
    rt_module *mod = NULL;
    if (st == TC_OK) {
        st = api_unit(p, f, false, &unit, &plan);
        bool idx64 = false;
        if (st == TC_OK && rt_needs_idx64(plan, j->binds, j->nbinds, NULL, NULL)) {
            idx64 = true;
            st = api_unit(p, f, true, &unit, &plan);
        }
        /* More groups than the 4 KB table holds: the wide unit's 32 KB
         * parameter instead of an upload, where the driver takes one */
        if (st == TC_OK && G && plan->nsteps == 1 && plan->steps[0].fe_n &&
            nonempty > plan->steps[0].fe_cap && wide_params(rt)) {
            const cg_unit *wu;
            const tc_plan *wp;
            st = api_unit_wide(p, f, idx64, &wu, &wp);
            if (st == TC_OK && nonempty <= wp->steps[0].fe_cap) { /* else both upload: keep 4 KB */
                unit = wu;
                plan = wp;
            }
        }
        *reported = st != TC_OK;
    }
    if (st == TC_OK && G && (plan->nsteps != 1 || plan->steps[0].kind != PSTEP_KERNEL ||
                             !plan->steps[0].fe_n))
        st = diag_set(d, TC_ERR_INTERNAL, (tc_loc){0}, "%s: function '%s' is elementwise, but its "
                      "plan is not one kernel over tensor groups (a bug in tensorc)", j->who, f->name);
    /* A plan of cuBLAS calls and copies alone needs no module: no NVRTC
     * compile, no image without entries for the driver to load. */
    bool kernels = false;
    for (int i = 0; st == TC_OK && i < plan->nsteps; i++)
        kernels |= plan->steps[i].kind == PSTEP_KERNEL;
    if (st == TC_OK && (!G || params) && kernels)
        st = rt_load(rt, unit->source, &mod, d);

    /* Step 7 (a run over groups that are all empty launches nothing). */
    if (st == TC_OK && (!G || params)) {
        rt_args ra = {j->binds, j->nbinds, params, j->scalars, f->nparams, outputs, f->noutputs, G};
        void *const *events = info && info->events && info->nevents >= plan->nsteps + 1 ? info->events
                                                                                       : NULL;
        st = rt_run(rt, mod, plan, &ra, stream, events, d);
        if (st != TC_OK && st != TC_ERR_INVALID_ARG && st != TC_ERR_NOMEM)
            st = blame_pointer(j, rt, st);
    }
    if (info && st == TC_OK) {
        info->plan = plan;
        info->origin = (int)rt->origin;
        info->jit_ms = rt->jit_ms;
        info->arch = rt->jit_arch;
        info->ptx = rt->jit_ptx;
    }
    return st;
}

tc_arena *api_call_begin(tc_program *p, const char *who, const tc_arg *args, size_t nargs,
                         tc_status *st)
{
    tc_ctx *ctx = p->ctx;
    tc_diag *d = &ctx->diag;
    api_begin(ctx);
    tc_arena *a = NULL;
    if (!args && nargs)
        *st = diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0}, "%s: the arguments are NULL but "
                       "nargs is %zu", who, nargs);
    else if (nargs > INT_MAX)
        *st = diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0}, "%s: %zu arguments", who, nargs);
    else if (!(a = api_scratch(p)))
        *st = diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
    if (!a)
        *st = api_fail(ctx, *st);
    return a;
}

tc_status api_run(tc_program *p, const gfn *f, const tc_arg *args, size_t nargs, void *stream,
                  api_run_info *info)
{
    tc_ctx *ctx = p->ctx;
    tc_diag *d = &ctx->diag;
    tc_status st;
    tc_arena *a = api_call_begin(p, "tc_run", args, nargs, &st);
    if (!a)
        return st;
    run_job j = {.p = p, .f = f, .args = args, .nargs = nargs, .a = a, .d = d, .st = TC_OK, .group = -1,
                 .who = "tc_run"};
    st = diag_protect(d, check_body, &j);
    if (st == TC_OK)
        st = j.st;

    bool reported = false; /* api_unit has called api_fail itself, keeping the location */
    if (st == TC_OK)
        st = api_launch(&j, j.params, j.outputs, NULL, 1, stream, info, &reported);
    arena_reset(a);
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
    api_call_args rest; /* args less the dtype bindings (api_interp.h) */
    tc_status st = api_call_entry(p, "tc_run", fn, args, nargs, false, &f, &rest);
    if (st != TC_OK)
        return st;
    st = api_run(p, f, rest.args, rest.nargs, stream, NULL);
    api_call_args_free(&rest);
    return st;
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
}const char *api_who(const run_job *j)
{
    return j->group < 0 ? j->who : arena_printf(j->a, "%s: group %d", j->who, j->group);
}


