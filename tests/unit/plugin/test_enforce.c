/* test_enforce.c — the enforcement levels' pure parts: the job's cgroup from /proc, dmem's
 * files on a fake cgroup tree, the MPS control commands, and which level is chosen. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-list.h"
#include "enforce.h"
#include "run.h"
#include "settings.h"

static void cgroup_dir_from_proc(void **state)
{
    char dir[256];

    /* slurmstepd's cgroup/v2 layout: the task sits below the job's directory. */
    assert_int_equal(xmem_cgroup_job_dir("0::/system.slice/slurmstepd.scope/job_42/step_batch/"
                                         "user/task_0\n",
                                         42, "/sys/fs/cgroup", dir, sizeof(dir)),
                     0);
    assert_string_equal(dir, "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_42");
    /* job_4 is not job_42; a v1 line before the v2 one is skipped. */
    assert_int_equal(
        xmem_cgroup_job_dir("12:pids:/job_4/x\n0::/a/job_42/step_0\n", 4, "/r", dir, sizeof(dir)),
        -1);
    assert_int_equal(
        xmem_cgroup_job_dir("12:pids:/job_4/x\n0::/a/job_4/step_0\n", 4, "/r", dir, sizeof(dir)),
        0);
    assert_string_equal(dir, "/r/a/job_4");
    /* The job's directory itself, at the end of the line. */
    assert_int_equal(xmem_cgroup_job_dir("0::/job_7\n", 7, "/r", dir, sizeof(dir)), 0);
    assert_string_equal(dir, "/r/job_7");
    /* No job cgroup (a node without the cgroup plugin), or only a v1 hierarchy. */
    assert_int_equal(
        xmem_cgroup_job_dir("0::/user.slice/session-3.scope\n", 7, "/r", dir, sizeof(dir)), -1);
    assert_int_equal(
        xmem_cgroup_job_dir("4:memory:/slurm/job_7/step_0\n", 7, "/r", dir, sizeof(dir)), -1);
    /* Too long for the buffer. */
    assert_int_equal(xmem_cgroup_job_dir("0::/job_7\n", 7, "/r", dir, 6), -1);
}

static void cgroup_dir_from_pattern(void **state)
{
    char dir[64];

    assert_int_equal(xmem_cgroup_pattern_dir("/cg/job_%j", 12, dir, sizeof(dir)), 0);
    assert_string_equal(dir, "/cg/job_12");
    assert_int_equal(xmem_cgroup_pattern_dir("/cg/%j/%j", 3, dir, sizeof(dir)), 0);
    assert_string_equal(dir, "/cg/3/3");
    assert_int_equal(xmem_cgroup_pattern_dir("/cg/job_%j", 12, dir, 8), -1);
}

static void capacity_parse(void **state)
{
    struct xmem_dmem_regions r;

    assert_int_equal(xmem_dmem_capacity_parse("drm/0000:03:00.0/vram0 85899345920\n"
                                              "drm/0000:04:00.0/vram0 85899345920\n",
                                              &r),
                     0);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.name[0], "drm/0000:03:00.0/vram0");
    assert_string_equal(r.name[1], "drm/0000:04:00.0/vram0");
    assert_int_equal(xmem_dmem_capacity_parse("drm/x/vram0 1", &r), 0); /* no final newline */
    assert_int_equal(r.n, 1);
    assert_int_equal(xmem_dmem_capacity_parse("", &r), -1);              /* no region */
    assert_int_equal(xmem_dmem_capacity_parse("drm/x/vram0\n", &r), -1); /* no size */
    assert_int_equal(xmem_dmem_capacity_parse("drm/x/vram0 12G\n", &r), -1);
    assert_int_equal(xmem_dmem_capacity_parse(" 12\n", &r), -1);
}

