/* scans (src/codegen/scan.c): only in units with a scan kernel, before the
 * first one (unit.c) */
/* log(e^a + e^b) with the larger term factored out (logcumsumexp's step):
 * NaN propagates, -inf is the empty sum, +inf stays +inf.  Every path is
 * computed and selected (helpers.cuh's sigmoid says why): this is the walk's
 * critical path.  r is NaN exactly when an input is NaN or both are the
 * same infinity (inf - inf); a + b is then the NaN or that infinity, and
 * where one is infinite and the other not, r is already it (m + log1p(0)).
 * One test, where a NaN test of the inputs and an infinity test of m took
 * three (the same bits, NaN payloads aside). */
template <class T> __device__ __forceinline__ T tc_logaddexp(T a, T b) {
    const T m = a > b ? a : b, lo = a > b ? b : a;
    const T r = m + log1p(exp(lo - m));
    return r != r ? a + b : r;
}
__device__ __forceinline__ float tc_logaddexp(float a, float b) {
    const float m = a > b ? a : b, lo = a > b ? b : a;
#if TC_FAST_MATH /* helpers.cuh: lo - m <= 0, so the argument is in [0, 1] */
    const float r = m + tc_log1p_mid(expf(lo - m));
#else
    const float r = m + log1pf(expf(lo - m));
#endif
    return r != r ? a + b : r;
}
/* logcumsumexp's carry in a lane walk (scan.c, TENSORC_SCAN_LSE): the pair
 * of helpers.cuh's online softmax, m the running max, but s the sum of
 * exp(x - m) over every term but the max's own 1 (tc_online_add's s - 1),
 * started at (-inf, 0) and stepped by tc_online_add's rule: one exp a step,
 * no log (tc_logaddexp takes an exp and a log1p series).  Its value is
 * m + log1p(s): without the max's 1 in s, the terms far below the max
 * still count where the value is near 0 (logcumsumexp of [0, -34] is
 * 1.7e-15, which m + log(1 + 1.7e-15) rounds to 0: tests/gpu/fastmath.py
 * found it), so the value's error is relative, as the chained logaddexp's.
 * -inf from (-inf, 0), +inf and NaN from m; a NaN makes m NaN for good,
 * and a step whose x - m is NaN (the same infinity again) leaves s.  m is
 * an input, exact, and s's error is relative, where the chained logaddexp
 * rounds its value (|c| large: an ulp of |c| a step). */
/* V: the walk's value is read (tc_lse_value; logform.c's cg_lse_value_read), so
 * a term far below the max keeps its own precision: 2^(-|d| log2 e) with
 * the product's rounding carried (hi + lo, 2^lo ~ 1 + lo ln 2; -|d| above
 * -200, where ex2 gives 0 anyway, so no inf - inf), where ex2 of the
 * rounded product is 2^-24 |d| log2 e off (about 50 ulps at d = -84:
 * tests/emu/fastmath.cpp, tests/gpu/fastmath.py).  Else (read only as
 * exp(v + value), against the max's own 1) ex2 alone: 5 instructions
 * fewer a step. */
template <bool V = true> __device__ __forceinline__ tc_ms tc_lse_add(tc_ms a, float x) {
    const float d = x - a.m;
    const bool up = d > 0.0f;
#if TC_FAST_MATH
    float t;
    if (V) {
        const float nd = fmaxf(-fabsf(d), -200.0f), hi = nd * 1.4426950408889634f;
        const float lo = fmaf(nd, 1.925963033500011e-08f, fmaf(nd, 1.4426950408889634f, -hi));
        const float e = tc_ex2(hi);
        t = fmaf(e, lo * 0.69314718055994531f, e);
    } else {
        t = tc_ex2(-fabsf(d) * 1.4426950408889634f);
    }
#else
    const float t = expf(-fabsf(d));
#endif
    /* up: (s + 1) t, the old max's 1 rescaled into the others */
    return tc_ms{up ? x : d == d ? a.m : a.m + x, up ? fmaf(a.s, t, t) : d == d ? a.s + t : a.s};
}
/* s >= 0: the series up to 1, above it lg2(1 + s) ln 2, at least ln 2
 * (1 + s rounds by 2^-24 of it) */
__device__ __forceinline__ float tc_lse_value(tc_ms c) {
#if TC_FAST_MATH
    const float l = tc_lg2n(1.0f + c.s) * 0.69314718055994531f;
    return c.m + (c.s <= 1.0f ? tc_log1p_mid(c.s) : l);
#else
    return c.m + log1pf(c.s);
#endif
}
/* exp(a + value) without the log: exp(a + m) (1 + s), not an fma of s (inf
 * times s = 0 would be NaN).  The same special values: (-inf, 0) gives
 * exp(a - inf) 1, so 0 (NaN for a = +inf, as a + -inf); m = +inf gives
 * inf (NaN for a = -inf); a NaN, NaN.  Where exp(a + m) overflows, so does
 * the value's (log1p s >= 0). */
__device__ __forceinline__ float tc_lse_exp(tc_ms c, float a) { return expf(a + c.m) * (1.0f + c.s); }
struct tc_op_logaddexp { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return tc_logaddexp(a, b); } };
/* Scans (src/codegen/scan.c): the block's inclusive scan of v in thread
 * order (warp shuffles, then the warps' totals in shared memory), and in
 * *total the value at thread `last` (the chunk's last active element;
 * threads after it may hold anything, and only later threads see them).
 * Every thread of the block calls it; blockDim.x is a multiple of 32. */
template <class T, class Op> __device__ __forceinline__ T tc_block_scan(T v, Op op, int last, T *total) {
    __shared__ T ws[33];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    #pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        T u = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v = op(u, v);
    }
    __syncthreads(); /* the previous scan has read ws */
    if (lane == 31) ws[w] = v;
    __syncthreads();
    if (w == 0) {
        T x = ws[lane < nw ? lane : 0];
        #pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            T u = __shfl_up_sync(0xffffffffu, x, o);
            if (lane >= o) x = op(u, x);
        }
        if (lane < nw) ws[lane] = x;
    }
    __syncthreads();
    if (w > 0) v = op(ws[w - 1], v);
    if ((int)threadIdx.x == last) ws[32] = v;
    __syncthreads();
    *total = ws[32];
    return v;
}
/* A lane walk's staged load, global -> the thread's shared column, by
 * cp.async (TENSORC_SCAN_ASYNC, scan_stage.c; 4 or 8 bytes, .ca: the only
 * kind below 16), completed by tc_scan_cp_wait; before sm_80 a plain copy.
 * The clobbers keep the compiler's own shared loads and stores in order
 * around them. */
template <class T> __device__ __forceinline__ void tc_scan_cp(T *dst, const T *src) {
#if __CUDA_ARCH__ >= 800
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    if (sizeof(T) == 8)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(d), "l"(src) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(src) : "memory");
#else
    *dst = *src;
#endif
}
__device__ __forceinline__ void tc_scan_cp_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void tc_scan_cp_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}
