/* tiled.c - SCH_POINTWISE with a tile axis: the transposing kernel, tiles
 * through shared memory (sched.c's sched_tiles launches 32 x 8 threads a
 * block).  TENSORC_TILE_VEC=0: 32 x 32 tiles, 4-byte accesses; 1: so, with
 * whole tiles' global accesses as vectors of 4 elements (16 bytes for
 * 4-byte types), slower on the H200 (207.8 against 194.4 us).
 *
 * TENSORC_TILE_VEC=2, the default since session 22 (transpose_add 8192^2
 * f32: 191.4 us, H200): 64 x 64 tiles (ksched.tw; the grid counts them),
 * Inductor's shape for transpose_add (8 warps, 16 elements a thread, every
 * f32 access 16 bytes).  At 1 a thread had one vector in flight a phase
 * (8 KB a block) and y's vector was loaded after the barrier; here a whole
 * tile's thread issues its 4 vectors of each tiled operand (x), then its 4
 * vectors of every other operand phase 2 reads (y: cg_vector's hoisted
 * loads, g->v.hl), then scatters x into the tile, then the barrier: 8
 * LDG.128 in flight a thread (32 KB a block; SASS, NVRTC 13 sm_90: 8
 * LDG.E.128 back to back, 16 STS, BAR, 4 STG.E.128; 48 registers).
 * Phase 2 computes and stores 4 vectors.  A vector is 4 elements
 * whatever the type (16-bit: 8 bytes, LDG.E.64),
 * so one thread mapping serves all: t = threadIdx.x + 32 threadIdx.y,
 * lane l = threadIdx.x, warp w = threadIdx.y,
 *   phase 1: tile[a][b + e], a = 4 (w / 2) + l / 8 + 16 r, b = 32 (w % 2) + 4 (l % 8)
 *   phase 2: tile[la + e][lb], la = 32 (w % 2) + 4 (l % 8), lb = 4 (w / 2) + l / 8 + 16 r
 * (r = 0..3 the vectors, e = 0..3 their elements): a warp takes 4 rows of
 * 32 elements, each row 8 threads' contiguous vectors (128 bytes in f32).
 * Banks, pitch 65 (tile[64][65], 65 = 1 mod 32): element (i, j) is at bank
 * (i + j) % 32.  Phase 1's store of element e: a + b + e = c + l / 8 +
 * 4 (l % 8) with c fixed in the warp, and l / 8 + 4 (l % 8) takes each of
 * 0..31 once: conflict-free; phase 2's read, la + e + lb, the same sum:
 * conflict-free.  (A warp of 2 rows of 64, t / 16 and 4 (t % 16), would
 * be 2-way in both phases: 4 (t % 16) mod 32 takes 8 values twice.)  The
 * subtiles below use the [64][65] tiles' first 32 rows and columns (or
 * [32][33] tiles where the vector path is not made): a warp's row in phase
 * 1, its column in phase 2 (bank threadIdx.x + c): conflict-free too.
 * Shared memory: 16.6 KB a tiled operand, 2 at most (48 KB static).
 * Alignment: every access of the thread is tested first (vok_: its 8 or
 * more vectors' addresses, combined with & so that no branch comes
 * between the loads); a thread with one not aligned (a base, an odd row
 * pitch) reads phase 1's elements one by one into the same registers and
 * takes phase 2's after the barrier, one by one.  Edge tiles (partial),
 * and kernels the vector path refuses (a store not contiguous along the
 * last axis, more than 2 tiled operands): four 32 x 32 subtiles in turn,
 * each the 32 x 32 kernel's code (bounds tested; with TENSORC_TILE_WHOLE
 * its whole/edge split; a subtile wholly outside skipped).  8-byte types:
 * 32 x 32 tiles (sched.c).
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
    cg_block body;      /* phase 2's vector body (64 x 64 tiles: without its vector loads) */
    cg_block scalar;    /* phase 2's element la_ + e, lb_ */
    const char **align; /* the vector body's alignment conditions */
    int nalign;
    struct cg_hload *hl; /* 64 x 64 tiles: the body's vector loads, made before the barrier */
    int nhl;
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

