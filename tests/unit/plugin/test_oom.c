/* test_oom.c — CUDA OOM detection in the job's output: the messages, the 64 KiB tail, and
 * the rules that keep root from reading what is not the job user's regular file. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "defaults.h"
#include "test-list.h"
#include "oom.h"

static char dir[64];

static int make_dir(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/xmem-test-oom-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *name, const char *text, size_t pad_after)
{
    char path[128];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    for (size_t i = 0; i < pad_after; i++)
        fputc(i % 80 == 79 ? '\n' : 'x', f);
    fclose(f);
}

static int scan(const char *name, int *found)
{
    char path[128], err[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return xmem_oom_scan_file(path, getuid(), found, err, sizeof(err));
}

static void messages(void **state)
{
    static const char *const yes[] = {
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "torch.cuda.OutOfMemoryError: CUDA out of memory.",
        "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be ...",
    };
    static const char *const no[] = {"", "out of memory", "CUDA error: device-side assert",
                                     "MemoryError", "cuda out of memory"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        assert_true(xmem_oom_text(yes[i], strlen(yes[i])));
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        assert_false(xmem_oom_text(no[i], strlen(no[i])));
    /* A NUL before the message does not hide it (binary output). */
    assert_true(xmem_oom_text("ab\0c CUDA out of memory", 24));
}

static void tail_only(void **state)
{
    int found = -1;

    write_file("near.out", "CUDA out of memory\n", 1000);
    assert_int_equal(scan("near.out", &found), 0);
    assert_int_equal(found, 1);
    /* The message is followed by more than 64 KiB: out of the scanned tail. */
    write_file("far.out", "CUDA out of memory\n", XMEM_PLUGIN_OOM_SCAN_BYTES + 10);
    assert_int_equal(scan("far.out", &found), 0);
    assert_int_equal(found, 0);
    write_file("clean.out", "epoch 1 loss 0.3\n", 10);
    assert_int_equal(scan("clean.out", &found), 0);
    assert_int_equal(found, 0);
}

static void refuses_what_is_not_a_user_file(void **state)
{
    char path[128], target[128], err[512];
    int found = -1;

    /* /dev/null: nothing kept, not an error. */
    assert_int_equal(xmem_oom_scan_file("/dev/null", getuid(), &found, err, sizeof(err)), 0);
    assert_int_equal(found, 0);
    /* A relative path is never opened. */
    assert_int_equal(xmem_oom_scan_file("slurm-1.out", getuid(), &found, err, sizeof(err)), -1);
    /* A symlink, even to a file with the message, is not followed. */
    write_file("real.out", "CUDA out of memory\n", 0);
    snprintf(target, sizeof(target), "%s/real.out", dir);
    snprintf(path, sizeof(path), "%s/link.out", dir);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(scan("link.out", &found), -1);
    assert_int_equal(found, 0);
    assert_int_equal(strncmp(err, "xmem: ", 6), 0);
    /* A FIFO is neither opened nor waited on. */
    snprintf(path, sizeof(path), "%s/fifo.out", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(scan("fifo.out", &found), -1);
    /* A file of another uid is not read. */
    assert_int_equal(xmem_oom_scan_file(target, getuid() + 1, &found, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a regular file of uid"));
    assert_int_equal(found, 0);
    /* Missing file: an error, found stays 0. */
    assert_int_equal(scan("missing.out", &found), -1);
    assert_int_equal(found, 0);
}

int xmem_test_group_oom(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(messages),
        cmocka_unit_test_setup_teardown(tail_only, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(refuses_what_is_not_a_user_file, make_dir, remove_dir),
    };
    return cmocka_run_group_tests_name("oom", tests, NULL, NULL);
}
