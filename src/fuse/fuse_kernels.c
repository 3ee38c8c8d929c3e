/* fuse_kernels.c - the fkernels of the final union-find sets: launch order
 * (Kahn's over kernel edges, lowest anchor first, with a heap), which values
 * are stored, and each kernel's reductions, stores, inlined nodes, reads,
 * cost and name, in node order. */
#include "fuse/fuse_internal.h"

#include <stdlib.h>

/* Walk the inline closure of kernel k from node n: inlined nodes into
 * inl, loads (parameters, other kernels' anchors) into rd, each once
 * (stamp k->id + 1). */
static void gather(fctx *x, fkernel *k, lnode *n, int *st, ilist *inl, ilist *rd)
{
    for (int i = 0; i < n->nin; i++) {
        lnode *s = n->in[i].src;
        if (st[s->id] == k->id + 1)
            continue;
        if (is_leaf(s)) {
            if (s->kind == LK_INPUT) {
                st[s->id] = k->id + 1;
                ipush(x->a, rd, s->id);
            }
        } else if (x->anchor[s->id]) {
            if (x->out->kernel_of[s->id] != k->id) {
                st[s->id] = k->id + 1;
                ipush(x->a, rd, s->id); /* else a member of this kernel, gathered on its own */
            }
        } else {
            st[s->id] = k->id + 1;
            ipush(x->a, inl, s->id);
            gather(x, k, s, st, inl, rd);
        }
    }
}

/* The name's stem: the first six distinct op names among members and
 * inlined nodes (ids ascending, both lists sorted); "matmul" for an extern.
 * The name is the stem, "_" and the id. */
static const char *kernel_stem(fctx *x, fkernel *k, const int *mem, int nmem, const int *inl, int ninl)
{
    if (k->kind == KK_EXTERN)
        return "matmul";
    tc_buf b;
    buf_init(&b, x->a);
    buf_puts(&b, k->kind == KK_REDUCE ? "tc_red_fused" : k->kind == KK_SCAN ? "tc_scan_fused" : "tc_poi_fused");
    const char *seen[8];
    int nseen = 0;
    for (int i = 0, j = 0; (i < nmem || j < ninl) && nseen < 6;) {
        int id = j >= ninl || (i < nmem && mem[i] < inl[j]) ? mem[i++] : inl[j++];
        const lnode *n = x->f->nodes[id];
        if (n->kind == LK_MATMUL)
            continue;
        const char *nm = n->kind == LK_REDUCE ? red_kind_name(n->a.red.kind) : op_table[n->op].name;
        bool dup = false;
        for (int q = 0; q < nseen; q++)
            dup |= strcmp(seen[q], nm) == 0;
        if (!dup) {
            seen[nseen++] = nm;
            buf_printf(&b, "_%s", nm);
        }
    }
    return buf_str(&b);
}

/* A binary min-heap of root ids: Kahn's order takes the lowest anchor
 * first among the kernels ready to launch. */
static void heap_push(int *h, int *n, int v)
{
    int i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static int heap_pop(int *h, int *n)
{
    int top = h[0], v = h[--*n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] < h[c])
            c++;
        if (h[c] >= v)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = v;
    return top;
}

