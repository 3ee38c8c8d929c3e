/* build_node.c - making the nodes of a gfn.
 *
 * Every node the builder makes (except parameter leaves) goes through
 * node_emit, which hash-conses it: a node equal to one already in the
 * function (same op, dtype, weakness, shape, inputs and attributes) is
 * returned instead of a new one.  So `x * x` after inlining two calls of the
 * same helper is computed once, and later stages can rely on common
 * subexpressions being shared.  Hashing covers everything but symbolic dims
 * (constants among them are hashed); equality compares dims with dim_eq.
 *
 * Dtypes (the decision, agreed with verify.c's TR_ check):
 *   A pointwise node's inputs keep their own dtypes; no casts are inserted.
 *   The node's dtype is its ops.def TR_ rule applied to the inputs promoted
 *   left to right with dtype_promote (weak flags included; for TR_WHERE only
 *   inputs 1 and 2).  A node is weak when all its inputs are (literals,
 *   scalar parameters, dims and arithmetic on them); weak nodes have rank 0.
 *   The interpreter computes in f64 anyway, and codegen converts on load.
 *   MATMUL is the exception: its inputs are cast to their common dtype.
 *   Literals: integers are weak i64, floats weak f64 (so `x_f64 + 0.1` keeps
 *   every bit; dtype_promote turns a deciding weak f64 into f32), bools weak
 *   bool.  node_concrete gives a weak value an ordinary dtype (f64 -> f32)
 *   where it becomes a tensor (views, reductions, results without a type).
 *
 * Constant folding: a pointwise node whose inputs are all constants becomes
 * a constant, computed exactly as the reference interpreter would (the ref
 * column of ops.def in f64, int64 with wrap-around for integer add, sub, mul,
 * neg, abs, mod and pow) and rounded to the node's dtype.  Integer
 * arithmetic (+ - * and negation) on symbolic dims stays a dim
 * (OP_dimval N*D), so `reshape(x, N * D)` and `sum(x) / D` both work.
 *
 * Broadcasting: an input whose shape differs from the result's gets an
 * explicit VIEW with stride 0 on the stretched dims; rank-0 inputs need none.
 */
#include "build_internal.h"

#include <math.h>
#include <string.h>

#include "opeval.h"

/* ---- limits ---- */

tc_loc build_limit_loc(builder *b, tc_loc loc)
{
    const bscope *s = b->sc;
    if (!s || s->depth == 0)
        return loc;
    while (s->depth > 1)
        s = s->caller;
    return s->call_loc;
}

void node_check_limits(builder *b, tc_loc loc)
{
    if (b->f->nnodes >= GRAPH_MAX_NODES)
        diag_error(b->d, TC_ERR_LIMIT, build_limit_loc(b, loc),
                   "program too large: more than %d graph nodes after inlining calls",
                   (int)GRAPH_MAX_NODES);
    if (b->work > BUILD_MAX_WORK)
        diag_error(b->d, TC_ERR_LIMIT, build_limit_loc(b, loc),
                   "program too large: inlining calls expands to more than %d expressions",
                   (int)BUILD_MAX_WORK);
    if (b->calls > BUILD_MAX_CALLS)
        diag_error(b->d, TC_ERR_LIMIT, build_limit_loc(b, loc),
                   "program too large: more than %d calls after inlining", (int)BUILD_MAX_CALLS);
}

/* ---- hash-consing ---- */

/* splitmix64's finalizer over h + v: every input bit reaches the low bits
 * the table is indexed by (the bits of 1.0, 2.0, ... differ only high up). */
