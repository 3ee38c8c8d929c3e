/* api_foreach.c - tc_run_foreach: every group's arguments checked as
 * tc_run checks one call's (api_check.h), then one launch over all groups.
 *
 * Host time is the point here: an optimizer step passes hundreds or
 * thousands of tensors, every call.  So: no division and no formatting per
 * tensor (messages are made only on error), the caller's DLTensors are
 * prefetched a group or two ahead (they lie wherever its allocator put
 * them), and the overlap check sorts byte ranges only when they are not
 * already in address order (n log n at worst, one pass usually).
 */
#include "api_check.h"
#include "api_interp.h"
#include "api_run_memo.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *api_not_elementwise(tc_arena *a, const gfn *f)
{
    if (f->elementwise)
        return NULL;
    for (int i = 0; i < f->nparams; i++) {
        const gparam *g = &f->params[i];
        if (!g->scalar && !g->star)
            return arena_printf(a, "parameter '%s' is %s, not [*]", g->name,
                                api_type_text(a, g->dtype, false, g->rank, g->shape));
    }
    for (int i = 0; i < f->nnodes; i++) {
        const gnode *n = f->nodes[i];
        if (!op_elementwise(n->op))
            return arena_printf(a, "'%s' (line %d) is not pointwise", op_table[n->op].name,
                                n->loc.line);
    }
    return "it has no tensor parameter";
}

typedef struct {
    run_job j;
    int ngroups;
    int64_t *numel;         /* per group */
    uint64_t *gparams;      /* ngroups x nparams */
    uint64_t *goutputs;     /* ngroups x noutputs */
    int first;              /* the first group with elements, or -1 */
    int nonempty;           /* groups with elements */
} fe_job;

/* A use's byte range, compact for sorting: the use's index in the low
 * bits of `tag` and whether it is written in bit 0. */
typedef struct {
    uint64_t lo, hi;
    uint32_t tag;
} span;

/* Sort v[0..n) by lo: a bottom-up merge sort that skips merging runs
 * already in order, so lists allocated in order cost one pass. */
static void sort_spans(span *v, span *tmp, int n)
{
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo + w < n; lo += 2 * w) {
            int mid = lo + w, hi = lo + 2 * w < n ? lo + 2 * w : n;
            if (v[mid - 1].lo <= v[mid].lo)
                continue;
            int a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                tmp[k++] = v[a].lo <= v[b].lo ? v[a++] : v[b++];
            while (a < mid)
                tmp[k++] = v[a++];
            while (b < hi)
                tmp[k++] = v[b++];
            memcpy(v + lo, tmp + lo, (size_t)(hi - lo) * sizeof *v);
        }
    }
}

static const char *use_text(run_job *j, const tensor_use *u)
{
    return u->group < 0 ? u->what : arena_printf(j->a, "group %d's %s", u->group, u->what);
}

/* Step 4 over every group: no written tensor overlaps another.  Sorted by
 * address, a range overlaps an earlier one exactly when it starts before
 * the furthest end so far (of the written ones, or of all when it is
 * written itself): n log n, not the n^2 of tc_run's check.  The uses are
 * group by group, nt a group: when they are not in order so, they are
 * sorted list by list (every p, then every g, ...), the other order a
 * model's tensors usually lie in memory, so the merges mostly find runs
 * already in order. */
static bool check_overlaps_sorted(run_job *j, int nt)
{
    int n = 0;
    span *v = arena_alloc_uninit(j->a, sizeof(span) * (size_t)(j->nuses + 1));
    const tensor_use *u = j->uses;
    bool in_order = true; /* group by group already (tensors allocated group by group)? */
    for (int i = 1; i < j->nuses && in_order; i++)
        in_order = u[i - 1].addr <= u[i].addr;
    for (int t = 0; t < (in_order ? 1 : nt); t++)
        for (int i = t; i < j->nuses; i += in_order ? 1 : nt)
            if (u[i].bytes)
                v[n++] = (span){u[i].addr, u[i].addr + u[i].bytes, (uint32_t)i << 1 | u[i].written};
    if (!in_order)
        sort_spans(v, arena_alloc_uninit(j->a, sizeof(span) * (size_t)(n + 1)), n);
    uint64_t far = 0, far_w = 0;  /* the furthest ends so far: any, written */
    int who = -1, who_w = -1;     /* whose */
    for (int k = 0; k < n; k++) {
        bool w = v[k].tag & 1;
        int hit = who_w >= 0 && v[k].lo < far_w ? who_w : w && who >= 0 && v[k].lo < far ? who : -1;
        if (hit >= 0) {
            const tensor_use *a = &u[hit], *b = &u[v[k].tag >> 1];
            return ERR(j, "%s: %s and %s share memory: %s is written, so it may not overlap "
                       "another tensor (an inout parameter updates in place)", j->who,
                       use_text(j, a), use_text(j, b), use_text(j, a->written ? a : b)), false;
        }
        if (who < 0 || v[k].hi > far) {
            far = v[k].hi;
            who = (int)(v[k].tag >> 1);
        }
        if (w && (who_w < 0 || v[k].hi > far_w)) {
            far_w = v[k].hi;
            who_w = (int)(v[k].tag >> 1);
        }
    }
    return true;
}

