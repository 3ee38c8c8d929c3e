/* kernel.c - the loops of each strategy around the expression emitter.
 *
 * Every kernel is written in three buffers while its loops are generated
 * (emit.c decides which statement goes where): statements before all loops,
 * per-row statements before the current loop, and the loop body.  Each
 * strategy generates its bodies first and writes the kernel text after, so
 * the signature lists exactly the buffers, sizes and scalars used and the
 * vector path's alignment test names exactly the accesses made as vectors.
 */
#include "codegen/cg.h"

#include <string.h>

static void text(tc_buf *o, int ind, const char *s)
{
    /* re-indent a block of lines by ind spaces */
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n)
            buf_printf(o, "%*s%.*s\n", ind, "", (int)n, s);
        s += n + (e ? 1 : 0);
    }
}

static void reset_bufs(cg *g)
{
    buf_init(&g->rpre, g->a);
    buf_init(&g->body, g->a);
    g->rind = g->bind = 0;
}

/* Statements defining the index variables of axes `axes` of the domain from
 * the flat position `pos` over just those axes (row-major). */
static void decompose(cg *g, tc_buf *o, int ind, const char *pos, unsigned axes)
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

static const char *store_value(cg *g, const lnode *n, const char *v)
{
    switch (n->dtype) {
    case TC_F16: return arena_printf(g->a, "tc_f2h(%s)", v);
    case TC_BF16: return arena_printf(g->a, "tc_f2bf(%s)", v);
    case TC_BOOL: return arena_printf(g->a, "(unsigned char)%s", v);
    default: return v;
    }
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
        g->f->kernel_of[n->id] == g->k->id && g->tile < 0) {
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(g->l, &n->in[0], idx, n->rank, ci);
        return cg_value(g, n->in[0].src, ci);
    }
    return cg_value(g, n, idx);
}

/* Store n's value at its natural index into every buffer it goes to. */
static void store(cg *g, cg_target t, const lnode *n, const char *guard)
{
    const tc_dim *idx[TC_MAX_RANK];
    if (!fuse_node_index(g->f, g->k, n, idx))
        diag_error(g->d, TC_ERR_INTERNAL, n->loc, "codegen: %%%d is outside its kernel's domain", n->id);
    const char *v = store_operand(g, n, idx);
    for (const int *w = g->bufs->writes[n->id]; w && *w >= 0; w++) {
        cg_use_buf(g, *w);
        const char *line = arena_printf(g->a, "%s[%s] = %s;", cg_buf_name(g, *w), cg_flat(g, n, idx),
                                        store_value(g, n, v));
        if (guard)
            cg_line(g, t, n, "if (%s) %s", guard, line);
        else
            cg_line(g, t, n, "%s", line);
    }
}

static bool is_written(cg *g, int buf)
{
    for (int i = 0; i < g->k->nstores; i++)
        for (const int *w = g->bufs->writes[g->k->stores[i]->id]; w && *w >= 0; w++)
            if (*w == buf)
                return true;
    return false;
}

/* ---- reductions ------------------------------------------------------------ */

static tc_dtype acc_dtype(const lnode *r)
{
    if (r->a.red.kind == RK_ARGMAX || r->a.red.kind == RK_ARGMIN)
        return r->in[0].src->dtype;
    return r->dtype;
}

static const char *acc_type(cg *g, const lnode *r)
{
    tc_dtype t = acc_dtype(r);
    const char *base = t == TC_BOOL ? "int" : cg_type(t);
    if (r->a.red.kind == RK_ARGMAX || r->a.red.kind == RK_ARGMIN)
        return arena_printf(g->a, "tc_argv<%s>", base);
    return base;
}

static const char *op_name(const lnode *r)
{
    static const char *const names[] = {"tc_op_sum", "tc_op_prod", "tc_op_max", "tc_op_min",
                                        "tc_op_argmax", "tc_op_argmin"};
    return names[r->a.red.kind];
}

/* The number in r's accumulator's and result's names: its node id, or
 * with positional names its place among the kernel's reductions. */
static int rno(const cg *g, const lnode *r)
{
    if (g->positional)
        for (int j = 0; j < g->k->nreds; j++)
            if (g->k->reds[j] == r)
                return j;
    return r->id;
}

/* The identity of r's operator, as an expression of its accumulator type. */
static const char *acc_init(cg *g, const lnode *r)
{
    const char *t = acc_type(g, r);
    const char *vt = acc_dtype(r) == TC_BOOL ? "int" : cg_type(acc_dtype(r));
    switch (r->a.red.kind) {
    case RK_SUM: return arena_printf(g->a, "(%s)0", t);
    case RK_PROD: return arena_printf(g->a, "(%s)1", t);
    case RK_MAX: return arena_printf(g->a, "tc_lowest<%s>()", t);
    case RK_MIN: return arena_printf(g->a, "tc_highest<%s>()", t);
    case RK_ARGMAX: return arena_printf(g->a, "%s{tc_lowest<%s>(), -1}", t, vt);
    default: return arena_printf(g->a, "%s{tc_highest<%s>(), -1}", t, vt);
    }
}

/* All-zero bits of r's accumulator type (the workspace's resting state):
 * T{} is not C++ when T is two words (long long{}) */
static const char *acc_zero(cg *g, const lnode *r)
{
    if (r->a.red.kind == RK_ARGMAX || r->a.red.kind == RK_ARGMIN)
        return arena_printf(g->a, "%s{}", acc_type(g, r));
    return arena_printf(g->a, "(%s)0", acc_type(g, r));
}

/* r's accumulator: accN, or accN[sub] when a thread has several columns */
static const char *acc_name(cg *g, const lnode *r)
{
    if (g->acc_at)
        return arena_printf(g->a, "acc%d[%s]", rno(g, r), g->acc_at);
    return arena_printf(g->a, "acc%d", rno(g, r));
}

/* Declarations of this pass's accumulators, and accumulate statements into
 * the body (the value read at the reduction's input index; pos names the
 * flat position in the reduced axes, for arg reductions).  shift: element
 * `shift` of a vector along the last axis; when that axis is reduced (rows,
 * full: pos_shift) the element's position is pos + shift, but when it is
 * kept (a thread's columns) every element of the vector is at pos. */
