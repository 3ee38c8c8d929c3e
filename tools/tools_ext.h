/* tools_ext.h - the CLI's output formats beside the text ones (cli.h is the
 * driver's common header; this one is for the files that render and
 * serialize):
 *
 *   dot_render.c  --emit=dot -o g.svg|g.png|g.pdf through graphviz's dot
 * (--json's documents are written in the library: src/api/api_json.c and
 * tc_program_dump_json, so tools/ hold no JSON writer of their own.)
 */
#ifndef TC_TOOLS_EXT_H
#define TC_TOOLS_EXT_H

#include "cli.h"

/* tensorc.c: write data to path through tc_outset (whole or not at all);
 * EXIT_OK or EXIT_ERROR with a message. */
int cli_write_out(const char *path, const void *data, size_t len);

/* --- dot_render.c --- */

/* "svg", "png" or "pdf" when -o OUT names a picture by its extension, else
 * NULL (the graph's text is written). */
const char *dot_format(const char *out);
/* Whether an executable `dot` is on PATH. */
bool dot_found(void);
/* Run `dot -T<fmt>` over text and write the picture to out; EXIT_OK, or a
 * message and EXIT_ERROR (dot failed) or EXIT_ENV (it could not run). */
int dot_render(const char *text, const char *fmt, const char *out);

#endif
