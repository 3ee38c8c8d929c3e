/* tensorc.c - the command-line driver: `tensorc compile|run|explain|cache`.
 *
 * A thin layer over the library: every error in a program comes back from
 * tc_compile() already located and formatted ("file:line:col: error: ..."
 * with the source line and a caret) and is printed as it is.  The driver's
 * own job is options, files and exit statuses (interfaces.md):
 *   0 success; 1 an error in the program or its inputs; 2 a usage error;
 *   3 the environment (no GPU, no CUDA driver or NVRTC).
 */
#define TC_UNSTABLE_API /* the stage list, tc_program_image_ex, the kernel cache */
#include "tools_ext.h"
#include "help.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Whether the program's file defines any function. */
static bool has_functions(tc_program *p)
{
    size_t n = 0;
    const char *const *names;
    return tc_program_functions(p, &n, &names) == TC_OK && n > 0;
}

/* Write -o's file safely (tc_outset: a temporary renamed into place once
 * whole, a device written in place); 0 or EXIT_ERROR with a message. */
int cli_write_out(const char *path, const void *data, size_t len)
{
    tc_outset *s = tc_outset_new();
    if (!s)
        return fail(EXIT_ERROR, "out of memory");
    int i;
    bool ok = tc_outset_add(s, path, "-o", &i) == TC_OK && tc_outset_write(s, i, data, len) == TC_OK &&
              tc_outset_commit(s) == TC_OK;
    if (!ok)
        fputs(tc_outset_errmsg(s), stderr);
    tc_outset_free(s);
    return ok ? EXIT_OK : EXIT_ERROR;
}

/* Write text to path (or stdout); 0 or EXIT_ERROR with a message. */
static int write_text(const char *path, const char *text)
{
    if (!path) {
        fputs(text, stdout);
        return fflush(stdout) == 0 ? EXIT_OK : fail(EXIT_ERROR, "cannot write the output: %s",
                                                   strerror(errno));
    }
    return cli_write_out(path, text, strlen(text));
}

/* --emit=ptx|cubin: the unit's CUDA through NVRTC (and the kernel cache),
 * for --arch (default sm_90), every kernel in one compilation; the
 * context's options carry --fast-math and --lineinfo. */
static int compile_image(tc_ctx *ctx, tc_program *p, const char *fn, const tc_arg *dts, int ndts,
                         const char *emit, const char *arch, const char *out, bool verbose)
{
    int sm = arch ? (int)strtol(arch + 3, NULL, 10) : 90; /* range-checked in compile_with */
    bool cubin = strcmp(emit, "cubin") == 0;
    const char *warning;
    if (tc_ctx_cache_warning(ctx, &warning) != TC_OK)
        return fail(EXIT_ERROR, "out of memory");
    if (warning)
        fprintf(stderr, "tensorc: warning: %s\n", warning);
    const void *image;
    size_t len;
    tc_image_info info;
    tc_status st = tc_program_image_ex(p, fn, dts, (size_t)ndts, sm,
                                       cubin ? TC_IMAGE_CUBIN : TC_IMAGE_PTX, &image, &len, &info);
    int rc = EXIT_OK;
    if (st != TC_OK) {
        const char *msg = tc_errmsg(ctx);
        fprintf(stderr, "%s%s", msg && *msg ? msg : tc_status_str(st),
                msg && *msg && msg[strlen(msg) - 1] == '\n' ? "" : "\n");
        rc = st == TC_ERR_NO_DEVICE ? EXIT_ENV : st == TC_ERR_INVALID_ARG ? EXIT_USAGE : EXIT_ERROR;
    } else {
        if (verbose)
            fprintf(stderr, "tensorc: nvrtc %s for sm_%d (%s, %zu bytes): cache: %s\n", info.name,
                    sm, emit, len, info.jit_origin == 2 ? "miss" : "hit");
        if (out) {
            rc = cli_write_out(out, image, len);
        } else if (fwrite(image, 1, len, stdout) != len || fflush(stdout) != 0) {
            rc = fail(EXIT_ERROR, "cannot write the output: %s", strerror(errno));
        }
    }
    return rc;
}