/* Steps 1 to 4 for tc_run_foreach. */
static void fe_check_body(void *arg)
{
    fe_job *e = arg;
    run_job *j = &e->j;
    const gfn *f = j->f;
    const char *why = api_not_elementwise(j->a, f);
    if (why) {
        ERR(j, "%s: function '%s' cannot run over tensor groups: %s (tc_run_foreach needs every "
            "tensor [*] and every operation pointwise)", j->who, f->name, why);
        return;
    }
    int np = f->nparams, no = f->noutputs, ng = e->ngroups;
    j->scalars = ARENA_ARRAY(j->a, rt_scalar, np + 1);
    j->uses = arena_alloc_uninit(j->a, sizeof(tensor_use) * ((size_t)ng * (size_t)(np + no) + 1));
    e->numel = ARENA_ARRAY(j->a, int64_t, ng + 1);
    e->gparams = ARENA_ARRAY(j->a, uint64_t, (size_t)ng * (size_t)np + 1);
    e->goutputs = ARENA_ARRAY(j->a, uint64_t, (size_t)ng * (size_t)no + 1);
    e->first = -1;
    j->device = -1;
    if (!api_match_slots(j))
        return;

    /* the scalars every group shares, and what each list is, worked out
     * once (the loop below runs for every tensor of every call) */
    const run_labels *L = api_labels(j->p, f);
    struct list {
        const DLTensor *const *ts;
        const char *what, *type;
        tc_dtype dt;
        bool written;
        uint64_t *dst;      /* its address in group 0; stride per group */
        size_t stride;
    } *lists = arena_alloc_uninit(j->a, sizeof(struct list) * (size_t)(j->nslots + 1));
    int nt = 0;
    for (int s = 0; s < j->nslots; s++) {
        bool out = s >= np;
        if (!out && f->params[s].scalar) {
            if (!api_check_scalar(j, s))
                return;
            continue;
        }
        int o = out ? j->slot_output[s] : -1;
        const char *what = out ? L->owhat[o] : L->pwhat[s];
        if (j->given[s] < 0) {
            ERR(j, "%s: %s of function '%s' is missing: pass tc_arg_tensors(\"%s\", list) with "
                "one tensor per group", j->who, what, f->name, api_slot_name(j, s));
            return;
        }
        const tc_arg *a = &j->args[j->given[s]];
        if (a->kind != TC_ARG_TENSORS || (!a->v.tensors && ng > 0)) {
            ERR(j, "%s: %s takes a list: pass tc_arg_tensors(\"%s\", list) with one tensor per "
                "group%s", j->who, what, api_slot_name(j, s),
                a->kind == TC_ARG_TENSORS ? ", not a NULL list" : "");
            return;
        }
        lists[nt++] = (struct list){a->v.tensors, what, out ? L->otype[o] : L->ptype[s],
                                    out ? f->outputs[o].node->dtype : f->params[s].dtype,
                                    out || f->params[s].inout,
                                    out ? e->goutputs + o : e->gparams + s,
                                    out ? (size_t)no : (size_t)np};
    }

    /* every tensor of every group, as tc_run checks one */
    int64_t maxn = 0;
    for (int g = 0; g < ng; g++) {
        j->group = g;
        int64_t n = -1;
        /* The caller's DLTensors lie wherever its allocator put them: a
         * cache miss each, then one for the shape.  Ask for them ahead:
         * the tensors two groups on, the shapes of the next. */
        for (int t = 0; t < nt; t++) {
            if (g + 2 < ng)
                __builtin_prefetch(lists[t].ts[g + 2]);
            if (g + 1 < ng && lists[t].ts[g + 1])
                __builtin_prefetch(lists[t].ts[g + 1]->shape);
        }
        for (int t = 0; t < nt; t++) {
            const struct list *l = &lists[t];
            int64_t m;
            if (!api_check_dl(j, l->what, l->ts[g], l->dt, l->type, l->written, &m))
                return;
            if (n >= 0 && m != n) {
                ERR(j, "%s: %s has %lld elements, but %s has %lld (the tensors of a group have "
                    "one element count)", api_who(j), l->what, (long long)m, lists[t - 1].what,
                    (long long)n);
                return;
            }
            n = m;
            l->dst[(size_t)g * l->stride] = j->uses[j->nuses - 1].addr;
        }
        e->numel[g] = n;
        if (n > 0 && e->first < 0)
            e->first = g;
        e->nonempty += n > 0;
        if (n > maxn)
            maxn = n;
    }
    j->group = -1;
    if (!check_overlaps_sorted(j, nt > 0 ? nt : 1))
        return;

    /* "*" bound to the largest group: the plan's 32-bit limits hold for all */
    bind_arg *ba = ARENA_ARRAY(j->a, bind_arg, np + 1);
    for (int i = 0; i < np; i++)
        if (!f->params[i].scalar) {
            ba[i].given = true;
            ba[i].rank = 1;
            ba[i].shape[0] = maxn > 0 ? maxn : 1;
        }
    j->st = graph_bind(f, ba, NULL, 0, j->a, j->d, &j->binds, &j->nbinds);
}

