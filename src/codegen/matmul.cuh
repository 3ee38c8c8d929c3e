/* Generated matrix products (codegen/matmul.c, sched/sched_matmul.c), in
 * units with one: C[b] = A[b] @ B[b], row-major, A m x k (TA: stored k x m),
 * B k x n (TB: stored n x k), f32 accumulation.  Built for skinny M
 * (decode): a block computes a 16 x 64 tile of C (64 x 64 on tensor cores
 * when M > 16) over one slice of KS elements of K, so the tiles and the K
 * slices together cover every SM and the weight is streamed once, in
 * 16-byte cp.async copies three steps of K ahead of the one being
 * multiplied (four stages in shared memory, three where four pass 48 KB;
 * steps of 64 for 16-row tiles of f16/bf16, else 32).  f16/bf16 on
 * tensor cores (mma.sync m16n8k16, sm_80+), f32 (and f16/bf16 before
 * sm_80) with FMAs.  K slices combine deterministically: each writes its
 * partial tile to the workspace, and the last of a tile's slices to finish
 * (an atomic ticket) sums them in slice order, stores C, and zeroes the
 * partials and the ticket again (the workspace is all zero between
 * launches).  Work items (batch, tile, slice) are grid-strided, so any grid
 * is right.  Two products of one A (NP = 2, the pair rule: a gated MLP's
 * x @ W1 and x @ W3) are one kernel: each (tile, slice) is a work item per
 * product, the last item of a tile (of both) sums both products' slices
 * and hands both values to the epilogue.  Knobs for A/B timing (README):
 * TENSORC_MATMUL_STAGES and _BK set the stages and their K step (dynamic
 * shared memory past 47 KB), _RESIDENT caps the grid at resident blocks
 * that issue their next item's first stages early (tc_mm's STG, BKK, SHM,
 * XP; unset, the kernel is as before). */
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
 * runs while the block computes), else through a register */
__device__ __forceinline__ void tc_mm_cp16(void *dst, const void *src) {
#if __CUDA_ARCH__ >= 800
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
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
                const int ch = (int)threadIdx.x + i * TC_MM_THREADS;
                if (CH % TC_MM_THREADS != 0 && ch >= CH)
                    break;
                const int rr = ch / (C / V), cc = (ch % (C / V)) * V;
                tc_mm_cp16(s + rr * P + cc, q + rr * ld + cc);
            }
            return;
        }
#pragma unroll
        for (int i = 0; i < PER; i++) {
            const int ch = (int)threadIdx.x + i * TC_MM_THREADS;
            if (CH % TC_MM_THREADS != 0 && ch >= CH)
                break;
            const int rr = ch / (C / V), cc = (ch % (C / V)) * V;
            const long long gr = r0 + rr, gc = c0 + cc;
            const T *p = src + gr * ld + gc;
            T *d = s + rr * P + cc;
            if (gr < rlim && gc + V <= clim && ((unsigned long long)p & 15) == 0) {
                tc_mm_cp16(d, p);
            } else {
#pragma unroll
                for (int v = 0; v < V; v++)
                    d[v] = gr < rlim && gc + v < clim ? p[v] : (T)0;
            }
        }
    }
};

__device__ __forceinline__ unsigned tc_mm_pk(unsigned short lo, unsigned short hi) {
    return (unsigned)lo | (unsigned)hi << 16;
}
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
/* two 16-bit elements at (i, j), (i, j + 1) of a tile stored row-major
 * with pitch P (one 32-bit load), or transposed (two loads) */
template <bool T, int P> __device__ __forceinline__ unsigned tc_mm_pair(const unsigned short *s, int i, int j) {
    return T ? tc_mm_pk(s[j * P + i], s[(j + 1) * P + i]) : *(const unsigned *)(s + i * P + j);
}

/* The tile shapes of one instantiation: BM rows of C (16, or 64 on tensor
 * cores for M > 16, so the weight is read once for up to 64 rows). */
