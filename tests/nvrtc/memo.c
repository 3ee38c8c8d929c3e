/* memo.c - libtc-nvrtc-memo.so: NVRTC with a memory of its answers, for
 * scripts/test.sh (loaded by tensorc through TENSORC_NVRTC).
 *
 * NVRTC is deterministic: the same source, name and options give the same
 * result, log, PTX and CUBIN.  scripts/test.sh's builds compile the same
 * units many times over: the tests of one build each keep their own kernel
 * cache (a fresh directory, so that they see tensorc's misses and hits), and
 * the sanitizer builds repeat the Release build's tests, where NVRTC's own
 * allocations went through ASan's allocator and were most of the time.
 * This library answers the NVRTC entry points tensorc uses
 * (src/runtime/nvrtc.c); nvrtcCompileProgram looks the compile up in
 * $TC_NVRTC_MEMO_DIR (one file per distinct compile, named by a hash of its
 * source, options and the real NVRTC's version and path), and only on
 * a miss loads the real NVRTC ($TC_NVRTC_MEMO_REAL, else libnvrtc.so.13,
 * .so.12, .so as the dynamic linker finds them), compiles there and writes
 * the answer down (a temporary file renamed into place: parallel tests
 * never read half of one).  A hit is checked whole (the file holds the
 * compile's source and options, compared byte for byte), so a hash
 * collision or a truncated file is a miss, never a wrong answer.  The
 * program's name (tensorc's: the source file's path, in a temporary
 * directory in many tests, where the source itself names only the file's
 * base name) is not in the key: NVRTC writes it in the log's messages, not
 * in the PTX or CUBIN (checked: the same bytes under two names), so a hit
 * under another name gives the remembered log with that name replaced by
 * this one; an answer whose PTX or CUBIN holds its name (line information,
 * say) serves that name alone, and another name compiles for real.  The
 * version and architectures come from the real NVRTC, asked once a run
 * ($TC_NVRTC_MEMO_DIR/facts: facts_once), so a process whose compiles all
 * hit never loads it.
 *
 * What tensorc does with an answer (its checks of sizes and emptiness, the
 * kernel cache, the driver's loading) is unchanged: it runs on the real
 * NVRTC's bytes.  What this leaves out is NVRTC's own work repeated:
 * tests/nvrtc/run.sh's units are each compiled once a build, by the real
 * NVRTC in the Release build (scripts/test.sh runs the Release build first
 * with an empty directory).
 *
 * TC_NVRTC_MEMO_FAST=ptx=LEVEL (scripts/test.sh: mid) compiles each PTX
 * (compute_) unit with --Ofast-compile=LEVEL: the PTX the fake driver is
 * handed (its device is newer than NVRTC: compute_121 here) serves only to
 * read each entry's parameters (tests/fakegpu/fakecuda.c), and long_rows.tc's
 * to look for the cluster instructions.  Checked on every PTX unit of the
 * Release build's tests (193 units, 378 kernels: compute_121, _90, _80):
 * the same entries, parameters and shared declarations as at full
 * optimization, and a third of the CPU (fakegpu's 164 units: 97.6 -> 28.9
 * s).  CUBINs stay as tensorc asks (cubin=LEVEL is there, but neither min
 * nor mid keeps them: 28 and 29 of 173 units got other shared memory
 * sizes).  TC_NVRTC_MEMO_LOG=FILE logs each real compile's CPU time. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef int nvrtcResult;
typedef struct memo_prog *nvrtcProgram;
typedef void *real_prog;

enum { OK = 0, E_NOMEM = 1, E_INPUT = 3, E_PROGRAM = 4 };

static struct {
    int ok;
    char path[4096];
    int (*version)(int *, int *);
    int (*num_archs)(int *);
    int (*archs)(int *);
    int (*create)(real_prog *, const char *, const char *, int, const char *const *, const char *const *);
    int (*compile)(real_prog, int, const char *const *);
    int (*size)(real_prog, size_t *), (*ptx_size)(real_prog, size_t *), (*cubin_size)(real_prog, size_t *);
    int (*log)(real_prog, char *), (*ptx)(real_prog, char *), (*cubin)(real_prog, char *);
    int (*destroy)(real_prog *);
    const char *(*errstr)(int);
    int major, minor;
} R;

static void load_once(void)
{
    const char *env = getenv("TC_NVRTC_MEMO_REAL");
    const char *cands[] = {env, "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    void *h = NULL;
    for (size_t i = 0; i < sizeof cands / sizeof *cands && !h; i++)
        if (cands[i] && *cands[i] && (h = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL)))
            snprintf(R.path, sizeof R.path, "%s", cands[i]);
    if (!h) {
        fprintf(stderr, "tc-nvrtc-memo: no real NVRTC to load (set TC_NVRTC_MEMO_REAL)\n");
        return;
    }
#define SYM(field, name) *(void **)&R.field = dlsym(h, name)
    SYM(version, "nvrtcVersion");
    SYM(num_archs, "nvrtcGetNumSupportedArchs");
    SYM(archs, "nvrtcGetSupportedArchs");
    SYM(create, "nvrtcCreateProgram");
    SYM(compile, "nvrtcCompileProgram");
    SYM(size, "nvrtcGetProgramLogSize");
    SYM(log, "nvrtcGetProgramLog");
    SYM(ptx_size, "nvrtcGetPTXSize");
    SYM(ptx, "nvrtcGetPTX");
    SYM(cubin_size, "nvrtcGetCUBINSize");
    SYM(cubin, "nvrtcGetCUBIN");
    SYM(destroy, "nvrtcDestroyProgram");
    SYM(errstr, "nvrtcGetErrorString");
#undef SYM
    if (!R.version || !R.num_archs || !R.archs || !R.create || !R.compile || !R.size || !R.log ||
        !R.ptx_size || !R.ptx || !R.cubin_size || !R.cubin || !R.destroy || !R.errstr ||
        R.version(&R.major, &R.minor) != OK) {
        fprintf(stderr, "tc-nvrtc-memo: %s lacks an NVRTC entry point\n", R.path);
        return;
    }
    R.ok = 1;
}
/* the real NVRTC, loaded once (contexts compile in several threads) */
static int load_real(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load_once);
    return R.ok;
}

