/*
 * ledger.h — the SQLite ledger (WAL): one row per request, one per job_end report. Rows
 * appended during one turn of the loop are staged and handed to a dedicated writer thread
 * together (one wake-up) at the start of the next turn; the writer commits whatever is queued
 * in one transaction (group commit); completions come back to the loop thread through a
 * uv_async_t. A request is answered only after its row is committed, so an acknowledged
 * request is always on disk.
 */
#ifndef XMEMD_LEDGER_H
#define XMEMD_LEDGER_H

#include "outcome.h"
#include "common/result.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <uv.h>

struct sqlite3;
struct sqlite3_stmt;

namespace xmem::server
{

struct RequestRow {
    uint64_t id = 0;
    int64_t ts = 0;
    std::string kind; // estimate, status, stats, job_end, frame
    std::string user;
    int64_t uid = -1, gid = -1, pid = -1;
    std::string cwd, entrypoint, script, options;
    Outcome outcome = Outcome::internal_error;
    bool cached = false;
    int64_t queue_ms = 0, profile_ms = 0, total_ms = 0;
    double analyze_seconds = 0;
    std::optional<uint64_t> peak_bytes, limit_bytes;
    std::string gpu, torch, cache_key, message, breakdown;
    std::string mode; // capture that produced the estimate: "fast" or "exact"
    std::optional<bool> fits;
};

struct JobRow {
    uint64_t request_id = 0;
    uint64_t job_id = 0;
    int exit_status = 0;
    uint64_t elapsed_seconds = 0;
    bool cuda_oom = false;
    std::optional<uint64_t> measured_peak_bytes;
    std::optional<std::string> account, partition; // Slurm's, as slurmstepd saw them
    std::optional<int64_t> job_uid;                // as the body states it; resolved by job_owner()
    std::optional<std::string> enforcement;        // contract/enforcement.h name; NULL: unknown
    bool oom_requeued = false;                     // xmem requeued the job after a CUDA OOM
    std::optional<std::string> share;   // "shard:3": the share xmem packed it on (schema 8)
    std::optional<double> gpu_fraction; // that share's part of one GPU, from the node's GRES
    // With a share, root's packing record's limit and estimate: the record of a job whose
    // request another xmemd holds is made from them (foreign_record in ledger.cpp).
    std::optional<uint64_t> packed_limit_bytes, packed_estimate_bytes;
    int64_t reporter_uid = -1;
    int64_t owner_uid = -1; // the uid the job ran as: the request must be this uid's
};

// Latest schema version; migrations in ledger_schema.cpp bring older files up to it.
constexpr int k_ledger_schema_version = 8;
// Applies pending migrations inside one transaction each; error names the file and step.
Result<int> ledger_migrate(sqlite3 *db, const std::string &path);

class Ledger
{
  public:
    using Done = std::function<void(bool ok)>;
    // The job's accounting record (accounting_record.h) comes with a recorded job; "" else.
    using JobDone =
        std::function<void(Outcome, const std::string &message, const std::string &record)>;

    static Result<std::unique_ptr<Ledger>> open(const std::string &path);
    ~Ledger();
    uint64_t take_id() { return m_next_id++; } // loop thread; ids are assigned in memory
    void start(uv_loop_t *loop);
    void append(RequestRow row, Done done);
    void job_end(JobRow row, JobDone done);
    // Commits what is queued, stops the thread, closes the async handle; `closed` runs from
    // the handle's close callback.
    void stop(std::function<void()> closed);
    std::size_t pending() const { return m_pending; }

  private:
    struct Op;
    struct UserWindow {
        int64_t start = 0;
        uint64_t bytes = 0;
        uint64_t rows = 0;    // rows written in this window
        uint64_t dropped = 0; // rows past k_ledger_user_rows_per_window, counted only
    };
    Ledger() = default;
    // Loop thread, before staging: false when the row is past its user's row budget (it is
    // counted, and one summary row says how many at the user's next window).
    bool bound_row(RequestRow &row);
    void stage_dropped_summary(int64_t uid, const UserWindow &w);
    void writer_main();
    void commit_batch(std::deque<std::unique_ptr<Op>> &batch);
    void stage(std::unique_ptr<Op> op);
    void hand_over(); // staged ops → the writer, one notify
    static void on_idle(uv_idle_t *h);
    static void on_async(uv_async_t *h);
    static void on_close(uv_handle_t *h);

    sqlite3 *m_db = nullptr;
    sqlite3_stmt *m_insert = nullptr; // the request insert, prepared once
    sqlite3_stmt *m_begin = nullptr, *m_commit = nullptr, *m_rollback = nullptr;
    std::string m_path;
    uint64_t m_next_id = 1;
    uv_async_t m_async{};
    // Loop thread: rows appended since the last hand-over. The idle handle runs (and keeps
    // the loop from blocking in poll) only while some are staged.
    std::deque<std::unique_ptr<Op>> m_staged;
    uv_idle_t m_idle{};
    std::thread m_thread;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<std::unique_ptr<Op>> m_todo, m_done;
    bool m_stop = false;
    bool m_started = false;
    std::size_t m_pending = 0;                  // loop thread
    std::map<int64_t, UserWindow> m_user_bytes; // loop thread: ledger bytes per uid, window
    std::function<void()> m_closed;
};

} // namespace xmem::server
#endif
