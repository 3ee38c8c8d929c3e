/* rt.c - the GPU side of a context: device, JIT, modules, cuBLAS, pool.
 *
 * See rt.h for what a tc_rt holds and why modules are keyed by image.  The
 * rt_ops here are one-line adapters from exec.h's table to driver.h and
 * blas.h; everything with logic in it lives in exec.c, where the unit tests
 * can reach it without a GPU.
 */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvrtc.h"

#define SET(d, st, ...) ((d) ? diag_set((d), (st), (tc_loc){0}, __VA_ARGS__) : (st))

/* The name NVRTC gives the program (in its log and the line info); part of
 * the cache key, so it stays fixed. */
#define UNIT_NAME "tensorc.cu"

struct tc_rt *rt_new(int ordinal, const char *cache_dir, const tc_knobs *k)
{
    struct tc_rt *rt = calloc(1, sizeof *rt);
    if (!rt)
        return NULL;
    rt->ordinal = ordinal;
    if (!k)
        k = &knobs_default;
    /* cu_clusters' defaults */
    rt->cluster_max = k->cluster_max > 0 ? (unsigned)k->cluster_max : 16;
    rt->cluster_block = k->cluster_block > 0 ? (unsigned)k->cluster_block : 256;
    rt->blas_off = k->blas_early != 1; /* off unless asked for (rt.h) */
    knobs_text(k, rt->knobs, sizeof rt->knobs);
    if (cache_dir && !(rt->cache_dir = strdup(cache_dir))) {
        free(rt);
        return NULL;
    }
    return rt;
}

static void free_module(rt_module *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->nkernels; i++) {
        free(m->kernels[i].name);
        free(m->kernels[i].param_sizes);
    }
    free(m->kernels);
    free(m->source);
    drv_module_unload(m->mod);
    free(m);
}

void rt_free(struct tc_rt *rt)
{
    if (!rt)
        return;
    rt_pool_release(&rt->pool, &rt_ops_cuda, rt); /* waits for the device, if it has memory */
    if (rt->blas_started) {
        pthread_join(rt->blas_thread, NULL);
        blas_free(rt->blas_early);
    }
    if (rt->dev) {
        blas_free(rt->blas);
        for (int i = 0; i < rt->nmods; i++)
            free_module(rt->mods[i]);
        drv_close(rt->dev);
    }
    free(rt->mods);
    jit_ctx_free(rt->jit);
    free(rt->cache_dir);
    free(rt);
}

