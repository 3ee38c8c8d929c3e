/* The generated matrix product's tiles and fragments (matmul.cuh's
 * tc_mm_run, which a unit with a generated matmul gets right after this
 * file: codegen/unit.c): its types, the stages' tiles in shared memory
 * and their cp.async copies (tc_mm_tile: a plan per work item, so a whole
 * stage is its copies and an add each), and a stage's product
 * (tc_mm_block): on tensor cores (sm_80+) every fragment by one ldmatrix
 * (A's m16k16, B's two n8k16) feeding mma.sync m16n8k16, the row-scale
 * rule's squares and scale in the fragments; else FMAs (f32, and f16/bf16
 * before sm_80), the row-scale rule then in shared memory (the prologue). */
template <int DT> struct tc_mm_t { typedef unsigned short T; };  /* 1 f16, 2 bf16 */
template <> struct tc_mm_t<0> { typedef float T; };               /* 0 f32 */
__device__ __forceinline__ float tc_mm_f(float v, int dt) { (void)dt; return v; }
__device__ __forceinline__ float tc_mm_f(unsigned short v, int dt) { return dt == 1 ? tc_h2f(v) : tc_bf2f(v); }
template <int DT> __device__ __forceinline__ typename tc_mm_t<DT>::T tc_mm_out(float v);
template <> __device__ __forceinline__ float tc_mm_out<0>(float v) { return v; }
template <> __device__ __forceinline__ unsigned short tc_mm_out<1>(float v) { return tc_f2h(v); }
template <> __device__ __forceinline__ unsigned short tc_mm_out<2>(float v) { return tc_f2bf(v); }

#define TC_MM_THREADS 128
#define TC_MM_BN 64
#if __CUDA_ARCH__ >= 800
#define TC_MM_TENSOR 1
#else
#define TC_MM_TENSOR 0
#endif

/* 16 bytes global -> shared: cp.async where there is one (sm_80+, the copy
 * runs while the block computes), else through a register.  H 1, the
 * weight's copies under TENSORC_MATMUL_STREAM=l2pf (matmul.cuh's STR): the
 * L2 fetches the whole 256-byte block from DRAM (.L2::256B) */
template <int H = 0> __device__ __forceinline__ void tc_mm_cp16(void *dst, const void *src) {
#if __CUDA_ARCH__ >= 800
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    if (H == 1)
        asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(d), "l"(src));
    else
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src));
#else
    *(uint4 *)dst = __ldg((const uint4 *)src);
#endif
}
/* a release and acquire fence at GPU scope (lighter than __threadfence's
 * fence.sc; sm_70+) */
__device__ __forceinline__ void tc_mm_fence_ar() {
#if __CUDA_ARCH__ >= 700
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
#else
    __threadfence();
#endif
}
__device__ __forceinline__ void tc_mm_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;");
#endif
}
template <int N> __device__ __forceinline__ void tc_mm_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N));
#endif
}

/* A tile of a stored matrix, R x C elements with a pitch of P in shared
 * memory: 16-byte chunks copied asynchronously where whole and aligned,
 * else element by element, zero past the edges. */
