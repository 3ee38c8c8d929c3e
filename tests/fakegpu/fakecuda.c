/* fakecuda.c - libtc-fake-cuda.so: the CUDA driver and cuBLAS entry points
 * tensorc uses, on host memory, so `tensorc run --device=cuda` runs end to
 * end on a machine without a GPU (tests/fakegpu/run.sh points
 * TENSORC_LIBCUDA and TENSORC_CUBLAS here).
 *
 * What it checks is the contract between a launch plan and its kernels,
 * which is where a runtime bug would corrupt memory on a real GPU:
 *
 *   - It reports a device newer than NVRTC knows (compute capability 99.0),
 *     so tensorc compiles the real generated source to PTX for the newest
 *     architecture NVRTC has, and hands the PTX text here.  Each kernel's
 *     parameter list is read from its `.entry` line, and cuFuncGetParamInfo
 *     answers from it, so the runtime's own check compares the plan's
 *     argument types with what the kernel was compiled to take.
 *   - cuLaunchKernel reads every 8-byte parameter: one that is not a small
 *     integer (a 64-bit size) must point into a live allocation, else the
 *     launch fails as an illegal address.  Grid and block limits are checked,
 *     and cuLaunchKernelEx's cluster dimensions (below).
 *   - Memory is malloc'd and filled with 0xa5 (never zero); copies and fills
 *     are memcpy/memset, bounds-checked against the allocations.
 *
 * TC_FAKE_CUDA_LOG=1 prints each launch with its grid and block.
 *
 * Graphs (tc_capture, tc_replay_run): a stream made by cuStreamCreate and
 * put into capture records the launches and copies enqueued on it instead
 * of running them; cuGraphLaunch runs the instantiated copy, checking each
 * node's pointers against live memory again (a replay that outlived its
 * buffers fails as an illegal address); a captured graph is a chain whose
 * kernel nodes' arguments and grid cuGraphExecKernelNodeSetParams_v2 may
 * change in an executable graph (fake_node_updates counts them).  While a capture is open,
 * synchronizing, allocating or freeing fails, as it would invalidate a
 * real capture.  Built with -DFAKE_NO_GRAPHS (libtc-fake-cuda-nographs),
 * the graph entry points are absent, as on a driver older than CUDA 11.4.
 * fake_last_kernel / fake_last_args hold what the last launch that ran
 * was passed, for tests that check argument values.
 *
 * Kernels do not run: outputs keep what was there (tensorc run poisons them
 * with 0xff), so `--check` must report a mismatch, which run.sh expects.
 * cublasGemmStridedBatchedEx does run, in f32 on the host.
 *
 * Thread-safe as a driver is (tests/unit/test_contexts runs contexts in
 * several threads): the allocation table is behind a mutex, the launch
 * counter is atomic, and the current context is per thread.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, INVALID_IMAGE = 200, NOT_FOUND = 500,
       ILLEGAL_ADDRESS = 700, LAUNCH_OUT_OF_RESOURCES = 701 };

/* --- allocations ---------------------------------------------------------------- */

typedef struct { uintptr_t p; size_t n; } alloc_t;
static alloc_t *allocs;
static int nallocs, capallocs;
static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;

/* with alloc_lock held */
static int find_alloc(uintptr_t p)
{
    for (int i = 0; i < nallocs; i++)
        if (p >= allocs[i].p && p < allocs[i].p + allocs[i].n)
            return i;
    return -1;
}

/* p inside a live allocation */
static bool allocated(uintptr_t p)
{
    pthread_mutex_lock(&alloc_lock);
    bool in = find_alloc(p) >= 0;
    pthread_mutex_unlock(&alloc_lock);
    return in;
}

/* [p, p + n) inside one live allocation */
static int inside(uintptr_t p, size_t n)
{
    pthread_mutex_lock(&alloc_lock);
    int i = find_alloc(p);
    bool in = i >= 0 && p + n <= allocs[i].p + allocs[i].n;
    pthread_mutex_unlock(&alloc_lock);
    return in;
}

static _Atomic int open_captures;
enum { CAPTURE_UNSUPPORTED = 900 };

