/* unstable.c - the unstable API (tensorc.h, TC_UNSTABLE_API) on the fake
 * driver (TENSORC_LIBCUDA points at libtc-fake-cuda), through the public
 * header and the installed form of the library alone: device memory,
 * copies, memsets, events, and tc_run_ex / tc_run_foreach_ex's run
 * information.  The fake runs no kernels, so outputs keep their poison.
 * Exit 0 when right, 1 with a message, 77 without NVRTC. */
#define TC_UNSTABLE_API
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensorc.h"

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

int main(void)
{
    char dir[] = "/tmp/tc-unstable-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    tc_options o = TC_OPTIONS_INIT;
    o.cache_dir = dir;
    tc_ctx *ctx;
    tc_program *p;
    static const char src[] = "fn twice(x: f32[N]) -> f32[N] { return x * 2 }\n"
                              "fn axpy(y: inout f32[*], x: f32[*], a: f32) { y = y + a * x }\n";
    if (tc_ctx_create_ex(&ctx, &o) != TC_OK ||
        tc_compile(ctx, src, strlen(src), "unstable.tc", &p) != TC_OK) {
        fprintf(stderr, "setup: %s\n", tc_errmsg(ctx));
        return 1;
    }
    /* nothing open yet */
    void *x = NULL, *y = NULL;
    CHECK(tc_device_alloc(ctx, 16, &x) == TC_ERR_NO_DEVICE && strstr(tc_errmsg(ctx), "tc_device_open"),
          "%s", tc_errmsg(ctx));
    tc_device_info di;
    tc_status st = tc_device_open(ctx, TC_DEVICE_AUTO, &di);
    if (st != TC_OK) {
        fprintf(stderr, "tc_device_open: %s\n", tc_errmsg(ctx));
        return 1;
    }
    CHECK(di.ordinal == 0 && di.name && strstr(di.name, "Fake") && di.arch > 0 && di.sm_count > 0 &&
              di.total_mem > 0, "%d %s %d %d %zu", di.ordinal, di.name, di.arch, di.sm_count,
          di.total_mem);

    enum { N = 1000 };
    float host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    CHECK(tc_device_alloc(ctx, sizeof host, &x) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(tc_device_alloc(ctx, sizeof host, &y) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(tc_device_copy(ctx, x, host, sizeof host, TC_COPY_TO_DEVICE, NULL) == TC_OK, "%s",
          tc_errmsg(ctx));
    CHECK(tc_device_memset(ctx, y, 0xff, sizeof host, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(tc_device_copy(ctx, back, x, sizeof back, TC_COPY_TO_HOST, NULL) == TC_OK &&
              memcmp(back, host, sizeof host) == 0, "round trip");

    int64_t shape[1] = {N};
    DLTensor tx = {.data = x, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1},
                   .shape = shape};
    DLTensor ty = tx;
    ty.data = y;
    void *ev[3] = {0};
    for (int i = 0; i < 3; i++)
        CHECK(tc_event_create(ctx, &ev[i]) == TC_OK, "%s", tc_errmsg(ctx));
    const char *names[4] = {0};
    int64_t bytes[4] = {0};
    tc_run_info info = {.events = ev, .nevents = 3, .step_names = names, .step_bytes = bytes,
                        .cap_steps = 4};
    tc_arg args[2] = {tc_arg_tensor("x", &tx), tc_arg_tensor("out", &ty)};
    st = tc_run_ex(p, "twice", args, 2, NULL, &info);
    if (st == TC_ERR_NO_DEVICE) {
        fprintf(stderr, "skipped: %s\n", tc_errmsg(ctx));
        return 77;
    }
    CHECK(st == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(info.nsteps == 1 && names[0] && names[0][0], "%d %s", info.nsteps,
          names[0] ? names[0] : "(null)");
    CHECK(bytes[0] == 2 * (int64_t)sizeof host, "bytes %lld", (long long)bytes[0]);
    CHECK(info.jit_origin == 2 && !info.index64 && info.arch > 0, "origin %d idx64 %d arch %d",
          info.jit_origin, info.index64, info.arch);
    float ms = -1;
    CHECK(tc_device_sync(ctx, NULL) == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(tc_event_elapsed(ctx, ev[0], ev[1], &ms) == TC_OK && ms >= 0, "%s", tc_errmsg(ctx));
    st = tc_run_ex(p, "twice", args, 2, NULL, &info);
    CHECK(st == TC_OK && info.jit_origin == 0, "again: origin %d", info.jit_origin);
    /* the fake ran no kernel: the output keeps its poison */
    unsigned char raw[sizeof host];
    CHECK(tc_device_copy(ctx, raw, y, sizeof raw, TC_COPY_TO_HOST, NULL) == TC_OK &&
              raw[0] == 0xff && raw[sizeof raw - 1] == 0xff, "poison");
    /* a device-to-device copy */
    CHECK(tc_device_copy(ctx, y, x, sizeof host, TC_COPY_ON_DEVICE, NULL) == TC_OK &&
              tc_device_sync(ctx, NULL) == TC_OK &&
              tc_device_copy(ctx, back, y, sizeof back, TC_COPY_TO_HOST, NULL) == TC_OK &&
              memcmp(back, host, sizeof host) == 0, "dtod: %s", tc_errmsg(ctx));

    /* foreach over three groups of 1000, 300 and 0 elements: bytes add up */
    int64_t s300[1] = {300}, s0[1] = {0};
    DLTensor g1x = tx, g1y = ty, g2x = tx, g2y = ty, g3x = tx, g3y = ty;
    g2x.shape = g2y.shape = s300;
    g3x.shape = g3y.shape = s0;
    const DLTensor *ys[3] = {&g1y, &g2y, &g3y}, *xs[3] = {&g1x, &g2x, &g3x};
    /* distinct memory per group: the halves of x and y would overlap across groups */
    void *more[4];
    for (int i = 0; i < 4; i++)
        CHECK(tc_device_alloc(ctx, sizeof host, &more[i]) == TC_OK, "%s", tc_errmsg(ctx));
    g2x.data = more[0];
    g2y.data = more[1];
    g3x.data = more[2];
    g3y.data = more[3];
    tc_arg lists[3] = {tc_arg_tensors("y", ys), tc_arg_tensors("x", xs), tc_arg_float("a", 2)};
    tc_run_info finfo = {.step_names = names, .step_bytes = bytes, .cap_steps = 4};
    st = tc_run_foreach_ex(p, "axpy", 3, lists, 3, NULL, &finfo);
    CHECK(st == TC_OK, "%s", tc_errmsg(ctx));
    CHECK(finfo.nsteps == 1 && bytes[0] == 2 * 4 * 1300 /* y and x, each buffer once */, "foreach bytes %lld",
          (long long)bytes[0]);
    /* info NULL: plain tc_run */
    CHECK(tc_run_ex(p, "twice", args, 2, NULL, NULL) == TC_OK, "%s", tc_errmsg(ctx));

    for (int i = 0; i < 3; i++)
        tc_event_destroy(ctx, ev[i]);
    for (int i = 0; i < 4; i++)
        tc_device_free(ctx, more[i]);
    tc_device_free(ctx, x);
    tc_device_free(ctx, y);
    tc_program_free(p);
    tc_ctx_free(ctx);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    if (!failed)
        printf("unstable API: ok\n");
    return failed;
}
