// startup.h — process-level start-up steps for main(): lock, socket directory safety,
// detaching, readiness notification, the no-live-handles check at exit.
#ifndef XMEMD_STARTUP_H
#define XMEMD_STARTUP_H

#include <string>
#include <uv.h>

namespace xmem::server
{

// Takes an exclusive lock on `path` and writes our pid into it. Refuses when another xmemd
// holds it. A pid left behind by a crashed xmemd that no longer runs is taken over (with a
// warning); one that still runs (pid reuse) is taken over only with `force`. Returns the fd
// (kept open for the life of the process) or -1 after printing why.
int lock_take(const std::string &path, bool force);

// The socket directory must exist, be owned by root or by us, and not be writable by group
// or others (anyone could replace the socket). Prints why and a fix when unsafe.
bool socket_dir_safe(const std::string &socket_path);

// Detaches from the terminal; the parent exits when the child calls detach_ready() (0) or
// exits (its status). Returns in the child only.
void detach();
void detach_ready();

// Tells systemd (Type=notify) we are ready, when NOTIFY_SOCKET is set.
void notify_ready();

// Counts handles still open on the loop and logs each; 0 means a clean shutdown.
int loop_live_handles(uv_loop_t *loop);

} // namespace xmem::server
#endif
