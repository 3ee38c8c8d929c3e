/* npy.h - NumPy .npy files in and out (format versions 1.0, 2.0, 3.0).
 *
 * Element types: f32 '<f4', f64 '<f8', f16 '<f2', i32 '<i4', i64 '<i8',
 * bool '|b1'.  bf16 has no NumPy type: a bf16 tensor is written as '<f4'
 * (exact: every bf16 is an f32) and read from '<f4' (rounded to nearest even).
 * C order only; big-endian or Fortran-order files are refused with a message.
 */
#ifndef TC_NPY_H
#define TC_NPY_H

#include "outfile.h"
#include "ref/ref.h"

/* Read path into *t (t->data malloc'd; values converted to double).  Errors
 * are set in d (TC_ERR_IO for a missing file, TC_ERR_INVALID_ARG for a
 * malformed or unsupported one) and name the file. */
tc_status npy_read(const char *path, ref_tensor *t, tc_diag *d);
/* Write t to path, safely (outfile.h): a set of one file. */
tc_status npy_write(const char *path, const ref_tensor *t, tc_diag *d);
/* Write t as output index of s (outset_add'ed as path); the caller commits
 * the set once every output is written. */
tc_status npy_write_to(tc_outset *s, int index, const char *path, const ref_tensor *t,
                       tc_diag *d);

#endif
