/* colpart.cpp - column partials (fuse.h) run on the host (emu.h): the rows
 * kernel that carries column sums (blocks of 64 rows, a partial row each)
 * and the kernel that combines them, as tensorc generates them, checked
 * against the reference interpreter (tensorc run --device=cpu) on the same
 * inputs.  Built by rows.sh once per case: -DEMU_LN (layernorm_grad of
 * examples/layernorm_backward.tc, f32), -DEMU_RMS (its rmsnorm_grad),
 * -DEMU_LNBWD (its layernorm_bwd, the vjp pair's backward: the bench
 * case), -DEMU_LN_BF16 (colpart.tc's layernorm_grad, bf16), -DEMU_SMX
 * (colpart.tc's softmax_colsum) or -DEMU_3D (colpart.tc's
 * colpart_3d_cols2: [B, 3, D], rows the flattened [B, 3]), with -DEMU_UNIT the unit through mk.py,
 * generated with TENSORC_COL_SPLIT=4 (the combine split in 4: fewer
 * emulated threads; the code is the default's with another constant).
 *
 * Usage: colpart TENSORC FILE WORKDIR N,D ...  For each shape, clean
 * inputs and then inputs with a NaN in x's middle row and +inf in dout's
 * last row; each output is checked against the interpreter; a second run
 * with the rows kernel's grid clamped to 2 blocks (so blocks of rows are
 * taken grid-stride) and a third identical run must give the same bits
 * (deterministic, grid-independent); the last row's dx computed alone
 * (N = 1) must have the same bits (batch-invariant); the combine's
 * workspace must be left zero.  Prints a line per shape, exits 1 on any
 * mismatch.  -DEMU_PER=16 -DEMU_BMAX=512: the unit was generated with
 * TENSORC_ROWS_REGS=16 (16 elements a thread).  -DEMU_COL_ROWS=R: the unit was generated with
 * TENSORC_COL_ROWS=R (default 64).  The first run's outputs are written to
 * WORKDIR/bits_N_D_{0,1}.bin (clean, special) so that rows.sh can compare
 * two variants' bits (TENSORC_COLPART_PREFETCH=1 against 0). */
#include "emu.h"
#include EMU_UNIT
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

static int fails, checks;
static std::mt19937 rng(15);

#if defined(EMU_LN_BF16)
typedef unsigned short E;
static E to_e(float f) {
    unsigned u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (unsigned short)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}
static float from_e(E h) { return __uint_as_float((unsigned)h << 16); }
static const double TOL = 2e-2;
#else
typedef float E;
static E to_e(float f) { return f; }
static float from_e(E f) { return f; }
static const double TOL = 1e-3;
#endif

/* the case: inputs (x, a weight, dout), outputs, and the two launches */
#if defined(EMU_LN) || defined(EMU_LN_BF16)
static const char *FN = "layernorm_grad";
static const char *INS[] = {"x", "w", "b", "dout"};
static const int IN_ROWS[] = {1, 0, 0, 1};
static const char *OUTS[] = {"dx", "dw", "db"};
static const bool OUT_ROWS[] = {true, false, false};
enum { NIN = 4, NOUT = 3, NPART = 2, DOUT = 3 };
#define EPS 1e-5f
#elif defined(EMU_RMS)
static const char *FN = "rmsnorm_grad";
static const char *INS[] = {"x", "g", "dout"};
static const int IN_ROWS[] = {1, 0, 1};
static const char *OUTS[] = {"dx", "dg"};
static const bool OUT_ROWS[] = {true, false};
enum { NIN = 3, NOUT = 2, NPART = 1, DOUT = 2 };
#define EPS 1e-6f
#elif defined(EMU_LNBWD) /* the vjp pair's backward: the forward's saved mean and variance */
static const char *FN = "layernorm_bwd";
static const char *INS[] = {"x", "w", "b", "saved_mean", "saved_var", "dout"};
static const int IN_ROWS[] = {1, 0, 0, 2, 2, 1};
static const char *OUTS[] = {"dx", "dw", "db"};
static const bool OUT_ROWS[] = {true, false, false};
enum { NIN = 6, NOUT = 3, NPART = 2, DOUT = 5 };
#define EPS 1e-5f
#elif defined(EMU_3D) /* colpart.tc's colpart_3d_cols2: rows [B, 3] flattened, the column sum over both */
static const char *FN = "colpart_3d_cols2";
static const char *INS[] = {"x", "d"};
static const int IN_ROWS[] = {1, 1};
static const char *OUTS[] = {"y", "s"};
static const bool OUT_ROWS[] = {true, false};
enum { NIN = 2, NOUT = 2, NPART = 1, DOUT = 1 };
#define TT 3
#else /* EMU_SMX */
static const char *FN = "softmax_colsum";
static const char *INS[] = {"x"};
static const int IN_ROWS[] = {1};
static const char *OUTS[] = {"y", "s"};
static const bool OUT_ROWS[] = {true, false};
enum { NIN = 1, NOUT = 2, NPART = 1, DOUT = -1 };
#endif

