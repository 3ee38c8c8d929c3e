/* test_run.c - tc_run's argument checking, on a machine without a GPU.
 *
 * tc_run checks every argument on the host before it touches the driver
 * (tensorc.h), so here, with TENSORC_LIBCUDA pointing nowhere, a call with
 * good arguments must come back TC_ERR_NO_DEVICE with the driver's message,
 * and every bad argument TC_ERR_INVALID_ARG with a message that names it.
 * The tensors are DLTensors on "cuda:0" whose data pointers are never
 * dereferenced (nothing runs), so any aligned address will do.
 * Also: tc_ctx_create_ex's options, tc_program_source, and that a context
 * that never found a GPU keeps no GPU state. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "rt.h"
#include "tensorc.h"

static const char SRC[] =
    "fn f(x: f32[N, D], g: f32[D], k: i32, s: f32 = 0.5, on: bool = true) -> (y: f32[N, D], r: f32[N]) {\n"
    "    z = where(on, x * g * k + s, x)\n"
    "    return z, sum(z, axis=-1)\n"
    "}\n"
    "fn upd(p: inout f32[*], g: f32[*], lr: f32) {\n"
    "    p = p - lr * g\n"
    "}\n"
    "fn half(x: f16[N]) -> f16[N] {\n"
    "    return x * 2\n"
    "}\n"
    "fn gen(x: T[N]) -> T[N] {\n"
    "    return x * 2\n"
    "}\n";

typedef struct {
    tc_ctx *ctx;
    tc_program *p;
    int64_t xs[2], gs[1], ys[2], rs[1];
    DLTensor x, g, y, r;
} fixture;

static fixture F;

static DLTensor tensor(uintptr_t addr, int ndim, int64_t *shape, uint8_t code, uint8_t bits)
{
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = (void *)addr;
    t.device.device_type = kDLCUDA;
    t.device.device_id = 0;
    t.ndim = ndim;
    t.shape = shape;
    t.dtype.code = code;
    t.dtype.bits = bits;
    t.dtype.lanes = 1;
    return t;
}

static int setup(void **state)
{
    (void)state;
    setenv("TENSORC_LIBCUDA", "/nonexistent/tensorc-test/libcuda.so.1", 1);
    if (tc_ctx_create(&F.ctx) != TC_OK)
        return 1;
    if (tc_compile(F.ctx, SRC, strlen(SRC), "run.tc", &F.p) != TC_OK) {
        fprintf(stderr, "%s", tc_errmsg(F.ctx));
        return 1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tc_program_free(F.p);
    tc_ctx_free(F.ctx);
    return 0;
}

/* x [4, 3], g [3], y [4, 3], r [4], at distinct aligned addresses. */
static void reset(void)
{
    F.xs[0] = 4, F.xs[1] = 3, F.gs[0] = 3, F.ys[0] = 4, F.ys[1] = 3, F.rs[0] = 4;
    F.x = tensor(0x100000, 2, F.xs, kDLFloat, 32);
    F.g = tensor(0x200000, 1, F.gs, kDLFloat, 32);
    F.y = tensor(0x300000, 2, F.ys, kDLFloat, 32);
    F.r = tensor(0x400000, 1, F.rs, kDLFloat, 32);
}

/* The arguments of a good call of f, by name. */
static int good_args(tc_arg *a)
{
    reset();
    a[0] = tc_arg_tensor("x", &F.x);
    a[1] = tc_arg_tensor("g", &F.g);
    a[2] = tc_arg_int("k", 3);
    a[3] = tc_arg_tensor("y", &F.y);
    a[4] = tc_arg_tensor("r", &F.r);
    return 5;
}

static void expect(tc_status st, tc_status want, const char *text)
{
    if (st != want || !strstr(tc_errmsg(F.ctx), text))
        fail_msg("got %s: %s\nwant %s containing: %s", tc_status_str(st), tc_errmsg(F.ctx),
                 tc_status_str(want), text);
}

