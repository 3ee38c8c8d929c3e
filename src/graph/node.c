/* node.c - low-level construction of op graphs.
 *
 * The builder and hand-written tests make nodes here.  Everything lives in
 * the compilation's arena; graph_node_new copies the caller's shape and input
 * arrays, so callers may pass stack arrays.  graph_add appends a node in
 * topological order and gives it its id; it does not enforce
 * GRAPH_MAX_NODES (it has no diagnostics to report through): the builder
 * checks f->nnodes against the limit before adding, where it knows the
 * user's location.
 */
#include "graph.h"

#include <string.h>

gfn *graph_fn_new(tc_arena *a, const char *name)
{
    gfn *f = ARENA_NEW(a, gfn);
    f->name = name ? arena_strdup(a, name) : NULL;
    return f;
}

gnode *graph_node_new(tc_arena *a, op_id op, tc_dtype dt, int rank, const tc_dim *const *shape,
                      gnode *const *in, int nin, tc_loc loc)
{
    gnode *n = ARENA_NEW(a, gnode);
    n->id = -1;
    n->op = op;
    n->dtype = dt;
    n->rank = rank;
    n->shape = ARENA_ARRAY(a, const tc_dim *, rank > 0 ? rank : 1);
    if (rank > 0 && shape)
        memcpy(n->shape, shape, sizeof *n->shape * (size_t)rank);
    n->nin = nin;
    n->in = ARENA_ARRAY(a, gnode *, nin > 0 ? nin : 1);
    if (nin > 0 && in)
        memcpy(n->in, in, sizeof *n->in * (size_t)nin);
    n->loc = loc;
    return n;
}

void graph_add(tc_arena *a, gfn *f, gnode *n)
{
    ARENA_GROW(a, f->nodes, f->nnodes, f->capnodes, 64);
    n->id = f->nnodes;
    f->nodes[f->nnodes++] = n;
}

gfn *graph_find(const tc_graph *g, const char *name)
{
    if (!g || !name)
        return NULL;
    for (int i = 0; i < g->nfns; i++)
        if (g->fns[i]->name && strcmp(g->fns[i]->name, name) == 0)
            return g->fns[i];
    return NULL;
}

tc_dtype graph_promote_inputs(const gnode *n, int from, int to)
{
    tc_dtype t = n->in[from]->dtype;
    bool weak = n->in[from]->weak;
    for (int i = from + 1; i < to; i++) {
        t = dtype_promote(t, weak, n->in[i]->dtype, n->in[i]->weak);
        weak = weak && n->in[i]->weak;
    }
    return t;
}
