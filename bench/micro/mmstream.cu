/* mmstream.cu - how fast can a skinny product y = x @ W (x 16 x K, W K x N
 * f16 row-major, f32 accumulate) stream W?  Issue 13: the generated matmul
 * streams W at ~1.95 TB/s past the L2 where cuBLAS does 4.15 (H200).
 *
 * Standalone (no tensorc code): several streaming patterns as small
 * templated kernels, each computing the real product on tensor cores
 * (mma.sync m16n8k16) so no load can be dropped, split-K into a partial
 * buffer [slice][16][N] (no atomics) summed by a second kernel; y checked
 * against a simple reference kernel.  Times: cudaEvent, median of REPS, an
 * L2 flush (a read of a 256 MB buffer: clean lines, no write-backs in the
 * timed kernel) before every rep.  "main" is the streaming kernel alone,
 * "total" adds the slices' sum.
 *
 *   nvcc -O3 -arch=sm_90a -o bench/micro/mmstream bench/micro/mmstream.cu
 *   bench/micro/mmstream [--reps N] [--case I] [--only PREFIX] [--host-check]
 *
 * --host-check runs on the CPU only: it emulates the fragment layouts
 * (mma.sync, ldmatrix.trans, the swizzle, the register variant's
 * permuted B fragments) on a small tile against a plain product.
 *
 * Variants (bench/README.md "mmstream"):
 *  a  cp.async 16 B, 128 threads, 16 x 64 tiles, K slice 1024, 3 stages of 64 rows (the generator's now)
 *     (_slicefirst: a tile's K slices on consecutive blocks, the generator's work order)
 *  b  the same with 6 and 8 stages
 *  c  wider tiles (128, 256 columns: 256/512-byte row pieces), fewer rows a stage
 *  d  cp.async.bulk 1D of each row piece into an mbarrier ring (one thread, or a warp, issues)
 *  e  TMA 2D (cp.async.bulk.tensor.2d, CUtensorMap by cuTensorMapEncodeTiled, __grid_constant__)
 *  f  ld.global.nc.v4 into registers, no shared memory, each warp 64 columns, U k16 steps in flight
 *  g  Marlin-like: 256 threads, 16 x 256 tiles, 4 stages, cp.async with L2::256B prefetch;
 *     (a) with the prefetch; persistent grids keeping one pipeline across work items
 *  h  the generated kernel's features one at a time: its warp layout and work order,
 *     x's tiles through shared memory (_xs), the slices summed in the kernel by a
 *     ticket (_tk: us_main is then the whole product), 4 blocks a SM (_occ4)
 */
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            printf("CUDA error %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); \
            fflush(stdout);                                                                        \
            return false;                                                                          \
        }                                                                                          \
    } while (0)

enum { MROWS = 16 };

struct Prob {
    const __half *W[2];
    const uint4 *xf;  /* x in A-fragment order: [K/16][32 lanes] uint4 */
    float *part[2];   /* [K/kslice][16][N] */
    int K, N, kslice;
    int ntiles, nslices, nmat; /* the persistent kernels' work items */
    const __half *x;           /* x row-major (16 x K): the h_ family's x tiles */
    float *y[2];               /* the h_ family's in-kernel sum writes y */
    int *tickets;              /* [2][tiles], zero between launches */
};
struct Maps {
    CUtensorMap m[2];
};

__device__ int g_timeout;

/* ---------------------------------------------------------------- helpers */
__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mma16816(float c[4], const uint4 &a, uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr)
                 : "memory");
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr)
                 : "memory");
}
/* H: 0 plain, 2 L2::256B prefetch.  (1, the prefetch with an evict_first
 * policy, cp.async.cg...L2::cache_hint.L2::256B after createpolicy, stopped
 * the H200 with "illegal instruction" (2026-11-27): removed.) */
template <int H> __device__ __forceinline__ void cp16(uint32_t dst, const void *src, uint64_t pol) {
    (void)pol;
    if (H == 2)
        asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
    else
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

template <int H> __device__ __forceinline__ uint4 ldg16(const void *p) {
    uint4 v;
    if (H)
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p));
    else
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p));
    return v;
}

