/* ref.c - the reference interpreter's driver: ref_run and tensor memory.
 *
 * The approach is the plainest one that can be trusted as an oracle: walk the
 * nodes in their (topological) order, give every node its own contiguous
 * row-major array of doubles with a concrete shape (its symbolic shape
 * evaluated under the caller's bindings), and fill it from the values of its
 * inputs.  Integers and bools live in an int64 lane (ref.h), floats in a
 * double lane; ref_convert moves a value between them as a cast does.  Nothing is fused, aliased or computed in place, so each node's value
 * can be read off and compared on its own.
 *
 * The only economy is freeing a value after its last user has run (outputs
 * live to the end), which keeps long graphs inside memory without changing
 * any result.  Every failure (bad argument, unbound size, a tensor too large,
 * an empty max) is recorded with diag_set at the relevant location and
 * returned; every buffer, including outputs already made, is freed first.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

/* --- tensors ---------------------------------------------------------------- */

/* Elements of a shape, or -1 if a dim is negative or the product passes max. */
static int64_t checked_numel(int rank, const int64_t *shape, int64_t max)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++) {
        if (shape[k] < 0)
            return -1;
        if (shape[k] != 0 && n > max / shape[k])
            return -1;
        n *= shape[k];
    }
    return n;
}

double ref_elem_err(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) ? 0 : INFINITY;
    if (isinf(a) || isinf(b))
        return a == b ? 0 : INFINITY;
    return fabs(a - b);
}

int64_t ref_numel(const ref_tensor *t)
{
    int64_t n = 1;
    for (int k = 0; k < t->rank; k++)
        n *= t->shape[k];
    return n;
}

bool ref_alloc(ref_tensor *t, tc_dtype dt, int rank, const int64_t *shape)
{
    memset(t, 0, sizeof *t);
    if (rank < 0 || rank > TC_MAX_RANK)
        return false;
    /* any size whose bytes a size_t counts */
    int64_t n = checked_numel(rank, shape, (int64_t)(SIZE_MAX / 2 / sizeof(double)));
    if (n < 0)
        return false;
    /* At least one element so an empty tensor still has a non-NULL pointer;
     * only the dtype's lane, so a reader of the other one crashes. */
    size_t cnt = (size_t)(n > 0 ? n : 1);
    if (ref_is_int(dt)) {
        if (!(t->idata = calloc(cnt, sizeof(int64_t))))
            return false;
    } else if (!(t->data = calloc(cnt, sizeof(double)))) {
        return false;
    }
    t->dtype = dt;
    t->rank = rank;
    for (int k = 0; k < rank; k++)
        t->shape[k] = shape[k];
    return true;
}

void ref_free(ref_tensor *t)
{
    if (!t)
        return;
    free(t->data);
    free(t->idata);
    memset(t, 0, sizeof *t);
}

/* --- elements ------------------------------------------------------------------ */

bool ref_is_int(tc_dtype t) { return dtype_is_int(t) || t == TC_BOOL; }

double ref_getf(const ref_tensor *t, int64_t i)
{
    return t->idata ? (double)t->idata[i] : t->data[i];
}

int64_t ref_geti(const ref_tensor *t, int64_t i)
{
    return t->idata ? t->idata[i] : dtype_f2i(TC_I64, t->data[i]);
}

void ref_setf(ref_tensor *t, int64_t i, double v)
{
    if (t->idata)
        t->idata[i] = dtype_f2i(t->dtype, v);
    else
        t->data[i] = dtype_round(t->dtype, v);
}

void ref_seti(ref_tensor *t, int64_t i, int64_t v)
{
    if (t->idata)
        t->idata[i] = dtype_wrap(t->dtype, v);
    else
        t->data[i] = dtype_i2f(t->dtype, v);
}

void ref_convert(ref_tensor *dst, int64_t i, const ref_tensor *src, int64_t j)
{
    if (src->idata)
        ref_seti(dst, i, src->idata[j]);
    else
        ref_setf(dst, i, src->data[j]);
}

