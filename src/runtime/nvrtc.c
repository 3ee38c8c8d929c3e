/* nvrtc.c - NVRTC loaded with dlopen; see nvrtc.h for why and what is cached.
 *
 * The approach: one pthread_once routine walks the candidate list, dlopens
 * the first library that has every entry point we need, and records the
 * function pointers, the version and the supported architectures in one
 * static struct that is read-only afterwards.  When nothing loads, it records
 * the list of places it tried (and why the last one failed), so every later
 * nvrtc_load reports the same clear message without searching again.
 *
 * The NVRTC prototypes below are copied by hand from nvrtc.h (CUDA 12/13);
 * they have been stable since CUDA 11.  nvrtcResult is a C enum (an int) whose
 * success value is 0; we only name the values we act on.
 */
#define _GNU_SOURCE /* dladdr: the file the library was loaded from */
#include "nvrtc.h"

#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlsym.h"
#include "libsearch.h"
#include "nvrtc_facts.h"
#include "strbuf.h"

/* --- the NVRTC C ABI, declared here instead of including nvrtc.h -------- */

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

enum {
    NVRTC_SUCCESS = 0,
    NVRTC_ERROR_OUT_OF_MEMORY = 1,
    NVRTC_ERROR_INVALID_OPTION = 5,
    NVRTC_ERROR_COMPILATION = 6,
};

typedef nvrtcResult (*fn_version)(int *major, int *minor);
typedef nvrtcResult (*fn_num_archs)(int *n);
typedef nvrtcResult (*fn_archs)(int *archs);
typedef nvrtcResult (*fn_create)(nvrtcProgram *prog, const char *src, const char *name,
                                 int nheaders, const char *const *headers,
                                 const char *const *include_names);
typedef nvrtcResult (*fn_compile)(nvrtcProgram prog, int nopts, const char *const *opts);
typedef nvrtcResult (*fn_size)(nvrtcProgram prog, size_t *size);
typedef nvrtcResult (*fn_get)(nvrtcProgram prog, char *buf);
typedef nvrtcResult (*fn_destroy)(nvrtcProgram *prog);
typedef const char *(*fn_errstr)(nvrtcResult r);

/* --- the state found once per process ------------------------------------ */

static struct {
    bool ok;
    char *failure;          /* malloc'd "NVRTC not found (...)" when !ok; kept for the process */
    char *path;             /* the candidate that loaded, for diagnostics */
    int major, minor;
    int *archs, narchs;     /* ascending */
    fn_version version;
    fn_num_archs num_archs;
    fn_archs get_archs;
    fn_create create;
    fn_compile compile;
    fn_size log_size, ptx_size, cubin_size;
    fn_get log, ptx, cubin;
    fn_destroy destroy;
    fn_errstr errstr;
} nv;

static pthread_once_t nv_once = PTHREAD_ONCE_INIT;
/* nv.ok for readers that do not go through pthread_once (nvrtc_loaded, and
 * known() deciding whether to load): set last by load_once, with release
 * order, so a reader that sees it true also sees everything load_once
 * wrote.  Reading nv.ok itself there raced with load_once in another
 * context's thread (ThreadSanitizer, tests/unit/test_contexts). */
static _Atomic bool nv_ready;

/* Try one candidate: dlopen it and resolve every entry point.  On failure
 * records why in *why (a dlerror text or the missing symbol) and closes it. */