CUresult cuMemAlloc_v2(uint64_t *out, size_t n)
{
    if (open_captures)
        return CAPTURE_UNSUPPORTED;
    void *m = malloc(n ? n : 1);
    if (!m)
        return OUT_OF_MEMORY;
    memset(m, 0xa5, n);
    pthread_mutex_lock(&alloc_lock);
    if (nallocs == capallocs) {
        capallocs = capallocs ? 2 * capallocs : 64;
        allocs = realloc(allocs, (size_t)capallocs * sizeof *allocs);
    }
    allocs[nallocs++] = (alloc_t){(uintptr_t)m, n};
    pthread_mutex_unlock(&alloc_lock);
    *out = (uint64_t)(uintptr_t)m;
    return OK;
}

CUresult cuMemFree_v2(uint64_t p)
{
    if (open_captures)
        return CAPTURE_UNSUPPORTED;
    pthread_mutex_lock(&alloc_lock);
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].p == (uintptr_t)p) {
            free((void *)(uintptr_t)p);
            allocs[i] = allocs[--nallocs];
            pthread_mutex_unlock(&alloc_lock);
            return OK;
        }
    pthread_mutex_unlock(&alloc_lock);
    fprintf(stderr, "fakecuda: cuMemFree of 0x%llx, which is not an allocation\n", (unsigned long long)p);
    return INVALID_VALUE;
}

CUresult cuMemGetAddressRange_v2(uint64_t *base, size_t *size, uint64_t p)
{
    int i = find_alloc((uintptr_t)p);
    if (i < 0)
        return NOT_FOUND;
    if (base)
        *base = allocs[i].p;
    if (size)
        *size = allocs[i].n;
    return OK;
}

CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n)
{
    if (!inside((uintptr_t)d, n))
        return ILLEGAL_ADDRESS;
    memcpy((void *)(uintptr_t)d, s, n);
    return OK;
}

CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n)
{
    if (!inside((uintptr_t)s, n))
        return ILLEGAL_ADDRESS;
    memcpy(d, (void *)(uintptr_t)s, n);
    return OK;
}

CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void *s, size_t n, void *st)
{
    (void)st;
    return cuMemcpyHtoD_v2(d, s, n);
}

static bool capture_copy(void *stream, uint64_t d, uint64_t src, size_t len);

CUresult cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s, size_t n, void *st)
{
    if (capture_copy(st, d, s, n))
        return OK;
    if (!inside((uintptr_t)d, n) || !inside((uintptr_t)s, n))
        return ILLEGAL_ADDRESS;
    memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
    return OK;
}

CUresult cuMemsetD8Async(uint64_t d, unsigned char v, size_t n, void *st)
{
    (void)st;
    if (!inside((uintptr_t)d, n))
        return ILLEGAL_ADDRESS;
    memset((void *)(uintptr_t)d, v, n);
    return OK;
}

/* --- device, context ------------------------------------------------------------- */

/* The context stack is per thread, as the driver's.  Initial-exec TLS: the
 * thread's static block holds it, where the dynamic model (a library loaded
 * with dlopen) had glibc malloc a block per thread on first use, which
 * LeakSanitizer without its TLS scan (scripts/test.sh's use_tls=0) reads as
 * a leak: suppressed (*tls_get_addr*), but only after symbolizing its stack,
 * about 0.2 s of every ASan process that loaded this driver. */
#define FAKE_TLS _Thread_local __attribute__((tls_model("initial-exec")))
static FAKE_TLS void *cur_ctx;
static FAKE_TLS int depth;
static char ctx_obj;

