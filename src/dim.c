/* dim.c - canonical symbolic dimensions (see dim.h).
 *
 * A dim is a polynomial with integer coefficients over "atoms":
 *
 *     c + k1*m1 + k2*m2 + ...      each m a product of atoms, k != 0
 *
 * An atom is a symbol (N, D, "*") or an opaque floor division a/b of two
 * dims that could not be simplified (exact divisions fold, whole multiples
 * of a constant divisor are pulled out, common constant factors cancel and
 * nested divisions flatten).  Ceiling division is rewritten as
 * floor division, cdiv(a, b) = (a + b - 1)/b, so one atom kind serves both and
 * `x[1:, ::2]`'s length (D + 1)/2 compares equal however it was reached.
 *
 * Canonical form: each product lists its atoms sorted by atom id (symbols
 * and divisions get ids in order of first creation in the context, so the
 * signature's N comes before its D and prints as "N*D"); terms are sorted in
 * graded order (higher degree first, then lexicographically by atom id),
 * like terms are merged, zero terms dropped and the constant kept apart.
 * Graded order is a monomial order (compatible with multiplication), which
 * is what lets dim_exactdiv divide polynomials by the schoolbook algorithm:
 * dividing by a single polynomial leaves remainder zero exactly when the
 * division is exact.
 *
 * Every dim is hash-consed in its tc_dimctx: building the same canonical
 * form twice returns the same pointer, so dim_eq is a pointer comparison
 * for dims of one context (it falls back to a structural comparison).
 *
 * Printing: sums with spaces ("2*N + 1", "N - 1"), products without
 * ("N*D"), constant last.  A floor division prints as "a/b" with a and b
 * parenthesized unless they are simple ("(D + 1)/2", "N*D/4", "N/(2*D)"), and
 * the whole division is parenthesized inside a larger product
 * ("2*((D + 1)/2)").  "/" always means floor division: sizes are
 * non-negative, where it agrees with C's integer division.
 *
 * Arithmetic on coefficients wraps modulo 2^64 instead of overflowing (no
 * undefined behaviour on absurd literals); binding rejects absurd sizes.
 * Evaluating a division by zero gives 0; no valid program builds one.
 */
#include "dim.h"

#include <stdlib.h>
#include <string.h>

typedef struct dim_atom {
    int id;                 /* creation order in the context: the sort key */
    const char *name;       /* a symbol, or NULL for a floor division */
    const tc_dim *num, *den;
} dim_atom;

typedef struct dim_term {
    int64_t coef;           /* never 0 in a canonical dim */
    int n;
    const dim_atom **atoms; /* sorted by id, repeats for powers */
} dim_term;

struct tc_dim {
    int64_t c;
    int nterms;
    const dim_term *terms;  /* graded order, highest first */
    uint64_t hash;
};

struct tc_dimctx {
    tc_arena *a;
    int nextid;
    const dim_atom **atoms; /* open-addressing table of atoms */
    int atomcap, natoms;
    const tc_dim **dims;    /* open-addressing table of dims */
    int dimcap, ndims;
};

/* ---- wrapping integer arithmetic ---------------------------------------- */

static int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wsub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static int64_t floordiv_i64(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return wsub(0, a);
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static int64_t ceildiv_i64(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return wsub(0, a);
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) == (b < 0)))
        q++;
    return q;
}

/* a is a multiple of b (b != 0), without overflowing on INT64_MIN % -1. */
static bool divides(int64_t b, int64_t a) { return b != 0 && (b == -1 || a % b == 0); }

static int64_t gcd_i64(int64_t a, int64_t b)
{
    uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a;
    uint64_t y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return x > (uint64_t)INT64_MAX ? 1 : (int64_t)x;
}

/* ---- hashing -------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t atom_hash(const char *name, const tc_dim *num, const tc_dim *den)
{
    if (name)
        return mix(1, hash_str(name));
    return mix(mix(2, (uint64_t)(uintptr_t)num), (uint64_t)(uintptr_t)den);
}

static bool atom_matches(const dim_atom *t, const char *name, const tc_dim *num, const tc_dim *den)
{
    if (name || t->name)
        return name && t->name && strcmp(name, t->name) == 0;
    return t->num == num && t->den == den;
}

static void atom_table_put(const dim_atom **tab, int cap, const dim_atom *at)
{
    uint64_t h = atom_hash(at->name, at->num, at->den);
    for (int i = (int)(h & (uint64_t)(cap - 1));; i = (i + 1) & (cap - 1))
        if (!tab[i]) {
            tab[i] = at;
            return;
        }
}

/* The atom for a symbol (num, den NULL) or a division (name NULL), made
 * once per context. */
