/* inst.c - one set of arguments for a function: what one tc_run needs.
 *
 * The steps of tools/run.c's --device=cuda path, kept apart so the suite can
 * hold 240 of them (AdamW) and free each one's host copy as soon as it is
 * checked: bind the sizes (graph_bind, through api_bind), make random
 * inputs on the host, upload them once, allocate outputs poisoned with 0xff
 * so an element no kernel writes reads as NaN, download the results.
 *
 * Tensors are passed as compact row-major DLTensors on cuda:0; a [*]
 * parameter as rank 1.
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "N=64,D=128" into bindings (names malloc'd).  NULL and *err on a bad one. */
static tc_dimbind *parse_shape(const char *shape, int *n, char **err)
{
    int cap = 1;
    for (const char *s = shape; *s; s++)
        cap += *s == ',';
    tc_dimbind *b = calloc((size_t)cap, sizeof *b);
    char *copy = strdup(shape), *save = NULL;
    *n = 0;
    if (!b || !copy) {
        free(b);
        free(copy);
        *err = msgf("out of memory");
        return NULL;
    }
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '='), *end;
        long long v = eq ? strtoll(eq + 1, &end, 10) : -1;
        if (!eq || eq == item || *end || v < 0) {
            *err = msgf("shape '%s': '%s' is not NAME=SIZE", shape, item);
            for (int i = 0; i < *n; i++)
                free((char *)b[i].name);
            free(b);
            free(copy);
            return NULL;
        }
        b[*n].name = strndup(item, (size_t)(eq - item));
        b[(*n)++].value = v;
    }
    free(copy);
    return b;
}

/* The value of scalar `name` in "lr=1e-3,step=1"; false if not listed. */
static bool scalar_value(const char *list, const char *name, double *v)
{
    size_t n = strlen(name);
    for (const char *s = list; s && *s;) {
        const char *end = strchr(s, ',');
        if (!end)
            end = s + strlen(s);
        if ((size_t)(end - s) > n && strncmp(s, name, n) == 0 && s[n] == '=') {
            *v = strtod(s + n + 1, NULL);
            return true;
        }
        s = *end ? end + 1 : end;
    }
    return false;
}

/* Whether name is one of the comma-separated names of list. */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = list; s && *s;) {
        const char *end = strchr(s, ',');
        if (!end)
            end = s + strlen(s);
        if ((size_t)(end - s) == n && strncmp(s, name, n) == 0)
            return true;
        s = *end ? end + 1 : end;
    }
    return false;
}

bool inst_make(tc_program *p, const gfn *f, const bench_case *c, const char *shape,
               uint64_t seed, const char *seed_tag, int nthreads, bench_inst *in, char **err)
{
    memset(in, 0, sizeof *in);
    int nextra = 0;
    tc_dimbind *extra = parse_shape(shape, &nextra, err);
    if (!extra)
        return false;
    bind_arg *ba = calloc((size_t)f->nparams + 1, sizeof *ba);
    in->args = calloc((size_t)f->nparams + 1, sizeof *in->args);
    bool ok = ba && in->args;
    if (!ok)
        *err = msgf("out of memory");
    if (ok && api_bind(p, f, ba, extra, nextra, &in->binds, &in->nb) != TC_OK) {
        *err = msgf("binding %s: %s", shape, tc_errmsg(p->ctx));
        ok = false;
    }
    for (int i = 0; ok && i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        ref_tensor *t = &in->args[i];
        if (g->scalar) {
            double v;
            if (!scalar_value(c->scalars, g->name, &v)) {
                if (!g->has_default) {
                    *err = msgf("case %s gives no value for scalar parameter '%s'", c->name, g->name);
                    ok = false;
                    break;
                }
                v = g->def;
            }
            if (!(ok = ref_alloc(t, g->dtype, 0, NULL)))
                *err = msgf("out of memory");
            else
                ref_setf(t, 0, v); /* as a cast of the value */
            continue;
        }
        int64_t sh[TC_MAX_RANK];
        for (int k = 0; k < g->rank; k++)
            sh[k] = bind_eval(g->shape[k], in->binds, in->nb);
        if (!ref_alloc(t, g->dtype, g->rank, sh)) {
            *err = msgf("parameter '%s': cannot allocate %lld elements on the host", g->name,
                        (long long)(g->rank ? sh[0] : 1));
            ok = false;
            break;
        }
        char *tag = msgf("%s/%s/%s", c->name, seed_tag, g->name);
        if (!tag) {
            *err = msgf("out of memory");
            ok = false;
            break;
        }
        fill_random(t, seed, tag, listed(c->nonneg, g->name), nthreads);
        free(tag);
    }
    for (int i = 0; i < nextra; i++)
        free((char *)extra[i].name);
    free(extra);
    free(ba);
    return ok;
}