/* --- the real NVRTC's facts: its version and architectures ---------------- */

/* Remembered in $TC_NVRTC_MEMO_DIR/facts (with TC_NVRTC_MEMO_REAL's path,
 * size and mtime) by the first process that loads the real NVRTC, so that a
 * process whose every compile is a hit never loads it: dlopen of the real
 * library cost more than many hits, and in the ASan build its thread keys
 * (pthread_setspecific) read as leaks without LSan's TLS scan, suppressed
 * only after symbolizing their stacks (0.2 s a process).  tensorc still asks
 * the same questions and gets the real NVRTC's answers. */
static struct {
    int ok, major, minor, narchs;
    int archs[256];
    char path[4096];
} F;

static int facts_file(char *file, size_t size, char *id, size_t idsize)
{
    const char *real = getenv("TC_NVRTC_MEMO_REAL"), *dir = getenv("TC_NVRTC_MEMO_DIR");
    struct stat st;
    if (!real || !*real || !dir || !*dir || stat(real, &st) != 0)
        return 0;
    snprintf(file, size, "%s/facts", dir);
    snprintf(id, idsize, "%s %lld %lld", real, (long long)st.st_size, (long long)st.st_mtime);
    return 1;
}

static void facts_once(void)
{
    char file[4200], id[4200], line[4200];
    const int cached = facts_file(file, sizeof file, id, sizeof id);
    FILE *f = cached ? fopen(file, "r") : NULL;
    if (f) {
        int ok = fgets(line, sizeof line, f) && !strcmp(line, "tc-nvrtc-memo facts 1\n") &&
                 fgets(line, sizeof line, f) && !strncmp(line, id, strlen(id)) &&
                 line[strlen(id)] == '\n' &&
                 fscanf(f, "%d %d %d", &F.major, &F.minor, &F.narchs) == 3 && F.narchs >= 0 &&
                 F.narchs <= 256;
        for (int i = 0; ok && i < F.narchs; i++)
            ok = fscanf(f, "%d", &F.archs[i]) == 1;
        fclose(f);
        if (ok) {
            snprintf(F.path, sizeof F.path, "%s", getenv("TC_NVRTC_MEMO_REAL"));
            F.ok = 1;
            return;
        }
    }
    if (!load_real() || R.num_archs(&F.narchs) != OK || F.narchs < 0 || F.narchs > 256 ||
        R.archs(F.archs) != OK)
        return;
    F.major = R.major, F.minor = R.minor;
    snprintf(F.path, sizeof F.path, "%s", R.path);
    F.ok = 1;
    if (!cached || strcmp(R.path, getenv("TC_NVRTC_MEMO_REAL")))
        return;
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", file, (long)getpid());
    if (!(f = fopen(tmp, "w")))
        return;
    fprintf(f, "tc-nvrtc-memo facts 1\n%s\n%d %d %d", id, F.major, F.minor, F.narchs);
    for (int i = 0; i < F.narchs; i++)
        fprintf(f, " %d", F.archs[i]);
    fprintf(f, "\n");
    if (fclose(f) != 0 || rename(tmp, file) != 0)
        unlink(tmp);
}
static int facts(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, facts_once);
    return F.ok;
}
/* the real NVRTC for a compile: the one whose facts the keys hold */
static int load_real_same(void)
{
    if (!load_real())
        return 0;
    if (strcmp(R.path, F.path) || R.major != F.major || R.minor != F.minor) {
        fprintf(stderr, "tc-nvrtc-memo: %s %d.%d is not the NVRTC of %s/facts (%s %d.%d)\n", R.path,
                R.major, R.minor, getenv("TC_NVRTC_MEMO_DIR"), F.path, F.major, F.minor);
        abort();
    }
    return 1;
}

