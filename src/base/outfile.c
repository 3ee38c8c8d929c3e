/* outfile.c - files written for users without losing data; see outfile.h. */
#define _GNU_SOURCE /* mkostemp */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char *path;        /* as given, for messages */
    char *what;        /* "--output out" */
    char *target;      /* the file replaced or written in place */
    char *tmp;         /* the temporary while it exists */
    int fd;            /* open while being written, else -1 */
    int std_fd;        /* /dev/stdout and friends: the descriptor, else -1 */
    bool in_place;     /* not a regular file: written where it is */
    bool exists;       /* a regular file is being replaced: keep its mode and owner */
    mode_t mode;
    uid_t uid;
    gid_t gid;
    bool done;
} outfile;

struct tc_outset {
    outfile *v;
    int n, cap;
    tc_diag diag;   /* outset_diag: the public calls' messages (tensorc.h) */
};

tc_diag *outset_diag(tc_outset *s)
{
    return &s->diag;
}

tc_outset *outset_new(void)
{
    return calloc(1, sizeof(tc_outset));
}

static tc_status refuse(tc_diag *d, tc_status st, const outfile *o, const char *why)
{
    return diag_set(d, st, (tc_loc){0}, "%s%scannot write '%s': %s", o->what, *o->what ? ": " : "",
                    o->path, why);
}

static tc_status refuse_errno(tc_diag *d, const outfile *o, int err)
{
    return refuse(d, TC_ERR_IO, o, strerror(err));
}

/* The descriptor a /dev/stdout-like name stands for, else -1: those are the
 * process's own streams, written where they point (a pipe, a terminal, a
 * file opened with >>), never opened anew or replaced. */
static int std_name(const char *p)
{
    if (strcmp(p, "/dev/stdout") == 0)
        return 1;
    if (strcmp(p, "/dev/stderr") == 0)
        return 2;
    const char *n = NULL;
    if (strncmp(p, "/dev/fd/", 8) == 0)
        n = p + 8;
    else if (strncmp(p, "/proc/self/fd/", 14) == 0)
        n = p + 14;
    if (!n || !*n)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(n, &end, 10);
    return *end || errno || v < 0 || v > INT_MAX ? -1 : (int)v;
}

/* The directory part of p (malloc'd). */
static char *dir_of(const char *p)
{
    char *c = strdup(p);
    if (!c)
        return NULL;
    char *d = strdup(dirname(c));
    free(c);
    return d;
}

/* Check the directory a new file or a temporary goes into. */
static tc_status check_dir(const outfile *o, const char *file, tc_diag *d)
{
    char *dir = dir_of(file);
    if (!dir)
        return diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
    struct stat st;
    tc_status rc = TC_OK;
    char why[PATH_MAX + 64];
    if (stat(dir, &st) != 0) {
        snprintf(why, sizeof why, "directory '%s': %s", dir, strerror(errno));
        rc = refuse(d, TC_ERR_IO, o, why);
    } else if (!S_ISDIR(st.st_mode)) {
        snprintf(why, sizeof why, "'%s' is not a directory", dir);
        rc = refuse(d, TC_ERR_IO, o, why);
    } else if (access(dir, W_OK | X_OK) != 0) {
        snprintf(why, sizeof why, "directory '%s' is not writable: %s", dir, strerror(errno));
        rc = refuse(d, TC_ERR_IO, o, why);
    }
    free(dir);
    return rc;
}

