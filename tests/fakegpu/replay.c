/* replay.c - repeated calls on the fake driver (TENSORC_LIBCUDA points at
 * libtc-fake-cuda): what tc_run and tc_run_foreach remember of a call
 * (api_run_memo.h) and tc_capture / tc_replay_run (CUDA graphs), through
 * the public header.  The fake records each launch's arguments
 * (fake_last_args) and checks every pointer against live memory, also when
 * a graph is launched, so a replay that used a stale address fails here.
 *
 *   replay            everything below
 *   replay nographs   with libtc-fake-cuda-nographs: tc_capture says the
 *                     driver has no graph API; tc_run still runs
 *
 * Exit 0 when right, 1 with a message, 77 without NVRTC. */
#define TC_UNSTABLE_API
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensorc.h"

enum { API_MEMO_GRAPH_AFTER = 2 }; /* src/api/api_run_memo.h's: repeats before a graph */

static int failed;
#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "FAIL line %d: %s: ", __LINE__, #cond);           \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            failed = 1;                                                       \
        }                                                                     \
    } while (0)

static tc_ctx *ctx;
static long *launches;              /* the fake's counters */
static long *graph_launches;
static long *node_updates;     /* kernel nodes updated in an executable graph */
static int *last_nargs;
static unsigned char (*last_args)[64];

static void *dev(size_t bytes)
{
    void *p = NULL;
    CHECK(tc_device_alloc(ctx, bytes, &p) == TC_OK, "%s", tc_errmsg(ctx));
    return p;
}

static uint64_t arg_u64(int i)
{
    uint64_t v;
    memcpy(&v, last_args[i], 8);
    return v;
}

static float arg_f32(int i)
{
    float v;
    memcpy(&v, last_args[i], 4);
    return v;
}

/* whether the last launch was passed address a among its first n arguments */
static bool passed(const void *a)
{
    for (int i = 0; i < *last_nargs && i < 256; i++)
        if (arg_u64(i) == (uint64_t)(uintptr_t)a)
            return true;
    return false;
}

static const char src[] =
    "fn softmax(x: f32[N, D]) -> f32[N, D] {\n"
    "    e = exp(x - max(x, axis=-1, keepdim=true))\n"
    "    return e / sum(e, axis=-1, keepdim=true)\n"
    "}\n"
    "fn axpy(y: inout f32[*], x: f32[*], a: f32) { y = y + a * x }\n"
    "fn chain4(x: f32[N, D]) -> f32[N, D] {\n"
    "    a = x - sum(x, axis=0, keepdim=true)\n"
    "    b = a - sum(a, axis=1, keepdim=true)\n"
    "    c = b - sum(b, axis=0, keepdim=true)\n"
    "    return c - sum(c, axis=1, keepdim=true)\n"
    "}\n"
    "fn mm(a: f32[M, K], b: f32[K, N]) -> f32[M, N] { return a @ b }\n";

