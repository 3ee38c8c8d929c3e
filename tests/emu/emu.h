/* emu.h - the CUDA that tensorc generates, run as C++ on the host (tests/emu/README.md).
 *
 * A launch runs one cluster of blocks at a time (a block is a cluster of
 * one); each CUDA thread of the cluster is a fiber (ucontext) on this one OS
 * thread, run until it waits at a barrier, so runs are deterministic and a
 * barrier that can never complete is reported (a deadlock, not a hang).
 * __syncthreads, the cluster barrier (arrive and wait apart) and the warp
 * collectives (shuffles, votes, mma.sync, movmatrix, ldmatrix) are counted
 * barriers; a collective's last lane to arrive computes every lane's result.
 * Each block has its own shared memory, poisoned (NaN bytes) at its start:
 * unit.py rewrites each __shared__ declaration into emu_shared<>(), whose
 * storage sits at the same offset in every rank's window, so mapa is a move
 * between windows and a shared address (__cvta_generic_to_shared) is the
 * offset in the window.  Inline PTX is interpreted (unit.py turns each asm
 * statement into emu_ptx::run with its template and operands): the cvt
 * conversions (f16 and bf16, round to nearest even; saturating rzi), cluster
 * registers, barrier.cluster, mapa, cp.async (ca/cg, 4/8/16 bytes, the
 * source size for zero fill) with commit and wait groups, mbarriers with
 * st.async's complete_tx (the cluster's pushed exchange), mma.sync m16n8k16
 * f16/bf16 -> f32, movmatrix and ldmatrix.  cp.async copies are made when a
 * wait_group retires their group, not at issue, so a read before the wait
 * sees the stage's old contents.  Vector loads check alignment (a GPU
 * faults).  __CUDA_ARCH__ is EMU_ARCH (900 unless given): sm_90 paths.
 */
#ifndef EMU_H
#define EMU_H
#undef _FORTIFY_SOURCE /* its longjmp check refuses a jump to another fiber's stack */
#include <setjmp.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <sys/mman.h>
#include <type_traits>
#include <ucontext.h>
#include <vector>
/* Linkage.  Included alone (the default), everything here is static to its
 * translation unit.  emu.py builds the emulator's runtime once (emu_rt.cpp,
 * EMU_RT_IMPL: the launch loop, the fibers, the PTX interpreter, the shared
 * state) and each unit against it (EMU_RT_EXTERN: that state extern, those
 * functions declared here, defined there), so that a unit's build compiles
 * only the unit and the inline parts it uses. */
#if defined(EMU_RT_EXTERN) && defined(EMU_RT_IMPL)
#error "EMU_RT_EXTERN (a unit) and EMU_RT_IMPL (emu_rt.cpp) exclude each other"
#endif
#ifdef EMU_RT_EXTERN
#define EMU_STATE extern
#define EMU_INIT(...)
#define EMU_FN
#define EMU_MEMBER
#elif defined(EMU_RT_IMPL)
#define EMU_STATE
#define EMU_INIT(...) = __VA_ARGS__
#define EMU_FN
#define EMU_MEMBER
#else
#define EMU_STATE static
#define EMU_INIT(...) = __VA_ARGS__
#define EMU_FN static
#define EMU_MEMBER inline
#endif
#ifndef EMU_ARCH
#define EMU_ARCH 900

#endif
#define __CUDA_ARCH__ EMU_ARCH
#define __device__
#define __global__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __grid_constant__
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_assume(x) ((void)0)
#define __isGlobal(p) 1
using std::isinf;
using std::isnan;
using std::max;
using std::min;

