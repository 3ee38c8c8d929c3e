// rowrms.cu - the long-row bf16 rmsnorm (examples/rmsnorm.tc's rmsnorm_bf16: a row a cluster)
// written by hand on tensorc's own helpers, to time structures for issue 14's 16-bit long rows:
//   np:   one row a cluster, not persistent, the row in registers (what tensorc emits today)
//   reg:  a persistent grid of the resident clusters, rows by ticket (TENSORC_ROWS_TICKET), the
//         row in registers and the next row's slice prefetched into shared memory (cp.async:
//         TENSORC_ROWS_PIPE=1 for bf16)
//   smem: as reg, but the row stays in shared memory (ST stages of slots: 2, the next row in
//         flight while this one reduces and stores; 3, the one after too) and both passes read
//         it there: few registers, so more blocks a SM
// IT 16-byte items (8 bf16) a thread; the cluster is len / (IT * 8 * block) blocks.  Checked
// against a CPU rmsnorm (f64 sums; bf16 rounding as the program's) on a sample of rows.
//
//   nvcc -O3 -arch=sm_90a -std=c++17 -o rowrms bench/micro/rowrms.cu && ./rowrms
#include "../../tests/golden/helpers.cu"
#include "../../src/codegen/rowpipe.cuh"
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

template <int N> __device__ __forceinline__ void cp_wait_group() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

typedef unsigned short bf;
enum { NP, REG, SMEM };

template <int IT>
__device__ __forceinline__ void store_row(const tc_vec<bf, 8> *xv, const bf *__restrict__ g, bf *__restrict__ out,
                                          long long base, int ncl, int crank, float rs, const unsigned char *gs = nullptr) {
#pragma unroll
    for (int j = 0; j < IT; j++) {
        const idx_t r = ((j * ncl + crank) * blockDim.x + threadIdx.x) * 8;
        const tc_vec<bf, 8> gv = gs ? tc_sget<bf, 8>(gs, j * blockDim.x + threadIdx.x) : tc_vload<bf, 8>(g + r);
        float o[8];
#pragma unroll
        for (int e = 0; e < 8; e++)
            o[e] = tc_round_bf16(tc_round_bf16(tc_bf2f(xv[j].v[e]) * rs) * tc_bf2f(gv.v[e]));
        tc_vstore<unsigned, 4>((unsigned *)(out + base + r),
                               {{tc_f2bf2(o[0], o[1]), tc_f2bf2(o[2], o[3]), tc_f2bf2(o[4], o[5]), tc_f2bf2(o[6], o[7])}});
    }
}

