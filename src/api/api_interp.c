/* api_interp.c - tc_run_cpu: a function run through the reference
 * interpreter on host tensors (tensorc.h), and the host-side argument
 * checks it shares with tc_output_shapes (api_interp.h).
 *
 * Arguments are matched to slots by api_match_slots, as tc_run matches
 * them, so names, positions and inout parameters mean the same in every
 * call.  Tensors are decoded into the interpreter's form (ref.h: one double
 * or int64 per element), run, and encoded into the outputs: every input is
 * read before any output is written.
 */
#include <stdlib.h>
#include <string.h>

#include "api_check.h"
#include "api_interp.h"

/* the header promises callers this limit */
_Static_assert(REF_MAX_ELEMS == TC_CPU_MAX_ELEMS, "tensorc.h's TC_CPU_MAX_ELEMS is the interpreter's limit");
#include "graph/bind.h"

#define HOST_ERR(c, ...) \
    api_fail((c)->p->ctx, diag_set(&(c)->p->ctx->diag, TC_ERR_INVALID_ARG, (tc_loc){0}, __VA_ARGS__))

static int64_t dl_numel(const DLTensor *t)
{
    int64_t n = 1;
    for (int k = 0; k < t->ndim; k++)
        n *= t->shape[k];
    return n;
}

/* A tensor's dtype, rank and (with data) memory, for `what` ("parameter 'x'"). */
static tc_status check_tensor(api_host_call *c, const char *who, const char *what,
                              const char *type, const DLTensor *t, tc_dtype dt, bool data)
{
    if (!t)
        return HOST_ERR(c, "%s: %s is NULL", who, what);
    if (t->ndim < 0 || t->ndim > TC_MAX_RANK || (t->ndim > 0 && !t->shape))
        return HOST_ERR(c, "%s: %s has %d dims%s", who, what, t->ndim,
                        t->ndim > 0 ? " but no shape" : "");
    for (int k = 0; k < t->ndim; k++)
        if (t->shape[k] < 0)
            return HOST_ERR(c, "%s: %s has a negative size in dim %d", who, what, k);
    if (api_from_dl(t->dtype) != dt)
        return HOST_ERR(c, "%s: %s must be %s, but its DLPack dtype is code %d, %d bits, %d "
                        "lanes", who, what, type, t->dtype.code, t->dtype.bits, t->dtype.lanes);
    if (!data)
        return TC_OK;
    if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDAHost)
        return HOST_ERR(c, "%s: %s is not in host memory (DLPack device type %d): tc_run_cpu "
                        "takes kDLCPU or kDLCUDAHost tensors", who, what, (int)t->device.device_type);
    if (!t->data && dl_numel(t) > 0)
        return HOST_ERR(c, "%s: %s has a NULL data pointer", who, what);
    int64_t want = 1;
    for (int k = t->ndim - 1; k >= 0 && t->strides; k--) {
        if (t->shape[k] != 1 && t->strides[k] != want)
            return HOST_ERR(c, "%s: %s is not compact row-major (dim %d has stride %lld, not "
                            "%lld)", who, what, k, (long long)t->strides[k], (long long)want);
        want *= t->shape[k];
    }
    return TC_OK;
}

typedef struct {
    api_host_call *c;
    bind_arg *ba;
    const tc_dimbind *extra;
    int nextra;
    tc_status st;
} bind_job;

static void bind_body(void *arg)
{
    bind_job *j = arg;
    api_host_call *c = j->c;
    j->st = graph_bind(c->f, j->ba, j->extra, j->nextra, c->a, &c->p->ctx->diag, &c->binds,
                       &c->nbinds);
}