__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_fence_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ bool mbar_try(uint32_t bar, uint32_t parity) {
    uint32_t ok;
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return ok != 0;
}
/* bounded: a wrong count must fail the check, not hang the one GPU call */
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    if (mbar_try(bar, parity))
        return;
    const long long t0 = clock64();
    for (unsigned spin = 1; !mbar_try(bar, parity); spin++) {
        if ((spin & 255) == 0 && (*(volatile int *)&g_timeout || clock64() - t0 > 200000000LL)) {
            atomicExch(&g_timeout, 1); /* the rest of the grid gives up at once */
            return;
        }
    }
}
__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void tma2d(uint32_t dst, const CUtensorMap *map, int c0, int c1, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                 "[%4];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

/* A stage's tile of W in shared memory, BK rows x BN columns.  SWZ: 64-column
 * sub-tiles [BN/64][BK][64], 16-byte chunk c of row r at c ^ (r & 7) (TMA's
 * SWIZZLE_128B, so ldmatrix.trans is conflict-free); else rows padded by 16
 * bytes (a bulk copy writes a row piece contiguously). */
template <int BN, int BK, bool SWZ> struct Lay {
    enum { STAGE_HALVES = SWZ ? BK * BN : BK * (BN + 8) };
    static __host__ __device__ __forceinline__ int off(int r, int col) { /* col a multiple of 8 */
        if (!SWZ)
            return r * (BN + 8) + col;
        return (col >> 6) * BK * 64 + r * 64 + ((((col >> 3) & 7) ^ (r & 7)) << 3);
    }
};

/* one stage's products: warp (wn, wk) takes columns wn*BN/WN.. and the
 * stage's k16 steps wk, wk+WK, ...; afr its A fragments (x) */
template <int BN, int BK, int WN, int WK, bool SWZ>
__device__ __forceinline__ void stage_mma(const __half *st, const uint4 *afr, float (*acc)[4], int wn, int wk,
                                          int lane) {
    constexpr int NT = BN / WN / 8, KSW = BK / 16 / WK;
    static_assert(NT % 2 == 0 && KSW >= 1, "tile");
    typedef Lay<BN, BK, SWZ> L;
    const uint32_t base = smem_u32(st);
    const int lr = (lane & 7) + ((lane >> 3) & 1) * 8, lc = (lane >> 4) * 8;
#pragma unroll
    for (int s = 0; s < KSW; s++) {
        const int ks = wk + s * WK;
#pragma unroll
        for (int j = 0; j < NT / 2; j++) {
            const int col = wn * (BN / WN) + j * 16 + lc;
            uint32_t b0, b1, b2, b3;
            ldsm_x4_t(base + 2u * (uint32_t)L::off(ks * 16 + lr, col), b0, b1, b2, b3);
            mma16816(acc[2 * j], afr[s], b0, b1);
            mma16816(acc[2 * j + 1], afr[s], b2, b3);
        }
    }
}
template <int BK, int WK>
__device__ __forceinline__ void load_afr(uint4 *afr, const uint4 *xf, int kstep16, int wk, int lane) {
#pragma unroll
    for (int s = 0; s < BK / 16 / WK; s++)
        afr[s] = __ldg(xf + (size_t)(kstep16 + wk + s * WK) * 32 + lane);
}

/* the block's 16 x BN partial sums to part[slice] (out points at row 0,
 * column n0): the WK warps' sums through shared memory, in a fixed order */
template <int BN, int WN, int WK>
__device__ __forceinline__ void epilogue(float (*acc)[4], float *red, float *out, int N, int wn, int wk, int lane,
                                         int tid) {
    constexpr int NT = BN / WN / 8, T = WN * WK * 32;
    const int g = lane >> 2, t = lane & 3;
    if (WK == 1) {
#pragma unroll
        for (int j = 0; j < NT; j++) {
            const int c = wn * (BN / WN) + j * 8 + 2 * t;
            *(float2 *)(out + (size_t)g * N + c) = make_float2(acc[j][0], acc[j][1]);
            *(float2 *)(out + (size_t)(g + 8) * N + c) = make_float2(acc[j][2], acc[j][3]);
        }
        return;
    }
    float *r = red + wk * MROWS * BN;
#pragma unroll
    for (int j = 0; j < NT; j++) {
        const int c = wn * (BN / WN) + j * 8 + 2 * t;
        *(float2 *)(r + g * BN + c) = make_float2(acc[j][0], acc[j][1]);
        *(float2 *)(r + (g + 8) * BN + c) = make_float2(acc[j][2], acc[j][3]);
    }
    __syncthreads();
    for (int i = tid; i < MROWS * BN; i += T) {
        float s = 0.f;
#pragma unroll
        for (int w = 0; w < WK; w++)
            s += red[w * MROWS * BN + i];
        out[(size_t)(i / BN) * N + (i % BN)] = s;
    }
}

/* ------------------------------------------------ (a)(b)(c)(g): cp.async */
template <int BN, int BK, int ST, int WN, int WK, int H, bool SF = false>
__global__ void __launch_bounds__(WN *WK * 32) k_cpasync(Prob p) {
    constexpr int T = WN * WK * 32, CH = BK * BN / 8, NT = BN / WN / 8, KSW = BK / 16 / WK;
    static_assert(CH % T == 0, "chunks");
    typedef Lay<BN, BK, true> L;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __half *sm = (__half *)smem_raw;
    /* SF: a tile's slices on consecutive blocks (the generator's work order,
     * w / S the tile, w % S the slice), else the tiles of one slice */
    const int lin = blockIdx.x + blockIdx.y * gridDim.x;
    const int mat = blockIdx.z, n0 = (SF ? lin / gridDim.y : blockIdx.x) * BN;
    const int slice = SF ? lin % gridDim.y : blockIdx.y, k0 = slice * p.kslice;
    const int nsteps = p.kslice / BK;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wn = warp % WN, wk = warp / WN;
    const __half *W = p.W[mat];
    uint64_t pol = 0;
    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    auto issue = [&](int it) {
        __half *st = sm + (it % ST) * L::STAGE_HALVES;
        const __half *src = W + (size_t)(k0 + it * BK) * p.N + n0;
#pragma unroll
        for (int q = 0; q < CH / T; q++) {
            const int i = tid + q * T, r = i / (BN / 8), c = (i % (BN / 8)) * 8;
            cp16<H>(smem_u32(st + L::off(r, c)), src + (size_t)r * p.N + c, pol);
        }
    };
#pragma unroll
    for (int s = 0; s < ST - 1; s++) {
        if (s < nsteps)
            issue(s);
        cp_commit();
    }
    for (int it = 0; it < nsteps; it++) {
        uint4 afr[KSW];
        load_afr<BK, WK>(afr, p.xf, (k0 + it * BK) / 16, wk, lane);
        cp_wait<ST - 2>();
        __syncthreads();
        if (it + ST - 1 < nsteps)
            issue(it + ST - 1);
        cp_commit();
        stage_mma<BN, BK, WN, WK, true>(sm + (it % ST) * L::STAGE_HALVES, afr, acc, wn, wk, lane);
    }
    cp_wait<0>();
    __syncthreads();
    epilogue<BN, WN, WK>(acc, (float *)smem_raw, p.part[mat] + (size_t)slice * MROWS * p.N + n0, p.N, wn, wk,
                         lane, tid);
}

/* ------------- (g) persistent: a grid of SMs x resident blocks, each block
 * walking work items (tile, slice, matrix) blockIdx.x, + gridDim.x, ... with
 * ONE cp.async pipeline across them (no drain and refill between items, as
 * stream-K / Marlin's striped partition keep the copies going) */
template <int BN, int BK, int ST, int WN, int WK, int H>
__global__ void __launch_bounds__(WN *WK * 32) k_persist(Prob p) {
    constexpr int T = WN * WK * 32, CH = BK * BN / 8, NT = BN / WN / 8, KSW = BK / 16 / WK;
    static_assert(CH % T == 0, "chunks");
    typedef Lay<BN, BK, true> L;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __half *sm = (__half *)smem_raw;
    float *red = (float *)(smem_raw + ST * BK * BN * 2);
    const int nsteps = p.kslice / BK, items = p.ntiles * p.nslices * p.nmat;
    if ((int)blockIdx.x >= items)
        return;
    const int mine = (items - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x;
    const int total = mine * nsteps;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wn = warp % WN, wk = warp / WN;
    uint64_t pol = 0;
    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    /* step q: item blockIdx.x + (q / nsteps) * gridDim.x, its K step q % nsteps */
    auto where = [&](int q, int &mat, int &n0, int &slice, int &kr) {
        const int item = (int)blockIdx.x + (q / nsteps) * (int)gridDim.x, rest = item / p.ntiles;
        n0 = (item % p.ntiles) * BN;
        slice = rest % p.nslices;
        mat = rest / p.nslices;
        kr = slice * p.kslice + (q % nsteps) * BK;
    };
    auto issue = [&](int q) {
        int mat, n0, slice, kr;
        where(q, mat, n0, slice, kr);
        __half *st = sm + (q % ST) * L::STAGE_HALVES;
        const __half *src = p.W[mat] + (size_t)kr * p.N + n0;
#pragma unroll
        for (int i2 = 0; i2 < CH / T; i2++) {
            const int i = tid + i2 * T, r = i / (BN / 8), c = (i % (BN / 8)) * 8;
            cp16<H>(smem_u32(st + L::off(r, c)), src + (size_t)r * p.N + c, pol);
        }
    };
#pragma unroll
    for (int s = 0; s < ST - 1; s++) {
        if (s < total)
            issue(s);
        cp_commit();
    }
    for (int q = 0; q < total; q++) {
        int mat, n0, slice, kr;
        where(q, mat, n0, slice, kr);
        uint4 afr[KSW];
        load_afr<BK, WK>(afr, p.xf, kr / 16, wk, lane);
        cp_wait<ST - 2>();
        __syncthreads();
        if (q + ST - 1 < total)
            issue(q + ST - 1);
        cp_commit();
        stage_mma<BN, BK, WN, WK, true>(sm + (q % ST) * L::STAGE_HALVES, afr, acc, wn, wk, lane);
        if (q % nsteps == nsteps - 1) {
            epilogue<BN, WN, WK>(acc, red, p.part[mat] + (size_t)slice * MROWS * p.N + n0, p.N, wn, wk, lane, tid);
#pragma unroll
            for (int j = 0; j < NT; j++)
                acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
        }
    }
    cp_wait<0>();
}

/* ---------- (h) the generated kernel's features one at a time (a bisection
 * of its gap to (a)): 16 x 64 tiles, 64-row stages, 128 threads, a tile's
 * K slices on consecutive blocks (its work order), each warp 16 columns over
 * every k16 step of a stage (its warp layout: chains of 4 dependent mma);
 * XS: x's 16 x 64 tile copied with the stage by cp.async and read by
 * ldmatrix (as the generator does), else x's fragments from global memory;
 * TK: the slices summed in the kernel (partials, a fence, an atomic ticket,
 * the tile's last block sums them in slice order into y), else by k_reduce */
template <int ST, bool XS, bool TK>
__global__ void __launch_bounds__(128) k_gen(Prob p) {
    constexpr int BN = 64, BK = 64, T = 128, CH = BK * BN / 8;
    typedef Lay<BN, BK, true> L;
    constexpr int SH = L::STAGE_HALVES + (XS ? 16 * BK : 0);
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __shared__ int last;
    __half *sm = (__half *)smem_raw;
    const int S = gridDim.y, lin = blockIdx.x + blockIdx.y * gridDim.x;
    const int mat = blockIdx.z, tile = lin / S, slice = lin % S, n0 = tile * BN, k0 = slice * p.kslice;
    const int nsteps = p.kslice / BK, N = p.N;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    const __half *W = p.W[mat];
    float acc[2][4];
#pragma unroll
    for (int j = 0; j < 2; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    auto issue = [&](int it) {
        __half *st = sm + (it % ST) * SH;
        const __half *src = W + (size_t)(k0 + it * BK) * N + n0;
#pragma unroll
        for (int q = 0; q < CH / T; q++) {
            const int i = tid + q * T, r = i / (BN / 8), c = (i % (BN / 8)) * 8;
            cp16<0>(smem_u32(st + L::off(r, c)), src + (size_t)r * N + c, 0);
        }
        if (XS) { /* 16 rows of 64: a 16-byte chunk a thread, swizzled as W's */
            const int r = tid / 8, c = (tid % 8) * 8;
            cp16<0>(smem_u32(st + L::STAGE_HALVES + r * 64 + ((((c >> 3) ^ (r & 7))) << 3)),
                    p.x + (size_t)r * p.K + k0 + it * BK + c, 0);
        }
    };
#pragma unroll
    for (int s = 0; s < ST - 1; s++) {
        if (s < nsteps)
            issue(s);
        cp_commit();
    }
    const int lr = (lane & 7) + ((lane >> 3) & 1) * 8, lc = (lane >> 4) * 8, ar = lane & 15, ac = (lane >> 4) * 8;
    for (int it = 0; it < nsteps; it++) {
        uint4 afr[4];
        if (!XS)
#pragma unroll
            for (int ks = 0; ks < 4; ks++)
                afr[ks] = __ldg(p.xf + (size_t)((k0 + it * BK) / 16 + ks) * 32 + lane);
        cp_wait<ST - 2>();
        __syncthreads();
        if (it + ST - 1 < nsteps)
            issue(it + ST - 1);
        cp_commit();
        const __half *st = sm + (it % ST) * SH;
        const uint32_t base = smem_u32(st);
#pragma unroll
        for (int ks = 0; ks < 4; ks++) {
            uint4 a;
            if (XS) {
                const int col = ks * 16 + ac;
                ldsm_x4(base + 2u * (uint32_t)(L::STAGE_HALVES + ar * 64 + (((col >> 3) ^ (ar & 7)) << 3)), a.x, a.y,
                        a.z, a.w);
            } else
                a = afr[ks];
            uint32_t b0, b1, b2, b3;
            ldsm_x4_t(base + 2u * (uint32_t)L::off(ks * 16 + lr, warp * 16 + lc), b0, b1, b2, b3);
            mma16816(acc[0], a, b0, b1);
            mma16816(acc[1], a, b2, b3);
        }
    }
    cp_wait<0>();
    float *out = p.part[mat] + (size_t)slice * MROWS * N + n0;
#pragma unroll
    for (int j = 0; j < 2; j++) {
        const int c = warp * 16 + j * 8 + 2 * t;
        __stcg((float2 *)(out + (size_t)g * N + c), make_float2(acc[j][0], acc[j][1]));
        __stcg((float2 *)(out + (size_t)(g + 8) * N + c), make_float2(acc[j][2], acc[j][3]));
    }
    if (!TK)
        return;
    __syncthreads();
    if (tid == 0) {
        __threadfence();
        int *tk = p.tickets + mat * gridDim.x * gridDim.y / S + tile;
        last = atomicAdd(tk, 1) == S - 1;
        if (last) {
            *tk = 0;
            __threadfence();
        }
    }
    __syncthreads();
    if (last) { /* the slices in order, four loads in flight a thread */
        const float *p0 = p.part[mat] + n0;
        for (int i = tid; i < MROWS * BN; i += T) {
            const int m = i / BN, c = i % BN;
            float sum = 0.f;
            int q = 0;
            for (; q + 4 <= S; q += 4) {
                float v[4];
#pragma unroll
                for (int u = 0; u < 4; u++)
                    v[u] = __ldcg(p0 + (size_t)(q + u) * MROWS * N + (size_t)m * N + c);
#pragma unroll
                for (int u = 0; u < 4; u++)
                    sum += v[u];
            }
            for (; q < S; q++)
                sum += __ldcg(p0 + (size_t)q * MROWS * N + (size_t)m * N + c);
            p.y[mat][(size_t)m * N + n0 + c] = sum;
        }
    }
}

/* ------------------------------- (d) bulk 1D copies of row pieces, mbarriers */
template <int BN, int BK, int ST, int WN, int WK, int ISS>
__global__ void __launch_bounds__(WN *WK * 32) k_bulk(Prob p) {
    constexpr int NT = BN / WN / 8, KSW = BK / 16 / WK;
    typedef Lay<BN, BK, false> L;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    uint64_t *bars = (uint64_t *)smem_raw;
    __half *sm = (__half *)(smem_raw + 128);
    const int mat = blockIdx.z, n0 = blockIdx.x * BN, slice = blockIdx.y, k0 = slice * p.kslice;
    const int nsteps = p.kslice / BK;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wn = warp % WN, wk = warp / WN;
    const __half *W = p.W[mat];
    const bool producer = ISS == 1 ? tid == 0 : warp == 0;
    if (tid == 0) {
        for (int s = 0; s < ST; s++)
            mbar_init(smem_u32(&bars[s]), 1);
        mbar_fence_init();
    }
    __syncthreads();
    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    auto issue = [&](int it) {
        const int slot = it % ST;
        const uint32_t bar = smem_u32(&bars[slot]);
        __half *st = sm + slot * L::STAGE_HALVES;
        const __half *src = W + (size_t)(k0 + it * BK) * p.N + n0;
        if (tid == 0)
            mbar_expect_tx(bar, BK * BN * 2);
        for (int r = (ISS == 1 ? 0 : lane); r < BK; r += ISS)
            bulk_g2s(smem_u32(st + L::off(r, 0)), src + (size_t)r * p.N, BN * 2, bar);
    };
    if (producer)
        for (int s = 0; s < ST - 1 && s < nsteps; s++)
            issue(s);
    for (int it = 0; it < nsteps; it++) {
        uint4 afr[KSW];
        load_afr<BK, WK>(afr, p.xf, (k0 + it * BK) / 16, wk, lane);
        __syncthreads(); /* every warp is done with slot (it - 1) % ST */
        if (producer && it + ST - 1 < nsteps)
            issue(it + ST - 1);
        mbar_wait(smem_u32(&bars[it % ST]), (uint32_t)((it / ST) & 1));
        stage_mma<BN, BK, WN, WK, false>(sm + (it % ST) * L::STAGE_HALVES, afr, acc, wn, wk, lane);
    }
    __syncthreads();
    epilogue<BN, WN, WK>(acc, (float *)(smem_raw + 128), p.part[mat] + (size_t)slice * MROWS * p.N + n0, p.N, wn,
                         wk, lane, tid);
}

/* --------------------------------------------------------- (e) TMA 2D tiles */
template <int BN, int BK, int ST, int WN, int WK>
__global__ void __launch_bounds__(WN *WK * 32) k_tma(Prob p, const __grid_constant__ Maps maps) {
    constexpr int NT = BN / WN / 8, KSW = BK / 16 / WK;
    typedef Lay<BN, BK, true> L;
    static_assert((BK * 128) % 1024 == 0, "128B swizzle wants 1024-byte sub-tiles");
    extern __shared__ __align__(128) unsigned char smem_raw[];
    uint64_t *bars = (uint64_t *)smem_raw;
    const uint32_t raw = smem_u32(smem_raw);
    __half *sm = (__half *)(smem_raw + (((raw + 128 + 1023) & ~1023u) - raw));
    const int mat = blockIdx.z, n0 = blockIdx.x * BN, slice = blockIdx.y, k0 = slice * p.kslice;
    const int nsteps = p.kslice / BK;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wn = warp % WN, wk = warp / WN;
    const CUtensorMap *map = &maps.m[mat];
    if (tid == 0) {
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
        for (int s = 0; s < ST; s++)
            mbar_init(smem_u32(&bars[s]), 1);
        mbar_fence_init();
    }
    __syncthreads();
    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    auto issue = [&](int it) {
        const int slot = it % ST;
        const uint32_t bar = smem_u32(&bars[slot]);
        __half *st = sm + slot * L::STAGE_HALVES;
        mbar_expect_tx(bar, BK * BN * 2);
#pragma unroll
        for (int sub = 0; sub < BN / 64; sub++)
            tma2d(smem_u32(st + sub * BK * 64), map, n0 + sub * 64, k0 + it * BK, bar);
    };
    if (tid == 0)
        for (int s = 0; s < ST - 1 && s < nsteps; s++)
            issue(s);
    for (int it = 0; it < nsteps; it++) {
        uint4 afr[KSW];
        load_afr<BK, WK>(afr, p.xf, (k0 + it * BK) / 16, wk, lane);
        __syncthreads();
        if (tid == 0 && it + ST - 1 < nsteps)
            issue(it + ST - 1);
        mbar_wait(smem_u32(&bars[it % ST]), (uint32_t)((it / ST) & 1));
        stage_mma<BN, BK, WN, WK, true>(sm + (it % ST) * L::STAGE_HALVES, afr, acc, wn, wk, lane);
    }
    __syncthreads();
    epilogue<BN, WN, WK>(acc, (float *)sm, p.part[mat] + (size_t)slice * MROWS * p.N + n0, p.N, wn, wk, lane, tid);
}

/* ------------------------------- (f) registers only: ld.global.nc.v4, no smem
 * Lane (g, t) loads rows k+2t, k+2t+1, k+2t+8, k+2t+9 at columns n0+8g..+7 (4 x
 * 16 B); mma j takes column n0+8g+j as its logical column g, the two rows'
 * halves paired by a byte permute as B's (k, k+1).  So mma j's output column
 * 2t (of lane (g, t)) is W's column n0+16t+j and 2t+1 is n0+16t+8+j. */
template <int U, int WPB, int H>
__global__ void __launch_bounds__(WPB * 32) k_ldg(Prob p) {
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    const int mat = blockIdx.z, n0 = (blockIdx.x * WPB + warp) * 64, slice = blockIdx.y, k0 = slice * p.kslice;
    const int N = p.N;
    const __half *Wc = p.W[mat] + (size_t)(k0 + 2 * t) * N + n0 + 8 * g;
    float acc[8][4];
#pragma unroll
    for (int j = 0; j < 8; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    const int nk = p.kslice / 16;
    for (int kk = 0; kk < nk; kk += U) {
        uint4 w[U][4], a[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const __half *src = Wc + (size_t)(kk + u) * 16 * N;
            w[u][0] = ldg16<H>(src);
            w[u][1] = ldg16<H>(src + N);
            w[u][2] = ldg16<H>(src + 8 * (size_t)N);
            w[u][3] = ldg16<H>(src + 9 * (size_t)N);
            a[u] = __ldg(p.xf + (size_t)(k0 / 16 + kk + u) * 32 + lane);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint32_t *r0 = (const uint32_t *)&w[u][0], *r1 = (const uint32_t *)&w[u][1];
            const uint32_t *r2 = (const uint32_t *)&w[u][2], *r3 = (const uint32_t *)&w[u][3];
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const uint32_t sel = (j & 1) ? 0x7632u : 0x5410u;
                const uint32_t b0 = __byte_perm(r0[j >> 1], r1[j >> 1], sel);
                const uint32_t b1 = __byte_perm(r2[j >> 1], r3[j >> 1], sel);
                mma16816(acc[j], a[u], b0, b1);
            }
        }
    }
    float *out = p.part[mat] + (size_t)slice * MROWS * N + n0;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        out[(size_t)g * N + 16 * t + j] = acc[j][0];
        out[(size_t)g * N + 16 * t + 8 + j] = acc[j][1];
        out[(size_t)(g + 8) * N + 16 * t + j] = acc[j][2];
        out[(size_t)(g + 8) * N + 16 * t + 8 + j] = acc[j][3];
    }
}

/* ------------------------------------------------------ support kernels */
__device__ __forceinline__ uint32_t hash32(uint64_t i, uint32_t seed) {
    uint64_t z = i * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)(z ^ (z >> 31));
}
__global__ void k_init(__half *a, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        a[i] = __float2half(((hash32(i, seed) >> 8) * (1.0f / 16777216.0f)) * 2.f - 1.f);
}
/* x (16 x K) to A-fragment order: xf[k16][lane] = {x[g][2t..], x[g+8][2t..], x[g][2t+8..], x[g+8][2t+8..]} */
__global__ void k_xfrag(const __half *x, uint4 *xf, int K) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= K / 16 * 32)
        return;
    const int kk = i / 32, lane = i % 32, g = lane >> 2, t = lane & 3, k = kk * 16 + 2 * t;
    auto pk = [&](int m, int kc) {
        const uint16_t lo = __half_as_ushort(x[(size_t)m * K + kc]), hi = __half_as_ushort(x[(size_t)m * K + kc + 1]);
        return (uint32_t)lo | ((uint32_t)hi << 16);
    };
    xf[i] = make_uint4(pk(g, k), pk(g + 8, k), pk(g, k + 8), pk(g + 8, k + 8));
}
/* the reference: a thread a column, 16 sums over a K chunk of 256, atomics */
__global__ void k_ref(const __half *W, const __half *x, float *y, int K, int N) {
    const int n = blockIdx.x * blockDim.x + threadIdx.x, k0 = blockIdx.y * 256;
    if (n >= N)
        return;
    float s[MROWS] = {};
    for (int k = k0; k < k0 + 256 && k < K; k++) {
        const float w = __half2float(W[(size_t)k * N + n]);
#pragma unroll
        for (int m = 0; m < MROWS; m++)
            s[m] += __half2float(x[(size_t)m * K + k]) * w;
    }
#pragma unroll
    for (int m = 0; m < MROWS; m++)
        atomicAdd(&y[(size_t)m * N + n], s[m]);
}
__global__ void k_reduce(const float *part, float *y, int S, int MN) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x, mat = blockIdx.y;
    if (i * 4 >= MN)
        return;
    const float4 *pp = (const float4 *)(part + (size_t)mat * S * MN);
    float4 s = make_float4(0, 0, 0, 0);
    for (int q = 0; q < S; q++) {
        const float4 v = pp[(size_t)q * (MN / 4) + i];
        s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
    }
    ((float4 *)(y + (size_t)mat * MN))[i] = s;
}
/* the L2 flush: read (not write: no dirty lines to write back later) */
__global__ void k_flush(const float4 *a, size_t n, float *sink) {
    float s = 0.f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float4 v = __ldcg(a + i);
        s += v.x + v.y + v.z + v.w;
    }
    if (s == 12345.678f)
        *sink = s;
}
/* a plain read of W (v4, grid-stride): the read ceiling in the same run */
__global__ void k_readbw(const uint4 *a, size_t n, float *sink) {
    uint32_t s = 0;
    const size_t step = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + 3 * step < n; i += 4 * step) { /* four loads in flight a thread */
        const uint4 v0 = ldg16<0>(a + i), v1 = ldg16<0>(a + i + step), v2 = ldg16<0>(a + i + 2 * step),
                    v3 = ldg16<0>(a + i + 3 * step);
        s ^= v0.x ^ v0.y ^ v0.z ^ v0.w ^ v1.x ^ v1.y ^ v1.z ^ v1.w ^ v2.x ^ v2.y ^ v2.z ^ v2.w ^ v3.x ^ v3.y ^ v3.z ^ v3.w;
    }
    for (; i < n; i += step) {
        const uint4 v = ldg16<0>(a + i);
        s ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (s == 0x12345678u)
        *sink = (float)s;
}

