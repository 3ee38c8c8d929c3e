/* test_introspect.c - the public API's description of functions
 * (tc_program_functions, tc_program_function), shapes (tc_shapes,
 * tc_output_shapes, tc_arg_size), dtype bindings as arguments (tc_arg_dtype), runs on
 * the CPU through the interpreter (tc_run_cpu) and PTX/CUBIN images
 * (tc_program_image, through NVRTC: skipped without it); and the unstable
 * calls tools/ are written against (test_unstable_for_tools).  Only
 * include/tensorc.h: what a binding to another language sees. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TC_UNSTABLE_API /* test_unstable_for_tools */
#include "tensorc.h"

static const char SRC[] =
    "fn norm(x: T[N, D], w: T[D], eps: f32 = 0.5) -> T[N, D] {\n"
    "    return x * rsqrt(mean(x * x, axis=-1, keepdim=true) + eps) * w\n"
    "}\n"
    "fn stats(x: f32[N, D]) -> (s: f32[N], m: i64[D]) {\n"
    "    return sum(x, axis=1), argmax(x, axis=0)\n"
    "}\n"
    "fn upd(p: inout f32[*], g: f32[*], lr: f64) {\n"
    "    p = p - lr * g\n"
    "}\n"
    "fn cat(a: i32[N], b: i32[M]) -> i32[*] {\n"
    "    return concat(a, b, axis=0)\n"
    "}\n";

typedef struct {
    tc_ctx *ctx;
    tc_program *p;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx || tc_ctx_create(&fx->ctx) != TC_OK)
        return -1;
    if (tc_compile(fx->ctx, SRC, strlen(SRC), "intro.tc", &fx->p) != TC_OK) {
        fprintf(stderr, "%s", tc_errmsg(fx->ctx));
        return -1;
    }
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    tc_program_free(fx->p);
    tc_ctx_free(fx->ctx);
    free(fx);
    return 0;
}

static DLTensor host(void *data, DLDataType dt, int ndim, int64_t *shape)
{
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.device.device_type = kDLCPU;
    t.ndim = ndim;
    t.dtype = dt;
    t.shape = shape;
    return t;
}

static const DLDataType F32 = {kDLFloat, 32, 1}, F64 = {kDLFloat, 64, 1}, F16 = {kDLFloat, 16, 1},
                        BF16 = {kDLBfloat, 16, 1}, I32 = {kDLInt, 32, 1}, I64 = {kDLInt, 64, 1};

