// report_load.cpp — reads the daemon's config and the GPU catalog with the daemon's own
// loaders (xmemd_config, xmem_catalog: the report never parses either file itself), then the
// ledger, read-only: a report never takes a write lock, so it never blocks xmemd (WAL
// readers and the writer do not wait for each other).
#include "report.h"

#include "analysis/paths.h"
#include "config.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sys/stat.h>

namespace xmem::report
{

namespace
{
std::string without_prefix(const std::string &message)
{
    return message.rfind("xmem: ", 0) == 0 ? message.substr(6) : message;
}

std::string text(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return t ? (const char *)t : "";
}

bool has_column(sqlite3 *db, const char *table, const char *column)
{
    sqlite3_stmt *st = nullptr;
    std::string sql = std::string("PRAGMA table_info(") + table + ")";
    bool found = false;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK)
        while (!found && sqlite3_step(st) == SQLITE_ROW)
            found = text(st, 1) == column;
    sqlite3_finalize(st);
    return found;
}

// The partition asked for at submission, from the request's options JSON.
std::string partition_from_options(const std::string &options)
{
    auto j = nlohmann::json::parse(options, nullptr, false);
    if (j.is_object() && j.contains("partition") && j["partition"].is_string())
        return j["partition"].get<std::string>();
    return "";
}

// "" when column `col` holds a non-negative integer (or NULL, where `nullable`), else why not.
std::string byte_defect(sqlite3_stmt *st, int col, const char *name, bool nullable)
{
    int type = sqlite3_column_type(st, col);
    if (type == SQLITE_NULL && nullable)
        return "";
    if (type == SQLITE_INTEGER && sqlite3_column_int64(st, col) >= 0)
        return "";
    return std::string(name) + " is '" + (type == SQLITE_NULL ? "NULL" : text(st, col)) +
           "', not a byte count";
}

bool check_only(const std::string &options)
{
    auto j = nlohmann::json::parse(options, nullptr, false);
    return j.is_object() && j.value("check_only", false) == true;
}
// What is wrong with a job row (JobRecord::defect): its measured peak, or for an answered
// estimate its peak, limit and GPU.
std::string row_defect(sqlite3_stmt *st, const JobRecord &j, bool estimated)
{
    std::string why = byte_defect(st, 11, "measured_peak_bytes", true);
    if (why.empty() && estimated)
        why = byte_defect(st, 7, "peak_bytes", false);
    if (why.empty() && estimated)
        why = byte_defect(st, 8, "limit_bytes", false);
    if (why.empty() && estimated && j.capacity_bytes == 0)
        why = "GPU '" + j.gpu + "' is not in the GPU catalog";
    return why;
}
} // namespace

uint64_t capacity(const xmem::analysis::Catalog &catalog, const std::string &gpu,
                  std::map<std::string, uint64_t> &known)
{
    auto it = known.find(gpu);
    if (it != known.end())
        return it->second;
    auto spec = catalog.find(gpu);
    return known[gpu] = spec.ok() ? spec.value().total_bytes : 0;
}

xmem::Result<xmem::analysis::Catalog> load_sources(Options &opt)
{
    using Found = xmem::Result<xmem::analysis::Catalog>;
    std::string catalog_path = opt.catalog;
    bool needs_db = opt.db.empty() && opt.source == Source::ledger;
    if (needs_db || (catalog_path.empty() && xmem::analysis::is_regular_file(opt.config))) {
        auto config = xmem::server::config_load(opt.config);
        if (!config)
            return Found::fail("xmem: report: " + config.error().message);
        if (opt.db.empty())
            opt.db = config.value().database;
        if (catalog_path.empty())
            catalog_path = config.value().catalog; // the file xmemd's loader read
    }
    auto found = xmem::analysis::locate_catalog(catalog_path);
    auto catalog =
        found.ok() ? xmem::analysis::Catalog::load(found.value()) : Found::fail(found.error());
    if (!catalog.ok())
        return Found::fail("xmem: report: " + without_prefix(catalog.error().message));
    return catalog;
}