/* DLPack's type for a tensorc dtype, as tc_run takes it (bool: kDLBool, 8 bits). */
static DLDataType dl_dtype(tc_dtype t)
{
    DLDataType d = {kDLFloat, 32, 1};
    switch (t) {
    case TC_F64: d.bits = 64; break;
    case TC_F16: d.bits = 16; break;
    case TC_BF16: d.code = kDLBfloat; d.bits = 16; break;
    case TC_I32: d.code = kDLInt; break;
    case TC_I64: d.code = kDLInt; d.bits = 64; break;
    case TC_BOOL: d.code = 6; d.bits = 8; break; /* kDLBool: DLPack 0.8 names it */
    default: break;
    }
    return d;
}

static void set_dl(bench_buf *b, tc_dtype dt, int rank, const int64_t *shape)
{
    memcpy(b->shape, shape, sizeof *shape * (size_t)rank);
    memset(&b->dl, 0, sizeof b->dl);
    b->dl.data = b->ptr;
    b->dl.device.device_type = kDLCUDA;
    b->dl.device.device_id = 0;
    b->dl.ndim = rank;
    b->dl.shape = b->shape;
    b->dl.dtype = dl_dtype(dt);
}

static int64_t numel(int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++)
        n *= shape[k];
    return n;
}

static bool dev_alloc(tc_ctx *dev, bench_buf *b, size_t bytes, const char *what, char **err)
{
    b->bytes = bytes;
    tc_status st = tc_device_alloc(dev, bytes ? bytes : 1, &b->ptr);
    if (st != TC_OK) {
        char *m = dev_error(dev, st);
        *err = msgf("%s: cannot allocate %zu bytes on the GPU: %s", what, bytes, m);
        free(m);
        b->ptr = NULL;
    }
    return st == TC_OK;
}

/* what: the driver's message for st, into *err (malloc'd). */
static char *dev_fail(tc_ctx *dev, tc_status st, const char *what, const char *name)
{
    char *m = dev_error(dev, st), *r = msgf("%s '%s': %s", what, name, m);
    free(m);
    return r;
}

bool inst_upload(tc_ctx *dev, const gfn *f, bench_inst *in, int nthreads, char **err)
{
    size_t np = (size_t)f->nparams + 1, no = (size_t)f->noutputs + 1;
    in->params = calloc(np, sizeof *in->params);
    in->outs = calloc(no, sizeof *in->outs);
    in->targs = calloc(np + no, sizeof *in->targs);
    in->got = calloc(no, sizeof *in->got);
    bool ok = in->params && in->outs && in->targs && in->got;
    if (!ok)
        *err = msgf("out of memory");
    for (int i = 0; ok && i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        const ref_tensor *t = &in->args[i];
        if (g->scalar) {
            in->targs[in->ntargs++] = dtype_is_float(g->dtype) ? tc_arg_float(g->name, t->data[0])
                                      : dtype_is_int(g->dtype) ? tc_arg_int(g->name, t->idata[0])
                                                               : tc_arg_bool(g->name, t->idata[0] != 0);
            continue;
        }
        bench_buf *b = &in->params[i];
        size_t bytes = (size_t)ref_numel(t) * (size_t)dtype_size(t->dtype);
        char *what = msgf("parameter '%s'", g->name);
        ok = dev_alloc(dev, b, bytes, what ? what : g->name, err);
        free(what);
        if (!ok)
            break;
        set_dl(b, t->dtype, t->rank, t->shape);
        unsigned char *host = malloc(bytes ? bytes : 1);
        if (!host) {
            *err = msgf("parameter '%s': out of host memory for %zu bytes", g->name, bytes);
            ok = false;
            break;
        }
        encode_tensor(t, host, nthreads);
        tc_status st = bytes ? tc_device_copy(dev, b->ptr, host, bytes, TC_COPY_TO_DEVICE, NULL)
                             : TC_OK;
        free(host);
        if (st != TC_OK) {
            *err = dev_fail(dev, st, "uploading parameter", g->name);
            ok = false;
            break;
        }
        in->targs[in->ntargs++] = tc_arg_tensor(g->name, &b->dl);
    }
    for (int k = 0; ok && k < f->noutputs; k++) {
        const goutput *out = &f->outputs[k];
        if (out->inout_param >= 0)
            continue; /* written back into its parameter's buffer */
        int64_t sh[TC_MAX_RANK];
        for (int r = 0; r < out->node->rank; r++)
            sh[r] = bind_eval(out->node->shape[r], in->binds, in->nb);
        bench_buf *b = &in->outs[k];
        size_t bytes = (size_t)numel(out->node->rank, sh) * (size_t)dtype_size(out->node->dtype);
        char *what = msgf("output '%s'", out->name);
        ok = dev_alloc(dev, b, bytes, what ? what : out->name, err);
        free(what);
        if (!ok)
            break;
        set_dl(b, out->node->dtype, out->node->rank, sh);
        tc_status st = tc_device_memset(dev, b->ptr, 0xff, bytes, NULL);
        if (st != TC_OK) {
            *err = dev_fail(dev, st, "poisoning output", out->name);
            ok = false;
            break;
        }
        in->targs[in->ntargs++] = tc_arg_tensor(out->name, &b->dl);
    }
    return ok;
}