void fuse_build_kernels(fctx *x)
{
    ffn *o = x->out;
    int n = x->n, nn = n > 0 ? n : 1;
    /* roots in launch order: Kahn over kernel dependencies, lowest anchor first */
    int *indeg = ARENA_ARRAY(x->a, int, nn);
    int *st = ARENA_ARRAY(x->a, int, nn);
    ilist *succ = ARENA_ARRAY(x->a, ilist, nn);
    int nroots = 0;
    for (int r = 0; r < n; r++) {
        if (!x->anchor[r] || find(x, r) != r)
            continue;
        nroots++;
        FOR_MEMBERS(x, r, -1, i)
            for (int j = 0; j < x->deps[i].n; j++) {
                int rd = find(x, x->deps[i].v[j]->id);
                if (rd != r && st[rd] != r + 1) {
                    st[rd] = r + 1;
                    ipush(x->a, &succ[rd], r);
                    indeg[r]++;
                }
            }
    }
    o->k = ARENA_ARRAY(x->a, fkernel *, nroots > 0 ? nroots : 1);
    int *kid = ARENA_ARRAY(x->a, int, nn);
    int *heap = ARENA_ARRAY(x->a, int, nroots > 0 ? nroots : 1);
    int nheap = 0;
    for (int r = 0; r < n; r++)
        if (x->anchor[r] && find(x, r) == r && indeg[r] == 0)
            heap_push(heap, &nheap, r);
    for (int step = 0; step < nroots; step++) {
        if (nheap == 0)
            diag_error(x->d, TC_ERR_INTERNAL, x->f->g->loc, "fusion: the kernels form a cycle");
        int pick = heap_pop(heap, &nheap);
        for (int j = 0; j < succ[pick].n; j++)
            if (--indeg[succ[pick].v[j]] == 0)
                heap_push(heap, &nheap, succ[pick].v[j]);
        fkernel *k = ARENA_NEW(x->a, fkernel);
        k->id = o->nk;
        kid[pick] = k->id;
        kdesc d = x->desc[pick];
        k->kind = d.kind;
        k->rank = d.rank;
        k->dom = (const tc_dim **)d.dom;
        k->mask = d.mask;
        k->reverse = d.reverse;
        k->inner = d.kind == KK_REDUCE && inner_reduction(d.rank, d.mask);
        if (d.kind != KK_EXTERN) {
            kcost c;
            x->limit = NULL;
            fuse_kernel_cost(x, pick, -1, d, &c);
            k->passes = c.passes;
            k->work = c.work;
            k->regs = c.regs;
        }
        o->k[o->nk++] = k;
    }
    for (int i = 0; i < n; i++)
        o->kernel_of[i] = x->anchor[i] ? kid[find(x, i)] : -1;

    /* stored: parameters, outputs, operands of externs, anchors read elsewhere */
    for (int i = 0; i < n; i++) {
        lnode *v = x->f->nodes[i];
        if (v->kind == LK_INPUT)
            o->stored[i] = true;
        if (!x->anchor[i])
            continue;
        /* a value cut by the inline limit is stored only where another
         * kernel reads it; in its readers' kernel it is computed inline */
        /* a scan, like a reduction, lives in registers unless read elsewhere */
        if ((v->kind != LK_REDUCE && v->kind != LK_SCAN && !x->cut[i]) || v->output >= 0)
            o->stored[i] = true;
        for (int j = 0; j < x->deps[i].n; j++) {
            lnode *dpd = x->deps[i].v[j];
            if (o->kernel_of[dpd->id] != o->kernel_of[i])
                o->stored[dpd->id] = true;
        }
    }
    for (int i = 0; i < n; i++) {
        lnode *v = x->f->nodes[i];
        if (v->kind == LK_MATMUL)
            for (int j = 0; j < 2; j++)
                o->stored[v->in[j].src->id] = true;
    }

    /* each kernel's lists, in node order, from its members alone */
    for (int i = 0; i < n; i++)
        st[i] = 0;
    int *root_of_k = ARENA_ARRAY(x->a, int, nroots > 0 ? nroots : 1);
    for (int r = 0; r < n; r++)
        if (x->anchor[r] && find(x, r) == r)
            root_of_k[kid[r]] = r;
    for (int kk = 0; kk < o->nk; kk++) {
        fkernel *k = o->k[kk];
        int r = root_of_k[kk];
        ilist mem = {0}, inl = {0}, rd = {0};
        FOR_MEMBERS(x, r, -1, i)
            ipush(x->a, &mem, i);
        qsort(mem.v, (size_t)mem.n, sizeof *mem.v, cmp_int);
        int nred = 0, nst = 0;
        for (int q = 0; q < mem.n; q++) {
            int i = mem.v[q];
            lnode *v = x->f->nodes[i];
            bool acc = v->kind == LK_REDUCE || v->kind == LK_SCAN;
            if (!acc && !o->stored[i] && st[i] != k->id + 1) {
                st[i] = k->id + 1; /* a cut value that stayed in one kernel */
                ipush(x->a, &inl, i);
            }
            nred += acc;
            nst += o->stored[i] && v->kind != LK_MATMUL;
            if (v->kind == LK_MATMUL) {
                k->ext = v;
                for (int j = 0; j < 2; j++)
                    if (st[v->in[j].src->id] != k->id + 1) {
                        st[v->in[j].src->id] = k->id + 1;
                        ipush(x->a, &rd, v->in[j].src->id);
                    }
            } else {
                gather(x, k, v, st, &inl, &rd);
            }
        }
        if (inl.n)
            qsort(inl.v, (size_t)inl.n, sizeof *inl.v, cmp_int);
        if (rd.n)
            qsort(rd.v, (size_t)rd.n, sizeof *rd.v, cmp_int);
        k->reds = ARENA_ARRAY(x->a, lnode *, nred > 0 ? nred : 1);
        k->stores = ARENA_ARRAY(x->a, lnode *, nst > 0 ? nst : 1);
        k->inl = ARENA_ARRAY(x->a, lnode *, inl.n > 0 ? inl.n : 1);
        k->reads = ARENA_ARRAY(x->a, lnode *, rd.n > 0 ? rd.n : 1);
        for (int q = 0; q < mem.n; q++) {
            lnode *v = x->f->nodes[mem.v[q]];
            if (v->kind == LK_REDUCE || v->kind == LK_SCAN)
                k->reds[k->nreds++] = v;
            if (o->stored[v->id] && v->kind != LK_MATMUL)
                k->stores[k->nstores++] = v;
        }
        for (int q = 0; q < inl.n; q++)
            k->inl[k->ninl++] = x->f->nodes[inl.v[q]];
        for (int q = 0; q < rd.n; q++)
            k->reads[k->nreads++] = x->f->nodes[rd.v[q]];
        k->stem = kernel_stem(x, k, mem.v, mem.n, inl.v, inl.n);
        k->name = arena_printf(x->a, "%s_%d", k->stem, k->id);
    }
}