xmem::Result<void> load_jobs(const Options &opt, const xmem::analysis::Catalog &catalog,
                             std::vector<JobRecord> &jobs)
{
    struct stat sb;
    if (stat(opt.db.c_str(), &sb) != 0)
        return xmem::Result<void>::fail("xmem: report: no ledger at " + opt.db +
                                        " (give --db PATH)");
    sqlite3 *db = nullptr;
    if (sqlite3_open_v2(opt.db.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        return xmem::Result<void>::fail("xmem: report: cannot open " + opt.db +
                                        " read-only: " + why);
    }
    sqlite3_busy_timeout(db, 5000);
    auto result = xmem::Result<void>::success();
    std::map<std::string, uint64_t> capacities; // GPU name in the ledger -> bytes
    // A file that is not SQLite (or is locked past the timeout) is an error, not a report.
    if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) !=
        SQLITE_OK) {
        auto failed =
            xmem::Result<void>::fail("xmem: report: " + opt.db + ": " + sqlite3_errmsg(db));
        sqlite3_close(db);
        return failed;
    }
    if (!has_column(db, "jobs", "job_id") || !has_column(db, "requests", "limit_bytes")) {
        sqlite3_close(db); // an empty or never-migrated ledger: an empty report
        return xmem::Result<void>::success();
    }
    // Account and partition come from the job end (schema 4). Rows written before it, or by
    // a plugin that did not know them, fall back to the partition named at submission (the
    // request's options; empty for the default partition) and an unknown account. Opened
    // read-only, the ledger may still be at an older schema: then the columns are NULL.
    std::string account = has_column(db, "jobs", "account") ? "j.account" : "NULL";
    std::string partition = has_column(db, "jobs", "partition") ? "j.partition" : "NULL";
    // How the job was held and whether it was requeued come with schema 6.
    bool v6 = has_column(db, "jobs", "enforcement");
    // The part of a GPU granted comes with schema 8.
    std::string fraction = has_column(db, "jobs", "gpu_fraction") ? "j.gpu_fraction" : "NULL";
    std::string sql = "SELECT j.ts, j.job_id, r.user, " + account + ", " + partition +
                      ", r.options, r.gpu, r.peak_bytes, r.limit_bytes, r.outcome, r.fits,"
                      " j.measured_peak_bytes, j.exit_status, j.elapsed_seconds, j.cuda_oom, " +
                      (v6 ? "j.enforcement, j.oom_requeued" : "NULL, 0") + ", " + fraction +
                      " FROM jobs j JOIN requests r ON r.id = j.request_id" +
                      // Only the node's reports count (schema 7; issue 26, M3/M4).
                      (has_column(db, "jobs", "from_node") ? " WHERE j.from_node = 1" : "") +
                      " ORDER BY j.ts";
    sqlite3_stmt *st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
        result = xmem::Result<void>::fail("xmem: report: " + opt.db + ": " + sqlite3_errmsg(db));
    } else {
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            JobRecord j;
            j.ts = sqlite3_column_int64(st, 0);
            j.job_id = (uint64_t)sqlite3_column_int64(st, 1);
            j.user = text(st, 2);
            j.account = text(st, 3);
            std::string options = text(st, 5);
            j.partition = text(st, 4);
            if (j.partition.empty())
                j.partition = partition_from_options(options);
            j.gpu = text(st, 6);
            j.estimate_bytes = (uint64_t)sqlite3_column_int64(st, 7);
            j.limit_bytes = (uint64_t)sqlite3_column_int64(st, 8);
            j.capacity_bytes = capacity(catalog, j.gpu, capacities);
            bool estimated = sqlite3_column_int(st, 9) == 0 && sqlite3_column_int(st, 10) == 1;
            j.eligible = estimated && !check_only(options);
            j.packed = is_packed(estimated, check_only(options), j.limit_bytes, j.capacity_bytes);
            if (sqlite3_column_type(st, 11) != SQLITE_NULL)
                j.measured_bytes = (uint64_t)sqlite3_column_int64(st, 11);
            j.exit_status = sqlite3_column_int(st, 12);
            j.elapsed_seconds = (uint64_t)sqlite3_column_int64(st, 13);
            j.cuda_oom = sqlite3_column_int(st, 14) != 0;
            j.enforcement = text(st, 15);
            j.oom_requeued = sqlite3_column_int(st, 16) != 0;
            if (sqlite3_column_type(st, 17) != SQLITE_NULL)
                j.gpu_fraction = sqlite3_column_double(st, 17);
            j.defect = row_defect(st, j, estimated);
            jobs.push_back(std::move(j));
        }
        if (rc != SQLITE_DONE)
            result =
                xmem::Result<void>::fail("xmem: report: " + opt.db + ": " + sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return result;
}

} // namespace xmem::report