/* tc_run: a repeated call, then each thing a caller may change in place */
static void repeated_calls(tc_program *p)
{
    int64_t sh[2] = {32, 128}, osh[2] = {32, 128};
    void *x = dev(32 * 128 * 4), *y = dev(32 * 128 * 4), *x2 = dev(32 * 128 * 4);
    DLTensor tx = {.data = x, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1},
                   .shape = sh};
    DLTensor ty = tx;
    ty.data = y;
    ty.shape = osh;
    tc_arg a[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &ty)};
    CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    long n0 = *launches, g0 = *graph_launches;
    for (int i = 0; i < 5; i++)
        CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(*launches == n0 + 5 && passed(x) && passed(y), "launches %ld", *launches - n0);
    /* from the API_MEMO_GRAPH_AFTER-th repeat on, the launches go as a graph */
    CHECK(*graph_launches - g0 == 5 - (API_MEMO_GRAPH_AFTER - 1), "graph launches %ld", *graph_launches - g0);
    /* the same DLTensor, other memory: the new address is launched */
    tx.data = x2;
    CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_OK && passed(x2) && !passed(x), "%s",
          tc_errmsg(ctx));
    /* the same DLTensor, another shape: checked again, not replayed */
    sh[0] = 33;
    CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_ERR_INVALID_ARG && strstr(tc_errmsg(ctx), "[33, 128]"),
          "%s", tc_errmsg(ctx));
    sh[0] = 32;
    CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    /* an output that now overlaps its input: refused */
    ty.data = x2;
    CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_ERR_INVALID_ARG &&
              strstr(tc_errmsg(ctx), "share memory"), "%s", tc_errmsg(ctx));
    ty.data = y;
    /* another dtype in place */
    tx.dtype.bits = 16;
    CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_ERR_INVALID_ARG, "%s", tc_errmsg(ctx));
    tx.dtype.bits = 32;
    /* strides in place: row-major ones pass, others do not */
    int64_t st[2] = {128, 1}, bad[2] = {1, 32};
    tx.strides = st;
    CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    tx.strides = bad;
    CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_ERR_INVALID_ARG && strstr(tc_errmsg(ctx), "strides"),
          "%s", tc_errmsg(ctx));
    tx.strides = NULL;
    /* the error of the last call is cleared by the next */
    CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_OK && !*tc_errmsg(ctx), "%s", tc_errmsg(ctx));
    /* a host pointer: the driver refuses the replayed launch, and it is named */
    static float host[32 * 128];
    tc_run(p, "softmax", a, 2, NULL);
    tx.data = host;
    CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_ERR_INVALID_ARG &&
              strstr(tc_errmsg(ctx), "parameter 'x'"), "%s", tc_errmsg(ctx));
    tx.data = x;
    CHECK(tc_run(p, "softmax", a, 2, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(tc_device_sync(ctx, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    tc_device_free(ctx, x);
    tc_device_free(ctx, x2);
    tc_device_free(ctx, y);
}

/* the caller captures its own stream: tensorc's launches go into that
 * capture, and no graph of tensorc's own is made or launched meanwhile */
static void caller_capture(tc_program *p, void *h)
{
    int (*create)(void **, unsigned) = (int (*)(void **, unsigned))dlsym(h, "cuStreamCreate");
    int (*begin)(void *, int) = (int (*)(void *, int))dlsym(h, "cuStreamBeginCapture_v2");
    int (*end)(void *, void **) = (int (*)(void *, void **))dlsym(h, "cuStreamEndCapture");
    int (*destroy)(void *) = (int (*)(void *))dlsym(h, "cuStreamDestroy_v2");
    int (*gdestroy)(void *) = (int (*)(void *))dlsym(h, "cuGraphDestroy");
    void *s = NULL, *graph = NULL;
    if (!create || !begin || !end || !destroy || !gdestroy || create(&s, 1) != 0) {
        CHECK(0, "the fake's stream entry points");
        return;
    }
    int64_t sh[2] = {32, 128};
    void *x = dev(32 * 128 * 4), *y = dev(32 * 128 * 4);
    DLTensor tx = {.data = x, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1},
                   .shape = sh};
    DLTensor ty = tx;
    ty.data = y;
    tc_arg a[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &ty)};
    CHECK(tc_run(p, "softmax", a, 2, s) == TC_OK, "%s", tc_errmsg(ctx)); /* not captured yet */
    long n0 = *launches, g0 = *graph_launches;
    CHECK(begin(s, 0) == 0, "begin capture");
    for (int i = 0; i < 5; i++)
        CHECK(tc_run(p, "softmax", a, 2, s) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(end(s, &graph) == 0 && graph, "end capture");
    CHECK(*launches == n0 && *graph_launches == g0, "captured, not run: %ld launches, %ld graphs",
          *launches - n0, *graph_launches - g0);
    gdestroy(graph);
    /* after the capture: repeats become tensorc's graph again */
    for (int i = 0; i < 4; i++)
        CHECK(tc_run(p, "softmax", a, 2, s) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(*graph_launches > g0, "a graph after the caller's capture ended");
    CHECK(tc_device_sync(ctx, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    destroy(s);
    tc_device_free(ctx, x);
    tc_device_free(ctx, y);
}

/* scalars change between calls (an optimizer's step): the new value is launched */
static void scalars(tc_program *p)
{
    int64_t n[1] = {1000};
    void *x = dev(4000), *y = dev(4000);
    DLTensor tx = {.data = x, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1},
                   .shape = n};
    DLTensor ty = tx;
    ty.data = y;
    long g0 = *graph_launches;
    for (int i = 0; i < 4; i++) {
        tc_arg a[3] = {tc_arg_tensor("y", &ty), tc_arg_tensor("x", &tx), tc_arg_float("a", 0.5 + i)};
        CHECK(tc_run(p, "axpy", a, 3, NULL) == TC_OK, "%s", tc_errmsg(ctx));
        bool found = false;
        for (int k = 0; k < *last_nargs; k++)
            found |= arg_f32(k) == (float)(0.5 + i);
        CHECK(found, "scalar a = %g not passed", 0.5 + i);
    }
    CHECK(*graph_launches == g0, "a new scalar each call: kernel launches, not the graph");
    /* the same scalar again and again: the graph, then a new one: launches with it */
    for (int i = 0; i < 5; i++) {
        tc_arg a[3] = {tc_arg_tensor("y", &ty), tc_arg_tensor("x", &tx), tc_arg_float("a", 7.0)};
        CHECK(tc_run(p, "axpy", a, 3, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    }
    CHECK(*graph_launches > g0, "a repeated scalar: the graph");
    long g1 = *graph_launches;
    tc_arg a9[3] = {tc_arg_tensor("y", &ty), tc_arg_tensor("x", &tx), tc_arg_float("a", 9.0)};
    CHECK(tc_run(p, "axpy", a9, 3, NULL) == TC_OK && *graph_launches == g1, "%s", tc_errmsg(ctx));
    bool found9 = false;
    for (int k = 0; k < *last_nargs; k++)
        found9 |= arg_f32(k) == 9.0f;
    CHECK(found9, "the new scalar 9 is launched");
    tc_arg bad[3] = {tc_arg_tensor("y", &ty), tc_arg_tensor("x", &tx), tc_arg_bool("a", 1)};
    CHECK(tc_run(p, "axpy", bad, 3, NULL) == TC_ERR_INVALID_ARG && strstr(tc_errmsg(ctx), "'a'"), "%s",
          tc_errmsg(ctx));
    tc_device_free(ctx, x);
    tc_device_free(ctx, y);
}

/* foreach: unchanged lists replay; a tensor changed in place, or lists
 * alternating (each rewrites the uploaded table), take the full path */
enum { G = 300 };
typedef struct {
    DLTensor y[G], x[G];
    const DLTensor *ys[G], *xs[G];
    int64_t n[G];
    void *mem[2 * G];
} groups;

static void groups_make(groups *g)
{
    for (int i = 0; i < G; i++) {
        g->n[i] = 16 + i % 7;
        g->mem[2 * i] = dev(64 * 4);
        g->mem[2 * i + 1] = dev(64 * 4);
        g->y[i] = (DLTensor){.data = g->mem[2 * i], .device = {kDLCUDA, 0}, .ndim = 1,
                             .dtype = {kDLFloat, 32, 1}, .shape = &g->n[i]};
        g->x[i] = g->y[i];
        g->x[i].data = g->mem[2 * i + 1];
        g->ys[i] = &g->y[i];
        g->xs[i] = &g->x[i];
    }
}

/* group i's y address in the table the last launch used (uploaded: the
 * table's first word is its device address) */
static uint64_t table_y(int i)
{
    uint64_t words[2];
    memcpy(words, last_args[0], sizeof words);
    if (words[0] == 0)
        return 0;
    uint64_t row[4]; /* y, x, elements, first block */
    CHECK(tc_device_copy(ctx, row, (void *)(uintptr_t)(words[0] + (uint64_t)i * sizeof row),
                         sizeof row, TC_COPY_TO_HOST, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    return row[0];
}

static void foreach_calls(tc_program *p)
{
    static groups A, B;
    groups_make(&A);
    groups_make(&B);
    tc_arg la[3] = {tc_arg_tensors("y", A.ys), tc_arg_tensors("x", A.xs), tc_arg_float("a", 1)};
    tc_arg lb[3] = {tc_arg_tensors("y", B.ys), tc_arg_tensors("x", B.xs), tc_arg_float("a", 1)};
    CHECK(tc_run_foreach(p, "axpy", G, la, 3, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(table_y(7) == (uint64_t)(uintptr_t)A.mem[14], "the table is uploaded (G > its capacity)");
    long n0 = *launches;
    CHECK(tc_run_foreach(p, "axpy", G, la, 3, NULL) == TC_OK && *launches == n0 + 1, "%s",
          tc_errmsg(ctx));
    /* group 150's y moves: the new address is in the table */
    void *moved = dev(64 * 4);
    A.y[150].data = moved;
    CHECK(tc_run_foreach(p, "axpy", G, la, 3, NULL) == TC_OK &&
              table_y(150) == (uint64_t)(uintptr_t)moved, "%s", tc_errmsg(ctx));
    /* a group's size changes in place: its x no longer matches */
    A.n[20]++;
    A.x[20].shape = &B.n[20];
    CHECK(tc_run_foreach(p, "axpy", G, la, 3, NULL) == TC_ERR_INVALID_ARG &&
              strstr(tc_errmsg(ctx), "group 20"), "%s", tc_errmsg(ctx));
    A.x[20].shape = &A.n[20];
    /* A and B in turn: each call finds the other's table on the device */
    for (int r = 0; r < 3; r++) {
        CHECK(tc_run_foreach(p, "axpy", G, la, 3, NULL) == TC_OK &&
                  table_y(9) == (uint64_t)(uintptr_t)A.mem[18], "A, round %d: %s", r, tc_errmsg(ctx));
        CHECK(tc_run_foreach(p, "axpy", G, lb, 3, NULL) == TC_OK &&
                  table_y(9) == (uint64_t)(uintptr_t)B.mem[18], "B, round %d: %s", r, tc_errmsg(ctx));
    }
    /* an overlap made in place is found */
    A.y[3].data = A.mem[2 * 4];
    CHECK(tc_run_foreach(p, "axpy", G, la, 3, NULL) == TC_ERR_INVALID_ARG &&
              strstr(tc_errmsg(ctx), "share memory"), "%s", tc_errmsg(ctx));
    A.y[3].data = A.mem[6];
    CHECK(tc_device_sync(ctx, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    for (int i = 0; i < 2 * G; i++) {
        tc_device_free(ctx, A.mem[i]);
        tc_device_free(ctx, B.mem[i]);
    }
    tc_device_free(ctx, moved);
}

/* foreach past the 4 KB table's groups (the small table's build, its
 * parameter ~100 bytes: api_run.c's choose_variant) with a new scalar each
 * call (an optimizer's step): from the second repeat on a graph whose
 * kernel node is given the scalar (api_run_memo.h); the value launched is
 * the call's every time, and the table stays on the device */
static void foreach_scalars(tc_program *p)
{
    static groups A;
    groups_make(&A);
    long g0 = *graph_launches, u0 = *node_updates;
    for (int i = 0; i < 6; i++) {
        float v = 0.25f + (float)i;
        tc_arg la[3] = {tc_arg_tensors("y", A.ys), tc_arg_tensors("x", A.xs), tc_arg_float("a", v)};
        CHECK(tc_run_foreach(p, "axpy", G, la, 3, NULL) == TC_OK, "%s", tc_errmsg(ctx));
        bool found = false;
        for (int k = 0; k < *last_nargs; k++)
            found |= arg_f32(k) == v;
        CHECK(found, "scalar a = %g not passed", v);
        CHECK(table_y(299) == (uint64_t)(uintptr_t)A.mem[598], "call %d: the table", i);
    }
    /* 1 records, 2 is a hit, 3 captures the graph with its scalar, 4-6 update it */
    CHECK(*graph_launches - g0 == 6 - API_MEMO_GRAPH_AFTER && *node_updates - u0 == 3,
          "a new scalar each call: %ld graph launches, %ld node updates", *graph_launches - g0,
          *node_updates - u0);
    /* the same scalar again: the graph as it is */
    long g1 = *graph_launches, u1 = *node_updates;
    for (int i = 0; i < 2; i++) {
        tc_arg la[3] = {tc_arg_tensors("y", A.ys), tc_arg_tensors("x", A.xs), tc_arg_float("a", 5.25)};
        CHECK(tc_run_foreach(p, "axpy", G, la, 3, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    }
    CHECK(*graph_launches - g1 == 2 && *node_updates == u1, "the same scalar: %ld graph launches, "
          "%ld node updates", *graph_launches - g1, *node_updates - u1);
    CHECK(tc_device_sync(ctx, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    for (int i = 0; i < 2 * G; i++)
        tc_device_free(ctx, A.mem[i]);
}

/* foreach over 2-D and 1-D tensors (the remembered lists' compact
 * comparison, api_run_memo.c's same_compact): the call repeated until it
 * is a graph, then exactly one thing of one group's tensor changed in
 * place; each must be caught (a located error naming the group, or the
 * full path's run with the new value in the table), and after it is
 * undone the call runs again. */
enum { G2 = 200 }; /* more than the kernel parameter holds: the table is uploaded (table_y) */
static void foreach_one_change(tc_program *p)
{
    static DLTensor y[G2], x[G2];
    static const DLTensor *ys[G2], *xs[G2];
    static int64_t ysh[G2][2], xsh[G2][2], st[2];
    static void *mem[2 * G2];
    for (int i = 0; i < G2; i++) {
        int rank = i % 3 ? 2 : 1;
        ysh[i][0] = xsh[i][0] = rank == 2 ? 4 : 64;
        ysh[i][1] = xsh[i][1] = 16;
        mem[2 * i] = dev(128 * 4);
        mem[2 * i + 1] = dev(128 * 4);
        y[i] = (DLTensor){.data = mem[2 * i], .device = {kDLCUDA, 0}, .ndim = rank,
                          .dtype = {kDLFloat, 32, 1}, .shape = ysh[i]};
        x[i] = y[i];
        x[i].data = mem[2 * i + 1];
        x[i].shape = xsh[i];
        ys[i] = &y[i];
        xs[i] = &x[i];
    }
    tc_arg la[3] = {tc_arg_tensors("y", ys), tc_arg_tensors("x", xs), tc_arg_float("a", 1)};
#define RUN() tc_run_foreach(p, "axpy", G2, la, 3, NULL)
#define WARM()                                                                            \
    do {                                                                                  \
        for (int r = 0; r < API_MEMO_GRAPH_AFTER + 2; r++)                                \
            CHECK(RUN() == TC_OK, "warm-up: %s", tc_errmsg(ctx));                         \
    } while (0)
#define REFUSED(what, sub)                                                                \
    CHECK(RUN() == TC_ERR_INVALID_ARG && strstr(tc_errmsg(ctx), "group 40") &&            \
              strstr(tc_errmsg(ctx), sub), "%s: %s", what, tc_errmsg(ctx))
    WARM();
    long g0 = *graph_launches;
    CHECK(RUN() == TC_OK && *graph_launches == g0 + 1, "unchanged lists: the graph");
    /* group 40 is 2-D (40 % 3 != 0): each dim of its y's shape, in place */
    ysh[40][0] = 5;
    REFUSED("dim 0 changed", "elements");
    ysh[40][0] = 4;
    WARM();
    ysh[40][1] = 17;
    REFUSED("dim 1 changed", "elements");
    ysh[40][1] = 16;
    WARM();
    /* the same elements in another shape: checked again, and it runs */
    ysh[40][0] = 16;
    ysh[40][1] = 4;
    g0 = *graph_launches;
    CHECK(RUN() == TC_OK && *graph_launches == g0, "[16, 4]: %s", tc_errmsg(ctx));
    ysh[40][0] = 4;
    ysh[40][1] = 16;
    WARM();
    /* rank 2 -> 1 on the same shape array: [4], 4 elements, not 64 */
    y[40].ndim = 1;
    REFUSED("rank changed", "elements");
    y[40].ndim = 2;
    WARM();
    y[40].dtype.bits = 64;
    REFUSED("dtype changed", "'y'");
    y[40].dtype.bits = 32;
    WARM();
    y[40].device.device_id = 1;
    REFUSED("device changed", "'y'");
    y[40].device.device_id = 0;
    WARM();
    /* strides set: row-major ones pass, others are refused */
    st[0] = 16;
    st[1] = 1;
    y[40].strides = st;
    CHECK(RUN() == TC_OK, "row-major strides: %s", tc_errmsg(ctx));
    st[0] = 1;
    st[1] = 4;
    REFUSED("strides", "strides");
    y[40].strides = NULL;
    WARM();
    /* no shape at all: an error, not a read through NULL */
    y[40].shape = NULL;
    REFUSED("shape NULL", "'y'");
    y[40].shape = ysh[40];
    WARM();
    /* byte_offset and data: the new address is launched */
    y[40].byte_offset = 64 * 4;
    CHECK(RUN() == TC_OK && table_y(40) == (uint64_t)(uintptr_t)mem[80] + 256,
          "byte_offset: %s", tc_errmsg(ctx));
    y[40].byte_offset = 0;
    WARM();
    y[40].data = mem[81];
    REFUSED("y made x's memory", "share memory");
    y[40].data = mem[80];
    WARM();
    /* a NULL tensor in the list */
    ys[40] = NULL;
    REFUSED("NULL tensor", "'y'");
    ys[40] = &y[40];
    WARM();
    /* a 1-D group (39): its one dim */
    xsh[39][0] = 63;
    CHECK(RUN() == TC_ERR_INVALID_ARG && strstr(tc_errmsg(ctx), "group 39"), "1-D dim: %s",
          tc_errmsg(ctx));
    xsh[39][0] = 64;
    WARM();
    /* another list of the same DLTensors: the same call, no full path */
    static const DLTensor *ys2[G2];
    memcpy(ys2, ys, sizeof ys2);
    tc_arg lb[3] = {tc_arg_tensors("y", ys2), tc_arg_tensors("x", xs), tc_arg_float("a", 1)};
    g0 = *graph_launches;
    CHECK(tc_run_foreach(p, "axpy", G2, lb, 3, NULL) == TC_OK && *graph_launches == g0 + 1,
          "the same tensors in another list: %s", tc_errmsg(ctx));
#undef RUN
#undef WARM
#undef REFUSED
    CHECK(tc_device_sync(ctx, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    for (int i = 0; i < 2 * G2; i++)
        tc_device_free(ctx, mem[i]);
}

/* temporaries: a larger call grows (frees and reallocates) the pool; the
 * small call remembered before must not launch with the old block */
static void pool_growth(tc_program *p)
{
    /* temporaries [1, D] twice and [N, 1]: past the pool's first 1 MB */
    int64_t small[2] = {32, 128}, big[2] = {4, 300000};
    void *x = dev(4 * 600000 * 4), *y = dev(4 * 600000 * 4);
    DLTensor tx = {.data = x, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1},
                   .shape = small};
    DLTensor ty = tx;
    ty.data = y;
    DLTensor bx = tx, by = ty;
    bx.shape = by.shape = big;
    tc_arg a[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &ty)};
    tc_arg b[2] = {tc_arg_tensor("x", &bx), tc_arg_tensor("out", &by)};
    long g0 = *graph_launches;
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 5; k++) /* long enough to become a graph */
            CHECK(tc_run(p, "chain4", a, 2, NULL) == TC_OK, "%s", tc_errmsg(ctx));
        big[1] += 100000; /* larger each round: the pool grows again */
        CHECK(tc_run(p, "chain4", b, 2, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    }
    CHECK(tc_run(p, "chain4", a, 2, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(*graph_launches > g0, "the small call ran as a graph between the pool's growths");
    CHECK(tc_device_sync(ctx, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    tc_device_free(ctx, x);
    tc_device_free(ctx, y);
}

static void capture(tc_program *p)
{
    int64_t sh[2] = {32, 128}, big[2] = {8192, 1024};
    void *x = dev(32 * 128 * 4), *y = dev(32 * 128 * 4), *x2 = dev(32 * 128 * 4);
    void *bxm = dev(8192 * 1024 * 4), *bym = dev(8192 * 1024 * 4);
    DLTensor tx = {.data = x, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1},
                   .shape = sh};
    DLTensor ty = tx;
    ty.data = y;
    tc_arg a[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &ty)};
    tc_replay *r = NULL;
    long n0 = *launches;
    CHECK(tc_capture(p, "chain4", a, 2, &r) == TC_OK && r, "%s", tc_errmsg(ctx));
    CHECK(*launches == n0, "capturing ran %ld launches", *launches - n0);
    CHECK(tc_replay_kernels(r) == 4, "%d kernels", tc_replay_kernels(r));
    CHECK(tc_replay_run(r, NULL, 0, NULL) == TC_OK && *launches == n0 + 4, "%s", tc_errmsg(ctx));
    CHECK(tc_replay_run(r, a, 2, NULL) == TC_OK && *launches == n0 + 8, "%s", tc_errmsg(ctx));
    CHECK(passed(x) && passed(y), "the last kernel takes x and out");
    /* other buffers, shapes, fewer arguments: refused, naming what differs */
    tx.data = x2;
    CHECK(tc_replay_run(r, a, 2, NULL) == TC_ERR_INVALID_ARG && strstr(tc_errmsg(ctx), "'x'") &&
              strstr(tc_errmsg(ctx), "at the capture"), "%s", tc_errmsg(ctx));
    tx.data = x;
    sh[1] = 64;
    CHECK(tc_replay_run(r, a, 2, NULL) == TC_ERR_INVALID_ARG, "%s", tc_errmsg(ctx));
    sh[1] = 128;
    CHECK(tc_replay_run(r, a, 1, NULL) == TC_ERR_INVALID_ARG, "%s", tc_errmsg(ctx));
    CHECK(tc_replay_run(r, NULL, 2, NULL) == TC_ERR_INVALID_ARG, "%s", tc_errmsg(ctx));
    /* the context's pool grows and is reallocated: the replay has its own */
    DLTensor bx = tx, by = ty;
    bx.data = bxm;
    by.data = bym;
    bx.shape = by.shape = big;
    tc_arg b[2] = {tc_arg_tensor("x", &bx), tc_arg_tensor("out", &by)};
    CHECK(tc_run(p, "chain4", b, 2, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(tc_replay_run(r, NULL, 0, NULL) == TC_OK, "after the pool grew: %s", tc_errmsg(ctx));
    /* a second replay of the same call, alive at once */
    tc_replay *r2 = NULL;
    CHECK(tc_capture(p, "chain4", a, 2, &r2) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(tc_replay_run(r2, NULL, 0, NULL) == TC_OK && tc_replay_run(r, NULL, 0, NULL) == TC_OK, "%s",
          tc_errmsg(ctx));
    tc_replay_free(r2);
    /* the caller frees an input: the graph's launch fails (the fake checks) */
    CHECK(tc_device_sync(ctx, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    tc_device_free(ctx, x);
    CHECK(tc_replay_run(r, NULL, 0, NULL) != TC_OK && strstr(tc_errmsg(ctx), "cuGraphLaunch"), "%s",
          tc_errmsg(ctx));
    tc_replay_free(r);
    tc_replay_free(NULL);
    CHECK(tc_replay_run(NULL, NULL, 0, NULL) == TC_ERR_INVALID_ARG && tc_replay_kernels(NULL) == 0,
          "NULL replay");

    /* argument errors are tc_run's, under tc_capture's name */
    tx.data = x2;
    tx.dtype.bits = 64;
    r = (tc_replay *)&r;
    CHECK(tc_capture(p, "chain4", a, 2, &r) == TC_ERR_INVALID_ARG && !r &&
              strstr(tc_errmsg(ctx), "tc_capture") && strstr(tc_errmsg(ctx), "float64"), "%s",
          tc_errmsg(ctx));
    tx.dtype.bits = 32;
    /* scalars are captured: another value is refused */
    int64_t n[1] = {1000};
    DLTensor vx = {.data = bxm, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1},
                   .shape = n};
    DLTensor vy = vx;
    vy.data = bym;
    tc_arg s1[3] = {tc_arg_tensor("y", &vy), tc_arg_tensor("x", &vx), tc_arg_float("a", 2)};
    tc_arg s2[3] = {tc_arg_tensor("y", &vy), tc_arg_tensor("x", &vx), tc_arg_float("a", 3)};
    CHECK(tc_capture(p, "axpy", s1, 3, &r) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(tc_replay_run(r, s1, 3, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(tc_replay_run(r, s2, 3, NULL) == TC_ERR_INVALID_ARG && strstr(tc_errmsg(ctx), "'a'"), "%s",
          tc_errmsg(ctx));
    tc_replay_free(r);
    /* a matmul (cuBLAS) is not captured */
    int64_t m[2] = {4, 4};
    DLTensor ma = {.data = bxm, .device = {kDLCUDA, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1},
                   .shape = m};
    DLTensor mb = ma, mc = ma;
    mb.data = (char *)bxm + 4096;
    mc.data = bym;
    tc_arg mm[3] = {tc_arg_tensor("a", &ma), tc_arg_tensor("b", &mb), tc_arg_tensor("out", &mc)};
    CHECK(tc_capture(p, "mm", mm, 3, &r) == TC_ERR_UNSUPPORTED && strstr(tc_errmsg(ctx), "cuBLAS"),
          "%s", tc_errmsg(ctx));
    CHECK(tc_device_sync(ctx, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    tc_device_free(ctx, x2);
    tc_device_free(ctx, y);
    tc_device_free(ctx, bxm);
    tc_device_free(ctx, bym);
}

int main(int argc, char **argv)
{
    bool nographs = argc > 1 && strcmp(argv[1], "nographs") == 0;
    char dir[] = "/tmp/tc-replay-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    tc_options o = TC_OPTIONS_INIT;
    o.cache_dir = dir;
    tc_program *p;
    if (tc_ctx_create_ex(&ctx, &o) != TC_OK || tc_compile(ctx, src, strlen(src), "replay.tc", &p) != TC_OK) {
        fprintf(stderr, "setup: %s\n", tc_errmsg(ctx));
        return 1;
    }
    tc_device_info di;
    if (tc_device_open(ctx, TC_DEVICE_AUTO, &di) != TC_OK) {
        fprintf(stderr, "tc_device_open: %s\n", tc_errmsg(ctx));
        return 1;
    }
    void *h = dlopen(getenv("TENSORC_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
    launches = h ? dlsym(h, "fake_launches") : NULL;
    graph_launches = h ? dlsym(h, "fake_graph_launches") : NULL;
    node_updates = h ? dlsym(h, "fake_node_updates") : NULL;
    last_nargs = h ? dlsym(h, "fake_last_nargs") : NULL;
    last_args = h ? dlsym(h, "fake_last_args") : NULL;
    if (!launches || !last_nargs || !last_args || ((!graph_launches || !node_updates) && !nographs)) {
        fprintf(stderr, "not the fake driver (TENSORC_LIBCUDA)\n");
        return 1;
    }
    /* NVRTC present? */
    int64_t sh[1] = {4};
    void *x = dev(16), *y = dev(16);
    DLTensor tx = {.data = x, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = sh};
    DLTensor ty = tx;
    ty.data = y;
    tc_arg a[3] = {tc_arg_tensor("y", &ty), tc_arg_tensor("x", &tx), tc_arg_float("a", 1)};
    tc_status st = tc_run(p, "axpy", a, 3, NULL);
    if (st == TC_ERR_NO_DEVICE) {
        fprintf(stderr, "skipped: %s\n", tc_errmsg(ctx));
        return 77;
    }
    CHECK(st == TC_OK, "%s", tc_errmsg(ctx));
    if (nographs) {
        tc_replay *r = NULL;
        CHECK(tc_capture(p, "axpy", a, 3, &r) == TC_ERR_UNSUPPORTED && !r &&
                  strstr(tc_errmsg(ctx), "graph API") && strstr(tc_errmsg(ctx), "cuStreamCreate"),
              "%s", tc_errmsg(ctx));
        CHECK(tc_run(p, "axpy", a, 3, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    } else {
        repeated_calls(p);
        caller_capture(p, h);
        scalars(p);
        foreach_calls(p);
        foreach_scalars(p);
        foreach_one_change(p);
        pool_growth(p);
        capture(p);
    }
    tc_device_free(ctx, x);
    tc_device_free(ctx, y);
    tc_program_free(p);
    tc_ctx_free(ctx);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    if (!failed)
        printf("replay%s: ok\n", nographs ? " (no graphs)" : "");
    return failed;
}