template <int DT, bool TA, bool TB, int BM, int STG = 0, int BKK = 0, bool NRM = false> struct tc_mm_cfg {
    typedef typename tc_mm_t<DT>::T T;
    enum { BMR = BM, DTV = DT };
    /* steps of K: four stages fit in 48 KB (16-row tiles of 16-bit types
     * take 64); BKK (TENSORC_MATMUL_BK) sets them */
    enum { BK = BKK ? BKK : BM == 16 && sizeof(T) == 2 ? 64 : 32 };
    typedef tc_mm_tile<T, TA ? BK : BM, TA ? BM : BK> TileA;
    typedef tc_mm_tile<T, TB ? TC_MM_BN : BK, TB ? BK : TC_MM_BN> TileB;
    /* NRM (the row-scale rule): the stage's BK elements of gcol ride the
     * stage's copies after the B tile, so the prologue reads them from
     * shared memory, not with a global load the stage waits on */
    typedef tc_mm_tile<T, 1, BK> TileG;
    enum {
        MMA = DT != 0 && TC_MM_TENSOR,
        NACC = MMA ? BM / 2 : 8, /* accumulators a thread: BM x 64 over 128 threads */
        STAGE = (TileA::ELEMS + TileB::ELEMS + (NRM ? TileG::ELEMS : 0)) * (int)sizeof(T),
        /* stages: static shared memory stops at 48 KB; STG (TENSORC_MATMUL_STAGES) sets them */
        ST = STG ? STG : STAGE * 4 <= 47 * 1024 ? 4 : 3,
        BYTES = STAGE * ST
    };
    /* element i of this thread's accumulators: on tensor cores the m16n8
     * fragments of its warp's 16 columns (m-fragment i / 8), else column
     * tid % 64 of rows (tid / 64) * 8 ... + 7 */
    static __device__ __forceinline__ void pos(int i, int &r, int &c) {
        const int tid = (int)threadIdx.x, lane = tid & 31, w = tid >> 5;
        if (MMA) {
            r = (i >> 3) * 16 + (lane >> 2) + (i & 2 ? 8 : 0);
            c = w * 16 + ((i >> 2) & 1) * 8 + 2 * (lane & 3) + (i & 1);
        } else {
            r = (tid / TC_MM_BN) * 8 + i;
            c = tid % TC_MM_BN;
        }
    }
};

/* acc += sA (BM x KK, A's layout TA, pitch PA) @ sB (KK x 64, B's layout
 * TB, pitch PB), both in shared memory: tensor cores or FMAs (cfg G). */
