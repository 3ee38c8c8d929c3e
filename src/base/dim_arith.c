/* dim_arith.c - arithmetic on canonical dims (dim.h): sums, differences and
 * products of polynomials; exact division by the schoolbook algorithm
 * (exact in graded order); floor division folded where it can be (exact,
 * whole multiples of a constant divisor pulled out, common constant
 * factors cancelled, nested divisions flattened), else an opaque atom;
 * ceiling division as floor division; substitution; splitting by a
 * divisor.  Coefficients wrap modulo 2^64. */
#include "dim_internal.h"

/* Is d the constant k?  Dims are hash-consed, so adding 0 or multiplying
 * by 1 returns an operand itself: index composition does little else, and
 * these shortcuts keep it from building (and abandoning in the arena) a
 * polynomial per step. */
static bool is_k(const tc_dim *d, int64_t k)
{
    return d->nterms == 0 && d->c == k;
}

const tc_dim *dim_add(tc_dimctx *c, const tc_dim *a, const tc_dim *b)
{
    if (is_k(b, 0))
        return a;
    if (is_k(a, 0))
        return b;
    poly p = {0};
    dim_poly_add_scaled(c, &p, a, 1);
    dim_poly_add_scaled(c, &p, b, 1);
    return dim_finish(c, &p);
}

const tc_dim *dim_sub(tc_dimctx *c, const tc_dim *a, const tc_dim *b)
{
    if (is_k(b, 0))
        return a;
    poly p = {0};
    dim_poly_add_scaled(c, &p, a, 1);
    dim_poly_add_scaled(c, &p, b, -1);
    return dim_finish(c, &p);
}

/* The product of two sorted atom lists, sorted (a merge). */
static int merge_atoms(const dim_term *s, const dim_term *t, const dim_atom **out)
{
    int i = 0, j = 0, n = 0;
    while (i < s->n || j < t->n) {
        if (j >= t->n || (i < s->n && s->atoms[i]->id <= t->atoms[j]->id))
            out[n++] = s->atoms[i++];
        else
            out[n++] = t->atoms[j++];
    }
    return n;
}

const tc_dim *dim_mul(tc_dimctx *c, const tc_dim *a, const tc_dim *b)
{
    if (is_k(b, 1) || is_k(a, 0))
        return a;
    if (is_k(a, 1) || is_k(b, 0))
        return b;
    poly p = {.c = wmul(a->c, b->c)};
    dim_poly_add_scaled(c, &p, &(tc_dim){0, a->nterms, a->terms, 0}, b->c);
    dim_poly_add_scaled(c, &p, &(tc_dim){0, b->nterms, b->terms, 0}, a->c);
    for (int i = 0; i < a->nterms; i++)
        for (int j = 0; j < b->nterms; j++) {
            const dim_term *s = &a->terms[i], *t = &b->terms[j];
            const dim_atom **atoms = ARENA_ARRAY(c->a, const dim_atom *, s->n + t->n);
            int n = merge_atoms(s, t, atoms);
            dim_poly_push(c, &p, wmul(s->coef, t->coef), atoms, n);
        }
    return dim_finish(c, &p);
}

/* If monomial d divides monomial n, the quotient's atoms into out. */
static bool mono_divides(const dim_term *d, const dim_term *n, const dim_atom **out, int *nout)
{
    int i = 0, k = 0;
    for (int j = 0; j < n->n; j++) {
        if (i < d->n && d->atoms[i] == n->atoms[j])
            i++;
        else
            out[k++] = n->atoms[j];
    }
    *nout = k;
    return i == d->n;
}

const tc_dim *dim_exactdiv(tc_dimctx *c, const tc_dim *a, const tc_dim *b)
{
    int64_t kb;
    if (dim_is_const(b, &kb)) {
        if (kb == 0)
            return NULL;
        if (!divides(kb, a->c))
            return NULL;
        for (int i = 0; i < a->nterms; i++)
            if (!divides(kb, a->terms[i].coef))
                return NULL;
        poly p = {.c = kb == -1 ? wsub(0, a->c) : a->c / kb};
        for (int i = 0; i < a->nterms; i++) {
            int64_t k = a->terms[i].coef;
            dim_poly_push(c, &p, kb == -1 ? wsub(0, k) : k / kb, a->terms[i].atoms, a->terms[i].n);
        }
        return dim_finish(c, &p);
    }
    /* Polynomial long division by b's leading term; every step removes the
     * remainder's leading term, so it ends.  The step bound only guards
     * against pathological inputs: it can refuse an exact division, never
     * accept an inexact one. */
    const dim_term *lb = &b->terms[0];
    const tc_dim *r = a, *q = dim_const(c, 0);
    for (int step = 0; step < 256; step++) {
        if (r->nterms == 0)
            return r->c == 0 ? q : NULL;
        const dim_term *lr = &r->terms[0];
        if (!divides(lb->coef, lr->coef))
            return NULL;
        const dim_atom **atoms = ARENA_ARRAY(c->a, const dim_atom *, lr->n);
        int n;
        if (!mono_divides(lb, lr, atoms, &n))
            return NULL;
        int64_t k = lb->coef == -1 ? wsub(0, lr->coef) : lr->coef / lb->coef;
        const tc_dim *qt = dim_term_of(c, k, atoms, n);
        q = dim_add(c, q, qt);
        r = dim_sub(c, r, dim_mul(c, qt, b));
    }
    return NULL;
}

