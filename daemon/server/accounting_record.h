/*
 * accounting_record.h — a job's accounting record: one compact JSON made from its ledger row
 * (the decision it ran under and how it ended), which the node appends to the job's
 * AdminComment as "xmem-acct: {...}" so that Slurm's accounting (slurmdbd) holds it for the
 * whole cluster, and `xmem report --source sacct` reads it back (docs/slurm.md, docs/report.md).
 * Built and parsed here only, so both sides agree on every key.
 */
#ifndef XMEMD_ACCOUNTING_RECORD_H
#define XMEMD_ACCOUNTING_RECORD_H

#include <cstdint>
#include <optional>
#include <string>

namespace xmem::server
{

// The version of the record's keys; a reader skips a record of a version it does not know.
constexpr int k_accounting_record_version = 1;
// What precedes the record in the AdminComment.
constexpr const char *k_accounting_record_tag = "xmem-acct: ";

struct AccountingRecord {
    int64_t ts = 0;          // when xmemd recorded the job's end (the ledger's jobs.ts)
    uint64_t request_id = 0; // the estimate the job ran under (on the login node's ledger)
    std::string gpu;         // the GPU model the estimate was for
    std::optional<uint64_t> estimate_bytes, limit_bytes;
    bool estimated = false;                 // the estimate was answered and fit the GPU
    bool check_only = false;                // --xmem=check: sized, never packed
    std::optional<std::string> share;       // "shard:3": what the job ran on, when xmem packed it
    std::optional<double> gpu_fraction;     // the part of one GPU that share is (0 < f <= 1)
    std::optional<uint64_t> measured_bytes; // NVML peak
    bool cuda_oom = false, oom_requeued = false;
    int exit_status = 0;
    uint64_t elapsed_seconds = 0;
    std::optional<std::string> enforcement;
};

// The record as one line of compact JSON (no blank, no ';', no newline).
std::string accounting_record_json(const AccountingRecord &r);
// The last record in an AdminComment (after its tag), or nothing when the comment holds none
// or one that is not a record of this version.
std::optional<AccountingRecord> accounting_record_find(const std::string &admin_comment);

} // namespace xmem::server
#endif
