/* prelude.h - the helpers that tests/gpu/launch_shapes.tc's kernels use, on
 * the CPU (emu.py), over tests/emu/emu.h (blocks in turn, a block's threads
 * as fibers when the kernel synchronizes): block reductions in thread order,
 * alignment-counted vector accesses, the data and the comparisons. */
#include "../emu/emu.h" /* the emulator's core: threads, barriers, shared memory */
#include <atomic>
#include <vector>
typedef int idx_t;
static int nfail = 0, npass = 0;
typedef unsigned long long tc_u64;
template <class T> T tc_max(T a, T b) { return a != a ? a : b != b ? b : a > b ? a : b; }
template <class T> T tc_relu(T x) { return x != x ? x : x > (T)0 ? x : (T)0; }
inline float tc_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
struct tc_op_sum { template <class T> T operator()(T a, T b) const { return a + b; } };
struct tc_op_max { template <class T> T operator()(T a, T b) const { return tc_max(a, b); } };
template <class T> T tc_lowest() { return -INFINITY; }
template <class T> T tc_ldcg(const T *p) { return *p; }
// the block's values combined in thread order (not the GPU's tree: only
// equality between two kernels under this same emulation is checked)
template <class T, class Op> T tc_block_reduce(T v, Op op, T *) {
    static T buf[1024];
    unsigned n = blockDim.x * blockDim.y, t = threadIdx.y * blockDim.x + threadIdx.x;
    __syncthreads(); buf[t] = v; __syncthreads();
    T r = buf[0];
    for (unsigned i = 1; i < n; i++) r = op(r, buf[i]);
    __syncthreads();
    return r;
}
template <class T, class Op> T tc_col_reduce(T v, Op op, T *sm) {
    __syncthreads();
    sm[threadIdx.y * blockDim.x + threadIdx.x] = v;
    __syncthreads();
    T r = sm[threadIdx.x];
    for (unsigned y = 1; y < blockDim.y; y++) r = op(r, sm[y * blockDim.x + threadIdx.x]);
    return r;
}
template <class T, class Op> T tc_partials(T *part, unsigned n, T init, Op op, T *sm) {
    T v = init;
    for (unsigned b = threadIdx.x; b < n; b += blockDim.x) { v = op(v, tc_ldcg(part + b)); part[b] = T{}; }
    return tc_block_reduce(v, op, sm);
}
template <class T, int N> struct alignas(sizeof(T) * N) tc_vec { T v[N]; };
static std::atomic<int> misaligned{0};
template <class T, int N> tc_vec<T, N> tc_vload(const T *p) {
    if ((unsigned long long)p % (sizeof(T) * N)) misaligned++; /* a GPU would fault */
    tc_vec<T, N> v; memcpy(&v, p, sizeof v); return v;
}
template <class T, int N> void tc_vstore(T *p, tc_vec<T, N> v) {
    if ((unsigned long long)p % (sizeof(T) * N)) misaligned++;
    memcpy(p, &v, sizeof v);
}
/* 16-bit floats (helpers.cuh): their bits, converted as cvt does (the core's) */
inline float tc_h2f(unsigned short h) { return emu_h2f(h); }
inline unsigned short tc_f2h(float f) { return emu_f2h(f); }
inline float tc_bf2f(unsigned short h) { return emu_bf2f(h); }
inline unsigned short tc_f2bf(float f) { return emu_f2bf(f); }
inline unsigned tc_f2h2(float lo, float hi) { return (unsigned)tc_f2h(lo) | (unsigned)tc_f2h(hi) << 16; }
inline unsigned tc_f2bf2(float lo, float hi) { return (unsigned)tc_f2bf(lo) | (unsigned)tc_f2bf(hi) << 16; }
inline float tc_round_f16(float x) { return tc_h2f(tc_f2h(x)); }
inline float tc_round_bf16(float x) { return tc_bf2f(tc_f2bf(x)); }
inline bool tc_aligned(const void *p, int bytes) { return ((tc_u64)p & (tc_u64)(bytes - 1)) == 0; }
template <class I> I tc_upto(long long v, I n) { return v < (long long)n ? (I)v : n; }
template <int NT> struct tc_fe_group { unsigned long long ptr[NT]; long long n; long long first; };
template <int NT, int CAP> struct tc_fe_table { const tc_fe_group<NT> *dev; long long ngroups; tc_fe_group<NT> g[CAP]; };
template <int NT> long long tc_fe_index(const tc_fe_group<NT> *gs, long long ng) {
    long long lo = 0, hi = ng - 1;
    while (lo < hi) { const long long mid = (lo + hi + 1) >> 1; if (gs[mid].first <= (long long)blockIdx.x) lo = mid; else hi = mid - 1; }
    return lo;
}
template <int NT> const tc_fe_group<NT> &tc_fe_find(const tc_fe_group<NT> *gs, long long ng) { return gs[tc_fe_index<NT>(gs, ng)]; }
// a launch: the core's, its threads as fibers when the kernel synchronizes
static void launch(unsigned gx, unsigned bx, unsigned by, bool sync, const std::function<void()> &k) {
    emu_launch(dim3(gx), dim3(bx, by), 1, k, sync);
}
static unsigned long long rng_s = 88172645463325252ull;
static float frand() { rng_s ^= rng_s << 13; rng_s ^= rng_s >> 7; rng_s ^= rng_s << 17; return (float)((rng_s >> 40) * (2.0 / 16777216.0) - 1.0); }
/* mode 0: uniform in [-1, 1); 1: and NaN/inf at a few places; 2: small integers (sums exact) */
static float *mk(size_t n, int off, int mode) {
    float *p = (float *)aligned_alloc(64, (n + 16) * 4) + off;
    for (size_t i = 0; i < n; i++) p[i] = mode == 2 ? (float)((int)((frand() + 1) * 2.5f) - 2) : frand();
    if (mode == 1 && n > 8) { p[1] = NAN; p[n / 2] = INFINITY; p[n - 1] = -INFINITY; p[n / 3] = -INFINITY; }
    return p;
}
static void exact(const char *what, const float *got, const double *want, size_t n) {
    for (size_t i = 0; i < n; i++) {
        bool ok = std::isnan(want[i]) ? std::isnan(got[i]) : (double)got[i] == want[i];
        if (!ok) { printf("FAIL %s: [%zu] got %.9g want %.9g\n", what, i, got[i], want[i]); nfail++; return; }
    }
    npass++;
}
static float *zeros(size_t n, int off) { float *p = (float *)aligned_alloc(64, (n + 16) * 4) + off; memset(p, 0xff, n * 4); return p; }
static void same(const char *what, const float *a, const float *b, size_t n) {
    if (memcmp(a, b, n * 4) == 0) { npass++; return; }
    for (size_t i = 0; i < n; i++) if (memcmp(a + i, b + i, 4)) { printf("FAIL %s: [%zu] %.9g vs %.9g\n", what, i, a[i], b[i]); break; }
    nfail++;
}
