/* scan.c - SCH_SCAN: a thread per lane walks the scanned axis in order.
 *
 * The lanes (indices of every other axis) are a saturating grid-stride loop,
 * consecutive threads on consecutive lanes of the innermost other axis, so
 * each step's loads are coalesced across a warp wherever the scanned axis is
 * not the last.  Each scan of the kernel (k->reds, topological order) keeps
 * its carry in a register (f32 for f16/bf16, as reductions accumulate); at
 * step s the body computes the prologue at the element, updates every carry
 * in order (a scan that reads an earlier one reads the value just made),
 * then writes the kernel's stores at that element: the epilogue.  A scan's
 * value as its readers see it is the carry rounded to the scan's dtype.
 *
 *     for (lane ...) {                  i0, i2 from lane
 *         for (s_ = 0; s_ < len; s_++) {
 *             const idx_t i1 = s_;      (len - 1 - s_ in reverse)
 *             c0 = s_ == 0 ? x : c0 + x;
 *             ... stores at [i0, i1, i2]
 *         }
 *         ... stores of the last elements ([i0, 0, i2] of next = h[:, T-1:])
 *
 * A scan's value is read only at the element the walk is at, or after the
 * walk at the last element (fusion checks both), where it is the carry.
 */
#include "codegen/cg.h"

/* The carry's dtype: f32 for 16-bit floats, else the scan's own. */
static tc_dtype carry_dtype(const lnode *n)
{
    return n->dtype == TC_F16 || n->dtype == TC_BF16 ? TC_F32 : n->dtype;
}

/* The step: the carry c combined with x (both of the carry's dtype). */
static const char *combine(cg *g, const lnode *n, const char *c, const char *x)
{
    switch (n->op) {
    case OP_cumsum: return arena_printf(g->a, "%s + %s", c, x);
    case OP_cumprod: return arena_printf(g->a, "%s * %s", c, x);
    case OP_cummax: return arena_printf(g->a, "tc_max(%s, %s)", c, x);
    case OP_cummin: return arena_printf(g->a, "tc_min(%s, %s)", c, x);
    default: return arena_printf(g->a, "tc_logaddexp(%s, %s)", c, x);
    }
}

static int scan_axis(const fkernel *k)
{
    int ax = 0;
    while (ax < k->rank - 1 && !(k->mask & (1u << ax)))
        ax++;
    return ax;
}

void cg_scan(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    int ax = scan_axis(k);
    g->elemvars = k->mask;
    g->rowvars = cg_all_axes(k) & ~k->mask;
    g->phase = 0;
    g->v.n = 1;
    cg_reset_bufs(g);
    cg_block decl = {0};
    const tc_dim **id = (const tc_dim **)g->l->vars;
    for (int j = 0; j < k->nreds; j++) {
        const lnode *n = k->reds[j];
        tc_dtype cdt = carry_dtype(n);
        const char *c = arena_printf(g->a, "c%d", j);
        cg_block_add(&decl, g->a, 8, arena_printf(g->a, "%s %s = 0; /* %%%d %s */", cg_type(cdt), c,
                                                  n->id, op_table[n->op].name));
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(g->l, &n->in[0], id, n->rank, ci);
        const char *x = cg_convert(g, cg_value(g, n->in[0].src, ci), n->in[0].src->dtype, cdt);
        cg_line(g, T_ELEM, n, "%s = s_ == 0 ? %s : %s;", c, x, combine(g, n, c, x));
        /* readers see the scan's dtype: 16-bit floats rounded, the carry not */
        if (n->dtype == TC_F16 || n->dtype == TC_BF16) {
            const char *r = cg_temp(g, "t");
            cg_line(g, T_ELEM, n, "const float %s = tc_round_%s(%s);", r, dtype_name(n->dtype), c);
            c = r;
        }
        g->acc[n->id] = c;
    }
    for (int i = 0; i < k->nstores; i++)
        if (fuse_is_element(k, k->stores[i]))
            cg_store(g, T_ELEM, k->stores[i], NULL);
    cg_block body = g->body;
    cg_forget(g, T_ELEM);
    /* stores of the final elements (the axis 1 long): after the walk, from
     * the carries; what they compute goes after the loop, not before it */
    cg_block pre = g->rpre;
    g->rpre = (cg_block){0};
    g->rpre.ind = pre.ind;
    g->elemvars = 0;
    for (int i = 0; i < k->nstores; i++)
        if (!fuse_is_element(k, k->stores[i]))
            cg_store(g, T_ROW, k->stores[i], NULL);
    cg_block after = g->rpre;
    g->rpre = pre;

    cg_put(o, 4, &g->kpre);
    buf_printf(o, "    const idx_t lanes = %s, len = %s;\n", cg_index(g, ks->rows), cg_index(g, ks->rowlen));
    /* lanes saturate at their count (plan_verify); s_ reaches len */
    cg_loop(g, "lane", ks->rows, NULL);
    cg_loop(g, "s_", ks->rowlen, dim_const(g->c, 1));
    cg_limit(g, ks->rows);
    cg_limit(g, dim_add(g->c, ks->rowlen, dim_const(g->c, 1)));
    buf_puts(o, "    const idx_t step_ = tc_upto((long long)gridDim.x * blockDim.x, lanes);\n"
                "    for (idx_t lane = tc_upto((long long)blockIdx.x * blockDim.x + threadIdx.x, lanes); lane < lanes;\n"
                "         lane = lanes - lane > step_ ? lane + step_ : lanes) {\n");
    cg_decompose(g, o, 8, "lane", g->rowvars);
    cg_put(o, 8, &g->rpre);
    cg_put(o, 0, &decl);
    buf_puts(o, "        for (idx_t s_ = 0; s_ < len; s_++) {\n");
    if (k->reverse)
        buf_printf(o, "            const idx_t i%d = len - 1 - s_;\n", ax);
    else
        buf_printf(o, "            const idx_t i%d = s_;\n", ax);
    cg_put(o, 12, &body);
    buf_puts(o, "        }\n");
    cg_put(o, 8, &after);
    buf_puts(o, "    }\n");
}