/* ------------------------------------------------------------ variants */
struct Variant {
    const char *name;
    const void *kfn;
    int threads, smem, bn, kslice, tma_bk; /* bn: columns a block; tma_bk > 0: needs tensor maps */
    int persist;                           /* grid: SMs x resident blocks, work items in a loop */
    int selfsum;                           /* the kernel sums the slices into y (no k_reduce) */
    void (*launch)(dim3, int, int, const Prob &, const Maps &);
};
template <int BN, int BK, int ST, int WN, int WK, int H>
void L_cp(dim3 g, int th, int sm, const Prob &p, const Maps &) {
    k_cpasync<BN, BK, ST, WN, WK, H><<<g, th, sm>>>(p);
}
template <int BN, int BK, int ST, int WN, int WK, int H>
void L_cpsf(dim3 g, int th, int sm, const Prob &p, const Maps &) {
    k_cpasync<BN, BK, ST, WN, WK, H, true><<<g, th, sm>>>(p);
}
template <int BN, int BK, int ST, int WN, int WK, int I>
void L_bulk(dim3 g, int th, int sm, const Prob &p, const Maps &) {
    k_bulk<BN, BK, ST, WN, WK, I><<<g, th, sm>>>(p);
}
template <int BN, int BK, int ST, int WN, int WK>
void L_tma(dim3 g, int th, int sm, const Prob &p, const Maps &m) {
    k_tma<BN, BK, ST, WN, WK><<<g, th, sm>>>(p, m);
}
template <int BN, int BK, int ST, int WN, int WK, int H>
void L_persist(dim3 g, int th, int sm, const Prob &p, const Maps &) {
    k_persist<BN, BK, ST, WN, WK, H><<<g, th, sm>>>(p);
}
template <int ST, bool XS, bool TK> void L_gen(dim3 g, int th, int sm, const Prob &p, const Maps &) {
    k_gen<ST, XS, TK><<<g, th, sm>>>(p);
}
template <int U, int WPB, int H> void L_ldg(dim3 g, int th, int sm, const Prob &p, const Maps &) {
    k_ldg<U, WPB, H><<<g, th, sm>>>(p);
}
static int red_bytes(int bn, int wk) { return wk > 1 ? wk * MROWS * bn * 4 : 0; }
#define VCP(nm, BN, BK, ST, WN, WK, H, KS)                                                                        \
    Variant { nm, (const void *)k_cpasync<BN, BK, ST, WN, WK, H>, WN * WK * 32,                                    \
              std::max(ST * BK * BN * 2, red_bytes(BN, WK)), BN, KS, 0, 0, 0, L_cp<BN, BK, ST, WN, WK, H> }
