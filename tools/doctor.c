/* doctor.c - `tensorc doctor`: what tensorc finds of CUDA, and why not.
 *
 * One line per part, each found part with where it came from and its
 * version, each missing one with where it was looked for and why it failed
 * (the loaders' own messages, which list every place tried):
 *
 *     driver: /usr/lib/x86_64-linux-gnu/libcuda.so.1 (CUDA 12.8)
 *     gpu 0:  NVIDIA H200, compute capability 9.0, 139.8 GiB, 132 SMs
 *     nvrtc:  /usr/local/cuda/lib64/libnvrtc.so.12 (12.8; sm_50 to sm_120, 17 archs)
 *     cublas: /usr/local/cuda/lib64/libcublas.so.12 (12.8.3)
 *     cache:  /root/.cache/tensorc: yours, mode 0755: used; 12 entries, 3.4 MiB of 1024 MiB
 *     ok: --device=cuda can run here
 *
 * Exit 0 when `--device=cuda` can run (a driver, a GPU and NVRTC); else
 * EXIT_ENV (3) with the reasons on the last line.  cuBLAS (only matrix
 * products need it) and the cache (only speed depends on it) are reported
 * but do not decide the status.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blas.h"
#include "cache.h"
#include "nvrtc.h"
#include "strbuf.h"

/* the message of d without "error: " and the trailing newline */
static const char *why(const tc_diag *d)
{
    return d->brief && *d->brief ? d->brief : "unknown reason";
}

static bool report_driver(tc_strbuf *problems)
{
    tc_diag d;
    diag_init(&d);
    const char *env = getenv("TENSORC_LIBCUDA");
    int n = drv_count(&d);
    bool ok = n > 0;
    if (n < 0) {
        printf("driver: not found: %s (looked for %s%s)\n", why(&d), env && *env ? env : "libcuda.so.1",
               env && *env ? ", from TENSORC_LIBCUDA" : " through the dynamic linker's path");
        strbuf_printf(problems, "%sno CUDA driver", problems->len ? "; " : "");
    } else {
        drv_device *dev = NULL;
        int v = 0;
        if (n > 0 && drv_open(&dev, 0, &d) == TC_OK)
            v = drv_version(dev);
        printf("driver: %s", drv_lib_path());
        if (v)
            printf(" (CUDA %d.%d)", v / 1000, v % 1000 / 10);
        printf("\n");
        drv_close(dev);
        if (n == 0) {
            printf("gpu:    none: the driver loaded but reports no CUDA device\n");
            strbuf_printf(problems, "%sno GPU", problems->len ? "; " : "");
        }
        for (int i = 0; i < n; i++) {
            if (drv_open(&dev, i, &d) != TC_OK) {
                printf("gpu %d:  cannot be opened: %s\n", i, why(&d));
                ok = ok && i > 0;
                continue;
            }
            printf("gpu %d:  %s, compute capability %d.%d", i, drv_name(dev), drv_arch(dev) / 10,
                   drv_arch(dev) % 10);
            size_t mem = drv_total_mem(dev);
            if (mem)
                printf(", %.1f GiB", (double)mem / (1 << 30));
            printf(", %d SMs\n", drv_sm_count(dev));
            drv_close(dev);
        }
        if (!ok && n > 0)
            strbuf_printf(problems, "%sGPU 0 cannot be opened", problems->len ? "; " : "");
    }
    diag_release(&d);
    return ok;
}

static bool report_nvrtc(tc_strbuf *problems)
{
    tc_diag d;
    diag_init(&d);
    bool ok = nvrtc_load(&d) == TC_OK;
    if (!ok) {
        printf("nvrtc:  not found: %s\n", why(&d));
        strbuf_printf(problems, "%sno NVRTC", problems->len ? "; " : "");
    } else {
        int major = 0, minor = 0, archs[128];
        nvrtc_version(&major, &minor);
        int na = nvrtc_supported_archs(archs, 128);
        printf("nvrtc:  %s (%d.%d", nvrtc_lib_path(), major, minor);
        if (na > 0)
            printf("; sm_%d to sm_%d, %d archs", archs[0], archs[na < 128 ? na - 1 : 127], na);
        printf(")\n");
    }
    diag_release(&d);
    return ok;
}

static void report_cublas(void)
{
    tc_diag d;
    diag_init(&d);
    if (blas_load(&d) != TC_OK) {
        printf("cublas: not found: %s (only matrix products need it)\n", why(&d));
    } else {
        int v;
        const char *path = blas_lib_path(&v);
        printf("cublas: %s", path);
        if (v)
            printf(" (%d.%d.%d)", v / 10000, v / 100 % 100, v % 100);
        printf("\n");
    }
    diag_release(&d);
}

static void report_cache(void)
{
    tc_cache *c = cache_open(NULL, 0);
    if (!c) {
        printf("cache:  out of memory\n");
        return;
    }
    const char *dir = cache_dir(c);
    struct stat st;
    printf("cache:  %s", dir ? dir : "(no directory: set TENSORC_CACHE_DIR, XDG_CACHE_HOME or HOME)");
    if (dir && stat(dir, &st) == 0)
        printf(": %s, mode %04o", st.st_uid == geteuid() ? "yours" : "not yours",
               (unsigned)(st.st_mode & 07777));
    if (cache_enabled(c)) {
        uint64_t n, bytes;
        cache_stats(c, &n, &bytes);
        printf(": used%s; %llu %s, %.1f MiB of %llu MiB\n",
               access(dir, W_OK) != 0 ? " for reads only (not writable)" : "",
               (unsigned long long)n, n == 1 ? "entry" : "entries", (double)bytes / (1 << 20),
               (unsigned long long)(cache_max_bytes(c) >> 20));
    } else {
        printf("\n");
    }
    if (cache_warning(c))
        printf("        %s\n", cache_warning(c));
    cache_close(c);
}

int cmd_doctor(int argc, char **argv)
{
    if (argc > 0)
        return usage_error("'tensorc doctor' takes no arguments, found '%s'", argv[0]);
    tc_strbuf problems = {0};
    printf("tensorc %s\n", tc_version_string());
    bool ok = report_driver(&problems);
    ok &= report_nvrtc(&problems);
    report_cublas();
    report_cache();
    if (ok)
        printf("ok: --device=cuda can run here\n");
    else
        printf("not usable for --device=cuda: %s\n", problems.s ? problems.s : "?");
    int rc = ok ? EXIT_OK : EXIT_ENV;
    if (fflush(stdout) != 0)
        rc = fail(EXIT_ERROR, "cannot write the output: %s", strerror(errno));
    free(problems.s);
    return rc;
}