static void test_good_call_needs_device(void **state)
{
    (void)state;
    tc_arg a[8];
    int n = good_args(a);
    expect(tc_run(F.p, "f", a, (size_t)n, NULL), TC_ERR_NO_DEVICE,
           "no CUDA driver (/nonexistent/tensorc-test/libcuda.so.1 not found)");
    /* no GPU state is kept by a context that never found one */
    assert_null(F.ctx->rt);
    /* by position: x, g, k, s, on, then the outputs y, r */
    reset();
    tc_arg pos[7] = {tc_arg_tensor(NULL, &F.x), tc_arg_tensor(NULL, &F.g), tc_arg_int(NULL, 3),
                     tc_arg_float(NULL, 0.25), tc_arg_bool(NULL, 0), tc_arg_tensor(NULL, &F.y),
                     tc_arg_tensor(NULL, &F.r)};
    expect(tc_run(F.p, "f", pos, 7, NULL), TC_ERR_NO_DEVICE, "no CUDA driver");
    /* a float scalar takes an integer; strides spelled out are fine, and
     * a dim of size 1 may have any stride */
    n = good_args(a);
    a[n++] = tc_arg_int("s", 2);
    int64_t xst[2] = {3, 1};
    F.x.strides = xst;
    int64_t one[2] = {1, 3}, one_st[2] = {999, 1};
    F.xs[0] = 1, F.ys[0] = 1, F.rs[0] = 1;
    F.y.shape = one;
    F.y.strides = one_st;
    expect(tc_run(F.p, "f", a, (size_t)n, NULL), TC_ERR_NO_DEVICE, "no CUDA driver");
    /* DLTensor byte offsets count, kDLCUDAManaged is device memory */
    n = good_args(a);
    F.g.byte_offset = 8;
    F.g.device.device_type = kDLCUDAManaged;
    expect(tc_run(F.p, "f", a, (size_t)n, NULL), TC_ERR_NO_DEVICE, "no CUDA driver");
}

static void test_inout_and_star(void **state)
{
    (void)state;
    /* p: inout f32[*] of any shape; its result goes back into p */
    int64_t ps[2] = {3, 4}, gs[1] = {12};
    DLTensor p = tensor(0x100000, 2, ps, kDLFloat, 32), g = tensor(0x200000, 1, gs, kDLFloat, 32);
    tc_arg a[3] = {tc_arg_tensor("p", &p), tc_arg_tensor("g", &g), tc_arg_float("lr", 0.1)};
    expect(tc_run(F.p, "upd", a, 3, NULL), TC_ERR_NO_DEVICE, "no CUDA driver");
    gs[0] = 11;
    expect(tc_run(F.p, "upd", a, 3, NULL), TC_ERR_INVALID_ARG, "parameter 'g' has shape [11], but its dim 0 is * = 12");
    gs[0] = 12;
    /* the same memory for p and g: p is written */
    g.data = (void *)0x100010;
    expect(tc_run(F.p, "upd", a, 3, NULL), TC_ERR_INVALID_ARG,
           "parameter 'p' and parameter 'g' share memory: parameter 'p' is written");
    g.data = (void *)0x200000;
    /* lr has no default */
    expect(tc_run(F.p, "upd", a, 2, NULL), TC_ERR_INVALID_ARG,
           "scalar parameter 'lr' (f32) of function 'upd' is missing");
    /* an inout output is its parameter: naming it binds p */
    tc_arg b[3] = {tc_arg_tensor("g", &g), tc_arg_float("lr", 1), tc_arg_tensor("p", &p)};
    expect(tc_run(F.p, "upd", b, 3, NULL), TC_ERR_NO_DEVICE, "no CUDA driver");
}

static void test_dtypes(void **state)
{
    (void)state;
    int64_t s[1] = {8};
    DLTensor x = tensor(0x100000, 1, s, kDLFloat, 16), o = tensor(0x200000, 1, s, kDLFloat, 16);
    tc_arg a[2] = {tc_arg_tensor("x", &x), tc_arg_tensor("out", &o)};
    expect(tc_run(F.p, "half", a, 2, NULL), TC_ERR_NO_DEVICE, "no CUDA driver");
    x.dtype.code = kDLBfloat;
    expect(tc_run(F.p, "half", a, 2, NULL), TC_ERR_INVALID_ARG,
           "parameter 'x' is f16[N], but the tensor is bfloat16 (pass a float16 tensor)");
    x.dtype.code = kDLFloat;
    x.dtype.lanes = 2;
    expect(tc_run(F.p, "half", a, 2, NULL), TC_ERR_INVALID_ARG, "the tensor is float16x2");
    x.dtype.lanes = 1;
    x.data = (void *)0x100001;
    expect(tc_run(F.p, "half", a, 2, NULL), TC_ERR_INVALID_ARG,
           "parameter 'x' starts at 0x100001 (data + byte_offset), which is not aligned to its 2-byte elements");
    x.data = (void *)0x100000;
    x.byte_offset = 3;
    expect(tc_run(F.p, "half", a, 2, NULL), TC_ERR_INVALID_ARG, "0x100003");
    x.byte_offset = 0;
    o.dtype.code = 6;
    o.dtype.bits = 8;
    expect(tc_run(F.p, "half", a, 2, NULL), TC_ERR_INVALID_ARG,
           "output 'out' is f16[N], but the tensor is bool (pass a float16 tensor)");
}

