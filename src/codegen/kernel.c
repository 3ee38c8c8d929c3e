/* kernel.c - the strategies' dispatcher, the kernel's signature, and
 * what every strategy shares: stores (scalar and vector) and the body
 * buffers.
 *
 * Every kernel is written in three buffers while its loops are generated
 * (emit.c decides which statement goes where): statements before all loops,
 * per-row statements before the current loop, and the loop body.  Each
 * strategy (pointwise.c, rows.c, columns.c, full.c) generates its bodies
 * first and writes the kernel text after, so the signature lists exactly
 * the buffers, sizes and scalars used and the vector path's alignment test
 * names exactly the accesses made as vectors.
 */
#include "codegen/cg.h"

#include <string.h>

void cg_reset_bufs(cg *g)
{
    g->rpre = (cg_block){0};
    g->body = (cg_block){0};
}

static const char *store_value(cg *g, const lnode *n, const char *v)
{
    switch (n->dtype) {
    case TC_F16: return arena_printf(g->a, "tc_f2h(%s)", v);
    case TC_BF16: return arena_printf(g->a, "tc_f2bf(%s)", v);
    case TC_BOOL: return arena_printf(g->a, "(unsigned char)%s", v);
    default: return v;
    }
}

const char *cg_store_conv(cg *g, const lnode *n, const char *v)
{
    return store_value(g, n, v);
}

/* The register value whose conversion to n's storage type gives the bits
 * stored for n at idx.  A 16-bit float that is a cast of an f32 computed
 * here is stored from the f32 itself: rounding it first (tc_round_bf16)
 * and then converting rounds twice to the same bits. */
static const char *store_operand(cg *g, const lnode *n, const tc_dim *const *idx)
{
    if ((n->dtype == TC_BF16 || n->dtype == TC_F16) && n->kind == LK_POINTWISE &&
        (n->op == OP_cast || n->op == OP_copy) && n->nin == 1 && n->opdt == TC_F32 &&
        n->in[0].src->dtype == TC_F32 && n->in[0].src->kind != LK_CONST &&
        g->f->kernel_of[n->id] == g->k->id && g->tl.axis < 0) {
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(g->l, &n->in[0], idx, n->rank, ci);
        return cg_value(g, n->in[0].src, ci);
    }
    return cg_value(g, n, idx);
}

/* Store n's value at its natural index into every buffer it goes to. */
void cg_store(cg *g, cg_target t, const lnode *n, const char *guard)
{
    const tc_dim *idx[TC_MAX_RANK];
    if (!fuse_node_index(g->f, g->k, n, idx))
        diag_error(g->d, TC_ERR_INTERNAL, n->loc, "codegen: %%%d is outside its kernel's domain", n->id);
    cg_store_at(g, t, n, idx, guard);
}

/* The same at idx (a scan's plane stores: scan.c). */
void cg_store_at(cg *g, cg_target t, const lnode *n, const tc_dim *const *idx, const char *guard)
{
    const char *v = store_operand(g, n, idx);
    for (const int *w = g->bufs->writes[n->id]; w && *w >= 0; w++) {
        cg_use_buf(g, *w);
        const char *line = arena_printf(g->a, "%s[%s] = %s;", cg_buf_name(g, *w), cg_flat(g, n, idx),
                                        store_value(g, n, v));
        if (!guard && t == T_ELEM)
            guard = g->eguard;
        if (guard)
            cg_line(g, t, n, "if (%s) %s", guard, line);
        else
            cg_line(g, t, n, "%s", line);
    }
}

static bool writes_buf(const cg *g, const fkernel *k, int buf)
{
    for (int i = 0; i < k->nstores; i++)
        for (const int *w = g->bufs->writes[k->stores[i]->id]; w && *w >= 0; w++)
            if (*w == buf)
                return true;
    for (int i = 0; i < g->k->ncols; i++) /* column partials (fuse.h) */
        if (g->bufs->part_of[g->k->cols[i]->id] == buf)
            return true;
    return false;
}

