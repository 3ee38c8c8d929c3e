/* loops.c - the loops the strategies share: a flat position split into
 * index variables, and the grid-stride loop over a domain with its vector
 * and scalar paths.
 */
#include "codegen/cg.h"

#include <string.h>

/* Statements defining the index variables of axes `axes` of the domain from
 * the flat position `pos` over just those axes (row-major). */
void cg_decompose(cg *g, tc_buf *o, int ind, const char *pos, unsigned axes)
{
    int last = -1, n = 0;
    for (int k = 0; k < g->k->rank; k++)
        if (axes & (1u << k)) {
            last = k;
            n++;
        }
    if (n == 0)
        return;
    if (n == 1) {
        buf_printf(o, "%*sconst idx_t i%d = %s;\n", ind, "", last, pos);
        return;
    }
    buf_printf(o, "%*sidx_t q_ = %s;\n", ind, "", pos);
    for (int k = g->k->rank - 1; k >= 0; k--) {
        if (!(axes & (1u << k)))
            continue;
        if (--n == 0) {
            buf_printf(o, "%*sconst idx_t i%d = q_;\n", ind, "", k);
        } else {
            const char *sz = cg_index(g, g->k->dom[k]);
            bool paren = !cg_dim_atom(g, g->k->dom[k]);
            buf_printf(o, "%*sconst idx_t i%d = q_ %% %s%s%s;\n", ind, "", k, paren ? "(" : "", sz,
                       paren ? ")" : "");
            buf_printf(o, "%*sq_ /= %s%s%s;\n", ind, "", paren ? "(" : "", sz, paren ? ")" : "");
        }
    }
}

unsigned cg_all_axes(const fkernel *k)
{
    return k->rank >= 32 ? ~0u : (1u << k->rank) - 1;
}

/* A vector body (cg.h, cg_vbody): its vector loads go to g->v.loads as
 * they are made (those of plain addresses; with ksched.unroll > 1 every
 * one, also recorded in g->v.hl for the unrolled loop). */
void cg_vbody_begin(cg *g, int vec, int last)
{
    cg_vector_begin(g, vec, last);
    g->v.loads = (cg_block){0};
    g->v.nhl = 0;
    g->v.hoist = true;
}

cg_vbody cg_vbody_end(cg *g)
{
    g->v.hoist = false;
    cg_vbody b = {g->v.loads, g->body};
    cg_block_cat(&b.all, g->a, &g->body);
    return b;
}

/* The vector path's test for the vector at `base` (its index variables
 * made): the vector stays in one row of the last dim and its accesses are
 * aligned.  Each condition is written after `lead` and " && " (lead NULL:
 * the first without; "true" when there is none). */
static void vector_test(cg *g, tc_buf *o, int ind, int vec, const char *lead)
{
    int rank = g->k->rank;
    bool first = lead == NULL;
    if (lead)
        buf_puts(o, lead);
    if (rank > 1) { /* the vector stays in one row of the last dim */
        buf_printf(o, "%s%s - i%d >= %d", first ? "" : " && ", cg_index(g, g->k->dom[rank - 1]), rank - 1,
                   vec);
        first = false;
    }
    for (int i = 0; i < g->v.nalign; i++) {
        buf_printf(o, "%s\n%*s%s", first ? "" : " &&", ind, "", g->v.align[i]);
        first = false;
    }
    if (first)
        buf_puts(o, "true");
}

/* The scalar loop over a vector's elements from `base` (a tail, or a
 * vector the test refused). */
static void scalar_elems(cg *g, cg_w *w, const char *end, int vec, const cg_block *body, bool named)
{
    unsigned axes = cg_all_axes(g->k);
    cg_wopen(w, "for (int e = 0; e < %d && e < %s - base; ++e) {", vec, end);
    if (named) {
        cg_wl(w, "const idx_t r = base + e;");
        cg_decompose(g, w->o, w->ind, "r", axes);
    } else {
        cg_decompose(g, w->o, w->ind, "base + e", axes);
    }
    cg_wput(w, body);
    cg_wclose(w, "}");
}

/* cg_grid_stride with ksched.unroll = U > 1 vectors a step: a thread's
 * vectors lie blockDim.x vectors apart (each coalesced across the block).
 * When all U are whole and pass the vector test, every hoisted load
 * (g->v.hl) goes into an array first, then the body runs on each: U
 * 16-byte loads in flight per thread where the one-vector loop had one
 * (the compiler does not move a load above an earlier step's store through
 * pointers it cannot prove distinct, as a foreach kernel's are).  Else
 * each vector in turn, as the one-vector loop does. */
