/* api_json.c - the CLI's JSON documents that are not a compiler stage:
 * `run --bench --json` and `cache stats --json` (docs/json.md, the schemas
 * in docs/schema), written with src/base/json.h like the explain and plan
 * documents, so tools/ need no JSON writer (and no internal header) of
 * their own. */
#define TC_UNSTABLE_API /* tc_bench_json, tc_cache_stats_json */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "json.h"

static void head(tc_json *j, const char *format)
{
    jw_obj(j);
    jw_key(j, "format");
    jw_str(j, format);
    jw_key(j, "version");
    jw_int(j, 1);
    jw_key(j, "tensorc");
    jw_str(j, TC_VERSION_STRING);
}

/* The document in b as a malloc'd string (NULL when out of memory). */
static char *done(tc_buf *b)
{
    const char *s = buf_str(b);
    char *out = s ? strdup(s) : NULL;
    return out;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

char *tc_bench_json(const char *what, const char *device, int index64, int nsteps,
                    const char *const *names, const int64_t *step_bytes, const float *ms,
                    int runs, int warmup)
{
    tc_arena *a = arena_new(NULL);
    float *col = malloc(sizeof *col * (size_t)(runs > 0 ? runs : 1));
    if (!a || !col) {
        arena_free(a);
        free(col);
        return NULL;
    }
    tc_buf b;
    buf_init(&b, a);
    tc_json j;
    jw_init(&j, &b);
    head(&j, "tensorc-bench");
    jw_key(&j, "function");
    jw_str(&j, what);
    jw_key(&j, "device");
    jw_str(&j, device);
    jw_key(&j, "idx64");
    jw_bool(&j, index64 != 0);
    jw_key(&j, "runs");
    jw_int(&j, runs);
    jw_key(&j, "warmup");
    jw_int(&j, warmup);
    int64_t total_bytes = 0;
    int n = nsteps;
    /* the median of each step's runs (the mean of the middle two), as the
     * text report gives it; row r of ms holds run r's n steps, then the whole */
    for (int i = 0; i <= n; i++) {
        if (i == 0) {
            jw_key(&j, "steps");
            jw_arr(&j);
        }
        if (i == n) {
            jw_end(&j);
            jw_key(&j, "total");
        }
        for (int r = 0; r < runs; r++)
            col[r] = ms[(size_t)r * (size_t)(n + 1) + (size_t)i];
        qsort(col, (size_t)runs, sizeof *col, cmp_float);
        double us = runs > 0 ? 1e3 * (col[(runs - 1) / 2] + col[runs / 2]) / 2 : 0;
        int64_t bytes = i < n ? step_bytes[i] : total_bytes;
        if (i < n && bytes > 0)
            total_bytes += bytes;
        jw_obj(&j);
        if (i < n) {
            jw_key(&j, "index");
            jw_int(&j, i);
            jw_key(&j, "kernel");
            jw_str(&j, names[i]);
        }
        jw_key(&j, "us"); /* to the nanosecond: the events' resolution is about 0.5 us */
        jw_num(&j, round(us * 1e3) / 1e3);
        jw_key(&j, "bytes");
        if (bytes >= 0)
            jw_int(&j, bytes);
        else
            jw_null(&j);
        jw_key(&j, "gb_per_s");
        if (bytes > 0 && us > 0)
            jw_num(&j, round((double)bytes / us) / 1e3); /* to 1 MB/s */
        else
            jw_null(&j);
        jw_end(&j);
    }
    jw_end(&j);
    free(col);
    char *out = done(&b);
    arena_free(a);
    return out;
}

char *tc_cache_stats_json(const char *dir, uint64_t entries, uint64_t bytes, uint64_t max)
{
    tc_arena *a = arena_new(NULL);
    if (!a)
        return NULL;
    tc_buf b;
    buf_init(&b, a);
    tc_json j;
    jw_init(&j, &b);
    head(&j, "tensorc-cache-stats");
    jw_key(&j, "dir");
    jw_str(&j, dir);
    jw_key(&j, "entries");
    jw_int(&j, (int64_t)entries);
    jw_key(&j, "bytes");
    jw_int(&j, (int64_t)bytes);
    jw_key(&j, "max_bytes");
    jw_int(&j, (int64_t)max);
    jw_end(&j);
    char *out = done(&b);
    arena_free(a);
    return out;
}
