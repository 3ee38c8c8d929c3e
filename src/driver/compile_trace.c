/* compile_trace.c - the debugging aids of every compile (compile_trace.h).
 *
 * Read from the environment when each compile starts:
 *   TENSORC_DUMP_DIR=DIR  write every text stage (stages.def's SF_TEXT: ast,
 *                         graph, lowered, fused, sched, cuda, plan, explain)
 *                         to DIR/NAME.EXT as it completes, so a failing
 *                         compile leaves what came before (NAME: the file's
 *                         name without .tc; a later compile of one function
 *                         or a variant adds .FN, .idx64, .wide), like
 *                         Inductor's debug directory.
 *   TENSORC_DEBUG=LIST    on stderr, a comma-separated list: 1 (or any
 *                         stage name) a line per compile with the time of
 *                         every stage that ran, and the runtime's nvrtc line;
 *                         a stage's name also prints that stage; 4 prints
 *                         the graph, 5 the graph and the AST (as before
 *                         there were names); "all" every stage.
 */
#include "compile_trace.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "outfile.h"

double tc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void tc_drv_set_trace(tc_ctx *ctx, tc_trace_fn *fn, void *user)
{
    ctx->trace = fn;
    ctx->trace_user = user;
}

/* --- TENSORC_DEBUG ---------------------------------------------------------------------- */

/* One item of the list: a level or a stage's name; false if neither. */
static bool debug_item(const char *s, size_t n, tc_debug *g)
{
    char word[32];
    if (n == 0 || n >= sizeof word)
        return false;
    memcpy(word, s, n);
    word[n] = 0;
    char *end;
    errno = 0;
    long v = strtol(word, &end, 10);
    if (end != word && !*end) {
        if (errno || v < 0 || v > 5)
            return false;
        g->timing |= v >= 1;
        if (v >= 4)
            g->print |= 1u << STAGE_GRAPH;
        if (v >= 5)
            g->print |= 1u << STAGE_AST;
        return true;
    }
    if (strcmp(word, "all") == 0) {
        for (int st = 0; st < STAGE_COUNT; st++)
            if (tc_stages[st].flags & SF_TEXT)
                g->print |= 1u << st;
        g->timing = true;
        return true;
    }
    int st = tc_stage_find(word);
    if (st < 0 || !(tc_stages[st].flags & SF_TEXT))
        return false;
    g->print |= 1u << st;
    g->timing = true;
    return true;
}

tc_debug tc_debug_get(void)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    tc_debug g = {false, 0};
    const char *s = getenv("TENSORC_DEBUG");
    if (!s || !*s)
        return g;
    for (const char *p = s;;) {
        size_t n = strcspn(p, ",");
        if (!debug_item(p, n, &g)) {
            if (!atomic_flag_test_and_set(&warned)) {
                fprintf(stderr, "tensorc: warning: TENSORC_DEBUG='%s' is not an integer from 0 to 5 "
                        "or a list of stages (", s);
                for (int st = 0; st < STAGE_COUNT; st++)
                    if (tc_stages[st].flags & SF_TEXT)
                        fprintf(stderr, "%s, ", tc_stages[st].name);
                fputs("all): ignored (taken as 0)\n", stderr);
            }
            return (tc_debug){false, 0};
        }
        if (!p[n])
            return g;
        p += n + 1;
    }
}

void tc_debug_runtime(tc_stage stage, const char *name, double ms, const char *how)
{
    if (tc_debug_get().timing)
        fprintf(stderr, "tensorc: %s %s: %.2f ms (%s)\n", tc_stages[stage].name, name, ms, how);
}

/* --- TENSORC_DUMP_DIR -------------------------------------------------------------------- */

/* mkdir -p; errors show up when the file is written. */
static void make_dirs(const char *dir)
{
    char *p = strdup(dir);
    if (!p)
        return;
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            mkdir(p, 0777);
            *s = '/';
        }
    mkdir(p, 0777);
    free(p);
}

/* $TENSORC_DUMP_DIR, created if missing; NULL when unset, empty, or not a
 * directory that can be made (then one warning per process, rather than one
 * per file that cannot be written). */
static const char *dump_dir(void)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    const char *dir = getenv("TENSORC_DUMP_DIR");
    if (!dir || !*dir)
        return NULL;
    make_dirs(dir);
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return dir;
    if (!atomic_flag_test_and_set(&warned))
        fprintf(stderr, "tensorc: warning: TENSORC_DUMP_DIR='%s' is not a directory and cannot be "
                "made one: no dumps are written\n", dir);
    return NULL;
}