static void accumulate_at(cg *g, int phase, tc_buf *decl, int ind, const char *pos, int shift,
                          bool pos_shift)
{
    for (int j = 0; j < g->k->nreds; j++) {
        const lnode *r = g->k->reds[j];
        if (g->ks->phase[j] != phase)
            continue;
        const char *at = acc_type(g, r);
        const char *a = acc_name(g, r);
        if (decl)
            buf_printf(decl, "%*s%s %s = %s;\n", ind, "", at, a, acc_init(g, r));
        const tc_dim *const *idx = r->in[0].idx;
        const tc_dim *sh[TC_MAX_RANK];
        if (shift) { /* element `shift` of a vector along the last axis */
            const char *vn = g->l->varnames[g->vlast];
            const tc_dim *v = dim_add(g->c, g->l->vars[g->vlast], dim_const(g->c, shift));
            for (int k = 0; k < r->in[0].src->rank; k++)
                sh[k] = dim_subst(g->c, idx[k], 1, &vn, &v);
            idx = sh;
        }
        const char *v = cg_value(g, r->in[0].src, idx);
        if (r->a.red.kind == RK_ARGMAX || r->a.red.kind == RK_ARGMIN) {
            const char *vt = acc_dtype(r) == TC_BOOL ? "int" : cg_type(acc_dtype(r));
            cg_line(g, T_ELEM, r, "%s = %s()(%s, %s{(%s)%s, (long long)(%s)});", a, op_name(r), a, at,
                    vt, v, shift && pos_shift ? arena_printf(g->a, "%s + %d", pos, shift) : pos);
        } else {
            cg_line(g, T_ELEM, r, "%s = %s()(%s, %s);", a, op_name(r), a,
                    cg_convert(g, v, r->in[0].src->dtype, acc_dtype(r) == TC_BOOL ? TC_I32 : r->dtype));
        }
    }
}

/* Declarations of this pass's accumulators, and accumulate statements into
 * the body (the value read at the reduction's input index; pos names the
 * flat position in the reduced axes, for arg reductions). */
static void accumulate(cg *g, int phase, tc_buf *decl, int ind, const char *pos)
{
    accumulate_at(g, phase, decl, ind, pos, 0, false);
}

/* After the pass's loop: combine across threads (how: `combine`, a helper
 * name) and name each result for the rest of the kernel. */
static void finish_pass(cg *g, int phase, tc_buf *o, int ind, const char *combine)
{
    for (int j = 0; j < g->k->nreds; j++) {
        const lnode *r = g->k->reds[j];
        if (g->ks->phase[j] != phase)
            continue;
        const char *at = acc_type(g, r);
        const char *a = acc_name(g, r);
        const char *res = arena_printf(g->a, "r%d", rno(g, r));
        if (combine)
            buf_printf(o, "%*s%s = %s(%s, %s(), (%s *)tc_smem);\n", ind, "", a, combine, a, op_name(r), at);
        bool arg = r->a.red.kind == RK_ARGMAX || r->a.red.kind == RK_ARGMIN;
        bool lowp = (r->dtype == TC_F16 || r->dtype == TC_BF16) && !arg && r->a.red.kind != RK_MAX &&
                    r->a.red.kind != RK_MIN; /* a max of bf16 values is one already */
        if (lowp)
            buf_printf(o, "%*sconst float %s = tc_round_%s(%s);\n", ind, "", res, dtype_name(r->dtype), a);
        else
            buf_printf(o, "%*sconst %s %s = %s%s;\n", ind, "", cg_type(r->dtype), res, a, arg ? ".i" : "");
        g->acc[r->id] = res;
    }
}

/* ---- strategies --------------------------------------------------------------- */

