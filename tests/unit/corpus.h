/* corpus.h - the programs the property tests (test_lower.c, test_sched.c)
 * check their properties over: every .tc file of examples/,
 * tests/golden/extra/ and tests/fuse/ (TC_SOURCE_DIR, set by
 * tests/CMakeLists.txt), and small generated programs that chain views
 * (transpose, permute, slices with starts and steps, integer indexing,
 * unsqueeze, reshape, concat), pointwise ops and reductions at random.
 * Also random sizes for a function's symbols that satisfy its
 * constraints.  Include after build_harness.h. */
#ifndef TC_CORPUS_H
#define TC_CORPUS_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/bind.h"

#ifndef TC_SOURCE_DIR
#error "TC_SOURCE_DIR must name the source tree (tests/CMakeLists.txt sets it)"
#endif

typedef struct cprog {
    char name[320];
    char *text; /* malloc'd */
} cprog;

typedef struct corpus {
    cprog *p;
    int n;
} corpus;

static inline uint64_t rng_next(uint64_t *s)
{
    /* splitmix64: reproducible on every machine */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline int rng_int(uint64_t *s, int lo, int hi) /* [lo, hi] */
{
    return lo + (int)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

static inline void corpus_add(corpus *c, const char *name, char *text)
{
    cprog *np = realloc(c->p, (size_t)(c->n + 1) * sizeof *c->p);
    if (!np)
        abort();
    c->p = np;
    snprintf(c->p[c->n].name, sizeof c->p[c->n].name, "%s", name);
    c->p[c->n++].text = text;
}

static inline int corpus_name_cmp(const void *a, const void *b)
{
    return strcmp(((const cprog *)a)->name, ((const cprog *)b)->name);
}

/* Every .tc file of TC_SOURCE_DIR/sub, sorted by name. */
static inline void corpus_load_dir(corpus *c, const char *sub)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", TC_SOURCE_DIR, sub);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "corpus: cannot open %s\n", dir);
        abort();
    }
    int first = c->n;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t nl = strlen(e->d_name);
        if (nl < 4 || strcmp(e->d_name + nl - 3, ".tc") != 0)
            continue;
        char path[1300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *fp = fopen(path, "rb");
        if (!fp)
            abort();
        fseek(fp, 0, SEEK_END);
        long len = ftell(fp);
        fseek(fp, 0, SEEK_SET);
        char *text = malloc((size_t)len + 1);
        if (!text || fread(text, 1, (size_t)len, fp) != (size_t)len)
            abort();
        text[len] = 0;
        fclose(fp);
        char name[320];
        snprintf(name, sizeof name, "%.40s/%.250s", sub, e->d_name);
        corpus_add(c, name, text);
    }
    closedir(d);
    qsort(c->p + first, (size_t)(c->n - first), sizeof *c->p, corpus_name_cmp);
}

/* A generated program: fn g(x: f32[A, B, C], v: f32[C]) -> f32[*], whose
 * result chains `steps` random transformations of x (each keeping track of
 * the rank only: the checker works out the shapes, and a program it refuses
 * is not used). */
