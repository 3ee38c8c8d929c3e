/* jit.c - jit_image: the in-memory table, then the disk cache, then NVRTC.
 *
 * The approach (see jit.h for the contract): compute the key once, look it
 * up in the context's table, then in the disk cache, and only then compile.
 * The table is a plain array searched linearly: a context holds one image
 * per program it built (a handful), and each lookup compares 16-byte keys,
 * which costs nothing next to hashing the source for the key.  Images are
 * never moved or freed before jit_ctx_free, so pointers handed out stay
 * valid while the table grows (the array holds pointers to entries' data,
 * and only the array is realloc'd).
 *
 * A compile error is returned with NVRTC's log and cached nowhere: the next
 * request compiles again (and fails the same way), which is what a user
 * fixing a kernel wants.
 */
#include "jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc.h"

typedef struct {
    tc_cache_key key;
    void *data;       /* malloc'd; PTX has a NUL after len bytes */
    size_t len;
} jit_entry;

struct jit_ctx {
    tc_cache *cache;
    char *facts;            /* the cache's nvrtc.facts (nvrtc_facts.h), or NULL */
    bool facts_saved;
    jit_entry *table;
    size_t n, cap;
    char salt[512];         /* jit_set_salt's: a part of every key when not empty */
};

const char *jit_origin_str(jit_origin o)
{
    switch (o) {
    case JIT_FROM_MEMORY: return "memory";
    case JIT_FROM_DISK: return "disk";
    case JIT_COMPILED: return "compiled";
    }
    return "?";
}

jit_ctx *jit_ctx_new(const char *dir_name, uint64_t max_bytes)
{
    jit_ctx *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->cache = cache_open(dir_name, max_bytes);
    if (!j->cache) {
        free(j);
        return NULL;
    }
    /* a warm start answers NVRTC's version from here, not by loading it
     * (only from a cache directory that is trusted: cache_open) */
    const char *dir = cache_dir(j->cache);
    if (dir && cache_enabled(j->cache) && (j->facts = malloc(strlen(dir) + sizeof "/nvrtc.facts")))
        sprintf(j->facts, "%s/nvrtc.facts", dir);
    nvrtc_facts_use(j->facts);
    return j;
}

void jit_ctx_free(jit_ctx *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n; i++)
        free(j->table[i].data);
    free(j->table);
    cache_close(j->cache);
    free(j->facts);
    free(j);
}

void jit_set_salt(jit_ctx *j, const char *salt)
{
    snprintf(j->salt, sizeof j->salt, "%s", salt ? salt : "");
}

const char *jit_warning(const jit_ctx *j)
{
    return j ? cache_warning(j->cache) : NULL;
}

size_t jit_table_size(const jit_ctx *j)
{
    return j ? j->n : 0;
}

/* diag_set when the caller wants a message; the status either way. */
static tc_status fail(tc_diag *d, tc_status st, const char *what)
{
    if (d)
        diag_set(d, st, (tc_loc){0}, "%s", what);
    return st;
}

static tc_status key_salted(const char *src, size_t len, const char *name, int arch, bool cubin,
                            const char *const *opts, int nopts, const char *salt,
                            tc_cache_key *key);

tc_status jit_key(const char *src, size_t len, const char *name, int arch, bool cubin,
                  const char *const *opts, int nopts, tc_cache_key *key)
{
    return key_salted(src, len, name, arch, cubin, opts, nopts, "", key);
}

/* jit_key with a salt (jit_set_salt): a sixth part when not empty, so an
 * unsalted key is what it always was and the caches made before hold. */
static tc_status key_salted(const char *src, size_t len, const char *name, int arch, bool cubin,
                            const char *const *opts, int nopts, const char *salt,
                            tc_cache_key *key)
{
    int major, minor;
    if (!nvrtc_version(&major, &minor))
        return TC_ERR_NO_DEVICE;
    /* Options joined with their NULs: unambiguous, since an option is a C
     * string and cannot contain one. */
    size_t olen = 0;
    for (int i = 0; i < nopts; i++)
        olen += strlen(opts[i]) + 1;
    char *joined = malloc(olen ? olen : 1);
    if (!joined)
        return TC_ERR_NOMEM;
    size_t at = 0;
    for (int i = 0; i < nopts; i++) {
        size_t l = strlen(opts[i]) + 1;
        memcpy(joined + at, opts[i], l);
        at += l;
    }
    char target[32], version[32];
    snprintf(target, sizeof target, "%s_%d", cubin ? "sm" : "compute", arch);
    snprintf(version, sizeof version, "%d.%d", major, minor);
    const void *parts[] = {src, name, joined, target, version, salt};
    size_t lens[] = {len, strlen(name), olen, strlen(target), strlen(version), strlen(salt)};
    *key = cache_key_make(parts, lens, sizeof parts / sizeof parts[0] - !*salt);
    free(joined);
    return TC_OK;
}