/* --- helpers shared by the eval files ------------------------------------ */

bool ref_dim(ref_ctx *c, const tc_dim *dim, tc_loc loc, int64_t *out)
{
    const char *unbound = NULL;
    if (!dim) {
        diag_set(c->d, TC_ERR_INTERNAL, loc, "reference interpreter: missing dim in the graph");
        return false;
    }
    if (dim_eval(dim, c->b, c->nb, out, &unbound))
        return true;
    if (unbound)
        diag_set(c->d, TC_ERR_INVALID_ARG, loc, "size '%s' is not bound", unbound);
    else
        diag_set(c->d, TC_ERR_INVALID_ARG, loc, "a size of this value cannot be evaluated");
    return false;
}

bool ref_next_index(int rank, const int64_t *shape, int64_t *idx)
{
    for (int k = rank - 1; k >= 0; k--) {
        if (++idx[k] < shape[k])
            return true;
        idx[k] = 0;
    }
    return false;
}

int64_t ref_flat(int rank, const int64_t *shape, const int64_t *idx)
{
    int64_t f = 0;
    for (int k = 0; k < rank; k++)
        f = f * shape[k] + idx[k];
    return f;
}

const char *ref_shape_str(int rank, const int64_t *shape, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    len += (size_t)snprintf(buf + len, n - len, "[");
    for (int k = 0; k < rank && len < n; k++)
        len += (size_t)snprintf(buf + len, n - len, "%s%lld", k ? ", " : "", (long long)shape[k]);
    if (len < n)
        snprintf(buf + len, n - len, "]");
    return buf;
}

/* --- the op table, as the interpreter needs it ---------------------------- */

static op_kind kind_of(op_id op)
{
    switch (op) {
#define OP(id, spelling, kind, arity, rule, ref, cuda) case OP_##id: return kind;
#include "ops.def"
#undef OP
    default: return OPK_LEAF;
    }
}

const char *ref_op_name(op_id op)
{
    switch (op) {
#define OP(id, spelling, kind, arity, rule, ref, cuda) case OP_##id: return spelling;
#include "ops.def"
#undef OP
    default: return "?";
    }
}

static int arity_of(op_id op)
{
    switch (op) {
#define OP(id, spelling, kind, arity, rule, ref, cuda) case OP_##id: return arity;
#include "ops.def"
#undef OP
    default: return 0;
    }
}

/* --- leaves ------------------------------------------------------------------- */

static tc_status eval_leaf(ref_ctx *c, const gfn *f, const gnode *n, const ref_tensor *args,
                           ref_tensor *out)
{
    int64_t numel = ref_numel(out);
    switch (n->op) {
    case OP_input:
    case OP_scalar: {
        int p = n->a.param;
        if (p < 0 || p >= f->nparams)
            return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                            "reference interpreter: %s node names parameter %d of %d",
                            n->op == OP_input ? "input" : "scalar", p, f->nparams);
        const gparam *gp = &f->params[p];
        if (!args)
            return diag_set(c->d, TC_ERR_INVALID_ARG, gp->loc, "no argument given for parameter '%s'",
                            gp->name);
        const ref_tensor *t = &args[p];
        bool same = t->rank == out->rank;
        for (int k = 0; same && k < out->rank; k++)
            same = t->shape[k] == out->shape[k];
        if (!same) {
            char got[256], want[256];
            return diag_set(c->d, TC_ERR_INVALID_ARG, gp->loc,
                            "argument for parameter '%s' has shape %s, expected %s%s", gp->name,
                            ref_shape_str(t->rank, t->shape, got, sizeof got),
                            ref_shape_str(out->rank, out->shape, want, sizeof want),
                            n->op == OP_scalar ? " (a scalar)" : "");
        }
        if (numel > 0 && !(ref_is_int(t->dtype) ? (void *)t->idata : (void *)t->data))
            return diag_set(c->d, TC_ERR_INVALID_ARG, gp->loc,
                            "argument for parameter '%s' has no data", gp->name);
        /* The caller's values should already be representable; converting
         * again is idempotent and keeps the "every stored value is rounded"
         * rule (and takes an argument of another dtype as a cast would). */
        for (int64_t i = 0; i < numel; i++)
            ref_convert(out, i, t, i);
        return TC_OK;
    }
    case OP_const:
        for (int64_t i = 0; i < numel; i++) {
            if (dtype_is_float(n->dtype))
                ref_setf(out, i, n->a.cnst.f);
            else
                ref_seti(out, i, n->a.cnst.i);
        }
        return TC_OK;
    case OP_dimval: {
        int64_t v;
        if (!ref_dim(c, n->a.dim, n->loc, &v))
            return c->d->status;
        for (int64_t i = 0; i < numel; i++)
            ref_seti(out, i, v);
        return TC_OK;
    }
    default:
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: op %d is not a leaf", (int)n->op);
    }
}