CUresult cuInit(unsigned f) { (void)f; return OK; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int o) { *d = o; return OK; }
CUresult cuDeviceGetAttribute(int *v, int a, int d)
{
    (void)d;
    *v = a == 75 ? 99 : a == 76 ? 0 : a == 16 ? 132 : 0; /* cc 99.0, 132 SMs */
    return OK;
}
CUresult cuDeviceGetName(char *n, int len, int d) { (void)d; snprintf(n, (size_t)len, "Fake GPU"); return OK; }
CUresult cuDeviceTotalMem_v2(size_t *bytes, int d) { (void)d; *bytes = (size_t)80 << 30; return OK; }
CUresult cuCtxGetCurrent(void **c) { *c = depth ? cur_ctx : NULL; return OK; }
CUresult cuCtxGetDevice(int *d) { *d = 0; return OK; }
CUresult cuCtxPushCurrent_v2(void *c) { cur_ctx = c; depth++; return OK; }
CUresult cuCtxPopCurrent_v2(void **c) { if (c) *c = cur_ctx; depth--; return depth < 0 ? INVALID_VALUE : OK; }
CUresult cuCtxSynchronize(void) { return open_captures ? CAPTURE_UNSUPPORTED : OK; }
CUresult cuStreamSynchronize(void *s) { (void)s; return open_captures ? CAPTURE_UNSUPPORTED : OK; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &ctx_obj; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return OK; }
CUresult cuGetErrorName(CUresult r, const char **s)
{
    *s = r == ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS" : r == INVALID_IMAGE ? "CUDA_ERROR_INVALID_IMAGE"
       : r == NOT_FOUND ? "CUDA_ERROR_NOT_FOUND"
       : r == CAPTURE_UNSUPPORTED ? "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" : "CUDA_ERROR_FAKE";
    return OK;
}
CUresult cuGetErrorString(CUresult r, const char **s) { (void)r; *s = "from the fake driver"; return OK; }

/* --- modules: PTX text, parameters read from .entry ------------------------------ */

typedef struct {
    char *name;
    int nparams;
    size_t sizes[256];
    bool ptr[256];          /* a .u64/.b64 parameter: may be an address (not .f64, not a table) */
    bool nonportable;       /* cuFuncSetAttribute allowed clusters past 8 blocks */
    int max_dyn;            /* cuFuncSetAttribute's dynamic shared memory limit (0: 48 KB) */
    unsigned statmem;       /* the body's .shared arrays (bytes): a launch's 48 KB counts them */
} fake_fn;

typedef struct {
    char *ptx;
    fake_fn **fns;          /* each its own allocation: handles stay valid */
    int nfns;
} fake_mod;

CUresult cuModuleLoadData(void **out, const void *image)
{
    const char *ptx = image;
    if (!ptx || !strstr(ptx, ".entry"))
        return INVALID_IMAGE; /* a CUBIN: the fake device asked for PTX */
    fake_mod *m = calloc(1, sizeof *m);
    m->ptx = strdup(ptx);
    *out = m;
    return OK;
}

CUresult cuModuleUnload(void *mod)
{
    fake_mod *m = mod;
    for (int i = 0; i < m->nfns; i++) {
        free(m->fns[i]->name);
        free(m->fns[i]);
    }
    free(m->fns);
    free(m->ptx);
    free(m);
    return OK;
}

static size_t ptx_size(const char *ty)
{
    if (!strncmp(ty, ".u64", 4) || !strncmp(ty, ".s64", 4) || !strncmp(ty, ".b64", 4) || !strncmp(ty, ".f64", 4))
        return 8;
    if (!strncmp(ty, ".u32", 4) || !strncmp(ty, ".s32", 4) || !strncmp(ty, ".b32", 4) || !strncmp(ty, ".f32", 4))
        return 4;
    if (!strncmp(ty, ".u16", 4) || !strncmp(ty, ".s16", 4) || !strncmp(ty, ".b16", 4) || !strncmp(ty, ".f16", 4))
        return 2;
    if (!strncmp(ty, ".u8", 3) || !strncmp(ty, ".s8", 3) || !strncmp(ty, ".b8", 3))
        return 1;
    return 0;
}

