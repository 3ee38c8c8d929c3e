/* plan_query.c - what a launch plan says about given sizes before it runs
 * (exec.h): whether they need the 64-bit plan, each step's name and the
 * bytes it moves (for --bench, tc_run_ex's report and bench/), read from
 * the plan alone, with no device.
 */
#include "exec.h"

bool rt_needs_idx64(const tc_plan *plan, const tc_dimbind *dims, int ndims, const tc_dim **which,
                    int64_t *value)
{
    if (plan->idx64)
        return false;
    for (int i = 0; i < plan->nlimits; i++) {
        int64_t v = 0;
        bool ok = plan->limits[i] && dim_eval(plan->limits[i], dims, ndims, &v, NULL);
        if (!ok || v >= ((int64_t)1 << 31) || v < 0) {
            if (which)
                *which = plan->limits[i];
            if (value)
                *value = ok ? v : -1;
            return true;
        }
    }
    return false;
}

const char *rt_step_name(const pstep *s)
{
    switch (s->kind) {
    case PSTEP_KERNEL: return s->kernel ? s->kernel : "kernel";
    case PSTEP_MATMUL: return "matmul (cuBLAS)";
    case PSTEP_COPY: return "copy";
    }
    return "?";
}

int64_t rt_buf_bytes(const tc_plan *plan, int b, const tc_dimbind *dims, int ndims)
{
    if (b < 0 || b >= plan->nbufs)
        return -1;
    int64_t n;
    if (!plan->bufs[b].numel || !dim_eval(plan->bufs[b].numel, dims, ndims, &n, NULL) || n < 0)
        return -1;
    return n * dtype_size(plan->bufs[b].dtype);
}

bool rt_step_skipped(const tc_plan *plan, int step, const tc_dimbind *dims, int ndims)
{
    const pstep *s = &plan->steps[step];
    int64_t g;
    return s->guard && dim_eval(s->guard, dims, ndims, &g, NULL) && !rt_guard_passes(s, g);
}

int64_t rt_step_bytes(const tc_plan *plan, int step, const tc_dimbind *dims, int ndims)
{
    if (step < 0 || step >= plan->nsteps)
        return -1;
    const pstep *s = &plan->steps[step];
    if (rt_step_skipped(plan, step, dims, ndims))
        return 0; /* skipped at these sizes (plan.h's guards) */
    if (s->kind == PSTEP_COPY) {
        int64_t n;
        if (!s->copy_bytes || !dim_eval(s->copy_bytes, dims, ndims, &n, NULL))
            return -1;
        return 2 * n;
    }
    int ids[3], nids = 0;
    const int *list = ids;
    if (s->kind == PSTEP_MATMUL) {
        ids[0] = s->mm.a;
        ids[1] = s->mm.b;
        ids[2] = s->mm.c;
        nids = 3;
    }
    if (s->kind == PSTEP_KERNEL && s->fe_n) { /* a foreach kernel's buffers are in its table */
        list = s->fe_bufs;
        nids = s->fe_n;
    }
    int64_t total = 0;
    int count = s->kind == PSTEP_KERNEL && !s->fe_n ? s->nargs : nids;
    for (int i = 0; i < count; i++) {
        int b;
        bool args = s->kind == PSTEP_KERNEL && !s->fe_n;
        if (args) {
            if (s->args[i].kind != PARG_BUF)
                continue;
            b = s->args[i].buf;
        } else {
            b = list[i];
        }
        bool seen = false; /* a buffer named twice moves once */
        for (int j = 0; j < i && !seen; j++)
            seen = args ? s->args[j].kind == PARG_BUF && s->args[j].buf == b : list[j] == b;
        if (seen)
            continue;
        int64_t n = rt_buf_bytes(plan, b, dims, ndims);
        if (n < 0)
            return -1;
        total += n;
    }
    return total;
}
