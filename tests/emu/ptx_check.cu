/* ptx_check.cu - emu.h's inline PTX against the PTX ISA's definitions, in
 * the idioms real kernels use them in (ptx.sh rewrites this with unit.py and
 * runs it; also valid CUDA).  ldmatrix.x4 of a row-major 16 x 16 A tile and
 * ldmatrix.x2.trans of a row-major 16 x 8 B tile must feed mma.sync
 * m16n8k16 so that it computes A B (their fragment layouts agree only if
 * each is right), and the .x1 and non-transposed forms and movmatrix give
 * rows and transposes; cp.async of 4, 8 and 16 bytes, ca and cg, with a
 * source size (zero fill), lands only at its wait_group, and a read before
 * it sees the old contents; cvt rounds f32 to f16 and bf16 to nearest even
 * (subnormals, overflow to inf, ties) and packs x2 with the first source in
 * the upper half; rzi truncates and saturates. */
__global__ void k_mma(const unsigned short *A, const unsigned short *B, float *C, int bf) {
    __shared__ __align__(16) unsigned short sa[16][24]; /* rows 48 bytes apart: 16-byte aligned */
    __shared__ __align__(16) unsigned short sb[16][16];
    const int l = threadIdx.x, g = l >> 2, t = l & 3;
    {
        const int r = l >> 1, h = l & 1; /* 32 chunks of A, 16 of B */
        unsigned d = (unsigned)__cvta_generic_to_shared(&sa[r][8 * h]);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(A + 16 * r + 8 * h));
        if (l < 16) {
            d = (unsigned)__cvta_generic_to_shared(&sb[l][0]);
            asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(d), "l"(B + 8 * l));
        }
        asm volatile("cp.async.commit_group;");
        asm volatile("cp.async.wait_group 0;");
    }
    __syncthreads();
    unsigned a[4], b[2];
    unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[l % 16][(l / 16) * 8]);
    unsigned pb = (unsigned)__cvta_generic_to_shared(&sb[l % 16][0]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
    float d[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    if (bf)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    for (int i = 0; i < 4; i++)
        C[(g + (i >= 2 ? 8 : 0)) * 8 + 2 * t + (i & 1)] = d[i];
}

/* out[l]: ldmatrix.x1 (rows of A's first 8 x 8), its .trans, movmatrix of the first */
__global__ void k_rows(const unsigned short *A, unsigned *out) {
    __shared__ __align__(16) unsigned short s[8][8];
    const int l = threadIdx.x;
    if (l < 8)
        for (int c = 0; c < 8; c++)
            s[l][c] = A[16 * l + c];
    __syncthreads();
    unsigned p = (unsigned)__cvta_generic_to_shared(&s[l % 8][0]), x, y;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(x) : "r"(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(y) : "r"(p));
    out[l] = x;
    out[32 + l] = y;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
    out[64 + l] = y;
}

/* one thread: cp.async sizes, zero fill, groups */
__global__ void k_cp(const unsigned char *src, unsigned char *out) {
    __shared__ __align__(16) unsigned char s[64];
    for (int i = 0; i < 64; i++)
        s[i] = 0x11;
    const unsigned d = (unsigned)__cvta_generic_to_shared(s);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(src));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(d + 8), "l"(src + 8));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d + 16), "l"(src + 16), "r"(6));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d + 32), "l"(src + 32));
    asm volatile("cp.async.commit_group;");
    for (int i = 0; i < 64; i++)
        out[i] = s[i]; /* nothing has landed */
    asm volatile("cp.async.wait_group 2;"); /* the first group only */
    for (int i = 0; i < 64; i++)
        out[64 + i] = s[i];
    asm volatile("cp.async.wait_group 0;");
    for (int i = 0; i < 64; i++)
        out[128 + i] = s[i];
}

__global__ void k_cvt(const float *x, unsigned *out, int n) {
    for (int i = 0; i < n; i++) {
        unsigned short h, b;
        unsigned h2, b2;
        int r;
        float back;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x[i]));
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(x[i]));
        asm("cvt.f32.f16 %0, %1;" : "=f"(back) : "h"(h));
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(h2) : "f"(x[i]), "f"(1.0f));
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(b2) : "f"(x[i]), "f"(1.0f));
        asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(r) : "f"(x[i] * 1e9f));
        out[6 * i] = h;
        out[6 * i + 1] = b;
        out[6 * i + 2] = __float_as_uint(back);
        out[6 * i + 3] = h2;
        out[6 * i + 4] = b2;
        out[6 * i + 5] = (unsigned)r;
    }
}

/* two f16 products (mul.rn.f16x2) and two bf16 ones (fma.rn.bf16x2 with a
 * -0 addend: matmul.cuh's scaling of x by g), each half on its own; and the
 * register copy tc_mm_opaque hides values behind */
__global__ void k_mul2(const unsigned *a, const unsigned *b, unsigned *out, int n) {
    for (int i = 0; i < n; i++) {
        unsigned h, f, m = a[i];
        asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(h) : "r"(a[i]), "r"(b[i]));
        asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(f) : "r"(a[i]), "r"(b[i]), "r"(0x80008000u));
        asm("mov.b32 %0, %0;" : "+r"(m));
        out[3 * i] = h;
        out[3 * i + 1] = f;
        out[3 * i + 2] = m;
    }
}

/* max.NaN.f32 and min.NaN.f32 (helpers.cuh's tc_maxr / tc_minr: a
 * reduction's max and min) */
__global__ void k_minmax(const float *a, const float *b, unsigned *out, int n) {
    for (int i = 0; i < n; i++) {
        float mx, mn;
        asm("max.NaN.f32 %0, %1, %2;" : "=f"(mx) : "f"(a[i]), "f"(b[i]));
        asm("min.NaN.f32 %0, %1, %2;" : "=f"(mn) : "f"(a[i]), "f"(b[i]));
        out[2 * i] = __float_as_uint(mx);
        out[2 * i + 1] = __float_as_uint(mn);
    }
}