tc_status rt_open(struct tc_rt *rt, tc_diag *d)
{
    if (rt->dev)
        return TC_OK;
    int ordinal = rt->ordinal < 0 ? 0 : rt->ordinal;
    tc_status st = drv_open(&rt->dev, ordinal, d);
    if (st != TC_OK)
        return st;
    if (!rt->jit && !(rt->jit = jit_ctx_new(rt->cache_dir, 0))) {
        drv_close(rt->dev);
        rt->dev = NULL;
        return SET(d, TC_ERR_NOMEM, "out of memory");
    }
    jit_set_salt(rt->jit, rt->knobs);
    rt->ordinal = ordinal;
    return TC_OK;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void rt_set_options(struct tc_rt *rt, bool fast_math, bool line_info)
{
    rt->nnvrtc_opts = 0;
    if (fast_math)
        rt->nvrtc_opts[rt->nnvrtc_opts++] = "--use_fast_math";
    if (line_info)
        rt->nvrtc_opts[rt->nnvrtc_opts++] = "-lineinfo";
}

tc_status rt_load(struct tc_rt *rt, const char *source, rt_module **out, tc_diag *d)
{
    *out = NULL;
    if (!rt->dev)
        return SET(d, TC_ERR_INTERNAL, "rt_load before rt_open");
    int want = drv_arch(rt->dev);
    bool ptx_only = false;
    int arch = nvrtc_clamp_arch(want, &ptx_only);
    if (arch == 0) {
        tc_status st = nvrtc_load(d);
        if (st != TC_OK)
            return st;
        return SET(d, TC_ERR_UNSUPPORTED, "%s is sm_%d, older than every architecture this NVRTC "
                   "supports", drv_name(rt->dev), want);
    }
    rt->jit_arch = arch;
    rt->jit_ptx = ptx_only;
    double t0 = now_ms();
    /* The same source as a module already loaded: no key to hash (the
     * hashing was a third of tc_run's host time on a small kernel). */
    size_t srclen = strlen(source);
    for (int i = 0; i < rt->nmods; i++)
        if (rt->mods[i]->source && rt->mods[i]->source_len == srclen &&
            memcmp(rt->mods[i]->source, source, srclen) == 0) {
            rt->origin = JIT_FROM_MEMORY;
            rt->jit_ms = now_ms() - t0;
            *out = rt->mods[i];
            return TC_OK;
        }
    const void *image;
    size_t len;
    tc_status st = jit_image(rt->jit, source, srclen, UNIT_NAME, arch, !ptx_only, rt->nvrtc_opts,
                             rt->nnvrtc_opts,
                             &image, &len, &rt->origin, d);
    if (st != TC_OK)
        return st;
    for (int i = 0; i < rt->nmods; i++)
        if (rt->mods[i]->image == image) {
            rt->jit_ms = now_ms() - t0;
            *out = rt->mods[i];
            return TC_OK;
        }
    if (rt->nmods == rt->capmods) {
        int cap = rt->capmods ? 2 * rt->capmods : 8;
        rt_module **m = realloc(rt->mods, (size_t)cap * sizeof *m);
        if (!m)
            return SET(d, TC_ERR_NOMEM, "out of memory");
        rt->mods = m;
        rt->capmods = cap;
    }
    rt_module *m = calloc(1, sizeof *m);
    if (!m)
        return SET(d, TC_ERR_NOMEM, "out of memory");
    if ((st = drv_module_load(rt->dev, image, &m->mod, d)) != TC_OK) {
        free(m);
        return st;
    }
    m->image = image;
    m->source = malloc(srclen + 1);
    if (m->source) { /* without the copy, later calls just take the hashing path */
        memcpy(m->source, source, srclen + 1);
        m->source_len = srclen;
    }
    rt->mods[rt->nmods++] = m;
    rt->jit_ms = now_ms() - t0;
    *out = m;
    return TC_OK;
}

void rt_reuse(struct tc_rt *rt)
{
    rt->origin = JIT_FROM_MEMORY;
    rt->jit_ms = 0;
}

tc_status rt_run(struct tc_rt *rt, rt_module *mod, const tc_plan *plan, const rt_args *a,
                 void *stream, void *const *events, tc_diag *d)
{
    return rt_exec(&rt->pool, &rt_ops_cuda, rt, mod, plan, a, stream, events, d);
}

/* --- rt_ops over the driver and cuBLAS ---------------------------------------------- */

static tc_status cu_alloc(void *dev, size_t bytes, uint64_t *ptr, tc_diag *d)
{
    return drv_alloc(((struct tc_rt *)dev)->dev, bytes, ptr, d);
}

static void cu_release(void *dev, uint64_t ptr)
{
    drv_free(((struct tc_rt *)dev)->dev, ptr);
}

static tc_status cu_sync(void *dev, tc_diag *d)
{
    return drv_sync(((struct tc_rt *)dev)->dev, NULL, d);
}

static tc_status cu_zero(void *dev, uint64_t ptr, size_t bytes, void *stream, tc_diag *d)
{
    return drv_memset_async(((struct tc_rt *)dev)->dev, ptr, 0, bytes, stream, d);
}

static tc_status cu_copy(void *dev, uint64_t dst, uint64_t src, size_t bytes, void *stream,
                         tc_diag *d)
{
    return drv_memcpy_dtod_async(((struct tc_rt *)dev)->dev, dst, src, bytes, stream, d);
}

static tc_status cu_upload(void *dev, uint64_t dst, const void *src, size_t bytes, void *stream,
                           tc_diag *d)
{
    return drv_htod_async(((struct tc_rt *)dev)->dev, dst, src, bytes, stream, d);
}

/* Kernels are looked up once per module and name; a unit has a few dozen
 * at most, so a linear search does. */
static tc_status cu_kernel(void *dev, void *module, const char *name, void **fn, tc_diag *d)
{
    (void)dev;
    rt_module *m = module;
    for (int i = 0; i < m->nkernels; i++)
        if (strcmp(m->kernels[i].name, name) == 0) {
            *fn = &m->kernels[i];
            return TC_OK;
        }
    if (m->nkernels == m->cap) {
        int cap = m->cap ? 2 * m->cap : 16;
        rt_kernel *k = realloc(m->kernels, (size_t)cap * sizeof *k);
        if (!k)
            return SET(d, TC_ERR_NOMEM, "out of memory");
        /* fn pointers handed out earlier point into the old array, but
         * only for the duration of one launch: nothing keeps them. */
        m->kernels = k;
        m->cap = cap;
    }
    rt_kernel *k = &m->kernels[m->nkernels];
    memset(k, 0, sizeof *k);
    tc_status st = drv_function(m->mod, name, &k->fn, d);
    if (st == TC_ERR_NOT_FOUND)
        return SET(d, TC_ERR_INTERNAL, "the generated module has no kernel '%s' (a bug in the "
                   "plan or the source)", name);
    if (st != TC_OK)
        return st;
    if (!(k->name = strdup(name)))
        return SET(d, TC_ERR_NOMEM, "out of memory");
    m->nkernels++;
    *fn = k;
    return TC_OK;
}

/* "(8, 8, 4)" */
static void sizes_text(char *buf, size_t cap, const size_t *sizes, int n)
{
    size_t at = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < n && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%zu", i ? ", " : "", sizes[i]);
    if (at < cap)
        snprintf(buf + at, cap - at, ")");
}

tc_status rt_kernel_check(rt_kernel *k, const size_t *sizes, int nargs, tc_diag *d)
{
    if (!k->probed) { /* the first launch: as many parameters as the plan passes */
        k->probed = true;
        k->param_sizes = malloc((size_t)(nargs > 0 ? nargs : 1) * sizeof *k->param_sizes);
        if (!k->param_sizes)
            return SET(d, TC_ERR_NOMEM, "out of memory");
        if (drv_function_params(k->fn, k->param_sizes, nargs, &k->nparams, NULL) != TC_OK)
            k->nparams = -1; /* an older driver: launch unchecked */
    }
    bool same = k->nparams < 0 || k->nparams == nargs;
    for (int i = 0; same && k->nparams >= 0 && i < nargs; i++)
        same = k->param_sizes[i] == sizes[i];
    if (!same) {
        char want[512], have[512];
        sizes_text(want, sizeof want, k->param_sizes, k->nparams);
        sizes_text(have, sizeof have, sizes, nargs);
        return SET(d, TC_ERR_INTERNAL, "kernel %s takes %s%d parameters of sizes %s, but its "
                   "plan passes %d of sizes %s (a bug in tensorc's code generation)", k->name,
                   k->nparams < nargs ? "" : "at least ", k->nparams, want, nargs, have);
    }
    return TC_OK;
}

static tc_status cu_launch(void *dev, void *fn, const unsigned grid[3], const unsigned block[3],
                           unsigned cluster, unsigned shmem, void **args, const size_t *sizes,
                           int nargs, void *stream, tc_diag *d)
{
    (void)dev;
    rt_kernel *k = fn;
    tc_status st = rt_kernel_check(k, sizes, nargs, d);
    return st != TC_OK ? st : drv_launch_cluster(k->fn, grid, block, cluster, shmem, stream, args, d);
}

/* Clusters need the module compiled for sm_90 or later (its cluster code is
 * compiled out before) and a device and driver that launch them.  Up to 16
 * blocks (the portable 8 wherever they hold the row, runtime/exec.c; 16
 * needs as many SMs free in one GPC, and a refused launch falls back to 8);
 * the knob TENSORC_CLUSTER_MAX (1 to 16, a power of two) sets another, to
 * measure.  Blocks of TENSORC_CLUSTER_BLOCK threads or more (default 256;
 * a power of two, 32 to 1024), likewise (rt_new). */
static unsigned cu_clusters(void *dev, unsigned *min_block)
{
    struct tc_rt *rt = dev;
    *min_block = rt->cluster_block;
    if (rt->jit_arch < 90 || !drv_has_clusters(rt->dev))
        return 1;
    return rt->cluster_max;
}

static unsigned cu_resident(void *dev, void *fn, const unsigned block[3], unsigned cluster, unsigned shmem)
{
    (void)dev;
    rt_kernel *k = fn;
    if (k->res_cluster != cluster || k->res_block != block[0] || k->res_shmem != shmem) {
        k->res = drv_resident_clusters(k->fn, block, cluster, shmem);
        k->res_block = block[0], k->res_cluster = cluster, k->res_shmem = shmem;
    }
    return k->res;
}

static void *blas_early_main(void *arg)
{
    struct tc_rt *rt = arg;
    if (blas_new(rt->dev, &rt->blas_early, NULL) != TC_OK)
        rt->blas_early = NULL;
    return NULL;
}

void rt_blas_early(struct tc_rt *rt)
{
    if (!rt->dev || rt->blas || rt->blas_started || rt->blas_off)
        return;
    rt->blas_early = NULL;
    rt->blas_started = pthread_create(&rt->blas_thread, NULL, blas_early_main, rt) == 0;
}

static tc_status cu_matmul(void *dev, const blas_mm *mm, void *stream, tc_diag *d)
{
    struct tc_rt *rt = dev;
    if (rt->blas_started) { /* rt_blas_early's handle; none: made here, its error reported */
        pthread_join(rt->blas_thread, NULL);
        rt->blas_started = false;
        rt->blas = rt->blas_early; /* none before: rt_blas_early starts only without one */
        rt->blas_early = NULL;
    }
    if (!rt->blas) {
        tc_status st = blas_new(rt->dev, &rt->blas, d);
        if (st != TC_OK)
            return st;
    }
    return blas_matmul(rt->blas, mm, stream, d);
}

static tc_status cu_record(void *dev, void *event, void *stream, tc_diag *d)
{
    return drv_event_record(((struct tc_rt *)dev)->dev, event, stream, d);
}

const rt_ops rt_ops_cuda = {
    .alloc = cu_alloc,
    .release = cu_release,
    .sync = cu_sync,
    .zero = cu_zero,
    .copy = cu_copy,
    .kernel = cu_kernel,
    .launch = cu_launch,
    .clusters = cu_clusters,
    .resident = cu_resident,
    .matmul = cu_matmul,
    .record = cu_record,
    .upload = cu_upload,
};
