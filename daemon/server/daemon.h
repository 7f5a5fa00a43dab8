/*
 * daemon.h — xmemd's state on the loop thread and the connection/estimate objects hung off
 * libuv handles. Lifecycle (libuv's rule): init → start/stop → close; memory is freed only in
 * the close callback. Who owns what:
 *   Daemon owns the listener, the signal handles, timers, the ledger, the cache, every
 *   Conn and, through EstimateOwners (estimate_owners.h), every EstimateJob. A Conn owns its
 *   pipe and timer; an EstimateJob outlives a Conn whose client went away (the row is still
 *   recorded), and forgets it through job->conn.
 */
#ifndef XMEMD_DAEMON_H
#define XMEMD_DAEMON_H

#include "cache.h"
#include "config.h"
#include "estimate_owners.h"
#include "held_jobs.h"
#include "ledger.h"
#include "metrics.h"
#include "scheduler.h"
#include "contract/xmem_proto.h"

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <string>
#include <uv.h>

namespace xmem::server
{

class Daemon;
class MetricsServer;
struct EstimateJob;

struct Options {
    std::string config_path;
    bool config_given = false;
    std::string socket, lockfile, database, munge_socket, log; // override config when set
    std::string render_policy_out;
    bool foreground = false;
    bool force = false;        // take over a stale lock/socket
    bool check_config = false; // validate and exit
};

struct Peer {
    uid_t uid = (uid_t)-1;
    gid_t gid = (gid_t)-1;
    pid_t pid = 0;
};

struct Conn {
    uv_pipe_t pipe;
    uv_timer_t timer; // frame deadline, then write deadline
    Daemon *d = nullptr;
    Peer peer;
    std::string buf;
    bool have_header = false;
    xmem_frame_header hdr{};
    EstimateJob *job = nullptr;
    int open_handles = 0;
    bool closing = false;
    bool answered = false;
    uint64_t serial = 0; // tells a Conn from a later one allocated at the same address
};

class Daemon
{
  public:
    // `pool_threads`: the threadpool's size, set by main.cpp before libuv started it.
    Daemon(uv_loop_t *loop, std::shared_ptr<const Config> cfg, Options opts, int pool_threads);
    ~Daemon();
    // Startup steps (main.cpp); each logs its own failure with a hint and returns false.
    bool open_ledger();
    bool listen_socket();
    bool start_metrics();
    void install_signals();
    // Closes every handle; the loop then ends. Called when a drain completes.
    void close_all();

    uv_loop_t *loop() { return m_loop; }
    const std::shared_ptr<const Config> &config() const { return m_cfg; }
    Ledger &ledger() { return *m_ledger; }
    Cache &cache() { return m_cache; }
    Scheduler &scheduler() { return m_sched; }
    Metrics &metrics() { return m_metrics; }
    bool draining() const { return m_draining; }
    // What an estimate request needs, and the owners only requests use (estimate_owners.h).
    EstimateOwners &estimates() { return m_estimates; }
    std::set<Conn *> &conns() { return m_conns; }
    char *read_buffer() { return m_read_buf; }
    std::size_t read_buffer_size() const { return sizeof(m_read_buf); }
    // `caller`: whose held jobs' estimates it lists ("held", docs/async.md).
    nlohmann::json status_json(uid_t caller) const;
    nlohmann::json stats_json() const;
    Gauges gauges() const;
    void maybe_finish_drain();
    void reload();
    void write_policy_file(); // where policy_file: names one; logs a failure
    void begin_drain(int signum);

  private:
    static void on_connection(uv_stream_t *server, int status);
    static void on_signal(uv_signal_t *h, int signum);
    static void on_drain_timeout(uv_timer_t *t);
    static void on_sweep(uv_timer_t *t);

    uv_loop_t *m_loop;
    std::shared_ptr<const Config> m_cfg;
    Options m_opts;
    std::unique_ptr<Ledger> m_ledger;
    Cache m_cache;
    Scheduler m_sched;
    Metrics m_metrics;
    MetricsServer *m_metrics_server = nullptr;
    uv_pipe_t m_listener{};
    uv_signal_t m_sighup{}, m_sigterm{}, m_sigint{};
    uv_timer_t m_drain_timer{}, m_sweep_timer{};
    bool m_listening = false, m_signals = false, m_timers = false;
    bool m_draining = false, m_closing = false;
    std::set<Conn *> m_conns;
    EstimateOwners m_estimates; // after what it refers to: the config, cache, scheduler, ...
    HeldJobs m_held;            // jobs held in Slurm for their estimates (held_jobs.h)
    long m_started;
    char m_read_buf[65536];
};

// conn.cpp
void conn_start(Daemon *d, Conn *c);
void conn_reply(Conn *c, const nlohmann::json &body);
void conn_close(Conn *c);
// An error answer {outcome, outcome_name, message}.
nlohmann::json outcome_reply(Outcome o, const std::string &message);

// dispatch.cpp: one complete, well-framed request.
void dispatch_request(Conn *c, uint16_t type, const std::string &body);
// Records a refused frame in the ledger and answers it (then closes).
void refuse_frame(Conn *c, Outcome o, const std::string &message);

// estimate_request.cpp: the request's life (estimate_stage.h).
void estimate_begin(EstimateOwners &o, Conn *c, const nlohmann::json &body);
void estimate_start_profile(EstimateJob *job);
void estimate_refuse_queued(EstimateJob *job, Outcome o, const std::string &message);
// Stops every running profile (a second signal, or the drain's timeout).
void estimate_cancel_running(EstimateOwners &o);
// The job's client went away: the job is recorded without an answer, and its work ends
// (dropped from the queue, its profile killed) unless an identical request still waits for it.
void estimate_forget_conn(EstimateJob *job);
// estimate_deadlines.cpp: queued jobs and followers whose deadline passed are answered
// deadline_expired.
void estimate_sweep_deadlines(EstimateOwners &o);
// estimate_pending.cpp: batch jobs' clients that waited their interactive budget are answered
// pending; their requests go on for the held jobs (docs/async.md).
void estimate_sweep_budgets(EstimateOwners &o);
// A bounded summary for `xmem status`: the first k_status_max_entries requests, argv cut to
// k_status_argv_bytes with control bytes replaced, then one "N more" entry per user for the
// rest, so the reply stays small whatever users have queued (estimate_status.cpp).
nlohmann::json estimate_in_flight(const EstimateOwners &o);
// The estimates `uid`'s held jobs wait for (docs/async.md): request id, stage, seconds,
// entrypoint; at most k_status_max_entries.
nlohmann::json estimate_held_for(const EstimateOwners &o, uid_t uid);

} // namespace xmem::server
#endif
