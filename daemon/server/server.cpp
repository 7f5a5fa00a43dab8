// server.cpp — the Daemon: listening socket, peer credentials, signals, reload and drain.
#include "daemon.h"
#include "defaults.h"
#include "log.h"
#include "metrics_http.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace xmem::server
{

namespace
{
uint64_t g_conn_serial = 0;

// Every connection is an fd: the soft limit (often 1024) would run out before max_connections
// and starve every user, so it is raised to the hard limit, and a limit too low for
// max_connections plus the reserve is said at start.
void raise_fd_limit(int max_connections)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < (rlim_t)max_connections + (rlim_t)k_fd_reserve)
        log_warn("the open-file limit %llu is below max_connections %d + %d in reserve; "
                 "raise LimitNOFILE in the unit or lower max_connections",
                 (unsigned long long)rl.rlim_cur, max_connections, k_fd_reserve);
}

// Connections the same uid holds now (root's, from slurmstepd's job_end, are not bounded).
int connections_of(const std::set<Conn *> &conns, uid_t uid)
{
    int n = 0;
    for (const Conn *c : conns)
        n += c->peer.uid == uid;
    return n;
}
} // namespace

Daemon::Daemon(uv_loop_t *loop, std::shared_ptr<const Config> cfg, Options opts, int pool_threads)
    : m_loop(loop), m_cfg(std::move(cfg)), m_opts(std::move(opts)),
      m_cache(m_cfg->cache_ttl_seconds, m_cfg->cache_max_entries),
      m_estimates(loop, m_cfg, m_draining, m_cache, m_sched, m_metrics, pool_threads),
      m_held(loop, m_cfg), m_started(time(nullptr))
{
    m_estimates.job_freed = [this] { maybe_finish_drain(); };
    m_estimates.held = &m_held;
    m_sched.configure(m_cfg->max_concurrent, m_cfg->max_per_user, m_cfg->queue_size);
}

Daemon::~Daemon() = default;

bool Daemon::open_ledger()
{
    auto l = Ledger::open(m_cfg->database);
    if (!l) {
        log_error("%s", l.error().message.c_str());
        return false;
    }
    m_ledger = std::move(l.value());
    m_ledger->start(m_loop);
    m_estimates.ledger = m_ledger.get();
    return true;
}

bool Daemon::listen_socket()
{
    const std::string &path = m_cfg->socket;
    raise_fd_limit(m_cfg->max_connections);
    uv_pipe_init(m_loop, &m_listener, 0);
    m_listener.data = this;
    m_listening = true;
    // The lock is ours (startup.cpp), so a socket file left here is stale.
    unlink(path.c_str());
    mode_t old = umask(0111); // srw-rw-rw-: every local user may ask for an estimate
    int rc = uv_pipe_bind(&m_listener, path.c_str());
    umask(old);
    if (rc == 0)
        rc = uv_listen(reinterpret_cast<uv_stream_t *>(&m_listener), 512, on_connection);
    if (rc != 0) {
        log_error("cannot listen on %s: %s (check the socket key and the directory)", path.c_str(),
                  uv_strerror(rc));
        return false;
    }
    return true;
}

bool Daemon::start_metrics()
{
    if (m_cfg->metrics_listen.empty())
        return true;
    m_metrics_server = new MetricsServer(this);
    if (auto listening = m_metrics_server->listen(m_cfg->metrics_listen); !listening.ok()) {
        log_error("metrics_listen: %s", listening.error().message.c_str());
        return false;
    }
    return true;
}

void Daemon::on_connection(uv_stream_t *server, int status)
{
    auto *d = static_cast<Daemon *>(server->data);
    if (status < 0) {
        log_warn_throttled("accept", "accept failed: %s", uv_strerror(status));
        return;
    }
    auto *c = new Conn;
    uv_pipe_init(d->m_loop, &c->pipe, 0);
    c->pipe.data = c;
    c->serial = ++g_conn_serial;
    if (uv_accept(server, reinterpret_cast<uv_stream_t *>(&c->pipe)) != 0) {
        uv_close(reinterpret_cast<uv_handle_t *>(&c->pipe),
                 [](uv_handle_t *h) { delete static_cast<Conn *>(h->data); });
        return;
    }
    // Identity comes from the kernel, never from the message.
    uv_os_fd_t fd;
    struct ucred cred {
    };
    socklen_t len = sizeof(cred);
    if (uv_fileno(reinterpret_cast<uv_handle_t *>(&c->pipe), &fd) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        log_warn_throttled("peercred", "cannot read the peer's credentials: %s", strerror(errno));
        uv_close(reinterpret_cast<uv_handle_t *>(&c->pipe),
                 [](uv_handle_t *h) { delete static_cast<Conn *>(h->data); });
        return;
    }
    c->peer = Peer{cred.uid, cred.gid, cred.pid};
    d->m_conns.insert(c);
    conn_start(d, c);
    if ((int)d->m_conns.size() > d->m_cfg->max_connections) {
        d->m_metrics.count_outcome(Outcome::too_many_connections);
        log_warn_throttled("maxconn", "connection limit %d reached; refusing clients",
                           d->m_cfg->max_connections);
        conn_reply(c, outcome_reply(Outcome::too_many_connections,
                                    "xmem: xmemd has too many connections; retry shortly"));
    } else if (cred.uid != 0 && connections_of(d->m_conns, cred.uid) > k_max_connections_per_user) {
        d->m_metrics.count_outcome(Outcome::too_many_connections);
        log_warn_throttled("maxconn-user", "uid %u holds %d connections; refusing its next",
                           (unsigned)cred.uid, k_max_connections_per_user);
        conn_reply(c, outcome_reply(Outcome::too_many_connections,
                                    "xmem: you hold " + std::to_string(k_max_connections_per_user) +
                                        " connections to xmemd already; close some and retry"));
    }
}

