/* tools_ext.h - the CLI's output formats beside the text ones (cli.h is the
 * driver's common header; this one is for the files that render and
 * serialize):
 *
 *   dot_render.c  --emit=dot -o g.svg|g.png|g.pdf through graphviz's dot
 *   json_out.c    --json: explain, the launch plan, run --bench, cache stats
 */
#ifndef TC_TOOLS_EXT_H
#define TC_TOOLS_EXT_H

#include "cli.h"
#include "json.h"

/* tensorc.c: write data to path through outfile.h (whole or not at all);
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

/* --- json_out.c --- */

/* run --bench --json: the document of docs/schema/bench.json on stdout.
 * ms holds `runs` rows of plan->nsteps step times and then the whole run's
 * (milliseconds, after `warmup` runs); step_bytes[i] the bytes step i
 * moves, -1 if unknown. */
int bench_json(const char *what, const char *device, const struct tc_plan *plan,
               const int64_t *step_bytes, const float *ms, int runs, int warmup);
/* cache stats --json (docs/schema/cache-stats.json). */
int cache_stats_json(const char *dir, uint64_t entries, uint64_t bytes, uint64_t max);

#endif
