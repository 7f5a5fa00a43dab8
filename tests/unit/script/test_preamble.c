/* test_preamble.c — which lines before the entrypoint set the environment (run by xmemd)
 * and which do work (not run, named). */
#include <string.h>

#include "test-list.h"
#include "xmem_script.h"

static void environment_lines_are_kept(void **state)
{
    static const char *const kept[] = {
        "module load cuda/12.4",
        "module purge && module load python/3.11",
        "ml gcc",
        "module use $HOME/modules",
        "source ~/venvs/torch/bin/activate",
        ". /opt/venv/bin/activate",
        "conda activate torch-2.4",
        "mamba activate env",
        "eval \"$(conda shell.bash hook)\"",
        "export HF_HUB_OFFLINE=1",
        "export PYTHONPATH=$(pwd)/src:$PYTHONPATH",
        "cd \"$(dirname \"$0\")\"",
        "unset PYTHONPATH",
        "cd $SLURM_SUBMIT_DIR",
        "set -euo pipefail",
        "set -x",
        "OMP_NUM_THREADS=4",
        "export DATA=\"/scratch/$USER\"; cd \"$DATA\"",
        "module load cuda 2>/dev/null || true",
        "spack load py-torch",
        "source activate.sh # our env",
        NULL,
    };
    (void)state;
    for (const char *const *l = kept; *l != NULL; l++) {
        if (!xmem_preamble_line_sets_env(*l))
            fail_msg("should be kept: %s", *l);
    }
}

static void work_lines_are_skipped(void **state)
{
    static const char *const skipped[] = {
        "srun hostname",
        "python prepare.py",
        "cp -r data /tmp/data",
        "mkdir -p out",
        "wget https://example.org/x.tar",
        "echo starting",
        "module load cuda | tee log",
        "export N=$(srun hostname)",
        "export N=`python -c 'print(1)'`",
        "cd data && python prepare.py",
        "module list > modules.txt",
        "conda create -n x python",
        "sleep 10 &",
        "if [ -f x ]; then source x; fi",
        "ulimit -v unlimited",
        "cat <<EOF",
        "export X='unclosed",
        "(cd data && make)",
        "export X=)",
        "f() { module load x; }",
        /* issue 26, L1: work hidden behind a pure-looking first word, eval, a prompt
         * transformation or an alias */
        "cd $(pwd; touch /tmp/x)",
        "cd $(pwd && touch /tmp/x)",
        "cd `pwd; touch /tmp/x`",
        "export A=$(dirname $(touch /tmp/x))",
        "eval \"$(pwd)\"",
        "eval $(dirname /bin/sh)",
        "export P=${A@P}",
        "cd ${HOME@E}",
        "alias export='touch /tmp/x;'",
        "unalias ls",
        NULL,
    };
    (void)state;
    for (const char *const *l = skipped; *l != NULL; l++) {
        if (xmem_preamble_line_sets_env(*l))
            fail_msg("should be skipped: %s", *l);
    }
}

static void classify_script(void **state)
{
    const char *script = "#!/bin/bash\n"                /* 1 */
                         "#SBATCH --gres=gpu:1\n"       /* 2 */
                         "\n"                           /* 3 */
                         "module load cuda/12.4\n"      /* 4 */
                         "srun hostname\n"              /* 5 */
                         "source /venv/bin/activate\n"  /* 6 */
                         "if [ -d data ]; then\n"       /* 7 */
                         "  export DATA=data\n"         /* 8 */
                         "fi\n"                         /* 9 */
                         "export A=1 \\\n  B=2\n"       /* 10-11 */
                         "python prepare.py\n"          /* 12 */
                         "setup() {\n"                  /* 13 */
                         "  module load x\n"            /* 14 */
                         "}\n"                          /* 15 */
                         "if ls | grep -q x; then\n"    /* 16 */
                         "  cd x\n"                     /* 17 */
                         "fi\n"                         /* 18 */
                         "python train.py --epochs 1\n" /* 19 */
                         "export AFTER=1\n";            /* 20 */
    struct xmem_preamble p;

    (void)state;
    assert_int_equal(xmem_preamble_classify(script, 19, &p), 0);
    assert_int_equal(p.nkept, 3);
    assert_int_equal(p.kept[0].line, 4);
    assert_string_equal(p.kept[0].text, "module load cuda/12.4");
    assert_int_equal(p.kept[1].line, 6);
    assert_int_equal(p.kept[2].line, 10);
    assert_string_equal(p.kept[2].text, "export A=1   B=2");
    assert_int_equal(p.nskipped, 11);
    assert_int_equal(p.skipped[0].line, 5);
    assert_string_equal(p.skipped[0].text, "srun hostname");
    assert_int_equal(p.skipped[1].line, 7); /* the whole block */
    assert_int_equal(p.skipped[2].line, 8);
    assert_int_equal(p.skipped[3].line, 9);
    assert_int_equal(p.skipped[4].line, 12);
    for (int i = 5; i < 11; i++) /* the function and the if with a pipe, every line */
        assert_int_equal(p.skipped[i].line, 13 + (i - 5));
    xmem_preamble_free(&p);
}

static void entrypoint_assignments_are_kept(void **state)
{
    const char *script = "#!/bin/bash\n"
                         "PYTHONPATH=\"$PWD/src\" OMP_NUM_THREADS=4 srun python train.py\n";
    const char *impure = "#!/bin/bash\nN=$(nproc) python train.py\n";
    struct xmem_preamble p;

    (void)state;
    assert_int_equal(xmem_preamble_classify(script, 2, &p), 0);
    assert_int_equal(p.nkept, 1);
    assert_int_equal(p.kept[0].line, 2);
    assert_string_equal(p.kept[0].text, "export PYTHONPATH=\"$PWD/src\" OMP_NUM_THREADS=4");
    xmem_preamble_free(&p);
    assert_int_equal(xmem_preamble_classify(impure, 2, &p), 0);
    assert_int_equal(p.nkept, 0); /* $(nproc) runs a command: not run */
    xmem_preamble_free(&p);
    assert_int_equal(xmem_preamble_classify("python train.py\n", 1, &p), 0);
    assert_int_equal(p.nkept + p.nskipped, 0);
    xmem_preamble_free(&p);
}

static void directive_preamble_ends_at_training(void **state)
{
    const char *script = "#!/bin/bash\n"                  /* 1 */
                         "#XMEM python train.py --lr 1\n" /* 2 */
                         "source v/bin/activate\n"        /* 3 */
                         "python prepare.py\n"            /* 4 */
                         "srun python train.py --lr 1\n"; /* 5 */
    char *named[] = {"python", "train.py", "--lr", "1", NULL};
    char *other[] = {"python", "train.py", NULL};

    (void)state;
    assert_int_equal(xmem_entrypoint_training_line(script, named), 5);
    assert_int_equal(xmem_entrypoint_training_line(script, other), 0);
    assert_int_equal(xmem_entrypoint_training_line(script, NULL), 4);
    assert_int_equal(xmem_entrypoint_training_line("echo hi\n", NULL), 0);
}

int xmem_test_group_preamble(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(environment_lines_are_kept),
        cmocka_unit_test(work_lines_are_skipped),
        cmocka_unit_test(classify_script),
        cmocka_unit_test(entrypoint_assignments_are_kept),
        cmocka_unit_test(directive_preamble_ends_at_training),
    };
    return cmocka_run_group_tests_name("preamble", tests, NULL, NULL);
}
