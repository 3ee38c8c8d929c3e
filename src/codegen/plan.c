/* plan.c - buffers and the launch plan of one function (see plan.h).
 *
 * Buffers: a PARAM per tensor parameter, an OUTPUT per output, a TEMP per
 * value stored between kernels.  An inout output is written straight into
 * its parameter's buffer when that is safe: the kernel that writes it reads
 * the parameter only at the element it writes (so each element is read and
 * then written by the same thread), and no later kernel reads the old
 * value.  Otherwise it goes to a buffer of its own and a final copy writes
 * it back.  Temps get slots by a greedy interval colouring of their lives.
 */
#include "codegen/cg.h"

#include <stdio.h>
#include <string.h>

static int add_buf(tc_plan *p, int *cap, tc_arena *a, pbuf b)
{
    if (p->nbufs == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        pbuf *v = ARENA_ARRAY(a, pbuf, nc);
        if (p->nbufs)
            memcpy(v, p->bufs, sizeof *v * (size_t)p->nbufs);
        p->bufs = v;
        *cap = nc;
    }
    p->bufs[p->nbufs] = b;
    return p->nbufs++;
}

static const tc_dim *numel(tc_dimctx *c, int rank, const tc_dim *const *shape)
{
    const tc_dim *n = dim_const(c, 1);
    for (int k = 0; k < rank; k++)
        n = dim_mul(c, n, shape[k]);
    return n;
}

/* Does kernel k read param node ip only at the element it stores n at? */
typedef struct walk {
    const ffn *f;
    const fkernel *k;
    const lnode *ip;
    const tc_dim **want;
    bool ok;
    int budget;
} walk;

static void walk_reads(walk *w, const lnode *n, const tc_dim *const *idx)
{
    if (!w->ok || --w->budget < 0) {
        w->ok = false;
        return;
    }
    if (n == w->ip) {
        for (int k = 0; k < n->rank; k++)
            if (idx[k] != w->want[k])
                w->ok = false;
        return;
    }
    bool own = w->f->kernel_of[n->id] == w->k->id;
    if (n->kind == LK_INPUT || n->kind == LK_SCALAR || n->kind == LK_CONST || n->kind == LK_DIMVAL ||
        (w->f->stored[n->id] && !own))
        return;
    if (n->kind == LK_GATHER && n->in[0].src == w->ip) {
        w->ok = false; /* read at positions known only at run time */
        return;
    }
    if (n->kind == LK_REDUCE) {
        /* its input is read over the kernel's own domain */
        walk_reads(w, n->in[0].src, n->in[0].idx);
        return;
    }
    for (int i = 0; i < n->nin; i++) {
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(w->f->l, &n->in[i], idx, n->rank, ci);
        walk_reads(w, n->in[i].src, ci);
    }
}

static bool in_place_ok(const sfn *s, const lnode *n, const lnode *ip)
{
    const ffn *f = s->f;
    int kw = f->kernel_of[n->id];
    if (kw < 0 || f->k[kw]->kind == KK_EXTERN || n->kind == LK_MATMUL)
        return false;
    const fkernel *k = f->k[kw];
    if (!fuse_is_element(k, n))
        return false;
    if (!ip)
        return true;
    for (int i = kw + 1; i < f->nk; i++)
        for (int j = 0; j < f->k[i]->nreads; j++)
            if (f->k[i]->reads[j] == ip)
                return false;
    walk w = {f, k, ip, (const tc_dim **)f->l->vars, true, 100000};
    for (int i = 0; i < k->nstores && w.ok; i++) {
        const lnode *st = k->stores[i];
        const tc_dim *idx[TC_MAX_RANK];
        if (!fuse_node_index(f, k, st, idx))
            return false;
        walk_reads(&w, st, idx);
    }
    for (int i = 0; i < k->nreds && w.ok; i++)
        walk_reads(&w, k->reds[i], f->l->vars);
    return w.ok;
}

