typedef unsigned long long tc_u64;
/* rows kernels: a register cap for occupancy (__maxnreg__ is CUDA 12.4+;
 * TENSORC_ROWS_MAXREG gives TC_MAXNREG another cap, codegen/kernel.c) */
#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ >= 1204
#define TC_MAXNREG(n) __maxnreg__(n)
#else
#define TC_MAXNREG(n) __launch_bounds__(1024)
#endif
#define TC_ROWS_BOUNDS TC_MAXNREG(40)

/* 16-bit floats are stored as their bits; math is done in f32 */
__device__ __forceinline__ float tc_h2f(unsigned short h) {
    float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ unsigned short tc_f2h(float f) {
    unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ float tc_bf2f(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
__device__ __forceinline__ unsigned short tc_f2bf(float f) {
#if __CUDA_ARCH__ >= 800
    unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
#else
    unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u); /* NaN */
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (unsigned short)(u >> 16);
#endif
}
/* two at once, lo in the low half: one instruction on sm_80+ */
__device__ __forceinline__ unsigned tc_f2bf2(float lo, float hi) {
#if __CUDA_ARCH__ >= 800
    unsigned r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
#else
    return (unsigned)tc_f2bf(lo) | (unsigned)tc_f2bf(hi) << 16;
#endif
}
__device__ __forceinline__ unsigned tc_f2h2(float lo, float hi) {
#if __CUDA_ARCH__ >= 800
    unsigned r; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
#else
    return (unsigned)tc_f2h(lo) | (unsigned)tc_f2h(hi) << 16;
#endif
}
__device__ __forceinline__ float tc_round_f16(float x) { return tc_h2f(tc_f2h(x)); }
__device__ __forceinline__ float tc_round_bf16(float x) { return tc_bf2f(tc_f2bf(x)); }

/* NaN-propagating, like torch.maximum / torch.minimum */
template <class T> __device__ __forceinline__ T tc_max(T a, T b) { return a != a ? a : b != b ? b : a > b ? a : b; }
template <class T> __device__ __forceinline__ T tc_min(T a, T b) { return a != a ? a : b != b ? b : a < b ? a : b; }
template <class T> __device__ __forceinline__ T tc_clamp(T x, T lo, T hi) { return tc_min(tc_max(x, lo), hi); }
template <class T> __device__ __forceinline__ T tc_relu(T x) { return x != x ? x : x > (T)0 ? x : (T)0; }
template <class T> __device__ __forceinline__ T tc_sign(T x) { return x != x ? x : (T)((x > (T)0) - (x < (T)0)); }
/* The edges, as docs/semantics.md ("Edges") and the interpreter define them.
 * Python's %: the sign of the divisor, a zero result signed like it; x % 0.0 is NaN */
template <class T> __device__ __forceinline__ T tc_mod(T a, T b) {
    T r = fmod(a, b);
    if (r == (T)0) return copysign((T)0, b);
    return ((r < (T)0) != (b < (T)0)) ? r + b : r;
}
__device__ __forceinline__ float tc_mod(float a, float b) {
    float r = fmodf(a, b);
    if (r == 0.0f) return copysignf(0.0f, b);
    return ((r < 0.0f) != (b < 0.0f)) ? r + b : r;
}
/* integer % 0 is 0; % -1 is 0 (INT64_MIN % -1 would trap) */
__device__ __forceinline__ long long tc_mod(long long a, long long b) {
    if (b == 0 || b == -1) return 0;
    long long r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__device__ __forceinline__ int tc_mod(int a, int b) { return (int)tc_mod((long long)a, (long long)b); }
/* integer **: wraps (unsigned products: no signed overflow); a negative power
 * truncates toward zero, so it is 0 but for 1 and -1, and 0 ** negative is 0 */
template <class T, class U> __device__ __forceinline__ T tc_ipow_(T a, T b) {
    if (b < 0) return a == 1 ? (T)1 : a == -1 ? (T)(b % 2 == 0 ? 1 : -1) : (T)0;
    U r = 1, x = (U)a;
    for (unsigned long long e = (unsigned long long)b; e; e >>= 1) { if (e & 1) r *= x; x *= x; }
    return (T)r;
}
__device__ __forceinline__ int tc_ipow(int a, int b) { return tc_ipow_<int, unsigned>(a, b); }
__device__ __forceinline__ long long tc_ipow(long long a, long long b) { return tc_ipow_<long long, tc_u64>(a, b); }
__device__ __forceinline__ bool tc_ipow(bool a, bool b) { return a || !b; }
/* float to integer: toward zero, saturating, NaN 0 (cvt.rzi clamps; a C++ cast
 * of an out-of-range float is undefined) */
__device__ __forceinline__ int tc_f2i32(float x) { int r; asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(r) : "f"(x)); return r; }
__device__ __forceinline__ int tc_f2i32(double x) { int r; asm("cvt.rzi.s32.f64 %0, %1;" : "=r"(r) : "d"(x)); return r; }
__device__ __forceinline__ long long tc_f2i64(float x) { long long r; asm("cvt.rzi.s64.f32 %0, %1;" : "=l"(r) : "f"(x)); return r; }
__device__ __forceinline__ long long tc_f2i64(double x) { long long r; asm("cvt.rzi.s64.f64 %0, %1;" : "=l"(r) : "d"(x)); return r; }
/* f32 math on the MUFU (docs/internals.md, "Math"): TC_FAST_MATH, 1 unless
 * the unit defines it 0 first (TENSORC_FAST_MATH=0: the accurate libm
 * functions throughout).  rcp.approx is within 1 ulp, lg2.approx within
 * 2^-22.6 absolute (the PTX ISA); the inputs below keep both away from
 * subnormals and ranges where that costs accuracy. */
#ifndef TC_FAST_MATH
#define TC_FAST_MATH 1
#endif
__device__ __forceinline__ float tc_rcp(float x) {
    float r; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;
}
__device__ __forceinline__ float tc_lg2(float x) {
    float r; asm("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;
}
/* log1p(t) for t in [-1/2, 1] (tests/emu/fastmath.cpp sweeps every bound):
 * 2 atanh(s), s = t / (2 + t) in [-1/3, 1/3], as u + u w p(w) with u = 2s =
 * t (2 / (2 + t)) and w = u^2 in [0, 4/9]: a tiny t (even subnormal) gives
 * u = t exactly; NaN propagates.  p is the cubic nearest the series' sum
 * (weighted by w, fitted by least squares reweighted to the minimax: its
 * error below 2^-27 of the result; Taylor to z^6 took two more terms).
 * 11 SASS instructions (log1pf: 32). */
__device__ __forceinline__ float tc_log1p_mid(float t) {
    const float u = t * (2.0f * tc_rcp(2.0f + t)), w = u * u;
    float p = 0.000547353236f;
    p = fmaf(p, w, 0.00218743226f);
    p = fmaf(p, w, 0.0125067811f);
    p = fmaf(p, w, 0.0833330154f);
    return fmaf(u, w * p, u);
}
/* log(x): the series on [1/2, 2] (x - 1 exact there), else lg2(x) ln 2,
 * whose result is at least ln 2 there, so lg2's absolute error is a few
 * ulp of it; lg2.approx gives 0 -> -inf, negative -> NaN, inf -> inf,
 * subnormals their log (not .ftz) */
__device__ __forceinline__ float tc_logf(float x) {
#if TC_FAST_MATH
    const float f = x - 1.0f, l = tc_lg2(x) * 0.69314718055994531f;
    return f >= -0.5f && f <= 1.0f ? tc_log1p_mid(f) : l;
#else
    return logf(x);
#endif
}
/* log1p(x): the series on [-1/2, 1], else lg2(1 + x) ln 2 (1 + x exact
 * below -1/2; above 1 its rounding is 2^-24 of a log at least ln 2) */
__device__ __forceinline__ float tc_log1pf(float x) {
#if TC_FAST_MATH
    const float l = tc_lg2(1.0f + x) * 0.69314718055994531f;
    return x >= -0.5f && x <= 1.0f ? tc_log1p_mid(x) : l;
#else
    return log1pf(x);
#endif
}
/* sigmoid, softplus (and scan.cuh's logaddexp) compute every path and
 * select, the same bits as a branch would give: a branch around library math
 * splits the code into blocks the compiler schedules one at a time, and a
 * sign-dependent one diverges on mixed signs (both paths run).  The log-space
 * minGRU scan, issue-bound, went from 58.7 to 46.4 us (H200, B512 T64 H128).
 * Fast: e / (1 + e) by a reciprocal (rcp.approx; 1 + e is in [1, 2]) and a
 * product, and 1 minus it for x >= 0, which is never above 1 whatever the
 * reciprocal's last bit. */
__device__ __forceinline__ float tc_sigmoid(float x) {
#if TC_FAST_MATH
    const float e = expf(x > 0.0f ? -x : x); /* softplus's: one expf for both of an x */
    const float q = e * tc_rcp(1.0f + e);
    return x > 0.0f ? 1.0f - q : q; /* the same test (at +-0 q is 0.5 = 1 - q) */
#else
    const float e = expf(x >= 0.0f ? -x : x);
    return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
#endif
}
__device__ __forceinline__ double tc_sigmoid(double x) {
    const double e = exp(x >= 0.0 ? -x : x);
    return (x >= 0.0 ? 1.0 : e) / (1.0 + e);
}
__device__ __forceinline__ float tc_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ double tc_gelu(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752)); }
__device__ __forceinline__ float tc_gelu_tanh(float x) {
    return 0.5f * x * (1.0f + tanhf(0.79788456080286535f * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ double tc_gelu_tanh(double x) {
    return 0.5 * x * (1.0 + tanh(0.79788456080286535 * (x + 0.044715 * x * x * x)));
}
__device__ __forceinline__ float tc_silu(float x) { return x * tc_sigmoid(x); }
__device__ __forceinline__ double tc_silu(double x) { return x * tc_sigmoid(x); }
/* x above 20 (the math clamped there, unused); NaN passes the clamp.  Fast:
 * max(x, 0) + log1p(e^-|x|), the argument in [0, 1] (-inf: 0, NaN: NaN),
 * with no clamp: above 20 the log1p is below 2.1e-9, under half an ulp of
 * x, so the sum is x, the same bits */
__device__ __forceinline__ float tc_softplus(float x) {
#if TC_FAST_MATH
    return (x > 0.0f ? x : 0.0f) + tc_log1p_mid(expf(x > 0.0f ? -x : x));
#else
    const float y = log1pf(expf(x > 20.0f ? 20.0f : x));
    return x > 20.0f ? x : y;
#endif
}
/* The fast log, log1p and softplus split before their series: a +
 * log1p_mid(t), negated where n.  A `where` of two of them (codegen's
 * logform.c) selects the parts and runs one series, not two (the minGRU's
 * log(relu(h) + 0.5) against -softplus(-h)).  The same bits as the
 * functions: a is -0 where the series alone is the value (L + -0 is L, -0
 * included), t is 0 where a alone is (L(0) = 0, and a is never -0 there),
 * softplus above 20 is x + L(e^-x) = x (L below 2.1e-9, under half an ulp
 * of x), and a negation comes last. */
struct tc_lform { float a, t; bool n; };
__device__ __forceinline__ tc_lform tc_log_lf(float x) {
    const float f = x - 1.0f, l = tc_lg2(x) * 0.69314718055994531f; /* unconditional, as tc_logf */
    const bool in = f >= -0.5f && f <= 1.0f;
    return tc_lform{in ? -0.0f : l, in ? f : 0.0f, false};
}
/* log of an argument at least 2^-126 or NaN (codegen's logform.c proves
 * it: relu(y) + 0.5 and the like): lg2.approx.ftz, which differs from
 * lg2.approx only on subnormal inputs, so no rescaling around it (3 SASS
 * instructions); the same bits as tc_logf there */
__device__ __forceinline__ float tc_lg2n(float x) {
    float r; asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;
}
__device__ __forceinline__ float tc_logf_n(float x) {
#if TC_FAST_MATH
    const float f = x - 1.0f, l = tc_lg2n(x) * 0.69314718055994531f;
    return f >= -0.5f && f <= 1.0f ? tc_log1p_mid(f) : l;
#else
    return logf(x);
#endif
}
__device__ __forceinline__ tc_lform tc_log_lf_n(float x) {
    const float f = x - 1.0f, l = tc_lg2n(x) * 0.69314718055994531f;
    const bool in = f >= -0.5f && f <= 1.0f;
    return tc_lform{in ? -0.0f : l, in ? f : 0.0f, false};
}
__device__ __forceinline__ tc_lform tc_log1p_lf(float x) {
    const float l = tc_lg2(1.0f + x) * 0.69314718055994531f;
    const bool in = x >= -0.5f && x <= 1.0f;
    return tc_lform{in ? -0.0f : l, in ? x : 0.0f, false};
}
__device__ __forceinline__ tc_lform tc_softplus_lf(float x) {
    return tc_lform{x > 0.0f ? x : 0.0f, expf(x > 0.0f ? -x : x), false};
}
__device__ __forceinline__ tc_lform tc_neg_lf(tc_lform v) { return tc_lform{v.a, v.t, !v.n}; }
__device__ __forceinline__ tc_lform tc_where_lf(bool c, tc_lform x, tc_lform y) {
    return tc_lform{c ? x.a : y.a, c ? x.t : y.t, c ? x.n : y.n};
}
__device__ __forceinline__ float tc_lf_value(tc_lform v) {
    const float r = v.a + tc_log1p_mid(v.t);
    return v.n ? -r : r;
}
__device__ __forceinline__ double tc_softplus(double x) {
    const double y = log1p(exp(x > 20.0 ? 20.0 : x));
    return x > 20.0 ? x : y;
}

/* reductions: the operators, their identities, and combining across threads */
template <class T> struct tc_argv { T v; long long i; };
template <class T> __device__ __forceinline__ T tc_lowest() { return (T)-__int_as_float(0x7f800000); }
template <class T> __device__ __forceinline__ T tc_highest() { return (T)__int_as_float(0x7f800000); }
template <> __device__ __forceinline__ int tc_lowest<int>() { return -2147483647 - 1; }
template <> __device__ __forceinline__ int tc_highest<int>() { return 2147483647; }
template <> __device__ __forceinline__ long long tc_lowest<long long>() { return -9223372036854775807LL - 1; }
template <> __device__ __forceinline__ long long tc_highest<long long>() { return 9223372036854775807LL; }
struct tc_op_sum { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };
struct tc_op_prod { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; } };
/* A reduction's f32 max and min (TENSORC_MAX_NAN, unless 0): PTX max.NaN
 * and min.NaN (sm_80), one instruction where tc_max's NaN tests took four
 * an element (three FSETP and an FSEL in the long-row softmax's SASS; H200,
 * 2026-11-28, one call, 0 / 1: softmax 1024 x 65536 157.7 / 152.7 us, 512 x
 * 131072 170.5 / 157.1, 256 x 262144 184.3 / 175.1, 16384 x 4096 132.6 /
 * 132.2: the long rows' kernels issue-bound on the H200).  A
 * NaN propagates as with tc_max (as the canonical NaN); which zero a row
 * of +0 and -0 gives is the hardware's, as it was the tree's order.  Scans
 * keep tc_max and tc_min (tc_op_cummax: an output an element). */
#ifndef TC_MAX_NAN
#define TC_MAX_NAN 1
#endif
__device__ __forceinline__ float tc_maxr(float a, float b) {
#if TC_MAX_NAN && __CUDA_ARCH__ >= 800
    float r; asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r;
#else
    return tc_max(a, b);
#endif
}
__device__ __forceinline__ float tc_minr(float a, float b) {
#if TC_MAX_NAN && __CUDA_ARCH__ >= 800
    float r; asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r;
#else
    return tc_min(a, b);
#endif
}
struct tc_op_max {
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return tc_max(a, b); }
    __device__ __forceinline__ float operator()(float a, float b) const { return tc_maxr(a, b); }
};
struct tc_op_min {
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return tc_min(a, b); }
    __device__ __forceinline__ float operator()(float a, float b) const { return tc_minr(a, b); }
};
struct tc_op_cummax { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return tc_max(a, b); } };
struct tc_op_cummin { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return tc_min(a, b); } };
/* first index of the extreme; a NaN wins, like torch.argmax */
struct tc_op_argmax {
    template <class T> __device__ __forceinline__ tc_argv<T> operator()(tc_argv<T> a, tc_argv<T> b) const {
        if (a.i < 0) return b;
        if (b.i < 0) return a;
        const bool an = a.v != a.v, bn = b.v != b.v;
        if (an || bn) return (an && (!bn || a.i < b.i)) ? a : b;
        return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;
    }
};
struct tc_op_argmin {
    template <class T> __device__ __forceinline__ tc_argv<T> operator()(tc_argv<T> a, tc_argv<T> b) const {
        if (a.i < 0) return b;
        if (b.i < 0) return a;
        const bool an = a.v != a.v, bn = b.v != b.v;
        if (an || bn) return (an && (!bn || a.i < b.i)) ? a : b;
        return (b.v < a.v || (b.v == a.v && b.i < a.i)) ? b : a;
    }
};
/* The online pair (sched_online.c): a running max m and s = the sum of
 * exp(x - m) over what it has seen.  One exp an element: exp(-|x - m|) is
 * the element's term or the old sum's rescaling.  Where x - m is NaN (both
 * -inf, both +inf, a NaN) the term is left out: where the row's max ends
 * finite that is an -inf element, whose term is 0; where it does not, s is
 * replaced after the combine (tc_online_sum).  The pair's combine is
 * commutative in bits (fmaf(small, t, big) either way round), so the
 * butterfly's lanes agree. */
