/* host_time.c - tc-bench-host: tensorc's own host time per call (issue 14),
 * with no kernel time in it.
 *
 *   tc-bench-host [--tensors N,N...] [--calls C] [--cold] [--only NAME] [--adamw FILE] [--json]
 *
 * Each figure is the median wall time of one API call (clock_gettime
 * around the call alone; the device is synchronized between calls, outside
 * the timed region, so a full launch queue never blocks a call):
 *
 *   foreach N floor      no tensorc call: every DLTensor of the four lists
 *                        and its shape read once, the least any check of
 *                        the caller's tensors costs
 *   foreach N same       tc_run_foreach over N tensors (examples/adamw.tc's
 *                        p, g, m, v lists), the lists and scalars unchanged
 *                        between calls (bench/cases.c's adamw: step=1)
 *   foreach N step       the same with the step scalar changing every call
 *                        (a training loop's AdamW)
 *   foreach N changed    every call's lists differ from the last five calls'
 *                        (the groups rotated: the same tensors in another
 *                        order), so every call is checked in full
 *   run small            tc_run of softmax N=32, D=128, the same arguments
 *   replay per kernel    tc_replay_run of a captured 4-kernel call (chain4),
 *                        with its arguments given (compared with the
 *                        capture's), divided by the kernels
 *
 * --adamw FILE names examples/adamw.tc where the source tree the binary
 * was built from is not (a build carried to a GPU machine).
 *
 * The tensors are suite.md's transformer set (per layer 4 x 1024x1024,
 * 4096x1024, 1024x4096, 4 x 1024: ten tensors), cut or repeated to N, each
 * 1/256 of its size (the host work does not depend on the elements; the
 * device memory does), carved out of one allocation per list as a caching
 * allocator does.  Each DLTensor and its shape are a malloc of their own,
 * interleaved, as a framework's are.  --cold evicts the caches (32 MB
 * written) before each call, as the host's other work between two
 * optimizer steps would.
 *
 * Run it on the fake driver (TENSORC_LIBCUDA=build/tests/libtc-fake-cuda.so)
 * for tensorc's own host work (the fake's calls cost almost nothing but a
 * linear search of its allocations per launched pointer), or on a GPU for
 * the figure with the driver's own cost.  Exit 0; 1 on an error; 77 with
 * no driver, GPU or NVRTC. */
#define _POSIX_C_SOURCE 200809L
#define TC_UNSTABLE_API
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensorc.h"

