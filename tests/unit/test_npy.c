/* test_npy.c - .npy reading and writing (tools/npy.c).
 *
 * The expected files below were written by numpy 1.24 (np.save), so these
 * tests check that we read what numpy writes and write what numpy reads, byte
 * for byte.  Each file is given as its version, its header dict as numpy
 * printed it, the header's padded size as numpy chose it, and the data bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy.h"

/* The dtypes by name (tensorc.h's DLPack types). */
#define DT_F32 dt_parse("f32")
#define DT_F64 dt_parse("f64")
#define DT_F16 dt_parse("f16")
#define DT_BF16 dt_parse("bf16")
#define DT_I32 dt_parse("i32")
#define DT_I64 dt_parse("i64")
#define DT_BOOL dt_parse("bool")

static char tmpdir[64];

static int setup(void **state)
{
    strcpy(tmpdir, "/tmp/tc_test_npy_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *tmp_path(const char *name)
{
    static char buf[8][128];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 128, "%s/%s", tmpdir, name);
    return p;
}

/* --- building files --------------------------------------------------------- */

typedef struct {
    unsigned char *bytes;
    size_t len;
} blob;

/* A .npy file as numpy writes it: magic, version, header length, the dict
 * padded with spaces to total header bytes (numpy's choice, given here), '\n',
 * then data. */
static blob make_npy(int major, const char *dict, size_t total, const void *data, size_t ndata)
{
    size_t pre = major == 1 ? 10 : 12;
    blob b;
    b.len = total + ndata;
    b.bytes = malloc(b.len);
    assert_non_null(b.bytes);
    memcpy(b.bytes, "\x93NUMPY", 6);
    b.bytes[6] = (unsigned char)major;
    b.bytes[7] = 0;
    size_t hl = total - pre;
    for (size_t i = 0; i < pre - 8; i++)
        b.bytes[8 + i] = (unsigned char)(hl >> (8 * i));
    size_t dl = strlen(dict);
    assert_true(pre + dl + 1 <= total);
    memcpy(b.bytes + pre, dict, dl);
    memset(b.bytes + pre + dl, ' ', total - pre - dl - 1);
    b.bytes[total - 1] = '\n';
    if (ndata)
        memcpy(b.bytes + total, data, ndata);
    return b;
}

static void put_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static blob get_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    blob b = {malloc(1 << 16), 0};
    assert_non_null(b.bytes);
    b.len = fread(b.bytes, 1, 1 << 16, f);
    fclose(f);
    return b;
}

static htensor tensor(DLDataType dt, int rank, const int64_t *shape, const double *vals)
{
    htensor t;
    assert_true(ht_alloc(&t, dt, rank, shape));
    int64_t n = ht_numel(&t);
    for (int64_t i = 0; vals && i < n; i++)
        ht_setf(&t, i, vals[i]); /* integral values for integer dtypes: exact */
    return t;
}

/* Write t, compare with numpy's bytes, read it back and compare values. */
static void check_write_matches(const htensor *t, blob want)
{
    char *msg = NULL;
    const char *p = tmp_path("w.npy");
    assert_int_equal(npy_write(p, t, &msg), TC_OK);
    blob got = get_file(p);
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.bytes, want.bytes, want.len);
    free(got.bytes);
    free(want.bytes);
    free(msg);
}

static int64_t numel(const htensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

/* --- numpy's own files ------------------------------------------------------- */

static const unsigned char f4_data[] = {0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0xc0};
static const unsigned char f8_data[] = {0, 0, 0, 0, 0, 0, 0x08, 0x40};
static const unsigned char i4_data[] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0,
                                        4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0};