CUresult cuModuleGetFunction(void **out, void *mod, const char *name)
{
    fake_mod *m = mod;
    char key[1024];
    snprintf(key, sizeof key, ".entry %s(", name);
    const char *at = strstr(m->ptx, key);
    if (!at)
        return NOT_FOUND;
    m->fns = realloc(m->fns, (size_t)(m->nfns + 1) * sizeof *m->fns);
    fake_fn *f = calloc(1, sizeof *f);
    m->fns[m->nfns++] = f;
    f->name = strdup(name);
    const char *end = strchr(at, ')');
    for (const char *p = strstr(at, ".param"); p && p < end && f->nparams < 256; p = strstr(p + 6, ".param")) {
        const char *ty = p + 6;
        while (*ty == ' ' || *ty == '\t')
            ty++;
        if (!strncmp(ty, ".align", 6)) { /* .param .align A .b8 name[N] */
            const char *br = strchr(ty, '[');
            f->sizes[f->nparams++] = br && br < end ? (size_t)strtoul(br + 1, NULL, 10) : 0;
            continue;
        }
        if (!strncmp(ty, ".ptr", 4))
            ty += 4;
        f->ptr[f->nparams] = !strncmp(ty, ".u64", 4) || !strncmp(ty, ".b64", 4) || !strncmp(ty, ".s64", 4);
        f->sizes[f->nparams++] = ptx_size(ty);
    }
    /* static shared memory: ".shared .align A .b8 name[N];" up to the next entry */
    const char *next = strstr(end, ".entry ");
    for (const char *p = strstr(end, "\t.shared ."); p && (!next || p < next); p = strstr(p + 9, "\t.shared .")) {
        const char *br = strchr(p, '['), *nl = strchr(p, '\n');
        if (br && (!nl || br < nl))
            f->statmem += (unsigned)strtoul(br + 1, NULL, 10);
    }
    *out = f;
    return OK;
}

CUresult cuFuncGetParamInfo(void *fn, size_t i, size_t *offset, size_t *size)
{
    fake_fn *f = fn;
    if (i >= (size_t)f->nparams)
        return INVALID_VALUE;
    size_t off = 0;
    for (size_t k = 0; k < i; k++)
        off += f->sizes[k];
    *offset = off;
    if (size)
        *size = f->sizes[i];
    return OK;
}

_Atomic long fake_launches;

/* The last launch that ran (not one captured into a graph), for tests
 * that check what tensorc passed: its kernel's name and each argument's
 * bytes (dlsym them from this library). */
char fake_last_kernel[256];
int fake_last_nargs;
unsigned char fake_last_args[256][64]; /* the first 64 bytes of each */
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every 8-byte pointer parameter of f in params points into live memory. */
static CUresult check_params(const fake_fn *f, void **params)
{
    for (int i = 0; i < f->nparams; i++) {
        if (f->sizes[i] != 8 || !f->ptr[i]) /* a double's bits are no address */
            continue;
        uint64_t v;
        memcpy(&v, params[i], 8);
        /* a negative i64 scalar (ignore_index -100) is no address either:
         * user-space addresses stay below 2^48 */
        if (v > ((uint64_t)1 << 40) && v < ((uint64_t)1 << 48) && !allocated((uintptr_t)v)) {
            fprintf(stderr, "fakecuda: %s parameter %d is 0x%llx, which is in no allocation\n",
                    f->name, i, (unsigned long long)v);
            return ILLEGAL_ADDRESS;
        }
    }
    return OK;
}

static void ran(const fake_fn *f, void **params, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                unsigned by, unsigned bz)
{
    fake_launches++;
    /* contexts launch from several threads at once (test_contexts): one
     * writer at a time (the tests that read these launch from one thread) */
    pthread_mutex_lock(&last_lock);
    snprintf(fake_last_kernel, sizeof fake_last_kernel, "%s", f->name);
    fake_last_nargs = f->nparams;
    for (int i = 0; i < f->nparams; i++)
        memcpy(fake_last_args[i], params[i], f->sizes[i] < 64 ? f->sizes[i] : 64);
    pthread_mutex_unlock(&last_lock);
    if (getenv("TC_FAKE_CUDA_LOG"))
        fprintf(stderr, "fakecuda: launch %s<<<(%u, %u, %u), (%u, %u, %u)>>>\n", f->name, gx, gy, gz,
                bx, by, bz);
}

