// rowcopy.cu - which copy structure streams at the ceiling (issue 14's long rows): a
// persistent grid of chunks (the rows kernels' _w shape: all of a thread's loads, then
// all its stores, through registers or a cp.async pipe), the same with each block's
// next chunk from an atomic ticket (TENSORC_ROWS_TICKET's order), and a block a chunk.
// f32, 1024 x 65536 (256 MiB each way), cudaEvent median of 20.
//
//   nvcc -O3 -arch=sm_90a -std=c++17 -o rowcopy bench/micro/rowcopy.cu && ./rowcopy
//
// H200, 2026-11-28 (bench/results/2026-11-28-h200-session17.md): memcpy 4.06 TB/s; a block
// a chunk of one float4 a thread 4.07; persistent chunks 3.60-3.78; the same by ticket
// 3.84-3.97.
#include "../../tests/golden/helpers.cu" /* tensorc's helpers, for rowpipe.cuh's */
#include "../../src/codegen/rowpipe.cuh"   /* the pipe's cp.async copies, as generated */
#include <cuda_runtime.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

// persistent chunks of IT vectors a thread: all loads (register or pipe) then all stores
template <int IT, int STM, bool PIPE>
__global__ void __launch_bounds__(512, 2) k_chunk(const float4 *__restrict__ x, float4 *__restrict__ y, long long nchunks)
{
    extern __shared__ __align__(16) unsigned char pipe[];
    const long long per = (long long)IT * blockDim.x;
    long long c = blockIdx.x;
    if (PIPE && c < nchunks) {
        for (int j = 0; j < IT; j++)
            tc_cp_async<16>(pipe + (j * blockDim.x + threadIdx.x) * 16, x + c * per + j * blockDim.x + threadIdx.x);
        tc_cp_commit();
    }
    for (; c < nchunks; c += gridDim.x) {
        float4 v[IT];
        if (PIPE) {
            tc_cp_wait();
            for (int j = 0; j < IT; j++) v[j] = *(const float4 *)(pipe + (j * blockDim.x + threadIdx.x) * 16);
            const long long n = c + gridDim.x;
            if (n < nchunks) {
                for (int j = 0; j < IT; j++)
                    tc_cp_async<16>(pipe + (j * blockDim.x + threadIdx.x) * 16, x + n * per + j * blockDim.x + threadIdx.x);
                tc_cp_commit();
            }
        } else {
#pragma unroll
            for (int j = 0; j < IT; j++) v[j] = __ldg(x + c * per + j * blockDim.x + threadIdx.x);
        }
#pragma unroll
        for (int j = 0; j < IT; j++) {
            float4 *p = y + c * per + j * blockDim.x + threadIdx.x;
            if (STM == 1) __stcs(p, v[j]);
            else if (STM == 2) __stcg(p, v[j]);
            else *p = v[j];
        }
    }
}
// persistent, each block's next chunk from an atomic ticket (the dispatcher's order, as blocks finish)
template <int IT>
__global__ void __launch_bounds__(512, 2) k_dyn(const float4 *__restrict__ x, float4 *__restrict__ y, long long nchunks, unsigned *ctr)
{
    __shared__ long long nx;
    const long long per = (long long)IT * blockDim.x;
    long long c = blockIdx.x;
    while (c < nchunks) {
        float4 v[IT];
#pragma unroll
        for (int j = 0; j < IT; j++) v[j] = __ldg(x + c * per + j * blockDim.x + threadIdx.x);
        if (threadIdx.x == 0) nx = gridDim.x + atomicAdd(ctr, 1u);
#pragma unroll
        for (int j = 0; j < IT; j++) y[c * per + j * blockDim.x + threadIdx.x] = v[j];
        __syncthreads();
        c = nx;
        __syncthreads();
    }
}
// non-persistent: one chunk a block
template <int IT, int STM>
__global__ void __launch_bounds__(256) k_flat(const float4 *__restrict__ x, float4 *__restrict__ y)
{
    const long long base = (long long)blockIdx.x * IT * blockDim.x;
    float4 v[IT];
#pragma unroll
    for (int j = 0; j < IT; j++) v[j] = __ldg(x + base + j * blockDim.x + threadIdx.x);
#pragma unroll
    for (int j = 0; j < IT; j++) {
        float4 *p = y + base + j * blockDim.x + threadIdx.x;
        if (STM == 1) __stcs(p, v[j]); else *p = v[j];
    }
}

