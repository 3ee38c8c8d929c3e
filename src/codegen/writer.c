/* writer.c - the text codegen builds, a line at a time: blocks of
 * indented lines (cg_block: statements collected per scope, placed later)
 * and the indenting writer (cg_w) the strategies write their fixed loop
 * text through, so no strategy spells out its indentation (cg.h).
 */
#include "codegen/cg.h"

#include <stdarg.h>
#include <string.h>

void cg_block_add(cg_block *b, tc_arena *a, int ind, const char *text)
{
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 32;
        cg_ln *v = ARENA_ARRAY(a, cg_ln, cap);
        if (b->n)
            memcpy(v, b->v, sizeof *v * (size_t)b->n);
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = (cg_ln){ind, text};
}

void cg_block_cat(cg_block *b, tc_arena *a, const cg_block *c)
{
    for (int i = 0; i < c->n; i++)
        cg_block_add(b, a, c->v[i].ind, c->v[i].text);
}

void cg_put(tc_buf *o, int ind, const cg_block *b)
{
    for (int i = 0; i < b->n; i++)
        if (b->v[i].ind || b->v[i].text[0])
            buf_printf(o, "%*s%s\n", ind + b->v[i].ind, "", b->v[i].text);
}

/* --- the indenting writer (cg.h) --- */

enum { CG_LEVEL = 4 }; /* spaces a level */

__attribute__((format(printf, 3, 0)))
static void wline(cg_w *w, int ind, const char *fmt, va_list ap)
{
    buf_printf(w->o, "%*s", ind, "");
    buf_vprintf(w->o, fmt, ap);
    buf_putc(w->o, '\n');
}

/* wline over a function's own variadic arguments */
#define WLINE(w, ind, fmt)                                                                          \
    do {                                                                                            \
        va_list ap;                                                                                 \
        va_start(ap, fmt);                                                                          \
        wline(w, ind, fmt, ap);                                                                     \
        va_end(ap);                                                                                 \
    } while (0)

void cg_wl(cg_w *w, const char *fmt, ...) { WLINE(w, w->ind, fmt); }

void cg_wopen(cg_w *w, const char *fmt, ...)
{
    WLINE(w, w->ind, fmt);
    w->ind += CG_LEVEL;
}

void cg_wclose(cg_w *w, const char *fmt, ...)
{
    w->ind -= CG_LEVEL;
    WLINE(w, w->ind, fmt);
}

void cg_wbody(cg_w *w, const char *fmt, ...) { WLINE(w, w->ind + CG_LEVEL, fmt); }

void cg_win(cg_w *w)
{
    w->ind += CG_LEVEL;
}

void cg_wput(cg_w *w, const cg_block *b)
{
    cg_put(w->o, w->ind, b);
}
