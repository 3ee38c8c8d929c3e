/* test_codegen.c - launch plans and generated source, on the host.
 *
 *   matmul strides   an operand with only size-1 batch dims is one matrix
 *                    for every batch (stride 0, not its contiguous stride:
 *                    cuBLAS read past the buffer); a mix of size-1 and full
 *                    batch dims is copied first; every operand's last batch
 *                    stays inside its buffer.
 *   plan_verify      hand-made loops at the 32-bit boundary: a grid-stride
 *                    loop that steps past its bound is refused, a saturating
 *                    one passes; constants are checked against 2^31.
 *   32-bit plans     pointwise, whole-tensor and rows kernels at 2^30 + 1
 *                    and 2^31 - 65 elements keep the 32-bit plan (and pass
 *                    plan_verify); one more element needs the 64-bit one.
 *   arg-reductions   the split-column kernel's vector body gives every
 *                    column the row's position (it gave column e r + e).
 *   shared kernels   every kernel a plan launches is defined once in the
 *                    unit; the compact kernels of a long chain that are the
 *                    same code are one kernel many steps launch, each step
 *                    with arguments of the same kinds and dtypes, no buffer
 *                    twice; kernels of an ordinary program are not shared.
 *   every program    every function of the .tc files of examples/ and
 *                    tests/golden/extra/: the above, no kernel names a buffer its step does
 *                    not pass, and the 64-bit variant is the 32-bit one but
 *                    for the index type (the same kernels, steps and
 *                    arguments).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "build_harness.h"
#include "codegen/codegen.h"
#include "exec.h"
#include "fuse/fuse.h"
#include "lower/lir.h"
#include "sched/sched.h"

/* The unit of fn alone (32-bit indices unless idx64); any error fails. */
static const cg_unit *unit_of(const char *text, const char *fn, bool idx64)
{
    const gfn *g = ok_fn(text, fn);
    jmp_buf jb;
    H.d.jb = &jb;
    if (setjmp(jb)) {
        H.d.jb = NULL;
        fail_msg("compiling '%s' failed (%s): %s", fn, tc_status_str(H.d.status), H.d.msg ? H.d.msg : "");
    }
    lfn *l = lower_fn(g, g->dims, H.a, &H.d);
    ffn *f = fuse_fn(l, NULL, H.a, &H.d);
    const sfn *s = sched_fn(f, idx64, H.a, &H.d);
    cg_unit *u = codegen_unit(&s, 1, idx64, H.a, &H.d);
    H.d.jb = NULL;
    return u;
}

static int64_t cval(const tc_dim *d)
{
    int64_t v = -1;
    if (!dim_is_const(d, &v))
        fail_msg("not a constant: %s", dim_str(H.a, d));
    return v;
}

static const pstep *only_matmul(const tc_plan *p)
{
    const pstep *m = NULL;
    for (int i = 0; i < p->nsteps; i++)
        if (p->steps[i].kind == PSTEP_MATMUL) {
            assert_null(m);
            m = &p->steps[i];
        }
    assert_non_null(m);
    return m;
}

/* Every batch of each operand inside its buffer. */
static void inside(const tc_plan *p, const pstep *m)
{
    int64_t batch = cval(m->mm.batch), M = cval(m->mm.m), N = cval(m->mm.n), K = cval(m->mm.k);
    assert_true(cval(m->mm.stride_a) * (batch - 1) + M * K <= cval(p->bufs[m->mm.a].numel));
    assert_true(cval(m->mm.stride_b) * (batch - 1) + K * N <= cval(p->bufs[m->mm.b].numel));
    assert_true(cval(m->mm.stride_c) * (batch - 1) + M * N <= cval(p->bufs[m->mm.c].numel));
}