static const dim_atom *intern_atom(tc_dimctx *c, const char *name, const tc_dim *num,
                                   const tc_dim *den)
{
    uint64_t h = atom_hash(name, num, den);
    for (int i = (int)(h & (uint64_t)(c->atomcap - 1)); c->atoms[i]; i = (i + 1) & (c->atomcap - 1))
        if (atom_matches(c->atoms[i], name, num, den))
            return c->atoms[i];
    if (2 * (c->natoms + 1) > c->atomcap) {
        int cap = c->atomcap * 2;
        const dim_atom **tab = ARENA_ARRAY(c->a, const dim_atom *, cap);
        for (int i = 0; i < c->atomcap; i++)
            if (c->atoms[i])
                atom_table_put(tab, cap, c->atoms[i]);
        c->atoms = tab;
        c->atomcap = cap;
    }
    dim_atom *at = ARENA_NEW(c->a, dim_atom);
    at->id = c->nextid++;
    at->name = name ? arena_strdup(c->a, name) : NULL;
    at->num = num;
    at->den = den;
    atom_table_put(c->atoms, c->atomcap, at);
    c->natoms++;
    return at;
}

/* ---- polynomials under construction -------------------------------------- */

typedef struct poly {
    int64_t c;
    int n, cap;
    dim_term *t;
} poly;

static void poly_push(tc_dimctx *c, poly *p, int64_t coef, const dim_atom *const *atoms, int n)
{
    if (coef == 0)
        return;
    ARENA_GROW(c->a, p->t, p->n, p->cap, 8);
    const dim_atom **copy = ARENA_ARRAY(c->a, const dim_atom *, n > 0 ? n : 1);
    if (n)
        memcpy(copy, atoms, sizeof *copy * (size_t)n);
    p->t[p->n++] = (dim_term){coef, n, copy};
}

/* Graded order: > 0 when monomial a comes first (is larger). */
static int mono_cmp(const dim_term *a, const dim_term *b)
{
    if (a->n != b->n)
        return a->n > b->n ? 1 : -1;
    for (int i = 0; i < a->n; i++)
        if (a->atoms[i]->id != b->atoms[i]->id)
            return a->atoms[i]->id < b->atoms[i]->id ? 1 : -1;
    return 0;
}

static int term_sort_cmp(const void *x, const void *y)
{
    return -mono_cmp(x, y); /* highest first */
}

static uint64_t dim_hash(const tc_dim *d)
{
    uint64_t h = mix(3, (uint64_t)d->c);
    for (int i = 0; i < d->nterms; i++) {
        h = mix(h, (uint64_t)d->terms[i].coef);
        h = mix(h, (uint64_t)d->terms[i].n);
        for (int j = 0; j < d->terms[i].n; j++)
            h = mix(h, (uint64_t)d->terms[i].atoms[j]->id);
    }
    return h;
}

/* Same canonical form, with atoms of one context (compared by pointer). */
static bool same_form(const tc_dim *a, const tc_dim *b)
{
    if (a->c != b->c || a->nterms != b->nterms)
        return false;
    for (int i = 0; i < a->nterms; i++) {
        const dim_term *s = &a->terms[i], *t = &b->terms[i];
        if (s->coef != t->coef || s->n != t->n)
            return false;
        for (int j = 0; j < s->n; j++)
            if (s->atoms[j] != t->atoms[j])
                return false;
    }
    return true;
}

static void dim_table_put(const tc_dim **tab, int cap, const tc_dim *d)
{
    for (int i = (int)(d->hash & (uint64_t)(cap - 1));; i = (i + 1) & (cap - 1))
        if (!tab[i]) {
            tab[i] = d;
            return;
        }
}

/* Sort, merge and drop zero terms of p, then return the context's one copy
 * of the result. */
