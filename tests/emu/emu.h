/* emu.h - tensorc's generated rows kernels run on the host (tests/emu/run.sh).
 *
 * One std::thread per CUDA thread; the blocks of a cluster run at once, each
 * with its own shared memory (the unit's __shared__ arrays are rewritten to
 * point here by mk.py), clusters one after another.  __syncthreads, warp
 * shuffles and the cluster barrier are pthread barriers; tc_cluster_map
 * (mapa) moves a pointer into another block's shared memory.  No
 * __CUDA_ARCH__: the units take their sm_80 software paths (bf16 rounding
 * in C), and inline PTX is compiled out, so f16 conversions (cvt asm) are
 * not emulated: f32 and bf16 only.  What the rows kernels use, no more.
 */
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <pthread.h>
#include <thread>
#include <vector>
#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __align__(n) __attribute__((aligned(n)))
#define asm(...) ((void)0)
struct emu_dim3 { unsigned x, y, z; };
static thread_local emu_dim3 threadIdx, blockIdx;
static thread_local unsigned emu_k; /* the block's rank in its cluster */
static emu_dim3 blockDim, gridDim;
static unsigned emu_ncl;
static pthread_barrier_t emu_block_bar[16], emu_cluster_bar, emu_warp_bar[16][32];
static unsigned char emu_warp_buf[16][32][32][16];
struct emu_shared { double smem[2 * 32 * 8]; alignas(16) unsigned char cl[64]; bool flag; };
static emu_shared emu_sh[16];
static inline void __syncthreads() { pthread_barrier_wait(&emu_block_bar[emu_k]); }
template <class T> static inline T __shfl_xor_sync(unsigned, T v, int o) {
    unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31;
    memcpy(emu_warp_buf[emu_k][w][l], &v, sizeof v);
    pthread_barrier_wait(&emu_warp_bar[emu_k][w]);
    T r;
    memcpy(&r, emu_warp_buf[emu_k][w][l ^ (unsigned)o], sizeof r);
    pthread_barrier_wait(&emu_warp_bar[emu_k][w]);
    return r;
}
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
template <class T> static inline T __ldcg(const T *p) { return *p; }
static inline void __threadfence() { __sync_synchronize(); }
static inline unsigned atomicAdd(unsigned *p, unsigned v) { return __sync_fetch_and_add(p, v); }
using std::isinf;
using std::isnan;
/* the cluster helpers mk.py puts in place of the unit's (sm_90 PTX) */
static inline unsigned emu_cluster_size() { return emu_ncl; }
static inline unsigned emu_cluster_rank() { return emu_k; }
static inline void emu_cluster_sync() { pthread_barrier_wait(&emu_cluster_bar); }
template <class T> static inline const T *emu_cluster_map(const T *p, unsigned rank) {
    long off = (const char *)p - (const char *)&emu_sh[emu_k];
    return (const T *)((const char *)&emu_sh[rank] + off);
}
/* grid = rows x ncl blocks: each cluster's ncl x block threads at once */
static void emu_launch(unsigned grid, unsigned block, unsigned ncl, const std::function<void()> &body) {
    blockDim = {block, 1, 1};
    gridDim = {grid, 1, 1};
    emu_ncl = ncl;
    pthread_barrier_init(&emu_cluster_bar, NULL, ncl * block);
    for (unsigned k = 0; k < ncl; k++) {
        pthread_barrier_init(&emu_block_bar[k], NULL, block);
        for (unsigned w = 0; w < (block + 31) / 32; w++)
            pthread_barrier_init(&emu_warp_bar[k][w], NULL, 32);
    }
    for (unsigned c = 0; c < grid / ncl; c++) {
        memset(emu_sh, 0xa5, sizeof emu_sh); /* garbage, as fresh shared memory */
        std::vector<std::thread> ts;
        for (unsigned k = 0; k < ncl; k++)
            for (unsigned t = 0; t < block; t++)
                ts.emplace_back([=, &body] {
                    threadIdx = {t, 0, 0};
                    blockIdx = {c * ncl + k, 0, 0};
                    emu_k = k;
                    body();
                });
        for (auto &t : ts)
            t.join();
    }
    pthread_barrier_destroy(&emu_cluster_bar);
    for (unsigned k = 0; k < ncl; k++) {
        pthread_barrier_destroy(&emu_block_bar[k]);
        for (unsigned w = 0; w < (block + 31) / 32; w++)
            pthread_barrier_destroy(&emu_warp_bar[k][w]);
    }
}
/* one block of [bx, by] threads at a time (a columns kernel's 2-D block,
 * or a row kernel's without a cluster), its threads started once and
 * taking the blocks in order (barriers between blocks), so a grid of many
 * blocks costs no thread starts; warps are 32 consecutive threads */
static void emu_launch_xy(unsigned grid, unsigned bx, unsigned by, const std::function<void()> &body) {
    unsigned n = bx * by;
    blockDim = {bx, by, 1};
    gridDim = {grid, 1, 1};
    emu_ncl = 1;
    pthread_barrier_init(&emu_block_bar[0], NULL, n);
    for (unsigned w = 0; w < (n + 31) / 32; w++)
        pthread_barrier_init(&emu_warp_bar[0][w], NULL, 32);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < n; t++)
        ts.emplace_back([=, &body] {
            threadIdx = {t % bx, t / bx, 0};
            emu_k = 0;
            for (unsigned c = 0; c < grid; c++) {
                if (t == 0)
                    memset(emu_sh, 0xa5, sizeof emu_sh); /* garbage, as fresh shared memory */
                pthread_barrier_wait(&emu_block_bar[0]);
                blockIdx = {c, 0, 0};
                body();
                pthread_barrier_wait(&emu_block_bar[0]);
            }
        });
    for (auto &t : ts)
        t.join();
    pthread_barrier_destroy(&emu_block_bar[0]);
    for (unsigned w = 0; w < (n + 31) / 32; w++)
        pthread_barrier_destroy(&emu_warp_bar[0][w]);
}
/* runtime/exec.c's sizing of a row kernel's launch (clusters up to 16, the
 * portable 8 first, blocks of 256 threads or more), from the row length */
static void emu_size(long long len, int per, unsigned *ncl, unsigned *block) {
    unsigned cl = 1, b = 256;
    if (len > 1024LL * per) {
        for (int tries = 0; tries < 2; tries++) {
            unsigned cap = tries == 0 ? 8 : 16;
            for (b = 256;; b *= 2) {
                cl = 1;
                while (cl < cap && len > (long long)b * per * cl)
                    cl *= 2;
                if (len <= (long long)b * per * cl || b >= 1024)
                    break;
            }
            if (len <= (long long)b * per * cl)
                break;
        }
        len = (len + cl - 1) / cl;
    }
    long long want = (len + per - 1) / per;
    unsigned bb = 32;
    while (bb < 1024 && (long long)bb < want)
        bb *= 2;
    *ncl = cl;
    *block = bb;
}
