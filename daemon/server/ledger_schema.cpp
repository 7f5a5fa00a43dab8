// ledger_schema.cpp — versioned schema (PRAGMA user_version) and its migrations. Never edit a
// shipped migration: add the next one.
#include "ledger.h"

#include <sqlite3.h>

namespace xmem::server
{

namespace
{
const char *const k_migrations[] = {
    // 1: requests and job reports.
    "CREATE TABLE requests ("
    " id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, kind TEXT NOT NULL,"
    " user TEXT, uid INTEGER NOT NULL, gid INTEGER, pid INTEGER,"
    " cwd TEXT, entrypoint TEXT, script TEXT, options TEXT,"
    " outcome INTEGER NOT NULL, outcome_name TEXT NOT NULL, cached INTEGER NOT NULL DEFAULT 0,"
    " queue_ms INTEGER, profile_ms INTEGER, analyze_ms INTEGER, total_ms INTEGER,"
    " peak_bytes INTEGER, limit_bytes INTEGER, gpu TEXT, torch TEXT, fits INTEGER,"
    " cache_key TEXT, message TEXT, breakdown TEXT);"
    "CREATE INDEX requests_uid_ts ON requests(uid, ts);"
    "CREATE TABLE jobs ("
    " request_id INTEGER NOT NULL REFERENCES requests(id), job_id INTEGER NOT NULL,"
    " exit_status INTEGER, elapsed_seconds INTEGER, cuda_oom INTEGER NOT NULL,"
    " measured_peak_bytes INTEGER, reported_by INTEGER, ts INTEGER NOT NULL,"
    " PRIMARY KEY (request_id, job_id));",
    // 2: estimate vs outcome in one place, for accuracy reports.
    "CREATE VIEW job_accuracy AS SELECT r.id AS request_id, r.user, r.uid, r.entrypoint,"
    " r.gpu, r.peak_bytes, r.limit_bytes, j.job_id, j.exit_status, j.elapsed_seconds,"
    " j.cuda_oom, j.measured_peak_bytes FROM jobs j JOIN requests r ON r.id = j.request_id;",
    // 3: which capture produced each estimate (fast = fake tensors, exact = real CPU run).
    "ALTER TABLE requests ADD COLUMN mode TEXT;",
    // 4: the job's Slurm account and partition as slurmstepd saw them (NULL in older rows
    // and where the job had none); the view shows them next to the accuracy figures.
    "ALTER TABLE jobs ADD COLUMN account TEXT;"
    "ALTER TABLE jobs ADD COLUMN partition TEXT;"
    "DROP VIEW job_accuracy;"
    "CREATE VIEW job_accuracy AS SELECT r.id AS request_id, r.user, r.uid, r.entrypoint,"
    " r.gpu, r.peak_bytes, r.limit_bytes, j.job_id, j.exit_status, j.elapsed_seconds,"
    " j.cuda_oom, j.measured_peak_bytes, j.account, j.partition"
    " FROM jobs j JOIN requests r ON r.id = j.request_id;",
    // 5: the uid the job ran as (slurmstepd's S_JOB_UID, or the reporting user's own uid),
    // which the named request was checked to belong to (NULL in older rows).
    "ALTER TABLE jobs ADD COLUMN job_uid INTEGER;",
    // 6: how the job was held to its share (contract/enforcement.h name; NULL: unknown, as in
    // older rows) and whether xmem requeued it after a CUDA OOM (0 in older rows); the view
    // shows both next to the accuracy figures, for `xmem calibrate` and the report.
    "ALTER TABLE jobs ADD COLUMN enforcement TEXT;"
    "ALTER TABLE jobs ADD COLUMN oom_requeued INTEGER NOT NULL DEFAULT 0;"
    "DROP VIEW job_accuracy;"
    "CREATE VIEW job_accuracy AS SELECT r.id AS request_id, r.user, r.uid, r.entrypoint,"
    " r.gpu, r.peak_bytes, r.limit_bytes, j.job_id, j.exit_status, j.elapsed_seconds,"
    " j.cuda_oom, j.measured_peak_bytes, j.account, j.partition, j.enforcement,"
    " j.oom_requeued FROM jobs j JOIN requests r ON r.id = j.request_id;",
    // 7: only the node reports a job's end (issue 26, M3/M4): rows a user reported before are
    // kept but marked, and reports and calibration count only the node's (from_node = 1).
    // Each Slurm job has one row (ledger.cpp replaces an earlier report of the same job id).
    "ALTER TABLE jobs ADD COLUMN from_node INTEGER NOT NULL DEFAULT 0;"
    "UPDATE jobs SET from_node = 1 WHERE reported_by = 0;"
    "CREATE INDEX jobs_by_job_id ON jobs(job_id);",
    // 8: the share a packed job ran on ("shard:3") and the part of one GPU it is, from the
    // node (NULL: not packed, or an older row), so GPU-hours count what was granted.
    "ALTER TABLE jobs ADD COLUMN share TEXT;"
    "ALTER TABLE jobs ADD COLUMN gpu_fraction REAL;",
};
static_assert(sizeof(k_migrations) / sizeof(k_migrations[0]) == k_ledger_schema_version,
              "one migration per schema version");
} // namespace

Result<int> ledger_migrate(sqlite3 *db, const std::string &path)
{
    sqlite3_stmt *st = nullptr;
    int version = 0;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (version > k_ledger_schema_version)
        return Result<int>::fail(path + ": ledger schema version " + std::to_string(version) +
                                 " is newer than this xmemd understands (" +
                                 std::to_string(k_ledger_schema_version) +
                                 "); upgrade xmemd or point database at a new file");
    for (int v = version; v < k_ledger_schema_version; v++) {
        std::string sql = std::string("BEGIN IMMEDIATE;") + k_migrations[v] +
                          "PRAGMA user_version=" + std::to_string(v + 1) + ";COMMIT;";
        char *err = nullptr;
        if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
            std::string why = err ? err : "unknown error";
            sqlite3_free(err);
            sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
            return Result<int>::fail(path + ": ledger migration to schema " +
                                     std::to_string(v + 1) + " failed: " + why);
        }
    }
    return Result<int>::ok(version);
}

} // namespace xmem::server
