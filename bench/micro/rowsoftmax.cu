// rowsoftmax.cu - the long-row softmax's _w kernel (its fits path: a row a cluster, the row
// in registers, the pipe's cp.async prefetch of the next row) written by hand on tensorc's
// own helpers, to time variants of its structure (issue 14): ST stages of the pipe, IT
// 16-byte items a thread, the prefetch early or after the max, MODE 1-3 with the cluster
// exchange, then the reductions, then the math left out (timing only), DYN: rows by ticket
// as TENSORC_ROWS_TICKET (codegen/rows.c), MAXT 1024: blocks of 1024 threads at one a SM
// (8-block clusters at 262144: does the GPU then hold 16 clusters where 16 x 512 held 14?).
// f32, checked against a CPU softmax (first variant) and each variant against the first.
//
//   nvcc -O3 -arch=sm_90a -std=c++17 -o rowsoftmax bench/micro/rowsoftmax.cu && ./rowsoftmax
//
// H200 figures: bench/results/2026-11-28-h200-session17.md (calls 2-4); the MAXT 1024
// variants not yet run.
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

// ST stages of the pipe; IT 16-byte items a thread; EARLY: the prefetch right after the slot reads (else after the max)
template <int ST, int IT, int MINB, bool EARLY, int MODE = 0, bool DYN = false, int MAXT = 512>
__global__ void __launch_bounds__(MAXT, MINB) k_soft(const float *__restrict__ in_x, float *__restrict__ out, int rows, int len, unsigned *ctr)
{
    __shared__ double tc_smem[2 * 32 * 8];
    __shared__ __align__(16) unsigned char tc_cl[TC_CL_BYTES];
    unsigned tc_turn = 0;
    const idx_t ncl = (idx_t)tc_cluster_size(), crank = (idx_t)tc_cluster_rank();
    tc_cluster_init(tc_cl, ncl, true);
    extern __shared__ __align__(16) unsigned char tc_pipe[];
    const idx_t step = gridDim.x / ncl;
    idx_t row = blockIdx.x / ncl;
    auto copy = [&](idx_t rw, int s) {
        if (rw < rows) {
#pragma unroll
            for (int j = 0; j < IT; j++) {
                const idx_t r = ((j * ncl + crank) * blockDim.x + threadIdx.x) * 4;
                tc_cp_async<16>(tc_pipe + ((s * IT + j) * blockDim.x + threadIdx.x) * 16, in_x + (long long)rw * len + r);
            }
        }
        tc_cp_commit();
    };
#pragma unroll
    for (int s = 0; s < ST; s++)
        copy(row + s * step, s);
    int s = 0;
    idx_t nx = row + step < rows ? row + step : rows; /* DYN: the next row, known a row ahead */
    const int G = rows - step < 0 ? 0 : rows - step < step ? rows - step : step;
    const int total = (rows - 2 * step > 0 ? rows - 2 * step : 0) + G;
    idx_t nn = rows;
    for (; row < rows; row = DYN ? nx : row + step, nx = nn) {
        cp_wait_group<ST - 1>();
        float pc0[IT * 4];
#pragma unroll
        for (int j = 0; j < IT; j++) {
            const tc_vec<float, 4> v = tc_sget<float, 4>(tc_pipe, (s * IT + j) * blockDim.x + threadIdx.x);
            pc0[j * 4 + 0] = v.v[0]; pc0[j * 4 + 1] = v.v[1]; pc0[j * 4 + 2] = v.v[2]; pc0[j * 4 + 3] = v.v[3];
        }
        if (EARLY && !DYN)
            copy(row + ST * step, s);
        if (DYN)
            copy(nx, s);
        float acc1 = tc_lowest<float>();
#pragma unroll
        for (int e = 0; e < IT * 4; e++)
            acc1 = tc_op_max()(acc1, pc0[e]);
        if (!EARLY && !DYN)
            copy(row + ST * step, s);
        s = s + 1 == ST ? 0 : s + 1;
        if (DYN) {
            int tk = -1;
            if (crank == 0 && threadIdx.x == 0 && nx < rows) {
                tk = (int)atomicAdd(ctr, 1u);
                if (tk == total - 1) *ctr = 0;
            }
            tc_cluster_reduce2(acc1, tc_op_max(), tk, tc_op_max(), tc_smem, tc_cl, tc_turn, ncl, true);
            nn = nx < rows && 2 * step + tk < rows ? 2 * step + tk : rows;
        } else if (MODE == 0) acc1 = tc_cluster_reduce(acc1, tc_op_max(), (float *)tc_smem, tc_cl, tc_turn, ncl, true);
        else if (MODE == 1) acc1 = tc_block_reduce(acc1, tc_op_max(), (float *)tc_smem);
        else if (MODE >= 2) acc1 = 0.0f;
        float pc1[IT * 4];
        float acc4 = 0.0f;
#pragma unroll
        for (int e = 0; e < IT * 4; e++) {
            pc1[e] = MODE == 3 ? pc0[e] : expf(pc0[e] - acc1);
            acc4 = acc4 + pc1[e];
        }
        if (MODE == 0) acc4 = tc_cluster_reduce(acc4, tc_op_sum(), (float *)tc_smem, tc_cl, tc_turn, ncl, true);
        else if (MODE == 1) acc4 = tc_block_reduce(acc4, tc_op_sum(), (float *)tc_smem);
        const float rcp = MODE >= 2 ? 1.0f : 1.0f / acc4;
#pragma unroll
        for (int j = 0; j < IT; j++) {
            const idx_t r = ((j * ncl + crank) * blockDim.x + threadIdx.x) * 4;
            tc_vstore<float, 4>(out + (long long)row * len + r, {{pc1[j * 4] * rcp, pc1[j * 4 + 1] * rcp, pc1[j * 4 + 2] * rcp, pc1[j * 4 + 3] * rcp}});
        }
    }
    tc_cp_wait();
    tc_cluster_end(ncl, true);
}

