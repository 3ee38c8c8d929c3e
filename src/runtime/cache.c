/* cache.c - the on-disk kernel cache (see cache.h for the design).
 *
 * Plain POSIX files: no lock files and no index, so there is nothing to
 * get out of step with the directory.  Every scan (stats, eviction, clear)
 * reads the directory afresh and tolerates files vanishing under it, since
 * other processes evict and replace entries concurrently.  Header integers
 * are written little-endian byte by byte, so the format does not depend on
 * the host.
 */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY   /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "outfile.h"

#define HEADER_SIZE 48            /* magic 8, version 4, reserved 4, key 16, len 8, xxh64 8 */
#define ENTRY_EXT ".tck"
#define TMP_PREFIX ".tmp-"
#define STALE_TMP_SECONDS 3600

static const char magic[8] = {'T', 'C', 'K', 'C', 'A', 'C', 'H', 'E'};

struct tc_cache {
    char *dir;                    /* NULL when no directory could be named */
    char *warning;
    uint64_t max_bytes;
    bool enabled;
    bool read_only;               /* enabled for gets only: the directory is not writable */
};

/* --- small helpers ------------------------------------------------------ */

static char *vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static char *vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    return s;
}

/* Keeps the first warning only: it is the one that explains the rest. */
static void warn(tc_cache *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(tc_cache *c, const char *fmt, ...)
{
    if (c->warning)
        return;
    va_list ap;
    va_start(ap, fmt);
    c->warning = vformat(fmt, ap);
    va_end(ap);
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Reads exactly n bytes unless the file ends or fails first. */
static bool read_all(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

/* mkdir -p with mode 0700 (as XDG asks of cache directories): a directory
 * made group-writable by a umask of 002 would then be refused by
 * cache_open; 0 or an errno. */
static int mkdir_p(const char *path)
{
    char *p = strdup(path);
    if (!p)
        return ENOMEM;
    int err = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char saved = *s;
        *s = '\0';
        if (mkdir(p, 0700) != 0) {
            struct stat st;
            err = errno;
            if (err == EEXIST)
                err = stat(p, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
        }
        if (err || saved == '\0')
            break;
        *s = saved;
    }
    free(p);
    return err;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static char *resolve_dir(const char *dir)
{
    const char *v;
    if (dir && *dir)
        return strdup(dir);
    if ((v = env("TENSORC_CACHE_DIR")))
        return strdup(v);
    if ((v = env("XDG_CACHE_HOME")))
        return format("%s/tensorc", v);
    if ((v = env("HOME")))
        return format("%s/.cache/tensorc", v);
    return NULL;
}

static uint64_t resolve_max(tc_cache *c, uint64_t max_bytes)
{
    if (max_bytes)
        return max_bytes;
    const char *v = env("TENSORC_CACHE_MAX_MB");
    if (v) {
        char *end;
        errno = 0;
        unsigned long long mb = strtoull(v, &end, 10);
        if (errno == 0 && *end == '\0' && v[0] >= '0' && v[0] <= '9' && mb > 0 &&
            mb <= UINT64_MAX / (1024 * 1024))
            return (uint64_t)mb * 1024 * 1024;
        warn(c, "TENSORC_CACHE_MAX_MB='%s' is not a positive whole number of MiB; using the "
                "default, %u", v, CACHE_DEFAULT_MAX_MB);
    }
    return (uint64_t)CACHE_DEFAULT_MAX_MB * 1024 * 1024;
}

/* Whether the file an entry was read from is one this cache wrote: ours,
 * and a regular file (a FIFO, device or link at an entry's name is not). */
static bool owned_regular(const struct stat *st)
{
    return S_ISREG(st->st_mode) && st->st_uid == geteuid();
}

/* Open an entry (or any file of the directory) for reading without
 * following a link and without blocking on a FIFO; -1 unless it is an
 * owned regular file (*st filled). */
static int open_entry(const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0 || !owned_regular(st)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* --- open / close --------------------------------------------------------- */

tc_cache *cache_open(const char *dir, uint64_t max_bytes)
{
    tc_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->max_bytes = resolve_max(c, max_bytes);
    c->dir = resolve_dir(dir);
    if (!c->dir) {
        warn(c, "kernel cache disabled: no directory for it (set TENSORC_CACHE_DIR, "
                "XDG_CACHE_HOME or HOME)");
        return c;
    }
    int err = mkdir_p(c->dir);
    if (err) {
        warn(c, "kernel cache disabled: cannot create '%s': %s", c->dir, strerror(err));
        return c;
    }
    /* Trust only a directory of our own that nobody else can write: anyone
     * who can write it can plant a kernel under any key (the key and the
     * checksum are not secrets), and root would load it. */
    struct stat st;
    if (stat(c->dir, &st) != 0) {
        warn(c, "kernel cache disabled: '%s': %s", c->dir, strerror(errno));
        return c;
    }
    if (st.st_uid != geteuid()) {
        warn(c, "kernel cache disabled: '%s' belongs to uid %ld, not to this user (uid %ld)",
             c->dir, (long)st.st_uid, (long)geteuid());
        return c;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        warn(c, "kernel cache disabled: '%s' can be written by %s (mode %03o); "
                "chmod go-w it to use it", c->dir, st.st_mode & S_IWOTH ? "anyone" : "its group",
             (unsigned)(st.st_mode & 0777));
        return c;
    }
    /* access() answers for the real uid, which is the one that writes; a
     * read-only directory (a pre-filled cache) still serves hits */
    if (access(c->dir, W_OK | X_OK) != 0) {
        if (access(c->dir, R_OK | X_OK) != 0) {
            warn(c, "kernel cache disabled: cannot read '%s': %s", c->dir, strerror(errno));
            return c;
        }
        c->read_only = true;
    }
    c->enabled = true;
    return c;
}

void cache_close(tc_cache *c)
{
    if (!c)
        return;
    free(c->dir);
    free(c->warning);
    free(c);
}

const char *cache_dir(const tc_cache *c) { return c->dir; }
uint64_t cache_max_bytes(const tc_cache *c) { return c->max_bytes; }
bool cache_enabled(const tc_cache *c) { return c->enabled; }
const char *cache_warning(const tc_cache *c) { return c->warning; }

/* --- keys --------------------------------------------------------------------- */

tc_cache_key cache_key_make(const void *const *parts, const size_t *lens, size_t n)
{
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_128bits_reset(&st);
    uint8_t word[8];
    put_le(word, CACHE_FORMAT_VERSION, 4);
    XXH3_128bits_update(&st, word, 4);
    put_le(word, n, 8);
    XXH3_128bits_update(&st, word, 8);
    for (size_t i = 0; i < n; i++) {
        put_le(word, lens[i], 8);
        XXH3_128bits_update(&st, word, 8);
        if (lens[i])
            XXH3_128bits_update(&st, parts[i], lens[i]);
    }
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(&st));
    tc_cache_key key;
    memcpy(key.b, canon.digest, sizeof key.b);
    return key;
}

void cache_key_hex(tc_cache_key key, char out[33])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hex[key.b[i] >> 4];
        out[2 * i + 1] = hex[key.b[i] & 15];
    }
    out[32] = '\0';
}

static char *entry_path(const tc_cache *c, tc_cache_key key)
{
    char hex[33];
    cache_key_hex(key, hex);
    return format("%s/%s" ENTRY_EXT, c->dir, hex);
}

/* --- get ------------------------------------------------------------------------ */

/* Removes a bad entry, unless another process has meanwhile renamed a new
 * file into its place (then that file is not ours to judge). */
static void remove_bad(const char *path, const struct stat *seen)
{
    struct stat now;
    if (lstat(path, &now) == 0 && now.st_ino == seen->st_ino && now.st_dev == seen->st_dev)
        unlink(path);
}

bool cache_get(tc_cache *c, tc_cache_key key, void **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (!c->enabled)
        return false;
    char *path = entry_path(c, key);
    if (!path)
        return false;
    /* a link, FIFO, device or someone else's file at the entry's name is a
     * miss, left alone (not ours to delete); the put renames over it */
    struct stat st;
    int fd = open_entry(path, &st);
    if (fd < 0) {
        free(path);
        return false;
    }
    uint8_t h[HEADER_SIZE];
    uint8_t *buf = NULL;
    bool ok = false;
    if (st.st_size < HEADER_SIZE || !read_all(fd, h, HEADER_SIZE))
        goto done;
    if (memcmp(h, magic, 8) != 0 || get_le(h + 8, 4) != CACHE_FORMAT_VERSION ||
        memcmp(h + 16, key.b, 16) != 0)
        goto done;
    uint64_t n = get_le(h + 32, 8);
    if (n != (uint64_t)st.st_size - HEADER_SIZE || n > SIZE_MAX - 1)
        goto done;
    buf = malloc(n ? (size_t)n : 1);
    if (!buf) {                       /* not the entry's fault: keep it */
        close(fd);
        free(path);
        return false;
    }
    if (!read_all(fd, buf, (size_t)n) || XXH64(buf, (size_t)n, 0) != get_le(h + 40, 8))
        goto done;
    ok = true;
    *data = buf;
    *len = (size_t)n;
    if (!c->read_only)
        futimens(fd, NULL);               /* LRU: now is its last use */
done:
    close(fd);
    if (!ok && !c->read_only) {
        free(buf);
        remove_bad(path, &st);
    }
    free(path);
    return ok;
}

/* --- directory scans ---------------------------------------------------------- */

typedef struct {
    char *name;
    uint64_t size;
    struct timespec mtime;
} entry;

typedef struct {
    entry *v;
    size_t n, cap;
} entry_list;

static void list_free(entry_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].name);
    free(l->v);
}