static bool same_dtype(DLDataType a, DLDataType b)
{
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

static void test_functions(void **state)
{
    fixture *fx = *state;
    size_t n;
    const char *const *names;
    assert_int_equal(tc_program_functions(fx->p, &n, &names), TC_OK);
    assert_int_equal(n, 4);
    assert_string_equal(names[0], "norm");
    assert_string_equal(names[1], "stats");
    assert_string_equal(names[2], "upd");
    assert_string_equal(names[3], "cat");
    assert_int_equal(tc_program_functions(NULL, &n, &names), TC_ERR_INVALID_ARG);
}

static void test_describe_generic(void **state)
{
    fixture *fx = *state;
    const tc_function_info *fi;
    assert_int_equal(tc_program_function(fx->p, "norm", &fi), TC_OK);
    assert_string_equal(fi->name, "norm");
    assert_int_equal(fi->nparams, 3);
    assert_string_equal(fi->params[0].name, "x");
    assert_string_equal(fi->params[0].dtype, "T");
    assert_true(fi->params[0].dtype_var);
    assert_false(fi->params[0].scalar);
    assert_int_equal(fi->params[0].rank, 2);
    assert_string_equal(fi->params[0].dims[0], "N");
    assert_string_equal(fi->params[0].dims[1], "D");
    assert_string_equal(fi->params[1].dims[0], "D");
    assert_true(fi->params[2].scalar);
    assert_string_equal(fi->params[2].dtype, "f32");
    assert_false(fi->params[2].dtype_var);
    assert_int_equal(fi->params[2].rank, 0);
    assert_true(fi->params[2].has_default);
    assert_true(fi->params[2].default_value == 0.5);
    assert_int_equal(fi->noutputs, 1);
    assert_string_equal(fi->outputs[0].name, "out");
    assert_string_equal(fi->outputs[0].dtype, "T");
    assert_true(fi->outputs[0].dtype_var);
    assert_false(fi->elementwise);
    /* asked again: the same description, kept */
    const tc_function_info *again;
    assert_int_equal(tc_program_function(fx->p, "norm", &again), TC_OK);
    assert_ptr_equal(fi, again);
}

static void test_describe_outputs(void **state)
{
    fixture *fx = *state;
    const tc_function_info *fi;
    assert_int_equal(tc_program_function(fx->p, "stats", &fi), TC_OK);
    assert_int_equal(fi->noutputs, 2);
    assert_string_equal(fi->outputs[0].name, "s");
    assert_string_equal(fi->outputs[0].dtype, "f32");
    assert_int_equal(fi->outputs[0].rank, 1);
    assert_string_equal(fi->outputs[0].dims[0], "N");
    assert_string_equal(fi->outputs[1].name, "m");
    assert_string_equal(fi->outputs[1].dtype, "i64");
    assert_string_equal(fi->outputs[1].dims[0], "D");

    assert_int_equal(tc_program_function(fx->p, "upd", &fi), TC_OK);
    assert_true(fi->elementwise);
    assert_true(fi->params[0].inout);
    assert_true(fi->params[0].star);
    assert_int_equal(fi->params[0].rank, 1);
    assert_string_equal(fi->params[0].dims[0], "*");
    assert_string_equal(fi->params[2].dtype, "f64");
    assert_false(fi->params[2].has_default);
    assert_int_equal(fi->noutputs, 1);
    assert_string_equal(fi->outputs[0].name, "p");
    assert_true(fi->outputs[0].inout);
    assert_true(fi->outputs[0].star);

    assert_int_equal(tc_program_function(fx->p, "cat", &fi), TC_OK);
    assert_string_equal(fi->outputs[0].dims[0], "N + M"); /* concat's size, though declared [*] */
}

static void test_describe_prelude_and_errors(void **state)
{
    fixture *fx = *state;
    const tc_function_info *fi;
    assert_int_equal(tc_program_function(fx->p, "softmax", &fi), TC_OK);
    assert_string_equal(fi->name, "softmax");
    assert_true(fi->nparams >= 1);
    assert_int_equal(tc_program_function(fx->p, "nosuch", &fi), TC_ERR_NOT_FOUND);
    assert_null(fi);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "nosuch"));
    /* fn NULL with several functions: the message lists them */
    assert_int_equal(tc_program_function(fx->p, NULL, &fi), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "norm"));
}

