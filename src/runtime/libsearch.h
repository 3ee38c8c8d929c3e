/* libsearch.h - where the CUDA libraries tensorc loads come from.
 *
 * PyTorch users often have NVRTC and cuBLAS only inside pip wheels
 * (site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12,
 * site-packages/nvidia/cublas/lib/libcublas.so.12), which no dlopen search
 * path names.  libsearch_wheels finds them without running Python: the
 * site-packages directories are derived from the python3 executables on
 * $PATH (PREFIX/bin/python3 -> PREFIX/lib/python3.X/site-packages, which
 * covers virtual environments and conda), $VIRTUAL_ENV, $CONDA_PREFIX and
 * ~/.local (pip install --user).  Only globs and stats: cheap, and the
 * loaders call it only after their normal search has failed.
 */
#ifndef TC_LIBSEARCH_H
#define TC_LIBSEARCH_H

#include <stddef.h>

#include "strbuf.h"

/* The files matching site-packages/nvidia/<rel> (a glob, e.g.
 * "cuda_nvrtc/lib/libnvrtc.so.*") in every site-packages found, newest
 * version first within a directory, NULL-terminated (free with
 * libsearch_free); NULL when none.  If where is not NULL, the site-packages
 * directories looked in are appended to it ("none found" if none). */
char **libsearch_wheels(const char *rel, tc_strbuf *where);
void libsearch_free(char **paths);

/* The file a loaded library was mapped from, found by the address of one
 * of its symbols (/proc/self/maps), into buf; false if unknown. */
int libsearch_path_of(const void *sym, char *buf, size_t n);

#endif
