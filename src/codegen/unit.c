/* unit.c - one NVRTC program: the helpers, then every kernel of the unit's
 * functions, plus one launch plan per function.
 *
 * The helpers are the few things the kernels need from CUDA's headers,
 * written out (the headers cost NVRTC 15-20 ms each): half and bfloat16
 * conversions by bit pattern or one PTX instruction, NaN-propagating
 * max/min like torch.maximum, the activations of ops.def's CUDA column,
 * reductions across a warp, a block, a block's columns and a grid's
 * partials, and 16-byte vector loads and stores.
 */
#include "codegen/cg.h"

#include <stdio.h>
#include <string.h>

static const char helpers[] =
    "typedef unsigned long long tc_u64;\n"
    "/* rows kernels: a register cap for occupancy (__maxnreg__ is CUDA 12.4+) */\n"
    "#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ >= 1204\n"
    "#define TC_ROWS_BOUNDS __maxnreg__(40)\n"
    "#else\n"
    "#define TC_ROWS_BOUNDS __launch_bounds__(1024)\n"
    "#endif\n"
    "\n"
    "/* 16-bit floats are stored as their bits; math is done in f32 */\n"
    "__device__ __forceinline__ float tc_h2f(unsigned short h) {\n"
    "    float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f;\n"
    "}\n"
    "__device__ __forceinline__ unsigned short tc_f2h(float f) {\n"
    "    unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h;\n"
    "}\n"
    "__device__ __forceinline__ float tc_bf2f(unsigned short h) { return __uint_as_float((unsigned)h << 16); }\n"
    "__device__ __forceinline__ unsigned short tc_f2bf(float f) {\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "    unsigned short h; asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h;\n"
    "#else\n"
    "    unsigned u = __float_as_uint(f);\n"
    "    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u); /* NaN */\n"
    "    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */\n"
    "    return (unsigned short)(u >> 16);\n"
    "#endif\n"
    "}\n"
    "/* two at once, lo in the low half: one instruction on sm_80+ */\n"
    "__device__ __forceinline__ unsigned tc_f2bf2(float lo, float hi) {\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "    unsigned r; asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo)); return r;\n"
    "#else\n"
    "    return (unsigned)tc_f2bf(lo) | (unsigned)tc_f2bf(hi) << 16;\n"
    "#endif\n"
    "}\n"
    "__device__ __forceinline__ unsigned tc_f2h2(float lo, float hi) {\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "    unsigned r; asm(\"cvt.rn.f16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo)); return r;\n"
    "#else\n"
    "    return (unsigned)tc_f2h(lo) | (unsigned)tc_f2h(hi) << 16;\n"
    "#endif\n"
    "}\n"
    "__device__ __forceinline__ float tc_round_f16(float x) { return tc_h2f(tc_f2h(x)); }\n"
    "__device__ __forceinline__ float tc_round_bf16(float x) { return tc_bf2f(tc_f2bf(x)); }\n"
    "\n"
    "/* NaN-propagating, like torch.maximum / torch.minimum */\n"
    "template <class T> __device__ __forceinline__ T tc_max(T a, T b) { return a != a ? a : b != b ? b : a > b ? a : b; }\n"
    "template <class T> __device__ __forceinline__ T tc_min(T a, T b) { return a != a ? a : b != b ? b : a < b ? a : b; }\n"
    "template <class T> __device__ __forceinline__ T tc_clamp(T x, T lo, T hi) { return tc_min(tc_max(x, lo), hi); }\n"
    "template <class T> __device__ __forceinline__ T tc_relu(T x) { return x != x ? x : x > (T)0 ? x : (T)0; }\n"
    "template <class T> __device__ __forceinline__ T tc_sign(T x) { return x != x ? x : (T)((x > (T)0) - (x < (T)0)); }\n"
    "/* The edges, as docs/semantics.md (\"Edges\") and the interpreter define them.\n"
    " * Python's %: the sign of the divisor, a zero result signed like it; x % 0.0 is NaN */\n"
    "template <class T> __device__ __forceinline__ T tc_mod(T a, T b) {\n"
    "    T r = fmod(a, b);\n"
    "    if (r == (T)0) return copysign((T)0, b);\n"
    "    return ((r < (T)0) != (b < (T)0)) ? r + b : r;\n"
    "}\n"
    "__device__ __forceinline__ float tc_mod(float a, float b) {\n"
    "    float r = fmodf(a, b);\n"
    "    if (r == 0.0f) return copysignf(0.0f, b);\n"
    "    return ((r < 0.0f) != (b < 0.0f)) ? r + b : r;\n"
    "}\n"
    "/* integer % 0 is 0; % -1 is 0 (INT64_MIN % -1 would trap) */\n"
    "__device__ __forceinline__ long long tc_mod(long long a, long long b) {\n"
    "    if (b == 0 || b == -1) return 0;\n"
    "    long long r = a % b;\n"
    "    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
    "}\n"
    "__device__ __forceinline__ int tc_mod(int a, int b) { return (int)tc_mod((long long)a, (long long)b); }\n"
    "/* integer **: wraps (unsigned products: no signed overflow); a negative power\n"
    " * truncates toward zero, so it is 0 but for 1 and -1, and 0 ** negative is 0 */\n"
    "template <class T, class U> __device__ __forceinline__ T tc_ipow_(T a, T b) {\n"
    "    if (b < 0) return a == 1 ? (T)1 : a == -1 ? (T)(b % 2 == 0 ? 1 : -1) : (T)0;\n"
    "    U r = 1, x = (U)a;\n"
    "    for (unsigned long long e = (unsigned long long)b; e; e >>= 1) { if (e & 1) r *= x; x *= x; }\n"
    "    return (T)r;\n"
    "}\n"
    "__device__ __forceinline__ int tc_ipow(int a, int b) { return tc_ipow_<int, unsigned>(a, b); }\n"
    "__device__ __forceinline__ long long tc_ipow(long long a, long long b) { return tc_ipow_<long long, tc_u64>(a, b); }\n"
    "__device__ __forceinline__ bool tc_ipow(bool a, bool b) { return a || !b; }\n"
    "/* float to integer: toward zero, saturating, NaN 0 (cvt.rzi clamps; a C++ cast\n"
    " * of an out-of-range float is undefined) */\n"
    "__device__ __forceinline__ int tc_f2i32(float x) { int r; asm(\"cvt.rzi.s32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x)); return r; }\n"
    "__device__ __forceinline__ int tc_f2i32(double x) { int r; asm(\"cvt.rzi.s32.f64 %0, %1;\" : \"=r\"(r) : \"d\"(x)); return r; }\n"
    "__device__ __forceinline__ long long tc_f2i64(float x) { long long r; asm(\"cvt.rzi.s64.f32 %0, %1;\" : \"=l\"(r) : \"f\"(x)); return r; }\n"
    "__device__ __forceinline__ long long tc_f2i64(double x) { long long r; asm(\"cvt.rzi.s64.f64 %0, %1;\" : \"=l\"(r) : \"d\"(x)); return r; }\n"
    "__device__ __forceinline__ float tc_sigmoid(float x) {\n"
    "    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));\n"
    "    const float e = expf(x); return e / (1.0f + e);\n"
    "}\n"
    "__device__ __forceinline__ double tc_sigmoid(double x) {\n"
    "    if (x >= 0.0) return 1.0 / (1.0 + exp(-x));\n"
    "    const double e = exp(x); return e / (1.0 + e);\n"
    "}\n"
    "__device__ __forceinline__ float tc_gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }\n"
    "__device__ __forceinline__ double tc_gelu(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752)); }\n"
    "__device__ __forceinline__ float tc_gelu_tanh(float x) {\n"
    "    return 0.5f * x * (1.0f + tanhf(0.79788456080286535f * (x + 0.044715f * x * x * x)));\n"
    "}\n"
    "__device__ __forceinline__ double tc_gelu_tanh(double x) {\n"
    "    return 0.5 * x * (1.0 + tanh(0.79788456080286535 * (x + 0.044715 * x * x * x)));\n"
    "}\n"
    "__device__ __forceinline__ float tc_silu(float x) { return x * tc_sigmoid(x); }\n"
    "__device__ __forceinline__ double tc_silu(double x) { return x * tc_sigmoid(x); }\n"
    "__device__ __forceinline__ float tc_softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }\n"
    "__device__ __forceinline__ double tc_softplus(double x) { return x > 20.0 ? x : log1p(exp(x)); }\n"
    "\n"
    "/* reductions: the operators, their identities, and combining across threads */\n"
    "template <class T> struct tc_argv { T v; long long i; };\n"
    "template <class T> __device__ __forceinline__ T tc_lowest() { return (T)-__int_as_float(0x7f800000); }\n"
    "template <class T> __device__ __forceinline__ T tc_highest() { return (T)__int_as_float(0x7f800000); }\n"
    "template <> __device__ __forceinline__ int tc_lowest<int>() { return -2147483647 - 1; }\n"
    "template <> __device__ __forceinline__ int tc_highest<int>() { return 2147483647; }\n"
    "template <> __device__ __forceinline__ long long tc_lowest<long long>() { return -9223372036854775807LL - 1; }\n"
    "template <> __device__ __forceinline__ long long tc_highest<long long>() { return 9223372036854775807LL; }\n"
    "struct tc_op_sum { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };\n"
    "struct tc_op_prod { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a * b; } };\n"
    "struct tc_op_max { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return tc_max(a, b); } };\n"
    "struct tc_op_min { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return tc_min(a, b); } };\n"
    "/* first index of the extreme; a NaN wins, like torch.argmax */\n"
    "struct tc_op_argmax {\n"
    "    template <class T> __device__ __forceinline__ tc_argv<T> operator()(tc_argv<T> a, tc_argv<T> b) const {\n"
    "        if (a.i < 0) return b;\n"
    "        if (b.i < 0) return a;\n"
    "        const bool an = a.v != a.v, bn = b.v != b.v;\n"
    "        if (an || bn) return (an && (!bn || a.i < b.i)) ? a : b;\n"
    "        return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;\n"
    "    }\n"
    "};\n"
    "struct tc_op_argmin {\n"
    "    template <class T> __device__ __forceinline__ tc_argv<T> operator()(tc_argv<T> a, tc_argv<T> b) const {\n"
    "        if (a.i < 0) return b;\n"
    "        if (b.i < 0) return a;\n"
    "        const bool an = a.v != a.v, bn = b.v != b.v;\n"
    "        if (an || bn) return (an && (!bn || a.i < b.i)) ? a : b;\n"
    "        return (b.v < a.v || (b.v == a.v && b.i < a.i)) ? b : a;\n"
    "    }\n"
    "};\n"
    "template <class T> __device__ __forceinline__ T tc_shfl(T v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }\n"
    "template <class T> __device__ __forceinline__ tc_argv<T> tc_shfl(tc_argv<T> v, int o) {\n"
    "    return tc_argv<T>{tc_shfl(v.v, o), tc_shfl(v.i, o)};\n"
    "}\n"
    "/* every thread of the block gets the result; sm holds 32 values */\n"
    "template <class T, class Op> __device__ T tc_block_reduce(T v, Op op, T *sm) {\n"
    "    for (int o = 16; o > 0; o >>= 1) v = op(v, tc_shfl(v, o));\n"
    "    const int nw = (blockDim.x + 31) >> 5;\n"
    "    if (nw == 1) return v;\n"
    "    __syncthreads(); /* sm may still be read by the last reduction */\n"
    "    if ((threadIdx.x & 31) == 0) sm[threadIdx.x >> 5] = v;\n"
    "    __syncthreads();\n"
    "    T r = sm[0];\n"
    "    for (int w = 1; w < nw; w++) r = op(r, sm[w]);\n"
    "    return r;\n"
    "}\n"
    "/* combine over threadIdx.y for each threadIdx.x; sm holds blockDim.x * blockDim.y values */\n"
    "template <class T, class Op> __device__ T tc_col_reduce(T v, Op op, T *sm) {\n"
    "    __syncthreads();\n"
    "    sm[threadIdx.y * blockDim.x + threadIdx.x] = v;\n"
    "    __syncthreads();\n"
    "    T r = sm[threadIdx.x];\n"
    "    for (unsigned y = 1; y < blockDim.y; y++) r = op(r, sm[y * blockDim.x + threadIdx.x]);\n"
    "    return r;\n"
    "}\n"
    "/* the last block combines every block's partial, in block order */\n"
    "template <class T> __device__ __forceinline__ T tc_ldcg(const T *p) { return __ldcg(p); }\n"
    "template <class T> __device__ __forceinline__ tc_argv<T> tc_ldcg(const tc_argv<T> *p) {\n"
    "    return tc_argv<T>{__ldcg(&p->v), __ldcg(&p->i)};\n"
    "}\n"
    "/* ... and leaves the workspace zero, as the launch plan promises */\n"
    "template <class T, class Op> __device__ T tc_partials(T *part, unsigned n, T init, Op op, T *sm) {\n"
    "    T v = init;\n"
    "    for (unsigned b = threadIdx.x; b < n; b += blockDim.x) {\n"
    "        v = op(v, tc_ldcg(part + b));\n"
    "        part[b] = T{};\n"
    "    }\n"
    "    return tc_block_reduce(v, op, sm);\n"
    "}\n"
    "\n"
    "/* 16-byte (or narrower) vector accesses */\n"
    "template <class T, int N> struct alignas(sizeof(T) * N) tc_vec { T v[N]; };\n"
    "template <class T, int N> __device__ __forceinline__ tc_vec<T, N> tc_vload(const T *p) {\n"
    "    return *reinterpret_cast<const tc_vec<T, N> *>(p);\n"
    "}\n"
    "template <class T, int N> __device__ __forceinline__ void tc_vstore(T *p, tc_vec<T, N> v) {\n"
    "    *reinterpret_cast<tc_vec<T, N> *>(p) = v;\n"
    "}\n"
    "__device__ __forceinline__ bool tc_aligned(const void *p, int bytes) {\n"
    "    return ((tc_u64)p & (tc_u64)(bytes - 1)) == 0;\n"
    "}\n"
    "/* v (made in 64 bits), or n when v >= n: loop starts and steps that\n"
    " * cannot pass the end in 32-bit index arithmetic */\n"
    "template <class I> __device__ __forceinline__ I tc_upto(long long v, I n) {\n"
    "    return v < (long long)n ? (I)v : n;\n"
    "}\n";

/* Only in units with a foreach kernel (sched.h): the group table, laid out
 * as plan.h's PARG_GROUPS says, and the search for a block's group. */
static const char fe_helpers[] =
    "\n"
    "/* foreach: the tensor groups of one launch */\n"
    "template <int NT> struct tc_fe_group {\n"
    "    unsigned long long ptr[NT];   /* each tensor's address */\n"
    "    long long n;                  /* elements (never 0) */\n"
    "    long long first;              /* the group's first block */\n"
    "};\n"
    "template <int NT, int CAP> struct tc_fe_table {\n"
    "    const tc_fe_group<NT> *dev;   /* the groups, when more than CAP: else g */\n"
    "    long long ngroups;\n"
    "    tc_fe_group<NT> g[CAP];\n"
    "};\n"
    "/* this block's group: the last whose first block is <= blockIdx.x */\n"
    "template <int NT> __device__ __forceinline__ const tc_fe_group<NT> &\n"
    "tc_fe_find(const tc_fe_group<NT> *gs, long long ng) {\n"
    "    long long lo = 0, hi = ng - 1;\n"
    "    while (lo < hi) {\n"
    "        const long long mid = (lo + hi + 1) >> 1;\n"
    "        if (gs[mid].first <= (long long)blockIdx.x) lo = mid; else hi = mid - 1;\n"
    "    }\n"
    "    return gs[lo];\n"
    "}\n";

/* A kernel of the unit, and the other kernels of its function (by the
 * fused dump's numbers) whose code is the same, so their steps launch this
 * one.  Kernels are shared within a function only: its heading and the
 * numbers stay those of the fused dump. */
typedef struct ukernel {
    int id;                 /* its number in its function (the fused dump's) */
    const char *why;        /* the schedule's reasons */
    const char *name, *text;
    const char *key;        /* compact kernels: the code as built for comparing
                             * (positional names, no line comments), else NULL */
    size_t keylen;
    uint64_t hash;
    int *also;
    int nalso, capalso;
} ukernel;

/* The unit's text after the helpers, in order: headings and helpers
 * (text), and kernels. */
typedef struct upiece {
    const char *text;
    ukernel *k;
} upiece;

typedef struct unit_b {
    tc_arena *a;
    upiece *pieces;
    int npieces, cappieces;
    ukernel **shared;       /* kernels with a key, to compare against */
    int nshared, capshared;
} unit_b;

#define GROW(a, v, n, cap, T)                                      \
    do {                                                           \
        if ((n) == (cap)) {                                        \
            int nc_ = (cap) ? 2 * (cap) : 16;                      \
            T *nv_ = ARENA_ARRAY(a, T, nc_);                       \
            if (n)                                                 \
                memcpy(nv_, (v), sizeof *nv_ * (size_t)(n));       \
            (v) = nv_;                                             \
            (cap) = nc_;                                           \
        }                                                          \
    } while (0)

static void add_piece(unit_b *u, const char *text, ukernel *k)
{
    GROW(u->a, u->pieces, u->npieces, u->cappieces, upiece);
    u->pieces[u->npieces++] = (upiece){text, k};
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static ukernel *find_shared(unit_b *u, const char *key, size_t len, uint64_t h)
{
    for (int i = 0; i < u->nshared; i++) {
        ukernel *k = u->shared[i];
        if (k->hash == h && k->keylen == len && memcmp(k->key, key, len) == 0)
            return k;
    }
    return NULL;
}

/* A cg for kernel j of s, named name. */
static void cg_setup(cg *g, const sfn *s, int j, cg_bufs *bufs, const char *name, bool idx64,
                     int fe_param_bytes, bool *libcalls, tc_arena *a, tc_diag *d)
{
    const ffn *f = s->f;
    *g = (cg){0};
    g->kname = name;
    g->a = a;
    g->d = d;
    g->c = f->l->dims;
    g->l = f->l;
    g->f = f;
    g->s = s;
    g->ks = &s->k[j];
    g->k = f->k[j];
    g->bufs = bufs;
    g->idx64 = idx64;
    g->fe_param_bytes = fe_param_bytes;
    g->libcalls = libcalls;
    g->comments = true;
    /* compact kernels are the long chains whose pieces repeat (sched.h) */
    g->positional = s->k[j].compact && !s->k[j].foreach;
}

/* Kernel j of s: its code once, or, when a kernel of the same code is
 * already in the unit, a step that launches that one. */
static void unit_kernel(unit_b *u, const sfn *s, int j, cg_bufs *bufs, int num, bool idx64,
                        int fe_param_bytes, bool *libcalls, tc_diag *d)
{
    tc_arena *a = u->a;
    const fkernel *k = s->f->k[j];
    /* the fused dump's name (fuse.h: its ops, then "_" and k->id) with the
     * number offset by the kernels of earlier functions, unique in the unit */
    int idlen = snprintf(NULL, 0, "_%d", k->id);
    const char *name = arena_printf(a, "%.*s_%d", (int)strlen(k->name) - idlen, k->name, num);
    cg g;
    cg_setup(&g, s, j, bufs, name, idx64, fe_param_bytes, libcalls, a, d);
    const char *key = NULL;
    size_t keylen = 0;
    uint64_t h = 0;
    if (g.positional) {
        g.comments = false;
        g.kname = "k";
        tc_buf kb;
        buf_init(&kb, a);
        cg_kernel(&g, &kb);
        key = buf_str(&kb);
        keylen = kb.len;
        h = fnv1a(key, keylen);
        ukernel *same = find_shared(u, key, keylen, h);
        if (same) {
            GROW(a, same->also, same->nalso, same->capalso, int);
            same->also[same->nalso++] = k->id;
            cg_plan_kernel(&g, same->name);
            return;
        }
        /* new: built again, readable (its lines' .tc places) */
        cg_setup(&g, s, j, bufs, name, idx64, fe_param_bytes, libcalls, a, d);
    }
    tc_buf tb;
    buf_init(&tb, a);
    cg_kernel(&g, &tb);
    cg_plan_kernel(&g, name);
    ukernel *uk = ARENA_NEW(a, ukernel);
    *uk = (ukernel){k->id, s->k[j].why, name, buf_str(&tb), key, keylen, h, NULL, 0, 0};
    if (key) {
        GROW(a, u->shared, u->nshared, u->capshared, ukernel *);
        u->shared[u->nshared++] = uk;
    }
    add_piece(u, NULL, uk);
}

static void render(tc_buf *o, const ukernel *k)
{
    buf_printf(o, "\n/* kernel %d: %s", k->id, k->why);
    if (k->nalso) {
        buf_printf(o, "\n * also kernel%s", k->nalso > 1 ? "s" : "");
        for (int i = 0; i < k->nalso; i++)
            buf_printf(o, "%s %d", i ? "," : "", k->also[i]);
        buf_puts(o, ": the same code, launched over their own buffers");
    }
    buf_puts(o, " */\n");
    buf_puts(o, k->text);
}

cg_unit *codegen_unit(const sfn *const *fns, int n, bool idx64, tc_arena *a, tc_diag *d)
{
    return codegen_unit_ex(fns, n, idx64, CG_FE_PARAM_BYTES, a, d);
}

cg_unit *codegen_unit_ex(const sfn *const *fns, int n, bool idx64, int fe_param_bytes,
                         tc_arena *a, tc_diag *d)
{
    cg_unit *u = ARENA_NEW(a, cg_unit);
    u->plans = ARENA_ARRAY(a, tc_plan *, n > 0 ? n : 1);
    u->nplans = n;
    tc_buf src;
    buf_init(&src, a);
    buf_printf(&src, "/* generated by tensorc %s: %d function%s */\n", TC_VERSION_STRING, n,
               n == 1 ? "" : "s");
    buf_printf(&src, "typedef %s idx_t; /* %s index arithmetic */\n", idx64 ? "long long" : "int",
               idx64 ? "64-bit" : "32-bit");
    buf_puts(&src, helpers);
    unit_b ub = {.a = a};
    bool foreach = false, compact = false;
    bool *libcalls = ARENA_ARRAY(a, bool, OP_COUNT * 2);
    int kid = 0;
    for (int i = 0; i < n; i++) {
        const sfn *s = fns[i];
        const ffn *f = s->f;
        cg_bufs *bufs = cg_plan_bufs(s, a, d);
        add_piece(&ub, arena_printf(a, "\n/* ---- fn %s ---- */\n", f->l->g->name), NULL);
        ub.nshared = 0;
        for (int j = 0; j < f->nk; j++) {
            const fkernel *k = f->k[j];
            if (k->kind == KK_EXTERN) {
                cg_plan_matmul(bufs, k->ext, f->l->dims, a);
                continue;
            }
            compact |= s->k[j].compact;
            if (s->k[j].foreach && !foreach) /* before the first kernel that needs them */
                add_piece(&ub, fe_helpers, NULL);
            foreach |= s->k[j].foreach;
            unit_kernel(&ub, s, j, bufs, kid + k->id, idx64, fe_param_bytes, libcalls, d);
        }
        kid += f->nk;
        cg_plan_finish(s, bufs, a);
        plan_verify(bufs->plan, f->l->dims, a, d);
        u->plans[i] = bufs->plan;
    }
    u->nkernels = kid;  /* counting externs */
    if (compact)
        cg_libcall_wrappers(&src, libcalls);
    for (int i = 0; i < ub.npieces; i++) {
        if (ub.pieces[i].k)
            render(&src, ub.pieces[i].k);
        else
            buf_puts(&src, ub.pieces[i].text);
    }
    u->source = buf_str(&src);
    return u;
}
