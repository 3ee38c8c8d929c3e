/* diag.c - error formatting with source line and caret; see diag.h. */
#include "diag.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void diag_init(tc_diag *d) { memset(d, 0, sizeof *d); }

void diag_clear(tc_diag *d)
{
    free(d->msg);
    free(d->brief);
    d->msg = d->brief = NULL;
    d->status = TC_OK;
    d->loc = (tc_loc){0};
}

void diag_release(tc_diag *d) { diag_clear(d); }

const char *loc_str(tc_loc loc, char *buf, size_t n)
{
    if (loc.src && loc.line > 0)
        snprintf(buf, n, "%s:%d:%d", loc.src->name, loc.line, loc.col);
    else if (loc.src)
        snprintf(buf, n, "%s", loc.src->name);
    else
        snprintf(buf, n, "<unknown>");
    return buf;
}

/* The source line holding loc, then a caret under its column.  Tabs before
 * the column are copied so the caret lines up in a terminal. */
static void show_line(tc_strbuf *b, tc_loc loc)
{
    if (!loc.src || !loc.src->text || loc.line <= 0)
        return;
    const char *p = loc.src->text, *end = p + loc.src->len;
    for (int l = 1; l < loc.line && p < end; p++)
        if (*p == '\n')
            l++;
    if (p >= end && loc.line > 1)
        return;
    const char *e = p;
    while (e < end && *e != '\n' && *e != '\r')
        e++;
    int len = (int)(e - p);
    /* A minified megabyte line helps nobody: show a window of it around
     * the column, marked with "..." where it was cut. */
    int start = 0;
    if (len > 400 && loc.col > 380)
        start = loc.col - 200;
    if (len - start > 400)
        len = start + 400;
    const char *cut = start ? "..." : "";
    strbuf_printf(b, "    %s%.*s\n    %*s", cut, len - start, p + start, start ? 3 : 0, "");
    for (int i = start + 1; i < loc.col; i++)
        strbuf_printf(b, "%c", (i - 1 < len && p[i - 1] == '\t') ? '\t' : ' ');
    strbuf_printf(b, "^\n");
}

static void format(tc_diag *d, tc_status st, tc_loc loc, const char *hint, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
static void format(tc_diag *d, tc_status st, tc_loc loc, const char *hint, const char *fmt, va_list ap)
{
    tc_strbuf brief = {0}, full = {0};
    va_list ap2;
    va_copy(ap2, ap);
    strbuf_vprintf(&brief, fmt, ap2);
    va_end(ap2);
    char where[512];
    if (loc.src)
        strbuf_printf(&full, "%s: error: %s\n", loc_str(loc, where, sizeof where), brief.s ? brief.s : "");
    else
        strbuf_printf(&full, "error: %s\n", brief.s ? brief.s : "");
    show_line(&full, loc);
    if (hint)
        strbuf_printf(&full, "    hint: %s\n", hint);
    int ncalls = d->ncalls < DIAG_MAX_CALLS ? d->ncalls : DIAG_MAX_CALLS;
    for (int i = ncalls - 1; i >= 0; i--) {
        strbuf_printf(&full, "%s: note: in call to '%s' from here\n",
                  loc_str(d->calls[i].loc, where, sizeof where), d->calls[i].callee);
        show_line(&full, d->calls[i].loc);
    }
    diag_clear(d);
    d->msg = full.s;
    d->brief = brief.s;
    d->status = st;
    d->loc = loc;
}

tc_status diag_set(tc_diag *d, tc_status st, tc_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format(d, st, loc, NULL, fmt, ap);
    va_end(ap);
    return st;
}

_Noreturn void diag_error_hint(tc_diag *d, tc_status st, tc_loc loc, const char *hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format(d, st, loc, hint, fmt, ap);
    va_end(ap);
    if (!d->jb)
        abort(); /* a pass ran outside a protected call: a bug in tensorc */
    longjmp(*d->jb, 1);
}

_Noreturn void diag_verror(tc_diag *d, tc_status st, tc_loc loc, const char *fmt, va_list ap)
{
    format(d, st, loc, NULL, fmt, ap);
    if (!d->jb)
        abort(); /* a pass ran outside a protected call: a bug in tensorc */
    longjmp(*d->jb, 1);
}

_Noreturn void diag_error(tc_diag *d, tc_status st, tc_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_verror(d, st, loc, fmt, ap);
}

_Noreturn void diag_fatal(tc_diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_verror(d, TC_ERR_NOMEM, (tc_loc){0}, fmt, ap);
}

void diag_push_call(tc_diag *d, tc_loc site, const char *callee)
{
    if (d->ncalls < DIAG_MAX_CALLS) {
        d->calls[d->ncalls].loc = site;
        d->calls[d->ncalls].callee = callee;
    }
    d->ncalls++;
}

void diag_pop_call(tc_diag *d)
{
    if (d->ncalls > 0)
        d->ncalls--;
}

tc_status diag_protect(tc_diag *d, void (*body)(void *), void *arg)
{
    jmp_buf jb;
    jmp_buf *saved = d->jb;
    d->jb = &jb;
    if (setjmp(jb)) {
        d->jb = saved;
        return d->status != TC_OK ? d->status : TC_ERR_INTERNAL;
    }
    body(arg);
    d->jb = saved;
    return TC_OK;
}
