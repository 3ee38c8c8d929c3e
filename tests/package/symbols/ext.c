/* ext.c - a small shared object (the shape of a Python extension) built on
 * tensorc: ext_compile compiles a program and returns how many bytes of
 * CUDA it generates, or -1.  Built against libtensorc.a (which must be
 * position-independent for that) and against libtensorc.so. */
#include <string.h>

#include "tensorc.h"

long ext_compile(const char *src);
long ext_compile(const char *src)
{
    tc_ctx *ctx;
    tc_program *p;
    long n = -1;
    if (tc_ctx_create(&ctx) != TC_OK)
        return -1;
    if (tc_compile(ctx, src, strlen(src), "ext.tc", &p) == TC_OK) {
        const char *cuda = tc_program_source(p, NULL);
        if (cuda)
            n = (long)strlen(cuda);
        tc_program_free(p);
    }
    tc_ctx_free(ctx);
    return n;
}