void Daemon::install_signals()
{
    uv_signal_init(m_loop, &m_sighup);
    uv_signal_init(m_loop, &m_sigterm);
    uv_signal_init(m_loop, &m_sigint);
    m_sighup.data = m_sigterm.data = m_sigint.data = this;
    uv_signal_start(&m_sighup, on_signal, SIGHUP);
    uv_signal_start(&m_sigterm, on_signal, SIGTERM);
    uv_signal_start(&m_sigint, on_signal, SIGINT);
    m_signals = true;
    uv_timer_init(m_loop, &m_drain_timer);
    uv_timer_init(m_loop, &m_sweep_timer);
    m_drain_timer.data = m_sweep_timer.data = this;
    // A quarter second: the interactive budget (seconds) is kept to within it.
    uv_timer_start(&m_sweep_timer, on_sweep, 250, 250);
    m_timers = true;
}

void Daemon::on_signal(uv_signal_t *h, int signum)
{
    auto *d = static_cast<Daemon *>(h->data);
    if (signum == SIGHUP)
        d->reload();
    else
        d->begin_drain(signum);
}

void Daemon::reload()
{
    if (m_cfg->path.empty()) {
        log_info("SIGHUP: no config file to reload (built-in defaults)");
        return;
    }
    auto next = config_load(m_cfg->path);
    if (!next) {
        log_error("SIGHUP: keeping the previous config: %s", next.error().message.c_str());
        return;
    }
    Config c = std::move(next.value());
    // Paths and the listening address are fixed for the life of the process.
    c.socket = m_cfg->socket;
    c.lockfile = m_cfg->lockfile;
    c.database = m_cfg->database;
    c.metrics_listen = m_cfg->metrics_listen;
    c.log = m_cfg->log;
    if (!m_opts.munge_socket.empty())
        c.munge_socket = m_opts.munge_socket;
    // Profiles hold threadpool threads, and the pool was sized at start-up (main.cpp).
    int slots = m_estimates.pool.threads() - k_threadpool_spare;
    if (c.max_concurrent > slots) {
        log_warn("SIGHUP: max_concurrent %d needs a restart; using %d until then", c.max_concurrent,
                 slots);
        c.max_concurrent = slots;
        c.max_per_user = std::min(c.max_per_user, slots);
    }
    bool changed = c.fingerprint != m_cfg->fingerprint;
    m_cfg = std::make_shared<const Config>(std::move(c));
    m_sched.configure(m_cfg->max_concurrent, m_cfg->max_per_user, m_cfg->queue_size);
    m_cache.configure(m_cfg->cache_ttl_seconds, m_cfg->cache_max_entries);
    if (changed)
        m_cache.clear(); // cached estimates were made under the old config
    log_info("SIGHUP: reloaded %s%s", m_cfg->path.c_str(),
             changed ? " (changed; cache cleared)" : " (unchanged)");
    write_policy_file();
    for (EstimateJob *job : m_sched.pump())
        estimate_start_profile(job);
}

// The policy job_submit.lua loads, re-rendered where the config asks (policy_file:), so a
// new margin (xmem calibrate --apply) reaches the next job without an admin's step.
void Daemon::write_policy_file()
{
    if (m_cfg->policy_file.empty())
        return;
    auto written = policy_write_lua(m_cfg->policy, (unsigned)geteuid(), m_cfg->policy_file);
    if (written.ok())
        log_info("policy rendered to %s", m_cfg->policy_file.c_str());
    else
        log_error("%s", written.error().message.c_str());
}