struct tc_ms { float m, s; };
__device__ __forceinline__ tc_ms tc_ms_init() { return tc_ms{-__int_as_float(0x7f800000), 0.0f}; }
__device__ __forceinline__ tc_ms tc_online_add(tc_ms a, float x) {
    const float d = x - a.m;
    const bool up = d > 0.0f;
    const float t = expf(up ? -d : d);
    return tc_ms{tc_max(a.m, x), up ? fmaf(a.s, t, 1.0f) : d == d ? a.s + t : a.s};
}
/* 2^x on the MUFU (one instruction): results below 2^-126 flushed to 0,
 * which beside the pair's sum (at least 1 where it counts) is nothing */
__device__ __forceinline__ float tc_ex2(float x) {
    float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r;
}
/* The pair updated with a thread's whole vector x at once (a rows chunk's
 * item; `in` false: past the row's end, the pair is left as it is): the
 * vector's max first, one rescale of the sum, then an exp an element, as
 * 2^((x - M) log2 e): cross-entropy's bf16 loop has 9 SASS instructions an
 * element, 23 with tc_online_add's accurate expf (sm_90, not yet timed).  The same pair as K tc_online_add calls
 * wherever it counts: the new max M is fmaxf's, which passes a NaN over;
 * its exp (or the rescale of a NaN m) makes s NaN, and a NaN s makes m NaN.
 * M infinite: the shift is 0 instead, so an all -inf row keeps s = 0 and a
 * +inf keeps m = +inf (its s is replaced after the combine, as a NaN's is). */