static bool try_load(const char *path, tc_strbuf *why)
{
    static const char *const names[] = {
        "nvrtcVersion", "nvrtcGetNumSupportedArchs", "nvrtcGetSupportedArchs",
        "nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetProgramLogSize",
        "nvrtcGetProgramLog", "nvrtcGetPTXSize", "nvrtcGetPTX", "nvrtcGetCUBINSize",
        "nvrtcGetCUBIN", "nvrtcDestroyProgram", "nvrtcGetErrorString",
    };
    void *const slots[] = {
        &nv.version, &nv.num_archs, &nv.get_archs, &nv.create, &nv.compile,
        &nv.log_size, &nv.log, &nv.ptx_size, &nv.ptx, &nv.cubin_size, &nv.cubin,
        &nv.destroy, &nv.errstr,
    };
    _Static_assert(sizeof names / sizeof *names == sizeof slots / sizeof *slots,
                   "one slot per NVRTC entry point");
    void *h = dl_open_all(path, names, slots, sizeof names / sizeof *names, why);
    if (!h)
        return false;
    int n = 0;
    if (nv.version(&nv.major, &nv.minor) != NVRTC_SUCCESS ||
        nv.num_archs(&n) != NVRTC_SUCCESS || n <= 0) {
        why->len = 0;
        strbuf_printf(why, "%s does not answer nvrtcVersion/nvrtcGetNumSupportedArchs", path);
        dlclose(h);
        return false;
    }
    nv.archs = malloc((size_t)n * sizeof *nv.archs);
    if (!nv.archs || nv.get_archs(nv.archs) != NVRTC_SUCCESS) {
        free(nv.archs);
        nv.archs = NULL;
        why->len = 0;
        strbuf_printf(why, "%s: could not list supported architectures", path);
        dlclose(h);
        return false;
    }
    nv.narchs = n;
    /* The documentation promises ascending order; clamping relies on it, so
     * make sure (an insertion sort of a dozen ints). */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && nv.archs[j - 1] > nv.archs[j]; j--) {
            int t = nv.archs[j];
            nv.archs[j] = nv.archs[j - 1];
            nv.archs[j - 1] = t;
        }
    nv.path = strdup(path);
    return true; /* the handle is kept for the life of the process */
}

/* Newest soname first, so libnvrtc.so.13 beats libnvrtc.so.12 in one dir. */
static int cmp_desc(const void *a, const void *b)
{
    return strcmp(*(const char *const *)b, *(const char *const *)a);
}

/* The last resort: NVRTC in a pip wheel (libsearch.h), searched only now
 * that the usual places failed; true when one loaded. */
static bool wheel_search(tc_strbuf *tried, tc_strbuf *why)
{
    tc_strbuf sites = {0};
    char **w = libsearch_wheels("cuda_nvrtc/lib/libnvrtc.so*", &sites);
    bool ok = false;
    for (size_t i = 0; w && w[i] && !ok; i++) {
        strbuf_printf(tried, ", %s", w[i]);
        ok = try_load(w[i], why);
    }
    if (!w)
        strbuf_printf(tried, ", pip wheels' nvidia/cuda_nvrtc (site-packages: %s)",
                      sites.s ? sites.s : "none found");
    nv.ok = ok;
    libsearch_free(w);
    free(sites.s);
    return ok;
}

/* The file NVRTC was loaded from (resolved), or NULL when not loaded. */
const char *nvrtc_lib_path(void)
{
    static char buf[4096];
    if (!nvrtc_loaded())
        return NULL;
    return libsearch_path_of((const void *)(uintptr_t)nv.version, buf, sizeof buf) ? buf : nv.path;
}

static void load_once(void)
{
    tc_strbuf tried = {0}, why = {0};
#define TRY(p)                                                                 \
    do {                                                                       \
        const char *p_ = (p);                                                  \
        strbuf_printf(&tried, "%s%s", tried.len ? ", " : "", p_);                     \
        if (try_load(p_, &why)) {                                              \
            nv.ok = true;                                                      \
            goto done;                                                         \
        }                                                                      \
    } while (0)

    const char *env = getenv("TENSORC_NVRTC");
    if (env && *env)
        TRY(env);
    TRY("libnvrtc.so.13");
    TRY("libnvrtc.so.12");
    TRY("libnvrtc.so");
    const char *home = getenv("CUDA_HOME");
    if (home && *home) {
        tc_strbuf pat = {0};
        strbuf_printf(&pat, "%s/lib64/libnvrtc.so*", home);
        glob_t g;
        if (pat.s && glob(pat.s, 0, NULL, &g) == 0) {
            qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, cmp_desc);
            for (size_t i = 0; i < g.gl_pathc; i++) {
                strbuf_printf(&tried, ", %s", g.gl_pathv[i]);
                if (try_load(g.gl_pathv[i], &why)) {
                    nv.ok = true;
                    globfree(&g);
                    free(pat.s);
                    goto done;
                }
            }
            globfree(&g);
        } else if (pat.s) {
            strbuf_printf(&tried, ", %s", pat.s);
        }
        free(pat.s);
    }
    TRY("/usr/local/cuda/lib64/libnvrtc.so.13");