static unsigned all_axes(const fkernel *k)
{
    return k->rank >= 32 ? ~0u : (1u << k->rank) - 1;
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
static void vector_store(cg *g, const lnode *s, int vec)
{
    int r = g->k->rank;
    const char *v[16];
    for (int e = 0; e < vec; e++) {
        g->vk = e;
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
        cg_line(g, T_ELEM, s, "%s", buf_str(&b));
        cg_align(g, arena_printf(g->a, "%s + %s", ptr, g->vrow ? cg_index(g, row_part(g, f0)) : off),
                 dtype_size(s->dtype) * vec);
    }
}

/* Start generating a vector body: vec elements along index variable last,
 * with no vector loads or alignment tests yet. */
static void vector_begin(cg *g, int vec, int last)
{
    reset_bufs(g);
    g->vec = vec;
    g->vlast = last;
    g->nvalign = 0;
    g->nvload = 0;
}

/* The grid-stride loop over every element of the domain (n of them): with
 * vec > 1, vec elements a step, vbody where the vector stays in one row of
 * the last dim and its accesses are aligned, else body element by element.
 * named: the element's flat position is the variable r (reductions use it).
 * range: NULL for the whole grid, else {first, end, step} (a foreach
 * block's chunk, which starts and ends at a multiple of vec). */
static void grid_stride(cg *g, tc_buf *o, const char *n, const tc_dim *nd, int vec, const char *vbody,
                        const char *body, bool named, const char *const *range)
{
    const fkernel *k = g->k;
    int rank = k->rank;
    unsigned axes = all_axes(k);
    /* The first index and the step are made in 64 bits and clamped to the
     * end, and the increment saturates there (n - v > step: v + step < n),
     * so no index passes n: a 32-bit plan serves n up to 2^31 - 65, where
     * v += gridDim.x * blockDim.x would wrap negative (plan_verify). */
    const char *v = vec == 1 && named && !range ? "r" : "base";
    const char *end = range ? range[1] : n;
    if (range)
        buf_printf(o, "    const idx_t step_ = %s;\n"
                      "    for (idx_t %s = tc_upto(%s, %s); %s < %s; %s = %s - %s > step_ ? %s + step_ : %s) {\n",
                   range[2], v, range[0], end, v, end, v, end, v, v, end);
    else
        buf_printf(o, "    const idx_t step_ = tc_upto((long long)gridDim.x * blockDim.x * %d, %s);\n"
                      "    for (idx_t %s = tc_upto(((long long)blockIdx.x * blockDim.x + threadIdx.x) * %d, %s);\n"
                      "         %s < %s; %s = %s - %s > step_ ? %s + step_ : %s) {\n",
                   vec, n, v, vec, n, v, n, v, n, v, v, n);
    cg_loop(g, v, nd, NULL);
    decompose(g, o, 8, v, axes);
    if (vec == 1) {
        text(o, 8, body);
        buf_puts(o, "    }\n");
        return;
    }
    /* n - base >= vec: base + vec could pass 2^31 */
    buf_printf(o, "        if (%s - base >= %d", end, vec);
    if (rank > 1) /* the vector stays in one row of the last dim */
        buf_printf(o, " && %s - i%d >= %d", cg_index(g, k->dom[rank - 1]), rank - 1, vec);
    for (int i = 0; i < g->nvalign; i++)
        buf_printf(o, " &&\n            %s", g->valign[i]);
    buf_puts(o, ") {\n");
    text(o, 12, vbody);
    buf_printf(o, "        } else {\n"
                  "            for (int e = 0; e < %d && e < %s - base; ++e) {\n", vec, end);
    if (named) {
        buf_puts(o, "                const idx_t r = base + e;\n");
        decompose(g, o, 16, "r", axes);
    } else {
        decompose(g, o, 16, "base + e", axes);
    }
    text(o, 16, body);
    buf_puts(o, "            }\n        }\n    }\n");
}

static int fe_count(const cg *g)
{
    int nt = 0;
    for (int i = 0; i < g->bufs->plan->nbufs; i++)
        nt += g->used_buf[i];
    return nt;
}

/* Foreach (sched.h): the block finds its group in the table (a binary
 * search over the groups' first blocks: log2(groups) loads, from the kernel
 * parameters or L2), takes the group's addresses as the buffers' names, and
 * runs the pointwise loop over its chunk. */
static void foreach_chunk(cg *g, tc_buf *o, int vec, const char *vbody, const char *body)
{
    tc_plan *p = g->bufs->plan;
    int nt = fe_count(g), chunk = g->ks->chunk;
    buf_printf(o, "    const tc_fe_group<%d> &grp = tc_fe_find<%d>(fe.dev ? fe.dev : fe.g, fe.ngroups);\n",
               nt, nt);
    for (int i = 0, k = 0; i < p->nbufs; i++) {
        if (!g->used_buf[i])
            continue;
        const char *c = is_written(g, i) ? "" : "const ";
        const char *t = cg_store_type(p->bufs[i].dtype);
        buf_printf(o, "    %s%s *__restrict__ %s = (%s%s *)grp.ptr[%d];\n", c, t, p->bufs[i].name, c, t, k++);
        /* the table's addresses are plain integers: without this the
         * accesses would be generic ones, not ld.global (.nc for inputs) */
        buf_printf(o, "    __builtin_assume(__isGlobal(%s));\n", p->bufs[i].name);
    }
    buf_puts(o, "    const idx_t n = (idx_t)grp.n;\n");
    for (int i = 0; i < g->nsyms; i++) /* the bodies used the size of [*] */
        if (strcmp(g->syms[i], "*") == 0)
            buf_puts(o, "    const idx_t sz_n = n;\n");
    buf_printf(o, "    const idx_t lo = (idx_t)(blockIdx.x - grp.first) * %d;\n", chunk);
    buf_printf(o, "    const idx_t hi = n - lo < %d ? n : lo + %d;\n", chunk, chunk);
    const char *range[3] = {arena_printf(g->a, "(long long)lo + (long long)threadIdx.x * %d", vec), "hi",
                            arena_printf(g->a, "(idx_t)blockDim.x * %d", vec)};
    cg_loop(g, "lo", g->ks->numel, NULL);
    grid_stride(g, o, "n", g->ks->numel, vec, vbody, body, false, range);
}

/* Groups a foreach kernel's parameter holds: its table and the scalars stay
 * within fe_param_bytes (codegen.h: 4 KB, which every driver and GPU allow,
 * so launching it costs what launching any kernel does; or 32 KB in a wide
 * unit); more groups than that go through device memory. */
static int fe_cap(const cg *g, int nt)
{
    int scalars = 0;
    for (int i = 0; i < g->l->g->nparams; i++)
        scalars += g->used_param[i];
    int cap = (g->fe_param_bytes - 16 - 8 * scalars) / (8 * (nt + 2));
    return cap > 1 ? cap : 1;
}

static void pointwise(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    int vec = g->ks->vec, r = k->rank;
    /* a foreach kernel's element count is its group's, not a size */
    const char *n = g->ks->foreach ? NULL : cg_index(g, g->ks->numel);
    g->elemvars = all_axes(k);
    g->rowvars = 0;
    g->phase = 0;

    /* the scalar body: one element */
    reset_bufs(g);
    g->vec = 1;
    for (int i = 0; i < k->nstores; i++)
        store(g, T_ELEM, k->stores[i], NULL);
    const char *scalar_body = buf_str(&g->body);
    cg_forget(g, T_ELEM);

    const char *vec_body = NULL;
    if (vec > 1) {
        vector_begin(g, vec, r - 1);
        buf_init(&g->vloads, g->a);
        g->hoist_vloads = true;
        for (int i = 0; i < k->nstores; i++)
            vector_store(g, k->stores[i], vec);
        g->hoist_vloads = false;
        buf_puts(&g->vloads, buf_str(&g->body));
        vec_body = buf_str(&g->vloads);
        g->vec = 1;
        cg_forget(g, T_ELEM);
    }

    text(o, 4, buf_str(&g->kpre));
    if (g->ks->foreach) {
        foreach_chunk(g, o, vec, vec_body, scalar_body);
        return;
    }
    buf_printf(o, "    const idx_t n = %s;\n", n);
    grid_stride(g, o, "n", g->ks->numel, vec, vec_body, scalar_body, false, NULL);
}

/* SCH_POINTWISE with a tile axis b (and a = the last axis): each block
 * takes 32 x 32 tiles of (a, b) in turn (grid-stride, other axes outside).
 * Phase 1 reads the transposed operands coalesced along b into shared
 * memory; phase 2 computes and stores coalesced along a, taking those
 * operands from the tiles. */
static void tiled(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    int r = k->rank, A = r - 1, B = g->tile;
    g->elemvars = all_axes(k);
    g->rowvars = 0;
    g->phase = 0;
    reset_bufs(g);
    g->ntload = 0;
    for (int i = 0; i < k->nstores; i++)
        store(g, T_ELEM, k->stores[i], NULL);
    const char *body = buf_str(&g->body);
    cg_forget(g, T_ELEM);

    const char *na = cg_index(g, k->dom[A]), *nb = cg_index(g, k->dom[B]);
    unsigned others = all_axes(k) & ~(1u << A) & ~(1u << B);
    const tc_dim *batch = dim_const(g->c, 1);
    for (int v = 0; v < r; v++)
        if (others & (1u << v))
            batch = dim_mul(g->c, batch, k->dom[v]);
    text(o, 4, buf_str(&g->kpre));
    for (int i = 0; i < g->ntload; i++)
        buf_printf(o, "    __shared__ %s %s[32][33]; /* +1: no bank conflicts */\n",
                   cg_type(g->tload[i].n->dtype), g->tload[i].name);
    buf_printf(o, "    const idx_t na = %s, nb = %s;\n", na, nb);
    buf_puts(o, "    const idx_t ta_n = (na + 31) / 32, tb_n = (nb + 31) / 32;\n");
    buf_printf(o, "    const idx_t tiles = ta_n * tb_n * %s;\n", cg_index(g, batch));
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
    buf_puts(o, "    for (idx_t t = blockIdx.x; t < tiles; t = tiles - t > (idx_t)gridDim.x ? t + gridDim.x : tiles) {\n"
                "        const idx_t ta = t % ta_n, tb = (t / ta_n) % tb_n, rest = t / ta_n / tb_n;\n");
    decompose(g, o, 8, "rest", others);
    buf_puts(o, "        #pragma unroll\n"
                "        for (int kk = 0; kk < 4; kk++) { /* phase 1: transposed reads, coalesced */\n");
    buf_printf(o, "            const idx_t i%d = ta * 32 + threadIdx.y + 8 * kk, i%d = tb * 32 + threadIdx.x;\n",
               A, B);
    buf_printf(o, "            if (i%d < na && i%d < nb) {\n", A, B);
    for (int i = 0; i < g->ntload; i++)
        buf_printf(o, "                %s[threadIdx.y + 8 * kk][threadIdx.x] = %s;\n", g->tload[i].name,
                   g->tload[i].expr);
    buf_puts(o, "            }\n"
                "        }\n"
                "        __syncthreads();\n"
                "        #pragma unroll\n"
                "        for (int kk = 0; kk < 4; kk++) { /* phase 2: compute and store, coalesced */\n");
    buf_printf(o, "            const idx_t i%d = ta * 32 + threadIdx.x, i%d = tb * 32 + threadIdx.y + 8 * kk;\n",
               A, B);
    buf_printf(o, "            if (i%d < na && i%d < nb) {\n", A, B);
    text(o, 16, body);
    buf_puts(o, "            }\n"
                "        }\n"
                "        __syncthreads(); /* the tiles are reused by the next iteration */\n"
                "    }\n");
}

/* The passes over one row, appended to row at indentation ind.  Looped:
 * each pass strides the row.  Persistent (items > 0): each thread takes
 * `items` elements of the row, fully unrolled, and what it loads in one
 * pass stays in registers (pc arrays) for the next, so the row is read
 * from memory once. */
static void passes(cg *g, tc_buf *row, int ind, bool columns, int items, int vec)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    const char *combine = columns ? "tc_col_reduce"
                          : g->ks->compact ? "tc_block_reduce_ni" : "tc_block_reduce";
    const char *tid = columns ? "threadIdx.y" : "threadIdx.x";
    const char *nth = columns ? "blockDim.y" : "blockDim.x";
    g->persist = items;
    g->npcache = 0;
    g->vrow = vec > 1;
    g->vlast = k->rank - 1;
    g->nvalign = 0;
    for (int p = 0; p <= ks->nphases; p++) {
        reset_bufs(g);
        g->phase = p;
        g->vec = vec;
        g->nvload = 0; /* vector temporaries live in one pass's loop */
        tc_buf decl;
        buf_init(&decl, g->a);
        bool last = p == ks->nphases;
        if (!last) {
            for (int e = 0; e < vec; e++) {
                g->vk = e;
                accumulate_at(g, p, e == 0 ? &decl : NULL, ind, "r", e, true);
            }
        }
        /* element-level stores: in the epilogue pass of a rows kernel, in
         * the first pass of a columns kernel (they need no reduction there) */
        bool elem_here = columns ? p == 0 : last;
        bool any_elem = false;
        for (int i = 0; i < k->nstores; i++)
            if (fuse_is_element(k, k->stores[i]) && elem_here) {
                if (vec > 1)
                    vector_store(g, k->stores[i], vec);
                else
                    store(g, T_ELEM, k->stores[i], columns ? "active" : NULL);
                any_elem = true;
            }
        g->vec = 1;
        const char *body = buf_str(&g->body);
        cg_forget(g, T_ELEM);
        /* row-level stores after the last pass */
        tc_buf rstores;
        buf_init(&rstores, g->a);
        if (last) {
            tc_buf saved = g->body;
            buf_init(&g->body, g->a);
            for (int i = 0; i < k->nstores; i++)
                if (!fuse_is_element(k, k->stores[i]))
                    store(g, T_ELEM, k->stores[i], NULL);
            rstores = g->body;
            g->body = saved;
        }
        cg_forget(g, T_ELEM);
        text(row, ind, buf_str(&g->rpre));
        text(row, 0, buf_str(&decl));
        if (!last || any_elem) {
            if (items) {
                cg_loop(g, "r", dim_const(g->c, (int64_t)items * 1024 * vec), NULL);
                buf_printf(row, "%*s#pragma unroll\n", ind, "");
                buf_printf(row, "%*sfor (int j = 0; j < %d; j++) {\n", ind, "", items);
                if (vec > 1) /* len is a multiple of vec here: a vector is all in or all out */
                    buf_printf(row, "%*sconst idx_t r = (j * blockDim.x + %s) * %d;\n", ind + 4, "", tid, vec);
                else
                    buf_printf(row, "%*sconst idx_t r = j * blockDim.x + %s;\n", ind + 4, "", tid);
                buf_printf(row, "%*sif (r < len) {\n", ind + 4, "");
                decompose(g, row, ind + 8, "r", k->mask);
                text(row, ind + 8, body);
                buf_printf(row, "%*s}\n", ind + 4, "");
            } else {
                /* r reaches len - 1 + a block's threads (at most 1024): a
                 * limit of its own, so the hot loop keeps its plain step */
                const tc_dim *c1024 = dim_const(g->c, 1024);
                cg_loop(g, "r", ks->rowlen, c1024);
                cg_limit(g, dim_add(g->c, ks->rowlen, c1024));
                buf_printf(row, "%*sfor (idx_t r = %s; r < len; r += %s) {\n", ind, "", tid, nth);
                decompose(g, row, ind + 4, "r", k->mask);
                text(row, ind + 4, body);
            }
            buf_printf(row, "%*s}\n", ind, "");
        }
        if (!last)
            finish_pass(g, p, row, ind, combine);
        if (rstores.len) {
            buf_printf(row, "%*sif (%s == 0%s) {\n", ind, "", tid, columns ? " && active" : "");
            text(row, ind + 4, buf_str(&rstores));
            buf_printf(row, "%*s}\n", ind, "");
        }
    }
    g->persist = 0;
    g->vrow = false;
}

