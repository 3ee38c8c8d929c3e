/* api_run_memo.c - tc_run's and tc_run_foreach's remembered calls; see
 * api_run_memo.h for what is kept and why a match may skip the checks. */
#include "api_run_memo.h"

#include "cugraph.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- snapshots ------------------------------------------------------------------------- */

/* Grow *v (capacity *cap items of size bytes) to hold n. */
static bool reserve(void **v, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return true;
    size_t c = n < 8 ? 8 : n + n / 2;
    void *b = realloc(*v, c * size);
    if (!b)
        return false;
    *v = b;
    *cap = c;
    return true;
}

static const char *pool_str(const memo_args *m, int at)
{
    return at < 0 ? NULL : m->pool + at;
}

static bool same_str(const char *kept, const char *s)
{
    return kept == s || (kept && s && strcmp(kept, s) == 0);
}

/* s copied into m's pool: its offset, -1 for NULL; *ok false on no memory. */
static int pool_add(memo_args *m, const char *s, bool *ok)
{
    if (!s)
        return -1;
    size_t n = strlen(s) + 1;
    if (!*ok || n > INT32_MAX - m->npool ||
        !reserve((void **)&m->pool, &m->cap_pool, m->npool + n, 1)) {
        *ok = false;
        return -1;
    }
    memcpy(m->pool + m->npool, s, n);
    int at = (int)m->npool;
    m->npool += n;
    return at;
}

/* The tensors args hold: one each, or ngroups per list. */
static size_t count_dls(const tc_arg *args, size_t nargs, size_t ngroups, size_t *ndims)
{
    size_t n = 0;
    *ndims = 0;
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].kind == TC_ARG_TENSOR) {
            const DLTensor *t = args[i].v.tensor;
            n++;
            *ndims += t && t->ndim > 0 ? 2 * (size_t)t->ndim : 0;
        } else if (args[i].kind == TC_ARG_TENSORS && args[i].v.tensors) {
            for (size_t g = 0; g < ngroups; g++) {
                const DLTensor *t = args[i].v.tensors[g];
                *ndims += t && t->ndim > 0 ? 2 * (size_t)t->ndim : 0;
            }
            n += ngroups;
        }
    }
    return n;
}

/* DLTensor's device (8 bytes), ndim and dtype (4 each) lie together
 * after data: compared as two words. */
_Static_assert(offsetof(DLTensor, device) == sizeof(void *) &&
                   offsetof(DLTensor, ndim) == offsetof(DLTensor, device) + 8 &&
                   offsetof(DLTensor, dtype) == offsetof(DLTensor, ndim) + 4 &&
                   offsetof(DLTensor, shape) == offsetof(DLTensor, device) + 16,
               "DLTensor's layout (dlpack.h)");

/* The snapshot of t; whether it is compact (same_compact may compare it:
 * given, of rank 1 or 2 with a shape, strides NULL).  The DLTensor's
 * fields are read once into locals: the stores into dims could alias them
 * (int64_t both), which had the compiler read them again each element. */
static bool take_dl(memo_args *m, const DLTensor *t)
{
    memo_dl *s = &m->dls[m->ndls++];
    if (!t) {
        *s = (memo_dl){.null = true};
        return false;
    }
    int n = t->ndim;
    const int64_t *shape = t->shape, *strides = t->strides;
    *s = (memo_dl){.data = t->data, .byte_offset = t->byte_offset, .ndim = n,
                   .dims_at = (int32_t)m->ndims, .strides = strides != NULL};
    memcpy(s->mid, &t->device, sizeof s->mid);
    int64_t *d = m->dims + m->ndims;
    int k = 0;
    for (int i = 0; shape && i < n; i++)
        d[k++] = shape[i];
    for (int i = 0; strides && i < n; i++)
        d[k++] = strides[i];
    m->ndims += (size_t)k;
    bool compact = (n == 1 || n == 2) && shape && !strides;
    if (compact) {
        s->d[0] = shape[0];
        s->d[1] = shape[n - 1];
    }
    return compact;
}

/* Field by field (the checks read nothing else of a DLTensor), without a
 * branch per field: this runs for every tensor of an optimizer's step. */
