/* test_cmdline.c — finding the script, --wrap and options in sbatch/salloc/srun lines. */
#include <string.h>

#include "test-list.h"
#include "xmem_script.h"

#define ARGV(...) ((char *const[]){__VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *const[]){__VA_ARGS__}) / sizeof(char *)))
#define SCAN(c, ...) xmem_cmdline_scan(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), c, err, sizeof(err))

static void sbatch_script_after_options(void **state)
{
    struct xmem_cmdline c;
    char err[256];

    assert_int_equal(SCAN(&c, "/usr/bin/sbatch", "-p", "debug", "--gres", "gpu:1", "--xmem",
                          "-Jname", "train.sbatch", "--epochs", "3"),
                     0);
    assert_int_equal(c.command, XMEM_CMD_SBATCH);
    assert_int_equal(c.first_operand, 7);
    assert_string_equal(c.partition, "debug");
    assert_string_equal(c.gres, "gpu:1");
    assert_int_equal(c.xmem_given, 1);
    assert_string_equal(c.xmem, "");
}

static void sbatch_wrap_and_chdir(void **state)
{
    struct xmem_cmdline c;
    char err[256];

    assert_int_equal(
        SCAN(&c, "sbatch", "--xmem=check", "-D", "/work", "--wrap", "python3 train.py", "--gpus=1"),
        0);
    assert_string_equal(c.wrap, "python3 train.py");
    assert_string_equal(c.chdir, "/work");
    assert_string_equal(c.xmem, "check");
    assert_string_equal(c.gpus, "1");
    assert_int_equal(c.first_operand, -1);
}

static void short_option_clusters(void **state)
{
    struct xmem_cmdline c;
    char err[256];

    assert_int_equal(SCAN(&c, "sbatch", "-Hp", "gpu", "-n4", "-N", "2", "job.sh"), 0);
    assert_string_equal(c.partition, "gpu");
    assert_string_equal(c.ntasks, "4");
    assert_string_equal(c.nodes, "2");
    assert_int_equal(c.first_operand, 6);
}

static void srun_wait_takes_a_value_sbatch_wait_does_not(void **state)
{
    struct xmem_cmdline c;
    char err[256];

    assert_int_equal(SCAN(&c, "srun", "--wait", "10", "python3", "t.py"), 0);
    assert_int_equal(c.first_operand, 3);
    assert_int_equal(SCAN(&c, "sbatch", "--wait", "job.sh"), 0);
    assert_int_equal(c.first_operand, 2);
    assert_int_equal(SCAN(&c, "srun", "-W", "5", "-l", "python3"), 0);
    assert_int_equal(c.first_operand, 4);
}

static void double_dash_and_missing_value(void **state)
{
    struct xmem_cmdline c;
    char err[256];

    assert_int_equal(SCAN(&c, "salloc", "--xmem", "--", "-weird-command"), 0);
    assert_int_equal(c.command, XMEM_CMD_SALLOC);
    assert_int_equal(c.first_operand, 3);
    assert_int_equal(SCAN(&c, "sbatch", "--partition"), -1);
    assert_non_null(strstr(err, "xmem: option --partition needs a value"));
}

static void script_options_fill_what_the_command_line_left(void **state)
{
    struct xmem_cmdline c;
    char err[256];
    char *words[] = {"--gres=gpu:2", "-p", "batch", "--xmem=8G"};

    assert_int_equal(SCAN(&c, "sbatch", "-p", "debug", "job.sh"), 0);
    xmem_cmdline_apply_script(&c, words, 4);
    assert_string_equal(c.partition, "debug"); /* command line wins */
    assert_string_equal(c.gres, "gpu:2");
    assert_string_equal(c.xmem, "8G");
}

int xmem_test_group_cmdline(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sbatch_script_after_options),
        cmocka_unit_test(sbatch_wrap_and_chdir),
        cmocka_unit_test(short_option_clusters),
        cmocka_unit_test(srun_wait_takes_a_value_sbatch_wait_does_not),
        cmocka_unit_test(double_dash_and_missing_value),
        cmocka_unit_test(script_options_fill_what_the_command_line_left),
    };
    return cmocka_run_group_tests_name("cmdline", tests, NULL, NULL);
}
