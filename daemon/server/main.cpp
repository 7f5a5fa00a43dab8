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

// The config file (or the defaults when the default path is absent) and its problems.
ConfigCheck read_config(const Options &o)
{
    if (o.config_given || access(o.config_path.c_str(), F_OK) == 0)
        return config_check(o.config_path);
    ConfigCheck check{config_defaults(), {}};
    if (auto gpus = config_read_catalog(check.config); !gpus.ok())
        check.problems.push_back(gpus.error().message);
    return check;
}

// --check-config: every problem, one "FILE:LINE: key: problem; fix" line each on stderr (no
// prefix, so an editor can jump to it), then whether the estimator named is installed (when
// the key was read, so a refused key never sends the check to the built-in program).
int check_config(const Options &o)
{
    ConfigCheck check = read_config(o);
    if (check.problems.empty() || check.config.estimator_line > 0)
        if (auto programs = config_check_programs(check.config); !programs.ok())
            check.problems.push_back(programs.error().message);
    for (const std::string &problem : check.problems)
        fprintf(stderr, "%s\n", problem.c_str());
    if (!check.problems.empty())
        return 1;
    printf("xmemd: %s: ok\n",
           check.config.path.empty() ? "built-in defaults" : check.config.path.c_str());
    return 0;
}

// The config, then command-line overrides; every problem on stderr and exit 1 when it has any.
std::shared_ptr<const Config> load_config_or_exit(const Options &o)
{
    ConfigCheck check = read_config(o);
    for (const std::string &problem : check.problems)
        fprintf(stderr, "xmemd: %s\n", problem.c_str());
    if (!check.problems.empty())
        exit(1);
    Config c = std::move(check.config);
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
    if (opts.check_config)
        return check_config(opts);
    std::shared_ptr<const Config> cfg = load_config_or_exit(opts);
    if (!opts.render_policy_out.empty())
        return render_policy(*cfg, opts.render_policy_out);
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