/* Dtype variables bind from the tensors given for them (issue 11): a
 * function valid only at T = bf16 runs with a bf16 tensor, each binding is
 * built once, and a mismatch is an argument error. */
static void test_dtype_variables(void **state)
{
    (void)state;
    /* valid only at T = bf16: it compiles, and is built when run */
    static const char bf[] = "fn to_bf16(x: T[N]) -> bf16[N] {\n    return x\n}\n";
    tc_program *p;
    assert_int_equal(tc_compile(F.ctx, bf, strlen(bf), "bf.tc", &p), TC_OK);
    int64_t s[1] = {8};
    DLTensor x = tensor(0x100000, 1, s, kDLBfloat, 16), o = tensor(0x200000, 1, s, kDLBfloat, 16);
    tc_arg a[2] = {tc_arg_tensor("x", &x), tc_arg_tensor("out", &o)};
    expect(tc_run(p, "to_bf16", a, 2, NULL), TC_ERR_NO_DEVICE, "no CUDA driver");
    expect(tc_run(F.p, "gen", a, 2, NULL), TC_ERR_NO_DEVICE, "no CUDA driver");
    int builds = 0;
    for (tc_extra_graph *e = F.p->extra; e; e = e->next)
        builds++;
    expect(tc_run(F.p, "gen", a, 2, NULL), TC_ERR_NO_DEVICE, "no CUDA driver");
    expect(tc_run(p, "to_bf16", a, 2, NULL), TC_ERR_NO_DEVICE, "no CUDA driver");
    int again = 0;
    for (tc_extra_graph *e = F.p->extra; e; e = e->next)
        again++;
    assert_int_equal(again, builds);
    /* f16 in, bf16 out: T = f16, so the output's dtype is wrong */
    x.dtype.code = kDLFloat;
    expect(tc_run(F.p, "gen", a, 2, NULL), TC_ERR_INVALID_ARG,
           "output 'out' is f16[N], but the tensor is bfloat16 (pass a float16 tensor)");
    /* f32: the plain build; to_bf16 at T = f32 is the function's own error */
    x.dtype.bits = 32;
    expect(tc_run(p, "to_bf16", a, 2, NULL), TC_ERR_COMPILE,
           "the result of 'to_bf16' is f32[N], but the signature declares bf16[N]");
    tc_program_free(p);
}

