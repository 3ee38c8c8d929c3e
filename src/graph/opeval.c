/* opeval.c - scalar values of pointwise ops; see opeval.h. */
#include "opeval.h"

#include <math.h>

#include "refmath.h"

/* The parameters must be called a, b, c: ops.def's expressions name them. */
double opeval_f64(op_id op, double a, double b, double c)
{
    switch (op) {
#define OP(id, spelling, kind, arity, rule, ref, cuda) \
    case OP_##id:                                      \
        return (double)(ref);
#include "ops.def"
#undef OP
    default:
        return NAN;
    }
}

bool opeval_has_int(op_id op)
{
    switch (op) {
    case OP_add: case OP_sub: case OP_mul: case OP_neg: case OP_abs: case OP_mod: case OP_pow:
        return true;
    default:
        return false;
    }
}

static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* Floor modulo; INT64_MIN % -1 overflows in C, so -1 is handled first. */
static int64_t py_mod(int64_t a, int64_t b)
{
    if (b == -1)
        return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

/* Repeated squaring, wrapping; b < 0 only for a = +-1 is nonzero. */
static int64_t int_pow(int64_t a, int64_t b)
{
    if (b < 0)
        return a == 1 ? 1 : a == -1 ? (b % 2 == 0 ? 1 : -1) : 0;
    int64_t r = 1;
    for (uint64_t e = (uint64_t)b; e; e >>= 1) {
        if (e & 1)
            r = wrap_mul(r, a);
        a = wrap_mul(a, a);
    }
    return r;
}

opeval_status opeval_i64(op_id op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case OP_add: *r = wrap_add(a, b); break;
    case OP_sub: *r = wrap_sub(a, b); break;
    case OP_mul: *r = wrap_mul(a, b); break;
    case OP_neg: *r = wrap_sub(0, a); break;
    case OP_abs: *r = a < 0 ? wrap_sub(0, a) : a; break;
    case OP_mod:
        *r = 0;
        if (b == 0)
            return OPEVAL_MOD_ZERO;
        *r = py_mod(a, b);
        break;
    case OP_pow:
        *r = int_pow(a, b); /* 0 for 0 ** negative */
        if (a == 0 && b < 0)
            return OPEVAL_ZERO_NEG_POW;
        break;
    default:
        *r = 0;
        break;
    }
    return OPEVAL_OK;
}