static inline char *corpus_generate(uint64_t *s, int steps)
{
    size_t cap = 1 << 16;
    char *e = malloc(cap), *t = malloc(cap);
    if (!e || !t)
        abort();
    snprintf(e, cap, "x");
    int r = 3;
    bool concat_done = false;
    for (int i = 0; i < steps; i++) {
        int k = rng_int(s, 0, r - 1);
        int pick = rng_int(s, 0, 13);
        t[0] = 0;
        char lead[64] = "";
        for (int j = 0; j < k; j++)
            strcat(lead, ":, ");
        switch (pick) {
        case 0:
            if (r >= 2) {
                int a = rng_int(s, 0, r - 2), b = rng_int(s, a + 1, r - 1);
                snprintf(t, cap, "transpose(%s, %d, %d)", e, a, b);
            }
            break;
        case 1:
            if (r >= 2) {
                int perm[4] = {0, 1, 2, 3};
                for (int j = r - 1; j > 0; j--) {
                    int q = rng_int(s, 0, j), tmp = perm[j];
                    perm[j] = perm[q];
                    perm[q] = tmp;
                }
                char ps[32] = "";
                for (int j = 0; j < r; j++)
                    snprintf(ps + strlen(ps), sizeof ps - strlen(ps), ", %d", perm[j]);
                snprintf(t, cap, "permute(%s%s)", e, ps);
            }
            break;
        case 2:
            snprintf(t, cap, "(%s)[%s::2]", e, lead);
            break;
        case 3:
            snprintf(t, cap, "(%s)[%s1:]", e, lead);
            break;
        case 4:
            snprintf(t, cap, "(%s)[%s:-1]", e, lead);
            break;
        case 5:
            if (r >= 2) {
                snprintf(t, cap, "(%s)[%s0]", e, lead);
                r--;
            }
            break;
        case 6:
            if (r < 4) {
                snprintf(t, cap, "unsqueeze(%s, %d)", e, rng_int(s, 0, r));
                r++;
            }
            break;
        case 7:
            if (r >= 2) {
                snprintf(t, cap, "reshape(%s, -1)", e);
                r = 1;
            }
            break;
        case 8:
            if (!concat_done) {
                snprintf(t, cap, "concat(%s, exp(%s), axis=%d)", e, e, k);
                concat_done = true;
            }
            break;
        case 9:
            snprintf(t, cap, "(%s * 0.5 + 1.0)", e);
            break;
        case 10:
            snprintf(t, cap, "(%s - max(%s, axis=%d, keepdim=true))", e, e, k);
            break;
        case 11:
            if (r >= 2) {
                snprintf(t, cap, "sum(%s, axis=%d)", e, k);
                r--;
            }
            break;
        case 12:
            if (r == 2)
                snprintf(t, cap, "(%s).T", e);
            break;
        case 13:
            snprintf(t, cap, "tanh(%s)", e);
            break;
        }
        if (t[0] && strlen(t) < cap / 4) {
            char *sw = e;
            e = t;
            t = sw;
        }
    }
    char *out = malloc(strlen(e) + 128);
    if (!out)
        abort();
    sprintf(out, "fn g(x: f32[A, B, C], v: f32[C]) -> f32[*] {\n    return %s\n}\n", e);
    free(e);
    free(t);
    return out;
}

/* examples/, tests/golden/extra/, tests/fuse/, then ngen generated programs. */
static inline corpus corpus_all(int ngen, uint64_t seed)
{
    corpus c = {0};
    corpus_load_dir(&c, "examples");
    corpus_load_dir(&c, "tests/golden/extra");
    corpus_load_dir(&c, "tests/fuse");
    uint64_t s = seed;
    for (int i = 0; i < ngen; i++) {
        char name[64];
        snprintf(name, sizeof name, "generated #%d (seed %llu)", i, (unsigned long long)seed);
        corpus_add(&c, name, corpus_generate(&s, rng_int(&s, 1, 10)));
    }
    return c;
}

static inline void corpus_free(corpus *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->p[i].text);
    free(c->p);
    c->p = NULL;
    c->n = 0;
}

/* Random sizes in [1, maxv] for every symbol of f that satisfy its
 * constraints (graph_bind checks them); false if none was found in a few
 * tries.  *b is arena-allocated. */
static inline bool corpus_bind(const gfn *f, uint64_t *s, int maxv, tc_arena *a, tc_dimbind **b, int *nb)
{
    tc_dimbind *x = ARENA_ARRAY(a, tc_dimbind, f->nsyms + 1);
    for (int tries = 0; tries < 40; tries++) {
        for (int i = 0; i < f->nsyms; i++)
            x[i] = (tc_dimbind){f->syms[i], tries == 0 && maxv > 3 ? 3 : rng_int(s, 1, maxv)};
        tc_diag d;
        diag_init(&d);
        tc_status st = graph_bind(f, NULL, x, f->nsyms, a, &d, b, nb);
        diag_release(&d);
        if (st == TC_OK)
            return true;
    }
    return false;
}

#endif