/* cmd_compile, given room for the --dtype bindings. */
static int compile_with(int argc, char **argv, tc_arg *dts, int *ndts)
{
    const char *file = NULL, *fn = NULL, *emit = "cuda", *out = NULL, *arch = NULL;
    bool bad = false, verbose = false, dashdash = false;
    bool fast_math = false, line_info = false, json = false;
    for (int i = 0; i < argc && !bad; i++) {
        const char *a = argv[i], *v;
        if (dashdash || a[0] != '-' || a[1] == 0) {
            if (file)
                return usage_error("unexpected argument '%s' (FILE is '%s')", a, file);
            file = a;
        } else if (strcmp(a, "--") == 0) {
            dashdash = true;
        } else if (opt_value("--fn", argc, argv, &i, &v, &bad)) {
            fn = v;
        } else if (opt_value("--emit", argc, argv, &i, &v, &bad)) {
            emit = v;
        } else if (opt_value("--arch", argc, argv, &i, &v, &bad)) {
            arch = v;
        } else if (opt_value("-o", argc, argv, &i, &v, &bad)) {
            out = v;
        } else if (opt_flag("--verbose", argc, argv, &i, &bad)) {
            verbose = true;
        } else if (opt_flag("--json", argc, argv, &i, &bad)) {
            json = true;
        } else if (opt_flag("--fast-math", argc, argv, &i, &bad) ||
                   opt_flag("--lineinfo", argc, argv, &i, &bad)) {
            bool *flag = strcmp(a, "--fast-math") == 0 ? &fast_math : &line_info;
            if (*flag)
                return usage_error("%s is given twice", a);
            *flag = true;
        } else if (opt_value("--dtype", argc, argv, &i, &v, &bad)) {
            if (!bad && !opt_dtype(v, dts, ndts))
                return EXIT_USAGE;
        } else if (!bad) {
            return unknown_option(a);
        }
    }
    if (bad)
        return EXIT_USAGE;
    if (!file)
        return usage_error("'tensorc compile' needs a FILE");
    size_t nstages;
    const tc_stage_desc *stages = tc_stage_list(&nstages), *stage = NULL;
    for (size_t s = 0; s < nstages && !stage; s++)
        if (stages[s].emit && strcmp(stages[s].name, emit) == 0)
            stage = &stages[s];
    if (!stage) {
        char list[256] = "";
        const char *names[32];
        size_t n = 0;
        for (size_t s = 0; s < nstages; s++)
            if (stages[s].emit) {
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "",
                         stages[s].name);
                if (n < 32)
                    names[n++] = stages[s].name;
            }
        const char *near = cli_suggest(emit, names, n);
        if (near)
            return usage_error("unknown --emit stage '%s' (did you mean '%s'? stages: %s)", emit, near, list);
        return usage_error("unknown --emit stage '%s' (stages: %s)", emit, list);
    }
    if (json && strcmp(emit, "plan") != 0 && strcmp(emit, "explain") != 0)
        return usage_error("--json is for --emit=plan and --emit=explain (docs/json.md), not --emit=%s",
                           emit);
    if (arch) {
        const char *d = arch + 3;
        bool ok = strncmp(arch, "sm_", 3) == 0 && *d;
        for (; ok && *d; d++)
            ok = *d >= '0' && *d <= '9';
        if (!ok)
            return usage_error("--arch must look like sm_80 or sm_90 (arch-specific sm_90a is not "
                               "supported), not '%s'", arch);
        /* parsed strictly: atoi of sm_4294967386 wrapped to sm_90 */
        errno = 0;
        long sm = strtol(arch + 3, NULL, 10);
        if (errno || sm < 10 || sm > 1000)
            return usage_error("--arch=%s: no such architecture (the number after sm_ is major "
                               "and minor version, e.g. sm_80, sm_90)", arch);
    }
    /* -o checked before any work: a bad path fails now, not after NVRTC */
    if (out) {
        tc_outset *set = tc_outset_new();
        bool ok = set && tc_outset_add(set, out, "-o", NULL) == TC_OK;
        if (!ok)
            fputs(set ? tc_outset_errmsg(set) : "tensorc: error: out of memory\n", stderr);
        tc_outset_free(set);
        if (!ok)
            return EXIT_ERROR;
    }
    /* --emit=dot -o g.svg: graphviz draws it; without dot, say so now */
    const char *picture = strcmp(emit, "dot") == 0 ? dot_format(out) : NULL;
    if (picture && !dot_found())
        return fail(EXIT_ENV, "-o %s: drawing the graph needs graphviz's 'dot' program, which is not "
                    "on PATH (install graphviz, or write the graph's text with -o %.*s.dot)", out,
                    (int)(strlen(out) - strlen(picture) - 1), out);

    tc_ctx *ctx = NULL;
    tc_program *p = NULL;
    int rc = EXIT_OK;
    tc_options opts = TC_OPTIONS_INIT;
    opts.fast_math = fast_math;
    opts.line_info = line_info;
    if (tc_ctx_create_ex(&ctx, &opts) != TC_OK)
        return fail(EXIT_ERROR, "out of memory");
    if (tc_compile_file(ctx, file, &p) != TC_OK) {
        fputs(tc_errmsg(ctx), stderr);
        rc = EXIT_ERROR;
    }
    /* A file with no functions has nothing to compile: say so (an empty
     * output and exit 0 looked like success). */
    if (rc == EXIT_OK && !fn && !has_functions(p)) {
        fprintf(stderr, "%s: error: the file defines no functions: nothing to compile\n", file);
        rc = EXIT_ERROR;
    }
    /* With --dtype the entry (--fn, or the file's only function) is built
     * specialized, and its graph is the one printed. */
    const tc_function_info *f = NULL;
    if (rc == EXIT_OK && (fn || *ndts) &&
        tc_program_function_ex(p, fn, dts, (size_t)*ndts, &f) != TC_OK) {
        fputs(tc_errmsg(ctx), stderr);
        rc = EXIT_ERROR;
    }
    bool binary = stage->binary;
    const char *text;
    if (rc == EXIT_OK && binary) {
        rc = compile_image(ctx, p, fn, dts, *ndts, emit, arch, out, verbose);
    } else if (rc == EXIT_OK && json) {
        if (tc_program_dump_json(p, emit, fn, dts, (size_t)*ndts, &text) != TC_OK) {
            fputs(tc_errmsg(ctx), stderr);
            rc = EXIT_ERROR;
        } else {
            rc = write_text(out, text);
        }
    } else if (rc == EXIT_OK && *ndts && strcmp(emit, "ast") != 0) {
        if (tc_program_dump_ex(p, emit, fn, dts, (size_t)*ndts, &text) != TC_OK) {
            fputs(tc_errmsg(ctx), stderr);
            rc = EXIT_ERROR;
        } else {
            rc = picture ? dot_render(text, picture, out) : write_text(out, text);
        }
    } else if (rc == EXIT_OK) {
        if (tc_program_dump(p, emit, fn, &text) != TC_OK) {
            fputs(tc_errmsg(ctx), stderr);
            rc = EXIT_ERROR;
        } else {
            rc = picture ? dot_render(text, picture, out) : write_text(out, text);
        }
    }
    tc_program_free(p);
    tc_ctx_free(ctx);
    return rc;
}

