/*
 * config.h — xmemd's configuration (/etc/slurm/xmem.yaml), parsed strictly: an unknown key or
 * a bad value is an error "FILE:LINE: key: what is wrong" and the daemon does not start (or,
 * on SIGHUP, keeps the previous config). Documented key by key in etc/xmem.yaml.
 */
#ifndef XMEMD_CONFIG_H
#define XMEMD_CONFIG_H

#include "result.h"

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

// One GPU target of the packing policy (default, or a partition inheriting from it).
struct GpuTarget {
    std::string gpu;
    double memory_gb = 0;
    int shards_per_gpu = 0;
    int mps_per_gpu = 0;
};

struct Policy {
    std::string mode = "shard";
    int margin_percent = 10;
    int whole_gpu_above_percent = 90;
    int decision_ttl_seconds = 600;
    GpuTarget default_target{"A100-40GB", 40, 10, 100};
    std::vector<std::pair<std::string, GpuTarget>> partitions; // file order
};

struct Config {
    std::string path;        // file it came from ("" = built-in defaults)
    std::string fingerprint; // hash of the file content: a change invalidates the cache
    std::string socket;
    std::string lockfile;
    std::string database;
    std::string munge_socket;   // "" = libmunge's default
    std::string log;            // "stderr" or "syslog"
    std::string metrics_listen; // "" = off; "HOST:PORT"
    std::vector<std::string> profiler;
    std::string torch; // "" = let the profiler choose
    int iterations;
    bool allow_root;
    int max_concurrent;
    int max_per_user;
    int queue_size;
    int max_connections;
    SandboxLimits limits;
    int cache_ttl_seconds;
    int cache_max_entries;
    Policy policy;
};

// Built-in defaults (defaults.h).
Config config_defaults();
// Loads and validates FILE; the error is "FILE:LINE: key: what is wrong".
Result<Config> config_load(const std::string &path);
// GPU for a request naming `partition` (may be empty) but no GPU.
const GpuTarget &policy_target(const Policy &p, const std::string &partition);
// Capacity in bytes of GPU `name` as the policy knows it; 0 if unknown.
uint64_t policy_gpu_bytes(const Policy &p, const std::string &name);
// Renders the policy as the Lua table job_submit.lua loads.
std::string policy_render_lua(const Policy &p, unsigned daemon_uid);

} // namespace xmem::server
#endif
