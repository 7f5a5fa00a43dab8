/* test_shape.c — a request's GPUs per node, nodes and ranks, and their canonical text. */
#include <string.h>

#include "test-list.h"
#include "xmem_script.h"

#define ARGV(...) ((char *const[]){__VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *const[]){__VA_ARGS__}) / sizeof(char *)))

/* The canonical text of a command line's request, or "(error)". */
static const char *text_of(int argc, char *const *argv, char *buf, size_t len)
{
    struct xmem_cmdline c;
    struct xmem_job_shape s;
    char err[256];

    if (xmem_cmdline_scan(argc, argv, &c, err, sizeof(err)) < 0 || xmem_job_shape_of(&c, &s) < 0 ||
        xmem_job_shape_text(&s, buf, len) < 0)
        return "(error)";
    return buf;
}
#define TEXT(...) text_of(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), buf, sizeof(buf))

static void per_node_forms(void **state)
{
    char buf[96];

    assert_string_equal(TEXT("sbatch", "--gres=gpu:1", "j.sh"), "gpu:1");
    assert_string_equal(TEXT("sbatch", "--gres=gpu:2", "j.sh"), "gpu:2");
    assert_string_equal(TEXT("sbatch", "--gres", "gpu:a100:1", "j.sh"), "gpu:a100:1");
    assert_string_equal(TEXT("sbatch", "-N", "2", "--gres=gpu:1", "j.sh"), "gpu:1:nodes:2");
    assert_string_equal(TEXT("sbatch", "--nodes=2-4", "--gres=gpu:1", "j.sh"), "gpu:1:nodes:2");
    assert_string_equal(TEXT("sbatch", "--gpus-per-node=4", "-N2", "j.sh"), "gpu:4:nodes:2");
    assert_string_equal(TEXT("sbatch", "--gres=gpu", "j.sh"), "gpu:1");
}

static void per_task_and_per_job(void **state)
{
    char buf[96];

    /* --gpus-per-task times the tasks on each node */
    assert_string_equal(
        TEXT("sbatch", "--gpus-per-task=1", "--ntasks-per-node=2", "-N", "2", "j.sh"),
        "gpu:2:nodes:2");
    assert_string_equal(TEXT("sbatch", "--gpus-per-task=1", "-n", "4", "j.sh"), "gpu:4");
    assert_string_equal(TEXT("sbatch", "--gpus-per-task=1", "-n", "4", "-N", "2", "j.sh"),
                        "gpu:2:nodes:2");
    assert_string_equal(TEXT("sbatch", "--gpus-per-task=1", "-N", "2", "j.sh"), "gpu:1:nodes:2");
    /* --gpus is per job: spread over the nodes */
    assert_string_equal(TEXT("sbatch", "--gpus=2", "-N", "2", "j.sh"), "gpu:1:nodes:2");
    assert_string_equal(TEXT("sbatch", "-G", "a100:2", "j.sh"), "gpu:a100:2");
}

static void script_lines_count_unless_the_command_line_says(void **state)
{
    struct xmem_cmdline c;
    struct xmem_job_shape s;
    char err[256], buf[96];
    char *script[] = {"-N", "2", "--gres=gpu:1", "--ntasks-per-node=1"};

    assert_int_equal(
        xmem_cmdline_scan(ARGC("sbatch", "j.sh"), ARGV("sbatch", "j.sh"), &c, err, sizeof(err)), 0);
    xmem_cmdline_apply_script(&c, script, 4);
    assert_int_equal(xmem_job_shape_of(&c, &s), 0);
    assert_int_equal(xmem_job_shape_text(&s, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "gpu:1:nodes:2");
    assert_string_equal(c.ntasks_per_node, "1");
    assert_int_equal(xmem_cmdline_scan(ARGC("sbatch", "-N1", "j.sh"), ARGV("sbatch", "-N1", "j.sh"),
                                       &c, err, sizeof(err)),
                     0);
    xmem_cmdline_apply_script(&c, script, 4);
    assert_int_equal(xmem_job_shape_of(&c, &s), 0);
    assert_int_equal(s.nodes, 1);
}

static void shares_none_and_malformed(void **state)
{
    struct xmem_cmdline c;
    struct xmem_job_shape s;
    char err[256], buf[96];

    assert_int_equal(xmem_cmdline_scan(ARGC("sbatch", "--gres=shard:3", "j"),
                                       ARGV("sbatch", "--gres=shard:3", "j"), &c, err, sizeof(err)),
                     0);
    assert_int_equal(xmem_job_shape_of(&c, &s), 0);
    assert_true(s.shared);
    assert_int_equal(s.gpus_per_node, 0);
    assert_string_equal(TEXT("sbatch", "-N", "x", "--gres=gpu:1", "j.sh"), "(error)");
    assert_string_equal(TEXT("sbatch", "--gres=gpu:a100:x", "j.sh"), "(error)");
    assert_string_equal(TEXT("sbatch", "--gres=gpu:9999999", "j.sh"), "(error)");
}

static void parse_reads_the_text_back(void **state)
{
    struct xmem_job_shape s;
    const char *good[] = {"gpu:1", "gpu:a100:1", "gpu:2", "gpu:1:nodes:2", "gpu:a100:4:nodes:8"};
    char buf[96];

    for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
        assert_int_equal(xmem_job_shape_parse(good[i], &s), 0);
        assert_int_equal(xmem_job_shape_text(&s, buf, sizeof(buf)), 0);
        assert_string_equal(buf, good[i]);
    }
    assert_int_equal(xmem_job_shape_parse("gpu:1:nodes:2", &s), 0);
    assert_int_equal(s.gpus_per_node, 1);
    assert_int_equal(s.nodes, 2);
    const char *bad[] = {"",        "gpu",          "gpu:",          "gpu:0",
                         "gpu:-1",  "gpu:1:nodes:", "gpu:1:nodes:0", "gpu:1:nodes:2x",
                         "shard:3", "gpu::1",       "gpu:1e3",       NULL};
    for (int i = 0; bad[i] != NULL; i++)
        assert_int_equal(xmem_job_shape_parse(bad[i], &s), -1);
    assert_int_equal(xmem_job_shape_parse(NULL, &s), -1);
}

