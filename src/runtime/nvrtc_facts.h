/* nvrtc_facts.h - what NVRTC said about itself, kept in the kernel cache.
 *
 * Why: a process whose kernels are all in the disk cache compiles nothing,
 * yet needs NVRTC's version (part of every cache key) and its list of
 * architectures (to pick the image to look up).  Asking NVRTC means
 * dlopen'ing a 100 MB library: 8-10 ms, most of a warm start.  So after
 * NVRTC has been loaded, those facts are written to a small text file in
 * the cache directory, with the identity of the library they came from, and
 * a later process reads them back instead of loading NVRTC.
 *
 * The facts are used only when they describe the library this process
 * would load: the same file (path, size, modification time, inode),
 * searched for under the same environment ($TENSORC_NVRTC, $CUDA_HOME,
 * $LD_LIBRARY_PATH) and the same dynamic-linker cache (/etc/ld.so.cache's
 * modification time).  Anything else (a missing, corrupt or stale file)
 * means "unknown", and NVRTC is loaded as before.  Stale facts could at
 * worst pair a key with the old version: the cached image still came from
 * a working NVRTC and still loads.
 */
#ifndef TC_NVRTC_FACTS_H
#define TC_NVRTC_FACTS_H

#include <stdbool.h>

enum { FACTS_MAX_ARCHS = 64 };

typedef struct nvrtc_facts {
    int major, minor;
    int archs[FACTS_MAX_ARCHS];     /* ascending */
    int narchs;
} nvrtc_facts;

/*! facts_read(): the facts in file path, if it is well formed and its
 *  identity matches the library and environment as they are now. */
bool facts_read(const char *path, nvrtc_facts *f);

/*! facts_write(): write f for library lib (an absolute path) to path,
 *  atomically (a temporary file renamed over it).  @return success. */
bool facts_write(const char *path, const char *lib, const nvrtc_facts *f);

#endif