/* Decide how o is written (see outfile.h); nothing is created yet. */
static tc_status classify(outfile *o, tc_diag *d)
{
    if (!*o->path)
        return refuse(d, TC_ERR_INVALID_ARG, o, "the path is empty");
    if ((o->std_fd = std_name(o->path)) >= 0) {
        o->in_place = true;
        return TC_OK;
    }
    size_t n = strlen(o->path);
    struct stat st;
    if (lstat(o->path, &st) != 0) {
        if (errno != ENOENT)
            return refuse_errno(d, o, errno);
        if (o->path[n - 1] == '/')
            return refuse(d, TC_ERR_IO, o, "the path names a directory");
        o->target = strdup(o->path);
        return o->target ? check_dir(o, o->target, d)
                         : diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
    }
    if (S_ISLNK(st.st_mode)) {
        /* fs.protected_symlinks' rule: follow a link of ours or of the
         * directory's owner, never one planted by someone else */
        char *dir = dir_of(o->path);
        struct stat ds;
        bool trusted = dir && stat(dir, &ds) == 0 &&
                       (st.st_uid == geteuid() || st.st_uid == ds.st_uid);
        free(dir);
        if (!trusted)
            return refuse(d, TC_ERR_IO, o, "it is a symbolic link owned by another user; "
                                           "refusing to follow it");
        struct stat ts;
        if (stat(o->path, &ts) != 0) {
            char why[64 + PATH_MAX];
            char to[PATH_MAX];
            ssize_t k = readlink(o->path, to, sizeof to - 1);
            to[k > 0 ? k : 0] = '\0';
            snprintf(why, sizeof why, "it is a symbolic link to '%s', which %s", to,
                     errno == ENOENT ? "does not exist" : strerror(errno));
            return refuse(d, TC_ERR_IO, o, why);
        }
        st = ts;
        if (S_ISREG(st.st_mode)) {
            /* written through: the temporary goes beside the link's target */
            o->target = realpath(o->path, NULL);
            if (!o->target)
                return refuse_errno(d, o, errno);
        }
    }
    if (S_ISDIR(st.st_mode))
        return refuse(d, TC_ERR_IO, o, "it is a directory");
    if (!o->target)
        o->target = strdup(o->path);
    if (!o->target)
        return diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
    /* a regular file is written only by one who could write it in place */
    if (access(o->target, W_OK) != 0)
        return refuse_errno(d, o, errno);
    if (!S_ISREG(st.st_mode)) {
        o->in_place = true;
        return TC_OK;
    }
    o->exists = true;
    o->mode = st.st_mode & 07777;
    o->uid = st.st_uid;
    o->gid = st.st_gid;
    return check_dir(o, o->target, d);
}

tc_status outset_add(tc_outset *s, const char *path, const char *what, int *index, tc_diag *d)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 4;
        outfile *v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v)
            return diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
        s->v = v;
        s->cap = cap;
    }
    outfile *o = &s->v[s->n];
    *o = (outfile){.path = strdup(path), .what = strdup(what), .fd = -1, .std_fd = -1};
    if (!o->path || !o->what) {
        free(o->path);
        free(o->what);
        return diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
    }
    s->n++; /* owned by the set from here, so outset_free releases it */
    tc_status st = classify(o, d);
    if (st != TC_OK)
        return st;
    /* two outputs renamed over one file: only the last would survive */
    for (int i = 0; i < s->n - 1; i++)
        if (!o->in_place && !s->v[i].in_place && strcmp(s->v[i].target, o->target) == 0)
            return diag_set(d, TC_ERR_INVALID_ARG, (tc_loc){0},
                            "%s and %s both write '%s'", s->v[i].what, o->what, o->path);
    if (index)
        *index = s->n - 1;
    return TC_OK;
}

/* The mode a new file gets: 0666 less the umask.  The umask is read from
 * /proc rather than set and restored, which would race with other threads. */
static mode_t create_mode(void)
{
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "Umask:", 6) == 0) {
            mask = (mode_t)strtoul(line + 6, NULL, 8);
            break;
        }
    if (f)
        fclose(f);
    return 0666 & ~mask;
}

