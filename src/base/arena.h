/* arena.h - bump allocation for one compilation.
 *
 * Every object a compilation makes (tokens, AST, graph, dims, dump text) lives
 * in one arena and is dropped with it, so passes never free and never leak.
 * Long-lived state (kernel cache, modules) belongs to the context instead.
 * Allocation failure is reported through the diagnostics longjmp, so callers
 * never check for NULL.
 */
#ifndef TC_ARENA_H
#define TC_ARENA_H

#include <stddef.h>
#include <stdarg.h>

typedef struct tc_arena tc_arena;
struct tc_diag;

tc_arena *arena_new(struct tc_diag *d);     /* d receives out-of-memory errors; may be NULL */
void arena_free(tc_arena *a);
/* Drop everything allocated, keeping the memory (one chunk as large as all
 * of them) for the next use: scratch for calls made again and again. */
void arena_reset(tc_arena *a);
void *arena_alloc(tc_arena *a, size_t size);  /* zeroed, aligned to 16 */
/* Not zeroed: for large scratch arrays a hot path fills itself. */
void *arena_alloc_uninit(tc_arena *a, size_t size);
#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))
/* The one growable array: v holds n elements of size bytes in a block of
 * *cap.  While n < *cap, returns v; else a zeroed block of twice *cap (or
 * first, when *cap is 0) with v's n elements copied in, and updates *cap.
 * The old block is abandoned in the arena, so n pushes cost O(n) in all.
 * A capacity past INT_MAX is reported as out of memory.  Use ARENA_GROW:
 *     ARENA_GROW(a, l->v, l->n, l->cap, 8);
 *     l->v[l->n++] = x;                                                   */
void *arena_grow(tc_arena *a, void *v, size_t size, int n, int *cap, int first);
#define ARENA_GROW(a, v, n, cap, first) \
    ((v) = arena_grow((a), (v), sizeof *(v), (n), &(cap), (first)))
char *arena_strdup(tc_arena *a, const char *s);
char *arena_strndup(tc_arena *a, const char *s, size_t n);
char *arena_printf(tc_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
size_t arena_bytes(const tc_arena *a);        /* bytes handed out, for limits and stats */

/* A growable byte buffer in the arena, for dumps and messages. */
typedef struct {
    tc_arena *a;
    char *data;
    size_t len, cap;
} tc_buf;

void buf_init(tc_buf *b, tc_arena *a);
void buf_puts(tc_buf *b, const char *s);
void buf_putc(tc_buf *b, char c);
void buf_printf(tc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(tc_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
const char *buf_str(tc_buf *b);               /* NUL-terminated; stays valid with the arena */

#endif
