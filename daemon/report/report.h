/*
 * report.h — `xmem report`: what packing saved, from xmemd's ledger (read-only).
 * The pure parts (dates, grouping, arithmetic, escaping) are here so unit tests reach them
 * without a database; loading and rendering live in their own files.
 */
#ifndef XMEM_REPORT_H
#define XMEM_REPORT_H

#include "common/result.h"
#include "analysis/catalog.h"
#include "defaults.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace xmem::report
{

// One finished job joined with the decision it ran under.
struct JobRecord {
    int64_t ts = 0; // when the job ended (ledger seconds)
    uint64_t job_id = 0;
    std::string user, account, partition, gpu;
    uint64_t capacity_bytes = 0;            // one whole GPU of this model (0: not in the catalog)
    uint64_t estimate_bytes = 0;            // the simulator's peak
    uint64_t limit_bytes = 0;               // the limit the job was held to
    std::optional<uint64_t> measured_bytes; // NVML peak, where the node had NVML
    bool packed = false;                    // ran on a share (estimated, fits, not --xmem=check)
    bool eligible = false; // its decision could be packed (estimated, fits, not --xmem=check)
    int exit_status = 0;
    uint64_t elapsed_seconds = 0;
    bool cuda_oom = false;
    std::string enforcement;   // contract/enforcement.h name; "" = unknown (older rows)
    bool oom_requeued = false; // xmem requeued the job after a CUDA OOM on its share
    // The part of one GPU the job was granted (a packed job's share on its node: shard:3 of
    // 10 per GPU is 0.3); unknown for whole-GPU jobs and rows before ledger schema 8.
    std::optional<double> gpu_fraction;
    // What is wrong with the row, "" when nothing: a peak or limit that is not a
    // non-negative integer, or a GPU name the catalog lacks. The report shows such rows as
    // they read; `xmem calibrate` refuses to learn from a ledger that has one.
    std::string defect;
};

// Sums over a set of jobs. Byte sums are over packed jobs only (what packing changed).
struct Totals {
    uint64_t jobs = 0, packed = 0, failed = 0, oom_after_packing = 0;
    double requested_bytes = 0, limit_bytes = 0, estimated_bytes = 0, measured_bytes = 0;
    double gpu_hours_freed = 0, elapsed_hours = 0;
    double gpu_hours = 0;              // GPU-hours by the part of a GPU granted (1 when unknown)
    double memory_gib_hours_saved = 0; // packed jobs: (whole GPU - granted) GiB x hours
    uint64_t measured_jobs = 0;
    double abs_error_sum = 0;  // sum of |estimate - measured| / measured over measured jobs
    uint64_t oom_requeued = 0; // jobs xmem requeued after a CUDA OOM on their share
    // Jobs per enforcement level (contract/enforcement.h names), "unknown" where not recorded.
    std::map<std::string, uint64_t> by_enforcement;
    void add(const JobRecord &j);
    double mean_abs_error() const { return measured_jobs ? abs_error_sum / measured_jobs : 0; }
};

enum class GroupBy { user, account, partition, gpu };
enum class Format { table, csv, json, html };
// Where the jobs come from: this login node's ledger, or the whole cluster's accounting.
enum class Source { ledger, sacct };

struct Options {
    std::string db;                                      // empty: the config's `database:`
    std::string config = xmem::server::k_default_config; // xmemd's, read with xmemd's loader
    std::string catalog; // empty: the config's `catalog:`, else the catalog search (paths.h)
    std::optional<int64_t> since, until; // [since, until) in seconds since the epoch
    GroupBy by = GroupBy::user;
    Format format = Format::table;
    std::string output;  // empty: stdout
    bool by_day = false; // --by-day: the error over time per day, not per week
    Source source = Source::ledger;
    std::string sacct = "sacct"; // --sacct PATH: the sacct to run (found through PATH)
    std::string what_if;         // --what-if KEY=VALUE[,...]: "" = no replay (whatif.h)
};

// One period of "estimate error over time": the calibration pairs (calibrate.h) that ended
// in it, their errors (measured / limit - 1, sorted once built), and its OOMs and requeues.
struct ErrorPeriod {
    std::vector<double> errors;
    uint64_t pairs = 0, ooms = 0, requeues = 0;
};

struct WhatIf;

struct Report {
    Options opt;
    std::shared_ptr<const WhatIf> what_if; // with --what-if: the replay (whatif.h)
    std::map<std::string, Totals> groups;
    std::map<std::string, Totals> by_user, by_account; // the HTML page draws both
    Totals total;
    std::map<std::string, double> freed_per_day;        // "YYYY-MM-DD" -> GPU-hours freed
    std::vector<std::pair<double, double>> accuracy;    // (estimate GiB, measured GiB)
    std::map<std::string, ErrorPeriod> error_over_time; // day, or the Monday of the week
};

// The period a job's end falls in: its day with `by_day`, else the Monday of its week (UTC).
std::string period_key(int64_t ts, bool by_day);
// The levels as the report's columns and keys: enforcement.h's names, then "unknown".
const std::vector<std::string> &enforcement_keys();

// Dates: YYYY-MM-DD (a whole day, UTC) or YYYY-MM-DDTHH:MM[:SS] (UTC). `end_of_day` makes a
// bare date mean the end of that day, so --until 2026-12-02 includes December 2nd.
std::optional<int64_t> parse_date(const std::string &s, bool end_of_day);
std::string format_day(int64_t ts);
std::optional<GroupBy> parse_group(const std::string &s);
const char *group_name(GroupBy g);
std::optional<Format> parse_format(const std::string &s);
// Fills `opt` or fails with the error (one line, starting "xmem: ").
xmem::Result<void> parse_args(int argc, char **argv, Options &opt);
// True when the command line asks for the usage (--help or -h anywhere), which xmem report
// and xmem calibrate print before parsing anything else.
bool asks_for_help(int argc, char **argv);
// Writes LINE to stderr; returns 1, both commands' exit status for bad input.
int fail_line(const std::string &line);

// (1 - limit/capacity) x elapsed hours for a packed job; 0 otherwise.
double gpu_hours_freed(const JobRecord &j);
// The part of one GPU granted x elapsed hours (a whole GPU where the part is unknown).
double gpu_hours(const JobRecord &j);
// A packed job: (capacity - granted) GiB x elapsed hours, granted being its part of the GPU
// (its limit where the part is unknown); 0 otherwise.
double memory_gib_hours_saved(const JobRecord &j);
// Whether a job ran on a share, from its decision and the GPU's capacity (both sources).
bool is_packed(bool estimated, bool check_only, uint64_t limit_bytes, uint64_t capacity_bytes);
std::string group_key(const JobRecord &j, GroupBy g);
Report build_report(const Options &opt, const std::vector<JobRecord> &jobs);

std::string csv_field(const std::string &s);
std::string json_string(const std::string &s);
std::string html_escape(const std::string &s);

// The ledger and the GPU catalog as xmemd sees them: the config is read with xmemd's own
// loader when the ledger is not given (--db) or, if the file exists, for the catalog (no
// --catalog). Sets opt.db; returns the catalog (a GPU's capacity is its total_memory_mib)
// or the one error line.
xmem::Result<xmem::analysis::Catalog> load_sources(Options &opt);
// One whole GPU of model `gpu` (a catalog name or alias, matched as the estimator matches
// it), 0 when the catalog lacks it; remembered in `known`, a ledger repeats a few names.
uint64_t capacity(const xmem::analysis::Catalog &catalog, const std::string &gpu,
                  std::map<std::string, uint64_t> &known);
// Fills `jobs` or fails with the error line.
xmem::Result<void> load_jobs(const Options &opt, const xmem::analysis::Catalog &catalog,
                             std::vector<JobRecord> &jobs);
// The same from Slurm's accounting: the jobs whose AdminComment holds xmem's record (sacct).
xmem::Result<void> load_sacct_jobs(const Options &opt, const xmem::analysis::Catalog &catalog,
                                   std::vector<JobRecord> &jobs);
// sacct's answer (--parsable2 --noheader, fields JobIDRaw|User|Account|Partition|AdminComment)
// as job records; lines without a record are skipped. `capacity` gives a GPU's bytes (0:
// not in the catalog).
std::vector<JobRecord> parse_sacct(const std::string &out,
                                   const std::function<uint64_t(const std::string &)> &capacity);

// Runs argv (no shell) and collects its stdout within `deadline_ms`; the error line, or "".
// `missing` ends the line when the program cannot be started, `failed` when it exits non-zero.
std::string run_capture(const std::vector<std::string> &args, std::string &out, int deadline_ms,
                        const std::string &missing, const std::string &failed);

std::string render_table(const Report &r);
std::string render_csv(const Report &r);
std::string render_json(const Report &r);
std::string render_html(const Report &r);

} // namespace xmem::report
#endif
