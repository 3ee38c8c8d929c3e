/* verify.c - sched_verify: the invariants codegen and the runtime rely on
 * (sched.h), checked after every scheduling, as lir_verify and fuse_verify
 * check theirs.  A failure is a bug in tensorc: TC_ERR_INTERNAL naming the
 * kernel and the broken rule.
 *
 *   - one schedule per kernel, in the kernel's order;
 *   - launch limits: every block dim at least 1, x and y at most 1024, z at
 *     most 64, at most 1024 threads; the grid cap at least 1;
 *   - vectors: a power of two wide, at most 16 bytes of the widest dtype
 *     (rows: at most ROW_ITEMS elements); register items not negative;
 *   - phases: each reduction's pass in [0, nphases), nphases one more than
 *     the last, and every reduction of the kernel that a reduction reads
 *     (through inlined nodes) in an earlier pass; a whole-tensor kernel has
 *     one pass, a split columns kernel too;
 *   - sizes: the grid, elements, rows and row lengths non-negative wherever
 *     the kernel's domain is (a slice's N - 1 is, once the sizes bind): a
 *     proof when dim_nonneg says so (no negative coefficient), else checked
 *     at sample sizes (every symbol from a few small and one large value)
 *     at which every dim of the domain is non-negative;
 *   - the strategy's own fields: tiles along an axis before the last,
 *     foreach only pointwise with a chunk, splits only for columns, clusters
 *     only for rows kept in registers (a power of two, at most 16);
 *   - checkpointed scan pairs: a scan and the next kernel, a scan the other
 *     way, marked on both sides, K from 1 to 64, each value an element
 *     store of the first.
 */
#include "sched/sched.h"

enum { MAX_BLOCK_XY = 1024, MAX_BLOCK_Z = 64, MAX_THREADS = 1024 };

static void bad(const sfn *s, int i, tc_diag *d, const char *what)
{
    const ksched *ks = &s->k[i];
    diag_error(d, TC_ERR_INTERNAL, s->f->l->g->loc, "sched: kernel %d %s: %s", i,
               ks->k ? ks->k->name : "?", what);
}

bool sched_nonneg_where(const tc_dim *x, const tc_dim *const *dom, int ndom)
{
    if (!x)
        return false;
    if (dim_nonneg(x))
        return true;
    enum { MAXSYM = 8, NPOINTS = 256 };
    static const int64_t vals[] = {0, 1, 2, 3, 5, 100};
    enum { NVALS = sizeof vals / sizeof *vals };
    const char *names[MAXSYM];
    int ns = 0;
    dim_symbols(x, names, &ns, MAXSYM);
    for (int i = 0; i < ndom; i++)
        dim_symbols(dom[i], names, &ns, MAXSYM);
    tc_dimbind b[MAXSYM];
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    int64_t points = 1;
    for (int i = 0; i < ns && points <= NPOINTS; i++)
        points *= NVALS;
    bool all = points <= NPOINTS; /* few symbols: every combination, else a sample */
    for (int pt = 0; pt < (all ? (int)points : NPOINTS); pt++) {
        int rest = pt;
        for (int i = 0; i < ns; i++) {
            if (all) {
                b[i] = (tc_dimbind){names[i], vals[rest % NVALS]};
                rest /= NVALS;
            } else {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                b[i] = (tc_dimbind){names[i], vals[(seed >> 33) % NVALS]};
            }
        }
        bool domain = true;
        for (int i = 0; i < ndom && domain; i++) {
            int64_t v;
            domain = dim_eval(dom[i], b, ns, &v, NULL) && v >= 0;
        }
        int64_t v;
        if (domain && (!dim_eval(x, b, ns, &v, NULL) || v < 0))
            return false;
    }
    return true;
}

static bool nonneg_on_domain(const fkernel *k, const tc_dim *x)
{
    return sched_nonneg_where(x, (const tc_dim *const *)k->dom, k->rank);
}

/* Walk what n's value needs inside kernel k, as sched.c's passes do
 * (through inlined and own stored nodes; not into parameters, matmuls or
 * other kernels' stores): every reduction of k met must run in a pass
 * before `before`.  red_phase: per node, its pass if it is a reduction of
 * k, else -1; seen: the walk's stamp per node. */