template <class T, int R_, int C> struct tc_mm_tile {
    enum {
        R = R_, V = 16 / (int)sizeof(T), CH = R * C / V, PER = (CH + TC_MM_THREADS - 1) / TC_MM_THREADS,
        P = C + V, ELEMS = R * P
    };
    /* this thread's i-th 16-byte chunk of the tile: its row and column,
     * or false past the tile's last chunk */
    static __device__ __forceinline__ bool chunk(int i, int &rr, int &cc) {
        const int ch = (int)threadIdx.x + i * TC_MM_THREADS;
        if (CH % TC_MM_THREADS != 0 && ch >= CH)
            return false;
        rr = ch / (C / V);
        cc = (ch % (C / V)) * V;
        return true;
    }
    template <int H = 0>
    static __device__ __forceinline__ void load(T *s, const T *src, long long ld, long long rlim,
                                                long long clim, long long r0, long long c0) {
        /* the whole tile inside and every row's start aligned (tested once
         * a tile, not a chunk: the per-chunk tests were most of a K step's
         * instructions): the same copies without the tests */
        if (r0 + R <= rlim && c0 + C <= clim && ld % V == 0 &&
            ((unsigned long long)(src + r0 * ld + c0) & 15) == 0) {
            const T *q = src + r0 * ld + c0;
#pragma unroll
            for (int i = 0; i < PER; i++) {
                int rr, cc;
                if (!chunk(i, rr, cc))
                    break;
                tc_mm_cp16<H>(s + rr * P + cc, q + rr * ld + cc);
            }
            return;
        }
#pragma unroll
        for (int i = 0; i < PER; i++) {
            int rr, cc;
            if (!chunk(i, rr, cc))
                break;
            const long long gr = r0 + rr, gc = c0 + cc;
            const T *p = src + gr * ld + gc;
            T *d = s + rr * P + cc;
            if (gr < rlim && gc + V <= clim && ((unsigned long long)p & 15) == 0) {
                tc_mm_cp16<H>(d, p);
            } else {
#pragma unroll
                for (int v = 0; v < V; v++)
                    d[v] = gr < rlim && gc + v < clim ? p[v] : (T)0;
            }
        }
    }
    /* The K loop's stages of one work item, whole tiles (the first
     * nfull, whose steps of K are inside): each thread's first chunk's
     * address, moved a stage at a time, and the distance to its next chunk
     * (its chunks are rows TC_MM_THREADS / (C / V) apart, one column), so
     * a stage is an add a chunk and the copies, not 64-bit products and
     * edge tests.  ok: the tile inside across (the caller gives K no
     * limit), ld whole chunks and the first row aligned, which every stage
     * keeps (they move by steps of K of whole 16-byte chunks).  ZR: rows
     * past rlim (x's rows past M: 15 of 16 at M = 1) are no reason to
     * leave the plan: their chunks are zeros stored (rv: the thread's
     * rows inside, from its first). */
    struct plan {
        const char *q;
        long long d, step;
        int rv;
        bool ok;
    };
    static_assert(TC_MM_THREADS % (C / V) == 0, "a thread's chunks share a column");
    enum { RS = TC_MM_THREADS / (C / V) }; /* rows between a thread's chunks */
    template <bool ZR = false>
    static __device__ __forceinline__ void start(plan &pl, const T *src, long long ld, long long rlim,
                                                 long long clim, long long r0, long long c0, long long step) {
        const int t = (int)threadIdx.x;
        const long long rv = rlim - r0 - t / (C / V);
        pl.q = (const char *)(src + (r0 + t / (C / V)) * ld + c0 + t % (C / V) * V);
        pl.d = (long long)RS * ld * (long long)sizeof(T);
        pl.step = step * (long long)sizeof(T);
        pl.rv = rv < 0 ? 0 : rv > R ? R : (int)rv;
        pl.ok = (ZR || r0 + R <= rlim) && c0 + C <= clim && ld % V == 0 &&
                ((unsigned long long)(src + r0 * ld + c0) & 15) == 0;
    }
    /* the next whole stage's copies into s */
    template <bool ZR = false, int H = 0> static __device__ __forceinline__ void issue(T *s, plan &pl) {
        const int t = (int)threadIdx.x;
        const char *q = pl.q;
        T *d = s + t / (C / V) * P + t % (C / V) * V;
#pragma unroll
        for (int i = 0; i < PER; i++) {
            if (CH % TC_MM_THREADS != 0 && t + i * TC_MM_THREADS >= CH)
                break;
            if (!ZR || i * RS < pl.rv)
                tc_mm_cp16<H>(d + i * RS * P, q);
            else
                *(uint4 *)(d + i * RS * P) = make_uint4(0, 0, 0, 0);
            q += pl.d;
        }
        pl.q += pl.step;
    }
};

/* d += a (16 x 16, row) * b (16 x 8, col), f32 accumulators */
template <int DT> __device__ __forceinline__ void tc_mm_mma(float *d, const unsigned *a, const unsigned *b) {
#if __CUDA_ARCH__ >= 800
    if (DT == 1)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}
/* Four 8 x 8 matrices of 16-bit elements from shared memory, each row's
 * address given by 8 lanes (lanes 8i .. 8i + 7: matrix i): one
 * instruction for a whole m16k16 A fragment or two n8k16 B fragments,
 * where scalar loads took a dozen and their packing.  Plain: lane (g, t)
 * gets row g, elements 2t and 2t + 1; TR (.trans): rows 2t and 2t + 1 of
 * column g.  Rows are 16-byte aligned: the tiles' pitches are whole
 * 16-byte chunks (tc_mm_tile's P), their columns multiples of 8. */
template <bool TR> __device__ __forceinline__ void tc_mm_ldsm(unsigned *r, unsigned addr) {
#if __CUDA_ARCH__ >= 800
    if (TR)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
#else
    (void)r, (void)addr;
#endif
}
/* v, which the compiler can no longer recompute from what made it */
__device__ __forceinline__ void tc_mm_opaque(unsigned &v) {
    asm("mov.b32 %0, %0;" : "+r"(v));
}
/* two f16 (DT 1) or bf16 (2) products at once, each rounded once to the
 * type: the f32 product of two 16-bit floats is exact, so this is the
 * bits of tc_mm_out(f(a) * f(b)) (bf16: a fused multiply-add of -0, there
 * being no bf16x2 mul before sm_90) */