tc_status api_host_begin(api_host_call *c, tc_program *p, const gfn *f, const char *who,
                         const tc_arg *args, size_t nargs, bool data, const tc_dimbind *extra,
                         int nextra)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    c->f = f;
    tc_status st;
    if (!(c->a = api_call_begin(p, who, args, nargs, &st)))
        return st;
    tc_diag *d = &p->ctx->diag;
    run_job j = {.p = p, .f = f, .args = args, .nargs = nargs, .a = c->a, .d = d, .st = TC_OK,
                 .group = -1, .who = who};
    j.scalars = ARENA_ARRAY(c->a, rt_scalar, f->nparams + 1);
    if (!api_match_slots(&j))
        return api_fail(p->ctx, j.st);
    const run_labels *lb = api_labels(p, f);
    c->params = ARENA_ARRAY(c->a, const DLTensor *, f->nparams + 1);
    c->outputs = ARENA_ARRAY(c->a, const DLTensor *, f->noutputs + 1);
    c->scalars = j.scalars;
    bind_arg *ba = ARENA_ARRAY(c->a, bind_arg, f->nparams + 1);
    for (int i = 0; i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        const tc_arg *a = j.given[i] >= 0 ? &args[j.given[i]] : NULL;
        if (g->scalar) {
            if (data && !api_check_scalar(&j, i))
                return api_fail(p->ctx, j.st);
            continue;
        }
        if (!a && !data)
            continue; /* bound from the others (graph_bind says which size is not) */
        if (!a)
            return HOST_ERR(c, "%s: %s (%s) of function '%s' is missing", who, lb->pwhat[i],
                            lb->ptype[i], f->name);
        if (a->kind != TC_ARG_TENSOR)
            return HOST_ERR(c, "%s: %s is a tensor (%s): pass it with tc_arg_tensor", who,
                            lb->pwhat[i], lb->ptype[i]);
        const DLTensor *t = a->v.tensor;
        if ((st = check_tensor(c, who, lb->pwhat[i], lb->ptype[i], t, g->dtype, data)) != TC_OK)
            return st;
        c->params[i] = t;
        ba[i].given = true;
        if (g->star) {
            ba[i].rank = 1;
            ba[i].shape[0] = dl_numel(t);
        } else {
            ba[i].rank = t->ndim;
            for (int k = 0; k < t->ndim; k++)
                ba[i].shape[k] = t->shape[k];
        }
    }
    bind_job b = {c, ba, extra, nextra, TC_OK};
    st = diag_protect(d, bind_body, &b);
    if (st == TC_OK)
        st = b.st;
    if (st != TC_OK)
        return api_fail(p->ctx, st);
    /* the outputs: after binding, so their shapes can be checked */
    for (int s = f->nparams; s < j.nslots; s++) {
        int k = j.slot_output[s];
        const goutput *o = &f->outputs[k];
        if (j.given[s] < 0) {
            if (data)
                return HOST_ERR(c, "%s: %s (%s) of function '%s' is missing", who, lb->owhat[k],
                                lb->otype[k], f->name);
            continue;
        }
        if (!data)
            continue; /* tc_output_shapes: outputs passed along are not read */
        const tc_arg *a = &args[j.given[s]];
        if (a->kind != TC_ARG_TENSOR)
            return HOST_ERR(c, "%s: %s is a tensor (%s): pass it with tc_arg_tensor", who,
                            lb->owhat[k], lb->otype[k]);
        const DLTensor *t = a->v.tensor;
        if ((st = check_tensor(c, who, lb->owhat[k], lb->otype[k], t, o->node->dtype, true)) != TC_OK)
            return st;
        int64_t want = 1;
        bool same = o->node->rank == t->ndim || o->node->rank == 1;
        for (int i = 0; i < o->node->rank; i++) {
            int64_t v = bind_eval(o->node->shape[i], c->binds, c->nbinds);
            want *= v;
            same = same && (o->node->rank == 1 || t->shape[i] == v);
        }
        if (!same || dl_numel(t) != want)
            return HOST_ERR(c, "%s: %s (%s) has the wrong shape: %lld elements%s are expected",
                            who, lb->owhat[k], lb->otype[k], (long long)want,
                            o->node->rank > 1 ? " in the signature's shape" : "");
        c->outputs[k] = t;
    }
    for (int k = 0; k < f->noutputs; k++)
        if (f->outputs[k].inout_param >= 0)
            c->outputs[k] = c->params[f->outputs[k].inout_param];
    return TC_OK;
}

void api_host_end(api_host_call *c)
{
    if (c->a)
        arena_reset(c->a);
    c->a = NULL;
}

/* --- tc_run_cpu ------------------------------------------------------------------------------ */

static const char *dl_bytes(const DLTensor *t)
{
    return (const char *)t->data + t->byte_offset;
}

