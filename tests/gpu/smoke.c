/* smoke.c - tc-gpu-smoke: the runtime end to end on a real GPU, with a
 * handwritten kernel (the generated ones come with the code generator).
 *
 * NVRTC compiles y[i] = x[i] * 2 + 1 to a CUBIN for the device (its arch
 * clamped to what NVRTC supports; PTX when the device is newer), the driver
 * loads and launches it, and every element is compared with the host's
 * answer.  x is fresh random non-zero data (the seed is printed), y is
 * poisoned with NaN beforehand so an element the kernel skips fails.  x*2 is
 * exact in binary floating point, so x*2+1 rounds once whether or not either
 * side contracts it to an FMA: exact equality is the right check.
 *
 * Prints "N passed, M failed" last (one check per size); exit status 0 when
 * all pass, 1 on a failure, 3 when there is no GPU (like tensorc --device=cuda). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver.h"
#include "nvrtc.h"

static const char *const KERNEL =
    "extern \"C\" __global__ void scale_shift(float *__restrict__ y,\n"
    "                                         const float *__restrict__ x, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = x[i] * 2.0f + 1.0f;\n"
    "}\n";

static uint64_t rng_state;

static uint64_t next_u64(void) /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* Uniform in [-8, 8], never 0. */
static float random_nonzero(void)
{
    for (;;) {
        float v = (float)((double)(next_u64() >> 11) / 9007199254740992.0 * 16.0 - 8.0);
        if (v != 0.0f)
            return v;
    }
}

/* One size: fill, poison, launch, copy back, compare. @return whether every element matched. */
static bool check(drv_device *dev, drv_fn fn, int n, tc_diag *d)
{
    size_t bytes = (size_t)n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes);
    drv_ptr dx = 0, dy = 0;
    bool ok = false;
    if (!x || !y) {
        fprintf(stderr, "n=%d: out of host memory\n", n);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        x[i] = random_nonzero();
        y[i] = NAN;
    }
    if (drv_alloc(dev, bytes, &dx, d) != TC_OK || drv_alloc(dev, bytes, &dy, d) != TC_OK ||
        drv_htod(dev, dx, x, bytes, d) != TC_OK || drv_htod(dev, dy, y, bytes, d) != TC_OK)
        goto fail;
    unsigned block[3] = {256, 1, 1};
    unsigned grid[3] = {(unsigned)((n + 255) / 256), 1, 1};
    void *args[] = {&dy, &dx, &n};
    if (drv_launch(fn, grid, block, 0, NULL, args, d) != TC_OK || drv_sync(dev, NULL, d) != TC_OK ||
        drv_dtoh(dev, y, dy, bytes, d) != TC_OK)
        goto fail;
    long bad = 0;
    for (int i = 0; i < n; i++) {
        float want = x[i] * 2.0f + 1.0f;
        if (!(y[i] == want)) { /* NaN never equals */
            if (bad < 5)
                fprintf(stderr, "n=%d: y[%d] = %.9g, want %.9g (x = %.9g)\n", n, i, y[i], want,
                        x[i]);
            bad++;
        }
    }
    printf("%s n=%d: %ld of %d elements wrong\n", bad ? "FAIL" : "ok  ", n, bad, n);
    ok = bad == 0;
    goto out;
fail:
    fprintf(stderr, "FAIL n=%d: %s", n, d->msg ? d->msg : "(no message)\n");
out:
    drv_free(dev, dx);
    drv_free(dev, dy);
    free(x);
    free(y);
    return ok;
}

int main(void)
{
    tc_diag d;
    diag_init(&d);
    drv_device *dev = NULL;
    tc_status st = drv_open(&dev, 0, &d);
    if (st == TC_ERR_NO_DEVICE) {
        fprintf(stderr, "tc-gpu-smoke: %s", d.msg);
        printf("0 passed, 0 failed (no GPU)\n");
        diag_release(&d);
        return 3;
    }
    int passed = 0, failed = 0;
    drv_module *mod = NULL;
    nvrtc_output out = {0};
    if (st != TC_OK) {
        fprintf(stderr, "tc-gpu-smoke: %s", d.msg);
        failed++;
        goto done;
    }
    bool ptx_only = false;
    int arch = nvrtc_clamp_arch(drv_arch(dev), &ptx_only);
    int nmaj = 0, nmin = 0;
    nvrtc_version(&nmaj, &nmin);
    printf("device: %s, sm_%d, %d SMs; NVRTC %d.%d compiles for %s_%d\n", drv_name(dev),
           drv_arch(dev), drv_sm_count(dev), nmaj, nmin, ptx_only ? "compute" : "sm", arch);
    if (!arch) {
        fprintf(stderr, "tc-gpu-smoke: NVRTC cannot compile for sm_%d: ", drv_arch(dev));
        nvrtc_load(&d);
        fprintf(stderr, "%s", d.msg ? d.msg : "device older than every supported arch\n");
        failed++;
        goto done;
    }
    drv_fn fn;
    if (nvrtc_compile(KERNEL, "smoke.cu", arch, !ptx_only, NULL, 0, &out, &d) != TC_OK ||
        drv_module_load(dev, out.data, &mod, &d) != TC_OK ||
        drv_function(mod, "scale_shift", &fn, &d) != TC_OK) {
        fprintf(stderr, "tc-gpu-smoke: %s", d.msg);
        failed++;
        goto done;
    }
    /* A missing kernel is reported, not crashed on. */
    drv_fn none;
    if (drv_function(mod, "no_such_kernel", &none, &d) == TC_ERR_NOT_FOUND) {
        passed++;
    } else {
        fprintf(stderr, "FAIL drv_function(no_such_kernel) did not give TC_ERR_NOT_FOUND\n");
        failed++;
    }
    const char *seed_env = getenv("TC_SEED");
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
    rng_state = seed ? seed : 1;
    printf("seed %llu (set TC_SEED to repeat)\n", (unsigned long long)seed);
    static const int sizes[] = {1, 7, 257, 1000003};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        if (check(dev, fn, sizes[i], &d))
            passed++;
        else
            failed++;
    }
done:
    nvrtc_output_free(&out);
    drv_module_unload(mod);
    drv_close(dev);
    diag_release(&d);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
