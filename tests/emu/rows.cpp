/* rows.cpp - one of bench/cases' rows kernels run on the host (emu.h) at the
 * row lengths given, against a double-precision computation here; built by
 * run.sh once per case with -DEMU_SOFTMAX, -DEMU_RMSNORM or -DEMU_CE and
 * -DEMU_UNIT='"the unit, through mk.py"'.  Five rows each: random, a NaN, +inf
 * last, -inf in the first half (threads and blocks with nothing else), large values; the cross-entropy rows also hold a unique
 * maximum off the cluster's rank 0 and targets at 0, V-1, -100 (ignored).
 * Prints a line per length and exits 1 on any mismatch. */
#include "emu.h"
#include EMU_UNIT
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

static int fails, checks;
static std::mt19937 rng(14);
static float urand(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }
static unsigned short f2bf(float f) {
    unsigned u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (unsigned short)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}
static float bf2f(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
static std::vector<float> rows5(long long n, float big) {
    std::vector<float> x(5 * n);
    for (int k = 0; k < 5; k++)
        for (long long i = 0; i < n; i++)
            x[k * n + i] = urand(-4, 4) * (k == 4 ? big : 1.0f);
    x[1 * n + n / 2] = NAN;
    x[2 * n + n - 1] = INFINITY;
    for (long long i = 0; i < (n + 1) / 2; i++) /* whole threads' and blocks' elements -inf */
        x[3 * n + i] = -INFINITY;
    return x;
}
static bool near(double got, double want, double tol) {
    if (std::isnan(want))
        return std::isnan(got);
    if (std::isinf(want))
        return got == want;
    return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want));
}
static void check(bool ok, const char *what, long long n, int row, long long i, double got, double want) {
    checks++;
    if (!ok && fails++ < 10)
        printf("FAIL %s, rows of %lld: row %d at %lld: got %.9g, want %.9g\n", what, n, row, i, got, want);
}
/* row r of x (rows of n): its max in double, and whether it holds a NaN */
static double row_max(const std::vector<float> &x, long long n, int r, bool *nan) {
    double m = -INFINITY;
    *nan = false;
    for (long long i = 0; i < n; i++)
        *nan |= x[r * n + i] != x[r * n + i], m = std::max(m, (double)x[r * n + i]);
    return m;
}

/* EMU_WIDE 2: the kernels of TENSORC_ROWS_REGS=32 (twice the row a thread,
 * blocks of at most 512: sched.c's wide rows) */
#ifndef EMU_WIDE
#define EMU_WIDE 1
#endif
#ifndef EMU_SPLIT
#define EMU_SPLIT 0
#endif
/* f32 softmax, bf16 rmsnorm and cross-entropy's two passes: the kernels take the rows'
 * ticket's workspace (TENSORC_ROWS_TICKET,
 * codegen/rows.c) unless -DEMU_TICKET=0, and run a persistent grid as the
 * runtime launches them, here of EMU_CLUSTERS clusters (2: the five rows'
 * first four by index, the last by ticket); the counter must be zero after
 * each launch */
#ifndef EMU_TICKET
#define EMU_TICKET 1
#endif
#ifndef EMU_CLUSTERS
#define EMU_CLUSTERS 2
#endif
#if EMU_TICKET
#define EMU_WS , (void *)emu_ws
#else
#define EMU_WS
#endif
static unsigned emu_ws[4];
/* bf16 rmsnorm and cross-entropy: the pipe's kernel (suffix _w, sched.h's pipe_split) for rows
 * past 32768, the plain one (no cluster, no workspace) up to it; -DEMU_PSPLIT=0: one kernel
 * (TENSORC_ROWS_PIPE=0 or 1, TENSORC_ROWS_REGS=32) */
#ifndef EMU_PSPLIT
#define EMU_PSPLIT 1
#endif
/* K(ARGS...) over 5 rows of n: split, K_w on a persistent grid of EMU_CLUSTERS
 * clusters (the ticket in emu_ws) past 32768 and K a cluster a row up to it;
 * else K alone (EMU_CLUSTERS clusters where a cluster shares the row) */
