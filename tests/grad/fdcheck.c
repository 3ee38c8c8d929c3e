/* fdcheck.c - gradients against central finite differences, in f64 on the
 * reference interpreter (tc_run_cpu).
 *
 *   fdcheck FILE [--sizes N=3,D=5]... [--fn NAME] [--seed S] [--quiet]
 *           [--h 1e-6] [--atol 1e-6] [--rtol 1e-5] [--skip-nonfinite] [--skip-nan-grad]
 *
 * For each function f of FILE (or NAME) and each --sizes (default: every
 * symbolic size 3), the checker compiles FILE with `fn f__grad = grad(f)`
 * appended (every floating-point tensor parameter), draws inputs (floats
 * uniform in [-1, 1); integers in [-3, 3]; bools 50/50; float scalars in
 * [0.5, 1.5)) and one cotangent per floating-point output, runs f__grad, and
 * compares each gradient element with
 *     sum over outputs o of <cot_o, f(x + h e) - f(x - h e)> / 2h,   h = 1e-6
 * (every element of tensors up to 200 elements, else 200 drawn at random).
 * --skip-nonfinite leaves out elements whose differences are inf or NaN
 * --skip-nan-grad those whose gradient is inf or NaN where the differences
 * are finite: a program that makes inf on purpose (x / (x - x)) and then
 * flattens it (clamp) can have a NaN gradient where the function is flat:
 * the chain rule multiplies the clamp's zero by the division's inf (IEEE's
 * 0 * inf; grad.sh, for the programs gen.py marks nonfinite; seed 5 #1040)
 * (random programs make inf on purpose).  Functions whose name starts with "nograd_" are skipped.  A function that
 * should not be checked at some point (a kink) must avoid it in its body.
 * Exit 0 when every element agrees within atol + rtol |value| + the
 * differences' own rounding (each output rounded once a side, in its dtype,
 * weighted by |cot| at the worst signs, over 2h; both NaN agrees too) at h,
 * or else at h/10 or h/100 (a kink within h of the point moves the
 * differences, not the gradient), or else at 10h or 100h (outputs whose
 * rounding is far above one rounding of their value: cos of a large
 * argument), 1 otherwise.
 *
 * Each function's vjp pair (`fn f__fwd, f__bwd = vjp(f)`) is checked too:
 * the forward's outputs against f's, the backward's (fed what the forward
 * saved) against f__grad's (check_vjp).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC_UNSTABLE_API
#include "tensorc.h"

#define DL_BOOL 6 /* DL_BOOL, which DLPack before 0.8 does not name */

typedef struct {
    DLTensor t;
    int64_t shape[TC_MAX_DIMS];
    void *data;
    size_t n;
    int is_float;
} buf;

static uint64_t rng = 88172645463325252ull;
static double step = 1e-6, abs_tol = 1e-6, rel_tol = 1e-5;
static int skip_nonfinite; /* --skip-nonfinite: an element whose differences are inf/NaN is no reference */
static int skip_nan_grad;  /* --skip-nan-grad: nor one whose gradient is, the differences finite */
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static DLDataType dt_of(const char *s, int *is_float, size_t *size)
{
    DLDataType d = {kDLFloat, 64, 1};
    *is_float = 1;
    *size = 8;
    if (strcmp(s, "f32") == 0) {
        d.bits = 32;
        *size = 4;
    } else if (strcmp(s, "i32") == 0 || strcmp(s, "i64") == 0) {
        d.code = kDLInt;
        d.bits = s[1] == '3' ? 32 : 64;
        *is_float = 0;
        *size = d.bits / 8;
    } else if (strcmp(s, "bool") == 0) {
        d.code = DL_BOOL;
        d.bits = 8;
        *is_float = 0;
        *size = 1;
    } else if (strcmp(s, "f16") == 0 || strcmp(s, "bf16") == 0) {
        d.code = s[0] == 'b' ? kDLBfloat : kDLFloat;
        d.bits = 16;
        *size = 2;
    }
    return d;
}

