/* tiled.c - SCH_POINTWISE with a tile axis: the transposing kernel, 32 x
 * 32 tiles through shared memory (sched.c's sched_tiled launches 32 x 8
 * threads a block), and with TENSORC_TILE_VEC=1 its whole tiles' global
 * accesses as vectors of 4 elements (16 bytes for 4-byte types).
 */
#include "codegen/cg.h"

#include <string.h>

enum { TV = 4 }; /* elements a vector access of a whole tile (TENSORC_TILE_VEC) */

/* A load's value in its register type (load.c's conversion). */
static const char *conv(cg *g, tc_dtype t, const char *raw)
{
    switch (t) {
    case TC_F16: return arena_printf(g->a, "tc_h2f(%s)", raw);
    case TC_BF16: return arena_printf(g->a, "tc_bf2f(%s)", raw);
    case TC_BOOL: return arena_printf(g->a, "(%s != 0)", raw);
    default: return raw;
    }
}

/* e with index variable v moved by d */
static const tc_dim *shifted(cg *g, const tc_dim *e, int v, int d)
{
    const char *vn = g->l->varnames[v];
    const tc_dim *sh = dim_add(g->c, g->l->vars[v], dim_const(g->c, d));
    return dim_subst(g->c, e, 1, &vn, &sh);
}

/* flat + d when index variable v moves by d, for d below TV */
static bool contiguous(cg *g, const tc_dim *flat, int v)
{
    for (int d = 1; d < TV; d++) {
        int64_t c;
        if (!dim_is_const(dim_sub(g->c, shifted(g, flat, v, d), flat), &c) || c != d)
            return false;
    }
    return true;
}

/* TENSORC_TILE_VEC's whole-tile phases (tv.ok: made): phase 1 reads each
 * tile's operand a vector along b a thread (a = t / 8, b = 4 (t % 8),
 * t = threadIdx.x + 32 threadIdx.y), phase 2 computes and stores a vector
 * along a (a = 4 (t % 8), b = t / 8): the 256 threads take the 32 x 32 tile
 * in one step each.  Shared memory stays conflict-free: a warp's element e
 * is at bank (a + b + e) % 32 (pitch 33) with a + b taking 32 values.  A
 * thread whose vector is not aligned (a base or a row pitch that is not a
 * multiple of the vector) takes its 4 elements one by one instead. */
typedef struct tvec {
    bool ok;
    cg_block body;      /* phase 2's vector body */
    cg_block scalar;    /* phase 2's element la_ + e, lb_ */
    const char **align; /* the vector body's alignment conditions */
    int nalign;
} tvec;

/* Phase 2's tile reads: tile i's operand at its index moved by e along a
 * is the tile's element [la_ + e][lb_] (e = 0 to TV - 1; each is known
 * before the body is made, so load.c's tiled_load, which reads the scalar
 * steps' [threadIdx.x][threadIdx.y + 8 * kk], makes none); els: e is the
 * fallback loop's variable instead, at the index itself. */
static void tile_known(cg *g, bool els)
{
    int A = g->k->rank - 1;
    for (int e = 0; e < (els ? 1 : TV); e++)
        for (int i = 0; i < g->tl.nload; i++) {
            const struct cg_tload *q = &g->tl.load[i];
            const tc_dim *idx[TC_MAX_RANK];
            for (int v = 0; v < q->n->rank; v++)
                idx[v] = e ? shifted(g, q->idx[v], A, e) : q->idx[v];
            cg_known(g, q->n, idx, els ? arena_printf(g->a, "%s[la_ + e][lb_]", q->name)
                                  : e ? arena_printf(g->a, "%s[la_ + %d][lb_]", q->name, e)
                                      : arena_printf(g->a, "%s[la_][lb_]", q->name));
        }
}

static tvec tile_vec(cg *g)
{
    tvec tv = {0};
    const fkernel *k = g->k;
    int A = k->rank - 1, B = g->tl.axis, n0 = g->tl.nload;
    if (g->f->knobs.tile_vec != 1)
        return tv;
    /* the stores run along a, the tiles' reads along b; 4-byte types or narrower */
    for (int i = 0; i < k->nstores; i++) {
        const lnode *s = k->stores[i];
        const tc_dim *idx[TC_MAX_RANK];
        for (int v = 0; v < s->rank; v++)
            idx[v] = g->l->vars[v];
        if (s->rank != k->rank || dtype_size(s->dtype) > 4 || !contiguous(g, lir_flat(g->l, s, idx), A))
            return tv;
    }
    for (int i = 0; i < n0; i++) {
        const lnode *n = g->tl.load[i].n;
        if (dtype_size(n->dtype) > 4 || !contiguous(g, lir_flat(g->l, n, g->tl.load[i].idx), B))
            return tv;
    }
    bool row = g->v.row, cols = g->v.cols, pipe = g->v.pipe, hoist = g->v.hoist;
    g->v.row = g->v.cols = g->v.pipe = g->v.hoist = false;
    cg_vector_begin(g, TV, A);
    tile_known(g, false);
    for (int i = 0; i < k->nstores; i++)
        cg_vector_store(g, k->stores[i], TV);
    tv.body = g->body;
    g->v.n = 1;
    cg_forget(g, T_ELEM);
    g->v.row = row, g->v.cols = cols, g->v.pipe = pipe, g->v.hoist = hoist;
    bool fail = false;
    for (int i = 0; i < g->v.nload; i++) /* vectors of 16 bytes at most */
        fail |= dtype_size(g->v.load[i].n->dtype) > 4;
    tv.align = g->v.align;
    tv.nalign = g->v.nalign;
    cg_reset_bufs(g);
    tile_known(g, true);
    for (int i = 0; i < k->nstores; i++)
        cg_store(g, T_ELEM, k->stores[i], NULL);
    tv.scalar = g->body;
    cg_forget(g, T_ELEM);
    /* a tile read not known (an index the shifts did not make): not made */
    tv.ok = !fail && g->tl.nload == n0;
    g->tl.nload = n0;
    return tv;
}

