// log.h — xmemd's log: stderr (with time and level) or syslog; repeated warnings throttled.
#ifndef XMEMD_LOG_H
#define XMEMD_LOG_H

namespace xmem::server
{

enum class LogTarget { stderr_stream, syslog };

void log_open(LogTarget target);
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Logs at most once per k_log_throttle_seconds for the same `key` (a static string).
void log_warn_throttled(const char *key, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

} // namespace xmem::server
#endif
