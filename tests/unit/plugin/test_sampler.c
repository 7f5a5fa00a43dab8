/* test_sampler.c — which processes are the job's, and the NVML sampler thread against the
 * fake libnvidia-ml (tests/unit/plugin/fake_nvml.c): the sum over the job's processes and
 * devices, the peak kept, strangers left out, and silence without NVML. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-list.h"
#include "jobproc.h"
#include "nvml.h"

#ifndef XMEM_FAKE_NVML_PATH
#error "CMake passes the fake NVML library's path"
#endif

/* No real job has this id, so only ancestry can make a process ours. */
#define NO_SUCH_JOB 4000000001u

static void cgroup_lines(void **state)
{
    assert_true(xmem_cgroup_has_job("0::/system.slice/slurmstepd.scope/job_42/step_0/user/"
                                    "task_0\n",
                                    42));
    assert_true(xmem_cgroup_has_job("4:devices:/slurm/uid_1000/job_42/step_batch\n", 42));
    assert_true(xmem_cgroup_has_job("0::/slurm/job_42\n", 42));
    assert_false(xmem_cgroup_has_job("0::/slurm/job_421/step_0\n", 42));
    assert_false(xmem_cgroup_has_job("0::/user.slice/user-1000.slice\n", 42));
}

static void stat_parent(void **state)
{
    pid_t ppid = 0;

    assert_int_equal(xmem_stat_ppid("123 (python3) S 45 123 45 0 -1", &ppid), 0);
    assert_int_equal(ppid, 45);
    /* comm may hold spaces and parentheses. */
    assert_int_equal(xmem_stat_ppid("7 (a) b (c)) R 6 7 7 0", &ppid), 0);
    assert_int_equal(ppid, 6);
    assert_int_equal(xmem_stat_ppid("garbage", &ppid), -1);
}

/* Starts `sleep SECS` with the fake NVML's marker in its environment. */
static pid_t marked_child(const char *mib, const char *gpu, const char *secs)
{
    pid_t pid = fork();

    if (pid == 0) {
        char m[64], g[64];
        snprintf(m, sizeof(m), "XMEM_FAKE_NVML_MIB=%s", mib);
        snprintf(g, sizeof(g), "XMEM_FAKE_NVML_GPU=%s", gpu);
        char *envp[] = {m, g, "PATH=/usr/bin:/bin", NULL};
        char *argv[] = {"sleep", (char *)secs, NULL};
        execve("/bin/sleep", argv, envp);
        _exit(127);
    }
    return pid;
}

static void stop_child(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void children_are_ours(void **state)
{
    pid_t child = marked_child("1", "0", "5");

    assert_true(xmem_pid_in_job(child, NO_SUCH_JOB, getpid()));
    assert_false(xmem_pid_in_job(child, NO_SUCH_JOB, 0));
    assert_false(xmem_pid_in_job(getppid(), NO_SUCH_JOB, getpid()));
    assert_false(xmem_pid_in_job(1, NO_SUCH_JOB, getpid()));
    stop_child(child);
}

static struct xmem_sampler *start(const char *library)
{
    struct xmem_sampler_config cfg = {0};
    struct xmem_sampler *s = NULL;
    char err[256];

    snprintf(cfg.library, sizeof(cfg.library), "%s", library);
    cfg.interval_ms = 50;
    cfg.job_id = NO_SUCH_JOB;
    cfg.ancestor = getpid();
    assert_int_equal(xmem_sampler_start(&cfg, &s, err, sizeof(err)), 0);
    assert_non_null(s);
    return s;
}

static void sums_the_jobs_processes(void **state)
{
    /* 300 MiB on GPU 0 and 200 MiB on GPU 1 at once, then 100 MiB alone. */
    pid_t a = marked_child("300", "0", "30"), b = marked_child("200", "1", "30");
    struct xmem_sampler *s = start(XMEM_FAKE_NVML_PATH);
    uint64_t peak = 0;
    char why[320];

    usleep(400 * 1000);
    stop_child(a);
    stop_child(b);
    pid_t c = marked_child("100", "0", "30");
    usleep(300 * 1000);
    assert_true(xmem_sampler_stop(s, 2000, &peak, why, sizeof(why)));
    stop_child(c);
    assert_int_equal(peak, 500ULL << 20);
}

static void strangers_are_left_out(void **state)
{
    /* A marked process that is not our descendant: started by a child that exits at once,
     * so it is re-parented away from us (to init or a subreaper). */
    int fd[2];
    pid_t mid, stranger = 0;
    uint64_t peak = 1;
    char why[320];

    assert_int_equal(pipe(fd), 0);
    mid = fork();
    if (mid == 0) {
        pid_t p = marked_child("777", "0", "3");
        (void)!write(fd[1], &p, sizeof(p));
        _exit(0);
    }
    waitpid(mid, NULL, 0);
    assert_int_equal(read(fd[0], &stranger, sizeof(stranger)), sizeof(stranger));
    close(fd[0]);
    close(fd[1]);
    struct xmem_sampler *s = start(XMEM_FAKE_NVML_PATH);
    usleep(300 * 1000);
    assert_false(xmem_sampler_stop(s, 2000, &peak, why, sizeof(why)));
    assert_int_equal(peak, 0);
    assert_non_null(strstr(why, "saw no GPU memory of the job"));
    kill(stranger, SIGKILL);
}

static void no_nvml_is_quiet(void **state)
{
    uint64_t peak = 1;
    char why[320];
    struct xmem_sampler *s = start("libxmem-no-such-nvml.so.1");

    usleep(100 * 1000);
    assert_false(xmem_sampler_stop(s, 2000, &peak, why, sizeof(why)));
    assert_int_equal(peak, 0);
    assert_non_null(strstr(why, "xmem: no NVML"));
    /* Init failing is the same: nothing measured, a reason, no crash. */
    setenv("XMEM_FAKE_NVML_FAIL_INIT", "1", 1);
    s = start(XMEM_FAKE_NVML_PATH);
    usleep(100 * 1000);
    assert_false(xmem_sampler_stop(s, 2000, &peak, why, sizeof(why)));
    unsetenv("XMEM_FAKE_NVML_FAIL_INIT");
    assert_non_null(strstr(why, "nvmlInit_v2 failed"));
    /* Stopping a sampler that never started is a no-op. */
    assert_false(xmem_sampler_stop(NULL, 10, &peak, why, sizeof(why)));
}

int xmem_test_group_sampler(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cgroup_lines),           cmocka_unit_test(stat_parent),
        cmocka_unit_test(children_are_ours),      cmocka_unit_test(sums_the_jobs_processes),
        cmocka_unit_test(strangers_are_left_out), cmocka_unit_test(no_nvml_is_quiet),
    };
    return cmocka_run_group_tests_name("sampler", tests, NULL, NULL);
}