static const tc_dim *finish(tc_dimctx *c, poly *p)
{
    if (p->n > 1)
        qsort(p->t, (size_t)p->n, sizeof *p->t, term_sort_cmp);
    int n = 0; /* equal monomials are adjacent: merge each into the last kept term */
    for (int i = 0; i < p->n; i++) {
        if (n > 0 && mono_cmp(&p->t[n - 1], &p->t[i]) == 0)
            p->t[n - 1].coef = wadd(p->t[n - 1].coef, p->t[i].coef);
        else
            p->t[n++] = p->t[i];
        if (p->t[n - 1].coef == 0)
            n--;
    }
    tc_dim key = {p->c, n, p->t, 0};
    key.hash = dim_hash(&key);
    for (int i = (int)(key.hash & (uint64_t)(c->dimcap - 1)); c->dims[i];
         i = (i + 1) & (c->dimcap - 1))
        if (c->dims[i]->hash == key.hash && same_form(c->dims[i], &key))
            return c->dims[i];
    if (2 * (c->ndims + 1) > c->dimcap) {
        int cap = c->dimcap * 2;
        const tc_dim **tab = ARENA_ARRAY(c->a, const tc_dim *, cap);
        for (int i = 0; i < c->dimcap; i++)
            if (c->dims[i])
                dim_table_put(tab, cap, c->dims[i]);
        c->dims = tab;
        c->dimcap = cap;
    }
    tc_dim *d = ARENA_NEW(c->a, tc_dim);
    *d = key;
    dim_term *terms = ARENA_ARRAY(c->a, dim_term, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        terms[i] = p->t[i];
        const dim_atom **atoms = ARENA_ARRAY(c->a, const dim_atom *, terms[i].n);
        memcpy(atoms, p->t[i].atoms, sizeof *atoms * (size_t)terms[i].n);
        terms[i].atoms = atoms;
    }
    d->terms = terms;
    dim_table_put(c->dims, c->dimcap, d);
    c->ndims++;
    return d;
}

/* p += k * d */
static void poly_add_scaled(tc_dimctx *c, poly *p, const tc_dim *d, int64_t k)
{
    p->c = wadd(p->c, wmul(k, d->c));
    for (int i = 0; i < d->nterms; i++)
        poly_push(c, p, wmul(k, d->terms[i].coef), d->terms[i].atoms, d->terms[i].n);
}

static const tc_dim *term_dim(tc_dimctx *c, int64_t coef, const dim_atom *const *atoms, int n)
{
    poly p = {0};
    if (n == 0)
        p.c = coef;
    else
        poly_push(c, &p, coef, atoms, n);
    return finish(c, &p);
}

/* ---- the interface -------------------------------------------------------- */

tc_dimctx *dimctx_new(tc_arena *a)
{
    tc_dimctx *c = ARENA_NEW(a, tc_dimctx);
    c->a = a;
    c->atomcap = 64;
    c->atoms = ARENA_ARRAY(a, const dim_atom *, c->atomcap);
    c->dimcap = 256;
    c->dims = ARENA_ARRAY(a, const tc_dim *, c->dimcap);
    return c;
}

const tc_dim *dim_const(tc_dimctx *c, int64_t v)
{
    poly p = {.c = v};
    return finish(c, &p);
}

const tc_dim *dim_sym(tc_dimctx *c, const char *name)
{
    const dim_atom *at = intern_atom(c, name, NULL, NULL);
    return term_dim(c, 1, &at, 1);
}

const tc_dim *dim_add(tc_dimctx *c, const tc_dim *a, const tc_dim *b)
{
    poly p = {0};
    poly_add_scaled(c, &p, a, 1);
    poly_add_scaled(c, &p, b, 1);
    return finish(c, &p);
}

const tc_dim *dim_sub(tc_dimctx *c, const tc_dim *a, const tc_dim *b)
{
    poly p = {0};
    poly_add_scaled(c, &p, a, 1);
    poly_add_scaled(c, &p, b, -1);
    return finish(c, &p);
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
    poly p = {.c = wmul(a->c, b->c)};
    poly_add_scaled(c, &p, &(tc_dim){0, a->nterms, a->terms, 0}, b->c);
    poly_add_scaled(c, &p, &(tc_dim){0, b->nterms, b->terms, 0}, a->c);
    for (int i = 0; i < a->nterms; i++)
        for (int j = 0; j < b->nterms; j++) {
            const dim_term *s = &a->terms[i], *t = &b->terms[j];
            const dim_atom **atoms = ARENA_ARRAY(c->a, const dim_atom *, s->n + t->n);
            int n = merge_atoms(s, t, atoms);
            poly_push(c, &p, wmul(s->coef, t->coef), atoms, n);
        }
    return finish(c, &p);
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
            poly_push(c, &p, kb == -1 ? wsub(0, k) : k / kb, a->terms[i].atoms, a->terms[i].n);
        }
        return finish(c, &p);
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
        const tc_dim *qt = term_dim(c, k, atoms, n);
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
                poly_push(c, &p, a->terms[i].coef / kb, a->terms[i].atoms, a->terms[i].n);
            return finish(c, &p);
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
    const dim_atom *at = intern_atom(c, NULL, a, b);
    return term_dim(c, 1, &at, 1);
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
        return term_dim(c, 1, &at, 1);
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
        const tc_dim *td = term_dim(c, t->coef, t->atoms, t->n);
        const tc_dim *qt = dim_exactdiv(c, td, d);
        if (qt)
            poly_add_scaled(c, &q, qt, 1);
        else
            poly_push(c, &r, t->coef, t->atoms, t->n);
    }
    *quot = finish(c, &q);
    *rest = finish(c, &r);
}