static void make(buf *b, const tc_shape *s, const char *dtype)
{
    size_t size;
    b->t.dtype = dt_of(dtype, &b->is_float, &size);
    b->n = 1;
    for (int i = 0; i < s->ndim; i++) {
        b->shape[i] = s->shape[i];
        b->n *= (size_t)s->shape[i];
    }
    b->data = calloc(b->n ? b->n : 1, size);
    b->t.data = b->data;
    b->t.device = (DLDevice){kDLCPU, 0};
    b->t.ndim = s->ndim;
    b->t.shape = b->shape;
    b->t.strides = NULL;
    b->t.byte_offset = 0;
}

static double get(const buf *b, size_t i) { return tc_value_decode(b->t.dtype, (char *)b->data + i * (b->t.dtype.bits / 8)); }
/* the spacing of b's values relative to their size: one rounding of an
 * output is at most this times its magnitude */
static double unit_roundoff(const buf *b)
{
    if (b->t.dtype.bits == 16)
        return b->t.dtype.code == kDLBfloat ? 0x1p-8 : 0x1p-11;
    return b->t.dtype.bits == 32 ? 0x1p-24 : 0x1p-53;
}
static void set(buf *b, size_t i, double v) { tc_value_encode(b->t.dtype, v, (char *)b->data + i * (b->t.dtype.bits / 8)); }

static void fill(buf *b)
{
    for (size_t i = 0; i < b->n; i++) {
        double v;
        if (b->t.dtype.code == DL_BOOL)
            v = urand() < 0.5;
        else if (b->t.dtype.code == kDLInt)
            v = floor(urand() * 7) - 3;
        else
            v = 2 * urand() - 1;
        set(b, i, v);
    }
}

typedef struct {
    const char *name;
    const char *sizes;
} job;

/* The vjp pair of fn (fn__fwd, fn__bwd) against fn and fn__grad on the same
 * inputs: the forward's first outputs are fn's, and the backward, given what
 * the forward saved, returns fn__grad's gradients.  Both sides compute the
 * same values in the same order (saved ones once, by the forward), so they
 * agree to the last bit but for rounding where the split moved a
 * computation: within 1e-12 relative (f64), 1e-6 (narrower). */
static double close_err(double got, double want, int narrow)
{
    if (isnan(got) && isnan(want))
        return 0;
    if (got == want)
        return 0;
    double e = fabs(got - want) / (1 + fabs(want));
    return narrow ? e * 1e-6 : e; /* narrower floats: scaled to the f64 bound */
}