static void max_text_and_readback(void **state)
{
    struct xmem_dmem_regions r;
    char text[256];

    assert_int_equal(xmem_dmem_capacity_parse("drm/a/vram0 100\ndrm/b/vram0 100\n", &r), 0);
    assert_int_equal(xmem_dmem_max_text(&r, 4096, text, sizeof(text)), 0);
    assert_string_equal(text, "drm/a/vram0 4096\ndrm/b/vram0 4096\n");
    assert_int_equal(xmem_dmem_max_text(&r, 4096, text, 20), -1);
    assert_true(xmem_dmem_max_shows("drm/b/vram0 4096\ndrm/a/vram0 4096\n", &r, 4096));
    /* A region left at max, or a longer number that starts the same, is not the limit. */
    assert_false(xmem_dmem_max_shows("drm/a/vram0 4096\ndrm/b/vram0 max\n", &r, 4096));
    assert_false(xmem_dmem_max_shows("drm/a/vram0 40960\ndrm/b/vram0 4096\n", &r, 4096));
    assert_false(xmem_dmem_max_shows("xdrm/a/vram0 4096\ndrm/b/vram0 4096\n", &r, 4096));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void apply_on_a_fake_tree(void **state)
{
    char root[] = "/tmp/xmem-test-dmem.XXXXXX", job[128], path[160], back[128], err[512];
    char link[160];
    struct xmem_dmem_regions r;
    FILE *f;
    size_t n;

    assert_non_null(mkdtemp(root));
    snprintf(job, sizeof(job), "%s/job_5", root);
    assert_int_equal(mkdir(job, 0755), 0);
    snprintf(path, sizeof(path), "%s/dmem.capacity", root);
    write_file(path, "drm/0000:03:00.0/vram0 42949672960\n");
    /* No dmem.max yet: the controller is not enabled for the job. */
    assert_false(xmem_dmem_available(root, job, &r));
    snprintf(path, sizeof(path), "%s/dmem.max", job);
    write_file(path, "drm/0000:03:00.0/vram0 max\n");
    if (geteuid() == 0) { /* outside cgroupfs only root's files are believed */
        assert_true(xmem_dmem_available(root, job, &r));
        assert_int_equal(xmem_dmem_apply(job, &r, 12884901888ULL, err, sizeof(err)), 0);
        f = fopen(path, "r");
        n = fread(back, 1, sizeof(back) - 1, f);
        fclose(f);
        back[n] = '\0';
        assert_string_equal(back, "drm/0000:03:00.0/vram0 12884901888\n");
        /* A symlink in place of dmem.max is never followed. */
        snprintf(link, sizeof(link), "%s/real", root);
        rename(path, link);
        assert_int_equal(symlink(link, path), 0);
        assert_false(xmem_dmem_available(root, job, &r));
        assert_int_equal(xmem_dmem_apply(job, &r, 1, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "cannot write the limit"));
        unlink(link);
    } else {
        assert_false(xmem_dmem_available(root, job, &r));
    }
    unlink(path);
    rmdir(job);
    snprintf(path, sizeof(path), "%s/dmem.capacity", root);
    unlink(path);
    rmdir(root);
}

static void mps_commands(void **state)
{
    pid_t servers[] = {4242, 4343};
    char out[512];

    assert_int_equal(xmem_mps_commands("1", 12288, NULL, 0, out, sizeof(out)), 0);
    assert_string_equal(out, "set_default_device_pinned_mem_limit 1 12288M\n");
    assert_int_equal(xmem_mps_commands("0,2", 4096, servers, 2, out, sizeof(out)), 0);
    assert_string_equal(out, "set_default_device_pinned_mem_limit 0 4096M\n"
                             "set_device_pinned_mem_limit 4242 0 4096M\n"
                             "set_device_pinned_mem_limit 4343 0 4096M\n"
                             "set_default_device_pinned_mem_limit 2 4096M\n"
                             "set_device_pinned_mem_limit 4242 2 4096M\n"
                             "set_device_pinned_mem_limit 4343 2 4096M\n");
    assert_int_equal(xmem_mps_commands("0", 4096, NULL, 0, out, 10), -1);
    /* Only GPU indices reach the control program. */
    assert_int_equal(xmem_mps_commands("0;quit", 1, NULL, 0, out, sizeof(out)), -1);
    assert_int_equal(xmem_mps_commands("", 1, NULL, 0, out, sizeof(out)), -1);
    assert_int_equal(xmem_mps_commands("0,", 1, NULL, 0, out, sizeof(out)), -1);
    assert_int_equal(xmem_mps_commands("GPU-8a1b", 1, NULL, 0, out, sizeof(out)), -1);
}

static void mps_server_list_and_owner(void **state)
{
    pid_t pids[4];
    uid_t uid = 0;

    assert_int_equal(xmem_mps_server_pids("4242\n4343\n", pids, 4), 2);
    assert_int_equal(pids[0], 4242);
    assert_int_equal(pids[1], 4343);
    assert_int_equal(xmem_mps_server_pids("", pids, 4), 0);
    assert_int_equal(xmem_mps_server_pids("no servers\n1\n77x\n88\n", pids, 4), 1);
    assert_int_equal(pids[0], 88);
    assert_int_equal(
        xmem_status_uid("Name:\tnvidia-cuda-mps\nUid:\t1001\t1001\t1001\t1001\n", &uid), 0);
    assert_int_equal(uid, 1001);
    assert_int_equal(xmem_status_uid("Name:\tx\n", &uid), -1);
}

static void mps_pipe_must_be_roots(void **state)
{
    char dir[] = "/tmp/xmem-test-mps.XXXXXX", path[64];

    assert_non_null(mkdtemp(dir));
    assert_false(xmem_mps_pipe_ok(dir)); /* no control pipe */
    snprintf(path, sizeof(path), "%s/control", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(xmem_mps_pipe_ok(dir), geteuid() == 0);
    unlink(path);
    write_file(path, ""); /* a regular file is no pipe */
    assert_false(xmem_mps_pipe_ok(dir));
    unlink(path);
    rmdir(dir);
    assert_false(xmem_mps_pipe_ok("relative/dir"));
}

static void program_on_path(void **state)
{
    assert_true(xmem_program_found("sh"));
    assert_true(xmem_program_found("/bin/sh"));
    assert_false(xmem_program_found("xmem-no-such-program"));
    assert_false(xmem_program_found("/nonexistent/nvidia-cuda-mps-control"));
}

/* The MPS control program gets its commands on stdin and only the environment it is given. */
static void run_feeds_stdin_and_env(void **state)
{
    char *argv[] = {"sh", "-c", "cat; echo \"dir=$CUDA_MPS_PIPE_DIRECTORY home=$HOME\"", NULL};
    char *envp[] = {"CUDA_MPS_PIPE_DIRECTORY=/tmp/mps", "PATH=/usr/bin:/bin", NULL};
    char *failing[] = {"sh", "-c", "read line; exit 1", NULL};
    char out[256], err[256];

    assert_int_equal(
        xmem_run_feed(argv, envp, "get_server_list\n", 5000, out, sizeof(out), err, sizeof(err)),
        0);
    assert_string_equal(out, "get_server_list\ndir=/tmp/mps home=\n");
    assert_int_equal(xmem_run_feed(failing, envp, "x\n", 5000, out, sizeof(out), err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "exit status 1"));
}

static void pinned_limit(void **state)
{
    uint64_t mb = 0;

    assert_int_equal(xmem_pinned_limit_mb("0=4096M", &mb), 0);
    assert_int_equal(mb, 4096);
    assert_int_equal(xmem_pinned_limit_mb("0=4G,1=4G", &mb), 0);
    assert_int_equal(mb, 4096);
    assert_int_equal(xmem_pinned_limit_mb("4096M", &mb), -1);
    assert_int_equal(xmem_pinned_limit_mb("0=4096", &mb), -1);
    assert_int_equal(xmem_pinned_limit_mb("0=0M", &mb), -1);
    assert_int_equal(xmem_pinned_limit_mb("0=4096MB", &mb), -1);
    assert_int_equal(xmem_pinned_limit_mb("0=-1M", &mb), -1);
}

static void level_choice(void **state)
{
    unsigned all = (1u << XMEM_ENFORCE_DMEM) | (1u << XMEM_ENFORCE_MPS_SERVER) |
                   (1u << XMEM_ENFORCE_CLIENT) | (1u << XMEM_ENFORCE_NONE);
    unsigned no_dmem = all & ~(1u << XMEM_ENFORCE_DMEM);
    unsigned client = (1u << XMEM_ENFORCE_CLIENT) | (1u << XMEM_ENFORCE_NONE);

    /* auto: the best there is. */
    assert_int_equal(xmem_enforce_best(XMEM_ENFORCE_DMEM, all), XMEM_ENFORCE_DMEM);
    assert_int_equal(xmem_enforce_best(XMEM_ENFORCE_DMEM, no_dmem), XMEM_ENFORCE_MPS_SERVER);
    assert_int_equal(xmem_enforce_best(XMEM_ENFORCE_DMEM, client), XMEM_ENFORCE_CLIENT);
    /* A site's cap: never above it, even when better is there. */
    assert_int_equal(xmem_enforce_best(XMEM_ENFORCE_MPS_SERVER, all), XMEM_ENFORCE_MPS_SERVER);
    assert_int_equal(xmem_enforce_best(XMEM_ENFORCE_CLIENT, all), XMEM_ENFORCE_CLIENT);
    assert_int_equal(xmem_enforce_best(XMEM_ENFORCE_NONE, all), XMEM_ENFORCE_NONE);
    assert_int_equal(xmem_enforce_best(XMEM_ENFORCE_DMEM, 0), XMEM_ENFORCE_NONE);
    /* A required level: met by it and above, refused below; an unknown name is never met. */
    assert_true(xmem_enforce_meets(XMEM_ENFORCE_CLIENT, NULL));
    assert_true(xmem_enforce_meets(XMEM_ENFORCE_NONE, ""));
    assert_true(xmem_enforce_meets(XMEM_ENFORCE_NONE, "none"));
    assert_true(xmem_enforce_meets(XMEM_ENFORCE_DMEM, "mps-server"));
    assert_true(xmem_enforce_meets(XMEM_ENFORCE_MPS_SERVER, "mps-server"));
    assert_false(xmem_enforce_meets(xmem_enforce_best(XMEM_ENFORCE_DMEM, no_dmem), "dmem"));
    assert_false(xmem_enforce_meets(XMEM_ENFORCE_CLIENT, "mps-server"));
    assert_false(xmem_enforce_meets(XMEM_ENFORCE_DMEM, "hard"));
}

static void settings_keys(void **state)
{
    struct xmem_settings s;
    char err[256];
    char *good[] = {"enforce=mps-server", "cgroup_root=/tmp/cg", "job_cgroup=/tmp/cg/job_%j",
                    "mps_control=/opt/nvidia/nvidia-cuda-mps-control"};
    char *bad_level[] = {"enforce=hard"};
    char *bad_program[] = {"mps_control=bin/mps"};

    xmem_settings_init(&s);
    assert_int_equal(s.enforce, XMEM_ENFORCE_DMEM);
    assert_string_equal(s.cgroup_root, "/sys/fs/cgroup");
    assert_string_equal(s.job_cgroup, "");
    assert_string_equal(s.mps_control, "nvidia-cuda-mps-control");
    assert_int_equal(xmem_settings_parse(&s, 4, good, err, sizeof(err)), 0);
    assert_int_equal(s.enforce, XMEM_ENFORCE_MPS_SERVER);
    assert_string_equal(s.job_cgroup, "/tmp/cg/job_%j");
    assert_int_equal(xmem_settings_parse(&s, 1, bad_level, err, sizeof(err)), -1);
    assert_string_equal(
        err, "xmem: enforce: invalid value: hard (one of auto|dmem|mps-server|client|none)");
    assert_int_equal(xmem_settings_parse(&s, 1, bad_program, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "xmem: mps_control: invalid value: bin/mps"));
}

int xmem_test_group_enforce(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cgroup_dir_from_proc),
        cmocka_unit_test(cgroup_dir_from_pattern),
        cmocka_unit_test(capacity_parse),
        cmocka_unit_test(max_text_and_readback),
        cmocka_unit_test(apply_on_a_fake_tree),
        cmocka_unit_test(mps_commands),
        cmocka_unit_test(mps_server_list_and_owner),
        cmocka_unit_test(mps_pipe_must_be_roots),
        cmocka_unit_test(program_on_path),
        cmocka_unit_test(pinned_limit),
        cmocka_unit_test(run_feeds_stdin_and_env),
        cmocka_unit_test(level_choice),
        cmocka_unit_test(settings_keys),
    };
    return cmocka_run_group_tests_name("enforce", tests, NULL, NULL);
}
