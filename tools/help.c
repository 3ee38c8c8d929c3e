/* help.c - the CLI's one description of itself: every subcommand with its
 * synopsis, its text and its options.  Everything that describes the
 * command line reads this table, so they cannot drift apart:
 *
 *   tensorc --help, tensorc CMD --help, tensorc help CMD   (cli_help)
 *   usage errors' usage line                              (args.c)
 *   "did you mean" for a mistyped subcommand or option    (args.c)
 *   the man page tensorc.1 and bash completion, generated at build time
 *   by tensorc-gendoc (gendoc.c) and installed by CMake.
 *
 * The texts are plain lines without indentation; cli_help indents them and
 * the man page fills them as paragraphs (a line starting with "  " stays
 * as it is in both: a list or example).
 */
#include "help.h"

#include <string.h>

static const cli_opt compile_opts[] = {
    {"--fn", "NAME", NULL},
    {"--emit", "STAGE", "@stages"},
    {"-o", "OUT", "@file"},
    {"--arch", "sm_XX", "sm_70 sm_75 sm_80 sm_86 sm_89 sm_90"},
    {"--verbose", NULL, NULL},
    {"--fast-math", NULL, NULL},
    {"--lineinfo", NULL, NULL},
    {"--dtype", "T=DTYPE", NULL},
    {"--json", NULL, NULL},
    {NULL, NULL, NULL},
};

static const cli_opt run_opts_[] = {
    {"--fn", "NAME", NULL},
    {"--shape", "N=64,D=128", NULL},
    {"--input", "NAME=PATH.npy", "@file"},
    {"--output", "NAME=PATH.npy", "@file"},
    {"--groups", "SIZES", NULL},
    {"--device", "cpu|cuda", "cpu cuda"},
    {"--random", NULL, NULL},
    {"--seed", "S", NULL},
    {"--dtype", "T=DTYPE", NULL},
    {"--check", NULL, NULL},
    {"--bench", NULL, NULL},
    {"--json", NULL, NULL},
    {"--verbose", NULL, NULL},
    {"--fast-math", NULL, NULL},
    {"--lineinfo", NULL, NULL},
    {NULL, NULL, NULL},
};

static const cli_opt explain_opts[] = {
    {"--fn", "NAME", NULL},
    {"--json", NULL, NULL},
    {NULL, NULL, NULL},
};

static const cli_opt cache_opts[] = {
    {"--json", NULL, NULL},
    {NULL, NULL, NULL},
};

static const cli_opt no_opts[] = {{NULL, NULL, NULL}};

static const char *const cache_words[] = {"dir", "stats", "clear", NULL};