template <int K> __device__ __forceinline__ tc_ms tc_online_addv(tc_ms a, const float (&x)[K], bool in) {
    float mx = x[0];
#pragma unroll
    for (int k = 1; k < K; k++) mx = fmaxf(mx, x[k]);
    const float M = fmaxf(a.m, in ? mx : -__int_as_float(0x7f800000));
    const float c = fabsf(M) <= 3.402823466e38f ? M : 0.0f;
    const float L = 1.4426950408889634f; /* log2 e */
    float t[K];
#pragma unroll
    for (int k = 0; k < K; k++) t[k] = tc_ex2((x[k] - c) * L);
#pragma unroll
    for (int w = 1; w < K; w *= 2) /* a tree: short dependency chains */
#pragma unroll
        for (int k = 0; k + w < K; k += 2 * w) t[k] += t[k + w];
    const float s = fmaf(a.s, tc_ex2((a.m - c) * L), in ? t[0] : 0.0f);
    return tc_ms{s != s ? s : M, s};
}
struct tc_op_online {
    __device__ __forceinline__ tc_ms operator()(tc_ms a, tc_ms b) const {
        const float d = a.m - b.m;
        const bool up = d > 0.0f;
        const float t = expf(up ? -d : d);
        return tc_ms{tc_max(a.m, b.m), d != d ? a.s + b.s : up ? fmaf(b.s, t, a.s) : fmaf(a.s, t, b.s)};
    }
};
/* the sum of exp(x - c) over the row from its pair, c the shift the two
 * passes subtract (m, or logsumexp's guard): where m is not finite, the
 * two passes' exp(m - c) (NaN for a NaN, or m - m; +inf or 0 for the guard's
 * constant), and 0 for an empty row */