static const unsigned char b1_data[] = {1, 0, 1};
/* np.array([0.1, 65504, 1e-7, -inf], dtype='<f2') */
static const unsigned char f2_data[] = {0x66, 0x2e, 0xff, 0x7b, 0x02, 0x00, 0x00, 0xfc};
static const unsigned char i8_data[] = {7, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const unsigned char f4q_data[] = {0x00, 0x00, 0x80, 0x3e}; /* 0.25 */

static void test_write_like_numpy(void **state)
{
    htensor t;
    t = tensor(DT_F32, 1, (int64_t[]){2}, (double[]){1.5, -2.0});
    check_write_matches(&t, make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                                     128, f4_data, sizeof f4_data));
    ht_free(&t);
    t = tensor(DT_F64, 0, NULL, (double[]){3.0});
    check_write_matches(&t, make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                                     128, f8_data, sizeof f8_data));
    ht_free(&t);
    t = tensor(DT_I32, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
    check_write_matches(&t, make_npy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
                                     128, i4_data, sizeof i4_data));
    ht_free(&t);
    t = tensor(DT_BOOL, 1, (int64_t[]){3}, (double[]){1, 0, 1});
    check_write_matches(&t, make_npy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                     128, b1_data, sizeof b1_data));
    ht_free(&t);
    /* f16: values are rounded on the way out exactly as numpy's astype does */
    t = tensor(DT_F16, 1, (int64_t[]){4}, (double[]){0.1, 65504, 1e-7, -INFINITY});
    check_write_matches(&t, make_npy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }",
                                     128, f2_data, sizeof f2_data));
    ht_free(&t);
    t = tensor(DT_I64, 2, (int64_t[]){0, 3}, NULL);
    check_write_matches(&t, make_npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (0, 3), }",
                                     128, NULL, 0));
    ht_free(&t);
}

static void read_blob(blob b, htensor *t, tc_status want)
{
    char *msg = NULL;
    const char *p = tmp_path("r.npy");
    put_file(p, b.bytes, b.len);
    free(b.bytes);
    tc_status st = npy_read(p, t, &msg);
    if (st != want)
        fail_msg("status %d, want %d: %s", (int)st, (int)want,
                 msg ? msg : "");
    free(msg);
}

static void test_read_numpy_files(void **state)
{
    htensor t;
    read_blob(make_npy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", 128,
                       i4_data, sizeof i4_data), &t, TC_OK);
    assert_true(dt_same(t.dtype, dt_parse("i32")));
    assert_int_equal(t.rank, 2);
    assert_int_equal(t.shape[0], 2);
    assert_int_equal(t.shape[1], 3);
    for (int i = 0; i < 6; i++)
        assert_true(ht_getf(&t, i) == i + 1);
    ht_free(&t);

    read_blob(make_npy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }", 128,
                       f2_data, sizeof f2_data), &t, TC_OK);
    assert_true(dt_same(t.dtype, dt_parse("f16")));
    assert_true(ht_getf(&t, 0) == 0.0999755859375);   /* the f16 nearest 0.1 */
    assert_true(ht_getf(&t, 1) == 65504);
    assert_true(ht_getf(&t, 2) == ldexp(1, -23));      /* subnormal 2 * 2^-24 */
    assert_true(isinf(ht_getf(&t, 3)) && ht_getf(&t, 3) < 0);
    ht_free(&t);

    read_blob(make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 128,
                       f8_data, sizeof f8_data), &t, TC_OK);
    assert_true(dt_same(t.dtype, dt_parse("f64")));
    assert_int_equal(t.rank, 0);
    assert_true(ht_getf(&t, 0) == 3.0);
    ht_free(&t);

    read_blob(make_npy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 128,
                       b1_data, sizeof b1_data), &t, TC_OK);
    assert_true(dt_same(t.dtype, dt_parse("bool")));
    assert_true(ht_getf(&t, 0) == 1 && ht_getf(&t, 1) == 0 && ht_getf(&t, 2) == 1);
    ht_free(&t);

    read_blob(make_npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (0, 3), }", 128,
                       NULL, 0), &t, TC_OK);
    assert_true(dt_same(t.dtype, dt_parse("i64")));
    assert_int_equal(t.rank, 2);
    assert_int_equal(t.shape[0], 0);
    assert_int_equal(t.shape[1], 3);
    assert_non_null(t.data); /* a pointer, even when empty */
    ht_free(&t);

    /* versions 2.0 and 3.0 have a 4-byte header length */
    read_blob(make_npy(2, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", 128,
                       i8_data, sizeof i8_data), &t, TC_OK);
    assert_true(dt_same(t.dtype, dt_parse("i64")));
    assert_true(ht_getf(&t, 0) == 7 && ht_getf(&t, 1) == -8);
    ht_free(&t);
    read_blob(make_npy(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 128,
                       f4q_data, sizeof f4q_data), &t, TC_OK);
    assert_true(dt_same(t.dtype, dt_parse("f32")));
    assert_true(ht_getf(&t, 0) == 0.25);
    ht_free(&t);
}

