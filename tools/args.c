/* args.c - option scanning and usage errors for the tensorc CLI.
 *
 * Hand-rolled rather than getopt_long: every subcommand takes a handful of
 * options, both "--emit=graph" and "--emit graph" must work, and errors must
 * name the subcommand's own usage line.  Options and the FILE operand may
 * come in any order; "--" ends the options.
 */
#include "cli.h"

#include <stdarg.h>
#include <string.h>

/* Usage lines, one per subcommand (tensorc.c prints the full text). */
static const struct { const char *cmd, *line; } usages[] = {
    {"compile", "tensorc compile FILE [--fn NAME] [--emit=STAGE] [-o OUT] [--arch=sm_XX] [--verbose]\n"
                "                       [--fast-math] [--lineinfo] [--dtype T=bf16]... [--json]"},
    {"run", "tensorc run FILE [--fn NAME] [--shape N=64,D=128] [--input NAME=PATH.npy|NAME=VALUE]...\n"
            "                   [--output NAME=PATH.npy]... [--groups SIZES] [--device=cpu|cuda] [--seed S]\n"
            "                   [--dtype T=bf16]... [--check] [--bench [--json]] [--verbose] [--fast-math]\n"
            "                   [--lineinfo]"},
    {"explain", "tensorc explain FILE [--fn NAME] [--json]"},
    {"cache", "tensorc cache dir | stats [--json] | clear"},
    {"doctor", "tensorc doctor"},
};

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
    const char *line = "tensorc compile|run|explain|cache ... | --help | --version";
    for (size_t i = 0; cmd && i < sizeof usages / sizeof usages[0]; i++)
        if (strcmp(cmd, usages[i].cmd) == 0)
            line = usages[i].line;
    fprintf(stderr, "usage: %s\nRun 'tensorc --help' for more.\n", line);
    return EXIT_USAGE;
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

bool opt_dtype(const char *arg, tc_dtypebind *list, int *n)
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
    tc_dtype dt = dtype_parse(eq + 1);
    if (dt == TC_DT_NONE) {
        usage_error("--dtype %s: not a dtype (f32 f16 bf16 f64 i32 i64 bool)", arg);
        return false;
    }
    for (int i = 0; i < *n; i++)
        if (list[i].name[0] == arg[0]) {
            usage_error("--dtype %c is given twice", arg[0]);
            return false;
        }
    list[*n].name = letters[arg[0] - 'A'];
    list[*n].dtype = dt;
    ++*n;
    return true;
}