__device__ __forceinline__ float tc_online_sum(tc_ms a, float c, long long len) {
    return fabsf(a.m) <= 3.402823466e38f || len == 0 ? a.s : expf(a.m - c);
}
template <class T> __device__ __forceinline__ T tc_shfl(T v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
template <class T> __device__ __forceinline__ tc_argv<T> tc_shfl(tc_argv<T> v, int o) {
    return tc_argv<T>{tc_shfl(v.v, o), tc_shfl(v.i, o)};
}
__device__ __forceinline__ tc_ms tc_shfl(tc_ms v, int o) { return tc_ms{tc_shfl(v.m, o), tc_shfl(v.s, o)}; }
/* every thread of the block gets the result; sm holds 32 values */
template <class T, class Op> __device__ T tc_block_reduce(T v, Op op, T *sm) {
    for (int o = 16; o > 0; o >>= 1) v = op(v, tc_shfl(v, o));
    const int nw = (blockDim.x + 31) >> 5;
    if (nw == 1) return v;
    __syncthreads(); /* sm may still be read by the last reduction */
    if ((threadIdx.x & 31) == 0) sm[threadIdx.x >> 5] = v;
    __syncthreads();
    T r = sm[0];
    for (int w = 1; w < nw; w++) r = op(r, sm[w]);
    return r;
}
/* two reductions at once, one pair of barriers; the same trees as two
 * tc_block_reduce calls, so the same bits (sm: 2 x 32 values of up to 16 bytes) */
template <class T, class Op, class U, class Op2>
__device__ void tc_block_reduce2(T &a, Op op, U &b, Op2 op2, void *sm) {
    for (int o = 16; o > 0; o >>= 1) {
        a = op(a, tc_shfl(a, o));
        b = op2(b, tc_shfl(b, o));
    }
    const int nw = (blockDim.x + 31) >> 5;
    if (nw == 1) return;
    T *sa = (T *)sm;
    U *sb = (U *)((unsigned char *)sm + 512);
    __syncthreads(); /* sm may still be read by the last reduction */
    if ((threadIdx.x & 31) == 0) { sa[threadIdx.x >> 5] = a; sb[threadIdx.x >> 5] = b; }
    __syncthreads();
    T ra = sa[0];
    U rb = sb[0];
    for (int w = 1; w < nw; w++) { ra = op(ra, sa[w]); rb = op2(rb, sb[w]); }
    a = ra;
    b = rb;
}
/* Long rows split across a thread-block cluster (sm_90; sched.h, "Clusters").
 * The launch gives the cluster's size (1: no cluster, and always 1 before
 * sm_90, where this code is compiled out): block `rank` of a cluster takes
 * slice `rank` of the row. */
#if __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned tc_cluster_size() {
    unsigned n; asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n)); return n;
}
__device__ __forceinline__ unsigned tc_cluster_rank() {
    unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r;
}
/* every block of the cluster arrives (after its shared-memory writes) and waits for the others */
__device__ __forceinline__ void tc_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
/* every block of the cluster here, no memory order (the release's arrive
 * waits for the thread's outstanding stores: MEMBAR.ALL.GPU): after the
 * mbarriers' init, whose fence.mbarrier_init orders it (CUTLASS's order) */
