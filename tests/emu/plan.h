/* plan.h - what emu.py's host program needs beside emu.h to run a launch
 * plan: buffers (256-byte aligned, as cudaMalloc's), the workspace and its
 * check, cuBLAS steps as a plain product. */
#ifndef EMU_PLAN_H
#define EMU_PLAN_H
#include "emu.h"
enum { EMU_WS = 64 << 20 };
static_assert(EMU_WS % (1 << 16) == 0, "emu_ws_zero reads the workspace 64 KB at a time");
/* a buffer argument: converts to the kernel's pointer type */
struct emu_p {
    void *p;
    template <class T> operator T *() const { return (T *)p; }
};
static void *emu_buf(size_t n, int fill) {
    void *p = aligned_alloc(256, (n + 256) / 256 * 256);
    if (!p)
        emu_die("out of memory%s", "");
    memset(p, fill, (n + 256) / 256 * 256);
    return p;
}
static void *emu_load(const char *path, size_t n) {
    void *p = emu_buf(n, 0xff);
    FILE *f = fopen(path, "rb");
    if (!f || fread(p, 1, n, f) != n)
        emu_die("cannot read %s", path);
    fclose(f);
    return p;
}
static void emu_save(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n)
        emu_die("cannot write %s", path);
    fclose(f);
}
/* the plan's promise: the workspace is all zero between launches */
static void emu_ws_zero(const unsigned char *ws, const char *k) {
    /* 64 KB at a time against zeros (memcmp's vector loop: the byte loop
     * over 64 MB after every launch was a fifth of a matmul's run), the
     * bytes of a chunk that differs one by one */
    static const unsigned char zero[1 << 16] = {0};
    for (size_t c = 0; c < EMU_WS; c += sizeof zero) {
        if (!memcmp(ws + c, zero, sizeof zero))
            continue;
        for (size_t i = c; i < c + sizeof zero; i++)
            if (ws[i]) {
                fprintf(stderr, "emu: kernel %s left workspace byte %zu nonzero (0x%02x)\n", k, i, ws[i]);
                exit(3);
            }
    }
}
/* cuBLAS's C = A @ B, f32 accumulation (DT 0 f32, 1 f16, 2 bf16, 3 f64) */
template <int DT, class T>
static void emu_blas(const T *A, const T *B, T *C, long long M, long long N, long long K, int ta, int tb,
                     long long batch, long long sa, long long sb, long long sc) {
    auto ld = [](T v) -> double {
        if constexpr (DT == 1) return emu_h2f(v);
        else if constexpr (DT == 2) return emu_bf2f(v);
        else return (double)v;
    };
    for (long long b = 0; b < batch; b++)
        for (long long i = 0; i < M; i++)
            for (long long j = 0; j < N; j++) {
                double s = 0;
                for (long long k = 0; k < K; k++)
                    s += ld(A[b * sa + (ta ? k * M + i : i * K + k)]) * ld(B[b * sb + (tb ? j * K + k : k * N + j)]);
                T &o = C[b * sc + i * N + j];
                if constexpr (DT == 1) o = emu_f2h((float)s);
                else if constexpr (DT == 2) o = emu_f2bf((float)s);
                else o = (T)s;
            }
}
#endif