static bool capture_launch(void *stream, fake_fn *f, const unsigned g[3], const unsigned b[3],
                           void **params);

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
    (void)extra;
    fake_fn *f = fn;
    if (!gx || !gy || !gz || gy > 65535 || gz > 65535 || !bx || !by || !bz ||
        (unsigned long)bx * by * bz > 1024 ||
        (f->max_dyn ? shmem > (unsigned)f->max_dyn : f->statmem + shmem > 48 * 1024)) {
        fprintf(stderr, "fakecuda: %s: grid, block or %u bytes of dynamic shared memory out of "
                "range\n", f->name, shmem);
        return LAUNCH_OUT_OF_RESOURCES;
    }
    CUresult r = check_params(f, params);
    if (r != OK)
        return r;
    if (capture_launch(stream, f, (unsigned[3]){gx, gy, gz}, (unsigned[3]){bx, by, bz}, params))
        return OK;
    ran(f, params, gx, gy, gz, bx, by, bz);
    return OK;
}

/* --- graphs: streams made here capture launches and copies -------------------------------- */

#ifndef FAKE_NO_GRAPHS
typedef struct {
    bool copy;
    fake_fn *f;
    unsigned g[3], b[3];
    unsigned char *vals;    /* the arguments, back to back */
    void **params;          /* pointers into vals */
    uint64_t dst, src;
    size_t n;
    int idx;                /* its place in its graph (the same in an exec made from it) */
    struct fake_graph *owner;
} fake_node;

typedef struct fake_graph {
    fake_node *nodes;
    int n;
} fake_graph;

typedef struct {
    bool capturing;
    fake_graph *graph;
} fake_stream;

static fake_stream *streams[64];   /* those made by cuStreamCreate, alive */
static pthread_mutex_t stream_lock = PTHREAD_MUTEX_INITIALIZER;

static fake_stream *capturing(void *stream)
{
    fake_stream *s = NULL;
    pthread_mutex_lock(&stream_lock);
    for (int i = 0; i < 64 && stream; i++)
        if (streams[i] == stream && streams[i]->capturing)
            s = streams[i];
    pthread_mutex_unlock(&stream_lock);
    return s;
}

static fake_node *add_node(fake_graph *g)
{
    g->nodes = realloc(g->nodes, (size_t)(g->n + 1) * sizeof *g->nodes);
    fake_node *n = &g->nodes[g->n++];
    memset(n, 0, sizeof *n);
    n->idx = g->n - 1;
    n->owner = g;
    return n;
}

static bool capture_launch(void *stream, fake_fn *f, const unsigned g[3], const unsigned b[3],
                           void **params)
{
    fake_stream *s = capturing(stream);
    if (!s)
        return false;
    fake_node *n = add_node(s->graph);
    n->f = f;
    memcpy(n->g, g, sizeof n->g);
    memcpy(n->b, b, sizeof n->b);
    size_t total = 0;
    for (int i = 0; i < f->nparams; i++)
        total += f->sizes[i];
    n->vals = malloc(total + 1);
    n->params = calloc((size_t)f->nparams + 1, sizeof *n->params);
    total = 0;
    for (int i = 0; i < f->nparams; i++) {
        memcpy(n->vals + total, params[i], f->sizes[i]);
        n->params[i] = n->vals + total;
        total += f->sizes[i];
    }
    return true;
}

static bool capture_copy(void *stream, uint64_t d, uint64_t src, size_t len)
{
    fake_stream *s = capturing(stream);
    if (!s)
        return false;
    fake_node *n = add_node(s->graph);
    *n = (fake_node){.copy = true, .dst = d, .src = src, .n = len, .idx = n->idx, .owner = n->owner};
    return true;
}

CUresult cuStreamCreate(void **out, unsigned flags)
{
    (void)flags;
    fake_stream *s = calloc(1, sizeof *s);
    pthread_mutex_lock(&stream_lock);
    int i = 0;
    while (i < 64 && streams[i])
        i++;
    if (i < 64)
        streams[i] = s;
    pthread_mutex_unlock(&stream_lock);
    if (i == 64) {
        free(s);
        return OUT_OF_MEMORY;
    }
    *out = s;
    return OK;
}