static void test_output_shapes(void **state)
{
    fixture *fx = *state;
    int64_t xs[2] = {4, 8}, ws[1] = {8};
    DLTensor x = host(NULL, BF16, 2, xs), w = host(NULL, BF16, 1, ws);
    tc_arg a[2] = {tc_arg_tensor("x", &x), tc_arg_tensor("w", &w)};
    tc_shape out[1];
    assert_int_equal(tc_output_shapes(fx->p, "norm", a, 2, out, 1), TC_OK);
    assert_true(same_dtype(out[0].dtype, BF16)); /* T bound by x */
    assert_int_equal(out[0].ndim, 2);
    assert_int_equal(out[0].shape[0], 4);
    assert_int_equal(out[0].shape[1], 8);

    /* T given: the tensors must agree with it */
    tc_arg b[3] = {tc_arg_dtype("T", "f16"), tc_arg_tensor("x", &x), tc_arg_tensor("w", &w)};
    assert_int_equal(tc_output_shapes(fx->p, "norm", b, 3, out, 1), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "parameter 'x'"));
    x.dtype = w.dtype = F16;
    assert_int_equal(tc_output_shapes(fx->p, "norm", b, 3, out, 1), TC_OK);
    assert_true(same_dtype(out[0].dtype, F16));

    /* a shape that disagrees with the signature names the parameter and dim */
    ws[0] = 7;
    assert_int_equal(tc_output_shapes(fx->p, "norm", b, 3, out, 1), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "'w'"));
    ws[0] = 8;
    /* w left out: x binds its size; x left out: N is bound by nothing */
    assert_int_equal(tc_output_shapes(fx->p, "norm", b, 2, out, 1), TC_OK);
    tc_arg wonly[2] = {tc_arg_dtype("T", "f16"), tc_arg_tensor("w", &w)};
    assert_int_equal(tc_output_shapes(fx->p, "norm", wonly, 2, out, 1), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "size of N is not known"));
    /* too little room */
    assert_int_equal(tc_output_shapes(fx->p, "norm", b, 3, out, 0), TC_ERR_INVALID_ARG);

    /* several outputs; symbolic sums; [*] */
    int64_t ss[2] = {3, 5};
    DLTensor sx = host(NULL, F32, 2, ss);
    tc_arg c[1] = {tc_arg_tensor(NULL, &sx)};
    tc_shape two[2];
    assert_int_equal(tc_output_shapes(fx->p, "stats", c, 1, two, 2), TC_OK);
    assert_int_equal(two[0].shape[0], 3);
    assert_true(same_dtype(two[1].dtype, I64));
    assert_int_equal(two[1].shape[0], 5);
    int64_t na[1] = {2}, nb[1] = {9};
    DLTensor ca = host(NULL, I32, 1, na), cb = host(NULL, I32, 1, nb);
    tc_arg d[2] = {tc_arg_tensor("a", &ca), tc_arg_tensor("b", &cb)};
    assert_int_equal(tc_output_shapes(fx->p, "cat", d, 2, out, 1), TC_OK);
    assert_int_equal(out[0].shape[0], 11);
    int64_t ps[2] = {3, 4};
    DLTensor p = host(NULL, F32, 2, ps), g = host(NULL, F32, 2, ps);
    tc_arg e[2] = {tc_arg_tensor("p", &p), tc_arg_tensor("g", &g)};
    assert_int_equal(tc_output_shapes(fx->p, "upd", e, 2, out, 1), TC_OK);
    assert_int_equal(out[0].ndim, 1);
    assert_int_equal(out[0].shape[0], 12);
}

