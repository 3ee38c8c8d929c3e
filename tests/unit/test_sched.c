/* test_sched.c - properties of scheduling, through sched.h's interface
 * (sched_fn on the fused function), over every program of corpus.h with
 * 32- and 64-bit index plans:
 *
 *   block       threads a block (block[0] * block[1] * block[2]) are a
 *               multiple of 32 (whole warps) and at most 1024;
 *   vector      widths are 1, 2, 4, 8 or 16, no wider than 16 bytes of the
 *               widest dtype the kernel reads or writes; a rows kernel
 *               vectorizes only when it reduces the last (contiguous) axis
 *               alone, a columns kernel only when the last axis is kept and
 *               nothing is stored per element; items * vec is block_per;
 *   unroll      vectors a thread loads a step: 1, or a power of two up to
 *               8 (a split column kernel's rows: up to 16) where there are
 *               vectors, at most 8 loads a step, never compact; pointwise
 *               grids cover the domain with it (threads * vec * unroll);
 *   colpart     a rows kernel takes FUSE_COL_ROWS rows a block exactly when
 *               it carries column sums, and then no cluster;
 *   cluster     a rows kernel splits rows across a cluster only when it
 *               keeps them in registers (not compact), of a power of two
 *               of at most 16 blocks;
 *   phases      every reduction's pass comes after the pass of each of the
 *               kernel's reductions its input reads (found here by walking
 *               the inlined expression, apart from sched's own walk), every
 *               pass is below nphases, and a whole-tensor kernel has one;
 *   grid        for sizes 1..9 (and some large ones) satisfying the
 *               function's constraints, the grid is at least 1 and at most
 *               2^31 - 1 and its cap, and the blocks cover the domain: every
 *               element (pointwise: grid * block * vec, or chunks, or 32 x 32
 *               tiles), every row (rows: a block per row, or per rblock
 *               rows with column partials), every column
 *               group (columns); rows * rowlen = the elements;
 *   strategy    matches the kernel: pointwise kernels are SCH_POINTWISE,
 *               externs SCH_EXTERN, reductions rows / columns / full by
 *               their axes, scans SCH_SCAN (no passes, a thread per lane
 *               at least); foreach only for an elementwise function.
 *
 * Every schedule also passes sched_verify (src/sched/verify.c), which
 * checks some of these symbolically; here they are checked at sizes, from
 * sched.h's fields alone.  A failure names the program, the function, the
 * kernel and the sizes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "build_harness.h"
#include "corpus.h"
#include "fuse/fuse.h"
#include "lower/lir.h"
#include "sched/sched.h"

enum { NGEN = 600 };

static const char *cur_prog;
static const sfn *cur_s;

static const char *sched_dump(const sfn *s)
{
    tc_buf b;
    buf_init(&b, H.a);
    sched_print(&b, s);
    return buf_str(&b);
}

#define FAIL(s, k, ...)                                                                          \
    do {                                                                                         \
        print_error("%s\n", sched_dump(s));                                                      \
        print_error("%s: fn %s: kernel %d: ", cur_prog, (s)->f->l->g->name, (k));                \
        fail_msg(__VA_ARGS__);                                                                   \
    } while (0)

static sfn *schedule(const gfn *g, bool idx64)
{
    jmp_buf jb;
    H.d.jb = &jb;
    if (setjmp(jb)) {
        H.d.jb = NULL;
        fail_msg("%s: compiling '%s' to a schedule failed (%s): %s", cur_prog, g->name,
                 tc_status_str(H.d.status), H.d.msg ? H.d.msg : "");
    }
    lfn *l = lower_fn(g, g->dims, H.a, &H.d);
    lir_verify(l, &H.d);
    ffn *f = fuse_fn(l, NULL, H.a, &H.d);
    fuse_verify(f, &H.d);
    sfn *s = sched_fn(f, idx64, H.a, &H.d);
    sched_verify(s, H.a, &H.d); /* the scheduler's own verifier agrees */
    H.d.jb = NULL;
    return s;
}

/* Whether buffer n has a dim of k's reduced axes (read along the row). */
static bool along_rows(const fkernel *k, const lnode *n)
{
    for (int j = 0; j < n->rank; j++)
        for (int a = 0; a < k->rank; a++)
            if ((k->mask >> a & 1u) && dim_eq(n->shape[j], k->dom[a]))
                return true;
    return false;
}

/* The widest element a vector loop touches: in a rows kernel (trailing
 * reduced axes) the buffers without a reduced dim, and the row-level
 * stores, are touched once a row, outside it. */