static tc_ctx *ctx;
static bool cold, json;
static const char *only; /* --only NAME: that figure alone (for a profiler) */
static const char *adamw = TC_EXAMPLES "/adamw.tc"; /* --adamw FILE: where the build's tree is not */
static int calls = 2000;
static unsigned char *evict;
enum { EVICT_BYTES = 32 << 20 };

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void die(const char *what, tc_status st)
{
    fprintf(stderr, "tc-bench-host: %s: %s: %s\n", what, tc_status_str(st), tc_errmsg(ctx));
    exit(st == TC_ERR_NO_DEVICE ? 77 : 1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef tc_status (*call_fn)(void *arg, int i);

/* The median host time of fn over calls (after a warm-up of 10). */
static double time_calls(call_fn fn, void *arg)
{
    double *t = malloc(sizeof *t * (size_t)calls);
    if (!t)
        die("out of memory", TC_ERR_NOMEM);
    for (int i = -10; i < calls; i++) {
        tc_status st = tc_device_sync(ctx, NULL);
        if (st != TC_OK)
            die("sync", st);
        if (cold) {
            for (size_t k = 0; k < EVICT_BYTES; k += 64)
                evict[k] += (unsigned char)i;
        }
        double t0 = now_us();
        st = fn(arg, i);
        double t1 = now_us();
        if (st != TC_OK)
            die("call", st);
        if (i >= 0)
            t[i] = t1 - t0;
    }
    qsort(t, (size_t)calls, sizeof *t, cmp_double);
    double m = t[calls / 2];
    free(t);
    return m;
}

static bool wanted(const char *name)
{
    return !only || strcmp(only, name) == 0;
}

static void report(const char *name, double us, const char *unit)
{
    static bool first = true;
    if (json)
        printf("%s\"%s\": %.3f", first ? "{" : ", ", name, us);
    else
        printf("%-28s %9.3f %s\n", name, us, unit);
    first = false;
}

/* --- foreach ------------------------------------------------------------------------------- */

static const DLDataType F32 = {kDLFloat, 32, 1};

typedef struct {
    tc_program *p;
    int n;
    DLTensor **t[4];            /* p, g, m, v: n each */
    const DLTensor **rot[5][4]; /* the lists rotated by 0..4 */
    tc_arg args[10];
} fe_state;

static tc_status fe_call(void *arg, int i)
{
    fe_state *s = arg;
    (void)i;
    return tc_run_foreach(s->p, "adamw", (size_t)s->n, s->args, 10, NULL);
}

static tc_status fe_step(void *arg, int i)
{
    fe_state *s = arg;
    s->args[9] = tc_arg_int("step", 1 + (i & 1023));
    return tc_run_foreach(s->p, "adamw", (size_t)s->n, s->args, 10, NULL);
}

static tc_status fe_changed(void *arg, int i)
{
    fe_state *s = arg;
    int r = (i + 10) % 5;
    for (int k = 0; k < 4; k++)
        s->args[k].v.tensors = s->rot[r][k];
    return tc_run_foreach(s->p, "adamw", (size_t)s->n, s->args, 10, NULL);
}

/* The floor of any check that reads the caller's tensors: every DLTensor
 * of the four lists and its shape read once (summed), nothing compared. */
static tc_status fe_touch(void *arg, int i)
{
    fe_state *s = arg;
    static volatile int64_t sink;
    (void)sink;
    int64_t sum = i;
    for (int k = 0; k < 4; k++) {
        const DLTensor *const *l = s->args[k].v.tensors;
        for (int g = 0; g < s->n; g++) {
            if (g + 16 < s->n)
                __builtin_prefetch(l[g + 16]);
            if (g + 8 < s->n)
                __builtin_prefetch(l[g + 8]->shape);
            const DLTensor *t = l[g];
            sum += (int64_t)(intptr_t)t->data + t->ndim + t->dtype.bits + t->shape[0] +
                   (int64_t)t->byte_offset + (t->strides != NULL);
        }
    }
    sink = sum;
    return TC_OK;
}

static void bench_foreach(tc_program *p, int n)
{
    /* one layer's ten tensors at 1/256 of their sizes: rows x cols */
    static const int64_t shapes[10][2] = {{64, 64},  {64, 64}, {64, 64}, {64, 64}, {256, 64},
                                         {64, 256}, {4, 1},   {4, 1},   {4, 1},   {4, 1}};
    /* the 1024-element vectors scaled to 4 */
    fe_state s = {.p = p, .n = n};
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)(shapes[i % 10][0] * shapes[i % 10][1]);
    const char *names[4] = {"p", "g", "m", "v"};
    for (int k = 0; k < 4; k++) {
        void *base;
        tc_status st = tc_device_alloc(ctx, total * 4, &base);
        if (st != TC_OK)
            die("tc_device_alloc", st);
        s.t[k] = calloc((size_t)n, sizeof *s.t[k]);
        if (!s.t[k])
            die("out of memory", TC_ERR_NOMEM);
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            const int64_t *sh = shapes[i % 10];
            DLTensor *t = malloc(sizeof *t);
            int64_t *shape = malloc(2 * sizeof *shape);
            if (!t || !shape)
                die("out of memory", TC_ERR_NOMEM);
            shape[0] = sh[0];
            shape[1] = sh[1];
            bool vec = sh[1] == 1;
            *t = (DLTensor){.data = (char *)base + at * 4, .device = {kDLCUDA, 0},
                            .ndim = vec ? 1 : 2, .dtype = F32, .shape = shape};
            at += (size_t)(sh[0] * sh[1]);
            s.t[k][i] = t;
        }
    }
    for (int r = 0; r < 5; r++)
        for (int k = 0; k < 4; k++) {
            const DLTensor **l = malloc(sizeof *l * (size_t)n);
            if (!l)
                die("out of memory", TC_ERR_NOMEM);
            for (int i = 0; i < n; i++)
                l[i] = s.t[k][(i + r) % n];
            s.rot[r][k] = l;
        }
    for (int k = 0; k < 4; k++)
        s.args[k] = tc_arg_tensors(names[k], s.rot[0][k]);
    s.args[4] = tc_arg_float("lr", 1e-3);
    s.args[5] = tc_arg_float("beta1", 0.9);
    s.args[6] = tc_arg_float("beta2", 0.999);
    s.args[7] = tc_arg_float("eps", 1e-8);
    s.args[8] = tc_arg_float("wd", 0.01);
    s.args[9] = tc_arg_int("step", 1);

    char name[64];
    snprintf(name, sizeof name, "foreach_%d_floor", n);
    if (wanted(name))
        report(name, time_calls(fe_touch, &s), "us");
    snprintf(name, sizeof name, "foreach_%d_same", n);
    if (wanted(name))
        report(name, time_calls(fe_call, &s), "us");
    snprintf(name, sizeof name, "foreach_%d_step", n);
    if (wanted(name))
        report(name, time_calls(fe_step, &s), "us");
    s.args[9] = tc_arg_int("step", 1);
    snprintf(name, sizeof name, "foreach_%d_changed", n);
    if (wanted(name))
        report(name, time_calls(fe_changed, &s), "us");

    for (int k = 0; k < 4; k++) {
        tc_device_free(ctx, s.t[k][0]->data);
        for (int i = 0; i < n; i++) {
            free(s.t[k][i]->shape);
            free(s.t[k][i]);
        }
        free(s.t[k]);
        for (int r = 0; r < 5; r++)
            free(s.rot[r][k]);
    }
}