/* NAME is <32 lowercase hex digits>.tck, the name cache_put gives. */
static bool is_entry_name(const char *name)
{
    for (int i = 0; i < 32; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
            return false;
    return strcmp(name + 32, ENTRY_EXT) == 0;
}

/* Whether the file begins with this cache's header for the key its name
 * says: what clear and eviction require before deleting anything. */
static bool has_own_header(int dfd, const char *name)
{
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return false;
    struct stat st;
    uint8_t h[HEADER_SIZE];
    bool ok = fstat(fd, &st) == 0 && owned_regular(&st) && read_all(fd, h, HEADER_SIZE) &&
              memcmp(h, magic, 8) == 0;
    close(fd);
    if (!ok)
        return false;
    char hex[33];
    tc_cache_key key;
    memcpy(key.b, h + 16, 16);
    cache_key_hex(key, hex);
    return strncmp(hex, name, 32) == 0;
}

/* The directory's entries; with clean_tmp, temp files older than an hour
 * are removed on the way (their writers died). */
static bool scan(tc_cache *c, entry_list *out, bool clean_tmp)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(c->dir);
    if (!d)
        return false;
    time_t now = time(NULL);
    struct dirent *de;
    bool ok = true;
    while ((de = readdir(d))) {
        bool is_entry = is_entry_name(de->d_name);
        bool is_tmp = strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0 &&
                      strlen(de->d_name) == strlen(TMP_PREFIX) + 6;
        if (!is_entry && !is_tmp)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !owned_regular(&st))
            continue;                    /* gone meanwhile, or not ours */
        if (is_entry && !has_own_header(dirfd(d), de->d_name))
            continue;                    /* a *.tck this cache did not write */
        if (is_tmp) {
            if (clean_tmp && now - st.st_mtim.tv_sec > STALE_TMP_SECONDS)
                unlinkat(dirfd(d), de->d_name, 0);
            continue;
        }
        if (out->n == out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 64;
            entry *v = realloc(out->v, cap * sizeof *v);
            if (!v) {
                ok = false;
                break;
            }
            out->v = v;
            out->cap = cap;
        }
        char *name = strdup(de->d_name);
        if (!name) {
            ok = false;
            break;
        }
        out->v[out->n++] = (entry){name, (uint64_t)st.st_size, st.st_mtim};
    }
    closedir(d);
    if (!ok)
        list_free(out);
    return ok;
}

