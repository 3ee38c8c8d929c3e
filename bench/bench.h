/* bench.h - tc-bench, the benchmark driver of issue 5: what its files share.
 *
 * One process per measurement.  The parent (bench.c) probes the GPU, then
 * runs itself as a child for each piece of work and collects what each
 * child writes:
 *
 *   ceiling.c   --child=ceiling  the bandwidth ceiling: a device-to-device
 *                                copy and tensorc's own full sum, checked
 *   case_run.c  --child=case     one suite case: inputs, first run, check
 *                                against the reference, then timing
 *   compile_time.c --child=cold|warm  source to first correct result in a
 *                                fresh process, empty or filled kernel cache
 *
 * Why children: a kernel fault is sticky for a CUDA context, and a crash
 * is a crash; in its own process one broken case is one error in the
 * JSON, and the run goes on with the next.  spawn.c runs them.
 *
 * The pieces under them:
 *   cases.c     the case table (suite.md), shapes by symbol
 *   inst.c      one set of arguments for a function: random host inputs,
 *               device buffers, tc_args (host.c: encoding and filling)
 *   check.c     every output against the reference interpreter, in
 *               parallel chunks of independent rows
 *   timing.c    event-timed and back-to-back wall-clock timing
 *   json.c      a small JSON writer (and the growing string under it)
 *   selftest.c  --self-test: the check machinery without a GPU
 */
#ifndef TC_BENCH_H
#define TC_BENCH_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TC_UNSTABLE_API /* tc_run_ex, the device calls: before anything includes tensorc.h */
#include "tensorc.h"

/* Exit statuses: as the tensorc CLI's. */
enum { BENCH_OK = 0, BENCH_FAILED = 1, BENCH_USAGE = 2, BENCH_ENV = 3 };

/* --- the cases (cases.c) ---------------------------------------------------- */

/* CASE_FOREACH: an elementwise function over a set of tensor groups, one
 * tc_run_foreach per step (an optimizer over a model's parameters). */
typedef enum { CASE_PLAIN, CASE_FOREACH } case_kind;

typedef struct bench_case {
    const char *name;       /* "softmax_16384x4096": also the peers' name */
    const char *file;       /* the program, in the cases directory */
    const char *fn;
    const char *shape;      /* "N=16384,D=4096" (CASE_FOREACH: one group's, for cold/warm) */
    const char *small;      /* the shape for cold/warm and --quick */
    const char *split;      /* a symbol along which rows are independent (check.c), or NULL */
    bool latency;           /* latency-bound: per-call wall time of 2000 calls */
    case_kind kind;
    const char *scalars;    /* "lr=1e-3,step=1": values of scalar parameters, or NULL */
    const char *nonneg;     /* "v": parameters drawn from [0, 1) rather than [-1, 1) */
    const char *note;       /* shown beside the figure, or NULL */
    /* CASE_FOREACH: the groups (foreach_sizes): "transformer:24" (suite.md's
     * set, 24 layers of 10 tensors) or "4096*2000" (2000 groups of 4096
     * elements); and for --quick */
    const char *set, *set_quick;
    /* the f32 tolerance where 1e-5 is below the f32 rounding of the case's
     * own math (0: 1e-5); the reason in its note */
    double tol_f32;
} bench_case;

extern const bench_case bench_cases[];
extern const int bench_ncases;
const bench_case *case_find(const char *name);

/* The [*] sizes of a CASE_FOREACH case's groups (c->set, or c->set_quick):
 * *n entries, malloc'd.  NULL when out of memory or the set is malformed. */
int64_t *foreach_sizes(const bench_case *c, bool quick, int *n);

/* --- host side: filling, encoding, threads (host.c) ---------------------------- */

/* Run fn(arg, worker, item) for item in [0, n) on up to nthreads threads
 * (worker in [0, nthreads)); items are handed out in order.  Returns false
 * if no thread could be started (then nothing ran). */
