/* plan_json.c - `tensorc compile --emit=plan --json`: the launch plan that
 * plan_print shows, as one JSON object per function (docs/json.md,
 * docs/schema/plan.json).  Sizes are symbolic, so every size is a string
 * in the language's own spelling ("N * D", "64"). */
#include "codegen/codegen.h"
#include "json.h"

static void dimv(tc_json *j, const tc_dim *d)
{
    if (!d) {
        jw_null(j);
        return;
    }
    tc_buf t;
    buf_init(&t, j->b->a);
    dim_print(&t, d);
    jw_str(j, buf_str(&t));
}

static void buffer(tc_json *j, const tc_plan *p, const gfn *g, int i)
{
    static const char *const kinds[] = {"param", "output", "temp"};
    const pbuf *pb = &p->bufs[i];
    jw_obj(j);
    jw_key(j, "id");
    jw_int(j, i);
    jw_key(j, "name");
    jw_str(j, pb->name);
    jw_key(j, "kind");
    jw_str(j, kinds[pb->kind]);
    jw_key(j, "of"); /* the parameter or output it holds */
    if (pb->kind == PBUF_PARAM)
        jw_str(j, g->params[pb->index].name);
    else if (pb->kind == PBUF_OUTPUT)
        jw_str(j, g->outputs[pb->index].name);
    else
        jw_null(j);
    jw_key(j, "dtype");
    jw_str(j, dtype_name(pb->dtype));
    jw_key(j, "shape");
    jw_arr(j);
    for (int k = 0; k < pb->rank; k++)
        dimv(j, pb->shape[k]);
    jw_end(j);
    jw_key(j, "in_place_of");
    if (pb->alias >= 0)
        jw_int(j, pb->alias);
    else
        jw_null(j);
    if (pb->kind == PBUF_TEMP) {
        jw_key(j, "live");
        jw_arr(j);
        jw_int(j, pb->first);
        jw_int(j, pb->last);
        jw_end(j);
        jw_key(j, "slot");
        jw_int(j, pb->slot);
    }
    jw_end(j);
}

static void arg(tc_json *j, const tc_plan *p, const gfn *g, const pstep *st, const parg *ar)
{
    static const char *const kinds[] = {"buffer", "size", "scalar", "workspace", "groups"};
    jw_obj(j);
    jw_key(j, "kind");
    jw_str(j, kinds[ar->kind]);
    if (ar->kind == PARG_BUF) {
        jw_key(j, "buffer");
        jw_int(j, ar->buf);
    } else if (ar->kind == PARG_DIM) {
        jw_key(j, "value");
        dimv(j, ar->dim);
    } else if (ar->kind == PARG_SCALAR) {
        jw_key(j, "param");
        jw_str(j, g->params[ar->param].name);
        jw_key(j, "dtype");
        jw_str(j, dtype_name(ar->dtype));
    } else if (ar->kind == PARG_GROUPS) {
        jw_key(j, "buffers");
        jw_arr(j);
        for (int k = 0; k < st->fe_n; k++)
            jw_int(j, st->fe_bufs[k]);
        jw_end(j);
    } else {
        jw_key(j, "bytes");
        dimv(j, st->ws_bytes);
    }
    (void)p;
    jw_end(j);
}

static void step(tc_json *j, const tc_plan *p, const gfn *g, int i)
{
    const pstep *st = &p->steps[i];
    jw_obj(j);
    jw_key(j, "index");
    jw_int(j, i);
    if (st->kind == PSTEP_KERNEL) {
        jw_key(j, "kind");
        jw_str(j, "kernel");
        jw_key(j, "kernel");
        jw_str(j, st->kernel);
        jw_key(j, "grid");
        jw_arr(j);
        for (int k = 0; k < 3; k++)
            dimv(j, st->grid[k]);
        jw_end(j);
        jw_key(j, "block");
        jw_arr(j);
        for (int k = 0; k < 3; k++)
            jw_int(j, st->block[k]);
        jw_end(j);
        jw_key(j, "args");
        jw_arr(j);
        for (int k = 0; k < st->nargs; k++)
            arg(j, p, g, st, &st->args[k]);
        jw_end(j);
        jw_key(j, "idx64");
        jw_bool(j, st->idx64);
        if (st->resident) {
            jw_key(j, "grid_cap");
            jw_int(j, st->grid_cap);
        }
        if (st->shmem) {
            jw_key(j, "shmem");
            jw_int(j, st->shmem);
        }
        if (st->pipe) {
            jw_key(j, "rows_pipe_bytes");
            jw_int(j, st->pipe);
        }
        if (st->fe_n) {
            jw_key(j, "foreach");
            jw_obj(j);
            jw_key(j, "chunk");
            jw_int(j, st->fe_chunk);
            jw_key(j, "param_groups");
            jw_int(j, st->fe_cap);
            jw_end(j);
        }
    } else if (st->kind == PSTEP_MATMUL) {
        jw_key(j, "kind");
        jw_str(j, "matmul");
        jw_key(j, "a");
        jw_int(j, st->mm.a);
        jw_key(j, "b");
        jw_int(j, st->mm.b);
        jw_key(j, "c");
        jw_int(j, st->mm.c);
        jw_key(j, "transpose_a");
        jw_bool(j, st->mm.ta);
        jw_key(j, "transpose_b");
        jw_bool(j, st->mm.tb);
        jw_key(j, "m");
        dimv(j, st->mm.m);
        jw_key(j, "n");
        dimv(j, st->mm.n);
        jw_key(j, "k");
        dimv(j, st->mm.k);
        jw_key(j, "batch");
        dimv(j, st->mm.batch);
        jw_key(j, "dtype");
        jw_str(j, dtype_name(st->mm.dtype));
    } else {
        jw_key(j, "kind");
        jw_str(j, "copy");
        jw_key(j, "src");
        jw_int(j, st->src);
        jw_key(j, "dst");
        jw_int(j, st->dst);
        jw_key(j, "bytes");
        dimv(j, st->copy_bytes);
    }
    jw_end(j);
}

void plan_json(tc_json *j, const tc_plan *p, const gfn *g)
{
    jw_obj(j);
    jw_key(j, "name");
    jw_str(j, p->fn);
    jw_key(j, "idx64");
    jw_bool(j, p->idx64);
    jw_key(j, "buffers");
    jw_arr(j);
    for (int i = 0; i < p->nbufs; i++)
        buffer(j, p, g, i);
    jw_end(j);
    jw_key(j, "steps");
    jw_arr(j);
    for (int i = 0; i < p->nsteps; i++)
        step(j, p, g, i);
    jw_end(j);
    jw_end(j);
}