static void test_matmul_size1_batch(void **state)
{
    (void)state;
    const char *src =
        "fn mm1(a: f32[64, 17, 33], w: f32[1, 33, 100]) -> f32[64, 17, 100] { return a @ w }\n"
        "fn mm2(a: f32[1, 17, 33], w: f32[64, 33, 100]) -> f32[64, 17, 100] { return a @ w }\n"
        "fn mm3(a: f32[4, 1, 17, 33], w: f32[4, 5, 33, 100]) -> f32[4, 5, 17, 100] { return a @ w }\n"
        "fn mm4(a: f32[1, 1, 17, 33], w: f32[4, 5, 33, 100]) -> f32[4, 5, 17, 100] { return a @ w }\n"
        "fn mm5(a: f32[4, 5, 17, 33], w: f32[33, 100]) -> f32[4, 5, 17, 100] { return a @ w }\n";
    const tc_plan *p = unit_of(src, "mm1", false)->plans[0];
    const pstep *m = only_matmul(p);
    assert_int_equal(cval(m->mm.batch), 64);
    assert_int_equal(cval(m->mm.stride_a), 17 * 33);
    assert_int_equal(cval(m->mm.stride_b), 0);
    inside(p, m);

    p = unit_of(src, "mm2", false)->plans[0];
    m = only_matmul(p);
    assert_int_equal(cval(m->mm.stride_a), 0);
    assert_int_equal(cval(m->mm.stride_b), 33 * 100);
    inside(p, m);

    /* [4, 1, ...] against [4, 5, ...]: no single batch stride; copied to [4, 5, ...] */
    p = unit_of(src, "mm3", false)->plans[0];
    m = only_matmul(p);
    assert_int_equal(cval(m->mm.batch), 20);
    assert_int_equal(p->bufs[m->mm.a].kind, PBUF_TEMP);
    assert_int_equal(cval(m->mm.stride_a), 17 * 33);
    inside(p, m);

    p = unit_of(src, "mm4", false)->plans[0];
    m = only_matmul(p);
    assert_int_equal(cval(m->mm.stride_a), 0);
    assert_int_equal(p->bufs[m->mm.a].kind, PBUF_PARAM);
    inside(p, m);

    p = unit_of(src, "mm5", false)->plans[0];
    m = only_matmul(p);
    assert_int_equal(cval(m->mm.stride_b), 0);
    inside(p, m);
}

/* plan_verify on a one-kernel plan with the given loop and limit. */
static tc_status verify_one(const tc_dim *limit, ploop loop)
{
    static ploop l;
    static pstep st;
    static const tc_dim *lim[1];
    static tc_plan p;
    l = loop;
    memset(&st, 0, sizeof st);
    st.kind = PSTEP_KERNEL;
    st.kernel = "k";
    st.loops = &l;
    st.nloops = 1;
    lim[0] = limit;
    memset(&p, 0, sizeof p);
    p.fn = "f";
    p.steps = &st;
    p.nsteps = 1;
    p.limits = lim;
    p.nlimits = limit ? 1 : 0;
    tc_dimctx *c = dimctx_new(H.a);
    jmp_buf jb;
    H.d.jb = &jb;
    H.d.status = TC_OK;
    if (setjmp(jb)) {
        H.d.jb = NULL;
        return H.d.status;
    }
    plan_verify(&p, c, H.a, &H.d);
    H.d.jb = NULL;
    return TC_OK;
}

