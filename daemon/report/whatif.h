/*
 * whatif.h — `xmem report --what-if KEY=VALUE[,...]`: the site's own history replayed under
 * another packing policy. The jobs are the ones `xmem calibrate` learns from (classify(): an
 * estimate with a measured peak, or an OOM on a share), read by the same loader; each one's
 * share under the policy in force and under the changed one comes from share() of
 * etc/xmem_lib.lua, the code slurmctld runs (whatif_share.cpp), over the policy xmemd renders
 * (policy_render_lua). The arithmetic here is pure, so unit tests reach it without Lua or a
 * ledger (docs/report.md, "What if").
 */
#ifndef XMEM_WHATIF_H
#define XMEM_WHATIF_H

#include "calibrate.h"
#include "report.h"

#include "policy.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace xmem::report
{

// One change: a key of xmem.yaml's `policy:` block and its value as written there.
struct Change {
    std::string key, value;
};

// The keys a what-if may change: those share() reads that are not per-partition facts.
const std::vector<std::string> &what_if_keys();
// "mode=mps,margin_percent=20" as changes, each value checked by xmemd's own parser (one
// line naming the change and the fix on failure, starting "xmem: report: --what-if").
xmem::Result<std::vector<Change>> parse_changes(const std::string &text);
// `p` with the changes applied (they were checked by parse_changes).
xmem::server::Policy apply_changes(xmem::server::Policy p, const std::vector<Change> &changes);

// What a policy gives one job: share() and the required enforcement level, as job_submit.lua
// applies them.
struct Share {
    std::string kind = "whole"; // "shard", "mps" or "whole"
    int count = 0;              // shards, or MPS percentage; 0 when whole
    int per_gpu = 0;            // shards_per_gpu or mps_per_gpu of the job's GPU target
    uint64_t share_mb = 0;      // the share size: the limit plus the margin
    int margin_percent = 0;     // the site margin share() applied
    bool packed = false;        // a share, on a partition whose level meets the required one
};
// The part of one GPU a share is (shard:3 of 10 is 0.3); 1 for a whole GPU.
double share_part(const Share &s);

// What share() is asked for one job.
struct ShareQuery {
    uint64_t limit_mb = 0;
    std::string partition, account; // "" when unknown
};
// Answers the queries under one policy, in order, or fails with the error line.
using ShareFn = std::function<xmem::Result<std::vector<Share>>(const xmem::server::Policy &,
                                                               const std::vector<ShareQuery> &)>;

// One job under one policy.
struct Replayed {
    Share share;
    bool oom = false; // packed, and its peak above its limit (or an OOM on a share already)
};

// One job of the replay.
struct WhatIfJob {
    uint64_t job_id = 0;
    std::string user, partition, gpu;
    uint64_t estimate_bytes = 0, limit_bytes = 0, measured_bytes = 0;
    uint64_t capacity_bytes = 0; // one whole GPU: what an unpacked job may use
    bool censored = false;       // ran out of memory on its share: no peak, above its limit
    double hours = 0;
    bool actual_packed = false, actual_oom = false;
    double actual_part = 1; // the part of a GPU it ran on
    Replayed current, what_if;
};

// Sums for one column: what happened, or what a policy would give.
struct Side {
    uint64_t packed = 0, oom = 0;
    double gpu_hours_freed = 0; // packed jobs that did not run out of memory: (1 - part) x hours
    void add(bool packed, bool oom, double part, double hours);
};

struct WhatIf {
    std::vector<Change> changes;
    std::vector<WhatIfJob> jobs; // the jobs considered, in ledger order
    std::map<Skip, std::size_t> skipped;
    std::size_t defective = 0; // rows the report shows but no replay can read
    Side actual, current, what_if;
};

// A job held to `limit` runs out of memory when its peak is above it; one that already ran
// out on a share (censored) does so again. A job on a whole GPU is held to nothing.
bool would_oom(const Pair &pair, bool packed);
// The part of one GPU a job actually ran on: the ledger's, else its limit over the GPU.
double actual_part(const JobRecord &j);
// What a job is held to: its limit on a share, the whole GPU otherwise.
uint64_t held_to(const WhatIfJob &j, bool packed);
// The replay of `jobs` in the report's window under `current` and under it changed.
xmem::Result<WhatIf> build_what_if(const std::vector<JobRecord> &jobs, const Options &opt,
                                   const xmem::server::Policy &current,
                                   const std::vector<Change> &changes, const ShareFn &shares);

// share() of xmem_lib.lua run by lua5.1 (whatif_share.cpp). `config` is xmem.yaml's path:
// the xmem_lib.lua beside it (where slurmctld reads it) is used first.
ShareFn lua_shares(const std::string &config);

// Renderings: the text sections, the CSV (one row per job), the JSON object, the HTML part.
std::string render_what_if_table(const WhatIf &w);
std::string render_what_if_csv(const WhatIf &w);
std::string render_what_if_json(const WhatIf &w);
std::string render_what_if_html(const WhatIf &w);

} // namespace xmem::report
#endif
