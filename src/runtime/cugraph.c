/* cugraph.c - CUDA graphs over the driver API; see cugraph.h. */
#include "cugraph.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "dlsym.h"

typedef int CUresult;
enum { CU_STREAM_NON_BLOCKING = 1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1 };

static struct {
    int state; /* 0 not looked up, 1 ready, -1 missing */
    const char *missing;
    CUresult (*stream_create)(void **s, unsigned flags);
    CUresult (*stream_destroy)(void *s);
    CUresult (*begin)(void *s, int mode);
    CUresult (*end)(void *s, void **graph);
    CUresult (*instantiate)(void **exec, void *graph, unsigned long long flags);
    CUresult (*launch)(void *exec, void *s);
    CUresult (*exec_destroy)(void *exec);
    CUresult (*destroy)(void *graph);
    CUresult (*error_name)(CUresult r, const char **s);
    CUresult (*is_capturing)(void *s, int *status);
    /* optional: a kernel node's update (drv_graph_set_kernel); NULL when missing */
    CUresult (*roots)(void *graph, void **nodes, size_t *n);
    CUresult (*next)(void *node, void **nodes, size_t *n);
    CUresult (*type)(void *node, int *type);
    CUresult (*set_kernel)(void *exec, void *node, const void *params);
} g;

/* CUDA_KERNEL_NODE_PARAMS_v2 (CUDA 12.0+); its first fields are v1's, so
 * the plain entry point of an older driver reads it too. */
typedef struct {
    void *func;
    unsigned grid[3], block[3];
    unsigned shmem;
    void **params, **extra;
    void *kern, *ctx;
} kernel_node_params;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

#define SET(d, st, ...) ((d) ? diag_set((d), (st), (tc_loc){0}, __VA_ARGS__) : (st))

/* The entry points, from the libcuda driver.c loaded (drv_open came first:
 * a drv_device exists), without loading it again. */
static tc_status lookup(tc_diag *d)
{
    pthread_mutex_lock(&g_lock);
    if (g.state == 0) {
        const char *path = drv_lib_path();
        void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
        static const char *const names[] = {
            "cuStreamCreate", "cuStreamDestroy_v2", "cuStreamBeginCapture_v2", "cuStreamEndCapture",
            "cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphExecDestroy", "cuGraphDestroy",
            "cuGetErrorName", "cuStreamIsCapturing",
        };
        void *slots[] = {&g.stream_create, &g.stream_destroy, &g.begin, &g.end, &g.instantiate,
                         &g.launch, &g.exec_destroy, &g.destroy, &g.error_name, &g.is_capturing};
        _Static_assert(sizeof names / sizeof *names == sizeof slots / sizeof *slots,
                       "one slot per entry point");
        g.state = 1;
        if (!h) {
            g.state = -1;
            g.missing = "the driver library itself";
        }
        for (size_t i = 0; h && i < sizeof names / sizeof *names && g.state == 1; i++)
            if (!dl_sym(h, names[i], slots[i])) {
                g.state = -1;
                g.missing = names[i];
            }
        if (g.state == 1 &&
            (!dl_sym(h, "cuGraphGetRootNodes", &g.roots) ||
             !dl_sym(h, "cuGraphNodeGetDependentNodes", &g.next) ||
             !dl_sym(h, "cuGraphNodeGetType", &g.type) ||
             (!dl_sym(h, "cuGraphExecKernelNodeSetParams_v2", &g.set_kernel) &&
              !dl_sym(h, "cuGraphExecKernelNodeSetParams", &g.set_kernel))))
            g.set_kernel = NULL; /* graphs still run; their scalars are not updated */
        /* h stays open: the driver is loaded for the process anyway */
    }
    int state = g.state;
    pthread_mutex_unlock(&g_lock);
    if (state == 1)
        return TC_OK;
    return SET(d, TC_ERR_UNSUPPORTED, "this CUDA driver has no graph API (%s is missing): "
               "capture and replay need CUDA 11.4 or newer; tc_run works without them", g.missing);
}

static tc_status fail(tc_diag *d, const char *call, CUresult r)
{
    const char *name = NULL;
    if (g.error_name(r, &name) != 0 || !name)
        name = "unknown CUDA error";
    return SET(d, r == 2 ? TC_ERR_NOMEM : TC_ERR_INTERNAL, "%s failed: %s", call, name);
}