static void push_write(tc_arena *a, cg_bufs *b, int node, int buf)
{
    int n = 0;
    if (b->writes[node])
        while (b->writes[node][n] >= 0)
            n++;
    int *v = ARENA_ARRAY(a, int, n + 2);
    for (int i = 0; i < n; i++)
        v[i] = b->writes[node][i];
    v[n] = buf;
    v[n + 1] = -1;
    b->writes[node] = v;
}

cg_bufs *cg_plan_bufs(const sfn *s, tc_arena *a, tc_diag *d)
{
    const ffn *f = s->f;
    const lfn *l = f->l;
    const gfn *g = l->g;
    tc_dimctx *c = l->dims;
    cg_bufs *b = ARENA_NEW(a, cg_bufs);
    int n = l->nnodes > 0 ? l->nnodes : 1;
    b->buf_of = ARENA_ARRAY(a, int, n);
    b->writes = ARENA_ARRAY(a, int *, n);
    for (int i = 0; i < n; i++)
        b->buf_of[i] = -1;
    tc_plan *p = ARENA_NEW(a, tc_plan);
    p->fn = g->name;
    p->idx64 = s->idx64;
    b->plan = p;
    int cap = 0;

    int *param_buf = ARENA_ARRAY(a, int, g->nparams > 0 ? g->nparams : 1);
    const lnode **param_node = ARENA_ARRAY(a, const lnode *, g->nparams > 0 ? g->nparams : 1);
    for (int i = 0; i < l->nnodes; i++)
        if (l->nodes[i]->kind == LK_INPUT)
            param_node[l->nodes[i]->a.param] = l->nodes[i];
    for (int i = 0; i < g->nparams; i++) {
        param_buf[i] = -1;
        const gparam *gp = &g->params[i];
        if (gp->scalar)
            continue;
        pbuf pb = {PBUF_PARAM, i, -1, gp->dtype, gp->rank, gp->shape, numel(c, gp->rank, gp->shape),
                   -1, -1, -1, arena_printf(a, "in_%s", gp->name)};
        param_buf[i] = add_buf(p, &cap, a, pb);
        if (param_node[i])
            b->buf_of[param_node[i]->id] = param_buf[i];
    }
    for (int i = 0; i < l->noutputs; i++) {
        const loutput *o = &l->outputs[i];
        const lnode *on = o->node;
        pbuf pb = {PBUF_OUTPUT, i, -1, on->dtype, on->rank, on->shape, numel(c, on->rank, on->shape),
                   -1, -1, -1, arena_printf(a, "out_%s", o->name)};
        int pi = o->inout_param;
        if (pi >= 0 && in_place_ok(s, on, param_node[pi])) {
            pb.alias = param_buf[pi];
            p->bufs[param_buf[pi]].name = arena_printf(a, "io_%s", g->params[pi].name);
        }
        int id = add_buf(p, &cap, a, pb);
        int target = pb.alias >= 0 ? pb.alias : id;
        push_write(a, b, on->id, target);
        if (b->buf_of[on->id] < 0)
            b->buf_of[on->id] = target;
    }
    /* a checkpointed pair's values pass in registers, its carries through
     * checkpoint buffers [ceil(T/K) - 1, lanes] (sched_ckpt.c: the first
     * segment starts from nothing; a symbolic T gets a spare row, so that
     * T = 0 is no negative size), none when a constant T is one segment */
    b->sv_of = ARENA_ARRAY(a, int, n);
    b->ck_first = ARENA_ARRAY(a, int, s->nk > 0 ? s->nk : 1);
    for (int j = 0; j < s->nk; j++) {
        const ksched *ks = &s->k[j];
        b->ck_first[j] = -1;
        for (int q = 0; q < ks->nckpt; q++)
            b->sv_of[ks->ckpt_vals[q]->id] = q + 1;
        int64_t T;
        bool konst = dim_is_const(ks->rowlen, &T);
        for (int q = 0; q < ks->k->nreds && ks->ckpt && !(konst && T <= ks->ckpt); q++) {
            const lnode *r = ks->k->reds[q];
            if (r->kind != LK_SCAN)
                continue;
            const tc_dim **shape = ARENA_ARRAY(a, const tc_dim *, 2);
            shape[0] = konst ? dim_const(c, (T + ks->ckpt - 1) / ks->ckpt - 1)
                             : dim_ceildiv(c, ks->rowlen, dim_const(c, ks->ckpt));
            shape[1] = ks->rows;
            pbuf pb = {PBUF_TEMP, -1, -1, sched_carry_dtype(r), 2, shape, numel(c, 2, shape),
                       -1, -1, -1, arena_printf(a, "ckpt%d", r->id)};
            int id = add_buf(p, &cap, a, pb);
            if (b->ck_first[j] < 0)
                b->ck_first[j] = id;
        }
    }
    for (int i = 0; i < l->nnodes; i++) {
        const lnode *v = l->nodes[i];
        if (!f->stored[i] || v->kind == LK_INPUT || b->writes[i] || b->sv_of[i])
            continue;
        pbuf pb = {PBUF_TEMP, -1, -1, v->dtype, v->rank, v->shape, numel(c, v->rank, v->shape),
                   -1, -1, -1, arena_printf(a, "buf%d", v->id)};
        int id = add_buf(p, &cap, a, pb);
        push_write(a, b, i, id);
        b->buf_of[i] = id;
    }
    /* column partials (fuse.h): one row per block of FUSE_COL_ROWS rows of
     * the rows kernel that carries the sum, one column per kept element */
    b->part_of = ARENA_ARRAY(a, int, n);
    for (int i = 0; i < n; i++)
        b->part_of[i] = -1;
    for (int i = 0; i < f->nk; i++)
        for (int j = 0; j < f->k[i]->ncols; j++) {
            const lnode *v = f->k[i]->cols[j];
            const ksched *ks = &s->k[i];
            const tc_dim **sh = ARENA_ARRAY(a, const tc_dim *, 2);
            sh[0] = dim_ceildiv(c, ks->rows, dim_const(c, ks->rblock));
            sh[1] = ks->rowlen;
            pbuf pb = {PBUF_TEMP, -1, -1, v->dtype == TC_F64 ? TC_F64 : TC_F32, 2, sh, numel(c, 2, sh),
                       -1, -1, -1, arena_printf(a, "cpart%d", v->id)};
            b->part_of[v->id] = add_buf(p, &cap, a, pb);
        }
    (void)d;
    return b;
}