static inline bool same_dl(const memo_args *m, const memo_dl *s, const DLTensor *t)
{
    if (!t || s->null)
        return !t && s->null;
    uint64_t mid[2];
    memcpy(mid, &t->device, sizeof mid);
    uint64_t diff = ((uint64_t)(uintptr_t)t->data ^ (uint64_t)(uintptr_t)s->data) |
                    (mid[0] ^ s->mid[0]) | (mid[1] ^ s->mid[1]) |
                    (t->byte_offset ^ s->byte_offset) | (uint64_t)((t->strides != NULL) ^ s->strides);
    if (diff)
        return false;
    int n = s->ndim; /* equal to t->ndim: it is in mid */
    if (n <= 0)
        return true;
    if (!t->shape)
        return false; /* the snapshot had one: its ndim > 0 passed the checks */
    const int64_t *d = m->dims + s->dims_at;
    for (int k = 0; k < n; k++)
        diff |= (uint64_t)(t->shape[k] ^ d[k]);
    for (int k = 0; s->strides && k < n; k++)
        diff |= (uint64_t)(t->strides[k] ^ d[n + k]);
    return diff == 0;
}

void memo_args_free(memo_args *m)
{
    free(m->a);
    free(m->dls);
    free(m->dims);
    free(m->pool);
    memset(m, 0, sizeof *m);
}

const char *memo_args_fn(const memo_args *m)
{
    return pool_str(m, m->fn);
}

bool memo_args_take(memo_args *m, const char *fn, const tc_arg *args, size_t nargs,
                    size_t ngroups, bool foreach)
{
    m->valid = false;
    m->ndls = m->ndims = m->npool = 0;
    size_t ndims;
    size_t ndls = count_dls(args, nargs, ngroups, &ndims);
    bool ok = ndls < INT32_MAX && ndims < INT32_MAX &&
              reserve((void **)&m->a, &m->cap_a, nargs + 1, sizeof *m->a) &&
              reserve((void **)&m->dls, &m->cap_dls, ndls + 1, sizeof *m->dls) &&
              reserve((void **)&m->dims, &m->cap_dims, ndims + 1, sizeof *m->dims);
    m->fn = pool_add(m, fn, &ok);
    m->nargs = nargs;
    m->ngroups = ngroups;
    m->foreach = foreach;
    for (size_t i = 0; ok && i < nargs; i++) {
        const tc_arg *a = &args[i];
        memo_arg *k = &m->a[i];
        k->name = pool_add(m, a->name, &ok);
        k->kind = a->kind;
        k->dl_at = (int)m->ndls;
        k->dtype = -1;
        k->bits = 0;
        k->compact = false;
        switch (a->kind) {
        case TC_ARG_TENSOR: take_dl(m, a->v.tensor); break;
        case TC_ARG_TENSORS:
            k->compact = a->v.tensors != NULL;
            for (size_t g = 0; a->v.tensors && g < ngroups; g++)
                k->compact &= take_dl(m, a->v.tensors[g]);
            k->bits = a->v.tensors != NULL;
            break;
        case TC_ARG_FLOAT: memcpy(&k->bits, &a->v.f, sizeof a->v.f); break;
        case TC_ARG_INT: case TC_ARG_SIZE: k->bits = (uint64_t)a->v.i; break;
        case TC_ARG_BOOL: k->bits = (uint64_t)(int64_t)a->v.b; break;
        case TC_ARG_DTYPE: k->dtype = pool_add(m, a->v.dtype, &ok); break;
        default: break;
        }
    }
    m->valid = ok;
    return ok;
}

/* same_dl for a tensor of a list whose snapshots are all compact
 * (memo_arg.compact): one line of the snapshot, no loop.  The rank is
 * compared (in mid) before the shape is read, so shape[n - 1] is inside
 * the caller's array. */
static inline bool same_compact(const memo_dl *s, const DLTensor *t)
{
    if (!t)
        return false;
    uint64_t mid[2];
    memcpy(mid, &t->device, sizeof mid);
    uint64_t diff = ((uint64_t)(uintptr_t)t->data ^ (uint64_t)(uintptr_t)s->data) |
                    (mid[0] ^ s->mid[0]) | (mid[1] ^ s->mid[1]) |
                    (t->byte_offset ^ s->byte_offset) | (uint64_t)(uintptr_t)t->strides;
    if (diff || !t->shape)
        return false;
    return ((uint64_t)(t->shape[0] ^ s->d[0]) | (uint64_t)(t->shape[s->ndim - 1] ^ s->d[1])) == 0;
}