tc_status api_run_foreach(tc_program *p, const gfn *f, size_t ngroups, const tc_arg *lists,
                          size_t nargs, void *stream, api_run_info *info)
{
    tc_ctx *ctx = p->ctx;
    tc_diag *d = &ctx->diag;
    tc_status st;
    tc_arena *a = api_call_begin(p, "tc_run_foreach", lists, nargs, &st);
    if (!a)
        return st;
    if (ngroups > TC_MAX_GROUPS) {
        arena_reset(a);
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "tc_run_foreach: %zu groups; one call takes at most %d",
                                      ngroups, TC_MAX_GROUPS));
    }
    fe_job e = {.j = {.p = p, .f = f, .args = lists, .nargs = nargs, .a = a, .d = d, .st = TC_OK,
                      .group = -1, .who = "tc_run_foreach"},
                .ngroups = (int)ngroups};
    st = diag_protect(d, fe_check_body, &e);
    if (st == TC_OK)
        st = e.j.st;
    bool reported = false;
    if (st == TC_OK) {
        rt_groups G = {e.ngroups, e.numel, e.gparams, e.goutputs};
        size_t at = e.first < 0 ? 0 : (size_t)e.first;
        st = api_launch(&e.j, e.first < 0 ? NULL : e.gparams + at * (size_t)f->nparams,
                    e.goutputs + at * (size_t)f->noutputs, &G, e.nonempty, stream, info, &reported);
    }
    arena_reset(a);
    return st == TC_OK || reported ? st : api_fail(ctx, st);
}

tc_status tc_run_foreach(tc_program *p, const char *fn, size_t ngroups, const tc_arg *lists,
                         size_t nargs, void *stream)
{
    if (!p)
        return TC_ERR_INVALID_ARG;
    /* the same lists as a call already checked (an optimizer's every step):
     * its launch again, table and all */
    bool done;
    api_memo *slot = NULL;
    tc_status st = TC_OK;
    if (ngroups <= TC_MAX_GROUPS)
        st = api_memo_try(p, true, fn, lists, nargs, ngroups, stream, &done, &slot);
    if (ngroups <= TC_MAX_GROUPS && done)
        return st;
    const gfn *f;
    api_call_args rest; /* lists less the dtype bindings (api_interp.h) */
    /* with no group there is no tensor to bind a dtype variable from */
    st = api_call_entry(p, "tc_run_foreach", fn, lists, nargs, ngroups == 0, &f, &rest);
    if (st != TC_OK)
        return st;
    api_trace_opt t = slot ? api_memo_opt(slot) : (api_trace_opt){0};
    api_run_info info = {.trace = &t};
    st = api_run_foreach(p, f, ngroups, rest.args, rest.nargs, stream, slot ? &info : NULL);
    if (slot)
        api_memo_keep(slot, &t, st, true, fn, lists, nargs, ngroups);
    api_call_args_free(&rest);
    return st;
}
