/*
 * policy.h — the packing policy of xmem.yaml's `policy:` block. A target names a GPU and
 * keeps only policy numbers (shards, MPS share); what the GPU is (its memory) comes from the
 * GPU catalog, etc/gpus.yaml, the one source of GPU facts, read when the config is loaded.
 */
#ifndef XMEMD_POLICY_H
#define XMEMD_POLICY_H

#include "common/result.h"
#include "contract/defaults.h"
#include "contract/enforcement.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xmem::analysis
{
class Catalog;
}

namespace xmem::server
{

// Lines of xmem.yaml a target's values were written on (0: inherited or built in), so the
// checks made once the catalog is read can name FILE:LINE like every other config error.
struct TargetLines {
    int gpu = 0;
    int memory_gb = 0;
};

// One GPU target of the packing policy (default, or a partition inheriting from it).
struct GpuTarget {
    std::string gpu; // a catalog name or alias
    int shards_per_gpu = 0;
    int mps_per_gpu = 0;
    uint64_t memory_mib = 0;     // the catalog's total_memory_mib for `gpu` (policy_resolve)
    double stated_memory_gb = 0; // deprecated `memory_gb:` as written; 0 = not written
    TargetLines lines;
    std::string catalog_name = {}; // the catalog's full name for `gpu` (policy_resolve)
    // The level the partition's nodes hold a share to (`enforcement:`, enforcement.h); what
    // job_submit.lua compares with the required level. Client: every node sets the variable.
    int enforcement = XMEM_ENFORCE_CLIENT;
    // `whole_as_shares:`: under shard or mps, job_submit.lua queues a job that keeps one whole
    // untyped GPU per node (gpu:1) as every share of one GPU, so that Slurm 22.05, which
    // places gpu:1 jobs on a GPU whose shares other jobs hold, keeps packed jobs off it
    // (docs/enforcement.md, "Whole GPUs in a partition that packs"). false: gpu:1 stays, for
    // a partition whose nodes have no shares, or a site that mixes them on purpose.
    bool whole_as_shares = true;
};

// A margin learnt by `xmem calibrate` for one GPU type (calibration.h): it replaces
// margin_percent for jobs on that GPU, and an account's own replaces it for that account.
struct GpuMargin {
    std::string gpu; // the catalog's full name
    int percent = 0;
    std::vector<std::pair<std::string, int>> accounts; // account -> percent, file order
};

struct Policy {
    std::string mode = "shard";
    int margin_percent = 10;
    int whole_gpu_above_percent = 90;
    int decision_ttl_seconds = 600;
    // `held_deadline_s:`: how long job_submit.lua holds a job whose estimate goes on after
    // sbatch returned (begin_time), so slurmctld releases it even when xmemd never answers.
    int held_deadline_s = 1800;
    // `require_enforcement:`: a job is packed only on a partition that holds it at least this
    // well (docs/enforcement.md); none = pack anywhere.
    int require_enforcement = XMEM_ENFORCE_NONE;
    GpuTarget default_target{XMEM_DEFAULT_GPU, 10, 100, 0, 0, {}}; // memory: policy_resolve
    std::vector<std::pair<std::string, GpuTarget>> partitions;     // file order
    std::vector<GpuMargin> margins; // from the calibration file; empty: margin_percent only
};

// Sets every target's memory from `catalog`. `config` names xmem.yaml in the messages (""
// for the built-in defaults). Fails with one line "FILE:LINE: KEY: ..." when a target's GPU
// is not in the catalog or its deprecated memory_gb disagrees with it; returns one warning
// line per memory_gb that agrees (accepted, but the catalog is the only source now).
xmem::Result<std::vector<std::string>> policy_resolve(Policy &p, const analysis::Catalog &catalog,
                                                      const std::string &config);
// GPU for a request naming `partition` (may be empty) but no GPU.
const GpuTarget &policy_target(const Policy &p, const std::string &partition);
// Capacity in bytes of GPU `name` as the policy knows it (from the catalog); 0 if unknown.
uint64_t policy_gpu_bytes(const Policy &p, const std::string &name);
// Renders the policy as the Lua table job_submit.lua loads.
std::string policy_render_lua(const Policy &p, unsigned daemon_uid);
// Renders it into `path`, atomically replaced (mode 0644); the error is one line.
xmem::Result<void> policy_write_lua(const Policy &p, unsigned daemon_uid, const std::string &path);

} // namespace xmem::server
#endif
