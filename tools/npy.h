/* npy.h - NumPy .npy files in and out (format versions 1.0, 2.0, 3.0).
 *
 * Element types: f32 '<f4', f64 '<f8', f16 '<f2', i32 '<i4', i64 '<i8',
 * bool '|b1'.  bf16 has no NumPy type: a bf16 tensor is written as '<f4'
 * (exact: every bf16 is an f32); a caller that wants bf16 reads the '<f4'
 * and rounds it.  C order only; big-endian or Fortran-order files are
 * refused with a message.
 *
 * Errors: a status (TC_ERR_IO for a missing file, TC_ERR_INVALID_ARG for a
 * malformed or unsupported one, TC_ERR_NOMEM) and in *msg a message naming
 * the file ("error: ...\n", malloc'd, for the caller to print and free).
 */
#ifndef TC_NPY_H
#define TC_NPY_H

#include "host.h"

/* Read path into *t, in the file's own dtype (t->data malloc'd). */
tc_status npy_read(const char *path, htensor *t, char **msg);
/* Write t to path, safely (tc_outset): a set of one file. */
tc_status npy_write(const char *path, const htensor *t, char **msg);
/* Write t as output index of s (tc_outset_add'ed as path); the caller
 * commits the set once every output is written. */
tc_status npy_write_to(tc_outset *s, int index, const char *path, const htensor *t, char **msg);

#endif