bool dim_nonneg(const tc_dim *a)
{
    /* b*(x/b) <= x: a term -k*(x/b) with b dividing k is bounded below by
     * -(k/b)*x, which is what `D + 1 - 2*((D + 1)/2) >= 0` needs. */
    int64_t c = a->c;
    int64_t *coef = NULL;
    for (int i = 0; i < a->nterms; i++) {
        const dim_term *t = &a->terms[i];
        int64_t b;
        if (t->coef < 0 && t->n == 1 && !t->atoms[0]->name && dim_is_const(t->atoms[0]->den, &b) &&
            b > 0 && t->coef % b == 0) {
            const tc_dim *num = t->atoms[0]->num;
            int64_t k = t->coef / b;
            /* merge k*num into the other terms: find each of num's monomials */
            if (!coef) {
                coef = malloc(sizeof *coef * (size_t)a->nterms);
                if (!coef)
                    return false;
                for (int j = 0; j < a->nterms; j++)
                    coef[j] = a->terms[j].coef;
            }
            coef[i] = 0;
            c = wadd(c, wmul(k, num->c));
            for (int m = 0; m < num->nterms; m++) {
                int found = -1;
                for (int j = 0; j < a->nterms && found < 0; j++)
                    if (mono_cmp(&a->terms[j], &num->terms[m]) == 0)
                        found = j;
                if (found < 0) {
                    free(coef);
                    return false;
                }
                coef[found] = wadd(coef[found], wmul(k, num->terms[m].coef));
            }
        }
    }
    bool ok = c >= 0;
    for (int i = 0; i < a->nterms && ok; i++) {
        int64_t k = coef ? coef[i] : a->terms[i].coef;
        if (k < 0)
            ok = false;
        for (int j = 0; j < a->terms[i].n && ok && k > 0; j++)
            if (!a->terms[i].atoms[j]->name && !dim_nonneg(a->terms[i].atoms[j]->num))
                ok = false;
    }
    free(coef);
    return ok;
}

bool dim_uses(const tc_dim *a, const char *name)
{
    for (int i = 0; i < a->nterms; i++)
        for (int j = 0; j < a->terms[i].n; j++) {
            const dim_atom *at = a->terms[i].atoms[j];
            if (at->name ? strcmp(at->name, name) == 0
                         : dim_uses(at->num, name) || dim_uses(at->den, name))
                return true;
        }
    return false;
}

bool dim_has_division_of(const tc_dim *a, const char *name)
{
    for (int i = 0; i < a->nterms; i++)
        for (int j = 0; j < a->terms[i].n; j++) {
            const dim_atom *at = a->terms[i].atoms[j];
            if (!at->name && (dim_uses(at->num, name) || dim_has_division_of(at->num, name)))
                return true;
        }
    return false;
}

bool dim_is_const(const tc_dim *a, int64_t *v)
{
    if (!a || a->nterms != 0)
        return false;
    if (v)
        *v = a->c;
    return true;
}

static bool atom_eq(const dim_atom *a, const dim_atom *b)
{
    if (a == b)
        return true;
    if (a->name || b->name)
        return a->name && b->name && strcmp(a->name, b->name) == 0;
    return dim_eq(a->num, b->num) && dim_eq(a->den, b->den);
}

bool dim_eq(const tc_dim *a, const tc_dim *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->c != b->c || a->nterms != b->nterms)
        return false;
    /* Different pointers: dims of different contexts (one context interns
     * every form once).  Compare structurally. */
    for (int i = 0; i < a->nterms; i++) {
        const dim_term *s = &a->terms[i], *t = &b->terms[i];
        if (s->coef != t->coef || s->n != t->n)
            return false;
        for (int j = 0; j < s->n; j++)
            if (!atom_eq(s->atoms[j], t->atoms[j]))
                return false;
    }
    return true;
}

static bool atom_eval(const dim_atom *at, const tc_dimbind *b, int nb, int64_t *out,
                      const char **unbound)
{
    if (at->name) {
        for (int i = 0; i < nb; i++)
            if (b[i].name && strcmp(b[i].name, at->name) == 0) {
                *out = b[i].value;
                return true;
            }
        if (unbound)
            *unbound = at->name;
        return false;
    }
    int64_t n, d;
    if (!dim_eval(at->num, b, nb, &n, unbound) || !dim_eval(at->den, b, nb, &d, unbound))
        return false;
    *out = floordiv_i64(n, d);
    return true;
}