#if EMU_PSPLIT
#define EMU_ROWS_LAUNCH(K, ...)                                                                     \
    do {                                                                                            \
        if (n > 32768)                                                                              \
            emu_launch(EMU_CLUSTERS * ncl, block, ncl, [&] { K##_w(__VA_ARGS__, (void *)emu_ws); }); \
        else                                                                                        \
            emu_launch(5 * ncl, block, ncl, [&] { K(__VA_ARGS__); });                               \
    } while (0)
#else
#define EMU_ROWS_LAUNCH(K, ...) \
    emu_launch((ncl > 1 ? EMU_CLUSTERS : 5) * ncl, block, ncl, [&] { K(__VA_ARGS__ EMU_WS); })
#endif
/* f32 softmax's elements a thread (the runtime's block_per): 8 for TENSORC_ROWS_REGS=8 */
#ifndef EMU_PER
#define EMU_PER (16 * EMU_WIDE)
#endif

int main(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        long long n = atoll(argv[a]);
        unsigned block, ncl;
#if defined(EMU_SOFTMAX) /* softmax.tc, f32: 16 elements a thread */
        std::vector<float> x = rows5(n, 2500), out(5 * n, -777.0f);
#if EMU_SPLIT /* the plan's two variants (sched.h's wide_split): the wide one past 16384 */
        if (n > 16384) {
            emu_size(n, 32, &ncl, &block, 512);
            emu_launch((ncl > 1 ? EMU_CLUSTERS : 5) * ncl, block, ncl, [&] { tc_red_fused_max_sub_exp_sum_div_0_w(x.data(), out.data(), 5, (int)n EMU_WS); });
        } else {
            emu_size(n, 16, &ncl, &block);
            emu_launch(5 * ncl, block, ncl, [&] { tc_red_fused_max_sub_exp_sum_div_0(x.data(), out.data(), 5, (int)n); });
        }
#else
        emu_size(n, EMU_PER, &ncl, &block, 1024 / EMU_WIDE);
        emu_launch((ncl > 1 ? EMU_CLUSTERS : 5) * ncl, block, ncl, [&] { tc_red_fused_max_sub_exp_sum_div_0(x.data(), out.data(), 5, (int)n EMU_WS); });
#endif
        check(emu_ws[0] == 0, "ticket counter zero after the launch", n, 0, 0, emu_ws[0], 0);
        for (int r = 0; r < 5; r++) {
            bool nan;
            const double m = row_max(x, n, r, &nan);
            double s = 0;
            for (long long i = 0; i < n; i++)
                s += exp((double)x[r * n + i] - m);
            for (long long i = 0; i < n; i++) {
                double want = nan ? NAN : exp((double)x[r * n + i] - m) / s;
                check(near(out[r * n + i], want, 1e-5), "softmax f32", n, r, i, out[r * n + i], want);
            }
        }
        const char *what = "softmax f32";
#elif defined(EMU_RMSNORM) /* rmsnorm.tc's rmsnorm_bf16: 32 elements a thread, two a register */
        emu_size(n, 32 * EMU_WIDE, &ncl, &block, 1024 / EMU_WIDE);
        std::vector<float> xf = rows5(n, 1);
        std::vector<unsigned short> x(5 * n), g(n), out(5 * n, 0xffff);
        for (long long i = 0; i < 5 * n; i++)
            x[i] = f2bf(xf[i]);
        for (long long i = 0; i < n; i++)
            g[i] = f2bf(urand(0.5f, 1.5f));
        /* the pipe's row kept in its slots (TENSORC_ROWS_PIPE=2, 16-bit rows' default): a
         * persistent grid, the rows' ticket, in the second kernel past one block's row */
        EMU_ROWS_LAUNCH(tc_red_fused_cast_mul_sum_div_add_rsqrt_0, x.data(), g.data(), out.data(), 5, (int)n, 1e-6f);
        check(emu_ws[0] == 0, "ticket counter zero after the launch", n, 0, 0, emu_ws[0], 0);
        for (int r = 0; r < 5; r++) {
            double ss = 0;
            for (long long i = 0; i < n; i++)
                ss += (double)bf2f(x[r * n + i]) * bf2f(x[r * n + i]);
            double rs = 1.0 / sqrt(ss / n + 1e-6);
            for (long long i = 0; i < n; i++) {
                double want = bf2f(f2bf(bf2f(f2bf((float)(bf2f(x[r * n + i]) * rs))) * bf2f(g[i])));
                check(near(bf2f(out[r * n + i]), want, 1e-2), "rmsnorm bf16", n, r, i, bf2f(out[r * n + i]), want);
            }
        }
        const char *what = "rmsnorm bf16";
#elif defined(EMU_CE) /* cross_entropy.tc's rows kernel: max, sum of exp (the target's logit is a gather after it) */
        emu_size(n, 32 * EMU_WIDE, &ncl, &block, 1024 / EMU_WIDE);
        std::vector<float> xf = rows5(n, 25);
        std::vector<unsigned short> x(5 * n);
        for (long long i = 0; i < 5 * n; i++)
            x[i] = f2bf(xf[i]);
        x[0 * n + n * 5 / 8] = f2bf(7.0f); /* unique maxima, off rank 0 of a cluster */
        x[3 * n + n * 3 / 8] = f2bf(9.0f);
        std::vector<float> mx(5, -7), se(5, -7);
        EMU_ROWS_LAUNCH(tc_red_fused_cast_max_isinf_where_sub_exp_0, x.data(), mx.data(), se.data(), 5, (int)n);
        check(emu_ws[0] == 0, "ticket counter zero after the launch", n, 0, 0, emu_ws[0], 0);
        for (int r = 0; r < 5; r++) {
            double m = -INFINITY, s = 0;
            bool nan = false;
            for (long long i = 0; i < n; i++) {
                double v = bf2f(x[r * n + i]);
                nan |= v != v;
                m = std::max(m, v);
            }
            for (long long i = 0; i < n; i++)
                s += exp(bf2f(x[r * n + i]) - (std::isinf(m) ? 0.0 : m));
            check(near(mx[r], nan ? NAN : m, 0), "cross_entropy max", n, r, -1, mx[r], nan ? NAN : m);
            check(near(se[r], nan ? NAN : s, 1e-5), "cross_entropy sum of exp", n, r, -1, se[r], nan ? NAN : s);
        }
        const char *what = "cross_entropy bf16";
#endif
        printf("%s, rows of %lld: %u block(s) of %u threads a row; %d checks, %d failures so far\n", what, n,
               ncl, block, checks, fails);
    }
    return fails != 0;
}