#undef TRY
    if (wheel_search(&tried, &why))
        goto done;
    {
        tc_strbuf msg = {0};
        strbuf_printf(&msg, "NVRTC not found (tried %s%s%s): install the CUDA toolkit or set TENSORC_NVRTC",
               tried.s ? tried.s : "", why.s ? "; last error: " : "", why.s ? why.s : "");
        nv.failure = msg.s; /* may be NULL on out of memory; nvrtc_load copes */
    }
done:
    free(tried.s);
    free(why.s);
    atomic_store_explicit(&nv_ready, nv.ok, memory_order_release);
}

tc_status nvrtc_load(tc_diag *d)
{
    pthread_once(&nv_once, load_once);
    if (nv.ok)
        return TC_OK;
    if (d)
        diag_set(d, TC_ERR_NO_DEVICE, (tc_loc){0}, "%s",
                 nv.failure ? nv.failure
                            : "NVRTC not found: install the CUDA toolkit or set TENSORC_NVRTC");
    return TC_ERR_NO_DEVICE;
}

/* --- facts without loading (nvrtc_facts.h) ---------------------------------- */

static pthread_mutex_t peek_lock = PTHREAD_MUTEX_INITIALIZER;
static nvrtc_facts peek;        /* valid when peeked; never changed afterwards */
static _Atomic bool peeked;

void nvrtc_facts_use(const char *path)
{
    if (peeked || !path)
        return;
    pthread_mutex_lock(&peek_lock);
    nvrtc_facts f;
    if (!peeked && facts_read(path, &f)) {
        peek = f;
        peeked = true;
    }
    pthread_mutex_unlock(&peek_lock);
}

void nvrtc_facts_save(const char *path)
{
    if (!path || nvrtc_load(NULL) != TC_OK || nv.narchs > FACTS_MAX_ARCHS)
        return;
    nvrtc_facts f = {.major = nv.major, .minor = nv.minor, .narchs = nv.narchs};
    memcpy(f.archs, nv.archs, sizeof *nv.archs * (size_t)nv.narchs);
    nvrtc_facts old;
    if (facts_read(path, &old) && memcmp(&old, &f, sizeof f) == 0)
        return; /* already there */
    Dl_info info;
    char *lib = dladdr((void *)nv.version, &info) && info.dli_fname ? realpath(info.dli_fname, NULL)
                                                                     : NULL;
    if (lib)
        (void)facts_write(path, lib, &f); /* a failure only costs the next process the load */
    free(lib);
}

bool nvrtc_loaded(void)
{
    return atomic_load_explicit(&nv_ready, memory_order_acquire);
}

/* Version and architectures: from the library when it is loaded, else
 * from trusted facts, else by loading it. */
static bool known(int *major, int *minor, const int **archs, int *narchs)
{
    if (!nvrtc_loaded() && peeked) {
        *major = peek.major;
        *minor = peek.minor;
        *archs = peek.archs;
        *narchs = peek.narchs;
        return true;
    }
    if (nvrtc_load(NULL) != TC_OK)
        return false;
    *major = nv.major;
    *minor = nv.minor;
    *archs = nv.archs;
    *narchs = nv.narchs;
    return true;
}

bool nvrtc_version(int *major, int *minor)
{
    int ma, mi, n;
    const int *a;
    if (!known(&ma, &mi, &a, &n))
        return false;
    if (major)
        *major = ma;
    if (minor)
        *minor = mi;
    return true;
}

int nvrtc_supported_archs(int *archs, int max)
{
    int ma, mi, n;
    const int *a;
    if (!known(&ma, &mi, &a, &n))
        return 0;
    for (int i = 0; i < n && i < max; i++)
        archs[i] = a[i];
    return n;
}

int nvrtc_clamp_arch(int want, bool *ptx_only)
{
    if (ptx_only)
        *ptx_only = false;
    int ma, mi, n;
    const int *a;
    if (!known(&ma, &mi, &a, &n))
        return 0;
    int newest = a[n - 1];
    if (want > newest) {
        /* A device newer than this NVRTC: a CUBIN for an older sm_ would not
         * run on it (SASS is not forward compatible across majors), PTX is. */
        if (ptx_only)
            *ptx_only = true;
        return newest;
    }
    int best = 0;
    for (int i = 0; i < n && a[i] <= want; i++)
        best = a[i];
    return best;
}