/* --- the program: its input, and the answer once compiled ----------------- */

struct buf { char *p; size_t n; int have; };
struct memo_prog {
    char *src, *name;
    struct buf key;              /* what a hit must match: name, options, source */
    int compiled;
    nvrtcResult result;
    struct buf log, ptx, cubin;  /* as NVRTC's getters give them (sizes included) */
};

static void put(struct buf *b, const void *p, size_t n)
{
    char *q = realloc(b->p, b->n + n + 1);
    if (!q) {
        fprintf(stderr, "tc-nvrtc-memo: out of memory\n");
        abort();
    }
    b->p = q;
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}
static void put_u64(struct buf *b, uint64_t v) { put(b, &v, sizeof v); }
static void put_str(struct buf *b, const char *s)
{
    size_t n = strlen(s);
    put_u64(b, n);
    put(b, s, n);
}

static uint64_t fnv(const char *p, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
    return h;
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name, int nheaders,
                               const char *const *headers, const char *const *include_names)
{
    (void)headers;
    (void)include_names;
    if (!prog || !src || nheaders != 0) /* tensorc passes no headers */
        return E_INPUT;
    struct memo_prog *p = calloc(1, sizeof *p);
    if (!p || !(p->src = strdup(src)) || !(p->name = strdup(name ? name : "default_program"))) {
        if (p)
            free(p->src);
        free(p);
        return E_NOMEM;
    }
    *prog = p;
    return OK;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)
{
    if (!prog || !*prog)
        return E_PROGRAM;
    struct memo_prog *p = *prog;
    free(p->src);
    free(p->name);
    free(p->key.p);
    free(p->log.p);
    free(p->ptx.p);
    free(p->cubin.p);
    free(p);
    *prog = NULL;
    return OK;
}

/* the memo file: "tc-nvrtc-memo 2\n", the key (length, bytes), the name
 * (whether given, length, bytes), the result, then the log, PTX and CUBIN
 * (each: whether NVRTC gave it, length, bytes) */
static const char MAGIC[] = "tc-nvrtc-memo 2\n";

