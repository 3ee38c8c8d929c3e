/* files.c - messages and files: the small plumbing between tc-bench's
 * parent and its children (a child's JSON goes through a file, its kernel
 * cache is a directory the parent makes and removes).
 */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *msgf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sbuf b = {0};
    sb_vprintf(&b, fmt, ap);
    va_end(ap);
    /* library messages end in a newline; ours are embedded in JSON and lines */
    while (b.s && b.len > 0 && (b.s[b.len - 1] == '\n' || b.s[b.len - 1] == ' '))
        b.s[--b.len] = 0;
    return b.s ? b.s : strdup("");
}

bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tc-bench: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    ok = fclose(f) == 0 && ok;
    if (!ok)
        fprintf(stderr, "tc-bench: cannot write %s: %s\n", path, strerror(errno));
    return ok;
}

char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    while (s) {
        if (n + 1 >= cap) {
            char *t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                s = NULL;
                break;
            }
            s = t;
        }
        size_t got = fread(s + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    if (s)
        s[n] = 0;
    return s;
}

/* Visit the entries of a directory tree, depth first; fn(path, is_dir). */
static int walk(const char *path, void (*fn)(const char *, bool, void *), void *arg)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *sub = msgf("%s/%s", path, e->d_name);
        struct stat st;
        if (sub && lstat(sub, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                n += walk(sub, fn, arg);
                fn(sub, true, arg);
            } else {
                n++;
                fn(sub, false, arg);
            }
        }
        free(sub);
    }
    closedir(d);
    return n;
}

static void remove_entry(const char *path, bool is_dir, void *arg)
{
    (void)arg;
    if (is_dir)
        rmdir(path);
    else
        unlink(path);
}

static void count_entry(const char *path, bool is_dir, void *arg)
{
    (void)path;
    (void)is_dir;
    (void)arg;
}

void remove_tree(const char *path)
{
    walk(path, remove_entry, NULL);
    rmdir(path);
}

int count_files(const char *path)
{
    return walk(path, count_entry, NULL);
}
