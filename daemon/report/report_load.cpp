// report_load.cpp — reads the GPU catalog, the daemon's config (for the ledger path) and the
// ledger itself, read-only: a report never takes a write lock, so it never blocks xmemd (WAL
// readers and the writer do not wait for each other).
#include "report.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sys/stat.h>

#include <fstream>
#include <regex>

namespace xmem_report
{

namespace
{
std::string trim(std::string s)
{
    size_t hash = s.find(" #");
    if (hash != std::string::npos)
        s.erase(hash);
    size_t a = s.find_first_not_of(" \t\""), b = s.find_last_not_of(" \t\"\r");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
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

bool check_only(const std::string &options)
{
    auto j = nlohmann::json::parse(options, nullptr, false);
    return j.is_object() && j.value("check_only", false) == true;
}
} // namespace

// A line-level reader of gpus.yaml: `- name:`, `aliases: [..]`, `total_memory_mib:`. The
// catalog's strict reader lives in the simulator; the report needs only capacities.
std::map<std::string, uint64_t> read_catalog(const std::string &path)
{
    std::map<std::string, uint64_t> out;
    std::ifstream in(path);
    std::string line;
    std::vector<std::string> names;
    static const std::regex name_re(R"(^\s*-\s*name:\s*(.+)$)");
    static const std::regex alias_re(R"(^\s*aliases:\s*\[(.*)\]\s*$)");
    static const std::regex mib_re(R"(^\s*total_memory_mib:\s*([0-9]+))");
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_search(line, m, name_re)) {
            names = {trim(m[1])};
        } else if (std::regex_search(line, m, alias_re)) {
            std::string list = m[1];
            size_t start = 0;
            while (start <= list.size()) {
                size_t comma = list.find(',', start);
                std::string a = trim(list.substr(start, comma - start));
                if (!a.empty())
                    names.push_back(a);
                if (comma == std::string::npos)
                    break;
                start = comma + 1;
            }
        } else if (std::regex_search(line, m, mib_re)) {
            for (const auto &n : names)
                out[n] = std::stoull(m[1]) << 20;
        }
    }
    return out;
}

std::string database_from_config(const std::string &config_path)
{
    std::ifstream in(config_path);
    std::string line;
    static const std::regex db_re(R"(^database:\s*(.+)$)");
    std::smatch m;
    while (std::getline(in, line))
        if (std::regex_search(line, m, db_re))
            return trim(m[1]);
    return "";
}

std::optional<std::string> load_jobs(const Options &opt,
                                     const std::map<std::string, uint64_t> &catalog,
                                     std::vector<JobRecord> &jobs)
{
    struct stat sb;
    if (stat(opt.db.c_str(), &sb) != 0)
        return "xmem: report: no ledger at " + opt.db + " (give --db PATH)";
    sqlite3 *db = nullptr;
    if (sqlite3_open_v2(opt.db.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        std::string why = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        return "xmem: report: cannot open " + opt.db + " read-only: " + why;
    }
    sqlite3_busy_timeout(db, 5000);
    std::optional<std::string> err;
    // A file that is not SQLite (or is locked past the timeout) is an error, not a report.
    if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) !=
        SQLITE_OK) {
        err = "xmem: report: " + opt.db + ": " + sqlite3_errmsg(db);
        sqlite3_close(db);
        return err;
    }
    if (!has_column(db, "jobs", "job_id") || !has_column(db, "requests", "limit_bytes")) {
        sqlite3_close(db); // an empty or never-migrated ledger: an empty report
        return std::nullopt;
    }
    // Account and partition come from the job end (schema 4). Rows written before it, or by
    // a plugin that did not know them, fall back to the partition named at submission (the
    // request's options; empty for the default partition) and an unknown account. Opened
    // read-only, the ledger may still be at an older schema: then the columns are NULL.
    std::string account = has_column(db, "jobs", "account") ? "j.account" : "NULL";
    std::string partition = has_column(db, "jobs", "partition") ? "j.partition" : "NULL";
    std::string sql = "SELECT j.ts, j.job_id, r.user, " + account + ", " + partition +
                      ", r.options, r.gpu, r.peak_bytes, r.limit_bytes, r.outcome, r.fits,"
                      " j.measured_peak_bytes, j.exit_status, j.elapsed_seconds, j.cuda_oom"
                      " FROM jobs j JOIN requests r ON r.id = j.request_id ORDER BY j.ts";
    sqlite3_stmt *st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
        err = "xmem: report: " + opt.db + ": " + sqlite3_errmsg(db);
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
            j.granted_bytes = (uint64_t)sqlite3_column_int64(st, 8);
            auto cap = catalog.find(j.gpu);
            j.capacity_bytes = cap == catalog.end() ? 0 : cap->second;
            bool estimated = sqlite3_column_int(st, 9) == 0 && sqlite3_column_int(st, 10) == 1;
            j.packed = estimated && !check_only(options) && j.capacity_bytes > 0 &&
                       j.granted_bytes > 0 && j.granted_bytes < j.capacity_bytes;
            if (sqlite3_column_type(st, 11) != SQLITE_NULL)
                j.measured_bytes = (uint64_t)sqlite3_column_int64(st, 11);
            j.exit_status = sqlite3_column_int(st, 12);
            j.elapsed_seconds = (uint64_t)sqlite3_column_int64(st, 13);
            j.cuda_oom = sqlite3_column_int(st, 14) != 0;
            jobs.push_back(std::move(j));
        }
        if (rc != SQLITE_DONE)
            err = "xmem: report: " + opt.db + ": " + sqlite3_errmsg(db);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return err;
}

} // namespace xmem_report
