/* attn.cuh - decode attention as one kernel, flash-decoding (sched_attn.c,
 * codegen/attn.c): out = softmax(score(q @ k^T)) @ v for ATTN_ROWS query
 * rows that share k and v, the keys split across blocks.
 *
 * Block = W warps (4) over one (group of rows, chunk of CH keys, 512 unless
 * a knob says); each warp takes 16 keys at a time (the warps' in turn, or
 * with SP each its own CH / W of the chunk) and keeps, per row, a running
 * max, sum and unnormalized output.  CH, W, PF (the 16-key steps of k and
 * v a warp loads ahead into registers, tc_at_mma_path), RG (the stages of
 * its ring in shared memory; 0: registers) and SP are template parameters,
 * set by the TENSORC_ATTN_* knobs (sched_attn.c); the split depends on CH
 * and the context length alone.  f16/bf16 with a head dim a multiple of 32
 * (up to 128) and 16-byte aligned k and v use tensor cores: S = Q K^T and
 * O += P V with mma.sync m16n8k16 (rows 8..15 of A zero), k and v through
 * registers or the ring (cp.async, RG - 1 steps in flight), 16 bytes a lane
 * feeding the mma either way, the same values in the same order (the same
 * bits); the head dim is permuted consistently inside each 32 so each
 * lane's 16 bytes feed the mma as they are, and V's 8 x 8 pieces are
 * transposed in registers (movmatrix).  Elsewhere (f32, other head dims,
 * misaligned) a warp takes one key at a time with FMAs.
 * q is staged in shared memory (one qoff a thread) while the warps' first
 * k and v loads are in flight.  The warps' states combine in shared memory
 * into the block's partial (in the workspace; with one split, straight
 * into the output).  The partials then combine up a fixed tree, 16
 * children a node in split order (the tail of tc_attn): the last child
 * block of a node to finish (an atomic ticket) combines them, every load
 * in flight at once, and zeroes what it read; the root writes the output.
 * A row whose every score is -inf gives NaN (0 / 0, as the reference's
 * softmax); NaN scores propagate.
 *
 * The caller's lambdas give what the program says: qoff(kb, r), koff(kb),
 * voff(kb), ooff(kb, r) element offsets (kb: the k/v batch, r: the query
 * row among those sharing it), score(kb, r, l, s) the softmax input for
 * key l where s is q . k rounded to the dtype (the product's value).
 */
template <int DT> struct tc_at_t { typedef unsigned short T; };
template <> struct tc_at_t<0> { typedef float T; };
template <int DT> __device__ __forceinline__ float tc_at_ld(typename tc_at_t<DT>::T v);
template <> __device__ __forceinline__ float tc_at_ld<0>(float v) { return v; }
template <> __device__ __forceinline__ float tc_at_ld<1>(unsigned short v) { return tc_h2f(v); }
template <> __device__ __forceinline__ float tc_at_ld<2>(unsigned short v) { return tc_bf2f(v); }
template <int DT> __device__ __forceinline__ typename tc_at_t<DT>::T tc_at_st(float v);
template <> __device__ __forceinline__ float tc_at_st<0>(float v) { return v; }
template <> __device__ __forceinline__ unsigned short tc_at_st<1>(float v) { return tc_f2h(v); }
template <> __device__ __forceinline__ unsigned short tc_at_st<2>(float v) { return tc_f2bf(v); }
template <int DT> __device__ __forceinline__ float tc_at_round(float v) { return tc_at_ld<DT>(tc_at_st<DT>(v)); }
template <int DT> __device__ __forceinline__ unsigned tc_at_pk(float lo, float hi) {
    return DT == 1 ? tc_f2h2(lo, hi) : tc_f2bf2(lo, hi);
}

/* mma.sync m16n8k16 needs sm_80: before it (an sm_75 GPU) the FMA path,
 * else the tensor-core path would run with its mma and movmatrix compiled
 * out (zeros: a wrong answer, found by tests/emu at __CUDA_ARCH__ 750) */
#if __CUDA_ARCH__ >= 800
#define TC_AT_TENSOR 1
#else
#define TC_AT_TENSOR 0
#endif

/* d += A B, m16n8k16: A's registers a0..a3 (rows g, g + 8; columns 2c, 2c + 8), B's b0, b1 */
template <int DT> __device__ __forceinline__ void tc_at_mma4(float *d, unsigned a0, unsigned a1, unsigned a2,
                                                              unsigned a3, unsigned b0, unsigned b1) {
#if __CUDA_ARCH__ >= 800
    if (DT == 1)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}