static void world_size_is_ranks_per_node_times_nodes(void **state)
{
    struct xmem_job_shape s;

    assert_int_equal(xmem_job_shape_parse("gpu:1", &s), 0);
    assert_int_equal(xmem_world_size(&s, ARGV("python3", "train.py"), 0), 1);
    assert_int_equal(xmem_job_shape_parse("gpu:1:nodes:2", &s), 0);
    assert_int_equal(xmem_world_size(&s, ARGV("python3", "train.py"), 0), 2);
    assert_int_equal(xmem_job_shape_parse("gpu:4:nodes:2", &s), 0);
    assert_int_equal(xmem_world_size(&s, ARGV("python3", "train.py"), 0), 8);
    /* torchrun names the processes per node: that is what runs */
    assert_int_equal(xmem_world_size(&s, ARGV("torchrun", "--nproc-per-node", "2", "t.py"), 0), 4);
    assert_int_equal(
        xmem_world_size(&s, ARGV("/usr/bin/torchrun", "--nproc_per_node=3", "t.py"), 0), 6);
    /* "gpu" (one per GPU) or the script's own option: the GPUs decide */
    assert_int_equal(xmem_world_size(&s, ARGV("torchrun", "--nproc-per-node=gpu", "t.py"), 0), 8);
    assert_int_equal(xmem_world_size(&s, ARGV("torchrun", "t.py", "--nproc-per-node", "2"), 0), 8);
    assert_int_equal(xmem_world_size(&s, ARGV("python3", "t.py", "--nproc-per-node", "2"), 0), 8);
}

static void srun_in_the_script_names_the_ranks(void **state)
{
    struct xmem_job_shape s;
    const char *script = "#!/bin/bash\n#SBATCH -N 2 --gres=gpu:4\nsrun hostname\n"
                         "OMP_NUM_THREADS=4 srun -n 6 --cpu-bind=cores python3 train.py --lr 1\n";

    assert_int_equal(xmem_script_srun_tasks(script, ARGV("python3", "train.py", "--lr", "1")), 6);
    assert_int_equal(xmem_script_srun_tasks("srun --ntasks-per-node=2 -N 3 python3 t.py\n",
                                            ARGV("python3", "t.py")),
                     6);
    assert_int_equal(
        xmem_script_srun_tasks("srun --ntasks-per-node 4 python3 t.py\n", ARGV("python3", "t.py")),
        4);
    /* No count, no srun, or another command: the job's own tasks (0). */
    assert_int_equal(xmem_script_srun_tasks("srun python3 t.py\n", ARGV("python3", "t.py")), 0);
    assert_int_equal(
        xmem_script_srun_tasks("python3 t.py -n 3\n", ARGV("python3", "t.py", "-n", "3")), 0);
    assert_int_equal(
        xmem_script_srun_tasks("srun -n 2 python3 other.py\n", ARGV("python3", "t.py")), 0);
    assert_int_equal(xmem_script_srun_tasks(NULL, ARGV("python3", "t.py")), 0);
    /* srun's tasks are the ranks, or each starts torchrun's processes. */
    assert_int_equal(xmem_job_shape_parse("gpu:4:nodes:2", &s), 0);
    assert_int_equal(xmem_world_size(&s, ARGV("python3", "train.py"), 6), 6);
    assert_int_equal(xmem_world_size(&s, ARGV("torchrun", "--nproc-per-node=4", "t.py"), 2), 8);
}

int xmem_test_group_shape(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(per_node_forms),
        cmocka_unit_test(per_task_and_per_job),
        cmocka_unit_test(script_lines_count_unless_the_command_line_says),
        cmocka_unit_test(shares_none_and_malformed),
        cmocka_unit_test(parse_reads_the_text_back),
        cmocka_unit_test(world_size_is_ranks_per_node_times_nodes),
        cmocka_unit_test(srun_in_the_script_names_the_ranks),
    };
    return cmocka_run_group_tests_name("shape", tests, NULL, NULL);
}