/* Output k's element count under in's bindings. */
static int64_t out_numel(const gfn *f, const bench_inst *in, int k)
{
    const gnode *n = f->outputs[k].node;
    int64_t c = 1;
    for (int r = 0; r < n->rank; r++)
        c *= bind_eval(n->shape[r], in->binds, in->nb);
    return c;
}

bool inst_download(tc_ctx *dev, const gfn *f, bench_inst *in, char **err)
{
    bool ok = true;
    for (int k = 0; ok && k < f->noutputs; k++) {
        const goutput *out = &f->outputs[k];
        size_t bytes = (size_t)out_numel(f, in, k) * (size_t)dtype_size(out->node->dtype);
        const void *src = out->inout_param >= 0 ? in->params[out->inout_param].ptr : in->outs[k].ptr;
        free(in->got[k]);
        if (!(in->got[k] = malloc(bytes ? bytes : 1))) {
            *err = msgf("output '%s': out of host memory for %zu bytes", out->name, bytes);
            ok = false;
            break;
        }
        tc_status st = bytes ? tc_device_copy(dev, in->got[k], src, bytes, TC_COPY_TO_HOST, NULL)
                             : TC_OK;
        if (st != TC_OK) {
            *err = dev_fail(dev, st, "downloading output", out->name);
            ok = false;
        }
    }
    return ok;
}

int64_t inst_bytes_min(const gfn *f, const bench_inst *in)
{
    int64_t bytes = 0;
    for (int i = 0; i < f->nparams; i++)
        if (!f->params[i].scalar)
            bytes += ref_numel(&in->args[i]) * dtype_size(in->args[i].dtype);
    for (int k = 0; k < f->noutputs; k++)
        bytes += out_numel(f, in, k) * dtype_size(f->outputs[k].node->dtype);
    return bytes;
}

void inst_free_host(const gfn *f, bench_inst *in)
{
    for (int i = 0; in->args && i < f->nparams; i++)
        ref_free(&in->args[i]);
    free(in->args);
    in->args = NULL;
    for (int k = 0; in->got && k < f->noutputs; k++) {
        free(in->got[k]);
        in->got[k] = NULL;
    }
}

void inst_free(tc_ctx *dev, const gfn *f, bench_inst *in)
{
    inst_free_host(f, in);
    for (int i = 0; in->params && i < f->nparams; i++)
        tc_device_free(dev, in->params[i].ptr);
    for (int k = 0; in->outs && k < f->noutputs; k++)
        tc_device_free(dev, in->outs[k].ptr);
    free(in->params);
    free(in->outs);
    free(in->targs);
    free(in->got);
    memset(in, 0, sizeof *in);
}

char *inst_describe(const gfn *f, const bench_inst *in)
{
    sbuf b = {0};
    for (int i = 0; i < f->nparams; i++) {
        const ref_tensor *t = &in->args[i];
        sb_printf(&b, "%s%s: %s", i ? ", " : "", f->params[i].name, dtype_name(t->dtype));
        if (f->params[i].scalar) {
            if (t->idata)
                sb_printf(&b, " = %lld", (long long)t->idata[0]);
            else
                sb_printf(&b, " = %.9g", t->data[0]);
            continue;
        }
        sb_printf(&b, "[");
        for (int k = 0; k < t->rank; k++)
            sb_printf(&b, "%s%lld", k ? ", " : "", (long long)t->shape[k]);
        sb_printf(&b, "]");
    }
    return b.s;
}