/* the same kernel held to 4 blocks a SM by padding its shared memory (the
 * generated kernel's 128 registers allow 4) */
#define VCPOCC4(nm, BN, BK, ST, WN, WK, H, KS)                                                                    \
    Variant { nm, (const void *)k_cpasync<BN, BK, ST, WN, WK, H>, WN * WK * 32, 52 * 1024, BN, KS, 0, 0, 0,        \
              L_cp<BN, BK, ST, WN, WK, H> }
#define VCPSF(nm, BN, BK, ST, WN, WK, H, KS)                                                                      \
    Variant { nm, (const void *)k_cpasync<BN, BK, ST, WN, WK, H, true>, WN * WK * 32,                              \
              std::max(ST * BK * BN * 2, red_bytes(BN, WK)), BN, KS, 0, 0, 0, L_cpsf<BN, BK, ST, WN, WK, H> }
#define VBULK(nm, BN, BK, ST, WN, WK, I, KS)                                                                      \
    Variant { nm, (const void *)k_bulk<BN, BK, ST, WN, WK, I>, WN * WK * 32,                                       \
              128 + std::max(ST * BK * (BN + 8) * 2, red_bytes(BN, WK)), BN, KS, 0, 0, 0, L_bulk<BN, BK, ST, WN, WK, I> }