static void test_shapes(void **state)
{
    fixture *fx = *state;
    tc_shape ps[3], os[2];
    /* every size by name: the inputs' shapes too (what a caller allocates) */
    tc_arg a[2] = {tc_arg_size("N", 3), tc_arg_size("D", 5)};
    assert_int_equal(tc_shapes(fx->p, "norm", a, 2, ps, 3, os, 1), TC_OK);
    assert_true(same_dtype(ps[0].dtype, F32)); /* T unbound: f32 */
    assert_int_equal(ps[0].ndim, 2);
    assert_int_equal(ps[0].shape[0], 3);
    assert_int_equal(ps[0].shape[1], 5);
    assert_int_equal(ps[1].ndim, 1);
    assert_int_equal(ps[1].shape[0], 5);
    assert_int_equal(ps[2].ndim, 0); /* the scalar eps */
    assert_int_equal(os[0].shape[1], 5);
    /* a tensor and a size together; a size twice; a negative size; too little room */
    int64_t xs[2] = {7, 5};
    DLTensor x = host(NULL, F32, 2, xs);
    tc_arg b[2] = {tc_arg_tensor("x", &x), tc_arg_size("D", 5)};
    assert_int_equal(tc_shapes(fx->p, "norm", b, 2, ps, 3, NULL, 0), TC_OK);
    assert_int_equal(ps[1].shape[0], 5);
    b[1] = tc_arg_size("D", 6); /* disagrees with x */
    assert_int_equal(tc_shapes(fx->p, "norm", b, 2, ps, 3, NULL, 0), TC_ERR_INVALID_ARG);
    tc_arg twice[2] = {tc_arg_size("N", 3), tc_arg_size("N", 3)};
    assert_int_equal(tc_shapes(fx->p, "norm", twice, 2, ps, 3, NULL, 0), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "given twice"));
    tc_arg neg[1] = {tc_arg_size("N", -1)};
    assert_int_equal(tc_shapes(fx->p, "norm", neg, 1, ps, 3, NULL, 0), TC_ERR_INVALID_ARG);
    assert_int_equal(tc_shapes(fx->p, "norm", a, 2, ps, 2, NULL, 0), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "3 parameters"));
    /* [*]: the element count by the name "*", or a tensor's own shape */
    tc_arg star[1] = {tc_arg_size("*", 12)};
    assert_int_equal(tc_shapes(fx->p, "upd", star, 1, ps, 3, os, 1), TC_OK);
    assert_int_equal(ps[0].ndim, 1);
    assert_int_equal(ps[0].shape[0], 12);
    assert_int_equal(os[0].shape[0], 12);
    int64_t gs[2] = {3, 4};
    DLTensor g = host(NULL, F32, 2, gs);
    tc_arg given[1] = {tc_arg_tensor("g", &g)};
    assert_int_equal(tc_shapes(fx->p, "upd", given, 1, ps, 3, os, 1), TC_OK);
    assert_int_equal(ps[1].ndim, 2); /* g as given */
    assert_int_equal(ps[0].ndim, 1); /* p, left out: 12 elements */
    assert_int_equal(ps[0].shape[0], 12);
    assert_true(same_dtype(ps[2].dtype, F64));
}

static void test_dtype_args(void **state)
{
    fixture *fx = *state;
    int64_t xs[2] = {2, 2}, ws[1] = {2};
    DLTensor x = host(NULL, F32, 2, xs), w = host(NULL, F32, 1, ws);
    tc_shape out[1];
    tc_arg bad_var[3] = {tc_arg_dtype("U", "f16"), tc_arg_tensor("x", &x), tc_arg_tensor("w", &w)};
    assert_int_equal(tc_output_shapes(fx->p, "norm", bad_var, 3, out, 1), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "dtype variable 'U'"));
    tc_arg bad_dt[3] = {tc_arg_dtype("T", "float"), tc_arg_tensor("x", &x), tc_arg_tensor("w", &w)};
    assert_int_equal(tc_output_shapes(fx->p, "norm", bad_dt, 3, out, 1), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "'float', which is not a dtype"));
    tc_arg twice[4] = {tc_arg_dtype("T", "f32"), tc_arg_dtype("T", "f32"), tc_arg_tensor("x", &x),
                       tc_arg_tensor("w", &w)};
    assert_int_equal(tc_output_shapes(fx->p, "norm", twice, 4, out, 1), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "bound twice"));
    /* tc_run checks the same before it looks for a GPU: f32 tensors for T = f64 */
    tc_arg run[4] = {tc_arg_dtype("T", "f64"), tc_arg_tensor("x", &x), tc_arg_tensor("w", &w),
                     tc_arg_tensor("out", &x)};
    x.device.device_type = w.device.device_type = kDLCUDA;
    assert_int_equal(tc_run(fx->p, "norm", run, 4, NULL), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "parameter 'x'"));
    assert_non_null(strstr(tc_errmsg(fx->ctx), "f64"));
    /* and the binding takes no position: x, w, out by position after it */
    tc_arg unk[2] = {tc_arg_dtype("Q", "f64"), tc_arg_tensor(NULL, &x)};
    assert_int_equal(tc_run(fx->p, "norm", unk, 2, NULL), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "dtype variable 'Q'"));
}

