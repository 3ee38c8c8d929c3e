/* test_cache.c - the on-disk kernel cache: hits, misses, corrupted entries,
 * LRU eviction, a disabled cache, directory resolution, and 8 processes
 * writing one directory at once.  Each test works in its own mkdtemp
 * directory, removed afterwards.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "nvrtc_facts.h"

#define ENTRY_OVERHEAD 48          /* the header size, cache.c */

static char *path_of(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        chmod(path, 0755);
        DIR *d = opendir(path);
        if (d) {
            struct dirent *de;
            while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                    continue;
                char *p = path_of(path, de->d_name);
                rm_rf(p);
                free(p);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int setup(void **state)
{
    char tmpl[] = "/tmp/tc_cache_test_XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        return -1;
    *state = strdup(dir);
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    rm_rf(*state);
    free(*state);
    return 0;
}

static tc_cache_key key_of(const char *s)
{
    const void *parts[] = {s, "opts", "sm_90", "nvrtc 12.4"};
    size_t lens[] = {strlen(s), 4, 5, 10};
    return cache_key_make(parts, lens, 4);
}

static char *entry_file(const char *dir, tc_cache_key k)
{
    char hex[33], name[40];
    cache_key_hex(k, hex);
    snprintf(name, sizeof name, "%s.tck", hex);
    return path_of(dir, name);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void set_mtime(const char *path, time_t t)
{
    struct timespec ts[2] = {{t, 0}, {t, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void expect_hit(tc_cache *c, tc_cache_key k, const void *want, size_t want_len)
{
    void *data = (void *)1;
    size_t len = 12345;
    assert_true(cache_get(c, k, &data, &len));
    assert_non_null(data);
    assert_int_equal(len, want_len);
    if (want_len)
        assert_memory_equal(data, want, want_len);
    free(data);
}

static void expect_miss(tc_cache *c, tc_cache_key k)
{
    void *data = (void *)1;
    size_t len = 12345;
    assert_false(cache_get(c, k, &data, &len));
    assert_null(data);
    assert_int_equal(len, 0);
}

static void miss_then_hit(void **state)
{
    const char *dir = *state;
    tc_cache *c = cache_open(dir, 0);
    assert_non_null(c);
    assert_true(cache_enabled(c));
    assert_null(cache_warning(c));
    assert_string_equal(cache_dir(c), dir);
    tc_cache_key k = key_of("kernel void f() {}");
    expect_miss(c, k);
    const char payload[] = "\x7f" "ELF cubin bytes \0 with a NUL";
    assert_true(cache_put(c, k, payload, sizeof payload));
    expect_hit(c, k, payload, sizeof payload);
    /* A second handle (another process, in effect) sees it too. */
    tc_cache *c2 = cache_open(dir, 0);
    expect_hit(c2, k, payload, sizeof payload);
    /* Overwriting replaces the entry whole. */
    assert_true(cache_put(c2, k, "new", 3));
    expect_hit(c, k, "new", 3);
    /* An empty payload is a hit with length 0 and a non-NULL pointer. */
    tc_cache_key e = key_of("empty");
    assert_true(cache_put(c, e, NULL, 0));
    void *data = NULL;
    size_t len = 99;
    assert_true(cache_get(c, e, &data, &len));
    assert_non_null(data);
    assert_int_equal(len, 0);
    free(data);
    uint64_t n, bytes;
    cache_stats(c, &n, &bytes);
    assert_int_equal(n, 2);
    assert_int_equal(bytes, 2 * ENTRY_OVERHEAD + 3);
    assert_int_equal(cache_clear(c), 2);
    cache_stats(c, &n, &bytes);
    assert_int_equal(n, 0);
    assert_int_equal(bytes, 0);
    expect_miss(c, k);
    cache_close(c2);
    cache_close(c);
}

static void keys_differ(void **state)
{
    (void)state;
    tc_cache_key a = key_of("a"), a2 = key_of("a"), b = key_of("b");
    assert_memory_equal(a.b, a2.b, 16);
    assert_memory_not_equal(a.b, b.b, 16);
    /* Length prefixes: ("ab","c") is not ("a","bc"). */
    const void *p1[] = {"ab", "c"}, *p2[] = {"a", "bc"};
    size_t l1[] = {2, 1}, l2[] = {1, 2};
    tc_cache_key x = cache_key_make(p1, l1, 2), y = cache_key_make(p2, l2, 2);
    assert_memory_not_equal(x.b, y.b, 16);
    /* An empty trailing part still counts. */
    const void *p3[] = {"ab", "c", NULL};
    size_t l3[] = {2, 1, 0};
    tc_cache_key z = cache_key_make(p3, l3, 3);
    assert_memory_not_equal(x.b, z.b, 16);
    char hex[33];
    cache_key_hex(a, hex);
    assert_int_equal(strlen(hex), 32);
    assert_int_equal(strspn(hex, "0123456789abcdef"), 32);
}

/* Corrupts the entry for k with fn, then expects a miss, the file gone, and
 * a working put afterwards. */
static void check_corruption(const char *dir, void (*fn)(const char *path, const char *dir))
{
    tc_cache *c = cache_open(dir, 0);
    tc_cache_key k = key_of("victim");
    char payload[1000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (char)(i * 7 + 3);
    assert_true(cache_put(c, k, payload, sizeof payload));
    char *path = entry_file(dir, k);
    assert_true(exists(path));
    fn(path, dir);
    expect_miss(c, k);
    assert_false(exists(path));
    assert_true(cache_put(c, k, payload, sizeof payload));
    expect_hit(c, k, payload, sizeof payload);
    free(path);
    cache_close(c);
}

static void patch_byte(const char *path, off_t at)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, at), 1);
    b ^= 0x10;
    assert_int_equal(pwrite(fd, &b, 1, at), 1);
    close(fd);
}

static void flip_payload(const char *path, const char *dir) { (void)dir; patch_byte(path, ENTRY_OVERHEAD + 500); }
static void flip_magic(const char *path, const char *dir) { (void)dir; patch_byte(path, 0); }
static void flip_length(const char *path, const char *dir) { (void)dir; patch_byte(path, 32); }
static void truncate_it(const char *path, const char *dir) { (void)dir; assert_int_equal(truncate(path, 700), 0); }
static void truncate_header(const char *path, const char *dir) { (void)dir; assert_int_equal(truncate(path, 20), 0); }
static void empty_it(const char *path, const char *dir) { (void)dir; assert_int_equal(truncate(path, 0), 0); }

/* A well-formed entry for another key, renamed into this key's place. */
static void wrong_key(const char *path, const char *dir)
{
    tc_cache *c = cache_open(dir, 0);
    tc_cache_key other = key_of("other");
    assert_true(cache_put(c, other, "other payload", 13));
    char *op = entry_file(dir, other);
    assert_int_equal(rename(op, path), 0);
    free(op);
    cache_close(c);
}

static void corrupted_entries(void **state)
{
    check_corruption(*state, flip_payload);
    check_corruption(*state, flip_magic);
    check_corruption(*state, flip_length);
    check_corruption(*state, truncate_it);
    check_corruption(*state, truncate_header);
    check_corruption(*state, empty_it);
    check_corruption(*state, wrong_key);
}

static void lru_eviction(void **state)
{
    const char *dir = *state;
    enum { PAY = 100, FILE_SIZE = PAY + ENTRY_OVERHEAD };
    tc_cache *c = cache_open(dir, 3 * FILE_SIZE);     /* room for three */
    assert_int_equal(cache_max_bytes(c), 3 * FILE_SIZE);
    char payload[PAY];
    memset(payload, 'x', sizeof payload);
    const char *names[] = {"A", "B", "C", "D", "E"};
    tc_cache_key k[5];
    char *p[5];
    for (int i = 0; i < 5; i++) {
        k[i] = key_of(names[i]);
        p[i] = entry_file(dir, k[i]);
    }
    for (int i = 0; i < 3; i++)
        assert_true(cache_put(c, k[i], payload, PAY));
    set_mtime(p[0], 1000000);       /* A oldest */
    set_mtime(p[1], 3000000);
    set_mtime(p[2], 2000000);
    assert_true(cache_put(c, k[3], payload, PAY));   /* evicts A */
    assert_false(exists(p[0]));
    assert_true(exists(p[1]) && exists(p[2]) && exists(p[3]));

    set_mtime(p[1], 1000000);       /* B oldest, but a hit refreshes it */
    set_mtime(p[2], 2000000);
    set_mtime(p[3], 3000000);
    expect_hit(c, k[1], payload, PAY);
    assert_true(cache_put(c, k[4], payload, PAY));   /* evicts C */
    assert_false(exists(p[2]));
    assert_true(exists(p[1]) && exists(p[3]) && exists(p[4]));
    uint64_t n, bytes;
    cache_stats(c, &n, &bytes);
    assert_int_equal(n, 3);
    assert_int_equal(bytes, 3 * FILE_SIZE);

    /* An entry bigger than the bound is kept (never the one just written);
     * everything older goes. */
    char big[4 * FILE_SIZE];
    memset(big, 'y', sizeof big);
    tc_cache_key kb = key_of("big");
    assert_true(cache_put(c, kb, big, sizeof big));
    cache_stats(c, &n, &bytes);
    assert_int_equal(n, 1);
    expect_hit(c, kb, big, sizeof big);
    for (int i = 0; i < 5; i++)
        free(p[i]);
    cache_close(c);
}

static void stale_temp_files(void **state)
{
    const char *dir = *state;
    char *old = path_of(dir, ".tmp-OLD123"), *fresh = path_of(dir, ".tmp-NEW123");
    FILE *f = fopen(old, "w");
    assert_non_null(f);
    fclose(f);
    f = fopen(fresh, "w");
    assert_non_null(f);
    fclose(f);
    set_mtime(old, time(NULL) - 7200);
    tc_cache *c = cache_open(dir, 0);
    assert_true(cache_put(c, key_of("k"), "v", 1));
    assert_false(exists(old));
    assert_true(exists(fresh));      /* may be another process's write */
    uint64_t n, bytes;
    cache_stats(c, &n, &bytes);
    assert_int_equal(n, 1);          /* temp files are not entries */
    free(old);
    free(fresh);
    cache_close(c);
}

static void check_disabled(tc_cache *c, const char *want_warning)
{
    assert_non_null(c);
    assert_false(cache_enabled(c));
    assert_non_null(cache_warning(c));
    assert_string_equal(cache_warning(c), want_warning);
    tc_cache_key k = key_of("k");
    assert_false(cache_put(c, k, "v", 1));
    expect_miss(c, k);
    uint64_t n = 7, bytes = 7;
    cache_stats(c, &n, &bytes);
    assert_int_equal(n, 0);
    assert_int_equal(bytes, 0);
    assert_int_equal(cache_clear(c), 0);
}

static void unusable_directory(void **state)
{
    const char *dir = *state;
    /* A directory under a regular file cannot be created, even by root. */
    char *file = path_of(dir, "file");
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    char *sub = path_of(file, "sub/deeper");
    char want[512];
    snprintf(want, sizeof want, "kernel cache disabled: cannot create '%s': Not a directory", sub);
    tc_cache *c = cache_open(sub, 0);
    check_disabled(c, want);
    cache_close(c);

    /* A read-only directory, where permissions bind (not as root). */
    char *ro = path_of(dir, "ro");
    assert_int_equal(mkdir(ro, 0555), 0);
    assert_int_equal(chmod(ro, 0555), 0);
    if (access(ro, W_OK) != 0) {
        snprintf(want, sizeof want, "kernel cache disabled: cannot write to '%s': Permission denied", ro);
        c = cache_open(ro, 0);
        check_disabled(c, want);
        cache_close(c);
    }
    free(ro);
    free(sub);
    free(file);
}

static void restore_env(const char *name, const char *saved);

/* --- a cache that trusts only its owner ---------------------------------------- */

#define OTHER_UID 65534                /* "nobody": another local user */

/* Write a well-formed entry for key k holding payload, as cache_put would,
 * straight into dir: what another user who can write the directory plants
 * (the key and the checksum are no secret). */
static void plant(const char *dir, tc_cache_key k, const char *payload)
{
    char *other = path_of(dir, ".plant");
    assert_int_equal(mkdir(other, 0700), 0);
    tc_cache *c = cache_open(other, 0);
    assert_true(cache_put(c, k, payload, strlen(payload)));
    cache_close(c);
    char *from = entry_file(other, k), *to = entry_file(dir, k);
    assert_int_equal(rename(from, to), 0);
    free(from);
    free(to);
    rm_rf(other);
    free(other);
}

static void foreign_directory_refused(void **state)
{
    const char *dir = *state;
    tc_cache_key k = key_of("softmax");
    char want[512];
    /* writable by anyone, or by the group: a planted kernel would be loaded */
    assert_int_equal(chmod(dir, 0777), 0);
    plant(dir, k, "layernorm's kernel");
    tc_cache *c = cache_open(dir, 0);
    snprintf(want, sizeof want, "kernel cache disabled: '%s' can be written by anyone (mode 777); "
             "chmod go-w it to use it", dir);
    check_disabled(c, want);
    cache_close(c);
    assert_int_equal(chmod(dir, 0770), 0);
    c = cache_open(dir, 0);
    snprintf(want, sizeof want, "kernel cache disabled: '%s' can be written by its group (mode 770); "
             "chmod go-w it to use it", dir);
    check_disabled(c, want);
    cache_close(c);
    assert_int_equal(chmod(dir, 0700), 0);
    /* owned by another user */
    if (geteuid() == 0) {
        assert_int_equal(chown(dir, OTHER_UID, OTHER_UID), 0);
        c = cache_open(dir, 0);
        snprintf(want, sizeof want, "kernel cache disabled: '%s' belongs to uid %d, not to this "
                 "user (uid 0)", dir, OTHER_UID);
        check_disabled(c, want);
        cache_close(c);
        assert_int_equal(chown(dir, 0, 0), 0);
        /* an entry file of another user's in our own directory is a miss, left alone */
        char *e = entry_file(dir, k);
        assert_int_equal(chown(e, OTHER_UID, OTHER_UID), 0);
        c = cache_open(dir, 0);
        assert_true(cache_enabled(c));
        expect_miss(c, k);
        assert_true(exists(e));
        cache_close(c);
        free(e);
    } else {
        c = cache_open("/", 0); /* root's */
        assert_false(cache_enabled(c));
        assert_non_null(strstr(cache_warning(c), "belongs to uid 0, not to this user"));
        cache_close(c);
    }
}

/* A FIFO at an entry's name (or at nvrtc.facts) is a miss at once: the
 * child is killed by an alarm if a lookup blocks. */
static void fifo_answered_at_once(void **state)
{
    const char *dir = *state;
    tc_cache_key k = key_of("fifo");
    char *e = entry_file(dir, k);
    assert_int_equal(mkfifo(e, 0600), 0);
    char *facts = path_of(dir, "nvrtc.facts");
    assert_int_equal(mkfifo(facts, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(5);
        tc_cache *c = cache_open(dir, 0);
        void *data;
        size_t len;
        bool hit = cache_get(c, k, &data, &len);
        nvrtc_facts f;
        bool facts_ok = facts_read(facts, &f);
        uint64_t n, bytes;
        cache_stats(c, &n, &bytes);
        size_t cleared = cache_clear(c);
        cache_close(c);
        _exit(!hit && !facts_ok && n == 0 && cleared == 0 ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status)); /* not killed by the alarm: nothing blocked */
    assert_int_equal(WEXITSTATUS(status), 0);
    struct stat st;
    assert_int_equal(lstat(e, &st), 0);
    assert_true(S_ISFIFO(st.st_mode)); /* not ours to delete */
    /* a put replaces it with a real entry */
    tc_cache *c = cache_open(dir, 0);
    assert_true(cache_put(c, k, "v", 1));
    expect_hit(c, k, "v", 1);
    cache_close(c);
    free(facts);
    free(e);
}

/* A symbolic link at an entry's name is not followed: a miss. */
static void symlinked_entry_missed(void **state)
{
    const char *dir = *state;
    tc_cache_key k = key_of("linked");
    char *sub = path_of(dir, "elsewhere");
    assert_int_equal(mkdir(sub, 0700), 0);
    tc_cache *c = cache_open(sub, 0);
    assert_true(cache_put(c, k, "v", 1));
    cache_close(c);
    char *real = entry_file(sub, k), *link = entry_file(dir, k);
    assert_int_equal(symlink(real, link), 0);
    c = cache_open(dir, 0);
    expect_miss(c, k);
    uint64_t n, bytes;
    cache_stats(c, &n, &bytes);
    assert_int_equal(n, 0);
    cache_close(c);
    free(real);
    free(link);
    free(sub);
}

static void entries_private(void **state)
{
    const char *dir = *state;
    tc_cache *c = cache_open(dir, 0);
    tc_cache_key k = key_of("private");
    assert_true(cache_put(c, k, "v", 1));
    char *e = entry_file(dir, k);
    struct stat st;
    assert_int_equal(stat(e, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    cache_close(c);
    free(e);
    /* a directory it creates under umask 002 is still its own alone */
    mode_t old = umask(002);
    char *sub = path_of(dir, "made/here");
    c = cache_open(sub, 0);
    umask(old);
    assert_true(cache_enabled(c));
    assert_int_equal(stat(sub, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    cache_close(c);
    free(sub);
}

/* Read-only directory: hits served, nothing written or removed.  As root
 * permissions do not bind, so a child drops to another uid first. */
static int read_only_body(const char *dir)
{
    tc_cache_key k = key_of("pre-filled");
    tc_cache *c = cache_open(dir, 0);
    if (!cache_put(c, k, "image", 5))
        return 2;
    cache_close(c);
    if (chmod(dir, 0555) != 0)
        return 3;
    c = cache_open(dir, 0);
    void *data = NULL;
    size_t len = 0;
    bool ok = cache_enabled(c) && !cache_warning(c) && cache_get(c, k, &data, &len) && len == 5 &&
              memcmp(data, "image", 5) == 0 && !cache_put(c, key_of("new"), "x", 1) &&
              cache_clear(c) == 0;
    free(data);
    cache_close(c);
    chmod(dir, 0700);
    return ok ? 0 : 4;
}

static void read_only_cache_reads(void **state)
{
    const char *dir = *state;
    char *sub = path_of(dir, "ro");
    assert_int_equal(mkdir(sub, 0700), 0);
    if (geteuid() != 0) {
        assert_int_equal(read_only_body(sub), 0);
    } else {
        assert_int_equal(chown(sub, OTHER_UID, OTHER_UID), 0);
        assert_int_equal(chmod(dir, 0711), 0); /* the other uid must reach sub */
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(setgid(OTHER_UID) == 0 && setuid(OTHER_UID) == 0 ? read_only_body(sub) : 5);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    free(sub);
}

/* Clear and eviction delete only what this cache wrote. */
static void clear_only_own_entries(void **state)
{
    const char *dir = *state;
    tc_cache *c = cache_open(dir, 0);
    tc_cache_key k = key_of("ours");
    assert_true(cache_put(c, k, "v", 1));
    const char *foreign[] = {"notes.tck", "0123456789abcdef0123456789abcdef.tck",
                             "ABCDEF0123456789ABCDEF0123456789.tck", ".tmp-important"};
    for (int i = 0; i < 4; i++) {
        char *p = path_of(dir, foreign[i]);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs("the user's own data, not a cache entry, long enough to pass for a header......", f);
        fclose(f);
        set_mtime(p, 1000); /* old: eviction and stale-temp cleaning would pick it first */
        free(p);
    }
    /* a real entry renamed to another key's name: not its own */
    char *e = entry_file(dir, k), *renamed = entry_file(dir, key_of("other"));
    assert_int_equal(link(e, renamed), 0);
    uint64_t n, bytes;
    cache_stats(c, &n, &bytes);
    assert_int_equal(n, 1);
    cache_close(c);
    /* eviction under a tiny bound */
    c = cache_open(dir, 1);
    assert_true(cache_put(c, key_of("new"), "w", 1));
    cache_close(c);
    c = cache_open(dir, 0);
    assert_int_equal(cache_clear(c), 1); /* "new"; "ours" was evicted */
    cache_close(c);
    for (int i = 0; i < 4; i++) {
        char *p = path_of(dir, foreign[i]);
        assert_true(exists(p));
        free(p);
    }
    assert_true(exists(renamed));
    assert_false(exists(e));
    free(e);
    free(renamed);
}

static void bad_max_mb_warned(void **state)
{
    const char *dir = *state;
    char *saved = getenv("TENSORC_CACHE_MAX_MB") ? strdup(getenv("TENSORC_CACHE_MAX_MB")) : NULL;
    const char *bad[] = {"abc", "-5", "0", "12MB", " 7", "99999999999999999999"};
    for (int i = 0; i < 6; i++) {
        setenv("TENSORC_CACHE_MAX_MB", bad[i], 1);
        tc_cache *c = cache_open(dir, 0);
        assert_true(cache_enabled(c));
        assert_int_equal(cache_max_bytes(c), (uint64_t)CACHE_DEFAULT_MAX_MB << 20);
        char want[256];
        snprintf(want, sizeof want, "TENSORC_CACHE_MAX_MB='%s' is not a positive whole number of "
                 "MiB; using the default, %u", bad[i], CACHE_DEFAULT_MAX_MB);
        assert_non_null(cache_warning(c));
        assert_string_equal(cache_warning(c), want);
        cache_close(c);
    }
    setenv("TENSORC_CACHE_MAX_MB", "7", 1);
    tc_cache *c = cache_open(dir, 0);
    assert_int_equal(cache_max_bytes(c), 7u << 20);
    assert_null(cache_warning(c));
    cache_close(c);
    restore_env("TENSORC_CACHE_MAX_MB", saved);
    free(saved);
}

static void restore_env(const char *name, const char *saved)
{
    if (saved)
        setenv(name, saved, 1);
    else
        unsetenv(name);
}

static void expect_dir(const char *want)
{
    tc_cache *c = cache_open(NULL, 0);
    assert_non_null(c);
    assert_string_equal(cache_dir(c), want);
    assert_true(cache_enabled(c));
    struct stat st;
    assert_int_equal(stat(want, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    cache_close(c);
}

static void environment_order(void **state)
{
    const char *dir = *state;
    char *names[] = {"TENSORC_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "TENSORC_CACHE_MAX_MB"};
    char *saved[4];
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(names[i]);
        saved[i] = v ? strdup(v) : NULL;
    }
    char *explicit_dir = path_of(dir, "explicit/a/b"), *tcd = path_of(dir, "tcd");
    char *xdg = path_of(dir, "xdg"), *home = path_of(dir, "home");
    char *xdg_want = path_of(xdg, "tensorc"), *home_want = path_of(home, ".cache/tensorc");
    setenv("TENSORC_CACHE_DIR", tcd, 1);
    setenv("XDG_CACHE_HOME", xdg, 1);
    setenv("HOME", home, 1);

    tc_cache *c = cache_open(explicit_dir, 0);
    assert_string_equal(cache_dir(c), explicit_dir);
    assert_true(cache_enabled(c));
    cache_close(c);
    expect_dir(tcd);
    setenv("TENSORC_CACHE_DIR", "", 1);      /* empty counts as unset */
    expect_dir(xdg_want);
    unsetenv("TENSORC_CACHE_DIR");
    expect_dir(xdg_want);
    unsetenv("XDG_CACHE_HOME");
    expect_dir(home_want);
    unsetenv("HOME");
    c = cache_open(NULL, 0);
    assert_null(cache_dir(c));
    assert_false(cache_enabled(c));
    assert_non_null(cache_warning(c));
    cache_close(c);

    unsetenv("TENSORC_CACHE_MAX_MB");
    c = cache_open(tcd, 0);
    assert_int_equal(cache_max_bytes(c), (uint64_t)CACHE_DEFAULT_MAX_MB << 20);
    cache_close(c);
    setenv("TENSORC_CACHE_MAX_MB", "5", 1);
    c = cache_open(tcd, 0);
    assert_int_equal(cache_max_bytes(c), 5u << 20);
    cache_close(c);
    c = cache_open(tcd, 777);
    assert_int_equal(cache_max_bytes(c), 777);
    cache_close(c);
    setenv("TENSORC_CACHE_MAX_MB", "lots", 1);
    c = cache_open(tcd, 0);
    assert_int_equal(cache_max_bytes(c), (uint64_t)CACHE_DEFAULT_MAX_MB << 20);
    cache_close(c);

    for (int i = 0; i < 4; i++) {
        restore_env(names[i], saved[i]);
        free(saved[i]);
    }
    free(explicit_dir);
    free(tcd);
    free(xdg);
    free(home);
    free(xdg_want);
    free(home_want);
}

/* --- 8 processes at once ---------------------------------------------------------- */

enum { NPROC = 8, SHARED_LEN = 256 * 1024, OWN_LEN = 10000 };

static void fill(unsigned char *buf, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (unsigned char)x;
    }
}

static tc_cache_key own_key(int i)
{
    char name[32];
    snprintf(name, sizeof name, "own-%d", i);
    return key_of(name);
}

/* One child: 20 rounds of putting the shared entry and its own, reading
 * both back.  0 when every read was intact. */
static int child(const char *dir, int id, const unsigned char *shared, const unsigned char *own)
{
    tc_cache *c = cache_open(dir, 0);
    if (!c || !cache_enabled(c))
        return 10;
    tc_cache_key ks = key_of("shared"), ko = own_key(id);
    for (int round = 0; round < 20; round++) {
        if (!cache_put(c, ks, shared, SHARED_LEN) || !cache_put(c, ko, own, OWN_LEN))
            return 11;
        void *d;
        size_t n;
        /* The shared entry may be mid-replacement by a sibling, but a hit
         * must always be whole. */
        if (cache_get(c, ks, &d, &n)) {
            int bad = n != SHARED_LEN || memcmp(d, shared, SHARED_LEN) != 0;
            free(d);
            if (bad)
                return 12;
        }
        if (!cache_get(c, ko, &d, &n))
            return 13;
        int bad = n != OWN_LEN || memcmp(d, own, OWN_LEN) != 0;
        free(d);
        if (bad)
            return 14;
    }
    cache_close(c);
    return 0;
}

static void concurrent_processes(void **state)
{
    const char *dir = *state;
    char *sub = path_of(dir, "not/yet/there");     /* created by all at once */
    static unsigned char shared[SHARED_LEN], own[NPROC][OWN_LEN];
    fill(shared, SHARED_LEN, 99);
    for (int i = 0; i < NPROC; i++)
        fill(own[i], OWN_LEN, (unsigned)i);
    fflush(NULL);
    pid_t pids[NPROC];
    for (int i = 0; i < NPROC; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0)
            _exit(child(sub, i, shared, own[i]));
    }
    for (int i = 0; i < NPROC; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    tc_cache *c = cache_open(sub, 0);
    assert_true(cache_enabled(c));
    expect_hit(c, key_of("shared"), shared, SHARED_LEN);
    for (int i = 0; i < NPROC; i++)
        expect_hit(c, own_key(i), own[i], OWN_LEN);
    uint64_t n, bytes;
    cache_stats(c, &n, &bytes);
    assert_int_equal(n, NPROC + 1);
    assert_int_equal(bytes, SHARED_LEN + NPROC * OWN_LEN + (NPROC + 1) * ENTRY_OVERHEAD);
    /* No temp files left behind. */
    DIR *d = opendir(sub);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)))
        assert_true(strncmp(de->d_name, ".tmp-", 5) != 0);
    closedir(d);
    cache_close(c);
    free(sub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(miss_then_hit, setup, teardown),
        cmocka_unit_test_setup_teardown(keys_differ, setup, teardown),
        cmocka_unit_test_setup_teardown(corrupted_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(lru_eviction, setup, teardown),
        cmocka_unit_test_setup_teardown(stale_temp_files, setup, teardown),
        cmocka_unit_test_setup_teardown(unusable_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(environment_order, setup, teardown),
        cmocka_unit_test_setup_teardown(concurrent_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(foreign_directory_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(fifo_answered_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(symlinked_entry_missed, setup, teardown),
        cmocka_unit_test_setup_teardown(entries_private, setup, teardown),
        cmocka_unit_test_setup_teardown(read_only_cache_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(clear_only_own_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_max_mb_warned, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