static void test_plan_verify(void **state)
{
    (void)state;
    tc_dimctx *c = dimctx_new(H.a);
    const tc_dim *n = dim_sym(c, "N"), *n64 = dim_add(c, n, dim_const(c, 64));
    const tc_dim *grid = dim_ceildiv(c, n, dim_const(c, 1024));
    /* the old grid-stride loop: base += gridDim.x * blockDim.x * 4 reaches
     * N - 1 + (N + 1023) / 1024 * 1024, about 2N: no limit bounds it */
    ploop old = {"base", n, dim_mul(c, grid, dim_const(c, 1024))};
    assert_int_equal(verify_one(n64, old), TC_ERR_INTERNAL);
    assert_non_null(strstr(H.d.msg ? H.d.msg : H.d.brief, "index 'base'"));
    /* saturating at N: bounded by N + 64 */
    assert_int_equal(verify_one(n64, (ploop){"base", n, NULL}), TC_OK);
    /* a step within the limit's room, and one past it */
    assert_int_equal(verify_one(n64, (ploop){"r", n, dim_const(c, 65)}), TC_OK);
    assert_int_equal(verify_one(n64, (ploop){"r", n, dim_const(c, 66)}), TC_ERR_INTERNAL);
    /* nothing bounds a loop over another size */
    assert_int_equal(verify_one(n64, (ploop){"row", dim_sym(c, "M"), NULL}), TC_ERR_INTERNAL);
    /* constants are checked against 2^31 itself */
    int64_t top = ((int64_t)1 << 31) - 1;
    assert_int_equal(verify_one(NULL, (ploop){"r", dim_const(c, top), NULL}), TC_OK);
    assert_int_equal(verify_one(NULL, (ploop){"r", dim_const(c, top), dim_const(c, 2)}), TC_ERR_INTERNAL);
    assert_int_equal(verify_one(NULL, (ploop){"r", dim_const(c, top - 64), dim_const(c, 65)}), TC_OK);
}

/* fn at the given sizes: 32-bit plan, limits all below 2^31 (or not). */
static void want_plan32(const char *text, const char *fn, bool fits)
{
    const tc_plan *p = unit_of(text, fn, false)->plans[0];
    assert_false(p->idx64);
    bool need = rt_needs_idx64(p, NULL, 0, NULL, NULL);
    if (need == fits)
        fail_msg("%s: the 32-bit plan %s", fn, fits ? "is refused" : "is taken");
    for (int i = 0; i < p->nsteps; i++) {
        assert_false(p->steps[i].idx64);
        assert_true(p->steps[i].kind != PSTEP_KERNEL || p->steps[i].nloops > 0);
    }
}

static void test_plan32_boundaries(void **state)
{
    (void)state;
    /* 2^30 + 1 = 1073741825, 2^31 - 65 = 2147483583 */
    want_plan32("fn p(x: f32[1073741825]) -> f32[1073741825] { return x * 2 + 1 }", "p", true);
    want_plan32("fn p(x: f32[2147483583]) -> f32[2147483583] { return x * 2 + 1 }", "p", true);
    want_plan32("fn p(x: f32[2147483584]) -> f32[2147483584] { return x * 2 + 1 }", "p", false);
    want_plan32("fn s(x: f32[1073741825]) -> f32 { return sum(x) }", "s", true);
    want_plan32("fn s(x: f32[2147483583]) -> f32 { return sum(x) }", "s", true);
    want_plan32("fn s(x: i32[2147483583]) -> i64 { return sum(x) }", "s", true);
    /* rows kernels with more than 2^30 rows */
    want_plan32("fn r(x: f32[1073741825, 1]) -> f32[1073741825] { return sum(x, axis=1) }", "r", true);
    want_plan32("fn r(x: f32[715827861, 3]) -> f32[715827861] { return max(x, axis=1) }", "r", true);
    want_plan32("fn r(x: f32[2147483583, 1]) -> f32[2147483583] { return sum(x, axis=1) }", "r", true);
    /* a column reduction over 2^30 + 1 columns */
    want_plan32("fn c(x: f32[2, 536870913]) -> f32[536870913] { return sum(x, axis=0) }", "c", true);
}

static void test_argmin_split_columns(void **state)
{
    (void)state;
    const cg_unit *u = unit_of("fn a(x: f32[A, N, D]) -> i64[N, D] { return argmin(x, axis=0) }", "a", false);
    const char *src = u->source;
    assert_non_null(strstr(src, "columns a thread") ? src : strstr(src, "tc_vload"));
    /* every element of the vector is at the reduced position r */
    assert_non_null(strstr(src, "tc_argv<float>{(float)t2, (long long)(r)}"));
    assert_null(strstr(src, "(long long)(r + 1)"));
}