static void test_run_cpu(void **state)
{
    fixture *fx = *state;
    /* norm at T = f64, bound explicitly: x rows (3, 4) and (0, 0) */
    double xv[4] = {3, 4, 0, 0}, wv[2] = {1, 2}, ov[4] = {-1, -1, -1, -1};
    int64_t xs[2] = {2, 2}, ws[1] = {2};
    DLTensor x = host(xv, F64, 2, xs), w = host(wv, F64, 1, ws), o = host(ov, F64, 2, xs);
    tc_arg a[5] = {tc_arg_dtype("T", "f64"), tc_arg_tensor("x", &x), tc_arg_tensor("w", &w),
                   tc_arg_float("eps", 0.0), tc_arg_tensor("out", &o)};
    assert_int_equal(tc_run_cpu(fx->p, "norm", a, 5), TC_OK);
    double r = 1 / sqrt(12.5);
    assert_true(fabs(ov[0] - 3 * r) < 1e-12);
    assert_true(fabs(ov[1] - 8 * r) < 1e-12);
    /* the default eps (0.5): row (0, 0) gives 0 */
    tc_arg b[3] = {tc_arg_tensor("x", &x), tc_arg_tensor("w", &w), tc_arg_tensor("out", &o)};
    assert_int_equal(tc_run_cpu(fx->p, "norm", b, 3), TC_OK);
    assert_true(fabs(ov[0] - 3 / sqrt(13.0)) < 1e-12);
    assert_true(ov[2] == 0 && ov[3] == 0);

    /* an inout [*] parameter is written back in place, with its shape */
    float pv[6] = {1, 2, 3, 4, 5, 6}, gv[6] = {1, 1, 1, 1, 1, 1};
    int64_t ps[2] = {2, 3};
    DLTensor p = host(pv, F32, 2, ps), g = host(gv, F32, 2, ps);
    tc_arg c[3] = {tc_arg_tensor("p", &p), tc_arg_tensor("g", &g), tc_arg_float("lr", 0.5)};
    assert_int_equal(tc_run_cpu(fx->p, "upd", c, 3), TC_OK);
    assert_true(pv[0] == 0.5f && pv[5] == 5.5f);

    /* integers and two outputs, by position */
    float sv[6] = {1, 9, 3, 7, 2, 8};
    int64_t ss[2] = {2, 3}, s1[1] = {2}, m1[1] = {3};
    float so[2];
    int64_t mo[3];
    DLTensor sx = host(sv, F32, 2, ss), sout = host(so, F32, 1, s1), mout = host(mo, I64, 1, m1);
    tc_arg d[3] = {tc_arg_tensor(NULL, &sx), tc_arg_tensor(NULL, &sout), tc_arg_tensor(NULL, &mout)};
    assert_int_equal(tc_run_cpu(fx->p, "stats", d, 3), TC_OK);
    assert_true(so[0] == 13 && so[1] == 17);
    assert_true(mo[0] == 1 && mo[1] == 0 && mo[2] == 1);

    /* f16 in and out (bits), through a concat of i32 as well */
    int32_t av[2] = {1, 2}, bv[1] = {3}, cv[3];
    int64_t na[1] = {2}, nb[1] = {1}, nc[1] = {3};
    DLTensor ca = host(av, I32, 1, na), cb = host(bv, I32, 1, nb), cc = host(cv, I32, 1, nc);
    tc_arg e[3] = {tc_arg_tensor("a", &ca), tc_arg_tensor("b", &cb), tc_arg_tensor("out", &cc)};
    assert_int_equal(tc_run_cpu(fx->p, "cat", e, 3), TC_OK);
    assert_true(cv[0] == 1 && cv[1] == 2 && cv[2] == 3);
    uint16_t hx[2] = {0x3c00, 0x4000}, hw[2] = {0x3c00, 0x3c00}, ho[2]; /* 1, 2; 1, 1 */
    int64_t hs[2] = {1, 2};
    DLTensor fx16 = host(hx, F16, 2, hs), fw16 = host(hw, F16, 1, ws), fo16 = host(ho, F16, 2, hs);
    tc_arg h[4] = {tc_arg_tensor("x", &fx16), tc_arg_tensor("w", &fw16), tc_arg_float("eps", 0.5),
                   tc_arg_tensor("out", &fo16)};
    assert_int_equal(tc_run_cpu(fx->p, "norm", h, 4), TC_OK);
    assert_int_equal(ho[0], 0x389e); /* 1 / sqrt(3) = 0.57735: f16 0.5771 */
}

