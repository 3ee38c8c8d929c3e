/* cli.h - what the files of the tensorc command-line driver share.
 *
 *   tensorc.c  main: subcommands, usage text, `compile`
 *   args.c     option scanning (--opt=V, --opt V, -o V) and usage errors
 *   run.c      `run`: inputs, size binding, the reference interpreter, outputs
 *   fill.c     seeded random inputs (splitmix64)
 *   show.c     NumPy-style summaries of output tensors
 */
#ifndef TC_CLI_H
#define TC_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "graph/graph.h"
#include "ref/ref.h"

/* Exit statuses (interfaces.md). */
enum {
    EXIT_OK = 0,
    EXIT_ERROR = 1,  /* an error in the program or its inputs (a diagnostic is printed) */
    EXIT_USAGE = 2,  /* a usage error */
    EXIT_ENV = 3,    /* the environment: no GPU, no CUDA runtime */
};

/* --- args.c --- */

/* Scanning argv[*i]: if it is the option `name` (a long "--fn" or a short
 * "-o"), store its value (from "--fn=V", "--fn V", "-oV" or "-o V",
 * consuming the next argument as needed) and return true.  A missing value
 * is reported as a usage error and *bad set. */
bool opt_value(const char *name, int argc, char **argv, int *i, const char **val, bool *bad);
/* argv[*i] is the flag `name` (no value; "--flag=x" is a usage error). */
bool opt_flag(const char *name, int argc, char **argv, int *i, bool *bad);

/* The value of --dtype (arg: "T=bf16"): one capital letter and a dtype name,
 * appended to list (room for one per argument); a letter given twice is an
 * error.  false with a usage error printed. */
bool opt_dtype(const char *arg, tc_dtypebind *list, int *n);

/* The subcommand being run ("compile", "run", ...; NULL before one is known),
 * so usage errors can show its usage line. */
extern const char *cli_command;
/* Print "error: MESSAGE", then the usage line of cli_command and a pointer
 * to --help, to stderr; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "error: MESSAGE" to stderr; returns the given exit status. */
int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- run.c --- */
int cmd_run(int argc, char **argv);

/* --- fill.c --- */

/* A splitmix64 stream (Steele, Lea and Flood 2014): tiny, fast, and every
 * seed gives a full-period, well-mixed sequence. */
typedef struct { uint64_t s; } rng;

/* The stream for one parameter: seed and name hashed together, so adding or
 * reordering inputs leaves every other parameter's values unchanged. */
rng rng_for(uint64_t seed, const char *name);
uint64_t rng_next(rng *r);
/* Fill t (allocated) with random values for its dtype: floats uniform in
 * [-1, 1), integers uniform in [-10, 10), bools true half the time. */
void fill_tensor(rng *r, ref_tensor *t);
/* A random scalar: floats in (0, 1], integers in [1, 10], bools 50/50. */
double random_scalar(rng *r, tc_dtype dt);

/* --- show.c --- */

/* "name: f32[2, 3]" then the values as NumPy prints them, with at most 3
 * items shown at each end of any dim when the tensor is large. */
void show_tensor(FILE *f, const char *name, const ref_tensor *t);

#endif