/* ---- steps ------------------------------------------------------------------ */

pstep *cg_plan_step(tc_plan *p, tc_arena *a)
{
    pstep *v = ARENA_ARRAY(a, pstep, p->nsteps + 1);
    if (p->nsteps)
        memcpy(v, p->steps, sizeof *v * (size_t)p->nsteps);
    p->steps = v;
    pstep *st = &p->steps[p->nsteps++];
    memset(st, 0, sizeof *st);
    return st;
}

void cg_plan_arg(pstep *st, tc_arena *a, parg arg)
{
    parg *v = ARENA_ARRAY(a, parg, st->nargs + 1);
    if (st->nargs)
        memcpy(v, st->args, sizeof *v * (size_t)st->nargs);
    v[st->nargs++] = arg;
    st->args = v;
}

static tc_dtype scalar_ctype(tc_dtype t)
{
    return (t == TC_F16 || t == TC_BF16) ? TC_F32 : t;
}

/* The parameters of the kernel st launches, from its arguments (the
 * signature's order) and which buffers it writes. */
static void add_kernel(cg *g, tc_plan *p, pstep *st, const char *name)
{
    pkernel *k = cg_plan_table(g->bufs, g->a, st, name);
    for (int i = 0; i < st->nargs; i++)
        k->params[i].written = st->args[i].kind == PARG_BUF && cg_is_written(g, st->args[i].buf);
}

