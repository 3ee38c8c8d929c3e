/* fuse_colpart.c - column reductions carried by a rows kernel as partial
 * sums (fuse.h, "Column partials"), after the kernels are built.
 *
 * The merge rules keep a reduction over the leading axes (a column sum)
 * apart from a rows kernel over the same domain: a block per row cannot
 * finish a column.  But a column sum whose input is pointwise in the rows
 * kernel's values (layernorm's backward: dw = sum(dout * xhat, axis=0),
 * xhat from the row statistics) needs only each row's contribution, which
 * the rows kernel has in registers in its epilogue: so the rows kernel
 * accumulates it per column over a fixed block of rows and writes one
 * partial row per block, and the column kernel sums those partials instead
 * of reading x and dout again.  The column kernel keeps its reductions and
 * stores (the plan and the dumps are unchanged around it); it reads no
 * input of its own any more.
 */
#include "fuse/fuse_internal.h"

int fuse_col_rows(const tc_knobs *k)
{
    return k && k->col_rows > 0 ? k->col_rows : FUSE_COL_ROWS;
}

typedef struct cpwalk {
    fctx *x;
    const fkernel *c;       /* the column kernel */
    int rows;               /* the rows kernel found, or -1 */
    int latest;             /* the latest other kernel whose buffer is read */
    const char *why;
    int steps;
    const lnode *full[8];   /* buffers it reads at its own element (over the whole domain) */
    int nfull;
} cpwalk;

static void read_full(cpwalk *w, const lnode *n, const tc_dim **idx)
{
    const fkernel *c = w->c;
    if (w->nfull == 8 || n->rank != c->rank || !same_shape(n->rank, n->shape, c->rank, c->dom) ||
        !lir_is_identity(w->x->f, idx, n->rank))
        return;
    for (int i = 0; i < w->nfull; i++)
        if (w->full[i] == n)
            return;
    w->full[w->nfull++] = n;
}

static bool is_rows_of(const fkernel *k, const fkernel *c)
{
    unsigned all = c->rank >= 32 ? ~0u : (1u << c->rank) - 1;
    return k->kind == KK_REDUCE && k->inner && !k->partials && k->rank == c->rank &&
           same_shape(k->rank, k->dom, c->rank, c->dom) && k->mask == (all & ~c->mask);
}

/* n's value at idx (over the column kernel's variables) can be computed in
 * the rows kernel's epilogue: pointwise in leaves, in buffers of earlier
 * kernels, and in the rows kernel's own values at their element or row. */
static bool walk(cpwalk *w, const lnode *n, const tc_dim **idx)
{
    fctx *x = w->x;
    const ffn *o = x->out;
    if (is_leaf(n)) {
        if (n->kind == LK_INPUT)
            read_full(w, n, idx);
        return true;
    }
    if (++w->steps > 100000) { /* a shared subexpression walked once per path: bounded */
        w->why = "the column sum's input is too large to walk";
        return false;
    }
    if (x->anchor[n->id]) {
        int kid = o->kernel_of[n->id];
        if (kid == w->c->id) {
            w->why = "the column sum reads a reduction of its own kernel";
            return false;
        }
        const fkernel *k = o->k[kid];
        if (!is_rows_of(k, w->c)) {
            read_full(w, n, idx);
            if (kid > w->latest)
                w->latest = kid; /* a buffer: it must be written before the rows kernel */
            return true;
        }
        if (w->rows >= 0 && w->rows != kid) {
            w->why = "the column sum reads two rows kernels";
            return false;
        }
        const tc_dim *want[TC_MAX_RANK];
        w->rows = kid; /* (named by a refusal too) */
        if (!fuse_node_index(o, k, n, want)) {
            w->why = "a value of the rows kernel outside its domain";
            return false;
        }
        for (int i = 0; i < n->rank; i++)
            if (want[i] != idx[i]) {
                w->why = "the column sum reads the rows kernel's value at another row or element";
                return false;
            }
        return true;
    }
    if (n->kind != LK_POINTWISE) {
        w->why = "the column sum's input is not pointwise";
        return false;
    }
    for (int i = 0; i < n->nin; i++) {
        const lref *r = &n->in[i];
        const tc_dim **ci = ARENA_ARRAY(x->a, const tc_dim *, r->src->rank > 0 ? r->src->rank : 1);
        lir_compose(x->f, r, idx, n->rank, ci);
        if (!walk(w, r->src, ci))
            return false;
    }
    return true;
}

/* Whether n, a value column kernel c stores or computes after its
 * reductions, reads a buffer (an input or another kernel's value) other
 * than through them: once the partials are carried, c reads nothing of
 * its own (its reads go to the rows kernel), so such an epilogue (a
 * column sum plus another kernel's total: random seeds 11 and 12 had
 * `sum((x - mean(x)) * x, axis=0) + sum(rowsum, axis=0)`) keeps c apart.
 * Shared subexpressions are walked once per path, bounded as walk() is. */
static bool epilogue_reads(fctx *x, const fkernel *c, const lnode *n, int *steps)
{
    for (int j = 0; j < c->nreds; j++)
        if (n == c->reds[j])
            return false;
    if (is_leaf(n))
        return n->kind == LK_INPUT;
    if (++*steps > 100000 || (x->anchor[n->id] && x->out->kernel_of[n->id] != c->id))
        return true;
    for (int i = 0; i < n->nin; i++)
        if (epilogue_reads(x, c, n->in[i].src, steps))
            return true;
    return false;
}