#define VTMA(nm, BN, BK, ST, WN, WK, KS)                                                                          \
    Variant { nm, (const void *)k_tma<BN, BK, ST, WN, WK>, WN * WK * 32,                                           \
              1024 + 128 + std::max(ST * BK * BN * 2, red_bytes(BN, WK)), BN, KS, BK, 0, 0, L_tma<BN, BK, ST, WN, WK> }
#define VPER(nm, BN, BK, ST, WN, WK, H, KS)                                                                       \
    Variant { nm, (const void *)k_persist<BN, BK, ST, WN, WK, H>, WN * WK * 32,                                    \
              ST * BK * BN * 2 + red_bytes(BN, WK), BN, KS, 0, 1, 0, L_persist<BN, BK, ST, WN, WK, H> }
/* SMEM 0: the stages' bytes; else that many (52 KB: 4 blocks a SM, as the generator's registers allow) */
#define VGEN(nm, ST, XS, TK, SMEM)                                                                                \
    Variant { nm, (const void *)k_gen<ST, XS, TK>, 128, SMEM ? SMEM : ST * (64 * 64 + (XS ? 16 * 64 : 0)) * 2, 64,  \
              1024, 0, 0, TK, L_gen<ST, XS, TK> }
#define VLDG(nm, U, WPB, H, KS) \
    Variant { nm, (const void *)k_ldg<U, WPB, H>, WPB * 32, 0, 64 * WPB, KS, 0, 0, 0, L_ldg<U, WPB, H> }

static std::vector<Variant> variants() {
    return {
        /* name, BN, BK, stages, warps along N, warps along K, hint, K slice */
        VCP("a_cp_bn64_bk64_s3", 64, 64, 3, 1, 4, 0, 1024),
        VCPOCC4("a_cp_bn64_bk64_s3_occ4", 64, 64, 3, 1, 4, 0, 1024),
        VCP("a_cp_bn64_bk64_s4", 64, 64, 4, 1, 4, 0, 1024),
        VCPSF("a_cp_bn64_bk64_s4_slicefirst", 64, 64, 4, 1, 4, 0, 1024),
        VCPSF("b_cp_bn64_bk64_s8_slicefirst", 64, 64, 8, 1, 4, 0, 1024),
        VCP("b_cp_bn64_bk64_s6", 64, 64, 6, 1, 4, 0, 1024),
        VCP("b_cp_bn64_bk64_s8", 64, 64, 8, 1, 4, 0, 1024),
        VCP("b_cp_bn64_bk64_s8_ks2048", 64, 64, 8, 1, 4, 0, 2048),
        VCP("c_cp_bn128_bk32_s4", 128, 32, 4, 2, 2, 0, 1024),
        VCP("c_cp_bn128_bk32_s8", 128, 32, 8, 2, 2, 0, 1024),
        VCP("c_cp_bn128_bk64_s4", 128, 64, 4, 2, 2, 0, 1024),
        VCP("c_cp_bn256_bk16_s4", 256, 16, 4, 4, 1, 0, 1024),
        VCP("c_cp_bn256_bk16_s8", 256, 16, 8, 4, 1, 0, 1024),
        VCP("c_cp_bn256_bk32_s4", 256, 32, 4, 4, 1, 0, 1024),
        VCP("g_cp_bn64_bk64_s3_l2pf", 64, 64, 3, 1, 4, 2, 1024),
        VCP("g_cp_bn64_bk64_s6_l2pf", 64, 64, 6, 1, 4, 2, 1024),
        VCP("g_marlin_bn256_bk64_s4_t256", 256, 64, 4, 4, 2, 2, 1024),
        VCP("g_cp_bn128_bk64_s4_t256_l2pf", 128, 64, 4, 2, 4, 2, 1024),
        VPER("g_persist_bn64_bk64_s4", 64, 64, 4, 1, 4, 0, 1024),
        VPER("g_persist_bn64_bk64_s6", 64, 64, 6, 1, 4, 0, 1024),
        VPER("g_persist_bn64_bk64_s8_l2pf", 64, 64, 8, 1, 4, 2, 1024),
        VPER("g_persist_bn128_bk64_s4_t256", 128, 64, 4, 2, 4, 2, 1024),
        VPER("g_persist_bn256_bk32_s6", 256, 32, 6, 4, 1, 2, 1024),
        VGEN("h_gen_wn4_s4", 4, false, false, 0),
        VGEN("h_gen_wn4_s4_xs", 4, true, false, 0),
        VGEN("h_gen_wn4_s4_xs_tk", 4, true, true, 0),
        VGEN("h_gen_wn4_s4_xs_tk_occ4", 4, true, true, 52 * 1024),
        VGEN("h_gen_wn4_s4_tk", 4, false, true, 0),
        VLDG("f_ldg_u2_w4_ks256", 2, 4, 0, 256),
        VLDG("f_ldg_u4_w4_ks256", 4, 4, 0, 256),
        VLDG("f_ldg_u4_w4_ks512", 4, 4, 0, 512),
        VLDG("f_ldg_u8_w4_ks512", 8, 4, 0, 512),
        VLDG("f_ldg_u4_w4_ks256_l2pf", 4, 4, 1, 256),
        VLDG("f_ldg_u4_w2_ks1024", 4, 2, 0, 1024),
        VBULK("d_bulk1_bn64_bk64_s4", 64, 64, 4, 1, 4, 1, 1024),
        VBULK("d_bulkw_bn64_bk64_s4", 64, 64, 4, 1, 4, 32, 1024),
        VBULK("d_bulkw_bn64_bk64_s8", 64, 64, 8, 1, 4, 32, 1024),
        VBULK("d_bulk1_bn256_bk32_s4", 256, 32, 4, 4, 1, 1, 1024),
        VBULK("d_bulk1_bn256_bk64_s4_t256", 256, 64, 4, 4, 2, 1, 1024),
        VTMA("e_tma_bn64_bk64_s4", 64, 64, 4, 1, 4, 1024),
        VTMA("e_tma_bn64_bk64_s8", 64, 64, 8, 1, 4, 1024),
        VTMA("e_tma_bn128_bk64_s4", 128, 64, 4, 2, 2, 1024),
        VTMA("e_tma_bn256_bk64_s4_t256", 256, 64, 4, 4, 2, 1024),
        VTMA("e_tma_bn256_bk32_s6", 256, 32, 6, 4, 1, 1024),
        VTMA("e_tma_bn64_bk128_s4", 64, 128, 4, 1, 4, 1024),
    };
}