#ifndef EMU_PER /* elements a thread (TENSORC_ROWS_REGS=16: 16, blocks of at most 512) */
#define EMU_PER 8
#define EMU_BMAX 1024
#endif
#ifndef EMU_COL_ROWS
#define EMU_COL_ROWS 64 /* rows a block of the rows kernel (TENSORC_COL_ROWS) */
#endif
#ifndef TT
#define TT 1 /* rows a [B, T, D] case's B is multiplied by (its T) */
#endif
typedef std::vector<E> T;
/* the rows kernel over rows [0, n) of in/out (offset by `row0` rows) */
static void rows_kernel(std::vector<T> &in, std::vector<T> &out, std::vector<std::vector<float>> &part, long long row0,
                        long long n, long long d, unsigned grid) {
    long long want = (d + EMU_PER - 1) / EMU_PER; /* 8 elements a thread with column partials (sched_rows) */
    unsigned block = 32;
    while (block < EMU_BMAX && (long long)block < want)
        block *= 2;
    long long o = row0 * d;
    emu_launch_xy(grid, block, 1, [&] {
#if defined(EMU_LN)
        tc_red_fused_mul_sum_div_sub_add_rsqrt_0(in[0].data() + o, in[1].data(), in[3].data() + o, out[0].data() + o,
                                                 part[0].data(), part[1].data(), (int)n, (int)d, EPS);
#elif defined(EMU_LN_BF16)
        tc_red_fused_cast_mul_sum_div_sub_add_0(in[0].data() + o, in[1].data(), in[3].data() + o, out[0].data() + o,
                                                part[0].data(), part[1].data(), (int)n, (int)d, EPS);
#elif defined(EMU_LNBWD)
        tc_red_fused_mul_sub_sum_add_rsqrt_div_0(in[0].data() + o, in[1].data(), in[3].data() + row0, in[4].data() + row0,
                                                 in[5].data() + o, out[0].data() + o, part[0].data(), part[1].data(),
                                                 (int)n, (int)d, EPS);
#elif defined(EMU_3D) /* n rows: [n / 3, 3], or [n, 1] for a row alone */
        int b3 = n % TT ? (int)n : (int)(n / TT), t3 = n % TT ? 1 : TT;
        tc_red_fused_sum_div_sub_mul_0(in[0].data() + o, in[1].data() + o, out[0].data() + o, part[0].data(), b3, t3,
                                       (int)d);
#elif defined(EMU_RMS)
        tc_red_fused_mul_sum_div_add_rsqrt_0(in[0].data() + o, in[1].data(), in[2].data() + o, out[0].data() + o,
                                             part[0].data(), (int)n, (int)d, EPS);
#else
        tc_red_fused_max_sub_exp_sum_div_0(in[0].data() + o, out[0].data() + o, part[0].data(), (int)n, (int)d);
#endif
    });
}

/* the combine kernel's sizes come in the order of their first use in its
 * code: the columns (D) first, then the rows of partials */
static void combine_kernel(std::vector<T> &out, std::vector<std::vector<float>> &part, long long n, long long d,
                           std::vector<unsigned char> &ws) {
    unsigned groups = (unsigned)((d + 31) / 32);
    emu_launch_xy(4 * groups, 32, 8, [&] {
#if defined(EMU_LN)
        tc_red_fused_div_sub_add_rsqrt_mul_sum_1(out[1].data(), out[2].data(), part[0].data(), part[1].data(), (int)d,
                                                 (int)n, ws.data());
#elif defined(EMU_LN_BF16)
        tc_red_fused_cast_div_sub_add_rsqrt_mul_1(out[1].data(), out[2].data(), part[0].data(), part[1].data(), (int)d,
                                                  (int)n, ws.data());
#elif defined(EMU_LNBWD)
        tc_red_fused_sub_add_rsqrt_mul_sum_copy_1(out[1].data(), out[2].data(), part[0].data(), part[1].data(), (int)d,
                                                  (int)n, ws.data());
#elif defined(EMU_3D)
        tc_red_fused_mul_sum_1(out[1].data(), part[0].data(), (int)d, (int)(n / TT), TT, ws.data());
#elif defined(EMU_RMS)
        tc_red_fused_div_add_rsqrt_mul_sum_copy_1(out[1].data(), part[0].data(), (int)d, (int)n, ws.data());
#else
        tc_red_fused_sum_1(out[1].data(), part[0].data(), (int)d, (int)n, ws.data());
#endif
    });
}

