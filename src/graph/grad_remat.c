/* grad_remat.c - `fn f_fwd, f_bwd = vjp(f, wrt=[x, w])`: what the forward
 * saves for the backward, and the two functions.
 *
 * grad.c builds the joint function (f's parameters and the cotangents ->
 * f's outputs and the gradients), as for grad(f).  Its nodes split in two:
 * those that depend on a cotangent (the backward's) and the rest (values of
 * the forward, including those the rules made from forward values alone,
 * such as rsqrt(var)^3).  Every forward value a backward node reads must
 * reach the backward: saved (the forward writes it, the backward reads it)
 * or recomputed from other values that reach it.  The choice is a rule over
 * a model of bytes moved, walked from the backward's reads towards the
 * parameters:
 *   - a parameter is the backward's own (it takes f's parameters), a
 *     constant, dim or iota is free;
 *   - a pointwise value, view, cast, copy, concat or gather is recomputed
 *     from its inputs, which are then needed in turn: saving it would cost
 *     a write in the forward and a read in the backward of its whole size,
 *     where recomputing reads its inputs, which the backward mostly reads
 *     anyway (layernorm's x - mean(x), gelu(h));
 *   - a reduction, scan or matmul is saved: a reduction's result is smaller
 *     than what it reads (a row's mean and variance: 1/D of the row), a
 *     matmul costs compute to redo, and a scan saves its whole carry
 *     (its carries every K steps between the halves is not built; inside
 *     one function, sched_ckpt.c checkpoints a scan's walk for the
 *     reversed walk that reads it);
 *   - a rank-0 value is recomputed (saved it would be a host scalar between
 *     the calls), so a full reduction's input is needed instead.
 * The cut this walk makes is the min-cut of bytes for the graphs the rules
 * make where every saved reduction is smaller than its input; it is not a
 * general max-flow (a pointwise value of two saved matmuls is recomputed
 * from both, where saving it alone would be cheaper if nothing else read
 * them).
 *
 * The forward: f's parameters -> f's outputs, then the saved values
 * ("saved_" + the variable's name, or "saved" + a number).  The backward:
 * f's parameters, the saved values, the cotangents -> the gradients.  Both
 * carry the choice as text (gfn.remat) for explain and --emit=sched: each
 * saved value with its type and source, the values recomputed, and the bytes
 * against saving every forward value the backward reads (a tape's choice).
 */
#include "grad.h"

#include <ctype.h>
#include <string.h>

typedef struct remat {
    builder *b;
    gfn *j;          /* the joint function */
    int np;          /* f's parameters: j->params[0, np); the cotangents after */
    int nfo;         /* f's outputs: j->outputs[0, nfo); the gradients after */
    bool *bwd;       /* node id -> depends on a cotangent */
    bool *saved;     /* node id -> the forward saves it */
    gnode **save;    /* the saved nodes, in id order */
    const char **names;
    int nsave;
    bool scans_recomputed; /* needed scans recomputed from parameters the backward reads anyway */
} remat;

static bool is_leaf(const gnode *n) { return op_table[n->op].kind == OPK_LEAF; }

/* Recomputed where the backward needs it, rather than saved. */
static bool cheap(const gnode *n)
{
    switch (op_table[n->op].kind) {
    case OPK_UNARY: case OPK_BINARY: case OPK_TERNARY: case OPK_CAST:
    case OPK_VIEW: case OPK_COPY: case OPK_CONCAT: case OPK_GATHER:
        return true;
    default:
        return n->rank == 0;
    }
}

static const tc_dim *bytes_of(remat *r, const gnode *n)
{
    tc_dimctx *dc = r->j->dims;
    const tc_dim *s = dim_const(dc, dtype_size(n->dtype));
    for (int i = 0; i < n->rank; i++)
        s = dim_mul(dc, s, n->shape[i]);
    return s;
}

static bool name_used(const remat *r, const char *name)
{
    for (int i = 0; i < r->j->nparams; i++)
        if (strcmp(r->j->params[i].name, name) == 0)
            return true;
    for (int i = 0; i < r->j->noutputs; i++)
        if (strcmp(r->j->outputs[i].name, name) == 0)
            return true;
    for (int i = 0; i < r->nsave; i++)
        if (r->names[i] && strcmp(r->names[i], name) == 0)
            return true;
    return false;
}