tc_status outset_open(tc_outset *s, int index, int *fd, tc_diag *d)
{
    outfile *o = &s->v[index];
    *fd = -1;
    if (o->std_fd >= 0) {
        o->fd = dup(o->std_fd);
        if (o->fd < 0)
            return refuse_errno(d, o, errno);
    } else if (o->in_place) {
        /* no O_CREAT, no O_TRUNC: a device or FIFO is used as it is */
        o->fd = open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        struct stat st;
        if (o->fd < 0)
            return refuse_errno(d, o, errno);
        if (fstat(o->fd, &st) != 0 || S_ISREG(st.st_mode)) {
            close(o->fd);
            o->fd = -1;
            return refuse(d, TC_ERR_IO, o, "it changed while tensorc ran");
        }
    } else {
        char *dir = dir_of(o->target);
        size_t n = dir ? strlen(dir) + 32 : 0;
        o->tmp = dir ? malloc(n) : NULL;
        if (o->tmp)
            snprintf(o->tmp, n, "%s/.tensorc-out-XXXXXX", dir);
        free(dir);
        if (!o->tmp)
            return diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
        o->fd = mkostemp(o->tmp, O_CLOEXEC);
        if (o->fd < 0) {
            int err = errno;
            free(o->tmp);
            o->tmp = NULL;
            return refuse_errno(d, o, err);
        }
        mode_t mode = o->exists ? o->mode : create_mode();
        if (o->exists && (o->uid != geteuid() || o->gid != getegid()))
            (void)!fchown(o->fd, o->uid, o->gid); /* best effort: only root may give files away */
        if (fchmod(o->fd, mode) != 0)
            return refuse_errno(d, o, errno);
    }
    *fd = o->fd;
    return TC_OK;
}

tc_status outset_done(tc_outset *s, int index, bool ok, int err, tc_diag *d)
{
    outfile *o = &s->v[index];
    /* fsync before the rename, so a crash leaves the old file or the new
     * one, never an empty one; devices and pipes may refuse it (EINVAL) */
    if (ok && o->tmp && fsync(o->fd) != 0) {
        ok = false;
        err = errno;
    }
    if (close(o->fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    o->fd = -1;
    if (!ok)
        return refuse_errno(d, o, err ? err : EIO);
    o->done = true;
    return TC_OK;
}

tc_status outset_commit(tc_outset *s, tc_diag *d)
{
    for (int i = 0; i < s->n; i++)
        if (!s->v[i].done)
            return refuse(d, TC_ERR_INTERNAL, &s->v[i], "committed before it was written");
    for (int i = 0; i < s->n; i++) {
        outfile *o = &s->v[i];
        if (!o->tmp)
            continue;
        if (rename(o->tmp, o->target) != 0) {
            int err = errno;
            char why[512];
            snprintf(why, sizeof why, "%s%s", strerror(err),
                     i ? " (earlier outputs were already written)" : "");
            return refuse(d, TC_ERR_IO, o, why);
        }
        free(o->tmp);
        o->tmp = NULL;
        /* the rename itself made durable (best effort) */
        char *dir = dir_of(o->target);
        int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
        free(dir);
    }
    return TC_OK;
}

void outset_free(tc_outset *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++) {
        outfile *o = &s->v[i];
        if (o->fd >= 0)
            close(o->fd);
        if (o->tmp)
            unlink(o->tmp);
        free(o->tmp);
        free(o->target);
        free(o->path);
        free(o->what);
    }
    free(s->v);
    diag_release(&s->diag);
    free(s);
}

bool outfile_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return false;
        }
        p += w;
        len -= (size_t)w;
    }
    return true;
}

tc_status outfile_write(const char *path, const char *what, const void *data, size_t len,
                        tc_diag *d)
{
    tc_outset *s = outset_new();
    if (!s)
        return diag_set(d, TC_ERR_NOMEM, (tc_loc){0}, "out of memory");
    int i, fd;
    tc_status st = outset_add(s, path, what, &i, d);
    if (st == TC_OK)
        st = outset_open(s, i, &fd, d);
    if (st == TC_OK) {
        bool ok = outfile_write_all(fd, data, len);
        st = outset_done(s, i, ok, errno, d);
    }
    if (st == TC_OK)
        st = outset_commit(s, d);
    outset_free(s);
    return st;
}
