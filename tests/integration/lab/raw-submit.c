/*
 * raw-submit.c — a hostile client for tests: submits a held batch job with raw libslurm,
 * its GPU request (tres_per_node) taken verbatim from argv[1], which no sbatch parser
 * checked. Prints the job id. job_submit.lua must write the request into root's
 * AdminComment parsed, never copied (issue 26, L6). Built by the test that uses it.
 *
 * usage: raw-submit TRES_PER_NODE SCRIPT_TEXT [SPANK_VAR=VALUE...]
 * The SPANK variables are what a client's plugin would hand the controller (XMEM_MODE=...).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

int main(int argc, char **argv)
{
    job_desc_msg_t job;
    submit_response_msg_t *resp = NULL;
    char cwd[4096];
    char *env[] = {"PATH=/usr/bin:/bin", NULL};

    if (argc < 3 || getcwd(cwd, sizeof(cwd)) == NULL) {
        fprintf(stderr, "usage: raw-submit TRES_PER_NODE SCRIPT_TEXT [SPANK_VAR=VALUE...]\n");
        return 2;
    }
    slurm_init(NULL);
    slurm_init_job_desc_msg(&job);
    job.name = "raw-gres";
    job.script = argv[2];
    job.tres_per_node = argv[1];
    job.work_dir = cwd;
    job.std_out = "/dev/null";
    job.user_id = getuid();
    job.group_id = getgid();
    job.min_nodes = 1;
    job.priority = 0; /* held */
    job.environment = env;
    job.env_size = 1;
    job.spank_job_env = argv + 3;
    job.spank_job_env_size = (uint32_t)(argc - 3);
    if (slurm_submit_batch_job(&job, &resp) != SLURM_SUCCESS) {
        fprintf(stderr, "raw-submit: %s\n", slurm_strerror(slurm_get_errno()));
        return 1;
    }
    printf("Submitted batch job %u\n", resp->job_id);
    slurm_free_submit_response_response_msg(resp);
    slurm_fini();
    return 0;
}