__device__ __forceinline__ void tc_cluster_sync_relaxed() {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
}
/* p's place in the shared memory of block `rank` of the cluster (distributed shared memory) */
template <class T> __device__ __forceinline__ const T *tc_cluster_map(const T *p, unsigned rank) {
    tc_u64 r; asm volatile("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(p), "r"(rank)); return (const T *)r;
}
#else
__device__ __forceinline__ unsigned tc_cluster_size() { return 1; }
__device__ __forceinline__ unsigned tc_cluster_rank() { return 0; }
__device__ __forceinline__ void tc_cluster_sync() {}
__device__ __forceinline__ void tc_cluster_sync_relaxed() {}
#endif
/* The row's value over the cluster: the block's, then every block's partial
 * combined in a fixed tree over the ranks (ncl a power of two, at most 16):
 * lane l takes rank l % ncl's partial, then a butterfly, so each block gets
 * the same bits and every run the same (deterministic).
 *
 * tc_cl (TC_CL_BYTES, codegen/rows.c): two mbarriers, then two turns of 16
 * slots of 32 bytes (a combine's value at 0, reduce2's second at 16), used
 * in turn.  Pushed (the default): thread p of each block writes the
 * block's partial into rank p's slot for it with st.async, which counts
 * its bytes on rank p's mbarrier of the turn, and each block waits on its
 * own mbarrier alone: no cluster barrier, whose arrive.release made every
 * thread wait for its outstanding global stores (the previous row's output:
 * ERRBAR, 16 % of the long-row softmax's stall samples on an H200, the
 * barrier's wait 14 %).  A slot (and its mbarrier's phase) is written again
 * two combines later, by a block that has finished the combine between,
 * which every block entered only after reading this one.  tc_cluster_init
 * makes the mbarriers before any block pushes (a relaxed cluster barrier
 * after fence.mbarrier_init); the kernel ends with one (tc_cluster_end).
 * Not pushed (push false: the kernel's choice, codegen/rows.c): thread 0
 * writes its own slot, a cluster barrier, every lane reads rank l % ncl's
 * slot through distributed shared memory: the same values in the same
 * tree, so the same bits. */
#define TC_CL_BYTES (16 + 2 * 16 * 32 + 16)
/* then a ticket a turn (TENSORC_ROWS_TICKET, codegen/rows.c): the row
 * after next, from rank 0 to every block with a combine's partials */
#define TC_CL_TK (16 + 2 * 16 * 32)
__device__ __forceinline__ void tc_cluster_init(unsigned char *cl, unsigned ncl, bool push) {
#if __CUDA_ARCH__ >= 900
    if (ncl > 1 && push) {
        if (threadIdx.x == 0) {
            const unsigned b = (unsigned)__cvta_generic_to_shared(cl), one = 1;
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(one) : "memory");
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(b + 8), "r"(one) : "memory");
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
        tc_cluster_sync_relaxed();
    }
#endif
}
/* the kernel's end: no block leaves while another may read its slots (not
 * pushed) or push into them; pushed, no memory order is needed, only that */
