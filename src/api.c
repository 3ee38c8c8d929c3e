/* api.c - the public API (tensorc.h) and the compilation driver.
 *
 * tc_compile() is a straight line of passes, in the manner of QBE's main.c:
 *
 *     ast_parse        the user's source          -> AST     (--emit=ast)
 *     ast_parse        each embedded prelude file -> ASTs
 *     graph_build      names, dtypes, shapes; calls inlined -> op graph (--emit=graph)
 *     graph_verify     the graph's invariants, after every build
 *
 * and later stages (lower, fuse, schedule, codegen) will append to it.
 *
 * Passes report errors with diag_error, which longjmps back here: every pass
 * runs inside diag_protect(), a protected call that catches the unwind and returns
 * the status (Lua's luaD_rawrunprotected).  Everything a compilation makes
 * lives in the program's arena, so an error anywhere frees it all at once
 * and nothing leaks.  The error text itself lives in the context, which
 * outlives the program.
 *
 * Debugging aids, read from the environment on each compilation:
 *   TENSORC_DUMP_DIR=DIR  write DIR/NAME.ast and DIR/NAME.graph for every
 *                         compilation (NAME: the file's name without .tc),
 *                         like Inductor's debug directory.
 *   TENSORC_DEBUG=N       1: one line per compilation with the time of each
 *                         pass; 4: also the op graph; 5: also the AST
 *                         (on stderr).
 */
#include "api_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "outfile.h"
#include "pipeline.h"
#include "prelude.h"
#include "rt.h"

unsigned tc_version_number(void) { return TC_VERSION_NUMBER; }
const char *tc_version_string(void) { return TC_VERSION_STRING; }

const char *tc_status_str(tc_status s)
{
    static const char *const names[TC_STATUS_COUNT] = {
        [TC_OK] = "TC_OK",
        [TC_ERR_SYNTAX] = "TC_ERR_SYNTAX",
        [TC_ERR_COMPILE] = "TC_ERR_COMPILE",
        [TC_ERR_LIMIT] = "TC_ERR_LIMIT",
        [TC_ERR_INVALID_ARG] = "TC_ERR_INVALID_ARG",
        [TC_ERR_NOT_FOUND] = "TC_ERR_NOT_FOUND",
        [TC_ERR_UNSUPPORTED] = "TC_ERR_UNSUPPORTED",
        [TC_ERR_IO] = "TC_ERR_IO",
        [TC_ERR_NOMEM] = "TC_ERR_NOMEM",
        [TC_ERR_NO_DEVICE] = "TC_ERR_NO_DEVICE",
        [TC_ERR_INTERNAL] = "TC_ERR_INTERNAL",
    };
    return ((unsigned)s < TC_STATUS_COUNT) ? names[s] : "TC_ERR_UNKNOWN_STATUS";
}

/* --- contexts and errors ---------------------------------------------------- */

tc_status tc_ctx_create(tc_ctx **ctx)
{
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    *ctx = calloc(1, sizeof **ctx);
    if (!*ctx)
        return TC_ERR_NOMEM;
    diag_init(&(*ctx)->diag);
    return TC_OK;
}

void tc_ctx_free(tc_ctx *ctx)
{
    if (!ctx)
        return;
    rt_free(ctx->rt);   /* the GPU side, if a tc_run opened it */
    diag_release(&ctx->diag);
    free(ctx->err_file);
    free(ctx);
}

void api_begin(tc_ctx *ctx)
{
    diag_clear(&ctx->diag);
    ctx->diag.ncalls = 0;
    free(ctx->err_file);
    ctx->err_file = NULL;
    ctx->err_line = ctx->err_col = 0;
}

tc_status api_fail(tc_ctx *ctx, tc_status st)
{
    tc_diag *d = &ctx->diag;
    if (!d->msg) /* a failure with no message would leave the user guessing */
        diag_set(d, st, (tc_loc){0}, "%s", tc_status_str(st));
    d->status = st;
    free(ctx->err_file);
    ctx->err_file = NULL;
    if (d->loc.src && d->loc.src->name)
        ctx->err_file = strdup(d->loc.src->name);
    ctx->err_line = d->loc.src ? d->loc.line : 0;
    ctx->err_col = d->loc.src ? d->loc.col : 0;
    d->loc.src = NULL; /* it may point into an arena about to be freed */
    d->ncalls = 0;
    return st;
}