template <int DT> __device__ __forceinline__ unsigned tc_mm_hmul2(unsigned a, unsigned b) {
    unsigned d = a;
#if __CUDA_ARCH__ >= 800
    if (DT == 1)
        asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    else
        asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(0x80008000u));
#else
    (void)b;
#endif
    return d;
}

/* The tile shapes of one instantiation: BM rows of C (16, or 64 on tensor
 * cores for M > 16, so the weight is read once for up to 64 rows), BN
 * columns (64; 128 or 256 for 16-row tiles on tensor cores under
 * TENSORC_MATMUL_BN: each weight row's piece a stage 256 or 512
 * contiguous bytes, not 128; each warp then BN / 4 columns). */
template <int DT, bool TA, bool TB, int BM, int STG = 0, int BKK = 0, bool NRM = false, int BN = TC_MM_BN>
struct tc_mm_cfg {
    typedef typename tc_mm_t<DT>::T T;
    enum { BMR = BM, DTV = DT, BNV = BN };
    /* steps of K: four stages fit in 48 KB (16-row tiles of 16-bit types
     * take 64; wide tiles 32: 8 or 16 KB of weight a stage, four stages
     * in dynamic shared memory at 256); BKK (TENSORC_MATMUL_BK) sets them */
    enum { BK = BKK ? BKK : BM == 16 && sizeof(T) == 2 ? (BN > 64 ? 32 : 64) : 32 };
    typedef tc_mm_tile<T, TA ? BK : BM, TA ? BM : BK> TileA;
    typedef tc_mm_tile<T, TB ? BN : BK, TB ? BK : BN> TileB;
    /* NRM (the row-scale rule): the stage's BK elements of gcol ride the
     * stage's copies after the B tile, so the prologue reads them from
     * shared memory, not with a global load the stage waits on */
    typedef tc_mm_tile<T, 1, BK> TileG;
    enum {
        MMA = DT != 0 && TC_MM_TENSOR,
        NACC = BM * BN / TC_MM_THREADS, /* accumulators a thread: BM x BN over 128 threads */
        NF = BN / 32,                   /* tensor cores: a warp's n8 fragments an m16 row */
        STAGE = (TileA::ELEMS + TileB::ELEMS + (NRM ? TileG::ELEMS : 0)) * (int)sizeof(T),
        /* stages: static shared memory stops at 48 KB (wide tiles: four,
         * dynamic past it); STG (TENSORC_MATMUL_STAGES) sets them */
        ST = STG ? STG : BN > 64 || STAGE * 4 <= 47 * 1024 ? 4 : 3,
        BYTES = STAGE * ST
    };
    static_assert(BN == TC_MM_BN || (MMA && BM == 16), "wide tiles: 16 rows on tensor cores");
    /* element i of this thread's accumulators: on tensor cores the m16n8
     * fragments of its warp's BN / 4 columns (m-fragment i / (4 NF)), else
     * column tid % 64 of rows (tid / 64) * 8 ... + 7 */
    static __device__ __forceinline__ void pos(int i, int &r, int &c) {
        const int tid = (int)threadIdx.x, lane = tid & 31, w = tid >> 5;
        if (MMA) {
            r = i / (4 * NF) * 16 + (lane >> 2) + (i & 2 ? 8 : 0);
            c = w * (BN / 4) + i / 4 % NF * 8 + 2 * (lane & 3) + (i & 1);
        } else {
            r = (tid / TC_MM_BN) * 8 + i;
            c = tid % TC_MM_BN;
        }
    }
};

/* This lane's row addresses for tc_mm_ldsm (bytes from its tile), the
 * same at every stage: a (A's fragment a0..a3), b (B's b0, b1 of the
 * warp's columns w * WN ..., then of + 8; wider warps' next 16 columns
 * are + 16) and x (NRM: A's matrices in the order a0, a2, a1, a3) */
template <bool TA, bool TB, int PA, int PB, int WN = 16> struct tc_mm_lanes {
    unsigned a, b, x;
    __device__ __forceinline__ tc_mm_lanes() {
        const int lane = (int)threadIdx.x & 31, w4 = (int)threadIdx.x >> 5, li = lane >> 3, lr = lane & 7;
        a = 2 * (TA ? (lr + (li >> 1) * 8) * PA + (li & 1) * 8 : (lr + (li & 1) * 8) * PA + (li >> 1) * 8);
        b = 2 * (TB ? (w4 * WN + (li >> 1) * 8 + lr) * PB + (li & 1) * 8
                    : (lr + (li & 1) * 8) * PB + w4 * WN + (li >> 1) * 8);
        x = 2 * ((lr + (li >> 1) * 8) * PA + (li & 1) * 8);
    }
};

