/* api_tools.c - the unstable calls tensorc's own tools use (include/tensorc.h,
 * "unstable: for tools/"): the stage list, the kernel cache on disk,
 * `tensorc doctor`'s report, dumps and questions with dtype bindings, dtype
 * names, and output sets, so tools/ need no internal header. */
#define TC_UNSTABLE_API
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_interp.h"
#include "api_run.h"
#include "blas.h"
#include "cache.h"
#include "compile.h"
#include "driver.h"
#include "nvrtc.h"
#include "outfile.h"
#include "strbuf.h"

/* --- stages ---------------------------------------------------------------- */

static const tc_stage_desc stage_list[] = {
#define STAGE(id, name, ext, flags, what) \
    {name, ((flags) & SF_EMIT) != 0, ((flags) & SF_BINARY) != 0, what},
#include "stages.def"
#undef STAGE
};

const tc_stage_desc *tc_stage_list(size_t *n)
{
    if (n)
        *n = sizeof stage_list / sizeof stage_list[0];
    return stage_list;
}

/* --- the kernel cache ---------------------------------------------------------- */

tc_status tc_ctx_cache_warning(tc_ctx *ctx, const char **warning)
{
    if (!ctx || !warning)
        return TC_ERR_INVALID_ARG;
    *warning = NULL;
    /* the JIT context tc_program_image would use: made here if no call has */
    if (!ctx->rt && !(ctx->rt = rt_new(TC_DEVICE_AUTO, NULL, &ctx->knobs)))
        return TC_ERR_NOMEM;
    if (!ctx->rt->jit && !(ctx->rt->jit = jit_ctx_new(ctx->rt->cache_dir, 0)))
        return TC_ERR_NOMEM;
    jit_set_salt(ctx->rt->jit, ctx->rt->knobs); /* the knobs in the key, as rt_open does */
    *warning = jit_warning(ctx->rt->jit);
    return TC_OK;
}

tc_cache *tc_cache_open(const char *dir) { return cache_open(dir, 0); }
void tc_cache_close(tc_cache *c) { cache_close(c); }
const char *tc_cache_path(const tc_cache *c) { return c ? cache_dir(c) : NULL; }
const char *tc_cache_warning(const tc_cache *c) { return c ? cache_warning(c) : NULL; }
int tc_cache_enabled(const tc_cache *c) { return c && cache_enabled(c); }

void tc_cache_stats(tc_cache *c, uint64_t *entries, uint64_t *bytes, uint64_t *max_bytes)
{
    uint64_t n = 0, b = 0;
    if (c)
        cache_stats(c, &n, &b);
    if (entries)
        *entries = n;
    if (bytes)
        *bytes = b;
    if (max_bytes)
        *max_bytes = c ? cache_max_bytes(c) : 0;
}

size_t tc_cache_clear(tc_cache *c) { return c ? cache_clear(c) : 0; }

/* --- tensorc doctor ---------------------------------------------------------------- */

/* the message of d without "error: " and the trailing newline */
static const char *why(const tc_diag *d)
{
    return d->brief && *d->brief ? d->brief : "unknown reason";
}

static bool report_driver(tc_strbuf *out, tc_strbuf *problems)
{
    tc_diag d;
    diag_init(&d);
    const char *env = getenv("TENSORC_LIBCUDA");
    int n = drv_count(&d);
    bool ok = n > 0;
    if (n < 0) {
        strbuf_printf(out, "driver: not found: %s (looked for %s%s)\n", why(&d),
                      env && *env ? env : "libcuda.so.1",
                      env && *env ? ", from TENSORC_LIBCUDA"
                                  : " through the dynamic linker's path");
        strbuf_printf(problems, "%sno CUDA driver", problems->len ? "; " : "");
    } else {
        drv_device *dev = NULL;
        int v = 0;
        if (n > 0 && drv_open(&dev, 0, &d) == TC_OK)
            v = drv_version(dev);
        strbuf_printf(out, "driver: %s", drv_lib_path());
        if (v)
            strbuf_printf(out, " (CUDA %d.%d)", v / 1000, v % 1000 / 10);
        strbuf_printf(out, "\n");
        drv_close(dev);
        if (n == 0) {
            strbuf_printf(out, "gpu:    none: the driver loaded but reports no CUDA device\n");
            strbuf_printf(problems, "%sno GPU", problems->len ? "; " : "");
        }
        for (int i = 0; i < n; i++) {
            if (drv_open(&dev, i, &d) != TC_OK) {
                strbuf_printf(out, "gpu %d:  cannot be opened: %s\n", i, why(&d));
                ok = ok && i > 0;
                continue;
            }
            strbuf_printf(out, "gpu %d:  %s, compute capability %d.%d", i, drv_name(dev),
                          drv_arch(dev) / 10, drv_arch(dev) % 10);
            size_t mem = drv_total_mem(dev);
            if (mem)
                strbuf_printf(out, ", %.1f GiB", (double)mem / (1 << 30));
            strbuf_printf(out, ", %d SMs\n", drv_sm_count(dev));
            drv_close(dev);
        }
        if (!ok && n > 0)
            strbuf_printf(problems, "%sGPU 0 cannot be opened", problems->len ? "; " : "");
    }
    diag_release(&d);
    return ok;
}

