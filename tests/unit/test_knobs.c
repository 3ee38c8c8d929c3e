/* test_knobs.c - the tuning knobs (src/base/knobs.h): read from the
 * environment with their ranges, named in the cache key's text, and read
 * once per context: a context compiles with the knobs it was made under,
 * whatever the environment says later. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "tensorc.h"

static const char *const ALL[] = {
    "TENSORC_MATMUL", "TENSORC_MATMUL_EPILOGUE", "TENSORC_MATMUL_LORA", "TENSORC_ATTENTION",
    "TENSORC_MATMUL_KSLICE", "TENSORC_PW_UNROLL", "TENSORC_FULL_UNROLL", "TENSORC_COL_UNROLL",
    "TENSORC_TILE_WHOLE", "TENSORC_TILE_VEC", "TENSORC_FE_STEPS", "TENSORC_FULL_GRID", "TENSORC_COL_SPLIT",
    "TENSORC_COL_X", "TENSORC_CLUSTER_MAX", "TENSORC_CLUSTER_BLOCK", "TENSORC_BLAS_EARLY", "TENSORC_FOREACH_WIDE", "TENSORC_FOREACH_SMALL",
    "TENSORC_ATTN_CHUNK", "TENSORC_ATTN_WARPS", "TENSORC_ATTN_PREFETCH", "TENSORC_ATTN_RING",
    "TENSORC_ATTN_SPLIT",
    "TENSORC_MATMUL_STAGES", "TENSORC_MATMUL_BK", "TENSORC_MATMUL_RESIDENT", "TENSORC_SCAN_CHECKPOINT",
    "TENSORC_ROWS_ONLINE", "TENSORC_ONLINE_BLOCK", "TENSORC_ONLINE_VEC", "TENSORC_ROWS_PIPE", "TENSORC_ROWS_TICKET", "TENSORC_ROWS_MAXREG", "TENSORC_ROWS_KEEP", "TENSORC_CLUSTER_PUSH", "TENSORC_ROWS_PAIR", "TENSORC_MAX_NAN",
    "TENSORC_MATMUL_FENCE", "TENSORC_MATMUL_NORM", "TENSORC_MATMUL_ORDER", "TENSORC_MATMUL_STREAM",
    "TENSORC_COL_ROWS", "TENSORC_COLPART_PREFETCH",
    "TENSORC_MATMUL_BN", "TENSORC_MATMUL_KAUTO", "TENSORC_COL_OCC", "TENSORC_PW_OCC", "TENSORC_COL_ORDER",
    "TENSORC_SCAN_ASYNC", "TENSORC_SCAN_MINBLOCKS", "TENSORC_SCAN_PAIR_LSE", "TENSORC_MATMUL_DUAL",
};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof ALL / sizeof ALL[0]; i++)
        unsetenv(ALL[i]);
}

static const char *text(void)
{
    static char buf[512];
    tc_knobs k;
    knobs_from_env(&k);
    knobs_text(&k, buf, sizeof buf);
    return buf;
}

static void test_none(void **state)
{
    (void)state;
    clear_env();
    /* every knob at its default: knobs_text writes each one that is not
     * (not memcmp against knobs_default, whose padding bytes a member's
     * store may change: ASan's -O1 build failed so once, at offset 11) */
    assert_string_equal(text(), "");
    /* an empty value is unset; so is a word a switch does not know */
    setenv("TENSORC_PW_UNROLL", "", 1);
    setenv("TENSORC_MATMUL", "fastest", 1);
    setenv("TENSORC_ATTENTION", "on", 1);
    assert_string_equal(text(), "");
    clear_env();
}

static void test_ranges(void **state)
{
    (void)state;
    clear_env();
    setenv("TENSORC_MATMUL", "generated", 1);
    setenv("TENSORC_ATTENTION", "off", 1);
    setenv("TENSORC_PW_UNROLL", "4", 1);
    setenv("TENSORC_FULL_UNROLL", "3", 1);     /* not a power of two */
    setenv("TENSORC_COL_X", "17", 1);          /* not a multiple of 16 */
    setenv("TENSORC_COL_SPLIT", "1", 1);       /* below 2 */
    setenv("TENSORC_MATMUL_KSLICE", "128", 1);
    setenv("TENSORC_CLUSTER_MAX", "8x", 1);    /* not a number */
    setenv("TENSORC_TILE_WHOLE", "0", 1);      /* 0 is a value, not unset */
    assert_string_equal(text(), "TENSORC_MATMUL=generated TENSORC_ATTENTION=off "
                                "TENSORC_MATMUL_KSLICE=128 TENSORC_PW_UNROLL=4 "
                                "TENSORC_TILE_WHOLE=0");
    tc_knobs k;
    knobs_from_env(&k);
    assert_int_equal(k.matmul, KNOB_MM_GENERATED);
    assert_false(k.attention);
    assert_int_equal(k.pw_unroll, 4);
    assert_int_equal(k.full_unroll, -1);
    assert_int_equal(k.col_x, -1);
    assert_int_equal(k.cluster_max, -1);
    assert_int_equal(k.tile_whole, 0);
    clear_env();
}

