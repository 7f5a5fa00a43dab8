// ledger.cpp — the writer thread and its group commit.
#include "ledger.h"
#include "accounting_record.h"
#include "defaults.h"
#include "log.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>

namespace xmem::server
{

struct Ledger::Op {
    enum class Kind { request, job } kind;
    bool counted_only = false; // a request past its user's row budget: answered, not written
    RequestRow req;
    JobRow job;
    Done done;
    JobDone job_done;
    bool ok = false;
    Outcome job_outcome = Outcome::internal_error;
    std::string job_message;
    std::string job_record; // accounting_record_json of the recorded job
};

namespace
{

void bind_text(sqlite3_stmt *st, int i, const std::string &s)
{
    sqlite3_bind_text(st, i, s.c_str(), (int)s.size(), SQLITE_TRANSIENT);
}

template <class T> void bind_opt(sqlite3_stmt *st, int i, const std::optional<T> &v)
{
    if (v)
        sqlite3_bind_int64(st, i, (sqlite3_int64)*v);
    else
        sqlite3_bind_null(st, i);
}

void bind_opt_text(sqlite3_stmt *st, int i, const std::optional<std::string> &v)
{
    if (v)
        bind_text(st, i, *v);
    else
        sqlite3_bind_null(st, i);
}

const char *k_insert_request =
    "INSERT INTO requests (id, ts, kind, user, uid, gid, pid, cwd, entrypoint, script, options,"
    " outcome, outcome_name, cached, queue_ms, profile_ms, analyze_ms, total_ms, peak_bytes,"
    " limit_bytes, gpu, torch, fits, cache_key, message, breakdown, mode)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

// `st` is prepared once per ledger (writer thread only) and reset after each row.
bool insert_request(sqlite3_stmt *st, const RequestRow &r)
{
    int i = 1;
    sqlite3_bind_int64(st, i++, (sqlite3_int64)r.id);
    sqlite3_bind_int64(st, i++, r.ts);
    bind_text(st, i++, r.kind);
    bind_text(st, i++, r.user);
    sqlite3_bind_int64(st, i++, r.uid);
    sqlite3_bind_int64(st, i++, r.gid);
    sqlite3_bind_int64(st, i++, r.pid);
    bind_text(st, i++, r.cwd);
    bind_text(st, i++, r.entrypoint);
    bind_text(st, i++, r.script);
    bind_text(st, i++, r.options);
    sqlite3_bind_int(st, i++, static_cast<int>(r.outcome));
    bind_text(st, i++, std::string(outcome_name(r.outcome)));
    sqlite3_bind_int(st, i++, r.cached ? 1 : 0);
    sqlite3_bind_int64(st, i++, r.queue_ms);
    sqlite3_bind_int64(st, i++, r.profile_ms);
    sqlite3_bind_int64(st, i++, (sqlite3_int64)(r.analyze_seconds * 1000));
    sqlite3_bind_int64(st, i++, r.total_ms);
    bind_opt(st, i++, r.peak_bytes);
    bind_opt(st, i++, r.limit_bytes);
    bind_text(st, i++, r.gpu);
    bind_text(st, i++, r.torch);
    bind_opt(st, i++, r.fits);
    bind_text(st, i++, r.cache_key);
    bind_text(st, i++, r.message);
    bind_text(st, i++, r.breakdown);
    bind_text(st, i++, r.mode);
    bool ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ok;
}

template <class T> std::optional<T> column_opt(sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return std::nullopt;
    if constexpr (std::is_same_v<T, double>)
        return sqlite3_column_double(st, col);
    else if constexpr (std::is_same_v<T, std::string>)
        return std::string((const char *)sqlite3_column_text(st, col));
    else
        return (T)sqlite3_column_int64(st, col);
}

// The accounting record of a job just recorded, from its row and its request's, as the
// report reads them (report_load.cpp): "" when the rows cannot be read back.
std::string job_record(sqlite3 *db, uint64_t job_id)
{
    sqlite3_stmt *st = nullptr;
    sqlite3_prepare_v2(db,
                       "SELECT j.ts, j.request_id, r.gpu, r.peak_bytes, r.limit_bytes,"
                       " r.outcome = 0 AND r.fits = 1, r.options, j.share, j.gpu_fraction,"
                       " j.measured_peak_bytes, j.cuda_oom, j.oom_requeued, j.exit_status,"
                       " j.elapsed_seconds, j.enforcement"
                       " FROM jobs j JOIN requests r ON r.id = j.request_id WHERE j.job_id = ?",
                       -1, &st, nullptr);
    sqlite3_bind_int64(st, 1, (sqlite3_int64)job_id);
    std::string json;
    if (sqlite3_step(st) == SQLITE_ROW) {
        AccountingRecord r;
        r.ts = sqlite3_column_int64(st, 0);
        r.request_id = (uint64_t)sqlite3_column_int64(st, 1);
        r.gpu = column_opt<std::string>(st, 2).value_or("");
        r.estimate_bytes = column_opt<uint64_t>(st, 3);
        r.limit_bytes = column_opt<uint64_t>(st, 4);
        r.estimated = sqlite3_column_int(st, 5) == 1;
        auto options =
            nlohmann::json::parse(column_opt<std::string>(st, 6).value_or(""), nullptr, false);
        r.check_only = options.is_object() && options.value("check_only", false) == true;
        r.share = column_opt<std::string>(st, 7);
        r.gpu_fraction = column_opt<double>(st, 8);
        r.measured_bytes = column_opt<uint64_t>(st, 9);
        r.cuda_oom = sqlite3_column_int(st, 10) != 0;
        r.oom_requeued = sqlite3_column_int(st, 11) != 0;
        r.exit_status = sqlite3_column_int(st, 12);
        r.elapsed_seconds = (uint64_t)sqlite3_column_int64(st, 13);
        r.enforcement = column_opt<std::string>(st, 14);
        json = accounting_record_json(r);
    }
    sqlite3_finalize(st);
    return json;
}

// The record of a job whose request this ledger does not hold: another login node's xmemd
// estimated it, and the node reports its end here. Only root's words go into it: the node's
// own measurements (the report came from root, SO_PEERCRED) and the limit and estimate of
// root's packing record in the job's AdminComment; the GPU model is not in that record.
// The job has no ledger row here: slurmdbd keeps the record (docs/slurm.md).
std::string foreign_record(const JobRow &j)
{
    AccountingRecord r;
    r.ts = time(nullptr);
    r.request_id = j.request_id;
    if (j.packed_estimate_bytes)
        r.estimate_bytes = j.packed_estimate_bytes;
    r.limit_bytes = j.packed_limit_bytes;
    r.estimated = true; // packed: answered, and it fit
    r.share = j.share;
    r.gpu_fraction = j.gpu_fraction;
    r.measured_bytes = j.measured_peak_bytes;
    r.cuda_oom = j.cuda_oom;
    r.oom_requeued = j.oom_requeued;
    r.exit_status = j.exit_status;
    r.elapsed_seconds = j.elapsed_seconds;
    r.enforcement = j.enforcement;
    return accounting_record_json(r);
}

// Checks that the request belongs to the uid the job ran as (job_owner() in dispatch.cpp
// resolved it from the peer and the body) and inserts the job row; *record is the job's
// accounting record. A packed job whose request another xmemd holds, reported by root, gets
// its record from root's words only and no row.
Outcome insert_job(sqlite3 *db, const JobRow &j, std::string &msg, std::string &record)
{
    sqlite3_stmt *st = nullptr;
    sqlite3_prepare_v2(db, "SELECT uid FROM requests WHERE id = ? AND kind = 'estimate'", -1, &st,
                       nullptr);
    sqlite3_bind_int64(st, 1, (sqlite3_int64)j.request_id);
    int rc = sqlite3_step(st);
    int64_t owner = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && j.reporter_uid == 0 && j.share && j.packed_limit_bytes) {
        msg = "recorded in the job's accounting record only: request " +
              std::to_string(j.request_id) + " is another xmemd's (another login node's)";
        record = foreign_record(j);
        return Outcome::recorded;
    }
    if (rc != SQLITE_ROW) {
        msg = "xmem: job_end names request " + std::to_string(j.request_id) +
              ", which the ledger does not hold";
        return Outcome::job_end_rejected;
    }
    if (j.owner_uid != owner) {
        msg = "xmem: job_end for request " + std::to_string(j.request_id) +
              " must come from its owner or root, for a job its owner ran (uid " +
              std::to_string(j.owner_uid) + " is not the request's)";
        return Outcome::job_end_rejected;
    }
    // One row per Slurm job: a later report of the same job (an OOM-requeued rerun) replaces
    // the earlier one, whichever request it named.
    sqlite3_prepare_v2(db, "DELETE FROM jobs WHERE job_id = ?", -1, &st, nullptr);
    sqlite3_bind_int64(st, 1, (sqlite3_int64)j.job_id);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        msg = std::string("xmem: cannot record the job: ") + sqlite3_errmsg(db);
        return Outcome::internal_error;
    }
    sqlite3_prepare_v2(
        db,
        "INSERT INTO jobs (request_id, job_id, exit_status,"
        " elapsed_seconds, cuda_oom, measured_peak_bytes, reported_by, account,"
        " partition, job_uid, enforcement, oom_requeued, share, gpu_fraction,"
        " from_node, ts) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,strftime('%s','now'))",
        -1, &st, nullptr);
    sqlite3_bind_int64(st, 1, (sqlite3_int64)j.request_id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)j.job_id);
    sqlite3_bind_int(st, 3, j.exit_status);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)j.elapsed_seconds);
    sqlite3_bind_int(st, 5, j.cuda_oom ? 1 : 0);
    bind_opt(st, 6, j.measured_peak_bytes);
    sqlite3_bind_int64(st, 7, j.reporter_uid);
    bind_opt_text(st, 8, j.account);
    bind_opt_text(st, 9, j.partition);
    sqlite3_bind_int64(st, 10, j.owner_uid);
    bind_opt_text(st, 11, j.enforcement);
    sqlite3_bind_int(st, 12, j.oom_requeued ? 1 : 0);
    bind_opt_text(st, 13, j.share);
    if (j.gpu_fraction)
        sqlite3_bind_double(st, 14, *j.gpu_fraction);
    else
        sqlite3_bind_null(st, 14);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        msg = std::string("xmem: cannot record the job: ") + sqlite3_errmsg(db);
        return Outcome::internal_error;
    }
    msg = "recorded";
    record = job_record(db, j.job_id);
    return Outcome::recorded;
}