/* A foreach call's lists, list by list (a framework allocates a list's
 * DLTensors together, so in order they stream).  The caller's DLTensors
 * and their shapes are each a cache miss when the host's caches are cold
 * (the model's forward and backward ran since the last step), so each
 * tensor is asked for PF_T groups ahead and its shape PF_S ahead (its
 * tensor, asked for earlier, is there by then). */
static bool same_lists(const memo_args *m, const tc_arg *args, const int *li, int nl,
                       size_t ngroups)
{
    enum { PF_T = 16, PF_S = 8 };
    for (int k = 0; k < nl; k++) {
        const DLTensor *const *l = args[li[k]].v.tensors;
        const memo_arg *a = &m->a[li[k]];
        const memo_dl *s = &m->dls[a->dl_at];
        for (size_t g = 0; g < ngroups; g++) {
            if (g + PF_T < ngroups)
                __builtin_prefetch(l[g + PF_T]);
            if (g + PF_S < ngroups && l[g + PF_S])
                __builtin_prefetch(l[g + PF_S]->shape);
            if (!(a->compact ? same_compact(&s[g], l[g]) : same_dl(m, &s[g], l[g])))
                return false;
        }
    }
    return true;
}

bool memo_args_same(const memo_args *m, const char *fn, const tc_arg *args, size_t nargs,
                    size_t ngroups, bool foreach, bool strict)
{
    if (!m->valid || m->nargs != nargs || m->ngroups != ngroups || m->foreach != foreach ||
        !same_str(pool_str(m, m->fn), fn) || (nargs && !args))
        return false;
    /* the lists last, all together (same_lists); the rest first, cheap */
    int li[64], nl = 0;
    for (size_t i = 0; i < nargs; i++) {
        const tc_arg *a = &args[i];
        const memo_arg *k = &m->a[i];
        if (a->kind != k->kind || !same_str(pool_str(m, k->name), a->name))
            return false;
        if (!strict && (a->kind == TC_ARG_FLOAT || a->kind == TC_ARG_INT || a->kind == TC_ARG_BOOL))
            continue; /* checked again, and passed to the launches (api_memo_try) */
        switch (a->kind) {
        case TC_ARG_TENSOR:
            if (!same_dl(m, &m->dls[k->dl_at], a->v.tensor))
                return false;
            break;
        case TC_ARG_TENSORS: {
            const DLTensor *const *l = a->v.tensors;
            if ((l != NULL) != (k->bits != 0))
                return false;
            if (!l)
                break;
            if (nl == (int)(sizeof li / sizeof li[0])) {
                if (!same_lists(m, args, li, nl, ngroups))
                    return false;
                nl = 0;
            }
            li[nl++] = (int)i;
            break;
        }
        case TC_ARG_FLOAT:
            if (memcmp(&k->bits, &a->v.f, sizeof a->v.f) != 0)
                return false;
            break;
        case TC_ARG_INT: case TC_ARG_SIZE:
            if (k->bits != (uint64_t)a->v.i)
                return false;
            break;
        case TC_ARG_BOOL:
            if (k->bits != (uint64_t)(int64_t)a->v.b)
                return false;
            break;
        case TC_ARG_DTYPE:
            if (!same_str(pool_str(m, k->dtype), a->v.dtype))
                return false;
            break;
        default: return false;
        }
    }
    return same_lists(m, args, li, nl, ngroups);
}

void memo_args_diff(const memo_args *m, const tc_arg *args, size_t nargs, char *buf, size_t cap)
{
    snprintf(buf, cap, "the arguments differ");
    if (nargs != m->nargs) {
        snprintf(buf, cap, "%zu arguments, %zu at the capture", nargs, m->nargs);
        return;
    }
    for (size_t i = 0; i < nargs; i++) {
        const tc_arg *a = &args[i];
        const memo_arg *k = &m->a[i];
        char who[96];
        if (a->name)
            snprintf(who, sizeof who, "'%s'", a->name);
        else
            snprintf(who, sizeof who, "argument %zu", i);
        if (a->kind != k->kind || !same_str(pool_str(m, k->name), a->name)) {
            snprintf(buf, cap, "argument %zu is not the one given at the capture (another name or "
                     "kind)", i);
            return;
        }
        if (a->kind == TC_ARG_TENSOR && !same_dl(m, &m->dls[k->dl_at], a->v.tensor)) {
            const memo_dl *s = &m->dls[k->dl_at];
            const DLTensor *t = a->v.tensor;
            if (t && !s->null && (t->data != s->data || t->byte_offset != s->byte_offset))
                snprintf(buf, cap, "%s is at 0x%llx now, 0x%llx at the capture (data + "
                         "byte_offset)", who,
                         (unsigned long long)((uintptr_t)t->data + t->byte_offset),
                         (unsigned long long)((uintptr_t)s->data + s->byte_offset));
            else
                snprintf(buf, cap, "%s is not the tensor of the capture (its DLTensor, shape, "
                         "strides, dtype or device differ)", who);
            return;
        }
        if (a->kind != TC_ARG_TENSOR && a->kind != TC_ARG_TENSORS) {
            memo_args one = *m;
            one.a = (memo_arg *)k;
            one.nargs = 1;
            one.fn = -1;
            if (!memo_args_same(&one, NULL, a, 1, m->ngroups, m->foreach, true)) {
                snprintf(buf, cap, "%s has another value than at the capture (scalars are part "
                         "of the captured launches)", who);
                return;
            }
        }
    }
}