/* the attention variants' knobs: their values, and nothing else */
static void test_attn(void **state)
{
    (void)state;
    clear_env();
    setenv("TENSORC_ATTN_CHUNK", "64", 1);
    setenv("TENSORC_ATTN_WARPS", "8", 1);
    setenv("TENSORC_ATTN_PREFETCH", "2", 1);
    assert_string_equal(text(), "TENSORC_ATTN_CHUNK=64 TENSORC_ATTN_WARPS=8 TENSORC_ATTN_PREFETCH=2");
    setenv("TENSORC_ATTN_CHUNK", "96", 1);    /* not a power of two */
    setenv("TENSORC_ATTN_WARPS", "2", 1);     /* below 4 */
    setenv("TENSORC_ATTN_PREFETCH", "3", 1);  /* above 2 */
    assert_string_equal(text(), "");
    setenv("TENSORC_ATTN_CHUNK", "1024", 1);  /* above 512 */
    setenv("TENSORC_ATTN_WARPS", "16", 1);    /* above 8 */
    setenv("TENSORC_ATTN_PREFETCH", "1", 1);
    assert_string_equal(text(), "TENSORC_ATTN_PREFETCH=1");
    clear_env();
    setenv("TENSORC_ATTN_RING", "0", 1);      /* the register path */
    assert_string_equal(text(), "TENSORC_ATTN_RING=0");
    setenv("TENSORC_ATTN_RING", "8", 1);
    assert_string_equal(text(), "TENSORC_ATTN_RING=8");
    setenv("TENSORC_ATTN_RING", "9", 1);      /* above 8 */
    assert_string_equal(text(), "");
    setenv("TENSORC_ATTN_RING", "-1", 1);
    assert_string_equal(text(), "");
    clear_env();
    /* the split: 4, 8 or 16 warps, each on its own keys */
    setenv("TENSORC_ATTN_SPLIT", "16", 1);
    assert_string_equal(text(), "TENSORC_ATTN_SPLIT=16");
    setenv("TENSORC_ATTN_SPLIT", "4", 1);
    assert_string_equal(text(), "TENSORC_ATTN_SPLIT=4");
    setenv("TENSORC_ATTN_SPLIT", "12", 1);    /* not a power of two */
    assert_string_equal(text(), "");
    setenv("TENSORC_ATTN_SPLIT", "32", 1);    /* above 16 */
    assert_string_equal(text(), "");
    setenv("TENSORC_ATTN_SPLIT", "0", 1);
    assert_string_equal(text(), "");
    clear_env();
}

/* the online pair's knob (sched_online.c): 0 or 1, in the cache key */
static void test_rows_online(void **state)
{
    (void)state;
    clear_env();
    setenv("TENSORC_ROWS_ONLINE", "0", 1);
    assert_string_equal(text(), "TENSORC_ROWS_ONLINE=0");
    setenv("TENSORC_ROWS_ONLINE", "1", 1);
    assert_string_equal(text(), "TENSORC_ROWS_ONLINE=1");
    setenv("TENSORC_ROWS_ONLINE", "2", 1); /* above 1 */
    assert_string_equal(text(), "");
    setenv("TENSORC_ONLINE_BLOCK", "256", 1);
    assert_string_equal(text(), "TENSORC_ONLINE_BLOCK=256");
    setenv("TENSORC_ONLINE_BLOCK", "384", 1); /* not a power of two */
    assert_string_equal(text(), "");
    clear_env();
}

/* TENSORC_ROWS_PIPE (codegen/rows.c): 0, 1 or 2, in the cache key;
 * TENSORC_ROWS_MAXREG: 32 to 128 */
