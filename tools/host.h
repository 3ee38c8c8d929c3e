/* host.h - what the tools hold on the host (host.c): tensors as their
 * dtype's own bytes, dtypes as DLPack types, and error messages.  Apart
 * from cli.h so that npy.c and its unit test need nothing of the CLI.
 */
#ifndef TC_HOST_H
#define TC_HOST_H

#include <stdbool.h>
#include <stdint.h>

/* tools/ is written against the public header alone, its unstable section
 * included (run information, devices, dtype bindings, output sets). */
#ifndef TC_UNSTABLE_API
#define TC_UNSTABLE_API
#endif
#include "tensorc.h"

/* A tensor on the host: its elements as the dtype stores them (tensorc.h's
 * tc_value_encode: host byte order, f16/bf16 as 16 bits, bool one byte),
 * which is what tc_run's device buffers and tc_run_cpu take, so uploads,
 * downloads and the reference run copy bytes and convert nothing. */
typedef struct {
    DLDataType dtype;
    int rank;
    int64_t shape[TC_MAX_DIMS];
    unsigned char *data;    /* numel * dt_size bytes (malloc'd; never NULL once allocated) */
} htensor;

int dt_size(DLDataType t);
bool dt_is_float(DLDataType t);  /* f16, bf16, f32, f64 */
bool dt_is_int(DLDataType t);    /* i32, i64 */
bool dt_is_bool(DLDataType t);
bool dt_same(DLDataType a, DLDataType b);
/* tensorc's name ("bf16"), "?" for none. */
const char *dt_name(DLDataType t);
/* The dtype named (a tc_value_info's dtype); {0} for none. */
DLDataType dt_parse(const char *name);

/* Allocate t (zeroed) of that shape; false when out of memory or too large. */
bool ht_alloc(htensor *t, DLDataType dt, int rank, const int64_t *shape);
void ht_free(htensor *t);
int64_t ht_numel(const htensor *t);
/* Element i as a double (integers converted) or exactly as an integer. */
double ht_getf(const htensor *t, int64_t i);
long long ht_geti(const htensor *t, int64_t i);
/* Store v rounded to t's dtype (an integer exactly with ht_seti). */
void ht_setf(htensor *t, int64_t i, double v);
void ht_seti(htensor *t, int64_t i, long long v);
/* dst's element i set to src's element j converted as a cast does
 * (tc_value_cast), or to the value v so converted. */
void ht_cast(htensor *dst, int64_t i, const htensor *src, int64_t j);
void ht_cast_value(htensor *dst, int64_t i, double v);
/* A DLTensor in host memory viewing t (dl->shape points into t). */
DLTensor ht_dl(const htensor *t);

/* Set *msg (malloc'd, any old one freed) to "error: MESSAGE\n"; returns st. */
tc_status tool_error(char **msg, tc_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A message "error: TEXT\n" (tc_errmsg's form for errors with no location)
 * as TEXT alone, in buf. */
const char *msg_brief(const char *msg, char *buf, size_t n);

#endif
