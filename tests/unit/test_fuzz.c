/* test_fuzz.c - a deterministic mutation fuzz test of the public compile API.
 *
 * Approach: read every .tc file in examples/ and prelude/ at run time (the source
 * tree comes from the TC_SOURCE_DIR compile definition), then, from a fixed
 * splitmix64 seed, make a few thousand mutants of them (byte flips, span
 * deletions and duplications, insertions of tokens from a dictionary of the
 * language's punctuation, keywords and nasty literals, and splices of two
 * files) and compile each through include/tensorc.h.  tc_compile runs every
 * stage (parse, graph, lower, fuse, schedule, codegen, each with its
 * verifier: src/driver/compile.c), so every mutant that compiles reaches CUDA text;
 * a sample of those goes through NVRTC (src/runtime/nvrtc.h, PTX for sm_90),
 * which must accept it.  Every mutant must come back with TC_OK or a
 * user-error status (SYNTAX, COMPILE, LIMIT, NOT_FOUND), never
 * TC_ERR_INTERNAL (a verifier failure is a bug), and never crash (the
 * sanitizer build catches memory and UB errors).  An error must be located:
 * the message starts "<name>:LINE:COL: error: " with LINE/COL equal to
 * tc_error_loc() and LINE within the mutant.  A program that compiles must
 * give a non-empty graph dump, or a located error (a generic function that
 * does not build as a stand-alone entry point).
 *
 * Why deterministic: a failure in ctest must reproduce exactly, so the seed is
 * fixed and each failing mutant is printed to stderr (TC_FUZZ_SEED and
 * TC_FUZZ_ITERS in the environment let a person explore further by hand).
 * A crash is caught too: the mutant being compiled is written out by a
 * sanitizer death callback or a signal handler.
 *
 * A handful of hand-written nasty inputs (deep nesting, a 1 MB expression,
 * recursion, a call chain deeper than the inlining limit, empty and NUL-laden
 * files) check the documented limits in docs/semantics.md. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensorc.h"

#include <time.h>

#include "diag.h"
#include "nvrtc.h"

#ifndef TC_SOURCE_DIR
#error "TC_SOURCE_DIR must name the source tree (tests/CMakeLists.txt sets it)"
#endif

/* Iterations: enough mutants to reach most parser and checker paths while the
 * sanitizer build stays under ~20 s. */
#define FUZZ_ITERS_DEFAULT 8000
#define FUZZ_SEED_DEFAULT 0x7e45c0de2024ULL
/* Every NVRTC_EVERY-th mutant that compiles to CUDA goes through NVRTC, at
 * most NVRTC_MAX of them (some 0.1-0.3 s each): TC_FUZZ_NVRTC_EVERY and
 * TC_FUZZ_NVRTC_MAX change them (0: none). */
#define NVRTC_EVERY_DEFAULT 32
#define NVRTC_MAX_DEFAULT 24
/* Failing mutants printed in full before the test gives up on printing. */
#define MAX_PRINTED 5

/* ---- deterministic randomness ------------------------------------------- */

static uint64_t rng_state;

static uint64_t splitmix64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A value in [0, n); n > 0.  The modulo bias does not matter here. */
static size_t rnd(size_t n)
{
    return (size_t)(splitmix64() % (uint64_t)n);
}

/* ---- growable byte buffer ------------------------------------------------ */

typedef struct {
    char *p;
    size_t len, cap;
} bytes;