/* ROWS and COLUMNS: a loop over rows (kept elements), passes over each. */
static void rows(cg *g, tc_buf *o, bool columns)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    g->elemvars = k->mask;
    g->rowvars = all_axes(k) & ~k->mask;
    const char *nrows = cg_index(g, ks->rows), *len = cg_index(g, ks->rowlen);
    tc_buf row;
    buf_init(&row, g->a);
    int items = columns ? 0 : ks->items, vec = columns ? 1 : ks->vec;
    int64_t clen;
    bool fits = items && vec == 1 && dim_is_const(ks->rowlen, &clen) &&
                clen <= (int64_t)items * ks->block[0];
    if (items && !fits) {
        /* both: registers when the row fits (with vector loads: when the
         * row is a whole number of aligned vectors), a loop otherwise */
        tc_buf pers, loop;
        buf_init(&pers, g->a);
        buf_init(&loop, g->a);
        passes(g, &pers, 12, columns, items, vec);
        int nalign = g->nvalign;
        const char **align = g->valign;
        g->valign = NULL;
        g->nvalign = g->capvalign = 0;
        cg_forget(g, T_ROW); /* the other branch cannot see these */
        passes(g, &loop, 12, columns, 0, 1);
        buf_printf(&row, "        if (len <= %d * blockDim.x", items * vec);
        if (vec > 1)
            buf_printf(&row, " && len %% %d == 0", vec);
        for (int i = 0; i < nalign; i++)
            buf_printf(&row, " &&\n            %s", align[i]);
        buf_puts(&row, ") { /* the row fits in registers: read it once */\n");
        buf_puts(&row, buf_str(&pers));
        buf_puts(&row, "        } else {\n");
        buf_puts(&row, buf_str(&loop));
        buf_puts(&row, "        }\n");
    } else {
        passes(g, &row, 8, columns, fits ? items : 0, 1);
    }
    text(o, 4, buf_str(&g->kpre));
    buf_printf(o, "    const idx_t rows = %s, len = %s;\n", nrows, len);
    /* the row loops saturate at rows (plan_verify): row += gridDim.x
     * would wrap past 2^31 once rows > 2^30 */
    if (columns) {
        const tc_dim *r64 = dim_add(g->c, ks->rows, dim_const(g->c, 64));
        cg_loop(g, "cb", ks->rows, NULL);
        cg_loop(g, "cb + threadIdx.x", ks->rows, dim_const(g->c, 32));
        cg_limit(g, r64);
        buf_puts(o, "    const idx_t step_ = tc_upto((long long)gridDim.x * blockDim.x, rows);\n"
                    "    for (idx_t cb = tc_upto((long long)blockIdx.x * blockDim.x, rows); cb < rows;\n"
                    "         cb = rows - cb > step_ ? cb + step_ : rows) {\n"
                    "        const bool active = threadIdx.x < rows - cb;\n"
                    "        /* idle threads work on the last column so every load stays in bounds */\n"
                    "        const idx_t row = active ? cb + threadIdx.x : rows - 1;\n");
    } else {
        cg_loop(g, "row", ks->rows, NULL);
        cg_limit(g, ks->rows); /* at most the domain's size, which dim_nonneg cannot see */
        buf_puts(o, "    for (idx_t row = blockIdx.x; row < rows; row = rows - row > (idx_t)gridDim.x ? row + gridDim.x : rows) {\n");
    }
    decompose(g, o, 8, "row", all_axes(k) & ~k->mask);
    buf_puts(o, buf_str(&row));
    buf_puts(o, "    }\n");
}