/* Every argument error, one at a time, from a good call. */
static void test_errors(void **state)
{
    (void)state;
    tc_arg a[10];
    int n;
    static int64_t bigshape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    static int64_t bad_strides[2] = {1, 4};

    struct {
        const char *text;
        tc_status st;
    } cases[] = {
        /* 0 */ {"tc_run: function 'f' has no parameter or output 'zz' (parameters x, g, k, s, on; outputs y, r)", TC_ERR_INVALID_ARG},
        /* 1 */ {"tc_run: 'x' is given twice (arguments 0 and 5)", TC_ERR_INVALID_ARG},
        /* 2 */ {"tc_run: parameter 'g' (f32[D]) of function 'f' is missing", TC_ERR_INVALID_ARG},
        /* 3 */ {"tc_run: scalar parameter 'k' (i32) of function 'f' is missing", TC_ERR_INVALID_ARG},
        /* 4 */ {"tc_run: output 'r' (f32[N]) of function 'f' is missing: pass a tensor for it", TC_ERR_INVALID_ARG},
        /* 5 */ {"tc_run: parameter 'k' is a scalar (i32): pass a number (tc_arg_int), not a tensor", TC_ERR_INVALID_ARG},
        /* 6 */ {"tc_run: parameter 'x' is a tensor (f32[N, D]): pass a DLTensor (tc_arg_tensor), not a number", TC_ERR_INVALID_ARG},
        /* 7 */ {"tc_run: parameter 'x': the DLTensor pointer is NULL", TC_ERR_INVALID_ARG},
        /* 8 */ {"tc_run: parameter 'g' is f32[D], but the tensor is float64 (pass a float32 tensor)", TC_ERR_INVALID_ARG},
        /* 9 */ {"tc_run: parameter 'x' is not in CUDA device memory (DLPack device type 1; tc_run needs kDLCUDA or kDLCUDAManaged)", TC_ERR_INVALID_ARG},
        /* 10 */ {"tc_run: parameter 'g' is on cuda:1, but parameter 'x' is on cuda:0: every tensor of a call must be on one device", TC_ERR_INVALID_ARG},
        /* 11 */ {"tc_run: parameter 'x' has rank 9; tensorc handles ranks 0 to 8", TC_ERR_INVALID_ARG},
        /* 12 */ {"parameter 'x' has rank 1, expected 2 (f32[N, D])", TC_ERR_INVALID_ARG},
        /* 13 */ {"parameter 'g' has shape [5], but its dim 0 is D = 3 (bound by parameter 'x' dim 1)", TC_ERR_INVALID_ARG},
        /* 14 */ {"tc_run: output 'y' is f32[N, D] = [4, 3], but the tensor has shape [3, 4]", TC_ERR_INVALID_ARG},
        /* 15 */ {"tc_run: parameter 'x' has shape [4, 3] and strides [1, 4]: tc_run needs compact row-major tensors (strides [3, 1], or NULL); make it contiguous first", TC_ERR_INVALID_ARG},
        /* 16 */ {"tc_run: parameter 'x' has a NULL data pointer", TC_ERR_INVALID_ARG},
        /* 17 */ {"tc_run: output 'y' and parameter 'x' share memory: output 'y' is written, so it may not overlap another argument", TC_ERR_INVALID_ARG},
        /* 18 */ {"tc_run: parameter 'k' is i32: pass an integer (tc_arg_int), not a float", TC_ERR_INVALID_ARG},
        /* 19 */ {"tc_run: parameter 'k' is i32, and 3000000000 is out of its range", TC_ERR_INVALID_ARG},
        /* 20 */ {"tc_run: parameter 'on' is bool: pass tc_arg_bool, not an integer", TC_ERR_INVALID_ARG},
        /* 21 */ {"tc_run: parameter 's' is f32: pass a number (tc_arg_float), not a bool", TC_ERR_INVALID_ARG},
        /* 22 */ {"tc_run: argument 7 has no name, and function 'f' takes 7 (parameters x, g, k, s, on; outputs y, r)", TC_ERR_INVALID_ARG},
        /* 23 */ {"tc_run: output 'y' and output 'r' share memory", TC_ERR_INVALID_ARG},
        /* 24 */ {"tc_run: parameter 'x' has shape [4, -3]: dim 1 is out of range", TC_ERR_INVALID_ARG},
        /* 25 */ {"tc_run: the arguments are NULL but nargs is 5", TC_ERR_INVALID_ARG},
        /* 26 */ {"tc_run: output 'r' is a tensor (f32[N]): pass a DLTensor (tc_arg_tensor), not a number", TC_ERR_INVALID_ARG},
        /* 27 */ {"no function 'nope' here or in the prelude", TC_ERR_NOT_FOUND},
        /* 28 */ {"tc_run: parameter 'x' is on cuda:-1: a CUDA device_id is 0 or more", TC_ERR_INVALID_ARG},
        /* 29 */ {"tc_run: parameter 'g' is on cuda:-2: a CUDA device_id is 0 or more", TC_ERR_INVALID_ARG},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        n = good_args(a);
        const char *fn = "f";
        const tc_arg *args = a;
        switch (c) {
        case 0: a[n++] = tc_arg_float("zz", 1); break;
        case 1: a[n++] = tc_arg_tensor("x", &F.x); break;
        case 2: a[1] = a[--n]; break;
        case 3: a[2] = a[--n]; break;
        case 4: n--; break;
        case 5: a[2] = tc_arg_tensor("k", &F.g); break;
        case 6: a[0] = tc_arg_float("x", 1); break;
        case 7: a[0].v.tensor = NULL; break;
        case 8: F.g.dtype.bits = 64; break;
        case 9: F.x.device.device_type = kDLCPU; break;
        case 10: F.g.device.device_id = 1; break;
        case 11: F.x.ndim = 9; F.x.shape = bigshape; break;
        case 12: F.x.ndim = 1; break;
        case 13: F.gs[0] = 5; break;
        case 14: F.ys[0] = 3; F.ys[1] = 4; break;
        case 15: F.x.strides = bad_strides; break;
        case 16: F.x.data = NULL; break;
        case 17: F.y.data = (void *)(0x100000 + 44); break;
        case 18: a[2] = tc_arg_float("k", 3); break;
        case 19: a[2] = tc_arg_int("k", 3000000000LL); break;
        case 20: a[n++] = tc_arg_int("on", 1); break;
        case 21: a[n++] = tc_arg_bool("s", 1); break;
        case 22:
            for (n = 0; n < 8; n++)
                a[n] = tc_arg_float(NULL, 1);
            break;
        case 23: F.r.data = (void *)(0x300000 + 40); break;
        case 24: F.xs[1] = -3; break;
        case 25: args = NULL; break;
        case 26: a[4] = tc_arg_int("r", 1); break;
        case 27: fn = "nope"; break;
        case 28: F.x.device.device_id = -1; F.g.device.device_id = 1; break; /* skipped the one-device check */
        case 29: F.g.device.device_id = -2; break;
        }
        tc_status st = tc_run(F.p, fn, args, (size_t)n, NULL);
        if (st != cases[c].st || !strstr(tc_errmsg(F.ctx), cases[c].text))
            fail_msg("case %zu: got %s: %s\nwant: %s", c, tc_status_str(st), tc_errmsg(F.ctx),
                     cases[c].text);
    }
}