const cli_cmd cli_cmds[] = {
    {"compile", "check a file and print one stage of it",
     "tensorc compile FILE [--fn NAME] [--emit=STAGE] [-o OUT] [--arch=sm_XX] [--verbose]\n"
     "                       [--fast-math] [--lineinfo] [--dtype T=bf16]... [--json]",
     "Check FILE and print one stage of it (to OUT with -o).  Without --fn,\n"
     "every function in FILE; --fn may also name a prelude function.\n"
     "STAGE: ast | graph | lowered | fused | sched | cuda | plan | explain | dot |\n"
     "ptx | cubin (src/driver/stages.def)\n"
     "(default cuda: the kernels and their launch plan).  ptx and cubin\n"
     "compile every kernel with NVRTC for --arch (default sm_90), through\n"
     "the kernel cache; --verbose says 'cache: hit' or 'cache: miss';\n"
     "--fast-math and --lineinfo pass NVRTC --use_fast_math, -lineinfo.\n"
     "--dtype binds a dtype variable of the entry point (x: T[N, D]);\n"
     "unbound ones are f32.  --emit=dot -o g.svg (or .png, .pdf) draws the\n"
     "kernels with graphviz's dot.  --json (with --emit=plan or explain)\n"
     "prints the stage as JSON (docs/json.md).\n",
     compile_opts, NULL},
    {"run", "run a function on .npy files, on the GPU or the reference interpreter",
     "tensorc run FILE [--fn NAME] [--shape N=64,D=128] [--input NAME=PATH.npy|NAME=VALUE]...\n"
     "                   [--output NAME=PATH.npy]... [--groups SIZES] [--device=cpu|cuda] [--random]\n"
     "                   [--seed S] [--dtype T=bf16]... [--check] [--bench [--json]] [--verbose]\n"
     "                   [--fast-math] [--lineinfo]",
     "Run function NAME (optional when FILE has just one).  Tensors are .npy\n"
     "files; a scalar is a number (or a 0-d .npy).  Symbolic dims are bound\n"
     "from the inputs' shapes, then --shape ('*=COUNT' for [*] tensors).\n"
     "Every input must be given, except scalars with a default.  With\n"
     "--random, inputs not given are seeded random data (--seed, default 0;\n"
     "a note lists them): floats uniform in [-1, 1), integers in [-10, 10),\n"
     "bools 50/50; scalars not given take their default, else a random\n"
     "value in (0, 1] (integers [1, 10]).  Outputs are named as in the\n"
     "signature (a single unnamed result is 'out'; an inout parameter's final\n"
     "value has its own name); those without --output are printed.  bf16\n"
     "tensors travel as f32 .npy.  --dtype T=bf16 binds the dtype variable T\n"
     "of the function (else f32).  --device=cuda (the default when a GPU is\n"
     "present) runs the generated kernels, --device=cpu the reference\n"
     "interpreter.  --check compares a cuda run with the interpreter; --bench\n"
     "times each kernel (GB/s), as JSON with --json (stdout is then the\n"
     "document alone).  --verbose says whether the kernels came from the\n"
     "cache; --fast-math and --lineinfo compile them with NVRTC's\n"
     "--use_fast_math, -lineinfo.  --groups 1000,0,4097 runs an elementwise\n"
     "function (every tensor [*]) over one tensor group per size, in one\n"
     "kernel launch on the GPU; then --input NAME=a.npy,b.npy and --output\n"
     "NAME=a.npy,b.npy take one file per group (an --input list alone sets the\n"
     "groups and sizes), scalars are shared, group i's random inputs are\n"
     "--seed S+i's, and --check compares every group.\n",
     run_opts_, NULL},
    {"explain", "every fusion decision, and why",
     "tensorc explain FILE [--fn NAME] [--json]",
     "Every fusion decision: each pair of kernels' anchors fused or\n"
     "refused, and why; each inlined node; the fusion budget and each\n"
     "kernel's cost.  --json: as JSON (docs/json.md).\n",
     explain_opts, NULL},
    {"cache", "the kernel cache: its directory, statistics, or clear it",
     "tensorc cache dir | stats [--json] | clear",
     "The kernel cache: print its directory; its entries, bytes and bound\n"
     "(as JSON with --json); or remove every entry.  TENSORC_CACHE_DIR (else\n"
     "$XDG_CACHE_HOME/tensorc, else ~/.cache/tensorc) places it,\n"
     "TENSORC_CACHE_MAX_MB bounds it (default 1024; least recently used\n"
     "entries go first).\n",
     cache_opts, cache_words},
    {"doctor", "what tensorc finds: CUDA driver, GPUs, NVRTC, cuBLAS, cache",
     "tensorc doctor",
     "What tensorc finds: the CUDA driver, GPUs, NVRTC, cuBLAS (with\n"
     "paths and versions, or where it looked and why it failed) and the\n"
     "kernel cache.  Exit 0 when --device=cuda can run, 3 if not.\n",
     no_opts, NULL},
    {"help", "this text, or one command's",
     "tensorc help [COMMAND] | tensorc COMMAND --help | tensorc --version",
     "Print this text, or one command's (tensorc run --help).\n",
     no_opts, NULL},
    {NULL, NULL, NULL, NULL, NULL, NULL},
};

const char cli_exit_text[] =
    "0 success; 1 an error in the program or its inputs; 2 a usage\n"
    "error; 3 the environment (no GPU, CUDA runtime missing).\n";

const char cli_env_text[] =
    "TENSORC_DUMP_DIR=DIR writes every text stage to DIR/NAME.STAGE\n"
    "for every compilation; TENSORC_DEBUG=1 prints the time of every stage (NVRTC\n"
    "and the cache included), TENSORC_DEBUG=sched,cuda also those stages;\n"
    "TENSORC_CACHE_DIR places the kernel cache, TENSORC_CACHE_MAX_MB bounds it;\n"
    "TENSORC_LIBCUDA, TENSORC_NVRTC and TENSORC_CUBLAS name the libraries to load.\n";

const cli_cmd *cli_find(const char *name)
{
    for (const cli_cmd *c = cli_cmds; name && c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

/* text with every line indented by n spaces */
static void put_indented(FILE *f, const char *text, int n)
{
    while (*text) {
        size_t len = strcspn(text, "\n");
        fprintf(f, "%*s%.*s\n", len ? n : 0, "", (int)len, text);
        text += len + (text[len] == '\n');
    }
}

void cli_help(FILE *f, const char *cmd)
{
    const cli_cmd *c = cli_find(cmd);
    if (c && strcmp(c->name, "help") != 0) {
        fprintf(f, "usage: %s\n\n", c->synopsis);
        put_indented(f, c->body, 2);
        fprintf(f, "\nRun 'tensorc --help' for every command, the exit statuses and the environment.\n");
        return;
    }
    fprintf(f, "tensorc %s - %s\n\nusage:\n", TC_VERSION_STRING, CLI_WHAT);
    for (c = cli_cmds; c->name; c++) {
        fprintf(f, "  %s\n", c->synopsis);
        put_indented(f, c->body, 6);
        if (c[1].name)
            fputc('\n', f);
    }
    fputs("\nexit status: ", f);
    fputs(cli_exit_text, f);
    fputs("\nenvironment: ", f);
    fputs(cli_env_text, f);
}
