/* test_entrypoint.c — the training command in a batch script or command line. */
#include <stdlib.h>
#include <string.h>

#include "test-list.h"
#include "xmem_script.h"

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

/* The script sbatch --wrap submits (sbatch 22.05), which the decision of a --wrap job is bound
 * to: the plugin and xmemd read the entrypoint out of these bytes, so both number lines alike. */
static void wrap_script_is_sbatchs(void **state)
{
    struct xmem_script_job job;
    char *w = xmem_wrap_script("python3 train.py --lr 0.1");

    (void)state;
    assert_string_equal(
        w, "#!/bin/sh\n# This script was created by sbatch --wrap.\n\npython3 train.py --lr 0.1\n");
    assert_int_equal(xmem_script_job_find(w, &job), 0);
    assert_int_equal(job.line, 4);
    assert_string_equal(job.entry[1], "train.py");
    assert_int_equal(job.pre.nkept + job.pre.nskipped, 0);
    xmem_script_job_free(&job);
    free(w);
}

/* The preamble ends where the job starts training: the entrypoint's line, or for an #XMEM line
 * at the top, the line that runs its command. */
static void job_preamble_ends_where_training_starts(void **state)
{
    const char *scanned = "#!/bin/bash\nmodule load cuda\nsrun hostname\n"
                          "OMP_NUM_THREADS=4 srun -n 1 python3 big.py\nmodule load x\n";
    const char *directive = "#!/bin/bash\n#XMEM python3 t.py\nsource venv/bin/activate\n"
                            "python3 prepare.py\nsrun python3 t.py\n";
    struct xmem_script_job job;

    (void)state;
    assert_int_equal(xmem_script_job_find(scanned, &job), 0);
    assert_int_equal(job.source, XMEM_ENTRY_SCANNED);
    assert_int_equal(job.line, 4);
    assert_int_equal(job.pre.nkept, 2);
    assert_int_equal(job.pre.kept[0].line, 2);
    assert_string_equal(job.pre.kept[1].text, "export OMP_NUM_THREADS=4");
    assert_int_equal(job.pre.nskipped, 1);
    xmem_script_job_free(&job);

    assert_int_equal(xmem_script_job_find(directive, &job), 0);
    assert_int_equal(job.source, XMEM_ENTRY_DIRECTIVE);
    assert_int_equal(job.line, 2);
    assert_int_equal(job.pre.nkept, 1);
    assert_int_equal(job.pre.kept[0].line, 3);
    assert_int_equal(job.pre.nskipped, 1);
    assert_int_equal(job.pre.skipped[0].line, 4);
    xmem_script_job_free(&job);

    assert_int_equal(xmem_script_job_find("#!/bin/sh\nhostname\n", &job), -1);
    assert_null(job.entry);
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
        cmocka_unit_test(wrap_script_is_sbatchs),
        cmocka_unit_test(job_preamble_ends_where_training_starts),
    };
    return cmocka_run_group_tests_name("entrypoint", tests, NULL, NULL);
}
