/* jit_probe.c - tc-jit-probe: one jit_image call from the command line.
 *
 * An internal tool for tests/jit/run.sh, which needs separate processes to
 * show what the kernel cache does across them (miss then hit, a corrupted
 * entry recompiled, concurrent writers, an unusable directory).
 *
 *     tc-jit-probe FILE.cu [--arch=90] [--ptx] [--verbose] [--fast-math] [--lineinfo]
 *
 * Uses the default cache ($TENSORC_CACHE_DIR, ...).  With --verbose prints
 * "cache: hit" or "cache: miss", the words `tensorc compile --verbose`
 * prints per NVRTC compilation; then always "image: xxh64=<16 hex> size=<n>".
 * A cache warning goes to stderr.  Exit: 0 done, 1 compile error (the log on
 * stderr), 2 usage or I/O error, 3 NVRTC missing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "jit.h"
#include "nvrtc.h"

static int usage(void)
{
    fprintf(stderr, "usage: tc-jit-probe FILE.cu [--arch=NN] [--ptx] [--verbose] "
                    "[--fast-math] [--lineinfo]\n");
    return 2;
}

/* The whole file, malloc'd; NULL with errno set on failure. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 4096;
            char *b = realloc(buf, ncap);
            if (!b) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    const char *file = NULL;
    int arch = 90;
    bool cubin = true, verbose = false;
    const char *opts[2];
    int nopts = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--arch=", 7) == 0) {
            char *end;
            long v = strtol(a + 7, &end, 10);
            if (*end || v <= 0 || v > 10000)
                return usage();
            arch = (int)v;
        } else if (strcmp(a, "--ptx") == 0) {
            cubin = false;
        } else if (strcmp(a, "--verbose") == 0) {
            verbose = true;
        } else if (strcmp(a, "--fast-math") == 0 && nopts < 2) {
            opts[nopts++] = "--use_fast_math";
        } else if (strcmp(a, "--lineinfo") == 0 && nopts < 2) {
            opts[nopts++] = "-lineinfo";
        } else if (a[0] != '-' && !file) {
            file = a;
        } else {
            return usage();
        }
    }
    if (!file)
        return usage();

    size_t len = 0;
    char *src = slurp(file, &len);
    if (!src) {
        perror(file);
        return 2;
    }
    jit_ctx *j = jit_ctx_new(NULL, 0);
    if (!j) {
        free(src);
        fprintf(stderr, "tc-jit-probe: out of memory\n");
        return 2;
    }
    tc_diag d;
    diag_init(&d);
    const void *image = NULL;
    size_t ilen = 0;
    jit_origin origin = JIT_COMPILED;
    tc_status st = jit_image(j, src, len, file, arch, cubin, opts, nopts, &image, &ilen,
                             &origin, &d);
    int rc = 0;
    if (jit_warning(j))
        fprintf(stderr, "tc-jit-probe: warning: %s\n", jit_warning(j));
    if (st == TC_OK) {
        if (verbose) {
            printf("cache: %s\n", origin == JIT_COMPILED ? "miss" : "hit");
            printf("nvrtc: %s\n", nvrtc_loaded() ? "loaded" : "not loaded");
        }
        printf("image: xxh64=%016llx size=%zu\n", (unsigned long long)XXH64(image, ilen, 0),
               ilen);
    } else {
        fprintf(stderr, "tc-jit-probe: %s\n", d.msg ? d.msg : "failed (no message)");
        rc = st == TC_ERR_COMPILE ? 1 : st == TC_ERR_NO_DEVICE ? 3 : 2;
    }
    diag_release(&d);
    jit_ctx_free(j);
    free(src);
    return rc;
}
