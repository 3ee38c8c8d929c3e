/* knobs.c - the tuning knobs read from the environment (knobs.h). */
#include "knobs.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const tc_knobs knobs_default = {
    .matmul = KNOB_MM_AUTO, .matmul_epilogue = true, .matmul_lora = false, .matmul_norm = true,
    .matmul_dual = true, .attention = true,
    .matmul_kslice = -1, .matmul_stages = -1, .matmul_bk = -1, .matmul_resident = -1, .matmul_fence = -1, .matmul_order = -1, .matmul_stream = -1, .pw_unroll = -1, .full_unroll = -1, .col_unroll = -1,
    .tile_whole = -1, .tile_vec = -1, .fe_steps = -1, .fe_param = -1, .pw_once = -1, .pw_block = -1, .full_grid = -1, .col_split = -1, .col_x = -1, .col_y = -1,
    .scan_checkpoint = -1, .attn_chunk = -1, .attn_warps = -1, .attn_prefetch = -1, .attn_ring = -1, .attn_split = -1,
    .rows_online = -1, .online_block = -1, .online_vec = -1,
    .cluster_max = -1, .cluster_block = -1, .blas_early = -1, .foreach_wide = -1, .foreach_small = -1, .rows_regs = -1, .rows_block = -1,
    .fast_math = -1, .max_nan = -1, .load_ef = -1, .rows_pipe = -1, .rows_ticket = -1, .rows_maxreg = -1, .rows_keep = -1, .rows_pair = -1, .cluster_push = -1, .scan_unroll = -1, .scan_hoist = -1,
    .col_rows = -1, .colpart_prefetch = -1,
    .matmul_bn = -1,
    .matmul_kauto = -1,
    .scan_lse = -1,
    .col_occ = -1, .pw_occ = -1, .col_order = -1,
    .scan_async = -1,
    .scan_minblocks = -1,
    .scan_pair_lse = -1,
};

const char *const knob_mm_streams[KNOB_MM_STREAM_N] = {"cpasync", "l2pf", "occ5", "occ6"};

