// test-load.cpp — reading the ledger: account and partition from the job end (schema 4),
// the submission's partition for rows that lack one, and a schema-3 file read as it is; the
// config and the GPU catalog read as xmemd reads them, capacities from the catalog.
#include "cmocka.hpp"
#include "report.h"
#include "test-list.h"

#include <sqlite3.h>
#include <unistd.h>

using namespace xmem::report;

static std::string g_db;

static std::string write_tmp(const std::string &text)
{
    char path[] = "/tmp/xmem-report-file-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text.data(), text.size()), (ssize_t)text.size());
    close(fd);
    return path;
}

static std::string read_file(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The shipped catalog with A100-40GB's memory.total set to `mib`.
static std::string catalog_copy(int mib)
{
    std::string text = read_file(XMEM_SRC "/etc/gpus.yaml");
    size_t at = text.find("total_memory_mib: 40536\n");
    assert_true(at != std::string::npos);
    text.replace(at, 23, "total_memory_mib: " + std::to_string(mib));
    return write_tmp(text);
}

static xmem::analysis::Catalog one_gpu_catalog()
{
    xmem::analysis::GpuSpec a100;
    a100.name = "A100-40GB";
    a100.total_bytes = 40ull << 30;
    return xmem::analysis::Catalog::from({a100}, "test");
}

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
    auto loaded = load_jobs(opt, one_gpu_catalog(), jobs);
    if (!loaded.ok())
        fail_msg("%s", loaded.error().message.c_str());
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

// The report's capacities are the catalog xmemd's config names: change a value in a copy of
// the catalog, name it as `catalog:` in the config, and the report follows.
static void capacity_from_the_configs_catalog(void **)
{
    create("");
    exec("INSERT INTO jobs VALUES (1, 10, 0, 3600, 0, NULL, 1);");
    std::string catalog = catalog_copy(20480);
    std::string config = write_tmp("database: " + g_db + "\ncatalog: " + catalog + "\n");
    Options opt;
    opt.config = config;
    auto loaded = load_sources(opt);
    unlink(config.c_str());
    unlink(catalog.c_str());
    if (!loaded.ok())
        fail_msg("%s", loaded.error().message.c_str());
    assert_string_equal(opt.db.c_str(), g_db.c_str());
    std::vector<JobRecord> jobs;
    assert_true(load_jobs(opt, loaded.value(), jobs).ok());
    assert_int_equal(jobs.size(), 1);
    assert_int_equal(jobs[0].capacity_bytes, 20480ull << 20);
    Report r = build_report(opt, jobs);
    // Granted 2 GiB of 20 GiB for an hour: 0.9 GPU-hours freed.
    assert_true(std::fabs(r.total.gpu_hours_freed - 0.9) < 1e-9);
}

// A ledger naming a GPU by an alias, in any case, finds it as the estimator does.
static void alias_matched_as_the_catalog_does(void **)
{
    create("");
    exec("UPDATE requests SET gpu = 'nvidia a100-sxm4-40gb';"
         "INSERT INTO jobs VALUES (1, 10, 0, 60, 0, NULL, 1);");
    Options opt;
    opt.db = g_db;
    opt.catalog = XMEM_SRC "/etc/gpus.yaml";
    auto catalog = load_sources(opt);
    assert_true(catalog.ok());
    std::vector<JobRecord> jobs;
    assert_true(load_jobs(opt, catalog.value(), jobs).ok());
    assert_int_equal(jobs[0].capacity_bytes, 40536ull << 20);
    assert_true(jobs[0].packed);
}

// A catalog the strict reader refuses is one error line, never silently empty capacities.
static void broken_catalog_is_one_line(void **)
{
    std::string catalog = write_tmp("version: 1\ngpus:\n  - name: X\n    total_memory_mib: 9\n");
    Options opt;
    opt.db = "/nonexistent.sqlite";
    opt.catalog = catalog;
    auto loaded = load_sources(opt);
    unlink(catalog.c_str());
    assert_false(loaded.ok());
    const std::string &line = loaded.error().message;
    assert_int_equal(line.rfind("xmem: report: " + catalog + ":3: ", 0), 0);
    assert_true(line.find('\n') == std::string::npos);
    opt.config = "/nonexistent/xmem.yaml";
    opt.catalog.clear();
    opt.db.clear();
    loaded = load_sources(opt);
    assert_false(loaded.ok());
    assert_string_equal(loaded.error().message.c_str(),
                        "xmem: report: /nonexistent/xmem.yaml: cannot read the config: No such "
                        "file or directory");
}

int test_group_load(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(schema_4_columns, make_db, remove_db),
        cmocka_unit_test_setup_teardown(schema_3_file, make_db, remove_db),
        cmocka_unit_test_setup_teardown(capacity_from_the_configs_catalog, make_db, remove_db),
        cmocka_unit_test_setup_teardown(alias_matched_as_the_catalog_does, make_db, remove_db),
        cmocka_unit_test(broken_catalog_is_one_line),
    };
    return cmocka_run_group_tests_name("load", tests, nullptr, nullptr);
}
