/* lir.c - queries on the lowered IR (lir.h) for the stages after lowering
 * (fuse, sched, codegen): strides, composing a read's index expressions
 * with the point it is read at, flat offsets, a variable's coefficient,
 * where a reduction's result is found.  Apart from lower.c so that a
 * reader of the IR does not depend on the pass that builds it. */
#include "lower/lir.h"

void lir_strides(tc_dimctx *c, int rank, const tc_dim *const *shape, const tc_dim **out)
{
    const tc_dim *s = dim_const(c, 1);
    for (int k = rank - 1; k >= 0; k--) {
        out[k] = s;
        s = dim_mul(c, s, shape[k]);
    }
}

void lir_compose(const lfn *f, const lref *r, const tc_dim *const *at, int nat,
                 const tc_dim **out)
{
    for (int k = 0; k < r->src->rank; k++)
        out[k] = dim_subst(f->dims, r->idx[k], nat, f->varnames, at);
}

const tc_dim *lir_flat(const lfn *f, const lnode *n, const tc_dim *const *idx)
{
    const tc_dim *st[TC_MAX_RANK];
    lir_strides(f->dims, n->rank, n->shape, st);
    const tc_dim *flat = dim_const(f->dims, 0);
    for (int k = 0; k < n->rank; k++)
        flat = dim_add(f->dims, flat, dim_mul(f->dims, idx[k], st[k]));
    return flat;
}

int64_t lir_coeff(const lfn *f, const tc_dim *e, int v)
{
    const char *vn = f->varnames[v];
    const tc_dim *up = dim_add(f->dims, f->vars[v], dim_const(f->dims, 1));
    int64_t c;
    return dim_is_const(dim_sub(f->dims, dim_subst(f->dims, e, 1, &vn, &up), e), &c) ? c : 0;
}

bool lir_is_identity(const lfn *f, const tc_dim *const *idx, int rank)
{
    for (int k = 0; k < rank; k++)
        if (idx[k] != f->vars[k])
            return false;
    return true;
}

/* ---- reductions ---------------------------------------------------------- */

int red_out_axis(const lnode *n, int j)
{
    if (n->a.red.keepdim)
        return j;
    for (int k = 0; k < n->a.red.rin; k++)
        if (!(n->a.red.mask & (1u << k)) && j-- == 0)
            return k;
    return -1;
}

void red_row_index(const lfn *f, const lnode *n, const tc_dim **out)
{
    for (int j = 0; j < n->rank; j++) {
        int k = red_out_axis(n, j);
        out[j] = (n->a.red.mask & (1u << k)) ? dim_const(f->dims, 0) : f->vars[k];
    }
}

const char *red_kind_name(red_kind k)
{
    static const char *const names[] = {"sum", "prod", "max", "min", "argmax", "argmin"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

bool lir_pow_square(const lnode *n)
{
    if (n->kind != LK_POINTWISE || n->op != OP_pow || n->nin != 2)
        return false;
    const lnode *e = n->in[1].src;
    if (!dtype_is_float(n->opdt) || e->kind != LK_CONST)
        return false;
    return dtype_is_float(e->dtype) ? e->a.cnst.f == 2.0 : e->a.cnst.i == 2;
}