/* "saved_" + the variable's name, else the op's ("saved_mean"), made unique. */
static const char *saved_name(remat *r, const gnode *n)
{
    bool ident = n->name && n->name[0] && (isalpha((unsigned char)n->name[0]) || n->name[0] == '_');
    for (const char *c = n->name; ident && *c; c++)
        ident = isalnum((unsigned char)*c) || *c == '_';
    const char *base = arena_printf(r->b->a, "saved_%s", ident ? n->name : op_table[n->op].name);
    const char *name = base;
    for (int i = 2; name_used(r, name); i++)
        name = arena_printf(r->b->a, "%s%d", base, i);
    return name;
}

static void node_text(tc_buf *t, const gnode *n)
{
    graph_print_type(t, n->dtype, n->rank, n->shape);
    buf_printf(t, ", %s at line %d:%d", op_table[n->op].name, n->loc.line, n->loc.col);
}

/* Settle every needed forward node, from the backward's reads towards the
 * parameters (inputs come first, so each node is settled before them):
 * recomputed (its inputs needed in turn) or saved; a pure scan is
 * recomputed when scans is set.  Returns the scans recomputed. */
static int walk(remat *r, bool *need, bool scans, const bool *pure, bool *saved, bool *recomp)
{
    int nscan = 0;
    for (int i = r->j->nnodes - 1; i >= 0; i--) {
        gnode *v = r->j->nodes[i];
        if (!need[i] || r->bwd[i] || is_leaf(v))
            continue;
        bool scan = op_table[v->op].kind == OPK_SCAN;
        if (cheap(v) || (scans && scan && pure[i])) {
            recomp[i] = true;
            nscan += scan;
            for (int k = 0; k < v->nin; k++)
                need[v->in[k]->id] = true;
        } else {
            saved[i] = true;
        }
    }
    return nscan;
}

