/* plan_check.c - what the runtime may assume of a launch plan (plan.h),
 * checked when the plan is made instead of when it is launched:
 *
 *   - buffers: a parameter buffer names a tensor parameter of the function,
 *     once; an output buffer names an output, each output exactly once; an
 *     alias is a parameter buffer; a temporary's life [first, last] lies
 *     within the steps and its slot within nslots;
 *   - lives and slots: two temporaries that share a slot never live at the
 *     same step;
 *   - written before read: every step that uses a temporary lies within its
 *     life, the step that starts it writes it (a kernel parameter the
 *     signature marks written, a matmul's C, a copy's destination), no step
 *     reads it there first; every output is written by some step;
 *   - arguments: each kernel step launches a kernel of the plan
 *     (plan->kernels, whose signatures codegen recorded as it wrote them)
 *     and passes exactly what the signature declares, place by place: the
 *     kind, a buffer of the parameter's dtype, a scalar parameter of the
 *     function passed as its C type; a workspace exactly when the step has
 *     its size, the group table exactly when the step has its buffers;
 *   - launch shapes: block dims at least 1, grid dims non-negative wherever
 *     the buffers' shapes are (sched_nonneg_where), the grid cap at least 1.
 *
 * plan_verify (plan.c) proves the index bounds; this checks the rest.
 */
#include "codegen/plan_check.h"

#include <string.h>

static void bad_step(const tc_plan *p, int s, tc_diag *d, const char *what)
{
    const pstep *st = &p->steps[s];
    diag_error(d, TC_ERR_INTERNAL, (tc_loc){0}, "plan of %s: step %d%s%s: %s", p->fn, s,
               st->kind == PSTEP_KERNEL && st->kernel ? " " : "",
               st->kind == PSTEP_KERNEL && st->kernel ? st->kernel : "", what);
}

static void bad_buf(const tc_plan *p, int b, tc_diag *d, const char *what)
{
    diag_error(d, TC_ERR_INTERNAL, (tc_loc){0}, "plan of %s: buffer %d %s: %s", p->fn, b,
               p->bufs[b].name ? p->bufs[b].name : "?", what);
}

static bool buf_ok(const tc_plan *p, int b)
{
    return b >= 0 && b < p->nbufs;
}

/* The C type a scalar parameter of dtype t is passed as (plan.h). */
static tc_dtype passed_as(tc_dtype t)
{
    return (t == TC_F16 || t == TC_BF16) ? TC_F32 : t;
}

static void check_bufs(const tc_plan *p, const gfn *g, tc_arena *a, tc_diag *d)
{
    int *outs = ARENA_ARRAY(a, int, g->noutputs + 1);
    int *params = ARENA_ARRAY(a, int, g->nparams + 1);
    for (int b = 0; b < p->nbufs; b++) {
        const pbuf *x = &p->bufs[b];
        if (!x->name || !x->numel)
            bad_buf(p, b, d, "no name or element count");
        switch (x->kind) {
        case PBUF_PARAM:
            if (x->index < 0 || x->index >= g->nparams || g->params[x->index].scalar)
                bad_buf(p, b, d, "not a tensor parameter of the function");
            if (params[x->index]++)
                bad_buf(p, b, d, "a second buffer for one parameter");
            break;
        case PBUF_OUTPUT:
            if (x->index < 0 || x->index >= g->noutputs)
                bad_buf(p, b, d, "not an output of the function");
            outs[x->index]++;
            if (x->alias != -1 && (!buf_ok(p, x->alias) || p->bufs[x->alias].kind != PBUF_PARAM))
                bad_buf(p, b, d, "written in place over a buffer that is not a parameter");
            break;
        case PBUF_TEMP:
            if (x->first < 0 || x->first > x->last || x->last >= p->nsteps)
                bad_buf(p, b, d, "its life is not within the steps");
            if (x->slot < 0 || x->slot >= p->nslots)
                bad_buf(p, b, d, "its slot is not within the plan's slots");
            break;
        default:
            bad_buf(p, b, d, "an unknown kind");
        }
    }
    for (int o = 0; o < g->noutputs; o++)
        if (outs[o] != 1)
            diag_error(d, TC_ERR_INTERNAL, (tc_loc){0}, "plan of %s: output %d has %d buffers",
                       p->fn, o, outs[o]);
    /* lives and slots: a slot holds one temporary at a time */
    for (int b = 0; b < p->nbufs; b++)
        for (int c = b + 1; c < p->nbufs; c++) {
            const pbuf *x = &p->bufs[b], *y = &p->bufs[c];
            if (x->kind == PBUF_TEMP && y->kind == PBUF_TEMP && x->slot == y->slot &&
                x->first <= y->last && y->first <= x->last)
                bad_buf(p, b, d, "shares its slot with a temporary that lives at the same step");
        }
}

/* One use of buffer b at step s; writes: the step may write it. */
static void use(const tc_plan *p, int s, int b, bool writes, bool *written, tc_diag *d)
{
    if (!buf_ok(p, b))
        bad_step(p, s, d, "uses a buffer that does not exist");
    const pbuf *x = &p->bufs[b];
    if (x->kind == PBUF_TEMP) {
        if (s < x->first || s > x->last)
            bad_step(p, s, d, "uses a temporary outside its life");
        if (!writes && s == x->first)
            bad_step(p, s, d, "reads a temporary before any step writes it");
    }
    if (writes)
        written[b] = true;
}