static uint64_t mix(uint64_t h, uint64_t v)
{
    uint64_t z = h + v + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t dim_hash(const tc_dim *d)
{
    int64_t v;
    return dim_is_const(d, &v) ? (uint64_t)v * 31u + 7u : 1u;
}

static uint64_t node_hash(const gnode *n)
{
    uint64_t h = mix(0, (uint64_t)n->op);
    h = mix(h, (uint64_t)n->dtype * 2u + n->weak);
    h = mix(h, (uint64_t)n->rank * 64u + (uint64_t)n->nin);
    for (int i = 0; i < n->nin; i++)
        h = mix(h, (uint64_t)n->in[i]->id);
    for (int i = 0; i < n->rank; i++)
        h = mix(h, dim_hash(n->shape[i]));
    switch (op_table[n->op].kind) {
    case OPK_LEAF:
        if (n->op == OP_const) {
            uint64_t bits;
            memcpy(&bits, &n->a.cnst.f, sizeof bits);
            h = mix(mix(h, bits), (uint64_t)n->a.cnst.i);
        } else if (n->op == OP_dimval) {
            h = mix(h, dim_hash(n->a.dim));
        } else if (n->op == OP_iota) {
            h = mix(h, (uint64_t)n->a.axis);
        }
        break;
    case OPK_REDUCE:
        for (int i = 0; i < n->a.red.naxes; i++)
            h = mix(h, (uint64_t)n->a.red.axes[i]);
        h = mix(h, (uint64_t)n->a.red.keepdim * 1000u + (uint64_t)(int64_t)n->a.red.correction);
        break;
    case OPK_VIEW:
        for (int i = 0; i < n->rank; i++)
            h = mix(h, dim_hash(n->a.view.strides[i]));
        h = mix(h, dim_hash(n->a.view.offset));
        break;
    case OPK_CONCAT:
    case OPK_GATHER:
        h = mix(h, (uint64_t)n->a.axis);
        break;
    case OPK_SCAN:
        h = mix(h, (uint64_t)n->a.scan.axis * 2u + n->a.scan.reverse);
        break;
    default:
        break;
    }
    return h;
}

static bool node_equal(const gnode *x, const gnode *y)
{
    if (x->op != y->op || x->dtype != y->dtype || x->weak != y->weak || x->rank != y->rank ||
        x->nin != y->nin)
        return false;
    for (int i = 0; i < x->nin; i++)
        if (x->in[i] != y->in[i])
            return false;
    for (int i = 0; i < x->rank; i++)
        if (!dim_eq(x->shape[i], y->shape[i]))
            return false;
    switch (op_table[x->op].kind) {
    case OPK_LEAF:
        if (x->op == OP_const)
            return memcmp(&x->a.cnst.f, &y->a.cnst.f, sizeof x->a.cnst.f) == 0 &&
                   x->a.cnst.i == y->a.cnst.i;
        if (x->op == OP_dimval)
            return dim_eq(x->a.dim, y->a.dim);
        if (x->op == OP_iota)
            return x->a.axis == y->a.axis;
        return false; /* inputs and scalars are distinct parameters */
    case OPK_REDUCE:
        if (x->a.red.naxes != y->a.red.naxes || x->a.red.keepdim != y->a.red.keepdim ||
            x->a.red.correction != y->a.red.correction)
            return false;
        for (int i = 0; i < x->a.red.naxes; i++)
            if (x->a.red.axes[i] != y->a.red.axes[i])
                return false;
        return true;
    case OPK_VIEW:
        for (int i = 0; i < x->rank; i++)
            if (!dim_eq(x->a.view.strides[i], y->a.view.strides[i]))
                return false;
        return dim_eq(x->a.view.offset, y->a.view.offset);
    case OPK_CONCAT:
    case OPK_GATHER:
        return x->a.axis == y->a.axis;
    case OPK_SCAN:
        return x->a.scan.axis == y->a.scan.axis && x->a.scan.reverse == y->a.scan.reverse;
    default:
        return true;
    }
}

static bool node_equal_eq(const void *elem, const void *key)
{
    return node_equal(elem, key);
}

gnode *node_emit(builder *b, const gnode *n)
{
    uint64_t h = node_hash(n);
    gnode *same = hset_find(&b->cse, h, node_equal_eq, n);
    if (same)
        return same;
    node_check_limits(b, n->loc);
    gnode *m = graph_node_new(b->a, n->op, n->dtype, n->rank, (const tc_dim *const *)n->shape,
                              n->in, n->nin, n->loc);
    m->weak = n->weak;
    m->a = n->a;
    if (op_table[n->op].kind == OPK_VIEW) {
        m->a.view.strides = ARENA_ARRAY(b->a, const tc_dim *, n->rank > 0 ? n->rank : 1);
        for (int i = 0; i < n->rank; i++)
            m->a.view.strides[i] = n->a.view.strides[i];
    }
    graph_add(b->a, b->f, m);
    hset_add(&b->cse, b->a, h, m);
    return m;
}

/* A template node on the caller's stack (build_internal.h). */
gnode build_tmpl(op_id op, tc_dtype dt, int rank, const tc_dim **shape, gnode **in, int nin,
                 tc_loc loc)
{
    gnode t;
    memset(&t, 0, sizeof t);
    t.id = -1;
    t.op = op;
    t.dtype = dt;
    t.rank = rank;
    t.shape = shape;
    t.in = in;
    t.nin = nin;
    t.loc = loc;
    return t;
}

/* ---- leaves ---- */

/* A double to int64 without undefined behaviour (NaN and overflow give 0,
 * as they cannot come from a value already rounded to an integer dtype). */
static int64_t to_i64(double v)
{
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        return 0;
    return (int64_t)v;
}

static gnode *const_exact(builder *b, tc_dtype dt, double f, int64_t i, bool weak, tc_loc loc)
{
    gnode t = build_tmpl(OP_const, dt, 0, NULL, NULL, 0, loc);
    t.weak = weak;
    if (dtype_is_float(dt)) {
        t.a.cnst.f = dtype_round(dt, f);
    } else {
        t.a.cnst.i = i;
        t.a.cnst.f = (double)i;
    }
    return node_emit(b, &t);
}

gnode *node_const(builder *b, tc_dtype dt, double v, bool weak, tc_loc loc)
{
    double r = dtype_round(dt, v);
    return const_exact(b, dt, r, dtype_is_float(dt) ? 0 : to_i64(r), weak, loc);
}

gnode *node_const_int(builder *b, tc_dtype dt, int64_t v, bool weak, tc_loc loc)
{
    if (dt == TC_I32)
        v = (int32_t)(uint32_t)(uint64_t)v;
    if (dtype_is_int(dt))
        return const_exact(b, dt, (double)v, v, weak, loc);
    return node_const(b, dt, (double)v, weak, loc);
}

gnode *node_dimval(builder *b, const tc_dim *dim, tc_loc loc)
{
    int64_t v;
    if (dim_is_const(dim, &v))
        return const_exact(b, TC_I64, (double)v, v, true, loc);
    gnode t = build_tmpl(OP_dimval, TC_I64, 0, NULL, NULL, 0, loc);
    t.weak = true;
    t.a.dim = dim;
    return node_emit(b, &t);
}

/* ---- dtypes ---- */

tc_dtype node_rule_dtype(op_id op, gnode *const *in, int nin, bool *weak)
{
    type_rule rule = op_table[op].rule;
    int first = rule == TR_WHERE ? 1 : 0;
    tc_dtype dt = in[first]->dtype;
    bool w = in[first]->weak;
    for (int k = first + 1; k < nin; k++) {
        dt = dtype_promote(dt, w, in[k]->dtype, in[k]->weak);
        w = w && in[k]->weak;
    }
    bool all = true;
    for (int k = 0; k < nin; k++)
        all = all && in[k]->weak;
    if (weak)
        *weak = all;
    /* where(mask, inf, -inf): literals alone chose the dtype of a tensor
     * result, so give it the default a literal gets on its own (f32). */
    if (w && !all && dt == TC_F64)
        dt = TC_F32;
    switch (rule) {
    case TR_FLOAT:
        return dtype_is_float(dt) ? dt : TC_F32;
    case TR_BOOL:
        return TC_BOOL;
    case TR_SUMI:
        return dtype_is_float(dt) ? dt : TC_I64;
    case TR_I64:
        return TC_I64;
    default:
        return dt;
    }
}

tc_dtype dtype_concrete(const gnode *x)
{
    return (x->weak && x->dtype == TC_F64) ? TC_F32 : x->dtype;
}

gnode *node_cast(builder *b, gnode *x, tc_dtype dt, bool weak, tc_loc loc)
{
    if (x->op == OP_const) {
        if (x->dtype == dt && x->weak == weak)
            return x;
        /* integers exactly (an i64 beyond 2^53 has no double); floats to
         * integers saturate as a cast does at run time (dtype_cast) */
        if (!dtype_is_float(x->dtype) && dtype_is_int(dt))
            return node_const_int(b, dt, x->a.cnst.i, weak, loc);
        if (dtype_is_int(dt)) /* exact: i64(1e30) is 2^63 - 1, which no double holds */
            return node_const_int(b, dt, dtype_f2i(dt, x->a.cnst.f), weak, loc);
        return node_const(b, dt, dtype_cast(x->dtype, dt, x->a.cnst.f), weak, loc);
    }
    /* Weakness alone is not worth a node: an unchanged dtype keeps x. */
    if (x->dtype == dt)
        return x;
    gnode *in[1] = {x};
    gnode t = build_tmpl(OP_cast, dt, x->rank, x->shape, in, 1, loc);
    t.weak = weak && x->rank == 0;
    return node_emit(b, &t);
}

gnode *node_concrete(builder *b, gnode *x, tc_loc loc)
{
    if (!x->weak)
        return x;
    return node_cast(b, x, dtype_concrete(x), false, loc);
}

/* ---- constant folding ---- */

static gnode *fold(builder *b, op_id op, tc_dtype dt, bool weak, gnode *const *in, int nin,
                   tc_loc loc)
{
    double v[3] = {0, 0, 0};
    int64_t iv[3] = {0, 0, 0};
    bool ints = dtype_is_int(dt);
    for (int k = 0; k < nin; k++) {
        v[k] = in[k]->a.cnst.f;
        iv[k] = in[k]->a.cnst.i;
        if (dtype_is_float(in[k]->dtype))
            ints = false;
    }
    if (ints && opeval_has_int(op)) {
        int64_t r;
        switch (opeval_i64(op, iv[0], iv[1], &r)) {
        case OPEVAL_MOD_ZERO:
            diag_error(b->d, TC_ERR_COMPILE, loc, "integer modulo by zero");
        case OPEVAL_ZERO_NEG_POW:
            diag_error(b->d, TC_ERR_COMPILE, loc, "integer 0 raised to a negative power");
        case OPEVAL_OK:
            break;
        }
        if (dt == TC_I32)
            r = (int32_t)(uint32_t)(uint64_t)r;
        return const_exact(b, dt, (double)r, r, weak, loc);
    }
    return node_const(b, dt, opeval_f64(op, v[0], v[1], v[2]), weak, loc);
}

/* Integer + - * and negation of dims and integer constants, kept as a dim. */
static gnode *fold_dims(builder *b, op_id op, gnode *const *in, int nin, tc_loc loc)
{
    const tc_dim *d[2] = {NULL, NULL};
    bool any = false;
    /* Only + - * and negation stay dims; clamp and where (three inputs) are
     * left as nodes. */
    if (op != OP_add && op != OP_sub && op != OP_mul && op != OP_neg)
        return NULL;
    for (int k = 0; k < nin; k++) {
        if (in[k]->op == OP_dimval) {
            d[k] = in[k]->a.dim;
            any = true;
        } else if (in[k]->op == OP_const && dtype_is_int(in[k]->dtype)) {
            d[k] = dim_const(b->dc, in[k]->a.cnst.i);
        } else {
            return NULL;
        }
    }
    if (!any)
        return NULL;
    switch (op) {
    case OP_add: return node_dimval(b, dim_add(b->dc, d[0], d[1]), loc);
    case OP_sub: return node_dimval(b, dim_sub(b->dc, d[0], d[1]), loc);
    case OP_mul: return node_dimval(b, dim_mul(b->dc, d[0], d[1]), loc);
    case OP_neg: return node_dimval(b, dim_sub(b->dc, dim_const(b->dc, 0), d[0]), loc);
    default: return NULL;
    }
}

/* ---- pointwise ---- */

static bool is_one(const tc_dim *d)
{
    int64_t v;
    return dim_is_const(d, &v) && v == 1;
}

static void check_broadcast(builder *b, const gnode *x, const gnode *y, tc_loc loc)
{
    int n = x->rank < y->rank ? x->rank : y->rank;
    for (int t = 1; t <= n; t++) {
        const tc_dim *dx = x->shape[x->rank - t], *dy = y->shape[y->rank - t];
        if (dim_eq(dx, dy) || is_one(dx) || is_one(dy))
            continue;
        diag_error(b->d, TC_ERR_COMPILE, loc, "shapes %s and %s do not broadcast (dim -%d: %s vs %s)",
                   type_str(b, x), type_str(b, y), t, dimstr(b, dx), dimstr(b, dy));
    }
}

gnode *node_pointwise(builder *b, op_id op, gnode *const *in, int nin, tc_loc loc)
{
    /* The result shape: NumPy broadcasting, checked pair by pair so the
     * message names the two operands that disagree. */
    int rank = 0;
    for (int k = 0; k < nin; k++)
        if (in[k]->rank > rank)
            rank = in[k]->rank;
    for (int i = 0; i < nin; i++)
        for (int j = i + 1; j < nin; j++)
            check_broadcast(b, in[i], in[j], loc);
    const tc_dim *shape[TC_MAX_RANK];
    for (int p = 0; p < rank; p++) {
        const tc_dim *d = NULL;
        for (int k = 0; k < nin; k++) {
            int q = in[k]->rank - (rank - p);
            if (q < 0)
                continue;
            if (!d || (is_one(d) && !is_one(in[k]->shape[q])))
                d = in[k]->shape[q];
        }
        shape[p] = d;
    }

    bool weak;
    tc_dtype dt = node_rule_dtype(op, in, nin, &weak);

    bool consts = true;
    for (int k = 0; k < nin; k++)
        consts = consts && in[k]->op == OP_const;
    if (consts)
        return fold(b, op, dt, weak, in, nin, loc);
    if (dt == TC_I64 && weak) {
        gnode *d = fold_dims(b, op, in, nin, loc);
        if (d)
            return d;
    }

    gnode *vin[3];
    for (int k = 0; k < nin; k++) {
        vin[k] = in[k];
        if (in[k]->rank == 0)
            continue;
        bool same = in[k]->rank == rank;
        for (int i = 0; same && i < rank; i++)
            same = dim_eq(in[k]->shape[i], shape[i]);
        if (!same)
            vin[k] = view_broadcast(b, in[k], rank, shape, loc);
    }
    gnode t = build_tmpl(op, dt, rank, shape, vin, nin, loc);
    t.weak = weak;
    return node_emit(b, &t);
}

/* ---- reductions, matmul, concat, copy ---- */

/* x as a strong (non-weak) value of dtype dt: what a reduction gives. */
static gnode *strong_as(builder *b, gnode *x, tc_dtype dt, tc_loc loc)
{
    if (x->dtype != dt || x->op == OP_const)
        return node_cast(b, x, dt, false, loc);
    if (!x->weak)
        return x;
    gnode *in[1] = {x};
    gnode t = build_tmpl(OP_cast, dt, x->rank, x->shape, in, 1, loc);
    return node_emit(b, &t);
}

/* A reduction over no axes (only of a rank-0 value: `max(lr)`, `sum(2.0)`) reduces
 * one element per output, so it is pointwise: sum prod mean max min
 * logsumexp give the element in the result dtype, argmax/argmin 0, var/std
 * the two-pass formula over one element, (x - x)^2 / max(1 - correction, 0):
 * 0 (NaN for a non-finite x) with correction 0, else NaN as ref_reduce.c's
 * 0/0.  Later stages then never see a reduction without axes. */
static gnode *reduce_nothing(builder *b, op_id op, gnode *x, tc_dtype dt, int correction,
                             tc_loc loc)
{
    switch (op) {
    case OP_argmax:
    case OP_argmin: /* x is rank 0: an empty axis list is refused */
        return node_const_int(b, TC_I64, 0, false, loc);
    case OP_var:
    case OP_std: {
        gnode *xf = strong_as(b, x, dt, loc);
        gnode *d = node_pointwise(b, OP_sub, (gnode *[]){xf, xf}, 2, loc);
        gnode *v = node_pointwise(b, OP_mul, (gnode *[]){d, d}, 2, loc);
        if (correction > 0)
            v = node_pointwise(b, OP_add, (gnode *[]){v, node_const(b, dt, NAN, true, loc)}, 2, loc);
        if (op == OP_std)
            v = node_pointwise(b, OP_sqrt, (gnode *[]){v}, 1, loc);
        return strong_as(b, v, dt, loc);
    }
    default:
        return strong_as(b, x, dt, loc);
    }
}

gnode *node_reduce(builder *b, op_id op, gnode *x, const bool *axes, bool keepdim, int correction,
                   tc_loc loc)
{
    x = node_concrete(b, x, loc);
    gnode *in[1] = {x};
    tc_dtype dt = node_rule_dtype(op, in, 1, NULL);
    const tc_dim *shape[TC_MAX_RANK];
    int rank = 0;
    gnode t = build_tmpl(op, dt, 0, shape, in, 1, loc);
    for (int i = 0; i < x->rank; i++) {
        if (!axes[i])
            shape[rank++] = x->shape[i];
        else if (keepdim)
            shape[rank++] = dim_const(b->dc, 1);
        if (axes[i])
            t.a.red.axes[t.a.red.naxes++] = i;
    }
    t.rank = rank;
    t.a.red.keepdim = keepdim;
    t.a.red.correction = (op == OP_var || op == OP_std) ? correction : 0;
    if (t.a.red.naxes == 0)
        return reduce_nothing(b, op, x, dt, correction, loc);
    return node_emit(b, &t);
}

gnode *node_scan(builder *b, op_id op, gnode *x, int axis, bool reverse, tc_loc loc)
{
    x = node_concrete(b, x, loc);
    gnode *in[1] = {x};
    tc_dtype dt = node_rule_dtype(op, in, 1, NULL);
    gnode t = build_tmpl(op, dt, x->rank, x->shape, in, 1, loc);
    t.a.scan.axis = axis;
    t.a.scan.reverse = reverse;
    return node_emit(b, &t);
}

gnode *node_matmul(builder *b, gnode *x, gnode *y, tc_loc loc)
{
    if (x->rank < 1 || y->rank < 1)
        diag_error(b->d, TC_ERR_COMPILE, loc,
                   "'@' needs operands of rank 1 or more, but the %s operand is %s",
                   x->rank < 1 ? "left" : "right", type_str(b, x->rank < 1 ? x : y));
    const tc_dim *kx = x->shape[x->rank - 1];
    const tc_dim *ky = y->rank == 1 ? y->shape[0] : y->shape[y->rank - 2];
    if (!dim_eq(kx, ky))
        diag_error(b->d, TC_ERR_COMPILE, loc,
                   "shapes %s and %s do not match for '@' (inner dims %s vs %s)", type_str(b, x),
                   type_str(b, y), dimstr(b, kx), dimstr(b, ky));
    /* Batch dims broadcast like a pointwise op's dims. */
    int bx = x->rank >= 2 ? x->rank - 2 : 0, by = y->rank >= 2 ? y->rank - 2 : 0;
    int nb = bx > by ? bx : by;
    const tc_dim *shape[TC_MAX_RANK + 2];
    for (int p = 0; p < nb; p++) {
        int qx = bx - (nb - p), qy = by - (nb - p);
        const tc_dim *dx = qx >= 0 ? x->shape[qx] : NULL, *dy = qy >= 0 ? y->shape[qy] : NULL;
        if (dx && dy && !dim_eq(dx, dy) && !is_one(dx) && !is_one(dy))
            diag_error(b->d, TC_ERR_COMPILE, loc,
                       "shapes %s and %s do not match for '@' (batch dim %d: %s vs %s)",
                       type_str(b, x), type_str(b, y), p - nb, dimstr(b, dx), dimstr(b, dy));
        shape[p] = !dx ? dy : !dy ? dx : is_one(dx) ? dy : dx;
    }
    /* The MATMUL node is always (..., M, K) @ (..., K, N): a rank-1 operand
     * is viewed as [1, K] or [K, 1], and that dim is dropped from the result
     * again by a view, as NumPy does. */
    bool vec_x = x->rank == 1, vec_y = y->rank == 1;
    tc_dtype dt = dtype_promote(x->dtype, false, y->dtype, false);
    x = node_cast(b, x, dt, false, loc);
    y = node_cast(b, y, dt, false, loc);
    if (vec_x)
        x = view_unsqueeze(b, x, 0, loc);
    if (vec_y)
        y = view_unsqueeze(b, y, 1, loc);
    int rank = nb;
    shape[rank++] = x->shape[x->rank - 2];
    shape[rank++] = y->shape[y->rank - 1];
    gnode *in[2] = {x, y};
    gnode t = build_tmpl(OP_matmul, dt, rank, shape, in, 2, loc);
    gnode *m = node_emit(b, &t);
    if (vec_y)
        m = view_squeeze(b, m, m->rank - 1, loc);
    if (vec_x)
        m = view_squeeze(b, m, m->rank - (vec_y ? 1 : 2), loc);
    return m;
}

gnode *node_concat(builder *b, gnode *const *in, int nin, int axis, tc_loc loc)
{
    const gnode *x = in[0];
    const tc_dim *shape[TC_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        shape[i] = x->shape[i];
    tc_dtype dt = x->dtype;
    for (int k = 1; k < nin; k++) {
        const gnode *y = in[k];
        if (y->rank != x->rank)
            diag_error(b->d, TC_ERR_COMPILE, loc,
                       "concat needs tensors of one rank, but got %s and %s", type_str(b, x),
                       type_str(b, y));
        for (int i = 0; i < x->rank; i++)
            if (i != axis && !dim_eq(x->shape[i], y->shape[i]))
                diag_error(b->d, TC_ERR_COMPILE, loc,
                           "concat along axis %d needs the other dims equal, but got %s and %s "
                           "(dim %d: %s vs %s)",
                           axis, type_str(b, x), type_str(b, y), i, dimstr(b, x->shape[i]),
                           dimstr(b, y->shape[i]));
        shape[axis] = dim_add(b->dc, shape[axis], y->shape[axis]);
        dt = dtype_promote(dt, false, y->dtype, false);
    }
    if (nin == 1)
        return in[0];
    gnode t = build_tmpl(OP_concat, dt, x->rank, shape, (gnode **)in, nin, loc);
    t.a.axis = axis;
    return node_emit(b, &t);
}

gnode *node_copy(builder *b, gnode *x, tc_loc loc)
{
    gnode *in[1] = {x};
    gnode t = build_tmpl(OP_copy, x->dtype, x->rank, x->shape, in, 1, loc);
    return node_emit(b, &t);
}