static int widest(const fkernel *k)
{
    bool rows = k->kind == KK_REDUCE && k->inner;
    int m = 1;
    for (int i = 0; i < k->nreads; i++)
        if (dtype_size(k->reads[i]->dtype) > m && (!rows || along_rows(k, k->reads[i])))
            m = dtype_size(k->reads[i]->dtype);
    for (int i = 0; i < k->nstores; i++)
        if (dtype_size(k->stores[i]->dtype) > m && (!rows || fuse_is_element(k, k->stores[i])))
            m = dtype_size(k->stores[i]->dtype);
    return m;
}

/* ---- block, vector, strategy ---------------------------------------------- */

static void check_shape(const sfn *s, int i)
{
    const ksched *ks = &s->k[i];
    const fkernel *k = ks->k;
    if (ks->k != s->f->k[i])
        FAIL(s, i, "schedule %d is for another kernel", i);
    if (k->kind == KK_EXTERN) {
        if (ks->kind != SCH_EXTERN)
            FAIL(s, i, "an extern kernel scheduled as %d", ks->kind);
        return;
    }
    long threads = (long)ks->block[0] * ks->block[1] * ks->block[2];
    if (ks->block[0] < 1 || ks->block[1] < 1 || ks->block[2] < 1 || threads % 32 != 0 || threads > 1024)
        FAIL(s, i, "block [%d, %d, %d]: not whole warps within 1024 threads", ks->block[0], ks->block[1],
             ks->block[2]);
    int v = ks->vec;
    if (v != 1 && v != 2 && v != 4 && v != 8 && v != 16)
        FAIL(s, i, "vector width %d", v);
    if (v > 1 && v * widest(k) > 16)
        FAIL(s, i, "vector width %d of %d-byte elements passes 16 bytes", v, widest(k));
    /* unrolled vector loops: with vectors, of pointwise, whole-tensor or
     * split-column kernels (a tiled one: whole tiles), not compact, at most
     * 8 vector loads a step (sched.c, LOADS_IN_FLIGHT) */
    int u = ks->unroll;
    if (u < 1 || u > 16 || (ks->kind != SCH_COLUMNS && (u & (u - 1))))
        FAIL(s, i, "unroll %d", u);
    if (u > 1 && ks->tile < 0 &&
        (v < 2 || ks->compact || (long)u * k->nreads > 8 ||
         (ks->kind != SCH_POINTWISE && ks->kind != SCH_FULL && !(ks->kind == SCH_COLUMNS && ks->split))))
        FAIL(s, i, "unroll %d of a %d kernel, vector width %d, %d reads%s", u, ks->kind, v, k->nreads,
             ks->compact ? ", compact" : "");
    unsigned all = k->rank >= 32 ? ~0u : (1u << k->rank) - 1;
    switch (k->kind) {
    case KK_POINTWISE:
        if (ks->kind != SCH_POINTWISE)
            FAIL(s, i, "a pointwise kernel scheduled as %d", ks->kind);
        if (ks->tile >= k->rank - 1 || ks->tile < -1)
            FAIL(s, i, "tile axis %d of rank %d", ks->tile, k->rank);
        if (ks->foreach && !s->f->l->g->elementwise)
            FAIL(s, i, "foreach in a function that is not elementwise");
        break;
    case KK_REDUCE:
        if (k->mask == all) {
            if (ks->kind != SCH_FULL)
                FAIL(s, i, "a whole-tensor reduction scheduled as %d", ks->kind);
            if (ks->nphases > 1)
                FAIL(s, i, "a whole-tensor kernel of %d passes", ks->nphases);
        } else if (k->inner) {
            if (ks->kind != SCH_ROWS)
                FAIL(s, i, "a trailing-axes reduction scheduled as %d", ks->kind);
            if (v > 1 && k->mask != 1u << (k->rank - 1))
                FAIL(s, i, "vector width %d, but the reduced axes are not the last alone", v);
            if (ks->items * v != ks->block_per && ks->items != 0)
                FAIL(s, i, "%d items of %d lanes, block_per %d", ks->items, v, ks->block_per);
            /* a cluster splits rows kept in registers only, into a power of
             * two of at most 16 blocks (the runtime's sizes) */
            if (ks->cluster && (!ks->items || ks->compact || ks->cluster > 16 ||
                                (ks->cluster & (ks->cluster - 1))))
                FAIL(s, i, "cluster %d with %d items%s", ks->cluster, ks->items,
                     ks->compact ? ", compact" : "");
            /* column partials (fuse.h): blocks of fuse_col_rows rows exactly
             * when the kernel carries column sums, never a cluster */
            if ((ks->rblock != 0) != (ks->k->ncols != 0) || (ks->rblock && (ks->rblock != fuse_col_rows(&s->f->knobs) ||
                                                                            ks->cluster)))
                FAIL(s, i, "rows a block %d with %d column sums, cluster %d", ks->rblock, ks->k->ncols,
                     ks->cluster);
        } else {
            if (ks->kind != SCH_COLUMNS)
                FAIL(s, i, "a leading-axes reduction scheduled as %d", ks->kind);
            if (v > 1) {
                if (k->mask >> (k->rank - 1) & 1u)
                    FAIL(s, i, "%d columns a thread, but the last axis is reduced", v);
                for (int j = 0; j < k->nstores; j++)
                    if (fuse_is_element(k, k->stores[j]))
                        FAIL(s, i, "%d columns a thread with a per-element store", v);
            }
        }
        break;
    case KK_SCAN:
        if (ks->kind != SCH_SCAN || v != 1)
            FAIL(s, i, "a scan kernel scheduled as %d, vector width %d", ks->kind, v);
        break;
    default:
        break;
    }
}