/* Harmless spellings other writers produce are accepted. */
static void test_read_header_variations(void **state)
{
    static const char *dicts[] = {
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,)}",
        "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}",
        "{'descr':'<f4','fortran_order':True,'shape':(2,),}",   /* 1-D: order is moot */
        "{'descr': '=f4', 'fortran_order': False, 'shape': (2L,), }",
    };
    for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
        htensor t;
        read_blob(make_npy(1, dicts[i], 128, f4_data, sizeof f4_data), &t, TC_OK);
        assert_int_equal(t.rank, 1);
        assert_int_equal(t.shape[0], 2);
        assert_true(ht_getf(&t, 0) == 1.5 && ht_getf(&t, 1) == -2.0);
        ht_free(&t);
    }
}

/* --- round trips -------------------------------------------------------------- */

static void round_trip(DLDataType dt, int rank, const int64_t *shape, const double *vals,
                       DLDataType want_dt)
{
    char *msg = NULL;
    htensor t = tensor(dt, rank, shape, vals), r;
    const char *p = tmp_path("rt.npy");
    assert_int_equal(npy_write(p, &t, &msg), TC_OK);
    tc_status st = npy_read(p, &r, &msg);
    if (st != TC_OK)
        fail_msg("%s", msg);
    assert_true(dt_same(r.dtype, want_dt));
    assert_int_equal(r.rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(r.shape[i], shape[i]);
    for (int64_t i = 0; i < numel(&t); i++) {
        if (isnan(ht_getf(&t, i)))
            assert_true(isnan(ht_getf(&r, i)));
        else if (ht_getf(&t, i) != ht_getf(&r, i) || signbit(ht_getf(&t, i)) != signbit(ht_getf(&r, i)))
            fail_msg("%s element %lld: wrote %.17g, read %.17g", dt_name(dt),
                     (long long)i, ht_getf(&t, i), ht_getf(&r, i));
    }
    ht_free(&t);
    ht_free(&r);
    /* the temporary file was renamed away */
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    assert_int_not_equal(access(tmp, F_OK), 0);
    free(msg);
}

static void test_round_trip_every_dtype(void **state)
{
    int64_t s23[] = {2, 3};
    round_trip(DT_F32, 2, s23, (double[]){0.0, -0.0, (double)(float)(1.0 / 3),
                                          3.4028234663852886e38, INFINITY, NAN}, DT_F32);
    round_trip(DT_F64, 2, s23, (double[]){1.0 / 3, -0.0, 1e308, 4.9e-324, -INFINITY, NAN}, DT_F64);
    round_trip(DT_F16, 2, s23, (double[]){65504, -ldexp(1, -24), ldexp(1, -14), 0.5, -0.0, NAN},
               DT_F16);
    round_trip(DT_I32, 2, s23, (double[]){2147483647.0, -2147483648.0, 0, -1, 1, 123456}, DT_I32);
    round_trip(DT_I64, 2, s23, (double[]){9007199254740992.0, -9007199254740992.0, 0, -1,
                                          -9223372036854775808.0, 42}, DT_I64);
    round_trip(DT_BOOL, 2, s23, (double[]){1, 0, 0, 1, 1, 1}, DT_BOOL);
    /* bf16 travels as <f4 (exactly) and comes back as f32 */
    round_trip(DT_BF16, 1, (int64_t[]){4}, (double[]){1.0078125, -196608.0,
                                                       ldexp(1, -133), -0.0}, DT_F32);
    /* 0-d and empty arrays of every dtype */
    DLDataType all[] = {DT_F32, DT_F64, DT_F16, DT_I32, DT_I64, DT_BOOL};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        round_trip(all[i], 0, NULL, (double[]){1}, all[i]);
        round_trip(all[i], 1, (int64_t[]){0}, NULL, all[i]);
        round_trip(all[i], 3, (int64_t[]){2, 0, 5}, NULL, all[i]);
    }
    /* rank 8 with large dims still has a header that fits and is aligned */
    round_trip(DT_F32, 8, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1}, (double[]){2.5}, DT_F32);
}