__device__ __forceinline__ void tc_cluster_end(unsigned ncl, bool push) {
    if (ncl > 1 && push)
        tc_cluster_sync_relaxed();
    else if (ncl > 1)
        tc_cluster_sync();
}
#if __CUDA_ARCH__ >= 900
/* v's bytes into rank's copy of cl + off, counted on its mbarrier t */
template <class T>
__device__ __forceinline__ void tc_cl_push(unsigned char *cl, unsigned off, unsigned t, unsigned rank, const T &v) {
    static_assert(sizeof(T) % 4 == 0 && sizeof(T) <= 16, "a cluster slot holds 16 bytes");
    unsigned w[sizeof(T) / 4], dst, bar;
    memcpy(w, &v, sizeof(T));
    const unsigned ldst = (unsigned)__cvta_generic_to_shared(cl + off), lbar = (unsigned)__cvta_generic_to_shared(cl) + 8 * t;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(dst) : "r"(ldst), "r"(rank));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(bar) : "r"(lbar), "r"(rank));
    for (unsigned i = 0; i < sizeof(T) / 4; i++)
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(dst + 4 * i),
                     "r"(w[i]), "r"(bar) : "memory");
}
/* this block's mbarrier t: expect bytes this turn, then wait for the turn's phase (parity ph) */
__device__ __forceinline__ void tc_cl_wait(unsigned char *cl, unsigned t, unsigned ph, unsigned bytes) {
    const unsigned bar = (unsigned)__cvta_generic_to_shared(cl) + 8 * t;
    if (threadIdx.x == 0)
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
    unsigned done = 0;
    while (!done)
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(done) : "r"(bar), "r"(ph) : "memory");
}
/* One combine's exchange of the block's partial a (and b at 16, when nb is
 * sizeof(U); 0: a alone), pushed or through the barrier: the slot that
 * holds rank (threadIdx.x % ncl)'s */