static int read_all(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n; }

static int read_buf(FILE *f, struct buf *b)
{
    uint64_t have, n;
    if (!read_all(f, &have, sizeof have) || !read_all(f, &n, sizeof n) || n > ((uint64_t)1 << 34))
        return 0;
    b->have = (int)have;
    b->p = malloc(n + 1);
    if (!b->p || !read_all(f, b->p, n))
        return 0;
    b->p[n] = '\0';
    b->n = n;
    return 1;
}

static const char *memmem_(const char *h, size_t hn, const char *n, size_t nn)
{
    if (!h || nn == 0 || hn < nn)
        return NULL;
    for (size_t i = 0; i + nn <= hn; i++)
        if (h[i] == n[0] && !memcmp(h + i, n, nn))
            return h + i;
    return NULL;
}

/* the log's every mention of the remembered name, this program's instead
 * (the log's bytes end with NVRTC's NUL, counted in its size) */
static void rename_in_log(struct buf *log, const char *from, const char *to)
{
    if (!log->have || !log->p)
        return;
    size_t fn = strlen(from), tn = strlen(to);
    struct buf out = {0};
    const char *s = log->p, *end = log->p + log->n, *hit;
    while ((hit = memmem_(s, (size_t)(end - s), from, fn))) {
        put(&out, s, (size_t)(hit - s));
        put(&out, to, tn);
        s = hit + fn;
    }
    put(&out, s, (size_t)(end - s));
    free(log->p);
    log->p = out.p;
    log->n = out.n;
}

static int lookup(struct memo_prog *p, const char *file)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return 0;
    char magic[sizeof MAGIC - 1];
    uint64_t klen, res;
    int ok = read_all(f, magic, sizeof magic) && !memcmp(magic, MAGIC, sizeof magic) &&
             read_all(f, &klen, sizeof klen) && klen == p->key.n;
    if (ok) {
        char *k = malloc(klen ? klen : 1);
        ok = k && read_all(f, k, klen) && !memcmp(k, p->key.p, klen);
        free(k);
    }
    struct buf name = {0};
    ok = ok && read_buf(f, &name) && read_all(f, &res, sizeof res) && read_buf(f, &p->log) &&
         read_buf(f, &p->ptx) && read_buf(f, &p->cubin) && fgetc(f) == EOF;
    fclose(f);
    /* another name: only where the images do not hold the remembered one */
    const int renamed = ok && strcmp(name.p, p->name) != 0;
    if (renamed && (name.n == 0 || memmem_(p->ptx.p, p->ptx.n, name.p, name.n) ||
                    memmem_(p->cubin.p, p->cubin.n, name.p, name.n)))
        ok = 0;
    if (!ok) {
        free(name.p), free(p->log.p), free(p->ptx.p), free(p->cubin.p);
        p->log = p->ptx = p->cubin = (struct buf){0};
        return 0;
    }
    if (renamed)
        rename_in_log(&p->log, name.p, p->name);
    free(name.p);
    p->result = (nvrtcResult)res;
    return 1;
}

static void write_buf(FILE *f, const struct buf *b)
{
    uint64_t have = (uint64_t)b->have, n = b->n;
    fwrite(&have, sizeof have, 1, f);
    fwrite(&n, sizeof n, 1, f);
    fwrite(b->p ? b->p : "", 1, b->n, f);
}

static void store(const struct memo_prog *p, const char *file)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", file, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return; /* an unwritable directory only costs a later compile */
    uint64_t klen = p->key.n, res = (uint64_t)p->result;
    fwrite(MAGIC, 1, sizeof MAGIC - 1, f);
    fwrite(&klen, sizeof klen, 1, f);
    fwrite(p->key.p, 1, p->key.n, f);
    const struct buf name = {p->name, strlen(p->name), 1};
    write_buf(f, &name);
    fwrite(&res, sizeof res, 1, f);
    write_buf(f, &p->log);
    write_buf(f, &p->ptx);
    write_buf(f, &p->cubin);
    if (fclose(f) != 0 || rename(tmp, file) != 0)
        unlink(tmp);
}

