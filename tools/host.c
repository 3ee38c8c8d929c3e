/* host.c - what the tools hold on the host: tensors as their dtype's own
 * bytes, dtypes by their DLPack type, and error messages.
 *
 * Elements are read and written through tensorc.h's tc_value_encode and
 * decode (the library's one definition of each dtype's bytes and rounding),
 * so a value the CLI makes up or reads from a file is exactly what the
 * device and the reference interpreter see.
 */
#include "host.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- dtypes ---------------------------------------------------------------------- */

int dt_size(DLDataType t)
{
    return (t.bits * t.lanes + 7) / 8;
}

bool dt_is_float(DLDataType t)
{
    return t.code == kDLFloat || t.code == kDLBfloat;
}

bool dt_is_int(DLDataType t)
{
    return t.code == kDLInt;
}

bool dt_is_bool(DLDataType t)
{
    const char *n = tc_dtype_name(t);
    return n && strcmp(n, "bool") == 0;
}

bool dt_same(DLDataType a, DLDataType b)
{
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

const char *dt_name(DLDataType t)
{
    const char *n = tc_dtype_name(t);
    return n ? n : "?";
}

DLDataType dt_parse(const char *name)
{
    DLDataType t = {0, 0, 0};
    tc_dtype_parse(name, &t);
    return t;
}

/* --- tensors ----------------------------------------------------------------------- */

bool ht_alloc(htensor *t, DLDataType dt, int rank, const int64_t *shape)
{
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->rank = rank;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0 || (shape[i] && n > INT64_MAX / 16 / shape[i]))
            return false;
        t->shape[i] = shape[i];
        n *= shape[i];
    }
    size_t bytes = (size_t)n * (size_t)dt_size(dt);
    t->data = calloc(bytes ? bytes : 1, 1); /* an empty tensor still has a pointer */
    return t->data != NULL;
}

void ht_free(htensor *t)
{
    free(t->data);
    t->data = NULL;
}

int64_t ht_numel(const htensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

double ht_getf(const htensor *t, int64_t i)
{
    return tc_value_decode(t->dtype, t->data + i * dt_size(t->dtype));
}

long long ht_geti(const htensor *t, int64_t i)
{
    return tc_value_decode_int(t->dtype, t->data + i * dt_size(t->dtype));
}

void ht_setf(htensor *t, int64_t i, double v)
{
    tc_value_encode(t->dtype, v, t->data + i * dt_size(t->dtype));
}

void ht_seti(htensor *t, int64_t i, long long v)
{
    tc_value_encode_int(t->dtype, v, t->data + i * dt_size(t->dtype));
}

void ht_cast(htensor *dst, int64_t i, const htensor *src, int64_t j)
{
    tc_value_cast(dst->dtype, dst->data + i * dt_size(dst->dtype), src->dtype,
                  src->data + j * dt_size(src->dtype));
}

void ht_cast_value(htensor *dst, int64_t i, double v)
{
    tc_value_cast(dst->dtype, dst->data + i * dt_size(dst->dtype), dt_parse("f64"), &v);
}

DLTensor ht_dl(const htensor *t)
{
    return (DLTensor){.data = t->data, .device = {kDLCPU, 0}, .ndim = t->rank, .dtype = t->dtype,
                      .shape = (int64_t *)t->shape}; /* compact: strides NULL, offset 0 */
}

/* --- messages ------------------------------------------------------------------------ */

tc_status tool_error(char **msg, tc_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char text[2048];
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t n = strlen(text) + 9;
    free(*msg);
    if ((*msg = malloc(n)))
        snprintf(*msg, n, "error: %s\n", text);
    return st;
}

const char *msg_brief(const char *msg, char *buf, size_t n)
{
    if (strncmp(msg, "error: ", 7) == 0)
        msg += 7;
    snprintf(buf, n, "%s", msg);
    size_t len = strlen(buf);
    if (len && buf[len - 1] == '\n')
        buf[len - 1] = 0;
    return buf;
}
