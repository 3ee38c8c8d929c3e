/* rowpipe.cuh - in units with a rows kernel of TENSORC_ROWS_PIPE=1
 * (codegen/rows.c; unit.c adds it), after helpers.cuh: a row's slice, B
 * bytes (4, 8 or 16) global -> a 16-byte slot of shared memory, copied and
 * later read by the same thread, so its own wait (tc_cp_wait) is all the
 * order it needs: cp.async on sm_80+ (the copy lands while the previous
 * row reduces), else a plain copy.  "memory": no access to the slots moves
 * across these. */
template <int B> __device__ __forceinline__ void tc_cp_async(unsigned char *dst, const void *src) {
#if __CUDA_ARCH__ >= 800
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    if (B == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
    else if (B == 8)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(d), "l"(src) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d), "l"(src) : "memory");
#else
    *reinterpret_cast<tc_vec<unsigned, B / 4> *>(dst) = *reinterpret_cast<const tc_vec<unsigned, B / 4> *>(src);
#endif
}
__device__ __forceinline__ void tc_cp_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
__device__ __forceinline__ void tc_cp_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}
/* slot i of the slots (16 bytes each) as a vector */
template <class T, int N> __device__ __forceinline__ tc_vec<T, N> tc_sget(const unsigned char *s, idx_t i) {
    return *reinterpret_cast<const tc_vec<T, N> *>(s + (tc_u64)i * 16);
}