const tc_dim *dim_floordiv(tc_dimctx *c, const tc_dim *a, const tc_dim *b)
{
    int64_t ka = 0, kb = 0;
    bool bc = dim_is_const(b, &kb);
    if (bc && dim_is_const(a, &ka))
        return dim_const(c, floordiv_i64(ka, kb));
    if (bc && kb == 0)
        return dim_const(c, 0);
    const tc_dim *q = dim_exactdiv(c, a, b);
    if (q)
        return q;
    if (bc && kb > 0) {
        /* (k*P + c)/k = P + floor(c/k) for integer-valued P. */
        bool all = true;
        for (int i = 0; i < a->nterms && all; i++)
            all = divides(kb, a->terms[i].coef);
        if (all) {
            poly p = {.c = floordiv_i64(a->c, kb)};
            for (int i = 0; i < a->nterms; i++)
                dim_poly_push(c, &p, a->terms[i].coef / kb, a->terms[i].atoms, a->terms[i].n);
            return dim_finish(c, &p);
        }
        /* Cancel a common factor: floor(g*x / (g*y)) = floor(x / y). */
        int64_t g = gcd_i64(kb, a->c);
        for (int i = 0; i < a->nterms; i++)
            g = gcd_i64(g, a->terms[i].coef);
        if (g > 1) {
            a = dim_exactdiv(c, a, dim_const(c, g));
            b = dim_const(c, kb / g);
        }
    }
    /* Nested divisions flatten, so x[::2][::2] and x[::4] get one length:
     * floor((floor(x/m) + k)/n) = floor((x + k*m)/(m*n)) for m, n > 0. */
    if (a->nterms == 1 && a->terms[0].coef == 1 && a->terms[0].n == 1 &&
        !a->terms[0].atoms[0]->name && (!bc || kb > 0)) {
        const dim_atom *in = a->terms[0].atoms[0];
        const tc_dim *num = dim_add(c, in->num, dim_mul(c, dim_const(c, a->c), in->den));
        return dim_floordiv(c, num, dim_mul(c, in->den, b));
    }
    const dim_atom *at = dim_intern_atom(c, NULL, a, b);
    return dim_term_of(c, 1, &at, 1);
}

const tc_dim *dim_ceildiv(tc_dimctx *c, const tc_dim *a, const tc_dim *b)
{
    int64_t ka, kb;
    bool bc = dim_is_const(b, &kb);
    if (bc && dim_is_const(a, &ka))
        return dim_const(c, ceildiv_i64(ka, kb));
    const tc_dim *q = dim_exactdiv(c, a, b);
    if (q)
        return q;
    /* ceil(a/b) = floor((a + b - 1)/b) for b > 0: one atom kind for both. */
    return dim_floordiv(c, dim_add(c, a, dim_sub(c, b, dim_const(c, 1))), b);
}

static const tc_dim *subst_atom(tc_dimctx *c, const dim_atom *at, int n,
                                const char *const *syms, const tc_dim *const *vals)
{
    if (at->name) {
        for (int i = 0; i < n; i++)
            if (strcmp(at->name, syms[i]) == 0)
                return vals[i];
        return dim_term_of(c, 1, &at, 1);
    }
    return dim_floordiv(c, dim_subst(c, at->num, n, syms, vals),
                        dim_subst(c, at->den, n, syms, vals));
}

const tc_dim *dim_subst(tc_dimctx *c, const tc_dim *a, int n, const char *const *syms,
                        const tc_dim *const *vals)
{
    if (n == 0)
        return a;
    const tc_dim *r = dim_const(c, a->c);
    for (int i = 0; i < a->nterms; i++) {
        const dim_term *t = &a->terms[i];
        const tc_dim *p = dim_const(c, t->coef);
        for (int j = 0; j < t->n; j++)
            p = dim_mul(c, p, subst_atom(c, t->atoms[j], n, syms, vals));
        r = dim_add(c, r, p);
    }
    return r;
}

void dim_split(tc_dimctx *c, const tc_dim *a, const tc_dim *d, const tc_dim **quot,
               const tc_dim **rest)
{
    int64_t kd = 0;
    bool dc = dim_is_const(d, &kd) && kd > 0;
    poly q = {0}, r = {0};
    if (dc) {
        q.c = floordiv_i64(a->c, kd);
        r.c = wsub(a->c, wmul(q.c, kd));
    } else {
        r.c = a->c;
    }
    for (int i = 0; i < a->nterms; i++) {
        const dim_term *t = &a->terms[i];
        const tc_dim *td = dim_term_of(c, t->coef, t->atoms, t->n);
        const tc_dim *qt = dim_exactdiv(c, td, d);
        if (qt)
            dim_poly_add_scaled(c, &q, qt, 1);
        else
            dim_poly_push(c, &r, t->coef, t->atoms, t->n);
    }
    *quot = dim_finish(c, &q);
    *rest = dim_finish(c, &r);
}