const char *tc_errmsg(const tc_ctx *ctx)
{
    return (ctx && ctx->diag.msg) ? ctx->diag.msg : "";
}

int tc_error_loc(const tc_ctx *ctx, const char **file, int *line, int *col)
{
    bool have = ctx && ctx->err_file;
    if (file)
        *file = have ? ctx->err_file : NULL;
    if (line)
        *line = have ? ctx->err_line : 0;
    if (col)
        *col = have ? ctx->err_col : 0;
    return have && ctx->err_line > 0;
}


/* --- debugging aids ------------------------------------------------------------ */

static void make_dirs(const char *dir);

int api_env_int(const char *name, int lo, int hi, int def, atomic_flag *warned)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end != s && !*end && errno == 0 && v >= lo && v <= hi)
        return (int)v;
    if (!atomic_flag_test_and_set(warned))
        fprintf(stderr, "tensorc: warning: %s='%s' is not an integer from %d to %d: ignored "
                "(taken as %d)\n", name, s, lo, hi, def);
    return def;
}

static int debug_level(void)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    return api_env_int("TENSORC_DEBUG", 0, 5, 0, &warned);
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

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

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

/* NAME for the dump files: the source's base name without ".tc", with
 * anything odd replaced so it is a safe file name. */
static const char *dump_stem(tc_arena *a, const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    size_t n = strlen(base);
    if (n > 3 && strcmp(base + n - 3, ".tc") == 0)
        n -= 3;
    char *s = arena_strndup(a, base, n);
    for (char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-' || *c == '.'))
            *c = '_';
    return *s ? s : "input";
}

/* Write one stage's text to $TENSORC_DUMP_DIR/NAME.EXT, if asked for.  A
 * failure is a warning: dumps are a debugging aid, never a reason to fail. */
static void dump_stage(tc_program *p, const char *ext, const char *text)
{
    const char *dir = dump_dir();
    if (!dir)
        return;
    const char *path = arena_printf(p->arena, "%s/%s.%s", dir, dump_stem(p->arena, p->src->name), ext);
    /* outfile.h: a private temporary renamed into place, never through a link planted there */
    tc_diag d;
    diag_init(&d);
    if (outfile_write(path, "TENSORC_DUMP_DIR", text, strlen(text), &d) != TC_OK)
        fprintf(stderr, "tensorc: warning: %s\n", d.brief);
    diag_release(&d);
}

/* --- the dumps ------------------------------------------------------------------ */

static void print_ast_fn(tc_buf *b, const ast_program *prog, const ast_fn *fn)
{
    ast_program one = *prog;
    one.fns = (ast_fn *)fn;
    one.nfns = 1;
    ast_print(b, &one);
}

static void print_graphs(tc_buf *b, const tc_graph *g)
{
    for (int i = 0; i < g->nfns; i++) {
        if (i)
            buf_putc(b, '\n');
        graph_print(b, g->fns[i]);
    }
}

/* --- compiling ------------------------------------------------------------------ */

typedef struct {
    tc_program *p;
    const char *text;
    size_t len;
    const char *filename;
} compile_job;

static tc_source *make_source(tc_arena *a, const char *name, const char *text, size_t len)
{
    tc_source *s = ARENA_NEW(a, tc_source);
    s->name = arena_strdup(a, name);
    s->text = arena_strndup(a, text, len);
    s->len = len;
    return s;
}

/* The standard library, parsed afresh for each compilation (it is small, and
 * this keeps programs independent of one another). */
static const ast_program **parse_prelude(tc_arena *a, tc_diag *d, int *n)
{
    const ast_program **asts = ARENA_ARRAY(a, const ast_program *, tc_prelude_count + 1);
    for (int i = 0; i < tc_prelude_count; i++) {
        const tc_prelude_file *pf = &tc_prelude_files[i];
        const char *name = arena_printf(a, "<prelude>/%s", pf->name);
        asts[i] = ast_parse(make_source(a, name, pf->text, strlen(pf->text)), a, d);
    }
    *n = tc_prelude_count;
    return asts;
}

static void compile_body(void *arg)
{
    compile_job *j = arg;
    tc_program *p = j->p;
    tc_diag *d = &p->ctx->diag;
    int debug = debug_level();
    bool dumps = dump_dir() != NULL;
    double t0 = now_ms();

    p->src = make_source(p->arena, j->filename, j->text, j->len);
    p->ast = ast_parse(p->src, p->arena, d);
    double t1 = now_ms();
    if (dumps || debug >= 5) {
        tc_buf b;
        buf_init(&b, p->arena);
        ast_print(&b, p->ast);
        dump_stage(p, "ast", buf_str(&b));
        if (debug >= 5)
            fprintf(stderr, "tensorc: ast of %s:\n%s", p->src->name, buf_str(&b));
    }

    p->prelude = parse_prelude(p->arena, d, &p->nprelude);
    double t2 = now_ms();

    p->graph = graph_build(p->ast, p->prelude, p->nprelude, NULL, p->arena, d);
    for (int i = 0; i < p->graph->nfns; i++)
        graph_verify(p->graph->fns[i], d);
    double t3 = now_ms();
    if (dumps || debug >= 4) {
        tc_buf b;
        buf_init(&b, p->arena);
        print_graphs(&b, p->graph);
        dump_stage(p, "graph", buf_str(&b));
        if (debug >= 4)
            fprintf(stderr, "tensorc: graph of %s:\n%s", p->src->name, buf_str(&b));
    }

    if (debug >= 1) {
        int nodes = 0;
        for (int i = 0; i < p->graph->nfns; i++)
            nodes += p->graph->fns[i]->nnodes;
        fprintf(stderr, "tensorc: compiled %s: %d functions, %d graph nodes; parse %.2f ms, "
                "prelude %.2f ms, graph %.2f ms; arena %zu KiB\n",
                p->src->name, p->graph->nfns, nodes, t1 - t0, t2 - t1, t3 - t2,
                arena_bytes(p->arena) / 1024);
    }
}

tc_status tc_compile(tc_ctx *ctx, const char *src, size_t len, const char *filename,
                     tc_program **prog)
{
    if (prog)
        *prog = NULL;
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    api_begin(ctx);
    tc_diag *d = &ctx->diag;
    if (!prog || (!src && len))
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "tc_compile: %s is NULL", prog ? "src" : "prog"));
    if (!filename)
        filename = "<string>";
    if (len > AST_MAX_SOURCE) {
        tc_source whole = {filename, NULL, 0};
        return api_fail(ctx, diag_set(d, TC_ERR_LIMIT, (tc_loc){&whole, 0, 0},
                                      "the program is %zu bytes; tensorc accepts at most %d MiB",
                                      len, AST_MAX_SOURCE >> 20));
    }

    tc_program *p = calloc(1, sizeof *p);
    if (p)
        p->arena = arena_new(d);
    if (!p || !p->arena) {
        free(p);
        return api_fail(ctx, diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory"));
    }
    p->ctx = ctx;
    compile_job job = {p, src ? src : "", len, filename};
    tc_status st = diag_protect(d, compile_body, &job);
    if (st != TC_OK) {
        api_fail(ctx, st);
        tc_program_free(p);
        return st;
    }
    *prog = p;
    return TC_OK;
}