template <int KIND, int ST, int IT, int MAXT, int MINB, int FL = 0>
__global__ void __launch_bounds__(MAXT, MINB) k_rms(const bf *__restrict__ x, const bf *__restrict__ g, bf *__restrict__ out,
                                                    int rows, int len, float eps, unsigned *ctr)
{
    __shared__ double tc_smem[2 * 32 * 8];
    __shared__ __align__(16) unsigned char tc_cl[TC_CL_BYTES];
    extern __shared__ __align__(16) unsigned char tc_pipe[];
    unsigned tc_turn = 0;
    const idx_t ncl = (idx_t)tc_cluster_size(), crank = (idx_t)tc_cluster_rank();
    tc_cluster_init(tc_cl, ncl, true);
    auto copy = [&](idx_t rw, int s) {
        if (rw < rows) {
#pragma unroll
            for (int j = 0; j < IT; j++) {
                const idx_t r = ((j * ncl + crank) * blockDim.x + threadIdx.x) * 8;
                tc_cp_async<16>(tc_pipe + ((s * IT + j) * blockDim.x + threadIdx.x) * 16, x + (long long)rw * len + r);
            }
        }
        tc_cp_commit();
    };
    if (KIND == NP) {
        const idx_t row = blockIdx.x / ncl;
        tc_vec<bf, 8> xv[IT];
        float acc = 0;
#pragma unroll
        for (int j = 0; j < IT; j++) {
            const idx_t r = ((j * ncl + crank) * blockDim.x + threadIdx.x) * 8;
            xv[j] = tc_vload<bf, 8>(x + (long long)row * len + r);
        }
#pragma unroll
        for (int j = 0; j < IT; j++)
#pragma unroll
            for (int e = 0; e < 8; e++) { const float f = tc_bf2f(xv[j].v[e]); acc += f * f; }
        acc = tc_cluster_reduce(acc, tc_op_sum(), (float *)tc_smem, tc_cl, tc_turn, ncl, true);
        store_row<IT>(xv, g, out, (long long)row * len, ncl, crank, rsqrtf(acc / (float)len + eps));
        tc_cluster_end(ncl, true);
        return;
    }
    const idx_t step = gridDim.x / ncl;
    idx_t row = blockIdx.x / ncl;
    idx_t nx = row < rows && rows - row > step ? row + step : rows, nn = rows;
    int s = 0;
    const bool early = KIND == SMEM && ST == 2 && (FL & 1);
    unsigned char *gs = (FL & 2) ? tc_pipe + ST * IT * blockDim.x * 16 : nullptr;
    if (FL & 2) { /* this block's slice of g, the same every row: once */
#pragma unroll
        for (int j = 0; j < IT; j++)
            tc_cp_async<16>(gs + (j * blockDim.x + threadIdx.x) * 16, g + ((j * ncl + crank) * blockDim.x + threadIdx.x) * 8);
    }
    copy(row, 0);
    if (KIND == SMEM && ST == 3)
        copy(nx, 1);
    for (; row < rows; row = nx, nx = nn) {
        bool tkon = nx < rows && rows - step > step; /* the row after next by ticket */
        int tk = -1;
        if (tkon && crank == 0 && threadIdx.x == 0) {
            const unsigned t = atomicAdd(ctr, 1u);
            if (t == (unsigned)(rows - step) - 1u)
                *ctr = 0u;
            tc_cl_ticket(tc_cl, tc_turn, (unsigned)ncl, true, (int)t);
        }
        if (early) {
            copy(nx, s ^ 1); /* the other stage held the row before: done; two rows in flight */
            cp_wait_group<1>();
        } else if (ST == 3) cp_wait_group<1>(); else cp_wait_group<0>();
        tc_vec<bf, 8> xv[IT];
        float acc = 0;
#pragma unroll
        for (int j = 0; j < IT; j++) {
            xv[j] = tc_sget<bf, 8>(tc_pipe, (s * IT + j) * blockDim.x + threadIdx.x);
#pragma unroll
            for (int e = 0; e < 8; e++) { const float f = tc_bf2f(xv[j].v[e]); acc += f * f; }
        }
        if (KIND == REG)
            copy(nx, 0); /* the slots are read: the next row into them */
        else if (ST == 2 && !early)
            copy(nx, s ^ 1); /* the other stage held the row before: done */
        acc = tc_cluster_reduce(acc, tc_op_sum(), (float *)tc_smem, tc_cl, tc_turn, ncl, true, &tkon, &tk);
        nn = tk >= 0 && rows - 2 * step > (idx_t)tk ? 2 * step + (idx_t)tk : rows;
        if (KIND == SMEM && ST == 3)
            copy(nn, s == 0 ? 2 : s - 1); /* the row after next into the stage of the row before */
        const float rs = rsqrtf(acc / (float)len + eps);
        if (KIND == SMEM) {
#pragma unroll
            for (int j = 0; j < IT; j++)
                xv[j] = tc_sget<bf, 8>(tc_pipe, (s * IT + j) * blockDim.x + threadIdx.x);
        }
        store_row<IT>(xv, g, out, (long long)row * len, ncl, crank, rs, gs);
        if (KIND == SMEM)
            s = s + 1 == ST ? 0 : s + 1;
    }
    tc_cp_wait();
    tc_cluster_end(ncl, true);
}

struct Var { const char *name; void (*k)(const bf *, const bf *, bf *, int, int, float, unsigned *); int kind, st, it, maxt, fl; };
#define V(K, ST, IT, MT, MB) Var{#K "_st" #ST "_it" #IT "_t" #MT "_mb" #MB, k_rms<K, ST, IT, MT, MB>, K, ST, IT, MT, 0}
#define VF(K, ST, IT, MT, MB, F) Var{#K "_st" #ST "_it" #IT "_t" #MT "_mb" #MB "_f" #F, k_rms<K, ST, IT, MT, MB, F>, K, ST, IT, MT, F}

static unsigned *g_ctr;
static float run(const Var &v, int block, int ncl, const bf *x, const bf *g, bf *y, int rows, int len, int reps, int *grid_out)
{
    size_t dyn = v.kind == NP ? 0 : (size_t)((v.kind == REG ? 1 : v.st) + (v.fl & 2 ? 1 : 0)) * v.it * block * 16;
    CK(cudaFuncSetAttribute(v.k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn));
    CK(cudaFuncSetAttribute(v.k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = ncl; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cfg.attrs = at; cfg.numAttrs = 1;
    cfg.blockDim = dim3(block); cfg.dynamicSmemBytes = dyn;
    cfg.gridDim = dim3(ncl * 1024);
    int ncls = 0;
    if (cudaOccupancyMaxActiveClusters(&ncls, (void *)v.k, &cfg) != cudaSuccess || ncls == 0) {
        cudaGetLastError();
        return -1;
    }
    cfg.gridDim = dim3(v.kind == NP ? rows * ncl : ncls * ncl);
    *grid_out = ncls;
    std::vector<float> ts;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < reps + 2; i++) {
        CK(cudaEventRecord(a));
        CK(cudaLaunchKernelEx(&cfg, v.k, x, g, y, rows, len, 1e-6f, g_ctr));
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b));
        if (i >= 2) ts.push_back(ms * 1000);
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}

