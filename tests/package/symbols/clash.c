/* clash.c - a user program that defines functions of the same names as
 * some of tensorc's internal ones (suggest, plural, buf_init, arena_new,
 * cache_open, ref_run).  It links only if the library exports nothing but
 * its tc_ API; it then compiles a program through the library and checks
 * that its own functions, not the library's, are the ones called here.
 * Exit 0 when right. */
#include <stdio.h>
#include <string.h>

#include "tensorc.h"

int suggest(void);
int plural(void);
int buf_init(void);
int arena_new(void);
int cache_open(void);
int ref_run(void);
int suggest(void) { return 1; }
int plural(void) { return 2; }
int buf_init(void) { return 3; }
int arena_new(void) { return 4; }
int cache_open(void) { return 5; }
int ref_run(void) { return 6; }

int main(void)
{
    tc_ctx *ctx;
    tc_program *p;
    const char *dump;
    static const char src[] = "fn twice(x: f32[N]) -> f32[N] { return x * 2 }";
    if (tc_ctx_create(&ctx) != TC_OK)
        return 1;
    if (tc_compile(ctx, src, strlen(src), "twice.tc", &p) != TC_OK ||
        tc_program_dump(p, "graph", "twice", &dump) != TC_OK || !strstr(dump, "twice")) {
        fprintf(stderr, "clash: %s\n", tc_errmsg(ctx));
        return 1;
    }
    /* an error goes through the library's own suggest() ("did you mean") */
    static const char bad[] = "fn f(x: f32[N]) -> f32[N] { return exq(x) }";
    tc_program *q;
    if (tc_compile(ctx, bad, strlen(bad), "bad.tc", &q) == TC_OK ||
        !strstr(tc_errmsg(ctx), "exp")) {
        fprintf(stderr, "clash: expected a 'did you mean exp' error, got: %s\n", tc_errmsg(ctx));
        return 1;
    }
    int mine = suggest() + plural() + buf_init() + arena_new() + cache_open() + ref_run();
    printf("clash: ok (%s, own functions %d)\n", tc_version_string(), mine);
    tc_program_free(p);
    tc_ctx_free(ctx);
    return mine == 21 ? 0 : 1;
}