/* Every buffer's shape dims: what is non-negative once the sizes bind. */
static const tc_dim *const *shapes(const tc_plan *p, tc_arena *a, int *n)
{
    int m = 0;
    for (int b = 0; b < p->nbufs; b++)
        m += p->bufs[b].rank;
    const tc_dim **v = ARENA_ARRAY(a, const tc_dim *, m + 1);
    *n = 0;
    for (int b = 0; b < p->nbufs; b++)
        for (int i = 0; i < p->bufs[b].rank; i++)
            v[(*n)++] = p->bufs[b].shape[i];
    return v;
}

static void check_kernel(const tc_plan *p, int s, const gfn *g, bool *written,
                         const tc_dim *const *dom, int ndom, tc_arena *a, tc_diag *d)
{
    const pstep *st = &p->steps[s];
    if (!st->kernel)
        bad_step(p, s, d, "launches no kernel");
    if (st->block[0] < 1 || st->block[1] < 1 || st->block[2] < 1 || st->grid_cap < 1)
        bad_step(p, s, d, "a block dim or the grid cap below 1");
    if (st->shmem < 0 || st->shmem > 227 * 1024) /* an sm_90 block's most */
        bad_step(p, s, d, "dynamic shared memory below 0 or past 227 KB");
    for (int i = 0; i < 3; i++)
        if (!st->grid[i] || !sched_nonneg_where(st->grid[i], dom, ndom))
            bad_step(p, s, d, "a grid dim that can be negative");
    if (st->kidx < 0 || st->kidx >= p->nkernels || !p->kernels[st->kidx].name ||
        strcmp(p->kernels[st->kidx].name, st->kernel) != 0)
        bad_step(p, s, d, "launches a kernel the plan does not list");
    const pkernel *kn = &p->kernels[st->kidx];
    if (st->nargs != kn->nparams)
        bad_step(p, s, d, arena_printf(a, "passes %d arguments to a kernel of %d parameters",
                                       st->nargs, kn->nparams));
    int ngroups = 0, nws = 0;
    for (int i = 0; i < st->nargs; i++) {
        const parg *ar = &st->args[i];
        const pparam *pp = &kn->params[i];
        if (ar->kind != pp->kind)
            bad_step(p, s, d, arena_printf(a, "argument %d is not of the kind its parameter is", i));
        switch (ar->kind) {
        case PARG_BUF:
            if (buf_ok(p, ar->buf) && p->bufs[ar->buf].dtype != pp->dtype)
                bad_step(p, s, d, arena_printf(a, "argument %d is a buffer of another dtype than "
                                               "its parameter's", i));
            /* reads first, then writes: a kernel may read what it writes (in place) */
            use(p, s, ar->buf, pp->written, written, d);
            break;
        case PARG_DIM:
            if (!ar->dim)
                bad_step(p, s, d, "a size argument without a size");
            break;
        case PARG_SCALAR:
            if (ar->param < 0 || ar->param >= g->nparams || !g->params[ar->param].scalar)
                bad_step(p, s, d, "a scalar argument that is not a scalar parameter");
            else if (ar->dtype != passed_as(g->params[ar->param].dtype) || ar->dtype != pp->dtype)
                bad_step(p, s, d, "a scalar passed as another C type than its dtype's");
            break;
        case PARG_WORKSPACE:
            nws++;
            break;
        case PARG_GROUPS:
            ngroups++;
            break;
        default:
            bad_step(p, s, d, "an argument of an unknown kind");
        }
    }
    if (nws != (st->ws_bytes != NULL) || nws > 1)
        bad_step(p, s, d, "a workspace argument without its size, or a size without it");
    if (ngroups != (st->fe_n > 0) || ngroups > 1)
        bad_step(p, s, d, "a group table without its buffers, or buffers without it");
    for (int k = 0; k < st->fe_n; k++)
        use(p, s, st->fe_bufs[k], true, written, d);
    if (st->fe_n && (st->fe_cap < 1 || st->fe_chunk < 1 || !st->fe_numel))
        bad_step(p, s, d, "a group table that holds no group");
}

void plan_check(const tc_plan *p, const cg_unit *u, const gfn *g, tc_arena *a, tc_diag *d)
{
    (void)u;
    check_bufs(p, g, a, d);
    bool *written = ARENA_ARRAY(a, bool, p->nbufs + 1);
    int ndom;
    const tc_dim *const *dom = shapes(p, a, &ndom);
    for (int s = 0; s < p->nsteps; s++) {
        const pstep *st = &p->steps[s];
        if (st->kind == PSTEP_KERNEL) {
            check_kernel(p, s, g, written, dom, ndom, a, d);
        } else if (st->kind == PSTEP_MATMUL) {
            if (!st->mm.m || !st->mm.n || !st->mm.k || !st->mm.batch)
                bad_step(p, s, d, "a matmul without its sizes");
            use(p, s, st->mm.a, false, written, d);
            use(p, s, st->mm.b, false, written, d);
            use(p, s, st->mm.c, true, written, d);
        } else if (st->kind == PSTEP_COPY) {
            if (!st->copy_bytes)
                bad_step(p, s, d, "a copy without its size");
            use(p, s, st->src, false, written, d);
            use(p, s, st->dst, true, written, d);
        } else {
            bad_step(p, s, d, "an unknown kind");
        }
    }
    for (int b = 0; b < p->nbufs; b++) {
        const pbuf *x = &p->bufs[b];
        if (x->kind == PBUF_OUTPUT && x->alias == -1 && !written[b])
            bad_buf(p, b, d, "an output no step writes");
        if (x->kind == PBUF_OUTPUT && x->alias != -1 && !written[x->alias])
            bad_buf(p, b, d, "an output written in place that no step writes");
    }
}
