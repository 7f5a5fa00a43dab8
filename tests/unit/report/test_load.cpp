// test-load.cpp — reading the ledger: account and partition from the job end (schema 4),
// the submission's partition for rows that lack one, and a schema-3 file read as it is.
#include "cmocka.hpp"
#include "report.h"
#include "test-list.h"

#include <sqlite3.h>
#include <unistd.h>

using namespace xmem_report;

static std::string g_db;

static int make_db(void **)
{
    char tmpl[] = "/tmp/xmem-report-load-XXXXXX";
    int fd = mkstemp(tmpl);
    close(fd);
    g_db = tmpl;
    return 0;
}

static int remove_db(void **)
{
    unlink(g_db.c_str());
    return 0;
}

static void exec(const std::string &sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(g_db.c_str(), &db), SQLITE_OK);
    char *err = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    if (rc != SQLITE_OK)
        fail_msg("%s: %s", sql.c_str(), err ? err : "?");
    sqlite3_close(db);
}

// The columns the report reads, as schema 3 had them; `extra` adds schema 4's.
static void create(const char *extra)
{
    exec(
        std::string("CREATE TABLE requests (id INTEGER PRIMARY KEY, user TEXT, options TEXT,"
                    " gpu TEXT, peak_bytes INTEGER, limit_bytes INTEGER, outcome INTEGER,"
                    " fits INTEGER);"
                    "CREATE TABLE jobs (request_id INTEGER, job_id INTEGER, exit_status INTEGER,"
                    " elapsed_seconds INTEGER, cuda_oom INTEGER, measured_peak_bytes INTEGER,"
                    " ts INTEGER") +
        extra +
        ");"
        "INSERT INTO requests VALUES (1, 'alice', '{\"partition\":\"debug\"}', 'A100-40GB',"
        " 1073741824, 2147483648, 0, 1);"
        "INSERT INTO requests VALUES (2, 'bob', '{}', 'A100-40GB', 1073741824, 2147483648, 0, 1);");
}

static std::vector<JobRecord> load()
{
    Options opt;
    opt.db = g_db;
    std::vector<JobRecord> jobs;
    auto err = load_jobs(opt, {{"A100-40GB", 40ull << 30}}, jobs);
    if (err)
        fail_msg("%s", err->c_str());
    return jobs;
}

static void schema_4_columns(void **)
{
    create(", account TEXT, partition TEXT");
    exec("INSERT INTO jobs VALUES (1, 10, 0, 60, 0, 1610612736, 1, 'physics', 'gpu');"
         "INSERT INTO jobs VALUES (2, 11, 1, 60, 1, NULL, 2, NULL, NULL);"
         "INSERT INTO jobs VALUES (1, 12, 0, 60, 0, NULL, 3, '', '');");
    auto jobs = load();
    assert_int_equal(jobs.size(), 3);
    assert_string_equal(jobs[0].account.c_str(), "physics");
    assert_string_equal(jobs[0].partition.c_str(), "gpu"); // the job end wins over the submission
    assert_true(jobs[0].measured_bytes.has_value());
    assert_int_equal(*jobs[0].measured_bytes, 1610612736);
    assert_string_equal(jobs[1].account.c_str(), "");
    assert_string_equal(jobs[1].partition.c_str(), ""); // default partition at submission: unknown
    assert_true(jobs[1].cuda_oom);
    assert_false(jobs[1].measured_bytes.has_value());
    assert_string_equal(jobs[2].partition.c_str(), "debug"); // empty: fall back to the submission
    assert_string_equal(group_key(jobs[1], GroupBy::account).c_str(), "(unknown)");
    Options opt;
    opt.by = GroupBy::account;
    Report r = build_report(opt, jobs);
    assert_int_equal(r.groups.size(), 2);
    assert_int_equal(r.groups["physics"].jobs, 1);
    assert_int_equal(r.groups["(unknown)"].jobs, 2);
}

static void schema_3_file(void **)
{
    create("");
    exec("INSERT INTO jobs VALUES (1, 10, 0, 60, 0, NULL, 1);");
    auto jobs = load();
    assert_int_equal(jobs.size(), 1);
    assert_string_equal(jobs[0].account.c_str(), "");
    assert_string_equal(jobs[0].partition.c_str(), "debug");
}

int test_group_load(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(schema_4_columns, make_db, remove_db),
        cmocka_unit_test_setup_teardown(schema_3_file, make_db, remove_db),
    };
    return cmocka_run_group_tests_name("load", tests, nullptr, nullptr);
}