static bool report_nvrtc(tc_strbuf *out, tc_strbuf *problems)
{
    tc_diag d;
    diag_init(&d);
    bool ok = nvrtc_load(&d) == TC_OK;
    if (!ok) {
        strbuf_printf(out, "nvrtc:  not found: %s\n", why(&d));
        strbuf_printf(problems, "%sno NVRTC", problems->len ? "; " : "");
    } else {
        int major = 0, minor = 0, archs[128];
        nvrtc_version(&major, &minor);
        int na = nvrtc_supported_archs(archs, 128);
        strbuf_printf(out, "nvrtc:  %s (%d.%d", nvrtc_lib_path(), major, minor);
        if (na > 0)
            strbuf_printf(out, "; sm_%d to sm_%d, %d archs", archs[0],
                          archs[na < 128 ? na - 1 : 127], na);
        strbuf_printf(out, ")\n");
    }
    diag_release(&d);
    return ok;
}

static void report_cublas(tc_strbuf *out)
{
    tc_diag d;
    diag_init(&d);
    if (blas_load(&d) != TC_OK) {
        strbuf_printf(out, "cublas: not found: %s (only matrix products need it)\n", why(&d));
    } else {
        int v;
        const char *path = blas_lib_path(&v);
        strbuf_printf(out, "cublas: %s", path);
        if (v)
            strbuf_printf(out, " (%d.%d.%d)", v / 10000, v / 100 % 100, v % 100);
        strbuf_printf(out, "\n");
    }
    diag_release(&d);
}

static void report_cache(tc_strbuf *out)
{
    struct tc_cache *c = cache_open(NULL, 0);
    if (!c) {
        strbuf_printf(out, "cache:  out of memory\n");
        return;
    }
    const char *dir = cache_dir(c);
    struct stat st;
    strbuf_printf(out, "cache:  %s",
                  dir ? dir : "(no directory: set TENSORC_CACHE_DIR, XDG_CACHE_HOME or HOME)");
    if (dir && stat(dir, &st) == 0)
        strbuf_printf(out, ": %s, mode %04o", st.st_uid == geteuid() ? "yours" : "not yours",
                      (unsigned)(st.st_mode & 07777));
    if (cache_enabled(c)) {
        uint64_t n, bytes;
        cache_stats(c, &n, &bytes);
        strbuf_printf(out, ": used%s; %llu %s, %.1f MiB of %llu MiB\n",
                      access(dir, W_OK) != 0 ? " for reads only (not writable)" : "",
                      (unsigned long long)n, n == 1 ? "entry" : "entries",
                      (double)bytes / (1 << 20), (unsigned long long)(cache_max_bytes(c) >> 20));
    } else {
        strbuf_printf(out, "\n");
    }
    if (cache_warning(c))
        strbuf_printf(out, "        %s\n", cache_warning(c));
    cache_close(c);
}

char *tc_doctor(int *usable)
{
    tc_strbuf out = {0}, problems = {0};
    strbuf_printf(&out, "tensorc %s\n", tc_version_string());
    bool ok = report_driver(&out, &problems);
    ok &= report_nvrtc(&out, &problems);
    report_cublas(&out);
    report_cache(&out);
    if (ok)
        strbuf_printf(&out, "ok: --device=cuda can run here\n");
    else
        strbuf_printf(&out, "not usable for --device=cuda: %s\n", problems.s ? problems.s : "?");
    free(problems.s);
    if (usable)
        *usable = ok;
    return out.s;
}