static void test_run_cpu_errors(void **state)
{
    fixture *fx = *state;
    float v[4] = {0};
    int64_t s[2] = {2, 2}, s3[2] = {2, 3}, ws[1] = {2};
    DLTensor x = host(v, F32, 2, s), w = host(v, F32, 1, ws), o = host(v, F32, 2, s3);
    tc_arg a[3] = {tc_arg_tensor("x", &x), tc_arg_tensor("w", &w), tc_arg_tensor("out", &o)};
    /* an output of the wrong shape */
    assert_int_equal(tc_run_cpu(fx->p, "norm", a, 3), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "output 'out'"));
    /* a missing output */
    assert_int_equal(tc_run_cpu(fx->p, "norm", a, 2), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "output 'out'"));
    /* device memory */
    o.shape = s;
    x.device.device_type = kDLCUDA;
    assert_int_equal(tc_run_cpu(fx->p, "norm", a, 3), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "not in host memory"));
    x.device.device_type = kDLCPU;
    /* non-compact strides */
    int64_t st[2] = {1, 2};
    x.strides = st;
    assert_int_equal(tc_run_cpu(fx->p, "norm", a, 3), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "compact"));
    x.strides = NULL;
    /* a scalar of the wrong kind */
    tc_arg b[4] = {tc_arg_tensor("x", &x), tc_arg_tensor("w", &w), tc_arg_tensor("out", &o),
                   tc_arg_bool("eps", 1)};
    assert_int_equal(tc_run_cpu(fx->p, "norm", b, 4), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "eps"));
    assert_int_equal(tc_run_cpu(fx->p, "norm", a, 3), TC_OK);
    assert_string_equal(tc_errmsg(fx->ctx), "");
    /* more than the interpreter holds: refused before anything that size is
     * allocated (the data pointer is never read) */
    int64_t big[1] = {((int64_t)1 << 30) + 1};
    DLTensor bp = host(v, F32, 1, big), bg = host(v, F32, 1, big);
    tc_arg c[3] = {tc_arg_tensor("p", &bp), tc_arg_tensor("g", &bg), tc_arg_float("lr", 1)};
    assert_int_equal(tc_run_cpu(fx->p, "upd", c, 3), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "parameter 'p' has 1073741825 elements"));
}

static void test_image(void **state)
{
    (void)state;
    /* a context of its own, with a kernel cache in a temporary directory */
    char dir[] = "/tmp/tc-introspect-XXXXXX";
    assert_non_null(mkdtemp(dir));
    tc_options o = TC_OPTIONS_INIT;
    o.cache_dir = dir;
    fixture own, *fx = &own;
    assert_int_equal(tc_ctx_create_ex(&own.ctx, &o), TC_OK);
    assert_int_equal(tc_compile(own.ctx, SRC, strlen(SRC), "intro.tc", &own.p), TC_OK);
    const void *img;
    size_t len;
    tc_arg bf16 = tc_arg_dtype("T", "bf16");
    tc_status st = tc_program_image(fx->p, "norm", &bf16, 1, 80, TC_IMAGE_PTX, &img, &len);
    if (st == TC_ERR_NO_DEVICE) { /* no NVRTC on this machine */
        fprintf(stderr, "no NVRTC: %s\n", tc_errmsg(fx->ctx));
        tc_program_free(own.p);
        tc_ctx_free(own.ctx);
        rmdir(dir);
        skip();
    }
    assert_int_equal(st, TC_OK);
    assert_true(len > 100);
    assert_int_equal(((const char *)img)[len], 0);
    assert_non_null(strstr(img, ".target sm_80"));
    assert_non_null(strstr(img, ".entry"));
    assert_non_null(strstr(img, "bf16")); /* T = bf16: the kernels convert bf16 */
    /* the whole file as a CUBIN: an ELF image */
    assert_int_equal(tc_program_image(fx->p, NULL, NULL, 0, 90, TC_IMAGE_CUBIN, &img, &len), TC_OK);
    assert_true(len > 4 && memcmp(img, "\x7f" "ELF", 4) == 0);
    /* errors: an arch NVRTC does not know, a binding that is not one, a missing function */
    assert_int_equal(tc_program_image(fx->p, "upd", NULL, 0, 7, TC_IMAGE_PTX, &img, &len),
                     TC_ERR_INVALID_ARG);
    tc_arg notdt = tc_arg_float("lr", 1.0);
    assert_int_equal(tc_program_image(fx->p, "upd", &notdt, 1, 90, TC_IMAGE_PTX, &img, &len),
                     TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "not a tc_arg_dtype"));
    assert_int_equal(tc_program_image(fx->p, "nosuch", NULL, 0, 90, TC_IMAGE_PTX, &img, &len),
                     TC_ERR_NOT_FOUND);
    tc_program_free(own.p);
    tc_ctx_free(own.ctx);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The unstable calls the CLI uses instead of the library's insides. */
