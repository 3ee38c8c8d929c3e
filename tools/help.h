/* help.h - the table that describes the command line (help.c): help texts,
 * usage lines, "did you mean", and at build time the man page and bash
 * completion (gendoc.c).  Needs only the public header, so the generator
 * links without the rest of the CLI. */
#ifndef TC_HELP_H
#define TC_HELP_H

#include <stdio.h>

#include "tensorc.h"

#define CLI_WHAT "a compiler from a small tensor language to fused CUDA kernels"

/* One option of a subcommand. */
typedef struct cli_opt {
    const char *name;       /* "--emit", "-o" */
    const char *arg;        /* its value's placeholder ("STAGE"), NULL for a flag */
    const char *values;     /* for completion: words separated by spaces, "@stages"
                             * (the --emit stages), "@file", or NULL (anything) */
} cli_opt;

typedef struct cli_cmd {
    const char *name;       /* "compile" */
    const char *summary;    /* one line, for the man page and completion */
    const char *synopsis;   /* the usage line(s), starting "tensorc NAME" */
    const char *body;       /* what it does: lines without indentation */
    const cli_opt *opts;    /* ends with a NULL name */
    const char *const *words;   /* the words it takes ("dir", "stats", ...), or NULL */
} cli_cmd;

extern const cli_cmd cli_cmds[];    /* ends with a NULL name */
extern const char cli_exit_text[];  /* the exit statuses */
extern const char cli_env_text[];   /* the environment variables */

/* The subcommand called name, or NULL. */
const cli_cmd *cli_find(const char *name);
/* The help of subcommand cmd (NULL, unknown or "help": the whole text). */
void cli_help(FILE *f, const char *cmd);

#endif