bool cg_is_written(cg *g, int buf)
{
    /* a checkpointed pair writes its checkpoints and the reversed walk's stores too */
    int j = g->ks->ckpt_with - 1, ck = g->bufs->ck_first ? g->bufs->ck_first[g->kj] : -1;
    for (int q = 0; ck >= 0 && q < g->k->nreds; q++) /* one a scan carry, from ck on */
        if (g->k->reds[q]->kind == LK_SCAN && buf == ck++)
            return true;
    return writes_buf(g, g->k, buf) || (j >= 0 && writes_buf(g, g->f->k[j], buf));
}

static void identity_idx(cg *g, const tc_dim **idx, int rank, int shift_last)
{
    for (int k = 0; k < rank; k++)
        idx[k] = g->l->vars[k];
    if (rank > 0 && shift_last)
        idx[rank - 1] = dim_add(g->c, g->l->vars[rank - 1], dim_const(g->c, shift_last));
}

/* Store element-level node s, vec elements along the last axis, as one
 * vector (alignment recorded for the vector path's test). */
void cg_vector_store(cg *g, const lnode *s, int vec)
{
    int r = g->k->rank;
    const char *v[16];
    for (int e = 0; e < vec; e++) {
        g->v.k = e;
        const tc_dim *idx[TC_MAX_RANK];
        identity_idx(g, idx, r, e);
        v[e] = store_operand(g, s, idx);
    }
    const tc_dim *idx0[TC_MAX_RANK];
    identity_idx(g, idx0, r, 0);
    const tc_dim *f0 = lir_flat(g->l, s, idx0);
    /* 16-bit floats convert and pack in pairs (one instruction a pair on sm_80+) */
    bool pairs = (s->dtype == TC_BF16 || s->dtype == TC_F16) && vec % 2 == 0;
    for (const int *w = g->bufs->writes[s->id]; w && *w >= 0; w++) {
        cg_use_buf(g, *w);
        const char *ptr = cg_buf_name(g, *w), *off = cg_flat(g, s, idx0);
        tc_buf b;
        buf_init(&b, g->a);
        if (pairs) {
            buf_printf(&b, "tc_vstore<unsigned, %d>((unsigned *)(%s + %s), {{", vec / 2, ptr, off);
            for (int e = 0; e < vec; e += 2)
                buf_printf(&b, "%s%s(%s, %s)", e ? ", " : "", s->dtype == TC_BF16 ? "tc_f2bf2" : "tc_f2h2",
                           v[e], v[e + 1]);
        } else {
            buf_printf(&b, "tc_vstore<%s, %d>(%s + %s, {{", cg_store_type(s->dtype), vec, ptr, off);
            for (int e = 0; e < vec; e++)
                buf_printf(&b, "%s%s", e ? ", " : "", store_value(g, s, v[e]));
        }
        buf_puts(&b, "}});");
        if (g->eguard)
            cg_line(g, T_ELEM, s, "if (%s) %s", g->eguard, buf_str(&b));
        else
            cg_line(g, T_ELEM, s, "%s", buf_str(&b));
        cg_align(g, arena_printf(g->a, "%s + %s", ptr, g->v.row ? cg_index(g, cg_row_part(g, f0)) : off),
                 dtype_size(s->dtype) * vec);
    }
}

/* Start generating a vector body: vec elements along index variable last,
 * with no vector loads or alignment tests yet. */
void cg_vector_begin(cg *g, int vec, int last)
{
    cg_reset_bufs(g);
    g->v.n = vec;
    g->v.last = last;
    g->v.nalign = 0;
    g->v.nload = 0;
}

static bool *redep_of(cg *g)
{
    int n = g->l->nnodes > 0 ? g->l->nnodes : 1;
    bool *r = ARENA_ARRAY(g->a, bool, n);
    for (int i = 0; i < g->l->nnodes; i++) {
        const lnode *v = g->l->nodes[i];
        bool own = g->f->kernel_of[i] == g->k->id;
        /* a matmul's own product (its fused epilogue's mm_v) varies too */
        if ((v->kind == LK_REDUCE || v->kind == LK_SCAN || v->kind == LK_MATMUL) && own) {
            r[i] = true;
            continue;
        }
        if (v->kind == LK_INPUT || (g->f->stored[i] && !own))
            continue;
        for (int j = 0; j < v->nin; j++)
            r[i] |= r[v->in[j].src->id];
    }
    return r;
}

