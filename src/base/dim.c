/* dim.c - canonical symbolic dimensions (see dim.h): the canonical form,
 * its construction and hash-consing; arithmetic, queries and printing are
 * in dim_arith.c, dim_query.c and dim_print.c (dim_internal.h).
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
#include "dim_internal.h"

#include <stdlib.h>

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

/* An atom's identity, as a lookup's key. */
typedef struct {
    const char *name;
    const tc_dim *num, *den;
} atom_key;

static bool atom_matches(const void *elem, const void *key)
{
    const dim_atom *t = elem;
    const atom_key *k = key;
    if (k->name || t->name)
        return k->name && t->name && strcmp(k->name, t->name) == 0;
    return t->num == k->num && t->den == k->den;
}

/* The atom for a symbol (num, den NULL) or a division (name NULL), made
 * once per context. */
const dim_atom *dim_intern_atom(tc_dimctx *c, const char *name, const tc_dim *num,
                                   const tc_dim *den)
{
    uint64_t h = atom_hash(name, num, den);
    atom_key key = {name, num, den};
    const dim_atom *found = hset_find(&c->atoms, h, atom_matches, &key);
    if (found)
        return found;
    dim_atom *at = ARENA_NEW(c->a, dim_atom);
    at->id = c->nextid++;
    at->name = name ? arena_strdup(c->a, name) : NULL;
    at->num = num;
    at->den = den;
    hset_add(&c->atoms, c->a, h, at);
    return at;
}

void dim_poly_push(tc_dimctx *c, poly *p, int64_t coef, const dim_atom *const *atoms, int n)
{
    if (coef == 0)
        return;
    ARENA_GROW(c->a, p->t, p->n, p->cap, 8);
    /* No copy of atoms: a poly lives only until its dim_finish, which
     * copies the atoms of the terms it keeps, and every caller's atoms
     * (an interned dim's, or a buffer of its own) outlive that. */
    p->t[p->n++] = (dim_term){coef, n, (const dim_atom **)atoms};
}

/* Graded order: > 0 when monomial a comes first (is larger). */
int dim_mono_cmp(const dim_term *a, const dim_term *b)
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
    return -dim_mono_cmp(x, y); /* highest first */
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

static bool same_form_eq(const void *elem, const void *key)
{
    return same_form(elem, key);
}

/* Sort, merge and drop zero terms of p, then return the context's one copy
 * of the result. */
const tc_dim *dim_finish(tc_dimctx *c, poly *p)
{
    if (p->n > 1)
        qsort(p->t, (size_t)p->n, sizeof *p->t, term_sort_cmp);
    int n = 0; /* equal monomials are adjacent: merge each into the last kept term */
    for (int i = 0; i < p->n; i++) {
        if (n > 0 && dim_mono_cmp(&p->t[n - 1], &p->t[i]) == 0)
            p->t[n - 1].coef = wadd(p->t[n - 1].coef, p->t[i].coef);
        else
            p->t[n++] = p->t[i];
        if (p->t[n - 1].coef == 0)
            n--;
    }
    tc_dim key = {p->c, n, p->t, 0};
    key.hash = dim_hash(&key);
    const tc_dim *found = hset_find(&c->dims, key.hash, same_form_eq, &key);
    if (found)
        return found;
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
    hset_add(&c->dims, c->a, d->hash, d);
    return d;
}

/* p += k * d */
void dim_poly_add_scaled(tc_dimctx *c, poly *p, const tc_dim *d, int64_t k)
{
    p->c = wadd(p->c, wmul(k, d->c));
    for (int i = 0; i < d->nterms; i++)
        dim_poly_push(c, p, wmul(k, d->terms[i].coef), d->terms[i].atoms, d->terms[i].n);
}

const tc_dim *dim_term_of(tc_dimctx *c, int64_t coef, const dim_atom *const *atoms, int n)
{
    poly p = {0};
    if (n == 0)
        p.c = coef;
    else
        dim_poly_push(c, &p, coef, atoms, n);
    return dim_finish(c, &p);
}

/* ---- the interface -------------------------------------------------------- */

tc_dimctx *dimctx_new(tc_arena *a)
{
    tc_dimctx *c = ARENA_NEW(a, tc_dimctx);
    c->a = a;
    hset_init(&c->atoms, a, 64);
    hset_init(&c->dims, a, 256);
    return c;
}

const tc_dim *dim_const(tc_dimctx *c, int64_t v)
{
    poly p = {.c = v};
    return dim_finish(c, &p);
}

const tc_dim *dim_sym(tc_dimctx *c, const char *name)
{
    const dim_atom *at = dim_intern_atom(c, name, NULL, NULL);
    return dim_term_of(c, 1, &at, 1);
}

