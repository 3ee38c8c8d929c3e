/* jit.h - CUDA source to a loadable image (CUBIN or PTX), through the cache.
 *
 * One call, jit_image, answers "give me the compiled image of this program"
 * from the cheapest place that has it:
 *
 *   1. the context's in-memory table (a program already built by this
 *      context: no file read, no hashing of files, no NVRTC);
 *   2. the on-disk kernel cache (cache.h), shared by every process;
 *   3. NVRTC (nvrtc.h), after which the image is put in the disk cache.
 *
 * The key (cache_key_make) covers everything that changes the image: the
 * source, the file name given to NVRTC (it is recorded in the line info that
 * -lineinfo emits), the extra options in order (so --use_fast_math and
 * -lineinfo are part of it), the target ("sm_90" for a CUBIN, "compute_90"
 * for PTX), the loaded NVRTC's version ("13.0") and, when any is set, the
 * context's tuning knobs (jit_set_salt).  The cache adds its own format
 * version.
 *
 * Ownership: images returned by jit_image belong to the jit_ctx and stay
 * valid, unchanged, until jit_ctx_free.  Thread safety: none; one jit_ctx is
 * used by one thread at a time (the tensorc context serializes its calls).
 * Any number of jit_ctx and processes may share a cache directory.
 */
#ifndef TC_JIT_H
#define TC_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "diag.h"
#include "tensorc.h"

typedef struct jit_ctx jit_ctx;

/* Where an image came from.  MEMORY and DISK are both cache hits
 * ("cache: hit" in verbose output); COMPILED means NVRTC ran ("cache: miss"). */
typedef enum jit_origin {
    JIT_FROM_MEMORY,    /* this context's table */
    JIT_FROM_DISK,      /* the on-disk cache */
    JIT_COMPILED,       /* NVRTC; now in the table and, if enabled, on disk */
} jit_origin;

/* "memory", "disk", "compiled". */
const char *jit_origin_str(jit_origin o);

/*! jit_ctx_new(): a context over the cache in cache_dir (NULL: the default,
 *  see cache_open) bounded to max_bytes (0: the default).  An unusable
 *  directory still gives a working, uncached context (jit_warning says why).
 *  @return NULL only when out of memory. */
jit_ctx *jit_ctx_new(const char *cache_dir, uint64_t max_bytes);
/*! jit_set_salt(): one more part of every key j makes from now on (NULL or
 *  "": none): the context's tuning knobs (knobs.h's knobs_text), so an
 *  image built under other knobs is never found for these. */
void jit_set_salt(jit_ctx *j, const char *salt);
/*! jit_ctx_free(): frees the context and every image it handed out.  NULL is fine. */
void jit_ctx_free(jit_ctx *j);

/*! jit_warning(): one line to print about the cache ("kernel cache disabled:
 *  cannot create '/x': Not a directory"), or NULL.  Set when the directory is
 *  unusable or a put has failed; the context keeps working either way. */
const char *jit_warning(const jit_ctx *j);

/*! jit_image(): the image of src (len bytes; need not be NUL-terminated)
 *  compiled by NVRTC as `name` for arch (10*major+minor) as a CUBIN (cubin)
 *  or PTX, with the nopts options in opts appended to NVRTC's command line.
 *  On TC_OK, *image and *image_len give the image (owned by j, see above;
 *  PTX is NUL-terminated, the NUL not counted) and *origin, when origin is
 *  not NULL, where it came from.
 *  @return TC_OK;
 *          TC_ERR_COMPILE with NVRTC's log in *d (nothing is cached);
 *          TC_ERR_NO_DEVICE if NVRTC cannot be loaded (even a cached image
 *            is not returned then: the key needs NVRTC's version);
 *          TC_ERR_INVALID_ARG for an arch or option NVRTC rejects, or a NULL
 *            argument; TC_ERR_NOMEM; TC_ERR_INTERNAL.
 *  d may be NULL when only the status is wanted. */
tc_status jit_image(jit_ctx *j, const char *src, size_t len, const char *name, int arch,
                    bool cubin, const char *const *opts, int nopts, const void **image,
                    size_t *image_len, jit_origin *origin, tc_diag *d);

/*! jit_key(): the key jit_image uses for these arguments (what it covers is
 *  listed at the top of this file).  @return TC_OK, TC_ERR_NO_DEVICE if
 *  NVRTC cannot be loaded (its version is part of the key), TC_ERR_NOMEM. */
tc_status jit_key(const char *src, size_t len, const char *name, int arch, bool cubin,
                  const char *const *opts, int nopts, tc_cache_key *key);

/* For tests and stats: how many images the in-memory table holds. */
size_t jit_table_size(const jit_ctx *j);

#endif
