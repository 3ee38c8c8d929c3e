/* nvrtc.h - a thin layer over NVRTC, the CUDA run-time compiler.
 *
 * Why dlopen: tensorc must build, run its CLI and pass CI on machines with no
 * CUDA toolkit and no GPU.  So nvrtc.h is not included and libnvrtc is not
 * linked; the dozen entry points used here are declared by hand (C ABI:
 * nvrtcResult is an int, nvrtcProgram an opaque pointer) and looked up with
 * dlsym.  The library is searched in this order, so no LD_LIBRARY_PATH is
 * needed where the toolkit sits in its usual place:
 *
 *     $TENSORC_NVRTC (a path), libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so,
 *     $CUDA_HOME/lib64/libnvrtc.so* (newest first),
 *     /usr/local/cuda/lib64/libnvrtc.so.13
 *
 * What is cached: the library handle, its function pointers, its version and
 * its list of supported architectures are found once per process and kept for
 * the life of the process (never dlclose'd: NVRTC keeps global state and may
 * be shared with PyTorch or CuPy in the same process).  A failed search is
 * cached too: the search runs once.
 *
 * Thread safety: every function here may be called from any thread.  The
 * one-time load is guarded by pthread_once; afterwards the cached state is
 * read-only.  nvrtc_compile creates, compiles and destroys its own NVRTC
 * program, and NVRTC may be called from several threads on distinct programs
 * (its header singles out only nvrtcGetTypeName, unused here, as unsafe);
 * test_nvrtc compiles from four threads at once.
 */
#ifndef TC_NVRTC_H
#define TC_NVRTC_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "tensorc.h"

/* The result of one compilation.  Both buffers are malloc'd and owned by the
 * struct: release them with nvrtc_output_free, after success or failure. */
typedef struct nvrtc_output {
    char *data;   /* PTX (NUL-terminated, len excludes the NUL) or CUBIN (an ELF image); NULL on failure */
    size_t len;   /* bytes of data */
    char *log;    /* NVRTC's log, NUL-terminated, possibly ""; NULL only if compilation never started */
} nvrtc_output;

/*! nvrtc_load(): find and load NVRTC (once per process).
 *  @return TC_OK, or TC_ERR_NO_DEVICE with a message in *d listing every
 *  place tried ("NVRTC not found (tried ...): install the CUDA toolkit or set
 *  TENSORC_NVRTC").  d may be NULL when only the status is wanted. */
tc_status nvrtc_load(tc_diag *d);

/*! nvrtc_facts_use(): trust the facts file at path (nvrtc_facts.h), if it
 *  describes the library this process would load: nvrtc_version,
 *  nvrtc_supported_archs and nvrtc_clamp_arch then answer without loading
 *  NVRTC (nvrtc_compile still loads it).  nvrtc_facts_save(): after NVRTC
 *  has been loaded, write its facts to path.  nvrtc_loaded(): whether it
 *  has been. */
void nvrtc_facts_use(const char *path);
void nvrtc_facts_save(const char *path);
bool nvrtc_loaded(void);
/*! nvrtc_lib_path(): the file NVRTC was loaded from, or NULL if it is not
 *  loaded.  The search: $TENSORC_NVRTC, libnvrtc.so.13/.12/.so (the dynamic
 *  linker's path), $CUDA_HOME/lib64, /usr/local/cuda/lib64, then pip
 *  wheels' nvidia/cuda_nvrtc/lib (libsearch.h); a failure's message lists
 *  every place tried. */
const char *nvrtc_lib_path(void);

/*! nvrtc_version(): NVRTC's version, e.g. 13.0.  @return false if NVRTC cannot be loaded. */
bool nvrtc_version(int *major, int *minor);

/*! nvrtc_supported_archs(): the compute capabilities NVRTC can target, as
 *  10*major+minor (75, 80, 86, 89, 90, ...), ascending.  Copies at most max
 *  of them into archs (which may be NULL when max is 0).
 *  @return how many NVRTC supports in all (0 if NVRTC cannot be loaded). */
int nvrtc_supported_archs(int *archs, int max);

/*! nvrtc_clamp_arch(): the architecture to compile for on a device of
 *  compute capability want: the highest supported arch <= want.  When want is
 *  newer than every arch NVRTC knows, the newest one is returned and
 *  *ptx_only is set: compile PTX for it (compute_XX) and let the driver JIT
 *  it for the device, since a CUBIN would not load there.  Otherwise
 *  *ptx_only is false and a CUBIN (sm_XX) is right.  ptx_only may be NULL.
 *  @return the arch, or 0 if want is older than every supported arch or NVRTC
 *  cannot be loaded. */
int nvrtc_clamp_arch(int want, bool *ptx_only);

/*! nvrtc_compile(): compile one CUDA C++ translation unit (every kernel of a
 *  program, in one call) with `--std=c++17 -default-device` and
 *  `--gpu-architecture=sm_XX` (cubin) or `compute_XX` (PTX), followed by the
 *  nextra options in extra_opts (e.g. "--use_fast_math", "-lineinfo"), and
 *  for a source over NVRTC_FAST_COMPILE_BYTES `--Ofast-compile=min` where
 *  NVRTC is 12.8 or newer (only units of kernels past the compile budget are
 *  that large; retried without it if NVRTC rejects it).
 *  name is the file name NVRTC uses in its log ("name(line): error: ...").
 *  @return TC_OK with out->data/len/log filled;
 *          TC_ERR_COMPILE when the source does not compile: the message in *d
 *            contains NVRTC's log (out->log holds it too);
 *          TC_ERR_INVALID_ARG for an arch NVRTC does not support or an option
 *            it rejects; TC_ERR_NO_DEVICE if NVRTC cannot be loaded;
 *          TC_ERR_COMPILE too when NVRTC hands back an empty image or
 *            reports one over 1 GiB (a log over 1 GiB is not read: out->log
 *            says so); TC_ERR_NOMEM; TC_ERR_INTERNAL for any other NVRTC
 *            failure.
 *  Always call nvrtc_output_free(out) afterwards.  d may be NULL. */
enum { NVRTC_FAST_COMPILE_BYTES = 256 * 1024 };
tc_status nvrtc_compile(const char *src, const char *name, int arch, bool cubin,
                        const char *const *extra_opts, int nextra, nvrtc_output *out,
                        tc_diag *d);

/*! nvrtc_output_free(): free out's buffers and zero it (safe on a zeroed struct). */
void nvrtc_output_free(nvrtc_output *out);

#endif
