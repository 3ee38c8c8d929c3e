/* fuzz_npy.c - libFuzzer harness for the .npy reader (src/npy.c).
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

#include "diag.h"
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

    tc_diag d;
    diag_init(&d);
    ref_tensor a = {0};
    tc_status st = npy_read(in_path, &a, &d);
    if (st != TC_OK) {
        if (st == TC_ERR_INTERNAL)
            finding("npy_read gave TC_ERR_INTERNAL");
        if (!d.msg || !*d.msg)
            finding("npy_read refused a file without a message");
        diag_release(&d);
        unlink(in_path);
        return 0;
    }
    diag_release(&d);
    diag_init(&d);
    if (npy_write(out_path, &a, &d) != TC_OK)
        finding("npy_write could not write back what npy_read read");
    diag_release(&d);
    diag_init(&d);
    ref_tensor b = {0};
    if (npy_read(out_path, &b, &d) != TC_OK)
        finding("npy_read refused what npy_write wrote");
    if (a.dtype != b.dtype || a.rank != b.rank ||
        memcmp(a.shape, b.shape, sizeof a.shape[0] * (size_t)a.rank) != 0)
        finding("round trip changed the dtype or shape");
    int64_t n = ref_numel(&a);
    if (n > 0 && (a.idata ? memcmp(a.idata, b.idata, (size_t)n * sizeof *a.idata)
                          : memcmp(a.data, b.data, (size_t)n * sizeof *a.data)) != 0)
        finding("round trip changed a value");
    ref_free(&a);
    ref_free(&b);
    diag_release(&d);
    unlink(in_path);
    unlink(out_path);
    return 0;
}