tc_status tc_compile_file(tc_ctx *ctx, const char *path, tc_program **prog)
{
    if (prog)
        *prog = NULL;
    if (!ctx)
        return TC_ERR_INVALID_ARG;
    api_begin(ctx);
    tc_diag *d = &ctx->diag;
    if (!path || !prog)
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "tc_compile_file: %s is NULL", path ? "prog" : "path"));
    FILE *f = fopen(path, "rb");
    if (!f)
        return api_fail(ctx, diag_set(d, TC_ERR_IO, (tc_loc){0}, "cannot read '%s': %s", path,
                                      strerror(errno)));
    /* Read at most one byte past the limit: enough to know it is too big. */
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    int err = 0;
    while (text) {
        if (len == cap) {
            if (cap > AST_MAX_SOURCE)
                break;
            char *t = realloc(text, cap * 2);
            if (!t) {
                free(text);
                text = NULL;
                break;
            }
            text = t;
            cap *= 2;
        }
        size_t n = fread(text + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f))
                err = errno ? errno : EIO;
            break;
        }
    }
    fclose(f);
    if (!text)
        return api_fail(ctx, diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory reading '%s'", path));
    if (err) {
        free(text);
        return api_fail(ctx, diag_set(d, TC_ERR_IO, (tc_loc){0}, "cannot read '%s': %s", path,
                                      strerror(err)));
    }
    tc_status st = tc_compile(ctx, text, len, path, prog);
    free(text);
    return st;
}