/* Oldest first; ties by name so eviction order is deterministic. */
static int by_age(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void evict(tc_cache *c, const char *keep)
{
    entry_list l;
    if (!scan(c, &l, true))
        return;
    uint64_t total = 0;
    for (size_t i = 0; i < l.n; i++)
        total += l.v[i].size;
    if (total > c->max_bytes) {
        qsort(l.v, l.n, sizeof *l.v, by_age);
        for (size_t i = 0; i < l.n && total > c->max_bytes; i++) {
            if (strcmp(l.v[i].name, keep) == 0)
                continue;
            char *p = format("%s/%s", c->dir, l.v[i].name);
            if (p && (unlink(p) == 0 || errno == ENOENT))
                total -= l.v[i].size;
            free(p);
        }
    }
    list_free(&l);
}

/* --- put ------------------------------------------------------------------------ */

bool cache_put(tc_cache *c, tc_cache_key key, const void *data, size_t len)
{
    if (!c->enabled || c->read_only)
        return false;
    char *path = entry_path(c, key);
    char *tmp = format("%s/" TMP_PREFIX "XXXXXX", c->dir);
    bool ok = false;
    if (!path || !tmp)
        goto out;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        warn(c, "kernel cache: cannot write to '%s': %s", c->dir, strerror(errno));
        goto out;
    }
    uint8_t h[HEADER_SIZE] = {0};
    memcpy(h, magic, 8);
    put_le(h + 8, CACHE_FORMAT_VERSION, 4);
    memcpy(h + 16, key.b, 16);
    put_le(h + 32, len, 8);
    put_le(h + 40, XXH64(data, len, 0), 8);
    /* mkstemp's 0600: the user's kernels are nobody else's business */
    bool written = outfile_write_all(fd, h, HEADER_SIZE) && outfile_write_all(fd, data, len);
    int err = errno;
    if (close(fd) != 0 && written) {
        written = false;
        err = errno;
    }
    if (!written || rename(tmp, path) != 0) {
        if (written)
            err = errno;
        warn(c, "kernel cache: cannot write '%s': %s", path, strerror(err));
        unlink(tmp);
        goto out;
    }
    ok = true;
    const char *base = strrchr(path, '/');
    evict(c, base ? base + 1 : path);
out:
    free(path);
    free(tmp);
    return ok;
}

/* --- stats / clear ------------------------------------------------------------- */

void cache_stats(tc_cache *c, uint64_t *entries, uint64_t *bytes)
{
    *entries = 0;
    *bytes = 0;
    entry_list l;
    if (!c->enabled || !scan(c, &l, false))
        return;
    for (size_t i = 0; i < l.n; i++)
        *bytes += l.v[i].size;
    *entries = l.n;
    list_free(&l);
}

size_t cache_clear(tc_cache *c)
{
    entry_list l;
    if (!c->enabled || c->read_only || !scan(c, &l, true))
        return 0;
    size_t removed = 0;
    for (size_t i = 0; i < l.n; i++) {
        char *p = format("%s/%s", c->dir, l.v[i].name);
        if (p && unlink(p) == 0)
            removed++;
        free(p);
    }
    list_free(&l);
    return removed;
}