template <class F> float timeit(F f) {
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    std::vector<float> ts;
    for (int i = 0; i < 22; i++) {
        CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (i >= 2) ts.push_back(ms * 1000);
    }
    CK(cudaGetLastError());
    std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
}

template <int IT, int STM, bool PIPE> void chunk(const char *name, float4 *x, float4 *y, long long n4, int block, int minb_grid) {
    auto k = k_chunk<IT, STM, PIPE>;
    size_t dyn = PIPE ? (size_t)IT * block * 16 : 0;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn));
    int nb = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, block, dyn));
    int grid = nb * 132;
    long long nch = n4 / ((long long)IT * block);
    float us = timeit([&] { k<<<grid, block, dyn>>>(x, y, nch); });
    printf("%-28s block %4d  %d/SM grid %5d: %8.2f us %.3f TB/s\n", name, block, nb, grid, us, 2.0 * n4 * 16 / us / 1e6);
    (void)minb_grid;
}
template <int IT> void dyn(const char *name, float4 *x, float4 *y, long long n4, int block, unsigned *ctr) {
    int nb = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k_dyn<IT>, block, 0));
    int grid = nb * 132;
    long long nch = n4 / ((long long)IT * block);
    float us = timeit([&] { cudaMemsetAsync(ctr, 0, 4); k_dyn<IT><<<grid, block>>>(x, y, nch, ctr); });
    printf("%-28s block %4d  %d/SM grid %5d: %8.2f us %.3f TB/s (incl. a memset)\n", name, block, nb, grid, us, 2.0 * n4 * 16 / us / 1e6);
}
template <int IT, int STM> void flat(const char *name, float4 *x, float4 *y, long long n4) {
    long long grid = n4 / (IT * 256);
    float us = timeit([&] { k_flat<IT, STM><<<(unsigned)grid, 256>>>(x, y); });
    printf("%-28s block  256  grid %lld: %8.2f us %.3f TB/s\n", name, grid, us, 2.0 * n4 * 16 / us / 1e6);
}

int main() {
    long long n = 1024LL * 65536, n4 = n / 4;
    float4 *x, *y;
    CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4));
    CK(cudaMemset(x, 0x3f, n * 4));
    float us = timeit([&] { CK(cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice)); });
    printf("memcpy %.2f us %.3f TB/s\n", us, 2.0 * n * 4 / us / 1e6);
    unsigned *ctr; CK(cudaMalloc(&ctr, 4));
    for (int b : {256, 512}) {
        dyn<8>("dyn it8", x, y, n4, b, ctr);
        dyn<4>("dyn it4", x, y, n4, b, ctr);
        dyn<2>("dyn it2", x, y, n4, b, ctr);
        dyn<1>("dyn it1", x, y, n4, b, ctr);
        chunk<8, 0, false>("reg it8", x, y, n4, b, 0);
        chunk<8, 1, false>("reg it8 stcs", x, y, n4, b, 0);
        chunk<8, 0, true>("pipe it8", x, y, n4, b, 0);
        chunk<8, 1, true>("pipe it8 stcs", x, y, n4, b, 0);
        chunk<8, 2, true>("pipe it8 stcg", x, y, n4, b, 0);
        chunk<4, 0, false>("reg it4", x, y, n4, b, 0);
        chunk<4, 0, true>("pipe it4", x, y, n4, b, 0);
        chunk<4, 1, true>("pipe it4 stcs", x, y, n4, b, 0);
        chunk<2, 0, false>("reg it2", x, y, n4, b, 0);
        chunk<1, 0, false>("reg it1", x, y, n4, b, 0);
    }
    flat<1, 0>("flat it1", x, y, n4);
    flat<2, 0>("flat it2", x, y, n4);
    flat<4, 0>("flat it4", x, y, n4);
    flat<8, 0>("flat it8", x, y, n4);
    flat<8, 1>("flat it8 stcs", x, y, n4);
    return 0;
}