/* --- the remembered calls ------------------------------------------------------------------ */

static void graph_drop(api_memo *s)
{
    if (s->graph && s->rt)
        drv_graph_free(s->rt->dev, s->graph); /* one in flight completes first */
    if (s->cgraph && s->rt)
        drv_graph_destroy(s->rt->dev, s->cgraph);
    s->graph = s->cgraph = NULL;
}

static void slot_clear(api_memo *s)
{
    s->valid = false;
    s->nuses = 0;
    graph_drop(s);
    s->hits = 0;
    s->updatable = -1;
    s->nupd = 0;
    s->graph_failed = false;
}

/* The bytes of launch i's arguments as recorded (each value 16-byte
 * aligned: a little more than the kernel's parameter). */
static size_t launch_bytes(const rt_trace *t, int i)
{
    const rt_launch *l = &t->l[i];
    if (l->nargs <= 0)
        return 0;
    int end = l->argv_at + l->nargs;
    return (end < t->nargv ? t->val_at[end] : t->nvals) - t->val_at[l->argv_at];
}

/* Whether new scalars may be set into a graph of t's launches (see
 * api_memo's comment), listing in s->upd the launches that take them. */
static int trace_updatable(api_memo *s)
{
    const rt_trace *t = &s->trace;
    s->nupd = 0;
    if (!t->npatches || !drv_graph_updatable())
        return 0;
    for (int i = 0; i < t->n; i++) {
        const rt_launch *l = &t->l[i];
        bool takes = false;
        for (int k = 0; k < t->npatches && !takes; k++)
            takes = t->patches[k].argv >= l->argv_at && t->patches[k].argv < l->argv_at + l->nargs;
        if (!takes)
            continue;
        /* a cluster launch's node has attributes an update might not keep */
        if (l->copy || l->cluster > 1 || launch_bytes(t, i) > API_MEMO_UPDATE_BYTES)
            return s->nupd = 0;
        size_t cap = (size_t)s->cap_upd;
        if (!reserve((void **)&s->upd, &cap, (size_t)s->nupd + 1, sizeof *s->upd))
            return s->nupd = 0;
        s->cap_upd = (int)cap;
        s->upd[s->nupd++] = i;
    }
    return s->nupd > 0;
}

/* graph's nodes, launch by launch, into s->nodes (false: not the chain the
 * trace recorded, or no memory: no updates). */
static bool find_nodes(api_memo *s, void *graph)
{
    const rt_trace *t = &s->trace;
    size_t cap = (size_t)s->cap_nodes;
    bool *kernel = calloc((size_t)t->n + 1, sizeof *kernel);
    bool ok = kernel && reserve((void **)&s->nodes, &cap, (size_t)t->n + 1, sizeof *s->nodes);
    s->cap_nodes = (int)cap;
    for (int i = 0; ok && i < t->n; i++)
        kernel[i] = !t->l[i].copy;
    ok = ok && drv_graph_chain(s->rt->dev, graph, s->nodes, kernel, t->n) == t->n;
    free(kernel);
    return ok;
}

/* The scalars now into the graph's nodes (false: the graph is dropped, and
 * no graph is made again for this recording). */
