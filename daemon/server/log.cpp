// log.cpp — one line per message; thread-safe (each line is written with one call).
#include "log.h"
#include "defaults.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <string>
#include <syslog.h>
#include <unistd.h>

namespace xmem::server
{

namespace
{
LogTarget g_target = LogTarget::stderr_stream;
std::mutex g_throttle_mutex;
std::map<std::string, time_t> g_last_warned;

void vlog(int prio, const char *level, const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (g_target == LogTarget::syslog) {
        syslog(prio, "%s", msg);
        return;
    }
    char line[2200];
    time_t now = time(nullptr);
    struct tm tm;
    gmtime_r(&now, &tm);
    char ts[32];
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    int n = snprintf(line, sizeof(line), "%s xmemd[%d] %s: %s\n", ts, (int)getpid(), level, msg);
    if (n > (int)sizeof(line) - 1)
        n = (int)sizeof(line) - 1;
    if (write(STDERR_FILENO, line, (size_t)n) < 0) {
        // Nowhere left to report a failing log; drop the line.
    }
}
} // namespace

void log_open(LogTarget target)
{
    g_target = target;
    if (target == LogTarget::syslog)
        openlog("xmemd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

#define DEFINE_LOG(fn, prio, level)                                                                \
    void fn(const char *fmt, ...)                                                                  \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, fmt);                                                                         \
        vlog(prio, level, fmt, ap);                                                                \
        va_end(ap);                                                                                \
    }
DEFINE_LOG(log_info, LOG_INFO, "info")
DEFINE_LOG(log_warn, LOG_WARNING, "warning")
DEFINE_LOG(log_error, LOG_ERR, "error")
#undef DEFINE_LOG

void log_warn_throttled(const char *key, const char *fmt, ...)
{
    time_t now = time(nullptr);
    {
        std::lock_guard<std::mutex> lock(g_throttle_mutex);
        auto it = g_last_warned.find(key);
        if (it != g_last_warned.end() && now - it->second < k_log_throttle_seconds)
            return;
        g_last_warned[key] = now;
    }
    va_list ap;
    va_start(ap, fmt);
    vlog(LOG_WARNING, "warning", fmt, ap);
    va_end(ap);
}

} // namespace xmem::server