[[noreturn]] static void emu_die(const char *fmt, const char *a = "", long long b = 0) {
    fprintf(stderr, "emu: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    fflush(stdout);
    exit(3);
}

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint4 { unsigned x, y, z, w; } __attribute__((aligned(16)));
struct uint2 { unsigned x, y; } __attribute__((aligned(8)));
struct int4 { int x, y, z, w; } __attribute__((aligned(16)));
struct float4 { float x, y, z, w; } __attribute__((aligned(16)));
struct float2 { float x, y; } __attribute__((aligned(8)));
struct double2 { double x, y; } __attribute__((aligned(16)));
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
static inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
static inline float2 make_float2(float x, float y) { return float2{x, y}; }

/* ---- threads, blocks, clusters ---- */
EMU_STATE dim3 threadIdx, blockIdx, blockDim, gridDim;
EMU_STATE unsigned emu_k;   /* the running thread's block: its rank in the cluster */
EMU_STATE unsigned emu_ncl EMU_INIT(1);
enum { EMU_MAXCL = 16, EMU_WIN = 4 << 20 }; /* ranks; bytes of shared window a rank */
enum { EMU_DYN_SHARED = 227 << 10 }; /* extern __shared__: the most dynamic shared memory a block has */
/* fresh shared memory's bytes: NaN in every float type (a GPU's may hold
 * anything; a NaN read and multiplied by a zero pad shows), -1 in integers */
#ifndef EMU_POISON
#define EMU_POISON 0xff
#endif
struct emu_bar {
    unsigned count = 0, arrived = 0, gen = 0;
};
struct emu_cp { unsigned char *dst; const unsigned char *src; int n, srcn; long long group; };
struct emu_fiber {
    ucontext_t ctx; /* how it starts; then _setjmp/_longjmp (no signal-mask syscalls) */
    jmp_buf jb;
    bool started;
    dim3 tid;
    unsigned rank, bx, by, bz, lane, warp;
    bool done;
    unsigned cl_gen; /* the cluster barrier's generation at this thread's arrive */
    std::vector<emu_cp> cps; /* cp.async copies not yet made */
    long long cp_open = 0;   /* the group the next copies join (committed: below it) */
};
EMU_STATE std::vector<emu_fiber> emu_f;
EMU_STATE emu_fiber *emu_cur;
EMU_STATE ucontext_t emu_sched;
EMU_STATE jmp_buf emu_sched_jb;
EMU_STATE unsigned long long emu_progress;
EMU_STATE char *emu_stacks;
EMU_STATE size_t emu_nstacks;
enum { EMU_STACK = 256 << 10 };
EMU_STATE emu_bar emu_block_bar[EMU_MAXCL], emu_cluster_bar, emu_warp_bar[EMU_MAXCL][32];
EMU_STATE unsigned char *emu_win; /* EMU_MAXCL windows of EMU_WIN bytes */
EMU_STATE size_t emu_win_used EMU_INIT(0);

EMU_STATE bool emu_fibers EMU_INIT(true); /* false: a launch whose caller knows it has no barrier */
static inline void emu_yield() {
    if (!emu_fibers)
        emu_die("a barrier in a launch run without fibers%s", "");
    if (!_setjmp(emu_cur->jb))
        _longjmp(emu_sched_jb, 1);
}
/* arrive and wait; the last to arrive runs `last` first (a collective's work) */
template <class F> static inline void emu_bar_wait(emu_bar &b, F last) {
    const unsigned g = b.gen;
    emu_progress++;
    if (++b.arrived == b.count) {
        last();
        b.arrived = 0;
        b.gen++;
        return;
    }
    while (b.gen == g)
        emu_yield();
}
static inline void emu_bar_wait(emu_bar &b) { emu_bar_wait(b, [] {}); }
static inline void __syncthreads() { emu_bar_wait(emu_block_bar[emu_k]); }
static inline void __syncwarp(unsigned = 0xffffffffu) { emu_bar_wait(emu_warp_bar[emu_k][emu_cur->warp]); }
static inline void __threadfence() {}
static inline void __threadfence_block() {}
static inline unsigned emu_cluster_size() { return emu_ncl; }
static inline unsigned emu_cluster_rank() { return emu_k; }
static inline void emu_cluster_arrive() {
    emu_bar &b = emu_cluster_bar;
    emu_cur->cl_gen = b.gen;
    emu_progress++;
    if (++b.arrived == b.count) {
        b.arrived = 0;
        b.gen++;
    }
}
static inline void emu_cluster_wait() {
    while (emu_cluster_bar.gen == emu_cur->cl_gen)
        emu_yield();
}
static inline void emu_cluster_sync() {
    emu_cluster_arrive();
    emu_cluster_wait();
}

/* ---- shared memory: every rank's window holds each variable at one offset ---- */
static inline unsigned char *emu_window(unsigned rank) { return emu_win + (size_t)rank * EMU_WIN; }
EMU_FN size_t emu_shared_alloc(size_t bytes, size_t align)
#ifdef EMU_RT_EXTERN
    ;
#else
{
    if (!emu_win) {
        emu_win = (unsigned char *)mmap(nullptr, (size_t)EMU_MAXCL * EMU_WIN, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (emu_win == MAP_FAILED)
            emu_die("no memory for shared windows%s", "");
    }
    size_t off = (emu_win_used + align - 1) / align * align;
    if (off + bytes > EMU_WIN)
        emu_die("shared variables past the emulator's %s window of %lld bytes", "", (long long)EMU_WIN);
    emu_win_used = off + bytes;
    for (unsigned r = 0; r < EMU_MAXCL; r++)
        memset(emu_window(r) + off, EMU_POISON, bytes); /* garbage, as fresh shared memory */
    return off;
}
#endif
template <class T, int ID, int AL = 16> static inline T &emu_shared() {
    static const size_t off = emu_shared_alloc(sizeof(T), AL > (int)alignof(T) ? AL : alignof(T));
    return *(T *)(emu_window(emu_k) + off);
}
static inline size_t __cvta_generic_to_shared(const void *p) {
    const unsigned char *c = (const unsigned char *)p, *w = emu_window(emu_k);
    if (!emu_win || c < w || c >= w + EMU_WIN)
        emu_die("__cvta_generic_to_shared of an address outside this block's shared memory%s", "");
    return (size_t)(c - w);
}
static inline unsigned char *emu_shared_ptr(unsigned long long a, int n) {
    if (a + n > EMU_WIN)
        emu_die("shared address %s%lld out of the window", "", (long long)a);
    return emu_window(emu_k) + a;
}
template <class T> static inline const T *emu_cluster_map(const T *p, unsigned rank) {
    const unsigned char *c = (const unsigned char *)p, *w = emu_window(emu_k);
    if (!emu_win || c < w || c >= w + EMU_WIN)
        emu_die("mapa of an address outside this block's shared memory%s", "");
    if (rank >= emu_ncl)
        emu_die("mapa to rank %s%lld, past the cluster", "", (long long)rank);
    return (const T *)(emu_window(rank) + (c - w));
}

/* ---- launches ---- */
EMU_STATE const std::function<void()> *emu_body;
EMU_FN void emu_launch(dim3 grid, dim3 block, unsigned ncl, const std::function<void()> &body, bool fibers = true);
EMU_FN void emu_launch(unsigned grid, unsigned block, unsigned ncl, const std::function<void()> &body);
EMU_FN void emu_launch_xy(unsigned grid, unsigned bx, unsigned by, const std::function<void()> &body);
#ifndef EMU_RT_EXTERN
static void emu_fiber_main() {
    emu_fiber *f = emu_cur;
    (*emu_body)();
    f->done = true;
    emu_progress++;
    _longjmp(emu_sched_jb, 1); /* never returns: its stack is left as it is */
}
static void emu_switch_to(emu_fiber &f) {
    emu_cur = &f;
    threadIdx = f.tid;
    blockIdx = dim3(f.bx, f.by, f.bz);
    emu_k = f.rank;
    if (!_setjmp(emu_sched_jb)) {
        if (!f.started) {
            f.started = true;
            setcontext(&f.ctx);
        }
        _longjmp(f.jb, 1);
    }
}
/* one cluster: blocks bx0 .. bx0 + ncl - 1 (x), by, bz */
static void emu_run_cluster(unsigned bx0, unsigned by, unsigned bz, unsigned ncl) {
    const unsigned nt = blockDim.x * blockDim.y * blockDim.z, n = nt * ncl;
    if (emu_nstacks < n) {
        if (emu_stacks)
            munmap(emu_stacks, emu_nstacks * (size_t)EMU_STACK);
        emu_stacks = (char *)mmap(nullptr, (size_t)n * EMU_STACK, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (emu_stacks == MAP_FAILED)
            emu_die("no memory for %s%lld fiber stacks", "", (long long)n);
        emu_nstacks = n;
    }
    emu_f.assign(n, emu_fiber());
    for (unsigned k = 0; k < ncl; k++) {
        memset(emu_window(k), EMU_POISON, emu_win_used);
        emu_block_bar[k] = emu_bar();
        emu_block_bar[k].count = nt;
        for (unsigned w = 0; w < (nt + 31) / 32; w++) {
            emu_warp_bar[k][w] = emu_bar();
            emu_warp_bar[k][w].count = std::min(32u, nt - 32 * w);
        }
    }
    emu_cluster_bar = emu_bar();
    emu_cluster_bar.count = n;
    for (unsigned i = 0; i < n; i++) {
        emu_fiber &f = emu_f[i];
        const unsigned k = i / nt, t = i % nt;
        if (!emu_fibers) { /* one thread after another, each to its end */
            f.rank = k, f.tid = dim3(t % blockDim.x, t / blockDim.x % blockDim.y, t / (blockDim.x * blockDim.y));
            f.bx = bx0 + k, f.by = by, f.bz = bz, f.lane = t & 31, f.warp = t >> 5;
            emu_cur = &f;
            threadIdx = f.tid, blockIdx = dim3(f.bx, by, bz), emu_k = k;
            (*emu_body)();
            continue;
        }
        f.rank = k;
        f.tid = dim3(t % blockDim.x, t / blockDim.x % blockDim.y, t / (blockDim.x * blockDim.y));
        f.bx = bx0 + k, f.by = by, f.bz = bz;
        f.lane = t & 31, f.warp = t >> 5;
        f.done = false;
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = emu_stacks + (size_t)i * EMU_STACK;
        f.ctx.uc_stack.ss_size = EMU_STACK;
        f.ctx.uc_link = nullptr;
        f.started = false;
        makecontext(&f.ctx, emu_fiber_main, 0);
    }
    for (unsigned live = emu_fibers ? n : 0; live;) {
        const unsigned long long before = emu_progress;
        live = 0;
        for (unsigned i = 0; i < n; i++) {
            if (emu_f[i].done)
                continue;
            emu_switch_to(emu_f[i]);
            live += !emu_f[i].done;
        }
        if (live && emu_progress == before) {
            for (unsigned i = 0; i < n; i++)
                if (!emu_f[i].done) {
                    fprintf(stderr, "emu: deadlock in block (%u, %u, %u): thread %u waits at a barrier that "
                                    "cannot complete (%u of the cluster's %u threads have returned)\n",
                            emu_f[i].bx, by, bz, i % nt, n - live, n);
                    break;
                }
            exit(3);
        }
    }
    emu_cur = nullptr;
}
EMU_FN void emu_launch(dim3 grid, dim3 block, unsigned ncl, const std::function<void()> &body, bool fibers) {
    if (ncl < 1 || ncl > EMU_MAXCL || grid.x % ncl)
        emu_die("cluster of %s%lld blocks: not emulated", "", (long long)ncl);
    if (block.x * block.y * block.z > 1024 || block.x * block.y * block.z == 0)
        emu_die("block of %s%lld threads", "", (long long)(block.x * block.y * block.z));
    gridDim = grid;
    blockDim = block;
    emu_ncl = ncl;
    emu_body = &body;
    emu_fibers = fibers;
    /* EMU_BLOCK_ORDER=shuffle: the x clusters in a fixed scrambled order
     * (odd strides of the cluster count), so a result that depends on which
     * block finishes last (a ticket's combine) shows as different bits */
    const char *ord = getenv("EMU_BLOCK_ORDER");
    const bool shuffle = ord && !strcmp(ord, "shuffle");
    const unsigned nx = grid.x / ncl;
    unsigned step = 1;
    if (shuffle && nx > 2) /* an odd step coprime to nx, past nx / 2: neighbours far apart */
        for (step = nx / 2 | 1; std::gcd(step, nx) != 1; step += 2)
            ;
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned i = 0; i < nx; i++)
                emu_run_cluster((unsigned)((shuffle ? (nx - 1 - (unsigned long long)i * step % nx) : i) * ncl), y,
                                z, ncl);
}
/* tests/emu/rows.cpp's form: a 1-D grid of 1-D blocks */
EMU_FN void emu_launch(unsigned grid, unsigned block, unsigned ncl, const std::function<void()> &body) {
    emu_launch(dim3(grid), dim3(block), ncl, body);
}
/* tests/emu/colpart.cpp's form: a 1-D grid of [bx, by] blocks (a columns
 * kernel's 2-D block, or a rows kernel's without a cluster) */
EMU_FN void emu_launch_xy(unsigned grid, unsigned bx, unsigned by, const std::function<void()> &body) {
    emu_launch(dim3(grid), dim3(bx, by), 1, body);
}
#endif /* EMU_RT_EXTERN */

/* ---- warp collectives: each lane's input, the last lane computes every output ---- */
struct emu_warp_x {
    unsigned char in[32][48], out[32][16];
    unsigned n; /* lanes in this warp */
};
EMU_STATE emu_warp_x emu_wx[EMU_MAXCL][32];
template <class F> static inline void emu_collective(const void *in, size_t nin, void *out, size_t nout, F compute) {
    emu_warp_x &x = emu_wx[emu_k][emu_cur->warp];
    memcpy(x.in[emu_cur->lane], in, nin);
    emu_bar &b = emu_warp_bar[emu_k][emu_cur->warp];
    emu_bar_wait(b, [&] {
        x.n = b.count;
        compute(x);
    });
    memcpy(out, x.out[emu_cur->lane], nout);
}
/* a shuffle: lane l takes lane src(l)'s value (its own where src is out of the warp) */
template <class T> static inline T emu_shfl(T v, unsigned src) {
    static_assert(sizeof(T) <= 40, "shuffled type too large");
    unsigned char buf[48];
    memcpy(buf, &src, 4);
    memcpy(buf + 4, &v, sizeof v);
    T r;
    emu_collective(buf, 4 + sizeof v, &r, sizeof r, [](emu_warp_x &x) {
        for (unsigned l = 0; l < x.n; l++) {
            unsigned s;
            memcpy(&s, x.in[l], 4);
            memcpy(x.out[l], x.in[s < x.n ? s : l] + 4, sizeof(T));
        }
    });
    return r;
}
template <class T> static inline T __shfl_sync(unsigned, T v, int src, int width = 32) {
    const unsigned l = emu_cur->lane;
    return emu_shfl(v, (l & ~(unsigned)(width - 1)) + ((unsigned)src & (width - 1)));
}
template <class T> static inline T __shfl_xor_sync(unsigned, T v, int o, int width = 32) {
    const unsigned l = emu_cur->lane, s = l ^ (unsigned)o;
    return emu_shfl(v, (s & ~(unsigned)(width - 1)) == (l & ~(unsigned)(width - 1)) ? s : l);
}
template <class T> static inline T __shfl_up_sync(unsigned, T v, unsigned d, int width = 32) {
    const unsigned l = emu_cur->lane;
    return emu_shfl(v, (l & (width - 1)) >= d ? l - d : l);
}
template <class T> static inline T __shfl_down_sync(unsigned, T v, unsigned d, int width = 32) {
    const unsigned l = emu_cur->lane;
    return emu_shfl(v, (l & (width - 1)) + d < (unsigned)width ? l + d : l);
}
static inline unsigned __ballot_sync(unsigned, int p) {
    unsigned v = p != 0, r;
    emu_collective(&v, 4, &r, 4, [](emu_warp_x &x) {
        unsigned m = 0;
        for (unsigned l = 0; l < x.n; l++)
            m |= (x.in[l][0] ? 1u : 0u) << l;
        for (unsigned l = 0; l < x.n; l++)
            memcpy(x.out[l], &m, 4);
    });
    return r;
}
static inline int __any_sync(unsigned m, int p) { return __ballot_sync(m, p) != 0; }
static inline int __all_sync(unsigned m, int p) {
    const unsigned n = emu_warp_bar[emu_k][emu_cur->warp].count;
    return __ballot_sync(m, p) == (n == 32 ? 0xffffffffu : (1u << n) - 1);
}
static inline unsigned __activemask() { return emu_warp_bar[emu_k][emu_cur->warp].count == 32 ? 0xffffffffu : (1u << emu_warp_bar[emu_k][emu_cur->warp].count) - 1; }

/* ---- memory and bits ---- */
template <class T> static inline void emu_aligned(const T *p, const char *what) {
    if ((uintptr_t)p % alignof(T))
        emu_die("misaligned %s (a GPU faults)", what, 0);
}
template <class T> static inline T __ldg(const T *p) { emu_aligned(p, "__ldg"); return *p; }
template <class T> static inline T __ldcg(const T *p) { emu_aligned(p, "__ldcg"); return *p; }
template <class T> static inline T __ldcs(const T *p) { emu_aligned(p, "__ldcs"); return *p; }
template <class T> static inline T __ldlu(const T *p) { emu_aligned(p, "__ldlu"); return *p; }
template <class T> static inline void __stcg(T *p, T v) { emu_aligned(p, "__stcg"); *p = v; }
template <class T> static inline void __stcs(T *p, T v) { emu_aligned(p, "__stcs"); *p = v; }
template <class T> static inline T atomicAdd(T *p, T v) { T o = *p; *p = o + v; return o; }
template <class T> static inline T atomicMax(T *p, T v) { T o = *p; *p = o > v ? o : v; return o; }
template <class T> static inline T atomicMin(T *p, T v) { T o = *p; *p = o < v ? o : v; return o; }
template <class T> static inline T atomicExch(T *p, T v) { T o = *p; *p = v; return o; }
template <class T> static inline T atomicCAS(T *p, T c, T v) { T o = *p; if (o == c) *p = v; return o; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
static inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
/* library math: glibc's, not CUDA's (results may differ in the last bits) */
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
/* CUDA's fast exp and log: glibc declares these names but does not export them */
static inline float emu_expf(float x) { return expf(x); }
static inline float emu_logf(float x) { return logf(x); }
#define __expf(x) emu_expf(x)
#define __logf(x) emu_logf(x)
static inline float __fdividef(float a, float b) { return a / b; }
static inline float __saturatef(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }

/* ---- 16-bit floats, round to nearest even (PTX cvt.rn) ---- */
static inline float emu_h2f(unsigned short h) {
    const unsigned s = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 31, m = h & 1023;
    unsigned u;
    if (e == 31)
        u = s | 0x7f800000u | (m << 13);
    else if (e)
        u = s | ((e + 112) << 23) | (m << 13);
    else if (!m)
        u = s;
    else {
        const float f = (float)m * (1.0f / 16777216.0f); /* m x 2^-24, exact */
        memcpy(&u, &f, 4);
        u |= s;
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline unsigned short emu_f2h(float f) {
    unsigned x;
    memcpy(&x, &f, 4);
    const unsigned short s = (unsigned short)((x >> 16) & 0x8000u);
    const unsigned ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return 0x7fff; /* cvt's canonical NaN */
    if (ax >= 0x477ff000u)
        return s | 0x7c00; /* 65520 and past round to inf */
    if (ax < 0x38800000u) { /* below 2^-14: a subnormal (or zero), m x 2^-24 */
        const float a = fabsf(f) * 16777216.0f;
        return s | (unsigned short)nearbyintf(a); /* the default rounding: to nearest even */
    }
    unsigned h = ((((ax >> 23) - 112) << 10) | ((ax >> 13) & 1023));
    const unsigned rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return s | (unsigned short)h;
}
static inline float emu_bf2f(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
static inline unsigned short emu_f2bf(float f) {
    unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fff; /* cvt's canonical NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}
template <class I, class F> static inline I emu_rzi(F x) {
    if (x != x)
        return 0;
    if (x >= (F)std::numeric_limits<I>::max())
        return std::numeric_limits<I>::max();
    if (x <= (F)std::numeric_limits<I>::min())
        return std::numeric_limits<I>::min();
    return (I)x;
}

/* ---- mbarriers (helpers.cuh's cluster exchange): the 8 bytes hold the state ---- */
/* a shared::cluster address: below EMU_WIN this rank's offset (a shared::cta
 * address is one), else (rank + 1) * EMU_WIN + the offset (mapa.shared::cluster) */
static inline unsigned char *emu_cluster_ptr(unsigned long long a, int n) {
    const unsigned long long r = a / EMU_WIN;
    if (r == 0)
        return emu_shared_ptr(a, n);
    if (r > emu_ncl || a % EMU_WIN + n > EMU_WIN)
        emu_die("shared::cluster address %s%lld outside the cluster", "", (long long)a);
    return emu_window((unsigned)r - 1) + a % EMU_WIN;
}
struct emu_mbar { unsigned short count, pending; short tx; unsigned short phase; };
static inline emu_mbar *emu_mbar_at(unsigned char *p) {
    if ((uintptr_t)p % 8)
        emu_die("misaligned mbarrier%s", "");
    return (emu_mbar *)p;
}
/* the phase completes when every arrival is in and every expected byte landed */
static inline void emu_mbar_step(emu_mbar *b) {
    emu_progress++;
    if (b->pending == 0 && b->tx == 0) {
        b->phase++;
        b->pending = b->count;
    }
}
static inline void emu_mbar_init(unsigned char *p, unsigned count) {
    if (count == 0 || count > 0xffff)
        emu_die("mbarrier count %s%lld", "", (long long)count);
    *emu_mbar_at(p) = emu_mbar{(unsigned short)count, (unsigned short)count, 0, 0};
}
static inline void emu_mbar_arrive_tx(unsigned char *p, unsigned bytes) {
    emu_mbar *b = emu_mbar_at(p);
    if (b->count == 0 || b->pending == 0 || b->count == 0xffff)
        emu_die("arrive on an mbarrier not made (or past its count)%s", "");
    b->tx = (short)(b->tx + (int)bytes);
    b->pending--;
    emu_mbar_step(b);
}
/* st.async: the bytes land at once, then count on the destination's mbarrier */
static inline void emu_st_async(unsigned long long dst, unsigned v, unsigned long long bar) {
    memcpy(emu_cluster_ptr(dst, 4), &v, 4);
    emu_mbar *b = emu_mbar_at(emu_cluster_ptr(bar, 8));
    if (b->count == 0 || b->count == 0xffff)
        emu_die("st.async counted on an mbarrier not made%s", "");
    b->tx = (short)(b->tx - 4);
    emu_mbar_step(b);
}
/* whether the phase of parity ph has completed; if not, others run first */
static inline bool emu_mbar_try(unsigned char *p, unsigned ph) {
    const emu_mbar *b = emu_mbar_at(p);
    if (b->count == 0 || b->count == 0xffff)
        emu_die("wait on an mbarrier not made%s", "");
    if ((b->phase & 1u) != (ph & 1u))
        return true;
    emu_yield();
    return false;
}

/* ---- cp.async: copies wait in their thread's list until a wait retires their group ---- */
static inline void emu_cp_async(unsigned long long dst, const void *src, int n, int srcn) {
    if (n != 4 && n != 8 && n != 16)
        emu_die("cp.async of %s%lld bytes", "", (long long)n);
    if (dst % n || (uintptr_t)src % n)
        emu_die("misaligned cp.async (%s%lld bytes)", "", (long long)n);
    if (srcn < 0 || srcn > n)
        emu_die("cp.async source size %s%lld", "", (long long)srcn);
    emu_cur->cps.push_back(emu_cp{emu_shared_ptr(dst, n), (const unsigned char *)src, n, srcn, emu_cur->cp_open});
}
static inline void emu_cp_commit() { emu_cur->cp_open++; }
/* every committed group but the newest `keep` done */
static inline void emu_cp_wait(long long keep) {
    std::vector<emu_cp> &v = emu_cur->cps;
    const long long upto = emu_cur->cp_open - keep; /* groups below this one complete */
    size_t j = 0;
    for (size_t i = 0; i < v.size(); i++) {
        if (v[i].group < upto) {
            memcpy(v[i].dst, v[i].src, v[i].srcn);
            memset(v[i].dst + v[i].srcn, 0, v[i].n - v[i].srcn);
        } else {
            v[j++] = v[i];
        }
    }
    v.resize(j);
}

/* ---- mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}: a (4 regs), b (2), c (4) -> d (4) ---- */
static inline void emu_mma_m16n8k16(bool bf16, float *d, const unsigned *a, const unsigned *b, const float *c) {
    unsigned char in[40];
    memcpy(in, a, 16);
    memcpy(in + 16, b, 8);
    memcpy(in + 24, c, 16);
    auto cv = [bf16](unsigned short h) { return bf16 ? emu_bf2f(h) : emu_h2f(h); };
    emu_collective(in, 40, d, 16, [&](emu_warp_x &x) {
        if (x.n != 32)
            emu_die("mma.sync in a warp of %s%lld threads", "", (long long)x.n);
        float A[16][16], B[16][8], C[16][8];
        for (int l = 0; l < 32; l++) {
            const int g = l >> 2, t = l & 3;
            unsigned ar[4], br[2];
            float cr[4];
            memcpy(ar, x.in[l], 16);
            memcpy(br, x.in[l] + 16, 8);
            memcpy(cr, x.in[l] + 24, 16);
            for (int i = 0; i < 8; i++) { /* a_i: row g (+8 for a2, a3, a6, a7), column 2t + (i & 1) (+8 from a4) */
                const unsigned short h = (unsigned short)(ar[i >> 1] >> (16 * (i & 1)));
                A[g + ((i >> 1) & 1) * 8][2 * t + (i & 1) + (i >= 4 ? 8 : 0)] = cv(h);
            }
            for (int i = 0; i < 4; i++) { /* b_i: row 2t + (i & 1) (+8 from b2), column g */
                const unsigned short h = (unsigned short)(br[i >> 1] >> (16 * (i & 1)));
                B[2 * t + (i & 1) + (i >= 2 ? 8 : 0)][g] = cv(h);
            }
            for (int i = 0; i < 4; i++) /* c_i: row g (+8 for c2, c3), column 2t + (i & 1) */
                C[g + (i >= 2 ? 8 : 0)][2 * t + (i & 1)] = cr[i];
        }
        for (int l = 0; l < 32; l++) {
            const int g = l >> 2, t = l & 3;
            float dr[4];
            for (int i = 0; i < 4; i++) {
                const int r = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
                double s = C[r][col]; /* the products exact, one rounding at the end */
                for (int k = 0; k < 16; k++)
                    s += (double)A[r][k] * (double)B[k][col];
                dr[i] = (float)s;
            }
            memcpy(x.out[l], dr, 16);
        }
    });
}
/* movmatrix.sync.aligned.m8n8.trans.b16: lane l holds row l / 4, columns 2(l % 4) and + 1 */
static inline unsigned emu_movmatrix_trans(unsigned v) {
    unsigned r;
    emu_collective(&v, 4, &r, 4, [](emu_warp_x &x) {
        if (x.n != 32)
            emu_die("movmatrix in a warp of %s%lld threads", "", (long long)x.n);
        unsigned short m[8][8];
        for (int l = 0; l < 32; l++) {
            unsigned w;
            memcpy(&w, x.in[l], 4);
            m[l >> 2][2 * (l & 3)] = (unsigned short)w;
            m[l >> 2][2 * (l & 3) + 1] = (unsigned short)(w >> 16);
        }
        for (int l = 0; l < 32; l++) {
            const int row = l >> 2, c = 2 * (l & 3);
            const unsigned w = (unsigned)m[c][row] | (unsigned)m[c + 1][row] << 16;
            memcpy(x.out[l], &w, 4);
        }
    });
    return r;
}
/* ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16: lanes 8j .. 8j + 7 give the rows of matrix j */
static inline void emu_ldmatrix(int num, bool trans, unsigned *d, unsigned long long addr) {
    unsigned char in[8];
    memcpy(in, &addr, 8);
    emu_collective(in, 8, d, 4 * num, [&](emu_warp_x &x) {
        if (x.n != 32)
            emu_die("ldmatrix in a warp of %s%lld threads", "", (long long)x.n);
        unsigned short m[4][8][8];
        for (int j = 0; j < num; j++)
            for (int r = 0; r < 8; r++) {
                unsigned long long a;
                memcpy(&a, x.in[8 * j + r], 8);
                if (a % 16)
                    emu_die("ldmatrix row address %s%lld not 16-byte aligned", "", (long long)a);
                memcpy(m[j][r], emu_shared_ptr(a, 16), 16);
            }
        for (int l = 0; l < 32; l++) {
            unsigned w[4];
            const int row = l >> 2, c = 2 * (l & 3);
            for (int j = 0; j < num; j++)
                w[j] = trans ? (unsigned)m[j][c][row] | (unsigned)m[j][c + 1][row] << 16
                             : (unsigned)m[j][row][c] | (unsigned)m[j][row][c + 1] << 16;
            memcpy(x.out[l], w, 4 * num);
        }
    });
}

/* ---- inline PTX: unit.py makes each asm statement an emu_ptx, decoded once ---- */
/* 0: the MUFU approximations (rcp, lg2, ex2) correctly rounded; +1 / -1: each
 * result off by its documented bound upward / downward (fastmath.cpp's
 * sweeps); EMU_APPROX_BIAS in the environment sets it */
EMU_STATE int emu_approx_bias EMU_INIT(getenv("EMU_APPROX_BIAS") ? atoi(getenv("EMU_APPROX_BIAS")) : 0);
struct emu_arg {
    void *p;        /* the operand's variable (outputs) or bits (inputs) */
    int size;
    char c;         /* its constraint letter */
    unsigned long long bits;
};
template <class T> static inline emu_arg emu_out(char c, T &x) { return emu_arg{(void *)&x, (int)sizeof(T), c, 0}; }
template <class T> static inline emu_arg emu_in(char c, const T &x) {
    emu_arg a{nullptr, 0, c, 0};
    if constexpr (std::is_pointer<T>::value) {
        a.bits = (unsigned long long)(uintptr_t)x, a.size = 8;
    } else if (c == 'f') {
        const float f = (float)x;
        memcpy(&a.bits, &f, 4), a.size = 4;
    } else if (c == 'd') {
        const double f = (double)x;
        memcpy(&a.bits, &f, 8), a.size = 8;
    } else if (c == 'h') {
        a.bits = (unsigned short)x, a.size = 2;
    } else if (c == 'r') {
        a.bits = (unsigned)x, a.size = 4;
    } else {
        a.bits = (unsigned long long)(long long)x, a.size = 8; /* l, n */
    }
    return a;
}
struct emu_ptx {
    struct opnd { std::vector<int> regs; bool mem = false; std::string lit; };
    struct insn { std::string op; std::vector<opnd> ops; int kind = 0; long long num = 0; bool trans = false; };
    /* run()'s cases (kind_of) */
    enum { K_BAD, K_NOP, K_CVT_F32_F16, K_CVT_F16_F32, K_CVT_BF16_F32, K_CVT_F32_BF16, K_CVT_BF16X2, K_CVT_F16X2,
           K_EX2, K_RCP, K_LG2, K_LG2_FTZ, K_MUL_F16X2, K_FMA_BF16X2, K_RZI_S32_F32, K_RZI_S32_F64,
           K_RZI_S64_F32, K_RZI_S64_F64, K_MOV_B32, K_NCTARANK, K_CTARANK, K_CL_ARRIVE, K_CL_WAIT,
           K_MAPA_CLUSTER, K_MBAR_INIT, K_MBAR_EXPECT, K_ST_ASYNC, K_MBAR_TRY, K_SELP, K_MAPA_U64, K_CP_ASYNC,
           K_CP_COMMIT, K_CP_WAIT, K_CP_WAIT_ALL, K_MMA_BF16, K_MMA_F16, K_MOVMATRIX, K_LDMATRIX, K_MAX_NAN,
           K_MIN_NAN };
    static int kind_of(const insn &in);
    /* ldmatrix's .xN */
    static int op_digit(const std::string &op) { return op[sizeof "ldmatrix.sync.aligned.m8n8.x" - 1] - '0'; }
    std::vector<insn> code;
    std::string text;
    explicit emu_ptx(const char *t);
    static unsigned long long in_u(const emu_arg &a) {
        if (a.p) {
            unsigned long long v = 0;
            memcpy(&v, a.p, a.size);
            return v;
        }
        return a.bits;
    }
    static float in_f(const emu_arg &a) { unsigned u = (unsigned)in_u(a); float f; memcpy(&f, &u, 4); return f; }
    static double in_d(const emu_arg &a) { unsigned long long u = in_u(a); double f; memcpy(&f, &u, 8); return f; }
    static void put(const emu_arg &a, unsigned long long v) {
        if (!a.p)
            emu_die("PTX writes an input operand%s", "");
        memcpy(a.p, &v, a.size);
    }
    static void putf(const emu_arg &a, float f) { unsigned u; memcpy(&u, &f, 4); put(a, u); }
    static bool has(const std::string &op, const char *s) { return op.find(s) != std::string::npos; }
    void bad(const insn &in) const { emu_die("PTX not emulated: %s", (in.op + " in \"" + text + "\"").c_str()); }
    void run(std::initializer_list<emu_arg> il) const;
};
#ifndef EMU_RT_EXTERN
EMU_MEMBER emu_ptx::emu_ptx(const char *t) : text(t) {
    std::string s(t);
    size_t i = 0;
    while (i < s.size()) {
        size_t j = s.find(';', i);
        if (j == std::string::npos)
            j = s.size();
        std::string one = s.substr(i, j - i);
        i = j + 1;
        size_t a = one.find_first_not_of(" \t\n");
        if (a == std::string::npos)
            continue;
        one = one.substr(a);
        insn in;
        size_t sp = one.find_first_of(" \t");
        in.op = one.substr(0, sp);
        std::string rest = sp == std::string::npos ? "" : one.substr(sp);
        int depth = 0;
        std::string cur;
        auto flush = [&] {
            opnd o;
            for (size_t k = 0; k < cur.size(); k++) {
                if (cur[k] == '[')
                    o.mem = true;
                if (cur[k] == '%' && k + 1 < cur.size() && isdigit((unsigned char)cur[k + 1]))
                    o.regs.push_back(atoi(cur.c_str() + k + 1));
                else if (cur[k] == '%' && k + 1 < cur.size() && cur[k + 1] == '%')
                    o.lit = cur.substr(k + 2), k = cur.size();
            }
            if (o.regs.empty() && o.lit.empty()) {
                size_t b = cur.find_first_not_of(" \t\n");
                if (b != std::string::npos)
                    o.lit = cur.substr(b);
            }
            if (!cur.empty() && (!o.regs.empty() || !o.lit.empty()))
                in.ops.push_back(o);
            cur.clear();
        };
        for (char ch : rest) {
            if (ch == '{' || ch == '[')
                depth++;
            if (ch == '}' || ch == ']')
                depth--;
            if (ch == ',' && depth == 0)
                flush();
            else
                cur += ch;
        }
        flush();
        in.kind = kind_of(in);
        /* the literal parts run() reads, decoded once too */
        if (in.kind == K_LDMATRIX) {
            in.num = op_digit(in.op);
            in.trans = has(in.op, ".trans");
        } else if (in.kind == K_CP_ASYNC) {
            in.num = atoi(in.ops.at(2).lit.c_str());
        } else if (in.kind == K_CP_WAIT && in.ops.at(0).regs.empty()) {
            in.num = atoll(in.ops.at(0).lit.c_str());
        }
        code.push_back(in);
    }
}
/* which of run()'s cases an instruction is: decided once, at decoding (the
 * tests below were run()'s own, on every execution) */
EMU_MEMBER int emu_ptx::kind_of(const insn &in) {
    const std::string &op = in.op;
    if (op == "cvt.f32.f16") return K_CVT_F32_F16;
    if (op == "cvt.rn.f16.f32") return K_CVT_F16_F32;
    if (op == "cvt.rn.bf16.f32") return K_CVT_BF16_F32;
    if (op == "cvt.f32.bf16") return K_CVT_F32_BF16;
    if (op == "cvt.rn.bf16x2.f32") return K_CVT_BF16X2;
    if (op == "cvt.rn.f16x2.f32") return K_CVT_F16X2;
    if (op == "max.NaN.f32") return K_MAX_NAN;
    if (op == "min.NaN.f32") return K_MIN_NAN;
    if (op == "ex2.approx.ftz.f32") return K_EX2;
    if (op == "rcp.approx.ftz.f32") return K_RCP;
    if (op == "lg2.approx.f32") return K_LG2;
    if (op == "lg2.approx.ftz.f32") return K_LG2_FTZ;
    if (op == "mul.rn.f16x2") return K_MUL_F16X2;
    if (op == "fma.rn.bf16x2") return K_FMA_BF16X2;
    if (op == "cvt.rzi.s32.f32") return K_RZI_S32_F32;
    if (op == "cvt.rzi.s32.f64") return K_RZI_S32_F64;
    if (op == "cvt.rzi.s64.f32") return K_RZI_S64_F32;
    if (op == "cvt.rzi.s64.f64") return K_RZI_S64_F64;
    if (op == "mov.b32" && !in.ops.at(1).regs.empty()) return K_MOV_B32;
    if (op == "mov.u32" && in.ops.at(1).lit == "cluster_nctarank") return K_NCTARANK;
    if (op == "mov.u32" && in.ops.at(1).lit == "cluster_ctarank") return K_CTARANK;
    if (op.rfind("barrier.cluster.arrive", 0) == 0) return K_CL_ARRIVE;
    if (op.rfind("barrier.cluster.wait", 0) == 0) return K_CL_WAIT;
    if (op == "mapa.shared::cluster.u32") return K_MAPA_CLUSTER;
    if (op == "mbarrier.init.shared::cta.b64") return K_MBAR_INIT;
    if (op == "fence.mbarrier_init.release.cluster") return K_NOP;
    if (op == "mbarrier.arrive.expect_tx.shared::cta.b64") return K_MBAR_EXPECT;
    if (op == "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32") return K_ST_ASYNC;
    /* { .reg .pred p; mbarrier.try_wait.parity... p, [bar], ph; selp.u32 d, 1, 0, p; } */
    if (op == "mbarrier.try_wait.parity.shared::cta.b64") return K_MBAR_TRY;
    if (op == "selp.u32" && in.ops.size() == 4 && in.ops[3].lit == "p") return K_SELP;
    if (op[0] == '{' || op[0] == '}') return K_NOP; /* the block around a predicate (.reg .pred p) */
    if (op == "mapa.u64") return K_MAPA_U64;
    if (op.rfind("cp.async.c", 0) == 0 && has(op, ".shared.global")) return K_CP_ASYNC;
    if (op == "cp.async.commit_group") return K_CP_COMMIT;
    if (op == "fence.acq_rel.gpu") return K_NOP; /* blocks run one at a time here */
    if (op == "cp.async.wait_group") return K_CP_WAIT;
    if (op == "cp.async.wait_all") return K_CP_WAIT_ALL;
    if (op.rfind("mma.sync.aligned.m16n8k16.row.col.f32.", 0) == 0) {
        if (has(op, ".f32.bf16.bf16.f32"))
            return K_MMA_BF16;
        if (has(op, ".f32.f16.f16.f32"))
            return K_MMA_F16;
        return K_BAD;
    }
    if (op == "movmatrix.sync.aligned.m8n8.trans.b16") return K_MOVMATRIX;
    if (op.rfind("ldmatrix.sync.aligned.m8n8.x", 0) == 0) return K_LDMATRIX;
    return K_BAD;
}
EMU_MEMBER void emu_ptx::run(std::initializer_list<emu_arg> il) const {
    const emu_arg *A = il.begin();
    const size_t nA = il.size();
    bool pred = false; /* the block's .pred p */
    for (const insn &in : code) {
        const std::string &op = in.op;
        auto R = [&](int o, int k = 0) -> const emu_arg & {
            const int r = in.ops.at(o).regs.at(k);
            if (r < 0 || (size_t)r >= nA)
                emu_die("PTX operand %%%s past the asm's operands", std::to_string(r).c_str());
            return A[r];
        };
        switch (in.kind) {
        case K_CVT_F32_F16: putf(R(0), emu_h2f((unsigned short)in_u(R(1)))); break;
        case K_CVT_F16_F32: put(R(0), emu_f2h(in_f(R(1)))); break;
        case K_CVT_BF16_F32: put(R(0), emu_f2bf(in_f(R(1)))); break;
        case K_CVT_F32_BF16: putf(R(0), emu_bf2f((unsigned short)in_u(R(1)))); break;
        /* d = {a in the upper half, b in the lower} */
        case K_CVT_BF16X2: put(R(0), (unsigned)emu_f2bf(in_f(R(1))) << 16 | emu_f2bf(in_f(R(2)))); break;
        case K_CVT_F16X2: put(R(0), (unsigned)emu_f2h(in_f(R(1))) << 16 | emu_f2h(in_f(R(2)))); break;
        /* NaN if either is (the canonical one), else the larger / smaller */
        case K_MAX_NAN:
        case K_MIN_NAN: {
            const float a = in_f(R(1)), b = in_f(R(2));
            putf(R(0), a != a || b != b ? __uint_as_float(0x7fffffffu)
                       : in.kind == K_MAX_NAN ? std::fmax(a, b) : std::fmin(a, b));
            break;
        }
        case K_EX2: { /* exact here; the MUFU's is within 2 ulp
                       * (emu_approx_bias: off by those 2) */
            float r = exp2f(in_f(R(1)));
            for (int i = 0; i < 2 && emu_approx_bias && std::isfinite(r) && r != 0.0f; i++)
                r = nextafterf(r, emu_approx_bias > 0 ? INFINITY : -INFINITY);
            putf(R(0), fabsf(r) < 1.17549435e-38f ? 0.0f : r);
            break;
        }
        /* the MUFU's approximations, correctly rounded here, or (emu_approx_bias)
         * off by the PTX ISA's bound in one direction: rcp 1 ulp, lg2 2^-22.6 */
        case K_RCP: {
            const float a = in_f(R(1));
            float r = fabsf(a) < 1.17549435e-38f ? copysignf(INFINITY, a) : (float)(1.0 / (double)a);
            if (emu_approx_bias && std::isfinite(r) && r != 0.0f)
                r = nextafterf(r, emu_approx_bias > 0 ? INFINITY : -INFINITY);
            putf(R(0), fabsf(r) < 1.17549435e-38f ? copysignf(0.0f, r) : r);
            break;
        }
        case K_LG2:
        case K_LG2_FTZ: {
            float a = in_f(R(1));
            if (in.kind == K_LG2_FTZ && fabsf(a) < 1.17549435e-38f)
                a = copysignf(0.0f, a); /* a subnormal input is flushed */
            const double l = log2((double)a);
            putf(R(0), (float)(std::isfinite(l) ? l + emu_approx_bias * exp2(-22.6) : l));
            break;
        }
        /* per 16-bit half: the f32 product of two f16/bf16 is exact, then one rounding
         * (fma: exact in double for the -0 addend matmul.cuh gives, rounded once) */
        case K_MUL_F16X2: {
            const unsigned a = (unsigned)in_u(R(1)), b = (unsigned)in_u(R(2));
            put(R(0), (unsigned)emu_f2h(emu_h2f(a >> 16) * emu_h2f(b >> 16)) << 16 |
                          emu_f2h(emu_h2f(a & 0xffff) * emu_h2f(b & 0xffff)));
            break;
        }
        case K_FMA_BF16X2: {
            const unsigned a = (unsigned)in_u(R(1)), b = (unsigned)in_u(R(2)), c = (unsigned)in_u(R(3));
            auto h = [](unsigned x, unsigned y, unsigned z) {
                return emu_f2bf((float)((double)emu_bf2f(x) * emu_bf2f(y) + emu_bf2f(z)));
            };
            put(R(0), (unsigned)h(a >> 16, b >> 16, c >> 16) << 16 | h(a & 0xffff, b & 0xffff, c & 0xffff));
            break;
        }
        case K_RZI_S32_F32: put(R(0), (unsigned)emu_rzi<int>(in_f(R(1)))); break;
        case K_RZI_S32_F64: put(R(0), (unsigned)emu_rzi<int>(in_d(R(1)))); break;
        case K_RZI_S64_F32: put(R(0), (unsigned long long)emu_rzi<long long>(in_f(R(1)))); break;
        case K_RZI_S64_F64: put(R(0), (unsigned long long)emu_rzi<long long>(in_d(R(1)))); break;
        case K_MOV_B32: put(R(0), (unsigned)in_u(R(1))); break;
        case K_NCTARANK: put(R(0), emu_ncl); break;
        case K_CTARANK: put(R(0), emu_k); break;
        case K_CL_ARRIVE: emu_cluster_arrive(); break;
        case K_CL_WAIT: emu_cluster_wait(); break;
        case K_MAPA_CLUSTER: {
            const unsigned long long a = in_u(R(1)), r = in_u(R(2));
            if (a >= EMU_WIN || r >= emu_ncl)
                emu_die("mapa.shared::cluster of %s%lld", "", (long long)a);
            put(R(0), (r + 1) * EMU_WIN + a);
            break;
        }
        case K_MBAR_INIT: emu_mbar_init(emu_shared_ptr(in_u(R(0)), 8), (unsigned)in_u(R(1))); break;
        case K_MBAR_EXPECT: emu_mbar_arrive_tx(emu_shared_ptr(in_u(R(1)), 8), (unsigned)in_u(R(2))); break;
        case K_ST_ASYNC: emu_st_async(in_u(R(0)), (unsigned)in_u(R(1)), in_u(R(2))); break;
        case K_MBAR_TRY: pred = emu_mbar_try(emu_shared_ptr(in_u(R(1)), 8), (unsigned)in_u(R(2))); break;
        case K_SELP: put(R(0), pred ? 1 : 0); break;
        case K_NOP: break;
        case K_MAPA_U64: put(R(0), (uintptr_t)emu_cluster_map((const char *)(uintptr_t)in_u(R(1)), (unsigned)in_u(R(2)))); break;
        case K_CP_ASYNC: {
            const int n = (int)in.num;
            const int srcn = in.ops.size() > 3 ? (int)in_u(R(3)) : n;
            emu_cp_async(in_u(R(0)), (const void *)(uintptr_t)in_u(R(1)), n, srcn);
            break;
        }
        case K_CP_COMMIT: emu_cp_commit(); break;
        case K_CP_WAIT: emu_cp_wait(in.ops.at(0).regs.empty() ? in.num : (long long)in_u(R(0))); break;
        case K_CP_WAIT_ALL: emu_cp_commit(); emu_cp_wait(0); break;
        case K_MMA_BF16:
        case K_MMA_F16: {
            unsigned a[4], b[2];
            float c[4], d[4];
            for (int k = 0; k < 4; k++) a[k] = (unsigned)in_u(R(1, k));
            for (int k = 0; k < 2; k++) b[k] = (unsigned)in_u(R(2, k));
            for (int k = 0; k < 4; k++) c[k] = in_f(R(3, k));
            emu_mma_m16n8k16(in.kind == K_MMA_BF16, d, a, b, c);
            for (int k = 0; k < 4; k++) putf(R(0, k), d[k]);
            break;
        }
        case K_MOVMATRIX: put(R(0), emu_movmatrix_trans((unsigned)in_u(R(1)))); break;
        case K_LDMATRIX: {
            const int num = (int)in.num;
            unsigned d[4];
            emu_ldmatrix(num, in.trans, d, in_u(R(1)));
            for (int k = 0; k < num; k++) put(R(0, k), d[k]);
            break;
        }
        default: bad(in);
        }
    }
}
#endif /* EMU_RT_EXTERN */

/* runtime/exec.c's sizing of a row kernel's launch (clusters up to 16, the
 * portable 8 first, blocks of 256 threads or more), from the row length:
 * rows.cpp sizes its launches with it */
/* bmax: the kernel's block[0] (sched: 512 for TENSORC_ROWS_REGS=32 rows) */
EMU_FN void emu_size(long long len, int per, unsigned *ncl, unsigned *block, unsigned bmax = 1024)
#ifdef EMU_RT_EXTERN
    ;
#else
{
    unsigned cl = 1, b = 256;
    if (len > (long long)bmax * per) {
        for (int tries = 0; tries < 4; tries++) {
            unsigned cap = tries % 2 == 0 ? 8 : 16, bm = tries < 2 && bmax > 512 ? 512 : bmax;
            for (b = 256;; b *= 2) {
                cl = 1;
                while (cl < cap && len > (long long)b * per * cl)
                    cl *= 2;
                if (len <= (long long)b * per * cl || b >= bm)
                    break;
            }
            if (len <= (long long)b * per * cl)
                break;
        }
        len = (len + cl - 1) / cl;
    }
    long long want = (len + per - 1) / per;
    unsigned bb = 32;
    while (bb < bmax && (long long)bb < want)
        bb *= 2;
    *ncl = cl;
    *block = bb;
}
#endif
#endif