static int check_vjp(tc_program *p, tc_ctx *ctx, const char *file, const char *fn,
                     const char *sizes, const tc_arg *sz, int nsz, const tc_arg *fargs, size_t np,
                     size_t no, buf *out, buf *cot, const tc_function_info *gi, buf *grad)
{
    char fw[256], bw[256];
    snprintf(fw, sizeof fw, "%s__fwd", fn);
    snprintf(bw, sizeof bw, "%s__bwd", fn);
    const tc_function_info *fwi, *bwi;
    tc_shape fos[32], bos[32];
    if (tc_program_function(p, fw, &fwi) != TC_OK || tc_program_function(p, bw, &bwi) != TC_OK ||
        tc_shapes(p, fw, sz, (size_t)nsz, NULL, 0, fos, 32) != TC_OK ||
        tc_shapes(p, bw, sz, (size_t)nsz, NULL, 0, bos, 32) != TC_OK) {
        printf("FAIL %s %s [%s]: vjp: %s\n", file, fn, sizes ? sizes : "", tc_errmsg(ctx));
        return 1;
    }
    if (fwi->noutputs < no || fwi->noutputs - no > 16 || bwi->noutputs != gi->noutputs) {
        printf("FAIL %s %s: vjp: %zu forward outputs, %zu backward\n", file, fn, fwi->noutputs,
               bwi->noutputs);
        return 1;
    }
    int bad = 0;
    /* f itself, unperturbed (the outputs were last written at a perturbed x) */
    if (tc_run_cpu(p, fn, fargs, np + no) != TC_OK) {
        printf("FAIL %s %s: forward: %s\n", file, fn, tc_errmsg(ctx));
        return 1;
    }
    size_t nfo = fwi->noutputs;
    buf fo[48];
    tc_arg a[128];
    size_t na = 0;
    for (size_t i = 0; i < np; i++)
        a[na++] = fargs[i];
    for (size_t o = 0; o < nfo; o++) {
        make(&fo[o], &fos[o], fwi->outputs[o].dtype);
        a[na++] = tc_arg_tensor(fwi->outputs[o].name, &fo[o].t);
    }
    if (tc_run_cpu(p, fw, a, na) != TC_OK) {
        printf("FAIL %s %s [%s]: vjp forward: %s\n", file, fn, sizes ? sizes : "", tc_errmsg(ctx));
        bad = 1;
    }
    double worst = 0;
    for (size_t o = 0; o < no && !bad; o++)
        for (size_t e = 0; e < out[o].n; e++)
            if (close_err(get(&fo[o], e), get(&out[o], e), fo[o].t.dtype.bits < 64) > 1e-12) {
                printf("FAIL %s %s [%s]: vjp forward %s[%zu] = %.17g, %s gives %.17g\n", file, fn,
                       sizes ? sizes : "", fwi->outputs[o].name, e, get(&fo[o], e), fn,
                       get(&out[o], e));
                bad = 1;
                break;
            }
    /* the backward: f's parameters, the saved values, the cotangents */
    na = 0;
    for (size_t i = 0; i < np; i++)
        a[na++] = fargs[i];
    for (size_t o = no; o < nfo; o++)
        a[na++] = tc_arg_tensor(fwi->outputs[o].name, &fo[o].t);
    static char names[64][80];
    for (size_t o = 0, c = 0; o < no; o++) {
        if (!cot[o].data)
            continue;
        snprintf(names[c], sizeof names[0], "d%s", fwi->outputs[o].name);
        a[na++] = cot[o].t.ndim == 0 ? tc_arg_float(names[c], get(&cot[o], 0))
                                     : tc_arg_tensor(names[c], &cot[o].t);
        c++;
    }
    buf bo[32];
    for (size_t k = 0; k < bwi->noutputs; k++) {
        make(&bo[k], &bos[k], bwi->outputs[k].dtype);
        a[na++] = tc_arg_tensor(bwi->outputs[k].name, &bo[k].t);
    }
    if (!bad && tc_run_cpu(p, bw, a, na) != TC_OK) {
        printf("FAIL %s %s [%s]: vjp backward: %s\n", file, fn, sizes ? sizes : "", tc_errmsg(ctx));
        bad = 1;
    }
    for (size_t k = 0; k < bwi->noutputs && !bad; k++)
        for (size_t e = 0; e < bo[k].n; e++) {
            double err = close_err(get(&bo[k], e), get(&grad[k], e), bo[k].t.dtype.bits < 64);
            if (err > worst)
                worst = err;
            if (err > 1e-12) {
                printf("FAIL %s %s [%s]: vjp backward %s[%zu] = %.17g, grad gives %.17g\n", file,
                       fn, sizes ? sizes : "", bwi->outputs[k].name, e, get(&bo[k], e),
                       get(&grad[k], e));
                bad = 1;
                break;
            }
        }
    if (!bad && getenv("FDCHECK_VJP_VERBOSE"))
        printf("ok   %s %s [%s]: vjp pair, %zu saved, worst %.2g\n", file, fn, sizes ? sizes : "",
               nfo - no, worst);
    for (size_t o = 0; o < nfo; o++)
        free(fo[o].data);
    for (size_t k = 0; k < bwi->noutputs; k++)
        free(bo[k].data);
    return bad;
}

/* The central differences of sum over outputs <cot, f> at element e of x,
 * over 2h, into *fd, and their own rounding into *noise (each output
 * rounded once a side, weighted by |cot| at the worst signs: outputs of
 * size ~1e3 over ~300 cotangents, seed 2 #1083's cumsum of a logcumsumexp,
 * put 4e-6 into differences of 0.23 at h = 1e-6; no gradient is checked
 * closer than the differences know it).  x[e] is left as it was.  1 when
 * the forward fails (said). */