/* --- one node ------------------------------------------------------------------- */

static tc_status eval_node(ref_ctx *c, const gfn *f, const gnode *n, const ref_tensor *args,
                           const ref_tensor *const *in, ref_tensor *out)
{
    switch (kind_of(n->op)) {
    case OPK_LEAF: return eval_leaf(c, f, n, args, out);
    case OPK_UNARY:
    case OPK_BINARY:
    case OPK_TERNARY: return ref_eval_pointwise(c, n, in, out);
    case OPK_CAST: return ref_eval_cast(c, n, in, out);
    case OPK_REDUCE: return ref_eval_reduce(c, n, in, out);
    case OPK_VIEW: return ref_eval_view(c, n, in, out);
    case OPK_COPY: return ref_eval_copy(c, n, in, out);
    case OPK_CONCAT: return ref_eval_concat(c, n, in, out);
    case OPK_MATMUL: return ref_eval_matmul(c, n, in, out);
    case OPK_SCAN: return ref_eval_scan(c, n, in, out);
    }
    return diag_set(c->d, TC_ERR_INTERNAL, n->loc, "reference interpreter: unknown op kind");
}

/* Check what the interpreter relies on before touching any data: ids are
 * positions, inputs come earlier, arities match, ranks fit. */
static tc_status check_node(ref_ctx *c, const gfn *f, int i)
{
    const gnode *n = f->nodes[i];
    if (!n || n->id != i)
        return diag_set(c->d, TC_ERR_INTERNAL, n ? n->loc : f->loc,
                        "reference interpreter: node %d has id %d", i, n ? n->id : -1);
    if ((int)n->op < 0 || n->op >= OP_COUNT)
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc, "reference interpreter: bad op %d", (int)n->op);
    if (n->rank < 0 || n->rank > TC_MAX_RANK)
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc, "reference interpreter: rank %d", n->rank);
    int arity = arity_of(n->op);
    if ((arity >= 0 && n->nin != arity) || (arity < 0 && n->nin < 1))
        return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                        "reference interpreter: %%%d has %d inputs, its op takes %d", i, n->nin, arity);
    for (int k = 0; k < n->nin; k++) {
        const gnode *p = n->in[k];
        if (!p || p->id < 0 || p->id >= i || f->nodes[p->id] != p)
            return diag_set(c->d, TC_ERR_INTERNAL, n->loc,
                            "reference interpreter: input %d of %%%d is not an earlier node", k, i);
    }
    return TC_OK;
}

/* --- ref_run ------------------------------------------------------------------- */