typedef void (*par_fn)(void *arg, int worker, int64_t item);
bool par_for(int64_t n, int nthreads, par_fn fn, void *arg);
/* Threads to use: TC_BENCH_THREADS, else the online CPUs, at most 32. */
int bench_threads(void);

/* A tensor on the host: its elements as device buffers hold them (dt_size
 * bytes each, row-major), what both tc_run (after the upload) and the
 * reference (tc_run_cpu) read.  A scalar: rank 0, one element. */
typedef struct htensor {
    DLDataType dtype;
    int rank;
    int64_t shape[TC_MAX_DIMS];
    unsigned char *data;    /* malloc'd */
} htensor;

int64_t ht_numel(const htensor *t);
/* Allocate t's data (numel * dt_size bytes, at least 1); false if out of memory. */
bool ht_alloc(htensor *t, DLDataType dt, int rank, const int64_t *shape);
/* A host DLTensor viewing t. */
DLTensor ht_dl(htensor *t);

int dt_size(DLDataType t);          /* bytes per element */
bool dt_is_float(DLDataType t);     /* f16, bf16, f32, f64 */
bool dt_is_int(DLDataType t);       /* i32, i64 (not bool) */
const char *dt_name(DLDataType t);  /* "f32" */

/* Fill t (allocated) with seeded random values of its dtype: uniform in
 * [-1, 1), or [0, 1) when nonneg.  Deterministic in (seed, tag) whatever
 * the number of threads. */
void fill_random(htensor *t, uint64_t seed, const char *tag, bool nonneg, int nthreads);
uint64_t hash_str(uint64_t h, const char *s);

double now_ms(void);        /* CLOCK_MONOTONIC in milliseconds */

/* --- one set of arguments (inst.c) ---------------------------------------------- */

typedef struct bench_buf {
    void *ptr;              /* device memory (tc_device_alloc); NULL: none */
    size_t bytes;
    DLTensor dl;
    int64_t shape[TC_MAX_DIMS];
} bench_buf;

/* The parameter an output is written back into (an inout one), or -1. */
int out_param(const tc_function_info *f, int k);

typedef struct bench_inst {
    tc_arg *sizes;          /* the case's sizes (tc_arg_size; names malloc'd) */
    int nsizes;
    tc_shape *out_shapes;   /* f->noutputs */
    htensor *args;          /* f->nparams host values: the reference's inputs */
    bench_buf *params;      /* f->nparams: device copies of the tensor ones */
    bench_buf *outs;        /* f->noutputs: device outputs (inout ones: none) */
    tc_arg *targs;          /* the tc_run arguments */
    int ntargs;
    unsigned char **got;    /* f->noutputs: downloaded results (inst_download) */
} bench_inst;

/* Take the sizes (shape: "N=64,D=128") and the shapes they give (errors
 * from ctx, p's context), make every argument: tensors
 * random, scalars from c->scalars or their default.  Errors into *err
 * (malloc'd).  seed_tag names this instance in the random streams. */
bool inst_make(tc_ctx *ctx, tc_program *p, const tc_function_info *f, const bench_case *c,
               const char *shape,
               uint64_t seed, const char *seed_tag, int nthreads, bench_inst *in, char **err);
/* Device buffers: inputs uploaded, outputs allocated and poisoned with 0xff
 * (an element no kernel writes reads as NaN). */
bool inst_upload(tc_ctx *dev, const tc_function_info *f, bench_inst *in, int nthreads, char **err);
/* Every output's bytes to the host (in->got), after a sync. */
bool inst_download(tc_ctx *dev, const tc_function_info *f, bench_inst *in, char **err);
int64_t inst_bytes_min(const tc_function_info *f, const bench_inst *in);
void inst_free_host(const tc_function_info *f, bench_inst *in);
void inst_free(tc_ctx *dev, const tc_function_info *f, bench_inst *in);
/* in's sizes and output shapes (inst_free frees them too). */
void inst_free_shapes(bench_inst *in);
/* The tc_run argument of a scalar parameter whose value t holds. */
tc_arg scalar_arg(const char *name, const htensor *t);
/* "x: f32[16384, 4096], eps: f32 = 1e-05": the arguments, for the JSON (malloc'd). */
char *inst_describe(const tc_function_info *f, const bench_inst *in);