void tc_program_free(tc_program *prog)
{
    if (!prog)
        return;
    arena_free(prog->arena);
    arena_free(prog->run_scratch);
    free(prog);
}

/* --- entry functions -------------------------------------------------------------- */

static const ast_fn *find_ast_fn(const ast_program *prog, const char *name)
{
    for (int i = 0; i < prog->nfns; i++)
        if (strcmp(prog->fns[i].name, name) == 0)
            return &prog->fns[i];
    return NULL;
}

/* "a, b, c": the user's functions, for messages. */
static const char *fn_list(tc_program *p)
{
    tc_buf b;
    buf_init(&b, p->arena);
    for (int i = 0; i < p->ast->nfns; i++)
        buf_printf(&b, "%s%s", i ? ", " : "", p->ast->fns[i].name);
    return buf_str(&b);
}

typedef struct {
    tc_program *p;
    const char *fn;
    const tc_dtypebind *dts;
    int ndts;
    const gfn *out;
} entry_job;

/* Whether specialization e is fn with bindings dts (in any order). */
static bool same_bindings(const tc_extra_graph *e, const char *fn, const tc_dtypebind *dts, int n)
{
    if (!e->fn || e->ndts != n || strcmp(e->fn, fn) != 0)
        return false;
    for (int i = 0; i < n; i++) {
        bool found = false;
        for (int k = 0; k < n && !found; k++)
            found = dts[i].name && e->dts[k].name && strcmp(dts[i].name, e->dts[k].name) == 0 &&
                    dts[i].dtype == e->dts[k].dtype;
        if (!found)
            return false;
    }
    return true;
}

/* Builds are kept: plain ones (p->graph, then p->extra by name) and
 * specializations with dtype bindings (p->extra, by name and bindings), so a
 * tc_run that binds T = bf16 on every call builds once. */
static void entry_body(void *arg)
{
    entry_job *j = arg;
    tc_program *p = j->p;
    tc_diag *d = &p->ctx->diag;
    if (!j->ndts) {
        if ((j->out = graph_find(p->graph, j->fn)))
            return;
        for (tc_extra_graph *e = p->extra; e; e = e->next)
            if (!e->ndts && (j->out = graph_find(e->graph, j->fn)))
                return;
    } else if (j->ndts <= 26) {
        for (tc_extra_graph *e = p->extra; e; e = e->next)
            if (same_bindings(e, j->fn, j->dts, j->ndts) && (j->out = graph_find(e->graph, j->fn)))
                return;
    }
    bool known = find_ast_fn(p->ast, j->fn) != NULL;
    for (int i = 0; i < p->nprelude && !known; i++)
        known = find_ast_fn(p->prelude[i], j->fn) != NULL;
    if (!known) {
        tc_loc whole = {p->src, 0, 0}; /* the file, no line */
        if (p->ast->nfns == 0)
            diag_error(d, TC_ERR_NOT_FOUND, whole,
                       "no function '%s' here or in the prelude (the file defines no functions)",
                       j->fn);
        diag_error(d, TC_ERR_NOT_FOUND, whole,
                   "no function '%s' here or in the prelude (functions: %s)", j->fn, fn_list(p));
    }
    tc_extra_graph *e = ARENA_NEW(p->arena, tc_extra_graph);
    e->graph = graph_build_ex(p->ast, p->prelude, p->nprelude, j->fn, j->dts, j->ndts, p->arena, d);
    for (int i = 0; i < e->graph->nfns; i++)
        graph_verify(e->graph->fns[i], d);
    if (j->ndts <= 26) {
        e->fn = arena_strdup(p->arena, j->fn);
        for (int i = 0; i < j->ndts; i++)
            e->dts[i] = (tc_dtypebind){arena_strdup(p->arena, j->dts[i].name), j->dts[i].dtype};
        e->ndts = j->ndts;
        e->next = p->extra;
        p->extra = e;
    }
    j->out = graph_find(e->graph, j->fn);
    if (!j->out)
        diag_error(d, TC_ERR_INTERNAL, (tc_loc){0}, "graph_build did not build '%s'", j->fn);
}