static void test_unstable_for_tools(void **state)
{
    fixture *fx = *state;
    tc_program *p = fx->p;
    const tc_function_info *fi;
    /* a function described with its dtype variables bound, else f32 */
    tc_arg bf = tc_arg_dtype("T", "bf16");
    assert_int_equal(tc_program_function_ex(p, "norm", &bf, 1, &fi), TC_OK);
    assert_string_equal(fi->params[0].dtype, "bf16");
    assert_false(fi->params[0].dtype_var);
    assert_string_equal(fi->outputs[0].dtype, "bf16");
    assert_string_equal(fi->params[2].dtype, "f32");
    assert_int_equal(tc_program_function_ex(p, "norm", NULL, 0, &fi), TC_OK);
    assert_string_equal(fi->params[0].dtype, "f32");
    assert_false(fi->params[0].dtype_var);
    tc_arg q = tc_arg_dtype("Q", "f16"), bad = tc_arg_dtype("T", "f8"), notdt = tc_arg_int("T", 3);
    assert_int_not_equal(tc_program_function_ex(p, "norm", &q, 1, &fi), TC_OK);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "no dtype variable 'Q'"));
    assert_int_equal(tc_program_function_ex(p, "norm", &bad, 1, &fi), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "'f8', which is not a dtype"));
    assert_int_equal(tc_program_function_ex(p, "norm", &notdt, 1, &fi), TC_ERR_INVALID_ARG);
    assert_non_null(strstr(tc_errmsg(fx->ctx), "not a tc_arg_dtype binding"));

    /* dumps with bindings; none: tc_program_dump's */
    const char *text;
    assert_int_equal(tc_program_dump_ex(p, "graph", "norm", &bf, 1, &text), TC_OK);
    assert_non_null(strstr(text, "bf16"));
    assert_int_equal(tc_program_dump_ex(p, "graph", "norm", NULL, 0, &text), TC_OK);
    char *plain = strdup(text);
    assert_int_equal(tc_program_dump(p, "graph", "norm", &text), TC_OK);
    assert_string_equal(plain, text);
    assert_null(strstr(plain, "bf16"));
    free(plain);

    /* why a function cannot run over tensor groups */
    const char *why = "unset";
    assert_int_equal(tc_function_not_elementwise(p, "upd", NULL, 0, &why), TC_OK);
    assert_null(why);
    assert_int_equal(tc_function_not_elementwise(p, "norm", &bf, 1, &why), TC_OK);
    assert_non_null(why);
    assert_non_null(strstr(why, "not [*]"));

    /* the dtypes a function computes in, under bindings */
    int yes = -1;
    assert_int_equal(tc_function_computes_in_ex(p, "norm", &bf, 1, BF16, &yes), TC_OK);
    assert_true(yes);
    assert_int_equal(tc_function_computes_in_ex(p, "norm", NULL, 0, BF16, &yes), TC_OK);
    assert_false(yes);

    /* dtype names */
    const char *names[] = {"f32", "f64", "f16", "bf16", "i32", "i64", "bool"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        DLDataType dt;
        assert_true(tc_dtype_parse(names[i], &dt));
        assert_string_equal(tc_dtype_name(dt), names[i]);
    }
    DLDataType none;
    assert_false(tc_dtype_parse("f8", &none));
    assert_null(tc_dtype_name((DLDataType){kDLComplex, 64, 1}));

    /* casts as the language's, integers exactly */
    double big = 1e30, nan_ = NAN, two5 = -2.5;
    int32_t i32;
    int64_t i64;
    tc_value_cast(I32, &i32, F64, &big);
    assert_int_equal(i32, INT32_MAX);
    tc_value_cast(I32, &i32, F64, &nan_);
    assert_int_equal(i32, 0);
    tc_value_cast(I64, &i64, F64, &two5);
    assert_int_equal(i64, -2);
    int64_t wide = ((int64_t)1 << 32) | 5;
    tc_value_cast(I32, &i32, I64, &wide);
    assert_int_equal(i32, 5);
    tc_value_encode_int(I64, (1LL << 53) + 1, &i64);
    assert_int_equal(i64, (1LL << 53) + 1);
    float tie = 1.00390625f; /* halfway between two bf16 values: rounds to even */
    uint16_t b16;
    tc_value_cast(BF16, &b16, F32, &tie);
    assert_true(tc_value_decode(BF16, &b16) == 1.0);
    assert_true(tc_value_diff(NAN, NAN) == 0 && tc_value_diff(INFINITY, INFINITY) == 0);
    assert_true(isinf(tc_value_diff(1, NAN)) && tc_value_diff(1, 1.5) == 0.5);
}