/* Split column reductions: after writing its partials, a block takes a
 * ticket; only the last of the S slices of its column group goes on (to
 * combine them), after a fence so it sees every other slice's partials. */
static void last_block_only(tc_buf *o, int S)
{
    buf_puts(o, "    __shared__ bool last_block;\n"
                "    __threadfence();\n"
                "    __syncthreads();\n"
                "    if (threadIdx.x == 0 && threadIdx.y == 0)\n");
    buf_printf(o, "        last_block = atomicAdd(ticket, 1u) == %du;\n", S - 1);
    buf_puts(o, "    __syncthreads();\n"
                "    if (!last_block)\n"
                "        return;\n"
                "    __threadfence();\n");
}

/* COLUMNS with the reduced range split in ks->split slices: block b takes
 * column group b / split and slice b % split, writes one partial per
 * column, and the last block of a column group to finish combines them in
 * slice order and stores (a ticket per group in the workspace, reset by
 * that block).  Workspace: 16 bytes of ticket per group, then per
 * reduction split * rows partials of 16 bytes (a region per reduction, addressed in bytes: a
 * 4-byte partial indexed as its own type would overlap the previous reduction's region). */
/* The index variables of a split column kernel (CV columns a thread) and
 * the limits that bound them: a slice's end (lo + chunk, at most len + S),
 * the reduced loop (r += blockDim.y), a thread's columns (c0 + e, up to a
 * column group past rows) and the partials (reduction j, slice, column). */
static void split_loops(cg *g, int CV)
{
    const ksched *ks = g->ks;
    tc_dimctx *c = g->c;
    cg_loop(g, "lo + chunk", ks->rowlen, dim_const(c, ks->split));
    cg_loop(g, "r", ks->rowlen, dim_const(c, ks->block[1]));
    cg_limit(g, dim_add(c, ks->rowlen, dim_const(c, 1024)));
    const tc_dim *cols = dim_const(c, (int64_t)2 * ks->block[0] * CV);
    cg_loop(g, CV > 1 ? "c0 + e" : "cb + threadIdx.x", ks->rows, cols);
    cg_limit(g, dim_add(c, ks->rows, cols));
    const tc_dim *parts = dim_mul(c, ks->rows, dim_const(c, (int64_t)ks->split * g->k->nreds));
    cg_loop(g, "partial", parts, NULL);
    cg_limit(g, parts);
}

