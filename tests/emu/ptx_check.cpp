/* ptx_check.cpp - runs ptx_check.cu (through unit.py, as ptx.sh builds it)
 * on emu.h and checks each result against values computed here from the PTX
 * ISA's definitions, not from emu.h's code.  Prints "N checks, M failed". */
#include "emu.h"
#include EMU_UNIT
#include <cmath>
#include <random>

static int checks, fails;
static void expect(bool ok, const char *what, int i, unsigned long long got, unsigned long long want) {
    checks++;
    if (!ok && fails++ < 20)
        printf("FAIL %s [%d]: got 0x%llx, want 0x%llx\n", what, i, got, want);
}
/* f16 and bf16 bits of k / 8, |k| <= 8: exact in both */
static unsigned short h_of(int k) {
    if (k == 0) return 0;
    const double v = fabs(k / 8.0);
    int e = (int)floor(log2(v));
    const unsigned m = (unsigned)((v / ldexp(1.0, e) - 1.0) * 1024.0);
    return (unsigned short)((k < 0 ? 0x8000 : 0) | (unsigned)(e + 15) << 10 | m);
}
static unsigned short bf_of(int k) {
    const float f = (float)(k / 8.0);
    unsigned u;
    memcpy(&u, &f, 4);
    return (unsigned short)(u >> 16); /* exact: the low half is zero */
}

