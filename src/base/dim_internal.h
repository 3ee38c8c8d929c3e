/* dim_internal.h - the representation of dims, shared by the files of the
 * dim module (not for other modules; the interface is dim.h):
 *   dim.c        the canonical form: atoms, polynomials, hash-consing
 *   dim_arith.c  arithmetic: +, -, *, exact/floor/ceiling division,
 *                substitution, splitting by a divisor
 *   dim_query.c  questions about a dim: sign, symbols, constness,
 *                equality, evaluation under bindings
 *   dim_print.c  printing
 * dim.c's header comment describes the canonical form.
 */
#ifndef TC_DIM_INTERNAL_H
#define TC_DIM_INTERNAL_H

#include "dim.h"
#include "hset.h"

#include <stdint.h>
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
    tc_hset atoms;          /* every atom made, once (hset.h) */
    tc_hset dims;           /* every dim made, once */
};

typedef struct poly {
    int64_t c;
    int n, cap;
    dim_term *t;
} poly;

/* ---- wrapping integer arithmetic ---------------------------------------- */

static inline int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t wsub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static inline int64_t floordiv_i64(int64_t a, int64_t b)
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

static inline int64_t ceildiv_i64(int64_t a, int64_t b)
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
static inline bool divides(int64_t b, int64_t a) { return b != 0 && (b == -1 || a % b == 0); }

static inline int64_t gcd_i64(int64_t a, int64_t b)
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

/* ---- building canonical dims (dim.c) ------------------------------------- */

/* The atom for a symbol (name) or a floor division num/den, interned. */
const dim_atom *dim_intern_atom(tc_dimctx *c, const char *name, const tc_dim *num, const tc_dim *den);
/* p += coef * atoms[0..n) (the atoms sorted by id) */
void dim_poly_push(tc_dimctx *c, poly *p, int64_t coef, const dim_atom *const *atoms, int n);
/* p += k * d */
void dim_poly_add_scaled(tc_dimctx *c, poly *p, const tc_dim *d, int64_t k);
/* Graded order: > 0 when monomial a comes first (is larger). */
int dim_mono_cmp(const dim_term *a, const dim_term *b);
/* The canonical, hash-consed dim of p (sorted, like terms merged). */
const tc_dim *dim_finish(tc_dimctx *c, poly *p);
/* The dim coef * atoms[0..n) (coef alone when n is 0). */
const tc_dim *dim_term_of(tc_dimctx *c, int64_t coef, const dim_atom *const *atoms, int n);

#endif
