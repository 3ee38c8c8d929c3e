/* arena.c - chunked bump allocator; see arena.h. */
#include "arena.h"
#include "diag.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char mem[];
} chunk;

struct tc_arena {
    chunk *head;
    struct tc_diag *diag;
    size_t total;
};

enum { CHUNK_MIN = 64 * 1024 };

tc_arena *arena_new(struct tc_diag *d)
{
    tc_arena *a = calloc(1, sizeof *a);
    if (a)
        a->diag = d;
    return a;
}

void arena_free(tc_arena *a)
{
    if (!a)
        return;
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void arena_reset(tc_arena *a)
{
    size_t cap = 0;
    int n = 0;
    for (chunk *c = a->head; c; c = c->next, n++)
        cap += c->cap;
    a->total = 0;
    if (n == 1) {
        a->head->used = 0;
        return;
    }
    for (chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    /* one chunk as large as all of them: the next use of the same size
     * allocates nothing (if this fails, the next arena_alloc tries again) */
    a->head = n ? malloc(sizeof(chunk) + cap) : NULL;
    if (a->head) {
        a->head->next = NULL;
        a->head->used = 0;
        a->head->cap = cap;
    }
}

void *arena_alloc_uninit(tc_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    chunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > CHUNK_MIN ? size : CHUNK_MIN;
        c = malloc(sizeof *c + cap);
        if (!c) {
            if (a->diag)
                diag_fatal(a->diag, "out of memory (arena request of %zu bytes)", size);
            abort(); /* no diagnostics sink: nothing sane to return */
        }
        c->used = 0;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->mem + c->used;
    c->used += size;
    a->total += size;
    return p;
}

void *arena_alloc(tc_arena *a, size_t size)
{
    void *p = arena_alloc_uninit(a, size);
    memset(p, 0, (size + 15) & ~(size_t)15);
    return p;
}

size_t arena_bytes(const tc_arena *a) { return a->total; }

static void too_big(tc_arena *a, size_t elems)
{
    if (a->diag)
        diag_fatal(a->diag, "out of memory (a growing array past %zu elements)", elems);
    abort(); /* as arena_alloc: no diagnostics sink */
}

/* Doubling from *cap (or first, when *cap is 0) until need fits; the old
 * block's first n bytes are copied and it is abandoned.  The one growth
 * rule, shared by arena_grow and the string buffer. */
static void *grow_bytes(tc_arena *a, void *v, size_t n, size_t need, size_t *cap, size_t first, bool zero)
{
    size_t c = *cap ? *cap : first;
    while (c < need) {
        if (c > SIZE_MAX / 4)
            too_big(a, c);
        c *= 2;
    }
    unsigned char *nv = zero ? arena_alloc(a, c) : arena_alloc_uninit(a, c);
    if (n)
        memcpy(nv, v, n);
    *cap = c;
    return nv;
}

void *arena_grow(tc_arena *a, void *v, size_t size, int n, int *cap, int first)
{
    if (n < *cap)
        return v;
    size_t c = *cap ? 2 * (size_t)*cap : (size_t)(first > 0 ? first : 1);
    if (c > (size_t)INT_MAX || size > SIZE_MAX / 4 / c)
        too_big(a, (size_t)*cap);
    size_t bytes = 0;
    void *nv = grow_bytes(a, v, (size_t)n * size, c * size, &bytes, c * size, true);
    *cap = (int)c;
    return nv;
}

char *arena_strndup(tc_arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(tc_arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(tc_arena *a, const char *fmt, ...)
{
    tc_buf b;
    buf_init(&b, a);
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return b.data;
}

void buf_init(tc_buf *b, tc_arena *a)
{
    b->a = a;
    b->len = 0;
    b->cap = 64;
    b->data = arena_alloc_uninit(a, b->cap); /* text: only up to len + 1 is ever read */
    b->data[0] = 0;
}

static void buf_reserve(tc_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    b->data = grow_bytes(b->a, b->data, b->len + 1, b->len + extra + 1, &b->cap, 64, false);
}

/* One vsnprintf into the room left where the text fits (nearly always: codegen
 * prints a kernel a line at a time), a second only when the buffer must grow;
 * measuring first took half of a small program's compile time. */
void buf_vprintf(tc_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->data + b->len, room, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->data[b->len] = 0;
        return;
    }
    if ((size_t)n >= room) {
        buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    }
    b->len += (size_t)n;
}

void buf_printf(tc_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void buf_puts(tc_buf *b, const char *s)
{
    size_t n = strlen(s);
    buf_reserve(b, n);
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

void buf_putc(tc_buf *b, char c)
{
    buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = 0;
}

const char *buf_str(tc_buf *b) { return b->data; }
