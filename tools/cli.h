/* cli.h - what the files of the tensorc command-line driver share.
 *
 *   tensorc.c  main: subcommands, usage text, `compile`
 *   args.c     option scanning (--opt=V, --opt V, -o V), usage errors, "did you mean"
 *   help.c     the help texts and option tables (help.h)
 *   run.c      `run`: inputs, size binding, the reference interpreter, outputs
 *   run_groups.c  `run --groups`: one elementwise function over tensor groups
 *   fill.c     seeded random inputs (splitmix64)
 *   show.c     NumPy-style summaries of output tensors
 *   host.c     host tensors (a dtype's own bytes), dtypes, messages (host.h)
 *   npy.c      NumPy .npy files in and out (npy.h)
 */
#ifndef TC_CLI_H
#define TC_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "host.h"

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
 * appended to list as a tc_arg_dtype binding (room for one per argument); a letter given twice is an
 * error.  false with a usage error printed. */
bool opt_dtype(const char *arg, tc_arg *list, int *n);

/* The subcommand being run ("compile", "run", ...; NULL before one is known),
 * so usage errors can show its usage line. */
extern const char *cli_command;
/* Print "error: MESSAGE", then the usage line of cli_command and a pointer
 * to --help, to stderr; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An unknown option of cli_command: a usage error, with "did you mean"
 * when one of the command's options (help.c) is a slip away. */
int unknown_option(const char *opt);
/* The candidate closest to word (before any '='), if it is within a slip
 * (1 edit for words of 4 characters or fewer, else 2), else NULL. */
const char *cli_suggest(const char *word, const char *const *cands, size_t n);
/* Print "error: MESSAGE" to stderr; returns the given exit status. */
int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- run.c --- */
int cmd_run(int argc, char **argv);

/* What run.c hands run_groups.c: the options, one evaluation's state, and
 * the GPU helpers both drive. */

typedef struct {
    const char *name, *value;
} kv;

typedef struct {
    const char *file, *fn, *device;
    kv *inputs, *outputs;
    int ninputs, noutputs;
    tc_arg *dtypes;         /* --dtype: the entry's dtype variables (tc_arg_dtype) */
    int ndtypes;
    tc_arg *shapes;         /* --shape: tc_arg_size, names malloc'd */
    int nshapes, capshapes;
    int64_t *group_sizes;   /* --groups: one element count per group (NULL: not given) */
    int ngroups;
    bool grouped;           /* --groups, or an --input list (a value with a comma) */
    uint64_t seed;
    bool random;            /* --random: inputs not given are made up (else an error) */
    bool check, bench, verbose, fast_math, line_info;
    bool json;              /* --json (with --bench): stdout is the bench document alone */
    bool cuda;              /* step 2's answer */
    tc_ctx *ctx;            /* the context of the run */
    tc_device_info dev;     /* the GPU, when cuda */
    const char *no_gpu;     /* why there is none, for the note (malloc'd) */
} run_opts;

/* One evaluation: a plain run, or one group of a grouped run. */
typedef struct {
    const run_opts *o;
    tc_program *p;
    const tc_function_info *f; /* the entry, its dtype variables bound (--dtype, else f32) */
    htensor *args;            /* f->nparams */
    bool *given;              /* f->nparams: from --input */
    int64_t (*orig)[TC_MAX_DIMS + 1]; /* [*] inputs: original rank, then shape */
    htensor *outs;            /* f->noutputs */
    tc_shape *pshape, *oshape; /* every parameter's and output's shape, once bound (step 5) */
} run_state;

/* run_state's arrays for f (the shapes come with bind_inputs); false when
 * out of memory.  run_state_free frees what it holds. */
bool run_state_init(run_state *s, const run_opts *o, tc_program *p, const tc_function_info *f);
void run_state_free(run_state *s);

/* "f32[N, D]", "f32[*]" or "f32" for messages (static buffer). */
const char *param_type(const tc_value_info *v);
/* The context's last error, on stderr. */
void print_diag(tc_ctx *ctx);
/* The index of parameter `name` of f, or -1. */
int find_param(const tc_function_info *f, const char *name);
/* The parameter an inout output k writes back into, or -1. */
int inout_param(const tc_function_info *f, int k);
/* out_of[k]: the index in o->outputs of the --output naming output k, or
 * -1; EXIT_ERROR when one names no output. */
