/*
 * main.cpp — xmemd, the xmem estimation daemon. main() is the list of steps; each step
 * reports its own failure with a hint.
 */
#include "daemon.h"
#include "defaults.h"
#include "log.h"
#include "xmemd_options.h"
#include "startup.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>

using namespace xmem::server;

namespace
{

// Config file (or defaults when the default path is absent), then command-line overrides.
std::shared_ptr<const Config> load_config_or_exit(const Options &o)
{
    Config c = config_defaults();
    if (o.config_given || access(o.config_path.c_str(), F_OK) == 0) {
        auto r = config_load(o.config_path);
        if (!r) {
            fprintf(stderr, "xmemd: %s\n", r.error().message.c_str());
            exit(1);
        }
        c = std::move(r.value());
    } else if (auto gpus = config_read_catalog(c); !gpus.ok()) {
        fprintf(stderr, "xmemd: %s\n", gpus.error().message.c_str());
        exit(1);
    }
    if (!o.socket.empty())
        c.socket = o.socket;
    if (!o.lockfile.empty())
        c.lockfile = o.lockfile;
    if (!o.database.empty())
        c.database = o.database;
    if (!o.munge_socket.empty())
        c.munge_socket = o.munge_socket;
    if (!o.log.empty())
        c.log = o.log;
    return std::make_shared<const Config>(std::move(c));
}

int render_policy(const Config &c, const std::string &out)
{
    if (out == "-") {
        fputs(policy_render_lua(c.policy, (unsigned)geteuid()).c_str(), stdout);
        return 0;
    }
    auto written = policy_write_lua(c.policy, (unsigned)geteuid(), out);
    if (!written.ok())
        fprintf(stderr, "%s\n", written.error().message.c_str());
    return written.ok() ? 0 : 1;
}

// Profiles and signing block threadpool threads; size the pool before libuv first uses it.
// libuv reads its size only from the environment; xmemd is handed the same number as a value.
int size_threadpool(const Config &c)
{
    int n = std::min(k_max_threadpool, c.max_concurrent + k_threadpool_spare);
    setenv("UV_THREADPOOL_SIZE", std::to_string(n).c_str(), 1);
    return n;
}

} // namespace

int main(int argc, char **argv)
{
    Options opts = options_parse(argc, argv);
    std::shared_ptr<const Config> cfg = load_config_or_exit(opts);
    if (!opts.render_policy_out.empty())
        return render_policy(*cfg, opts.render_policy_out);
    if (opts.check_config) {
        if (auto programs = config_check_programs(*cfg); !programs.ok()) {
            fprintf(stderr, "xmemd: %s\n", programs.error().message.c_str());
            return 1;
        }
        printf("xmemd: %s: ok\n", cfg->path.empty() ? "built-in defaults" : cfg->path.c_str());
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    if (!opts.foreground)
        detach();
    // A detached daemon has no stderr after start-up: its log goes to syslog.
    log_open(cfg->log == "syslog" || !opts.foreground ? LogTarget::syslog
                                                      : LogTarget::stderr_stream);
    int pool_threads = size_threadpool(*cfg);
    int lock_fd = lock_take(cfg->lockfile, opts.force);
    if (lock_fd < 0 || !socket_dir_safe(cfg->socket))
        return 1;

    uv_loop_t loop;
    uv_loop_init(&loop);
    auto *d = new Daemon(&loop, cfg, opts, pool_threads);
    bool ok = d->open_ledger() && d->listen_socket() && d->start_metrics();
    if (ok) {
        d->install_signals();
        d->write_policy_file();
        log_info("starting xmemd %s (pid %d) on %s", XMEM_VERSION, (int)getpid(),
                 cfg->socket.c_str());
        detach_ready();
        notify_ready();
    } else {
        d->close_all();
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    int live = loop_live_handles(&loop);
    delete d;
    uv_loop_close(&loop);
    if (ok)
        log_info("stopping xmemd %s (pid %d)", XMEM_VERSION, (int)getpid());
    if (ftruncate(lock_fd, 0) != 0) {
        // A pid left behind is taken over by the next start once it no longer runs.
    }
    close(lock_fd);
    if (live > 0) {
        // Fail loudly: every handle must go init → close; tests check this exit status.
        log_error("%d handle(s) still open at exit: a lifecycle bug", live);
        return 3;
    }
    return ok ? 0 : 1;
}