void truncate_field(std::string &s, std::size_t max)
{
    if (s.size() <= max)
        return;
    std::string note = "...[" + std::to_string(s.size() - max) + " bytes dropped]";
    s.resize(max);
    s += note;
}

std::size_t text_bytes(const RequestRow &r)
{
    return r.user.size() + r.cwd.size() + r.entrypoint.size() + r.script.size() + r.options.size() +
           r.gpu.size() + r.torch.size() + r.cache_key.size() + r.message.size() +
           r.breakdown.size() + r.mode.size() + 256; // + fixed columns
}

} // namespace

// Bounds what one row, and one user, may write: a refused request is kept short (its full
// argv and env are of no use to anyone), a user past the window's byte budget gets summary
// rows (every number kept, so counts and reports stay right) instead of text, and past the
// window's row budget no row at all: summarised rows are still rows (issue 26, M3). Those
// are counted, and one row says how many when the user's next window opens.
bool Ledger::bound_row(RequestRow &r)
{
    if (!outcome_is_answered(r.outcome))
        for (std::string *f :
             {&r.cwd, &r.entrypoint, &r.script, &r.options, &r.message, &r.breakdown})
            truncate_field(*f, k_ledger_refused_field_bytes);
    UserWindow &w = m_user_bytes[r.uid];
    if (r.ts - w.start >= k_ledger_window_seconds || r.ts < w.start) {
        if (w.dropped > 0)
            stage_dropped_summary(r.uid, w);
        w = UserWindow{r.ts, 0, 0, 0};
    }
    if (r.uid != 0 && w.rows >= k_ledger_user_rows_per_window) { // root: the site's tools
        w.dropped++;
        return false;
    }
    w.rows++;
    if (w.bytes + text_bytes(r) > k_ledger_user_bytes_per_window) {
        for (std::string *f : {&r.cwd, &r.entrypoint, &r.script, &r.options, &r.breakdown})
            f->clear();
        r.message = "xmem: summarised: uid " + std::to_string(r.uid) + " wrote more than " +
                    std::to_string(k_ledger_user_bytes_per_window >> 20) +
                    " MiB to the ledger within " + std::to_string(k_ledger_window_seconds) + " s";
    }
    w.bytes += text_bytes(r);
    return true;
}