/* i64 in the int64 lane, exactly: INT64_MAX, INT64_MIN and INT64_MAX - 1 ..
 * INT64_MAX - 512 (no double holds them) are read from numpy's bytes and
 * written back byte for byte (issue 11: they came back as INT64_MIN). */
static void test_i64_exact(void **state)
{
    (void)state;
    enum { N = 514 };
    int64_t v[N];
    unsigned char bytes[N * 8];
    v[0] = INT64_MAX;
    v[1] = INT64_MIN;
    for (int i = 2; i < N; i++)
        v[i] = INT64_MAX - (i - 1);
    for (int i = 0; i < N; i++)
        for (int b = 0; b < 8; b++)
            bytes[i * 8 + b] = (unsigned char)((uint64_t)v[i] >> (8 * b));
    htensor t;
    read_blob(make_npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (514,), }", 128,
                       bytes, sizeof bytes), &t, TC_OK);
    assert_true(dt_same(t.dtype, dt_parse("i64")));
    for (int i = 0; i < N; i++)
        if (ht_geti(&t, i) != v[i])
            fail_msg("element %d read as %lld, want %lld", i, ht_geti(&t, i), (long long)v[i]);
    check_write_matches(&t, make_npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (514,), }",
                                     128, bytes, sizeof bytes));
    ht_free(&t);
    /* i32 wraps as a store does */
    assert_true(ht_alloc(&t, dt_parse("i32"), 1, (int64_t[]){2}));
    ht_seti(&t, 0, INT32_MIN);
    ht_seti(&t, 1, (int64_t)1 << 32 | 5);
    check_write_matches(&t, make_npy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
                                     128, (const unsigned char[]){0, 0, 0, 0x80, 5, 0, 0, 0}, 8));
    ht_free(&t);
}

/* Every f16 bit pattern survives read then write unchanged (NaNs stay NaN). */
static void test_f16_all_bits(void **state)
{
    static unsigned char data[2 * 65536];
    for (int i = 0; i < 65536; i++) {
        data[2 * i] = (unsigned char)(i & 0xff);
        data[2 * i + 1] = (unsigned char)(i >> 8);
    }
    blob b = make_npy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (65536,), }", 128,
                      data, sizeof data);
    htensor t;
    read_blob(b, &t, TC_OK);
    char *msg = NULL;
    const char *p = tmp_path("h.npy");
    assert_int_equal(npy_write(p, &t, &msg), TC_OK);
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    unsigned char *got = malloc(128 + sizeof data);
    assert_int_equal(fread(got, 1, 128 + sizeof data, f), 128 + sizeof data);
    fclose(f);
    for (int i = 0; i < 65536; i++) {
        unsigned v = got[128 + 2 * i] | (unsigned)got[128 + 2 * i + 1] << 8;
        bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
        if (nan)
            assert_true((v & 0x7c00) == 0x7c00 && (v & 0x3ff));
        else if (v != (unsigned)i)
            fail_msg("f16 bits 0x%04x came back as 0x%04x", i, v);
    }
    free(got);
    ht_free(&t);
    free(msg);
}

/* Rounding to f16 on store: ties to even, overflow to inf, underflow to 0. */
static void test_f16_rounding(void **state)
{
    char *msg = NULL;
    double in[] = {65520, 65519.99, ldexp(3, -25), ldexp(1, -26), 1 + ldexp(1, -11), 1 + ldexp(3, -11)};
    double want[] = {INFINITY, 65504, ldexp(1, -23), 0, 1, 1 + ldexp(1, -9)};
    htensor t = tensor(DT_F16, 1, (int64_t[]){6}, in), r;
    const char *p = tmp_path("hr.npy");
    assert_int_equal(npy_write(p, &t, &msg), TC_OK);
    assert_int_equal(npy_read(p, &r, &msg), TC_OK);
    for (int i = 0; i < 6; i++)
        if (ht_getf(&r, i) != want[i])
            fail_msg("f16(%.17g) = %.17g, want %.17g", in[i], ht_getf(&r, i), want[i]);
    ht_free(&t);
    ht_free(&r);
    free(msg);
}

