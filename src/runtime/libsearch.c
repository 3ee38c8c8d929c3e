/* libsearch.c - CUDA libraries in pip wheels, and loaded libraries' files
 * (see libsearch.h). */
#define _DEFAULT_SOURCE /* realpath */
#include "libsearch.h"

#include <glob.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cmp_desc(const void *a, const void *b)
{
    return -strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
    char **v;
    size_t n, cap;
} list;

static void push(list *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return; /* the same file through two pythons */
    if (l->n + 2 > l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return;
        l->v = v;
        l->cap = cap;
    }
    char *c = strdup(s);
    if (c) {
        l->v[l->n++] = c;
        l->v[l->n] = NULL;
    }
}

/* PREFIX/lib/python3.* /{site,dist}-packages for one prefix, into dirs. */
static void prefix_sites(const char *prefix, list *dirs)
{
    static const char *const pats[] = {"lib/python3*/site-packages", "lib/python3*/dist-packages",
                                       "lib/python3/dist-packages"};
    for (size_t p = 0; p < sizeof pats / sizeof *pats; p++) {
        char pat[PATH_MAX];
        snprintf(pat, sizeof pat, "%s/%s", prefix, pats[p]);
        glob_t g;
        if (glob(pat, 0, NULL, &g) == 0) {
            qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, cmp_desc);
            for (size_t i = 0; i < g.gl_pathc; i++)
                push(dirs, g.gl_pathv[i]);
        }
        globfree(&g);
    }
}

/* Every site-packages directory we can name without running Python. */
static list site_dirs(void)
{
    list dirs = {0};
    const char *v;
    if ((v = getenv("VIRTUAL_ENV")) && *v)
        prefix_sites(v, &dirs);
    if ((v = getenv("CONDA_PREFIX")) && *v)
        prefix_sites(v, &dirs);
    const char *path = getenv("PATH");
    char *copy = path ? strdup(path) : NULL;
    for (char *save = NULL, *d = copy ? strtok_r(copy, ":", &save) : NULL; d;
         d = strtok_r(NULL, ":", &save)) {
        char exe[PATH_MAX], real[PATH_MAX];
        snprintf(exe, sizeof exe, "%s/python3", d);
        if (access(exe, X_OK) != 0)
            continue;
        /* the prefix of the link itself (a venv's bin/python3 links to the
         * base interpreter) and of what it resolves to */
        char *slash = strrchr(d, '/');
        if (slash && slash > d) {
            char prefix[PATH_MAX];
            snprintf(prefix, sizeof prefix, "%.*s", (int)(slash - d), d);
            prefix_sites(prefix, &dirs);
        }
        if (realpath(exe, real)) {
            for (int up = 0; up < 2; up++) {
                char *s = strrchr(real, '/');
                if (s)
                    *s = '\0';
            }
            if (*real)
                prefix_sites(real, &dirs);
        }
    }
    free(copy);
    if ((v = getenv("HOME")) && *v) {
        char local[PATH_MAX];
        snprintf(local, sizeof local, "%s/.local", v);
        prefix_sites(local, &dirs);
    }
    return dirs;
}

char **libsearch_wheels(const char *rel, tc_strbuf *where)
{
    list dirs = site_dirs(), found = {0};
    for (size_t i = 0; i < dirs.n; i++) {
        if (where)
            strbuf_printf(where, "%s%s", i ? ", " : "", dirs.v[i]);
        char pat[PATH_MAX];
        snprintf(pat, sizeof pat, "%s/nvidia/%s", dirs.v[i], rel);
        glob_t g;
        if (glob(pat, 0, NULL, &g) == 0) {
            qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, cmp_desc);
            for (size_t k = 0; k < g.gl_pathc; k++)
                push(&found, g.gl_pathv[k]);
        }
        globfree(&g);
    }
    if (where && !dirs.n)
        strbuf_printf(where, "none found");
    libsearch_free(dirs.v);
    return found.v;
}

void libsearch_free(char **paths)
{
    for (size_t i = 0; paths && paths[i]; i++)
        free(paths[i]);
    free(paths);
}

int libsearch_path_of(const void *sym, char *buf, size_t n)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    char line[PATH_MAX + 128];
    int ok = 0;
    uintptr_t a = (uintptr_t)sym;
    while (!ok && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        int at = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2 || a < lo || a >= hi)
            continue;
        char *p = line + at;
        p[strcspn(p, "\n")] = '\0';
        if (*p == '/') {
            snprintf(buf, n, "%s", p);
            ok = 1;
        }
    }
    fclose(f);
    return ok;
}
