/* test_jobinfo.c — reading `scontrol show job` (22.05 layout) and running it under a
 * deadline. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "test-list.h"
#include "jobinfo.h"
#include "run.h"

/* Abridged from a real 22.05 `scontrol show job 1` of the lab (sbatch -A physics -o
 * "out dir/out-%j-%x.log"): every Std* on a line of its own, patterns expanded. */
static const char show_job[] = "JobId=1 JobName=j.sbatch\n"
                               "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
                               "   Priority=4294901759 Nice=0 Account=physics QOS=(null)\n"
                               "   JobState=RUNNING Reason=None Dependency=(null)\n"
                               "   Partition=debug AllocNode:Sid=localhost:3351\n"
                               "   Command=/tmp/lab/jobs/j.sbatch\n"
                               "   WorkDir=/tmp/lab/jobs\n"
                               "   StdErr=/tmp/lab/out dir/err-1.log\n"
                               "   StdIn=/dev/null\n"
                               "   StdOut=/tmp/lab/out dir/out-1-j.sbatch.log\n"
                               "   Power=\n";

static void parses_22_05(void **state)
{
    struct xmem_job_info info;

    xmem_job_info_parse(show_job, &info);
    assert_string_equal(info.std_out, "/tmp/lab/out dir/out-1-j.sbatch.log");
    assert_string_equal(info.std_err, "/tmp/lab/out dir/err-1.log");
    assert_string_equal(info.account, "physics");
    assert_string_equal(info.partition, "debug");
}

static void null_and_ambiguous_are_empty(void **state)
{
    struct xmem_job_info info;

    xmem_job_info_parse("JobId=2 JobName=x\n   Priority=1 Account=(null) QOS=(null)\n"
                        "   Partition=debug AllocNode:Sid=h:1\n",
                        &info);
    assert_string_equal(info.account, "");
    assert_string_equal(info.partition, "debug");
    assert_string_equal(info.std_out, "");
    /* A job name that forges a second Account= or a second StdOut line: ignored. */
    xmem_job_info_parse("JobId=3 JobName=a Account=other\n   Priority=1 Account=physics\n"
                        "   Comment=x\n   StdOut=/etc/shadow\n   StdOut=/home/u/slurm-3.out\n",
                        &info);
    assert_string_equal(info.account, "");
    assert_string_equal(info.std_out, "");
    /* "AdminAccount=" is not "Account=". */
    xmem_job_info_parse("   AdminAccount=a Account=b\n", &info);
    assert_string_equal(info.account, "b");
}

static void runs_under_a_deadline(void **state)
{
    char out[64], err[256];
    char *echo[] = {"echo", "StdOut=/x", NULL};
    char *sleeper[] = {"sleep", "5", NULL};
    char *failing[] = {"false", NULL};
    char *missing[] = {"/nonexistent/scontrol", NULL};
    char *chatty[] = {"seq", "100000", NULL};
    struct timespec a, b;

    assert_int_equal(xmem_run_capture(echo, 2000, out, sizeof(out), err, sizeof(err)), 0);
    assert_string_equal(out, "StdOut=/x\n");
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(xmem_run_capture(sleeper, 200, out, sizeof(out), err, sizeof(err)), -1);
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_true(b.tv_sec - a.tv_sec < 2); /* killed at the deadline, not after 5 s */
    assert_non_null(strstr(err, "did not finish within 200 ms"));
    assert_int_equal(xmem_run_capture(failing, 2000, out, sizeof(out), err, sizeof(err)), -1);
    assert_int_equal(xmem_run_capture(missing, 2000, out, sizeof(out), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "exit status 127"));
    /* More output than the buffer: the head is kept, the child is not blocked. */
    assert_int_equal(xmem_run_capture(chatty, 5000, out, sizeof(out), err, sizeof(err)), 0);
    assert_int_equal(strncmp(out, "1\n2\n3\n", 6), 0);
    assert_int_equal(strlen(out), sizeof(out) - 1);
}

int xmem_test_group_jobinfo(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_22_05),
        cmocka_unit_test(null_and_ambiguous_are_empty),
        cmocka_unit_test(runs_under_a_deadline),
    };
    return cmocka_run_group_tests_name("jobinfo", tests, NULL, NULL);
}