static bool graph_update(api_memo *s)
{
    const rt_trace *t = &s->trace;
    for (int k = 0; k < s->nupd; k++) {
        const rt_launch *l = &t->l[s->upd[k]];
        if (drv_graph_set_kernel(s->rt->dev, s->graph, s->nodes[s->upd[k]], l->fn, l->grid,
                                 l->block, l->shmem, t->argv + l->argv_at, NULL) != TC_OK) {
            graph_drop(s); /* some nodes may hold the new scalars, some the old */
            s->graph_failed = true;
            s->updatable = 0;
            return false;
        }
    }
    return true;
}

/* The scalar arguments' bytes in the recording now, into out (false when
 * they do not fit: no graph for this call). */
static bool scalar_bytes(const rt_trace *t, unsigned char *out, size_t cap)
{
    size_t at = 0;
    memset(out, 0, cap);
    for (int i = 0; i < t->npatches; i++) {
        size_t n = rt_patch_size(t->patches[i].dtype);
        if (at + n > cap)
            return false;
        memcpy(out + at, t->vals + t->val_at[t->patches[i].argv], n);
        at += n;
    }
    return true;
}

/* The recording, captured into a graph (silently nothing on failure; not
 * while the caller's stream is itself being captured: their capture comes
 * first, and the next repeat tries again). */
static void graph_make(api_memo *s, void *stream)
{
    void *cs, *exec = NULL;
    if (!drv_graph_usable()) {
        s->graph_failed = true;
        return;
    }
    if (drv_stream_capturing(s->rt->dev, stream) != 0)
        return;
    s->graph_failed = true;
    if (!scalar_bytes(&s->trace, s->graph_scalars, sizeof s->graph_scalars) ||
        drv_graph_begin(s->rt->dev, &cs, NULL) != TC_OK)
        return;
    tc_status st = rt_trace_run(s->rt, &s->trace, cs, NULL);
    void *graph = NULL;
    if (drv_graph_end_kept(s->rt->dev, cs, &exec, s->updatable > 0 ? &graph : NULL, NULL) != TC_OK ||
        st != TC_OK) {
        drv_graph_free(s->rt->dev, exec);
        drv_graph_destroy(s->rt->dev, graph);
        return;
    }
    s->graph = exec;
    s->graph_failed = false;
    if (graph && find_nodes(s, graph)) {
        s->cgraph = graph;
    } else {
        drv_graph_destroy(s->rt->dev, graph);
        s->updatable = 0;
    }
}

/* Whether the graph may run this call: the scalars it holds (or set into
 * it now), and a stream nobody is capturing (a graph launched into a
 * capture would nest). */
static bool graph_fits(api_memo *s, void *stream)
{
    unsigned char now[sizeof s->graph_scalars];
    if (!s->graph || !scalar_bytes(&s->trace, now, sizeof now) ||
        drv_stream_capturing(s->rt->dev, stream) != 0)
        return false;
    if (memcmp(now, s->graph_scalars, sizeof now) == 0)
        return true;
    if (s->updatable <= 0 || !s->cgraph || !graph_update(s))
        return false;
    memcpy(s->graph_scalars, now, sizeof now);
    return true;
}

/* The call's scalars, checked as the full path checks them (api_args.c),
 * into the recorded launches. */
static tc_status new_scalars(tc_program *p, api_memo *s, const tc_arg *args, size_t nargs,
                             const char *who)
{
    if (!s->has_scalars)
        return TC_OK;
    run_job j = {.p = p, .f = s->f, .args = args, .nargs = nargs, .d = &p->ctx->diag,
                 .st = TC_OK, .given = s->given, .scalars = s->scalars, .group = -1, .who = who};
    for (int i = 0; i < s->f->nparams; i++)
        if (s->f->params[i].scalar && !api_check_scalar(&j, i))
            return j.st;
    rt_trace_set_scalars(&s->trace, s->scalars);
    return TC_OK;
}