static void test_rows_pipe(void **state)
{
    (void)state;
    clear_env();
    setenv("TENSORC_ROWS_PIPE", "1", 1);
    assert_string_equal(text(), "TENSORC_ROWS_PIPE=1");
    setenv("TENSORC_ROWS_PIPE", "0", 1);
    assert_string_equal(text(), "TENSORC_ROWS_PIPE=0");
    setenv("TENSORC_ROWS_PIPE", "2", 1); /* the row kept in its slots */
    assert_string_equal(text(), "TENSORC_ROWS_PIPE=2");
    setenv("TENSORC_ROWS_PIPE", "3", 1); /* above 2 */
    assert_string_equal(text(), "");
    setenv("TENSORC_ROWS_MAXREG", "64", 1);
    assert_string_equal(text(), "TENSORC_ROWS_MAXREG=64");
    setenv("TENSORC_ROWS_MAXREG", "24", 1); /* below 32 */
    assert_string_equal(text(), "");
    clear_env();
}

/* column partials (issue 15, sched_colpart.c): rows a block, 1 to 1024;
 * the next row's prefetch, 0 or 1; both in the cache key */
static void test_colpart(void **state)
{
    (void)state;
    clear_env();
    setenv("TENSORC_COL_ROWS", "16", 1);
    setenv("TENSORC_COLPART_PREFETCH", "1", 1);
    assert_string_equal(text(), "TENSORC_COL_ROWS=16 TENSORC_COLPART_PREFETCH=1");
    tc_knobs k;
    knobs_from_env(&k);
    assert_int_equal(k.col_rows, 16);
    assert_int_equal(k.colpart_prefetch, 1);
    setenv("TENSORC_COL_ROWS", "0", 1);          /* below 1 */
    setenv("TENSORC_COLPART_PREFETCH", "2", 1);  /* above 1 */
    assert_string_equal(text(), "");
    setenv("TENSORC_COL_ROWS", "1025", 1);       /* above 1024 */
    setenv("TENSORC_COLPART_PREFETCH", "0", 1);
    assert_string_equal(text(), "TENSORC_COLPART_PREFETCH=0");
    setenv("TENSORC_COL_ROWS", "33", 1);         /* any count */
    knobs_from_env(&k);
    assert_int_equal(k.col_rows, 33);
    clear_env();
}

/* the generated matmul's streaming variants (issue 13) */
static void test_matmul_variants(void **state)
{
    (void)state;
    clear_env();
    setenv("TENSORC_MATMUL_STAGES", "9", 1);   /* past 8 */
    setenv("TENSORC_MATMUL_BK", "96", 1);      /* not a power of two */
    setenv("TENSORC_MATMUL_RESIDENT", "0", 1); /* 0 is a value (off), not unset */
    assert_string_equal(text(), "TENSORC_MATMUL_RESIDENT=0");
    setenv("TENSORC_MATMUL_STAGES", "2", 1);
    setenv("TENSORC_MATMUL_BK", "128", 1);
    setenv("TENSORC_MATMUL_RESIDENT", "65537", 1); /* past 65536 */
    assert_string_equal(text(), "TENSORC_MATMUL_STAGES=2 TENSORC_MATMUL_BK=128");
    setenv("TENSORC_MATMUL_STAGES", "1", 1);
    setenv("TENSORC_MATMUL_BK", "16", 1);
    setenv("TENSORC_MATMUL_RESIDENT", "528", 1);
    tc_knobs k;
    knobs_from_env(&k);
    assert_int_equal(k.matmul_stages, -1);
    assert_int_equal(k.matmul_bk, -1);
    assert_int_equal(k.matmul_resident, 528);
    /* the K slices' ticket fenced by every thread (0), one (1, unset), one with acq_rel (2) */
    clear_env();
    setenv("TENSORC_MATMUL_FENCE", "3", 1);
    assert_string_equal(text(), "");
    setenv("TENSORC_MATMUL_FENCE", "2", 1);
    assert_string_equal(text(), "TENSORC_MATMUL_FENCE=2");
    setenv("TENSORC_MATMUL_FENCE", "0", 1);
    assert_string_equal(text(), "TENSORC_MATMUL_FENCE=0");
    knobs_from_env(&k);
    assert_int_equal(k.matmul_fence, 0);
    /* the row-scale rule: on unless "off" */
    clear_env();
    setenv("TENSORC_MATMUL_NORM", "on", 1);
    assert_string_equal(text(), "");
    setenv("TENSORC_MATMUL_NORM", "off", 1);
    assert_string_equal(text(), "TENSORC_MATMUL_NORM=off");
    knobs_from_env(&k);
    assert_false(k.matmul_norm);
    /* the epilogue rule: on unless "off" */
    clear_env();
    setenv("TENSORC_MATMUL_DUAL", "on", 1);
    assert_string_equal(text(), "");
    setenv("TENSORC_MATMUL_DUAL", "off", 1);
    assert_string_equal(text(), "TENSORC_MATMUL_DUAL=off");
    knobs_from_env(&k);
    assert_false(k.matmul_dual);
    /* the work items' order: 0 or 1 */
    clear_env();
    setenv("TENSORC_MATMUL_ORDER", "2", 1);
    assert_string_equal(text(), "");
    setenv("TENSORC_MATMUL_ORDER", "1", 1);
    assert_string_equal(text(), "TENSORC_MATMUL_ORDER=1");
    /* the weight's copies: a name of knob_mm_streams (another is warned about, ignored) */
    clear_env();
    setenv("TENSORC_MATMUL_STREAM", "tma", 1);
    assert_string_equal(text(), "");
    setenv("TENSORC_MATMUL_STREAM", "occ6", 1);
    assert_string_equal(text(), "TENSORC_MATMUL_STREAM=occ6");
    knobs_from_env(&k);
    assert_int_equal(k.matmul_stream, KNOB_MM_STREAM_OCC6);
    setenv("TENSORC_MATMUL_STREAM", "cpasync", 1);
    assert_string_equal(text(), "TENSORC_MATMUL_STREAM=cpasync");
    /* the 16-row tensor-core tiles' columns: 64, 128 or 256 */
    clear_env();
    setenv("TENSORC_MATMUL_BN", "96", 1);
    assert_string_equal(text(), "");
    setenv("TENSORC_MATMUL_BN", "512", 1);
    assert_string_equal(text(), "");
    setenv("TENSORC_MATMUL_BN", "32", 1);
    assert_string_equal(text(), "");
    setenv("TENSORC_MATMUL_BN", "256", 1);
    assert_string_equal(text(), "TENSORC_MATMUL_BN=256");
    knobs_from_env(&k);
    assert_int_equal(k.matmul_bn, 256);
    clear_env();
}

