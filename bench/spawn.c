/* spawn.c - running one child of tc-bench and reading what it left.
 *
 * The child's stdout and stderr go to a log file (echoed to our stderr
 * when it ends, so run.sh's log has everything in order); its JSON goes to
 * a file named on its command line.  A child that hangs is killed after
 * its time limit; one that dies leaves a signal number.  Either way the
 * parent gets the end of its log, which the JSON then carries: a case that
 * crashed says how.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { TAIL = 3000 };

extern char **environ;

/* Our environment with extra's NAME=VALUE entries replacing or adding to
 * it; made before fork, since the child may only exec.  The array is
 * malloc'd; its strings are environ's and extra's. */
static char **child_env(char *const extra[])
{
    size_t n = 0, m = 0;
    while (environ && environ[n])
        n++;
    while (extra && extra[m])
        m++;
    char **env = calloc(n + m + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool replaced = false;
        for (size_t e = 0; e < m && !replaced; e++) {
            const char *eq = strchr(extra[e], '=');
            size_t len = eq ? (size_t)(eq - extra[e]) + 1 : strlen(extra[e]);
            replaced = strncmp(environ[i], extra[e], len) == 0;
        }
        if (!replaced)
            env[k++] = environ[i];
    }
    for (size_t e = 0; e < m; e++)
        env[k++] = extra[e];
    return env;
}

void spawn_result_free(spawn_result *r)
{
    free(r->json);
    free(r->log_tail);
    memset(r, 0, sizeof *r);
}

bool spawn_child(char *const argv[], char *const extra_env[], const char *log_path,
                 const char *json_path, int timeout_s, spawn_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = -1;
    unlink(json_path);
    fflush(stdout);
    fflush(stderr);
    char **env = child_env(extra_env);
    if (!env) {
        r->log_tail = msgf("out of memory");
        return false;
    }
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid < 0) {
        r->log_tail = msgf("fork failed: %s", strerror(errno));
        free(env);
        return false;
    }
    if (pid == 0) { /* the child: async-signal-safe calls only, then exec or _exit */
        int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execve(argv[0], argv, env);
        static const char msg[] = "tc-bench: cannot run the child process (execv failed)\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        _exit(127);
    }
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            status = -1;
            break;
        }
        if (now_ms() - t0 > 1e3 * timeout_s && !r->timed_out) {
            r->timed_out = true;
            kill(pid, SIGKILL);
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    r->wall_ms = now_ms() - t0;
    free(env);
    if (status != -1 && WIFEXITED(status))
        r->status = WEXITSTATUS(status);
    else if (status != -1 && WIFSIGNALED(status))
        r->signal = WTERMSIG(status);

    char *log = read_file(log_path);
    if (log) {
        fputs(log, stderr);
        size_t n = strlen(log);
        r->log_tail = strdup(n > TAIL ? log + n - TAIL : log);
        free(log);
    }
    r->json = read_file(json_path);
    if (r->json && !json_balanced(r->json)) { /* empty or cut short: not JSON */
        free(r->json);
        r->json = NULL;
    }
    return true;
}