CUresult cuStreamDestroy_v2(void *stream)
{
    pthread_mutex_lock(&stream_lock);
    for (int i = 0; i < 64; i++)
        if (streams[i] == stream)
            streams[i] = NULL;
    pthread_mutex_unlock(&stream_lock);
    free(stream);
    return OK;
}

CUresult cuStreamBeginCapture_v2(void *stream, int mode)
{
    (void)mode;
    fake_stream *s = stream;
    if (!s || s->capturing)
        return INVALID_VALUE;
    s->capturing = true;
    s->graph = calloc(1, sizeof *s->graph);
    open_captures++;
    return OK;
}

CUresult cuStreamEndCapture(void *stream, void **graph)
{
    fake_stream *s = stream;
    if (!s || !s->capturing)
        return INVALID_VALUE;
    s->capturing = false;
    open_captures--;
    *graph = s->graph;
    s->graph = NULL;
    return OK;
}

static void free_graph(fake_graph *g)
{
    for (int i = 0; i < g->n; i++) {
        free(g->nodes[i].vals);
        free(g->nodes[i].params);
    }
    free(g->nodes);
    free(g);
}

/* An executable graph owns a copy of the nodes, as the driver's does. */
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags)
{
    (void)flags;
    fake_graph *g = graph, *e = calloc(1, sizeof *e);
    for (int i = 0; i < g->n; i++) {
        fake_node *n = add_node(e);
        *n = g->nodes[i];
        if (!n->copy) {
            size_t total = 0;
            for (int k = 0; k < n->f->nparams; k++)
                total += n->f->sizes[k];
            n->vals = malloc(total + 1);
            memcpy(n->vals, g->nodes[i].vals, total);
            n->params = calloc((size_t)n->f->nparams + 1, sizeof *n->params);
            total = 0;
            for (int k = 0; k < n->f->nparams; k++) {
                n->params[k] = n->vals + total;
                total += n->f->sizes[k];
            }
        }
    }
    *exec = e;
    return OK;
}

/* Each node again, its pointers checked against live memory now: a graph
 * that outlived the memory it captured fails as the GPU would. */
_Atomic long fake_graph_launches; /* cuGraphLaunch calls that ran */

CUresult cuGraphLaunch(void *exec, void *stream)
{
    (void)stream;
    fake_graph *e = exec;
    fake_graph_launches++;
    for (int i = 0; i < e->n; i++) {
        fake_node *n = &e->nodes[i];
        if (n->copy) {
            if (!inside((uintptr_t)n->dst, n->n) || !inside((uintptr_t)n->src, n->n))
                return ILLEGAL_ADDRESS;
            memmove((void *)(uintptr_t)n->dst, (void *)(uintptr_t)n->src, n->n);
            continue;
        }
        CUresult r = check_params(n->f, n->params);
        if (r != OK)
            return r;
        ran(n->f, n->params, n->g[0], n->g[1], n->g[2], n->b[0], n->b[1], n->b[2]);
    }
    return OK;
}

CUresult cuStreamIsCapturing(void *stream, int *status)
{
    *status = capturing(stream) != NULL;
    return OK;
}

/* A captured graph is a chain: node i's one dependent is node i + 1. */
CUresult cuGraphGetRootNodes(void *graph, void **nodes, size_t *n)
{
    fake_graph *g = graph;
    size_t have = g->n > 0;
    if (nodes && *n >= 1 && have)
        nodes[0] = &g->nodes[0];
    *n = have;
    return OK;
}

CUresult cuGraphNodeGetDependentNodes(void *node, void **nodes, size_t *n)
{
    fake_node *x = node;
    size_t have = x->idx + 1 < x->owner->n;
    if (nodes && *n >= 1 && have)
        nodes[0] = &x->owner->nodes[x->idx + 1];
    *n = have;
    return OK;
}

CUresult cuGraphNodeGetType(void *node, int *type)
{
    *type = ((fake_node *)node)->copy ? 1 : 0; /* CU_GRAPH_NODE_TYPE_KERNEL, _MEMCPY */
    return OK;
}

/* CUDA_KERNEL_NODE_PARAMS_v2 */
typedef struct {
    void *func;
    unsigned grid[3], block[3];
    unsigned shmem;
    void **params, **extra;
    void *kern, *ctx;
} fake_kernel_params;

