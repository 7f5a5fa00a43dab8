// user.cpp — passwd lookups and the per-thread filesystem identity switch.
#include "user.h"
#include "defaults.h"
#include "log.h"

#include <ctime>
#include <mutex>
#include <unordered_map>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace xmem::server
{

uid_t daemon_euid()
{
    static const uid_t euid = geteuid();
    return euid;
}

Result<UserIdentity> user_lookup(uid_t uid)
{
    struct passwd pw, *found = nullptr;
    std::vector<char> buf(16384);
    int rc;
    while ((rc = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found)) == ERANGE &&
           buf.size() < (1u << 20))
        buf.resize(buf.size() * 2);
    if (rc != 0 || !found)
        return Result<UserIdentity>::fail("xmem: uid " + std::to_string(uid) +
                                          " has no passwd entry (ask the admin to fix NSS on "
                                          "this node)");
    UserIdentity u;
    u.uid = pw.pw_uid;
    u.gid = pw.pw_gid;
    u.name = pw.pw_name;
    u.home = pw.pw_dir ? pw.pw_dir : "/";
    u.shell = pw.pw_shell ? pw.pw_shell : "/bin/sh";
    int n = 64;
    u.groups.resize((size_t)n);
    while (getgrouplist(pw.pw_name, pw.pw_gid, u.groups.data(), &n) < 0) {
        if (n <= (int)u.groups.size())
            n = (int)u.groups.size() * 2;
        if (n > 65536)
            return Result<UserIdentity>::fail("xmem: user " + u.name + " is in too many groups");
        u.groups.resize((size_t)n);
    }
    u.groups.resize((size_t)n);
    return Result<UserIdentity>::ok(std::move(u));
}

Result<UserIdentity> user_lookup_cached(uid_t uid)
{
    static std::mutex mutex;
    static std::unordered_map<uid_t, std::pair<UserIdentity, time_t>> cache;
    time_t now = time(nullptr);
    {
        std::lock_guard<std::mutex> lock(mutex);
        auto it = cache.find(uid);
        if (it != cache.end() && now - it->second.second < k_user_cache_seconds)
            return Result<UserIdentity>::ok(it->second.first);
    }
    auto r = user_lookup(uid);
    if (r) {
        std::lock_guard<std::mutex> lock(mutex);
        if (cache.size() > 4096) // bounded: uids seen on one login node are few
            cache.clear();
        cache[uid] = {r.value(), now};
    }
    return r;
}

// capget/capset on this thread alone (pid 0): capabilities are per thread, like fsuid. Sets
// this thread's effective set to EFFECTIVE, its permitted set unchanged; OLD, when given,
// gets the effective set it replaced.
static bool set_effective_caps(const uint32_t effective[2], uint32_t old[2])
{
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &hdr, data) != 0)
        return false;
    for (int i = 0; i < 2; ++i) {
        if (old != nullptr)
            old[i] = data[i].effective;
        data[i].effective = effective[i];
    }
    return syscall(SYS_capset, &hdr, data) == 0;
}

FsIdentity::FsIdentity(const UserIdentity &u)
{
    if (daemon_euid() != 0 || u.uid == 0) {
        m_ok = (u.uid == daemon_euid());
        return;
    }
    m_old_fsuid = (uid_t)setfsuid((uid_t)-1);
    m_old_fsgid = (gid_t)setfsgid((gid_t)-1);
    int n = getgroups(0, nullptr);
    m_old_groups.resize((size_t)(n > 0 ? n : 0));
    if (n > 0 && getgroups(n, m_old_groups.data()) != n)
        return;
    m_switched = true;
    if (syscall(SYS_setgroups, u.groups.size(), u.groups.data()) != 0)
        return;
    setfsgid(u.gid);
    setfsuid(u.uid);
    // setfsuid reports the previous value, so read back to confirm the switch took.
    m_ok = (uid_t)setfsuid((uid_t)-1) == u.uid && (gid_t)setfsgid((gid_t)-1) == u.gid;
    static const uint32_t none[2] = {0, 0};
    m_caps_dropped = m_ok && set_effective_caps(none, m_old_effective);
    m_ok = m_caps_dropped;
}

FsIdentity::~FsIdentity()
{
    if (!m_switched)
        return;
    // Capabilities first: setgroups needs CAP_SETGID.
    if (m_caps_dropped && !set_effective_caps(m_old_effective, nullptr)) {
        log_error("cannot restore the daemon's capabilities: %s; aborting", strerror(errno));
        abort();
    }
    setfsuid(m_old_fsuid);
    setfsgid(m_old_fsgid);
    if (syscall(SYS_setgroups, m_old_groups.size(), m_old_groups.data()) != 0 ||
        (uid_t)setfsuid((uid_t)-1) != m_old_fsuid) {
        // A worker thread left with a user's identity would serve the next request wrongly.
        log_error("cannot restore the daemon's filesystem identity: %s; aborting", strerror(errno));
        abort();
    }
}

} // namespace xmem::server
