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

/* The grid-stride loop over every element of the domain (n of them): with
 * vec > 1, vec elements a step, vbody where the vector stays in one row of
 * the last dim and its accesses are aligned, else body element by element.
 * named: the element's flat position is the variable r (reductions use it).
 * range: NULL for the whole grid, else {first, end, step} (a foreach
 * block's chunk, which starts and ends at a multiple of vec). */
void cg_grid_stride(cg *g, tc_buf *o, const char *n, const tc_dim *nd, int vec, const cg_block *vbody,
                    const cg_block *body, bool named, const char *const *range)
{
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
    cg_wput(&w, vbody);
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
