/* show.c - print a tensor the way NumPy's str() does, summarized.
 *
 *     out: f32[64, 128]
 *     [[ 0.0123 -0.4567 ...  0.8912]
 *      [-0.1     0.25   ...  0.5   ]
 *      ...
 *      [ 3.      0.1    ... -0.2   ]]
 *
 * Passes over the shown elements choose the float format (fixed or
 * scientific, and the decimals), then the widest element, then print each
 * right-aligned to that width, so columns and decimal points line up.  A tensor of more than
 * SHOW_ALL elements shows only EDGE items at each end of a long dim, as
 * NumPy does past its print threshold (with a smaller threshold: this is a
 * summary on a terminal; --output gives the full data).
 */
#include "cli.h"

#include <math.h>
#include <string.h>

enum { SHOW_ALL = 64, EDGE = 3 };

/* How the floats of one tensor are printed, chosen over all shown values
 * as NumPy does: fixed point unless the values span too wide a range
 * (largest >= 1e8, smallest nonzero < 1e-4, or a ratio over 1e3), then
 * scientific; and as many decimals as the most demanding value needs (at
 * most 6), the same for all so the points line up. */
typedef struct {
    bool sci;
    int decimals;
    double max_abs, min_abs; /* over finite values; min_abs over nonzero ones */
    bool any;
} float_fmt;

/* Decimals v needs in the given mode, up to 6 (trailing zeros dropped). */
static int decimals_needed(double v, bool sci)
{
    char buf[64];
    snprintf(buf, sizeof buf, sci ? "%.6e" : "%.6f", fabs(v));
    char *dot = strchr(buf, '.');
    if (!dot)
        return 0;
    char *end = sci ? strchr(buf, 'e') : buf + strlen(buf);
    int n = (int)(end - dot - 1);
    while (n > 0 && dot[n] == '0')
        n--;
    return n;
}

/* Element off of t; integers exactly. */
static int format_elem(char *buf, size_t n, const htensor *t, const float_fmt *ff, int64_t off)
{
    if (dt_is_bool(t->dtype))
        return snprintf(buf, n, "%s", ht_geti(t, off) != 0 ? "True" : "False");
    if (dt_is_int(t->dtype))
        return snprintf(buf, n, "%lld", ht_geti(t, off));
    double v = ht_getf(t, off);
    if (isnan(v))
        return snprintf(buf, n, "nan");
    if (isinf(v))
        return snprintf(buf, n, "%sinf", v < 0 ? "-" : "");
    if (ff->sci)
        return snprintf(buf, n, "%.*e", ff->decimals, v);
    /* 3 prints as "3." as in NumPy, so floats and integers look different */
    int k = snprintf(buf, n, ff->decimals ? "%.*f" : "%.*f.", ff->decimals, v);
    /* trailing zeros become spaces, keeping the points aligned: "0.25 " */
    const char *dot = strchr(buf, '.');
    for (int i = k - 1; dot && i > dot - buf && buf[i] == '0'; i--)
        buf[i] = ' ';
    return k;
}

typedef enum { PASS_STATS, PASS_DECIMALS, PASS_WIDTH, PASS_PRINT } pass;

typedef struct {
    FILE *f;
    pass pass;
    const htensor *t;
    bool summarize;
    int width;
    float_fmt ff;
} printer;

static void visit(printer *p, int64_t off)
{
    char buf[64];
    double v = dt_is_float(p->t->dtype) ? ht_getf(p->t, off) : 0;
    if (p->pass == PASS_STATS) {
        if (!dt_is_float(p->t->dtype) || !isfinite(v))
            return;
        double a = fabs(v);
        if (a > p->ff.max_abs)
            p->ff.max_abs = a;
        if (a != 0 && (p->ff.min_abs == 0 || a < p->ff.min_abs))
            p->ff.min_abs = a;
        p->ff.any = true;
        return;
    }
    if (p->pass == PASS_DECIMALS) {
        if (dt_is_float(p->t->dtype) && isfinite(v)) {
            int k = decimals_needed(v, p->ff.sci);
            if (k > p->ff.decimals)
                p->ff.decimals = k;
        }
        return;
    }
    int w = format_elem(buf, sizeof buf, p->t, &p->ff, off);
    if (p->pass == PASS_WIDTH) {
        if (w > p->width)
            p->width = w;
    } else {
        fprintf(p->f, "%*s", p->width, buf);
    }
}

/* Between items of dim d: a space in the last dim, else newlines (one per
 * inner dim, so 3-D blocks are separated by a blank line) and indentation. */
static void separator(printer *p, int d)
{
    if (d == p->t->rank - 1) {
        fputc(' ', p->f);
        return;
    }
    for (int k = d; k < p->t->rank - 1; k++)
        fputc('\n', p->f);
    fprintf(p->f, "%*s", d + 1, "");
}

/* Walk the shown items of dim d starting at element off (row-major stride
 * stride[d]), doing this pass's work for each. */
static void walk(printer *p, int d, int64_t off, const int64_t *stride)
{
    const htensor *t = p->t;
    if (d == t->rank) {
        visit(p, off);
        return;
    }
    bool print = p->pass == PASS_PRINT;
    int64_t n = t->shape[d];
    bool cut = p->summarize && n > 2 * EDGE;
    if (print)
        fputc('[', p->f);
    for (int64_t i = 0; i < n; i++) {
        if (cut && i == EDGE)
            i = n - EDGE;
        if (i > 0 && print)
            separator(p, d);
        if (cut && i == n - EDGE && print) {
            fputs("...", p->f); /* the dropped middle */
            separator(p, d);
        }
        walk(p, d + 1, off + i * stride[d], stride);
    }
    if (print)
        fputc(']', p->f);
}

void show_tensor(FILE *f, const char *name, const htensor *t)
{
    /* the type as the language writes it: f32[2, 3], or f32 for a 0-d tensor */
    fprintf(f, "%s: %s", name, dt_name(t->dtype));
    for (int i = 0; i < t->rank; i++)
        fprintf(f, "%s%lld", i ? ", " : "[", (long long)t->shape[i]);
    fputs(t->rank ? "]\n" : "\n", f);
    int64_t n = ht_numel(t);
    if (n == 0) {
        /* NumPy prints [] (nested per dim) for an empty array */
        for (int i = 0; i < t->rank; i++)
            fputc('[', f);
        for (int i = 0; i < t->rank; i++)
            fputc(']', f);
        fputc('\n', f);
        return;
    }
    int64_t stride[TC_MAX_DIMS];
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        stride[i] = s;
        s *= t->shape[i];
    }
    printer p = {f, PASS_STATS, t, n > SHOW_ALL, 0, {0}};
    walk(&p, 0, 0, stride);
    float_fmt *ff = &p.ff;
    ff->sci = ff->any && (ff->max_abs >= 1e8 ||
                          (ff->min_abs != 0 && (ff->min_abs < 1e-4 || ff->max_abs / ff->min_abs > 1e3)));
    for (p.pass = PASS_DECIMALS; p.pass <= PASS_PRINT; p.pass++)
        walk(&p, 0, 0, stride);
    fputc('\n', f);
}
