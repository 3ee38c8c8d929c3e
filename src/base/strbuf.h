/* strbuf.h - a growing malloc'd string, for text that must outlive every
 * arena (diagnostics kept in the context, the reasons a library did not
 * load).  On out of memory it stops growing: the text gets shorter,
 * nothing breaks.  The caller frees s. */
#ifndef TC_STRBUF_H
#define TC_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct tc_strbuf {
    char *s; /* NULL until something is added */
    size_t len, cap;
} tc_strbuf;

void strbuf_vprintf(tc_strbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void strbuf_printf(tc_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