static int differences(tc_program *p, tc_ctx *ctx, const char *file, const char *fn, tc_arg *fargs,
                       size_t nf, size_t no, buf *out, buf *cot, double *plus, buf *x, size_t e, double h,
                       double *fd, double *noise)
{
    const double x0 = get(x, e);
    double sum = 0, rnd = 0;
    for (int side = 0; side < 2; side++) {
        set(x, e, side ? x0 - h : x0 + h);
        if (tc_run_cpu(p, fn, fargs, nf) != TC_OK) {
            printf("FAIL %s %s: forward: %s\n", file, fn, tc_errmsg(ctx));
            set(x, e, x0);
            return 1;
        }
        /* sum cot * (f(x + h) - f(x - h)) element by element: the two
         * sides summed apart would lose the difference */
        for (size_t o = 0, at = 0; o < no; o++)
            if (cot[o].data)
                for (size_t j = 0; j < out[o].n; j++, at++) {
                    if (!side) {
                        plus[at] = get(&out[o], j);
                    } else {
                        const double minus = get(&out[o], j), w = get(&cot[o], j);
                        sum += w * (plus[at] - minus);
                        rnd += fabs(w) * (fabs(plus[at]) + fabs(minus)) * unit_roundoff(&out[o]);
                    }
                }
    }
    set(x, e, x0);
    *fd = sum / (2 * h);
    *noise = rnd / (2 * h);
    return 0;
}

/* within atol + rtol |fd| + the differences' rounding; both NaN agree */
static bool agrees(double fd, double g, double noise)
{
    return fabs(fd - g) <= abs_tol + rel_tol * fabs(fd) + noise || (isnan(fd) && isnan(g));
}