static void bytes_reserve(bytes *b, size_t need)
{
    if (need <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *np = realloc(b->p, cap);
    assert_non_null(np);
    b->p = np;
    b->cap = cap;
}

static void bytes_put(bytes *b, const void *s, size_t n)
{
    bytes_reserve(b, b->len + n);
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void bytes_puts(bytes *b, const char *s)
{
    bytes_put(b, s, strlen(s));
}

/* Insert n bytes at position at (at <= len). */
static void bytes_insert(bytes *b, size_t at, const void *s, size_t n)
{
    bytes_reserve(b, b->len + n);
    memmove(b->p + at + n, b->p + at, b->len - at);
    memcpy(b->p + at, s, n);
    b->len += n;
}

static void bytes_erase(bytes *b, size_t at, size_t n)
{
    memmove(b->p + at, b->p + at + n, b->len - at - n);
    b->len -= n;
}

/* ---- the corpus ---------------------------------------------------------- */

typedef struct {
    char name[288];
    bytes text;  /* the file as it is */
    bytes code;  /* the same with comment lines dropped: mutants of it reach
                  * past the lexer more often */
} corpus_file;

typedef struct {
    corpus_file *f;
    size_t n;
} corpus;

static int read_file(const char *path, bytes *out)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0)
        bytes_put(out, chunk, got);
    int bad = ferror(fp);
    fclose(fp);
    return bad ? -1 : 0;
}

/* Copy in to out leaving out lines whose first non-blank byte is '#'. */
static void strip_comments(const bytes *in, bytes *out)
{
    size_t i = 0;
    while (i < in->len) {
        size_t e = i;
        while (e < in->len && in->p[e] != '\n')
            e++;
        if (e < in->len)
            e++; /* keep the newline */
        size_t k = i;
        while (k < e && (in->p[k] == ' ' || in->p[k] == '\t'))
            k++;
        if (k == e || in->p[k] != '#')
            bytes_put(out, in->p + i, e - i);
        i = e;
    }
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(((const corpus_file *)a)->name, ((const corpus_file *)b)->name);
}

/* Every .tc file in TC_SOURCE_DIR/sub, appended to c. */
static void load_dir(corpus *c, const char *sub)
{
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/%s", TC_SOURCE_DIR, sub);
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("cannot open %s", dir);
    size_t first = c->n;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t nl = strlen(e->d_name);
        if (nl < 4 || strcmp(e->d_name + nl - 3, ".tc") != 0)
            continue;
        corpus_file *nf = realloc(c->f, (c->n + 1) * sizeof *c->f);
        assert_non_null(nf);
        c->f = nf;
        corpus_file *f = &c->f[c->n++];
        memset(f, 0, sizeof *f);
        snprintf(f->name, sizeof f->name, "%.16s/%.255s", sub, e->d_name);
        char path[2048 + 256 + 2];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (read_file(path, &f->text) != 0)
            fail_msg("cannot read %s", path);
        strip_comments(&f->text, &f->code);
    }
    closedir(d);
    /* readdir order is the file system's: sort so the mutants are the same
     * on every machine. */
    qsort(c->f + first, c->n - first, sizeof *c->f, name_cmp);
}

static void corpus_free(corpus *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->f[i].text.p);
        free(c->f[i].code.p);
    }
    free(c->f);
}

/* ---- reporting a crash --------------------------------------------------- */

/* The mutant being compiled, so that a crash can show it. */
static const char *cur_text;
static size_t cur_len;
static const char *cur_name;

