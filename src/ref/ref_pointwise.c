/* ref_pointwise.c - unary, binary and ternary ops, and cast.
 *
 * The math is the `ref` column of ops.def, expanded once into a switch, so
 * the interpreter and the op table cannot disagree about what an op means.
 * Inputs have the node's shape or are rank 0 (graph.h): a rank-0 input is
 * read at element 0 for every output element.  Values are computed in f64 and
 * rounded to the node's dtype on store: f16/bf16 inputs are already rounded
 * values, so this is "f32 opmath rounded on store" carried out exactly.
 *
 * Integer nodes need more than f64: a product of two i32 can pass 2^53 and
 * lose low bits before the store wraps it, and % and ** have integer meanings.
 * So when a node's dtype is i32/i64 and all its inputs are integer or bool,
 * add sub mul neg abs mod pow run in int64 with two's-complement wrap (through
 * uint64, which C defines), and the store wraps to i32.  Integer % follows
 * Python (sign of the divisor) and % 0 is an error, as torch raises on CPU;
 * integer ** with a negative exponent truncates toward zero like the real
 * result (2 ** -1 = 0, (-1) ** -3 = -1), and 0 ** negative is an error.
 * Every other op (max, relu, comparisons, ...) is exact in f64 for integers
 * the tensor can hold.
 */
#include <math.h>

#include "ref_internal.h"
#include "refmath.h"

/* The `ref` column: a, b, c are the input values (unused ones are 0). */
static double pointwise_f64(op_id op, double a, double b, double c)
{
    switch (op) {
#define OP(id, spelling, kind, arity, rule, ref, cuda) \
    case OP_##id: return (double)(ref);
#include "../ops.def"
#undef OP
    default: return NAN;
    }
}

static bool is_int_dtype(tc_dtype t) { return dtype_is_int(t) || t == TC_BOOL; }

/* Wrapping int64 arithmetic: unsigned overflow is defined, the conversion
 * back is modular on every compiler we build with (and in C23). */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* Python's integer %: floor modulo.  b != 0 (checked by the caller).
 * INT64_MIN % -1 is 0 but overflows in C, so it is handled first. */
static int64_t py_mod(int64_t a, int64_t b)
{
    if (b == -1)
        return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

/* a ** b for integers by repeated squaring, wrapping like torch. */
static int64_t int_pow(int64_t a, int64_t b)
{
    if (b < 0) {
        /* The real result truncated toward zero: only |a| == 1 is nonzero. */
        if (a == 1)
            return 1;
        if (a == -1)
            return (b % 2 == 0) ? 1 : -1;
        return 0; /* a == 0 is rejected by the caller */
    }
    int64_t r = 1;
    uint64_t e = (uint64_t)b;
    while (e) {
        if (e & 1)
            r = wrap_mul(r, a);
        a = wrap_mul(a, a);
        e >>= 1;
    }
    return r;
}

/* An int64 result stored to an integer dtype: wrap to 32 bits for i32. */
static double int_store(tc_dtype t, int64_t v)
{
    if (t == TC_I32)
        return (double)(int32_t)(uint32_t)(uint64_t)v;
    return dtype_round(t, (double)v);
}

static bool has_int_path(op_id op)
{
    switch (op) {
    case OP_add: case OP_sub: case OP_mul: case OP_neg: case OP_abs: case OP_mod: case OP_pow:
        return true;
    default:
        return false;
    }
}

tc_status ref_eval_pointwise(ref_ctx *c, const gnode *n, const ref_tensor *const *in,
                             ref_tensor *out)
{
    int64_t numel = ref_numel(out);
    /* Each input is either the node's shape (step 1) or rank 0 (step 0). */
    int64_t step[3] = {0, 0, 0};
    bool int_math = dtype_is_int(n->dtype) && has_int_path(n->op);
    for (int k = 0; k < n->nin; k++) {
        const ref_tensor *t = in[k];
        if (!is_int_dtype(t->dtype))
            int_math = false;
        if (t->rank == 0)
            continue;
        bool same = t->rank == out->rank;
        for (int i = 0; same && i < out->rank; i++)
            same = t->shape[i] == out->shape[i];
        if (!same) {
            char a[256], b[256];
            return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                            "reference interpreter: input %d of %s has shape %s, node has %s", k,
                            ref_op_name(n->op), ref_shape_str(t->rank, t->shape, a, sizeof a),
                            ref_shape_str(out->rank, out->shape, b, sizeof b));
        }
        step[k] = 1;
    }

    for (int64_t i = 0; i < numel; i++) {
        double v[3] = {0, 0, 0};
        for (int k = 0; k < n->nin; k++)
            v[k] = in[k]->data[i * step[k]];
        if (!int_math) {
            out->data[i] = dtype_round(n->dtype, pointwise_f64(n->op, v[0], v[1], v[2]));
            continue;
        }
        int64_t a = ref_as_i64(v[0]), b = ref_as_i64(v[1]), r = 0;
        switch (n->op) {
        case OP_add: r = wrap_add(a, b); break;
        case OP_sub: r = wrap_sub(a, b); break;
        case OP_mul: r = wrap_mul(a, b); break;
        case OP_neg: r = wrap_sub(0, a); break;
        case OP_abs: r = a < 0 ? wrap_sub(0, a) : a; break;
        case OP_mod:
            if (b == 0)
                return diag_set(c->d, TC_ERR_INVALID_ARG, n->loc,
                                "integer modulo by zero (%lld %% 0)", (long long)a);
            r = py_mod(a, b);
            break;
        case OP_pow:
            if (a == 0 && b < 0)
                return diag_set(c->d, TC_ERR_INVALID_ARG, n->loc,
                                "integer 0 raised to a negative power (%lld)", (long long)b);
            r = int_pow(a, b);
            break;
        default: break;
        }
        out->data[i] = int_store(n->dtype, r);
    }
    return TC_OK;
}

tc_status ref_eval_cast(ref_ctx *c, const gnode *n, const ref_tensor *const *in, ref_tensor *out)
{
    int64_t numel = ref_numel(out);
    if (ref_numel(in[0]) != numel || in[0]->rank != out->rank)
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: cast changes the shape of its input");
    /* dtype_round truncates floats toward zero for integer targets. */
    for (int64_t i = 0; i < numel; i++)
        out->data[i] = dtype_round(n->dtype, in[0]->data[i]);
    return TC_OK;
}
