/*
 * calibrate.h — `xmem calibrate`: the margin per GPU type (and per account) that keeps the
 * share of jobs exceeding their share at or below a target, learnt from the ledger's pairs of
 * (limit the job ran under, measured peak). Next to the report because it reads the same
 * ledger rows (JobRecord, load_jobs); the pure arithmetic is here so unit tests reach it
 * without a database (docs/enforcement.md, "Calibration").
 */
#ifndef XMEM_CALIBRATE_H
#define XMEM_CALIBRATE_H

#include "report.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace xmem::report
{

// One job as evidence. A censored pair is a job that ran out of memory on its share: its
// true peak is above its limit by an unknown amount, so it counts as exceeding at any margin.
struct Pair {
    uint64_t limit_bytes = 0;
    uint64_t measured_bytes = 0; // meaningless when censored
    bool censored = false;
};

// Whether the job ended in [--since, --until).
bool in_window(const JobRecord &j, const Options &opt);

// Why a job is not a pair (counted per reason in the evidence).
enum class Skip { none, no_estimate, whole_gpu_oom, no_measured_peak };
const char *skip_reason(Skip s);
// Whether `j` is a pair, and which; `j` must have no defect.
Skip classify(const JobRecord &j, Pair &pair);

// measured / limit - 1, the error of one uncensored pair (0.1: the job used 10% more).
double pair_error(const Pair &p);
// Nearest-rank percentile (0..100) of sorted `v`; 0 when empty.
double percentile(const std::vector<double> &sorted, double pct);
// Pairs that exceed limit * (1 + margin/100): the censored ones and those measured above.
std::size_t exceeding(const std::vector<Pair> &pairs, int margin_percent);
// The smallest whole-percent margin in 0..max_percent at which exceeding/pairs <= target;
// nullopt when none does (or there are no pairs).
std::optional<int> smallest_margin(const std::vector<Pair> &pairs, double target, int max_percent);
// Mean bytes a job leaves unused at `margin_percent`: limit*(1+m/100) - measured, 0 when
// above, over the uncensored pairs.
double mean_slack_bytes(const std::vector<Pair> &pairs, int margin_percent);

struct CalibrateOptions {
    Options sources;           // --db, --config, --catalog, --since, --until (report's)
    double target = 0;         // --target-oom-rate
    std::size_t min_pairs = 0; // --min-pairs
    bool by_account = false;   // --by account
    bool apply = false;        // --apply
};

// The evidence for one GPU type, or one account on it.
struct Evidence {
    std::string gpu, account; // account "" = the GPU type as a whole
    std::vector<Pair> pairs;
    std::map<Skip, std::size_t> skipped;
    int current_percent = 0;
    std::optional<int> proposed; // set only with enough pairs and a margin that meets the target
    std::string why_none;        // when not proposed: one line
};

// Groups the (defect-free) jobs by GPU type, and by account under it with `by_account`, and
// proposes a margin for each. `current(gpu, account)` is the margin in force today.
std::vector<Evidence>
calibrate(const std::vector<JobRecord> &jobs, const CalibrateOptions &opt,
          const std::function<int(const std::string &, const std::string &)> &current);
// The evidence as text, for people.
std::string render_evidence(const std::vector<Evidence> &all, const CalibrateOptions &opt);

} // namespace xmem::report
#endif