/* tensorc compile FILE [--fn NAME] [--emit=STAGE] [-o OUT] [--arch=sm_XX] [--verbose]
 *                      [--dtype T=bf16]... */
static int cmd_compile(int argc, char **argv)
{
    tc_arg *dts = calloc((size_t)argc + 1, sizeof *dts);
    if (!dts)
        return fail(EXIT_ERROR, "out of memory");
    int ndts = 0;
    int rc = compile_with(argc, argv, dts, &ndts);
    free(dts);
    return rc;
}

/* tensorc explain FILE [--fn NAME]: every fusion decision with its reason. */
static int cmd_explain(int argc, char **argv)
{
    const char *file = NULL, *fn = NULL;
    bool bad = false, json = false;
    for (int i = 0; i < argc && !bad; i++) {
        const char *a = argv[i], *v;
        if (a[0] != '-' || a[1] == 0) {
            if (file)
                return usage_error("unexpected argument '%s' (FILE is '%s')", a, file);
            file = a;
        } else if (opt_value("--fn", argc, argv, &i, &v, &bad)) {
            fn = v;
        } else if (opt_flag("--json", argc, argv, &i, &bad)) {
            json = true;
        } else if (!bad) {
            return unknown_option(a);
        }
    }
    if (bad)
        return EXIT_USAGE;
    if (!file)
        return usage_error("'tensorc explain' needs a FILE");
    tc_ctx *ctx = NULL;
    tc_program *p = NULL;
    const char *text = NULL;
    int rc = EXIT_OK;
    if (tc_ctx_create(&ctx) != TC_OK)
        return fail(EXIT_ERROR, "out of memory");
    if (tc_compile_file(ctx, file, &p) != TC_OK ||
        (json ? tc_program_dump_json(p, "explain", fn, NULL, 0, &text)
              : tc_program_dump(p, "explain", fn, &text)) != TC_OK) {
        fputs(tc_errmsg(ctx), stderr);
        rc = EXIT_ERROR;
    } else if (!fn && !has_functions(p)) {
        fprintf(stderr, "%s: error: the file defines no functions: nothing to explain\n", file);
        rc = EXIT_ERROR;
    } else {
        fputs(text, stdout);
    }
    tc_program_free(p);
    tc_ctx_free(ctx);
    return rc;
}

