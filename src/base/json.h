/* json.h - a small JSON writer over an arena buffer, for --json (the CLI's
 * explain, launch plan, run --bench and cache stats; docs/json.md).
 *
 * Values are written in order, the commas, colons and indentation placed
 * by the writer, so a caller cannot produce malformed text by forgetting
 * one: open an object or array, write keys and values, close it.  Strings
 * are escaped as RFC 8259 requires (quote, backslash, control characters
 * as \n, \t or \u00XX; bytes >= 0x80 pass through, so UTF-8 stays UTF-8).
 * A number that is NaN or infinite has no JSON spelling and is written as
 * null.  Nesting deeper than JSON_MAX_DEPTH is a programming error (the
 * writer stops indenting, the text stays valid).
 *
 *     tc_json j;
 *     jw_init(&j, &buf);
 *     jw_obj(&j);
 *     jw_key(&j, "entries"); jw_int(&j, 3);
 *     jw_end(&j);                             {"entries": 3} over lines
 */
#ifndef TC_JSON_H
#define TC_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"

enum { JSON_MAX_DEPTH = 32 };

typedef struct tc_json {
    tc_buf *b;
    int depth;
    bool first[JSON_MAX_DEPTH]; /* nothing written yet at this level */
    char close[JSON_MAX_DEPTH]; /* '}' or ']': what closes this level */
    bool key;                   /* a key was written: its value comes next */
} tc_json;

void jw_init(tc_json *j, tc_buf *b);
void jw_obj(tc_json *j);      /* { */
void jw_arr(tc_json *j);      /* [ */
void jw_end(tc_json *j);      /* closes the innermost object or array */
void jw_key(tc_json *j, const char *k);
void jw_str(tc_json *j, const char *s);   /* NULL is null */
void jw_int(tc_json *j, int64_t v);
void jw_num(tc_json *j, double v);
void jw_bool(tc_json *j, bool v);
void jw_null(tc_json *j);
/* Write s as a JSON string (quotes included) to b. */
void jw_quote(tc_buf *b, const char *s);

#endif