/* ------------------------------------------------------------ host side */
typedef CUresult (*EncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static EncodeTiled encode_fn() {
    static EncodeTiled fn = nullptr;
    if (!fn) {
        void *f = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) ==
                cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fn = (EncodeTiled)f;
    }
    return fn;
}

struct Case {
    int K, N, nmat;
    const char *what;
};
struct Bufs {
    __half *W[2] = {nullptr, nullptr}, *x = nullptr;
    uint4 *xf = nullptr;
    float *part = nullptr, *y = nullptr, *yref = nullptr, *sink = nullptr;
    int *tickets = nullptr;
    float4 *flush = nullptr;
    size_t flush_n = 0, part_floats = 0;
};

static int g_reps = 25;
static const size_t FLUSH_BYTES = 256ull << 20;

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

static bool flush_l2(Bufs &b) {
    k_flush<<<264, 512>>>(b.flush, b.flush_n, b.sink);
    return cudaGetLastError() == cudaSuccess;
}

static bool read_ceiling(const Case &c, Bufs &b) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> ts;
    const size_t n = (size_t)c.K * c.N * 2 / 16;
    for (int r = 0; r < g_reps + 2; r++) {
        flush_l2(b);
        CK(cudaEventRecord(e0));
        for (int m = 0; m < c.nmat; m++)
            k_readbw<<<132 * 8, 512>>>((const uint4 *)b.W[m], n, b.sink);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 2)
            ts.push_back(ms * 1000.f);
    }
    const double bytes = (double)c.nmat * c.K * c.N * 2;
    const float us = median(ts);
    printf("%-32s %9.2f %6.2f %9s %6s   (plain v4 read of W, no product: the read ceiling)\n", "read_ceiling", us,
           bytes / us * 1e-6, "-", "-");
    fflush(stdout);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return true;
}

static bool run_variant(const Variant &v, const Case &c, Bufs &b, int sms) {
    const int ks = std::min(v.kslice, c.K);
    if (c.N % v.bn || c.K % ks || ks % 64) {
        printf("%-32s skipped (N %% %d or K %% %d)\n", v.name, v.bn, ks);
        return true;
    }
    const int S = c.K / ks;
    if ((size_t)c.nmat * S * MROWS * c.N > b.part_floats) {
        printf("%-32s skipped (partial buffer)\n", v.name);
        return true;
    }
    Prob p;
    p.K = c.K, p.N = c.N, p.kslice = ks, p.xf = b.xf, p.x = b.x, p.tickets = b.tickets;
    for (int m = 0; m < 2; m++) {
        p.W[m] = b.W[m < c.nmat ? m : 0];
        p.part[m] = b.part + (size_t)(m < c.nmat ? m : 0) * S * MROWS * c.N;
        p.y[m] = b.y + (size_t)(m < c.nmat ? m : 0) * MROWS * c.N;
    }
    Maps maps;
    memset(&maps, 0, sizeof maps);
    if (v.tma_bk) {
        EncodeTiled enc = encode_fn();
        if (!enc) {
            printf("%-32s skipped (no cuTensorMapEncodeTiled)\n", v.name);
            return true;
        }
        for (int m = 0; m < c.nmat; m++) {
            cuuint64_t dims[2] = {(cuuint64_t)c.N, (cuuint64_t)c.K}, strides[1] = {(cuuint64_t)c.N * 2};
            cuuint32_t box[2] = {64, (cuuint32_t)v.tma_bk}, es[2] = {1, 1};
            CUresult r = enc(&maps.m[m], CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)b.W[m], dims, strides, box, es,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
            if (r != CUDA_SUCCESS) {
                printf("%-32s skipped (cuTensorMapEncodeTiled: %d)\n", v.name, (int)r);
                return true;
            }
        }
        if (c.nmat == 1)
            maps.m[1] = maps.m[0];
    }
    CK(cudaFuncSetAttribute(v.kfn, cudaFuncAttributeMaxDynamicSharedMemorySize, v.smem));
    int nb = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, v.kfn, v.threads, v.smem));
    if (nb == 0) {
        printf("%-32s skipped (%d B of shared memory does not fit)\n", v.name, v.smem);
        return true;
    }
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, v.kfn));
    p.ntiles = c.N / v.bn, p.nslices = S, p.nmat = c.nmat;
    const dim3 grid = v.persist ? dim3(std::min(sms * nb, p.ntiles * S * c.nmat)) : dim3(c.N / v.bn, S, c.nmat);
    const int MN = MROWS * c.N;
    const dim3 rgrid((MN / 4 + 255) / 256, c.nmat);
    int zero = 0;
    CK(cudaMemcpyToSymbol(g_timeout, &zero, sizeof zero));
    /* correctness: y from scratch (NaN first) against the reference */
    CK(cudaMemset(b.y, 0xFF, sizeof(float) * c.nmat * MN));
    v.launch(grid, v.threads, v.smem, p, maps);
    CK(cudaGetLastError());
    if (!v.selfsum)
        k_reduce<<<rgrid, 256>>>(b.part, b.y, S, MN);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    int to = 0;
    CK(cudaMemcpyFromSymbol(&to, g_timeout, sizeof to));
    std::vector<float> y((size_t)c.nmat * MN), yr((size_t)c.nmat * MN);
    CK(cudaMemcpy(y.data(), b.y, y.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(yr.data(), b.yref, yr.size() * 4, cudaMemcpyDeviceToHost));
    double err = 0, scale = 0;
    for (size_t i = 0; i < y.size(); i++) {
        const double d = std::fabs((double)y[i] - yr[i]);
        err = std::isnan(d) ? INFINITY : std::max(err, d);
        scale = std::max(scale, (double)std::fabs(yr[i]));
    }
    const bool ok = !to && err <= 2e-4 * std::max(1.0, scale);
    if (!ok) { /* a wrong kernel's time means nothing */
        printf("%-32s FAIL: max |err| %.3g (max |y| %.3g)%s; grid %dx%dx%d, %d threads, %d B shared, %d b/SM\n",
               v.name, err, scale, to ? ", mbarrier timeout" : "", grid.x, grid.y, grid.z, v.threads, v.smem, nb);
        return true;
    }
    /* timing */
    cudaEvent_t e0, e1, e2;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreate(&e2));
    std::vector<float> tm, tt;
    for (int r = 0; r < g_reps + 2; r++) {
        flush_l2(b);
        CK(cudaEventRecord(e0));
        v.launch(grid, v.threads, v.smem, p, maps);
        CK(cudaEventRecord(e1));
        if (!v.selfsum)
            k_reduce<<<rgrid, 256>>>(b.part, b.y, S, MN);
        CK(cudaEventRecord(e2));
        CK(cudaEventSynchronize(e2));
        float m1, m2;
        CK(cudaEventElapsedTime(&m1, e0, e1));
        CK(cudaEventElapsedTime(&m2, e0, e2));
        if (r >= 2)
            tm.push_back(m1 * 1000.f), tt.push_back(m2 * 1000.f);
    }
    CK(cudaGetLastError());
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
    const double bytes = (double)c.nmat * c.K * c.N * 2;
    const float um = median(tm), ut = median(tt);
    printf("%-32s %9.2f %6.2f %9.2f %6.2f %4d %5dx%-3dx%d %4d %7d %4d %9.2e %s%s\n", v.name, um, bytes / um * 1e-6, ut,
           bytes / ut * 1e-6, nb, grid.x, grid.y, grid.z, v.threads, v.smem, fa.numRegs, err, ok ? "ok" : "FAIL",
           to ? " (mbarrier timeout)" : "");
    fflush(stdout);
    return true;
}