static void unrolled(cg *g, tc_buf *o, const char *n, const tc_dim *nd, int vec, const cg_vbody *vb,
                     const cg_block *body, bool named, const char *const *range)
{
    int U = g->ks->unroll;
    unsigned axes = cg_all_axes(g->k);
    const char *end = range ? range[1] : n;
    cg_w w = {o, 4};
    if (range) {
        cg_wl(&w, "const idx_t ustep_ = %s;", range[2]);
        cg_wl(&w, "const idx_t step_ = ustep_ * %d;", U);
        cg_wopen(&w, "for (idx_t base0 = tc_upto(%s, %s); base0 < %s; base0 = %s - base0 > step_ ? base0 + step_ : %s) {",
                 range[0], end, end, end, end);
    } else {
        cg_wl(&w, "const idx_t ustep_ = (idx_t)blockDim.x * %d;", vec);
        cg_wl(&w, "const idx_t step_ = tc_upto((long long)gridDim.x * blockDim.x * %d, %s);", vec * U, n);
        cg_wl(&w, "for (idx_t base0 = tc_upto(((long long)blockIdx.x * blockDim.x * %d + threadIdx.x) * %d, %s);",
              U, vec, n);
        w.ind += 5;
        cg_wl(&w, "base0 < %s; base0 = %s - base0 > step_ ? base0 + step_ : %s) {", n, n, n);
        w.ind -= 5;
        cg_win(&w);
    }
    cg_loop(g, "base0", nd, NULL);
    cg_loop(g, "base", nd, NULL);
    /* every vector whole: base0 + (U - 1) * ustep_ + vec <= end.  Where
     * the index variables take a division and a remainder a vector (more
     * than one axis), the test's loop runs whatever wv_ says (at base0 where
     * it is false, so no index passes the end), so the arithmetic it makes
     * dominates the loops below, which compute the same expressions, and is
     * made once: bias_gelu's path to its last store, 393 SASS instructions
     * a thread to 336 (sm_90, NVCC 13; Inductor's, the sizes constant, 304).
     * One axis keeps the test inside if (vok_): unconditional, gelu_chain's
     * second LDG.128 was issued after the first vector's math again.
     * TENSORC_PW_ONCE=0: the old form everywhere, for A/B timing. */
    bool once = __builtin_popcount(axes) > 1 && g->f->knobs.pw_once != 0;
    const char *ubase = once ? "wv_ ? base0 + u_ * ustep_ : base0" : "base0 + u_ * ustep_";
    if (once) {
        cg_wl(&w, "const bool wv_ = %s - base0 >= ustep_ * %d + %d;", end, U - 1, vec);
        cg_wl(&w, "bool vok_ = wv_;");
    } else {
        cg_wl(&w, "bool vok_ = %s - base0 >= ustep_ * %d + %d;", end, U - 1, vec);
        cg_wopen(&w, "if (vok_) {");
    }
    cg_wl(&w, "#pragma unroll");
    cg_wopen(&w, "for (int u_ = 0; u_ < %d; u_++) {", U);
    cg_wl(&w, "const idx_t base = %s;", ubase);
    cg_decompose(g, o, w.ind, "base", axes);
    buf_printf(o, "%*svok_ = vok_", w.ind, "");
    vector_test(g, o, w.ind + 4, vec, "");
    buf_puts(o, ";\n");
    cg_wclose(&w, "}");
    if (!once)
        cg_wclose(&w, "}");
    cg_wopen(&w, "if (vok_) {");
    for (int i = 0; i < g->v.nhl; i++)
        cg_wl(&w, "tc_vec<%s, %d> %s_u[%d];", g->v.hl[i].type, g->v.hl[i].n, g->v.hl[i].name, U);
    cg_wl(&w, "#pragma unroll");
    cg_wopen(&w, "for (int u_ = 0; u_ < %d; u_++) { /* the loads of every vector first */", U);
    cg_wl(&w, "const idx_t base = %s;", ubase);
    cg_decompose(g, o, w.ind, "base", axes);
    for (int i = 0; i < g->v.nhl; i++)
        cg_wl(&w, "%s_u[u_] = tc_vload<%s, %d>(%s);", g->v.hl[i].name, g->v.hl[i].type, g->v.hl[i].n,
              g->v.hl[i].addr);
    cg_wclose(&w, "}");
    cg_wl(&w, "#pragma unroll");
    cg_wopen(&w, "for (int u_ = 0; u_ < %d; u_++) {", U);
    cg_wl(&w, "const idx_t base = %s;", ubase);
    cg_decompose(g, o, w.ind, "base", axes);
    for (int i = 0; i < g->v.nhl; i++)
        cg_wl(&w, "const tc_vec<%s, %d> %s = %s_u[u_];", g->v.hl[i].type, g->v.hl[i].n, g->v.hl[i].name,
              g->v.hl[i].name);
    cg_wput(&w, &vb->rest);
    cg_wclose(&w, "}");
    cg_wclose(&w, "} else {");
    cg_win(&w);
    cg_wl(&w, "#pragma unroll 1 /* the edges: one copy of the bodies */");
    cg_wopen(&w, "for (int u_ = 0; u_ < %d && u_ * ustep_ < %s - base0; u_++) {", U, end);
    cg_wl(&w, "const idx_t base = base0 + u_ * ustep_;");
    cg_decompose(g, o, w.ind, "base", axes);
    buf_printf(o, "%*sif (%s - base >= %d", w.ind, "", end, vec);
    vector_test(g, o, w.ind + 4, vec, "");
    buf_puts(o, ") {\n");
    cg_win(&w);
    cg_wput(&w, &vb->all);
    cg_wclose(&w, "} else {");
    cg_win(&w);
    scalar_elems(g, &w, end, vec, body, named);
    cg_wclose(&w, "}");
    cg_wclose(&w, "}");
    cg_wclose(&w, "}");
    cg_wclose(&w, "}");
}

