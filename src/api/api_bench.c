/* api_bench.c - the unstable API's calls for tc-bench (tensorc.h, the
 * "for bench/" block): one element of a dtype as device buffers hold it,
 * and which dtypes a function computes in (the check's tolerance). */
#define TC_UNSTABLE_API
#include "api_internal.h"

void tc_value_encode(DLDataType dtype, double v, void *p)
{
    tc_dtype t = api_from_dl(dtype);
    if (t != TC_DT_NONE)
        dtype_encode(t, v, p);
}

double tc_value_decode(DLDataType dtype, const void *p)
{
    tc_dtype t = api_from_dl(dtype);
    return t == TC_DT_NONE ? 0 : dtype_decode(t, p);
}

long long tc_value_decode_int(DLDataType dtype, const void *p)
{
    tc_dtype t = api_from_dl(dtype);
    return t == TC_DT_NONE ? 0 : (long long)dtype_decode_int(t, p);
}

tc_status tc_function_computes_in(tc_program *p, const char *fn, DLDataType dtype, int *yes)
{
    if (!p || !yes)
        return TC_ERR_INVALID_ARG;
    *yes = 0;
    const gfn *f;
    tc_status st = api_entry(p, fn, &f);
    if (st != TC_OK)
        return st;
    tc_dtype t = api_from_dl(dtype);
    for (int i = 0; t != TC_DT_NONE && i < f->nnodes; i++)
        *yes |= f->nodes[i]->dtype == t;
    return TC_OK;
}
