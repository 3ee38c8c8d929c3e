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
 * of helpers.cuh's online softmax, m the running max and s the sum of
 * exp(x - m), started at (-inf, 0) and stepped by tc_online_add: one exp
 * a step, no log (tc_logaddexp takes an exp and a log1p series).  s is 1
 * or more once m is finite or +inf (the max's own term), 0 while m is
 * -inf; a NaN makes m NaN for good, and a step whose x - m is NaN (the
 * same infinity again) leaves s.  Its value is m + log(s): -inf from
 * (-inf, 0), +inf and NaN from m.  m is an input, exact, and s's error is
 * relative, where the chained logaddexp rounds its value (|c| large: an
 * ulp of |c| a step). */
__device__ __forceinline__ tc_ms tc_lse_add(tc_ms a, float x) {
    const float d = x - a.m;
    const bool up = d > 0.0f;
#if TC_FAST_MATH
    const float t = tc_ex2(-fabsf(d) * 1.4426950408889634f);
#else
    const float t = expf(-fabsf(d));
#endif
    return tc_ms{up ? x : d == d ? a.m : a.m + x, up ? fmaf(a.s, t, 1.0f) : d == d ? a.s + t : a.s};
}
__device__ __forceinline__ float tc_lse_value(tc_ms c) { return c.m + tc_logf_n(c.s); }
/* exp(a + value) without the log: exp(a + m) s.  The same special values:
 * (-inf, 0) gives exp(a - inf) 0, so 0 (NaN for a = +inf, as a + -inf);
 * m = +inf gives inf s = inf (NaN for a = -inf); a NaN, NaN.  Where
 * exp(a + m) overflows, so does the value's (log s >= 0). */
__device__ __forceinline__ float tc_lse_exp(tc_ms c, float a) { return expf(a + c.m) * c.s; }
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