/* ---- phases -------------------------------------------------------------- */

/* The latest pass of kernel k's own reductions that n's value reads,
 * through the nodes the kernel computes inline; -1 if none. */
static int reads_pass(const sfn *s, const ksched *ks, const lnode *n, int depth)
{
    const ffn *f = s->f;
    const fkernel *k = ks->k;
    if (depth > 10000)
        fail_msg("expression too deep");
    if (n->kind == LK_REDUCE && f->kernel_of[n->id] == k->id) {
        for (int j = 0; j < k->nreds; j++)
            if (k->reds[j] == n)
                return ks->phase[j];
        FAIL(s, k->id, "%%%d is this kernel's but not in its reductions", n->id);
    }
    if (n->kind == LK_INPUT || n->kind == LK_MATMUL || (f->stored[n->id] && f->kernel_of[n->id] != k->id))
        return -1; /* from a buffer */
    int r = -1;
    for (int i = 0; i < n->nin; i++) {
        int q = reads_pass(s, ks, n->in[i].src, depth + 1);
        if (q > r)
            r = q;
    }
    return r;
}

static void check_phases(const sfn *s, int i)
{
    const ksched *ks = &s->k[i];
    const fkernel *k = ks->k;
    if (ks->kind == SCH_EXTERN)
        return;
    if (ks->kind == SCH_SCAN) { /* one walk: its scans have no passes */
        if (ks->nphases != 0 || k->nreds < 1)
            FAIL(s, i, "a scan kernel of %d passes and %d scans", ks->nphases, k->nreds);
        return;
    }
    if (k->nreds == 0 && ks->nphases != 0)
        FAIL(s, i, "%d passes without a reduction", ks->nphases);
    for (int j = 0; j < k->nreds; j++) {
        if (ks->phase[j] < 0 || ks->phase[j] >= ks->nphases)
            FAIL(s, i, "%%%d in pass %d of %d", k->reds[j]->id, ks->phase[j], ks->nphases);
        int before = reads_pass(s, ks, k->reds[j]->in[0].src, 0);
        /* the online pair's sum reads its max in the same pass (sched_online.c) */
        if (j + 1 == ks->online_sum && ks->phase[ks->online_max - 1] != ks->phase[j])
            FAIL(s, i, "the online pair %%%d apart from its max", k->reds[j]->id);
        else if (j + 1 == ks->online_sum && before > ks->phase[j])
            FAIL(s, i, "%%%d (online) in pass %d reads a reduction of pass %d", k->reds[j]->id, ks->phase[j], before);
        else if (j + 1 != ks->online_sum && before >= ks->phase[j])
            FAIL(s, i, "%%%d in pass %d reads a reduction of pass %d", k->reds[j]->id, ks->phase[j], before);
    }
}

/* ---- grids ---------------------------------------------------------------- */

static int64_t val(const sfn *s, int i, const tc_dim *d, const tc_dimbind *b, int nb)
{
    int64_t v = 0;
    const char *unbound = NULL;
    if (!dim_eval(d, b, nb, &v, &unbound))
        FAIL(s, i, "%s does not evaluate (unbound %s)", dim_str(H.a, d), unbound ? unbound : "?");
    return v;
}

