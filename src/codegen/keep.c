/* keep.c - the values a persistent row's epilogue takes from registers
 * instead of computing them again (TENSORC_ROWS_KEEP; on unless 0).
 *
 * A rows kernel that holds its row in registers (rows.c, items > 0)
 * computes each pass's values at the element from the loads it kept
 * (load.c's pc arrays), so softmax's epilogue computes exp(x - max) again,
 * as its sum pass did: an accurate expf an element twice.  Where every
 * value the epilogue needs at the element reaches the row's loads only
 * through values the last reduction pass computes at the same element,
 * those values are kept in register arrays of their own (pc arrays too:
 * pass P fills them, later passes read them), and the loads' arrays are
 * dead after that pass.  The plan is taken only when the kept arrays take
 * no more registers than the loads' arrays that die (a 16-bit row's packed
 * loads free half an f32 array each), so the items a thread that sched.c
 * sized to the register cap still fit.  The same expressions at the same
 * elements: the same bits.
 *
 * The walk is over lowered nodes at their element indices (as emit.c's
 * value() composes them), so a value found here is the one value() meets;
 * where the two ever disagree the epilogue finds no kept entry and computes
 * the value as before (cg_kept returns NULL).
 */
#include "codegen/cg.h"


typedef struct kset {
    struct cg_keep *v;
    int n, cap;
} kset;

static int find(const kset *s, const lnode *n, const tc_dim *const *idx)
{
    for (int i = 0; i < s->n; i++) {
        bool eq = s->v[i].n == n;
        for (int k = 0; k < n->rank && eq; k++)
            eq = s->v[i].key[k] == idx[k];
        if (eq)
            return i;
    }
    return -1;
}

static void add(cg *g, kset *s, const lnode *n, const tc_dim *const *idx)
{
    ARENA_GROW(g->a, s->v, s->n, s->cap, 16);
    const tc_dim **key = ARENA_ARRAY(g->a, const tc_dim *, n->rank > 0 ? n->rank : 1);
    for (int k = 0; k < n->rank; k++)
        key[k] = idx[k];
    s->v[s->n++] = (struct cg_keep){n, key};
}

/* read from a buffer in this kernel (emit.c's value(): a load) */
static bool is_load(const cg *g, const lnode *n)
{
    return n->kind == LK_INPUT || (g->f->stored[n->id] && g->f->kernel_of[n->id] != g->k->id);
}

/* computed at the element by value() from its inputs */
static bool computed(const cg *g, const lnode *n)
{
    return n->kind == LK_POINTWISE && n->op != OP_iota && !is_load(g, n);
}

static bool at_element(cg *g, const lnode *n, const tc_dim *const *idx)
{
    return n->rank > 0 && n->kind != LK_CONST && n->kind != LK_SCALAR && n->kind != LK_DIMVAL &&
           cg_target_of(g, n, idx) == T_ELEM;
}

/* A pass's values at the element: the computed ones into S (when given),
 * the loads into L; seen: visited. */
static void walk_pass(cg *g, const lnode *n, const tc_dim *const *idx, kset *S, kset *L, kset *seen)
{
    if (!at_element(g, n, idx) || find(seen, n, idx) >= 0)
        return;
    add(g, seen, n, idx);
    if (is_load(g, n)) {
        if (find(L, n, idx) < 0)
            add(g, L, n, idx);
        return;
    }
    if (!computed(g, n))
        return; /* its loads (a concat's, a gather's) are not counted as freed: no harm */
    if (S)
        add(g, S, n, idx);
    for (int i = 0; i < n->nin; i++) {
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(g->l, &n->in[i], idx, n->rank, ci);
        walk_pass(g, n->in[i].src, ci, S, L, seen);
    }
}

/* The epilogue's values at the element: those S has into K (not walked
 * further), the loads it still reads into live; false if it meets a value
 * whose reads it cannot see (a concat, a gather). */
static bool walk_epi(cg *g, const lnode *n, const tc_dim *const *idx, const kset *S, kset *K, kset *live,
                     kset *seen)
{
    if (!at_element(g, n, idx) || find(seen, n, idx) >= 0)
        return true;
    add(g, seen, n, idx);
    if (find(S, n, idx) >= 0) {
        add(g, K, n, idx);
        return true;
    }
    if (is_load(g, n)) {
        add(g, live, n, idx);
        return true;
    }
    if (!computed(g, n))
        return false;
    for (int i = 0; i < n->nin; i++) {
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(g->l, &n->in[i], idx, n->rank, ci);
        if (!walk_epi(g, n->in[i].src, ci, S, K, live, seen))
            return false;
    }
    return true;
}