tc_status drv_graph_begin(drv_device *dev, void **stream, tc_diag *d)
{
    *stream = NULL;
    tc_status st = lookup(d);
    if (st != TC_OK)
        return st;
    bool pushed = drv_enter(dev);
    void *s = NULL;
    CUresult r = g.stream_create(&s, CU_STREAM_NON_BLOCKING);
    if (r != 0)
        st = fail(d, "cuStreamCreate", r);
    else if ((r = g.begin(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)) != 0) {
        st = fail(d, "cuStreamBeginCapture", r);
        g.stream_destroy(s);
        s = NULL;
    }
    drv_leave(pushed);
    *stream = s;
    return st;
}

tc_status drv_graph_end_kept(drv_device *dev, void *stream, void **exec, void **kept, tc_diag *d)
{
    *exec = NULL;
    if (kept)
        *kept = NULL;
    bool pushed = drv_enter(dev);
    void *graph = NULL;
    tc_status st = TC_OK;
    CUresult r = g.end(stream, &graph);
    if (r != 0)
        st = fail(d, "cuStreamEndCapture", r);
    else if ((r = g.instantiate(exec, graph, 0)) != 0)
        st = fail(d, "cuGraphInstantiate", r);
    if (graph && st == TC_OK && kept)
        *kept = graph;
    else if (graph)
        g.destroy(graph);
    g.stream_destroy(stream);
    drv_leave(pushed);
    if (st != TC_OK)
        *exec = NULL;
    return st;
}

tc_status drv_graph_end(drv_device *dev, void *stream, void **exec, tc_diag *d)
{
    return drv_graph_end_kept(dev, stream, exec, NULL, d);
}

bool drv_graph_updatable(void)
{
    return lookup(NULL) == TC_OK && g.set_kernel;
}

int drv_graph_chain(drv_device *dev, void *graph, void **nodes, const bool *kernel, int n)
{
    if (!g.set_kernel || !graph)
        return -1;
    bool pushed = drv_enter(dev);
    void *node = NULL;
    size_t k = 1;
    int got = 0;
    if (g.roots(graph, &node, &k) != 0 || k != 1)
        got = -1;
    for (; got >= 0 && node; got++) {
        int type = -1;
        /* CU_GRAPH_NODE_TYPE_KERNEL is 0; a copy is any other node */
        if (got == n || g.type(node, &type) != 0 || (type == 0) != kernel[got]) {
            got = -1;
            break;
        }
        nodes[got] = node;
        void *after = NULL;
        k = 1;
        if (g.next(node, &after, &k) != 0 || k > 1) {
            got = -1;
            break;
        }
        node = k ? after : NULL;
    }
    drv_leave(pushed);
    return got;
}

tc_status drv_graph_set_kernel(drv_device *dev, void *exec, void *node, drv_fn fn,
                               const unsigned grid[3], const unsigned block[3], unsigned shmem,
                               void **args, tc_diag *d)
{
    kernel_node_params kp = {.func = fn.handle, .shmem = shmem, .params = args};
    for (int i = 0; i < 3; i++)
        kp.grid[i] = grid[i], kp.block[i] = block[i];
    bool pushed = drv_enter(dev);
    CUresult r = g.set_kernel(exec, node, &kp);
    drv_leave(pushed);
    return r == 0 ? TC_OK : fail(d, "cuGraphExecKernelNodeSetParams", r);
}

void drv_graph_destroy(drv_device *dev, void *graph)
{
    if (!graph || g.state != 1)
        return;
    bool pushed = drv_enter(dev);
    g.destroy(graph);
    drv_leave(pushed);
}

tc_status drv_graph_launch(drv_device *dev, void *exec, void *stream, tc_diag *d)
{
    bool pushed = drv_enter(dev);
    CUresult r = g.launch(exec, stream);
    drv_leave(pushed);
    return r == 0 ? TC_OK : fail(d, "cuGraphLaunch", r);
}

bool drv_graph_usable(void)
{
    return lookup(NULL) == TC_OK;
}

int drv_stream_capturing(drv_device *dev, void *stream)
{
    if (g.state != 1)
        return -1;
    bool pushed = drv_enter(dev);
    int status = 0;
    CUresult r = g.is_capturing(stream, &status);
    drv_leave(pushed);
    return r != 0 ? -1 : status != 0; /* CU_STREAM_CAPTURE_STATUS_NONE is 0 */
}

void drv_graph_free(drv_device *dev, void *exec)
{
    if (!exec || g.state != 1)
        return;
    bool pushed = drv_enter(dev);
    g.exec_destroy(exec);
    drv_leave(pushed);
}