/* --- tc_run and replay --------------------------------------------------------------------- */

typedef struct {
    tc_program *p;
    const char *fn;
    tc_arg args[2];
    tc_replay *r;
} run_state;

static tc_status run_call(void *arg, int i)
{
    run_state *s = arg;
    (void)i;
    return tc_run(s->p, s->fn, s->args, 2, NULL);
}

static tc_status replay_call(void *arg, int i)
{
    run_state *s = arg;
    (void)i;
    return tc_replay_run(s->r, s->args, 2, NULL);
}

static const char src[] =
    "fn softmax(x: f32[N, D]) -> f32[N, D] {\n"
    "    e = exp(x - max(x, axis=-1, keepdim=true))\n"
    "    return e / sum(e, axis=-1, keepdim=true)\n"
    "}\n"
    "fn chain4(x: f32[N, D]) -> f32[N, D] {\n"
    "    a = x - sum(x, axis=0, keepdim=true)\n"
    "    b = a - sum(a, axis=1, keepdim=true)\n"
    "    c = b - sum(b, axis=0, keepdim=true)\n"
    "    return c - sum(c, axis=1, keepdim=true)\n"
    "}\n";

static void bench_run(void)
{
    tc_program *p;
    tc_status st = tc_compile(ctx, src, sizeof src - 1, "host_time.tc", &p);
    if (st != TC_OK)
        die("tc_compile", st);
    static int64_t shape[2] = {32, 128};
    void *x = NULL, *y = NULL;
    if ((st = tc_device_alloc(ctx, 32 * 128 * 4, &x)) != TC_OK ||
        (st = tc_device_alloc(ctx, 32 * 128 * 4, &y)) != TC_OK)
        die("tc_device_alloc", st);
    DLTensor tx = {.data = x, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = F32, .shape = shape};
    DLTensor ty = tx;
    ty.data = y;
    run_state s = {.p = p, .fn = "softmax",
                   .args = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &ty)}};
    if (wanted("run_small"))
        report("run_small", time_calls(run_call, &s), "us");
    s.fn = "chain4";
    if ((st = tc_capture(p, "chain4", s.args, 2, &s.r)) != TC_OK)
        die("tc_capture", st);
    int k = tc_replay_kernels(s.r);
    if (wanted("replay_per_kernel"))
        report("replay_per_kernel", time_calls(replay_call, &s) / (k > 0 ? k : 1), "us");
    tc_replay_free(s.r);
    tc_device_free(ctx, x);
    tc_device_free(ctx, y);
    tc_program_free(p);
}

int main(int argc, char **argv)
{
    const char *list = "240,2000";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tensors") && i + 1 < argc)
            list = argv[++i];
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cold"))
            cold = true;
        else if (!strcmp(argv[i], "--adamw") && i + 1 < argc)
            adamw = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else {
            fprintf(stderr, "usage: tc-bench-host [--tensors N,N...] [--calls C] [--cold] [--only NAME] [--adamw FILE] [--json]\n");
            return 2;
        }
    }
    if (calls < 1)
        calls = 1;
    if (cold && !(evict = calloc(1, EVICT_BYTES)))
        die("out of memory", TC_ERR_NOMEM);
    tc_status st = tc_ctx_create(&ctx);
    if (st != TC_OK)
        die("tc_ctx_create", st);
    tc_device_info info;
    if ((st = tc_device_open(ctx, 0, &info)) != TC_OK)
        die("tc_device_open", st);
    if (!json)
        printf("device: %s; median host time of one call over %d calls%s\n", info.name, calls,
               cold ? ", caches evicted before each" : "");
    tc_program *p;
    if ((st = tc_compile_file(ctx, adamw, &p)) != TC_OK)
        die("tc_compile_file", st);
    for (const char *c = list; *c;) {
        char *end;
        long n = strtol(c, &end, 10);
        if (end == c || n < 1 || n > TC_MAX_GROUPS) {
            fprintf(stderr, "tc-bench-host: --tensors wants numbers, comma-separated\n");
            return 2;
        }
        bench_foreach(p, (int)n);
        c = *end == ',' ? end + 1 : end;
    }
    tc_program_free(p);
    bench_run();
    if (json)
        printf("}\n");
    tc_ctx_free(ctx);
    free(evict);
    return 0;
}