/* Decide the saved set, and describe it in text. */
static const char *choose(remat *r, const char *fwd_name, const char *bwd_name, const char *f_name)
{
    gfn *j = r->j;
    int n = j->nnodes;
    r->bwd = ARENA_ARRAY(r->b->a, bool, n ? n : 1);
    r->saved = ARENA_ARRAY(r->b->a, bool, n ? n : 1);
    bool *need = ARENA_ARRAY(r->b->a, bool, n ? n : 1);
    bool *frontier = ARENA_ARRAY(r->b->a, bool, n ? n : 1);
    bool *recomp = ARENA_ARRAY(r->b->a, bool, n ? n : 1);
    for (int i = r->np; i < j->nparams; i++)
        r->bwd[j->params[i].node->id] = true;
    for (int i = 0; i < n; i++) {
        gnode *v = j->nodes[i];
        for (int k = 0; k < v->nin; k++)
            r->bwd[i] |= r->bwd[v->in[k]->id];
        if (r->bwd[i])
            for (int k = 0; k < v->nin; k++)
                if (!r->bwd[v->in[k]->id])
                    need[v->in[k]->id] = frontier[v->in[k]->id] = true;
    }
    /* a gradient that depends on no cotangent (zeros, or a wrt parameter f
     * ignores) is the backward's too */
    for (int i = r->nfo; i < j->noutputs; i++)
        if (!r->bwd[j->outputs[i].node->id])
            need[j->outputs[i].node->id] = frontier[j->outputs[i].node->id] = true;
    /* pure: computed from parameters through cheap nodes and scans alone */
    bool *pure = ARENA_ARRAY(r->b->a, bool, n ? n : 1);
    for (int i = 0; i < n; i++) {
        gnode *v = j->nodes[i];
        pure[i] = is_leaf(v) || cheap(v) || op_table[v->op].kind == OPK_SCAN;
        for (int k = 0; k < v->nin && pure[i]; k++)
            pure[i] = pure[v->in[k]->id];
    }
    /* scans saved (a), or recomputed where pure (b); b when it reads no
     * parameter that a does not */
    bool *needb = ARENA_ARRAY(r->b->a, bool, n ? n : 1);
    bool *savedb = ARENA_ARRAY(r->b->a, bool, n ? n : 1);
    bool *recompb = ARENA_ARRAY(r->b->a, bool, n ? n : 1);
    memcpy(needb, need, sizeof *need * (size_t)n);
    walk(r, need, false, pure, r->saved, recomp);
    int nrecomp = 0, nscan = walk(r, needb, true, pure, savedb, recompb);
    bool more = false; /* b reads a parameter that a does not */
    for (int i = 0; i < n; i++)
        more |= needb[i] && !need[i] && j->nodes[i]->op == OP_input;
    const tc_dim *scan_bytes = dim_const(j->dims, 0);
    for (int i = 0; i < n; i++)
        if (recompb[i] && op_table[j->nodes[i]->op].kind == OPK_SCAN)
            scan_bytes = dim_add(j->dims, scan_bytes, bytes_of(r, j->nodes[i]));
    r->scans_recomputed = nscan > 0 && !more;
    if (r->scans_recomputed) {
        memcpy(r->saved, savedb, sizeof *savedb * (size_t)n);
        memcpy(recomp, recompb, sizeof *recompb * (size_t)n);
    }
    for (int i = 0; i < n; i++) {
        r->nsave += r->saved[i];
        nrecomp += recomp[i];
    }
    r->save = ARENA_ARRAY(r->b->a, gnode *, r->nsave ? r->nsave : 1);
    r->names = ARENA_ARRAY(r->b->a, const char *, r->nsave ? r->nsave : 1);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (r->saved[i]) {
            r->save[k] = j->nodes[i];
            r->names[k] = saved_name(r, j->nodes[i]);
            k++;
        }

    /* the text: the choice, then the alternative */
    tc_dimctx *dc = j->dims;
    const tc_dim *sb = dim_const(dc, 0), *ab = dim_const(dc, 0);
    int nall = 0;
    for (int i = 0; i < r->nsave; i++)
        sb = dim_add(dc, sb, bytes_of(r, r->save[i]));
    for (int i = 0; i < n; i++)
        if (frontier[i] && !is_leaf(j->nodes[i])) {
            ab = dim_add(dc, ab, bytes_of(r, j->nodes[i]));
            nall++;
        }
    tc_buf t;
    buf_init(&t, r->b->a);
    buf_printf(&t, "  vjp of %s (%s saves, %s reads): %d value%s saved, ", f_name, fwd_name, bwd_name,
               r->nsave, r->nsave == 1 ? "" : "s");
    dim_print(&t, sb);
    buf_puts(&t, " bytes (each written by the forward and read by the backward)\n");
    for (int i = 0; i < r->nsave; i++) {
        buf_printf(&t, "    saved %s: ", r->names[i]);
        node_text(&t, r->save[i]);
        buf_putc(&t, '\n');
    }
    /* what is recomputed, by op, each op once */
    buf_printf(&t, "    recomputed by the backward: %d value%s", nrecomp,
               nrecomp == 1 ? "" : "s");
    bool seen[OP_COUNT] = {false};
    for (int i = 0, shown = 0; i < n; i++)
        if (recomp[i] && !seen[j->nodes[i]->op]) {
            seen[j->nodes[i]->op] = true;
            buf_printf(&t, "%s%s", shown++ ? ", " : ": ", op_table[j->nodes[i]->op].name);
        }
    if (nscan) {
        buf_printf(&t, "\n    %d scan%s ", nscan, nscan == 1 ? "" : "s");
        buf_puts(&t, r->scans_recomputed
                         ? "recomputed from the parameters, which the backward reads anyway (saved: "
                         : "saved: recomputing would read a parameter the backward does not read otherwise (");
        dim_print(&t, scan_bytes);
        buf_puts(&t, " bytes)");
        /* the seed's alternative: the carries every K steps (sched_ckpt.c's K) */
        buf_puts(&t, r->scans_recomputed
                         ? "\n    checkpointing them instead (the carries every K steps: 1/K of those bytes, each "
                           "segment recomputed by the backward) saves more than recomputing them (0 bytes): "
                           "recomputed"
                         : "\n    checkpointing them (the carries every K steps: 1/K of those bytes) is not built "
                           "between a vjp pair's halves: saved whole");
    }
    buf_printf(&t, "\n    saving every forward value the backward reads instead: %d value%s, ", nall,
               nall == 1 ? "" : "s");
    dim_print(&t, ab);
    buf_puts(&t, " bytes\n");
    return buf_str(&t);
}

/* A new function with j's dims and constraints; b->f is it, CSE empty. */
static gfn *new_fn(remat *r, const char *name, tc_loc loc)
{
    builder *b = r->b;
    gfn *g = graph_fn_new(b->a, name);
    g->loc = loc;
    g->dims = b->dc;
    g->syms = r->j->syms;
    g->nsyms = r->j->nsyms;
    g->cons = r->j->cons;
    g->ncons = r->j->ncons;
    g->capcons = r->j->ncons;
    b->f = g;
    hset_init(&b->cse, b->a, 0);
    b->work = b->calls = 0;
    b->nest = 0;
    return g;
}