/* --- bad files --------------------------------------------------------------- */

/* Read bytes that must be refused with st and a message containing want and
 * naming the file. */
static void refuse(const void *bytes, size_t n, tc_status st, const char *want)
{
    char *msg = NULL;
    const char *p = tmp_path("bad.npy");
    put_file(p, bytes, n);
    htensor t;
    tc_status got = npy_read(p, &t, &msg);
    if (got != st)
        fail_msg("status %d, want %d (%s)", (int)got, (int)st,
                 msg ? msg : "no message");
    assert_non_null(msg);
    if (!strstr(msg, want) || !strstr(msg, p))
        fail_msg("message '%s' lacks '%s' or the file name", msg, want);
    assert_null(t.data);
    free(msg);
}

static void refuse_dict(const char *dict, const char *want)
{
    blob b = make_npy(1, dict, 128, f4_data, sizeof f4_data);
    refuse(b.bytes, b.len, TC_ERR_INVALID_ARG, want);
    free(b.bytes);
}

static void test_malformed_headers(void **state)
{
    refuse("", 0, TC_ERR_INVALID_ARG, "not a .npy file");
    refuse("hello world, this is text", 25, TC_ERR_INVALID_ARG, "not a .npy file");
    refuse("\x93NUMPY\x04\x00\x10\x00", 10, TC_ERR_INVALID_ARG, "version 4.0");
    refuse("\x93NUMPY\x01\x00\xff\x00{'descr'", 19, TC_ERR_INVALID_ARG, "ends inside the header");
    refuse("\x93NUMPY\x02\x00\x10", 9, TC_ERR_INVALID_ARG, "not a .npy file");
    refuse("\x93NUMPY\x02\x00\x10\x00", 10, TC_ERR_INVALID_ARG, "ends inside the header length");
    refuse("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12, TC_ERR_INVALID_ARG, "ends inside the header");
    refuse_dict("['descr', '<f4']", "not a dict");
    refuse_dict("{'descr': '<f4', 'shape': (2,), }", "no 'fortran_order'");
    refuse_dict("{'descr': '<f4', 'fortran_order': False}", "no 'shape'");
    refuse_dict("{'fortran_order': False, 'shape': (2,)}", "no 'descr'");
    refuse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
                "unexpected or repeated key 'extra'");
    refuse_dict("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                "repeated key 'descr'");
    refuse_dict("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", "not True or False");
    refuse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "non-negative integers");
    refuse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", "not a tuple");
    refuse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "expected ',' or ')'");
    refuse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) 'x'}", "expected ',' or '}'");
    refuse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", "after the header");
    refuse_dict("{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", "expected ':'");
    refuse_dict("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", "'<f4, '");
    refuse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
                "non-negative integers");
    refuse_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}",
                "more than 8 dimensions");
    refuse_dict("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", "big-endian");
    refuse_dict("{'descr': '<u2', 'fortran_order': False, 'shape': (2,)}", "'<u2'");
    refuse_dict("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", "does not support");
    refuse_dict("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", "structured");
    refuse_dict("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", "Fortran order");
}

static void test_truncated_and_oversized(void **state)
{
    /* data shorter than the shape says */
    blob b = make_npy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", 128,
                      i4_data, sizeof i4_data - 1);
    refuse(b.bytes, b.len, TC_ERR_INVALID_ARG, "needs 24 bytes of data, but it has 23");
    free(b.bytes);
    /* a shape whose byte count overflows 64 bits is refused, not allocated */
    b = make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }",
                 128, f8_data, sizeof f8_data);
    refuse(b.bytes, b.len, TC_ERR_INVALID_ARG, "overflows");
    free(b.bytes);
    b = make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 1000000), }",
                 128, f8_data, sizeof f8_data);
    refuse(b.bytes, b.len, TC_ERR_INVALID_ARG, "truncated");
    free(b.bytes);
    /* a huge shape containing 0 is an empty array, and fine */
    b = make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807, 0), }",
                 128, NULL, 0);
    htensor t;
    read_blob(b, &t, TC_OK);
    assert_int_equal(t.shape[1], 0);
    ht_free(&t);
}