tc_status ref_run(const gfn *f, const tc_dimbind *b, int nb, const ref_tensor *args,
                  ref_tensor *outs, tc_diag *d)
{
    ref_ctx ctx = {b, nb, d};
    ref_ctx *c = &ctx;
    tc_status st = TC_OK;
    int nn = f->nnodes;

    for (int j = 0; j < f->noutputs; j++)
        memset(&outs[j], 0, sizeof outs[j]);

    ref_tensor *vals = calloc((size_t)(nn > 0 ? nn : 1), sizeof *vals);
    int *last = calloc((size_t)(nn > 0 ? nn : 1), sizeof *last);
    const ref_tensor **in = NULL;
    int maxin = 1;
    if (!vals || !last) {
        st = diag_set(d, TC_ERR_NOMEM, f->loc, "out of memory in the reference interpreter");
        goto done;
    }

    /* last[i]: the last node that reads node i (i itself if none). */
    for (int i = 0; i < nn; i++) {
        if ((st = check_node(c, f, i)) != TC_OK)
            goto done;
        last[i] = i;
        const gnode *n = f->nodes[i];
        for (int k = 0; k < n->nin; k++)
            last[n->in[k]->id] = i;
        if (n->nin > maxin)
            maxin = n->nin;
    }
    for (int j = 0; j < f->noutputs; j++) {
        const gnode *o = f->outputs[j].node;
        if (!o || o->id < 0 || o->id >= nn || f->nodes[o->id] != o) {
            st = diag_set(d, TC_ERR_INTERNAL, f->outputs[j].loc,
                          "reference interpreter: output '%s' is not a node of the function",
                          f->outputs[j].name ? f->outputs[j].name : "?");
            goto done;
        }
        last[o->id] = nn;
    }
    in = calloc((size_t)maxin, sizeof *in);
    if (!in) {
        st = diag_set(d, TC_ERR_NOMEM, f->loc, "out of memory in the reference interpreter");
        goto done;
    }

    for (int i = 0; i < nn; i++) {
        const gnode *n = f->nodes[i];
        int64_t shape[TC_MAX_RANK];
        for (int k = 0; k < n->rank; k++) {
            if (!ref_dim(c, n->shape[k], n->loc, &shape[k])) {
                st = d->status;
                goto done;
            }
            if (shape[k] < 0) {
                st = diag_set(d, TC_ERR_INVALID_ARG, n->loc,
                              "dim %d of this value is %lld, a negative size", k,
                              (long long)shape[k]);
                goto done;
            }
        }
        if (checked_numel(n->rank, shape, REF_MAX_ELEMS) < 0) {
            char buf[256];
            st = diag_set(d, TC_ERR_INVALID_ARG, n->loc,
                          "this value has shape %s, more than the reference interpreter's "
                          "limit of %lld elements",
                          ref_shape_str(n->rank, shape, buf, sizeof buf), (long long)REF_MAX_ELEMS);
            goto done;
        }
        if (!ref_alloc(&vals[i], n->dtype, n->rank, shape)) {
            st = diag_set(d, TC_ERR_NOMEM, n->loc, "out of memory in the reference interpreter");
            goto done;
        }
        for (int k = 0; k < n->nin; k++)
            in[k] = &vals[n->in[k]->id];
        if ((st = eval_node(c, f, n, args, in, &vals[i])) != TC_OK)
            goto done;
        /* Drop values nobody reads any more (an input listed twice is freed
         * once: ref_free leaves it empty). */
        for (int k = 0; k < n->nin; k++)
            if (last[n->in[k]->id] == i)
                ref_free(&vals[n->in[k]->id]);
        if (last[i] == i)
            ref_free(&vals[i]);
    }

    for (int j = 0; j < f->noutputs; j++) {
        const ref_tensor *v = &vals[f->outputs[j].node->id];
        if (!ref_alloc(&outs[j], v->dtype, v->rank, v->shape)) {
            st = diag_set(d, TC_ERR_NOMEM, f->outputs[j].loc,
                          "out of memory in the reference interpreter");
            goto done;
        }
        int64_t cnt = ref_numel(v);
        if (v->idata)
            memcpy(outs[j].idata, v->idata, sizeof(int64_t) * (size_t)cnt);
        else
            memcpy(outs[j].data, v->data, sizeof(double) * (size_t)cnt);
    }

done:
    if (vals)
        for (int i = 0; i < nn; i++)
            ref_free(&vals[i]);
    if (st != TC_OK)
        for (int j = 0; j < f->noutputs; j++)
            ref_free(&outs[j]);
    free(vals);
    free(last);
    free(in);
    return st;
}