/* Anything odd in a file name replaced, so it is a safe one. */
static char *safe_name(char *s)
{
    for (char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-' || *c == '.'))
            *c = '_';
    return s;
}

/* NAME for the dump files: the source's base name without ".tc", then the
 * unit's function and variant unless this is tc_compile's own unit. */
static const char *dump_stem(const tc_trace *t)
{
    tc_arena *a = t->p->arena;
    const char *name = t->p->src->name;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    size_t n = strlen(base);
    if (n > 3 && strcmp(base + n - 3, ".tc") == 0)
        n -= 3;
    tc_buf b;
    buf_init(&b, a);
    buf_puts(&b, n ? arena_strndup(a, base, n) : "input");
    const tc_graph *g = t->p->graph;
    bool file = g && t->fns == (const gfn *const *)g->fns;
    if (!file && t->n == 1)
        buf_printf(&b, ".%s", t->fns[0]->name);
    if (t->variant & TC_VAR_IDX64)
        buf_puts(&b, ".idx64");
    if (t->variant & TC_VAR_WIDE)
        buf_puts(&b, ".wide");
    if (t->variant & TC_VAR_SMALL)
        buf_puts(&b, ".small");
    return safe_name(arena_strdup(a, buf_str(&b)));
}

/* Write one stage's text to the dump directory.  A failure is a warning:
 * dumps are a debugging aid, never a reason to fail. */
static void dump_stage(const tc_trace *t, tc_stage s, const char *text)
{
    const char *path = arena_printf(t->p->arena, "%s/%s.%s", t->dir, dump_stem(t), tc_stages[s].ext);
    /* outfile.h: a private temporary renamed into place, never through a link planted there */
    tc_diag d;
    diag_init(&d);
    if (outfile_write(path, "TENSORC_DUMP_DIR", text, strlen(text), &d) != TC_OK)
        fprintf(stderr, "tensorc: warning: %s\n", d.brief);
    diag_release(&d);
}

/* --- the trace --------------------------------------------------------------------------- */

void tc_trace_begin(tc_trace *t, tc_program *p, bool program)
{
    memset(t, 0, sizeof *t);
    t->p = p;
    t->dbg = tc_debug_get();
    t->dir = dump_dir();
    t->program = program;
}

void tc_trace_unit(tc_trace *t, const gfn *const *fns, int n, unsigned variant)
{
    t->fns = fns;
    t->n = n;
    t->variant = variant;
    t->unit = NULL;
}

void tc_trace_stage(tc_trace *t, tc_stage s, double t0)
{
    double ms = tc_now_ms() - t0;
    t->ms[s] += ms;
    t->ran |= 1u << s;
    tc_program *p = t->p;
    bool print = t->dbg.print >> s & 1u;
    bool dump = t->dir && (tc_stages[s].flags & SF_TEXT);
    if (print || dump) {
        tc_buf b;
        buf_init(&b, p->arena);
        tc_drv_print_built(&b, p, s, t->fns, t->n, t->variant, t->unit);
        if (dump)
            dump_stage(t, s, buf_str(&b));
        if (print)
            fprintf(stderr, "tensorc: %s of %s:\n%s", tc_stages[s].name, p->src->name, buf_str(&b));
    }
    if (p->ctx->trace)
        p->ctx->trace(p->ctx->trace_user, p, s, t->fns, t->n, t->variant, ms);
}

void tc_trace_end(tc_trace *t)
{
    if (!t->dbg.timing)
        return;
    tc_program *p = t->p;
    tc_buf b;
    buf_init(&b, p->arena);
    int nodes = 0;
    for (int i = 0; i < t->n; i++)
        nodes += t->fns[i]->nnodes;
    buf_printf(&b, "tensorc: compiled %s", p->src->name);
    bool file = p->graph && t->fns == (const gfn *const *)p->graph->fns;
    if (!t->program)
        buf_printf(&b, " (%s%s%s%s)", file ? "every function" : t->fns[0]->name,
                   t->variant & TC_VAR_IDX64 ? ", 64-bit indices" : "",
                   t->variant & TC_VAR_WIDE ? ", wide foreach table" : "",
                   t->variant & TC_VAR_SMALL ? ", foreach table in device memory" : "");
    buf_printf(&b, ": %d functions, %d graph nodes;", t->n, nodes);
    int k = 0;
    for (int s = 0; s < STAGE_COUNT; s++)
        if ((t->ran >> s & 1u) && !(tc_stages[s].flags & SF_VIEW))
            buf_printf(&b, "%s %s %.2f ms", k++ ? "," : "", tc_stages[s].name, t->ms[s]);
    buf_printf(&b, "; arena %zu KiB\n", arena_bytes(p->arena) / 1024);
    fputs(buf_str(&b), stderr);
}