static void add_param(remat *r, gfn *g, int at, const gparam *p, gnode **map, const gnode *of)
{
    g->params[at] = *p;
    g->params[at].node = grad_leaf(r->b, g, &g->params[at], at);
    map[of->id] = g->params[at].node;
}

/* j's nodes replayed into b->f through map (entries already set are kept:
 * parameters, saved values), except the backward's when fwd_only. */
static void replay(remat *r, gnode **map, bool fwd_only)
{
    for (int i = 0; i < r->j->nnodes; i++) {
        gnode *v = r->j->nodes[i];
        if (map[i] || (fwd_only && r->bwd[i]) || v->op == OP_input || v->op == OP_scalar)
            continue;
        gnode t = *v;
        gnode *in[v->nin > 0 ? v->nin : 1];
        for (int k = 0; k < v->nin; k++)
            in[k] = map[v->in[k]->id];
        t.in = in;
        map[i] = node_emit(r->b, &t);
    }
}

static gnode *as_output(builder *b, gnode *n, tc_loc loc)
{
    n = node_concrete(b, n, loc);
    if (n->weak || n->op == OP_const || n->op == OP_input)
        n = (n->op == OP_const && n->rank == 0) ? n : node_copy(b, node_concrete(b, n, loc), loc);
    return n;
}

static void finish(builder *b, gfn *g, const char *text)
{
    build_drop_dead(b);
    build_canonical_order(b);
    g->elementwise = false;
    g->remat = text;
    graph_verify(g, b->d);
}

gfn *grad_remat(builder *b, gfn *j, int nparams, int nfo, int part, const char *const names[3],
                tc_loc loc)
{
    remat r = {.b = b, .j = j, .np = nparams, .nfo = nfo};
    const char *text = choose(&r, names[1], names[2], names[0]);
    gnode **map = ARENA_ARRAY(b->a, gnode *, j->nnodes ? j->nnodes : 1);
    if (part == 1) {
        gfn *g = new_fn(&r, j->name, j->loc);
        g->nparams = nparams;
        g->params = ARENA_ARRAY(b->a, gparam, nparams ? nparams : 1);
        for (int i = 0; i < nparams; i++)
            add_param(&r, g, i, &j->params[i], map, j->params[i].node);
        replay(&r, map, true);
        g->noutputs = nfo + r.nsave;
        g->outputs = ARENA_ARRAY(b->a, goutput, g->noutputs ? g->noutputs : 1);
        for (int i = 0; i < nfo; i++) {
            g->outputs[i] = j->outputs[i];
            g->outputs[i].node = as_output(b, map[j->outputs[i].node->id], j->outputs[i].loc);
        }
        for (int i = 0; i < r.nsave; i++) {
            goutput *o = &g->outputs[nfo + i];
            o->name = r.names[i];
            o->loc = r.save[i]->loc;
            o->inout_param = -1;
            o->node = as_output(b, map[r.save[i]->id], loc);
        }
        finish(b, g, text);
        return g;
    }
    /* the backward: f's parameters, the saved values, the cotangents */
    int ncot = j->nparams - nparams;
    gfn *g = new_fn(&r, j->name, j->loc);
    g->nparams = nparams + r.nsave + ncot;
    g->params = ARENA_ARRAY(b->a, gparam, g->nparams ? g->nparams : 1);
    for (int i = 0; i < nparams; i++)
        add_param(&r, g, i, &j->params[i], map, j->params[i].node);
    for (int i = 0; i < r.nsave; i++) {
        const gnode *s = r.save[i];
        gparam p;
        memset(&p, 0, sizeof p);
        p.name = r.names[i];
        p.loc = s->loc;
        p.dtype = s->dtype;
        p.rank = s->rank;
        p.shape = s->shape;
        add_param(&r, g, nparams + i, &p, map, s);
    }
    for (int i = 0; i < ncot; i++)
        add_param(&r, g, nparams + r.nsave + i, &j->params[nparams + i], map,
                  j->params[nparams + i].node);
    replay(&r, map, false);
    g->noutputs = j->noutputs - nfo;
    g->outputs = ARENA_ARRAY(b->a, goutput, g->noutputs ? g->noutputs : 1);
    for (int i = 0; i < g->noutputs; i++) {
        g->outputs[i] = j->outputs[nfo + i];
        g->outputs[i].node = as_output(b, map[j->outputs[nfo + i].node->id], j->outputs[nfo + i].loc);
    }
    finish(b, g, text);
    return g;
}
