/* args.c - option scanning and usage errors for the tensorc CLI.
 *
 * Hand-rolled rather than getopt_long: every subcommand takes a handful of
 * options, both "--emit=graph" and "--emit graph" must work, and errors must
 * name the subcommand's own usage line.  Options and the FILE operand may
 * come in any order; "--" ends the options.
 */
#include "cli.h"
#include "help.h"

#include <stdarg.h>
#include <string.h>

const char *cli_command;

/* "error: MESSAGE" on one line of stderr. */
static void error_line(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static void error_line(const char *fmt, va_list ap)
{
    fputs("error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int usage_error(const char *fmt, ...)
{
    const char *cmd = cli_command;
    va_list ap;
    va_start(ap, fmt);
    error_line(fmt, ap);
    va_end(ap);
    const cli_cmd *c = cli_find(cmd);
    if (c && strcmp(c->name, "help") != 0)
        fprintf(stderr, "usage: %s\nRun 'tensorc %s --help' for more.\n", c->synopsis, c->name);
    else
        fprintf(stderr, "usage: %s\nRun 'tensorc --help' for more.\n",
                c ? c->synopsis : "tensorc compile|run|explain|cache|doctor ... | --help | --version");
    return EXIT_USAGE;
}

/* Edit distance (Levenshtein) of a and b[0..bn), capped: at most 64
 * characters of each are compared. */
static int distance(const char *a, const char *b, size_t bn)
{
    int row[65];
    size_t an = strlen(a);
    if (an > 64)
        an = 64;
    if (bn > 64)
        bn = 64;
    for (size_t j = 0; j <= bn; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= an; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= bn; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[bn];
}

const char *cli_suggest(const char *word, const char *const *cands, size_t n)
{
    size_t wn = strcspn(word, "="); /* --emitt=cuda is compared as --emitt */
    const char *best = NULL;
    int bestd = 0;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i])
            continue;
        int d = distance(cands[i], word, wn);
        /* close enough to be a slip: one edit in a short word, two in a longer one */
        int limit = strlen(cands[i]) <= 4 ? 1 : 2;
        if (d <= limit && (!best || d < bestd)) {
            best = cands[i];
            bestd = d;
        }
    }
    return best;
}

int unknown_option(const char *opt)
{
    const cli_cmd *c = cli_find(cli_command);
    const char *names[64];
    size_t n = 0;
    for (const cli_opt *o = c ? c->opts : NULL; o && o->name && n < 63; o++)
        names[n++] = o->name;
    names[n++] = "--help";
    const char *s = cli_suggest(opt, names, n);
    if (s)
        return usage_error("unknown option '%s' for 'tensorc %s' (did you mean '%s'?)", opt,
                           cli_command ? cli_command : "", s);
    return usage_error("unknown option '%s' for 'tensorc %s'", opt, cli_command ? cli_command : "");
}

int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_line(fmt, ap);
    va_end(ap);
    return status;
}

bool opt_value(const char *name, int argc, char **argv, int *i, const char **val, bool *bad)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return false;
    bool is_long = name[1] == '-';
    if (a[n] == '=' && is_long) {
        *val = a + n + 1;
        return true;
    }
    if (a[n] && !is_long) { /* -oOUT */
        *val = a + n;
        return true;
    }
    if (a[n])
        return false; /* --fnord is not --fn */
    if (*i + 1 >= argc) {
        usage_error("option '%s' needs a value", name);
        *bad = true;
        return true;
    }
    *val = argv[++*i];
    return true;
}

bool opt_flag(const char *name, int argc, char **argv, int *i, bool *bad)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return false;
    if (a[n] == '=') {
        usage_error("option '%s' takes no value", name);
        *bad = true;
        return true;
    }
    return a[n] == 0;
}

bool opt_dtype(const char *arg, tc_arg *list, int *n)
{
    /* The names live here, so a binding points at no argument and owns
     * nothing. */
    static const char letters[26][2] = {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M",
                                        "N", "O", "P", "Q", "R", "S", "T", "U", "V", "W", "X", "Y", "Z"};
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        usage_error("--dtype expects LETTER=DTYPE (T=bf16), got '%s'", arg);
        return false;
    }
    int len = (int)(eq - arg);
    if (len != 1 || arg[0] < 'A' || arg[0] > 'Z') {
        usage_error("--dtype %.*s=...: a dtype variable is one capital letter", len, arg);
        return false;
    }
    DLDataType dt;
    if (!tc_dtype_parse(eq + 1, &dt)) {
        usage_error("--dtype %s: not a dtype (f32 f16 bf16 f64 i32 i64 bool)", arg);
        return false;
    }
    for (int i = 0; i < *n; i++)
        if (list[i].name[0] == arg[0]) {
            usage_error("--dtype %c is given twice", arg[0]);
            return false;
        }
    list[(*n)++] = tc_arg_dtype(letters[arg[0] - 'A'], tc_dtype_name(dt)); /* static names */
    return true;
}
