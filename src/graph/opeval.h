/* opeval.h - the value of one pointwise op on scalars, shared by the
 * graph builder's constant folding and the reference interpreter, so a
 * folded constant and an interpreted one can never differ.
 *
 * Floats (and every op without an integer meaning) use the `ref` column of
 * ops.def in f64.  Integer nodes whose inputs are all integer or bool use
 * int64 for add sub mul neg abs mod pow: a product of two i32 can pass 2^53
 * and lose low bits in f64, and % and ** have integer meanings.  Arithmetic
 * wraps like two's complement (through uint64, which C defines); % is
 * Python's (sign of the divisor); ** with a negative exponent truncates the
 * real result toward zero (2 ** -1 = 0, (-1) ** -3 = -1).  % 0 and
 * 0 ** negative give 0, as the kernels do (docs/semantics.md, "Edges"),
 * with a status of their own: the builder refuses them in constants, where
 * they can only be mistakes; the interpreter takes the 0.
 */
#ifndef TC_OPEVAL_H
#define TC_OPEVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"

/* The ref column of ops.def for op; unused operands are ignored. */
double opeval_f64(op_id op, double a, double b, double c);

/* Whether op has an integer meaning different from its f64 one. */
bool opeval_has_int(op_id op);

typedef enum {
    OPEVAL_OK,
    OPEVAL_MOD_ZERO,      /* integer % 0 */
    OPEVAL_ZERO_NEG_POW,  /* integer 0 ** negative */
} opeval_status;

/* a op b in int64 for an op with opeval_has_int; *r is the wrapped result
 * (0 for % 0 and 0 ** negative, whatever the status). */
opeval_status opeval_i64(op_id op, int64_t a, int64_t b, int64_t *r);

#endif