/* n softmax-like statements over rows (tests/compile_time/gen.sh reduce) */
static const char *softmax_chain(int n)
{
    tc_buf b;
    buf_init(&b, H.a);
    buf_puts(&b, "fn f(x: f32[R, D]) -> f32[R, D] {\n    h0 = x\n");
    for (int i = 0; i < n; i++)
        buf_printf(&b, "    h%d = exp(h%d - max(h%d, axis=-1, keepdim=true)) / "
                       "sum(exp(h%d - max(h%d, axis=-1, keepdim=true)), axis=-1, keepdim=true)\n",
                   i + 1, i, i, i, i);
    buf_printf(&b, "    return h%d\n}\n", n);
    return buf_str(&b);
}

/* How often the unit defines a kernel of this name. */
static int definitions(const char *src, const char *name)
{
    const char *sig = arena_printf(H.a, " %s(\n", name);
    int n = 0;
    for (const char *p = strstr(src, sig); p; p = strstr(p + 1, sig))
        n++;
    return n;
}

/* The plan's kernel table and its steps agree with the unit; steps that
 * share a kernel pass arguments of the same kinds and dtypes.  Returns the
 * kernel steps. */
static int check_kernels(const cg_unit *u, const tc_plan *p)
{
    int steps = 0;
    for (int i = 0; i < p->nkernels; i++) {
        assert_int_equal(definitions(u->source, p->kernels[i].name), 1);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(p->kernels[i].name, p->kernels[j].name);
    }
    const pstep **first = test_malloc(sizeof *first * (size_t)(p->nkernels + 1));
    for (int i = 0; i < p->nkernels; i++)
        first[i] = NULL;
    for (int i = 0; i < p->nsteps; i++) {
        const pstep *st = &p->steps[i];
        if (st->kind != PSTEP_KERNEL)
            continue;
        steps++;
        assert_in_range(st->kidx, 0, p->nkernels - 1);
        const pkernel *pk = &p->kernels[st->kidx];
        assert_ptr_equal(st->kernel, pk->name);
        /* the arguments are what the kernel's parameters say */
        assert_int_equal(st->nargs, pk->nparams);
        for (int a = 0; a < st->nargs; a++) {
            assert_int_equal(st->args[a].kind, pk->params[a].kind);
            if (st->args[a].kind == PARG_BUF)
                assert_int_equal(p->bufs[st->args[a].buf].dtype, pk->params[a].dtype);
        }
        for (int a = 0; a < st->nargs; a++)
            for (int b = 0; b < a; b++)
                assert_false(st->args[a].kind == PARG_BUF && st->args[b].kind == PARG_BUF &&
                             st->args[a].buf == st->args[b].buf);
        const pstep *f = first[st->kidx];
        if (!f) {
            first[st->kidx] = st;
            continue;
        }
        assert_int_equal(st->nargs, f->nargs);
        for (int a = 0; a < st->nargs; a++) {
            assert_int_equal(st->args[a].kind, f->args[a].kind);
            if (st->args[a].kind == PARG_BUF)
                assert_int_equal(p->bufs[st->args[a].buf].dtype, p->bufs[f->args[a].buf].dtype);
            if (st->args[a].kind == PARG_DIM)
                assert_ptr_equal(st->args[a].dim, f->args[a].dim);
        }
    }
    test_free(first);
    return steps;
}

