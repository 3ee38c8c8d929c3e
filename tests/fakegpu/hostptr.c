/* hostptr.c - tc_run given memory that is not device memory, on the fake
 * driver (TENSORC_LIBCUDA points at libtc-fake-cuda): a caller error
 * (TC_ERR_INVALID_ARG naming the tensor), not TC_ERR_INTERNAL ("a bug in
 * tensorc").  Exit 0 when right, 1 with the message otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorc.h"

int main(void)
{
    tc_ctx *ctx;
    tc_program *p;
    static const char src[] = "fn twice(x: f32[N]) -> f32[N] { return x * 2 }";
    if (tc_ctx_create(&ctx) != TC_OK ||
        tc_compile(ctx, src, strlen(src), "twice.tc", &p) != TC_OK) {
        fprintf(stderr, "setup failed: %s\n", tc_errmsg(ctx));
        return 1;
    }
    int64_t shape[1] = {1024};
    float *host_x = calloc(1024, sizeof *host_x), *host_y = calloc(1024, sizeof *host_y);
    DLTensor x = {.data = host_x, .device = {kDLCUDA, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1},
                  .shape = shape};
    DLTensor y = x;
    y.data = host_y;
    tc_arg a[2] = {tc_arg_tensor("x", &x), tc_arg_tensor("out", &y)};
    tc_status st = tc_run(p, "twice", a, 2, NULL);
    const char *msg = tc_errmsg(ctx);
    int ok = st == TC_ERR_INVALID_ARG && strstr(msg, "tc_run: parameter 'x' (0x") &&
             strstr(msg, ", 4096 bytes) is not in CUDA device memory the driver knows");
    if (!ok)
        fprintf(stderr, "want TC_ERR_INVALID_ARG naming parameter 'x'; got %s: %s\n",
                tc_status_str(st), msg);
    tc_program_free(p);
    tc_ctx_free(ctx);
    free(host_x);
    free(host_y);
    return ok ? 0 : 1;
}