/* --- dtype bindings for dumps and questions (`tensorc compile --dtype`, `run`) ------ */

tc_status tc_program_dump_ex(tc_program *p, const char *stage, const char *fn,
                             const tc_arg *dtypes, size_t ndtypes, const char **out)
{
    if (!p || !stage || !out || (ndtypes && !dtypes))
        return TC_ERR_INVALID_ARG;
    if (!ndtypes || strcmp(stage, "ast") == 0) /* the AST is before any binding */
        return tc_program_dump(p, stage, fn, out);
    const gfn *f;
    tc_status st = api_entry_dtypes(p, "tc_program_dump_ex", fn, dtypes, ndtypes, &f);
    return st == TC_OK ? api_dump(p, f, stage, out) : st;
}

tc_status tc_program_dump_json(tc_program *p, const char *stage, const char *fn,
                               const tc_arg *dtypes, size_t ndtypes, const char **out)
{
    if (!p || !stage || !out || (ndtypes && !dtypes))
        return TC_ERR_INVALID_ARG;
    const gfn *f = NULL;
    if (ndtypes) {
        tc_status st = api_entry_dtypes(p, "tc_program_dump_json", fn, dtypes, ndtypes, &f);
        if (st != TC_OK)
            return st;
    }
    return api_dump_json(p, f, stage, fn, out);
}

tc_status tc_function_not_elementwise(tc_program *p, const char *fn, const tc_arg *dtypes,
                                      size_t ndtypes, const char **why)
{
    if (!p || !why || (ndtypes && !dtypes))
        return TC_ERR_INVALID_ARG;
    *why = NULL;
    const gfn *f;
    tc_status st = api_entry_dtypes(p, "tc_function_not_elementwise", fn, dtypes, ndtypes, &f);
    if (st == TC_OK)
        *why = api_not_elementwise(p->arena, f);
    return st;
}

const char *tc_dtype_name(DLDataType dtype)
{
    tc_dtype t = api_from_dl(dtype);
    return t == TC_DT_NONE ? NULL : dtype_name(t);
}

int tc_dtype_parse(const char *name, DLDataType *dtype)
{
    tc_dtype t = name ? dtype_parse(name) : TC_DT_NONE;
    if (t == TC_DT_NONE || !dtype)
        return 0;
    *dtype = api_dl_dtype(t);
    return 1;
}

/* --- output sets (outfile.h behind the API) ------------------------------------------- */

tc_outset *tc_outset_new(void) { return outset_new(); }
void tc_outset_free(tc_outset *s) { outset_free(s); }

tc_status tc_outset_add(tc_outset *s, const char *path, const char *what, int *index)
{
    if (!s || !path)
        return TC_ERR_INVALID_ARG;
    return outset_add(s, path, what ? what : "", index, outset_diag(s));
}

tc_status tc_outset_open(tc_outset *s, int index, int *fd)
{
    return s && fd ? outset_open(s, index, fd, outset_diag(s)) : TC_ERR_INVALID_ARG;
}

tc_status tc_outset_done(tc_outset *s, int index, int ok, int err)
{
    return s ? outset_done(s, index, ok != 0, err, outset_diag(s)) : TC_ERR_INVALID_ARG;
}

tc_status tc_outset_write(tc_outset *s, int index, const void *data, size_t len)
{
    int fd;
    tc_status st = tc_outset_open(s, index, &fd);
    if (st != TC_OK)
        return st;
    bool ok = outfile_write_all(fd, data, len);
    return tc_outset_done(s, index, ok, ok ? 0 : errno);
}

tc_status tc_outset_commit(tc_outset *s)
{
    return s ? outset_commit(s, outset_diag(s)) : TC_ERR_INVALID_ARG;
}

const char *tc_outset_errmsg(const tc_outset *s)
{
    const tc_diag *d = s ? outset_diag((tc_outset *)s) : NULL;
    return d && d->msg ? d->msg : "";
}