bool dim_eval(const tc_dim *a, const tc_dimbind *b, int nb, int64_t *out, const char **unbound)
{
    int64_t v = a->c;
    for (int i = 0; i < a->nterms; i++) {
        int64_t t = a->terms[i].coef;
        for (int j = 0; j < a->terms[i].n; j++) {
            int64_t x;
            if (!atom_eval(a->terms[i].atoms[j], b, nb, &x, unbound))
                return false;
            t = wmul(t, x);
        }
        v = wadd(v, t);
    }
    *out = v;
    return true;
}

static void add_name(const char *s, const char **names, int *n, int max)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(names[i], s) == 0)
            return;
    if (*n < max)
        names[(*n)++] = s;
}

void dim_symbols(const tc_dim *a, const char **names, int *n, int max)
{
    for (int i = 0; i < a->nterms; i++)
        for (int j = 0; j < a->terms[i].n; j++) {
            const dim_atom *at = a->terms[i].atoms[j];
            if (at->name) {
                add_name(at->name, names, n, max);
            } else {
                dim_symbols(at->num, names, n, max);
                dim_symbols(at->den, names, n, max);
            }
        }
}

/* ---- printing ------------------------------------------------------------- */

/* A numerator that reads unambiguously before "/": a non-negative constant,
 * or a product of symbols with coefficient 1. */
static bool simple_num(const tc_dim *d)
{
    if (d->nterms == 0)
        return d->c >= 0;
    if (d->nterms != 1 || d->c != 0 || d->terms[0].coef != 1)
        return false;
    for (int j = 0; j < d->terms[0].n; j++)
        if (!d->terms[0].atoms[j]->name)
            return false;
    return true;
}

/* A denominator that reads unambiguously after "/": a positive constant or
 * a single symbol. */
static bool simple_den(const tc_dim *d)
{
    if (d->nterms == 0)
        return d->c > 0;
    return d->nterms == 1 && d->c == 0 && d->terms[0].coef == 1 && d->terms[0].n == 1 &&
           d->terms[0].atoms[0]->name;
}

typedef const char *(*sym_namer)(const char *sym, void *arg);
static void print_dim(tc_buf *b, const tc_dim *a, sym_namer nm, void *arg);

static void print_atom(tc_buf *b, const dim_atom *at, bool in_product, sym_namer nm, void *arg)
{
    if (at->name) {
        buf_puts(b, nm ? nm(at->name, arg) : at->name);
        return;
    }
    if (in_product)
        buf_putc(b, '(');
    bool pn = !simple_num(at->num), pd = !simple_den(at->den);
    buf_puts(b, pn ? "(" : "");
    print_dim(b, at->num, nm, arg);
    buf_puts(b, pn ? ")/" : "/");
    buf_puts(b, pd ? "(" : "");
    print_dim(b, at->den, nm, arg);
    buf_puts(b, pd ? ")" : "");
    if (in_product)
        buf_putc(b, ')');
}

/* |k| without overflow for INT64_MIN. */
static unsigned long long mag(int64_t k) { return k < 0 ? 0 - (unsigned long long)k : (unsigned long long)k; }

void dim_print(tc_buf *b, const tc_dim *a)
{
    print_dim(b, a, NULL, NULL);
}

void dim_print_ex(tc_buf *b, const tc_dim *a, sym_namer nm, void *arg)
{
    print_dim(b, a, nm, arg);
}

static void print_dim(tc_buf *b, const tc_dim *a, sym_namer nm, void *arg)
{
    if (!a) {
        buf_puts(b, "?");
        return;
    }
    for (int i = 0; i < a->nterms; i++) {
        const dim_term *t = &a->terms[i];
        if (i == 0)
            buf_puts(b, t->coef < 0 ? "-" : "");
        else
            buf_puts(b, t->coef < 0 ? " - " : " + ");
        bool product = t->n > 1 || mag(t->coef) != 1;
        if (mag(t->coef) != 1)
            buf_printf(b, "%llu*", mag(t->coef));
        for (int j = 0; j < t->n; j++) {
            if (j)
                buf_putc(b, '*');
            print_atom(b, t->atoms[j], product, nm, arg);
        }
    }
    if (a->nterms == 0)
        buf_printf(b, "%lld", (long long)a->c);
    else if (a->c != 0)
        buf_printf(b, "%s%llu", a->c < 0 ? " - " : " + ", mag(a->c));
}

const char *dim_str(tc_arena *ar, const tc_dim *a)
{
    tc_buf b;
    buf_init(&b, ar);
    dim_print(&b, a);
    return buf_str(&b);
}