/* one of the real NVRTC's outputs: its size, then its bytes (have = 0 when
 * the real NVRTC refuses to give it, e.g. a CUBIN of a PTX compile) */
static void fetch(real_prog rp, int (*size)(real_prog, size_t *), int (*get)(real_prog, char *),
                  struct buf *b)
{
    size_t n = 0;
    if (size(rp, &n) != OK)
        return;
    b->p = malloc(n + 1);
    if (!b->p)
        return;
    if (n && get(rp, b->p) != OK) {
        free(b->p);
        b->p = NULL;
        return;
    }
    b->p[n] = '\0';
    b->n = n;
    b->have = 1;
}

/* FILE.lock, locked (POSIX record locks: released when the holder exits,
 * however it ends); -1 when it cannot be.  Two processes asking for the
 * same compile at once would both miss and both compile (tests/gpu/suite.py
 * runs a function at its shape classes as parallel jobs, each with a
 * kernel cache of its own: 87 of fakegpu's 164 PTX units were compiled
 * twice, 57 of its 151 s of NVRTC): the first to lock compiles, the others
 * wait for it and find its answer. */
static int lock_key(const char *file)
{
    char name[4200];
    snprintf(name, sizeof name, "%s.lock", file);
    int fd = open(name, O_RDWR | O_CREAT, 0600);
    if (fd < 0)
        return -1;
    struct flock fl = {0};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    while (fcntl(fd, F_SETLKW, &fl) != 0)
        if (errno != EINTR) {
            close(fd);
            return -1;
        }
    return fd;
}

/* TC_NVRTC_MEMO_FAST ("ptx=mid,cubin=min", say): the level of NVRTC's
 * --Ofast-compile added to each PTX (compute_) or CUBIN (sm_) compile of that
 * kind that names none itself (tensorc gives huge units min: nvrtc.c), in
 * the key too; NULL when none is asked for this compile */