template <class G, bool TA, bool TB, int KK, int PA, int PB>
__device__ __forceinline__ void tc_mm_block(float *acc, const typename G::T *sA, const typename G::T *sB) {
    enum { BM = G::BMR, DT = G::DTV };
    if (G::MMA) {
        const int lane = (int)threadIdx.x & 31, w4 = (int)threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
        const unsigned short *a16 = (const unsigned short *)sA, *b16 = (const unsigned short *)sB;
#pragma unroll
        for (int kk = 0; kk < KK; kk += 16) {
            unsigned bf[2][2];
#pragma unroll
            for (int j = 0; j < 2; j++) {
                const int n = w4 * 16 + j * 8 + g;
                bf[j][0] = tc_mm_pair<!TB, PB>(b16, n, kk + 2 * t);
                bf[j][1] = tc_mm_pair<!TB, PB>(b16, n, kk + 2 * t + 8);
            }
#pragma unroll
            for (int f = 0; f < BM / 16; f++) {
                unsigned af[4];
                const int m = f * 16 + g;
                af[0] = tc_mm_pair<TA, PA>(a16, m, kk + 2 * t);
                af[1] = tc_mm_pair<TA, PA>(a16, m + 8, kk + 2 * t);
                af[2] = tc_mm_pair<TA, PA>(a16, m, kk + 2 * t + 8);
                af[3] = tc_mm_pair<TA, PA>(a16, m + 8, kk + 2 * t + 8);
#pragma unroll
                for (int j = 0; j < 2; j++)
                    tc_mm_mma<DT>(acc + (f * 2 + j) * 4, af, bf[j]);
            }
        }
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

/* No epilogue; else a functor (the generated kernel's lambda) called with
 * each element of C as it is stored: its row, column and value (rounded to
 * C's dtype, as a reader of C would load it), and with two products (NP =
 * 2, the pair rule) the other product's element likewise (else 0).
 * Batched products have none. */
struct tc_mm_noep {
    __device__ __forceinline__ void operator()(long long, long long, float, float) const {}
};
/* The row-scale rule (NORM, fuse.h's fuse_mm_norm): A is x, each tile's
 * elements scaled by gcol[k] (when not null) as it arrives, each row's sum
 * of squares of x accumulated beside the product, and the product's row i
 * multiplied by rs(i, that sum) before it is rounded and stored. */
struct tc_mm_nors {
    __device__ __forceinline__ float operator()(long long, float) const { return 1.0f; }
};
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
        const int ch = (int)threadIdx.x + i * TC_MM_THREADS;
        if (TileA::CH % TC_MM_THREADS != 0 && ch >= TileA::CH)
            break;
        const int per_row = TileA::CH / TileA::R, rr = ch / per_row, cc = (ch % per_row) * TileA::V;
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

template <int DT, bool TA, bool TB, int BM, bool NORM, int NP, bool LORA, int STG, int BKK, bool XP, int FEN,
          bool SO, class EP, class RS>
__device__ __forceinline__ void tc_mm_run(const typename tc_mm_t<DT>::T *__restrict__ A,
                                          const typename tc_mm_t<DT>::T *__restrict__ B,
                                          typename tc_mm_t<DT>::T *__restrict__ C, long long M,
                                          long long N, long long K, long long batch, long long sa,
                                          long long sb, long long sc, unsigned char *ws, int KS,
                                          unsigned char *smem, const EP &ep, const RS &rs,
                                          const typename tc_mm_t<DT>::T *gcol,
                                          const typename tc_mm_t<DT>::T *__restrict__ B2,
                                          typename tc_mm_t<DT>::T *__restrict__ C2,
                                          const typename tc_mm_t<DT>::T *__restrict__ Bd, long long R) {
    typedef tc_mm_cfg<DT, TA, TB, BM, STG, BKK, NORM> G;
    typedef typename G::T T;
    typedef typename G::TileA TileA;
    typedef typename G::TileB TileB;
    typedef typename G::TileG TileG;
    enum { BN = TC_MM_BN, BK = G::BK, ST = G::ST, NACC = G::NACC };
    __shared__ int last;
    __shared__ float ss_s[NORM ? BM : 1]; /* NORM: each row's sum of squares */
    const long long mt = (M + BM - 1) / BM, nt = (N + BN - 1) / BN;
    const long long S = K > KS ? (K + KS - 1) / KS : 1;
    const long long tiles = batch * mt * nt, work = tiles * S * NP;
    float *part = (float *)(ws + 16 * tiles);
    /* NORM: the slices' sums of squares after every partial tile (64-row tiles' room) */
    float *ssp = part + batch * nt * ((M + 63) / 64) * S * NP * (64 * BN);
    const bool scale = NORM && K > 0; /* an empty K: the product is zero whatever the scale */
    /* XP (a resident grid, not LORA): the next work item's first stages are
     * issued as soon as this one's are read, so their loads fly during
     * this item's store and combine; pre: this item's were */
    bool pre = false;
    for (long long w = blockIdx.x; w < work; w += gridDim.x) {
        /* a tile's work items are adjacent: its slices of product 0, then
         * of product 1; SO (TENSORC_MATMUL_ORDER=1): every tile's item of
         * slice 0 of product 0, then of slice 1, ..., so the blocks running
         * at once read whole rows of the weight (the same sums: each
         * tile's slices are summed in slice order whoever is last) */
        const long long tile = SO ? w % tiles : w / (S * NP), pr = SO ? w / tiles / S : w % (S * NP) / S,
                        s = SO ? w / tiles % S : w % S;
        const long long b = tile / (mt * nt), mi = tile / nt % mt, ni = tile % nt;
        const long long m0 = mi * BM, n0 = ni * BN, k0 = s * KS;
        const long long k1 = K < k0 + KS ? K : k0 + KS;
        const T *Ab = A + b * sa, *Bb = (NP > 1 && pr ? B2 : B) + b * sb;
        float acc[NACC];
#pragma unroll
        for (int i = 0; i < NACC; i++)
            acc[i] = 0.0f;
        float ssq[NORM ? TileA::PER : 1];
#pragma unroll
        for (int i = 0; i < (NORM ? TileA::PER : 1); i++)
            ssq[i] = 0.0f;
        /* LORA, product 0: (x @ Ad) @ Bd over this slice of K, x @ Ad a
         * chunk of 64 of its R columns at a time (the main loop below with
         * Ad for B, into t), each chunk then times Bd's rows into acc */
        const bool lora = LORA && pr == 0;
        float t[NACC];
        const long long Nm = lora ? R : N;
        for (long long nm0 = lora ? 0 : n0; lora ? nm0 < R || (R == 0 && nm0 == 0) : nm0 == n0; nm0 += BN) {
            if (LORA) {
#pragma unroll
                for (int i = 0; i < NACC; i++)
                    t[i] = 0.0f;
            }
            const int niter = k1 > k0 ? (int)((k1 - k0 + BK - 1) / BK) : 0;
#define TC_MM_ISSUE_AT(st, kk, Ab, Bb, m0, k1, nm0)                                                   \
    do {                                                                                               \
        T *sa_ = (T *)(smem + (st) * G::STAGE), *sb_ = sa_ + TileA::ELEMS;                             \
        if (TA) TileA::load(sa_, Ab, M, k1, M, (kk), m0); else TileA::load(sa_, Ab, K, M, k1, m0, (kk)); \
        if (TB) TileB::load(sb_, Bb, K, Nm, k1, nm0, (kk)); else TileB::load(sb_, Bb, Nm, k1, Nm, (kk), nm0); \
        if (NORM && gcol) TileG::load(sb_ + TileB::ELEMS, gcol, 0, 1, k1, 0, (kk));                     \
    } while (0)
#define TC_MM_ISSUE(st, kk) TC_MM_ISSUE_AT(st, kk, Ab, Bb, m0, k1, nm0)
            if (!XP || !pre) {
#pragma unroll
                for (int st = 0; st < ST - 1; st++) {
                    if (st < niter)
                        TC_MM_ISSUE(st, k0 + (long long)st * BK);
                    tc_mm_commit();
                }
            }
            for (int it = 0; it < niter; it++) {
                tc_mm_wait<ST - 2>();
                __syncthreads(); /* stage it is in; everyone is done with stage it - 1 */
                if (NORM) {
                    T *sa_ = (T *)(smem + (it % ST) * G::STAGE);
                    tc_mm_prologue<DT, TileA>(sa_, gcol, sa_ + TileA::ELEMS + TileB::ELEMS,
                                              k0 + (long long)it * BK, k1, m0, M, ssq);
                }
                if (it + ST - 1 < niter)
                    TC_MM_ISSUE((it + ST - 1) % ST, k0 + (long long)(it + ST - 1) * BK);
                tc_mm_commit();
                if (NORM)
                    __syncthreads(); /* the scaled tile */
                const T *sA = (const T *)(smem + (it % ST) * G::STAGE), *sB = sA + TileA::ELEMS;
                if (lora) /* (LORA is a template argument: the plain kernel has one path) */
                    tc_mm_block<G, TA, TB, BK, TileA::P, TileB::P>(t, sA, sB);
                else
                    tc_mm_block<G, TA, TB, BK, TileA::P, TileB::P>(acc, sA, sB);
            }
            tc_mm_wait<0>();
            if (XP) {
                __syncthreads(); /* every stage read: the next item's may land */
                const long long w2 = w + gridDim.x;
                pre = w2 < work;
                if (pre) {
                    const long long t2 = SO ? w2 % tiles : w2 / (S * NP),
                                    p2 = SO ? w2 / tiles / S : w2 % (S * NP) / S, s2 = SO ? w2 / tiles % S : w2 % S;
                    const long long b2 = t2 / (mt * nt), m02 = t2 / nt % mt * BM, n02 = t2 % nt * BN;
                    const long long k02 = s2 * KS, k12 = K < k02 + KS ? K : k02 + KS;
                    const T *Ab2 = A + b2 * sa, *Bb2 = (NP > 1 && p2 ? B2 : B) + b2 * sb;
                    const int n2 = k12 > k02 ? (int)((k12 - k02 + BK - 1) / BK) : 0;
#pragma unroll
                    for (int st = 0; st < ST - 1; st++) {
                        if (st < n2)
                            TC_MM_ISSUE_AT(st, k02 + (long long)st * BK, Ab2, Bb2, m02, k12, n02);
                        tc_mm_commit();
                    }
                }
            }
#undef TC_MM_ISSUE
#undef TC_MM_ISSUE_AT
            if (lora) {
                /* t (rounded to T) and Bd's 64 x 64 tile at rows nm0, columns n0 */
                typedef tc_mm_tile<T, BM, 64> TileT;
                typedef tc_mm_tile<T, TB ? BN : 64, TB ? 64 : BN> TileD;
                static_assert((TileT::ELEMS + TileD::ELEMS) * sizeof(T) <= G::BYTES, "the stages hold t and Bd");
                T *st_ = (T *)smem, *sd_ = st_ + TileT::ELEMS;
                __syncthreads(); /* every stage read */
                if (R > 0) {
#pragma unroll
                    for (int i = 0; i < NACC; i++) {
                        int r, c;
                        G::pos(i, r, c);
                        st_[r * TileT::P + c] = tc_mm_out<DT>(t[i]);
                    }
                    if (TB) TileD::load(sd_, Bd, R, N, R, n0, nm0); else TileD::load(sd_, Bd, N, R, N, nm0, n0);
                    tc_mm_commit();
                    tc_mm_wait<0>();
                    __syncthreads();
                    tc_mm_block<G, false, TB, 64, TileT::P, TileD::P>(acc, st_, sd_);
                    __syncthreads(); /* before the next chunk's stages */
                }
            }
        }
        T *Cb = C + b * sc;
        if (NORM) {
            /* each row's sum: the chunks of a row are consecutive threads */
            enum { PR = TileA::CH / TileA::R };
#pragma unroll
            for (int i = 0; i < TileA::PER; i++) {
                float v = ssq[i];
#pragma unroll
                for (int o = 1; o < PR; o <<= 1)
                    v += __shfl_xor_sync(0xffffffffu, v, o);
                const int ch = (int)threadIdx.x + i * TC_MM_THREADS;
                if (ch % PR == 0 && ch < TileA::CH) {
                    if (S == 1)
                        ss_s[ch / PR] = v;
                    else
                        __stcg(ssp + (tile * S + s) * BM + ch / PR, v);
                }
            }
            if (S == 1)
                __syncthreads();
        }
        if (S == 1 && NP == 1) {
#pragma unroll
            for (int i = 0; i < NACC; i++) {
                int r, c;
                G::pos(i, r, c);
                if (m0 + r < M && n0 + c < N) {
                    const T o = tc_mm_out<DT>(scale ? acc[i] * rs(m0 + r, ss_s[r]) : acc[i]);
                    Cb[(m0 + r) * N + n0 + c] = o;
                    ep(m0 + r, n0 + c, tc_mm_f(o, DT), 0.0f);
                }
            }
        } else {
            float *pp = part + ((tile * NP + pr) * S + s) * (BM * BN);
#pragma unroll
            for (int i = 0; i < NACC; i++) {
                int r, c;
                G::pos(i, r, c);
                if (m0 + r < M && n0 + c < N)
                    __stcg(pp + r * BN + c, acc[i]);
            }
            /* the ticket: one thread fences (release, then acquire when
             * last) around the atomic, the barriers ordering the block's
             * other threads' stores and loads with it, as cooperative
             * groups' grid sync does (FEN 1: __threadfence, fence.sc; FEN
             * 2: fence.acq_rel, which a release and an acquire need); FEN
             * 0 (TENSORC_MATMUL_FENCE=0): every thread fences, as before
             * (a fence and an L1 invalidation each, twice in the last
             * block) */
            if (FEN == 0)
                __threadfence();
            __syncthreads();
            if (threadIdx.x == 0) {
                if (FEN == 1)
                    __threadfence();
                else if (FEN == 2)
                    tc_mm_fence_ar();
                unsigned *ticket = (unsigned *)ws + 4 * tile;
                last = atomicAdd(ticket, 1u) == (unsigned)(S * NP - 1);
                if (last) {
                    *ticket = 0; /* ready for the next launch */
                    if (FEN == 1)
                        __threadfence();
                    else if (FEN == 2)
                        tc_mm_fence_ar();
                }
            }
            __syncthreads();
            if (last) {
                if (FEN == 0)
                    __threadfence();
                if (NORM) { /* the rows' sums in slice order, left zero */
                    if ((int)threadIdx.x < BM) {
                        float t = 0.0f;
                        float *q0 = ssp + tile * S * BM + threadIdx.x;
                        for (long long q = 0; q < S; q++) {
                            t += __ldcg(q0 + q * BM);
                            __stcg(q0 + q * BM, 0.0f);
                        }
                        ss_s[threadIdx.x] = t;
                    }
                    __syncthreads();
                }
                /* product 1 (C2) first, then this kernel's own (C) and its
                 * epilogue, which gets both (rounded as stored) */
                float o2[NACC];
                for (int p = NP - 1; p >= 0; p--) {
                    /* slice by slice, every element's load of a slice in flight at
                     * once (the sums' order is the slices', whoever is last) */
                    float sum[NACC];
                    bool ok[NACC];
                    int off[NACC];
#pragma unroll
                    for (int i = 0; i < NACC; i++) {
                        int r, c;
                        G::pos(i, r, c);
                        sum[i] = 0.0f;
                        ok[i] = m0 + r < M && n0 + c < N;
                        off[i] = r * BN + c;
                    }
                    float *p0 = part + (tile * NP + p) * S * (BM * BN);
                    enum { QU = NACC <= 8 ? 4 : 1 }; /* slices loaded before their sums */
                    long long q = 0;
                    for (; q + QU <= S; q += QU) {
                        float v[QU][NACC];
#pragma unroll
                        for (int u = 0; u < QU; u++)
#pragma unroll
                            for (int i = 0; i < NACC; i++)
                                v[u][i] = ok[i] ? __ldcg(p0 + (q + u) * (BM * BN) + off[i]) : 0.0f;
#pragma unroll
                        for (int u = 0; u < QU; u++)
#pragma unroll
                            for (int i = 0; i < NACC; i++) {
                                sum[i] += v[u][i];
                                if (ok[i])
                                    __stcg(p0 + (q + u) * (BM * BN) + off[i], 0.0f); /* leave it zero */
                            }
                    }
                    for (; q < S; q++) {
                        float *pq = p0 + q * (BM * BN);
#pragma unroll
                        for (int i = 0; i < NACC; i++)
                            if (ok[i]) {
                                sum[i] += __ldcg(pq + off[i]);
                                __stcg(pq + off[i], 0.0f);
                            }
                    }
#pragma unroll
                    for (int i = 0; i < NACC; i++) {
                        int r, c;
                        G::pos(i, r, c);
                        if (ok[i]) {
                            const T o = tc_mm_out<DT>(scale ? sum[i] * rs(m0 + r, ss_s[r]) : sum[i]);
                            (p ? C2 + b * sc : Cb)[(m0 + r) * N + n0 + c] = o;
                            if (p)
                                o2[i] = tc_mm_f(o, DT);
                            else
                                ep(m0 + r, n0 + c, tc_mm_f(o, DT), NP > 1 ? o2[i] : 0.0f);
                        }
                    }
                }
            }
        }
        __syncthreads(); /* `last` and the stages are reused by the next work item */
    }
}

/* The stages' shared memory: a static array, or (SHM > 0) the launch's
 * dynamic shared memory of SHM bytes (more than static memory's 48 KB:
 * the runtime raises the kernel's limit, plan.h's shmem). */
template <int BYTES, bool DYN> struct tc_mm_smem {
    static __device__ __forceinline__ unsigned char *get() {
        __shared__ __align__(16) unsigned char smem[BYTES];
        return smem;
    }
};
template <int BYTES> struct tc_mm_smem<BYTES, true> {
    static __device__ __forceinline__ unsigned char *get() {
        extern __shared__ __align__(16) unsigned char tc_mm_dyn[];
        return tc_mm_dyn;
    }
};

/* The entry: 16-row tiles, or 64 on tensor cores when M > 16; the stages
 * in one shared array both use.  SKINNY: M <= 16 at every launch (the
 * cost model's kernels: a constant M or a guard), so the 64-row path is not
 * instantiated (half the template's compile time).  STG: the stages (0:
 * four, or three where four pass 48 KB; TENSORC_MATMUL_STAGES), BKK:
 * their steps of K (0: 64 for 16-row tiles of f16/bf16, else 32;
 * TENSORC_MATMUL_BK), SHM: the dynamic shared memory they are in (0:
 * static), XP: a resident grid's blocks issue their next work item's first
 * stages before this one's store and combine (TENSORC_MATMUL_RESIDENT; not
 * with LORA, whose second product reuses the stages), FEN: who fences
 * around the K slices' ticket and how (TENSORC_MATMUL_FENCE: 0 every
 * thread, 1 one thread with __threadfence, 2 one thread with
 * fence.acq_rel), SO: the work items slice by slice over every tile, not
 * tile by tile (TENSORC_MATMUL_ORDER=1). */
template <int DT, bool TA, bool TB, bool NORM = false, int NP = 1, bool LORA = false,
          bool SKINNY = false, int STG = 0, int BKK = 0, int SHM = 0, bool XP = false, int FEN = 1, bool SO = false,
          class EP = tc_mm_noep, class RS = tc_mm_nors>
__device__ __forceinline__ void tc_mm(const typename tc_mm_t<DT>::T *__restrict__ A,
                                      const typename tc_mm_t<DT>::T *__restrict__ B,
                                      typename tc_mm_t<DT>::T *__restrict__ C, long long M, long long N,
                                      long long K, long long batch, long long sa, long long sb,
                                      long long sc, unsigned char *ws, int KS, const EP &ep = EP(),
                                      const RS &rs = RS(), const typename tc_mm_t<DT>::T *gcol = nullptr,
                                      const typename tc_mm_t<DT>::T *B2 = nullptr,
                                      typename tc_mm_t<DT>::T *C2 = nullptr,
                                      const typename tc_mm_t<DT>::T *Bd = nullptr, long long R = 0) {
    static_assert(!NORM || !TA, "the row-scale rule loads x row-major");
    static_assert(!LORA || (NP == 2 && !NORM), "the adapter rule's two products");
    static_assert(!NORM || NP == 1, "the row-scale rule with one product");
    enum {
        BIG = DT != 0 && TC_MM_TENSOR && !SKINNY ? 64 : 16,
        SM1 = tc_mm_cfg<DT, TA, TB, 16, STG, BKK, NORM>::BYTES,
        SM2 = tc_mm_cfg<DT, TA, TB, BIG, STG, BKK, NORM>::BYTES,
        SMB = SM1 > SM2 ? SM1 : SM2
    };
    static_assert(SHM == 0 || SHM >= SMB, "the launch's dynamic shared memory holds the stages");
    unsigned char *smem = tc_mm_smem<SMB, (SHM > 0)>::get();
    enum { X = XP && !LORA };
    if (BIG > 16 && M > 16)
        tc_mm_run<DT, TA, TB, BIG, NORM, NP, LORA, STG, BKK, X, FEN, SO>(A, B, C, M, N, K, batch, sa, sb, sc, ws, KS, smem,
                                                                ep, rs, gcol, B2, C2, Bd, R);
    else
        tc_mm_run<DT, TA, TB, 16, NORM, NP, LORA, STG, BKK, X, FEN, SO>(A, B, C, M, N, K, batch, sa, sb, sc, ws, KS, smem,
                                                               ep, rs, gcol, B2, C2, Bd, R);
}