template <class T, class U>
__device__ const unsigned char *tc_cl_exchange(unsigned char *cl, unsigned &turn, unsigned ncl, bool push,
                                               const T &a, const U &b, unsigned nb, bool *tkon, int *tk) {
    const bool tick = tkon && *tkon; /* this combine carries the row ticket (tc_cl_ticket) */
    const unsigned t = turn & 1u;
    if (push) {
        const unsigned ph = (turn >> 1) & 1u, off = 16 + (t * 16 + tc_cluster_rank()) * 32;
        turn++;
        if (threadIdx.x < ncl) {
            tc_cl_push(cl, off, t, threadIdx.x, a);
            if (nb)
                tc_cl_push(cl, off + 16, t, threadIdx.x, b);
        }
        tc_cl_wait(cl, t, ph, ncl * ((unsigned)sizeof(T) + nb) + (tick ? 4u : 0u));
        if (tick) {
            *tk = *(const volatile int *)(cl + TC_CL_TK + 4 * t);
            *tkon = false;
        }
        return cl + 16 + (t * 16 + (threadIdx.x & (ncl - 1))) * 32;
    }
    unsigned char *own = cl + 16 + 32 * (turn++ & 1u);
    if (threadIdx.x == 0) {
        *(T *)own = a;
        if (nb)
            *(U *)(own + 16) = b;
    }
    tc_cluster_sync();
    if (tick) {
        *tk = *(const volatile int *)tc_cluster_map(cl + TC_CL_TK + 4 * t, 0);
        *tkon = false;
    }
    return tc_cluster_map((const unsigned char *)own, threadIdx.x & (ncl - 1));
}
#endif
/* The row ticket (TENSORC_ROWS_TICKET): rank 0's thread 0, before the row's
 * first combine, puts the ticket it took into every block's ticket slot of
 * that combine's turn (pushed: counted on that turn's mbarrier, as the
 * partials; else its own slot, which the combine's cluster barrier
 * publishes).  The slot was last read two combines ago, as the partials'. */