/* A whole-file stage compiles every function as an entry point: a generic
 * one that did not build as one (tc_graph.unbuilt) is built again here for
 * its located error. */
static void report_unbuilt(tc_program *p)
{
    if (p->graph->nunbuilt == 0)
        return;
    entry_job e = {p, p->graph->unbuilt[0], NULL, 0, NULL};
    entry_body(&e);
    diag_error(&p->ctx->diag, TC_ERR_INTERNAL, (tc_loc){0},
               "'%s' did not build as an entry point with the whole file, but did alone",
               p->graph->unbuilt[0]);
}

tc_status api_entry_args(tc_program *p, const char *fn, const tc_arg *args, size_t nargs,
                         const gfn **out)
{
    const ast_fn *af = fn ? find_ast_fn(p->ast, fn) : NULL;
    for (int i = 0; i < p->nprelude && fn && !af; i++)
        af = find_ast_fn(p->prelude[i], fn);
    tc_dtypebind dts[26];
    int n = 0;
    for (int i = 0; af && i < af->nparams; i++) {
        const char *v = af->params[i].type.dtype_var;
        if (!v || !af->params[i].type.is_tensor)
            continue;
        bool bound = false;
        for (int k = 0; k < n && !bound; k++)
            bound = strcmp(dts[k].name, v) == 0;
        /* a tc_arg_dtype binding first (api_call_entry has checked it) */
        for (size_t k = 0; k < nargs && !bound && args && n < 26; k++)
            if (args[k].kind == TC_ARG_DTYPE && args[k].name && strcmp(args[k].name, v) == 0) {
                dts[n++] = (tc_dtypebind){v, dtype_parse(args[k].v.dtype)};
                bound = true;
            }
        for (size_t k = 0; k < nargs && !bound && args; k++) {
            const tc_arg *a = &args[k];
            if (!a->name || strcmp(a->name, af->params[i].name) != 0)
                continue;
            const DLTensor *t = a->kind == TC_ARG_TENSOR ? a->v.tensor
                                : a->kind == TC_ARG_TENSORS && a->v.tensors ? a->v.tensors[0]
                                                                             : NULL;
            tc_dtype dt = t ? api_from_dl(t->dtype) : TC_DT_NONE;
            /* a dtype tensorc has no name for is left to the argument checks */
            if (dt != TC_DT_NONE && n < 26) {
                dts[n++] = (tc_dtypebind){v, dt};
                bound = true;
            }
        }
    }
    /* all f32: the plain build (the one whole-file runs share) */
    bool plain = true;
    for (int k = 0; k < n; k++)
        plain = plain && dts[k].dtype == TC_F32;
    return api_entry_ex(p, fn, dts, plain ? 0 : n, out);
}

tc_status api_entry(tc_program *p, const char *fn, const gfn **out)
{
    return api_entry_ex(p, fn, NULL, 0, out);
}

tc_status api_entry_ex(tc_program *p, const char *fn, const tc_dtypebind *dts, int ndts,
                       const gfn **out)
{
    *out = NULL;
    api_begin(p->ctx);
    tc_diag *d = &p->ctx->diag;
    tc_loc whole = {p->src, 0, 0};
    if (!fn && p->ast->nfns == 0)
        return api_fail(p->ctx, diag_set(d, TC_ERR_NOT_FOUND, whole, "the file defines no functions"));
    if (!fn && p->ast->nfns > 1)
        return api_fail(p->ctx, diag_set(d, TC_ERR_INVALID_ARG, whole,
                                         "the file defines %d functions (%s): choose one",
                                         p->ast->nfns, fn_list(p)));
    entry_job j = {p, fn ? fn : p->ast->fns[0].name, dts, ndts, NULL};
    tc_status st = diag_protect(d, entry_body, &j);
    if (st != TC_OK)
        return api_fail(p->ctx, st);
    *out = j.out;
    return TC_OK;
}