_Atomic long fake_node_updates; /* kernel nodes updated in an exec */

/* The node's launch in exec from now on: its function must be the one
 * captured (the driver's rule), its arguments are copied now. */
CUresult cuGraphExecKernelNodeSetParams_v2(void *exec, void *node, const fake_kernel_params *p)
{
    fake_graph *e = exec;
    fake_node *x = node;
    if (!e || !x || !p || x->idx >= e->n || e->nodes[x->idx].copy || !p->params || p->extra ||
        (fake_fn *)p->func != e->nodes[x->idx].f)
        return INVALID_VALUE;
    fake_node *n = &e->nodes[x->idx];
    for (int k = 0; k < n->f->nparams; k++)
        memcpy(n->params[k], p->params[k], n->f->sizes[k]);
    memcpy(n->g, p->grid, sizeof n->g);
    memcpy(n->b, p->block, sizeof n->b);
    fake_node_updates++;
    return OK;
}

CUresult cuGraphExecDestroy(void *exec) { free_graph(exec); return OK; }
CUresult cuGraphDestroy(void *graph) { free_graph(graph); return OK; }
#else
static bool capture_launch(void *stream, fake_fn *f, const unsigned g[3], const unsigned b[3],
                           void **params)
{
    (void)stream, (void)f, (void)g, (void)b, (void)params;
    return false;
}
static bool capture_copy(void *stream, uint64_t d, uint64_t src, size_t len)
{
    (void)stream, (void)d, (void)src, (void)len;
    return false;
}
#endif

/* Cluster launches (cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
 * the layout of cuda.h): the cluster must divide the grid, have at most 8
 * blocks (16 once the kernel allows a non-portable size), and its blocks
 * at most 1024 threads each (cuLaunchKernel's checks); else the launch is
 * refused as the driver would.  TC_FAKE_CUDA_LOG prints the cluster before
 * the launch line. */
typedef struct {
    int id;
    char pad[4];
    union { char pad[64]; struct { unsigned x, y, z; } cluster; } value;
} fake_attr;
typedef struct {
    unsigned gx, gy, gz, bx, by, bz, shmem;
    void *stream;
    fake_attr *attrs;
    unsigned nattrs;
} fake_config;
enum { FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8, INVALID_VALUE_ATTR = 1,
       FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14, LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
       INVALID_CLUSTER_SIZE = 912 };