pkernel *cg_plan_table(cg_bufs *b, tc_arena *ar, pstep *st, const char *name)
{
    tc_plan *p = b->plan;
    if (p->nkernels == b->capkernels) {
        int cap = b->capkernels ? 2 * b->capkernels : 8;
        pkernel *v = ARENA_ARRAY(ar, pkernel, cap);
        if (p->nkernels)
            memcpy(v, p->kernels, sizeof *v * (size_t)p->nkernels);
        p->kernels = v;
        b->capkernels = cap;
    }
    pkernel *k = &p->kernels[p->nkernels];
    k->name = name;
    k->nparams = st->nargs;
    k->params = ARENA_ARRAY(ar, pparam, st->nargs > 0 ? st->nargs : 1);
    for (int i = 0; i < st->nargs; i++) {
        const parg *a = &st->args[i];
        pparam *q = &k->params[i];
        q->kind = a->kind;
        q->dtype = a->kind == PARG_BUF      ? p->bufs[a->buf].dtype
                   : a->kind == PARG_SCALAR ? a->dtype
                                            : TC_DT_NONE;
        q->written = false;
    }
    st->kidx = p->nkernels++;
    return k;
}

/* Whether g's kernel takes the workspace (its last parameter, kernel.c):
 * a whole-tensor reduction's partials and ticket, split columns' tickets
 * and partials, the rows' ticket (rows.c's ticket_loop) */
bool cg_takes_ws(const cg *g)
{
    const ksched *ks = g->ks;
    return ks->kind == SCH_FULL || (ks->kind == SCH_COLUMNS && ks->split) || g->ticket;
}

/* ... and how many bytes of it */
static const tc_dim *ws_bytes(cg *g)
{
    const ksched *ks = g->ks;
    if (ks->kind == SCH_FULL)
        return dim_const(g->c, 16 + (int64_t)g->k->nreds * ks->grid_cap * 16);
    if (ks->kind == SCH_COLUMNS && ks->split) {
        /* a 16-byte ticket per column group, then split * rows partials per reduction */
        const tc_dim *groups = dim_ceildiv(g->c, ks->rows, dim_const(g->c, (int64_t)ks->block[0] * ks->vec));
        const tc_dim *parts = dim_mul(g->c, ks->rows, dim_const(g->c, (int64_t)ks->split * 16 * g->k->nreds));
        return dim_add(g->c, dim_mul(g->c, groups, dim_const(g->c, 16)), parts);
    }
    return dim_const(g->c, 16); /* the rows' ticket */
}

/* The kernel step for g's kernel, with arguments in the order the
 * signature lists them (kernel.c writes the signature from the same
 * order: buffers by id, or by first use with positional names, sizes in
 * first-use order, scalars, workspace).  The plan's kernel table gets the
 * kernel's parameters the first time a step launches it. */
void cg_plan_kernel(cg *g, const char *name)
{
    tc_plan *p = g->bufs->plan;
    const ksched *ks = g->ks;
    pstep *st = cg_plan_step(p, g->a);
    st->kind = PSTEP_KERNEL;
    st->kidx = -1;
    for (int i = p->nkernels - 1; i >= 0 && st->kidx < 0; i--) /* names are the unit's pointers */
        if (p->kernels[i].name == name)
            st->kidx = i;
    st->kernel = name;
    st->idx64 = g->idx64 || g->wide;
    st->loops = g->loops;
    st->nloops = g->nloops;
    if (ks->foreach) { /* the buffers and sizes travel in the group table */
        cg_plan_arg(st, g->a, (parg){PARG_GROUPS, -1, NULL, -1, TC_DT_NONE});
        st->fe_bufs = ARENA_ARRAY(g->a, int, p->nbufs > 0 ? p->nbufs : 1);
        for (int i = 0; i < p->nbufs; i++)
            if (g->used_buf[i])
                st->fe_bufs[st->fe_n++] = i;
        st->fe_cap = g->fe.cap;
        st->fe_chunk = ks->chunk;
        st->fe_numel = ks->numel;
    }
    int *order = ARENA_ARRAY(g->a, int, p->nbufs > 0 ? p->nbufs : 1);
    int nused = ks->foreach ? 0 : cg_kernel_bufs(g, order); /* the signature's order */
    for (int j = 0; j < nused; j++)
        cg_plan_arg(st, g->a, (parg){PARG_BUF, order[j], NULL, -1, TC_DT_NONE});
    for (int i = 0; i < g->nsyms && !ks->foreach; i++)
        cg_plan_arg(st, g->a, (parg){PARG_DIM, -1, dim_sym(g->c, g->syms[i]), -1, TC_DT_NONE});
    for (int i = 0; i < g->l->g->nparams; i++)
        if (g->used_param[i])
            cg_plan_arg(st, g->a, (parg){PARG_SCALAR, -1, NULL, i, scalar_ctype(g->l->g->params[i].dtype)});
    if (cg_takes_ws(g)) {
        cg_plan_arg(st, g->a, (parg){PARG_WORKSPACE, -1, NULL, -1, TC_DT_NONE});
        st->ws_bytes = ws_bytes(g);
    }
    if (ks->block_per) {
        st->block_len = ks->rowlen;
        st->block_per = ks->block_per;
        st->cluster = ks->cluster;
        st->pipe = g->pipe_bytes;
    }
    st->grid[0] = ks->grid;
    st->grid[1] = st->grid[2] = dim_const(g->c, 1);
    st->grid_cap = ks->grid_cap;
    for (int i = 0; i < 3; i++)
        st->block[i] = ks->block[i];
    if (st->kidx < 0)
        add_kernel(g, p, st, name);
}