/* acc += sA (BM x KK, A's layout TA, pitch PA) @ sB (KK x BN, B's layout
 * TB, pitch PB), both in shared memory: tensor cores (tc_mm_block_tc, its
 * lanes' row addresses given) or FMAs (cfg G, tc_mm_block).
 * NRM (the row-scale rule, tensor cores; A not transposed): A's tile is x
 * as loaded: warp w adds x's squares of its steps of 16 (kk = 16 w, + 64
 * ...) to ssa, by mma of the fragment with itself (x x^T, whose diagonal
 * is each row's sum of squares: tc_mm_ssq); NRM 2 scales the fragments by
 * sg's elements (gcol's) before the product, as the FMA path's prologue
 * does in shared memory. */
/* (tc_mm_block_tc: a0, b0, x0 the lane's addresses, shared space, of its
 * rows in this stage's tiles: tc_mm_lanes) */
template <class G, bool TA, bool TB, int KK, int PA, int PB, int NRM = 0>
__device__ __forceinline__ void tc_mm_block_tc(float *acc, unsigned a0, unsigned b0, unsigned x0,
                                               const typename G::T *sg, float *ssa) {
    enum { BM = G::BMR, DT = G::DTV, NH = G::BNV / 64 }; /* NH: a warp's 16-column B fragment pairs */
    {
        if (NRM) {
            const int w4 = (int)threadIdx.x >> 5;
            /* x's squares, warp w4 its steps kk = w4 * 16 (+ 64 ...): the
             * fragment (a0..a3) times x^T, whose B fragments are (a0, a2)
             * for rows 0-7 and (a1, a3) for rows 8-15: a second load of
             * the same rows with the matrices in that order */
#pragma unroll
            for (int q = 0; q < (KK + 63) / 64; q++) {
                const int kq = w4 * 16 + q * 64;
                if (KK % 64 == 0 || kq < KK) {
#pragma unroll
                    for (int f = 0; f < BM / 16; f++) {
                        unsigned af[4], xt[4];
                        tc_mm_ldsm<false>(af, a0 + 2 * (f * 16 * PA + kq));
                        tc_mm_ldsm<false>(xt, x0 + 2 * (f * 16 * PA + kq));
                        if (BM == 16) { /* accumulated in the fragments */
                            tc_mm_mma<DT>(ssa, af, xt);
                            tc_mm_mma<DT>(ssa + 4, af, xt + 2);
                        } else { /* the diagonal's two sums alone (registers) */
                            float d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                            const int odd = (int)threadIdx.x >> 2 & 1;
                            tc_mm_mma<DT>(d, af, xt);
                            tc_mm_mma<DT>(d + 4, af, xt + 2);
                            ssa[f * 2] += odd ? d[1] : d[0];
                            ssa[f * 2 + 1] += odd ? d[7] : d[6];
                        }
                    }
                }
            }
        }
#pragma unroll
        for (int kk = 0; kk < KK; kk += 16) {
            unsigned bf[NH][4];
#pragma unroll
            for (int h = 0; h < NH; h++)
                tc_mm_ldsm<!TB>(bf[h], b0 + 2 * (TB ? h * 16 * PB + kk : kk * PB + h * 16));
            unsigned g2[2];
            if (NRM == 2) { /* g at columns kk + 2t, + 1 and kk + 2t + 8, + 9 */
                const int t = (int)threadIdx.x & 3;
                g2[0] = *(const unsigned *)(sg + kk + 2 * t);
                g2[1] = *(const unsigned *)(sg + kk + 2 * t + 8);
            }
#pragma unroll
            for (int f = 0; f < BM / 16; f++) {
                unsigned af[4];
                tc_mm_ldsm<TA>(af, a0 + 2 * (TA ? kk * PA + f * 16 : f * 16 * PA + kk));
                if (NRM == 2) {
                    af[0] = tc_mm_hmul2<DT>(af[0], g2[0]);
                    af[1] = tc_mm_hmul2<DT>(af[1], g2[0]);
                    af[2] = tc_mm_hmul2<DT>(af[2], g2[1]);
                    af[3] = tc_mm_hmul2<DT>(af[3], g2[1]);
                }
#pragma unroll
                for (int h = 0; h < NH; h++) {
                    tc_mm_mma<DT>(acc + (f * 2 * NH + 2 * h) * 4, af, bf[h]);
                    tc_mm_mma<DT>(acc + (f * 2 * NH + 2 * h + 1) * 4, af, bf[h] + 2);
                }
            }
        }
    }
}
template <class G, bool TA, bool TB, int KK, int PA, int PB>
__device__ __forceinline__ void tc_mm_block(float *acc, const typename G::T *sA, const typename G::T *sB) {
    enum { DT = G::DTV };
    if (G::MMA) {
        const tc_mm_lanes<TA, TB, PA, PB, G::BNV / 4> ln;
        tc_mm_block_tc<G, TA, TB, KK, PA, PB>(acc, (unsigned)__cvta_generic_to_shared(sA) + ln.a,
                                              (unsigned)__cvta_generic_to_shared(sB) + ln.b, 0, nullptr, nullptr);
    } else {
        int r0, c;
        G::pos(0, r0, c);
#pragma unroll 8
        for (int k = 0; k < KK; k++) {
            const float bv = tc_mm_f(sB[TB ? c * PB + k : k * PB + c], DT);
#pragma unroll
            for (int i = 0; i < 8; i++)
                acc[i] = fmaf(tc_mm_f(sA[TA ? k * PA + r0 + i : (r0 + i) * PA + k], DT),
                              bv, acc[i]);
        }
    }
}