static bool earlier(const ffn *f, const fkernel *k, const lnode *n, int before,
                    const int *red_phase, int *seen, int stamp)
{
    if (seen[n->id] == stamp)
        return true;
    seen[n->id] = stamp;
    if (red_phase[n->id] >= 0)
        return red_phase[n->id] < before;
    if (n->kind == LK_INPUT || n->kind == LK_MATMUL ||
        (f->stored[n->id] && f->kernel_of[n->id] != k->id))
        return true;
    for (int i = 0; i < n->nin; i++)
        if (!earlier(f, k, n->in[i].src, before, red_phase, seen, stamp))
            return false;
    return true;
}

static void check_phases(const sfn *s, int i, int *red_phase, int *seen, int *stamp, tc_diag *d)
{
    const ksched *ks = &s->k[i];
    const fkernel *k = ks->k;
    int last = -1;
    for (int j = 0; j < k->nreds; j++) {
        if (ks->phase[j] < 0 || ks->phase[j] >= ks->nphases)
            bad(s, i, d, "a reduction's pass is outside the kernel's passes");
        if (ks->phase[j] > last)
            last = ks->phase[j];
        red_phase[k->reds[j]->id] = ks->phase[j];
    }
    if (ks->nphases != last + 1)
        bad(s, i, d, "the passes are not one more than the last reduction's");
    for (int j = 0; j < k->nreds; j++) {
        /* the online pair's sum reads its max in the same pass, by design */
        int before = j + 1 == ks->online_sum ? ks->phase[j] + 1 : ks->phase[j];
        if (!earlier(s->f, k, k->reds[j]->in[0].src, before, red_phase, seen, ++*stamp))
            bad(s, i, d, "a reduction reads another of its kernel in the same or a later pass");
    }
    if (ks->online_sum && (ks->kind != SCH_ROWS || ks->cluster || !ks->online_max ||
                           ks->phase[ks->online_max - 1] != ks->phase[ks->online_sum - 1]))
        bad(s, i, d, "an online pair outside one pass of a rows kernel without a cluster");
    for (int j = 0; j < k->nreds; j++)
        red_phase[k->reds[j]->id] = -1;
}

