/* fuzz_compile.c - libFuzzer harness: tc_compile of the input, then every
 * text stage of the pipeline through tc_program_dump (ast, graph, lowered,
 * fused, sched, cuda, explain), so a mutant that type-checks goes on to
 * lowering, fusion, scheduling and code generation.
 *
 * What counts as a finding (abort, so libFuzzer saves the input):
 *   - a crash, a sanitizer report, a hang (-timeout), a leak;
 *   - TC_ERR_INTERNAL from any step: a verifier failed, a bug in tensorc;
 *   - an error with no message.
 * Everything else (syntax, compile, limit, unsupported...) is a correct
 * answer to bad input.  NVRTC is not called: it is slow, and the CUDA text
 * is what tensorc makes (tests/nvrtc and the random programs compile it).
 *
 * Build and run: tests/fuzz/README.md. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tensorc.h"

static const char *const stages[] = {"ast", "graph", "lowered", "fused", "sched", "cuda", "explain"};

static void finding(const tc_ctx *ctx, const char *what, tc_status st)
{
    fprintf(stderr, "fuzz_compile: %s gave %s: %s\n", what, tc_status_str(st), tc_errmsg(ctx));
    abort();
}

static void check(const tc_ctx *ctx, const char *what, tc_status st)
{
    if (st == TC_ERR_INTERNAL)
        finding(ctx, what, st);
    if (st != TC_OK && st != TC_ERR_NOMEM && !*tc_errmsg(ctx))
        finding(ctx, what, st); /* an error must say what it is */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tc_ctx *ctx = NULL;
    if (tc_ctx_create(&ctx) != TC_OK)
        return 0;
    tc_program *p = NULL;
    tc_status st = tc_compile(ctx, (const char *)data, size, "fuzz.tc", &p);
    check(ctx, "tc_compile", st);
    if (st == TC_OK) {
        for (size_t i = 0; i < sizeof stages / sizeof *stages; i++) {
            const char *out = NULL;
            st = tc_program_dump(p, stages[i], NULL, &out);
            check(ctx, stages[i], st);
            if (st == TC_OK && !out)
                finding(ctx, stages[i], st);
        }
        tc_program_free(p);
    }
    tc_ctx_free(ctx);
    return 0;
}
