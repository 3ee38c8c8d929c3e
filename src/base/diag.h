/* diag.h - the one diagnostics module.
 *
 * Every token, AST node and graph node carries a tc_loc, so an error found in
 * any pass points at the user's source.  An error is formatted once, in the
 * style of chibicc and the language spec:
 *
 *     rmsnorm.tc:3:22: error: shapes f32[N, D] and f32[N] do not broadcast (dim -1: D vs N)
 *         return x * rsqrt(ms) * g
 *                          ^
 *
 * An error with a known fix adds a line "    hint: ..." after the caret
 * (diag_error_hint).
 *
 * and then unwinds with longjmp to the protected call at the API boundary
 * (like Lua's luaD_throw), which returns the status.  Library code never
 * calls exit().  While a call is being inlined, its call site is pushed so the
 * message ends with "note: in call to 'f' from here" lines.
 */
#ifndef TC_DIAG_H
#define TC_DIAG_H

#include <setjmp.h>
#include <stddef.h>
#include <stdarg.h>

#include "tensorc.h"

/* A source text: a user file, a string handed to tc_compile, or a prelude file. */
typedef struct tc_source {
    const char *name; /* as shown in messages, e.g. "examples/softmax.tc" or "<prelude>/softmax.tc" */
    const char *text; /* NUL-terminated */
    size_t len;
} tc_source;

/* A position in a source: 1-based line and column (bytes).  line 0 = unknown. */
typedef struct tc_loc {
    const tc_source *src;
    int line, col;
} tc_loc;

enum { DIAG_MAX_CALLS = 64 };

typedef struct tc_diag {
    jmp_buf *jb;            /* where diag_error unwinds to; NULL is a programming error */
    tc_status status;       /* status of the last error */
    tc_loc loc;             /* location of the last error (line 0 if none) */
    char *msg;              /* full text of the last error (malloc'd, owned here) */
    char *brief;            /* the message alone, without location, source line and notes */
    struct { tc_loc loc; const char *callee; } calls[DIAG_MAX_CALLS];
    int ncalls;             /* inlining stack, innermost last */
} tc_diag;

void diag_init(tc_diag *d);
void diag_release(tc_diag *d);   /* frees msg; the struct may be reused */
void diag_clear(tc_diag *d);     /* forget the last error */

/* Format a located error and unwind to d->jb with the given status. */
_Noreturn void diag_error(tc_diag *d, tc_status st, tc_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* diag_error with a hint line after the caret ("    hint: write sum(x, 1)"),
 * for mistakes with a known fix (a PyTorch habit): the brief stays the
 * message alone. */
_Noreturn void diag_error_hint(tc_diag *d, tc_status st, tc_loc loc, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
_Noreturn void diag_verror(tc_diag *d, tc_status st, tc_loc loc, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
/* An error with no source location (out of memory, I/O, ...). */
_Noreturn void diag_fatal(tc_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record an error without unwinding (for callers that return a status themselves). */
tc_status diag_set(tc_diag *d, tc_status st, tc_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Run body(arg) with diag_error unwinding back here: the error's status
 * (TC_ERR_INTERNAL if it set none), or TC_OK.  The API's boundary. */
tc_status diag_protect(tc_diag *d, void (*body)(void *), void *arg);

void diag_push_call(tc_diag *d, tc_loc site, const char *callee);
void diag_pop_call(tc_diag *d);

/* "file:line:col" for a location, into buf (for dumps and notes). */
const char *loc_str(tc_loc loc, char *buf, size_t n);

#endif