static void test_shared_kernels(void **state)
{
    (void)state;
    const cg_unit *u = unit_of(softmax_chain(250), "f", false);
    const tc_plan *p = u->plans[0];
    int steps = check_kernels(u, p);
    /* 250 statements: many kernels, a handful of distinct ones */
    assert_true(steps >= 20);
    assert_true(p->nkernels * 4 <= steps);
    assert_non_null(strstr(u->source, "the same code, launched over their own buffers"));
    /* the 64-bit variant shares the same way */
    const cg_unit *u64 = unit_of(softmax_chain(250), "f", true);
    assert_int_equal(check_kernels(u64, u64->plans[0]), steps);
    assert_int_equal(u64->plans[0]->nkernels, p->nkernels);
    /* an ordinary program: one kernel a step, none shared */
    const char *two = "fn t(x: f32[R, D]) -> f32[R, D] {\n"
                      "    a = exp(x - max(x, axis=-1, keepdim=true))\n"
                      "    b = a / sum(a, axis=-1, keepdim=true)\n"
                      "    return b + max(b, axis=0, keepdim=true)\n}\n";
    const cg_unit *o = unit_of(two, "t", false);
    assert_int_equal(check_kernels(o, o->plans[0]), o->plans[0]->nkernels);
    assert_null(strstr(o->source, "the same code"));
}

/* The text of kernel name's definition in src, signature to closing brace. */
static const char *definition(const char *src, const char *name, size_t *len)
{
    const char *start = strstr(src, arena_printf(H.a, " %s(\n", name));
    assert_non_null(start);
    const char *end = strstr(start, "\n}\n");
    assert_non_null(end);
    *len = (size_t)(end - start);
    return start;
}

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* No kernel names a buffer its step does not pass: every identifier of
 * the kernel's text that is a buffer of the plan is among the step's
 * PARG_BUF arguments (pN, positional names: N below their number). */
static void reads_only_passed(const cg_unit *u, const tc_plan *p)
{
    for (int i = 0; i < p->nsteps; i++) {
        const pstep *st = &p->steps[i];
        if (st->kind != PSTEP_KERNEL || st->fe_n) /* foreach: addresses from the group table */
            continue;
        int nbuf = 0;
        for (int a = 0; a < st->nargs; a++)
            nbuf += st->args[a].kind == PARG_BUF;
        size_t len;
        const char *t = definition(u->source, st->kernel, &len);
        for (size_t k = 0; k < len;) {
            if (!ident_char(t[k]) || (k > 0 && ident_char(t[k - 1]))) {
                k++;
                continue;
            }
            size_t e = k;
            while (e < len && ident_char(t[e]))
                e++;
            const char *id = arena_printf(H.a, "%.*s", (int)(e - k), t + k);
            char *end;
            long pos = id[0] == 'p' && id[1] >= '0' && id[1] <= '9' ? strtol(id + 1, &end, 10) : -1;
            if (pos >= 0 && *end == '\0' && pos >= nbuf)
                fail_msg("%s: %s names %s, the step passes %d buffers", p->fn, st->kernel, id, nbuf);
            for (int b = 0; b < p->nbufs; b++) {
                if (strcmp(p->bufs[b].name, id) != 0)
                    continue;
                bool passed = false;
                for (int a = 0; a < st->nargs; a++)
                    passed |= st->args[a].kind == PARG_BUF && st->args[a].buf == b;
                if (!passed)
                    fail_msg("%s: %s names %s, which step %d does not pass", p->fn, st->kernel, id, i);
            }
            k = e;
        }
    }
}

/* s without the first occurrence of cut (which must be there) */
static const char *without(const char *s, const char *cut)
{
    const char *at = strstr(s, cut);
    assert_non_null(at);
    return arena_printf(H.a, "%.*s%s", (int)(at - s), s, at + strlen(cut));
}

/* The 64-bit variant is the 32-bit one with idx_t long long: the same
 * text but for the unit's typedef (and a "wide" kernel's own 64-bit
 * typedef, which the 32-bit unit needs), the same plan but for idx64. */