/* Errors from graph_bind are located at the parameter, like the CLI's. */
static void test_located(void **state)
{
    (void)state;
    tc_arg a[8];
    int n = good_args(a);
    F.gs[0] = 5;
    assert_int_equal(tc_run(F.p, "f", a, (size_t)n, NULL), TC_ERR_INVALID_ARG);
    const char *file;
    int line, col;
    assert_true(tc_error_loc(F.ctx, &file, &line, &col));
    assert_string_equal(file, "run.tc");
    assert_int_equal(line, 1);
}

static void test_options(void **state)
{
    (void)state;
    tc_ctx *ctx = NULL;
    tc_options bad = {-2, NULL, 0, 0};
    assert_int_equal(tc_ctx_create_ex(&ctx, &bad), TC_ERR_INVALID_ARG);
    assert_null(ctx);
    assert_int_equal(tc_ctx_create_ex(NULL, NULL), TC_ERR_INVALID_ARG);
    tc_options o = {1, "/tmp/tensorc-test-cache", 1, 1};
    assert_int_equal(tc_ctx_create_ex(&ctx, &o), TC_OK);
    assert_non_null(ctx->rt);
    /* the opt-in NVRTC options reach the runtime (and so the cache key) */
    assert_int_equal(ctx->rt->nnvrtc_opts, 2);
    assert_string_equal(ctx->rt->nvrtc_opts[0], "--use_fast_math");
    assert_string_equal(ctx->rt->nvrtc_opts[1], "-lineinfo");
    assert_int_equal(ctx->rt->ordinal, 1);
    assert_string_equal(ctx->rt->cache_dir, "/tmp/tensorc-test-cache");
    assert_null(ctx->rt->dev); /* nothing opened yet */
    tc_program *p = NULL;
    assert_int_equal(tc_compile(ctx, SRC, strlen(SRC), "run.tc", &p), TC_OK);
    tc_arg a[8];
    int n = good_args(a);
    /* the tensors are on cuda:0, the context was made for cuda:1 */
    assert_int_equal(tc_run(p, "f", a, (size_t)n, NULL), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(ctx), "parameter 'x' is on cuda:0, but this context runs on cuda:1"));
    F.x.device.device_id = F.g.device.device_id = F.y.device.device_id = F.r.device.device_id = 1;
    assert_int_equal(tc_run(p, "f", a, (size_t)n, NULL), TC_ERR_NO_DEVICE);
    tc_program_free(p);
    /* until tc_ctx_free releases ctx->rt itself (api.c), release it here */
    rt_free(ctx->rt);
    ctx->rt = NULL;
    tc_ctx_free(ctx);

    assert_int_equal(tc_ctx_create_ex(&ctx, NULL), TC_OK);
    assert_int_equal(ctx->rt->ordinal, TC_DEVICE_AUTO);
    rt_free(ctx->rt);
    ctx->rt = NULL;
    tc_ctx_free(ctx);
}

static void test_source(void **state)
{
    (void)state;
    const char *src = tc_program_source(F.p, "f");
    if (!src)
        fail_msg("%s", tc_errmsg(F.ctx));
    assert_non_null(strstr(src, "extern \"C\" __global__"));
    /* f is a function of the file: its unit is the file's, with upd's kernels too */
    const char *all = tc_program_source(F.p, NULL);
    assert_non_null(all);
    assert_string_equal(all, src);
    assert_null(tc_program_source(F.p, "nope"));
    assert_non_null(strstr(tc_errmsg(F.ctx), "no function 'nope'"));
    assert_null(tc_program_source(NULL, "f"));
    /* a prelude function gets its own unit */
    const char *sm = tc_program_source(F.p, "softmax");
    assert_non_null(sm);
    assert_string_not_equal(sm, src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_call_needs_device),
        cmocka_unit_test(test_inout_and_star),
        cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_dtype_variables),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_located),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_source),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