void cg_switch_kernel(cg *g, int j)
{
    g->ks = &g->s->k[j];
    g->k = g->f->k[j];
    g->redep = redep_of(g);
    g->ncache = 0;
    g->nrcp = 0;
    g->acc = ARENA_ARRAY(g->a, const char *, g->l->nnodes > 0 ? g->l->nnodes : 1);
    g->lse = ARENA_ARRAY(g->a, const char *, g->l->nnodes > 0 ? g->l->nnodes : 1);
}

void cg_kernel_init(cg *g)
{
    const fkernel *k = g->k;
    g->redep = redep_of(g);
    g->tl.axis = g->ks->kind == SCH_POINTWISE ? g->ks->tile : -1;
    g->ncache = 0;
    g->nrcp = 0;
    g->nsyms = 0;
    g->ntemp = 0;
    g->kpre = (cg_block){0};
    int nb = g->bufs->plan->nbufs;
    g->used_buf = ARENA_ARRAY(g->a, bool, nb > 0 ? nb : 1);
    g->bufpos = ARENA_ARRAY(g->a, int, nb > 0 ? nb : 1);
    g->bufseq = ARENA_ARRAY(g->a, int, nb > 0 ? nb : 1);
    g->nbufseq = 0;
    g->used_param = ARENA_ARRAY(g->a, bool, g->l->g->nparams > 0 ? g->l->g->nparams : 1);
    g->syms = ARENA_ARRAY(g->a, const char *, 64);
    g->acc = ARENA_ARRAY(g->a, const char *, g->l->nnodes > 0 ? g->l->nnodes : 1);
    g->lse = ARENA_ARRAY(g->a, const char *, g->l->nnodes > 0 ? g->l->nnodes : 1);
    g->phase_of = ARENA_ARRAY(g->a, int, g->l->nnodes > 0 ? g->l->nnodes : 1);
    for (int j = 0; j < k->nreds && g->ks->phase; j++)
        g->phase_of[k->reds[j]->id] = g->ks->phase[j];
}

/* the blocks a SM a knob asks of ptxas for this kind of kernel, else 0 */
static int min_blocks(const cg *g)
{
    const tc_knobs *kn = &g->f->knobs;
    switch (g->ks->kind) {
    case SCH_COLUMNS: return kn->col_occ > 0 ? kn->col_occ : 0;
    case SCH_POINTWISE: return kn->pw_occ > 0 ? kn->pw_occ : 0;
    case SCH_SCAN: return kn->scan_minblocks > 0 ? kn->scan_minblocks : 0;
    default: return 0;
    }
}

