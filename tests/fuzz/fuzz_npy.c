/* fuzz_npy.c - libFuzzer harness for the .npy reader (tools/npy.c).
 *
 * The input is written to a private file and read with npy_read.  A file
 * it accepts is written back with npy_write and read again: the second
 * read must give the same dtype, shape and values, bit for bit (a .npy of
 * a type tensorc reads round-trips exactly).  A refusal must carry a
 * message.  Crashes, sanitizer reports, leaks and hangs are findings too.
 *
 * Build and run: tests/fuzz/README.md. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char in_path[256], out_path[256];

static void paths(void)
{
    if (in_path[0])
        return;
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(in_path, sizeof in_path, "%s/fuzz_npy_%ld_in.npy", dir, (long)getpid());
    snprintf(out_path, sizeof out_path, "%s/fuzz_npy_%ld_out.npy", dir, (long)getpid());
}

static void finding(const char *what)
{
    fprintf(stderr, "fuzz_npy: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    paths();
    FILE *f = fopen(in_path, "wb");
    if (!f)
        return 0;
    if (size && fwrite(data, 1, size, f) != size) {
        fclose(f);
        return 0;
    }
    fclose(f);

    char *msg = NULL;
    htensor a = {0};
    tc_status st = npy_read(in_path, &a, &msg);
    if (st != TC_OK) {
        if (st == TC_ERR_INTERNAL)
            finding("npy_read gave TC_ERR_INTERNAL");
        if (!msg || !*msg)
            finding("npy_read refused a file without a message");
        free(msg);
        ht_free(&a);
        unlink(in_path);
        return 0;
    }
    free(msg);
    msg = NULL;
    if (npy_write(out_path, &a, &msg) != TC_OK)
        finding("npy_write could not write back what npy_read read");
    free(msg);
    msg = NULL;
    htensor b = {0};
    if (npy_read(out_path, &b, &msg) != TC_OK)
        finding("npy_read refused what npy_write wrote");
    free(msg);
    if (!dt_same(a.dtype, b.dtype) || a.rank != b.rank ||
        memcmp(a.shape, b.shape, sizeof a.shape[0] * (size_t)a.rank) != 0)
        finding("round trip changed the dtype or shape");
    int64_t n = ht_numel(&a);
    if (n > 0 && memcmp(a.data, b.data, (size_t)n * (size_t)dt_size(a.dtype)) != 0)
        finding("round trip changed a value");
    ht_free(&a);
    ht_free(&b);
    unlink(in_path);
    unlink(out_path);
    return 0;
}