static float bf2f(bf h) { unsigned u = (unsigned)h << 16; float f; memcpy(&f, &u, 4); return f; }
static bf f2bf(float f) { unsigned u; memcpy(&u, &f, 4); u += 0x7fffu + ((u >> 16) & 1u); return (bf)(u >> 16); }

int main(int argc, char **argv)
{
    int reps = 30;
    CK(cudaMalloc(&g_ctr, 4)); CK(cudaMemset(g_ctr, 0, 4));
    Var vars[] = {V(NP, 0, 4, 1024, 1), V(REG, 1, 4, 256, 4), V(REG, 1, 4, 512, 2), V(SMEM, 2, 4, 256, 6),
                  VF(SMEM, 2, 4, 256, 6, 1), VF(SMEM, 2, 4, 256, 6, 2), VF(SMEM, 2, 4, 256, 6, 3),
                  V(SMEM, 2, 4, 512, 3), VF(SMEM, 2, 4, 512, 3, 1), VF(SMEM, 2, 4, 512, 3, 2),
                  VF(SMEM, 2, 4, 512, 3, 3), VF(SMEM, 2, 4, 256, 8, 1), VF(SMEM, 2, 8, 256, 3, 1),
                  VF(SMEM, 2, 2, 512, 4, 1), VF(SMEM, 2, 2, 512, 4, 3), VF(REG, 1, 4, 256, 4, 2),
                  VF(SMEM, 2, 4, 256, 4, 3), VF(SMEM, 2, 4, 512, 2, 3)};
    struct Shape { int rows, len; } shapes[] = {{1024, 65536}, {256, 262144}};
    for (auto sh : shapes) {
        size_t n = (size_t)sh.rows * sh.len;
        std::vector<bf> hx(n), hg(sh.len);
        srand(7);
        for (size_t i = 0; i < n; i++) hx[i] = f2bf((float)(rand() % 20001 - 10000) / 5000.0f);
        for (int i = 0; i < sh.len; i++) hg[i] = f2bf((float)(rand() % 2001 - 1000) / 1000.0f);
        bf *x, *y, *g;
        CK(cudaMalloc(&x, n * 2)); CK(cudaMalloc(&y, n * 2)); CK(cudaMalloc(&g, sh.len * 2));
        CK(cudaMemcpy(x, hx.data(), n * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(g, hg.data(), sh.len * 2, cudaMemcpyHostToDevice));
        cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
        std::vector<float> tc;
        for (int i = 0; i < 12; i++) {
            CK(cudaEventRecord(a)); CK(cudaMemcpyAsync(y, x, n * 2, cudaMemcpyDeviceToDevice)); CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (i >= 2) tc.push_back(ms * 1000);
        }
        std::sort(tc.begin(), tc.end());
        printf("== %d x %d bf16: memcpy %.2f us (%.3f TB/s)\n", sh.rows, sh.len, tc[tc.size() / 2], 2.0 * n * 2 / tc[tc.size() / 2] / 1e6);
        std::vector<bf> h(n);
        for (auto &v : vars)
            for (int block : {256, 512, 1024}) {
                if (block > v.maxt) continue;
                int per = v.it * 8 * block;
                if (sh.len % per) continue;
                int ncl = sh.len / per;
                if (ncl > 16 || ncl < 2) continue;
                CK(cudaMemset(y, 0xff, n * 2));
                int gr = 0;
                float us = run(v, block, ncl, x, g, y, sh.rows, sh.len, reps, &gr);
                if (us < 0) { printf("%-26s block %4d ncl %2d: no clusters fit\n", v.name, block, ncl); continue; }
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(h.data(), y, n * 2, cudaMemcpyDeviceToHost));
                int bad = 0;
                for (int r = 0; r < sh.rows; r += 13) {
                    double ss = 0;
                    for (int i = 0; i < sh.len; i++) { double f = bf2f(hx[(size_t)r * sh.len + i]); ss += f * f; }
                    float rs = (float)(1.0 / sqrt(ss / sh.len + 1e-6));
                    for (int i = r % 7; i < sh.len; i += 7) {
                        float e = bf2f(f2bf(bf2f(f2bf(bf2f(hx[(size_t)r * sh.len + i]) * rs)) * bf2f(hg[i])));
                        float o = bf2f(h[(size_t)r * sh.len + i]);
                        if (!(fabsf(o - e) <= 1e-2f * fabsf(e) + 1e-3f)) bad++;
                    }
                }
                printf("%-26s block %4d ncl %2d clusters %3d: %8.2f us  %.3f TB/s  %s\n", v.name, block, ncl, gr, us,
                       2.0 * n * 2 / us / 1e6, bad ? "WRONG" : "ok");
                if (bad) printf("   %d wrong\n", bad);
            }
        CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(g));
    }
    return 0;
}
