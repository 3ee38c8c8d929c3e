/* json.c - just enough JSON for tc-bench: a writer into a growing string
 * (sbuf, in bench.h), one member per line at the outer levels so a person can read
 * the file, and a finder for a number in a child's output.  Numbers that
 * are not finite are written as null (JSON has no NaN).
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_vprintf(sbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s)
            return;
        b->s = s;
        b->cap = cap;
    }
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

/* Before a value or a key: the comma, and a newline at the outer levels. */
static void sep(json *j)
{
    if (j->depth > 0 && !j->first[j->depth])
        sb_printf(&j->b, ",");
    if (j->depth > 0 && j->depth <= 2)
        sb_printf(&j->b, "\n%*s", 2 * j->depth, "");
    else if (j->depth > 0 && !j->first[j->depth])
        sb_printf(&j->b, " ");
    if (j->depth < (int)(sizeof j->first / sizeof *j->first))
        j->first[j->depth] = false;
}

/* A value directly after its key takes no separator. */
static void value_start(json *j)
{
    if (j->after_key)
        j->after_key = false;
    else
        sep(j);
}

static void open(json *j, const char *c)
{
    value_start(j);
    sb_printf(&j->b, "%s", c);
    if (j->depth + 1 < (int)(sizeof j->first / sizeof *j->first))
        j->first[++j->depth] = true;
}

static void close_(json *j, const char *c)
{
    bool empty = j->first[j->depth];
    j->depth--;
    if (!empty && j->depth < 2)
        sb_printf(&j->b, "\n%*s", 2 * j->depth, "");
    sb_printf(&j->b, "%s", c);
}

void json_obj(json *j) { open(j, "{"); }
void json_end_obj(json *j) { close_(j, "}"); }
void json_arr(json *j) { open(j, "["); }
void json_end_arr(json *j) { close_(j, "]"); }

static void quoted(json *j, const char *s)
{
    sb_printf(&j->b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            sb_printf(&j->b, "\\%c", *p);
        else if (*p == '\n')
            sb_printf(&j->b, "\\n");
        else if (*p == '\t')
            sb_printf(&j->b, "\\t");
        else if (*p < 0x20)
            sb_printf(&j->b, "\\u%04x", *p);
        else
            sb_printf(&j->b, "%c", *p);
    }
    sb_printf(&j->b, "\"");
}

void json_key(json *j, const char *k)
{
    sep(j);
    quoted(j, k);
    sb_printf(&j->b, ": ");
    j->after_key = true;
}

void json_str(json *j, const char *s)
{
    value_start(j);
    if (s)
        quoted(j, s);
    else
        sb_printf(&j->b, "null");
}

void json_num(json *j, double v)
{
    value_start(j);
    if (isfinite(v))
        sb_printf(&j->b, "%.6g", v);
    else
        sb_printf(&j->b, "null");
}

void json_int(json *j, long long v)
{
    value_start(j);
    sb_printf(&j->b, "%lld", v);
}

void json_bool(json *j, bool v)
{
    value_start(j);
    sb_printf(&j->b, "%s", v ? "true" : "false");
}

void json_null(json *j)
{
    value_start(j);
    sb_printf(&j->b, "null");
}

void json_raw(json *j, const char *text)
{
    value_start(j);
    /* re-indented to sit at this depth; no newline is inside a JSON string */
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
        n--;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\n')
            sb_printf(&j->b, "\n%*s", 2 * j->depth, "");
        else
            sb_printf(&j->b, "%c", text[i]);
    }
}

void json_kstr(json *j, const char *k, const char *s) { json_key(j, k); json_str(j, s); }
void json_knum(json *j, const char *k, double v) { json_key(j, k); json_num(j, v); }
void json_kint(json *j, const char *k, long long v) { json_key(j, k); json_int(j, v); }
void json_kbool(json *j, const char *k, bool v) { json_key(j, k); json_bool(j, v); }

/* The text after "key": (spaces skipped), or NULL. */
static const char *find_value(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text ? strchr(text, '"') : NULL; p; p = strchr(p + 1, '"')) {
        if (strncmp(p + 1, key, n) != 0 || p[n + 1] != '"')
            continue;
        const char *v = p + n + 2;
        while (*v == ' ')
            v++;
        if (*v != ':')
            continue;
        v++;
        while (*v == ' ')
            v++;
        return v;
    }
    return NULL;
}

double json_find_num(const char *text, const char *key)
{
    const char *v = find_value(text, key);
    char *end;
    double x = v ? strtod(v, &end) : NAN;
    return v && end != v ? x : NAN;
}

bool json_find_bool(const char *text, const char *key, bool *out)
{
    const char *v = find_value(text, key);
    if (v && strncmp(v, "true", 4) == 0)
        return *out = true, true;
    if (v && strncmp(v, "false", 5) == 0)
        return *out = false, true;
    return false;
}

bool json_balanced(const char *text)
{
    int depth = 0;
    bool in_str = false, seen = false;
    for (const char *p = text; p && *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_str = false;
        } else if (*p == '"') {
            in_str = true;
        } else if (*p == '{' || *p == '[') {
            depth++;
            seen = true;
        } else if (*p == '}' || *p == ']') {
            if (--depth < 0)
                return false;
        }
    }
    return seen && depth == 0 && !in_str;
}
