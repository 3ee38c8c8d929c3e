/* doctor.c - `tensorc doctor`: what tensorc finds of CUDA, and why not.
 *
 * One line per part, each found part with where it came from and its
 * version, each missing one with where it was looked for and why it failed
 * (the loaders' own messages, which list every place tried):
 *
 *     driver: /usr/lib/x86_64-linux-gnu/libcuda.so.1 (CUDA 12.8)
 *     gpu 0:  NVIDIA H200, compute capability 9.0, 139.8 GiB, 132 SMs
 *     nvrtc:  /usr/local/cuda/lib64/libnvrtc.so.12 (12.8; sm_50 to sm_120, 17 archs)
 *     cublas: /usr/local/cuda/lib64/libcublas.so.12 (12.8.3)
 *     cache:  /root/.cache/tensorc: yours, mode 0755: used; 12 entries, 3.4 MiB of 1024 MiB
 *     ok: --device=cuda can run here
 *
 * Exit 0 when `--device=cuda` can run (a driver, a GPU and NVRTC); else
 * EXIT_ENV (3) with the reasons on the last line.  cuBLAS (only matrix
 * products need it) and the cache (only speed depends on it) are reported
 * but do not decide the status.
 */
#define TC_UNSTABLE_API /* tc_doctor */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The report is the library's (tc_doctor: it knows where it looked for each
 * part); the command prints it and turns it into the exit status. */
int cmd_doctor(int argc, char **argv)
{
    if (argc > 0)
        return usage_error("'tensorc doctor' takes no arguments, found '%s'", argv[0]);
    int usable = 0;
    char *text = tc_doctor(&usable);
    if (!text)
        return fail(EXIT_ERROR, "out of memory");
    fputs(text, stdout);
    free(text);
    int rc = usable ? EXIT_OK : EXIT_ENV;
    if (fflush(stdout) != 0)
        rc = fail(EXIT_ERROR, "cannot write the output: %s", strerror(errno));
    return rc;
}