static void test_io_errors(void **state)
{
    char *msg = NULL;
    htensor t;
    assert_int_equal(npy_read(tmp_path("missing.npy"), &t, &msg), TC_ERR_IO);
    assert_non_null(strstr(msg, "cannot read"));
    assert_non_null(strstr(msg, "missing.npy': No such file or directory"));
    assert_int_equal(npy_read(tmpdir, &t, &msg), TC_ERR_IO);
    assert_non_null(strstr(msg, "Is a directory"));

    htensor w = tensor(DT_F32, 1, (int64_t[]){1}, (double[]){1});
    assert_int_equal(npy_write(tmp_path("no/such/dir/x.npy"), &w, &msg), TC_ERR_IO);
    assert_non_null(strstr(msg, "cannot write"));
    assert_non_null(strstr(msg, "x.npy': directory '"));
    assert_non_null(strstr(msg, "no/such/dir': No such file or directory"));
    w.dtype = (DLDataType){kDLOpaqueHandle, 8, 1}; /* no dtype of tensorc */
    assert_int_equal(npy_write(tmp_path("y.npy"), &w, &msg), TC_ERR_INVALID_ARG);
    assert_int_not_equal(access(tmp_path("y.npy"), F_OK), 0);
    ht_free(&w);
    free(msg);
}

/* A set of outputs: a failure before the commit leaves every file as it
 * was, no temporary behind, and never touches a planted PATH.tmp. */
static void test_outputs_all_or_nothing(void **state)
{
    (void)state;
    char *msg = NULL;
    char a[256];
    snprintf(a, sizeof a, "%s", tmp_path("a.npy"));
    FILE *f = fopen(a, "w");
    fputs("old", f);
    fclose(f);
    char planted[512];
    snprintf(planted, sizeof planted, "%s.tmp", a);
    f = fopen(planted, "w");
    fputs("planted", f);
    fclose(f);
    htensor w = tensor(DT_F32, 1, (int64_t[]){1}, (double[]){1});
    tc_outset *s = tc_outset_new();
    int ia, ib, fd;
    assert_int_equal(tc_outset_add(s, a, "--output a", &ia), TC_OK);
    assert_int_equal(tc_outset_add(s, tmp_path("b.npy"), "--output b", &ib), TC_OK);
    assert_int_equal(npy_write_to(s, ia, a, &w, &msg), TC_OK);
    assert_int_equal(tc_outset_open(s, ib, &fd), TC_OK);
    assert_int_equal(tc_outset_done(s, ib, 0, ENOSPC), TC_ERR_IO);
    assert_non_null(strstr(tc_outset_errmsg(s), "--output b: cannot write"));
    assert_non_null(strstr(tc_outset_errmsg(s), "No space left on device"));
    tc_outset_free(s);
    char buf[16] = {0};
    f = fopen(a, "r");
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "old");
    f = fopen(planted, "r");
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "planted");
    assert_int_not_equal(access(tmp_path("b.npy"), F_OK), 0);
    /* only a.npy, a.npy.tmp and what other tests left: no .tensorc-out-* */
    DIR *dir = opendir(tmpdir);
    struct dirent *de;
    while ((de = readdir(dir)))
        assert_null(strstr(de->d_name, "tensorc-out"));
    closedir(dir);
    ht_free(&w);
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_like_numpy),
        cmocka_unit_test(test_i64_exact),
        cmocka_unit_test(test_outputs_all_or_nothing),
        cmocka_unit_test(test_read_numpy_files),
        cmocka_unit_test(test_read_header_variations),
        cmocka_unit_test(test_round_trip_every_dtype),
        cmocka_unit_test(test_f16_all_bits),
        cmocka_unit_test(test_f16_rounding),
        cmocka_unit_test(test_malformed_headers),
        cmocka_unit_test(test_truncated_and_oversized),
        cmocka_unit_test(test_io_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
