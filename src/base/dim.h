/* dim.h - symbolic dimensions.
 *
 * A dimension is an integer expression over symbols bound at run time
 * (N, D, Batch, and "*" for the element count of [*] parameters).  Shapes,
 * strides and view offsets are all dims, so `reshape(x, N * D)`, `x[1:, ::2]`
 * (N - 1, (D + 1) / 2) and `x.T` (strides 1, D) are exact.
 *
 * Dims are immutable and canonical: sums of products with the constant
 * folded, terms in a fixed order, and floor/ceil divisions kept as atoms
 * when they do not divide exactly.  Two dims are equal exactly when
 * dim_eq() says so; nothing else needs to compare them.
 */
#ifndef TC_DIM_H
#define TC_DIM_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"

typedef struct tc_dim tc_dim;
typedef struct tc_dimctx tc_dimctx;

/* A value for one symbol, as the caller binds it. */
typedef struct tc_dimbind {
    const char *name;
    int64_t value;
} tc_dimbind;

tc_dimctx *dimctx_new(tc_arena *a);

const tc_dim *dim_const(tc_dimctx *c, int64_t v);
const tc_dim *dim_sym(tc_dimctx *c, const char *name);
const tc_dim *dim_add(tc_dimctx *c, const tc_dim *a, const tc_dim *b);
const tc_dim *dim_sub(tc_dimctx *c, const tc_dim *a, const tc_dim *b);
const tc_dim *dim_mul(tc_dimctx *c, const tc_dim *a, const tc_dim *b);
const tc_dim *dim_floordiv(tc_dimctx *c, const tc_dim *a, const tc_dim *b); /* b > 0 */
const tc_dim *dim_ceildiv(tc_dimctx *c, const tc_dim *a, const tc_dim *b);  /* b > 0 */
/* a / b when b divides a exactly (as polynomials, or as constants); NULL otherwise. */
const tc_dim *dim_exactdiv(tc_dimctx *c, const tc_dim *a, const tc_dim *b);

bool dim_eq(const tc_dim *a, const tc_dim *b);
bool dim_is_const(const tc_dim *a, int64_t *v); /* v may be NULL */

/* Evaluate with symbol values.  Returns false and sets *unbound (if not NULL)
 * to the first symbol without a value. */
bool dim_eval(const tc_dim *a, const tc_dimbind *b, int nb, int64_t *out, const char **unbound);

/* Append the symbols of a (no repeats) to names[*n..max). */
void dim_symbols(const tc_dim *a, const char **names, int *n, int max);

/* Substitute vals[i] for symbol syms[i] (simultaneously, inside divisions
 * too).  Index expressions use this to compose maps. */
const tc_dim *dim_subst(tc_dimctx *c, const tc_dim *a, int n, const char *const *syms,
                        const tc_dim *const *vals);
/* Split a into the terms a monomial or constant divisor d divides exactly
 * (*quot gets their quotient) and the rest (*rest): a = d * quot + rest.  A
 * constant divisor also splits the constant: floor and remainder.  Views
 * use this to recover a multi-index from a flat offset. */
void dim_split(tc_dimctx *c, const tc_dim *a, const tc_dim *d, const tc_dim **quot,
               const tc_dim **rest);
/* True when a >= 0 for every value of its symbols >= 0 (a sufficient test:
 * no negative coefficient). */
bool dim_nonneg(const tc_dim *a);
/* Whether symbol name occurs in a (inside divisions too). */
bool dim_uses(const tc_dim *a, const char *name);
/* Whether symbol name occurs in the numerator of a division inside a. */
bool dim_has_division_of(const tc_dim *a, const char *name);

/* Canonical text: "N", "4", "N*D", "N - 1", "(D + 1)/2"; products without
 * spaces, sums with them, as in the dumps. */
void dim_print(tc_buf *b, const tc_dim *a);
const char *dim_str(tc_arena *ar, const tc_dim *a);
/* dim_print with each symbol's text given by name(sym, arg): C source for
 * codegen ("/" is C's division: every value printed is non-negative). */
void dim_print_ex(tc_buf *b, const tc_dim *a, const char *(*name)(const char *sym, void *arg),
                  void *arg);

#endif
