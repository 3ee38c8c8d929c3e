/* fastmath.cpp - the f32 math of src/codegen/helpers.cuh and scan.cuh on
 * the host (emu.h; fastmath.sh builds it), against the interpreter's own
 * double-precision definitions (src/base/refmath.h), over sweeps of
 * floats and the special values.
 *
 *   fastmath STRIDE    (every STRIDE-th float of each range; 1: all of them)
 *
 * Each function is swept three times: with the MUFU's rcp.approx and
 * lg2.approx correctly rounded, and with every one of their results off by
 * the PTX ISA's bound upward, then downward (emu.h's emu_approx_bias), and
 * expf's by CUDA's 2 ulp the same way: the hardware's bits are unknown
 * here, its bounds are not.  Prints each
 * function's largest error in ulps of the f32 result (results of at least
 * 2^-126) and as a relative error, and the largest absolute error; fails
 * when one passes the bounds below or a special value (NaN, infinities,
 * zeros, the thresholds) differs from what the reference gives.  Built
 * with TC_FAST_MATH=0 it measures the accurate functions instead (libm:
 * glibc's here, not CUDA's) and checks only the special values.
 *
 * expf stays CUDA's in both (already on the MUFU: 8 SASS instructions). */
#include "emu.h"
/* CUDA's expf is within 2 ulp (CUDA C++ Programming Guide, "Mathematical
 * Functions"); glibc's, which the helpers call here, within 1: in the biased
 * sweeps each expf result is moved 2 ulp in the bias' direction as well */
static float cuda_expf(float x) {
    float r = expf(x);
    for (int i = 0; i < 2 && emu_approx_bias && std::isfinite(r) && r != 0.0f; i++)
        r = nextafterf(r, emu_approx_bias > 0 ? INFINITY : -INFINITY);
    return r;
}
#define expf(x) cuda_expf(x)
#include "fastmath_unit.cu"
#undef expf
#include "../../src/base/refmath.h"

static int nfail = 0;

static double ulp_of(double r) { /* the f32 ulp at |r| (normal results) */
    int e;
    frexp(fabs(r), &e);
    return ldexp(1.0, std::max(e - 24, -149));
}

struct stat {
    const char *name;
    double max_ulp = 0, max_rel = 0, max_abs = 0, at_ulp = 0, at_rel = 0;
    long long n = 0;
    /* scale: where the result is a difference of larger terms (logaddexp's
     * m + log1p(...)), ulps and relative error are of the larger term's size */
    void add(double x, float got, double want, double scale = 0) {
        n++;
        if (std::isnan(want) || std::isinf(want) || std::isnan(got) || std::isinf(got)) {
            /* the specials' own check: the same NaN-ness and the same infinity */
            bool ok = std::isnan(want) ? std::isnan(got) : std::isinf(want) ? (double)got == want
                                                                                : false;
            if (!ok && !(std::isinf(got) && fabs(want) > 3.4028234663852886e38)) {
                if (nfail < 20)
                    printf("FAIL %s(%.9g) = %.9g, want %.17g\n", name, x, got, want);
                nfail++;
            }
            return;
        }
        const double err = fabs((double)got - want);
        max_abs = std::max(max_abs, err);
        const double size = std::max(fabs(want), scale);
        if (size < 0x1p-126)
            return;
        const double u = err / ulp_of(size), r = err / size;
        if (u > max_ulp) max_ulp = u, at_ulp = x;
        if (r > max_rel) max_rel = r, at_rel = x;
    }
    void report(double bound_ulp) {
        printf("  %-10s %10lld values: max %.2f ulp (x = %.9g), relative %.3g = 2^%.1f (x = %.9g), "
               "absolute %.3g\n", name, n, max_ulp, at_ulp, max_rel, log2(max_rel > 0 ? max_rel : 1e-300),
               at_rel, max_abs);
        if (TC_FAST_MATH && max_ulp > bound_ulp) {
            printf("FAIL %s: %.2f ulp, more than its bound %.1f\n", name, max_ulp, bound_ulp);
            nfail++;
        }
    }
};