/* Appends an image the table now owns; frees data if the table cannot grow. */
static bool table_add(jit_ctx *j, tc_cache_key key, void *data, size_t len)
{
    if (j->n == j->cap) {
        size_t cap = j->cap ? 2 * j->cap : 8;
        jit_entry *t = realloc(j->table, cap * sizeof *t);
        if (!t) {
            free(data);
            return false;
        }
        j->table = t;
        j->cap = cap;
    }
    j->table[j->n++] = (jit_entry){key, data, len};
    return true;
}

/* A malloc'd copy of len bytes plus a NUL (the disk cache and NVRTC give
 * buffers of exactly len, and PTX must be a C string for the driver). */
static void *copy_with_nul(const void *data, size_t len)
{
    char *p = malloc(len + 1);
    if (!p)
        return NULL;
    if (len)
        memcpy(p, data, len);
    p[len] = '\0';
    return p;
}

tc_status jit_image(jit_ctx *j, const char *src, size_t len, const char *name, int arch,
                    bool cubin, const char *const *opts, int nopts, const void **image,
                    size_t *image_len, jit_origin *origin, tc_diag *d)
{
    if (!j || (!src && len) || !name || !image || !image_len || nopts < 0 || (nopts && !opts))
        return fail(d, TC_ERR_INVALID_ARG, "jit_image: a required argument is NULL");
    for (int i = 0; i < nopts; i++)
        if (!opts[i])
            return fail(d, TC_ERR_INVALID_ARG, "jit_image: an option is NULL");

    /* NVRTC is loaded only to compile, or when its facts are not known
     * (nvrtc_facts.h): the key needs its version */
    tc_cache_key key;
    tc_status st = key_salted(src ? src : "", len, name, arch, cubin, opts, nopts, j->salt, &key);
    if (st == TC_ERR_NO_DEVICE)
        return nvrtc_load(d);
    if (st != TC_OK)
        return fail(d, st, st == TC_ERR_NOMEM ? "out of memory" : "NVRTC version unavailable");
    if (nvrtc_loaded() && !j->facts_saved) {
        nvrtc_facts_save(j->facts);
        j->facts_saved = true;
    }

    for (size_t i = 0; i < j->n; i++)
        if (memcmp(j->table[i].key.b, key.b, sizeof key.b) == 0) {
            *image = j->table[i].data;
            *image_len = j->table[i].len;
            if (origin)
                *origin = JIT_FROM_MEMORY;
            return TC_OK;
        }

    void *data = NULL;
    size_t dlen = 0;
    jit_origin from = JIT_FROM_DISK;
    /* an empty entry is no image (a cache of another version, a bug): compile */
    if (cache_get(j->cache, key, &data, &dlen) && dlen > 0) {
        void *owned = copy_with_nul(data, dlen);
        free(data);
        data = owned;
    } else {
        free(data);
        data = NULL;
        /* NVRTC wants a C string; src need not be one. */
        char *csrc = copy_with_nul(src ? src : "", len);
        if (!csrc)
            return fail(d, TC_ERR_NOMEM, "out of memory");
        nvrtc_output out = {0};
        st = nvrtc_compile(csrc, name, arch, cubin, opts, nopts, &out, d);
        free(csrc);
        if (st != TC_OK) {
            nvrtc_output_free(&out);
            return st;
        }
        /* A failed put (disabled or unwritable cache) only costs a later
         * recompile; cache_warning records it for the user. */
        (void)cache_put(j->cache, key, out.data, out.len);
        data = copy_with_nul(out.data, out.len);
        dlen = out.len;
        nvrtc_output_free(&out);
        from = JIT_COMPILED;
    }
    if (!data || !table_add(j, key, data, dlen))
        return fail(d, TC_ERR_NOMEM, "out of memory");
    *image = j->table[j->n - 1].data;
    *image_len = dlen;
    if (origin)
        *origin = from;
    return TC_OK;
}
