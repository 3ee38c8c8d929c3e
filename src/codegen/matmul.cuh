/* Generated matrix products (codegen/matmul.c, sched/sched_matmul.c; the
 * tiles, fragments and types in mmtile.cuh, just before this), in
 * units with one: C[b] = A[b] @ B[b], row-major, A m x k (TA: stored k x m),
 * B k x n (TB: stored n x k), f32 accumulation.  Built for skinny M
 * (decode): a block computes a 16 x 64 tile of C (16 x 128 or 16 x 256
 * on tensor cores under TENSORC_MATMUL_BN; 64 x 64 when M > 16) over one slice of KS elements of K, so the tiles and the K
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
/* KS 0 (TENSORC_MATMUL_BN without TENSORC_MATMUL_KSLICE): the wide tiles'
 * K slices, from the T work items (tiles x products) a slice: 1024 when
 * its slices make at least 264 work items (two a SM), else S0 x f slices
 * (S0 those of 1024, f = ceil(264 / (T S0 + 1))) of whole 64s, 256 to
 * 1024 (4096 x 4096 at 256 columns: 16 tiles, slices of 256, 256 items).
 * KS -1 (TENSORC_MATMUL_KAUTO=1) the same for 64-wide tiles; KS -2
 * (KAUTO=2) aims at 64 items with slices of 128 to 1024 (a LoRA's x @ A,
 * one tile over K = 4096: 32 slices of 128, not 4 of 1024).
 * codegen/matmul.c's grid is T S0 f, at least the items this makes. */
__device__ __forceinline__ int tc_mm_kslice(long long T, long long K, int target, int lo) {
    if (K <= 0 || T <= 0)
        return 1024;
    const long long s0 = (K + 1023) / 1024, f = (target + T * s0) / (T * s0 + 1);
    if (f <= 1)
        return 1024;
    long long ks = (K + s0 * f - 1) / (s0 * f);
    ks = (ks + 63) / 64 * 64;
    return ks < lo ? lo : ks > 1024 ? 1024 : (int)ks;
}
template <int DT, bool TA, bool TB, int BM, bool NORM, int NP, bool LORA, int STG, int BKK, bool XP, int FEN,
          bool SO, int STR, int BNT, class EP, class RS>
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
    typedef tc_mm_cfg<DT, TA, TB, BM, STG, BKK, NORM, BNT> G;
    typedef typename G::T T;
    typedef typename G::TileA TileA;
    typedef typename G::TileB TileB;
    typedef typename G::TileG TileG;
    enum { BN = G::BNV, BK = G::BK, ST = G::ST, NACC = G::NACC };
    static_assert(!LORA || BN == TC_MM_BN, "the adapter rule's tiles are 64 wide");
    __shared__ int last;
    __shared__ float ss_s[NORM ? BM : 1]; /* NORM: each row's sum of squares */
    __shared__ float ss_w[NORM && G::MMA ? TC_MM_THREADS / 32 * BM : 1]; /* each warp's (tc_mm_ssq) */
    const long long mt = (M + BM - 1) / BM, nt = (N + BN - 1) / BN;
    if (KS <= 0) /* the wide tiles' rule (0), any tiles' (-1, -2: TENSORC_MATMUL_KAUTO); else 1024 */
        KS = BN > TC_MM_BN || KS == -1 ? tc_mm_kslice(batch * mt * nt * NP, K, 264, 256)
             : KS == -2            ? tc_mm_kslice(batch * mt * nt * NP, K, 64, 128)
                                   : 1024;
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
    /* the lanes' fragment rows in stage 0 (tc_mm_block_tc), hoisted */
    const tc_mm_lanes<TA, TB, TileA::P, TileB::P, BN / 4> ln;
    unsigned su = (unsigned)__cvta_generic_to_shared(smem), la = su + ln.a,
             lb = su + TileA::ELEMS * (unsigned)sizeof(T) + ln.b, lx = su + ln.x;
    /* kept in registers: else the compiler derives them from threadIdx
     * again at every K step (~25 instructions a warp) */
    tc_mm_opaque(la);
    tc_mm_opaque(lb);
    tc_mm_opaque(lx);
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
        /* NORM: the squares' sums, by chunk of x (FMA path: the prologue)
         * or in the warp's mma fragments (tensor cores: tc_mm_block) */
        enum { NSQ = !NORM ? 1 : G::MMA ? (BM == 16 ? 8 : BM / 8) : TileA::PER };
        float ssq[NSQ];