/* .npy files of f32 (bf16 values travel as the f32 they are exactly) */
static void write_npy(const std::string &path, const T &v, long long n, long long d, int rows) {
    std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
    h += rows == 1 && TT > 1 ? std::to_string(n / TT) + ", " + std::to_string(TT) + ", " + std::to_string(d) + "), }"
         : rows == 1 ? std::to_string(n) + ", " + std::to_string(d) + "), }"
         : rows == 2 ? std::to_string(n) + ", 1), }"
                     : std::to_string(d) + ",), }";
    while ((10 + h.size() + 1) % 64)
        h += ' ';
    h += '\n';
    FILE *f = fopen(path.c_str(), "wb");
    unsigned short hl = (unsigned short)h.size();
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fwrite(&hl, 2, 1, f);
    fwrite(h.data(), 1, h.size(), f);
    for (E e : v) {
        float x = from_e(e);
        fwrite(&x, 4, 1, f);
    }
    fclose(f);
}

static std::vector<float> read_npy(const std::string &path) {
    std::vector<float> r;
    FILE *f = fopen(path.c_str(), "rb");
    if (!f)
        return r;
    std::vector<unsigned char> b;
    unsigned char buf[65536];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0)
        b.insert(b.end(), buf, buf + k);
    fclose(f);
    if (b.size() < 10)
        return r;
    size_t hl = b[8] | (size_t)b[9] << 8;
    std::string h(b.begin() + 10, b.begin() + 10 + hl);
    if (h.find("'<f4'") == std::string::npos)
        return r;
    r.resize((b.size() - 10 - hl) / 4);
    memcpy(r.data(), b.data() + 10 + hl, r.size() * 4);
    return r;
}

static bool near(double got, double want) {
    if (std::isnan(want))
        return std::isnan(got);
    if (std::isinf(want))
        return got == want;
    return std::fabs(got - want) <= TOL * std::max(1.0, std::fabs(want));
}

static void check(bool ok, const char *what, long long n, long long d, long long i, double got, double want) {
    checks++;
    if (!ok && fails++ < 10)
        printf("FAIL %s %s, %lld x %lld: at %lld: got %.9g, want %.9g\n", FN, what, n, d, i, got, want);
}