/* Phase 1 of a whole tile, vectors: each tile's operand 4 elements along b. */
static void phase1_vec(cg *g, cg_w *w)
{
    int A = g->k->rank - 1, B = g->tl.axis;
    cg_wl(w, "const int a_ = threadIdx.y * 4 + threadIdx.x / 8, b_ = threadIdx.x %% 8 * 4;");
    cg_wl(w, "const idx_t i%d = ta * 32 + a_, i%d = tb * 32 + b_;", A, B);
    for (int i = 0; i < g->tl.nload; i++) {
        const struct cg_tload *q = &g->tl.load[i];
        const char *ptr = cg_buf_name(g, g->bufs->buf_of[q->n->id]), *T = cg_store_type(q->n->dtype);
        const tc_dim *flat = lir_flat(g->l, q->n, q->idx);
        const char *at = arena_printf(g->a, "%s + %s", ptr, cg_index(g, flat));
        cg_wopen(w, "if (tc_aligned(%s, %d)) {", at, dtype_size(q->n->dtype) * TV);
        cg_wl(w, "const tc_vec<%s, %d> %s_v = tc_vload<%s, %d>(%s);", T, TV, q->name, T, TV, at);
        for (int e = 0; e < TV; e++)
            cg_wl(w, "%s[a_][b_ + %d] = %s;", q->name, e,
                  conv(g, q->n->dtype, arena_printf(g->a, "%s_v.v[%d]", q->name, e)));
        cg_wclose(w, "} else { /* not aligned: one by one */");
        cg_win(w);
        for (int e = 0; e < TV; e++)
            cg_wl(w, "%s[a_][b_ + %d] = %s;", q->name, e,
                  conv(g, q->n->dtype, arena_printf(g->a, "%s[%s]", ptr, cg_index(g, shifted(g, flat, B, e)))));
        cg_wclose(w, "}");
    }
}

/* Phase 2 of a whole tile, vectors: 4 elements along a, or where an access
 * is not aligned the scalar body at each. */
static void phase2_vec(cg *g, cg_w *w, const tvec *tv)
{
    int A = g->k->rank - 1, B = g->tl.axis;
    cg_wl(w, "const int la_ = threadIdx.x %% 8 * 4, lb_ = threadIdx.y * 4 + threadIdx.x / 8;");
    cg_wl(w, "bool vok_;");
    cg_wopen(w, "{");
    cg_wl(w, "const idx_t i%d = ta * 32 + la_, i%d = tb * 32 + lb_;", A, B);
    if (tv->nalign == 0) {
        cg_wl(w, "vok_ = true;");
    } else {
        buf_printf(w->o, "%*svok_ = %s", w->ind, "", tv->align[0]);
        for (int i = 1; i < tv->nalign; i++) /* one condition a line */
            buf_printf(w->o, " &&\n%*s%s", w->ind + 4, "", tv->align[i]);
        buf_puts(w->o, ";\n");
    }
    cg_wopen(w, "if (vok_) {");
    cg_wput(w, &tv->body);
    cg_wclose(w, "}");
    cg_wclose(w, "}");
    cg_wopen(w, "if (!vok_) { /* not aligned: one by one */");
    cg_wl(w, "#pragma unroll");
    cg_wopen(w, "for (int e = 0; e < %d; e++) {", TV);
    cg_wl(w, "const idx_t i%d = ta * 32 + la_ + e, i%d = tb * 32 + lb_;", A, B);
    cg_wput(w, &tv->scalar);
    cg_wclose(w, "}");
    cg_wclose(w, "}");
}

/* SCH_POINTWISE with a tile axis b (and a = the last axis): each block
 * takes 32 x 32 tiles of (a, b) in turn (grid-stride, other axes outside).
 * Phase 1 reads the transposed operands coalesced along b into shared
 * memory; phase 2 computes and stores coalesced along a, taking those
 * operands from the tiles. */
