/* strbuf.c - see strbuf.h. */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>

void strbuf_vprintf(tc_strbuf *b, const char *fmt, va_list ap)
{
    /* one pass where the text fits the room left (arena.c's buf_vprintf) */
    va_list ap2;
    va_copy(ap2, ap);
    size_t room = b->cap > b->len ? b->cap - b->len : 0;
    int n = vsnprintf(room ? b->s + b->len : NULL, room, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        if (room)
            b->s[b->len] = 0;
        return;
    }
    if ((size_t)n < room) {
        b->len += (size_t)n;
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            if (room)
                b->s[b->len] = 0;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void strbuf_printf(tc_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(b, fmt, ap);
    va_end(ap);
}