/* --- the check (check.c) ---------------------------------------------------------- */

/* One copy of the program per worker thread: contexts are single-threaded. */
typedef struct check_pool {
    int n;
    tc_ctx **ctx;
    tc_program **p;
    const tc_function_info **f;
    double tol_f32;         /* the case's tol_f32 (0: 1e-5), set by the caller */
    /* keep (set by the caller: the self-test): each chunk's reference
     * outputs are kept for the next check_inst of the same instance, whose
     * args must be unchanged (only got may differ); freed by pool_close */
    bool keep;
    const void *kept_in;    /* the instance they are of */
    int kept_chunks;
    htensor **kept;         /* [chunk][output], NULL: not yet computed */
    size_t kept_outputs;
} check_pool;

bool pool_open(check_pool *pool, const char *path, const char *fn, int nthreads, char **err);
void pool_close(check_pool *pool);

typedef struct check_result {
    bool ok;
    double max_rel_err;     /* worst over the outputs */
    double tol;
    bool split;             /* the reference ran in chunks along a symbol */
    char *detail;           /* the worst element, or the error (malloc'd) */
} check_result;

/* Compare every output in->got with the reference interpreter on in->args.
 * split: a symbol along which f's rows are independent, or NULL.  Returns
 * false (and r->detail) when the reference itself could not run. */
bool check_inst(check_pool *pool, const tc_function_info *f, const bench_inst *in,
                const char *split, check_result *r);
void check_result_free(check_result *r);
/* The tolerance for an output of dtype out: 1e-2 when p's function f
 * computes in f16/bf16 anywhere, else 1e-5 (suite.md) or tol_f32 where
 * nonzero; 0 for integers. */
double check_tol(tc_program *p, const tc_function_info *f, DLDataType out, double tol_f32);

/* --- timing (timing.c) --------------------------------------------------------------- */

/* One step of the case: every instance's tc_run once, or (lists set) one
 * tc_run_foreach over ngroups groups. */
typedef struct bench_step {
    tc_program *p;
    const char *fn;
    bench_inst *inst;
    int ninst;
    const tc_arg *lists;    /* tc_run_foreach's arguments, or NULL */
    int nlists;
    int ngroups;
    tc_ctx *ctx;            /* p's: its errors */
} bench_step;

typedef struct timing {
    double event_us;        /* median over event_iters (0: not measured) */
    int event_iters;
    double wall_us;         /* per step, wall_calls back to back, synchronized at the end */
    int wall_calls;
    double host_us;         /* median host time of a step's calls (they only enqueue), over
                               the event-timed steps, each started with the stream idle */
} timing;

/* Warm up, then time steps both ways.  latency: wall time of 2000 steps.
 * Errors (a failing tc_run, a driver error) into *err. */
bool time_steps(tc_ctx *dev, const bench_step *s, bool latency, bool quick, timing *t,
                char **err);
/* The step's call captured once (tc_capture) and replayed back to back:
 * wall time per replay of 2000 (quick: 200), synchronized at the end. */
typedef struct replay_timing {
    int kernels;            /* per replay */
    int calls;
    double us;              /* per replay */
} replay_timing;
bool time_replay(tc_ctx *dev, const bench_step *s, bool quick, replay_timing *t, char **err);
/* Event-timed median of a device-to-device copy of bytes. */
bool time_copy(tc_ctx *dev, void *dst, void *src, size_t bytes, int iters, double *us,
               char **err);
tc_status run_step(const bench_step *s);