static const char *fast_level(int nopts, const char *const *opts, char *level, size_t size)
{
    const char *want = getenv("TC_NVRTC_MEMO_FAST"), *kind = NULL;
    for (int i = 0; i < nopts; i++) {
        if (!opts[i])
            continue;
        if (!strncmp(opts[i], "--Ofast-compile", 15))
            return NULL;
        if (!strncmp(opts[i], "--gpu-architecture=compute_", 27))
            kind = "ptx=";
        else if (!strncmp(opts[i], "--gpu-architecture=sm_", 22))
            kind = "cubin=";
    }
    const char *at = want && kind ? strstr(want, kind) : NULL;
    if (!at || (at != want && at[-1] != ','))
        return NULL;
    at += strlen(kind);
    size_t n = strcspn(at, ",");
    if (n == 0 || n + 17 > size)
        return NULL;
    snprintf(level, size, "--Ofast-compile=%.*s", (int)n, at);
    return level;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int nopts, const char *const *opts)
{
    struct memo_prog *p = prog;
    if (!p || nopts < 0 || (nopts && !opts))
        return E_INPUT;
    if (!facts()) /* the version and path are part of the key */
        return E_PROGRAM;
    free(p->key.p), free(p->log.p), free(p->ptx.p), free(p->cubin.p);
    p->key = p->log = p->ptx = p->cubin = (struct buf){0};
    char fastopt[64];
    const char *fast = fast_level(nopts, opts, fastopt, sizeof fastopt);
    const char **all = malloc((size_t)(nopts + 1) * sizeof *all);
    if (!all)
        return E_NOMEM;
    for (int i = 0; i < nopts; i++)
        all[i] = opts[i] ? opts[i] : "";
    if (fast)
        all[nopts] = fast;
    const int nall = nopts + (fast != NULL);
    char ver[64];
    snprintf(ver, sizeof ver, "%d.%d", F.major, F.minor);
    put_str(&p->key, ver);
    put_str(&p->key, F.path);
    put_u64(&p->key, (uint64_t)nall);
    for (int i = 0; i < nall; i++)
        put_str(&p->key, all[i]);
    put_str(&p->key, p->src);
    const char *dir = getenv("TC_NVRTC_MEMO_DIR");
    char file[4096] = "";
    if (dir && *dir)
        snprintf(file, sizeof file, "%s/%016llx%016llx.nvm", dir,
                 (unsigned long long)fnv(p->key.p, p->key.n, 0xcbf29ce484222325ULL),
                 (unsigned long long)fnv(p->key.p, p->key.n, 0x84222325cbf29ce4ULL));
    p->compiled = 1;
    int lock = -1;
    if (*file && (lookup(p, file) || ((lock = lock_key(file)) >= 0 && lookup(p, file)))) {
        if (lock >= 0)
            close(lock);
        free(all);
        return p->result;
    }
    real_prog rp = NULL;
    nvrtcResult r = load_real_same() ? R.create(&rp, p->src, p->name, 0, NULL, NULL) : E_PROGRAM;
    if (r != OK) {
        if (lock >= 0)
            close(lock);
        free(all);
        return r;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    p->result = R.compile(rp, nall, all);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    free(all);
    /* TC_NVRTC_MEMO_LOG=FILE: a line a real compile, its CPU seconds, memo
     * file, source size and name (what each test costs NVRTC) */
    const char *logname = getenv("TC_NVRTC_MEMO_LOG");
    FILE *log = logname && *logname ? fopen(logname, "a") : NULL;
    if (log) {
        fprintf(log, "%.3f %s %zu %s\n",
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, file,
                strlen(p->src), p->name);
        fclose(log);
    }
    fetch(rp, R.size, R.log, &p->log);
    if (p->result == OK) {
        fetch(rp, R.ptx_size, R.ptx, &p->ptx);
        fetch(rp, R.cubin_size, R.cubin, &p->cubin);
    }
    R.destroy(&rp);
    if (*file && p->log.have)
        store(p, file);
    if (lock >= 0)
        close(lock); /* after the store: a waiter finds the answer */
    return p->result;
}

static nvrtcResult give_size(nvrtcProgram prog, const struct buf *b, size_t *size, size_t extra)
{
    if (!prog || !size)
        return E_INPUT;
    if (!prog->compiled || !b->have)
        return E_PROGRAM;
    *size = b->n + extra;
    return OK;
}
static nvrtcResult give(nvrtcProgram prog, const struct buf *b, char *out)
{
    if (!prog || !out)
        return E_INPUT;
    if (!prog->compiled || !b->have)
        return E_PROGRAM;
    memcpy(out, b->p, b->n);
    return OK;
}

/* The log's and the PTX's sizes are as NVRTC gave them (they count the
 * NUL, which is part of the stored bytes); the CUBIN's likewise. */
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *size) { return give_size(prog, &prog->log, size, 0); }
nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log) { return give(prog, &prog->log, log); }
nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *size) { return give_size(prog, &prog->ptx, size, 0); }
nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx) { return give(prog, &prog->ptx, ptx); }
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t *size) { return give_size(prog, &prog->cubin, size, 0); }
nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin) { return give(prog, &prog->cubin, cubin); }

nvrtcResult nvrtcVersion(int *major, int *minor)
{
    if (!major || !minor)
        return E_INPUT;
    if (!facts())
        return E_PROGRAM;
    *major = F.major, *minor = F.minor;
    return OK;
}
nvrtcResult nvrtcGetNumSupportedArchs(int *n)
{
    if (!n)
        return E_INPUT;
    if (!facts())
        return E_PROGRAM;
    *n = F.narchs;
    return OK;
}
nvrtcResult nvrtcGetSupportedArchs(int *archs)
{
    if (!archs)
        return E_INPUT;
    if (!facts())
        return E_PROGRAM;
    memcpy(archs, F.archs, (size_t)F.narchs * sizeof *archs);
    return OK;
}
const char *nvrtcGetErrorString(nvrtcResult r)
{
    if (!load_real())
        return "tc-nvrtc-memo: no real NVRTC";
    return R.errstr(r);
}