/* whether computing n at idx again calls library math (cg_is_libcall: an
 * expf, a logf, ...) before it reaches a load or a value the pass does not
 * compute: keeping only a subtraction (layernorm's x - mean) saves an
 * instruction and spilled (24 bytes at the 40-register cap) */
static bool costly(cg *g, const lnode *n, const tc_dim *const *idx)
{
    if (!at_element(g, n, idx) || !computed(g, n))
        return false;
    if (cg_is_libcall(n->op))
        return true;
    for (int i = 0; i < n->nin; i++) {
        const tc_dim *ci[TC_MAX_RANK];
        lir_compose(g->l, &n->in[i], idx, n->rank, ci);
        if (costly(g, n->in[i].src, ci))
            return true;
    }
    return false;
}

/* registers an element of n takes in a pc array (load.c: 16-bit vectors
 * kept packed, two elements a register) */
static int regs_x2(const lnode *n, int vec, bool load)
{
    if (load && vec > 1 && dtype_size(n->dtype) < 4)
        return 1;
    return n->dtype == TC_F64 || n->dtype == TC_I64 ? 4 : 2;
}

void cg_keep_plan(cg *g, int vec)
{
    const fkernel *k = g->k;
    const ksched *ks = g->ks;
    g->pr.nkeep = 0;
    g->pr.keep_phase = ks->nphases - 1;
    if (g->f->knobs.rows_keep == 0 || ks->nphases < 1 || k->ncols || k->partials || ks->online_sum)
        return;
    kset S = {0}, L = {0}, K = {0}, live = {0}, seen = {0};
    for (int p = 0; p < ks->nphases; p++) {
        seen.n = 0;
        for (int j = 0; j < k->nreds; j++)
            if (ks->phase[j] == p && k->reds[j]->kind == LK_REDUCE)
                walk_pass(g, k->reds[j]->in[0].src, k->reds[j]->in[0].idx, p == g->pr.keep_phase ? &S : NULL,
                          &L, &seen);
    }
    /* the epilogue as it is (every value from the loads: old holds the
     * loads it reads) and with S's values kept (live: those it still reads) */
    kset none = {0}, K0 = {0}, old = {0}, seen0 = {0};
    seen.n = 0;
    for (int i = 0; i < k->nstores; i++) {
        const lnode *s = k->stores[i];
        const tc_dim *idx[TC_MAX_RANK];
        if (!fuse_is_element(k, s) || !fuse_node_index(g->f, k, s, idx))
            continue;
        if (!walk_epi(g, s, idx, &none, &K0, &old, &seen0) || !walk_epi(g, s, idx, &S, &K, &live, &seen))
            return;
    }
    /* the registers kept against those freed: the pc arrays (loaded in a
     * reduction pass) the epilogue read and no longer does */
    int cost = 0, freed = 0;
    bool saves = false;
    for (int i = 0; i < K.n; i++) {
        cost += regs_x2(K.v[i].n, vec, false);
        saves = saves || costly(g, K.v[i].n, K.v[i].key);
    }
    for (int i = 0; i < L.n; i++)
        if (find(&old, L.v[i].n, L.v[i].key) >= 0 && find(&live, L.v[i].n, L.v[i].key) < 0)
            freed += regs_x2(L.v[i].n, vec, true);
    if (!saves || cost > freed)
        return;
    /* the pair in one combine (rows.c's rpair): its sum's pass computes
     * exp(x - the thread's max), which the epilogue rescales to the row's
     * (cg_finish_pair, cg_kept); no other value of that pass is the
     * epilogue's */
    const lnode *E = ks->rpair_sum ? k->reds[ks->rpair_sum - 1]->in[0].src : NULL;
    for (int i = 0; g->pr.rpair && i < K.n; i++)
        if (K.v[i].n != E)
            return;
    g->pr.keep = K.v;
    g->pr.nkeep = K.n;
}

bool cg_keep_planned(const cg *g, const lnode *n, const tc_dim *const *key)
{
    const kset plan = {g->pr.keep, g->pr.nkeep, g->pr.nkeep};
    return find(&plan, n, key) >= 0;
}
