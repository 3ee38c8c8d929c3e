/* ceiling.c - the memory-bandwidth ceiling, measured in the same run
 * (tc-bench --child=ceiling).
 *
 * suite.md: "a large device-to-device copy (bytes read + written) and a
 * large f32 sum (bytes read); the higher of the two".  The copy is the
 * driver's cuMemcpyDtoDAsync of 1 GiB; the sum is tensorc's own full_sum
 * program over 1 GiB of f32 (256M elements, several times any L2), checked
 * against the reference like every other figure: a sum that is fast and
 * wrong does not set the ceiling.  Each part that fails is reported with
 * its error and left out of the maximum.
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const bench_case sum_case = {"ceiling_sum", "full_sum.tc", "full_sum", "*=268435456",
                                    "*=16777216", NULL, false, CASE_PLAIN, NULL, NULL, NULL,
                                    NULL, NULL, 0};

/* The copy part; its GB/s or NAN. */
static double copy_part(json *j, tc_ctx *dev, bool quick)
{
    size_t bytes = quick ? (size_t)256 << 20 : (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    char *err = NULL;
    double us = NAN;
    tc_status st = tc_device_alloc(dev, bytes, &a);
    if (st == TC_OK)
        st = tc_device_alloc(dev, bytes, &b);
    if (st == TC_OK) /* any bytes will do for a copy; not zeros all the same */
        st = tc_device_memset(dev, a, 0xa5, bytes, NULL);
    if (st != TC_OK)
        err = dev_error(dev, st);
    else if (time_copy(dev, b, a, bytes, 20, &us, &err) && !(us > 0))
        err = msgf("the copy timed at %g us: the events do not measure", us);
    tc_device_free(dev, a);
    tc_device_free(dev, b);
    double gbps = err ? NAN : 2.0 * (double)bytes / (us * 1e3);
    json_key(j, "copy");
    json_obj(j);
    json_kint(j, "bytes", (long long)bytes);
    json_kstr(j, "counted", "bytes read + bytes written");
    json_knum(j, "us", err ? NAN : us);
    json_knum(j, "GBps", gbps);
    json_kstr(j, "error", err);
    json_end_obj(j);
    if (err)
        fprintf(stderr, "tc-bench: ceiling copy: %s\n", err);
    free(err);
    return gbps;
}

/* The sum part: tensorc's full_sum, checked; its GB/s or NAN. */
static double sum_part(json *j, const child_opts *o, tc_ctx *dev)
{
    const bench_case *c = &sum_case;
    const char *shape = o->quick ? c->small : c->shape;
    char *err = NULL, *path = msgf("%s/%s", o->cases_dir, c->file);
    tc_ctx *ctx = NULL;
    tc_program *p = NULL;
    const tc_function_info *f = NULL;
    check_pool pool = {0};
    bench_inst in = {0};
    check_result r = {0};
    timing t = {0};
    int64_t bytes = 0;
    tc_status st;
    if (!path || tc_ctx_create(&ctx) != TC_OK)
        err = msgf("out of memory");
    else if (tc_compile_file(ctx, path, &p) != TC_OK || tc_program_function(p, c->fn, &f) != TC_OK)
        err = msgf("%s", tc_errmsg(ctx));
    else if (pool_open(&pool, path, c->fn, 1, &err) &&
             inst_make(ctx, p, f, c, shape, o->seed, "sum", o->threads, &in, &err) &&
             inst_upload(dev, f, &in, o->threads, &err)) {
        bytes = inst_bytes_min(f, &in) - 4; /* the read; the one f32 result is nothing */
        if ((st = tc_run(p, c->fn, in.targs, (size_t)in.ntargs, NULL)) != TC_OK)
            err = msgf("tc_run failed: %s: %s", tc_status_str(st), tc_errmsg(ctx));
        else if ((st = tc_device_sync(dev, NULL)) != TC_OK)
            err = dev_error(dev, st);
        else if (inst_download(dev, f, &in, &err) && !check_inst(&pool, f, &in, NULL, &r))
            err = msgf("%s", r.detail ? r.detail : "the reference check did not run");
        inst_free_host(f, &in);
        bench_step step = {p, c->fn, &in, 1, NULL, 0, 0, ctx};
        if (!err && r.ok)
            time_steps(dev, &step, false, o->quick, &t, &err);
    }
    bool ok = !err && r.ok;
    double us = t.wall_us < t.event_us ? t.wall_us : t.event_us;
    double gbps = ok ? (double)bytes / (us * 1e3) : NAN;
    json_key(j, "sum");
    json_obj(j);
    json_kstr(j, "program", c->file);
    json_kstr(j, "shape", shape);
    json_kint(j, "bytes", bytes);
    json_kstr(j, "counted", "bytes read");
    json_kstr(j, "status", ok ? "ok" : err ? "error" : "check_failed");
    if (r.detail) {
        json_key(j, "check");
        json_obj(j);
        json_kbool(j, "ok", r.ok);
        json_knum(j, "max_rel_err", r.max_rel_err);
        json_knum(j, "tol", r.tol);
        json_kstr(j, "worst", r.detail);
        json_end_obj(j);
    }
    if (ok) {
        json_knum(j, "event_us", t.event_us);
        json_knum(j, "wall_us", t.wall_us);
        json_knum(j, "us", us);
        json_knum(j, "GBps", gbps);
    }
    json_kstr(j, "error", err);
    json_end_obj(j);
    if (!ok)
        fprintf(stderr, "tc-bench: ceiling sum: %s\n", err ? err : r.detail ? r.detail : "");
    check_result_free(&r);
    if (f)
        inst_free(dev, f, &in);
    pool_close(&pool);
    tc_program_free(p);
    tc_ctx_free(ctx);
    free(path);
    free(err);
    return gbps;
}

int child_ceiling(const child_opts *o)
{
    json j = {0};
    json_obj(&j);
    tc_device_info gpu;
    char *why = NULL;
    tc_ctx *dev = dev_open(&gpu, &why);
    bool have = dev != NULL;
    double best = NAN;
    if (!dev) {
        json_kstr(&j, "error", why);
    } else {
        json_kstr(&j, "device", gpu.name);
        double c = copy_part(&j, dev, o->quick), s = sum_part(&j, o, dev);
        best = isnan(c) ? s : isnan(s) ? c : c > s ? c : s;
        json_kstr(&j, "from", isnan(best) ? NULL : best == c ? "copy" : "sum");
    }
    json_knum(&j, "ceiling_GBps", best);
    json_end_obj(&j);
    bool wrote = write_file(o->out, j.b.s ? j.b.s : "{}");
    tc_ctx_free(dev);
    free(why);
    free(j.b.s);
    return !wrote ? BENCH_ENV : !have ? BENCH_ENV : isnan(best) ? BENCH_FAILED : BENCH_OK;
}