/* Output sets: a bad path refused up front with its message, nothing
 * written before the commit, everything after. */
static void test_outsets(void **state)
{
    (void)state;
    char dir[] = "/tmp/tc_outset_XXXXXX", path[256], bad[300];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/a.txt", dir);
    snprintf(bad, sizeof bad, "%s/no/such/b.txt", dir);
    tc_outset *s = tc_outset_new();
    int i;
    assert_int_equal(tc_outset_add(s, bad, "-o", NULL), TC_ERR_IO);
    assert_non_null(strstr(tc_outset_errmsg(s), "-o: cannot write"));
    assert_int_equal(tc_outset_commit(s), TC_ERR_INTERNAL); /* a refused set is only freed */
    tc_outset_free(s);
    s = tc_outset_new();
    assert_string_equal(tc_outset_errmsg(s), "");
    assert_int_equal(tc_outset_add(s, path, "--output a", &i), TC_OK);
    assert_int_equal(tc_outset_write(s, i, "hello", 5), TC_OK);
    assert_int_not_equal(access(path, F_OK), 0); /* not before the commit */
    assert_int_equal(tc_outset_commit(s), TC_OK);
    tc_outset_free(s);
    FILE *f = fopen(path, "r");
    char buf[16] = {0};
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "hello");
    /* freed before its commit: the file stays as it was */
    s = tc_outset_new();
    assert_int_equal(tc_outset_add(s, path, "--output a", &i), TC_OK);
    assert_int_equal(tc_outset_write(s, i, "bye", 3), TC_OK);
    tc_outset_free(s);
    f = fopen(path, "r");
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "hello");
    tc_outset_free(NULL);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_functions),
        cmocka_unit_test(test_describe_generic),
        cmocka_unit_test(test_describe_outputs),
        cmocka_unit_test(test_describe_prelude_and_errors),
        cmocka_unit_test(test_output_shapes),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_dtype_args),
        cmocka_unit_test(test_run_cpu),
        cmocka_unit_test(test_run_cpu_errors),
        cmocka_unit_test(test_image),
        cmocka_unit_test(test_unstable_for_tools),
        cmocka_unit_test(test_outsets),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