static bool run_case(const Case &c, Bufs &b, int sms, const char *only) {
    const size_t wn = (size_t)c.K * c.N;
    for (int m = 0; m < c.nmat; m++) {
        CK(cudaMalloc(&b.W[m], wn * 2));
        k_init<<<1024, 256>>>(b.W[m], wn, 17 + m);
    }
    CK(cudaMalloc(&b.x, (size_t)MROWS * c.K * 2));
    k_init<<<256, 256>>>(b.x, (size_t)MROWS * c.K, 5);
    CK(cudaMalloc(&b.xf, (size_t)c.K / 16 * 32 * 16));
    k_xfrag<<<(c.K / 16 * 32 + 255) / 256, 256>>>(b.x, b.xf, c.K);
    b.part_floats = (size_t)c.nmat * (c.K / 256) * MROWS * c.N;
    CK(cudaMalloc(&b.part, b.part_floats * 4));
    CK(cudaMalloc(&b.y, (size_t)c.nmat * MROWS * c.N * 4));
    CK(cudaMalloc(&b.yref, (size_t)c.nmat * MROWS * c.N * 4));
    CK(cudaMalloc(&b.tickets, (size_t)2 * (c.N / 64) * 4));
    CK(cudaMemset(b.tickets, 0, (size_t)2 * (c.N / 64) * 4));
    CK(cudaMemset(b.yref, 0, (size_t)c.nmat * MROWS * c.N * 4));
    for (int m = 0; m < c.nmat; m++)
        k_ref<<<dim3((c.N + 127) / 128, (c.K + 255) / 256), 128>>>(b.W[m], b.x, b.yref + (size_t)m * MROWS * c.N, c.K,
                                                                   c.N);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    printf("\n== M 16, K %d, N %d, f16, %d matri%s (%s): W %.1f MB; L2 flushed (256 MB read) before every rep, "
           "median of %d\n",
           c.K, c.N, c.nmat, c.nmat > 1 ? "ces" : "x", c.what, c.nmat * wn * 2 / 1e6, g_reps);
    printf("%-32s %9s %6s %9s %6s %4s %12s %4s %7s %4s %9s\n", "variant", "us_main", "TB/s", "us_total", "TB/s",
           "b/SM", "grid", "thr", "smem", "regs", "maxerr");
    read_ceiling(c, b);
    for (const Variant &v : variants())
        if (!only || !strncmp(v.name, only, strlen(only)))
            if (!run_variant(v, c, b, sms))
                return false;
    for (int m = 0; m < c.nmat; m++)
        cudaFree(b.W[m]), b.W[m] = nullptr;
    cudaFree(b.x), cudaFree(b.xf), cudaFree(b.part), cudaFree(b.y), cudaFree(b.yref), cudaFree(b.tickets);
    return true;
}

/* ---------------------------------------------- --host-check (no GPU) */
/* CPU emulation of the layouts the kernels rely on, on one 16 x 64 x 32
 * tile: mma.sync m16n8k16 (PTX ISA's fragment tables), ldmatrix.x4.trans
 * through the swizzled and the padded layouts, and k_ldg's permuted B. */
static float h2f(uint16_t h) { return __half2float(__ushort_as_half(h)); }
static uint16_t f2h(float f) { return __half_as_ushort(__float2half(f)); }
static uint16_t lo16(uint32_t v) { return (uint16_t)(v & 0xFFFF); }
static uint16_t hi16(uint32_t v) { return (uint16_t)(v >> 16); }
/* one warp's mma: a[lane][4], b[lane][2] -> c[lane][4] += A B */
static void emu_mma(float c[32][4], const uint32_t a[32][4], const uint32_t b[32][2]) {
    float A[16][16], B[16][8];
    for (int l = 0; l < 32; l++) {
        const int g = l >> 2, t = l & 3;
        A[g][2 * t] = h2f(lo16(a[l][0])), A[g][2 * t + 1] = h2f(hi16(a[l][0]));
        A[g + 8][2 * t] = h2f(lo16(a[l][1])), A[g + 8][2 * t + 1] = h2f(hi16(a[l][1]));
        A[g][2 * t + 8] = h2f(lo16(a[l][2])), A[g][2 * t + 9] = h2f(hi16(a[l][2]));
        A[g + 8][2 * t + 8] = h2f(lo16(a[l][3])), A[g + 8][2 * t + 9] = h2f(hi16(a[l][3]));
        B[2 * t][g] = h2f(lo16(b[l][0])), B[2 * t + 1][g] = h2f(hi16(b[l][0]));
        B[2 * t + 8][g] = h2f(lo16(b[l][1])), B[2 * t + 9][g] = h2f(hi16(b[l][1]));
    }
    for (int l = 0; l < 32; l++) {
        const int g = l >> 2, t = l & 3;
        for (int q = 0; q < 4; q++) {
            const int m = g + (q >= 2 ? 8 : 0), n = 2 * t + (q & 1);
            float s = 0;
            for (int k = 0; k < 16; k++)
                s += A[m][k] * B[k][n];
            c[l][q] += s;
        }
    }
}
/* ldmatrix.x4.trans: lane l gives the row address of matrix l/8, row l%8;
 * lane (g, t) receives, of matrix i, elements [row 2t][col g], [2t+1][g] */
static void emu_ldsm_t(const uint16_t *sm, const int addr[32], uint32_t r[32][4]) {
    for (int l = 0; l < 32; l++) {
        const int g = l >> 2, t = l & 3;
        for (int i = 0; i < 4; i++) {
            const uint16_t *r0 = sm + addr[i * 8 + 2 * t], *r1 = sm + addr[i * 8 + 2 * t + 1];
            r[l][i] = (uint32_t)r0[g] | ((uint32_t)r1[g] << 16);
        }
    }
}
/* k_gen's x tile (16 rows of 64, swizzled as W's) read by ldmatrix.x4:
 * the A fragments it gives against xf's (k_xfrag's order); mismatches */