static void columns_split(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    int S = ks->split;
    split_loops(g, 1);
    g->elemvars = k->mask;
    g->rowvars = all_axes(k) & ~k->mask;
    reset_bufs(g);
    g->phase = 0;
    tc_buf decl;
    buf_init(&decl, g->a);
    accumulate(g, 0, &decl, 4, "r");
    for (int i = 0; i < k->nstores; i++)
        if (fuse_is_element(k, k->stores[i]))
            store(g, T_ELEM, k->stores[i], "active");
    const char *body = buf_str(&g->body);
    const char *pass_rpre = buf_str(&g->rpre);
    cg_forget(g, T_ELEM);
    tc_buf post;
    buf_init(&post, g->a);
    finish_pass(g, 0, &post, 4, NULL);
    g->phase = 1;
    reset_bufs(g);
    for (int i = 0; i < k->nstores; i++)
        if (!fuse_is_element(k, k->stores[i]))
            store(g, T_ELEM, k->stores[i], NULL);

    text(o, 4, buf_str(&g->kpre));
    buf_printf(o, "    const idx_t rows = %s, len = %s;\n", cg_index(g, ks->rows), cg_index(g, ks->rowlen));
    buf_printf(o, "    const idx_t group = blockIdx.x / %d, slice = blockIdx.x %% %d;\n", S, S);
    buf_printf(o, "    const idx_t chunk = (len + %d - 1) / %d, lo = slice * chunk;\n", S, S);
    buf_puts(o, "    const idx_t hi = lo + chunk < len ? lo + chunk : len;\n"
                "    const idx_t cb = group * blockDim.x;\n"
                "    const bool active = cb + threadIdx.x < rows;\n"
                "    /* idle threads work on the last column so every load stays in bounds */\n"
                "    const idx_t row = active ? cb + threadIdx.x : rows - 1;\n");
    decompose(g, o, 4, "row", all_axes(k) & ~k->mask);
    text(o, 4, pass_rpre);
    text(o, 0, buf_str(&decl));
    buf_puts(o, "    for (idx_t r = lo + threadIdx.y; r < hi; r += blockDim.y) {\n");
    decompose(g, o, 8, "r", k->mask);
    text(o, 8, body);
    buf_puts(o, "    }\n");
    buf_puts(o, "    const idx_t groups = (rows + blockDim.x - 1) / blockDim.x;\n"
                "    unsigned *ticket = (unsigned *)ws + 4 * group;\n");
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        const char *at = acc_type(g, r);
        buf_printf(o, "    acc%d = tc_col_reduce(acc%d, %s(), (%s *)tc_smem);\n", rno(g, r), rno(g, r), op_name(r), at);
        buf_printf(o, "    %s *part%d = (%s *)((char *)ws + 16 * groups + (idx_t)%d * %d * 16 * rows);\n",
                   at, rno(g, r), at, j, S);
        buf_printf(o, "    if (threadIdx.y == 0 && active)\n        part%d[slice * rows + row] = acc%d;\n",
                   rno(g, r), rno(g, r));
    }
    last_block_only(o, S);
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        buf_printf(o, "    acc%d = %s;\n", rno(g, r), acc_init(g, r));
        buf_printf(o, "    for (int s = 0; s < %d; s++)\n        acc%d = %s()(acc%d, tc_ldcg(part%d + s * rows + row));\n",
                   S, rno(g, r), op_name(r), rno(g, r), rno(g, r));
    }
    /* leave the workspace zero, as the launch plan promises */
    buf_puts(o, "    __syncthreads();\n"
                "    if (threadIdx.y == 0 && active)\n"
                "        for (int s = 0; s < ");
    buf_printf(o, "%d; s++) {\n", S);
    for (int j = 0; j < k->nreds; j++)
        buf_printf(o, "            part%d[s * rows + row] = %s;\n", rno(g, k->reds[j]), acc_zero(g, k->reds[j]));
    buf_puts(o, "        }\n");
    buf_puts(o, buf_str(&post));
    text(o, 4, buf_str(&g->rpre));
    buf_puts(o, "    if (threadIdx.y == 0 && active) {\n");
    text(o, 8, buf_str(&g->body));
    buf_puts(o, "    }\n"
                "    if (threadIdx.x == 0 && threadIdx.y == 0)\n"
                "        *ticket = 0; /* ready for the next launch */\n");
}

/* COLUMNS split, CV = ks->vec consecutive kept elements (columns) a thread:
 * one 16-byte load covers them where the reads are contiguous along the
 * last (kept) axis and aligned, tested once per thread; else each column
 * by scalar loads.  Accumulators are arrays, one slot per column; the rest
 * is columns_split's, per column.  Only kernels without element-level
 * stores (sched.c). */
