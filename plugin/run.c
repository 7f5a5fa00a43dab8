/*
 * run.c — run a short helper (scontrol, nvidia-cuda-mps-control) from slurmstepd and capture
 * what it prints, never for longer than a deadline: past it the helper is killed, so a hung
 * slurmctld or MPS daemon cannot hold up a job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run.h"

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* In the child: only async-signal-safe calls until exec (the parent has threads). */
static void child_exec(char *const argv[], char *const envp[], int in_fd, int out_fd, int null_fd)
{
    sigset_t all;

    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    /* Slurm's kill of a job that ends or is requeued reaches slurmstepd's children too: the
     * helper ends by its deadline (SIGKILL) instead, so the requeue's last scontrol calls,
     * made after `scontrol requeuehold`, run to the end (docs/enforcement.md). */
    signal(SIGTERM, SIG_IGN);
    setpgid(0, 0);
    dup2(in_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
    if (close_range(3, ~0U, 0) < 0) /* kernels before 5.9 */
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    if (envp != NULL)
        execvpe(argv[0], argv, envp);
    else
        execvp(argv[0], argv);
    _exit(127);
}

/* A pipe whose read end holds `input` for the child's stdin; -1 when it does not fit in the
 * pipe's buffer at once (the input is a few command lines). */
static int input_pipe(const char *input, int *read_fd)
{
    int fds[2];
    size_t len = strlen(input);

    if (pipe2(fds, O_CLOEXEC) < 0)
        return -1;
    if (write(fds[1], input, len) != (ssize_t)len) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    close(fds[1]);
    *read_fd = fds[0];
    return 0;
}

/* Reads the child's output until EOF or the deadline; returns 0 at EOF, -1 past it. */
static int drain(int fd, long long deadline, char *out, size_t outlen, size_t *used)
{
    char sink[4096];

    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        long long left = deadline - now_ms();
        ssize_t n;

        if (left <= 0)
            return -1;
        if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
            return -1;
        if (p.revents == 0)
            continue;
        if (*used + 1 < outlen)
            n = read(fd, out + *used, outlen - 1 - *used);
        else
            n = read(fd, sink, sizeof(sink)); /* keep the head, discard the rest */
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        if (*used + 1 < outlen)
            *used += (size_t)n;
    }
}

/* Waits for pid until the deadline, then kills it; returns its wait status or -1. */
static int reap(pid_t pid, long long deadline)
{
    int status;

    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno == ECHILD)
            return 0; /* SIGCHLD ignored in the parent: reaped already, judge by the output */
        if (r < 0 && errno != EINTR)
            return -1;
        if (now_ms() >= deadline)
            break;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return -1;
}

int xmem_run_capture(char *const argv[], int deadline_ms, char *out, size_t outlen, char *err,
                     size_t errlen)
{
    return xmem_run_feed(argv, NULL, NULL, deadline_ms, out, outlen, err, errlen);
}

int xmem_run_feed(char *const argv[], char *const envp[], const char *input, int deadline_ms,
                  char *out, size_t outlen, char *err, size_t errlen)
{
    int rv = -1, pipefd[2] = {-1, -1}, null_fd = -1, in_fd = -1, status;
    long long deadline = now_ms() + deadline_ms;
    size_t used = 0;
    pid_t pid;

    out[0] = '\0';
    null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0 || pipe2(pipefd, O_CLOEXEC) < 0 ||
        (input != NULL && input_pipe(input, &in_fd) < 0)) {
        snprintf(err, errlen, "xmem: cannot run %s: %s", argv[0], strerror(errno));
        goto out;
    }
    pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "xmem: cannot fork to run %s: %s", argv[0], strerror(errno));
        goto out;
    }
    if (pid == 0)
        child_exec(argv, envp, in_fd >= 0 ? in_fd : null_fd, pipefd[1], null_fd);
    close(pipefd[1]);
    pipefd[1] = -1;
    if (drain(pipefd[0], deadline, out, outlen, &used) < 0) {
        reap(pid, 0); /* kills it now */
        snprintf(err, errlen, "xmem: %s did not finish within %d ms; killed", argv[0], deadline_ms);
        goto out;
    }
    out[used] = '\0';
    status = reap(pid, deadline);
    if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(err, errlen, "xmem: %s failed (%s %d; is it installed and is its daemon up?)",
                 argv[0], status >= 0 && WIFEXITED(status) ? "exit status" : "wait status",
                 status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : status);
        goto out;
    }
    rv = 0;
out:
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    if (null_fd >= 0)
        close(null_fd);
    if (in_fd >= 0)
        close(in_fd);
    return rv;
}