static int add_matmul(tc_plan *p, cg_bufs *b, const lnode *m, tc_dimctx *c, tc_arena *a)
{
    pstep *st = cg_plan_step(p, a);
    st->kind = PSTEP_MATMUL;
    int R = m->rank;
    st->mm.m = m->shape[R - 2];
    st->mm.n = m->shape[R - 1];
    const tc_dim *batch = dim_const(c, 1);
    for (int k = 0; k < R - 2; k++)
        batch = dim_mul(c, batch, m->shape[k]);
    st->mm.batch = batch;
    st->mm.dtype = m->dtype;
    st->mm.c = b->writes[m->id][0];
    st->mm.stride_c = dim_mul(c, st->mm.m, st->mm.n);
    for (int o = 0; o < 2; o++) {
        const lref *r = &m->in[o];
        const lnode *src = r->src;
        int rs = src->rank;
        /* operand 0 reads (.., $m, $k), operand 1 (.., $k, $n), $k = $R:
         * transposed when $k sits in the other one of the last two dims */
        const char *kv = arena_printf(a, "$%d", R);
        bool t = o == 0 ? dim_uses(r->idx[rs - 2], kv) : dim_uses(r->idx[rs - 1], kv);
        /* one matrix for every batch (stride 0) when the operand has no
         * batch dims or only size-1 ones (w: f32[1, K, M]): lowering
         * (mm_operand) leaves an operand plain only then or when its batch
         * dims are the output's */
        const tc_dim *nbatch = dim_const(c, 1);
        for (int k = 0; k < rs - 2; k++)
            nbatch = dim_mul(c, nbatch, src->shape[k]);
        int64_t one;
        bool shared = rs == 2 || (dim_is_const(nbatch, &one) && one == 1);
        const tc_dim *stride = shared ? dim_const(c, 0) : dim_mul(c, src->shape[rs - 2], src->shape[rs - 1]);
        if (o == 0) {
            st->mm.a = b->buf_of[src->id];
            st->mm.ta = t;
            st->mm.k = t ? src->shape[rs - 2] : src->shape[rs - 1];
            st->mm.stride_a = stride;
        } else {
            st->mm.b = b->buf_of[src->id];
            st->mm.tb = t;
            st->mm.stride_b = stride;
        }
    }
    return (int)(st - p->steps);
}

/* a step copying buffer src (its whole size) to dst */
static void add_copy(tc_plan *p, tc_dimctx *c, tc_arena *a, int src, int dst)
{
    const pbuf *pb = &p->bufs[src];
    pstep *st = cg_plan_step(p, a);
    st->kind = PSTEP_COPY;
    st->src = src;
    st->dst = dst;
    st->copy_bytes = dim_mul(c, pb->numel, dim_const(c, dtype_size(pb->dtype)));
}