/* the same with A's rows 8..15 zero (8 query rows) */
template <int DT> __device__ __forceinline__ void tc_at_mma(float *d, unsigned a0, unsigned a2, unsigned b0,
                                                             unsigned b1) {
    tc_at_mma4<DT>(d, a0, 0u, a2, 0u, b0, b1);
}

__device__ __forceinline__ unsigned tc_at_trans(unsigned x) {
    unsigned y = x;
#if __CUDA_ARCH__ >= 800
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
#endif
    return y;
}

__device__ __forceinline__ unsigned tc_at_word(const uint4 &v, int j) {
    return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
}

/* 16 bytes global -> shared (a shared-window address), asynchronously;
 * zeros, nothing read, where !ok (cp.async's source size 0) */
__device__ __forceinline__ void tc_at_cp16(unsigned dst, const void *src, bool ok) {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(ok ? 16 : 0));
#endif
}
__device__ __forceinline__ void tc_at_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;");
#endif
}
template <int N> __device__ __forceinline__ void tc_at_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N));
#endif
}

/* partials combined a node of the tree (tc_attn's tail) */
#define TC_AT_FAN 16

/* Row r of n partials (max m[i][r], sum l[i][r]), in order: their max into
 * *bm, each one's weight exp(m - max) into w[i][r] (0 for an empty one,
 * whose max is -inf) and the weighted sum of the sums into *bl. */
__device__ __forceinline__ void tc_at_weigh(const float (*m)[8], const float (*l)[8], float (*w)[8], int n, int r,
                                            float *bm, float *bl) {
    const float ninf = -__int_as_float(0x7f800000);
    float mx = ninf, ls = 0.0f;
    for (int i = 0; i < n; i++)
        mx = tc_max(mx, m[i][r]);
    for (int i = 0; i < n; i++) {
        const float wt = m[i][r] == ninf ? 0.0f : expf(m[i][r] - mx);
        w[i][r] = wt;
        ls += wt * l[i][r];
    }
    *bm = mx;
    *bl = ls;
}

/* The block's static shared memory: with O, the outputs o of S warps at
 * a time too (S < W: in rounds, tc_attn's fin; else, 8 floats, they sit in
 * the ring's dynamic shared memory, tc_at_o) */
template <int D, int W, int S, bool O = true> struct tc_at_smem {
    float m[W][8], l[W][8];
    float o[O ? S : 1][8][O ? D : 1];
    float q[8][D];
    float bm[8], bl[8], wt[W][8];          /* the block's max, sum; each warp's weight */
    float cm[TC_AT_FAN][8], cl[TC_AT_FAN][8], cw[TC_AT_FAN][8]; /* a combine's children */
    long long orow[8];                     /* the output rows' offsets (the final write) */
    int last;
};
/* the launch's dynamic shared memory (one declaration: the host emulator
 * gives each its own storage) */
__device__ __forceinline__ unsigned char *tc_at_dyn() {
    extern __shared__ __align__(16) unsigned char tc_at_dyn_[];
    return tc_at_dyn_;
}

/* warp w's output at row r, head dim d: with a ring (RG > 0) at the start
 * of the warp's own ring (free once its keys are done: 32 D bytes of its
 * 64 RG D), which keeps 16 KB (4 warps, head dim 128) out of the static
 * shared memory; else in sh.o */
template <int D, int RG, class SH> __device__ __forceinline__ float &tc_at_o(SH &sh, int w, int r, int d) {
    if constexpr (RG > 0)
        return ((float *)(tc_at_dyn() + w * (RG * 64 * D)))[r * D + d];
    else
        return sh.o[w][r][d];
}

/* The tensor-core path: this warp's 16-key steps over [l0, l1) (KW > 0:
 * its own KW keys from l0 + KW warp); its output goes to fin. */
