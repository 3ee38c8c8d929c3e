// shim.h - tests/emu/emu.py: the scan kernels on the host, one CUDA thread at a time (the lane path)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
struct dim3_ { unsigned x, y, z; };
static dim3_ threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __shared__ static
#define __restrict__
typedef int idx_t;
typedef unsigned long long tc_u64;
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
template <class T> inline T __shfl_up_sync(unsigned, T v, int) { abort(); return v; }
static inline void __syncthreads() { abort(); }
template <class T> inline T tc_max(T a, T b) { return a != a ? a : b != b ? b : a > b ? a : b; }
template <class T> inline T tc_min(T a, T b) { return a != a ? a : b != b ? b : a < b ? a : b; }
template <class T> inline T tc_relu(T x) { return x != x ? x : x > (T)0 ? x : (T)0; }
inline float tc_sigmoid(float x) { const float e = expf(x >= 0.0f ? -x : x); return (x >= 0.0f ? 1.0f : e) / (1.0f + e); }
inline double tc_sigmoid(double x) { const double e = exp(x >= 0.0 ? -x : x); return (x >= 0.0 ? 1.0 : e) / (1.0 + e); }
inline float tc_softplus(float x) { const float y = log1pf(expf(x > 20.0f ? 20.0f : x)); return x > 20.0f ? x : y; }
inline double tc_softplus(double x) { const double y = log1p(exp(x > 20.0 ? 20.0 : x)); return x > 20.0 ? x : y; }
template <class T> inline T tc_lowest() { return (T)-__int_as_float(0x7f800000); }
template <class T> inline T tc_highest() { return (T)__int_as_float(0x7f800000); }
struct tc_op_sum { template <class T> T operator()(T a, T b) const { return a + b; } };
struct tc_op_prod { template <class T> T operator()(T a, T b) const { return a * b; } };
struct tc_op_max { template <class T> T operator()(T a, T b) const { return tc_max(a, b); } };
struct tc_op_min { template <class T> T operator()(T a, T b) const { return tc_min(a, b); } };
template <class I> inline I tc_upto(long long v, I n) { return v < (long long)n ? (I)v : n; }