/* every stride-th float from lo to hi (both finite, lo <= hi), and the specials */
template <class F> static void sweep(float lo, float hi, long long stride, F f) {
    auto key = [](float v) { /* floats in order as integers */
        int32_t b;
        memcpy(&b, &v, 4);
        return b < 0 ? -(long long)(b & 0x7fffffff) : (long long)b;
    };
    auto val = [](long long k) {
        int32_t b = k < 0 ? (int32_t)((-k) | 0x80000000LL) : (int32_t)k;
        float v;
        memcpy(&v, &b, 4);
        return v;
    };
    for (long long k = key(lo); k <= key(hi); k += stride)
        f(val(k));
    f(hi);
}
static const float specials[] = {
    0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.17549435e-38f, -1.17549435e-38f, 1e-45f, -1e-45f,
    1e-40f, -1e-40f, 3.40282347e38f, -3.40282347e38f, 1.0f, -1.0f, 0.5f, 2.0f, -0.5f, 20.0f,
    20.000002f, 19.999998f, -20.0f, 88.72f, 88.73f, -87.33f, -87.34f, -103.9f, -104.0f, -200.0f,
    200.0f, 1e30f, -1e30f, 0.49999997f, 0.50000006f, 1.9999999f, 2.0000002f, -0.50000006f,
    -0.49999997f, 0.99999994f, 1.0000001f, -0.99999994f, -1.0000001f, 1e-30f, -1e-30f,
};

