/*
 * profile_job.h — profiles as Slurm jobs (docs/profile-jobs.md). With `profile_partition` set,
 * xmemd still runs the estimator in its sandbox on the login node, as the user, but tells it
 * to start its exact profiler (and, with `profile_partition_fast`, its fast one) through srun
 * in that partition: the heavy run happens on a CPU node, as the user, under the partition's
 * limits and the sandbox's own (srun propagates the resource limits), with the environment
 * the preamble left (srun exports it). Slurm's time limit bounds the job even when srun is
 * killed; xmemd cancels it then as well. A job Slurm ended at its time limit is read back
 * into the run as a profile past its wall time, so each ends as a local profile would.
 */
#ifndef XMEMD_PROFILE_JOB_H
#define XMEMD_PROFILE_JOB_H

#include "config.h"
#include "sandbox.h"

#include <cstdint>
#include <string>
#include <vector>

namespace xmem::server
{

// The job's name: xmemd cancels it by this name and the user's uid.
std::string profile_job_name(uint64_t request_id);

// The srun command the estimator puts before its profiler: words separated by one space
// (config_check refuses a partition or srun path with a space). WALL_MS: the sandbox's wall
// limit; the job's time limit is the whole minutes that cover it, so the sandbox's own limit
// ends a slow profile first, with the local outcome, and Slurm's bounds a job left behind.
std::string profile_job_launcher(const ProfileJobSite &site, int wall_ms, uint64_t request_id);

// The estimator's options for it: --exact-launcher and, when the site says so,
// --fast-launcher; none when profile jobs are off.
std::vector<std::string> profile_job_options(const ProfileJobSite &site, int wall_ms,
                                             uint64_t request_id);

// What a local profile would have seen, from the job's final state in Slurm (STATE, squeue's
// %T): a job ended at its time limit makes the run one that passed its wall time. A cancel
// or a failure keeps srun's status (the task's, or 128+N when a signal N ended it), which the
// verdict reads as a local profile's own.
void profile_job_reading(SandboxRun &run, const std::string &state);

// Whether the run ended in a way that can leave the job behind (srun killed with the
// sandbox: wall time, a cancel, a signal).
bool profile_job_left_behind(const SandboxRun &run);

// The commands xmemd runs as root about the request's job, by its name and the user's uid
// (so they can reach no other job): its state, and its cancel.
std::vector<std::string> profile_job_squeue_argv(const ProfileJobSite &site, uint64_t request_id,
                                                 uid_t uid);
std::vector<std::string> profile_job_scancel_argv(const ProfileJobSite &site, uint64_t request_id,
                                                  uid_t uid);

// Adds what srun needs to the sandbox's environment: xmemd's own SLURM_CONF, if set (the
// site's cluster, not one the user names). Nothing when profile jobs are off.
void profile_job_environment(const ProfileJobSite &site, std::vector<std::string> &env);

// After the sandbox: a failed run is read against its job's state in Slurm, and a job the
// run may have left behind is cancelled. Nothing when profile jobs are off. Blocking.
void profile_job_settle(const ProfileJobSite &site, uint64_t request_id, uid_t uid,
                        SandboxRun &run);

// The job's state ("COMPLETED", "TIMEOUT", ...; "" when Slurm does not say). Blocking.
std::string profile_job_state(const ProfileJobSite &site, uint64_t request_id, uid_t uid);

// Cancels it if it still runs; logs a failure (Slurm's time limit ends it then). Blocking.
void profile_job_cancel(const ProfileJobSite &site, uint64_t request_id, uid_t uid);

} // namespace xmem::server
#endif