#pragma unroll
        for (int i = 0; i < NSQ; i++)
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
        if (TB) TileB::template load<STR>(sb_, Bb, K, Nm, k1, nm0, (kk));                               \
        else TileB::template load<STR>(sb_, Bb, Nm, k1, Nm, (kk), nm0);                                  \
        if (NORM && gcol) TileG::load(sb_ + TileB::ELEMS, gcol, 0, 1, k1, 0, (kk));                     \
    } while (0)
            /* this item's stages: the first nfull whole in K; with every
             * tile's plan ok, their copies without the edge tests */
            typename TileA::plan pa;
            typename TileB::plan pb;
            typename TileG::plan pg;
            const long long KX = 0x4000000000000000LL; /* no limit: the K extent is nfull's */
            if (TA) TileA::start(pa, Ab, M, KX, M, k0, m0, (long long)BK * M);
            else TileA::template start<true>(pa, Ab, K, M, KX, m0, k0, BK);
            if (TB) TileB::start(pb, Bb, K, Nm, KX, nm0, k0, BK);
            else TileB::start(pb, Bb, Nm, KX, Nm, k0, nm0, (long long)BK * Nm);
            pg.ok = true;
            if (NORM && gcol)
                TileG::start(pg, gcol, 0, 1, KX, 0, k0, BK);
            const int nfull = pa.ok && pb.ok && pg.ok ? (int)((k1 - k0) / BK) : 0;
            /* i_: the stages in order (the whole ones first: the plans move a stage each) */
