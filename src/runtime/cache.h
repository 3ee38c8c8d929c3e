/* cache.h - the on-disk kernel cache: compiled kernels (CUBIN/PTX) by key.
 *
 * NVRTC takes tens to hundreds of milliseconds per program, so compiled
 * images are kept on disk and shared by every process of the same user.
 * The cache must never hand back a wrong kernel, must survive crashes and
 * concurrent writers, and must never turn a working compile into a failure:
 *
 * - Keys are XXH3-128 over caller-supplied parts (source, options, arch,
 *   NVRTC version), each length-prefixed so ("ab","c") and ("a","bc")
 *   differ, plus CACHE_FORMAT_VERSION, so a format change never reads old
 *   files as new ones.
 * - One self-checking file per entry, <32 hex digits>.tck: a header (magic,
 *   format version, the key, payload length, XXH64 of the payload), then
 *   the payload.  A reader checks all of it; anything wrong (a torn write,
 *   a flipped bit, a file from another version) is unlinked and reported as
 *   a miss, and the caller recompiles.
 * - Writes go to a mkstemp file in the same directory and are rename()d
 *   into place, which is atomic: readers see the old entry or the whole new
 *   one.  Two processes writing the same key both write complete,
 *   identical entries; the last rename wins.  No fsync: after a crash an
 *   entry may be short or empty, which the checks above catch, and paying
 *   an fsync per kernel for a recomputable cache is not worth it.
 * - Bounded: after each put, least recently used entries (oldest mtime; a
 *   hit touches the mtime) are evicted until the total is under the bound.
 *   Temp files older than an hour (a writer that died) are removed then.
 * - Trusts only its owner: anyone who can write the directory can plant a
 *   kernel under any key (neither key nor checksum is a secret), so a
 *   directory owned by another user, or writable by group or others, is
 *   refused (disabled, with a warning).  Entries are opened O_NOFOLLOW |
 *   O_NONBLOCK and must be regular files owned by the user (a link, FIFO or
 *   another user's file at an entry's name is a miss and left alone), and
 *   are created 0600.  Stats, clear and eviction count and delete only
 *   files named like entries (32 lowercase hex digits + .tck) that begin
 *   with this cache's header for that very key.
 * - A directory that cannot be created or read disables the cache: gets
 *   miss, puts store nothing, and cache_warning() has one line to print.  A
 *   directory that can be read but not written (a pre-filled, read-only
 *   cache) serves hits; puts, LRU touches and clear do nothing there.
 *
 * Not thread-safe per handle (the context serializes its use); any number
 * of handles and processes may share one directory.  The in-memory table
 * of loaded modules lives in the context, not here.
 */
#ifndef TC_CACHE_H
#define TC_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bump when the entry format or the meaning of a key's parts changes. */
#define CACHE_FORMAT_VERSION 1u
#define CACHE_DEFAULT_MAX_MB 1024u

typedef struct { uint8_t b[16]; } tc_cache_key;
typedef struct tc_cache tc_cache;

/* dir: the directory, or NULL for $TENSORC_CACHE_DIR, else
 * $XDG_CACHE_HOME/tensorc, else $HOME/.cache/tensorc (empty variables count
 * as unset); created like mkdir -p, mode 0700.  max_bytes: the bound, or 0
 * for $TENSORC_CACHE_MAX_MB, else CACHE_DEFAULT_MAX_MB (a value that is not
 * a positive number of MiB is warned about in cache_warning).  NULL only when out
 * of memory; an unusable directory gives a disabled cache (cache_warning). */
tc_cache *cache_open(const char *dir, uint64_t max_bytes);
void cache_close(tc_cache *c);

const char *cache_dir(const tc_cache *c);        /* resolved; NULL if none could be */
uint64_t cache_max_bytes(const tc_cache *c);
bool cache_enabled(const tc_cache *c);
/* "kernel cache disabled: cannot create '/x': Permission denied", or NULL.
 * Set when the cache is disabled, or on the first failed put. */
const char *cache_warning(const tc_cache *c);

/* The key of n parts (parts[i] of lens[i] bytes; a part may be NULL when
 * its length is 0). */
tc_cache_key cache_key_make(const void *const *parts, const size_t *lens, size_t n);
void cache_key_hex(tc_cache_key key, char out[33]);  /* 32 hex digits + NUL */

/* A hit gives a malloc'd copy of the payload (the caller frees it; never
 * NULL, even for an empty payload) and refreshes the entry's LRU time.  A
 * bad entry is removed and reported as a miss. */
bool cache_get(tc_cache *c, tc_cache_key key, void **data, size_t *len);
/* Stores atomically, then evicts LRU entries over the bound (never this
 * one).  False when disabled or the write failed (nothing half-written is
 * left behind). */
bool cache_put(tc_cache *c, tc_cache_key key, const void *data, size_t len);

void cache_stats(tc_cache *c, uint64_t *entries, uint64_t *bytes);
size_t cache_clear(tc_cache *c);                 /* entries removed */

#endif