static tvec tile_vec(cg *g, bool t64)
{
    tvec tv = {0};
    const fkernel *k = g->k;
    int A = k->rank - 1, B = g->tl.axis, n0 = g->tl.nload;
    if (g->ks->tvec != (t64 ? 2 : 1) || (t64 && n0 > 2)) /* 64 x 65 x 4 bytes an operand */
        return tv;
    /* the stores run along a, the tiles' reads along b; 4-byte types or narrower */
    for (int i = 0; i < k->nstores; i++) {
        const lnode *s = k->stores[i];
        const tc_dim *idx[TC_MAX_RANK];
        for (int v = 0; v < s->rank; v++)
            idx[v] = g->l->vars[v];
        if (s->rank != k->rank || dtype_size(s->dtype) > 4 || lir_coeff(g->l, lir_flat(g->l, s, idx), A) != 1)
            return tv;
    }
    for (int i = 0; i < n0; i++) {
        const lnode *n = g->tl.load[i].n;
        if (dtype_size(n->dtype) > 4 || lir_coeff(g->l, lir_flat(g->l, n, g->tl.load[i].idx), B) != 1)
            return tv;
    }
    bool row = g->v.row, cols = g->v.cols, pipe = g->v.pipe, hoist = g->v.hoist;
    g->v.row = g->v.cols = g->v.pipe = g->v.hoist = false;
    if (t64) { /* every vector load into g->v.hl, not the body */
        cg_vbody_begin(g, TV, A);
        g->v.hoist_all = true;
    } else {
        cg_vector_begin(g, TV, A);
    }
    tile_known(g, false);
    for (int i = 0; i < k->nstores; i++)
        cg_vector_store(g, k->stores[i], TV);
    tv.body = g->body;
    if (t64) {
        tv.nhl = g->v.nhl;
        tv.hl = ARENA_ARRAY(g->a, struct cg_hload, tv.nhl > 0 ? tv.nhl : 1);
        if (tv.nhl)
            memcpy(tv.hl, g->v.hl, sizeof *tv.hl * (size_t)tv.nhl);
        g->v.hoist_all = false;
        g->v.nhl = 0;
    }
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

/* Phase 2's elements of a thread whose accesses are not aligned, one by
 * one (tiles of side tw) */
static void one_by_one(cg_w *w, const tvec *tv, int tw, int A, int B)
{
    cg_wl(w, "#pragma unroll");
    cg_wopen(w, "for (int e = 0; e < %d; e++) {", TV);
    cg_wl(w, "const idx_t i%d = ta * %d + la_ + e, i%d = tb * %d + lb_;", A, tw, B, tw);
    cg_wput(w, &tv->scalar);
    cg_wclose(w, "}");
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
    one_by_one(w, tv, 32, A, B);
    cg_wclose(w, "}");
}

/* The 64 x 64 tile's vector path (tv->ok, a whole tile): phase 1's loads
 * of each tiled operand (4 vectors along b), phase 2's vector loads
 * (tv->hl, 4 each along a) if all of the thread's accesses are aligned,
 * the tiles filled, the barrier, phase 2 (see the file's comment). */
static void tile64_vec(cg *g, cg_w *w, const tvec *tv)
{
    int A = g->k->rank - 1, B = g->tl.axis;
    cg_wl(w, "/* phase 1 reads 4 vectors of %d along b a thread, phase 2 stores 4 along a */", TV);
    cg_wl(w, "const int a_ = threadIdx.y / 2 * 4 + threadIdx.x / 8, b_ = threadIdx.y %% 2 * 32 + threadIdx.x %% 8 * 4;");
    cg_wl(w, "const int la_ = b_, lb0_ = a_; /* phase 2's: la_ + e, lb0_ + 16 r_ */");
    cg_wl(w, "bool vok_ = true; /* every access of the thread aligned (& : no branches) */");
    cg_wl(w, "#pragma unroll");
    cg_wopen(w, "for (int r_ = 0; r_ < 4; r_++) {");
    cg_wopen(w, "{");
    cg_wl(w, "const idx_t i%d = ta * 64 + a_ + 16 * r_, i%d = tb * 64 + b_;", A, B);
    buf_printf(w->o, "%*svok_ = vok_", w->ind, "");
    for (int i = 0; i < g->tl.nload; i++) {
        const struct cg_tload *q = &g->tl.load[i];
        const tc_dim *flat = lir_flat(g->l, q->n, q->idx);
        buf_printf(w->o, " &\n%*stc_aligned(%s + %s, %d)", w->ind + 4, "",
                   cg_buf_name(g, g->bufs->buf_of[q->n->id]), cg_index(g, flat), dtype_size(q->n->dtype) * TV);
    }
    buf_puts(w->o, ";\n");
    cg_wclose(w, "}");
    cg_wopen(w, "{");
    cg_wl(w, "const idx_t i%d = ta * 64 + la_, i%d = tb * 64 + lb0_ + 16 * r_;", A, B);
    buf_printf(w->o, "%*svok_ = vok_", w->ind, "");
    for (int i = 0; i < tv->nalign; i++) /* one condition a line */
        buf_printf(w->o, " &\n%*s%s", w->ind + 4, "", tv->align[i]);
    buf_puts(w->o, ";\n");
    cg_wclose(w, "}");
    cg_wclose(w, "}");
    for (int i = 0; i < g->tl.nload; i++)
        cg_wl(w, "tc_vec<%s, %d> %s_v[4];", cg_store_type(g->tl.load[i].n->dtype), TV, g->tl.load[i].name);
    for (int i = 0; i < tv->nhl; i++)
        cg_wl(w, "tc_vec<%s, %d> %s_u[4];", tv->hl[i].type, tv->hl[i].n, tv->hl[i].name);
    for (int vec = 1; vec >= 0; vec--) {
        if (vec)
            cg_wopen(w, "if (vok_) { /* phase 1's vectors (x), then phase 2's (y): all in flight */");
        else
            cg_wopen(w, "} else { /* not aligned: phase 1's elements one by one (phase 2's after the barrier) */");
        cg_wl(w, "#pragma unroll");
        cg_wopen(w, "for (int r_ = 0; r_ < 4; r_++) {");
        cg_wl(w, "const idx_t i%d = ta * 64 + a_ + 16 * r_, i%d = tb * 64 + b_;", A, B);
        for (int i = 0; i < g->tl.nload; i++) {
            const struct cg_tload *q = &g->tl.load[i];
            const char *ptr = cg_buf_name(g, g->bufs->buf_of[q->n->id]);
            const tc_dim *flat = lir_flat(g->l, q->n, q->idx);
            if (vec)
                cg_wl(w, "%s_v[r_] = tc_vload<%s, %d>(%s + %s);", q->name, cg_store_type(q->n->dtype), TV, ptr,
                      cg_index(g, flat));
            else
                for (int e = 0; e < TV; e++)
                    cg_wl(w, "%s_v[r_].v[%d] = %s[%s];", q->name, e, ptr, cg_index(g, shifted(g, flat, B, e)));
        }
        cg_wclose(w, "}");
        if (vec && tv->nhl) {
            cg_wl(w, "#pragma unroll");
            cg_wopen(w, "for (int r_ = 0; r_ < 4; r_++) {");
            cg_wl(w, "const idx_t i%d = ta * 64 + la_, i%d = tb * 64 + lb0_ + 16 * r_;", A, B);
            for (int i = 0; i < tv->nhl; i++)
                cg_wl(w, "%s_u[r_] = tc_vload<%s, %d>(%s);", tv->hl[i].name, tv->hl[i].type, tv->hl[i].n,
                      tv->hl[i].addr);
            cg_wclose(w, "}");
        }
        w->ind -= 4;
    }
    cg_wl(w, "}");
    cg_wl(w, "/* the tiles from phase 1's registers */");
    cg_wl(w, "#pragma unroll");
    cg_wopen(w, "for (int r_ = 0; r_ < 4; r_++) {");
    for (int i = 0; i < g->tl.nload; i++) {
        const struct cg_tload *q = &g->tl.load[i];
        for (int e = 0; e < TV; e++)
            cg_wl(w, "%s[a_ + 16 * r_][b_ + %d] = %s;", q->name, e,
                  conv(g, q->n->dtype, arena_printf(g->a, "%s_v[r_].v[%d]", q->name, e)));
    }
    cg_wclose(w, "}");
    cg_wl(w, "__syncthreads();");
    cg_wl(w, "/* phase 2: compute and store along a, 4 vectors of %d a thread */", TV);
    cg_wopen(w, "if (vok_) {");
    cg_wl(w, "#pragma unroll");
    cg_wopen(w, "for (int r_ = 0; r_ < 4; r_++) {");
    cg_wl(w, "const int lb_ = lb0_ + 16 * r_;");
    cg_wl(w, "const idx_t i%d = ta * 64 + la_, i%d = tb * 64 + lb_;", A, B);
    for (int i = 0; i < tv->nhl; i++)
        cg_wl(w, "const tc_vec<%s, %d> %s = %s_u[r_];", tv->hl[i].type, tv->hl[i].n, tv->hl[i].name,
              tv->hl[i].name);
    cg_wput(w, &tv->body);
    cg_wclose(w, "}");
    cg_wclose(w, "} else { /* not aligned: one by one */");
    cg_win(w);
    cg_wl(w, "#pragma unroll 1");
    cg_wopen(w, "for (int r_ = 0; r_ < 4; r_++) {");
    cg_wl(w, "const int lb_ = lb0_ + 16 * r_;");
    one_by_one(w, tv, 64, A, B);
    cg_wclose(w, "}");
    cg_wclose(w, "}");
    cg_wl(w, "__syncthreads(); /* the tiles are reused by the next iteration */");
}

/* One 32 x 32 tile (or subtile) at rows oa.., columns ob.. of (a, b): phase
 * 1, the barrier, phase 2, in 4 steps of 32 x 8; whole (the name of a
 * test, or NULL): a whole tile's steps without bounds tests (and tv: its
 * vectors), else each step tested. */
static void tile32(cg *g, cg_w *w, const cg_block *body, const tvec *tv, const char *oa, const char *ob,
                   const char *whole)
{
    int A = g->k->rank - 1, B = g->tl.axis;
    for (int phase = 1; phase <= 2; phase++) {
        if (whole)
            cg_wopen(w, "if (%s) {", whole);
        for (int edge = whole ? 0 : 1; edge <= 1; edge++) {
            if (whole && edge) {
                cg_wclose(w, "} else {");
                cg_win(w);
            }
            if (!edge && tv && tv->ok) { /* a vector a thread (tile_vec) */
                cg_wl(w, "/* phase %d: %s, a vector of %d a thread */", phase,
                      phase == 1 ? "transposed reads along b" : "compute and store along a", TV);
                if (phase == 1)
                    phase1_vec(g, w);
                else
                    phase2_vec(g, w, tv);
                continue;
            }
            cg_wl(w, "#pragma unroll");
            if (phase == 1) {
                cg_wopen(w, "for (int kk = 0; kk < 4; kk++) { /* phase 1: transposed reads, coalesced */");
                cg_wl(w, "const idx_t i%d = %s + threadIdx.y + 8 * kk, i%d = %s + threadIdx.x;", A, oa, B, ob);
            } else {
                cg_wopen(w, "for (int kk = 0; kk < 4; kk++) { /* phase 2: compute and store, coalesced */");
                cg_wl(w, "const idx_t i%d = %s + threadIdx.x, i%d = %s + threadIdx.y + 8 * kk;", A, oa, B, ob);
            }
            if (edge)
                cg_wopen(w, "if (i%d < na && i%d < nb) {", A, B);
            if (phase == 1)
                for (int i = 0; i < g->tl.nload; i++)
                    cg_wl(w, "%s[threadIdx.y + 8 * kk][threadIdx.x] = %s;", g->tl.load[i].name,
                          g->tl.load[i].expr);
            else
                cg_wput(w, body);
            if (edge)
                cg_wclose(w, "}");
            cg_wclose(w, "}");
        }
        if (whole)
            cg_wclose(w, "}");
        if (phase == 1)
            cg_wl(w, "__syncthreads();");
    }
    cg_wl(w, "__syncthreads(); /* the tiles are reused by the next iteration */");
}

/* SCH_POINTWISE with a tile axis b (and a = the last axis): each block
 * takes tw x tw tiles of (a, b) in turn (grid-stride, other axes outside;
 * tw = ksched.tw, 32 or 64).  Phase 1 reads the transposed operands
 * coalesced along b into shared memory; phase 2 computes and stores
 * coalesced along a, taking those operands from the tiles. */
void cg_tiled(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    int r = k->rank, A = r - 1, B = g->tl.axis;
    const int tw = g->ks->tw == 64 ? 64 : 32;
    g->elemvars = cg_all_axes(k);
    g->rowvars = 0;
    g->phase = 0;
    cg_reset_bufs(g);
    g->tl.nload = 0;
    for (int i = 0; i < k->nstores; i++)
        cg_store(g, T_ELEM, k->stores[i], NULL);
    cg_block body = g->body;
    cg_forget(g, T_ELEM);
    tvec tv = tile_vec(g, tw == 64);

    const char *na = cg_index(g, k->dom[A]), *nb = cg_index(g, k->dom[B]);
    unsigned others = cg_all_axes(k) & ~(1u << A) & ~(1u << B);
    const tc_dim *batch = dim_const(g->c, 1);
    for (int v = 0; v < r; v++)
        if (others & (1u << v))
            batch = dim_mul(g->c, batch, k->dom[v]);
    cg_w w = {o, 4};
    cg_wput(&w, &g->kpre);
    /* the 64 x 64 vector path's tiles [64][65]; else [32][33] (subtiles too) */
    int side = tw == 64 && tv.ok ? 64 : 32;
    for (int i = 0; i < g->tl.nload; i++)
        cg_wl(&w, "__shared__ %s %s[%d][%d]; /* +1: no bank conflicts */",
              cg_type(g->tl.load[i].n->dtype), g->tl.load[i].name, side, side + 1);
    cg_wl(&w, "const idx_t na = %s, nb = %s;", na, nb);
    cg_wl(&w, "const idx_t ta_n = (na + %d) / %d, tb_n = (nb + %d) / %d;", tw - 1, tw, tw - 1, tw);
    cg_wl(&w, "const idx_t tiles = ta_n * tb_n * %s;", cg_index(g, batch));
    /* t saturates at tiles (plan_verify); i%d, i%d reach na + tw - 1, nb + tw - 1 */
    const tc_dim *ctw = dim_const(g->c, tw);
    const tc_dim *tiles = dim_mul(g->c, dim_mul(g->c, dim_ceildiv(g->c, k->dom[A], ctw),
                                                dim_ceildiv(g->c, k->dom[B], ctw)), batch);
    cg_loop(g, "t", tiles, NULL);
    cg_loop(g, "ia", k->dom[A], ctw);
    cg_loop(g, "ib", k->dom[B], ctw);
    cg_limit(g, tiles);
    cg_limit(g, dim_add(g->c, k->dom[A], ctw));
    cg_limit(g, dim_add(g->c, k->dom[B], ctw));
    cg_wopen(&w, "for (idx_t t = blockIdx.x; t < tiles; t = tiles - t > (idx_t)gridDim.x ? t + gridDim.x : tiles) {");
    cg_wl(&w, "const idx_t ta = t %% ta_n, tb = (t / ta_n) %% tb_n, rest = t / ta_n / tb_n;");
    cg_decompose(g, o, w.ind, "rest", others);
    /* A whole tile (ks->unroll > 1, or TENSORC_TILE_VEC) runs its four
     * steps without bounds tests, so their loads are all in flight at once;
     * a test per step (the edges) kept one. */
    if (tw == 32) {
        bool whole = g->ks->unroll > 1 || tv.ok;
        if (whole)
            cg_wl(&w, "const bool whole_ = na - ta * 32 >= 32 && nb - tb * 32 >= 32;");
        tile32(g, &w, &body, &tv, "ta * 32", "tb * 32", whole ? "whole_" : NULL);
    } else {
        if (tv.ok) {
            cg_wopen(&w, "if (na - ta * 64 >= 64 && nb - tb * 64 >= 64) { /* a whole tile */");
            tile64_vec(g, &w, &tv);
            cg_wclose(&w, "} else {");
            cg_win(&w);
        }
        cg_wl(&w, "#pragma unroll 1");
        cg_wopen(&w, "for (int s_ = 0; s_ < 4; s_++) { /* four 32 x 32 subtiles, as 32 x 32 tiles */");
        cg_wl(&w, "const idx_t a0_ = ta * 64 + s_ %% 2 * 32, b0_ = tb * 64 + s_ / 2 * 32;");
        cg_wl(&w, "if (a0_ >= na || b0_ >= nb)");
        cg_wl(&w, "    continue; /* (the block's every thread) */");
        if (g->ks->unroll > 1)
            cg_wl(&w, "const bool whole_ = na - a0_ >= 32 && nb - b0_ >= 32;");
        tile32(g, &w, &body, NULL, "a0_", "b0_", g->ks->unroll > 1 ? "whole_" : NULL);
        cg_wclose(&w, "}");
        if (tv.ok)
            cg_wclose(&w, "}");
    }
    cg_wclose(&w, "}");
}