/* After the kernels: matmuls were added in order by the caller; copies back
 * for inout outputs not written in place; then lives and slots. */
static void finish_plan(const sfn *s, cg_bufs *b, tc_arena *a)
{
    tc_plan *p = b->plan;
    const lfn *l = s->f->l;
    tc_dimctx *c = l->dims;
    /* A value several outputs return (`return y, y`; a vjp's forward that
     * saves the matmul it also returns): a kernel stores it to each, but an
     * extern step (cuBLAS, the generated matmul or attention kernel) writes
     * its first buffer alone (an output's: outputs come first in writes), so
     * copies fill the rest once every step has run.  Before the inout
     * copies, which may read one of them. */
    for (int i = 0; i < l->nnodes; i++) {
        const int *w = b->writes[i], kid = s->f->kernel_of[i];
        if (!w || w[0] < 0 || w[1] < 0 || kid < 0 || s->f->k[kid]->kind != KK_EXTERN)
            continue;
        for (int j = 1; w[j] >= 0; j++)
            add_copy(p, c, a, w[0], w[j]);
    }
    for (int i = 0; i < p->nbufs; i++) {
        pbuf *pb = &p->bufs[i];
        if (pb->kind != PBUF_OUTPUT || pb->alias >= 0)
            continue;
        int pi = l->outputs[pb->index].inout_param;
        if (pi < 0)
            continue;
        int pbuf_id = -1;
        for (int j = 0; j < p->nbufs; j++)
            if (p->bufs[j].kind == PBUF_PARAM && p->bufs[j].index == pi)
                pbuf_id = j;
        add_copy(p, c, a, i, pbuf_id);
    }
    /* lives */
    for (int si = 0; si < p->nsteps; si++) {
        pstep *st = &p->steps[si];
        int used[3] = {-1, -1, -1};
        if (st->kind == PSTEP_MATMUL) {
            used[0] = st->mm.a;
            used[1] = st->mm.b;
            used[2] = st->mm.c;
        } else if (st->kind == PSTEP_COPY) {
            used[0] = st->src;
        }
        for (int j = 0; j < 3; j++)
            if (used[j] >= 0 && p->bufs[used[j]].kind == PBUF_TEMP) {
                pbuf *pb = &p->bufs[used[j]];
                if (pb->first < 0)
                    pb->first = si;
                pb->last = si;
            }
        for (int j = 0; j < st->nargs; j++)
            if (st->args[j].kind == PARG_BUF && p->bufs[st->args[j].buf].kind == PBUF_TEMP) {
                pbuf *pb = &p->bufs[st->args[j].buf];
                if (pb->first < 0)
                    pb->first = si;
                pb->last = si;
            }
    }
    /* a temp no step uses (a row-scale operand whose rows kernel is not
     * launched, matmul.c): the first step's life, so it shares a slot */
    for (int i = 0; i < p->nbufs && p->nsteps > 0; i++)
        if (p->bufs[i].kind == PBUF_TEMP && p->bufs[i].first < 0)
            p->bufs[i].first = p->bufs[i].last = 0;
    /* greedy slots in order of first use */
    int *slot_end = ARENA_ARRAY(a, int, p->nbufs + 1);
    for (int si = 0; si < p->nsteps; si++)
        for (int i = 0; i < p->nbufs; i++) {
            pbuf *pb = &p->bufs[i];
            if (pb->kind != PBUF_TEMP || pb->first != si)
                continue;
            int slot = -1;
            for (int k = 0; k < p->nslots && slot < 0; k++)
                if (slot_end[k] < pb->first)
                    slot = k;
            if (slot < 0)
                slot = p->nslots++;
            pb->slot = slot;
            slot_end[slot] = pb->last;
        }
    /* 32-bit index limits: every buffer and domain, with room for a vector,
     * and what the kernels asked for (cg_limit) */
    int nl = 0;
    p->limits = ARENA_ARRAY(a, const tc_dim *, p->nbufs + s->nk + b->nextra + 1);
    for (int i = 0; i < p->nbufs + s->nk + b->nextra; i++) {
        const tc_dim *v = i < p->nbufs ? dim_add(c, p->bufs[i].numel, dim_const(c, 64))
                          : i < p->nbufs + s->nk
                              ? (s->k[i - p->nbufs].numel
                                     ? dim_add(c, s->k[i - p->nbufs].numel, dim_const(c, 64))
                                     : NULL)
                              : b->extra[i - p->nbufs - s->nk];
        /* once each: a long chain has thousands of buffers of a few sizes,
         * and plan_verify compares every loop with every limit */
        bool dup = !v;
        for (int j = 0; j < nl && !dup; j++)
            dup = dim_eq(p->limits[j], v);
        if (!dup)
            p->limits[nl++] = v;
    }
    p->nlimits = nl;
}

