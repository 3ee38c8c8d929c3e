/* nvrtc_facts.c - NVRTC's version and architectures, kept beside the cache
 * (see nvrtc_facts.h for why and when they are trusted).
 *
 * The file is text, one fact a line, the environment values last on their
 * lines (they may hold spaces):
 *
 *     tensorc nvrtc facts 1
 *     lib /usr/local/cuda-13.0/lib/libnvrtc.so.13
 *     stat SIZE MTIME_SEC MTIME_NSEC INODE
 *     ldcache MTIME_SEC MTIME_NSEC            (0 0: no /etc/ld.so.cache)
 *     version 13 0
 *     archs N A1 ... AN
 *     env TENSORC_NVRTC=...
 *     env CUDA_HOME=...
 *     env LD_LIBRARY_PATH=...
 */
#include "nvrtc_facts.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const ENV[] = {"TENSORC_NVRTC", "CUDA_HOME", "LD_LIBRARY_PATH"};
enum { NENV = sizeof ENV / sizeof *ENV };

typedef struct {
    long long size, sec, nsec, ino;
} file_id;

static bool identify(const char *path, file_id *id)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    *id = (file_id){(long long)st.st_size, (long long)st.st_mtim.tv_sec,
                    (long long)st.st_mtim.tv_nsec, (long long)st.st_ino};
    return true;
}

static file_id ldcache_id(void)
{
    file_id id = {0, 0, 0, 0};
    (void)identify("/etc/ld.so.cache", &id);
    return id;
}

static const char *env_value(int i)
{
    const char *v = getenv(ENV[i]);
    return v ? v : "";
}

bool facts_write(const char *path, const char *lib, const nvrtc_facts *f)
{
    file_id id;
    if (!path || !lib || !identify(lib, &id) || strchr(lib, '\n') || f->narchs < 1 ||
        f->narchs > FACTS_MAX_ARCHS)
        return false;
    for (int i = 0; i < NENV; i++)
        if (strchr(env_value(i), '\n'))
            return false; /* would not read back: no facts rather than wrong ones */
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return false;
    /* a private temporary (O_EXCL): nothing planted at a fixed name is followed */
    snprintf(tmp, n, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !fp)
        close(fd);
    bool ok = fp != NULL;
    if (ok) {
        file_id ld = ldcache_id();
        fprintf(fp, "tensorc nvrtc facts 1\nlib %s\nstat %lld %lld %lld %lld\n", lib, id.size,
                id.sec, id.nsec, id.ino);
        fprintf(fp, "ldcache %lld %lld\nversion %d %d\narchs %d", ld.sec, ld.nsec, f->major,
                f->minor, f->narchs);
        for (int i = 0; i < f->narchs; i++)
            fprintf(fp, " %d", f->archs[i]);
        fputc('\n', fp);
        for (int i = 0; i < NENV; i++)
            fprintf(fp, "env %s=%s\n", ENV[i], env_value(i));
        ok = !ferror(fp);
        ok &= fclose(fp) == 0;
    }
    ok = ok && rename(tmp, path) == 0;
    if (!ok && fd >= 0)
        (void)remove(tmp);
    free(tmp);
    return ok;
}

/* The next line of fp without its newline, into buf; false at the end or
 * for a line too long for buf. */
static bool line(FILE *fp, char *buf, size_t cap)
{
    if (!fgets(buf, (int)cap, fp))
        return false;
    size_t n = strlen(buf);
    if (n == 0 || buf[n - 1] != '\n')
        return false;
    buf[n - 1] = '\0';
    return true;
}

bool facts_read(const char *path, nvrtc_facts *f)
{
    /* never a link, never blocking on a FIFO, only a file of ours */
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) : -1;
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
        close(fd);
        fd = -1;
    }
    FILE *fp = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!fp) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    char buf[8192], lib[4096];
    file_id want, have, ld;
    nvrtc_facts got = {0};
    bool ok = line(fp, buf, sizeof buf) && strcmp(buf, "tensorc nvrtc facts 1") == 0 &&
              line(fp, buf, sizeof buf) && strncmp(buf, "lib /", 5) == 0 &&
              strlen(buf + 4) < sizeof lib;
    if (ok)
        strcpy(lib, buf + 4);
    ok = ok && line(fp, buf, sizeof buf) &&
         sscanf(buf, "stat %lld %lld %lld %lld", &want.size, &want.sec, &want.nsec, &want.ino) == 4;
    ok = ok && line(fp, buf, sizeof buf) && sscanf(buf, "ldcache %lld %lld", &ld.sec, &ld.nsec) == 2;
    ok = ok && line(fp, buf, sizeof buf) && sscanf(buf, "version %d %d", &got.major, &got.minor) == 2;
    int at = 0;
    ok = ok && line(fp, buf, sizeof buf) && sscanf(buf, "archs %d%n", &got.narchs, &at) == 1 &&
         got.narchs >= 1 && got.narchs <= FACTS_MAX_ARCHS;
    for (int i = 0; ok && i < got.narchs; i++) {
        int used = 0;
        ok = sscanf(buf + at, " %d%n", &got.archs[i], &used) == 1 && (i == 0 || got.archs[i] > got.archs[i - 1]);
        at += used;
    }
    for (int i = 0; ok && i < NENV; i++) {
        ok = line(fp, buf, sizeof buf) && strncmp(buf, "env ", 4) == 0;
        size_t k = strlen(ENV[i]);
        ok = ok && strncmp(buf + 4, ENV[i], k) == 0 && buf[4 + k] == '=' &&
             strcmp(buf + 5 + k, env_value(i)) == 0;
    }
    ok = ok && !line(fp, buf, sizeof buf); /* nothing after */
    fclose(fp);
    /* the library and the linker's cache as they are now */
    file_id now = ldcache_id();
    ok = ok && identify(lib, &have) && have.size == want.size && have.sec == want.sec &&
         have.nsec == want.nsec && have.ino == want.ino && now.sec == ld.sec && now.nsec == ld.nsec;
    if (ok)
        *f = got;
    return ok;
}