/* NRM on tensor cores: the rows' sums of squares from the warps' ssa
 * (tc_mm_block): fragment f's mma with x's rows 0-7 as B holds row f * 16
 * + g's sum at (g, g) (lane (g, g / 2), element g % 2), with rows 8-15 row
 * f * 16 + 8 + g's at (8 + g, g) (element 2 + g % 2 of the second); at BM
 * 16 ssa is the two fragments (8), else those two elements of each f (2
 * an f: 64 rows' fragments spilled registers);
 * each warp's in ssw[w][row], then summed over the warps in order by
 * thread row (after a barrier: the caller's). */
template <int BM> __device__ __forceinline__ void tc_mm_ssq(const float *ssa, float *ssw) {
    const int lane = (int)threadIdx.x & 31, w4 = (int)threadIdx.x >> 5, g = lane >> 2;
    if ((lane & 3) == g >> 1) {
#pragma unroll
        for (int f = 0; f < BM / 16; f++) {
            ssw[w4 * BM + f * 16 + g] = BM == 16 ? ssa[g & 1] : ssa[f * 2];
            ssw[w4 * BM + f * 16 + 8 + g] = BM == 16 ? ssa[6 + (g & 1)] : ssa[f * 2 + 1];
        }
    }
}


/* A's tile of this stage (not transposed), the chunks this thread copied:
 * their squares into ss (one sum a chunk), then scaled in place by gcol
 * (when not null), whose elements kb... this stage copied to sg; elements
 * past M or k1 stay the zeros they were loaded as. */
template <int DT, class TileA>
__device__ __forceinline__ void tc_mm_prologue(typename tc_mm_t<DT>::T *s, const typename tc_mm_t<DT>::T *gcol,
                                               const typename tc_mm_t<DT>::T *sg, long long kb, long long k1,
                                               long long m0, long long M, float *ss) {
#pragma unroll
    for (int i = 0; i < TileA::PER; i++) {
        int rr, cc;
        if (!TileA::chunk(i, rr, cc))
            break;
        typename tc_mm_t<DT>::T *d = s + rr * TileA::P + cc;
        if (m0 + rr < M && kb + cc + TileA::V <= k1) {
            /* the whole chunk inside: one 16-byte shared load (and store)
             * of x and of g, not one an element; the same arithmetic */
            __align__(16) typename tc_mm_t<DT>::T xs[TileA::V], gs[TileA::V];
            *(uint4 *)xs = *(const uint4 *)d;
            if (gcol)
                *(uint4 *)gs = *(const uint4 *)(sg + cc);
#pragma unroll
            for (int v = 0; v < TileA::V; v++) {
                const float xv = tc_mm_f(xs[v], DT);
                ss[i] += xv * xv;
                if (gcol)
                    xs[v] = tc_mm_out<DT>(xv * tc_mm_f(gs[v], DT));
            }
            if (gcol)
                *(uint4 *)d = *(const uint4 *)xs;
            continue;
        }
#pragma unroll
        for (int v = 0; v < TileA::V; v++) {
            const float xv = tc_mm_f(d[v], DT);
            ss[i] += xv * xv;
            if (gcol && kb + cc + v < k1 && m0 + rr < M)
                d[v] = tc_mm_out<DT>(xv * tc_mm_f(sg[cc + v], DT));
        }
    }
}

