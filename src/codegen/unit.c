/* unit.c - one NVRTC program: the helpers, then every kernel of the unit's
 * functions, plus one launch plan per function.
 *
 * The helpers are the few things the kernels need from CUDA's headers,
 * written out (the headers cost NVRTC 15-20 ms each): half and bfloat16
 * conversions by bit pattern or one PTX instruction, NaN-propagating
 * max/min like torch.maximum, the activations of ops.def's CUDA column,
 * reductions across a warp, a block, a block's columns and a grid's
 * partials, and 16-byte vector loads and stores.
 */
#include "codegen/cg.h"

#include <stdio.h>
#include <string.h>

/* The helpers (src/codegen/helpers.cuh, embedded at build time), and
 * only in units with a foreach kernel (sched.h) foreach.cuh: the group
 * table, laid out as plan.h's PARG_GROUPS says, and the search for a
 * block's group; likewise scan.cuh in units with a scan kernel. */
#include "codegen_helpers.inc"
#include "codegen_foreach.inc"
#include "codegen_scan.inc"
/* and in units with a generated matmul, matmul.cuh's tc_mm (after
 * mmtile.cuh, its tiles and fragments) */
#include "codegen_mmtile.inc"
#include "codegen_matmul.inc"
#include "codegen_attn.inc"
/* and rowpipe.cuh in units with a rows kernel of TENSORC_ROWS_PIPE=1 */
#include "codegen_rowpipe.inc"

/* A kernel of the unit, and the other kernels of its function (by the
 * fused dump's numbers) whose code is the same, so their steps launch this
 * one.  Kernels are shared within a function only: its heading and the
 * numbers stay those of the fused dump. */
typedef struct ukernel {
    int id;                 /* its number in its function (the fused dump's) */
    const char *why;        /* the schedule's reasons */
    const char *name, *text;
    const char *key;        /* compact kernels: the code as built for comparing
                             * (positional names, no line comments), else NULL */
    size_t keylen;
    uint64_t hash;
    int *also;
    int nalso, capalso;
} ukernel;

/* The unit's text after the helpers, in order: headings and helpers
 * (text), and kernels. */
typedef struct upiece {
    const char *text;
    ukernel *k;
} upiece;

typedef struct unit_b {
    tc_arena *a;
    upiece *pieces;
    int npieces, cappieces;
    ukernel **shared;       /* kernels with a key, to compare against */
    int nshared, capshared;
} unit_b;

#define GROW(a, v, n, cap, T)                                      \
    do {                                                           \
        if ((n) == (cap)) {                                        \
            int nc_ = (cap) ? 2 * (cap) : 16;                      \
            T *nv_ = ARENA_ARRAY(a, T, nc_);                       \
            if (n)                                                 \
                memcpy(nv_, (v), sizeof *nv_ * (size_t)(n));       \
            (v) = nv_;                                             \
            (cap) = nc_;                                           \
        }                                                          \
    } while (0)

