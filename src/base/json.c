/* json.c - the JSON writer (json.h).  Each level remembers whether it has
 * written an element and what closes it, so separators, line breaks and
 * closers come from one place. */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void jw_init(tc_json *j, tc_buf *b)
{
    j->b = b;
    j->depth = 0;
    j->first[0] = true;
    j->close[0] = 0;
    j->key = false;
}

static int level(const tc_json *j)
{
    return j->depth < JSON_MAX_DEPTH ? j->depth : JSON_MAX_DEPTH - 1;
}

static void indent(tc_json *j)
{
    buf_putc(j->b, '\n');
    for (int i = 0; i < level(j); i++)
        buf_puts(j->b, "  ");
}

/* Before a value or a key: a comma after the level's earlier element and a
 * new line, unless the value follows its key. */
static void sep(tc_json *j)
{
    if (j->key) {
        j->key = false;
        return;
    }
    if (j->depth == 0)
        return;
    if (!j->first[level(j)])
        buf_putc(j->b, ',');
    j->first[level(j)] = false;
    indent(j);
}

static void open_level(tc_json *j, char open, char close)
{
    sep(j);
    buf_putc(j->b, open);
    j->depth++;
    j->first[level(j)] = true;
    j->close[level(j)] = close;
}

void jw_obj(tc_json *j) { open_level(j, '{', '}'); }
void jw_arr(tc_json *j) { open_level(j, '[', ']'); }

void jw_end(tc_json *j)
{
    if (j->depth == 0)
        return;
    bool empty = j->first[level(j)];
    char close = j->close[level(j)];
    j->depth--;
    if (!empty)
        indent(j);
    buf_putc(j->b, close);
    if (j->depth == 0)
        buf_putc(j->b, '\n');
}

void jw_quote(tc_buf *b, const char *s)
{
    buf_putc(b, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': buf_puts(b, "\\\""); break;
        case '\\': buf_puts(b, "\\\\"); break;
        case '\n': buf_puts(b, "\\n"); break;
        case '\t': buf_puts(b, "\\t"); break;
        case '\r': buf_puts(b, "\\r"); break;
        default:
            if (*c < 0x20 || *c == 0x7f)
                buf_printf(b, "\\u%04x", *c);
            else
                buf_putc(b, (char)*c);
        }
    }
    buf_putc(b, '"');
}

void jw_key(tc_json *j, const char *k)
{
    sep(j);
    jw_quote(j->b, k);
    buf_puts(j->b, ": ");
    j->key = true;
}

void jw_str(tc_json *j, const char *s)
{
    if (!s) {
        jw_null(j);
        return;
    }
    sep(j);
    jw_quote(j->b, s);
}

void jw_int(tc_json *j, int64_t v)
{
    sep(j);
    buf_printf(j->b, "%" PRId64, v);
}

void jw_num(tc_json *j, double v)
{
    if (!isfinite(v)) {
        jw_null(j);
        return;
    }
    sep(j);
    /* the shortest of %.15g..%.17g that reads back as v: 0.1, not
     * 0.10000000000000001 */
    char s[32];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, v);
        if (strtod(s, NULL) == v)
            break;
    }
    buf_puts(j->b, s);
}

void jw_bool(tc_json *j, bool v)
{
    sep(j);
    buf_puts(j->b, v ? "true" : "false");
}

void jw_null(tc_json *j)
{
    sep(j);
    buf_puts(j->b, "null");
}