void Ledger::stage_dropped_summary(int64_t uid, const UserWindow &w)
{
    auto op = std::make_unique<Op>();
    op->kind = Op::Kind::request;
    op->req.id = take_id();
    op->req.ts = w.start;
    op->req.kind = "summary";
    op->req.uid = uid;
    op->req.outcome = Outcome::answered;
    op->req.message = "xmem: uid " + std::to_string(uid) + " made " + std::to_string(w.dropped) +
                      " more requests within " + std::to_string(k_ledger_window_seconds) +
                      " s from " + std::to_string(w.start) + " than the ledger keeps rows for (" +
                      std::to_string(k_ledger_user_rows_per_window) + "); they were answered";
    stage(std::move(op));
}

namespace
{

// The ledger holds every user's command lines, paths and scripts: it is root's alone
// (0600). Created so before SQLite opens it, and tightened when an older xmemd made it
// 0644; SQLite gives the -wal and -shm files it creates the database file's mode, and an
// existing one is tightened too. Never through a symlink.
std::optional<std::string> make_private(const std::string &path)
{
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return path + ": cannot open the ledger: " + strerror(errno) +
               " (check the database key and the directory's permissions)";
    struct stat st;
    std::optional<std::string> why;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        why = path + ": the ledger is not a regular file";
    else if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0)
        why = path + ": cannot make the ledger private (0600): " + strerror(errno);
    ::close(fd);
    for (const char *suffix : {"-wal", "-shm"}) {
        int f = ::open((path + suffix).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (f >= 0) {
            if (fstat(f, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) != 0600)
                fchmod(f, 0600);
            ::close(f);
        }
    }
    return why;
}

} // namespace