static void add_piece(unit_b *u, const char *text, ukernel *k)
{
    GROW(u->a, u->pieces, u->npieces, u->cappieces, upiece);
    u->pieces[u->npieces++] = (upiece){text, k};
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static ukernel *find_shared(unit_b *u, const char *key, size_t len, uint64_t h)
{
    for (int i = 0; i < u->nshared; i++) {
        ukernel *k = u->shared[i];
        if (k->hash == h && k->keylen == len && memcmp(k->key, key, len) == 0)
            return k;
    }
    return NULL;
}

/* A cg for kernel j of s, named name. */
static void cg_setup(cg *g, const sfn *s, int j, cg_bufs *bufs, const char *name, bool idx64,
                     int fe_param_bytes, bool *libcalls, tc_arena *a, tc_diag *d)
{
    const ffn *f = s->f;
    *g = (cg){0};
    g->kname = name;
    g->a = a;
    g->d = d;
    g->c = f->l->dims;
    g->l = f->l;
    g->f = f;
    g->s = s;
    g->ks = &s->k[j];
    g->k = f->k[j];
    g->kj = j;
    g->bufs = bufs;
    g->idx64 = idx64;
    g->fe.param_bytes = fe_param_bytes;
    g->libcalls = libcalls;
    g->comments = true;
    /* compact kernels are the long chains whose pieces repeat (sched.h) */
    g->positional = s->k[j].compact && !s->k[j].foreach;
}

/* The step just planned runs only for rows up to (or, above, past) the
 * narrow variant's one-block length (sched.h's wide_split) */
static void guard_rows(cg_bufs *bufs, const ksched *ks, bool above)
{
    pstep *st = &bufs->plan->steps[bufs->plan->nsteps - 1];
    st->guard = ks->rowlen;
    st->guard_max = SCHED_WIDE_FROM(ks);
    st->guard_above = above;
}

/* Kernel j of s: its code once, or, when a kernel of the same code is
 * already in the unit, a step that launches that one. */
static void unit_kernel(unit_b *u, const sfn *s, int j, cg_bufs *bufs, int num, bool idx64,
                        int fe_param_bytes, bool *libcalls, tc_diag *d)
{
    tc_arena *a = u->a;
    const fkernel *k = s->f->k[j];
    /* the fused dump's name (fuse.h: its stem, then "_" and k->id) with the
     * number offset by the kernels of earlier functions, unique in the unit */
    const char *name = arena_printf(a, "%s_%d", k->stem, num);
    cg g;
    cg_setup(&g, s, j, bufs, name, idx64, fe_param_bytes, libcalls, a, d);
    const char *key = NULL;
    size_t keylen = 0;
    uint64_t h = 0;
    if (g.positional) {
        g.comments = false;
        g.kname = "k";
        tc_buf kb;
        buf_init(&kb, a);
        cg_kernel(&g, &kb);
        key = buf_str(&kb);
        keylen = kb.len;
        h = fnv1a(key, keylen);
        ukernel *same = find_shared(u, key, keylen, h);
        if (same) {
            GROW(a, same->also, same->nalso, same->capalso, int);
            same->also[same->nalso++] = k->id;
            cg_plan_kernel(&g, same->name);
            return;
        }
        /* new: built again, readable (its lines' .tc places) */
        cg_setup(&g, s, j, bufs, name, idx64, fe_param_bytes, libcalls, a, d);
    }
    /* a rows kernel whose row length is known only at launch (sched.h's
     * wide_split): this kernel, without its cluster path, for rows one
     * block holds, and the wide variant for longer ones, each step
     * guarded by the row's length (plan.h), so one of them runs */
    const ksched *ks = &s->k[j];
    ksched narrow, wide;
    if (ks->wide_split) {
        narrow = wide = *ks;
        narrow.wide_split = wide.wide_split = narrow.pipe_split = wide.pipe_split = false;
        narrow.cluster = 0;
        narrow.pipe = narrow.resident = narrow.ticket = false;
        if (!ks->pipe_split) /* (pipe_split: the same items, the row kept in its slots) */
            sched_rows_widen(&wide);
        /* its rows are past WIDE_FROM: past one of its own blocks too? */
        wide.long_only = SCHED_WIDE_FROM(ks) >= SCHED_WIDE_FROM(&wide);
        g.ks = &narrow;
    }
    tc_buf tb;
    buf_init(&tb, a);
    cg_kernel(&g, &tb);
    cg_plan_kernel(&g, name);
    if (ks->wide_split)
        guard_rows(bufs, ks, false);
    ukernel *uk = ARENA_NEW(a, ukernel);
    *uk = (ukernel){k->id, ks->why, name, buf_str(&tb), key, keylen, h, NULL, 0, 0};
    if (key) {
        GROW(a, u->shared, u->nshared, u->capshared, ukernel *);
        u->shared[u->nshared++] = uk;
    }
    add_piece(u, NULL, uk);
    if (ks->wide_split) {
        const char *wname = arena_printf(a, "%s_w", name);
        cg_setup(&g, s, j, bufs, wname, idx64, fe_param_bytes, libcalls, a, d);
        g.ks = &wide;
        tc_buf wb;
        buf_init(&wb, a);
        cg_kernel(&g, &wb);
        cg_plan_kernel(&g, wname);
        guard_rows(bufs, ks, true);
        ukernel *uw = ARENA_NEW(a, ukernel);
        *uw = (ukernel){k->id, arena_printf(a, "%s; rows past %lld elements: %s", ks->why,
                                            (long long)SCHED_WIDE_FROM(ks),
                                            ks->pipe_split ? "a persistent grid of clusters, the row kept "
                                                             "in shared memory while the next lands"
                                                           : "twice the row a thread in blocks of up to "
                                                             "512, two a SM"),
                        wname, buf_str(&wb), NULL, 0, 0, NULL, 0, 0};
        add_piece(u, NULL, uw);
    }
}

static void render(tc_buf *o, const ukernel *k)
{
    buf_printf(o, "\n/* kernel %d: %s", k->id, k->why);
    if (k->nalso) {
        buf_printf(o, "\n * also kernel%s", k->nalso > 1 ? "s" : "");
        for (int i = 0; i < k->nalso; i++)
            buf_printf(o, "%s %d", i ? "," : "", k->also[i]);
        buf_puts(o, ": the same code, launched over their own buffers");
    }
    buf_puts(o, " */\n");
    buf_puts(o, k->text);
}

cg_unit *codegen_unit(const sfn *const *fns, int n, bool idx64, tc_arena *a, tc_diag *d)
{
    return codegen_unit_ex(fns, n, idx64, CG_FE_PARAM_BYTES, a, d);
}

cg_unit *codegen_unit_ex(const sfn *const *fns, int n, bool idx64, int fe_param_bytes,
                         tc_arena *a, tc_diag *d)
{
    cg_unit *u = ARENA_NEW(a, cg_unit);
    u->plans = ARENA_ARRAY(a, tc_plan *, n > 0 ? n : 1);
    u->nplans = n;
    tc_buf src;
    buf_init(&src, a);
    buf_printf(&src, "/* generated by tensorc %s: %d function%s */\n", TC_VERSION_STRING, n,
               n == 1 ? "" : "s");
    buf_printf(&src, "typedef %s idx_t; /* %s index arithmetic */\n", idx64 ? "long long" : "int",
               idx64 ? "64-bit" : "32-bit");
    /* TENSORC_FAST_MATH=0: helpers.cuh's f32 math is libm's (its "f32 math
     * on the MUFU"); a unit's functions share one context's knobs */
    if (n > 0 && fns[0]->f->knobs.fast_math == 0)
        buf_puts(&src, "#define TC_FAST_MATH 0 /* TENSORC_FAST_MATH=0 */\n");
    if (n > 0 && fns[0]->f->knobs.max_nan == 0)
        buf_puts(&src, "#define TC_MAX_NAN 0 /* TENSORC_MAX_NAN=0: reductions' f32 max and min by tc_max */\n");
    if (n > 0 && fns[0]->f->knobs.load_ef == 1)
        buf_puts(&src, "#define TC_LOAD_EF 1 /* TENSORC_LOAD_EF=1: 16-byte loads evict-first */\n");
    buf_puts(&src, cg_helpers_cuh);
    unit_b ub = {.a = a};
    bool foreach = false, compact = false, scan = false, matmul = false, attn = false, pipe = false;
    bool *libcalls = ARENA_ARRAY(a, bool, OP_COUNT * 2);
    int kid = 0;
    for (int i = 0; i < n; i++) {
        const sfn *s = fns[i];
        const ffn *f = s->f;
        cg_bufs *bufs = cg_plan_bufs(s, a, d);
        add_piece(&ub, arena_printf(a, "\n/* ---- fn %s ---- */\n", f->l->g->name), NULL);
        ub.nshared = 0;
        for (int j = 0; j < f->nk; j++) {
            const fkernel *k = f->k[j];
            if (k->kind == KK_EXTERN && k->attn) {
                const char *name = arena_printf(a, "tc_attn_%d", kid + k->id);
                cg g;
                cg_setup(&g, s, j, bufs, name, idx64, fe_param_bytes, libcalls, a, d);
                const char *text = cg_attn(&g, bufs, &s->k[j], name, f->l->dims, a);
                if (!attn) /* before the first kernel that needs it */
                    add_piece(&ub, arena_printf(a, "\n%s", cg_attn_cuh), NULL);
                attn = true;
                ukernel *uk = ARENA_NEW(a, ukernel);
                *uk = (ukernel){k->id, s->k[j].why, name, text, NULL, 0, 0, NULL, 0, 0};
                add_piece(&ub, NULL, uk);
                continue;
            }
            if (k->kind == KK_EXTERN) {
                const char *name = arena_printf(a, "tc_matmul_%d", kid + k->id);
                cg g;
                cg_setup(&g, s, j, bufs, name, idx64, fe_param_bytes, libcalls, a, d);
                const char *text = cg_matmul(&g, bufs, &s->k[j], name, f->l->dims, a);
                if (text && !matmul) /* before the first kernel that needs it */
                    add_piece(&ub, arena_printf(a, "\n%s\n%s", cg_mmtile_cuh, cg_matmul_cuh), NULL);
                if (text) {
                    ukernel *uk = ARENA_NEW(a, ukernel);
                    *uk = (ukernel){k->id, s->k[j].why, name, text, NULL, 0, 0, NULL, 0, 0};
                    add_piece(&ub, NULL, uk);
                }
                matmul |= text != NULL;
                continue;
            }
            compact |= s->k[j].compact;
            if (s->k[j].foreach && !foreach) /* before the first kernel that needs them */
                add_piece(&ub, arena_printf(a, "\n%s", cg_foreach_cuh), NULL);
            foreach |= s->k[j].foreach;
            if (s->k[j].kind == SCH_SCAN && !scan) /* likewise scan.cuh */
                add_piece(&ub, arena_printf(a, "\n%s", cg_scan_cuh), NULL);
            scan |= s->k[j].kind == SCH_SCAN;
            if (s->k[j].pipe && !pipe) /* likewise rowpipe.cuh */
                add_piece(&ub, arena_printf(a, "\n%s", cg_rowpipe_cuh), NULL);
            pipe |= s->k[j].pipe;
            /* a rows kernel a generated matmul computes (the row-scale
             * rule), or a pointwise one (the epilogue rule): not launched,
             * or launched only beside cuBLAS */
            int in = s->k[j].norm_into ? s->k[j].norm_into : s->k[j].epi_into;
            const ksched *into = in ? &s->k[in - 1] : NULL;
            if ((into && into->mm == MM_GENERATED) || s->k[j].ckpt_into)
                continue; /* ckpt_into: the pair's kernel runs this walk (scan.c) */
            int ns = bufs->plan->nsteps;
            unit_kernel(&ub, s, j, bufs, kid + k->id, idx64, fe_param_bytes, libcalls, d);
            for (int q = ns; into && q < bufs->plan->nsteps; q++) {
                if (bufs->plan->steps[q].guard) /* one guard a step (sched_matmul.c's one_variant) */
                    diag_error(d, TC_ERR_INTERNAL, f->l->g->loc, "codegen: kernel %d has two guards", k->id);
                bufs->plan->steps[q].guard = into->mm_rows;
                bufs->plan->steps[q].guard_max = into->mm_max_rows;
                bufs->plan->steps[q].guard_above = true;
            }
        }
        kid += f->nk;
        cg_plan_finish(s, bufs, a);
        plan_verify(bufs->plan, f->l->dims, a, d);
        u->plans[i] = bufs->plan;
    }
    u->nkernels = kid;  /* counting externs */
    if (compact)
        cg_libcall_wrappers(&src, libcalls);
    for (int i = 0; i < ub.npieces; i++) {
        if (ub.pieces[i].k)
            render(&src, ub.pieces[i].k);
        else
            buf_puts(&src, ub.pieces[i].text);
    }
    u->source = buf_str(&src);
    return u;
}