tc_status api_memo_try(tc_program *p, bool foreach, const char *fn, const tc_arg *args,
                       size_t nargs, size_t ngroups, void *stream, bool *done, api_memo **slot)
{
    *done = false;
    *slot = NULL;
    if (!p->memos && !(p->memos = calloc(1, sizeof *p->memos)))
        return TC_OK; /* no memory to remember in: the full path, every time */
    api_memos *ms = p->memos;
    for (int i = 0; i < API_MEMO_SLOTS; i++) {
        api_memo *s = &ms->slot[i];
        if (!s->valid || !memo_args_same(&s->args, fn, args, nargs, ngroups, foreach, false))
            continue;
        if (s->rt != p->ctx->rt || !rt_trace_valid(&s->trace, stream)) {
            slot_clear(s); /* recorded against a pool that has changed: record again */
            *slot = s;
            return TC_OK;
        }
        tc_ctx *ctx = p->ctx;
        const char *who = foreach ? "tc_run_foreach" : "tc_run";
        api_begin(ctx);
        tc_status st = new_scalars(p, s, args, nargs, who);
        if (st != TC_OK)
            return *done = true, api_fail(ctx, st);
        if (!s->graph && !s->graph_failed) {
            /* hits count while the scalars repeat too (an optimizer's step
             * count changes every call: no graph for it), or whatever they
             * are where the graph's nodes can take new ones */
            unsigned char now[sizeof s->graph_scalars];
            bool same = scalar_bytes(&s->trace, now, sizeof now) &&
                        memcmp(now, s->graph_scalars, sizeof now) == 0;
            memcpy(s->graph_scalars, now, sizeof now);
            if (s->updatable < 0)
                s->updatable = trace_updatable(s);
            s->hits = same || s->updatable > 0 ? s->hits + 1 : 0;
            if (s->hits >= API_MEMO_GRAPH_AFTER)
                graph_make(s, stream);
        }
        if (graph_fits(s, stream))
            st = drv_graph_launch(s->rt->dev, s->graph, stream, &ctx->diag);
        else
            st = rt_trace_run(s->rt, &s->trace, stream, &ctx->diag);
        if (st == TC_OK)
            return *done = true, st;
        if (st != TC_ERR_INVALID_ARG && st != TC_ERR_NOMEM)
            st = api_blame(&ctx->diag, s->rt, s->uses, s->nuses, who, st);
        slot_clear(s);
        *done = true;
        return api_fail(ctx, st);
    }
    *slot = &ms->slot[ms->next];
    ms->next = (ms->next + 1) % API_MEMO_SLOTS;
    slot_clear(*slot);
    return TC_OK;
}

api_trace_opt api_memo_opt(api_memo *s)
{
    return (api_trace_opt){.trace = &s->trace, .uses = s->uses, .cap_uses = s->cap_uses,
                           .given = s->given, .cap_given = s->cap_given};
}

void api_memo_keep(api_memo *s, api_trace_opt *t, tc_status st, bool foreach, const char *fn,
                   const tc_arg *args, size_t nargs, size_t ngroups)
{
    slot_clear(s);
    s->uses = t->uses; /* the buffers come back, grown or not */
    s->cap_uses = t->cap_uses;
    s->nuses = t->nuses;
    s->given = t->given;
    s->cap_given = t->cap_given;
    s->rt = t->rt;
    const gfn *f = t->f;
    if (st != TC_OK || !s->trace.replayable || !s->rt || !f)
        return;
    /* the parameters' argument indices are into the arguments less the
     * dtype bindings (api_call_entry): the r-th of those is the r-th
     * argument that is not a binding */
    s->f = f;
    size_t cap = (size_t)s->cap_scalars;
    bool ok = reserve((void **)&s->scalars, &cap, (size_t)f->nparams + 1, sizeof *s->scalars);
    s->cap_scalars = (int)cap;
    s->has_scalars = false;
    for (int i = 0; ok && i < f->nparams; i++) {
        int g = s->given[i];
        size_t seen = 0, at = 0;
        for (; g >= 0 && at < nargs; at++)
            if (args[at].kind != TC_ARG_DTYPE && seen++ == (size_t)g)
                break;
        ok = g < 0 || at < nargs;
        s->given[i] = g >= 0 ? (int)at : -1;
        s->has_scalars |= f->params[i].scalar;
    }
    if (ok)
        s->valid = memo_args_take(&s->args, fn, args, nargs, ngroups, foreach);
    /* the recorded call counts as the first of a run of equal scalars */
    if (s->valid && !scalar_bytes(&s->trace, s->graph_scalars, sizeof s->graph_scalars))
        s->graph_failed = true;
}

void api_memo_free(tc_program *p)
{
    if (!p->memos)
        return;
    for (int i = 0; i < API_MEMO_SLOTS; i++) {
        api_memo *s = &p->memos->slot[i];
        graph_drop(s);
        free(s->nodes);
        free(s->upd);
        free(s->uses);
        free(s->given);
        free(s->scalars);
        memo_args_free(&s->args);
        rt_trace_free(&s->trace);
    }
    free(p->memos);
    p->memos = NULL;
}