void cg_tiled(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    int r = k->rank, A = r - 1, B = g->tl.axis;
    g->elemvars = cg_all_axes(k);
    g->rowvars = 0;
    g->phase = 0;
    cg_reset_bufs(g);
    g->tl.nload = 0;
    for (int i = 0; i < k->nstores; i++)
        cg_store(g, T_ELEM, k->stores[i], NULL);
    cg_block body = g->body;
    cg_forget(g, T_ELEM);
    tvec tv = tile_vec(g);

    const char *na = cg_index(g, k->dom[A]), *nb = cg_index(g, k->dom[B]);
    unsigned others = cg_all_axes(k) & ~(1u << A) & ~(1u << B);
    const tc_dim *batch = dim_const(g->c, 1);
    for (int v = 0; v < r; v++)
        if (others & (1u << v))
            batch = dim_mul(g->c, batch, k->dom[v]);
    cg_w w = {o, 4};
    cg_wput(&w, &g->kpre);
    for (int i = 0; i < g->tl.nload; i++)
        cg_wl(&w, "__shared__ %s %s[32][33]; /* +1: no bank conflicts */",
              cg_type(g->tl.load[i].n->dtype), g->tl.load[i].name);
    cg_wl(&w, "const idx_t na = %s, nb = %s;", na, nb);
    cg_wl(&w, "const idx_t ta_n = (na + 31) / 32, tb_n = (nb + 31) / 32;");
    cg_wl(&w, "const idx_t tiles = ta_n * tb_n * %s;", cg_index(g, batch));
    /* t saturates at tiles (plan_verify); i%d, i%d reach na + 31, nb + 31 */
    const tc_dim *c32 = dim_const(g->c, 32);
    const tc_dim *tiles = dim_mul(g->c, dim_mul(g->c, dim_ceildiv(g->c, k->dom[A], c32),
                                                dim_ceildiv(g->c, k->dom[B], c32)), batch);
    cg_loop(g, "t", tiles, NULL);
    cg_loop(g, "ia", k->dom[A], c32);
    cg_loop(g, "ib", k->dom[B], c32);
    cg_limit(g, tiles);
    cg_limit(g, dim_add(g->c, k->dom[A], c32));
    cg_limit(g, dim_add(g->c, k->dom[B], c32));
    cg_wopen(&w, "for (idx_t t = blockIdx.x; t < tiles; t = tiles - t > (idx_t)gridDim.x ? t + gridDim.x : tiles) {");
    cg_wl(&w, "const idx_t ta = t %% ta_n, tb = (t / ta_n) %% tb_n, rest = t / ta_n / tb_n;");
    cg_decompose(g, o, w.ind, "rest", others);
    /* A whole tile (ks->unroll > 1, or TENSORC_TILE_VEC) runs its four
     * steps without bounds tests, so their loads are all in flight at once;
     * a test per step (the edges) kept one. */
    bool whole = g->ks->unroll > 1 || tv.ok;
    if (whole)
        cg_wl(&w, "const bool whole_ = na - ta * 32 >= 32 && nb - tb * 32 >= 32;");
    for (int phase = 1; phase <= 2; phase++) {
        if (whole)
            cg_wopen(&w, "if (whole_) {");
        for (int edge = whole ? 0 : 1; edge <= 1; edge++) {
            if (whole && edge) {
                cg_wclose(&w, "} else {");
                cg_win(&w);
            }
            if (!edge && tv.ok) { /* a vector a thread (tile_vec) */
                cg_wl(&w, "/* phase %d: %s, a vector of %d a thread */", phase,
                      phase == 1 ? "transposed reads along b" : "compute and store along a", TV);
                if (phase == 1)
                    phase1_vec(g, &w);
                else
                    phase2_vec(g, &w, &tv);
                continue;
            }
            cg_wl(&w, "#pragma unroll");
            if (phase == 1) {
                cg_wopen(&w, "for (int kk = 0; kk < 4; kk++) { /* phase 1: transposed reads, coalesced */");
                cg_wl(&w, "const idx_t i%d = ta * 32 + threadIdx.y + 8 * kk, i%d = tb * 32 + threadIdx.x;", A, B);
            } else {
                cg_wopen(&w, "for (int kk = 0; kk < 4; kk++) { /* phase 2: compute and store, coalesced */");
                cg_wl(&w, "const idx_t i%d = ta * 32 + threadIdx.x, i%d = tb * 32 + threadIdx.y + 8 * kk;", A, B);
            }
            if (edge)
                cg_wopen(&w, "if (i%d < na && i%d < nb) {", A, B);
            if (phase == 1)
                for (int i = 0; i < g->tl.nload; i++)
                    cg_wl(&w, "%s[threadIdx.y + 8 * kk][threadIdx.x] = %s;", g->tl.load[i].name,
                          g->tl.load[i].expr);
            else
                cg_wput(&w, &body);
            if (edge)
                cg_wclose(&w, "}");
            cg_wclose(&w, "}");
        }
        if (whole)
            cg_wclose(&w, "}");
        if (phase == 1)
            cg_wl(&w, "__syncthreads();");
    }
    cg_wl(&w, "__syncthreads(); /* the tiles are reused by the next iteration */");
    cg_wclose(&w, "}");
}