static void columns_split_vec(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    int S = ks->split, CV = ks->vec, rank = k->rank;
    unsigned kept = all_axes(k) & ~k->mask;
    split_loops(g, CV);
    g->phase = 0;
    /* the vector body: reduced variables vary, kept ones fixed per thread */
    g->elemvars = k->mask;
    g->rowvars = kept;
    vector_begin(g, CV, rank - 1);
    g->vcols = true;
    for (int e = 0; e < CV; e++) {
        g->vk = e;
        g->acc_at = arena_printf(g->a, "%d", e);
        accumulate_at(g, 0, NULL, 0, "r", e, false); /* e: a column, not a position */
    }
    g->vcols = false;
    g->vec = 1;
    const char *vbody = buf_str(&g->body), *vrpre = buf_str(&g->rpre);
    int nalign = g->nvalign;
    const char **align = g->valign;
    g->valign = NULL;
    g->nvalign = g->capvalign = 0;
    cg_forget(g, T_ROW);
    /* the scalar body: one column (e) at a time, everything inside the loop */
    reset_bufs(g);
    g->elemvars = all_axes(k);
    g->rowvars = 0;
    g->acc_at = "e";
    accumulate(g, 0, NULL, 0, "r");
    const char *sbody = buf_str(&g->body), *srpre = buf_str(&g->rpre);
    cg_forget(g, T_ROW);
    /* the results and the final stores, per column */
    g->elemvars = k->mask;
    g->rowvars = kept;
    tc_buf post;
    buf_init(&post, g->a);
    finish_pass(g, 0, &post, 8, NULL);
    g->acc_at = NULL;
    g->phase = 1;
    reset_bufs(g);
    for (int i = 0; i < k->nstores; i++)
        store(g, T_ELEM, k->stores[i], NULL);

    text(o, 4, buf_str(&g->kpre));
    buf_printf(o, "    const idx_t rows = %s, len = %s;\n", cg_index(g, ks->rows), cg_index(g, ks->rowlen));
    buf_printf(o, "    const idx_t group = blockIdx.x / %d, slice = blockIdx.x %% %d;\n", S, S);
    buf_printf(o, "    const idx_t chunk = (len + %d - 1) / %d, lo = slice * chunk;\n", S, S);
    buf_puts(o, "    const idx_t hi = lo + chunk < len ? lo + chunk : len;\n");
    buf_printf(o, "    const idx_t c0 = (group * blockDim.x + threadIdx.x) * %d; /* this thread's first column */\n",
               CV);
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        buf_printf(o, "    %s acc%d[%d];\n", acc_type(g, r), rno(g, r), CV);
        buf_printf(o, "    #pragma unroll\n    for (int e = 0; e < %d; e++)\n        acc%d[e] = %s;\n", CV, rno(g, r),
                   acc_init(g, r));
    }
    buf_puts(o, "    {\n        const idx_t row = c0;\n");
    decompose(g, o, 8, "row", kept);
    buf_printf(o, "        if (c0 + %d <= rows", CV);
    if (__builtin_popcount(kept) > 1) /* the vector stays in one row of the last dim */
        buf_printf(o, " && i%d + %d <= %s", rank - 1, CV, cg_index(g, k->dom[rank - 1]));
    for (int i = 0; i < nalign; i++)
        buf_printf(o, " &&\n            %s", align[i]);
    buf_puts(o, ") {\n");
    text(o, 12, vrpre);
    buf_puts(o, "            #pragma unroll 4\n"
                "            for (idx_t r = lo + threadIdx.y; r < hi; r += blockDim.y) {\n");
    decompose(g, o, 16, "r", k->mask);
    text(o, 16, vbody);
    buf_puts(o, "            }\n"
                "        } else {\n"
                "            for (idx_t r = lo + threadIdx.y; r < hi; r += blockDim.y) {\n");
    decompose(g, o, 16, "r", k->mask);
    buf_printf(o, "                #pragma unroll\n"
                  "                for (int e = 0; e < %d; e++) {\n"
                  "                    /* columns past the end read the last one, so loads stay in bounds */\n"
                  "                    const idx_t row = c0 + e < rows ? c0 + e : rows - 1;\n", CV);
    decompose(g, o, 20, "row", kept);
    text(o, 20, srpre);
    text(o, 20, sbody);
    buf_puts(o, "                }\n"
                "            }\n"
                "        }\n"
                "    }\n");
    buf_printf(o, "    const idx_t groups = (rows + blockDim.x * %d - 1) / (blockDim.x * %d);\n", CV, CV);
    buf_puts(o, "    unsigned *ticket = (unsigned *)ws + 4 * group;\n");
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        const char *at = acc_type(g, r);
        buf_printf(o, "    %s *part%d = (%s *)((char *)ws + 16 * groups + (idx_t)%d * %d * 16 * rows);\n",
                   at, rno(g, r), at, j, S);
    }
    buf_printf(o, "    #pragma unroll\n    for (int e = 0; e < %d; e++) {\n", CV);
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        buf_printf(o, "        acc%d[e] = tc_col_reduce(acc%d[e], %s(), (%s *)tc_smem);\n", rno(g, r), rno(g, r),
                   op_name(r), acc_type(g, r));
        buf_printf(o, "        if (threadIdx.y == 0 && c0 + e < rows)\n"
                      "            part%d[slice * rows + c0 + e] = acc%d[e];\n", rno(g, r), rno(g, r));
    }
    buf_puts(o, "    }\n");
    last_block_only(o, S);
    buf_printf(o, "    #pragma unroll\n    for (int e = 0; e < %d; e++) {\n", CV);
    buf_puts(o, "        const idx_t row = c0 + e < rows ? c0 + e : rows - 1;\n");
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        buf_printf(o, "        acc%d[e] = %s;\n", rno(g, r), acc_init(g, r));
        buf_printf(o, "        for (int s = 0; s < %d; s++)\n"
                      "            acc%d[e] = %s()(acc%d[e], tc_ldcg(part%d + s * rows + row));\n",
                   S, rno(g, r), op_name(r), rno(g, r), rno(g, r));
    }
    buf_puts(o, "    }\n");
    /* leave the workspace zero, as the launch plan promises */
    buf_printf(o, "    __syncthreads();\n"
                  "    if (threadIdx.y == 0)\n"
                  "        for (int e = 0; e < %d && c0 + e < rows; e++)\n"
                  "            for (int s = 0; s < %d; s++) {\n", CV, S);
    for (int j = 0; j < k->nreds; j++)
        buf_printf(o, "                part%d[s * rows + c0 + e] = %s;\n", rno(g, k->reds[j]),
                   acc_zero(g, k->reds[j]));
    buf_puts(o, "            }\n");
    buf_printf(o, "    #pragma unroll\n    for (int e = 0; e < %d; e++) {\n", CV);
    buf_puts(o, "        const bool active = c0 + e < rows;\n"
                "        const idx_t row = active ? c0 + e : rows - 1;\n");
    decompose(g, o, 8, "row", kept);
    buf_puts(o, buf_str(&post));
    text(o, 8, buf_str(&g->rpre));
    buf_puts(o, "        if (threadIdx.y == 0 && active) {\n");
    text(o, 12, buf_str(&g->body));
    buf_puts(o, "        }\n"
                "    }\n"
                "    if (threadIdx.x == 0 && threadIdx.y == 0)\n"
                "        *ticket = 0; /* ready for the next launch */\n");
}