/* --- tc_program_dump ---------------------------------------------------------------- */

typedef struct {
    tc_program *p;
    const char *stage, *fn;
    const char *out;
} dump_job;

static void dump_body(void *arg)
{
    dump_job *j = arg;
    tc_program *p = j->p;
    tc_diag *d = &p->ctx->diag;
    tc_buf b;
    buf_init(&b, p->arena);
    if (strcmp(j->stage, "ast") == 0) {
        if (!j->fn) {
            ast_print(&b, p->ast);
        } else {
            const ast_fn *f = find_ast_fn(p->ast, j->fn);
            const ast_program *owner = p->ast;
            for (int i = 0; i < p->nprelude && !f; i++)
                if ((f = find_ast_fn(p->prelude[i], j->fn)))
                    owner = p->prelude[i];
            if (!f) {
                diag_error(d, TC_ERR_NOT_FOUND, (tc_loc){p->src, 0, 0},
                           "no function '%s' here or in the prelude (functions: %s)", j->fn,
                           fn_list(p));
            }
            print_ast_fn(&b, owner, f);
        }
    } else {
        const gfn *one = NULL;
        if (j->fn) {
            entry_job e = {p, j->fn, NULL, 0, NULL};
            entry_body(&e);
            one = e.out;
        } else {
            report_unbuilt(p);
        }
        int nf = one ? 1 : p->graph->nfns;
        for (int i = 0; i < nf; i++) {
            const gfn *g = one ? one : p->graph->fns[i];
            if (i)
                buf_putc(&b, '\n');
            if (strcmp(j->stage, "graph") == 0) {
                graph_print(&b, g);
                continue;
            }
            if (strcmp(j->stage, "cuda") == 0 && !one) {
                if (i == 0)
                    pipe_print_unit(&b, pipe_file_unit(p, false), (const gfn *const *)p->graph->fns,
                                    p->graph->nfns);
                break;
            }
            pipe_fn *pf = pipe_get(p, g, NULL);
            pipe_print(&b, p, pf, j->stage);
        }
    }
    j->out = buf_str(&b);
}

tc_status tc_program_dump(tc_program *prog, const char *stage, const char *fn, const char **out)
{
    if (out)
        *out = NULL;
    if (!prog)
        return TC_ERR_INVALID_ARG;
    tc_ctx *ctx = prog->ctx;
    api_begin(ctx);
    tc_diag *d = &ctx->diag;
    if (!stage || !out)
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "tc_program_dump: %s is NULL", stage ? "out" : "stage"));
    if (!pipe_stage_known(stage)) {
        if (pipe_stage_valid(stage))
                return api_fail(ctx, diag_set(d, TC_ERR_UNSUPPORTED, (tc_loc){0},
                                              "stage '%s' is binary: tensorc compile --emit=%s "
                                              "gives it (tc_program_dump gives the text stages)",
                                              stage, stage));
        return api_fail(ctx, diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                                      "unknown stage '%s' (stages: ast, graph, lowered, fused, "
                                      "sched, cuda, explain)", stage));
    }
    dump_job j = {prog, stage, fn, NULL};
    tc_status st = diag_protect(d, dump_body, &j);
    if (st != TC_OK)
        return api_fail(ctx, st);
    *out = j.out;
    return TC_OK;
}

typedef struct {
    tc_program *p;
    const gfn *f;
    const char *stage;
    const char *out;
} fdump_job;

static void fdump_body(void *arg)
{
    fdump_job *j = arg;
    tc_buf b;
    buf_init(&b, j->p->arena);
    if (strcmp(j->stage, "graph") == 0)
        graph_print(&b, j->f);
    else
        pipe_print(&b, j->p, pipe_get(j->p, j->f, NULL), j->stage);
    j->out = buf_str(&b);
}

tc_status api_dump(tc_program *p, const gfn *f, const char *stage, const char **out)
{
    api_begin(p->ctx);
    fdump_job j = {p, f, stage, NULL};
    tc_status st = diag_protect(&p->ctx->diag, fdump_body, &j);
    if (st != TC_OK)
        return api_fail(p->ctx, st);
    *out = j.out;
    return TC_OK;
}

