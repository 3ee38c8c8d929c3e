/* tensorc.h - the public API of tensorc, a compiler from a small tensor
 * language to fused CUDA kernels.
 *
 * Conventions (in the manner of zstd.h):
 *  - Handles are opaque and come in create/free pairs.
 *  - Every call that can fail returns a tc_status; tc_status_str() names it
 *    and tc_errmsg() gives the last error's full text, which for an error in a
 *    program is "file:line:col: error: ..." followed by the source line and a
 *    caret (and, for a known slip such as a PyTorch spelling, a line
 *    "    hint: ...").  tc_error_loc() gives the location alone.
 *  - Strings returned by the library are owned by the object they came from
 *    and stay valid until the next call on that object or until it is freed.
 *  - Thread-safety: a tc_ctx and everything made from it may be used by one
 *    thread at a time; distinct contexts are independent.
 *  - The library never calls exit() and never prints, except where
 *    TENSORC_DEBUG asks it to.
 */
#ifndef TENSORC_H
#define TENSORC_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>  /* DLTensor: how tensors cross tc_run (DLPack 0.6 or later) */

#ifdef __cplusplus
extern "C" {
#endif

/* TC_API marks the library's exported functions.  The library is built with
 * hidden visibility, so only what carries this mark (every function of this
 * header, all named tc_) is visible outside it, in libtensorc.so and in
 * libtensorc.a alike. */
#if defined(__GNUC__) && __GNUC__ >= 4
#define TC_API __attribute__((visibility("default")))
#else
#define TC_API
#endif

#define TC_VERSION_MAJOR 0
#define TC_VERSION_MINOR 1
#define TC_VERSION_PATCH 0
#define TC_VERSION_NUMBER (TC_VERSION_MAJOR * 10000 + TC_VERSION_MINOR * 100 + TC_VERSION_PATCH)
#define TC_VERSION_STRING "0.1.0"

/*! tc_version_number(): the run-time library version, as TC_VERSION_NUMBER. */
TC_API unsigned tc_version_number(void);
/*! tc_version_string(): the run-time library version, e.g. "0.1.0". Static storage. */
TC_API const char *tc_version_string(void);

typedef enum tc_status {
    TC_OK = 0,
    TC_ERR_SYNTAX,       /* lexical or syntax error in a program */
    TC_ERR_COMPILE,      /* name, type, shape, axis, arity, dtype or return error */
    TC_ERR_LIMIT,        /* program too large or too deeply nested */
    TC_ERR_INVALID_ARG,  /* an API argument (or CLI input) is wrong: message names it */
    TC_ERR_NOT_FOUND,    /* no function of that name */
    TC_ERR_UNSUPPORTED,  /* a stage or feature that is not built yet */
    TC_ERR_IO,           /* a file could not be read or written */
    TC_ERR_NOMEM,        /* out of memory */
    TC_ERR_NO_DEVICE,    /* no GPU or driver where one is needed */
    TC_ERR_INTERNAL,     /* a verifier failed: a bug in tensorc */
    TC_STATUS_COUNT
} tc_status;

/*! tc_status_str(): the name of a status, e.g. "TC_ERR_SYNTAX". Static storage. */
TC_API const char *tc_status_str(tc_status s);

typedef struct tc_ctx tc_ctx;
typedef struct tc_program tc_program;

/*! tc_ctx_create(): make a context.  @return TC_OK and *ctx, or TC_ERR_NOMEM. */
TC_API tc_status tc_ctx_create(tc_ctx **ctx);
/*! tc_ctx_free(): free a context; programs made from it must be freed first. NULL is fine. */
TC_API void tc_ctx_free(tc_ctx *ctx);

/*! tc_compile(): parse and check a program given as text (len bytes; need not be
 *  NUL-terminated).  filename is used in messages only.  Every function is
 *  checked with calls inlined and the prelude available, except generic
 *  ones (a [*] or a dtype variable such as T in the signature): those are
 *  checked where they are called, with the caller's shapes and dtypes, and
 *  as an entry point when asked for by name (tc_run, tc_program_source,
 *  tc_program_dump), where [*] is rank 1 and dtype variables f32 (tc_run:
 *  bound by its tensors); an error there is reported then, located.  A whole-file dump (fn NULL) builds
 *  every function but the generic ones that another function calls.
 *  @return TC_OK and *prog (owned by the caller, free with tc_program_free),
 *          or an error status with tc_errmsg(ctx) set and *prog NULL. */
TC_API tc_status tc_compile(tc_ctx *ctx, const char *src, size_t len, const char *filename,
                     tc_program **prog);
/*! tc_compile_file(): tc_compile on the contents of a file. */
TC_API tc_status tc_compile_file(tc_ctx *ctx, const char *path, tc_program **prog);
TC_API void tc_program_free(tc_program *prog);

/*! tc_program_dump(): the text of one stage for one function (fn NULL: all
 *  functions).  stage: "ast", "graph", "lowered", "fused", "sched", "cuda",
 *  "plan" or "explain" (src/driver/stages.def, tensorc compile --emit); the binary
 *  stages "ptx" and "cubin" give TC_ERR_UNSUPPORTED (tc_program_image gives
 *  them), any other name TC_ERR_INVALID_ARG.  *out is owned by prog, valid until the next dump
 *  or tc_program_free. */
TC_API tc_status tc_program_dump(tc_program *prog, const char *stage, const char *fn,
                                 const char **out);

/* --- running on the GPU ------------------------------------------------------
 *
 * A program runs on the GPU with tc_run: the arguments are DLPack tensors
 * (from PyTorch, CuPy, JAX: torch.utils.dlpack.to_dlpack, or a DLTensor
 * filled by hand) and scalars, the results are written into output tensors
 * the caller allocated.  The first tc_run of a context loads the CUDA
 * driver, compiles the program's kernels with NVRTC (or finds them in the
 * kernel cache) and keeps them; a context that only compiles never touches
 * libcuda.
 *
 * Ownership: tc_run keeps no pointer to args, their tensors or their shape
 * arrays after it returns, but the kernels it enqueued read and write the
 * tensors' memory later, on `stream`: keep that memory alive (and do not
 * reuse it) until the stream has passed the call, as with any CUDA launch.
 * The context owns the compiled kernels, a pool of device memory for
 * intermediate results (kept between calls, so repeated calls allocate
 * nothing) and a cuBLAS handle; tc_ctx_free releases them.
 *
 * Streams: work is enqueued on `stream` (a CUstream / cudaStream_t; NULL is
 * the default stream) and tc_run returns without waiting for it.  The
 * intermediate-result pool is shared by all calls of a context: when a call
 * uses another stream than the previous one that needed the pool, tc_run
 * first waits for the device, so calls on different streams of one context
 * never race, but do not overlap either (use one context per stream for
 * concurrency).
 *
 * Thread-safety: as everywhere in this API, one thread at a time per
 * context (and its programs); distinct contexts may run concurrently.
 */

/* Let the first tc_run pick the device: the one its tensors are on. */
#define TC_DEVICE_AUTO (-1)

typedef struct tc_options {
    int device;                 /* CUDA device ordinal, or TC_DEVICE_AUTO (the default) */
    const char *cache_dir;      /* kernel cache directory (copied); NULL: $TENSORC_CACHE_DIR,
                                   else $XDG_CACHE_HOME/tensorc, else ~/.cache/tensorc */
    int fast_math;              /* nonzero: NVRTC --use_fast_math (approximate expf, erff,
                                   division; results differ from the reference by more than
                                   --check's f32 tolerance).  Part of the cache key. */
    int line_info;              /* nonzero: NVRTC -lineinfo, so profilers (ncu) map SASS back
                                   to the generated source.  Part of the cache key. */
} tc_options;

/* The defaults: { TC_DEVICE_AUTO, NULL, 0, 0 }. */
#define TC_OPTIONS_INIT {TC_DEVICE_AUTO, NULL, 0, 0}

/*! tc_ctx_create_ex(): tc_ctx_create with options (opts NULL: the defaults).
 *  Nothing is loaded yet: the device is opened by the first tc_run.
 *  @return TC_OK and *ctx, TC_ERR_INVALID_ARG (a device below -1), TC_ERR_NOMEM. */
TC_API tc_status tc_ctx_create_ex(tc_ctx **ctx, const tc_options *opts);

typedef enum tc_arg_kind {
    TC_ARG_TENSOR = 0,  /* v.tensor: a DLTensor on the GPU */
    TC_ARG_FLOAT,       /* v.f: a value for a float scalar parameter (f16, bf16, f32, f64) */
    TC_ARG_INT,         /* v.i: for an integer parameter (i32, i64); also accepted by float ones */
    TC_ARG_BOOL,        /* v.b: for a bool parameter (0 or not) */
    TC_ARG_TENSORS,     /* v.tensors: tc_run_foreach's list, one DLTensor per group */
    TC_ARG_DTYPE,       /* v.dtype: a dtype variable's binding, by name ("T" = "bf16") */
    TC_ARG_SIZE         /* v.i: a symbolic size's value, by name ("N" = 64): tc_shapes only */
} tc_arg_kind;

/* One argument of tc_run.  name: a parameter's name, an output's name (as
 * in the signature: "out" for a single unnamed result, a named result's
 * name), or NULL to bind by position.  Positions count the parameters in
 * signature order, then the outputs that are not inout parameters; an inout
 * parameter is passed once, by its name or position, and its final value is
 * written back into that same tensor.  A dtype variable's binding
 * (tc_arg_dtype) is always named and takes no position. */
typedef struct tc_arg {
    const char *name;
    tc_arg_kind kind;
    union {
        const DLTensor *tensor;
        const DLTensor *const *tensors;
        double f;
        long long i;
        int b;
        const char *dtype;
    } v;
} tc_arg;

static inline tc_arg tc_arg_tensor(const char *name, const DLTensor *t)
{
    tc_arg a;
    a.name = name;
    a.kind = TC_ARG_TENSOR;
    a.v.tensor = t;
    return a;
}
static inline tc_arg tc_arg_tensors(const char *name, const DLTensor *const *list)
{
    tc_arg a;
    a.name = name;
    a.kind = TC_ARG_TENSORS;
    a.v.tensors = list;
    return a;
}
static inline tc_arg tc_arg_float(const char *name, double f)
{
    tc_arg a;
    a.name = name;
    a.kind = TC_ARG_FLOAT;
    a.v.f = f;
    return a;
}
static inline tc_arg tc_arg_int(const char *name, long long i)
{
    tc_arg a;
    a.name = name;
    a.kind = TC_ARG_INT;
    a.v.i = i;
    return a;
}
static inline tc_arg tc_arg_bool(const char *name, int b)
{
    tc_arg a;
    a.name = name;
    a.kind = TC_ARG_BOOL;
    a.v.b = b;
    return a;
}
/* Give symbolic size `sym` ("N"; "*" for the element count of [*]
 * parameters) the value `size`, for tc_shapes (as the CLI's --shape N=64). */
static inline tc_arg tc_arg_size(const char *sym, long long size)
{
    tc_arg a;
    a.name = sym;
    a.kind = TC_ARG_SIZE;
    a.v.i = size;
    return a;
}
/* Bind dtype variable `var` ("T") of the function's signature to `dtype`
 * ("bf16", "f16", "f32", "f64", "i32", "i64", "bool"), as the CLI's
 * --dtype T=bf16 does. */
static inline tc_arg tc_arg_dtype(const char *var, const char *dtype)
{
    tc_arg a;
    a.name = var;
    a.kind = TC_ARG_DTYPE;
    a.v.dtype = dtype;
    return a;
}

/*! tc_run(): run function fn of p (NULL: the file's only function; a
 *  prelude function works too) on the GPU, asynchronously on stream.
 *
 *  Every tensor parameter and every output must be given; a scalar
 *  parameter may be left out when it has a default.  Each argument is
 *  checked before anything runs, and a wrong one is TC_ERR_INVALID_ARG
 *  with a message naming it: an unknown, missing or repeated name; a
 *  tensor where a scalar is expected or the other way round; a scalar of
 *  the wrong kind (a float for an int parameter) or out of range; a
 *  tensor's dtype (DLPack float32/float16/bfloat16/float64/int32/int64/bool,
 *  one lane), rank or shape against the signature's symbolic dims (which
 *  bind the sizes: "parameter 'g' has shape [5], but its dim 0 is D = 3");
 *  its device (CUDA memory on the context's device: kDLCUDA or
 *  kDLCUDAManaged); its layout (compact row-major: strides NULL, or equal
 *  to the row-major strides, any stride allowed on a dim of size 1); a
 *  data pointer that is NULL or not aligned to the element size; and an
 *  output or inout tensor that overlaps another argument (kernels assume
 *  outputs alias nothing).  A [*] parameter, and an output of rank 1, takes
 *  a tensor of any shape with the right number of elements.  Kernels check
 *  wider alignment themselves and fall back to scalar code.
 *
 *  A dtype variable (x: T[N]) is bound by the tensor passed for the first
 *  parameter that uses it (a bfloat16 x runs the function at T = bf16, as
 *  the CLI's --dtype T=bf16 does), unless a tc_arg_dtype argument binds it
 *  (a tensor of another dtype is then an error naming it); one neither
 *  binds is f32.  A tc_arg_dtype naming no dtype variable of fn, or no
 *  dtype, is TC_ERR_INVALID_ARG.  Each binding is built and compiled once
 *  per program and kept.
 *
 *  Order: arguments are checked first, on the host, without touching the
 *  driver; then the device is opened.  So on a machine with no GPU, a call
 *  with valid arguments returns TC_ERR_NO_DEVICE, and one with invalid
 *  arguments TC_ERR_INVALID_ARG.  A tensor whose memory the driver does not
 *  know (host memory, a freed pointer) is found when the driver refuses a
 *  launch, copy or cuBLAS call: TC_ERR_INVALID_ARG naming it.  (A kernel's
 *  own fault on such memory is asynchronous and surfaces at the caller's
 *  next synchronization, like any CUDA kernel's.)
 *  @return TC_OK (the work is enqueued); TC_ERR_INVALID_ARG, TC_ERR_NOT_FOUND
 *          (no function fn); TC_ERR_NO_DEVICE (no driver, no GPU, no NVRTC,
 *          no cuBLAS for a matmul); TC_ERR_COMPILE (NVRTC rejected the
 *          generated source: a bug in tensorc, the message has NVRTC's log);
 *          TC_ERR_UNSUPPORTED (a construct code generation does not handle
 *          yet); TC_ERR_NOMEM (host or device memory); TC_ERR_INTERNAL (a bug
 *          in tensorc: a plan that disagrees with its kernels, say). */
TC_API tc_status tc_run(tc_program *p, const char *fn, const tc_arg *args, size_t nargs,
                        void *stream);

/*! tc_run_foreach(): run fn over ngroups tensor groups in one kernel
 *  launch, the way multi_tensor_apply runs an optimizer over a model's
 *  parameters.  fn must be elementwise: every tensor parameter [*] and
 *  every operation pointwise (TC_ERR_INVALID_ARG names what is not).
 *
 *  Each tensor parameter and each output that is not inout takes a list:
 *  tc_arg_tensors(name, list) with list[0..ngroups), group i binding
 *  list[i] of every list.  Scalars are plain tc_arg_float / tc_arg_int /
 *  tc_arg_bool values, shared by every group.  Names and positions work as
 *  in tc_run.  Within a group every tensor has the same number of elements
 *  (any shape: [*]); groups may differ, and a group may be empty.  Every
 *  tensor is checked as tc_run checks it (dtype, device, layout,
 *  alignment); written tensors (outputs, inout parameters) may not overlap
 *  any other tensor of any group.  Messages name the group: "group 17:
 *  parameter 'g' has 4096 elements, but 'p' has 4095".
 *
 *  One launch: the groups' addresses and sizes travel in the kernel's
 *  parameters when they fit in 4 KB (tensorc --emit=cuda shows the table's
 *  capacity), otherwise in one host-to-device copy into a buffer the
 *  context keeps, then the launch.  (TENSORC_FOREACH_WIDE=1 passes up to
 *  32 KB of them instead, through a second build of the kernel, on CUDA
 *  12.1+ drivers: measured slower on an H200, so not the default.)
 *  Nothing is compiled per group count or size, and changing a scalar
 *  never recompiles.  ngroups 0,
 *  or only empty groups, launches nothing.  tc_run on such a function is
 *  the same kernel over one group.
 *  @return as tc_run. */
/* The most groups one tc_run_foreach call takes (the table and the checks are
 * linear in it; two million is far beyond any model's parameter count). */
#define TC_MAX_GROUPS (1 << 21)

TC_API tc_status tc_run_foreach(tc_program *p, const char *fn, size_t ngroups, const tc_arg *lists,
                         size_t nargs, void *stream);

/* Repeated calls.  tc_run and tc_run_foreach remember the last few calls
 * of each program that ran: a call whose arguments are the same as one of
 * them (tensors with the same data pointers, offsets, shapes, strides,
 * dtypes and devices, whichever DLTensor structs describe them; the same
 * names; scalars may differ and are checked again) skips the argument
 * checks and enqueues the launches that call made, one cuLaunchKernel
 * each; from its second repeat in a row with the same scalars too, as one
 * CUDA graph (cuGraphLaunch), unless the stream is being captured.
 * Nothing to do for it; a call with anything else takes the full path.
 * To keep a graph whatever other calls do, or to use one from the first
 * call, capture it yourself: */

/* A captured call: its launches as one CUDA graph, its temporaries its own. */
typedef struct tc_replay tc_replay;

/*! tc_capture(): check a call of fn as tc_run would (same arguments, same
 *  errors), and capture its launches into a CUDA graph without running
 *  them; tc_replay_run then runs them, as often as wanted, with the
 *  buffers, shapes and scalars given here.  The replay has device memory
 *  of its own for the call's temporaries, so other calls in the context
 *  cannot disturb it; the caller's tensors must stay allocated while it is
 *  used.  Opens the GPU.
 *  @return TC_OK and *out (free with tc_replay_free, before the context);
 *          the errors of tc_run; TC_ERR_UNSUPPORTED when the driver has no
 *          graph API (CUDA 11.4+; the message names what is missing) or
 *          the plan calls cuBLAS (a matmul: tc_run runs it). */
TC_API tc_status tc_capture(tc_program *p, const char *fn, const tc_arg *args, size_t nargs,
                            tc_replay **out);

/*! tc_replay_run(): run a captured call on stream (one cuGraphLaunch).
 *  args: NULL (nargs 0) to run as captured, or the call's arguments, which
 *  are then compared with the capture's: TC_ERR_INVALID_ARG naming the
 *  first that differs ("'x' is at 0x... now, 0x... at the capture"), since
 *  a graph's launches cannot take other buffers, shapes or scalars
 *  (capture again for those).  Errors land in the program's context. */
TC_API tc_status tc_replay_run(tc_replay *r, const tc_arg *args, size_t nargs, void *stream);

/*! tc_replay_kernels(): the kernels one replay launches (0 for NULL). */
TC_API int tc_replay_kernels(const tc_replay *r);

/*! tc_replay_free(): wait for the device, free the graph and the replay's
 *  memory (NULL is fine). */
TC_API void tc_replay_free(tc_replay *r);

/*! tc_program_source(): the CUDA source generated for fn (NULL: every
 *  function of the file, in one unit, as tc_run compiles it), for reading.
 *  Owned by p, valid until tc_program_free.  NULL on error (tc_errmsg). */
TC_API const char *tc_program_source(tc_program *p, const char *fn);

/* What tc_program_image compiles to. */
typedef enum tc_image_kind {
    TC_IMAGE_PTX = 0,   /* PTX text for compute_<arch> */
    TC_IMAGE_CUBIN      /* a CUBIN (ELF) for sm_<arch> */
} tc_image_kind;

/*! tc_program_image(): the kernels of fn (NULL: every function of the
 *  file, in one unit, as tc_program_source(p, NULL) shows them) compiled
 *  by NVRTC, or found in the kernel cache, for arch (10 * major + minor:
 *  90 for sm_90), as PTX or a CUBIN: the bytes tc_run would load on such a
 *  GPU.  dtypes: tc_arg_dtype bindings for fn's dtype variables (ndtypes
 *  of them; none: f32).  The context's options (tc_options: fast_math,
 *  line_info) and kernel cache apply.  No GPU is needed, only NVRTC.
 *  *image (PTX NUL-terminated, the NUL not counted in *len) is owned by the
 *  context and valid until tc_ctx_free.
 *  @return TC_OK; TC_ERR_NO_DEVICE (NVRTC cannot be loaded);
 *          TC_ERR_INVALID_ARG (an arch NVRTC does not support, an argument
 *          that is not a tc_arg_dtype, a NULL pointer); TC_ERR_NOT_FOUND;
 *          TC_ERR_COMPILE (NVRTC rejected the source: a bug in tensorc, the
 *          message has its log); TC_ERR_NOMEM; compile errors of fn. */
TC_API tc_status tc_program_image(tc_program *p, const char *fn, const tc_arg *dtypes,
                                  size_t ndtypes, int arch, tc_image_kind kind,
                                  const void **image, size_t *len);

/* --- what a program's functions take and give --------------------------------
 *
 * A program's functions can be listed and described without running them,
 * for bindings to other languages (allocating outputs, checking arguments
 * before a call) and for tools.  Descriptions are owned by the program and
 * stay valid until tc_program_free.
 */

/* The most dims a tensor has. */
#define TC_MAX_DIMS 8

/* One parameter or output of a function. */
typedef struct tc_value_info {
    const char *name;         /* as in the signature; "out" for a single unnamed result */
    const char *dtype;        /* "f32", "bf16", "f16", "f64", "i32", "i64", "bool"; for a
                                 dtype variable its letter ("T") */
    int dtype_var;            /* nonzero: dtype names a dtype variable (bound by a tensor or a
                                 tc_arg_dtype, else f32) */
    int scalar;               /* a scalar parameter: passed with tc_arg_float/int/bool */
    int star;                 /* a [*] parameter (or an output of its size): any shape, one dim
                                 of "*" elements */
    int rank;                 /* number of dims: 0 for a scalar, 1 for [*] */
    const char *const *dims;  /* rank dims, each a symbolic size ("N"), a number ("4"), an
                                 expression of them ("N*2") or "*" */
    int inout;                /* a parameter written back in place (also its output's entry) */
    int has_default;          /* a scalar with a default value ... */
    double default_value;     /* ... this one */
} tc_value_info;

typedef struct tc_function_info {
    const char *name;
    size_t nparams;                  /* parameters, in signature order */
    const tc_value_info *params;
    size_t noutputs;                 /* results in order, then inout parameters not returned */
    const tc_value_info *outputs;
    int elementwise;                 /* every tensor parameter [*] and every op pointwise:
                                        tc_run_foreach runs it */
} tc_function_info;

/*! tc_program_functions(): the names of the functions the program's file
 *  defines, in order (*names has *n entries; prelude functions are not
 *  listed, but tc_program_function and tc_run take them too).
 *  @return TC_OK, or TC_ERR_INVALID_ARG for a NULL argument. */
TC_API tc_status tc_program_functions(tc_program *p, size_t *n, const char *const **names);

/*! tc_program_function(): the signature of function fn (NULL: the file's only
 *  function; a prelude function works too), described in *info.  A
 *  generic function is described as a call would see it before binding:
 *  dtype variables by their letter, [*] as one dim "*".
 *  @return TC_OK; TC_ERR_NOT_FOUND (no function fn); TC_ERR_INVALID_ARG
 *          (fn NULL and the file has several); a compile error of fn as an
 *          entry point (located, in tc_errmsg). */
TC_API tc_status tc_program_function(tc_program *p, const char *fn,
                                     const tc_function_info **info);

/* A tensor's dtype and shape, as tc_output_shapes gives them. */
typedef struct tc_shape {
    DLDataType dtype;                /* as tc_run takes it: kDLFloat 32, kDLBfloat 16, ... */
    int ndim;
    int64_t shape[TC_MAX_DIMS];
} tc_shape;

/*! tc_shapes(): the dtype and shape of each parameter and output of fn (as
 *  tc_program_function lists them) for the given inputs and sizes.  args
 *  are as tc_run takes them, but only the tensors' dtypes and shapes are
 *  read (data may be NULL; device and strides are not checked; outputs
 *  and scalars may be left out), tc_arg_dtype bindings count as in tc_run,
 *  and tc_arg_size gives sizes no tensor passed binds.  An input left out
 *  gets the shape its dims are bound to; a size nothing binds is an error
 *  naming it.  params (room for nparams, at least the parameter count) or
 *  outs (room for nouts, at least the output count) may be NULL.  A
 *  scalar parameter has ndim 0; a [*] parameter the shape of its tensor
 *  (left out: one dim, "*" elements); an output whose dims come from a [*]
 *  parameter that element count as its one dim.
 *  @return TC_OK; TC_ERR_INVALID_ARG (a shape that does not agree with the
 *          signature or another input, an unbound size, too little room:
 *          the message names it); TC_ERR_NOT_FOUND; compile errors as
 *          tc_program_function. */
TC_API tc_status tc_shapes(tc_program *p, const char *fn, const tc_arg *args, size_t nargs,
                           tc_shape *params, size_t nparams, tc_shape *outs, size_t nouts);
/*! tc_output_shapes(): tc_shapes for the outputs alone. */
TC_API tc_status tc_output_shapes(tc_program *p, const char *fn, const tc_arg *args, size_t nargs,
                                  tc_shape *outs, size_t nouts);

/* --- running on the CPU ----------------------------------------------------------
 *
 * tc_run_cpu runs a function through the reference interpreter, the oracle
 * tensorc's tests hold the kernels to: every value computed in f64 (integers
 * exactly in int64) and rounded to its dtype per op, node by node, each
 * value materialized.  It needs no GPU and is written to be obviously right,
 * not fast: for checking results, small inputs, and machines without a GPU.
 */

/*! tc_run_cpu(): run fn of p on the CPU, synchronously.  Arguments as
 *  tc_run's, except that every tensor is in host memory (device kDLCPU or
 *  kDLCUDAHost); every input is read before any output is written, so
 *  outputs may alias inputs.  The interpreter
 *  holds at most 2^30 elements per value: a larger argument is
 *  TC_ERR_INVALID_ARG naming it, a larger intermediate value
 *  TC_ERR_INVALID_ARG located at the operation that makes it (the limit:
 *  TC_CPU_MAX_ELEMS).
 *  @return TC_OK with the outputs written; TC_ERR_INVALID_ARG (as tc_run's
 *          checks); TC_ERR_NOT_FOUND; TC_ERR_NOMEM; compile errors as
 *          tc_program_function. */
TC_API tc_status tc_run_cpu(tc_program *p, const char *fn, const tc_arg *args, size_t nargs);

/* The most elements tc_run_cpu holds in one value: 2^30. */
#define TC_CPU_MAX_ELEMS (1LL << 30)

/*! tc_errmsg(): the last error's full text (empty string if none).  Owned by ctx. */
TC_API const char *tc_errmsg(const tc_ctx *ctx);
/*! tc_error_loc(): the last error's location; returns 0 if it had none. Any out pointer may be NULL. */
TC_API int tc_error_loc(const tc_ctx *ctx, const char **file, int *line, int *col);

/* ================================================================================
 * Unstable API, for tensorc's own tools and benchmarks (`tensorc run --bench`,
 * tc-bench): how a call ran (its launch plan, where the kernels came from,
 * per-step timing) and the minimum of device memory handling a tool needs
 * to feed tc_run without a CUDA toolkit of its own.  Define
 * TC_UNSTABLE_API before including this header to see it.  Anything here
 * may change or go in any release; the functions are exported like the
 * rest (all named tc_).
 * ================================================================================ */
#ifdef TC_UNSTABLE_API

/* How a tc_run_ex call ran.  The caller provides the arrays. */
typedef struct tc_run_info {
    /* in */
    void *const *events;        /* NULL, or nevents events (tc_event_create): with nevents
                                   >= the plan's steps + 1, events[i] is recorded before
                                   step i and events[nsteps] after the last */
    int nevents;
    const char **step_names;    /* room for cap_steps names ("k0_softmax", "matmul
                                   (cuBLAS)", "copy", or, with step_bytes, "(not run at these sizes)"
                                   for a step its guard skips: owned by the program), or NULL */
    int64_t *step_bytes;        /* room for cap_steps byte counts (what each step reads and
                                   writes, -1 unknown), or NULL */
    int cap_steps;
    /* out */
    int nsteps;                 /* steps of the plan that ran (more than cap_steps: only the
                                   first cap_steps are filled) */
    int index64;                /* nonzero: the plan with 64-bit indices ran */
    int jit_origin;             /* where the kernels' image came from: 0 this context's
                                   memory, 1 the disk cache, 2 NVRTC */
    double jit_ms;              /* time spent getting it */
    int arch;                   /* the image's target: sm_<arch>, or compute_<arch> if ptx */
    int ptx;
} tc_run_info;

/*! tc_run_ex(): tc_run, filling *info (info NULL: tc_run itself). */
TC_API tc_status tc_run_ex(tc_program *p, const char *fn, const tc_arg *args, size_t nargs,
                           void *stream, tc_run_info *info);
/*! tc_run_foreach_ex(): tc_run_foreach, filling *info (step_bytes: the
 *  sum over the groups). */
TC_API tc_status tc_run_foreach_ex(tc_program *p, const char *fn, size_t ngroups,
                                   const tc_arg *lists, size_t nargs, void *stream,
                                   tc_run_info *info);

/* The context's GPU, as tc_device_open opened it. */
typedef struct tc_device_info {
    int ordinal;
    const char *name;           /* "NVIDIA H100 80GB HBM3"; owned by the context */
    int arch;                   /* 10 * major + minor */
    int sm_count;
    size_t total_mem;           /* bytes */
} tc_device_info;

/*! tc_device_open(): open the context's GPU now (as the first tc_run would),
 *  on device ordinal (TC_DEVICE_AUTO: the context's choice, else 0), and
 *  describe it.  @return TC_OK; TC_ERR_NO_DEVICE (no driver, no GPU: the
 *  message says which); TC_ERR_INVALID_ARG (another device than the one
 *  the context runs on). */
TC_API tc_status tc_device_open(tc_ctx *ctx, int ordinal, tc_device_info *info);

/* Device memory of the context's GPU (tc_device_open first), for tools that
 * make the tensors they pass to tc_run.  Addresses are CUdeviceptr values
 * as pointers.  Copies and memsets are synchronous unless a stream is
 * named. */
TC_API tc_status tc_device_alloc(tc_ctx *ctx, size_t bytes, void **dptr);
TC_API void tc_device_free(tc_ctx *ctx, void *dptr);
typedef enum tc_copy_kind {
    TC_COPY_TO_DEVICE = 0,      /* dst device, src host */
    TC_COPY_TO_HOST,            /* dst host, src device */
    TC_COPY_ON_DEVICE           /* both device; asynchronous on stream */
} tc_copy_kind;
TC_API tc_status tc_device_copy(tc_ctx *ctx, void *dst, const void *src, size_t bytes,
                                tc_copy_kind kind, void *stream);
TC_API tc_status tc_device_memset(tc_ctx *ctx, void *dptr, unsigned char value, size_t bytes,
                                  void *stream);
/*! tc_device_sync(): wait for stream (NULL: the whole device). */
TC_API tc_status tc_device_sync(tc_ctx *ctx, void *stream);
/* Timing events (CUevent) for tc_run_info.events. */
TC_API tc_status tc_event_create(tc_ctx *ctx, void **event);
TC_API tc_status tc_event_record(tc_ctx *ctx, void *event, void *stream);
/*! tc_event_elapsed(): milliseconds from start to end (both recorded and passed). */
TC_API tc_status tc_event_elapsed(tc_ctx *ctx, void *start, void *end, float *ms);
TC_API void tc_event_destroy(tc_ctx *ctx, void *event);

/* --- unstable: for tools/ --- */

/*! tc_program_function_ex(): tc_program_function for fn built with its dtype
 *  variables bound by dtypes[0..ndtypes) (tc_arg_dtype; a variable none
 *  binds is f32), as `tensorc run --dtype T=bf16` runs it: every dtype is
 *  named ("bf16"; dtype_var 0).
 *  @return as tc_program_function; TC_ERR_INVALID_ARG for a binding that is
 *          not a tc_arg_dtype, names no dtype variable of fn, or no dtype
 *          (the message names it). */
TC_API tc_status tc_program_function_ex(tc_program *p, const char *fn, const tc_arg *dtypes,
                                        size_t ndtypes, const tc_function_info **info);
/*! tc_program_dump_ex(): tc_program_dump of fn built with dtype bindings
 *  (as tc_program_function_ex takes them; none: tc_program_dump itself, as
 *  for the stage "ast", which has no bindings).  *out as tc_program_dump's. */
TC_API tc_status tc_program_dump_ex(tc_program *p, const char *stage, const char *fn,
                                    const tc_arg *dtypes, size_t ndtypes, const char **out);
/*! tc_program_dump_json(): the JSON form (docs/json.md, docs/schema/) of the
 *  stage "explain" or "plan" of fn (NULL: every function of the file), built
 *  with dtype bindings as tc_program_dump_ex.  *out is owned by p.
 *  @return TC_ERR_INVALID_ARG for another stage; else as tc_program_dump. */
TC_API tc_status tc_program_dump_json(tc_program *p, const char *stage, const char *fn,
                                      const tc_arg *dtypes, size_t ndtypes, const char **out);
/*! tc_bench_json(): `tensorc run --bench --json`'s document (docs/json.md,
 *  docs/schema/bench.json) for function what on device: nsteps steps named
 *  names[i] moving step_bytes[i] bytes (-1: unknown), timed in ms, row r of
 *  runs holding run r's nsteps step times then the whole call's.  malloc'd
 *  (free() it); NULL when out of memory. */
TC_API char *tc_bench_json(const char *what, const char *device, int index64, int nsteps,
                           const char *const *names, const int64_t *step_bytes, const float *ms,
                           int runs, int warmup);
/*! tc_cache_stats_json(): `tensorc cache stats --json`'s document
 *  (docs/schema/cache-stats.json); malloc'd, NULL when out of memory. */
TC_API char *tc_cache_stats_json(const char *dir, uint64_t entries, uint64_t bytes,
                                 uint64_t max_bytes);
/*! tc_function_not_elementwise(): why fn (built with dtype bindings, as
 *  tc_program_function_ex) cannot run over tensor groups in *why ("parameter
 *  'x' is f32[N, D], not [*]", "'sum' (line 3) is not pointwise"; owned by
 *  p), or NULL when tc_run_foreach takes it.  @return as
 *  tc_program_function_ex. */
TC_API tc_status tc_function_not_elementwise(tc_program *p, const char *fn, const tc_arg *dtypes,
                                             size_t ndtypes, const char **why);

/*! tc_dtype_name(): tensorc's name of a DLPack dtype ("f32", "bf16",
 *  "bool"), or NULL for one tensorc lacks.  Static storage. */
TC_API const char *tc_dtype_name(DLDataType dtype);
/*! tc_dtype_parse(): the DLPack dtype of a tensorc dtype name ("bf16") in
 *  *dtype.  @return nonzero, or 0 for a name that is no dtype. */
TC_API int tc_dtype_parse(const char *name, DLDataType *dtype);

/* Output sets: files written so that no data is lost, committed together
 * (`tensorc run`'s --output files, `compile -o`).
 *   1. tc_outset_add checks a path before any work is done: its directory
 *      exists and can be written, it is not a directory, a symbolic link
 *      points somewhere usable (a link planted by another user in a shared
 *      directory is refused).
 *   2. tc_outset_open gives a descriptor to write: a private temporary
 *      beside a regular file, or the path itself for a device or FIFO.
 *   3. tc_outset_done flushes and closes it.
 *   4. tc_outset_commit renames every temporary over its file once all are
 *      written; tc_outset_free before that leaves every file as it was.
 * A call that fails keeps its message (naming the output and the path) for
 * tc_outset_errmsg.  One thread at a time per set. */
typedef struct tc_outset tc_outset;
/*! tc_outset_new(): an empty set, or NULL when out of memory. */
TC_API tc_outset *tc_outset_new(void);
/*! tc_outset_add(): check path and add it; what names it in messages
 *  ("--output out", "-o"); *index (may be NULL) gets its number.  A set
 *  that refused a path cannot be committed (TC_ERR_INTERNAL): free it.
 *  @return TC_OK, TC_ERR_IO or TC_ERR_INVALID_ARG. */
TC_API tc_status tc_outset_add(tc_outset *s, const char *path, const char *what, int *index);
/*! tc_outset_open(): a descriptor *fd to write output index to. */
TC_API tc_status tc_outset_open(tc_outset *s, int index, int *fd);
/*! tc_outset_done(): flush and close index's descriptor; ok zero: the
 *  caller's write failed with errno err, reported here. */
TC_API tc_status tc_outset_done(tc_outset *s, int index, int ok, int err);
/*! tc_outset_write(): open, write len bytes of data, and done, for output index. */
TC_API tc_status tc_outset_write(tc_outset *s, int index, const void *data, size_t len);
/*! tc_outset_commit(): rename every temporary into place (all must be done). */
TC_API tc_status tc_outset_commit(tc_outset *s);
/*! tc_outset_errmsg(): the last failed call's message ("error: ...\n"), or
 *  "" if none.  Owned by s. */
TC_API const char *tc_outset_errmsg(const tc_outset *s);
/*! tc_outset_free(): close what is open, remove uncommitted temporaries,
 *  free.  NULL is fine. */
TC_API void tc_outset_free(tc_outset *s);

/* One stage of the compiler (src/driver/stages.def), as `tensorc compile
 * --emit` and tc_program_dump name it. */
typedef struct tc_stage_desc {
    const char *name;           /* "ast", "graph", ..., "ptx", "cubin" */
    int emit;                   /* nonzero: `tensorc compile --emit` accepts it */
    int binary;                 /* nonzero: NVRTC's output (bytes, not a text dump) */
    const char *what;           /* what runs in it ("lower_fn and lir_verify") */
} tc_stage_desc;

/*! tc_stage_list(): the compiler's stages in the order they run; *n of
 *  them (static storage). */
TC_API const tc_stage_desc *tc_stage_list(size_t *n);

/* How a tc_program_image_ex call went. */
typedef struct tc_image_info {
    int jit_origin;             /* as tc_run_info.jit_origin: 0 this context's memory,
                                   1 the disk cache, 2 NVRTC */
    const char *name;           /* the unit's name NVRTC saw ("f.tc.softmax.cu"); owned
                                   by the context */
} tc_image_info;

/*! tc_program_image_ex(): tc_program_image, filling *info (NULL: none),
 *  with TENSORC_DEBUG's line for the ptx or cubin stage. */
TC_API tc_status tc_program_image_ex(tc_program *p, const char *fn, const tc_arg *dtypes,
                                     size_t ndtypes, int arch, tc_image_kind kind,
                                     const void **image, size_t *len, tc_image_info *info);

/*! tc_ctx_cache_warning(): one line about the context's kernel cache
 *  ("kernel cache disabled: cannot create '/x': Not a directory"), or NULL
 *  in *warning; makes the context's kernel cache (as tc_program_image
 *  would) if no call has.  Owned by the context.  @return TC_OK, TC_ERR_NOMEM. */
TC_API tc_status tc_ctx_cache_warning(tc_ctx *ctx, const char **warning);

/* The kernel cache on disk, for `tensorc cache` and `tensorc doctor`. */
typedef struct tc_cache tc_cache;
/*! tc_cache_open(): the cache in dir (NULL: as tc_options.cache_dir says);
 *  an unusable directory gives a disabled cache (tc_cache_warning says
 *  why).  NULL only when out of memory. */
TC_API tc_cache *tc_cache_open(const char *dir);
TC_API void tc_cache_close(tc_cache *c);
/* The directory, resolved; NULL if none could be. */
TC_API const char *tc_cache_path(const tc_cache *c);
/* One line to print about the cache, or NULL. */
TC_API const char *tc_cache_warning(const tc_cache *c);
TC_API int tc_cache_enabled(const tc_cache *c);
TC_API void tc_cache_stats(tc_cache *c, uint64_t *entries, uint64_t *bytes, uint64_t *max_bytes);
/*! tc_cache_clear(): remove every entry; how many were removed. */
TC_API size_t tc_cache_clear(tc_cache *c);

/*! tc_doctor(): what this process finds of CUDA, one line per part (the
 *  driver and each GPU, NVRTC, cuBLAS, the kernel cache: where each came
 *  from and its version, or where it was looked for and why it failed),
 *  then whether --device=cuda can run, as `tensorc doctor` prints it.
 *  *usable: nonzero when a driver, a GPU and NVRTC are there.  @return the
 *  text (free() it), or NULL when out of memory. */
TC_API char *tc_doctor(int *usable);

/* --- unstable: for bench/ --- */

/*! tc_value_encode(): v rounded to dtype as the reference interpreter rounds
 *  it (floats to nearest even; integers truncated and wrapped; bool v != 0)
 *  and stored at p as device buffers hold it (host byte order; f16 and bf16
 *  as their 16 bits, bool one byte).  A dtype tensorc lacks stores nothing. */
TC_API void tc_value_encode(DLDataType dtype, double v, void *p);
/*! tc_value_encode_int(): an integer v stored at p as dtype (integers wrapped,
 *  bool v != 0, floats rounded), exactly where v fits the dtype: an i64 beyond
 *  2^53 keeps every bit. */
TC_API void tc_value_encode_int(DLDataType dtype, long long v, void *p);
/*! tc_value_cast(): the element of dtype `from` at src stored at dst as dtype
 *  `to`, converted as the language's casts convert (a float to an integer
 *  truncates and saturates, NaN gives 0; integers wrap; bool is v != 0).
 *  Nothing is stored for a dtype tensorc lacks. */
TC_API void tc_value_cast(DLDataType to, void *dst, DLDataType from, const void *src);
/*! tc_value_decode(): the element of dtype at p (0 for a dtype tensorc lacks). */
TC_API double tc_value_decode(DLDataType dtype, const void *p);
/*! tc_value_decode_int(): an integer or bool element, exactly. */
TC_API long long tc_value_decode_int(DLDataType dtype, const void *p);
/*! tc_value_diff(): how far a computed element got is from the reference's
 *  want, as --check and tc-bench measure it: |got - want|, 0 when both are
 *  NaN or the same infinity, infinite when only one is NaN or infinite. */
TC_API double tc_value_diff(double got, double want);
/*! tc_function_computes_in(): *yes nonzero when some value of fn (NULL: the
 *  file's only function) - a parameter, an operation's result, an output -
 *  has dtype.  @return TC_OK; TC_ERR_NOT_FOUND; compile errors. */
TC_API tc_status tc_function_computes_in(tc_program *p, const char *fn, DLDataType dtype,
                                         int *yes);
/*! tc_function_computes_in_ex(): tc_function_computes_in for fn built with
 *  dtype bindings (as tc_program_function_ex takes them). */
TC_API tc_status tc_function_computes_in_ex(tc_program *p, const char *fn, const tc_arg *dtypes,
                                            size_t ndtypes, DLDataType dtype, int *yes);

#endif /* TC_UNSTABLE_API */

#ifdef __cplusplus
}
#endif
#endif
