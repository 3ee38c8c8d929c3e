/* bench.c - tc-bench: the benchmark suite of issue 5 through tensorc's C API.
 *
 *   tc-bench [--cases DIR] [-o FILE] [--quick] [--compile-reps N] [CASE...]
 *
 * The parent is a straight line (each piece of work is a child process of
 * this same executable, see bench.h for why):
 *
 *   1. options; the cases named (default: all of suite.md)
 *   2. the GPU: tc_device_open(0); none is exit 3 with the driver's reason
 *   3. a work directory for kernel caches, logs and the children's JSON
 *   4. the ceiling (--child=ceiling)
 *   5. per case: --child=case, then --child=cold with a kernel cache
 *      directory that does not exist yet and --child=warm on the one it
 *      filled (--compile-reps times each; the medians are reported)
 *   6. one JSON document (stdout, or -o FILE) with everything the children
 *      wrote, and for a child that died, how it died and its last output
 *
 * Exit status: 0 every case checked and timed; 1 some case failed (its
 * error is in the JSON, the others ran); 2 usage; 3 no GPU.
 */
#include "bench.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef TC_BENCH_CASES
#define TC_BENCH_CASES "bench/cases"
#endif

typedef struct {
    const char *out_path;
    const char *cases_dir;
    const char *child;      /* --child=MODE: we are a child */
    const char *child_out;
    bool quick, no_ceiling, list, self_test;
    int reps;               /* cold and warm children per case */
    uint64_t seed;
    int threads;
    int timeout_s;
    const char **names;
    int nnames;
} opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tc-bench [options] [CASE...]\n"
            "Runs the benchmark suite (../shared/bench/suite.md) through tensorc's C API on\n"
            "the GPU: every output checked against the reference interpreter, then timed.\n"
            "JSON results on stdout (or -o FILE); progress and errors on stderr.\n"
            "\n"
            "  --cases DIR         the case programs (default: " TC_BENCH_CASES ")\n"
            "  -o, --output FILE   write the JSON here\n"
            "  --quick             small shapes and few iterations: a smoke test, not the suite\n"
            "  --compile-reps N    cold-compile and warm-start runs per case (default 2; 0: none)\n"
            "  --no-ceiling        skip the bandwidth ceiling\n"
            "  --seed N            random inputs' seed (default 1)\n"
            "  --threads N         threads for inputs and reference checks (default: CPUs)\n"
            "  --timeout S         limit per child process in seconds (default 300)\n"
            "  --list              list the cases and exit\n"
            "  --self-test         test the reference check and the JSON helpers (no GPU needed)\n"
            "\n"
            "Exit status: 0 all cases checked and timed, 1 some case failed (see the JSON),\n"
            "2 usage, 3 no GPU.\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tc-bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(tc-bench --help for usage)\n");
    va_end(ap);
    return BENCH_USAGE;
}

static bool parse_num(const char *s, long long lo, long long hi, long long *v)
{
    char *end;
    errno = 0;
    long long x = s && *s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || x < lo || x > hi)
        return false;
    *v = x;
    return true;
}

static int parse_opts(int argc, char **argv, opts *o)
{
    o->cases_dir = TC_BENCH_CASES;
    o->reps = 2;
    o->seed = 1;
    o->threads = bench_threads();
    o->timeout_s = 300;
    o->names = calloc((size_t)argc + 1, sizeof *o->names);
    if (!o->names)
        return usage_error("out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long n;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            o->list = true; /* nothing else to do */
            o->nnames = -1;
            return BENCH_OK;
        } else if (!strcmp(a, "--quick")) {
            o->quick = true;
        } else if (!strcmp(a, "--no-ceiling")) {
            o->no_ceiling = true;
        } else if (!strcmp(a, "--list")) {
            o->list = true;
        } else if (!strcmp(a, "--self-test")) {
            o->self_test = true;
        } else if (!strncmp(a, "--child=", 8)) {
            o->child = a + 8;
        } else if (!strcmp(a, "--cases") || !strcmp(a, "-o") || !strcmp(a, "--output") ||
                   !strcmp(a, "--child-out") || !strcmp(a, "--compile-reps") ||
                   !strcmp(a, "--seed") || !strcmp(a, "--threads") || !strcmp(a, "--timeout")) {
            if (!v)
                return usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "--cases"))
                o->cases_dir = v;
            else if (!strcmp(a, "-o") || !strcmp(a, "--output"))
                o->out_path = v;
            else if (!strcmp(a, "--child-out"))
                o->child_out = v;
            else if (!strcmp(a, "--compile-reps") && parse_num(v, 0, 100, &n))
                o->reps = (int)n;
            else if (!strcmp(a, "--seed") && parse_num(v, 0, LLONG_MAX, &n))
                o->seed = (uint64_t)n;
            else if (!strcmp(a, "--threads") && parse_num(v, 1, 256, &n))
                o->threads = (int)n;
            else if (!strcmp(a, "--timeout") && parse_num(v, 1, 86400, &n))
                o->timeout_s = (int)n;
            else
                return usage_error("bad value '%s' (a number in range is needed)", v);
        } else if (a[0] == '-') {
            return usage_error("unknown option '%s'", a);
        } else if (!case_find(a)) {
            fprintf(stderr, "tc-bench: no case '%s'; the cases are:", a);
            for (int k = 0; k < bench_ncases; k++)
                fprintf(stderr, " %s", bench_cases[k].name);
            fprintf(stderr, "\n");
            return BENCH_USAGE;
        } else {
            o->names[o->nnames++] = a;
        }
    }
    return BENCH_OK;
}