__device__ __forceinline__ void tc_cl_ticket(unsigned char *cl, unsigned turn, unsigned ncl, bool push, int tk) {
#if __CUDA_ARCH__ >= 900
    const unsigned t = turn & 1u;
    if (!push) {
        *(volatile int *)(cl + TC_CL_TK + 4 * t) = tk;
        return;
    }
    for (unsigned p = 0; p < ncl; p++)
        tc_cl_push(cl, TC_CL_TK + 4 * t, t, p, tk);
#endif
}
template <class T, class Op> __device__ T tc_cluster_reduce(T v, Op op, T *sm, unsigned char *cl,
                                                           unsigned &turn, unsigned ncl, bool push,
                                                           bool *tkon = nullptr, int *tk = nullptr) {
    v = tc_block_reduce(v, op, sm);
#if __CUDA_ARCH__ >= 900
    if (ncl > 1) {
        v = *(const T *)tc_cl_exchange(cl, turn, ncl, push, v, v, 0, tkon, tk);
        for (unsigned o = 1; o < ncl; o <<= 1) v = op(v, tc_shfl(v, (int)o));
    }
#endif
    return v;
}
/* two of them at once (a slot's two halves): one exchange for both */
template <class T, class Op, class U, class Op2>
__device__ void tc_cluster_reduce2(T &a, Op op, U &b, Op2 op2, void *sm, unsigned char *cl,
                                   unsigned &turn, unsigned ncl, bool push, bool *tkon = nullptr,
                                   int *tk = nullptr) {
    tc_block_reduce2(a, op, b, op2, sm);
#if __CUDA_ARCH__ >= 900
    if (ncl > 1) {
        const unsigned char *slot = tc_cl_exchange(cl, turn, ncl, push, a, b, (unsigned)sizeof(U), tkon, tk);
        a = *(const T *)slot;
        b = *(const U *)(slot + 16);
        for (unsigned o = 1; o < ncl; o <<= 1) {
            a = op(a, tc_shfl(a, (int)o));
            b = op2(b, tc_shfl(b, (int)o));
        }
    }
#endif
}
/* combine over threadIdx.y for each threadIdx.x; sm holds blockDim.x * blockDim.y values */
template <class T, class Op> __device__ T tc_col_reduce(T v, Op op, T *sm) {
    __syncthreads();
    sm[threadIdx.y * blockDim.x + threadIdx.x] = v;
    __syncthreads();
    T r = sm[threadIdx.x];
    for (unsigned y = 1; y < blockDim.y; y++) r = op(r, sm[y * blockDim.x + threadIdx.x]);
    return r;
}
/* the last block combines every block's partial, in block order */
template <class T> __device__ __forceinline__ T tc_ldcg(const T *p) { return __ldcg(p); }
template <class T> __device__ __forceinline__ tc_argv<T> tc_ldcg(const tc_argv<T> *p) {
    return tc_argv<T>{__ldcg(&p->v), __ldcg(&p->i)};
}
/* ... and leaves the workspace zero, as the launch plan promises */
template <class T, class Op> __device__ T tc_partials(T *part, unsigned n, T init, Op op, T *sm) {
    T v = init;
    for (unsigned b = threadIdx.x; b < n; b += blockDim.x) {
        v = op(v, tc_ldcg(part + b));
        part[b] = T{};
    }
    return tc_block_reduce(v, op, sm);
}

/* 16-byte (or narrower) vector accesses */
template <class T, int N> struct alignas(sizeof(T) * N) tc_vec { T v[N]; };
/* TC_LOAD_EF 1 (TENSORC_LOAD_EF=1, for A/B): 16-byte loads with the
 * evict-first hint (__ldcs: SASS LDG.E.EF.128), as Inductor's reductions
 * stream their input (peer_kernels.py: col_sum, rmsnorm's second pass);
 * else as the pointer says (ld.global.nc for a const __restrict__ input) */
#ifndef TC_LOAD_EF
#define TC_LOAD_EF 0
#endif
template <class T, int N> __device__ __forceinline__ tc_vec<T, N> tc_vload(const T *p) {
#if TC_LOAD_EF
    if constexpr (sizeof(tc_vec<T, N>) == 16) {
        tc_vec<T, N> r;
        *reinterpret_cast<float4 *>(&r) = __ldcs(reinterpret_cast<const float4 *>(p));
        return r;
    }
#endif
    return *reinterpret_cast<const tc_vec<T, N> *>(p);
}
template <class T, int N> __device__ __forceinline__ void tc_vstore(T *p, tc_vec<T, N> v) {
    *reinterpret_cast<tc_vec<T, N> *>(p) = v;
}
__device__ __forceinline__ bool tc_aligned(const void *p, int bytes) {
    return ((tc_u64)p & (tc_u64)(bytes - 1)) == 0;
}
/* v (made in 64 bits), or n when v >= n: loop starts and steps that
 * cannot pass the end in 32-bit index arithmetic */
template <class I> __device__ __forceinline__ I tc_upto(long long v, I n) {
    return v < (long long)n ? (I)v : n;
}