/* The rows kernel that can carry column kernel c, or -1 (w->why says why
 * when c reads one but cannot). */
static int carrier(cpwalk *w)
{
    const fkernel *c = w->c;
    fctx *x = w->x;
    unsigned all = c->rank >= 32 ? ~0u : (1u << c->rank) - 1;
    if (c->kind != KK_REDUCE || c->inner || c->mask == all || c->nreds == 0 || c->partials || c->ncols)
        return -1;
    /* the leading axes reduced, the trailing kept */
    if (!inner_reduction(c->rank, all & ~c->mask))
        return -1;
    for (int i = 0; i < c->nstores; i++)
        if (fuse_is_element(c, c->stores[i]))
            return -1;
    for (int j = 0; j < c->nreds; j++) {
        const lnode *r = c->reds[j];
        if (r->a.red.kind != RK_SUM || !dtype_is_float(r->dtype) ||
            !lir_is_identity(x->f, r->in[0].idx, c->rank) || r->in[0].src->rank != c->rank)
            return -1;
    }
    for (int j = 0; j < c->nreds; j++)
        if (!walk(w, c->reds[j]->in[0].src, (const tc_dim **)x->f->vars))
            return -1;
    int steps = 0;
    for (int i = 0; i < c->nstores; i++)
        if (epilogue_reads(x, c, c->stores[i], &steps)) {
            w->why = "the column kernel's epilogue reads a buffer besides its sums";
            return -1;
        }
    /* none of its values read: a rows kernel over the domain that reads
     * one of the same buffers at its own element (a vjp's backward: both
     * read x and dout, the statistics saved), the latest such */
    for (int i = c->id - 1; i >= 0 && w->rows < 0; i--) {
        const fkernel *k = x->out->k[i];
        if (!is_rows_of(k, c))
            continue;
        for (int j = 0; j < k->nreads && w->rows < 0; j++)
            for (int q = 0; q < w->nfull; q++)
                if (k->reads[j] == w->full[q])
                    w->rows = i;
    }
    if (w->rows < 0)
        return -1;
    if (w->latest >= w->rows) {
        w->why = "the column sum reads a buffer written after the rows kernel";
        return -1;
    }
    return w->rows;
}

static void add_decision(fctx *x, const lnode *p, const lnode *c, bool fused, const char *why,
                         const char *limit)
{
    ffn *o = x->out;
    ARENA_GROW(x->a, o->dec, o->ndec, x->capdec, 16);
    o->dec[o->ndec++] = (fdecision){.producer = p, .consumer = c, .fused = fused, .why = why, .limit = limit};
}

static void append(tc_arena *a, lnode ***v, int *n, lnode *e)
{
    for (int i = 0; i < *n; i++)
        if ((*v)[i] == e)
            return;
    lnode **w = ARENA_ARRAY(a, lnode *, *n + 1);
    if (*n)
        memcpy(w, *v, sizeof *w * (size_t)*n);
    w[(*n)++] = e;
    *v = w;
}

void fuse_col_partials(fctx *x)
{
    ffn *o = x->out;
    for (int i = 0; i < o->nk; i++) {
        fkernel *c = o->k[i];
        cpwalk w = {x, c, -1, -1, NULL, 0, {0}, 0};
        int kr = carrier(&w);
        if (kr < 0) {
            if (w.why && w.rows >= 0)
                add_decision(x, o->k[w.rows]->reds[0], c->reds[0], false,
                             arena_printf(x->a, "column partials: %s", w.why), NULL);
            continue;
        }
        fkernel *k = o->k[kr];
        /* a thread keeps a sum per column of its row items (16 registers) */
        int regs = k->regs + 16 * c->nreds;
        if (regs > x->bud->max_regs && !x->f->g->elementwise) {
            add_decision(x, k->reds[0], c->reds[0], false,
                         arena_printf(x->a, "budget: column partials in the rows kernel would take "
                                            "about %d registers (at most %d)", regs, x->bud->max_regs),
                         "registers");
            continue;
        }
        for (int j = 0; j < c->nreds; j++)
            append(x->a, &k->cols, &k->ncols, c->reds[j]);
        for (int j = 0; j < c->ninl; j++)
            append(x->a, &k->inl, &k->ninl, c->inl[j]);
        for (int j = 0; j < c->nreads; j++) /* what k writes itself is in registers */
            if (c->reads[j]->kind == LK_INPUT || o->kernel_of[c->reads[j]->id] != k->id)
                append(x->a, &k->reads, &k->nreads, c->reads[j]);
        k->regs = regs;
        k->work += c->work;
        c->partials = k;
        c->reads = NULL;
        c->nreads = 0;
        c->inl = NULL;
        c->ninl = 0;
        c->work = c->nreds;
        /* k's stores that only c read (the row statistics) stay in registers */
        int ns = 0;
        for (int j = 0; j < k->nstores; j++) {
            lnode *st = k->stores[j];
            bool read = st->output >= 0;
            for (int q = 0; q < o->nk && !read; q++)
                for (int r = 0; r < o->k[q]->nreads && !read; r++)
                    read = o->k[q]->reads[r] == st;
            if (read)
                k->stores[ns++] = st;
            else
                o->stored[st->id] = false;
        }
        k->nstores = ns;
        add_decision(x, k->reds[0], c->reds[0], true,
                     arena_printf(x->a, "column partials: kernel %d's blocks of %d rows sum the column "
                                        "reductions' inputs per column (read once), kernel %d sums "
                                        "the partials in block order", k->id, fuse_col_rows(&o->knobs), c->id),
                     NULL);
    }
}