void sched_verify(const sfn *s, tc_arena *a, tc_diag *d)
{
    const ffn *f = s->f;
    if (s->nk != f->nk)
        diag_error(d, TC_ERR_INTERNAL, f->l->g->loc, "sched: %d schedules for %d kernels", s->nk,
                   f->nk);
    int n = f->l->nnodes > 0 ? f->l->nnodes : 1;
    int *seen = NULL, *red_phase = NULL, stamp = 0;
    for (int i = 0; i < s->nk; i++) {
        const ksched *ks = &s->k[i];
        if (ks->k != f->k[i])
            bad(s, i, d, "not the kernel's schedule");
        if (ks->kind == SCH_EXTERN)
            continue;
        const fkernel *k = ks->k;
        const int *b = ks->block;
        if (b[0] < 1 || b[1] < 1 || b[2] < 1 || b[0] > MAX_BLOCK_XY || b[1] > MAX_BLOCK_XY ||
            b[2] > MAX_BLOCK_Z || (int64_t)b[0] * b[1] * b[2] > MAX_THREADS)
            bad(s, i, d, "the block is outside CUDA's limits");
        if (ks->grid_cap < 1)
            bad(s, i, d, "the grid cap is below 1");
        if (ks->vec < 1 || (ks->vec & (ks->vec - 1)) || ks->vec * sched_widest(k) > 16)
            bad(s, i, d, "the vector width is not a power of two of at most 16 bytes");
        if (ks->items < 0 || (ks->kind != SCH_ROWS && ks->items))
            bad(s, i, d, "register items outside a rows kernel");
        if (!nonneg_on_domain(k, ks->grid) || !nonneg_on_domain(k, ks->numel))
            bad(s, i, d, "the grid or the element count can be negative");
        if (ks->kind != SCH_POINTWISE &&
            (!nonneg_on_domain(k, ks->rows) || !nonneg_on_domain(k, ks->rowlen)))
            bad(s, i, d, "the rows or their length can be negative");
        if (ks->kind == SCH_POINTWISE ? k->kind != KK_POINTWISE
            : ks->kind == SCH_SCAN    ? k->kind != KK_SCAN
                                      : k->kind != KK_REDUCE)
            bad(s, i, d, "the strategy does not fit the kernel's kind");
        if (ks->tile < -1 || (ks->tile >= 0 && (ks->tile >= k->rank - 1 || ks->kind != SCH_POINTWISE)))
            bad(s, i, d, "tiles along no axis before the last");
        if (ks->tile >= 0 && ks->tw != 32 && ks->tw != 64)
            bad(s, i, d, "tiles whose side is neither 32 nor 64");
        /* codegen's unrolled loop: a power of two of vectors, and a foreach
         * chunk a whole number of its steps */
        if (ks->unroll < 1 || ks->unroll > 16 ||
            (ks->kind != SCH_COLUMNS && (ks->unroll > 8 || (ks->unroll & (ks->unroll - 1)))) ||
            (ks->unroll > 1 && ks->tile < 0 && (ks->vec < 2 || ks->kind == SCH_ROWS ||
                                ks->kind == SCH_SCAN || ks->kind == SCH_EXTERN)) ||
            (ks->foreach && ks->chunk % (ks->block[0] * ks->vec * ks->unroll)))
            bad(s, i, d, "an unroll that is not a power of two up to 8 (columns: up to 16) of a "
                         "vector loop");
        if (ks->foreach && (ks->kind != SCH_POINTWISE || ks->chunk < 1 || ks->tile >= 0))
            bad(s, i, d, "foreach without a pointwise chunk");
        if (ks->split < 0 || (ks->split && (ks->kind != SCH_COLUMNS || ks->nphases != 1)))
            bad(s, i, d, "a split that is not a one-pass columns kernel's");
        /* the runtime launches clusters of a power of two up to 16 blocks
         * (runtime/exec.c); codegen splits only rows kept in registers */
        if (ks->cluster < 0 || ks->cluster > 16 || (ks->cluster & (ks->cluster - 1)) ||
            (ks->cluster && (ks->kind != SCH_ROWS || ks->items <= 0)))
            bad(s, i, d, "a cluster that is not a power of two up to 16, or not of a rows "
                         "kernel kept in registers");
        if (ks->kind == SCH_FULL && ks->nphases > 1)
            bad(s, i, d, "a whole-tensor kernel with dependent reductions");
        /* a checkpointed pair (sched_ckpt.c): this scan and the next, the
         * other way, each marked; K in 1..64; each value an element store */
        if (ks->ckpt && (ks->kind != SCH_SCAN || ks->ckpt > 64 || ks->ckpt_with != i + 2 || i + 1 >= s->nk ||
                         s->k[i + 1].ckpt_into != i + 1 || s->k[i + 1].kind != SCH_SCAN ||
                         s->k[i + 1].k->reverse == k->reverse || ks->nckpt < 1))
            bad(s, i, d, "a checkpointed pair that is not this scan and the next one the other way");
        for (int q = 0; q < ks->nckpt; q++)
            if (!fuse_is_element(k, ks->ckpt_vals[q]))
                bad(s, i, d, "a checkpointed pair's value that is not an element store of its walk");
        if (ks->ckpt < 0 || (!ks->ckpt && (ks->nckpt || ks->ckpt_with)) ||
            (ks->ckpt_into && (i == 0 || s->k[i - 1].ckpt_with != i + 1)))
            bad(s, i, d, "a checkpointed pair marked on one side only");
        if (k->nreds && ks->kind != SCH_SCAN) { /* scans: one walk, no passes */
            if (!seen) {
                seen = ARENA_ARRAY(a, int, n);
                red_phase = ARENA_ARRAY(a, int, n);
                for (int j = 0; j < n; j++)
                    red_phase[j] = -1;
            }
            check_phases(s, i, red_phase, seen, &stamp, d);
        }
    }
}