static int check_fn(tc_ctx *ctx, const char *src, size_t len, const char *file, const char *fn,
                    const char *sizes, int quiet)
{
    /* the program with the derived function appended */
    size_t cap = len + 1024;
    char *text = malloc(cap);
    int tl = snprintf(text, cap, "%.*s\nfn %s__grad = grad(%s)\nfn %s__fwd, %s__bwd = vjp(%s)\n",
                      (int)len, src, fn, fn, fn, fn, fn);
    tc_program *p = NULL;
    if (tc_compile(ctx, text, (size_t)tl, file, &p) != TC_OK) {
        printf("FAIL %s %s: %s\n", file, fn, tc_errmsg(ctx));
        free(text);
        return 1;
    }
    char gname[256];
    snprintf(gname, sizeof gname, "%s__grad", fn);
    const tc_function_info *fi, *gi;
    if (tc_program_function(p, fn, &fi) != TC_OK || tc_program_function(p, gname, &gi) != TC_OK) {
        printf("FAIL %s %s: %s\n", file, fn, tc_errmsg(ctx));
        tc_program_free(p);
        free(text);
        return 1;
    }
    /* sizes */
    tc_arg sz[16];
    int nsz = 0;
    char sbuf[512];
    snprintf(sbuf, sizeof sbuf, "%s", sizes ? sizes : "");
    for (char *tok = strtok(sbuf, ","); tok && nsz < 16; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = 0;
        int used = 0; /* only the function's own sizes */
        for (size_t i = 0; i < fi->nparams; i++)
            for (int d = 0; d < fi->params[i].rank; d++)
                used |= strcmp(fi->params[i].dims[d], tok) == 0;
        if (used)
            sz[nsz++] = tc_arg_size(tok, atoll(eq + 1));
    }
    /* every symbolic size not given is 3 */
    for (size_t i = 0; i < fi->nparams; i++)
        for (int d = 0; d < fi->params[i].rank; d++) {
            const char *s = fi->params[i].dims[d];
            if (!(s[0] >= 'A' && s[0] <= 'Z') || strpbrk(s, "+-*/ "))
                continue;
            int have = 0;
            for (int k = 0; k < nsz; k++)
                have |= strcmp(sz[k].name, s) == 0;
            if (!have && nsz < 16)
                sz[nsz++] = tc_arg_size(s, 3);
        }
    tc_shape ps[32], os[32], gos[32];
    if (tc_shapes(p, fn, sz, (size_t)nsz, ps, 32, os, 32) != TC_OK ||
        tc_shapes(p, gname, sz, (size_t)nsz, NULL, 0, gos, 32) != TC_OK) {
        printf("FAIL %s %s [%s]: %s\n", file, fn, sizes ? sizes : "", tc_errmsg(ctx));
        tc_program_free(p);
        free(text);
        return 1;
    }
    size_t np = fi->nparams, no = fi->noutputs;
    buf in[32], out[32], cot[32], grad[32];
    double scal[32];
    tc_arg fargs[64], gargs[128];
    size_t nf = 0, ng = 0;
    for (size_t i = 0; i < np; i++) {
        const tc_value_info *v = &fi->params[i];
        if (v->scalar) {
            scal[i] = 0.5 + urand();
            fargs[nf++] = tc_arg_float(v->name, scal[i]);
            gargs[ng++] = tc_arg_float(v->name, scal[i]);
            continue;
        }
        make(&in[i], &ps[i], v->dtype);
        fill(&in[i]);
        fargs[nf++] = tc_arg_tensor(v->name, &in[i].t);
        gargs[ng++] = tc_arg_tensor(v->name, &in[i].t);
    }
    static char names[64][80];
    int ncot = 0;
    for (size_t o = 0; o < no; o++) {
        make(&out[o], &os[o], fi->outputs[o].dtype);
        fargs[nf++] = tc_arg_tensor(fi->outputs[o].name, &out[o].t);
        cot[o].data = NULL;
        if (!out[o].is_float)
            continue;
        make(&cot[o], &os[o], fi->outputs[o].dtype);
        fill(&cot[o]);
        snprintf(names[ncot], sizeof names[0], "d%s", fi->outputs[o].name);
        if (os[o].ndim == 0)
            gargs[ng++] = tc_arg_float(names[ncot], get(&cot[o], 0));
        else
            gargs[ng++] = tc_arg_tensor(names[ncot], &cot[o].t);
        ncot++;
    }
    for (size_t k = 0; k < gi->noutputs; k++) {
        make(&grad[k], &gos[k], gi->outputs[k].dtype);
        gargs[ng++] = tc_arg_tensor(gi->outputs[k].name, &grad[k].t);
    }
    int bad = 0;
    if (tc_run_cpu(p, gname, gargs, ng) != TC_OK) {
        printf("FAIL %s %s [%s]: grad: %s\n", file, fn, sizes ? sizes : "", tc_errmsg(ctx));
        bad = 1;
    }
    if (!bad)
        bad = check_vjp(p, ctx, file, fn, sizes, sz, nsz, fargs, np, no, out, cot, gi, grad);
    size_t total = 0;
    for (size_t o = 0; o < no; o++)
        total += out[o].n;
    double *plus = malloc(sizeof *plus * (total ? total : 1));
    double worst = 0, worst_noise = 0;
    size_t checked = 0;
    for (size_t k = 0; k < gi->noutputs && !bad; k++) {
        /* the parameter dNAME belongs to */
        size_t i = 0;
        while (i < np && strcmp(fi->params[i].name, gi->outputs[k].name + 1) != 0)
            i++;
        buf *x = &in[i];
        size_t count = x->n <= 200 ? x->n : 200;
        for (size_t c = 0; c < count && !bad; c++) {
            size_t e = x->n <= 200 ? c : (size_t)(urand() * (double)x->n);
            double fd, noise, g = get(&grad[k], e);
            if (differences(p, ctx, file, fn, fargs, nf, no, out, cot, plus, x, e, step, &fd, &noise)) {
                bad = 1;
                break;
            }
            if (skip_nonfinite && !isfinite(fd))
                continue;
            if (skip_nan_grad && !isfinite(g) && isfinite(fd))
                continue;
            /* a kink (abs, relu, clamp, max) within h of the point moves
             * the differences and not the gradient (the one-sided value
             * there): where they disagree at h, at h/10 or h/100 they must
             * agree (a wrong gradient disagrees at each; seed 2 #1455's
             * abs(y - x) had |y - x| < 1e-6: -3.26 against -3.57 at 1e-6,
             * 7.5e-8 apart at 1e-7) */
            /* Then at 10h and 100h: where an output's rounding is far above
             * one rounding of its value, the differences at h are off by it
             * over 2h (seed 4 #1417: x * cos(v8) with v8 = exp(...) up to
             * ~2300, the outputs' rounding ~1e-11 against ~3e-14 counted:
             * at h = 1e-6 the differences are 1.2e-5 off, 9e-5 at 1e-8, and
             * 5e-9 at 1e-4, where the truncation is 3e-7 at 1e-3 and falls
             * as h^2).  A wrong gradient still disagrees at all five. */
            double h = step;
            static const double scale[] = {0.1, 0.01, 10, 100};
            for (int tries = 0; !agrees(fd, g, noise) && tries < 4 && !bad; tries++) {
                h = step * scale[tries];
                bad = differences(p, ctx, file, fn, fargs, nf, no, out, cot, plus, x, e, h, &fd, &noise);
            }
            if (bad)
                break;
            double err = fabs(fd - g);
            if (noise > worst_noise)
                worst_noise = noise;
            if (!agrees(fd, g, noise)) {
                printf("FAIL %s %s [%s]: %s[%zu] = %.9g, finite differences %.9g (h = %g)\n", file, fn,
                       sizes ? sizes : "", gi->outputs[k].name, e, g, fd, h);
                bad = 1;
            }
            if (err > worst)
                worst = err;
            checked++;
        }
    }
    if (!bad && !quiet)
        printf("ok   %s %s [%s]: %zu elements, worst |error| %.2g (differences' rounding up to %.2g)\n", file,
               fn, sizes ? sizes : "", checked, worst, worst_noise);
    for (size_t i = 0; i < np; i++)
        if (!fi->params[i].scalar)
            free(in[i].data);
    for (size_t o = 0; o < no; o++) {
        free(out[o].data);
        free(cot[o].data);
    }
    for (size_t k = 0; k < gi->noutputs; k++)
        free(grad[k].data);
    free(plus);
    tc_program_free(p);
    free(text);
    (void)scal;
    return bad;
}