static int check_grids(const sfn *s, const tc_dimbind *b, int nb)
{
    int checked = 0;
    for (int i = 0; i < s->nk; i++) {
        const ksched *ks = &s->k[i];
        if (ks->kind == SCH_EXTERN)
            continue;
        int64_t grid = val(s, i, ks->grid, b, nb), numel = val(s, i, ks->numel, b, nb);
        if (numel < 0)
            FAIL(s, i, "%lld elements", (long long)numel);
        if (grid < (numel > 0 ? 1 : 0) || grid > 2147483647)
            FAIL(s, i, "grid %lld for %lld elements (%s = %lld)", (long long)grid, (long long)numel,
                 nb ? b[0].name : "-", nb ? (long long)b[0].value : 0LL);
        if (ks->grid_cap < 1)
            FAIL(s, i, "grid cap %lld", (long long)ks->grid_cap);
        int64_t threads = (int64_t)ks->block[0] * ks->block[1] * ks->block[2];
        if (ks->kind == SCH_POINTWISE) {
            int64_t per = ks->foreach ? ks->chunk : ks->tile >= 0 ? (int64_t)ks->tw * ks->tw : threads * ks->vec * ks->unroll;
            if (grid * per < numel)
                FAIL(s, i, "grid %lld of %lld elements each does not cover %lld", (long long)grid,
                     (long long)per, (long long)numel);
        } else {
            int64_t rows = val(s, i, ks->rows, b, nb), rowlen = val(s, i, ks->rowlen, b, nb);
            if (rows * rowlen != numel)
                FAIL(s, i, "%lld rows of %lld elements, but %lld elements", (long long)rows,
                     (long long)rowlen, (long long)numel);
            if (ks->kind == SCH_SCAN && grid * threads < rows)
                FAIL(s, i, "grid %lld of %lld threads for %lld lanes", (long long)grid, (long long)threads,
                     (long long)rows);
            if (ks->kind == SCH_ROWS && grid * (ks->rblock ? ks->rblock : 1) < rows)
                FAIL(s, i, "grid %lld for %lld rows", (long long)grid, (long long)rows);
            if (ks->kind == SCH_COLUMNS) {
                int64_t groups = grid / (ks->split ? ks->split : 1);
                if (groups * ks->block[0] * ks->vec < rows)
                    FAIL(s, i, "%lld column groups of %d x %d do not cover %lld columns", (long long)groups,
                         ks->block[0], ks->vec, (long long)rows);
            }
        }
        checked++;
    }
    return checked;
}

/* ---- the corpus ----------------------------------------------------------- */

typedef struct tally {
    int progs, fns, kernels, bindings, grids;
    int kinds[6];
} tally;

static void check_program(const cprog *p, uint64_t *s, tally *t)
{
    cur_prog = p->name;
    if (try_build(p->text, NULL, NULL) != TC_OK) {
        if (strncmp(p->name, "generated", 9) != 0)
            fail_msg("%s does not build: %s", p->name, H.d.msg ? H.d.msg : "?");
        return;
    }
    t->progs++;
    for (int i = 0; i < H.g->nfns; i++) {
        const gfn *g = H.g->fns[i];
        t->fns++;
        for (int w = 0; w < 2; w++) {
            const sfn *sf = schedule(g, w == 1);
            cur_s = sf;
            if (sf->nk != sf->f->nk)
                fail_msg("%s: fn %s: %d schedules for %d kernels", p->name, g->name, sf->nk, sf->f->nk);
            for (int k = 0; k < sf->nk; k++) {
                check_shape(sf, k);
                check_phases(sf, k);
                t->kernels += w == 0;
                t->kinds[sf->k[k].kind] += w == 0;
            }
            if (w == 1)
                continue;
            /* sizes 1..9, then larger ones */
            for (int r = 0; r < 8; r++) {
                tc_dimbind *b;
                int nb;
                if (!corpus_bind(g, s, r < 6 ? 9 : 5000, H.a, &b, &nb))
                    continue;
                t->bindings++;
                t->grids += check_grids(sf, b, nb);
            }
            /* every size 1 where the constraints allow it */
            tc_dimbind *b;
            int nb;
            if (corpus_bind(g, s, 1, H.a, &b, &nb))
                t->grids += check_grids(sf, b, nb);
        }
    }
}

static void test_sched_properties(void **state)
{
    (void)state;
    corpus c = corpus_all(NGEN, 7);
    uint64_t s = 5;
    tally t = {0};
    for (int i = 0; i < c.n; i++) {
        check_program(&c.p[i], &s, &t);
        arena_reset(H.a);
    }
    print_message("sched: %d programs, %d functions, %d kernels (pointwise %d, rows %d, columns %d, "
                  "full %d, extern %d, scan %d); %d bindings, %d grids checked\n",
                  t.progs, t.fns, t.kernels, t.kinds[SCH_POINTWISE], t.kinds[SCH_ROWS],
                  t.kinds[SCH_COLUMNS], t.kinds[SCH_FULL], t.kinds[SCH_EXTERN], t.kinds[SCH_SCAN],
                  t.bindings, t.grids);
    /* every strategy exercised */
    for (int k = 0; k < 6; k++)
        assert_true(t.kinds[k] > 0);
    corpus_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sched_properties, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