int main(int argc, char **argv) {
    if (argc < 4)
        return 2;
    std::string tc = argv[1], file = argv[2], dir = argv[3];
    for (int a = 4; a < argc; a++) {
        long long n = 0, d = 0;
        if (sscanf(argv[a], "%lld,%lld", &n, &d) != 2)
            return 2;
        n *= TT; /* a [B, T, D] case: the argument is B */
        for (int special = 0; special < 2; special++) {
            std::vector<T> in(NIN), out(NOUT);
            std::uniform_real_distribution<float> u(-2, 2);
            for (int i = 0; i < NIN; i++) {
                in[i].resize(IN_ROWS[i] == 1 ? n * d : IN_ROWS[i] == 2 ? n : d);
                for (auto &e : in[i])
                    e = to_e(u(rng) * (IN_ROWS[i] || i == 0 ? 1.0f : 0.5f));
            }
#if defined(EMU_LNBWD) /* what the forward saved: each row's mean and variance */
            for (long long r = 0; r < n; r++) {
                double m = 0, v = 0;
                for (long long i = 0; i < d; i++)
                    m += from_e(in[0][r * d + i]) / d;
                for (long long i = 0; i < d; i++)
                    v += (from_e(in[0][r * d + i]) - m) * (from_e(in[0][r * d + i]) - m) / d;
                in[3][r] = to_e((float)m);
                in[4][r] = to_e((float)v);
            }
#endif
            if (special) {
                in[0][(n / 2) * d + d / 2] = to_e(NAN);
                if (DOUT >= 0)
                    in[DOUT][(n - 1) * d] = to_e(INFINITY);
            }
            std::string cmd = "'" + tc + "' run '" + file + "' --fn " + FN + " --device=cpu";
#if defined(EMU_LN_BF16)
            cmd += " --dtype T=bf16";
#endif
            for (int i = 0; i < NIN; i++) {
                write_npy(dir + "/" + INS[i] + ".npy", in[i], n, d, IN_ROWS[i]);
                cmd += std::string(" --input ") + INS[i] + "=" + dir + "/" + INS[i] + ".npy";
            }
            for (int i = 0; i < NOUT; i++)
                cmd += std::string(" --output ") + OUTS[i] + "=" + dir + "/ref_" + OUTS[i] + ".npy";
            cmd += " >'" + dir + "/ref.log' 2>&1";
            if (system(cmd.c_str()) != 0) {
                printf("FAIL %s: the interpreter failed: %s\n", FN, cmd.c_str());
                fails++;
                continue;
            }
            /* three runs: the full grid, the grid clamped to 2 blocks, the full grid again */
            long long nb = (n + EMU_COL_ROWS - 1) / EMU_COL_ROWS;
            std::vector<T> res(3); /* each run's outputs, one after another */
            for (int run = 0; run < 3; run++) {
                for (int i = 0; i < NOUT; i++)
                    out[i].assign(OUT_ROWS[i] ? n * d : d, to_e(-777.0f));
                std::vector<std::vector<float>> part(NPART, std::vector<float>(nb * d, -555.0f));
                std::vector<unsigned char> ws(16 * ((d + 31) / 32) + d * 4 * 16 * NPART, 0);
                rows_kernel(in, out, part, 0, n, d, run == 1 ? (unsigned)std::min(nb, 2LL) : (unsigned)nb);
                combine_kernel(out, part, n, d, ws);
                bool zero = std::all_of(ws.begin(), ws.end(), [](unsigned char c) { return c == 0; });
                check(zero, "workspace left zero", n, d, -1, zero, 1);
                for (int i = 0; i < NOUT; i++)
                    res[run].insert(res[run].end(), out[i].begin(), out[i].end());
            }
            for (int i = 0; i < NOUT; i++) {
                std::vector<float> want = read_npy(dir + "/ref_" + OUTS[i] + ".npy");
                check(want.size() == out[i].size(), OUTS[i], n, d, -1, (double)want.size(), (double)out[i].size());
                for (size_t j = 0; j < want.size() && j < out[i].size(); j++)
                    check(near(from_e(out[i][j]), want[j]), OUTS[i], n, d, (long long)j, from_e(out[i][j]), want[j]);
            }
            {
                std::string bits = dir + "/bits_" + std::to_string(n) + "_" + std::to_string(d) + "_" +
                                   std::to_string(special) + ".bin";
                FILE *bf = fopen(bits.c_str(), "wb");
                bool ok = bf && fwrite(res[0].data(), sizeof(E), res[0].size(), bf) == res[0].size();
                if (bf)
                    ok = fclose(bf) == 0 && ok;
                check(ok, "bits written", n, d, -1, ok, 1);
            }
            for (int run = 1; run < 3; run++) {
                bool same = res[run].size() == res[0].size() &&
                            memcmp(res[run].data(), res[0].data(), res[0].size() * sizeof(E)) == 0;
                check(same, run == 1 ? "same bits, grid of 2 blocks" : "same bits, run again", n, d, -1, same, 1);
            }
            /* the last row alone: its row results have the same bits (not
             * in rows.sh's *_mix cases, whose path depends on the row's place) */
            if (!getenv("EMU_MIXED_PATHS")) {
                std::vector<T> one(NOUT);
                for (int i = 0; i < NOUT; i++)
                    one[i].assign(OUT_ROWS[i] ? n * d : d, to_e(-777.0f));
                std::vector<std::vector<float>> part(NPART, std::vector<float>(d, -555.0f));
                rows_kernel(in, one, part, n - 1, 1, d, 1);
                bool same = memcmp(one[0].data() + (n - 1) * d, res[0].data() + (n - 1) * d, d * sizeof(E)) == 0;
                check(same, "the last row alone: same bits", n, d, n - 1, same, 1);
            }
        }
        printf("%s, %lld x %lld: %d checks, %d failures so far\n", FN, n, d, checks, fails);
    }
    return fails != 0;
}
