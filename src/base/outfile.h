/* outfile.h - the files tensorc writes for users, written so no data is lost.
 *
 * An output set is a group of files committed together (`tensorc run`'s
 * --output files, `compile -o`, a dump):
 *
 *   1. outset_add checks each path before any work is done: its directory
 *      exists and can be written, it is not a directory, a symbolic link
 *      points somewhere usable.  The message names the output.
 *   2. outset_open gives a descriptor to write: for a regular file (or a
 *      new one) a private temporary made with mkstemp beside it (O_EXCL, so
 *      nothing planted at any name is followed or truncated); for anything
 *      else (a device such as /dev/null, a FIFO, a terminal) the path
 *      itself, opened in place and never replaced.  /dev/stdout,
 *      /dev/stderr and /dev/fd/N write to the process's own descriptor.
 *   3. outset_done flushes (fsync) and closes it.
 *   4. outset_commit renames every temporary over its file, only once all
 *      are written; outset_free before that removes the temporaries and
 *      leaves every existing file as it was.  (A rename can still fail
 *      after an earlier one succeeded, e.g. the disk removed meanwhile; the
 *      message says which.)
 *
 * A replaced file keeps its permissions (and owner, where allowed); a new
 * one gets 0666 less the umask, like any created file.
 *
 * Symbolic links: an output that is a link to a regular file is written
 * through to the link's target (resolved with realpath; the temporary is
 * made beside the target and renamed over it), so the link stays a link.
 * A link to a missing file is refused, and so is a link owned by someone
 * other than the user or the owner of its directory (the rule of Linux's
 * fs.protected_symlinks: a link planted in a shared directory by another
 * user is not followed).
 *
 * Not thread-safe per set; distinct sets are independent.  Concurrent
 * processes writing one path each rename a whole file: the last one wins.
 */
#ifndef TC_OUTFILE_H
#define TC_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

typedef struct tc_outset tc_outset;

tc_outset *outset_new(void);            /* NULL when out of memory */
/* Check path and add it; what names it in messages ("--output out", "-o").
 * *index (may be NULL) gets its number.  TC_ERR_IO or TC_ERR_INVALID_ARG
 * with a message naming what and path. */
tc_status outset_add(tc_outset *s, const char *path, const char *what, int *index, tc_diag *d);
/* A descriptor to write output index to (see above). */
tc_status outset_open(tc_outset *s, int index, int *fd, tc_diag *d);
/* Flush and close index's descriptor.  ok false: the caller's write
 * failed with errno err, reported here. */
tc_status outset_done(tc_outset *s, int index, bool ok, int err, tc_diag *d);
/* Rename every temporary into place (all must be done). */
tc_status outset_commit(tc_outset *s, tc_diag *d);
/* Close what is open, remove uncommitted temporaries, free. */
void outset_free(tc_outset *s);
/* A diag the set owns, for callers with none of their own (the public
 * tc_outset_* calls keep their messages in it). */
tc_diag *outset_diag(tc_outset *s);

/* Write len bytes to path as a set of one. */
tc_status outfile_write(const char *path, const char *what, const void *data, size_t len,
                        tc_diag *d);
/* write(2) all of buf, retrying on EINTR; false with errno set. */
bool outfile_write_all(int fd, const void *buf, size_t len);

#endif