static void variants_agree(const cg_unit *u32, const cg_unit *u64)
{
    static const char wide[] = "    /* an index divides and multiplies back (a reshape of a permuted view):\n"
                               "     * its terms can pass 2^31 even when every size fits, so 64-bit here */\n"
                               "    typedef long long idx_t;\n";
    const char *a = without(u32->source, "typedef int idx_t; /* 32-bit index arithmetic */\n");
    while (strstr(a, wide))
        a = without(a, wide);
    const char *b = without(u64->source, "typedef long long idx_t; /* 64-bit index arithmetic */\n");
    assert_string_equal(a, b);
    assert_int_equal(u32->nplans, u64->nplans);
    for (int i = 0; i < u32->nplans; i++) {
        const tc_plan *p = u32->plans[i], *q = u64->plans[i];
        assert_false(p->idx64);
        assert_true(q->idx64);
        assert_int_equal(p->nkernels, q->nkernels);
        assert_int_equal(p->nsteps, q->nsteps);
        for (int j = 0; j < p->nsteps; j++) {
            const pstep *s = &p->steps[j], *t = &q->steps[j];
            assert_int_equal(s->kind, t->kind);
            if (s->kind != PSTEP_KERNEL)
                continue;
            assert_string_equal(s->kernel, t->kernel);
            assert_int_equal(s->kidx, t->kidx);
            assert_int_equal(s->nargs, t->nargs);
            for (int k = 0; k < s->nargs; k++) {
                assert_int_equal(s->args[k].kind, t->args[k].kind);
                assert_int_equal(s->args[k].buf, t->args[k].buf);
            }
        }
    }
}

/* The unit of every function of text (as `tensorc compile` makes it), at
 * 32- or 64-bit indices. */
static const cg_unit *unit_all(const char *text, bool idx64)
{
    if (try_build(text, NULL, NULL) != TC_OK)
        fail_msg("build failed: %s", H.d.msg ? H.d.msg : "");
    jmp_buf jb;
    H.d.jb = &jb;
    if (setjmp(jb)) {
        H.d.jb = NULL;
        fail_msg("compiling failed (%s): %s", tc_status_str(H.d.status), H.d.msg ? H.d.msg : "");
    }
    const sfn **fns = ARENA_ARRAY(H.a, const sfn *, H.g->nfns > 0 ? H.g->nfns : 1);
    for (int i = 0; i < H.g->nfns; i++) {
        const gfn *g = H.g->fns[i];
        lfn *l = lower_fn(g, g->dims, H.a, &H.d);
        fns[i] = sched_fn(fuse_fn(l, NULL, H.a, &H.d), idx64, H.a, &H.d);
    }
    cg_unit *u = codegen_unit(fns, H.g->nfns, idx64, H.a, &H.d);
    H.d.jb = NULL;
    return u;
}

static const char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    tc_buf b;
    buf_init(&b, H.a);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_printf(&b, "%.*s", (int)n, chunk);
    fclose(f);
    return buf_str(&b);
}

static int check_folder(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".tc") != 0)
            continue;
        const char *text = read_all(arena_printf(H.a, "%s/%s", dir, e->d_name));
        const cg_unit *u32 = unit_all(text, false);
        const cg_unit *u64 = unit_all(text, true);
        for (int i = 0; i < u32->nplans; i++) {
            check_kernels(u32, u32->plans[i]);
            reads_only_passed(u32, u32->plans[i]);
            reads_only_passed(u64, u64->plans[i]);
        }
        variants_agree(u32, u64);
        n++;
    }
    closedir(d);
    return n;
}

static void test_every_program(void **state)
{
    (void)state;
    int n = check_folder(TC_SOURCE_DIR "/examples") + check_folder(TC_SOURCE_DIR "/tests/golden/extra");
    assert_true(n >= 20);
    /* a long chain: shared compact kernels, positional names */
    const cg_unit *u32 = unit_of(softmax_chain(250), "f", false);
    const cg_unit *u64 = unit_of(softmax_chain(250), "f", true);
    reads_only_passed(u32, u32->plans[0]);
    variants_agree(u32, u64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_matmul_size1_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plan_verify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plan32_boundaries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_argmin_split_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_kernels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_program, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
