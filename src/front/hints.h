/* hints.h - hints for syntax errors that come from Python and PyTorch
 * habits (x.sum(1), torch.exp(x), x.float(), 'and', 'not', 'def'), for the
 * parser's error path (parser.y's yyreport_syntax_error).  The advice goes
 * on a "hint:" line under the caret (diag_error_hint); the error itself is
 * the parser's.  Hints for names and keywords that parse but mean nothing
 * here (True, dim=) are given where names are resolved (src/graph). */
#ifndef TC_HINTS_H
#define TC_HINTS_H

#include <stdbool.h>

#include "arena.h"
#include "diag.h"

/* A token as the hint sees it: its text in the source, and whether it is a
 * name or '('. */
typedef struct hint_tok {
    const char *text;   /* into src->text; NULL before the first token */
    int len;
    bool name, lparen;
} hint_tok;

/* The hint for a syntax error at cur (prev the token before it), or NULL. */
const char *front_hint(tc_arena *a, const tc_source *src, hint_tok prev, hint_tok cur);

#endif
