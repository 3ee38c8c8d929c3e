/* api_bench.c - the unstable API's calls for tc-bench and the CLI (tensorc.h,
 * the "for bench/" block): one element of a dtype as device buffers hold
 * it, casts between dtypes, and which dtypes a function computes in (the
 * check's tolerance). */
#define TC_UNSTABLE_API
#include "api_interp.h"

void tc_value_encode(DLDataType dtype, double v, void *p)
{
    tc_dtype t = api_from_dl(dtype);
    if (t != TC_DT_NONE)
        dtype_encode(t, v, p);
}

void tc_value_encode_int(DLDataType dtype, long long v, void *p)
{
    tc_dtype t = api_from_dl(dtype);
    if (t != TC_DT_NONE)
        dtype_encode_int(t, v, p);
}

void tc_value_cast(DLDataType to, void *dst, DLDataType from, const void *src)
{
    tc_dtype t = api_from_dl(to), f = api_from_dl(from);
    if (t == TC_DT_NONE || f == TC_DT_NONE)
        return;
    if (!dtype_is_float(f))
        dtype_encode_int(t, dtype_decode_int(f, src), dst);
    else if (dtype_is_float(t))
        dtype_encode(t, dtype_decode(f, src), dst);
    else
        dtype_encode_int(t, dtype_f2i(t, dtype_decode(f, src)), dst);
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

double tc_value_diff(double got, double want)
{
    return ref_elem_err(got, want);
}

tc_status tc_function_computes_in(tc_program *p, const char *fn, DLDataType dtype, int *yes)
{
    return tc_function_computes_in_ex(p, fn, NULL, 0, dtype, yes);
}

tc_status tc_function_computes_in_ex(tc_program *p, const char *fn, const tc_arg *dtypes,
                                     size_t ndtypes, DLDataType dtype, int *yes)
{
    if (!p || !yes || (ndtypes && !dtypes))
        return TC_ERR_INVALID_ARG;
    *yes = 0;
    const gfn *f;
    tc_status st = ndtypes ? api_entry_dtypes(p, "tc_function_computes_in_ex", fn, dtypes, ndtypes, &f)
                           : api_entry(p, fn, &f);
    if (st != TC_OK)
        return st;
    tc_dtype t = api_from_dl(dtype);
    for (int i = 0; t != TC_DT_NONE && i < f->nnodes; i++)
        *yes |= f->nodes[i]->dtype == t;
    return TC_OK;
}