typedef struct {
    tc_program *p;
    const gfn *f;
    bool idx64, wide;
    const struct cg_unit *unit;
    const struct tc_plan *plan;
} unit_job;

static void unit_body(void *arg)
{
    unit_job *j = arg;
    if (j->wide) {
        cg_unit *u = pipe_wide_unit(j->p, pipe_get(j->p, j->f, NULL), j->idx64);
        j->unit = u;
        j->plan = u->plans[0];
        return;
    }
    j->unit = pipe_unit(j->p, j->f, j->idx64, &j->plan);
}

tc_status api_unit(tc_program *p, const gfn *f, bool idx64, const struct cg_unit **unit,
                   const struct tc_plan **plan)
{
    api_begin(p->ctx);
    unit_job j = {p, f, idx64, false, NULL, NULL};
    tc_status st = diag_protect(&p->ctx->diag, unit_body, &j);
    if (st != TC_OK)
        return api_fail(p->ctx, st);
    *unit = j.unit;
    *plan = j.plan;
    return TC_OK;
}

tc_status api_unit_wide(tc_program *p, const gfn *f, bool idx64, const struct cg_unit **unit,
                        const struct tc_plan **plan)
{
    api_begin(p->ctx);
    unit_job j = {p, f, idx64, true, NULL, NULL};
    tc_status st = diag_protect(&p->ctx->diag, unit_body, &j);
    if (st != TC_OK)
        return api_fail(p->ctx, st);
    *unit = j.unit;
    *plan = j.plan;
    return TC_OK;
}

typedef struct {
    tc_program *p;
    const gfn *f;
    const char *out;
} src_job;

static void src_body(void *arg)
{
    src_job *j = arg;
    if (j->f) /* the function's own unit, as --emit=cuda --fn shows it */
        j->out = pipe_own_unit(j->p, pipe_get(j->p, j->f, NULL), false)->source;
    else {
        report_unbuilt(j->p);
        j->out = pipe_file_unit(j->p, false)->source;
    }
}

tc_status api_cuda_source(tc_program *p, const gfn *f, const char **src)
{
    api_begin(p->ctx);
    src_job j = {p, f, NULL};
    tc_status st = diag_protect(&p->ctx->diag, src_body, &j);
    if (st != TC_OK)
        return api_fail(p->ctx, st);
    *src = j.out;
    return TC_OK;
}

/* --- binding and the reference interpreter, for the CLI and tests -------------------- */

typedef struct {
    tc_program *p;
    const gfn *f;
    const bind_arg *args;
    const tc_dimbind *extra;
    int nextra;
    tc_dimbind **out;
    int *nout;
    tc_status st;
} bind_job;

static void bind_body(void *arg)
{
    bind_job *j = arg;
    j->st = graph_bind(j->f, j->args, j->extra, j->nextra, j->p->arena, &j->p->ctx->diag,
                       j->out, j->nout);
}

tc_status api_bind(tc_program *p, const gfn *f, const bind_arg *args, const tc_dimbind *extra,
                   int nextra, tc_dimbind **out, int *nout)
{
    api_begin(p->ctx);
    bind_job j = {p, f, args, extra, nextra, out, nout, TC_OK};
    tc_status st = diag_protect(&p->ctx->diag, bind_body, &j);
    if (st == TC_OK)
        st = j.st;
    return st == TC_OK ? TC_OK : api_fail(p->ctx, st);
}

typedef struct {
    tc_program *p;
    const gfn *f;
    const tc_dimbind *b;
    int nb;
    const ref_tensor *args;
    ref_tensor *outs;
    tc_status st;
} run_job;

static void run_body(void *arg)
{
    run_job *j = arg;
    j->st = ref_run(j->f, j->b, j->nb, j->args, j->outs, &j->p->ctx->diag);
}

tc_status api_ref_run(tc_program *p, const gfn *f, const tc_dimbind *b, int nb,
                      const ref_tensor *args, ref_tensor *outs)
{
    api_begin(p->ctx);
    run_job j = {p, f, b, nb, args, outs, TC_OK};
    tc_status st = diag_protect(&p->ctx->diag, run_body, &j);
    if (st == TC_OK)
        st = j.st;
    return st == TC_OK ? TC_OK : api_fail(p->ctx, st);
}
