/* load.c - reading a node's value from its buffer: plain loads, vector
 * loads shared by the elements of a vector (with the alignment they need),
 * a persistent row's register slots, and shared-memory tiles.
 */
#include "codegen/cg.h"

#include <stdarg.h>
#include <string.h>

/* A statement of the loop body into g->v.loads: a vector load the body
 * may make before anything else (pointwise's vector body). */
static void vload_line(cg *g, const lnode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void vload_line(cg *g, const lnode *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g->v.loads.ind = g->body.ind;
    cg_line_v(g, &g->v.loads, n, fmt, ap);
    va_end(ap);
}

/* f0 with the vector's variable at 0: the offset a row's vectors start
 * from (they start at multiples of the vector width). */
const tc_dim *cg_row_part(cg *g, const tc_dim *f0)
{
    const char *vn = g->l->varnames[g->v.last];
    const tc_dim *z = dim_const(g->c, 0);
    return dim_subst(g->c, f0, 1, &vn, &z);
}

/* In a vector body: when element j of the vector reads flat offset f0 + j
 * of n, one vector load serves them all; the name of element vk's value, or
 * NULL when the accesses are not contiguous. */
static const char *vector_load(cg *g, const lnode *n, const tc_dim *const *idx, const char *ptr,
                               const char **vecname)
{
    const tc_dim *f0 = NULL;
    const tc_dim *v = g->l->vars[g->v.last];
    const char *vn = g->l->varnames[g->v.last];
    for (int j = 0; j < g->v.n; j++) {
        const tc_dim *sh = dim_add(g->c, v, dim_const(g->c, j - g->v.k));
        const tc_dim *ij[TC_MAX_RANK];
        for (int k = 0; k < n->rank; k++)
            ij[k] = dim_subst(g->c, idx[k], 1, &vn, &sh);
        const tc_dim *fj = lir_flat(g->l, n, ij);
        if (j == 0) {
            f0 = fj;
            continue;
        }
        int64_t d;
        if (!dim_is_const(dim_sub(g->c, fj, f0), &d) || d != j)
            return NULL;
    }
    /* columns: the vector's offset steps along the reduced variables; the
     * test before the loop is the offset with them at 0, aligned, and each
     * one's stride a multiple of the vector */
    const char *const *vn0 = NULL;
    const tc_dim *const *zeros = NULL;
    int nred = 0;
    if (g->v.cols) {
        const char **names = ARENA_ARRAY(g->a, const char *, TC_MAX_RANK);
        const tc_dim **z = ARENA_ARRAY(g->a, const tc_dim *, TC_MAX_RANK);
        for (int k = 0; k < g->k->rank; k++) {
            if (!((g->elemvars >> k) & 1u) || !dim_uses(f0, g->l->varnames[k]))
                continue;
            if (dim_has_division_of(f0, g->l->varnames[k]))
                return NULL;
            names[nred] = g->l->varnames[k];
            z[nred++] = dim_const(g->c, 0);
        }
        vn0 = names;
        zeros = z;
    }
    const char *vec = NULL;
    for (int i = 0; i < g->v.nload && !vec; i++)
        if (g->v.load[i].n == n && g->v.load[i].flat0 == f0)
            vec = g->v.load[i].name;
    if (!vec) {
        vec = cg_temp(g, "v");
        const char *off = cg_index(g, f0);
        const char *T = cg_store_type(n->dtype);
        /* a load whose address is the buffer plus index variables (and a
         * number) may run first: see g->v.hoist */
        /* (a rows kernel's online chunk, codegen/rows.c: every load too) */
        bool unrolled = g->v.hoist && (g->ks->unroll > 1 || g->ks->online_sum || g->v.hoist_all);
        /* at most 64 KB of slots a block (two wide blocks a SM); loads past
         * that read global memory as without the pipe */
        /* (column partials: a load the same in every row, a weight, stays a
         * load: an L1 hit, its slots better spent on a row's input) */
        int64_t inv;
        bool same_row = g->ks->rblock && dim_is_const(cg_row_part(g, f0), &inv);
        /* (resident rows, ks->resident: two stages of 64 KB, 128 KB a block) */
        if (g->v.pipe && !same_row && (int64_t)(g->v.npl + 1) * g->pr.items * 16 * g->ks->block[0] <= 64 * 1024) {
            /* the row in this thread's slot q of item j (rows.c's pipe; resident: of stage tc_stg) */
            ARENA_GROW(g->a, g->v.pl, g->v.npl, g->v.cappl, 4);
            int q = g->v.npl;
            g->v.pl[g->v.npl++] = (struct cg_pload){T, arena_printf(g->a, "%s + %s", ptr, off),
                                                    arena_printf(g->a, "%s + %s", ptr, cg_index(g, cg_row_part(g, f0))),
                                                    vec, NULL, g->v.n, dtype_size(n->dtype) * g->v.n};
            cg_line(g, T_ELEM, n, "const tc_vec<%s, %d> %s = tc_sget<%s, %d>(tc_pipe, (%s%d + j) * blockDim.x + "
                    "threadIdx.x); /* %s + %s */", T, g->v.n, vec, T, g->v.n, g->ks->resident ? "tc_stg + " : "",
                    q * g->pr.items, ptr, off);
        } else if (g->v.hoist && (unrolled || cg_dim_plain_sum(g, f0)))
            vload_line(g, n, "const tc_vec<%s, %d> %s = tc_vload<%s, %d>(%s + %s);", T, g->v.n, vec, T,
                       g->v.n, ptr, off);
        else
            cg_line(g, T_ELEM, n, "const tc_vec<%s, %d> %s = tc_vload<%s, %d>(%s + %s);", T, g->v.n, vec,
                    T, g->v.n, ptr, off);
        ARENA_GROW(g->a, g->v.load, g->v.nload, g->v.capload, 16);
        g->v.load[g->v.nload++] = (struct cg_vload){n, f0, vec};
        if (unrolled) {
            ARENA_GROW(g->a, g->v.hl, g->v.nhl, g->v.caphl, 8);
            g->v.hl[g->v.nhl++] = (struct cg_hload){T, vec, arena_printf(g->a, "%s + %s", ptr, off), g->v.n};
        }
        if (g->v.cols) {
            const tc_dim *at0 = dim_subst(g->c, f0, nred, vn0, zeros);
            cg_align(g, arena_printf(g->a, "%s + %s", ptr, cg_index(g, at0)), dtype_size(n->dtype) * g->v.n);
            for (int k = 0; k < nred; k++) {
                const tc_dim *one = dim_const(g->c, 1);
                const tc_dim *at1 = dim_subst(g->c, f0, 1, &vn0[k], &one);
                for (int m = 0; m < nred; m++)
                    if (m != k)
                        at1 = dim_subst(g->c, at1, 1, &vn0[m], &zeros[m]);
                const tc_dim *stride = dim_sub(g->c, at1, at0);
                int64_t cs;
                if (!dim_is_const(stride, &cs))
                    cg_cond(g, arena_printf(g->a, "(%s) %% %d == 0", cg_index(g, stride), g->v.n));
                else if (cs % g->v.n != 0)
                    cg_cond(g, "false");
            }
        } else {
            cg_align(g, arena_printf(g->a, "%s + %s", ptr, g->v.row ? cg_index(g, cg_row_part(g, f0)) : off),
                     dtype_size(n->dtype) * g->v.n);
        }
    }
    *vecname = vec;
    return arena_printf(g->a, "%s.v[%d]", vec, g->v.k);
}

void cg_align(cg *g, const char *addr, int bytes)
{
    cg_cond(g, arena_printf(g->a, "tc_aligned(%s, %d)", addr, bytes));
}

void cg_cond(cg *g, const char *c)
{
    for (int i = 0; i < g->v.nalign; i++)
        if (strcmp(g->v.align[i], c) == 0)
            return;
    if (g->v.nalign == g->v.capalign) {
        int cap = g->v.capalign ? 2 * g->v.capalign : 16;
        const char **nv = ARENA_ARRAY(g->a, const char *, cap);
        if (g->v.nalign)
            memcpy(nv, g->v.align, sizeof *nv * (size_t)g->v.nalign);
        g->v.align = nv;
        g->v.capalign = cap;
    }
    g->v.align[g->v.nalign++] = c;
}

static const char *converted(cg *g, const lnode *n, const char *raw);

/* The register slot of the element being generated: j, or with vectors
 * j * vec + its place in the vector. */
static const char *pc_slot(cg *g)
{
    return g->v.n > 1 ? arena_printf(g->a, "j * %d + %d", g->v.n, g->v.k) : "j";
}

/* In a persistent row: element j of this thread's share of the row (with
 * vectors, element vk of vector j) is kept in pcN[slot] from the pass that
 * first loads it to the last.  The key is the index of the vector's first
 * element, so one array holds all of a vector's elements. */
static const tc_dim **pc_key(cg *g, const lnode *n, const tc_dim *const *idx)
{
    const tc_dim **key = ARENA_ARRAY(g->a, const tc_dim *, n->rank > 0 ? n->rank : 1);
    const char *vn = g->l->varnames[g->v.last];
    const tc_dim *back = dim_add(g->c, g->l->vars[g->v.last], dim_const(g->c, -g->v.k));
    for (int k = 0; k < n->rank; k++)
        key[k] = g->v.n > 1 ? dim_subst(g->c, idx[k], 1, &vn, &back) : idx[k];
    return key;
}

/* n's cache entry at key (each element of a vector shares it), or NULL */
static struct cg_pcache *pc_find(cg *g, const lnode *n, const tc_dim **key)
{
    for (int i = 0; i < g->pr.ncache; i++) {
        struct cg_pcache *e = &g->pr.cache[i];
        bool eq = e->n == n;
        for (int k = 0; k < n->rank && eq; k++)
            eq = e->idx[k] == key[k];
        if (eq)
            return e;
    }
    return NULL;
}

/* a new entry for n at key, its registers pc<entry> declared before the
 * passes, in the row's code: a packed entry (16-bit vectors kept as
 * loaded) a vector a thread's item, else an element a slot */
static const char *pc_add(cg *g, const lnode *n, const tc_dim **key, bool packed, int slot)
{
    if (g->pr.ncache == g->pr.capcache) {
        int cap = g->pr.capcache ? 2 * g->pr.capcache : 16;
        struct cg_pcache *v = ARENA_ARRAY(g->a, struct cg_pcache, cap);
        if (g->pr.ncache)
            memcpy(v, g->pr.cache, sizeof *v * (size_t)g->pr.ncache);
        g->pr.cache = v;
        g->pr.capcache = cap;
    }
    const char *name = arena_printf(g->a, "pc%d", g->pr.ncache);
    g->pr.cache[g->pr.ncache++] = (struct cg_pcache){n, key, name, g->phase, packed, slot};
    if (slot >= 0) /* resident in the pipe's slot: no registers */
        return name;
    if (packed)
        cg_line(g, T_ROW, NULL, "tc_vec<%s, %d> %s[%d];", cg_store_type(n->dtype), g->v.n, name,
                g->pr.items);
    else
        cg_line(g, T_ROW, NULL, "%s %s[%d];", cg_type(n->dtype), name, g->pr.items * g->v.n);
    return name;
}

static const char *persistent_hit(cg *g, const lnode *n, const tc_dim *const *idx)
{
    const struct cg_pcache *e = pc_find(g, n, pc_key(g, n, idx));
    /* filled in an earlier pass; in the pass that loads it, each element
     * is still stored into its slot (persistent_load) */
    if (e && e->phase < g->phase && e->slot >= 0) { /* resident: read again from the slot, a vector a pass */
        struct cg_pload *q = &g->v.pl[e->slot];
        if (!q->sv) { /* one 16-byte read (an element's own read was a 2-byte LDS each) */
            q->sv = cg_temp(g, "s");
            cg_line(g, T_ELEM, n, "const tc_vec<%s, %d> %s = tc_sget<%s, %d>(tc_pipe, (tc_stg + %d + j) * "
                    "blockDim.x + threadIdx.x);", q->type, q->n, q->sv, q->type, q->n, e->slot * g->pr.items);
        }
        return converted(g, n, arena_printf(g->a, "%s.v[%d]", q->sv, g->v.k));
    }
    if (e && e->phase < g->phase && e->packed)
        return converted(g, n, arena_printf(g->a, "%s[j].v[%d]", e->name, g->v.k));
    if (e && e->phase < g->phase)
        return arena_printf(g->a, "%s[%s]", e->name, pc_slot(g));
    return NULL;
}

static const char *persistent_load(cg *g, const lnode *n, const tc_dim *const *idx, const char *raw,
                                   const char *vecname)
{
    const tc_dim **key = pc_key(g, n, idx);
    /* a vector of 16-bit floats (or narrower: bool): kept as loaded, half
     * the registers of its floats or fewer (so a thread holds twice the
     * elements: sched.c, sched_rows), converted at each use */
    bool packed = vecname && dtype_size(n->dtype) < 4;
    const struct cg_pcache *e = pc_find(g, n, key); /* another element of the same vector */
    const char *name = e ? e->name : NULL;
    /* resident (ks->resident): a vector from the pipe's slots stays there */
    int slot = -1;
    for (int q = 0; g->ks->resident && vecname && q < g->v.npl; q++)
        if (g->v.pl[q].vec == vecname)
            slot = q;
    if (!name) {
        name = pc_add(g, n, key, packed, slot);
        if (packed && slot < 0)
            cg_line(g, T_ELEM, n, "%s[j] = %s;", name, vecname);
    }
    if (packed || slot >= 0) /* the vector is stored once, at its first element; or not at all */
        return converted(g, n, raw);
    cg_line(g, T_ELEM, n, "%s[%s] = %s;", name, pc_slot(g), converted(g, n, raw));
    return arena_printf(g->a, "%s[%s]", name, pc_slot(g));
}

/* keep.c's plan: n at idx, a value the last reduction pass computes, kept
 * for later passes.  cg_kept: its slot where an earlier pass kept it, else
 * NULL; cg_keep_put: in the pass that computes it (value v), its slot
 * filled, if the plan names it at this element (cg_keep_planned). */
const char *cg_kept(cg *g, const lnode *n, const tc_dim *const *idx)
{
    if (!g->pr.items || g->phase <= g->pr.keep_phase)
        return NULL;
    /* only the plan's own entries: a pointwise value another kernel stored
     * is a load here, its entry persistent_load's (maybe a packed 16-bit
     * vector, or a pipe slot: persistent_hit reads those; read here as an
     * element it was a wrong type, seed 66 #340 of tests/random) */
    const tc_dim **key = pc_key(g, n, idx);
    if (!cg_keep_planned(g, n, key))
        return NULL;
    const struct cg_pcache *e = pc_find(g, n, key);
    if (!e || e->phase >= g->phase)
        return NULL;
    if (g->pr.kscale) /* TENSORC_ROWS_PAIR: kept at the thread's max, rescaled to the row's */
        return arena_printf(g->a, "(%s[%s] * %s)", e->name, pc_slot(g), g->pr.kscale);
    return arena_printf(g->a, "%s[%s]", e->name, pc_slot(g));
}

void cg_keep_put(cg *g, const lnode *n, const tc_dim *const *idx, const char *v)
{
    if (!g->pr.items || g->phase != g->pr.keep_phase)
        return;
    const tc_dim **key = pc_key(g, n, idx);
    if (!cg_keep_planned(g, n, key))
        return;
    const struct cg_pcache *e = pc_find(g, n, key);
    const char *name = e ? e->name : pc_add(g, n, key, false, -1);
    cg_line(g, T_ELEM, n, "%s[%s] = %s; /* kept for the epilogue (TENSORC_ROWS_KEEP) */", name, pc_slot(g), v);
}

/* A load's value, converted to its register type. */
static const char *converted(cg *g, const lnode *n, const char *raw)
{
    switch (n->dtype) {
    case TC_F16: return arena_printf(g->a, "tc_h2f(%s)", raw);
    case TC_BF16: return arena_printf(g->a, "tc_bf2f(%s)", raw);
    case TC_BOOL: return arena_printf(g->a, "(%s != 0)", raw);
    default: return raw;
    }
}

/* In a tiled kernel: a read contiguous along the tile axis (and not along
 * the last) comes from a shared-memory tile that the first phase filled
 * with coalesced reads; the element this thread needs is [tx][ty + 8 kk]. */
static const char *tiled_load(cg *g, const lnode *n, const tc_dim *const *idx, const char *ptr)
{
    const tc_dim *flat = lir_flat(g->l, n, idx);
    if (lir_coeff(g->l, flat, g->tl.axis) != 1 || lir_coeff(g->l, flat, g->k->rank - 1) == 1)
        return NULL;
    const char *name = NULL;
    for (int i = 0; i < g->tl.nload && !name; i++) {
        bool eq = g->tl.load[i].n == n;
        for (int k = 0; k < n->rank && eq; k++)
            eq = g->tl.load[i].idx[k] == idx[k];
        if (eq)
            name = g->tl.load[i].name;
    }
    if (!name) {
        if (g->tl.nload == g->tl.capload) {
            int cap = g->tl.capload ? 2 * g->tl.capload : 4;
            struct cg_tload *v = ARENA_ARRAY(g->a, struct cg_tload, cap);
            if (g->tl.nload)
                memcpy(v, g->tl.load, sizeof *v * (size_t)g->tl.nload);
            g->tl.load = v;
            g->tl.capload = cap;
        }
        name = arena_printf(g->a, "tile%d", g->tl.nload);
        const tc_dim **copy = ARENA_ARRAY(g->a, const tc_dim *, n->rank);
        for (int k = 0; k < n->rank; k++)
            copy[k] = idx[k];
        const char *expr = converted(g, n, arena_printf(g->a, "%s[%s]", ptr, cg_index(g, flat)));
        g->tl.load[g->tl.nload++] = (struct cg_tload){n, copy, name, expr};
    }
    return arena_printf(g->a, "%s[threadIdx.x][threadIdx.y + 8 * kk]", name);
}

/* n's value at idx read from its buffer: a temporary, or in a persistent
 * row its register slot (pcN[j], or pcN[j * vec + k], which is
 * parenthesized as an operand) */
cg_expr cg_load(cg *g, const lnode *n, const tc_dim *const *idx, cg_target t)
{
    int sva = g->bufs->sv_of ? g->bufs->sv_of[n->id] : 0;
    if (sva) { /* a checkpointed pair's value: the segment's register array (scan.c) */
        if (t != T_ELEM || !lir_is_identity(g->l, idx, n->rank))
            diag_error(g->d, TC_ERR_INTERNAL, n->loc, "codegen: %%%d read outside the element its walk is at",
                       n->id);
        const char *name = cg_temp(g, "t");
        cg_line(g, t, n, "const %s %s = %s;", cg_type(n->dtype), name,
                converted(g, n, arena_printf(g->a, "sv%d_[tt_]", sva - 1)));
        return (cg_expr){name, true};
    }
    int buf = g->bufs->buf_of[n->id];
    if (buf < 0)
        diag_error(g->d, TC_ERR_INTERNAL, n->loc, "codegen: %%%d is read but stored nowhere", n->id);
    cg_use_buf(g, buf);
    const char *ptr = cg_buf_name(g, buf);
    if (g->tl.axis >= 0 && t == T_ELEM && n->rank >= 2 && g->scope == 0) {
        const char *tv = tiled_load(g, n, idx, ptr);
        if (tv) {
            const char *name = cg_temp(g, "t");
            cg_line(g, t, n, "const %s %s = %s;", cg_type(n->dtype), name, tv);
            return (cg_expr){name, true};
        }
    }
    if (g->st.on && t == T_ELEM && g->scope == 0) { /* a scan's walk: loaded steps ahead */
        const char *sv = cg_stage_load(g, n, arena_printf(g->a, "%s[%s]", ptr, cg_flat(g, n, idx)));
        const char *name = cg_temp(g, "t");
        cg_line(g, t, n, "const %s %s = %s;", cg_type(n->dtype), name, converted(g, n, sv));
        return (cg_expr){name, true};
    }
    bool persist = g->pr.items && t == T_ELEM && g->scope == 0;
    if (persist) {
        const char *hit = persistent_hit(g, n, idx);
        if (hit)
            return (cg_expr){hit, g->v.n <= 1};
    }
    const char *raw = NULL, *vecname = NULL;
    if (g->v.n > 1 && t == T_ELEM && n->rank > 0 && g->scope == 0) /* not inside a concat's branch */
        raw = vector_load(g, n, idx, ptr, &vecname);
    if (!raw)
        raw = arena_printf(g->a, "%s[%s]", ptr, cg_flat(g, n, idx));
    /* the epilogue pass's own loads (a weight) are read once: not kept */
    if (persist && g->phase < g->ks->nphases)
        return (cg_expr){persistent_load(g, n, idx, raw, vecname), g->v.n <= 1};
    const char *v = converted(g, n, raw);
    const char *name = cg_temp(g, "t");
    cg_line(g, t, n, "const %s %s = %s;", cg_type(n->dtype), name, v);
    return (cg_expr){name, true};
}

/* A gather (lir.h): its source read where the index says along the axis.
 * The position is checked against the axis's size first; out of range, the
 * load reads the axis's element 0 instead (never outside the source) and
 * the value is NaN for floats, 0 (false) for integers and bool, as
 * docs/language.md promises. */
const char *cg_gather(cg *g, const lnode *n, const tc_dim *const *idx, cg_target t)
{
    const lnode *src = n->in[0].src;
    int ax = n->a.axis;
    const tc_dim *ci[TC_MAX_RANK];
    lir_compose(g->l, &n->in[1], idx, n->rank, ci);
    const char *iv = cg_value(g, n->in[1].src, ci);
    int buf = g->bufs->buf_of[src->id];
    if (buf < 0)
        diag_error(g->d, TC_ERR_INTERNAL, n->loc, "codegen: %%%d is read but stored nowhere", src->id);
    cg_use_buf(g, buf);
    /* in[0].idx is $0..$rank-1 (lir_verify), so the source's index is the
     * gather's own with the axis's entry at 0, plus pos rows of the axis */
    const tc_dim *at[TC_MAX_RANK];
    for (int k = 0; k < n->rank; k++)
        at[k] = k == ax ? dim_const(g->c, 0) : idx[k];
    const tc_dim *stride = dim_const(g->c, 1);
    for (int k = ax + 1; k < src->rank; k++)
        stride = dim_mul(g->c, stride, src->shape[k]);
    const char *ok = cg_temp(g, "in");
    const char *pos = cg_temp(g, "pos");
    const char *res = cg_temp(g, "t");
    cg_line(g, t, n, "const bool %s = (unsigned long long)(long long)(%s) < (unsigned long long)(%s);",
            ok, iv, cg_index(g, src->shape[ax]));
    cg_line(g, t, n, "const long long %s = %s ? (long long)(%s) : 0;", pos, ok, iv);
    int64_t one;
    const char *step = dim_is_const(stride, &one) && one == 1
                           ? pos
                           : arena_printf(g->a, "%s * (%s)", pos, cg_index(g, stride));
    const char *raw = arena_printf(g->a, "%s[%s + %s]", cg_buf_name(g, buf), cg_flat(g, src, at), step);
    const char *bad = n->dtype == TC_F64   ? "__longlong_as_double(0x7ff8000000000000LL)"
                      : dtype_is_float(n->dtype) ? "__int_as_float(0x7fc00000)"
                      : n->dtype == TC_BOOL      ? "false"
                                                 : "0";
    cg_line(g, t, n, "const %s %s = %s ? %s : %s;", cg_type(n->dtype), res, ok,
            converted(g, src, raw), bad);
    return res;
}
