/* compile_time.c - cold compile and warm start (tc-bench --child=cold|warm).
 *
 * Issue 5: "cold compile = source to first correct result with an empty
 * cache; warm start = a new process with a filled cache".  The parent runs
 * this child with TENSORC_CACHE_DIR set to a directory that does not exist
 * yet (cold), then again on the same directory (warm).  The clock covers
 * what a user's first call costs:
 *
 *     tc_ctx_create -> tc_compile_file (read and compile the source)
 *       -> tc_run (code generation, NVRTC or the cache, module load,
 *          launch) -> the device finished
 *
 * and not what any CUDA program pays before (cuInit and the primary
 * context, made here by dev_open first, as PyTorch would have), nor making
 * the inputs.  The result is then downloaded and checked against the
 * reference; a time whose result is wrong is reported as an error, not as
 * a time.  The case's small shape is used: kernels do not depend on sizes.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

int child_compile_time(const child_opts *o, const bench_case *c, bool cold)
{
    json j = {0};
    json_obj(&j);
    json_kstr(&j, "mode", cold ? "cold" : "warm");
    json_kstr(&j, "shape", c->small);
    const char *cache = getenv("TENSORC_CACHE_DIR");
    json_kstr(&j, "cache_dir", cache);
    json_kint(&j, "cache_files_before", cache ? count_files(cache) : -1);

    char *err = NULL, *path = msgf("%s/%s", o->cases_dir, c->file);
    const char *stage = "setup";
    check_pool pool = {0};
    bench_inst in = {0};
    tc_ctx *ctx = NULL;
    tc_program *p = NULL;
    tc_status st;
    char *why = NULL;
    tc_ctx *dev = dev_open(NULL, &why);
    if (!path)
        err = msgf("out of memory");
    else if (!dev)
        err = msgf("%s", why);
    /* inputs from a separate compilation: nothing of it is shared with the timed one */
    else if (pool_open(&pool, path, c->fn, 1, &err) &&
             inst_make(pool.ctx[0], pool.p[0], pool.f[0], c, c->small, o->seed, "compile", 1, &in,
                       &err) &&
             inst_upload(dev, pool.f[0], &in, 1, &err) && (st = tc_device_sync(dev, NULL)) != TC_OK)
        err = dev_error(dev, st);

    double t0 = 0, t1 = 0, t2 = 0, t3 = 0;
    if (!err) {
        stage = "compile";
        t0 = now_ms();
        if (tc_ctx_create(&ctx) != TC_OK) {
            err = msgf("out of memory");
        } else if (tc_compile_file(ctx, path, &p) != TC_OK) {
            err = msgf("%s", tc_errmsg(ctx));
        } else {
            t1 = now_ms();
            stage = "run";
            if ((st = tc_run(p, c->fn, in.targs, (size_t)in.ntargs, NULL)) != TC_OK)
                err = msgf("tc_run failed: %s: %s", tc_status_str(st), tc_errmsg(ctx));
            t2 = now_ms();
            if (!err && (st = tc_device_sync(dev, NULL)) != TC_OK)
                err = dev_error(dev, st);
            t3 = now_ms();
        }
    }
    check_result r = {0};
    bool checked = false;
    if (!err) {
        stage = "check";
        pool.tol_f32 = c->tol_f32;
        if (inst_download(dev, pool.f[0], &in, &err) && !check_inst(&pool, pool.f[0], &in, c->split, &r))
            err = msgf("%s", r.detail ? r.detail : "the reference check did not run");
        checked = !err;
    }
    bool ok = checked && r.ok;
    json_kbool(&j, "ok", ok);
    if (checked) {
        json_key(&j, "check");
        json_obj(&j);
        json_kbool(&j, "ok", r.ok);
        json_knum(&j, "max_rel_err", r.max_rel_err);
        json_knum(&j, "tol", r.tol);
        json_kstr(&j, "worst", r.detail);
        json_end_obj(&j);
    }
    if (ok) {
        json_knum(&j, "total_ms", t3 - t0);
        json_knum(&j, "compile_ms", t1 - t0);
        json_knum(&j, "run_call_ms", t2 - t1);
        json_knum(&j, "sync_ms", t3 - t2);
    } else {
        json_kstr(&j, "stage", stage);
        json_kstr(&j, "error", err ? err : "the result differs from the reference");
    }
    json_kint(&j, "cache_files_after", cache ? count_files(cache) : -1);
    json_end_obj(&j);
    if (!ok)
        fprintf(stderr, "tc-bench: %s %s: %s\n", c->name, cold ? "cold" : "warm",
                err ? err : r.detail ? r.detail : "");

    bool wrote = write_file(o->out, j.b.s ? j.b.s : "{}");
    check_result_free(&r);
    if (pool.n)
        inst_free(dev, pool.f[0], &in);
    pool_close(&pool);
    tc_program_free(p);
    tc_ctx_free(ctx);
    tc_ctx_free(dev);
    free(why);
    free(path);
    free(err);
    free(j.b.s);
    return !wrote ? BENCH_ENV : ok ? BENCH_OK : BENCH_FAILED;
}