/* --- children ------------------------------------------------------------------- */

static int run_as_child(const opts *o)
{
    child_opts co = {o->cases_dir, o->seed, o->quick, o->threads, o->child_out};
    if (!o->child_out)
        return usage_error("--child needs --child-out FILE");
    if (!strcmp(o->child, "ceiling"))
        return child_ceiling(&co);
    const bench_case *c = o->nnames == 1 ? case_find(o->names[0]) : NULL;
    if (!c)
        return usage_error("--child=%s needs one CASE", o->child);
    if (!strcmp(o->child, "case"))
        return child_case(&co, c);
    if (!strcmp(o->child, "cold") || !strcmp(o->child, "warm"))
        return child_compile_time(&co, c, !strcmp(o->child, "cold"));
    return usage_error("unknown child mode '%s'", o->child);
}

/* Our own executable, for the children (malloc'd). */
static char *self_path(void)
{
    for (size_t cap = 256; cap <= 65536; cap *= 2) {
        char *buf = malloc(cap);
        if (!buf)
            return NULL;
        ssize_t n = readlink("/proc/self/exe", buf, cap);
        if (n >= 0 && (size_t)n < cap) {
            buf[n] = 0;
            return buf;
        }
        free(buf);
        if (n < 0)
            return NULL;
    }
    return NULL;
}

typedef struct {
    const opts *o;
    char *exe;
    char *work;             /* the work directory */
    char *main_cache;       /* kernel cache of the case and ceiling children */
    int failures;
} parent;

/* Run one child; the JSON it wrote, or an error object saying how it
 * ended, is appended to j.  Returns its JSON text (malloc'd) or NULL. */