/* cache dir | stats | clear.  A cache that cannot be used is not an error
 * here either: the warning goes to stderr and the answers are empty. */
static int cmd_cache(int argc, char **argv)
{
    bool json = argc == 2 && strcmp(argv[0], "stats") == 0 && strcmp(argv[1], "--json") == 0;
    if (json)
        argc = 1;
    if (argc < 1 || (strcmp(argv[0], "dir") != 0 && strcmp(argv[0], "stats") != 0 &&
                     strcmp(argv[0], "clear") != 0)) {
        static const char *const words[] = {"dir", "stats", "clear"};
        const char *near = argc < 1 ? NULL : cli_suggest(argv[0], words, 3);
        if (near)
            return usage_error("'tensorc cache' needs one of: dir, stats, clear (did you mean '%s'?)", near);
        return usage_error("'tensorc cache' needs one of: dir, stats, clear");
    }
    if (argc > 1)
        return usage_error("'tensorc cache %s' takes no arguments, found '%s'", argv[0], argv[1]);
    tc_cache *c = tc_cache_open(NULL);
    if (!c)
        return fail(EXIT_ERROR, "out of memory");
    if (tc_cache_warning(c))
        fprintf(stderr, "warning: %s\n", tc_cache_warning(c));
    int rc = EXIT_OK;
    if (!tc_cache_path(c)) {
        rc = fail(EXIT_ENV, "no kernel cache directory: set TENSORC_CACHE_DIR");
    } else if (strcmp(argv[0], "dir") == 0) {
        printf("%s\n", tc_cache_path(c));
    } else if (strcmp(argv[0], "stats") == 0) {
        uint64_t n, bytes, max;
        tc_cache_stats(c, &n, &bytes, &max);
        char *doc = json ? tc_cache_stats_json(tc_cache_path(c), n, bytes, max) : NULL;
        if (json && doc)
            fputs(doc, stdout);
        else if (json)
            rc = fail(EXIT_ERROR, "out of memory");
        else
            printf("dir: %s\nentries: %llu\nbytes: %llu\nmax bytes: %llu\n", tc_cache_path(c),
                   (unsigned long long)n, (unsigned long long)bytes, (unsigned long long)max);
        free(doc);
    } else {
        size_t n = tc_cache_clear(c);
        printf("removed %zu %s\n", n, n == 1 ? "entry" : "entries");
    }
    tc_cache_close(c);
    if (rc == EXIT_OK && fflush(stdout) != 0)
        rc = fail(EXIT_ERROR, "cannot write the output: %s", strerror(errno));
    return rc;
}

static bool wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return false;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    }
    return false;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("no command given");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        /* tensorc help run: that command's help */
        if (strcmp(cmd, "help") == 0 && argc > 2 && !cli_find(argv[2])) {
            cli_command = "help";
            return usage_error("no command '%s' to help with", argv[2]);
        }
        cli_help(stdout, strcmp(cmd, "help") == 0 && argc > 2 ? argv[2] : NULL);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("tensorc %s\n", tc_version_string());
        return EXIT_OK;
    }
    if (!cli_find(cmd) || strcmp(cmd, "help") == 0) {
        const char *names[16];
        size_t n = 0;
        for (const cli_cmd *c = cli_cmds; c->name && n < 14; c++)
            names[n++] = c->name;
        names[n++] = "--help";
        names[n++] = "--version";
        const char *near = cli_suggest(cmd, names, n);
        const char *what = cmd[0] == '-' ? "option" : "command";
        if (near)
            return usage_error("unknown %s '%s' (did you mean '%s'?)", what, cmd, near);
        return usage_error("unknown %s '%s'", what, cmd);
    }
    cli_command = cmd;
    if (wants_help(argc - 2, argv + 2)) {
        cli_help(stdout, cmd);
        return EXIT_OK;
    }
    if (strcmp(cmd, "compile") == 0)
        return cmd_compile(argc - 2, argv + 2);
    if (strcmp(cmd, "doctor") == 0) /* doctor.c */
        return cmd_doctor(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "explain") == 0)
        return cmd_explain(argc - 2, argv + 2);
    return cmd_cache(argc - 2, argv + 2);
}