static void full(cg *g, tc_buf *o)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    int vec = ks->vec, rank = k->rank;
    g->elemvars = all_axes(k);
    g->rowvars = 0;
    reset_bufs(g);
    g->phase = 0;
    tc_buf decl;
    buf_init(&decl, g->a);
    accumulate(g, 0, &decl, 4, "r");
    for (int i = 0; i < k->nstores; i++)
        if (fuse_is_element(k, k->stores[i]) && k->stores[i]->kind != LK_REDUCE)
            store(g, T_ELEM, k->stores[i], NULL);
    const char *body = buf_str(&g->body);
    cg_forget(g, T_ELEM);
    const char *vbody = NULL;
    if (vec > 1) {
        /* VEC elements per step, from vector loads where contiguous and aligned */
        vector_begin(g, vec, rank - 1);
        for (int e = 0; e < vec; e++) {
            g->vk = e;
            accumulate_at(g, 0, NULL, 0, "base", e, true);
        }
        vbody = buf_str(&g->body);
        g->vec = 1;
        cg_forget(g, T_ELEM);
    }

    /* the results, then the row-level stores, generated before any text so
     * kernel-level statements they need land in kpre in time */
    tc_buf post;
    buf_init(&post, g->a);
    finish_pass(g, 0, &post, 4, NULL);
    g->phase = 1;
    reset_bufs(g);
    for (int i = 0; i < k->nstores; i++)
        if (!fuse_is_element(k, k->stores[i]) || k->stores[i]->kind == LK_REDUCE)
            store(g, T_ELEM, k->stores[i], NULL);

    text(o, 4, buf_str(&g->kpre));
    buf_printf(o, "    const idx_t len = %s;\n", cg_index(g, ks->rowlen));
    text(o, 0, buf_str(&decl));
    grid_stride(g, o, "len", ks->rowlen, vbody ? vec : 1, vbody, body, true, NULL);
    /* each block's partial, then the last block to arrive combines them */
    buf_puts(o, "    unsigned *ticket = (unsigned *)ws;\n");
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        const char *at = acc_type(g, r);
        buf_printf(o, "    acc%d = %s(acc%d, %s(), (%s *)tc_smem);\n", rno(g, r),
                   ks->compact ? "tc_block_reduce_ni" : "tc_block_reduce", rno(g, r), op_name(r), at);
        buf_printf(o, "    %s *part%d = (%s *)((char *)ws + 16 + %d * %lld);\n", at, rno(g, r), at, j,
                   (long long)ks->grid_cap * 16);
        buf_printf(o, "    if (threadIdx.x == 0)\n        part%d[blockIdx.x] = acc%d;\n", rno(g, r), rno(g, r));
    }
    buf_puts(o, "    __shared__ bool last_block;\n"
                "    __threadfence();\n"
                "    if (threadIdx.x == 0)\n"
                "        last_block = atomicAdd(ticket, 1u) == gridDim.x - 1;\n"
                "    __syncthreads();\n"
                "    if (!last_block)\n"
                "        return;\n"
                "    __threadfence();\n");
    for (int j = 0; j < k->nreds; j++) {
        const lnode *r = k->reds[j];
        buf_printf(o, "    acc%d = tc_partials(part%d, gridDim.x, %s, %s(), (%s *)tc_smem);\n", rno(g, r),
                   rno(g, r), acc_init(g, r), op_name(r), acc_type(g, r));
    }
    buf_puts(o, buf_str(&post));
    text(o, 4, buf_str(&g->rpre));
    buf_puts(o, "    if (threadIdx.x == 0) {\n");
    text(o, 8, buf_str(&g->body));
    buf_puts(o, "        *ticket = 0; /* ready for the next launch */\n    }\n");
}

static bool *redep_of(cg *g)
{
    int n = g->l->nnodes > 0 ? g->l->nnodes : 1;
    bool *r = ARENA_ARRAY(g->a, bool, n);
    for (int i = 0; i < g->l->nnodes; i++) {
        const lnode *v = g->l->nodes[i];
        bool own = g->f->kernel_of[i] == g->k->id;
        if (v->kind == LK_REDUCE && own) {
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

void cg_kernel(cg *g, tc_buf *out)
{
    const fkernel *k = g->k;
    g->redep = redep_of(g);
    g->tile = g->ks->kind == SCH_POINTWISE ? g->ks->tile : -1;
    g->ncache = 0;
    g->nrcp = 0;
    g->nsyms = 0;
    g->ntemp = 0;
    buf_init(&g->kpre, g->a);
    g->kind = 0;
    int nb = g->bufs->plan->nbufs;
    g->used_buf = ARENA_ARRAY(g->a, bool, nb > 0 ? nb : 1);
    g->bufpos = ARENA_ARRAY(g->a, int, nb > 0 ? nb : 1);
    g->bufseq = ARENA_ARRAY(g->a, int, nb > 0 ? nb : 1);
    g->nbufseq = 0;
    g->used_param = ARENA_ARRAY(g->a, bool, g->l->g->nparams > 0 ? g->l->g->nparams : 1);
    g->syms = ARENA_ARRAY(g->a, const char *, 64);
    g->acc = ARENA_ARRAY(g->a, const char *, g->l->nnodes > 0 ? g->l->nnodes : 1);
    g->phase_of = ARENA_ARRAY(g->a, int, g->l->nnodes > 0 ? g->l->nnodes : 1);
    for (int j = 0; j < k->nreds; j++)
        g->phase_of[k->reds[j]->id] = g->ks->phase[j];

    tc_buf body;
    buf_init(&body, g->a);
    switch (g->ks->kind) {
    case SCH_POINTWISE:
        if (g->tile >= 0)
            tiled(g, &body);
        else
            pointwise(g, &body);
        break;
    case SCH_ROWS: rows(g, &body, false); break;
    case SCH_COLUMNS:
        if (g->ks->split && g->ks->vec > 1)
            columns_split_vec(g, &body);
        else if (g->ks->split)
            columns_split(g, &body);
        else
            rows(g, &body, true);
        break;
    case SCH_FULL: full(g, &body); break;
    default: return;
    }

    const ksched *ks = g->ks;
    int threads = ks->block[0] * ks->block[1] * ks->block[2];
    /* rows kernels: at most 40 registers a thread (TC_ROWS_BOUNDS), so six
     * 256-thread blocks fit an SM where 46 to 54 registers allowed four
     * (softmax 16384 x 4096 on an H200: 168 us to 160; 32768 x 1024: 82 to
     * 78; layernorm, rmsnorm unchanged; a cap of 32 spilled in them) */
    if (ks->kind == SCH_ROWS)
        buf_printf(out, "extern \"C\" __global__ void TC_ROWS_BOUNDS %s(", g->kname);
    else
        buf_printf(out, "extern \"C\" __global__ void __launch_bounds__(%d) %s(", threads, g->kname);
    bool first = true;
    tc_plan *p = g->bufs->plan;
    if (ks->foreach) {
        int nt = fe_count(g);
        g->fe_cap = fe_cap(g, nt);
        buf_printf(out, "\n    const __grid_constant__ tc_fe_table<%d, %d> fe", nt, g->fe_cap);
        first = false;
    }
    int *order = ARENA_ARRAY(g->a, int, nb > 0 ? nb : 1);
    int nused = ks->foreach ? 0 : cg_kernel_bufs(g, order);
    for (int j = 0; j < nused; j++) {
        int i = order[j];
        bool w = is_written(g, i);
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
    if (ks->kind == SCH_FULL || (ks->kind == SCH_COLUMNS && ks->split))
        buf_printf(out, "%s\n    void *__restrict__ ws", first ? "" : ",");
    buf_puts(out, ")\n{\n");
    if (g->wide && !g->idx64)
        buf_puts(out, "    /* an index divides and multiplies back (a reshape of a permuted view):\n"
                      "     * its terms can pass 2^31 even when every size fits, so 64-bit here */\n"
                      "    typedef long long idx_t;\n");
    if (ks->kind != SCH_POINTWISE)
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