static void write_all(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(2, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void dump_current(void)
{
    if (!cur_text)
        return;
    static const char head[] = "\n=== test_fuzz: crashed while compiling ";
    write_all(head, sizeof head - 1);
    write_all(cur_name, strlen(cur_name));
    write_all(" ===\n", 5);
    write_all(cur_text, cur_len);
    write_all("\n=== end of input ===\n", 22);
}

static void on_signal(int sig)
{
    dump_current();
    signal(sig, SIG_DFL);
    raise(sig);
}

#if defined(__SANITIZE_ADDRESS__)
#define TC_HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TC_HAVE_ASAN 1
#endif
#endif
#ifdef TC_HAVE_ASAN
void __sanitizer_set_death_callback(void (*callback)(void));
#endif

/* cmocka installs its own signal handlers around each test, so every test
 * body calls this first to put ours back. */
static void install_crash_reporting(void)
{
#ifdef TC_HAVE_ASAN
    __sanitizer_set_death_callback(dump_current);
#endif
    signal(SIGSEGV, on_signal);
    signal(SIGBUS, on_signal);
    signal(SIGFPE, on_signal);
    signal(SIGILL, on_signal);
    signal(SIGABRT, on_signal);
}

/* ---- checking one input -------------------------------------------------- */

typedef struct {
    tc_ctx *ctx;
    int failures;     /* inputs that broke a rule */
    int printed;      /* of those, how many were printed in full */
    int n_ok, n_err;  /* for the summary */
    int by_status[TC_STATUS_COUNT];
    int n_cuda;       /* compiled to CUDA text (tc_compile runs every stage) */
    int nvrtc_every;  /* send every nvrtc_every-th of those through NVRTC (0: none) */
    int nvrtc_max, n_nvrtc, nvrtc_ms;
    bool nvrtc_off;   /* NVRTC could not be loaded: said once, then skipped */
} fuzz_state;

static size_t line_count(const char *s, size_t n)
{
    size_t lines = 1;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n')
            lines++;
    return lines;
}

static void report(fuzz_state *fs, const char *name, const char *src, size_t len,
                   const char *why)
{
    fs->failures++;
    fprintf(stderr, "test_fuzz: %s: %s\n", name, why);
    if (fs->printed < MAX_PRINTED) {
        fs->printed++;
        if (len > 4096) {
            fprintf(stderr, "=== input (%zu bytes, first 4096) ===\n", len);
            len = 4096;
        } else {
            fprintf(stderr, "=== input (%zu bytes) ===\n", len);
        }
        fwrite(src, 1, len, stderr);
        fprintf(stderr, "\n=== end of input ===\n");
    }
}

/* A sample of the CUDA the mutants compile to goes through NVRTC (PTX for
 * sm_90): generated code that NVRTC rejects is a bug as much as a crash. */
static void check_nvrtc(fuzz_state *fs, const char *name, const char *src, size_t len,
                        const char *cuda)
{
    if (fs->nvrtc_off || !fs->nvrtc_every || fs->n_nvrtc >= fs->nvrtc_max ||
        fs->n_cuda % fs->nvrtc_every != 0)
        return;
    if (nvrtc_load(NULL) != TC_OK) {
        fprintf(stderr, "test_fuzz: NVRTC not found: no mutant's CUDA is compiled\n");
        fs->nvrtc_off = true;
        return;
    }
    tc_diag d;
    diag_init(&d);
    nvrtc_output out = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tc_status st = nvrtc_compile(cuda, "mutant.cu", 90, false, NULL, 0, &out, &d);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fs->nvrtc_ms += (int)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
    fs->n_nvrtc++;
    if (st != TC_OK) {
        char why[4096];
        snprintf(why, sizeof why, "its CUDA does not compile with NVRTC: %s: %.3000s",
                 tc_status_str(st), d.msg ? d.msg : "");
        report(fs, name, src, len, why);
    }
    nvrtc_output_free(&out);
    diag_release(&d);
}

static int user_error(tc_status st)
{
    return st == TC_ERR_SYNTAX || st == TC_ERR_COMPILE || st == TC_ERR_LIMIT ||
           st == TC_ERR_NOT_FOUND;
}

/* Compile src and check the rules in the header comment.  Returns the status. */
static tc_status check_input(fuzz_state *fs, const char *name, const char *src, size_t len)
{
    char why[4096];
    tc_program *prog = (tc_program *)&prog; /* must be set to NULL on error */
    cur_text = src;
    cur_len = len;
    cur_name = name;
    tc_status st = tc_compile(fs->ctx, src, len, name, &prog);
    cur_text = NULL;
    if ((unsigned)st < TC_STATUS_COUNT)
        fs->by_status[st]++;

    if (st == TC_OK) {
        fs->n_ok++;
        if (!prog) {
            report(fs, name, src, len, "TC_OK with a NULL program");
            return st;
        }
        const char *out = NULL;
        tc_status ds = tc_program_dump(prog, "graph", NULL, &out);
        int dl = 0;
        if (ds != TC_OK && user_error(ds) && tc_error_loc(fs->ctx, NULL, &dl, NULL) && dl > 0) {
            /* a generic function that does not build as a stand-alone entry
             * ([*] as rank 1): the whole-file dump reports it, located */
        } else if (ds != TC_OK) {
            snprintf(why, sizeof why, "compiles but the graph dump fails: %s: %s",
                     tc_status_str(ds), tc_errmsg(fs->ctx));
            report(fs, name, src, len, why);
        } else if (!out || !out[0]) {
            /* A file with no functions (only comments) has nothing to dump;
             * its AST dump is empty too.  Otherwise an empty graph is wrong. */
            const char *ast = NULL;
            if (tc_program_dump(prog, "ast", NULL, &ast) != TC_OK || !ast || ast[0])
                report(fs, name, src, len, "compiles but the graph dump is empty");
        }
        /* tc_compile ran every stage with its verifier: the CUDA is there */
        const char *cuda = ds == TC_OK && out && out[0] ? tc_program_source(prog, NULL) : NULL;
        if (ds == TC_OK && out && out[0] && !cuda) {
            snprintf(why, sizeof why, "compiles but has no CUDA: %s", tc_errmsg(fs->ctx));
            report(fs, name, src, len, why);
        } else if (cuda) {
            fs->n_cuda++;
            check_nvrtc(fs, name, src, len, cuda);
        }
        tc_program_free(prog);
        return st;
    }

    fs->n_err++;
    if (prog != NULL) {
        report(fs, name, src, len, "an error status but *prog is not NULL");
        prog = NULL;
    }
    const char *msg = tc_errmsg(fs->ctx);
    if (!user_error(st)) {
        snprintf(why, sizeof why, "status %s (want OK or a user error): %.700s",
                 tc_status_str(st), msg ? msg : "(null)");
        report(fs, name, src, len, why);
        return st;
    }
    const char *file = NULL;
    int line = 0, col = 0;
    if (!tc_error_loc(fs->ctx, &file, &line, &col)) {
        snprintf(why, sizeof why, "%s without a location: %.700s", tc_status_str(st),
                 msg ? msg : "(null)");
        report(fs, name, src, len, why);
        return st;
    }
    /* An error inside an inlined prelude function is reported at the prelude's
     * line, with a note at the user's call: then the location to check in the
     * mutant is the note's. */
    bool in_prelude = file && strncmp(file, "<prelude>", 9) == 0;
    if (!file || (strcmp(file, name) != 0 && !in_prelude)) {
        snprintf(why, sizeof why, "tc_error_loc file is '%s', want '%s'",
                 file ? file : "(null)", name);
        report(fs, name, src, len, why);
        return st;
    }
    char want[512];
    snprintf(want, sizeof want, "%s:%d:%d: error: ", file, line, col);
    if (!msg || strncmp(msg, want, strlen(want)) != 0) {
        snprintf(why, sizeof why, "%s: message does not start with '%s': %.700s",
                 tc_status_str(st), want, msg ? msg : "(null)");
        report(fs, name, src, len, why);
        return st;
    }
    if (in_prelude) {
        char note[512];
        snprintf(note, sizeof note, "\n%s:", name);
        const char *n = strstr(msg, note);
        if (!n || sscanf(n + strlen(note), "%d:%d: note: ", &line, &col) != 2 ||
            !strstr(n, ": note: in call to")) {
            snprintf(why, sizeof why, "an error in the prelude without a note at the call in %s: %.700s",
                     name, msg);
            report(fs, name, src, len, why);
            return st;
        }
    }
    size_t lines = line_count(src, len);
    if (line < 1 || (size_t)line > lines + 1 || col < 1) {
        snprintf(why, sizeof why, "%s: location %d:%d outside the input (%zu lines): %.700s",
                 tc_status_str(st), line, col, lines, msg);
        report(fs, name, src, len, why);
    }
    return st;
}

/* ---- mutations ----------------------------------------------------------- */

/* Tokens that the grammar cares about, plus literals and bytes that stress the
 * lexer.  Sizes are explicit so that the NUL byte is one. */
static const struct {
    const char *s;
    size_t n;
} DICT[] = {
#define T(lit) { lit, sizeof lit - 1 }
    T("("), T(")"), T("["), T("]"), T(","), T(":"), T("="), T("->"),
    T("fn"), T("return"), T("inout"), T("@"), T("**"), T("x.T"), T("axis="),
    T("keepdim=true"), T("[*]"), T("f16"), T("T"), T("N"), T("1e400"), T("-"),
    T("9999999999999999999999"), T("\n"), T("#"), T("\0"), T("\xff"),
    T(" "), T("{"), T("}"), T("."), T("..."), T("0"), T("-1"),
#undef T
};
#define DICT_N (sizeof DICT / sizeof DICT[0])

static const bytes *pick(const corpus *c)
{
    const corpus_file *f = &c->f[rnd(c->n)];
    return rnd(2) ? &f->code : &f->text;
}

static bool is_word(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '.';
}

/* Replace one word (identifier or number) of m with a word taken from a
 * random corpus file: names, dims, dtypes and literals end up in the wrong
 * places, which is what reaches the type, shape and call checks. */
static void swap_word(bytes *m, const corpus *c)
{
    const bytes *o = pick(c);
    if (!m->len || !o->len)
        return;
    size_t a = rnd(m->len), oa = rnd(o->len);
    /* Move forward to the start of a word in each; give up if none. */
    while (a < m->len && !is_word(m->p[a]))
        a++;
    while (oa < o->len && !is_word(o->p[oa]))
        oa++;
    if (a == m->len || oa == o->len)
        return;
    while (a > 0 && is_word(m->p[a - 1]))
        a--;
    while (oa > 0 && is_word(o->p[oa - 1]))
        oa--;
    size_t ae = a, oe = oa;
    while (ae < m->len && is_word(m->p[ae]))
        ae++;
    while (oe < o->len && is_word(o->p[oe]))
        oe++;
    bytes_erase(m, a, ae - a);
    bytes_insert(m, a, o->p + oa, oe - oa);
}

/* One random mutation of m in place; c supplies splice partners. */
static void mutate_once(bytes *m, const corpus *c)
{
    size_t kind = rnd(10);
    switch (kind) {
    case 6: case 7: case 8: case 9: /* the most likely: it reaches the checker */
        swap_word(m, c);
        break;
    case 0: /* flip bits of a few bytes */
        if (m->len) {
            size_t k = 1 + rnd(4);
            for (size_t i = 0; i < k; i++)
                m->p[rnd(m->len)] ^= (char)(1u << rnd(8));
        }
        break;
    case 1: { /* delete a span, usually short */
        if (!m->len)
            break;
        size_t at = rnd(m->len);
        size_t max = m->len - at;
        size_t n = 1 + rnd(rnd(4) == 0 ? max : (max < 16 ? max : 16));
        bytes_erase(m, at, n);
        break;
    }
    case 2: { /* duplicate a span */
        if (!m->len)
            break;
        size_t at = rnd(m->len);
        size_t max = m->len - at;
        size_t n = 1 + rnd(max < 64 ? max : 64);
        size_t to = rnd(m->len + 1);
        char tmp[64];
        memcpy(tmp, m->p + at, n);
        bytes_insert(m, to, tmp, n);
        break;
    }
    case 3:
    case 4: { /* insert a dictionary token (twice as likely: it finds more) */
        size_t t = rnd(DICT_N);
        bytes_insert(m, rnd(m->len + 1), DICT[t].s, DICT[t].n);
        break;
    }
    default: { /* splice: a prefix of m and a suffix of another file */
        const bytes *o = pick(c);
        size_t cut = rnd(m->len + 1);
        size_t from = rnd(o->len + 1);
        m->len = cut;
        bytes_put(m, o->p + from, o->len - from);
        break;
    }
    }
}

static unsigned long long env_ull(const char *name, unsigned long long dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    return strtoull(v, NULL, 0);
}

/* ---- tests --------------------------------------------------------------- */

/* The examples must compile: otherwise the mutants start from errors and the
 * fuzzer barely reaches the checker.  A prelude file compiled on its own as a
 * user file need not (docs/semantics.md: at an entry point a `[*]` parameter
 * is rank 1, so linear's `x @ w.T` is a shape error there), but it must obey
 * the rules like any input. */
static void test_corpus_compiles(void **state)
{
    (void)state;
    install_crash_reporting();
    corpus c = { 0 };
    load_dir(&c, "examples");
    load_dir(&c, "prelude");
    assert_true(c.n >= 10);
    fuzz_state fs = { 0 };
    assert_int_equal(tc_ctx_create(&fs.ctx), TC_OK);
    for (size_t i = 0; i < c.n; i++) {
        tc_status st = check_input(&fs, c.f[i].name, c.f[i].text.p, c.f[i].text.len);
        bool example = strncmp(c.f[i].name, "examples/", 9) == 0;
        if (st != TC_OK && example)
            fprintf(stderr, "test_fuzz: corpus file %s: %s: %s\n", c.f[i].name,
                    tc_status_str(st), tc_errmsg(fs.ctx));
        if (example)
            assert_int_equal(st, TC_OK);
    }
    assert_int_equal(fs.failures, 0);
    tc_ctx_free(fs.ctx);
    corpus_free(&c);
}

static void test_mutants(void **state)
{
    (void)state;
    install_crash_reporting();
    corpus c = { 0 };
    load_dir(&c, "examples");
    load_dir(&c, "prelude");
    assert_true(c.n >= 10);

    unsigned long long seed = env_ull("TC_FUZZ_SEED", FUZZ_SEED_DEFAULT);
    unsigned long long iters = env_ull("TC_FUZZ_ITERS", FUZZ_ITERS_DEFAULT);
    rng_state = seed;

    fuzz_state fs = { 0 };
    assert_int_equal(tc_ctx_create(&fs.ctx), TC_OK);
    fs.nvrtc_every = (int)env_ull("TC_FUZZ_NVRTC_EVERY", NVRTC_EVERY_DEFAULT);
    fs.nvrtc_max = (int)env_ull("TC_FUZZ_NVRTC_MAX", NVRTC_MAX_DEFAULT);
    bytes m = { 0 };
    for (unsigned long long i = 0; i < iters; i++) {
        size_t fi = rnd(c.n);
        const bytes *base = rnd(4) ? &c.f[fi].code : &c.f[fi].text;
        m.len = 0;
        bytes_put(&m, base->p, base->len);
        /* Often one mutation (an error deep in a valid program), sometimes
         * many (the lexer and parser's recovery from a mess). */
        size_t k = rnd(2) ? 1 : 1 + rnd(rnd(3) == 0 ? 8 : 3);
        for (size_t j = 0; j < k; j++)
            mutate_once(&m, &c);
        char name[64];
        snprintf(name, sizeof name, "mutant%llu.tc", i);
        check_input(&fs, name, m.p ? m.p : "", m.len);
    }
    fprintf(stderr,
            "test_fuzz: seed 0x%llx, %llu mutants: %d compiled (%d to CUDA text through every "
            "stage and verifier, %d of those through NVRTC in %d ms), %d errors "
            "(SYNTAX %d, COMPILE %d, LIMIT %d, NOT_FOUND %d), %d broke a rule\n",
            seed, iters, fs.n_ok, fs.n_cuda, fs.n_nvrtc, fs.nvrtc_ms, fs.n_err,
            fs.by_status[TC_ERR_SYNTAX], fs.by_status[TC_ERR_COMPILE], fs.by_status[TC_ERR_LIMIT],
            fs.by_status[TC_ERR_NOT_FOUND], fs.failures);
    /* The mutants must exercise both sides, or the mutation rates are off. */
    assert_true(fs.n_ok > 0);
    assert_true(fs.n_cuda > 0);
    assert_true(fs.n_err > 0);
    assert_int_equal(fs.failures, 0);
    free(m.p);
    tc_ctx_free(fs.ctx);
    corpus_free(&c);
}

/* A hand-written input: compile it, apply the general rules, and require the
 * given status. */
static void nasty(const char *name, const bytes *b, tc_status want)
{
    fuzz_state fs = { 0 };
    assert_int_equal(tc_ctx_create(&fs.ctx), TC_OK);
    tc_status st = check_input(&fs, name, b->p ? b->p : "", b->len);
    if (st != want)
        fprintf(stderr, "test_fuzz: %s: got %s, want %s: %.500s\n", name,
                tc_status_str(st), tc_status_str(want), tc_errmsg(fs.ctx));
    assert_int_equal(fs.failures, 0);
    assert_int_equal(st, want);
    tc_ctx_free(fs.ctx);
}

static const char HEAD[] = "fn f(x: f32[N]) -> f32[N] {\n    return ";

static void test_deep_parens(void **state)
{
    (void)state;
    install_crash_reporting();
    bytes b = { 0 };
    bytes_puts(&b, HEAD);
    for (int i = 0; i < 100000; i++)
        bytes_put(&b, "(", 1);
    bytes_puts(&b, "x\n}\n");
    /* Nesting is limited to 200 (docs/semantics.md). */
    nasty("parens.tc", &b, TC_ERR_LIMIT);
    /* Balanced, too: still over the limit. */
    b.len = 0;
    bytes_puts(&b, HEAD);
    for (int i = 0; i < 100000; i++)
        bytes_put(&b, "(", 1);
    bytes_put(&b, "x", 1);
    for (int i = 0; i < 100000; i++)
        bytes_put(&b, ")", 1);
    bytes_puts(&b, "\n}\n");
    nasty("parens2.tc", &b, TC_ERR_LIMIT);
    /* Bare parentheses outside any function: a syntax error at the first. */
    b.len = 0;
    for (int i = 0; i < 100000; i++)
        bytes_put(&b, "(", 1);
    nasty("parens3.tc", &b, TC_ERR_SYNTAX);
    free(b.p);
}

static void test_long_sum(void **state)
{
    (void)state;
    install_crash_reporting();
    bytes b = { 0 };
    bytes_puts(&b, HEAD);
    for (int i = 0; i < 500000; i++) /* 1 MB of "x+" */
        bytes_put(&b, "x+", 2);
    bytes_puts(&b, "x\n}\n");
    /* 500k additions: a flat left-associative chain, under the node limit. */
    fuzz_state fs = { 0 };
    assert_int_equal(tc_ctx_create(&fs.ctx), TC_OK);
    tc_status st = check_input(&fs, "sum.tc", b.p, b.len);
    assert_int_equal(fs.failures, 0);
    assert_true(st == TC_OK || st == TC_ERR_LIMIT);
    tc_ctx_free(fs.ctx);
    /* Dangling '+' at the end: a syntax error after 1 MB of input, unless the
     * nesting limit (which counts the left-associative chain) stops it first. */
    b.len = 0;
    bytes_puts(&b, HEAD);
    for (int i = 0; i < 500000; i++)
        bytes_put(&b, "x+", 2);
    bytes_puts(&b, "\n}\n");
    fs = (fuzz_state){ 0 };
    assert_int_equal(tc_ctx_create(&fs.ctx), TC_OK);
    st = check_input(&fs, "sum2.tc", b.p, b.len);
    assert_int_equal(fs.failures, 0);
    assert_true(st == TC_ERR_SYNTAX || st == TC_ERR_LIMIT);
    tc_ctx_free(fs.ctx);
    /* A sum well inside the limit compiles. */
    b.len = 0;
    bytes_puts(&b, HEAD);
    for (int i = 0; i < 100; i++)
        bytes_put(&b, "x+", 2);
    bytes_puts(&b, "x\n}\n");
    nasty("sum3.tc", &b, TC_OK);
    free(b.p);
}

static void test_recursion(void **state)
{
    (void)state;
    install_crash_reporting();
    bytes b = { 0 };
    bytes_puts(&b, "fn f(x: f32[N]) -> f32[N] {\n    return f(x) + 1\n}\n");
    nasty("self.tc", &b, TC_ERR_COMPILE);
    b.len = 0;
    bytes_puts(&b, "fn f(x: f32[N]) -> f32[N] {\n    return g(x) + 1\n}\n"
                   "fn g(x: f32[N]) -> f32[N] {\n    return f(x) * 2\n}\n");
    nasty("mutual.tc", &b, TC_ERR_COMPILE);
    free(b.p);
}

/* step0 calls step1 ... calls step{depth-1}; inlining depth is limited to 64.
 * (Not f0..fN: f16 is a builtin.) */
static void call_chain(bytes *b, int depth)
{
    b->len = 0;
    char line[256];
    for (int i = 0; i < depth; i++) {
        if (i + 1 < depth)
            snprintf(line, sizeof line,
                     "fn step%d(x: f32[N]) -> f32[N] {\n    return step%d(x) + 1\n}\n", i, i + 1);
        else
            snprintf(line, sizeof line, "fn step%d(x: f32[N]) -> f32[N] {\n    return x\n}\n", i);
        bytes_puts(b, line);
    }
}

static void test_call_chain(void **state)
{
    (void)state;
    install_crash_reporting();
    bytes b = { 0 };
    call_chain(&b, 70);
    nasty("chain70.tc", &b, TC_ERR_LIMIT);
    call_chain(&b, 40);
    nasty("chain40.tc", &b, TC_OK);
    free(b.p);
}

static void test_degenerate_files(void **state)
{
    (void)state;
    install_crash_reporting();
    bytes b = { 0 };
    /* No functions at all: whatever the status, the rules above hold. */
    fuzz_state fs = { 0 };
    assert_int_equal(tc_ctx_create(&fs.ctx), TC_OK);
    check_input(&fs, "empty.tc", "", 0);
    bytes_puts(&b, "# only a comment\n#another\n\n   # indented\n#");
    check_input(&fs, "comments.tc", b.p, b.len);
    assert_int_equal(fs.failures, 0);
    tc_ctx_free(fs.ctx);
    /* A NUL byte inside a function body. */
    b.len = 0;
    bytes_puts(&b, HEAD);
    bytes_put(&b, "x \0+ 1\n}\n", 9);
    nasty("nul.tc", &b, TC_ERR_SYNTAX);
    /* A NUL byte inside a comment is only a comment. */
    b.len = 0;
    bytes_put(&b, "# a\0b\n", 6);
    bytes_puts(&b, HEAD);
    bytes_puts(&b, "x\n}\n");
    fs = (fuzz_state){ 0 };
    assert_int_equal(tc_ctx_create(&fs.ctx), TC_OK);
    check_input(&fs, "nulcomment.tc", b.p, b.len);
    assert_int_equal(fs.failures, 0);
    tc_ctx_free(fs.ctx);
    free(b.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_compiles),
        cmocka_unit_test(test_deep_parens),
        cmocka_unit_test(test_long_sum),
        cmocka_unit_test(test_recursion),
        cmocka_unit_test(test_call_chain),
        cmocka_unit_test(test_degenerate_files),
        cmocka_unit_test(test_mutants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