int main(int argc, char **argv)
{
    const char *file = NULL, *only = NULL;
    const char *sizes[32];
    int nsizes = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc && nsizes < 32)
            sizes[nsizes++] = argv[++i];
        else if (strcmp(argv[i], "--fn") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            rng ^= (uint64_t)strtoull(argv[++i], NULL, 10) * 0x9E3779B97F4A7C15ull;
        else if (strcmp(argv[i], "--h") == 0 && i + 1 < argc)
            step = atof(argv[++i]);
        else if (strcmp(argv[i], "--atol") == 0 && i + 1 < argc)
            abs_tol = atof(argv[++i]);
        else if (strcmp(argv[i], "--rtol") == 0 && i + 1 < argc)
            rel_tol = atof(argv[++i]);
        else if (strcmp(argv[i], "--skip-nonfinite") == 0)
            skip_nonfinite = 1;
        else if (strcmp(argv[i], "--skip-nan-grad") == 0)
            skip_nan_grad = 1;
        else if (strcmp(argv[i], "--quiet") == 0)
            quiet = 1;
        else
            file = argv[i];
    }
    if (!file) {
        fprintf(stderr, "usage: fdcheck FILE [--sizes N=3,D=5]... [--fn NAME] [--seed S]\n");
        return 2;
    }
    if (!nsizes)
        sizes[nsizes++] = NULL;
    FILE *fp = fopen(file, "rb");
    if (!fp) {
        perror(file);
        return 2;
    }
    static char src[1 << 20];
    size_t len = fread(src, 1, sizeof src - 1, fp);
    fclose(fp);
    tc_ctx *ctx;
    tc_ctx_create(&ctx);
    tc_program *p;
    if (tc_compile(ctx, src, len, file, &p) != TC_OK) {
        printf("FAIL %s: %s\n", file, tc_errmsg(ctx));
        tc_ctx_free(ctx);
        return 1;
    }
    size_t n;
    const char *const *names;
    tc_program_functions(p, &n, &names);
    char **fns = malloc(sizeof *fns * (n + 1));
    for (size_t i = 0; i < n; i++)
        fns[i] = strdup(names[i]);
    tc_program_free(p);
    int fails = 0, runs = 0;
    for (size_t i = 0; i < n; i++) {
        if (only ? strcmp(fns[i], only) != 0 : strncmp(fns[i], "nograd_", 7) == 0)
            continue;
        for (int s = 0; s < nsizes; s++) {
            fails += check_fn(ctx, src, len, file, fns[i], sizes[s], quiet);
            runs++;
        }
    }
    printf("%d checked, %d failed\n", runs, fails);
    for (size_t i = 0; i < n; i++)
        free(fns[i]);
    free(fns);
    tc_ctx_free(ctx);
    return fails ? 1 : 0;
}