/* The grid-stride loop over every element of the domain (n of them): with
 * vec > 1, vec elements a step, vbody where the vector stays in one row of
 * the last dim and its accesses are aligned, else body element by element.
 * named: the element's flat position is the variable r (reductions use it).
 * range: NULL for the whole grid, else {first, end, step} (a foreach
 * block's chunk, which starts and ends at a multiple of vec). */
void cg_grid_stride(cg *g, tc_buf *o, const char *n, const tc_dim *nd, int vec, const cg_vbody *vb,
                    const cg_block *body, bool named, const char *const *range)
{
    if (vec > 1 && g->ks->unroll > 1) {
        unrolled(g, o, n, nd, vec, vb, body, named, range);
        return;
    }
    const fkernel *k = g->k;
    int rank = k->rank;
    unsigned axes = cg_all_axes(k);
    /* The first index and the step are made in 64 bits and clamped to the
     * end, and the increment saturates there (n - v > step: v + step < n),
     * so no index passes n: a 32-bit plan serves n up to 2^31 - 65, where
     * v += gridDim.x * blockDim.x would wrap negative (plan_verify). */
    const char *v = vec == 1 && named && !range ? "r" : "base";
    const char *end = range ? range[1] : n;
    cg_w w = {o, 4};
    if (range) {
        cg_wl(&w, "const idx_t step_ = %s;", range[2]);
        cg_wopen(&w, "for (idx_t %s = tc_upto(%s, %s); %s < %s; %s = %s - %s > step_ ? %s + step_ : %s) {",
                 v, range[0], end, v, end, v, end, v, v, end);
    } else {
        cg_wl(&w, "const idx_t step_ = tc_upto((long long)gridDim.x * blockDim.x * %d, %s);", vec, n);
        cg_wl(&w, "for (idx_t %s = tc_upto(((long long)blockIdx.x * blockDim.x + threadIdx.x) * %d, %s);",
              v, vec, n);
        w.ind += 5; /* the header's second line, under its first clause */
        cg_wl(&w, "%s < %s; %s = %s - %s > step_ ? %s + step_ : %s) {", v, n, v, n, v, v, n);
        w.ind -= 5;
        cg_win(&w);
    }
    cg_loop(g, v, nd, NULL);
    cg_decompose(g, o, w.ind, v, axes);
    if (vec == 1) {
        cg_wput(&w, body);
        cg_wclose(&w, "}");
        return;
    }
    /* n - base >= vec: base + vec could pass 2^31; one line, its alignment
     * conditions continued below it */
    buf_printf(o, "%*sif (%s - base >= %d", w.ind, "", end, vec);
    if (rank > 1) /* the vector stays in one row of the last dim */
        buf_printf(o, " && %s - i%d >= %d", cg_index(g, k->dom[rank - 1]), rank - 1, vec);
    for (int i = 0; i < g->v.nalign; i++)
        buf_printf(o, " &&\n%*s%s", w.ind + 4, "", g->v.align[i]);
    buf_puts(o, ") {\n");
    cg_win(&w);
    cg_wput(&w, &vb->all);
    cg_wclose(&w, "} else {");
    cg_win(&w);
    cg_wopen(&w, "for (int e = 0; e < %d && e < %s - base; ++e) {", vec, end);
    if (named) {
        cg_wl(&w, "const idx_t r = base + e;");
        cg_decompose(g, o, w.ind, "r", axes);
    } else {
        cg_decompose(g, o, w.ind, "base + e", axes);
    }
    cg_wput(&w, body);
    cg_wclose(&w, "}");
    cg_wclose(&w, "}");
    cg_wclose(&w, "}");
}
