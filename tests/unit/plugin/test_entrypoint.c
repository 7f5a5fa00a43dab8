/* test_entrypoint.c — the training command in a batch script or command line. */
#include <string.h>

#include "test-list.h"
#include "xmem_plugin.h"

static void expect_argv(char **argv, const char *const *want)
{
    int i;

    assert_non_null(argv);
    for (i = 0; want[i] != NULL; i++) {
        assert_non_null(argv[i]);
        assert_string_equal(argv[i], want[i]);
    }
    assert_null(argv[i]);
}

static void words_quotes_and_operators(void **state)
{
    int n;
    char **w = xmem_words_split("python3 'a b' \"c \\\"d\\\"\" e\\ f; echo no", &n);

    expect_argv(w, (const char *const[]){"python3", "a b", "c \"d\"", "e f", NULL});
    assert_int_equal(n, 4);
    xmem_argv_free(w);
    w = xmem_words_split("python t.py > log 2>&1 # comment", &n);
    expect_argv(w, (const char *const[]){"python", "t.py", NULL});
    xmem_argv_free(w);
    assert_null(xmem_words_split("   ", &n));
    assert_null(xmem_words_split("echo 'unterminated", &n));
}

static void directive_wins(void **state)
{
    const char *script = "#!/bin/bash\n#SBATCH --gres=gpu:1\npython3 prep.py\n"
                         "#XMEM torchrun --nproc_per_node=1 train.py --epochs 1\n"
                         "srun torchrun train.py\n";
    char **argv;
    int line, source;

    assert_int_equal(xmem_entrypoint_find(script, &argv, &line, &source), 0);
    assert_int_equal(source, XMEM_ENTRY_DIRECTIVE);
    assert_int_equal(line, 4);
    expect_argv(argv, (const char *const[]){"torchrun", "--nproc_per_node=1", "train.py",
                                            "--epochs", "1", NULL});
    xmem_argv_free(argv);
}

static void first_python_line_behind_wrappers(void **state)
{
    const char *script = "#!/bin/bash\n# python3 commented.py\necho start\nmodule load x\n"
                         "OMP_NUM_THREADS=4 srun -n 1 --gres=gpu:1 python3.11 -u train.py \\\n"
                         "   --lr 0.1\npython other.py\n";
    char **argv;
    int line, source;

    assert_int_equal(xmem_entrypoint_find(script, &argv, &line, &source), 0);
    assert_int_equal(source, XMEM_ENTRY_SCANNED);
    assert_int_equal(line, 5);
    expect_argv(argv, (const char *const[]){"python3.11", "-u", "train.py", "--lr", "0.1", NULL});
    xmem_argv_free(argv);
}

static void exec_env_and_paths(void **state)
{
    char **argv;
    int line, source;

    assert_int_equal(xmem_entrypoint_find("exec env -u X A=1 /opt/venv/bin/python t.py\n", &argv,
                                          &line, &source),
                     0);
    expect_argv(argv, (const char *const[]){"/opt/venv/bin/python", "t.py", NULL});
    xmem_argv_free(argv);
}

static void nothing_to_profile(void **state)
{
    char **argv;
    int line, source;

    assert_int_equal(
        xmem_entrypoint_find("#!/bin/sh\necho hi\n./a.out\npythonic.sh\n", &argv, &line, &source),
        -1);
    assert_null(argv);
    assert_int_equal(source, XMEM_ENTRY_NONE);
}

static void command_line_strips_srun(void **state)
{
    char *cmd[] = {"srun", "-n", "1", "--gres=gpu:1", "python3", "t.py", NULL};
    char **argv = xmem_entrypoint_from_argv(cmd, 6);

    expect_argv(argv, (const char *const[]){"python3", "t.py", NULL});
    xmem_argv_free(argv);
}

static void sbatch_lines_stop_at_first_command(void **state)
{
    int n;
    char **w = xmem_script_sbatch_options(
        "#!/bin/bash\n#SBATCH --gres=gpu:1 -p debug\n\n#SBATCH --xmem\necho x\n#SBATCH -N 4\n", &n);

    assert_int_equal(n, 4);
    expect_argv(w, (const char *const[]){"--gres=gpu:1", "-p", "debug", "--xmem", NULL});
    xmem_argv_free(w);
}

int xmem_test_group_entrypoint(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(words_quotes_and_operators),
        cmocka_unit_test(directive_wins),
        cmocka_unit_test(first_python_line_behind_wrappers),
        cmocka_unit_test(exec_env_and_paths),
        cmocka_unit_test(nothing_to_profile),
        cmocka_unit_test(command_line_strips_srun),
        cmocka_unit_test(sbatch_lines_stop_at_first_command),
    };
    return cmocka_run_group_tests_name("entrypoint", tests, NULL, NULL);
}