void cg_loop(cg *g, const char *var, const tc_dim *bound, const tc_dim *step)
{
    if (g->nloops == g->caploops) {
        int cap = g->caploops ? 2 * g->caploops : 8;
        ploop *v = ARENA_ARRAY(g->a, ploop, cap);
        if (g->nloops)
            memcpy(v, g->loops, sizeof *v * (size_t)g->nloops);
        g->loops = v;
        g->caploops = cap;
    }
    g->loops[g->nloops++] = (ploop){var, bound, step};
}

void cg_limit(cg *g, const tc_dim *v)
{
    cg_bufs *b = g->bufs;
    if (b->nextra == b->capextra) {
        int cap = b->capextra ? 2 * b->capextra : 8;
        const tc_dim **nv = ARENA_ARRAY(g->a, const tc_dim *, cap);
        if (b->nextra)
            memcpy(nv, b->extra, sizeof *nv * (size_t)b->nextra);
        b->extra = nv;
        b->capextra = cap;
    }
    b->extra[b->nextra++] = v;
}

/* The largest value of loop l's variable: bound - 1 + step, or bound. */
static const tc_dim *loop_max(tc_dimctx *c, const ploop *l)
{
    return l->step ? dim_add(c, l->bound, dim_sub(c, l->step, dim_const(c, 1))) : l->bound;
}

void plan_verify(const tc_plan *p, tc_dimctx *c, tc_arena *a, tc_diag *d)
{
    tc_loc none = {0};
    for (int i = 0; i < p->nsteps; i++) {
        const pstep *st = &p->steps[i];
        if (st->kind != PSTEP_KERNEL || p->idx64 || st->idx64)
            continue;
        for (int j = 0; j < st->nloops; j++) {
            const ploop *l = &st->loops[j];
            const tc_dim *m = loop_max(c, l);
            int64_t v;
            /* a constant is checked now; anything else must be at most a
             * limit (then the runtime's check of the limits covers it) */
            bool ok = dim_is_const(m, &v) && v >= 0 && v < ((int64_t)1 << 31);
            for (int k = 0; k < p->nlimits && !ok; k++)
                ok = dim_nonneg(dim_sub(c, p->limits[k], m));
            if (!ok)
                diag_error(d, TC_ERR_INTERNAL, none,
                           "plan of '%s': kernel %s: index '%s' reaches %s, which no 32-bit limit "
                           "of the plan bounds", p->fn, st->kernel ? st->kernel : "?", l->var,
                           dim_str(a, m));
        }
    }
}

int cg_plan_matmul(cg_bufs *b, const lnode *m, tc_dimctx *c, tc_arena *a)
{
    return add_matmul(b->plan, b, m, c, a);
}

void cg_plan_finish(const sfn *s, cg_bufs *b, tc_arena *a)
{
    finish_plan(s, b, a);
}

/* ---- printing ---------------------------------------------------------------- */