void Daemon::begin_drain(int signum)
{
    if (m_draining) {
        log_info("%s again: stopping running profiles now", strsignal(signum));
        estimate_cancel_running(m_estimates);
        return;
    }
    m_draining = true;
    log_info("%s: draining %zu request(s), then exiting", strsignal(signum),
             m_estimates.jobs.size());
    if (m_listening) {
        uv_close(reinterpret_cast<uv_handle_t *>(&m_listener), nullptr);
        m_listening = false;
        unlink(m_cfg->socket.c_str());
    }
    for (EstimateJob *job : m_sched.take_queue())
        estimate_refuse_queued(job, Outcome::shutting_down,
                               "xmem: xmemd is shutting down (retry shortly)");
    uv_timer_start(&m_drain_timer, on_drain_timeout, k_drain_timeout_ms, 0);
    maybe_finish_drain();
}

void Daemon::on_drain_timeout(uv_timer_t *t)
{
    auto *d = static_cast<Daemon *>(t->data);
    log_warn("drain timeout: stopping %zu running profile(s)", d->m_estimates.jobs.size());
    estimate_cancel_running(d->m_estimates);
}

void Daemon::on_sweep(uv_timer_t *t)
{
    auto *d = static_cast<Daemon *>(t->data);
    estimate_sweep_deadlines(d->m_estimates);
    estimate_sweep_budgets(d->m_estimates);
    d->m_held.tick();
}

void Daemon::maybe_finish_drain()
{
    if (!m_draining || m_closing || !m_estimates.jobs.empty() ||
        (m_ledger && m_ledger->pending() > 0))
        return;
    // Connections that only wait for a reply already written close themselves; idle ones
    // (no request yet) are closed here.
    close_all();
}

void Daemon::close_all()
{
    if (m_closing)
        return;
    m_closing = true;
    for (Conn *c : std::set<Conn *>(m_conns))
        conn_close(c);
    if (m_listening) {
        uv_close(reinterpret_cast<uv_handle_t *>(&m_listener), nullptr);
        unlink(m_cfg->socket.c_str());
        m_listening = false;
    }
    if (m_signals) {
        uv_close(reinterpret_cast<uv_handle_t *>(&m_sighup), nullptr);
        uv_close(reinterpret_cast<uv_handle_t *>(&m_sigterm), nullptr);
        uv_close(reinterpret_cast<uv_handle_t *>(&m_sigint), nullptr);
        m_signals = false;
    }
    if (m_timers) {
        uv_close(reinterpret_cast<uv_handle_t *>(&m_drain_timer), nullptr);
        uv_close(reinterpret_cast<uv_handle_t *>(&m_sweep_timer), nullptr);
        m_timers = false;
    }
    if (m_metrics_server) {
        m_metrics_server->close(); // frees itself from its close callbacks
        m_metrics_server = nullptr;
    }
    if (m_ledger)
        m_ledger->stop(nullptr);
}

Gauges Daemon::gauges() const
{
    Gauges g;
    g.queue_depth = m_sched.queued();
    g.in_flight = m_sched.running();
    g.connections = (int)m_conns.size();
    g.cache_entries = m_cache.size();
    return g;
}

nlohmann::json Daemon::stats_json() const
{
    nlohmann::json counters = nlohmann::json::object();
    int n;
    const Outcome *all = outcome_all(&n);
    for (int i = 0; i < n; i++)
        counters[std::string(outcome_name(all[i]))] = m_metrics.outcome_count(all[i]);
    uint64_t hits = m_metrics.cache_hits(), misses = m_metrics.cache_misses();
    return {
        {"outcome", static_cast<int>(Outcome::answered)},
        {"outcome_name", "answered"},
        {"message", ""},
        {"counters", counters},
        {"requests_total", m_metrics.requests_total()},
        {"cache",
         {{"entries", m_cache.size()},
          {"hits", hits},
          {"misses", misses},
          {"hit_ratio", hits + misses ? (double)hits / (double)(hits + misses) : 0.0}}},
        {"profile_seconds",
         {{"count", m_metrics.profile_seconds.count()}, {"sum", m_metrics.profile_seconds.sum()}}},
        {"analyze_seconds",
         {{"count", m_metrics.analyze_seconds.count()}, {"sum", m_metrics.analyze_seconds.sum()}}}};
}

nlohmann::json Daemon::status_json(uid_t caller) const
{
    nlohmann::json s = stats_json();
    s["version"] = XMEM_VERSION;
    s["pid"] = (int)getpid();
    s["uptime_seconds"] = (long)(time(nullptr) - m_started);
    s["draining"] = m_draining;
    s["config"] = m_cfg->path;
    s["queue_depth"] = m_sched.queued();
    s["running"] = m_sched.running();
    s["max_concurrent"] = m_cfg->max_concurrent;
    s["max_per_user"] = m_cfg->max_per_user;
    s["queue_size"] = m_cfg->queue_size;
    s["connections"] = m_conns.size();
    s["ledger_pending"] = m_ledger ? m_ledger->pending() : 0;
    s["in_flight"] = estimate_in_flight(m_estimates);
    s["held"] = estimate_held_for(m_estimates, caller);
    return s;
}

} // namespace xmem::server