int output_slots(const run_opts *o, const tc_function_info *f, int *out_of);
/* tensorc doctor (doctor.c) */
int cmd_doctor(int argc, char **argv);
/* Check every --output path (run.c); *set gets them, --output i as index i. */
int check_output_files(const run_opts *o, tc_outset **set);
/* Step 4 for one --input (in->value one file or value) into s. */
int load_input(run_state *s, const kv *in);
/* Step 5: bind s's given tensors and the sizes shapes[0..n) (tc_arg_size):
 * s->pshape and s->oshape (tc_shapes). */
int bind_inputs(run_state *s, const tc_arg *shapes, int nshapes);
/* Before step 5: the inputs not given (tensors, and scalars without a
 * default) are an error naming them, unless --random asks for them.  Called
 * again with note after step 5 (once the run can go ahead): a note on
 * stderr lists the random ones.  EXIT_OK or EXIT_ERROR. */
int check_missing(run_state *s, bool note);
/* Step 6: make up the inputs not given: tensors from --seed stream `seed`,
 * scalars from their default or o->seed's stream. */
int fill_inputs(run_state *s, uint64_t seed);
/* Allocate output k with its bound shape. */
int alloc_output(run_state *s, int k);
/* Step 8's reshape of a [*] output back to its input's shape. */
void unflatten(run_state *s, int k);

/* One device buffer of a run. */
typedef struct {
    void *ptr;
    size_t bytes;
    DLTensor dl;
    int64_t shape[TC_MAX_DIMS];
} dev_tensor;

/* One evaluation's device side. */
typedef struct {
    run_state *s;
    tc_ctx *ctx;
    dev_tensor *params;     /* per param (tensors only) */
    dev_tensor *outs;       /* per output (not inout) */
    tc_arg *args;           /* tc_run's arguments naming them */
    int nargs;
} gpu_run;

/* A device status as an exit status (3 for no device, else 1), message printed. */
int gpu_fail(tc_status st, const char *msg);
/* g->params and g->outs calloc'd for s (g->args too); EXIT_ERROR when out of memory. */
int gpu_init(gpu_run *g, run_state *s);
/* The inputs uploaded, the outputs allocated and poisoned, g->args naming
 * them (then --dtype's bindings). */
int gpu_prepare(gpu_run *g);
/* s->outs from the device: each output's buffer, an inout one's parameter. */
int gpu_outputs(gpu_run *g);
void gpu_release(gpu_run *g);
/* The kernel cache's warning, and with --verbose where the kernels came from. */
void report_jit(const run_opts *o, const tc_function_info *f, tc_status st,
                const tc_run_info *info);
/* The reference interpreter (tc_run_cpu) on s's inputs into outs (allocated
 * here, f->noutputs of them); a message is printed on failure, after
 * `where` ("" or "group 3: "). */
int cpu_run(run_state *s, htensor *outs, const char *where);
/* --check: run the interpreter on s's inputs and compare s->outs; messages
 * start with `where` ("" or "group 3: "); *worst is the largest relative error. */
int check_run(run_state *s, const char *where, double *worst);
/* --bench: time `call` (one run with info's events) and print each of its
 * nsteps steps, with the bytes the run says each moves. */
typedef tc_status (*bench_call)(void *arg, tc_run_info *info);
int bench(gpu_run *g, const char *what, int nsteps, bench_call call, void *arg);

/* --- run_groups.c --- */

/* Steps 4-8 of `run` over tensor groups (o->grouped), for entry f. */
int run_groups(const run_opts *o, tc_program *p, const tc_function_info *f);

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
void fill_tensor(rng *r, htensor *t);
/* A random scalar: floats in (0, 1] (stored rounded), integers in [1, 10],
 * bools 50/50. */
double random_scalar(rng *r, DLDataType dt);

/* --- show.c --- */

/* "name: f32[2, 3]" then the values as NumPy prints them, with at most 3
 * items shown at each end of any dim when the tensor is large. */
void show_tensor(FILE *f, const char *name, const htensor *t);

#endif