struct Var { const char *name; void (*k)(const float *, float *, int, int, unsigned *); int st, it, block; };
#define V(ST, IT, MB, E) Var{#ST "st_" #IT "it_mb" #MB "_" #E, k_soft<ST, IT, MB, E, 0, false>, ST, IT, 0}
#define VD(ST, IT, MB) Var{#ST "st_" #IT "it_mb" #MB "_dyn", k_soft<ST, IT, MB, true, 0, true>, ST, IT, 0}
#define VB(ST, IT, D) Var{#ST "st_" #IT "it_b1024" #D, k_soft<ST, IT, 1, true, 0, D, 1024>, ST, IT, 0}
#define VM(ST, IT, MB, E, M) Var{#ST "st_" #IT "it_mb" #MB "_" #E "_mode" #M, k_soft<ST, IT, MB, E, M>, ST, IT, 0}

static unsigned *g_ctr;
static float run(const Var &v, int block, int ncl, const float *x, float *y, int rows, int len, int reps, int *grid_out)
{
    size_t dyn = (size_t)v.st * v.it * block * 16;
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
    cfg.gridDim = dim3(ncls * ncl);
    *grid_out = ncls;
    std::vector<float> ts;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < reps + 2; i++) {
        CK(cudaEventRecord(a));
        CK(cudaLaunchKernelEx(&cfg, v.k, x, y, rows, len, g_ctr));
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b));
        if (i >= 2) ts.push_back(ms * 1000);
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}

int main(int argc, char **argv)
{
    int reps = 30;
    CK(cudaMalloc(&g_ctr, 4)); CK(cudaMemset(g_ctr, 0, 4));
    Var vars[] = {V(1, 8, 2, false), VD(1, 8, 2), VB(1, 8, false), VB(1, 8, true)};
    struct Shape { int rows, len; } shapes[] = {{256, 262144}, {512, 131072}, {1024, 65536}};
    for (auto sh : shapes) {
        size_t n = (size_t)sh.rows * sh.len;
        std::vector<float> hx(n);
        srand(7);
        for (size_t i = 0; i < n; i++) hx[i] = (float)(rand() % 20001 - 10000) / 1000.0f;
        float *x, *y, *y0;
        CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4)); CK(cudaMalloc(&y0, n * 4));
        CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
        // copy reference
        cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
        std::vector<float> tc;
        for (int i = 0; i < 12; i++) {
            CK(cudaEventRecord(a)); CK(cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice)); CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (i >= 2) tc.push_back(ms * 1000);
        }
        std::sort(tc.begin(), tc.end());
        printf("== %d x %d: memcpy %.2f us (%.3f TB/s)\n", sh.rows, sh.len, tc[tc.size() / 2], 2.0 * n * 4 / tc[tc.size() / 2] / 1e6);
        bool have0 = false;
        std::vector<float> h0(n), h1(n);
        for (auto &v : vars)
            for (int block : {256, 512, 1024}) {
                int per = v.it * 4 * block;
                if (sh.len % per) continue;
                if ((block == 1024) != (strstr(v.name, "b1024") != nullptr)) continue;
                int ncl = sh.len / per;
                if (ncl > 16 || ncl < 1) continue;
                CK(cudaMemset(y, 0xff, n * 4));
                int g = 0;
                float us = run(v, block, ncl, x, y, sh.rows, sh.len, reps, &g);
                if (us < 0) { printf("%-22s block %4d ncl %2d: no clusters fit\n", v.name, block, ncl); continue; }
                CK(cudaDeviceSynchronize());
                const char *chk = "ref";
                if (!have0) {
                    CK(cudaMemcpy(h0.data(), y, n * 4, cudaMemcpyDeviceToHost));
                    // row sums near 1, a spot check against the CPU
                    double worst = 0;
                    for (int r = 0; r < sh.rows; r += 97) {
                        double m = -1e30, sum = 0, s2 = 0;
                        for (int i = 0; i < sh.len; i++) m = std::max(m, (double)hx[(size_t)r * sh.len + i]);
                        for (int i = 0; i < sh.len; i++) sum += exp((double)hx[(size_t)r * sh.len + i] - m);
                        for (int i = 0; i < sh.len; i += 131) {
                            double e = exp((double)hx[(size_t)r * sh.len + i] - m) / sum;
                            worst = std::max(worst, fabs(h0[(size_t)r * sh.len + i] - e) / e);
                        }
                        (void)s2;
                    }
                    printf("   check against the CPU: worst rel err %.2e\n", worst);
                    have0 = true;
                } else {
                    CK(cudaMemcpy(h1.data(), y, n * 4, cudaMemcpyDeviceToHost));
                    // same bits only where the same ncl/items (a different split sums in another order)
                    double worst = 0;
                    for (size_t i = 0; i < n; i += 7) worst = std::max(worst, (double)fabsf(h1[i] - h0[i]) / (fabsf(h0[i]) + 1e-30));
                    chk = worst < 1e-5 ? "ok" : "differs";
                    
                }
                printf("%-22s block %4d ncl %2d clusters %3d: %8.2f us  %.3f TB/s  %s\n", v.name, block, ncl, g, us,
                       2.0 * n * 4 / us / 1e6, chk);
            }
        CK(cudaFree(x)); CK(cudaFree(y)); CK(cudaFree(y0));
    }
    return 0;
}