static char *child(parent *pa, json *j, const char *mode, const char *name, const char *cache)
{
    const opts *o = pa->o;
    char seed[32], threads[16], *mode_arg = msgf("--child=%s", mode);
    char *tag = msgf("%s-%s", mode, name ? name : "all");
    char *out = msgf("%s/%s.json", pa->work, tag), *log = msgf("%s/%s.log", pa->work, tag);
    char *env = msgf("TENSORC_CACHE_DIR=%s", cache);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
    snprintf(threads, sizeof threads, "%d", o->threads);
    char *argv[16];
    int n = 0;
    argv[n++] = pa->exe;
    argv[n++] = mode_arg;
    argv[n++] = "--cases";
    argv[n++] = (char *)o->cases_dir;
    argv[n++] = "--seed";
    argv[n++] = seed;
    argv[n++] = "--threads";
    argv[n++] = threads;
    argv[n++] = "--child-out";
    argv[n++] = out;
    if (o->quick)
        argv[n++] = "--quick";
    if (name)
        argv[n++] = (char *)name;
    argv[n] = NULL;
    char *envv[] = {env, NULL};

    spawn_result r;
    bool started = spawn_child(argv, envv, log, out, o->timeout_s, &r);
    char *text = NULL;
    if (started && r.json) {
        json_raw(j, r.json);
        text = r.json;
        r.json = NULL;
    } else {
        char *why = !started ? msgf("could not start: %s", r.log_tail ? r.log_tail : "")
                    : r.timed_out ? msgf("the child process was killed after the %d s time limit "
                                         "(--timeout)", o->timeout_s)
                    : r.signal ? msgf("the child process died of signal %d (%s)", r.signal,
                                      strsignal(r.signal))
                               : msgf("the child process exited with status %d without writing "
                                      "its results", r.status);
        json_obj(j);
        json_kstr(j, "status", "error");
        json_kstr(j, "stage", "child");
        json_kstr(j, "error", why);
        json_kstr(j, "log_tail", r.log_tail);
        json_knum(j, "wall_ms", r.wall_ms);
        json_end_obj(j);
        fprintf(stderr, "tc-bench: %s %s: %s\n", mode, name ? name : "", why);
        free(why);
    }
    spawn_result_free(&r);
    unlink(out);
    unlink(log);
    free(mode_arg);
    free(tag);
    free(out);
    free(log);
    free(env);
    return text;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Runs of one mode (cold or warm): the children's objects and the median
 * of the successful ones' total_ms. */
static double compile_runs(parent *pa, json *j, const bench_case *c, bool cold, char **dirs)
{
    const opts *o = pa->o;
    double *ms = calloc((size_t)o->reps + 1, sizeof *ms);
    int nok = 0;
    json_key(j, cold ? "cold" : "warm");
    json_obj(j);
    json_key(j, "runs");
    json_arr(j);
    for (int r = 0; r < o->reps; r++) {
        if (cold) { /* a directory that does not exist yet: an empty cache */
            free(dirs[r]);
            dirs[r] = msgf("%s/cache-%s-%d", pa->work, c->name, r);
            remove_tree(dirs[r]);
        }
        /* warm: the cache of the last cold run that worked */
        const char *dir = cold ? dirs[r] : dirs[o->reps];
        char *text = dir ? child(pa, j, cold ? "cold" : "warm", c->name, dir) : NULL;
        bool ok = false;
        if (!dir) {
            json_obj(j);
            json_kbool(j, "ok", false);
            json_kstr(j, "error", "no cold run succeeded, so there is no filled cache to start from");
            json_end_obj(j);
        }
        double t = json_find_num(text, "total_ms");
        if (text && json_find_bool(text, "ok", &ok) && ok && !isnan(t) && ms) {
            ms[nok++] = t;
            if (cold) {
                free(dirs[o->reps]);
                dirs[o->reps] = strdup(dirs[r]);
            }
        }
        free(text);
    }
    json_end_arr(j);
    double med = NAN;
    if (nok > 0) {
        qsort(ms, (size_t)nok, sizeof *ms, cmp_double);
        med = nok % 2 ? ms[nok / 2] : (ms[nok / 2 - 1] + ms[nok / 2]) / 2;
    }
    json_knum(j, "median_ms", med);
    json_kint(j, "ok_runs", nok);
    json_end_obj(j);
    free(ms);
    return med;
}

static void run_case(parent *pa, json *j, const bench_case *c)
{
    const opts *o = pa->o;
    fprintf(stderr, "tc-bench: %s ...\n", c->name);
    json_obj(j);
    json_kstr(j, "name", c->name);
    json_key(j, "result");
    char *text = child(pa, j, "case", c->name, pa->main_cache);
    char status[32] = "error";
    const char *s = text ? strstr(text, "\"status\": \"") : NULL;
    if (s)
        sscanf(s + 11, "%31[a-z_]", status);
    if (strcmp(status, "ok") != 0)
        pa->failures++;
    double us = json_find_num(text, "time_us"), gbps = json_find_num(text, "GBps");

    double cold = NAN, warm = NAN;
    if (o->reps > 0) {
        char **dirs = calloc((size_t)o->reps + 1, sizeof *dirs);
        if (dirs) {
            cold = compile_runs(pa, j, c, true, dirs);
            warm = compile_runs(pa, j, c, false, dirs);
            for (int r = 0; r <= o->reps; r++) {
                if (dirs[r])
                    remove_tree(dirs[r]);
                free(dirs[r]);
            }
            free(dirs);
        }
    }
    json_end_obj(j);
    fprintf(stderr, "tc-bench: %s: %s", c->name, status);
    if (!isnan(us))
        fprintf(stderr, ", %.2f us%s, %.3f TB/s", us, c->latency ? " per call" : "", gbps / 1e3);
    if (o->reps > 0)
        fprintf(stderr, "; cold %.1f ms, warm %.2f ms", cold, warm);
    fprintf(stderr, "\n");
    free(text);
}

/* ISO date and time, UTC. */
static void utc_now(char *date, size_t nd, char *when, size_t nw)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date, nd, "%Y-%m-%d", &tm);
    strftime(when, nw, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static bool emit(const opts *o, const json *j)
{
    const char *text = j->b.s ? j->b.s : "{}";
    if (o->out_path)
        return write_file(o->out_path, text);
    return puts(text) >= 0 && fflush(stdout) == 0;
}

int main(int argc, char **argv)
{
    opts o = {0};
    int rc = parse_opts(argc, argv, &o);
    if (rc != BENCH_OK || o.nnames < 0) {
        free(o.names);
        return rc;
    }
    if (o.child) {
        rc = run_as_child(&o);
        free(o.names);
        return rc;
    }
    if (o.self_test) {
        rc = self_test(o.cases_dir, o.threads);
        free(o.names);
        return rc;
    }
    if (o.list) {
        for (int i = 0; i < bench_ncases; i++)
            printf("%-20s %-18s %-20s %s%s\n", bench_cases[i].name, bench_cases[i].file,
                   bench_cases[i].kind == CASE_FOREACH ? bench_cases[i].set : bench_cases[i].shape,
                   bench_cases[i].latency ? "latency" : "throughput",
                   bench_cases[i].kind == CASE_FOREACH ? " (one tc_run_foreach per step)" : "");
        free(o.names);
        return BENCH_OK;
    }

    /* step 1: the cases */
    const bench_case **sel = calloc((size_t)bench_ncases + (size_t)o.nnames + 1, sizeof *sel);
    int nsel = 0;
    for (int i = 0; sel && i < bench_ncases && o.nnames == 0; i++)
        sel[nsel++] = &bench_cases[i];
    for (int i = 0; sel && i < o.nnames; i++)
        sel[nsel++] = case_find(o.names[i]);
    char date[16], when[32], host[256] = "";
    utc_now(date, sizeof date, when, sizeof when);
    gethostname(host, sizeof host - 1);

    json j = {0};
    json_obj(&j);
    json_kstr(&j, "tool", "tc-bench");
    json_kstr(&j, "tensorc_version", tc_version_string());
    json_kstr(&j, "date", date);
    json_kstr(&j, "time", when);
    json_kstr(&j, "host", host);
    json_kbool(&j, "quick", o.quick);
    json_kint(&j, "seed", (long long)o.seed);
    json_kint(&j, "threads", o.threads);
    json_kint(&j, "compile_reps", o.reps);

    /* step 2: the GPU */
    tc_device_info gpu;
    char *why = NULL;
    tc_ctx *dev = dev_open(&gpu, &why);
    if (!dev) {
        fprintf(stderr, "tc-bench: no GPU: %s\n(tc-bench times tensorc's kernels: it needs an NVIDIA "
                        "GPU and its driver; build anywhere, run with bench/run.sh on a GPU machine)\n",
                why);
        json_kstr(&j, "error", why);
        json_end_obj(&j);
        if (o.out_path)
            write_file(o.out_path, j.b.s ? j.b.s : "{}");
        free(why);
        free(j.b.s);
        free(sel);
        free(o.names);
        return BENCH_ENV;
    }
    json_kstr(&j, "device", gpu.name);
    json_kint(&j, "arch", gpu.arch);
    json_kint(&j, "sm_count", gpu.sm_count);
    tc_ctx_free(dev); /* the children open their own */

    /* step 3: the work directory */
    struct stat sb;
    char *cases_file = msgf("%s/gelu_chain.tc", o.cases_dir);
    if (stat(cases_file, &sb) != 0) {
        fprintf(stderr, "tc-bench: the case programs are not in '%s' (%s missing): pass --cases "
                        "DIR, the repository's bench/cases\n", o.cases_dir, cases_file);
        free(cases_file);
        free(j.b.s);
        free(sel);
        free(o.names);
        return BENCH_USAGE;
    }
    free(cases_file);
    const char *tmp = getenv("TMPDIR");
    parent pa = {&o, self_path(), msgf("%s/tc-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp"), NULL, 0};
    if (!pa.exe || !pa.work || !mkdtemp(pa.work)) {
        fprintf(stderr, "tc-bench: cannot make a work directory or find /proc/self/exe: %s\n",
                strerror(errno));
        free(pa.exe);
        free(pa.work);
        free(j.b.s);
        free(sel);
        free(o.names);
        return BENCH_ENV;
    }
    pa.main_cache = msgf("%s/cache-main", pa.work);
    json_kstr(&j, "cases_dir", o.cases_dir);

    /* step 4: the ceiling */
    json_key(&j, "ceiling");
    if (o.no_ceiling) {
        json_null(&j);
    } else {
        fprintf(stderr, "tc-bench: ceiling ...\n");
        char *text = child(&pa, &j, "ceiling", NULL, pa.main_cache);
        double c = json_find_num(text, "ceiling_GBps");
        fprintf(stderr, "tc-bench: ceiling %.3f TB/s\n", c / 1e3);
        free(text);
    }

    /* step 5: the cases */
    json_key(&j, "cases");
    json_arr(&j);
    for (int i = 0; i < nsel; i++)
        run_case(&pa, &j, sel[i]);
    json_end_arr(&j);
    json_kint(&j, "failed_cases", pa.failures);
    json_end_obj(&j);

    /* step 6 */
    rc = emit(&o, &j) ? (pa.failures ? BENCH_FAILED : BENCH_OK) : BENCH_ENV;
    fprintf(stderr, "tc-bench: %d of %d cases checked and timed%s%s\n", nsel - pa.failures, nsel,
            o.out_path ? "; results in " : "", o.out_path ? o.out_path : "");
    remove_tree(pa.work);
    free(pa.exe);
    free(pa.work);
    free(pa.main_cache);
    free(j.b.s);
    free(sel);
    free(o.names);
    return rc;
}