static int host_check_xtile(const std::vector<uint16_t> &x, int K) {
    std::vector<uint16_t> sm(16 * 64, 0);
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < K; c += 8)
            for (int e = 0; e < 8; e++)
                sm[r * 64 + ((((c >> 3) ^ (r & 7))) << 3) + e] = x[r * K + c + e];
    int bad = 0;
    for (int ks = 0; ks < K / 16; ks++) {
        int addr[32];
        for (int l = 0; l < 32; l++) {
            const int ar = l & 15, col = ks * 16 + (l >> 4) * 8;
            addr[l] = ar * 64 + (((col >> 3) ^ (ar & 7)) << 3);
        }
        for (int l = 0; l < 32; l++) {
            const int g = l >> 2, t = l & 3, k = ks * 16 + 2 * t;
            auto pk = [&](int m, int kc) { return (uint32_t)x[m * K + kc] | ((uint32_t)x[m * K + kc + 1] << 16); };
            const uint32_t want[4] = {pk(g, k), pk(g + 8, k), pk(g, k + 8), pk(g + 8, k + 8)};
            for (int i = 0; i < 4; i++) { /* plain ldmatrix: matrix i's row g, elements 2t, 2t + 1 */
                const uint16_t *row = sm.data() + addr[i * 8 + g];
                if (((uint32_t)row[2 * t] | ((uint32_t)row[2 * t + 1] << 16)) != want[i])
                    bad++;
            }
        }
    }
    return bad;
}
template <bool SWZ> static double host_check_smem(const std::vector<uint16_t> &W, const std::vector<uint16_t> &x,
                                                  const std::vector<float> &ref, int K, int N) {
    /* BN = N = 64, BK = K = 32, one warp (WN = WK = 1) */
    typedef Lay<64, 32, SWZ> L;
    std::vector<uint16_t> sm(L::STAGE_HALVES + 64, 0);
    for (int r = 0; r < K; r++)
        for (int c = 0; c < N; c += 8)
            for (int e = 0; e < 8; e++)
                sm[L::off(r, c) + e] = W[r * N + c + e];
    float acc[8][32][4] = {};
    for (int ks = 0; ks < K / 16; ks++) {
        uint32_t a[32][4];
        for (int l = 0; l < 32; l++) {
            const int g = l >> 2, t = l & 3, k = ks * 16 + 2 * t;
            auto pk = [&](int m, int kc) { return (uint32_t)x[m * K + kc] | ((uint32_t)x[m * K + kc + 1] << 16); };
            a[l][0] = pk(g, k), a[l][1] = pk(g + 8, k), a[l][2] = pk(g, k + 8), a[l][3] = pk(g + 8, k + 8);
        }
        for (int j = 0; j < 4; j++) {
            int addr[32];
            for (int l = 0; l < 32; l++)
                addr[l] = L::off(ks * 16 + (l & 7) + ((l >> 3) & 1) * 8, j * 16 + (l >> 4) * 8);
            uint32_t r[32][4], b0[32][2], b1[32][2];
            emu_ldsm_t(sm.data(), addr, r);
            for (int l = 0; l < 32; l++)
                b0[l][0] = r[l][0], b0[l][1] = r[l][1], b1[l][0] = r[l][2], b1[l][1] = r[l][3];
            emu_mma(acc[2 * j], a, b0);
            emu_mma(acc[2 * j + 1], a, b1);
        }
    }
    double err = 0;
    for (int j = 0; j < 8; j++)
        for (int l = 0; l < 32; l++) {
            const int g = l >> 2, t = l & 3, c = j * 8 + 2 * t; /* the epilogue's mapping */
            err = std::max(err, (double)std::fabs(acc[j][l][0] - ref[g * N + c]));
            err = std::max(err, (double)std::fabs(acc[j][l][1] - ref[g * N + c + 1]));
            err = std::max(err, (double)std::fabs(acc[j][l][2] - ref[(g + 8) * N + c]));
            err = std::max(err, (double)std::fabs(acc[j][l][3] - ref[(g + 8) * N + c + 1]));
        }
    return err;
}
static uint32_t bperm(uint32_t a, uint32_t b, uint32_t s) { /* __byte_perm */
    const uint64_t v = ((uint64_t)b << 32) | a;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++)
        r |= (uint32_t)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
    return r;
}
static double host_check_ldg(const std::vector<uint16_t> &W, const std::vector<uint16_t> &x,
                             const std::vector<float> &ref, int K, int N) {
    float acc[8][32][4] = {};
    for (int kk = 0; kk < K / 16; kk++) {
        uint32_t a[32][4];
        for (int l = 0; l < 32; l++) {
            const int g = l >> 2, t = l & 3, k = kk * 16 + 2 * t;
            auto pk = [&](int m, int kc) { return (uint32_t)x[m * K + kc] | ((uint32_t)x[m * K + kc + 1] << 16); };
            a[l][0] = pk(g, k), a[l][1] = pk(g + 8, k), a[l][2] = pk(g, k + 8), a[l][3] = pk(g + 8, k + 8);
        }
        uint32_t w[32][4][4];
        for (int l = 0; l < 32; l++) {
            const int g = l >> 2, t = l & 3;
            const int rows[4] = {kk * 16 + 2 * t, kk * 16 + 2 * t + 1, kk * 16 + 2 * t + 8, kk * 16 + 2 * t + 9};
            for (int q = 0; q < 4; q++)
                for (int e = 0; e < 4; e++)
                    w[l][q][e] = (uint32_t)W[rows[q] * N + 8 * g + 2 * e] | ((uint32_t)W[rows[q] * N + 8 * g + 2 * e + 1] << 16);
        }
        for (int j = 0; j < 8; j++) {
            uint32_t b[32][2];
            const uint32_t sel = (j & 1) ? 0x7632u : 0x5410u;
            for (int l = 0; l < 32; l++)
                b[l][0] = bperm(w[l][0][j >> 1], w[l][1][j >> 1], sel),
                b[l][1] = bperm(w[l][2][j >> 1], w[l][3][j >> 1], sel);
            emu_mma(acc[j], a, b);
        }
    }
    double err = 0;
    for (int j = 0; j < 8; j++)
        for (int l = 0; l < 32; l++) {
            const int g = l >> 2, t = l & 3; /* k_ldg's stores */
            err = std::max(err, (double)std::fabs(acc[j][l][0] - ref[g * N + 16 * t + j]));
            err = std::max(err, (double)std::fabs(acc[j][l][1] - ref[g * N + 16 * t + 8 + j]));
            err = std::max(err, (double)std::fabs(acc[j][l][2] - ref[(g + 8) * N + 16 * t + j]));
            err = std::max(err, (double)std::fabs(acc[j][l][3] - ref[(g + 8) * N + 16 * t + 8 + j]));
        }
    return err;
}
static int host_check() {
    const int K = 32, N = 64;
    std::vector<uint16_t> W(K * N), x(MROWS * K);
    uint32_t s = 1;
    auto rnd = [&]() { s = s * 1664525u + 1013904223u; return ((s >> 8) & 0xFFFF) / 32768.f - 1.f; };
    for (auto &v : W)
        v = f2h(rnd());
    for (auto &v : x)
        v = f2h(rnd());
    std::vector<float> ref(MROWS * N, 0.f);
    for (int m = 0; m < MROWS; m++)
        for (int n = 0; n < N; n++)
            for (int k = 0; k < K; k++)
                ref[m * N + n] += h2f(x[m * K + k]) * h2f(W[k * N + n]);
    /* the swizzle is a permutation of each row's chunks (no two chunks collide) */
    int bad = 0;
    {
        std::vector<int> seen(64 * 256, 0);
        for (int r = 0; r < 64; r++)
            for (int c = 0; c < 256; c += 8)
                if (seen[Lay<256, 64, true>::off(r, c)]++)
                    bad++;
    }
    const double e1 = host_check_smem<true>(W, x, ref, K, N), e2 = host_check_smem<false>(W, x, ref, K, N);
    const double e3 = host_check_ldg(W, x, ref, K, N);
    const int xb = host_check_xtile(x, K);
    printf("host check: swizzle collisions %d; max |err| swizzled %.3g, padded %.3g, registers %.3g; x tile "
           "fragments wrong %d\n", bad, e1, e2, e3, xb);
    const bool ok = bad == 0 && e1 < 1e-3 && e2 < 1e-3 && e3 < 1e-3 && xb == 0;
    printf("host check %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    int only_case = -1;
    const char *only = nullptr;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--host-check"))
            return host_check();
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = std::max(3, atoi(argv[++i]));
        else if (!strcmp(argv[i], "--case") && i + 1 < argc)
            only_case = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--reps N] [--case 0|1|2] [--only PREFIX] [--host-check]\n", argv[0]);
            return 2;
        }
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (host_check() != 0)
        return 1;
    cudaDeviceProp pr;
    if (cudaGetDeviceProperties(&pr, 0) != cudaSuccess) {
        printf("no GPU\n");
        return 1;
    }
    printf("%s: %d SMs, L2 %.0f MB, %.0f KB shared a SM\n", pr.name, pr.multiProcessorCount, pr.l2CacheSize / 1e6,
           pr.sharedMemPerMultiprocessor / 1024.0);
    printf("columns: us_main = the streaming kernel, us_total = + the slices' sum kernel; TB/s = W bytes / time;\n"
           "b/SM = resident blocks a SM (occupancy API); grid = N tiles x K slices x matrices\n");
    Bufs b;
    b.flush_n = FLUSH_BYTES / 16;
    if (cudaMalloc(&b.flush, FLUSH_BYTES) != cudaSuccess || cudaMalloc(&b.sink, 4) != cudaSuccess)
        return 1;
    cudaMemset(b.flush, 0, FLUSH_BYTES);
    const Case cases[] = {
        {65536, 4096, 1, "the issue's K 65536 stream, 512 MB"},
        {4096, 11008, 2, "gated_mlp's W1 and W3"},
        {4096, 4096, 1, "rmsnorm_matmul's W"},
    };
    for (int i = 0; i < 3; i++)
        if (only_case < 0 || only_case == i)
            if (!run_case(cases[i], b, pr.multiProcessorCount, only))
                return 1;
    return 0;
}
