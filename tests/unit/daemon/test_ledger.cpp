// test-ledger.cpp — the SQLite ledger: schema version and migrations, group commit through
// the writer thread and uv_async, job_end ownership rules, and a loop left with no handles.
#include "accounting_record.h"
#include "ledger.h"
#include "defaults.h"
#include "cmocka.hpp"
#include "test-list.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

using namespace xmem::server;

static std::string g_path;

static int setup(void **)
{
    char tmpl[] = "/tmp/xmemd-test-ledger-XXXXXX";
    int fd = mkstemp(tmpl);
    close(fd);
    unlink(tmpl);
    g_path = tmpl;
    return 0;
}

static int teardown(void **)
{
    for (const char *suffix : {"", "-wal", "-shm"})
        unlink((g_path + suffix).c_str());
    return 0;
}

static int64_t scalar(const std::string &sql)
{
    sqlite3 *db;
    sqlite3_open(g_path.c_str(), &db);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void creates_latest_schema(void **)
{
    {
        auto l = Ledger::open(g_path);
        assert_true((bool)l);
        assert_int_equal(l.value()->take_id(), 1);
    }
    assert_int_equal(scalar("PRAGMA user_version"), k_ledger_schema_version);
    assert_int_equal(scalar("SELECT count(*) FROM sqlite_master WHERE name IN "
                            "('requests','jobs','job_accuracy')"),
                     3);
    assert_true((bool)Ledger::open(g_path)); // reopening is a no-op
}

static unsigned mode_of(const std::string &path)
{
    struct stat st;
    assert_int_equal(stat(path.c_str(), &st), 0);
    return st.st_mode & 07777;
}

// The ledger holds every user's commands, paths and scripts: root's alone, its -wal and
// -shm too, whatever the umask; one made by an older xmemd (0644) is made private.
static void files_are_private(void **)
{
    mode_t old = umask(022);
    {
        auto l = Ledger::open(g_path);
        assert_true((bool)l);
        assert_int_equal(mode_of(g_path), 0600);
        assert_int_equal(mode_of(g_path + "-wal"), 0600);
        assert_int_equal(mode_of(g_path + "-shm"), 0600);
    }
    assert_int_equal(chmod(g_path.c_str(), 0644), 0);
    assert_true((bool)Ledger::open(g_path));
    assert_int_equal(mode_of(g_path), 0600);
    // A symlink in its place is refused, not followed.
    std::string target = g_path + "-target";
    assert_int_equal(rename(g_path.c_str(), target.c_str()), 0);
    assert_int_equal(symlink(target.c_str(), g_path.c_str()), 0);
    assert_false((bool)Ledger::open(g_path));
    unlink(g_path.c_str());
    unlink(target.c_str());
    umask(old);
}

static void migrates_v1_and_refuses_newer(void **)
{
    // A version-1 file: tables but no view (2), no mode column (3), no account and partition
    // (4), no job_uid (5), no enforcement and oom_requeued (6), no from_node (7), no share
    // and gpu_fraction (8).
    sqlite3 *db;
    sqlite3_open(g_path.c_str(), &db);
    sqlite3_exec(db,
                 "DROP VIEW job_accuracy; ALTER TABLE requests DROP COLUMN mode;"
                 " ALTER TABLE jobs DROP COLUMN account; ALTER TABLE jobs DROP COLUMN partition;"
                 " ALTER TABLE jobs DROP COLUMN job_uid; ALTER TABLE jobs DROP COLUMN enforcement;"
                 " ALTER TABLE jobs DROP COLUMN oom_requeued; DROP INDEX jobs_by_job_id;"
                 " ALTER TABLE jobs DROP COLUMN from_node; ALTER TABLE jobs DROP COLUMN share;"
                 " ALTER TABLE jobs DROP COLUMN gpu_fraction; PRAGMA user_version=1;",
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
    assert_int_equal(scalar("SELECT count(*) FROM pragma_table_info('requests') WHERE name='mode'"),
                     0);
    assert_true((bool)Ledger::open(g_path));
    assert_int_equal(scalar("PRAGMA user_version"), k_ledger_schema_version);
    assert_int_equal(scalar("SELECT count(*) FROM sqlite_master WHERE name='job_accuracy'"), 1);
    assert_int_equal(scalar("SELECT count(*) FROM pragma_table_info('requests') WHERE name='mode'"),
                     1);
    sqlite3_open(g_path.c_str(), &db);
    sqlite3_exec(db, "PRAGMA user_version=99;", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    auto r = Ledger::open(g_path);
    assert_false((bool)r);
    assert_contains(r.error().message,
                    g_path + ": ledger schema version 99 is newer than this xmemd");
    sqlite3_open(g_path.c_str(), &db);
    sqlite3_exec(db,
                 ("PRAGMA user_version=" + std::to_string(k_ledger_schema_version) + ";").c_str(),
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
}

static void migrates_v3_job_rows(void **)
{
    // A version-3 file with a job row: after migrations 4 to 6 the row is kept, its account,
    // partition, job_uid and enforcement are NULL (the report then falls back to the
    // submission's partition), oom_requeued is 0, and the view shows the new columns.
    sqlite3 *db;
    sqlite3_open(g_path.c_str(), &db);
    sqlite3_exec(db,
                 "DROP VIEW job_accuracy; ALTER TABLE jobs DROP COLUMN account;"
                 " ALTER TABLE jobs DROP COLUMN partition; ALTER TABLE jobs DROP COLUMN job_uid;"
                 " ALTER TABLE jobs DROP COLUMN enforcement;"
                 " ALTER TABLE jobs DROP COLUMN oom_requeued; DROP INDEX jobs_by_job_id;"
                 " ALTER TABLE jobs DROP COLUMN from_node; ALTER TABLE jobs DROP COLUMN share;"
                 " ALTER TABLE jobs DROP COLUMN gpu_fraction;"
                 " CREATE VIEW job_accuracy AS SELECT r.id AS request_id, j.job_id"
                 " FROM jobs j JOIN requests r ON r.id = j.request_id;"
                 " INSERT INTO requests (id, ts, kind, uid, outcome, outcome_name)"
                 " VALUES (1, 1, 'estimate', 1000, 0, 'estimated');"
                 " INSERT INTO jobs (request_id, job_id, cuda_oom, measured_peak_bytes, ts,"
                 " reported_by) VALUES (1, 7, 1, 123, 1, 0);"
                 " INSERT INTO jobs (request_id, job_id, cuda_oom, measured_peak_bytes, ts,"
                 " reported_by) VALUES (1, 8, 0, 456, 1, 1000); PRAGMA user_version=3;",
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
    assert_int_equal(scalar("SELECT count(*) FROM pragma_table_info('jobs') WHERE name='account'"),
                     0);
    assert_true((bool)Ledger::open(g_path));
    assert_int_equal(scalar("PRAGMA user_version"), k_ledger_schema_version);
    assert_int_equal(scalar("SELECT count(*) FROM jobs WHERE job_id=7 AND cuda_oom=1 AND"
                            " measured_peak_bytes=123 AND account IS NULL AND partition IS NULL"
                            " AND job_uid IS NULL AND enforcement IS NULL AND oom_requeued=0"
                            " AND from_node=1"),
                     1);
    // A user's own report, taken before schema 7, is kept but not the node's.
    assert_int_equal(scalar("SELECT count(*) FROM jobs WHERE job_id=8 AND from_node=0"), 1);
    assert_int_equal(scalar("SELECT count(*) FROM job_accuracy WHERE job_id=7 AND account IS NULL"
                            " AND partition IS NULL AND measured_peak_bytes=123"
                            " AND enforcement IS NULL AND oom_requeued=0"),
                     1);
    sqlite3_open(g_path.c_str(), &db); // the next test starts from an empty ledger
    sqlite3_exec(db, "DELETE FROM jobs; DELETE FROM requests;", nullptr, nullptr, nullptr);
    sqlite3_close(db);
}

static void writes_through_the_loop(void **)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    auto r = Ledger::open(g_path);
    assert_true((bool)r);
    Ledger &l = *r.value();
    l.start(&loop);
    int done = 0;
    uint64_t first = 0;
    for (int i = 0; i < 300; i++) {
        RequestRow row;
        row.id = l.take_id();
        if (!first)
            first = row.id;
        row.ts = 1;
        row.kind = "estimate";
        row.uid = i < 150 ? 1000 : 2000;
        row.outcome = Outcome::estimated;
        row.peak_bytes = 7;
        l.append(row, [&done](bool ok) {
            assert_true(ok);
            done++;
        });
    }
    std::vector<Outcome> job_outcomes;
    std::vector<std::string> records; // the accounting record of each, "" when not recorded
    // reporter: the peer's uid; owner: the uid the job ran as, as job_owner() resolved it.
    auto job = [&](uint64_t req, int64_t reporter, int64_t owner, uint64_t job_id) {
        JobRow j;
        j.request_id = req;
        j.job_id = job_id;
        j.reporter_uid = reporter;
        j.owner_uid = owner;
        if (reporter == 1000) { // the owner's report carries every optional field
            j.account = "physics";
            j.partition = "gpu";
            j.measured_peak_bytes = 3ULL << 30;
            j.cuda_oom = true;
            j.enforcement = "dmem";
            j.oom_requeued = true;
            j.share = "shard:3";
            j.gpu_fraction = 0.3;
        }
        l.job_end(j, [&job_outcomes, &records](Outcome o, const std::string &,
                                               const std::string &record) {
            job_outcomes.push_back(o);
            records.push_back(record);
        });
    };
    job(first, 1000, 1000, 55);  // owner
    job(first, 2000, 2000, 57);  // another user
    job(first + 1, 0, 1000, 56); // root, for the owner's job
    job(first + 2, 0, 2000, 58); // root, for another user's job naming this request
    job(999999, 0, 1000, 59);    // unknown request
    job(first + 1, 0, 1000, 56); // the same job again (a rerun): replaces its row
    // A packed job whose request another login node's xmemd holds, reported by root with
    // root's packing record's figures: a record from them, no row. The same from a user: no.
    auto foreign = [&](int64_t reporter, uint64_t job_id) {
        JobRow j;
        j.request_id = 888888;
        j.job_id = job_id;
        j.reporter_uid = reporter;
        j.owner_uid = 1000;
        j.share = "shard:2";
        j.gpu_fraction = 0.2;
        j.packed_limit_bytes = 4000ULL << 20;
        j.packed_estimate_bytes = 3600ULL << 20;
        j.measured_peak_bytes = 3500ULL << 20;
        j.elapsed_seconds = 9;
        l.job_end(j, [&job_outcomes, &records](Outcome o, const std::string &,
                                               const std::string &record) {
            job_outcomes.push_back(o);
            records.push_back(record);
        });
    };
    foreign(0, 60);
    foreign(1000, 61);
    bool closed = false;
    while (done < 300 || job_outcomes.size() < 8)
        uv_run(&loop, UV_RUN_ONCE);
    assert_int_equal(l.pending(), 0);
    l.stop([&closed] { closed = true; });
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_true(closed);
    assert_int_equal(uv_loop_close(&loop), 0); // no handle left open
    assert_int_equal(scalar("SELECT count(*) FROM requests WHERE peak_bytes=7"), 300);
    assert_int_equal((int)job_outcomes[0], (int)Outcome::recorded);
    assert_int_equal((int)job_outcomes[1], (int)Outcome::job_end_rejected);
    assert_int_equal((int)job_outcomes[2], (int)Outcome::recorded);
    assert_int_equal((int)job_outcomes[3], (int)Outcome::job_end_rejected);
    assert_int_equal((int)job_outcomes[4], (int)Outcome::job_end_rejected);
    assert_int_equal((int)job_outcomes[5], (int)Outcome::recorded);
    assert_int_equal((int)job_outcomes[6], (int)Outcome::recorded);
    assert_int_equal((int)job_outcomes[7], (int)Outcome::job_end_rejected);
    auto far = accounting_record_find(std::string(k_accounting_record_tag) + records[6]);
    assert_true(far.has_value() && far->request_id == 888888 && far->gpu.empty());
    assert_true(*far->limit_bytes == 4000ULL << 20 && *far->estimate_bytes == 3600ULL << 20);
    assert_true(*far->measured_bytes == 3500ULL << 20 && *far->share == "shard:2");
    assert_true(far->estimated && far->elapsed_seconds == 9 && records[7].empty());
    assert_int_equal(scalar("SELECT count(*) FROM jobs WHERE job_id IN (60, 61)"), 0);
    // A recorded job comes with its accounting record, built from the row just written.
    auto rec = accounting_record_find(std::string(k_accounting_record_tag) + records[0]);
    assert_true(rec.has_value());
    assert_true(rec->share == std::string("shard:3") && *rec->gpu_fraction == 0.3);
    assert_true(*rec->measured_bytes == 3ULL << 30 && rec->cuda_oom && rec->oom_requeued);
    assert_true(*rec->enforcement == "dmem" && rec->estimate_bytes == 7u && !rec->estimated);
    assert_true(records[1].empty() && !records[2].empty()); // refused: none
    assert_true(!accounting_record_find(std::string(k_accounting_record_tag) + records[2])->share);
    assert_int_equal(scalar("SELECT count(*) FROM jobs WHERE job_id=56"), 1);
    assert_int_equal(scalar("SELECT count(*) FROM job_accuracy"), 2);
    assert_int_equal(scalar("SELECT count(*) FROM jobs WHERE job_uid=1000"), 2);
    assert_int_equal(scalar("SELECT count(*) FROM job_accuracy WHERE account='physics' AND"
                            " partition='gpu' AND measured_peak_bytes=3221225472 AND cuda_oom=1"
                            " AND enforcement='dmem' AND oom_requeued=1"),
                     1);
    assert_int_equal(
        scalar("SELECT count(*) FROM jobs WHERE account IS NULL AND partition IS NULL"
               " AND measured_peak_bytes IS NULL AND cuda_oom=0 AND enforcement IS NULL"
               " AND oom_requeued=0"),
        1);
    // Ids continue after the highest stored one.
    auto again = Ledger::open(g_path);
    assert_int_equal(again.value()->take_id(), first + 300);
}

// Refused rows keep a bounded prefix of their text; a uid past its window's byte budget gets
// summary rows (numbers kept, text dropped); another uid is not affected.
static void bounds_refused_rows_and_user_bytes(void **)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    auto r = Ledger::open(g_path);
    assert_true((bool)r);
    Ledger &l = *r.value();
    l.start(&loop);
    int done = 0;
    std::string big(1u << 20, 'x');
    int rows = (int)(k_ledger_user_bytes_per_window / big.size()) + 8;
    for (int i = 0; i < rows + 1; i++) {
        RequestRow row;
        row.id = l.take_id();
        row.ts = 100;
        row.kind = "estimate";
        row.uid = i < rows ? 1000 : 2000;
        row.outcome = i == 0 ? Outcome::cwd_unusable : Outcome::estimated;
        row.options = big;
        row.peak_bytes = 9;
        l.append(row, [&done](bool) { done++; });
    }
    while (done < rows + 1)
        uv_run(&loop, UV_RUN_ONCE);
    l.stop([] {});
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_true(scalar("SELECT length(options) FROM requests WHERE outcome=8") <
                (int64_t)k_ledger_refused_field_bytes + 64);
    assert_true(scalar("SELECT sum(length(options)) FROM requests WHERE uid=1000") <=
                (int64_t)k_ledger_user_bytes_per_window);
    assert_true(scalar("SELECT count(*) FROM requests WHERE uid=1000 AND message LIKE"
                       " 'xmem: summarised%'") >= 8);
    assert_int_equal(scalar("SELECT count(*) FROM requests WHERE peak_bytes=9"), rows + 1);
    assert_int_equal(scalar("SELECT max(length(options)) FROM requests WHERE uid=2000"),
                     big.size());
}

// Issue 26, M3: rows, not bytes. Past k_ledger_user_rows_per_window in a window a user's
// requests are answered but not written; one summary row counts them when the next opens.
static void bounds_rows_per_user(void **)
{
    uv_loop_t loop;
    uv_loop_init(&loop);
    auto r = Ledger::open(g_path);
    assert_true((bool)r);
    Ledger &l = *r.value();
    l.start(&loop);
    int done = 0, ok = 0;
    const int extra = 5, total = (int)k_ledger_user_rows_per_window + extra;
    auto append = [&](int64_t ts) {
        RequestRow row;
        row.id = l.take_id();
        row.ts = ts;
        row.kind = "status";
        row.uid = 3000;
        row.outcome = Outcome::answered;
        l.append(row, [&](bool good) {
            done++;
            ok += good;
        });
    };
    for (int i = 0; i < total; i++)
        append(500);
    append(500 + k_ledger_window_seconds); // the next window: the summary, then this row
    while (done < total + 1)
        uv_run(&loop, UV_RUN_ONCE);
    l.stop([] {});
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(ok, total + 1); // every request answered
    assert_int_equal(scalar("SELECT count(*) FROM requests WHERE uid=3000 AND kind='status'"),
                     (int64_t)k_ledger_user_rows_per_window + 1);
    assert_int_equal(scalar("SELECT count(*) FROM requests WHERE uid=3000 AND kind='summary'"
                            " AND message LIKE 'xmem: uid 3000 made 5 more requests%'"),
                     1);
}

int test_group_ledger(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(creates_latest_schema),
                                       cmocka_unit_test(migrates_v1_and_refuses_newer),
                                       cmocka_unit_test(migrates_v3_job_rows),
                                       cmocka_unit_test(writes_through_the_loop),
                                       cmocka_unit_test(bounds_refused_rows_and_user_bytes),
                                       cmocka_unit_test(bounds_rows_per_user),
                                       cmocka_unit_test(files_are_private)};
    return cmocka_run_group_tests_name("ledger", tests, setup, teardown);
}