int main() {
    std::mt19937 rng(5);
    /* mma through ldmatrix, f16 and bf16 */
    for (int bf = 0; bf < 2; bf++) {
        int ka[256], kb[128];
        std::vector<unsigned short> A(256), B(128);
        for (int i = 0; i < 256; i++) ka[i] = (int)(rng() % 17) - 8, A[i] = bf ? bf_of(ka[i]) : h_of(ka[i]);
        for (int i = 0; i < 128; i++) kb[i] = (int)(rng() % 17) - 8, B[i] = bf ? bf_of(kb[i]) : h_of(kb[i]);
        std::vector<float> C(128, -1.0f);
        emu_launch(1, 32, 1, [&] { k_mma(A.data(), B.data(), C.data(), bf); });
        for (int r = 0; r < 16; r++)
            for (int c = 0; c < 8; c++) {
                double s = 0.5;
                for (int k = 0; k < 16; k++)
                    s += ka[16 * r + k] / 8.0 * (kb[8 * k + c] / 8.0);
                expect(C[8 * r + c] == (float)s, bf ? "mma bf16 via ldmatrix" : "mma f16 via ldmatrix", 8 * r + c,
                       (unsigned long long)(C[8 * r + c] * 64), (unsigned long long)(s * 64));
            }
    }
    /* ldmatrix x1, .trans, movmatrix */
    {
        std::vector<unsigned short> A(256);
        for (int i = 0; i < 256; i++) A[i] = (unsigned short)(i * 7 + 1);
        std::vector<unsigned> out(96);
        emu_launch(1, 32, 1, [&] { k_rows(A.data(), out.data()); });
        for (int l = 0; l < 32; l++) {
            const int r = l / 4, c = 2 * (l % 4);
            const unsigned x = A[16 * r + c] | (unsigned)A[16 * r + c + 1] << 16;
            const unsigned y = A[16 * c + r] | (unsigned)A[16 * (c + 1) + r] << 16;
            expect(out[l] == x, "ldmatrix.x1", l, out[l], x);
            expect(out[32 + l] == y, "ldmatrix.x1.trans", l, out[32 + l], y);
            expect(out[64 + l] == y, "movmatrix.trans", l, out[64 + l], y);
        }
    }
    /* cp.async */
    {
        unsigned char src[64], out[192];
        for (int i = 0; i < 64; i++) src[i] = (unsigned char)(i + 1);
        emu_launch(1, 1, 1, [&] { k_cp(src, out); });
        for (int i = 0; i < 64; i++) {
            expect(out[i] == 0x11, "cp.async before its wait", i, out[i], 0x11);
            const bool g0 = i < 4 || (i >= 8 && i < 16);
            expect(out[64 + i] == (g0 ? src[i] : 0x11), "cp.async after wait_group 2", i, out[64 + i], g0 ? src[i] : 0x11);
            const unsigned want = g0 || (i >= 16 && i < 22) || (i >= 32 && i < 48) ? src[i] : (i >= 22 && i < 32) ? 0 : 0x11;
            expect(out[128 + i] == want, "cp.async after wait_group 0", i, out[128 + i], want);
        }
    }
    /* cvt: x, f16, bf16, f16 back to f32 (bits), rzi of x * 1e9 */
    {
        struct { float x; unsigned h, b, back; int rzi; } T[] = { /* rzi: -1 for trunc(x * 1e9f), in range */
            {1.0f, 0x3c00, 0x3f80, 0x3f800000u, -1},
            {65504.0f, 0x7bff, 0x4780, 0x477fe000u, 2147483647},
            {65519.99f, 0x7bff, 0x4780, 0x477fe000u, 2147483647},
            {65520.0f, 0x7c00, 0x4780, 0x7f800000u, 2147483647},
            {ldexpf(1, -25), 0x0000, 0x3300, 0x00000000u, -1},
            {3 * ldexpf(1, -25), 0x0002, 0x33c0, 0x34000000u, -1},
            {ldexpf(1, -24), 0x0001, 0x3380, 0x33800000u, -1},
            {1 + ldexpf(1, -11), 0x3c00, 0x3f80, 0x3f800000u, -1},
            {1 + 3 * ldexpf(1, -11), 0x3c02, 0x3f80, 0x3f804000u, -1},
            {1 + ldexpf(1, -8), 0x3c04, 0x3f80, 0x3f808000u, -1},
            {1 + 3 * ldexpf(1, -8), 0x3c0c, 0x3f82, 0x3f818000u, -1},
            {-2.5f, 0xc100, 0xc020, 0xc0200000u, (int)0x80000000u},
            {-INFINITY, 0xfc00, 0xff80, 0xff800000u, (int)0x80000000u},
            {NAN, 0x7fff, 0x7fff, 0x7fffe000u, 0},
        };
        const int n = sizeof T / sizeof T[0];
        std::vector<float> x(n);
        for (int i = 0; i < n; i++) x[i] = T[i].x;
        std::vector<unsigned> out(6 * n);
        emu_launch(1, 1, 1, [&] { k_cvt(x.data(), out.data(), n); });
        for (int i = 0; i < n; i++) {
            expect(out[6 * i] == T[i].h, "cvt.rn.f16.f32", i, out[6 * i], T[i].h);
            expect(out[6 * i + 1] == T[i].b, "cvt.rn.bf16.f32", i, out[6 * i + 1], T[i].b);
            expect(out[6 * i + 2] == T[i].back, "cvt.f32.f16", i, out[6 * i + 2], T[i].back);
            expect(out[6 * i + 3] == (T[i].h << 16 | 0x3c00), "cvt.rn.f16x2.f32", i, out[6 * i + 3], T[i].h << 16 | 0x3c00);
            expect(out[6 * i + 4] == (T[i].b << 16 | 0x3f80), "cvt.rn.bf16x2.f32", i, out[6 * i + 4], T[i].b << 16 | 0x3f80);
            if (T[i].rzi == -1)
                T[i].rzi = (int)(double)(x[i] * 1e9f);
            expect(out[6 * i + 5] == (unsigned)T[i].rzi, "cvt.rzi.s32.f32", i, out[6 * i + 5], (unsigned)T[i].rzi);
        }
    }
    /* mul.rn.f16x2, fma.rn.bf16x2 (+ -0): a, b, the correctly rounded product
     * (ties to even, subnormals, overflow to inf), worked out by hand; 0xffff:
     * any NaN */
    {
        struct { unsigned short a, b, p; } H[] = {
            {0x3c00, 0x3c00, 0x3c00}, {0x3e00, 0x3e00, 0x4080},  /* 1 * 1, 1.5 * 1.5 */
            {0x3c01, 0x3c01, 0x3c02},                            /* (1 + 2^-10)^2: down */
            {0x3c01, 0x3e00, 0x3e02},                            /* 1.5 + 1.5 ulp: tie to even */
            {0x0400, 0x3800, 0x0200},                            /* 2^-14 / 2: subnormal */
            {0x0001, 0x3800, 0x0000}, {0x0003, 0x3800, 0x0002}, /* ties at the smallest */
            {0x5c00, 0x5c00, 0x7c00}, {0xc000, 0x4200, 0xc600},  /* 256^2: inf; -2 * 3 */
            {0x7c00, 0x0000, 0xffff}, {0x8000, 0x4500, 0x8000},  /* inf * 0: NaN; -0 * 5 */
        }, B[] = {
            {0x3f80, 0x3f80, 0x3f80}, {0x3f81, 0x3f81, 0x3f82}, /* 1 * 1, (1 + 2^-7)^2: down */
            {0x3f81, 0x3fc0, 0x3fc2},                           /* tie to even */
            {0x0080, 0x3f00, 0x0040},                           /* 2^-126 / 2: subnormal */
            {0x5f80, 0x5f80, 0x7f80}, {0xc000, 0x4040, 0xc0c0}, /* 2^128: inf; -2 * 3 */
            {0x0000, 0x40a0, 0x0000}, {0x8000, 0x40a0, 0x8000}, /* 0 * 5 + -0 = +0; -0 * 5 = -0 */
            {0x7f80, 0x0000, 0xffff}, {0x3f80, 0x7fc0, 0xffff}, /* inf * 0, 1 * NaN: NaN */
            {0x3f80, 0x3f80, 0x3f80},
        };
        const int n = sizeof H / sizeof H[0];
        static_assert(sizeof H == sizeof B, "as many bf16 cases");
        std::vector<unsigned> a(n), b(n), out(3 * n);
        for (int i = 0; i < n; i++) { /* f16 lane i beside bf16 lane i in one register each */
            a[i] = (unsigned)B[i].a << 16 | H[i].a;
            b[i] = (unsigned)B[i].b << 16 | H[i].b;
        }
        emu_launch(1, 1, 1, [&] { k_mul2(a.data(), b.data(), out.data(), n); });
        auto nan16 = [](unsigned v, bool bf) { return bf ? (v & 0x7f80) == 0x7f80 && (v & 0x7f) : (v & 0x7c00) == 0x7c00 && (v & 0x3ff); };
        for (int i = 0; i < n; i++) {
            /* low halves: the f16 case through mul.f16x2, the bf16 one through fma.bf16x2 */
            const unsigned hl = out[3 * i] & 0xffff, bh = out[3 * i + 1] >> 16;
            expect(H[i].p == 0xffff ? nan16(hl, false) : hl == H[i].p, "mul.rn.f16x2", i, hl, H[i].p);
            expect(B[i].p == 0xffff ? nan16(bh, true) : bh == B[i].p, "fma.rn.bf16x2", i, bh, B[i].p);
            expect(out[3 * i + 2] == a[i], "mov.b32", i, out[3 * i + 2], a[i]);
        }
    }
    /* max.NaN / min.NaN (PTX ISA): NaN when either input is NaN (the
     * canonical 0x7fffffff), else the larger / smaller; a +0/-0 pair is
     * left unchecked (the ISA orders them, emu.h does not need to) */
    {
        const unsigned QN = 0x7fffffffu;
        struct { float a, b; unsigned mx, mn; } T[] = {
            {1.0f, 2.0f, 0x40000000u, 0x3f800000u},
            {-3.0f, -INFINITY, 0xc0400000u, 0xff800000u},
            {INFINITY, 5.0f, 0x7f800000u, 0x40a00000u},
            {NAN, 1.0f, QN, QN},
            {1.0f, NAN, QN, QN},
            {NAN, NAN, QN, QN},
            {-INFINITY, NAN, QN, QN},
            {ldexpf(1, -140), 0.0f, 0x00000200u, 0x00000000u}, /* subnormals kept (no .ftz) */
        };
        const int n = sizeof T / sizeof T[0];
        std::vector<float> a(n), b(n);
        for (int i = 0; i < n; i++) a[i] = T[i].a, b[i] = T[i].b;
        std::vector<unsigned> out(2 * n);
        emu_launch(1, 1, 1, [&] { k_minmax(a.data(), b.data(), out.data(), n); });
        for (int i = 0; i < n; i++) {
            expect(out[2 * i] == T[i].mx, "max.NaN.f32", i, out[2 * i], T[i].mx);
            expect(out[2 * i + 1] == T[i].mn, "min.NaN.f32", i, out[2 * i + 1], T[i].mn);
        }
    }
    printf("%d checks, %d failed\n", checks, fails);
    return fails != 0;
}
