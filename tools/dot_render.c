/* dot_render.c - `tensorc compile --emit=dot -o g.svg`: the graph drawn by
 * graphviz's `dot` program.
 *
 * The graph text goes to a private temporary file (mkstemp), `dot -Tsvg`
 * reads it and writes the picture to a pipe, and only a whole picture from
 * a `dot` that exited 0 is written to OUT, through tc_outset (a temporary
 * renamed into place): a failed or killed `dot` leaves OUT as it was.
 * `dot` is looked for on PATH before anything is compiled, so a machine
 * without graphviz gets one clear message and no partial work.
 */
#include "tools_ext.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *dot_format(const char *out)
{
    static const char *const fmts[] = {"svg", "png", "pdf"};
    const char *dot = out ? strrchr(out, '.') : NULL;
    if (!dot || strchr(dot, '/'))
        return NULL;
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++)
        if (strcmp(dot + 1, fmts[i]) == 0)
            return fmts[i];
    return NULL;
}

bool dot_found(void)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char full[4096];
        if (n > 0 && n + 5 < sizeof full) {
            memcpy(full, path, n);
            memcpy(full + n, "/dot", 5);
            if (access(full, X_OK) == 0)
                return true;
        }
        path += n + (path[n] == ':');
    }
    return false;
}

/* All of fd into a malloc'd buffer; NULL with errno on failure. */
static char *read_all(int fd, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r == 0) {
            *len = n;
            return buf;
        }
        if (r < 0 && errno != EINTR)
            break;
        if (r > 0)
            n += (size_t)r;
    }
    free(buf);
    return NULL;
}

/* write(2) until all of data is out, retrying on EINTR. */
static bool write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        data += w;
        len -= (size_t)w;
    }
    return true;
}

int dot_render(const char *text, const char *fmt, const char *out)
{
    char in_path[] = "/tmp/tensorc-dot-XXXXXX";
    const char *tmpdir = getenv("TMPDIR");
    char *in = NULL;
    if (tmpdir && *tmpdir) {
        size_t n = strlen(tmpdir) + sizeof "/tensorc-dot-XXXXXX";
        in = malloc(n);
        if (in)
            snprintf(in, n, "%s/tensorc-dot-XXXXXX", tmpdir);
    }
    char *tmpl = in ? in : in_path;
    int fd = mkstemp(tmpl);
    if (fd < 0) {
        int rc = fail(EXIT_ERROR, "-o %s: cannot make a temporary file for dot: %s", out, strerror(errno));
        free(in);
        return rc;
    }
    bool ok = write_all(fd, text, strlen(text));
    int err = errno;
    close(fd);
    int pipefd[2] = {-1, -1};
    if (!ok || pipe(pipefd) != 0) {
        int rc = fail(EXIT_ERROR, "-o %s: cannot hand the graph to dot: %s", out, strerror(ok ? errno : err));
        unlink(tmpl);
        free(in);
        return rc;
    }
    char tflag[16];
    snprintf(tflag, sizeof tflag, "-T%s", fmt);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* the child: dot -Tsvg FILE > pipe */
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        close(pipefd[1]);
        execlp("dot", "dot", tflag, tmpl, (char *)NULL);
        _exit(127);
    }
    close(pipefd[1]);
    size_t len = 0;
    char *image = pid > 0 ? read_all(pipefd[0], &len) : NULL;
    err = errno;
    close(pipefd[0]);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    unlink(tmpl);
    free(in);
    int rc;
    if (pid < 0)
        rc = fail(EXIT_ENV, "-o %s: cannot start dot: %s", out, strerror(err));
    else if (!image)
        rc = fail(EXIT_ERROR, "-o %s: cannot read dot's output: %s", out, strerror(err));
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || len == 0)
        rc = fail(WIFEXITED(status) && WEXITSTATUS(status) == 127 ? EXIT_ENV : EXIT_ERROR,
                  "-o %s: graphviz's dot failed (%s %d); %s was not written", out,
                  WIFEXITED(status) ? "exit status" : "signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), out);
    else
        rc = cli_write_out(out, image, len);
    free(image);
    return rc;
}
