/*
 * config.h — xmemd's configuration (/etc/slurm/xmem.yaml), parsed strictly: an unknown key or
 * a bad value is an error "FILE:LINE: key: problem; fix" and the daemon does not start (or,
 * on SIGHUP, keeps the previous config). `xmemd --check-config` prints every problem of a
 * file, one per line. Documented key by key in etc/xmem.yaml.
 */
#ifndef XMEMD_CONFIG_H
#define XMEMD_CONFIG_H

#include "policy.h"
#include "common/result.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xmem::server
{

struct SandboxLimits {
    uint64_t address_space_mb;
    int cpu_seconds;
    int processes;
    uint64_t file_size_mb;
    int wall_seconds;
    int nice;
    uint64_t output_kb;
};

// Profiles as Slurm jobs (profile_job.h): the partition ("" = on the login node), whether
// fast-mode profiles go there too, and the srun that starts them.
struct ProfileJobSite {
    std::string partition;
    bool fast = false;
    std::string srun;
};

struct Config {
    std::string path;        // file it came from ("" = built-in defaults)
    std::string fingerprint; // hash of the file content: a change invalidates the cache
    std::string socket;
    std::string lockfile;
    std::string database;
    std::string munge_socket;           // "" = libmunge's default
    std::string log;                    // "stderr" or "syslog"
    std::string metrics_listen;         // "" = off; "HOST:PORT"
    std::vector<std::string> estimator; // the command run for an estimate, and its first args
    int estimator_line = 0;             // the key's line in the file; 0 = built in
    std::string torch;                  // "" = let the estimator choose
    int steps;                          // optimizer steps profiled
    bool allow_root;
    // How long sbatch waits for an estimate before its job is queued held (docs/async.md);
    // 0: it waits for the answer, up to its own timeout.
    int interactive_budget_s;
    int max_concurrent;
    int max_per_user;
    int queue_size;
    int max_connections;
    SandboxLimits limits;
    ProfileJobSite profile_job; // keys profile_partition, profile_partition_fast, srun
    int cache_ttl_seconds;
    int cache_max_entries;
    std::string catalog;     // key: catalog; "" = the catalog search; after loading, the file read
    std::string calibration; // key: calibration; "" = calibration.yaml beside the database
    std::string policy_file; // key: policy_file; "" = none: render it with --render-policy
    Policy policy;
};

// The calibration file: the key, else calibration.yaml in the database's directory.
std::string config_calibration_path(const Config &c);
// Built-in defaults (defaults.h).
Config config_defaults();
// FILE read and checked: every problem found, one line each, "FILE:LINE: key: problem; fix"
// in file order (a YAML syntax error stops the reading at its line; the GPU catalog is read
// only when the keys have no problem). With no problem, `config` is the loaded config.
struct ConfigCheck {
    Config config;
    std::vector<std::string> problems;
};
ConfigCheck config_check(const std::string &path);
// Loads and validates FILE; the error is the first problem, and how many more there are.
Result<Config> config_load(const std::string &path);
// Reads the GPU catalog (key: catalog) and takes each policy GPU's memory from it (policy.h),
// logging a warning per deprecated memory_gb, then the calibration file's margins (key:
// calibration, checked against the catalog). config_load does it; the built-in defaults
// need it too. The error is one line "FILE[:LINE]: key: what is wrong".
xmem::Result<void> config_read_catalog(Config &c);
// What --check-config adds to loading: the estimator program exists and is executable
// ("FILE:LINE: estimator: ...; fix", the line where the key was written). Not
// done at load, so a reload never fails on a program being reinstalled; a missing program
// still fails each request with spawn_failed.
xmem::Result<void> config_check_programs(const Config &c);
// Sets one key of the `policy:` block from its text, through the same key table and checks
// as the file (`xmem report --what-if`); the error is "policy.KEY: problem; fix".
xmem::Result<void> config_policy_set(Policy &p, const std::string &key, const std::string &value);

} // namespace xmem::server
#endif