template <int DT, int D, int W, int PF, int RG, int KW, class SH, class SC, class ST, class FN>
__device__ __forceinline__ void tc_at_mma_path(SH &sh, const typename tc_at_t<DT>::T *__restrict__ kp,
                                               const typename tc_at_t<DT>::T *__restrict__ vp, long long ks,
                                               long long vs, long long l0, long long l1, long long kb, long long r0,
                                               long long nr, SC &score, ST &stage, FN &fin) {
    constexpr int P = D / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c = lane & 3;
    /* q in registers once stage() has put it in shared memory (after the
     * first k and v loads are issued: their latency and q's overlap); with
     * 16 warps (128 registers) read at each use, volatile: not hoisted */
    unsigned qa[2 * P][2];
    auto qw = [&](int i, int e) -> unsigned {
        const volatile float *qs = &sh.q[g][32 * (i >> 1) + 8 * c + 4 * (i & 1) + 2 * e];
        return W > 8 ? tc_at_pk<DT>(qs[0], qs[1]) : qa[i][e];
    };
    auto fillq = [&]() {
        stage();
#pragma unroll
        for (int p = 0; p < P; p++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const float *qs = &sh.q[g][32 * p + 8 * c + 4 * h];
                qa[2 * p + h][0] = tc_at_pk<DT>(qs[0], qs[1]);
                qa[2 * p + h][1] = tc_at_pk<DT>(qs[2], qs[3]);
            }
    };
    /* O^T = V^T P^T: o[p][h] holds O[row 2c + e][d] for e = 0, 1 at the
     * head dims dcol(p, 2h) (entries 0, 1) and dcol(p, 2h + 1) (2, 3),
     * dcol(p, j) = 32p + 8(g >> 1) + 2j + (g & 1) */
    float o[P][2][4];
#pragma unroll
    for (int p = 0; p < P; p++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                o[p][h][e] = 0.0f;
    float m = -__int_as_float(0x7f800000), lsum = 0.0f;
    const bool row_ok = g < nr;
    /* PF 1: the next step's k and v are loaded while this one computes.
     * PF 2: two buffers, each reloaded with the step after next as soon
     * as it is free (k after S, v after O): the loads lead their use by
     * about 1.5 steps instead of 1, in the same registers (a third buffer,
     * a true 2 steps ahead, spills at head dim 128) */
    constexpr int STEP = KW > 0 ? 16 : 16 * W;
    const long long first = KW > 0 ? l0 + (long long)KW * warp : l0 + 16 * warp;
    if (KW > 0 && first + KW < l1)
        l1 = first + KW;
    auto load = [&](uint4 (&kn)[2][P], uint4 (&vn)[2][P], long long key0, bool dok, bool dov) {
#pragma unroll
        for (int t = 0; t < 2; t++) {
            const long long key = key0 + 8 * t + g;
            const bool ok = key < l1;
#pragma unroll
            for (int p = 0; p < P; p++) {
                if (dok)
                    kn[t][p] = ok ? __ldg((const uint4 *)(kp + key * ks + 32 * p + 8 * c)) : make_uint4(0, 0, 0, 0);
                if (dov)
                    vn[t][p] = ok ? __ldg((const uint4 *)(vp + key * vs + 32 * p + 8 * c)) : make_uint4(0, 0, 0, 0);
            }
        }
    };
    /* one 16-key step: kf(t, p) and vf(t, p) give the lane's 16 bytes of
     * k and v (kr, vr in registers or the ring's stage); mid() runs once S
     * is computed (k's registers free), end() last */
    auto step = [&](auto kf, auto vf, long long key0, auto mid, auto end) {
        float s[2][4];
#pragma unroll
        for (int t = 0; t < 2; t++) {
#pragma unroll
            for (int e = 0; e < 4; e++)
                s[t][e] = 0.0f;
#pragma unroll
            for (int p = 0; p < P; p++) {
                const uint4 kw = kf(t, p);
                tc_at_mma<DT>(s[t], qw(2 * p, 0), qw(2 * p, 1), kw.x, kw.y);
                tc_at_mma<DT>(s[t], qw(2 * p + 1, 0), qw(2 * p + 1, 1), kw.z, kw.w);
            }
        }
        mid();
        /* lane (g, c) holds row g's scores at keys key0 + 8t + 2c + e */
        float x[2][2], tm = -__int_as_float(0x7f800000);
#pragma unroll
        for (int t = 0; t < 2; t++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const long long l = key0 + 8 * t + 2 * c + e;
                x[t][e] = row_ok && l < l1 ? score(kb, r0 + g, l, tc_at_round<DT>(s[t][e]))
                                           : -__int_as_float(0x7f800000);
                tm = tc_max(tm, x[t][e]);
            }
        tm = tc_max(tm, __shfl_xor_sync(0xffffffffu, tm, 1));
        tm = tc_max(tm, __shfl_xor_sync(0xffffffffu, tm, 2));
        const float mn = tc_max(m, tm);
        const bool none = mn == -__int_as_float(0x7f800000);
        const float alpha = none ? 1.0f : __expf(m - mn);
        float pr[2][2];
#pragma unroll
        for (int t = 0; t < 2; t++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                pr[t][e] = none ? 0.0f : __expf(x[t][e] - mn);
                lsum = lsum * (t == 0 && e == 0 ? alpha : 1.0f) + pr[t][e];
            }
        m = mn;
        /* P^T as B: lane (g, c) has row g's keys 2c + e and 8 + 2c + e */
        const unsigned b0 = tc_at_pk<DT>(pr[0][0], pr[0][1]), b1 = tc_at_pk<DT>(pr[1][0], pr[1][1]);
        /* the rescale of rows 2c and 2c + 1, whose state lanes 8c and 8c + 4 hold */
        const float al0 = __shfl_sync(0xffffffffu, alpha, 8 * c), al1 = __shfl_sync(0xffffffffu, alpha, 8 * c + 4);
#pragma unroll
        for (int p = 0; p < P; p++) {
            /* V^T's 8 x 8 pieces: lane (g, c) gets V[key0 + 8t + 2c + e][dcol(p, j)] */
            unsigned tv[2][4];
#pragma unroll
            for (int t = 0; t < 2; t++) {
                const uint4 vw = vf(t, p);
#pragma unroll
                for (int j = 0; j < 4; j++)
                    tv[t][j] = tc_at_trans(tc_at_word(vw, j));
            }
#pragma unroll
            for (int h = 0; h < 2; h++) {
                o[p][h][0] *= al0;
                o[p][h][1] *= al1;
                o[p][h][2] *= al0;
                o[p][h][3] *= al1;
                tc_at_mma4<DT>(o[p][h], tv[0][2 * h], tv[0][2 * h + 1], tv[1][2 * h], tv[1][2 * h + 1], b0, b1);
            }
        }
        end();
    };
    auto none = [] {};
    auto regs = [](uint4 (&r)[2][P]) { return [&r](int t, int p) { return r[t][p]; }; };
    if constexpr (RG > 0) {
        /* RG stages of this warp's own (16 keys of k, then of v, a row of
         * D halves each) in the launch's dynamic shared memory, RG - 1
         * steps in flight while one computes: no k/v registers held across
         * a step.  Row i's 16-byte piece j sits at piece j ^ 4 for odd i
         * where a row is a multiple of 128 bytes, so a fragment read (rows
         * g, 8 + g, pieces 4p + c) hits each bank once a quarter warp. */
        constexpr int CR = D / 8, SB = 64 * D; /* 16-byte pieces a row; a stage's bytes */
        unsigned char *ring = tc_at_dyn() + warp * (RG * SB);
        const unsigned rs = (unsigned)__cvta_generic_to_shared(ring);
        auto at = [](int row, int j) { return row * (2 * D) + ((D % 64 == 0 ? j ^ ((row & 1) << 2) : j) << 4); };
        /* 16 keys from key0 into stage st, the warp's pieces in order
         * (coalesced), keys past l1 zero; then the group's commit */
        auto issue = [&](long long key0, int st) {
            if (key0 < l1)
#pragma unroll
                for (int j = 0; j < CR / 2; j++) {
                    const int i = lane + 32 * j, row = i / CR, pc = i % CR;
                    const long long key = key0 + row;
                    const bool ok = key < l1;
                    const unsigned d = rs + st * SB + at(row, pc);
                    tc_at_cp16(d, ok ? kp + key * ks + 8 * pc : kp, ok);
                    tc_at_cp16(d + 32 * D, ok ? vp + key * vs + 8 * pc : vp, ok);
                }
            tc_at_commit();
        };
#pragma unroll
        for (int i = 0; i < RG - 1; i++)
            issue(first + i * STEP, i);
        fillq();
        int st = 0; /* the stage of key0's step */
        for (long long key0 = first; key0 < l1; key0 += STEP) {
            __syncwarp(); /* every lane is past the step that read the stage refilled here */
            issue(key0 + (RG - 1) * STEP, st == 0 ? RG - 1 : st - 1);
            tc_at_wait<(RG > 0 ? RG - 1 : 0)>(); /* key0's group has landed (this lane's copies) */
            __syncwarp();         /* ... and every lane's */
            const unsigned char *kst = ring + st * SB, *vst = kst + 32 * D;
            step([&](int t, int p) { return *(const uint4 *)(kst + at(8 * t + g, 4 * p + c)); },
                 [&](int t, int p) { return *(const uint4 *)(vst + at(8 * t + g, 4 * p + c)); }, key0, none, none);
            st = st + 1 == RG ? 0 : st + 1;
        }
    } else if (PF == 1 && KW == 0) {
        uint4 kn[2][P], vn[2][P];
        if (first < l1)
            load(kn, vn, first, true, true);
        fillq();
        for (long long key0 = first; key0 < l1; key0 += STEP) {
            uint4 kr[2][P], vr[2][P];
#pragma unroll
            for (int t = 0; t < 2; t++)
#pragma unroll
                for (int p = 0; p < P; p++) {
                    kr[t][p] = kn[t][p];
                    vr[t][p] = vn[t][p];
                }
            if (key0 + STEP < l1)
                load(kn, vn, key0 + STEP, true, true);
            step(regs(kr), regs(vr), key0, none, none);
        }
    } else {
        /* PF buffers (PF 1 only with KW), the first PF steps' loads issued
         * at once, each buffer reloaded with the step PF on as soon as it
         * is free: k after S, v after O */
        uint4 kr[PF][2][P], vr[PF][2][P];
#pragma unroll
        for (int i = 0; i < PF; i++)
            if (first + i * STEP < l1)
                load(kr[i], vr[i], first + i * STEP, true, true);
        fillq();
        for (long long key0 = first; key0 < l1; key0 += PF * STEP)
#pragma unroll
            for (int i = 0; i < PF; i++) {
                const long long k0 = key0 + i * STEP;
                const bool more = k0 + PF * STEP < l1;
                if (k0 < l1)
                    step(regs(kr[i]), regs(vr[i]), k0, [&] { if (more) load(kr[i], vr[i], k0 + PF * STEP, true, false); },
                         [&] { if (more) load(kr[i], vr[i], k0 + PF * STEP, false, true); });
            }
    }
    lsum += __shfl_xor_sync(0xffffffffu, lsum, 1);
    lsum += __shfl_xor_sync(0xffffffffu, lsum, 2);
    if (c == 0) {
        sh.m[warp][g] = m;
        sh.l[warp][g] = lsum;
    }
    if constexpr (RG > 0)
        __syncwarp(); /* every lane past its last stage: o goes over the ring */
    fin([&](auto put) {
#pragma unroll
        for (int p = 0; p < P; p++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int u = 0; u < 2; u++) {
                    const int d = 32 * p + 8 * (g >> 1) + 2 * (2 * h + u) + (g & 1);
                    put(2 * c, d, o[p][h][2 * u]);
                    put(2 * c + 1, d, o[p][h][2 * u + 1]);
                }
    });
}

/* The FMA path: a key at a time (the warps' in turn, or with KW > 0 a
 * warp's own KW), the head dim across the lanes. */
template <int DT, int D, int W, int KW, class SH, class SC, class ST, class FN>
__device__ __forceinline__ void tc_at_fma_path(SH &sh, const typename tc_at_t<DT>::T *__restrict__ kp,
                                               const typename tc_at_t<DT>::T *__restrict__ vp, long long ks,
                                               long long vs, long long l0, long long l1, long long kb, long long r0,
                                               long long nr, SC &score, ST &stage, FN &fin) {
    stage();
    constexpr int J = (D + 31) / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    float m[8], lsum[8], o[8][J];
#pragma unroll
    for (int r = 0; r < 8; r++) {
        m[r] = -__int_as_float(0x7f800000);
        lsum[r] = 0.0f;
#pragma unroll
        for (int j = 0; j < J; j++)
            o[r][j] = 0.0f;
    }
    const long long le = KW > 0 && l0 + (long long)KW * (warp + 1) < l1 ? l0 + (long long)KW * (warp + 1) : l1;
    for (long long l = KW > 0 ? l0 + (long long)KW * warp : l0 + warp; l < le; l += KW > 0 ? 1 : W) {
        float kd[J], vd[J];
#pragma unroll
        for (int j = 0; j < J; j++) {
            const int d = lane + 32 * j;
            kd[j] = d < D ? tc_at_ld<DT>(kp[l * ks + d]) : 0.0f;
            vd[j] = d < D ? tc_at_ld<DT>(vp[l * vs + d]) : 0.0f;
        }
#pragma unroll
        for (int r = 0; r < 8; r++) {
            if (r >= nr)
                break;
            float acc = 0.0f;
#pragma unroll
            for (int j = 0; j < J; j++)
                if (lane + 32 * j < D)
                    acc = fmaf(sh.q[r][lane + 32 * j], kd[j], acc);
#pragma unroll
            for (int w = 16; w > 0; w >>= 1)
                acc += __shfl_xor_sync(0xffffffffu, acc, w);
            const float x = score(kb, r0 + r, l, tc_at_round<DT>(acc));
            const float mn = tc_max(m[r], x);
            const bool none = mn == -__int_as_float(0x7f800000);
            const float alpha = none ? 1.0f : expf(m[r] - mn);
            const float p = none ? 0.0f : expf(x - mn);
            m[r] = mn;
            lsum[r] = lsum[r] * alpha + p;
#pragma unroll
            for (int j = 0; j < J; j++)
                o[r][j] = o[r][j] * alpha + p * vd[j];
        }
    }
#pragma unroll
    for (int r = 0; r < 8; r++)
        if (lane == 0) {
            sh.m[warp][r] = m[r];
            sh.l[warp][r] = lsum[r];
        }
    fin([&](auto put) {
#pragma unroll
        for (int r = 0; r < 8; r++)
#pragma unroll
            for (int j = 0; j < J; j++)
                if (lane + 32 * j < D)
                    put(r, lane + 32 * j, o[r][j]);
    });
}

template <int DT, int D, int CH, int W = 4, int PF = 1, int RG = 0, int SP = 0, class QO, class KO, class VO, class OO,
          class SC>
__device__ __forceinline__ void tc_attn(const typename tc_at_t<DT>::T *__restrict__ q,
                                        const typename tc_at_t<DT>::T *__restrict__ k,
                                        const typename tc_at_t<DT>::T *__restrict__ v,
                                        typename tc_at_t<DT>::T *__restrict__ out, long long nkv, long long R,
                                        long long L, long long ks, long long vs, unsigned char *__restrict__ ws,
                                        QO qoff, KO koff, VO voff, OO ooff, SC score) {
    typedef typename tc_at_t<DT>::T T;
    constexpr int NT = 32 * W; /* threads */
    constexpr bool SO = RG == 0; /* the warps' outputs in static shared memory (no ring) */
    /* SP (TENSORC_ATTN_SPLIT): each warp its own KW keys of the chunk, and
     * the warps' outputs through S slots, RND rounds (the shared memory) */
    constexpr int KW = SP ? (CH / W + 15) / 16 * 16 : 0, S = SO && W > 8 ? 8 : W, RND = W / S;
    __shared__ tc_at_smem<D, W, S, SO> sh;
    const long long nrg = (R + 7) / 8, splits = (L + CH - 1) / CH, groups = nkv * nrg;
    if (splits == 0) { /* no keys: p @ v sums nothing */
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < groups * 8 * D;
             i += (long long)gridDim.x * blockDim.x) {
            const long long gi = i / (8 * D), r = gi % nrg * 8 + i / D % 8;
            if (r < R)
                out[ooff(gi / nrg, r) + i % D] = tc_at_st<DT>(0.0f);
        }
        return;
    }
    const long long grp = blockIdx.x / splits, split = blockIdx.x % splits;
    if (grp >= groups)
        return;
    const long long kb = grp / nrg, r0 = (grp % nrg) * 8;
    const long long nr = R - r0 < 8 ? R - r0 : 8;
    const long long l0 = split * CH, l1 = l0 + CH < L ? l0 + CH : L;
    /* the workspace: a ticket per group and split (the tree's nodes need
     * fewer), then the partials, a slot per group and split */
    unsigned *tk = (unsigned *)ws + grp * splits;
    float *part = (float *)(ws + ((groups * splits + 3) / 4) * 16);
    constexpr int DP = (D + 3) / 4 * 4;   /* a partial's row: f32, float4 aligned */
    const long long psz = 8 * DP + 16;    /* a partial: 8 rows, then 8 maxima and 8 sums */
    const T *kp = k + koff(kb), *vp = v + voff(kb);
    /* q to shared memory, a row per NT / 8 threads (one qoff each), a
     * thread's loads all issued before its stores */
    auto stage = [&]() {
        constexpr int TR = NT / 8, QJ = (D + TR - 1) / TR;
        const int r = threadIdx.x / TR, d0 = threadIdx.x % TR;
        const bool ok = r < nr;
        const T *qr = q + (ok ? qoff(kb, r0 + r) : 0);
        float qv[QJ];
#pragma unroll
        for (int j = 0; j < QJ; j++)
            qv[j] = ok && d0 + TR * j < D ? tc_at_ld<DT>(qr[d0 + TR * j]) : 0.0f;
#pragma unroll
        for (int j = 0; j < QJ; j++)
            if (d0 + TR * j < D)
                sh.q[r][d0 + TR * j] = qv[j];
        __syncthreads();
    };
    /* the block's partial: the warps combined, each warp's weight once,
     * in warp order (with RND > 1 a slot's warps a round, the sums kept in
     * registers between rounds: the same order) */
    constexpr int NE = (8 * D + NT - 1) / NT; /* a thread's elements */
    float *gp = part + grp * splits * psz;
    float *mine = gp + split * psz;
    /* each(put): this warp's outputs, put(r, d, value) */
    auto fin = [&](auto each) {
        const int warp = threadIdx.x >> 5;
        float acc[NE];
#pragma unroll
        for (int j = 0; j < NE; j++)
            acc[j] = 0.0f;
        for (int rd = 0; rd < RND; rd++) {
            if (rd > 0)
                __syncthreads(); /* the last round's slots read */
            if (warp / S == rd)
                each([&](int r, int d, float x) { tc_at_o<D, RG>(sh, warp % S, r, d) = x; });
            __syncthreads();
            if (rd == 0 && threadIdx.x < 8) { /* the weights (every warp's m and l written) */
                const int r = threadIdx.x;
                tc_at_weigh(sh.m, sh.l, sh.wt, W, r, &sh.bm[r], &sh.bl[r]);
                if (splits == 1)
                    sh.orow[r] = r < nr ? ooff(kb, r0 + r) : 0;
            }
            if (rd == 0)
                __syncthreads();
            /* a round's sums, the last round's written (one round: a loop) */
#pragma unroll(RND > 1 ? NE : 1)
            for (int j = 0; j < NE; j++) {
                const int i = threadIdx.x + NT * j, r = i / D, d = i % D;
                if (i >= 8 * D)
                    break;
                float a = RND > 1 ? acc[j] : 0.0f;
                for (int w = 0; w < S; w++)
                    a += sh.wt[rd * S + w][r] * tc_at_o<D, RG>(sh, w, r, d);
                if (rd < RND - 1) {
                    acc[j] = a;
                    continue;
                }
                if (splits > 1)
                    mine[r * DP + d] = a;
                else if (r < nr) /* one split: it is the output */
                    out[sh.orow[r] + d] = tc_at_st<DT>(a / sh.bl[r]);
            }
        }
    };
    bool mma = TC_AT_TENSOR && DT != 0 && D % 32 == 0 && D <= 128 && ks % 8 == 0 && vs % 8 == 0 &&
               (((unsigned long long)kp | (unsigned long long)vp) & 15) == 0;
    if (mma)
        tc_at_mma_path<DT, (D % 32 == 0 && D <= 128) ? D : 32, W, PF, RG, KW>(
            *(tc_at_smem<(D % 32 == 0 && D <= 128) ? D : 32, W, S, SO> *)&sh, kp, vp, ks, vs, l0, l1, kb, r0,
            nr, score, stage, fin);
    else
        tc_at_fma_path<DT, D, W, KW>(sh, kp, vp, ks, vs, l0, l1, kb, r0, nr, score, stage, fin);
    if (splits == 1)
        return;
    if (threadIdx.x < 8) {
        mine[8 * DP + threadIdx.x] = sh.bm[threadIdx.x];
        mine[8 * DP + 8 + threadIdx.x] = sh.bl[threadIdx.x];
    }
    /* The splits' partials combine up a fixed tree of TC_AT_FAN children a
     * node (on the split index alone: the same order at every run and
     * batch).  A node's last child block to finish (its ticket) combines
     * them into the first child's slot, which its parent reads; the root
     * writes the output.  A combine's loads are independent and all in
     * flight (a thread's float4 pieces of every child), so its time does
     * not grow with the splits serially, and the tree's depth is
     * log16(splits).  Whoever reads a slot zeroes it (the workspace's
     * contract), in the same pass. */
    constexpr int NS = 8 * DP / 4;                /* float4 pieces of a partial's rows */
    constexpr int PT = (NS + NT - 1) / NT;        /* ... a thread */
    constexpr int FB = PT <= 2 ? TC_AT_FAN : 32 / PT < 1 ? 1 : 32 / PT; /* children a batch of loads */
    long long idx = split, n = splits, span = 1, tb = 0;
    while (n > 1) {
        const long long node = idx / TC_AT_FAN, nn = (n + TC_AT_FAN - 1) / TC_AT_FAN;
        const int cnt = (int)(n - node * TC_AT_FAN < TC_AT_FAN ? n - node * TC_AT_FAN : TC_AT_FAN);
        if (cnt > 1) {
            __threadfence();
            __syncthreads();
            if (threadIdx.x == 0) {
                const unsigned t = atomicAdd(&tk[tb + node], 1u);
                sh.last = t == (unsigned)(cnt - 1);
            }
            __syncthreads();
            if (!sh.last)
                return;
            __threadfence();
            if (threadIdx.x == 0)
                tk[tb + node] = 0;
            const bool root = nn == 1;
            float *cp = gp + node * TC_AT_FAN * span * psz; /* the first child; the others span * psz apart */
            const long long cs = span * psz;
            float4 x[PT][FB];
            auto ld = [&](int s0) {
#pragma unroll
                for (int j = 0; j < PT; j++)
#pragma unroll
                    for (int s = 0; s < FB; s++) {
                        const int piece = threadIdx.x + NT * j;
                        x[j][s] = piece < NS && s0 + s < cnt ? __ldcg((const float4 *)(cp + (s0 + s) * cs) + piece)
                                                             : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    }
            };
            ld(0);
            for (int i = threadIdx.x; i < 8 * cnt; i += NT) {
                float *ml = cp + (i >> 3) * cs + 8 * DP + (i & 7);
                sh.cm[i >> 3][i & 7] = __ldcg(ml);
                sh.cl[i >> 3][i & 7] = __ldcg(ml + 8);
                if (root || i >= 8) {
                    ml[0] = 0.0f;
                    ml[8] = 0.0f;
                }
            }
            __syncthreads();
            if (threadIdx.x < 8) { /* a row's max, its children's weights and the sum, in child order */
                const int r = threadIdx.x;
                tc_at_weigh(sh.cm, sh.cl, sh.cw, cnt, r, &sh.bm[r], &sh.bl[r]);
                if (root)
                    sh.orow[r] = r < nr ? ooff(kb, r0 + r) : 0;
            }
            __syncthreads();
            float4 acc[PT];
#pragma unroll
            for (int j = 0; j < PT; j++)
                acc[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            for (int s0 = 0; s0 < cnt; s0 += FB) {
                if (s0 > 0)
                    ld(s0);
#pragma unroll
                for (int j = 0; j < PT; j++) {
                    const int piece = threadIdx.x + NT * j;
                    if (piece >= NS)
                        break;
                    const int r = piece / (DP / 4);
#pragma unroll
                    for (int s = 0; s < FB; s++) {
                        if (s0 + s >= cnt)
                            break;
                        const float wt = sh.cw[s0 + s][r];
                        acc[j].x += wt * x[j][s].x;
                        acc[j].y += wt * x[j][s].y;
                        acc[j].z += wt * x[j][s].z;
                        acc[j].w += wt * x[j][s].w;
                        if (root || s0 + s > 0)
                            ((float4 *)(cp + (s0 + s) * cs))[piece] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < PT; j++) {
                const int piece = threadIdx.x + NT * j;
                if (piece >= NS)
                    break;
                const int r = piece / (DP / 4), d0 = piece % (DP / 4) * 4;
                if (!root) {
                    ((float4 *)cp)[piece] = acc[j];
                    continue;
                }
                const float ls = sh.bl[r];
                const float a4[4] = {acc[j].x, acc[j].y, acc[j].z, acc[j].w};
                if (r < nr)
                    for (int e = 0; e < 4; e++)
                        if (d0 + e < D)
                            out[sh.orow[r] + d0 + e] = tc_at_st<DT>(a4[e] / ls);
            }
            if (root)
                return;
            if (threadIdx.x < 8) {
                cp[8 * DP + threadIdx.x] = sh.bm[threadIdx.x];
                cp[8 * DP + 8 + threadIdx.x] = sh.bl[threadIdx.x];
            }
        }
        idx = node;
        n = nn;
        span *= TC_AT_FAN;
        tb += nn;
    }
}