void cg_kernel(cg *g, tc_buf *out)
{
    cg_kernel_init(g);
    int nb = g->bufs->plan->nbufs;
    tc_buf body;
    buf_init(&body, g->a);
    switch (g->ks->kind) {
    case SCH_POINTWISE:
        if (g->tl.axis >= 0)
            cg_tiled(g, &body);
        else
            cg_pointwise(g, &body);
        break;
    case SCH_ROWS: cg_rows(g, &body, false); break;
    case SCH_COLUMNS:
        if (g->ks->split && g->ks->vec > 1)
            cg_columns_split_vec(g, &body);
        else if (g->ks->split)
            cg_columns_split(g, &body);
        else
            cg_rows(g, &body, true);
        break;
    case SCH_FULL: cg_full(g, &body); break;
    case SCH_SCAN: cg_scan(g, &body); break;
    default: return;
    }

    const ksched *ks = g->ks;
    int threads = ks->block[0] * ks->block[1] * ks->block[2];
    const int mb = min_blocks(g);
    /* rows kernels: at most 40 registers a thread (TC_ROWS_BOUNDS), so six
     * 256-thread blocks fit an SM where 46 to 54 registers allowed four
     * (softmax 16384 x 4096 on an H200: 168 us to 160; 32768 x 1024: 82 to
     * 78; layernorm, rmsnorm unchanged; a cap of 32 spilled in them) */
    if (ks->kind == SCH_ROWS && ks->rblock) /* column sums in registers too: up to 64 (128 at 512) */
        buf_printf(out, "extern \"C\" __global__ void __launch_bounds__(%d) %s(", ks->block[0], g->kname);
    else if (ks->kind == SCH_ROWS && ks->wide) /* 32 registers of row: 64, two blocks of 512 a SM */
        buf_printf(out, "extern \"C\" __global__ void __launch_bounds__(512, 2) %s(", g->kname);
    else if (ks->kind == SCH_ROWS && g->f->knobs.rows_maxreg > 0) /* TENSORC_ROWS_MAXREG (A/B) */
        buf_printf(out, "extern \"C\" __global__ void TC_MAXNREG(%d) %s(", g->f->knobs.rows_maxreg, g->kname);
    else if (ks->kind == SCH_ROWS)
        buf_printf(out, "extern \"C\" __global__ void TC_ROWS_BOUNDS %s(", g->kname);
    else if (mb > 0) /* TENSORC_COL_OCC, _PW_OCC, _SCAN_MINBLOCKS: register caps (A/Bs) */
        buf_printf(out, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(", threads, mb, g->kname);
    else
        buf_printf(out, "extern \"C\" __global__ void __launch_bounds__(%d) %s(", threads, g->kname);
    bool first = true;
    tc_plan *p = g->bufs->plan;
    if (ks->foreach) {
        int nt = cg_fe_count(g);
        g->fe.cap = cg_fe_cap(g, nt);
        buf_printf(out, "\n    const __grid_constant__ tc_fe_table<%d, %d> fe", nt, g->fe.cap);
        first = false;
    }
    int *order = ARENA_ARRAY(g->a, int, nb > 0 ? nb : 1);
    int nused = ks->foreach ? 0 : cg_kernel_bufs(g, order);
    for (int j = 0; j < nused; j++) {
        int i = order[j];
        bool w = cg_is_written(g, i);
        buf_printf(out, "%s\n    %s%s *__restrict__ %s", first ? "" : ",", w ? "" : "const ",
                   cg_store_type(p->bufs[i].dtype), cg_buf_name(g, i));
        first = false;
    }
    for (int i = 0; i < g->nsyms && !ks->foreach; i++) {
        buf_printf(out, "%s\n    const %s %s", first ? "" : ",", g->wide ? "long long" : "idx_t",
                   strcmp(g->syms[i], "*") == 0 ? "sz_n" : arena_printf(g->a, "sz_%s", g->syms[i]));
        first = false;
    }
    for (int i = 0; i < g->l->g->nparams; i++) {
        if (!g->used_param[i])
            continue;
        const gparam *gp = &g->l->g->params[i];
        tc_dtype t = gp->dtype;
        buf_printf(out, "%s\n    const %s s_%s", first ? "" : ",",
                   (t == TC_F16 || t == TC_BF16) ? "float" : cg_type(t), gp->name);
        first = false;
    }
    if (cg_takes_ws(g))
        buf_printf(out, "%s\n    void *__restrict__ ws", first ? "" : ",");
    buf_puts(out, ")\n{\n");
    if (g->wide && !g->idx64)
        buf_puts(out, "    /* an index divides and multiplies back (a reshape of a permuted view):\n"
                      "     * its terms can pass 2^31 even when every size fits, so 64-bit here */\n"
                      "    typedef long long idx_t;\n");
    if (ks->kind != SCH_POINTWISE && ks->kind != SCH_SCAN)
        buf_puts(out, "    __shared__ double tc_smem[2 * 32 * 8];\n");
    buf_puts(out, buf_str(&body));
    buf_puts(out, "}\n");
}

int cg_kernel_bufs(const cg *g, int *out)
{
    if (g->positional) {
        memcpy(out, g->bufseq, sizeof *out * (size_t)g->nbufseq);
        return g->nbufseq;
    }
    int n = 0;
    for (int i = 0; i < g->bufs->plan->nbufs; i++)
        if (g->used_buf[i])
            out[n++] = i;
    return n;
}