void plan_print(tc_buf *b, const tc_plan *p, const gfn *g)
{
    buf_printf(b, "launch plan of %s (%s indices):\n", p->fn, p->idx64 ? "64-bit" : "32-bit");
    for (int i = 0; i < p->nbufs; i++) {
        const pbuf *pb = &p->bufs[i];
        static const char *const kinds[] = {"param", "output", "temp"};
        buf_printf(b, "  buffer %-12s %-6s ", pb->name, kinds[pb->kind]);
        graph_print_type(b, pb->dtype, pb->rank, pb->shape);
        if (pb->alias >= 0)
            buf_printf(b, "  (written in place into %s)", p->bufs[pb->alias].name);
        if (pb->kind == PBUF_TEMP)
            buf_printf(b, "  live steps %d..%d, slot %d", pb->first, pb->last, pb->slot);
        buf_putc(b, '\n');
    }
    for (int i = 0; i < p->nsteps; i++) {
        const pstep *st = &p->steps[i];
        if (st->guard) {
            buf_printf(b, "  step %d runs when ", i);
            dim_print(b, st->guard);
            buf_printf(b, " %s %lld:\n", st->guard_above ? ">" : "<=", (long long)st->guard_max);
        }
        if (st->kind == PSTEP_KERNEL) {
            buf_printf(b, "  step %d: %s<<<", i, st->kernel);
            dim_print(b, st->grid[0]);
            buf_printf(b, ", [%d, %d, %d]>>>(", st->block[0], st->block[1], st->block[2]);
            for (int j = 0; j < st->nargs; j++) {
                const parg *ar = &st->args[j];
                buf_puts(b, j ? ", " : "");
                if (ar->kind == PARG_BUF)
                    buf_puts(b, p->bufs[ar->buf].name);
                else if (ar->kind == PARG_DIM)
                    dim_print(b, ar->dim);
                else if (ar->kind == PARG_SCALAR)
                    buf_puts(b, g->params[ar->param].name);
                else if (ar->kind == PARG_GROUPS) {
                    buf_puts(b, "groups {");
                    for (int k = 0; k < st->fe_n; k++)
                        buf_printf(b, "%s%s", k ? ", " : "", p->bufs[st->fe_bufs[k]].name);
                    buf_puts(b, "}");
                } else
                    buf_puts(b, "workspace");
            }
            buf_puts(b, ")\n");
            if (st->resident)
                buf_printf(b, "    grid at most %lld (resident blocks)\n", (long long)st->grid_cap);
            if (st->shmem)
                buf_printf(b, "    dynamic shared memory %d bytes a block\n", st->shmem);
            if (st->pipe && !st->cluster)
                buf_printf(b, "    the block's next row's slices prefetched into %d bytes a thread of dynamic "
                              "shared memory (TENSORC_COLPART_PREFETCH)\n", st->pipe);
            else if (st->pipe)
                buf_printf(b, "    in a cluster: at most the resident clusters, each taking rows in turn, the "
                              "next row's slice prefetched into %d bytes a thread of dynamic shared memory "
                              "(TENSORC_ROWS_PIPE; at 2 those bytes hold this row's stage and the next's)\n",
                       st->pipe);
            if (st->fe_n)
                buf_printf(b, "    foreach: one launch over any number of groups, %lld elements a "
                              "block; up to %d groups in the kernel parameter, more through device "
                              "memory\n", (long long)st->fe_chunk, st->fe_cap);
        } else if (st->kind == PSTEP_MATMUL) {
            buf_printf(b, "  step %d: matmul %s = %s%s @ %s%s (cuBLAS)\n", i, p->bufs[st->mm.c].name,
                       p->bufs[st->mm.a].name, st->mm.ta ? ".T" : "", p->bufs[st->mm.b].name,
                       st->mm.tb ? ".T" : "");
            int64_t nb;
            if (!dim_is_const(st->mm.batch, &nb) || nb != 1) {
                buf_puts(b, "    batch ");
                dim_print(b, st->mm.batch);
                buf_puts(b, ", strides (elements): a ");
                dim_print(b, st->mm.stride_a);
                buf_puts(b, ", b ");
                dim_print(b, st->mm.stride_b);
                buf_puts(b, ", c ");
                dim_print(b, st->mm.stride_c);
                buf_puts(b, "\n");
            }
        } else {
            buf_printf(b, "  step %d: copy %s -> %s\n", i, p->bufs[st->src].name, p->bufs[st->dst].name);
        }
    }
}