/* t (host, compact) into r, rank 1 of its element count when flat. */
static bool decode(const DLTensor *t, tc_dtype dt, bool flat, ref_tensor *r)
{
    int64_t n = dl_numel(t);
    int64_t shape1[1] = {n};
    if (!ref_alloc(r, dt, flat ? 1 : t->ndim, flat ? shape1 : t->shape))
        return false;
    const char *b = dl_bytes(t);
    size_t sz = (size_t)dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        if (r->idata)
            r->idata[i] = dtype_decode_int(dt, b + (size_t)i * sz);
        else
            r->data[i] = dtype_decode(dt, b + (size_t)i * sz);
    }
    return true;
}

static void encode(const ref_tensor *r, const DLTensor *t)
{
    char *b = (char *)t->data + t->byte_offset;
    size_t sz = (size_t)dtype_size(r->dtype);
    int64_t n = ref_numel(r);
    for (int64_t i = 0; i < n; i++) {
        if (r->idata)
            dtype_encode_int(r->dtype, r->idata[i], b + (size_t)i * sz);
        else
            dtype_encode(r->dtype, r->data[i], b + (size_t)i * sz);
    }
}

tc_status tc_run_cpu(tc_program *p, const char *fn, const tc_arg *args, size_t nargs)
{
    if (!p)
        return TC_ERR_INVALID_ARG;
    const gfn *f;
    api_call_args rest;
    tc_status st = api_call_entry(p, "tc_run_cpu", fn, args, nargs, false, &f, &rest);
    if (st != TC_OK)
        return st;
    api_host_call c;
    st = api_host_begin(&c, p, f, "tc_run_cpu", rest.args, rest.nargs, true, NULL, 0);
    ref_tensor *in = calloc((size_t)f->nparams + 1, sizeof *in);
    ref_tensor *out = calloc((size_t)f->noutputs + 1, sizeof *out);
    /* copies of what api_host_begin found: api_ref_run starts a new call */
    tc_dimbind *binds = NULL;
    const DLTensor **outs = NULL;
    int nb = c.nbinds;
    if (st == TC_OK && (!in || !out || !(binds = malloc(((size_t)nb + 1) * sizeof *binds)) ||
                        !(outs = malloc(((size_t)f->noutputs + 1) * sizeof *outs))))
        st = api_fail(p->ctx, diag_set(&p->ctx->diag, TC_ERR_NOMEM, (tc_loc){0}, "out of memory"));
    /* the interpreter's limit, said before anything that size is allocated */
    for (int i = 0; st == TC_OK && i < f->nparams + f->noutputs; i++) {
        const DLTensor *t = i < f->nparams ? c.params[i] : c.outputs[i - f->nparams];
        if (t && dl_numel(t) > REF_MAX_ELEMS)
            st = HOST_ERR(&c, "tc_run_cpu: %s '%s' has %lld elements, more than the reference "
                          "interpreter holds (%lld)", i < f->nparams ? "parameter" : "output",
                          i < f->nparams ? f->params[i].name : f->outputs[i - f->nparams].name,
                          (long long)dl_numel(t), (long long)REF_MAX_ELEMS);
    }
    for (int i = 0; st == TC_OK && i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        bool ok;
        if (g->scalar) {
            ok = ref_alloc(&in[i], g->dtype, 0, NULL);
            if (ok && in[i].idata)
                in[i].idata[0] = c.scalars[i].i;
            else if (ok)
                in[i].data[0] = c.scalars[i].f;
        } else {
            ok = decode(c.params[i], g->dtype, g->star, &in[i]);
        }
        if (!ok)
            st = api_fail(p->ctx, diag_set(&p->ctx->diag, TC_ERR_NOMEM, (tc_loc){0},
                                           "tc_run_cpu: out of memory for parameter '%s'", g->name));
    }
    if (st == TC_OK) {
        memcpy(binds, c.binds, (size_t)nb * sizeof *binds);
        memcpy(outs, c.outputs, (size_t)f->noutputs * sizeof *outs);
    }
    api_host_end(&c);
    if (st == TC_OK)
        st = api_ref_run(p, f, binds, nb, in, out);
    for (int k = 0; st == TC_OK && k < f->noutputs; k++)
        encode(&out[k], outs[k]);
    for (int i = 0; in && i < f->nparams; i++)
        ref_free(&in[i]);
    for (int k = 0; out && k < f->noutputs; k++)
        ref_free(&out[k]);
    free(in);
    free(out);
    free(binds);
    free(outs);
    api_call_args_free(&rest);
    return st;
}