/* the scan walks' knobs (scan_stage.c, kernel.c, scan.c): their ranges, in the cache key */
static void test_scan(void **state)
{
    (void)state;
    clear_env();
    setenv("TENSORC_SCAN_ASYNC", "2", 1);       /* 0 or 1 */
    setenv("TENSORC_SCAN_MINBLOCKS", "0", 1);   /* 1 to 16 */
    setenv("TENSORC_SCAN_PAIR_LSE", "on", 1);   /* not a number */
    assert_string_equal(text(), "");
    setenv("TENSORC_SCAN_MINBLOCKS", "17", 1);
    assert_string_equal(text(), "");
    setenv("TENSORC_SCAN_ASYNC", "1", 1);
    setenv("TENSORC_SCAN_MINBLOCKS", "9", 1);
    setenv("TENSORC_SCAN_PAIR_LSE", "0", 1);    /* 0 is a value, not unset */
    assert_string_equal(text(), "TENSORC_SCAN_ASYNC=1 TENSORC_SCAN_MINBLOCKS=9 TENSORC_SCAN_PAIR_LSE=0");
    tc_knobs k;
    knobs_from_env(&k);
    assert_int_equal(k.scan_async, 1);
    assert_int_equal(k.scan_minblocks, 9);
    assert_int_equal(k.scan_pair_lse, 0);
    clear_env();
}

/* the unrolled pointwise kernel says so in --emit=sched */
static bool unrolled(tc_ctx *ctx)
{
    static const char src[] = "fn f(x: f32[*]) -> f32[*] { return exp(x) * 2 + 1 }\n";
    tc_program *p;
    assert_int_equal(tc_compile(ctx, src, sizeof src - 1, "k.tc", &p), TC_OK);
    const char *out;
    assert_int_equal(tc_program_dump(p, "sched", "f", &out), TC_OK);
    bool u = strstr(out, "4 vectors a thread a step") != NULL;
    tc_program_free(p);
    return u;
}

static void test_once_per_context(void **state)
{
    (void)state;
    clear_env();
    tc_ctx *before, *after;
    assert_int_equal(tc_ctx_create(&before), TC_OK);
    setenv("TENSORC_PW_UNROLL", "4", 1);
    assert_int_equal(tc_ctx_create(&after), TC_OK);
    assert_false(unrolled(before)); /* made before the knob was set: never sees it */
    assert_true(unrolled(after));
    unsetenv("TENSORC_PW_UNROLL");
    assert_true(unrolled(after));   /* nor does it lose it */
    tc_ctx_free(before);
    tc_ctx_free(after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_attn),
        cmocka_unit_test(test_matmul_variants),
        cmocka_unit_test(test_rows_online),
        cmocka_unit_test(test_rows_pipe),
        cmocka_unit_test(test_colpart),
        cmocka_unit_test(test_scan),
        cmocka_unit_test(test_once_per_context),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