/* The device side: a context of our own ("dev" throughout), its GPU opened
 * (device 0), for our buffers, events and syncs.  The programs run in
 * contexts of their own, on the same CUDA (primary) context, as the tensors
 * of a PyTorch user would be.  NULL and *err (malloc'd: the driver's
 * reason) when there is none.  tc_ctx_free closes it. */
tc_ctx *dev_open(tc_device_info *info, char **err);
/* The last error of dev's calls, the message alone (malloc'd); st's name if none. */
char *dev_error(const tc_ctx *dev, tc_status st);

/* --- a growing malloc'd string (json.c) ------------------------------------------------- */

/* NULL until something is added; on out of memory it stops growing (the
 * text gets shorter, nothing breaks).  The caller frees s. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

void sb_vprintf(sbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- JSON (json.c) ------------------------------------------------------------------------ */

typedef struct json {
    sbuf b;
    int depth;
    bool first[32];         /* per level: no member written yet */
    bool after_key;         /* a key was written: its value needs no separator */
} json;

void json_obj(json *j);                 /* { */
void json_end_obj(json *j);             /* } */
void json_arr(json *j);                 /* [ */
void json_end_arr(json *j);             /* ] */
void json_key(json *j, const char *k);  /* "k": (then a value) */
void json_str(json *j, const char *s);  /* NULL: null */
void json_num(json *j, double v);       /* not finite: null */
void json_int(json *j, long long v);
void json_bool(json *j, bool v);
void json_null(json *j);
void json_raw(json *j, const char *text);  /* a value already in JSON */
/* key and value in one */
void json_kstr(json *j, const char *k, const char *s);
void json_knum(json *j, const char *k, double v);
void json_kint(json *j, const char *k, long long v);
void json_kbool(json *j, const char *k, bool v);
/* The number after "key": in a JSON text (the first one); NAN if absent. */
double json_find_num(const char *text, const char *key);
bool json_find_bool(const char *text, const char *key, bool *v);
/* Whether text is one complete JSON object or array (brackets balance
 * outside strings): what a child left, before the parent embeds it. */
bool json_balanced(const char *text);

/* --- children (spawn.c) and their entry points ----------------------------------------------- */

typedef struct child_opts {
    const char *cases_dir;
    uint64_t seed;
    bool quick;
    int threads;
    const char *out;        /* where the child writes its JSON */
} child_opts;

int child_case(const child_opts *o, const bench_case *c);
int child_compile_time(const child_opts *o, const bench_case *c, bool cold);
int child_ceiling(const child_opts *o);
/* tc-bench --self-test (selftest.c): the check and the JSON helpers, no GPU. */
int self_test(const char *cases_dir, int threads);

typedef struct spawn_result {
    int status;             /* exit status, or -1 */
    int signal;             /* the signal that ended it, or 0 */
    bool timed_out;
    char *json;             /* what it wrote to its output file (malloc'd), or NULL */
    char *log_tail;         /* the end of its stderr (malloc'd), or NULL */
    double wall_ms;
} spawn_result;

/* Run argv (argv[0] a path) with extra environment "NAME=VALUE" entries
 * (NULL-terminated, or NULL), stdout and stderr to log_path (and the tail
 * echoed to our stderr), killed after timeout_s; the JSON it wrote to
 * json_path is read back. */
bool spawn_child(char *const argv[], char *const extra_env[], const char *log_path,
                 const char *json_path, int timeout_s, spawn_result *r);
void spawn_result_free(spawn_result *r);

/* Shared by the children: a message into a malloc'd string. */
char *msgf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Write text to path (the child's JSON); false on an I/O error. */
bool write_file(const char *path, const char *text);
/* The whole file, malloc'd; NULL if unreadable. */
char *read_file(const char *path);
/* Remove a directory tree we made (the kernel caches). */
void remove_tree(const char *path);
/* Files under a directory, recursively (0 when missing). */
int count_files(const char *path);

#endif