enum { FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1 };
CUresult cuFuncGetAttribute(int *value, int attr, void *fn)
{
    if (attr != FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
        return INVALID_VALUE_ATTR;
    *value = (int)((fake_fn *)fn)->statmem;
    return OK;
}

CUresult cuFuncSetAttribute(void *fn, int attr, int value)
{
    if (attr == FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)
        ((fake_fn *)fn)->nonportable = value != 0;
    if (attr == FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) { /* an sm_90 block's most: 227 KB */
        if (value < 0 || value > 227 * 1024)
            return INVALID_VALUE_ATTR;
        ((fake_fn *)fn)->max_dyn = value;
    }
    return OK;
}

CUresult cuLaunchKernelEx(const fake_config *c, void *fn, void **params, void **extra)
{
    unsigned cx = 1, cy = 1, cz = 1;
    for (unsigned i = 0; i < c->nattrs; i++)
        if (c->attrs[i].id == LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            cx = c->attrs[i].value.cluster.x;
            cy = c->attrs[i].value.cluster.y;
            cz = c->attrs[i].value.cluster.z;
        }
    fake_fn *f = fn;
    unsigned long n = (unsigned long)cx * cy * cz;
    if (!cx || !cy || !cz || c->gx % cx || c->gy % cy || c->gz % cz || n > (f->nonportable ? 16u : 8u)) {
        fprintf(stderr, "fakecuda: %s: cluster (%u, %u, %u) does not fit grid (%u, %u, %u) or the "
                "size allowed\n", f->name, cx, cy, cz, c->gx, c->gy, c->gz);
        return INVALID_CLUSTER_SIZE;
    }
    if (getenv("TC_FAKE_CUDA_LOG") && n > 1)
        fprintf(stderr, "fakecuda: cluster %s (%u, %u, %u)\n", f->name, cx, cy, cz);
    return cuLaunchKernel(fn, c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->shmem, c->stream, params,
                          extra);
}

/* --- events: a clock that advances by 10 us per launch ----------------------------- */

CUresult cuEventCreate(void **e, unsigned f) { (void)f; *e = calloc(1, sizeof(long)); return OK; }
CUresult cuEventRecord(void *e, void *s) { (void)s; *(long *)e = fake_launches; return OK; }
CUresult cuEventSynchronize(void *e) { (void)e; return OK; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b)
{
    *ms = (float)(*(long *)b - *(long *)a) * 0.01f;
    return OK;
}
CUresult cuEventDestroy_v2(void *e) { free(e); return OK; }

/* --- cuBLAS: a host gemm, f32 only ---------------------------------------------------- */

static char handle_obj;
int cublasCreate_v2(void **h) { *h = &handle_obj; return 0; }
int cublasDestroy_v2(void *h) { (void)h; return 0; }
int cublasSetStream_v2(void *h, void *s) { (void)h; (void)s; return 0; }
const char *cublasGetStatusName(int s) { return s == 15 ? "CUBLAS_STATUS_NOT_SUPPORTED" : "CUBLAS_STATUS_FAKE"; }
const char *cublasGetStatusString(int s) { (void)s; return "from the fake cuBLAS"; }

/* An element of a cudaDataType (f32 0, f64 1, f16 2, bf16 14) as a double, and back. */
static double get(const void *p, int type, long long i)
{
    if (type == 0)
        return ((const float *)p)[i];
    if (type == 1)
        return ((const double *)p)[i];
    uint16_t h = ((const uint16_t *)p)[i];
    if (type == 14) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? m * 0x1p-24 : e == 31 ? (m ? 0.0 / 0.0 : 1.0 / 0.0) : (1024 + m) * ((double)(1 << e) * 0x1p-25);
    return (h & 0x8000) ? -v : v;
}

static void put(void *p, int type, long long i, double v)
{
    if (type == 1) {
        ((double *)p)[i] = v;
        return;
    }
    float f = (float)v;
    if (type == 0) {
        ((float *)p)[i] = f;
        return;
    }
    uint32_t u;
    memcpy(&u, &f, 4);
    if (type == 14) { /* round to nearest even */
        ((uint16_t *)p)[i] = (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
        return;
    }
    /* f16, truncating: results are not checked here, only that it runs */
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    int e = (int)((u >> 23) & 0xff) - 127 + 15;
    uint16_t h = e <= 0 ? sign : e >= 31 ? (uint16_t)(sign | 0x7c00) : (uint16_t)(sign | (e << 10) | ((u >> 13) & 0x3ff));
    ((uint16_t *)p)[i] = h;
}

int cublasGemmStridedBatchedEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha,
                               const void *A, int at, int lda, long long sa, const void *B, int bt,
                               int ldb, long long sb, const void *beta, void *C, int ct, int ldc,
                               long long sc, int batch, int compute, int algo)
{
    (void)h; (void)alpha; (void)beta; (void)algo; (void)compute;
    int size = at == 0 ? 4 : at == 1 ? 8 : 2;
    /* f32, f64, f16, bf16 (f64: tests/random seed 43 #1220, an f64 h_lin) */
    if ((at != 0 && at != 1 && at != 2 && at != 14) || bt != at || ct != at)
        return 15;
    if (!inside((uintptr_t)C, (size_t)((batch - 1) * sc + (long long)(n - 1) * ldc + m) * (size_t)size))
        return 13;
    for (int q = 0; q < batch; q++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int l = 0; l < k; l++)
                    s += get(A, at, q * sa + (ta ? l + (long long)i * lda : i + (long long)l * lda)) *
                         get(B, bt, q * sb + (tb ? j + (long long)l * ldb : l + (long long)j * ldb));
                put(C, ct, q * sc + i + (long long)j * ldc, s);
            }
    fake_launches++;
    return 0;
}