#define TC_MM_ISSUE(st, i_)                                                                            \
    do {                                                                                               \
        if ((i_) < nfull) {                                                                            \
            T *sa_ = (T *)(smem + (st) * G::STAGE), *sb_ = sa_ + TileA::ELEMS;                         \
            TileA::template issue<!TA>(sa_, pa);                                                       \
            TileB::template issue<false, STR>(sb_, pb);                                                \
            if (NORM && gcol) TileG::issue(sb_ + TileB::ELEMS, pg);                                    \
        } else                                                                                         \
            TC_MM_ISSUE_AT(st, k0 + (long long)(i_) * BK, Ab, Bb, m0, k1, nm0);                        \
    } while (0)
            if (!XP || !pre) {
#pragma unroll
                for (int st = 0; st < ST - 1; st++) {
                    if (st < niter)
                        TC_MM_ISSUE(st, st);
                    tc_mm_commit();
                }
            } else { /* the last item issued them: the plans past them */
                pa.q += (ST - 1) * pa.step;
                pb.q += (ST - 1) * pb.step;
                if (NORM && gcol)
                    pg.q += (ST - 1) * pg.step;
            }
            for (int it = 0; it < niter; it++) {
                tc_mm_wait<ST - 2>();
                __syncthreads(); /* stage it is in; everyone is done with stage it - 1 */
                if (NORM && !G::MMA) {
                    T *sa_ = (T *)(smem + (it % ST) * G::STAGE);
                    tc_mm_prologue<DT, TileA>(sa_, gcol, sa_ + TileA::ELEMS + TileB::ELEMS,
                                              k0 + (long long)it * BK, k1, m0, M, ssq);
                }
                if (it + ST - 1 < niter)
                    TC_MM_ISSUE((it + ST - 1) % ST, it + ST - 1);
                tc_mm_commit();
                if (NORM && !G::MMA)
                    __syncthreads(); /* the scaled tile */
                const T *sA = (const T *)(smem + (it % ST) * G::STAGE), *sB = sA + TileA::ELEMS;
                if (lora) /* (LORA is a template argument: the plain kernel has one path) */
                    tc_mm_block<G, TA, TB, BK, TileA::P, TileB::P>(t, sA, sB);
                else if (G::MMA) {
                    const unsigned so = (it % ST) * G::STAGE;
                    if (NORM && gcol)
                        tc_mm_block_tc<G, TA, TB, BK, TileA::P, TileB::P, 2>(acc, la + so, lb + so, lx + so,
                                                                             sB + TileB::ELEMS, ssq);
                    else if (NORM)
                        tc_mm_block_tc<G, TA, TB, BK, TileA::P, TileB::P, 1>(acc, la + so, lb + so, lx + so,
                                                                             nullptr, ssq);
                    else
                        tc_mm_block_tc<G, TA, TB, BK, TileA::P, TileB::P>(acc, la + so, lb + so, 0, nullptr,
                                                                          nullptr);
                } else
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
        if (NORM && G::MMA) {
            tc_mm_ssq<BM>(ssq, ss_w);
            __syncthreads();
            if ((int)threadIdx.x < BM) {
                const int r = (int)threadIdx.x;
                float v = 0.0f;
#pragma unroll
                for (int q = 0; q < TC_MM_THREADS / 32; q++)
                    v += ss_w[q * BM + r];
                if (S == 1)
                    ss_s[r] = v;
                else
                    __stcg(ssp + (tile * S + s) * BM + r, v);
            }
            if (S == 1)
                __syncthreads();
        } else if (NORM) {
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
                 * epilogue, which gets both (rounded as stored); wide tiles
                 * (BN > 64) CW = 8 of a thread's NACC elements at a time,
                 * both products (registers: 32 accumulators at 256) */
                enum { CW = BN > TC_MM_BN ? 8 : NACC };
#pragma unroll 1
                for (int i0 = 0; i0 < NACC; i0 += CW) {
                float o2[CW];
                for (int p = NP - 1; p >= 0; p--) {
                    /* slice by slice, every element's load of a slice in flight at
                     * once (the sums' order is the slices', whoever is last) */
                    float sum[CW];
                    bool ok[CW];
                    int off[CW];
#pragma unroll
                    for (int i = 0; i < CW; i++) {
                        int r, c;
                        G::pos(i0 + i, r, c);
                        sum[i] = 0.0f;
                        ok[i] = m0 + r < M && n0 + c < N;
                        off[i] = r * BN + c;
                    }
                    float *p0 = part + (tile * NP + p) * S * (BM * BN);
                    enum { QU = CW <= 8 ? 4 : 1 }; /* slices loaded before their sums */
                    long long q = 0;
                    for (; q + QU <= S; q += QU) {
                        float v[QU][CW];
#pragma unroll
                        for (int u = 0; u < QU; u++)
#pragma unroll
                            for (int i = 0; i < CW; i++)
                                v[u][i] = ok[i] ? __ldcg(p0 + (q + u) * (BM * BN) + off[i]) : 0.0f;
#pragma unroll
                        for (int u = 0; u < QU; u++)
#pragma unroll
                            for (int i = 0; i < CW; i++) {
                                sum[i] += v[u][i];
                                if (ok[i])
                                    __stcg(p0 + (q + u) * (BM * BN) + off[i], 0.0f); /* leave it zero */
                            }
                    }
                    for (; q < S; q++) {
                        float *pq = p0 + q * (BM * BN);
#pragma unroll
                        for (int i = 0; i < CW; i++)
                            if (ok[i]) {
                                sum[i] += __ldcg(pq + off[i]);
                                __stcg(pq + off[i], 0.0f);
                            }
                    }
#pragma unroll
                    for (int i = 0; i < CW; i++) {
                        int r, c;
                        G::pos(i0 + i, r, c);
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
 * tile by tile (TENSORC_MATMUL_ORDER=1), STR: how the weight's tiles are
 * copied (0 cp.async, 1 with the L2's 256-byte prefetch:
 * TENSORC_MATMUL_STREAM=l2pf; mmtile.cuh's tc_mm_cp16), BN: the 16-row
 * tiles' columns on tensor cores (TENSORC_MATMUL_BN=128 or 256, K steps
 * of 32 unless BKK; the 64-row tiles, the FMA path and the adapter rule
 * keep 64: 64 x 256 would be 128 accumulators a thread). */
template <int DT, bool TA, bool TB, bool NORM = false, int NP = 1, bool LORA = false,
          bool SKINNY = false, int STG = 0, int BKK = 0, int SHM = 0, bool XP = false, int FEN = 1, bool SO = false,
          int STR = 0, int BN = TC_MM_BN, class EP = tc_mm_noep, class RS = tc_mm_nors>
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
    static_assert(!LORA || BN == TC_MM_BN, "the adapter rule's tiles are 64 wide");
    enum {
        BIG = DT != 0 && TC_MM_TENSOR && !SKINNY ? 64 : 16,
        BN1 = DT != 0 && TC_MM_TENSOR ? BN : TC_MM_BN, /* the 16-row tiles' */
        SM1 = tc_mm_cfg<DT, TA, TB, 16, STG, BKK, NORM, BN1>::BYTES,
        SM2 = BIG > 16 ? tc_mm_cfg<DT, TA, TB, BIG, STG, BKK, NORM>::BYTES : SM1,
        SMB = SM1 > SM2 ? SM1 : SM2
    };
    static_assert(SHM == 0 || SHM >= SMB, "the launch's dynamic shared memory holds the stages");
    unsigned char *smem = tc_mm_smem<SMB, (SHM > 0)>::get();
    enum { X = XP && !LORA };
    if (BIG > 16 && M > 16)
        tc_mm_run<DT, TA, TB, BIG, NORM, NP, LORA, STG, BKK, X, FEN, SO, STR, TC_MM_BN>(A, B, C, M, N, K, batch, sa, sb, sc, ws,
                                                                     KS, smem, ep, rs, gcol, B2, C2, Bd, R);
    else
        tc_mm_run<DT, TA, TB, 16, NORM, NP, LORA, STG, BKK, X, FEN, SO, STR, BN1>(A, B, C, M, N, K, batch, sa, sb, sc, ws,
                                                                    KS, smem, ep, rs, gcol, B2, C2, Bd, R);
}