Result<std::unique_ptr<Ledger>> Ledger::open(const std::string &path)
{
    using R = Result<std::unique_ptr<Ledger>>;
    if (auto why = make_private(path))
        return R::fail(*why);
    std::unique_ptr<Ledger> l(new Ledger());
    l->m_path = path;
    int rc =
        sqlite3_open_v2(path.c_str(), &l->m_db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK)
        return R::fail(path + ": cannot open the ledger: " +
                       (l->m_db ? sqlite3_errmsg(l->m_db) : "out of memory") +
                       " (check the database key and the directory's permissions)");
    // WAL: readers (reports, sqlite3 CLI) never block the writer. synchronous=NORMAL keeps
    // every committed transaction across a crash of xmemd (not across power loss).
    char *err = nullptr;
    if (sqlite3_exec(l->m_db,
                     "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                     " PRAGMA foreign_keys=ON; PRAGMA busy_timeout=5000;",
                     nullptr, nullptr, &err) != SQLITE_OK) {
        std::string why = err ? err : "?";
        sqlite3_free(err);
        return R::fail(path + ": cannot configure the ledger: " + why);
    }
    auto m = ledger_migrate(l->m_db, path);
    if (!m)
        return R::fail(m.error());
    sqlite3_stmt *st = nullptr;
    sqlite3_prepare_v2(l->m_db, "SELECT COALESCE(MAX(id), 0) FROM requests", -1, &st, nullptr);
    if (sqlite3_step(st) == SQLITE_ROW)
        l->m_next_id = (uint64_t)sqlite3_column_int64(st, 0) + 1;
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(l->m_db, k_insert_request, -1, &l->m_insert, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(l->m_db, "BEGIN IMMEDIATE", -1, &l->m_begin, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(l->m_db, "COMMIT", -1, &l->m_commit, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(l->m_db, "ROLLBACK", -1, &l->m_rollback, nullptr) != SQLITE_OK)
        return R::fail(path + ": cannot prepare the ledger statements: " + sqlite3_errmsg(l->m_db));
    return R::ok(std::move(l));
}

Ledger::~Ledger()
{
    if (m_thread.joinable()) {
        {
            std::lock_guard<std::mutex> lk(m_mutex);
            m_stop = true;
        }
        m_cv.notify_one();
        m_thread.join();
    }
    sqlite3_finalize(m_insert);
    sqlite3_finalize(m_begin);
    sqlite3_finalize(m_commit);
    sqlite3_finalize(m_rollback);
    if (m_db)
        sqlite3_close(m_db);
}

void Ledger::start(uv_loop_t *loop)
{
    uv_async_init(loop, &m_async, on_async);
    m_async.data = this;
    uv_idle_init(loop, &m_idle);
    m_idle.data = this;
    m_started = true;
    m_thread = std::thread([this] { writer_main(); });
}

void Ledger::append(RequestRow row, Done done)
{
    auto op = std::make_unique<Op>();
    op->kind = Op::Kind::request;
    op->counted_only = !bound_row(row);
    op->req = std::move(row);
    op->done = std::move(done);
    stage(std::move(op));
}

void Ledger::job_end(JobRow row, JobDone done)
{
    auto op = std::make_unique<Op>();
    op->kind = Op::Kind::job;
    op->job = row;
    op->job_done = std::move(done);
    stage(std::move(op));
}

// Loop-turn group commit: every row appended while the loop handles one batch of events goes
// to the writer with one lock and one wake-up, and so into one transaction, instead of one
// transaction (WAL locks, a WAL write, two thread wake-ups) per row. The idle handle makes
// the next turn's poll return at once, so a staged row never waits for an unrelated event.
void Ledger::stage(std::unique_ptr<Op> op)
{
    m_pending++;
    m_staged.push_back(std::move(op));
    if (m_started && m_staged.size() == 1)
        uv_idle_start(&m_idle, on_idle);
}

void Ledger::on_idle(uv_idle_t *h)
{
    static_cast<Ledger *>(h->data)->hand_over();
}

void Ledger::hand_over()
{
    if (m_started)
        uv_idle_stop(&m_idle);
    if (m_staged.empty())
        return;
    {
        std::lock_guard<std::mutex> lk(m_mutex);
        for (auto &op : m_staged)
            m_todo.push_back(std::move(op));
    }
    m_staged.clear();
    m_cv.notify_one();
}

void Ledger::writer_main()
{
    for (;;) {
        std::deque<std::unique_ptr<Op>> batch;
        {
            std::unique_lock<std::mutex> lk(m_mutex);
            m_cv.wait(lk, [this] { return m_stop || !m_todo.empty(); });
            if (m_todo.empty() && m_stop)
                return;
            while (!m_todo.empty() && batch.size() < (std::size_t)k_ledger_batch_max) {
                batch.push_back(std::move(m_todo.front()));
                m_todo.pop_front();
            }
        }
        commit_batch(batch);
        {
            std::lock_guard<std::mutex> lk(m_mutex);
            for (auto &op : batch)
                m_done.push_back(std::move(op));
        }
        uv_async_send(&m_async);
    }
}

// Runs a prepared BEGIN/COMMIT/ROLLBACK; true on success.
static bool step_once(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE;
}

void Ledger::commit_batch(std::deque<std::unique_ptr<Op>> &batch)
{
    bool began = step_once(m_begin);
    for (auto &op : batch) {
        if (op->kind == Op::Kind::request && op->counted_only)
            op->ok = true; // answered; its user's window counts it (bound_row)
        else if (op->kind == Op::Kind::request)
            op->ok = began && m_insert && insert_request(m_insert, op->req);
        else {
            op->job_outcome = insert_job(m_db, op->job, op->job_message, op->job_record);
        }
        if (op->kind == Op::Kind::request && !op->ok)
            log_warn_throttled("ledger-insert", "%s: cannot record request %llu: %s",
                               m_path.c_str(), (unsigned long long)op->req.id,
                               sqlite3_errmsg(m_db));
    }
    if (began && !step_once(m_commit)) {
        log_warn_throttled("ledger-commit", "%s: commit failed: %s", m_path.c_str(),
                           sqlite3_errmsg(m_db));
        step_once(m_rollback);
        for (auto &op : batch) {
            op->ok = false;
            if (op->kind == Op::Kind::job) {
                op->job_outcome = Outcome::internal_error;
                op->job_message = "xmem: the ledger could not commit; see the xmemd log";
            }
        }
    }
}

void Ledger::on_async(uv_async_t *h)
{
    auto *self = static_cast<Ledger *>(h->data);
    std::deque<std::unique_ptr<Op>> done;
    {
        std::lock_guard<std::mutex> lk(self->m_mutex);
        done.swap(self->m_done);
    }
    for (auto &op : done) {
        self->m_pending--;
        if (op->kind == Op::Kind::request && op->done)
            op->done(op->ok);
        else if (op->kind == Op::Kind::job && op->job_done)
            op->job_done(op->job_outcome, op->job_message, op->job_record);
    }
}

void Ledger::stop(std::function<void()> closed)
{
    m_closed = std::move(closed);
    hand_over(); // rows staged this turn are committed before the thread ends
    if (m_thread.joinable()) {
        {
            std::lock_guard<std::mutex> lk(m_mutex);
            m_stop = true;
        }
        m_cv.notify_one();
        m_thread.join();
    }
    on_async(&m_async); // deliver the last completions
    if (m_started) {
        uv_close(reinterpret_cast<uv_handle_t *>(&m_idle), nullptr);
        uv_close(reinterpret_cast<uv_handle_t *>(&m_async), on_close);
        m_started = false; // a later append stays staged: the writer is gone
    } else if (m_closed) {
        m_closed();
    }
}

void Ledger::on_close(uv_handle_t *h)
{
    auto *self = static_cast<Ledger *>(h->data);
    if (self->m_closed)
        self->m_closed();
}

} // namespace xmem::server