int main(int argc, char **argv) {
    const long long stride = argc > 1 ? atoll(argv[1]) : 4099;
    /* bounds in ulps of the result (fast math; the sweeps measure them, the
     * comments say what they are) */
    const double b_log = 5, b_log1p = 5, b_sigmoid = 8, b_softplus = 8, b_silu = 8, b_lae = 8, b_lse = 24, b_lsex = 160;
    for (int bias = 0; bias <= 2; bias++) {
        emu_approx_bias = bias == 0 ? 0 : bias == 1 ? 1 : -1;
        printf("%s math, MUFU %s:\n", TC_FAST_MATH ? "fast" : "accurate",
               bias == 0 ? "correctly rounded" : bias == 1 ? "at its bound upward" : "at its bound downward");
        stat s_log{"log"}, s_log1p{"log1p"}, s_sig{"sigmoid"}, s_sp{"softplus"}, s_silu{"silu"},
            s_lae{"logaddexp"}, s_lse{"lse pair"}, s_lsec{"lse chain"}, s_lsex{"lse exp"}, s_lsexc{"chain exp"};
        auto lg = [&](float x) { s_log.add(x, tc_logf(x), log((double)x)); };
        auto l1p = [&](float x) { s_log1p.add(x, tc_log1pf(x), log1p((double)x)); };
        auto sig = [&](float x) { s_sig.add(x, tc_sigmoid(x), rf_sigmoid(x)); };
        auto sp = [&](float x) { s_sp.add(x, tc_softplus(x), rf_softplus(x)); };
        auto si = [&](float x) { s_silu.add(x, tc_silu(x), rf_silu(x)); };
        /* every positive float for log; log1p from -1 up */
        sweep(1e-45f, 3.40282347e38f, stride, lg);
        sweep(0.25f, 4.0f, std::max(1LL, stride / 64), lg); /* around the series' window, densely */
        sweep(-1.0f, 3.40282347e38f, stride, l1p);
        sweep(-0.75f, 2.0f, std::max(1LL, stride / 64), l1p);
        for (float x : specials) lg(x), l1p(x);
        sweep(-100.0f, 100.0f, stride, sig);
        sweep(-100.0f, 100.0f, stride, sp);
        /* silu from -87 (below, x times a subnormal sigmoid loses its digits, libm's too) */
        sweep(-87.0f, 100.0f, stride, si);
        for (float x : specials) {
            sig(x), sp(x);
            if (!(x < -87.0f)) si(x);
        }
        /* logaddexp(a, b) as logcumsumexp's step: a from a few, b = a + d over the sweep */
        for (float a : {0.0f, 1.0f, -3.5f, 47.25f, -80.0f, 1e4f}) {
            auto lae = [&](float d) {
                const float b = a + d;
                const double m = std::max((double)a, (double)b), lo = std::min((double)a, (double)b);
                const double l = log1p(exp(lo - m));
                s_lae.add(d, tc_logaddexp(a, b), m + l, std::max(fabs(m), l));
            };
            sweep(-100.0f, 100.0f, stride * 4, lae);
            /* the same two steps as logcumsumexp's pair (TENSORC_SCAN_LSE) walks
             * them, in ulps of the same size: where a is 0 and b far below,
             * the value is b's term alone (logcumsumexp of [0, -34] is
             * 1.7e-15; a sum s with the max's own 1 in it rounded it to 0) */
            auto lsep = [&](float d) {
                const float b = a + d;
                const double m = std::max((double)a, (double)b), lo = std::min((double)a, (double)b);
                const double l = log1p(exp(lo - m));
                s_lse.add(d, tc_lse_value(tc_lse_add(tc_lse_add(tc_ms_init(), a), b)), m + l, std::max(fabs(m), l));
            };
            sweep(-100.0f, 100.0f, stride * 4, lsep);
        }
        const float sp_ab[] = {0.0f, -0.0f, 1.0f, INFINITY, -INFINITY, NAN, -1e30f, 1e30f};
        for (float a : sp_ab)
            for (float b : sp_ab) {
                const double m = std::max((double)a, (double)b), lo = std::min((double)a, (double)b);
                double want = m + log1p(exp(lo - m));
                if (std::isnan(a) || std::isnan(b)) want = NAN;
                else if (std::isinf(m)) want = m; /* +-inf stays itself; -inf is the empty sum */
                s_lae.add(a, tc_logaddexp(a, b), want);
            }
        /* logcumsumexp's pair (scan.cuh, TENSORC_SCAN_LSE): walks of 256
         * steps, each step's tc_lse_value against the exact log-sum-exp (in
         * ulps of its larger term, max(|m|, log s), as logaddexp's) and
         * tc_lse_exp(c, a) against exp(a + it), |a + it| <= 2; the chained
         * tc_logaddexp (and expf of it) on the same walks for comparison
         * (not bounded here).  Measured (stride 4099): the pair's value 13.1
         * ulp with the MUFU correctly rounded, 19.1 with every ex2 2 ulp off
         * one way (a max rising by 0.005 a step rescales s 140 times, each
         * rescale carrying the same error); the chain's 8.5 and 9.5.  Its
         * exp: 15.8 and 150 ulp (9.2e-6); the chain's 7612 (4.6e-4: its value
         * rounded at |c| ~ 1e4 each step, where the pair's m is exact). */
        {
            uint64_t rs = 0x9e3779b97f4a7c15ULL;
            auto rnd = [&]() { /* uniform in [-1, 1) */
                rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
                return (double)(rs >> 11) * 0x1p-52 - 1.0;
            };
            for (int walk = 0; walk < 400; walk++) {
                const double w[] = {1, 10, 60, 1e4, 0.01};
                const double scale = w[walk % 5], drift = walk % 3 == 0 ? 0 : walk % 3 == 1 ? 0.5 : -0.5;
                tc_ms c = tc_ms_init(), ce = tc_ms_init(); /* ce: the step where only exp reads it */
                float chain = 0;
                double lse = -INFINITY;
                for (int t = 0; t < 256; t++) {
                    const float x = (float)(scale * rnd() + drift * t * (scale > 100 ? 1 : scale));
                    const double m = std::max(lse, (double)x);
                    lse = m + log(exp(lse - m) + exp((double)x - m));
                    c = tc_lse_add(c, x);
                    ce = tc_lse_add<false>(ce, x);
                    chain = t == 0 ? x : tc_logaddexp(chain, x);
                    const double big = std::max(fabs((double)c.m), log1p((double)c.s)); /* s: the terms but the max's */
                    s_lse.add(x, tc_lse_value(c), lse, big);
                    s_lsec.add(x, chain, lse, big);
                    const float a = (float)(-lse + 2 * rnd()); /* |a + value| <= 2: its rounding is an ulp */
                    s_lsex.add(a, tc_lse_exp(ce, a), exp((double)a + lse));
                    s_lsexc.add(a, expf(a + chain), exp((double)a + lse));
                }
            }
            /* the special values: every pair of steps from them, then a finite one */
            const float sp_x[] = {0.0f, -1.0f, 2.5f, INFINITY, -INFINITY, NAN, -1e30f, 1e30f};
            for (float a : sp_x)
                for (float b : sp_x)
                    for (float d : {0.5f, -INFINITY}) {
                        tc_ms c = tc_ms_init();
                        double want = -INFINITY;
                        bool nan = false;
                        for (float x : {a, b, d}) {
                            c = tc_lse_add(c, x);
                            nan |= std::isnan(x);
                            const double m = std::max(want, (double)x);
                            want = nan ? NAN : std::isinf(m) ? m : m + log(exp(want - m) + exp((double)x - m));
                            s_lse.add(x, tc_lse_value(c), want, std::fabs(m) + 1);
                            s_lsex.add(x, tc_lse_exp(c, 1.0f), nan ? NAN : exp(1.0 + want));
                        }
                    }
        }
        /* logform.c's split forms (one series for a `where` of two logs):
         * the same bits as the functions, negated and selected too; and the
         * fast softplus, unclamped, is x itself above 20 */
        auto same = [&](const char *what, float x, float got, float want) {
            if (memcmp(&got, &want, 4) != 0 && !(std::isnan(got) && std::isnan(want))) {
                if (nfail < 20)
                    printf("FAIL %s(%.9g) = %.9g, want %.9g (bits)\n", what, x, got, want);
                nfail++;
            }
        };
        auto lf = [&](float x) {
            if (!TC_FAST_MATH)
                return;
            same("log_lf", x, tc_lf_value(tc_log_lf(x)), tc_logf(x));
            same("neg log_lf", x, tc_lf_value(tc_neg_lf(tc_log_lf(x))), -tc_logf(x));
            same("log1p_lf", x, tc_lf_value(tc_log1p_lf(x)), tc_log1pf(x));
            same("neg log1p_lf", x, tc_lf_value(tc_neg_lf(tc_log1p_lf(x))), -tc_log1pf(x));
            same("softplus_lf", x, tc_lf_value(tc_softplus_lf(x)), tc_softplus(x));
            same("neg softplus_lf", x, tc_lf_value(tc_neg_lf(tc_softplus_lf(x))), -tc_softplus(x));
            const float h = (x > 0.0f ? x : 0.0f) + 0.5f; /* the minGRU's log_g */
            same("where_lf", x, tc_lf_value(tc_where_lf(x >= 0.0f, tc_log_lf(h), tc_neg_lf(tc_softplus_lf(-x)))),
                 x >= 0.0f ? tc_logf(h) : -tc_softplus(-x));
            same("where_lf 2", x, tc_lf_value(tc_where_lf(x < 1.0f, tc_log1p_lf(x), tc_softplus_lf(x))),
                 x < 1.0f ? tc_log1pf(x) : tc_softplus(x));
            if (x > 20.0f)
                same("softplus above 20", x, tc_softplus(x), x);
            if (!(x < 0x1p-126f)) { /* lg2.approx.ftz: normal arguments (and NaN, inf) */
                same("logf_n", x, tc_logf_n(x), tc_logf(x));
                same("log_lf_n", x, tc_lf_value(tc_log_lf_n(x)), tc_logf(x));
            }
        };
        sweep(-3.40282347e38f, 3.40282347e38f, stride, lf);
        sweep(-40.0f, 40.0f, std::max(1LL, stride / 16), lf);
        for (float x : specials) lf(x), lf(-x);
        s_log.report(b_log);
        s_log1p.report(b_log1p);
        s_sig.report(b_sigmoid);
        s_sp.report(b_softplus);
        s_silu.report(b_silu);
        s_lae.report(b_lae);
        s_lse.report(b_lse);
        s_lsec.report(1e30);
        s_lsex.report(b_lsex);
        s_lsexc.report(1e30);
    }
    printf("%s\n", nfail ? "fastmath: FAILURES" : "fastmath: all within their bounds");
    return nfail ? 1 : 0;
}
