/* tensorc.h - the public API of tensorc, a compiler from a small tensor
 * language to fused CUDA kernels.
 *
 * Conventions (in the manner of zstd.h):
 *  - Handles are opaque and come in create/free pairs.
 *  - Every call that can fail returns a tc_status; tc_status_str() names it
 *    and tc_errmsg() gives the last error's full text, which for an error in a
 *    program is "file:line:col: error: ..." followed by the source line and a
 *    caret.  tc_error_loc() gives the location alone.
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

#ifdef __cplusplus
extern "C" {
#endif

#define TC_VERSION_MAJOR 0
#define TC_VERSION_MINOR 1
#define TC_VERSION_PATCH 0
#define TC_VERSION_NUMBER (TC_VERSION_MAJOR * 10000 + TC_VERSION_MINOR * 100 + TC_VERSION_PATCH)
#define TC_VERSION_STRING "0.1.0"

/*! tc_version_number(): the run-time library version, as TC_VERSION_NUMBER. */
unsigned tc_version_number(void);
/*! tc_version_string(): the run-time library version, e.g. "0.1.0". Static storage. */
const char *tc_version_string(void);

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
const char *tc_status_str(tc_status s);

typedef struct tc_ctx tc_ctx;
typedef struct tc_program tc_program;

/*! tc_ctx_create(): make a context.  @return TC_OK and *ctx, or TC_ERR_NOMEM. */
tc_status tc_ctx_create(tc_ctx **ctx);
/*! tc_ctx_free(): free a context; programs made from it must be freed first. NULL is fine. */
void tc_ctx_free(tc_ctx *ctx);

/*! tc_compile(): parse and check a program given as text (len bytes; need not be
 *  NUL-terminated).  filename is used in messages only.  Every function is
 *  checked with calls inlined and the prelude available.
 *  @return TC_OK and *prog (owned by the caller, free with tc_program_free),
 *          or an error status with tc_errmsg(ctx) set and *prog NULL. */
tc_status tc_compile(tc_ctx *ctx, const char *src, size_t len, const char *filename,
                     tc_program **prog);
/*! tc_compile_file(): tc_compile on the contents of a file. */
tc_status tc_compile_file(tc_ctx *ctx, const char *path, tc_program **prog);
void tc_program_free(tc_program *prog);

/*! tc_program_dump(): the text of one stage for one function (fn NULL: all
 *  functions).  stage: "ast", "graph"; later stages give TC_ERR_UNSUPPORTED
 *  until they are built.  *out is owned by prog, valid until the next dump
 *  or tc_program_free. */
tc_status tc_program_dump(tc_program *prog, const char *stage, const char *fn, const char **out);

/*! tc_errmsg(): the last error's full text (empty string if none).  Owned by ctx. */
const char *tc_errmsg(const tc_ctx *ctx);
/*! tc_error_loc(): the last error's location; returns 0 if it had none. Any out pointer may be NULL. */
int tc_error_loc(const tc_ctx *ctx, const char **file, int *line, int *col);

#ifdef __cplusplus
}
#endif
#endif
