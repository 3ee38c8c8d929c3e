/* inst.c - one set of arguments for a function: what one tc_run needs.
 *
 * The steps of tools/run.c's --device=cuda path, kept apart so the suite can
 * hold 240 of them (AdamW) and free each one's host copy as soon as it is
 * checked: the shapes the sizes give (tc_shapes), make random
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

/* "N=64,D=128" into tc_arg_size arguments (names malloc'd).  NULL and *err
 * on a bad one. */
static tc_arg *parse_shape(const char *shape, int *n, char **err)
{
    int cap = 1;
    for (const char *s = shape; *s; s++)
        cap += *s == ',';
    tc_arg *b = calloc((size_t)cap, sizeof *b);
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
        b[*n] = tc_arg_size(strndup(item, (size_t)(eq - item)), v);
        (*n)++;
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

int out_param(const tc_function_info *f, int k)
{
    if (!f->outputs[k].inout)
        return -1;
    for (size_t i = 0; i < f->nparams; i++)
        if (f->params[i].inout && !strcmp(f->params[i].name, f->outputs[k].name))
            return (int)i;
    return -1;
}

bool inst_make(tc_ctx *ctx, tc_program *p, const tc_function_info *f, const bench_case *c,
               const char *shape, uint64_t seed, const char *seed_tag, int nthreads, bench_inst *in,
               char **err)
{
    memset(in, 0, sizeof *in);
    in->sizes = parse_shape(shape, &in->nsizes, err);
    if (!in->sizes)
        return false;
    tc_shape *ps = calloc(f->nparams + 1, sizeof *ps);
    in->out_shapes = calloc(f->noutputs + 1, sizeof *in->out_shapes);
    in->args = calloc(f->nparams + 1, sizeof *in->args);
    bool ok = ps && in->out_shapes && in->args;
    if (!ok)
        *err = msgf("out of memory");
    if (ok && tc_shapes(p, f->name, in->sizes, (size_t)in->nsizes, ps, f->nparams, in->out_shapes,
                        f->noutputs) != TC_OK) {
        *err = msgf("binding %s: %s", shape, tc_errmsg(ctx));
        ok = false;
    }
    for (size_t i = 0; ok && i < f->nparams; i++) {
        const tc_value_info *g = &f->params[i];
        htensor *t = &in->args[i];
        if (g->scalar) {
            double v;
            if (!scalar_value(c->scalars, g->name, &v)) {
                if (!g->has_default) {
                    *err = msgf("case %s gives no value for scalar parameter '%s'", c->name, g->name);
                    ok = false;
                    break;
                }
                v = g->default_value;
            }
            if (!(ok = ht_alloc(t, ps[i].dtype, 0, NULL)))
                *err = msgf("out of memory");
            else
                tc_value_encode(t->dtype, v, t->data); /* as a cast of the value */
            continue;
        }
        if (!ht_alloc(t, ps[i].dtype, ps[i].ndim, ps[i].shape)) {
            *err = msgf("parameter '%s': cannot allocate %lld elements on the host", g->name,
                        (long long)(ps[i].ndim ? ps[i].shape[0] : 1));
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
    free(ps);
    return ok;
}

tc_arg scalar_arg(const char *name, const htensor *t)
{
    if (dt_is_float(t->dtype))
        return tc_arg_float(name, tc_value_decode(t->dtype, t->data));
    if (dt_is_int(t->dtype))
        return tc_arg_int(name, tc_value_decode_int(t->dtype, t->data));
    return tc_arg_bool(name, tc_value_decode_int(t->dtype, t->data) != 0);
}

static void set_dl(bench_buf *b, DLDataType dt, int rank, const int64_t *shape)
{
    memcpy(b->shape, shape, sizeof *shape * (size_t)rank);
    memset(&b->dl, 0, sizeof b->dl);
    b->dl.data = b->ptr;
    b->dl.device.device_type = kDLCUDA;
    b->dl.device.device_id = 0;
    b->dl.ndim = rank;
    b->dl.shape = b->shape;
    b->dl.dtype = dt;
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

bool inst_upload(tc_ctx *dev, const tc_function_info *f, bench_inst *in, int nthreads, char **err)
{
    (void)nthreads; /* the host copy is already the device's bytes */
    size_t np = f->nparams + 1, no = f->noutputs + 1;
    in->params = calloc(np, sizeof *in->params);
    in->outs = calloc(no, sizeof *in->outs);
    in->targs = calloc(np + no, sizeof *in->targs);
    in->got = calloc(no, sizeof *in->got);
    bool ok = in->params && in->outs && in->targs && in->got;
    if (!ok)
        *err = msgf("out of memory");
    for (size_t i = 0; ok && i < f->nparams; i++) {
        const tc_value_info *g = &f->params[i];
        const htensor *t = &in->args[i];
        if (g->scalar) {
            in->targs[in->ntargs++] = scalar_arg(g->name, t);
            continue;
        }
        bench_buf *b = &in->params[i];
        size_t bytes = (size_t)ht_numel(t) * (size_t)dt_size(t->dtype);
        char *what = msgf("parameter '%s'", g->name);
        ok = dev_alloc(dev, b, bytes, what ? what : g->name, err);
        free(what);
        if (!ok)
            break;
        set_dl(b, t->dtype, t->rank, t->shape);
        tc_status st = bytes ? tc_device_copy(dev, b->ptr, t->data, bytes, TC_COPY_TO_DEVICE, NULL)
                             : TC_OK;
        if (st != TC_OK) {
            *err = dev_fail(dev, st, "uploading parameter", g->name);
            ok = false;
            break;
        }
        in->targs[in->ntargs++] = tc_arg_tensor(g->name, &b->dl);
    }
    for (size_t k = 0; ok && k < f->noutputs; k++) {
        const tc_value_info *out = &f->outputs[k];
        if (out_param(f, (int)k) >= 0)
            continue; /* written back into its parameter's buffer */
        const tc_shape *sh = &in->out_shapes[k];
        bench_buf *b = &in->outs[k];
        size_t bytes = (size_t)numel(sh->ndim, sh->shape) * (size_t)dt_size(sh->dtype);
        char *what = msgf("output '%s'", out->name);
        ok = dev_alloc(dev, b, bytes, what ? what : out->name, err);
        free(what);
        if (!ok)
            break;
        set_dl(b, sh->dtype, sh->ndim, sh->shape);
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

/* Output k's element count. */
static int64_t out_numel(const bench_inst *in, int k)
{
    return numel(in->out_shapes[k].ndim, in->out_shapes[k].shape);
}

bool inst_download(tc_ctx *dev, const tc_function_info *f, bench_inst *in, char **err)
{
    bool ok = true;
    for (int k = 0; ok && k < (int)f->noutputs; k++) {
        const tc_value_info *out = &f->outputs[k];
        size_t bytes = (size_t)out_numel(in, k) * (size_t)dt_size(in->out_shapes[k].dtype);
        int ip = out_param(f, k);
        const void *src = ip >= 0 ? in->params[ip].ptr : in->outs[k].ptr;
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

int64_t inst_bytes_min(const tc_function_info *f, const bench_inst *in)
{
    int64_t bytes = 0;
    for (size_t i = 0; i < f->nparams; i++)
        if (!f->params[i].scalar)
            bytes += ht_numel(&in->args[i]) * dt_size(in->args[i].dtype);
    for (int k = 0; k < (int)f->noutputs; k++)
        bytes += out_numel(in, k) * dt_size(in->out_shapes[k].dtype);
    return bytes;
}

void inst_free_host(const tc_function_info *f, bench_inst *in)
{
    for (size_t i = 0; in->args && i < f->nparams; i++)
        free(in->args[i].data);
    free(in->args);
    in->args = NULL;
    for (int k = 0; in->got && k < (int)f->noutputs; k++) {
        free(in->got[k]);
        in->got[k] = NULL;
    }
}

void inst_free(tc_ctx *dev, const tc_function_info *f, bench_inst *in)
{
    inst_free_host(f, in);
    for (size_t i = 0; in->params && i < f->nparams; i++)
        tc_device_free(dev, in->params[i].ptr);
    for (size_t k = 0; in->outs && k < f->noutputs; k++)
        tc_device_free(dev, in->outs[k].ptr);
    inst_free_shapes(in);
    free(in->params);
    free(in->outs);
    free(in->targs);
    free(in->got);
    memset(in, 0, sizeof *in);
}

void inst_free_shapes(bench_inst *in)
{
    for (int i = 0; in->sizes && i < in->nsizes; i++)
        free((char *)in->sizes[i].name);
    free(in->sizes);
    free(in->out_shapes);
    in->sizes = NULL;
    in->nsizes = 0;
    in->out_shapes = NULL;
}

char *inst_describe(const tc_function_info *f, const bench_inst *in)
{
    sbuf b = {0};
    for (size_t i = 0; i < f->nparams; i++) {
        const htensor *t = &in->args[i];
        sb_printf(&b, "%s%s: %s", i ? ", " : "", f->params[i].name, dt_name(t->dtype));
        if (f->params[i].scalar) {
            if (!dt_is_float(t->dtype))
                sb_printf(&b, " = %lld", tc_value_decode_int(t->dtype, t->data));
            else
                sb_printf(&b, " = %.9g", tc_value_decode(t->dtype, t->data));
            continue;
        }
        sb_printf(&b, "[");
        for (int k = 0; k < t->rank; k++)
            sb_printf(&b, "%s%lld", k ? ", " : "", (long long)t->shape[k]);
        sb_printf(&b, "]");
    }
    return b.s;
}
