// user.h — who a peer is (from the kernel's uid, looked up in passwd/group) and a per-thread
// switch of the filesystem identity so files are opened with the peer's rights, not root's.
#ifndef XMEMD_USER_H
#define XMEMD_USER_H

#include "common/result.h"

#include <string>
#include <sys/types.h>
#include <vector>

namespace xmem::server
{

struct UserIdentity {
    uid_t uid = 0;
    gid_t gid = 0;
    std::string name;
    std::string home;
    std::string shell;
    std::vector<gid_t> groups; // supplementary groups, as initgroups() would set them
};

// xmemd's effective uid, read once: the daemon never changes it (only sandboxed children
// do, after fork), and the hot path asked the kernel for it three times per request.
uid_t daemon_euid();

// getpwuid_r + getgrouplist; fails for a uid with no passwd entry.
Result<UserIdentity> user_lookup(uid_t uid);
// user_lookup through a small thread-safe cache (k_user_cache_seconds); failures not cached.
Result<UserIdentity> user_lookup_cached(uid_t uid);

// While alive, this thread's fsuid/fsgid/groups are the user's (raw syscalls: the kernel keeps
// credentials per thread, and glibc's setgroups() would change every thread of the daemon),
// and it has no effective capability at all: a new fsuid clears only the file ones, and
// CAP_SYS_PTRACE kept let a request's path /proc/<another user's pid>/cwd/... through (issue
// 26, M1). A daemon not running as root keeps its own identity (it can only serve itself).
class FsIdentity
{
  public:
    explicit FsIdentity(const UserIdentity &u);
    ~FsIdentity();
    FsIdentity(const FsIdentity &) = delete;
    FsIdentity &operator=(const FsIdentity &) = delete;
    bool ok() const { return m_ok; }

  private:
    bool m_switched = false;
    bool m_ok = false;
    uid_t m_old_fsuid = 0;
    gid_t m_old_fsgid = 0;
    std::vector<gid_t> m_old_groups;
    bool m_caps_dropped = false;
    uint32_t m_old_effective[2] = {0, 0}; // the capabilities the constructor cleared
};

} // namespace xmem::server
#endif
