// profile_job.cpp — the srun words for a profile job, and how its end in Slurm reads back
// into the run (profile_job.h; docs/profile-jobs.md).
#include "profile_job.h"
#include "log.h"
#include "slurm_command.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace xmem::server
{

namespace
{

// The Slurm command beside srun (scancel, squeue).
std::string slurm_tool(const std::string &srun, const char *name)
{
    auto slash = srun.rfind('/');
    return srun.substr(0, slash + 1) + name;
}

// Runs ARGV as xmemd; true when it exits 0, with its stdout (at most 4 KiB) in *out.
bool run_tool(const std::vector<std::string> &argv, std::string *out)
{
    int rc = slurm_command(argv, out, 4096);
    if (rc != 0)
        log_warn("profile job: %s failed (%s)", argv[0].c_str(),
                 rc < 0 ? strerror(errno) : "non-zero exit");
    return rc == 0;
}

} // namespace

std::string profile_job_name(uint64_t request_id)
{
    return "xmem-profile-" + std::to_string(request_id);
}

std::string profile_job_launcher(const ProfileJobSite &site, int wall_ms, uint64_t request_id)
{
    // One minute more than covers the wall time: Slurm checks time limits every half
    // minute or so, and may end a job up to that early.
    int minutes = (wall_ms + 59999) / 60000 + 1;
    // --quiet: srun's job lines would reach the user's message; --propagate: the sandbox's
    // resource limits hold on the node too; --export=ALL: the preamble's environment.
    return site.srun + " --partition=" + site.partition + " --time=" + std::to_string(minutes) +
           " --nodes=1 --ntasks=1 --job-name=" + profile_job_name(request_id) +
           " --quiet --propagate=ALL --export=ALL --";
}

std::vector<std::string> profile_job_options(const ProfileJobSite &site, int wall_ms,
                                             uint64_t request_id)
{
    if (site.partition.empty())
        return {};
    std::string launcher = profile_job_launcher(site, wall_ms, request_id);
    std::vector<std::string> opts = {"--exact-launcher", launcher};
    if (site.fast) {
        opts.push_back("--fast-launcher");
        opts.push_back(launcher);
    }
    return opts;
}

void profile_job_reading(SandboxRun &run, const std::string &state)
{
    if (state == "TIMEOUT" || state == "DEADLINE")
        run.wall_expired = true;
}

bool profile_job_left_behind(const SandboxRun &run)
{
    return run.spawned &&
           (run.wall_expired || run.cancelled || run.output_overflow || run.term_signal != 0);
}

std::vector<std::string> profile_job_squeue_argv(const ProfileJobSite &site, uint64_t request_id,
                                                 uid_t uid)
{
    return {slurm_tool(site.srun, "squeue"),
            "--noheader",
            "--states=all",
            "--name=" + profile_job_name(request_id),
            "--user=" + std::to_string(uid),
            "--format=%T"};
}

std::vector<std::string> profile_job_scancel_argv(const ProfileJobSite &site, uint64_t request_id,
                                                  uid_t uid)
{
    return {slurm_tool(site.srun, "scancel"), "--quiet", "--name=" + profile_job_name(request_id),
            "--user=" + std::to_string(uid)};
}

std::string profile_job_state(const ProfileJobSite &site, uint64_t request_id, uid_t uid)
{
    std::string out;
    if (!run_tool(profile_job_squeue_argv(site, request_id, uid), &out))
        return "";
    auto end = out.find_first_of("\n ");
    return out.substr(0, end);
}

void profile_job_cancel(const ProfileJobSite &site, uint64_t request_id, uid_t uid)
{
    std::string out;
    run_tool(profile_job_scancel_argv(site, request_id, uid), &out);
}

void profile_job_environment(const ProfileJobSite &site, std::vector<std::string> &env)
{
    const char *conf = getenv("SLURM_CONF");
    if (!site.partition.empty() && conf)
        env.push_back(std::string("SLURM_CONF=") + conf);
}

void profile_job_settle(const ProfileJobSite &site, uint64_t request_id, uid_t uid, SandboxRun &run)
{
    if (site.partition.empty() || !run.spawned || (run.exit_status == 0 && run.term_signal == 0))
        return;
    profile_job_reading(run, profile_job_state(site, request_id, uid));
    if (profile_job_left_behind(run))
        profile_job_cancel(site, request_id, uid);
}

} // namespace xmem::server