/* The integer knobs: name, field, range, and what a value must also be. */
enum { ANY, POW2, MULT16, MULT64 };
static const struct {
    const char *name;
    size_t off;
    long lo, hi;
    int also;
    bool warn;              /* a bad value is warned about (once a process), not ignored */
} INTS[] = {
    {"TENSORC_MATMUL_KSLICE", offsetof(tc_knobs, matmul_kslice), 64, 1 << 30, MULT64, false},
    {"TENSORC_MATMUL_STAGES", offsetof(tc_knobs, matmul_stages), 2, 8, ANY, false},
    {"TENSORC_MATMUL_BK", offsetof(tc_knobs, matmul_bk), 32, 128, POW2, false},
    {"TENSORC_MATMUL_RESIDENT", offsetof(tc_knobs, matmul_resident), 0, 65536, ANY, false},
    {"TENSORC_MATMUL_FENCE", offsetof(tc_knobs, matmul_fence), 0, 2, ANY, false},
    {"TENSORC_MATMUL_ORDER", offsetof(tc_knobs, matmul_order), 0, 1, ANY, false},
    {"TENSORC_PW_UNROLL", offsetof(tc_knobs, pw_unroll), 1, 8, POW2, false},
    {"TENSORC_FULL_UNROLL", offsetof(tc_knobs, full_unroll), 1, 8, POW2, false},
    {"TENSORC_COL_UNROLL", offsetof(tc_knobs, col_unroll), 1, 16, ANY, false},
    {"TENSORC_TILE_WHOLE", offsetof(tc_knobs, tile_whole), 0, 1, ANY, false},
    {"TENSORC_TILE_VEC", offsetof(tc_knobs, tile_vec), 0, 2, ANY, false},
    {"TENSORC_FE_STEPS", offsetof(tc_knobs, fe_steps), 1, 64, ANY, false},
    {"TENSORC_PW_BLOCK", offsetof(tc_knobs, pw_block), 32, 1024, POW2, false},
    {"TENSORC_PW_ONCE", offsetof(tc_knobs, pw_once), 0, 1, ANY, false},
    {"TENSORC_FE_PARAM", offsetof(tc_knobs, fe_param), 0, 1, ANY, false},
    {"TENSORC_FULL_GRID", offsetof(tc_knobs, full_grid), 1, 65536, ANY, false},
    {"TENSORC_COL_SPLIT", offsetof(tc_knobs, col_split), 2, 1024, ANY, false},
    {"TENSORC_COL_Y", offsetof(tc_knobs, col_y), 1, 256, POW2, false},
    {"TENSORC_COL_X", offsetof(tc_knobs, col_x), 16, 256, MULT16, false},
    {"TENSORC_SCAN_CHECKPOINT", offsetof(tc_knobs, scan_checkpoint), 0, 64, ANY, false},
    {"TENSORC_ATTN_CHUNK", offsetof(tc_knobs, attn_chunk), 64, 512, POW2, false},
    {"TENSORC_ATTN_WARPS", offsetof(tc_knobs, attn_warps), 4, 8, POW2, false},
    {"TENSORC_ATTN_PREFETCH", offsetof(tc_knobs, attn_prefetch), 1, 2, ANY, false},
    {"TENSORC_ATTN_RING", offsetof(tc_knobs, attn_ring), 0, 8, ANY, false},
    {"TENSORC_ATTN_SPLIT", offsetof(tc_knobs, attn_split), 4, 16, POW2, false},
    {"TENSORC_ROWS_ONLINE", offsetof(tc_knobs, rows_online), 0, 1, ANY, false},
    {"TENSORC_ONLINE_BLOCK", offsetof(tc_knobs, online_block), 32, 1024, POW2, false},
    {"TENSORC_ONLINE_VEC", offsetof(tc_knobs, online_vec), 0, 1, ANY, false},
    {"TENSORC_CLUSTER_MAX", offsetof(tc_knobs, cluster_max), 1, 16, POW2, false},
    {"TENSORC_CLUSTER_BLOCK", offsetof(tc_knobs, cluster_block), 32, 1024, POW2, false},
    {"TENSORC_BLAS_EARLY", offsetof(tc_knobs, blas_early), 0, 1, ANY, false},
    {"TENSORC_FOREACH_WIDE", offsetof(tc_knobs, foreach_wide), 0, 1, ANY, true},
    {"TENSORC_FOREACH_SMALL", offsetof(tc_knobs, foreach_small), 0, 1, ANY, false},
    {"TENSORC_ROWS_REGS", offsetof(tc_knobs, rows_regs), 8, 32, POW2, false},
    {"TENSORC_ROWS_BLOCK", offsetof(tc_knobs, rows_block), 64, 1024, POW2, false},
    {"TENSORC_LOAD_EF", offsetof(tc_knobs, load_ef), 0, 1, ANY, false},
    {"TENSORC_ROWS_PIPE", offsetof(tc_knobs, rows_pipe), 0, 2, ANY, false},
    {"TENSORC_ROWS_TICKET", offsetof(tc_knobs, rows_ticket), 0, 1, ANY, false},
    {"TENSORC_ROWS_MAXREG", offsetof(tc_knobs, rows_maxreg), 32, 128, ANY, false},
    {"TENSORC_ROWS_KEEP", offsetof(tc_knobs, rows_keep), 0, 1, ANY, false},
    {"TENSORC_CLUSTER_PUSH", offsetof(tc_knobs, cluster_push), 0, 1, ANY, false},
    {"TENSORC_ROWS_PAIR", offsetof(tc_knobs, rows_pair), 0, 2, ANY, false},
    {"TENSORC_FAST_MATH", offsetof(tc_knobs, fast_math), 0, 1, ANY, false},
    {"TENSORC_MAX_NAN", offsetof(tc_knobs, max_nan), 0, 1, ANY, false},
    {"TENSORC_SCAN_UNROLL", offsetof(tc_knobs, scan_unroll), 1, 16, POW2, false},
    {"TENSORC_SCAN_HOIST", offsetof(tc_knobs, scan_hoist), 0, 1, ANY, false},
    {"TENSORC_COL_ROWS", offsetof(tc_knobs, col_rows), 1, 1024, ANY, false},
    {"TENSORC_COLPART_PREFETCH", offsetof(tc_knobs, colpart_prefetch), 0, 1, ANY, false},
    {"TENSORC_MATMUL_BN", offsetof(tc_knobs, matmul_bn), 64, 256, POW2, false},
    {"TENSORC_MATMUL_KAUTO", offsetof(tc_knobs, matmul_kauto), 0, 2, ANY, false},
    {"TENSORC_SCAN_LSE", offsetof(tc_knobs, scan_lse), 0, 1, ANY, false},
    {"TENSORC_COL_OCC", offsetof(tc_knobs, col_occ), 1, 32, ANY, false},
    {"TENSORC_PW_OCC", offsetof(tc_knobs, pw_occ), 1, 32, ANY, false},
    {"TENSORC_COL_ORDER", offsetof(tc_knobs, col_order), 0, 1, ANY, false},
    {"TENSORC_SCAN_ASYNC", offsetof(tc_knobs, scan_async), 0, 1, ANY, false},
    {"TENSORC_SCAN_MINBLOCKS", offsetof(tc_knobs, scan_minblocks), 1, 16, ANY, false},
    {"TENSORC_SCAN_PAIR_LSE", offsetof(tc_knobs, scan_pair_lse), 0, 1, ANY, false},
};
enum { NINTS = sizeof INTS / sizeof INTS[0] };

