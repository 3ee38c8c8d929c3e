/* compile_and_dump.c - the smallest useful program on tensorc's C API.
 *
 * Compiles a .tc file and prints one stage (default: the op graph) of every
 * function, or of one function.  On an error in the program it prints the
 * located message (file:line:col, the source line and a caret) and exits 1;
 * a usage error exits 2.
 *
 *   compile_and_dump FILE.tc [STAGE [FN]]
 *
 * STAGE is one of the text stages of tc_program_dump: ast, graph (the
 * default), lowered, fused, sched, cuda.
 *
 * Build: examples/c/Makefile or examples/c/CMakeLists.txt (README.md).
 */
#include <stdio.h>
#include <string.h>

#include "tensorc.h"

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4 || strcmp(argv[1], "--help") == 0) {
        fprintf(stderr, "usage: %s FILE.tc [STAGE [FN]]\n"
                        "  STAGE: ast | graph (default) | lowered | fused | sched | cuda\n",
                argv[0]);
        return 2;
    }
    const char *path = argv[1];
    const char *stage = argc > 2 ? argv[2] : "graph";
    const char *fn = argc > 3 ? argv[3] : NULL;

    tc_ctx *ctx = NULL;
    tc_status st = tc_ctx_create(&ctx);
    if (st != TC_OK) {
        fprintf(stderr, "tensorc: cannot create a context: %s\n", tc_status_str(st));
        return 1;
    }

    int rc = 0;
    tc_program *prog = NULL;
    const char *text = NULL;
    st = tc_compile_file(ctx, path, &prog);
    if (st == TC_OK)
        st = tc_program_dump(prog, stage, fn, &text);
    if (st == TC_OK) {
        fputs(text, stdout);
    } else {
        /* The message is already located and formatted; add the status name
         * when there is no message (should not happen, but never print nothing). */
        const char *msg = tc_errmsg(ctx);
        if (msg[0] != '\0')
            fprintf(stderr, "%s%s", msg, msg[strlen(msg) - 1] == '\n' ? "" : "\n");
        else
            fprintf(stderr, "%s: %s\n", path, tc_status_str(st));
        rc = 1;
    }

    tc_program_free(prog);
    tc_ctx_free(ctx);
    return rc;
}