void nvrtc_output_free(nvrtc_output *out)
{
    if (!out)
        return;
    free(out->data);
    free(out->log);
    *out = (nvrtc_output){0};
}

static bool arch_supported(int arch)
{
    for (int i = 0; i < nv.narchs; i++)
        if (nv.archs[i] == arch)
            return true;
    return false;
}

/* The largest log, PTX or CUBIN read back: far beyond any real one, and
 * what keeps an absurd size (SIZE_MAX would make malloc(n + 1) allocate
 * nothing) from becoming a heap overflow in the get call. */
#define FETCH_MAX ((size_t)1 << 30)
#define FETCH_TOO_BIG (-1000)   /* not an NVRTC code: the size was over FETCH_MAX */

/* Read a log/PTX/CUBIN through its size+get pair into a malloc'd buffer with
 * a NUL after it (NVRTC's sizes for the log and PTX already count one);
 * *len is the size reported, also when it is refused (FETCH_TOO_BIG). */
static nvrtcResult fetch(nvrtcProgram p, fn_size size_fn, fn_get get_fn, char **data, size_t *len)
{
    size_t n = 0;
    nvrtcResult r = size_fn(p, &n);
    if (r != NVRTC_SUCCESS)
        return r;
    if (n > FETCH_MAX) {
        *len = n;
        return FETCH_TOO_BIG;
    }
    char *buf = malloc(n + 1);
    if (!buf)
        return NVRTC_ERROR_OUT_OF_MEMORY;
    if (n && (r = get_fn(p, buf)) != NVRTC_SUCCESS) {
        free(buf);
        return r;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return NVRTC_SUCCESS;
}

static tc_status status_of(nvrtcResult r)
{
    switch (r) {
    case NVRTC_ERROR_OUT_OF_MEMORY: return TC_ERR_NOMEM;
    case NVRTC_ERROR_INVALID_OPTION: return TC_ERR_INVALID_ARG;
    case NVRTC_ERROR_COMPILATION: return TC_ERR_COMPILE;
    default: return TC_ERR_INTERNAL;
    }
}

tc_status nvrtc_compile(const char *src, const char *name, int arch, bool cubin,
                        const char *const *extra_opts, int nextra, nvrtc_output *out,
                        tc_diag *d)
{
    *out = (nvrtc_output){0};
    tc_status st = nvrtc_load(d);
    if (st != TC_OK)
        return st;
    if (!src || nextra < 0 || (nextra > 0 && !extra_opts))
        return d ? diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                            "nvrtc_compile: src is NULL or extra_opts/nextra disagree")
                 : TC_ERR_INVALID_ARG;
    if (!name)
        name = "tensorc.cu";
    if (!arch_supported(arch)) {
        if (d) {
            tc_strbuf list = {0};
            for (int i = 0; i < nv.narchs; i++)
                strbuf_printf(&list, "%s%d", i ? ", " : "", nv.archs[i]);
            diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                     "NVRTC %d.%d cannot compile for sm_%d (it supports %s)", nv.major,
                     nv.minor, arch, list.s ? list.s : "?");
            free(list.s);
        }
        return TC_ERR_INVALID_ARG;
    }

    char archopt[64]; /* "--gpu-architecture=compute_" + an int always fits */
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s_%d", cubin ? "sm" : "compute", arch);
    const char **opts = malloc((size_t)(4 + nextra) * sizeof *opts);
    if (!opts)
        return d ? diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory") : TC_ERR_NOMEM;
    opts[0] = "--std=c++17";
    opts[1] = "-default-device";
    opts[2] = archopt;
    for (int i = 0; i < nextra; i++)
        opts[3 + i] = extra_opts[i];
    int nopts = 3 + nextra;
    /* A huge unit (only long chains past the compile budget make one:
     * sched.h's compact kernels) is compiled with the lightest of NVRTC's
     * fast-compile levels (12.8+): NVRTC time -20 to -30% there, code of
     * about the same size, though not the same CUBIN (tests/nvrtc/memo.c's
     * comparison of 173 ordinary units at min: 28 with other shared-memory
     * sizes, e.g. 5136 against 5121 bytes; the launch takes a kernel's
     * static size from the module).  Ordinary units (every example is under
     * 120 KB) get none. */
    bool fast = strlen(src) > NVRTC_FAST_COMPILE_BYTES &&
                (nv.major > 12 || (nv.major == 12 && nv.minor >= 8));
    if (fast)
        opts[nopts++] = "--Ofast-compile=min";

    nvrtcProgram prog = NULL;
    nvrtcResult r = nv.create(&prog, src, name, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        free(opts);
        st = status_of(r);
        return d ? diag_set(d, st, (tc_loc){0}, "nvrtcCreateProgram(%s) failed: %s", name,
                            nv.errstr(r))
                 : st;
    }
    nvrtcResult cr = nv.compile(prog, nopts, opts);
    if (fast && cr == NVRTC_ERROR_INVALID_OPTION) /* a build without the option */
        cr = nv.compile(prog, nopts - 1, opts);
    free(opts);

    /* The log comes first: it explains a failure and may hold warnings. */
    size_t loglen = 0;
    nvrtcResult lr = fetch(prog, nv.log_size, nv.log, &out->log, &loglen);
    if (lr != NVRTC_SUCCESS)
        out->log = NULL;
    if (lr == FETCH_TOO_BIG) {
        tc_strbuf b = {0};
        strbuf_printf(&b, "(NVRTC reported a log of %zu bytes, not read)", loglen);
        out->log = b.s;
        loglen = b.s ? b.len : 0;
    }
    /* NVRTC ends its log with a newline; the message adds its own. */
    while (out->log && loglen && (out->log[loglen - 1] == '\n' || out->log[loglen - 1] == '\0'))
        out->log[--loglen] = '\0';

    if (cr != NVRTC_SUCCESS) {
        st = status_of(cr);
        if (d) {
            if (cr == NVRTC_ERROR_COMPILATION)
                diag_set(d, st, (tc_loc){0}, "NVRTC could not compile %s for %s_%d:\n%s", name,
                         cubin ? "sm" : "compute", arch,
                         out->log && *out->log ? out->log : "(NVRTC gave no log)");
            else
                diag_set(d, st, (tc_loc){0}, "NVRTC failed on %s: %s%s%s", name, nv.errstr(cr),
                         out->log && *out->log ? "\n" : "", out->log ? out->log : "");
        }
        nv.destroy(&prog);
        return st;
    }

    r = cubin ? fetch(prog, nv.cubin_size, nv.cubin, &out->data, &out->len)
              : fetch(prog, nv.ptx_size, nv.ptx, &out->data, &out->len);
    nv.destroy(&prog);
    if (r == FETCH_TOO_BIG) {
        return d ? diag_set(d, TC_ERR_COMPILE, (tc_loc){0}, "NVRTC reported a %s of %zu bytes "
                            "for %s, over the %zu it is trusted with", cubin ? "CUBIN" : "PTX",
                            out->len, name, FETCH_MAX)
                 : TC_ERR_COMPILE;
    }
    if (r != NVRTC_SUCCESS) {
        st = status_of(r);
        return d ? diag_set(d, st, (tc_loc){0}, "NVRTC could not hand back the %s of %s: %s",
                            cubin ? "CUBIN" : "PTX", name, nv.errstr(r))
                 : st;
    }
    /* NVRTC's PTX size counts the terminating NUL; len should not. */
    if (!cubin)
        out->len = strlen(out->data);
    /* an empty image would only fail later, in the driver, far from the cause */
    if (out->len == 0)
        return d ? diag_set(d, TC_ERR_COMPILE, (tc_loc){0}, "NVRTC compiled %s but gave an empty %s",
                            name, cubin ? "CUBIN" : "PTX")
                 : TC_ERR_COMPILE;
    if (!out->log) {
        out->log = calloc(1, 1);
        if (!out->log) {
            nvrtc_output_free(out);
            return d ? diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory") : TC_ERR_NOMEM;
        }
    }
    return TC_OK;
}