static atomic_flag warned[NINTS];

static int *field(tc_knobs *k, int i)
{
    return (int *)(void *)((char *)k + INTS[i].off);
}

static int get(const tc_knobs *k, int i)
{
    return *(const int *)(const void *)((const char *)k + INTS[i].off);
}

/* the value of INTS[i] in s, or -1 */
static int parse(int i, const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    bool ok = end != s && !*end && errno == 0 && v >= INTS[i].lo && v <= INTS[i].hi &&
              (INTS[i].also != POW2 || (v & (v - 1)) == 0) &&
              (INTS[i].also != MULT16 || v % 16 == 0) && (INTS[i].also != MULT64 || v % 64 == 0);
    if (ok)
        return (int)v;
    if (INTS[i].warn && !atomic_flag_test_and_set(&warned[i]))
        fprintf(stderr, "tensorc: warning: %s='%s' is not an integer from %ld to %ld: ignored "
                "(taken as %ld)\n", INTS[i].name, s, INTS[i].lo, INTS[i].hi, INTS[i].lo);
    return -1;
}

static const char *env(const char *name)
{
    const char *s = getenv(name);
    return s && *s ? s : NULL;
}

static bool is(const char *name, const char *value)
{
    const char *s = env(name);
    return s && strcmp(s, value) == 0;
}

void knobs_from_env(tc_knobs *k)
{
    /* the defaults first, then what the environment sets (the knobs are
     * compared as their text, knobs_text: padding bytes never count) */
    memcpy(k, &knobs_default, sizeof *k);
    k->matmul = is("TENSORC_MATMUL", "cublas")      ? KNOB_MM_CUBLAS
                : is("TENSORC_MATMUL", "generated") ? KNOB_MM_GENERATED
                                                    : KNOB_MM_AUTO;
    k->matmul_epilogue = !is("TENSORC_MATMUL_EPILOGUE", "off");
    k->matmul_lora = is("TENSORC_MATMUL_LORA", "on");
    k->matmul_norm = !is("TENSORC_MATMUL_NORM", "off");
    k->matmul_dual = !is("TENSORC_MATMUL_DUAL", "off");
    k->attention = !is("TENSORC_ATTENTION", "off");
    for (int i = 0; i < NINTS; i++) {
        const char *s = env(INTS[i].name);
        *field(k, i) = s ? parse(i, s) : -1;
    }
    if (is("TENSORC_SCAN_CHECKPOINT", "off"))
        k->scan_checkpoint = 0;
    k->matmul_stream = -1;
    const char *st = env("TENSORC_MATMUL_STREAM");
    for (int i = 0; st && i < KNOB_MM_STREAM_N; i++)
        if (strcmp(st, knob_mm_streams[i]) == 0)
            k->matmul_stream = i;
    static atomic_flag warned_stream;
    if (st && k->matmul_stream < 0 && !atomic_flag_test_and_set(&warned_stream))
        fprintf(stderr, "tensorc: warning: TENSORC_MATMUL_STREAM='%s' is not cpasync, l2pf, occ5 or occ6: "
                "ignored\n", st);
}

/* " NAME=VALUE" (no space first) appended to buf, cut short at cap */
static void add(char *buf, size_t cap, const char *name, const char *value)
{
    size_t at = strlen(buf);
    snprintf(buf + at, cap - at, "%s%s=%s", at ? " " : "", name, value);
}

void knobs_text(const tc_knobs *k, char *buf, size_t cap)
{
    if (!cap)
        return;
    buf[0] = 0;
    if (k->matmul != KNOB_MM_AUTO)
        add(buf, cap, "TENSORC_MATMUL", k->matmul == KNOB_MM_CUBLAS ? "cublas" : "generated");
    if (!k->matmul_epilogue)
        add(buf, cap, "TENSORC_MATMUL_EPILOGUE", "off");
    if (k->matmul_lora)
        add(buf, cap, "TENSORC_MATMUL_LORA", "on");
    if (!k->matmul_norm)
        add(buf, cap, "TENSORC_MATMUL_NORM", "off");
    if (!k->matmul_dual)
        add(buf, cap, "TENSORC_MATMUL_DUAL", "off");
    if (!k->attention)
        add(buf, cap, "TENSORC_ATTENTION", "off");
    if (k->matmul_stream >= 0)
        add(buf, cap, "TENSORC_MATMUL_STREAM", knob_mm_streams[k->matmul_stream]);
    for (int i = 0; i < NINTS; i++)
        if (get(k, i) >= 0) {
            char v[16];
            snprintf(v, sizeof v, "%d", get(k, i));
            add(buf, cap, INTS[i].name, v);
        }
}
