#include "memory.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace xmem::profile
{

namespace
{

constexpr uint64_t k_unlimited = std::numeric_limits<uint64_t>::max();

// Process group and resident pages from /proc/PID/stat; false when it has gone.
bool read_stat(const char *pid, long *pgrp, long *rss_pages)
{
    std::ifstream in(std::string("/proc/") + pid + "/stat");
    std::string line;
    if (!std::getline(in, line))
        return false;
    // The command name (field 2) may hold spaces and parentheses: fields 3... follow the last ')'.
    size_t close = line.rfind(')');
    if (close == std::string::npos)
        return false;
    std::istringstream fields(line.substr(close + 2));
    std::string skip;
    fields >> skip >> skip >> *pgrp; // state, ppid, pgrp (fields 3-5)
    for (int i = 6; i < 24; ++i)     // up to rss (field 24)
        fields >> skip;
    fields >> *rss_pages;
    return !fields.fail();
}

// "MemAvailable:  123456 kB" from /proc/meminfo, in bytes.
uint64_t mem_available()
{
    std::ifstream in("/proc/meminfo");
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (in >> key >> kib >> unit)
        if (key == "MemAvailable:")
            return kib * 1024;
    return k_unlimited;
}

uint64_t read_number(const std::string &path)
{
    std::ifstream in(path);
    std::string text;
    if (!(in >> text) || text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
        return k_unlimited; // absent, or "max"
    return std::strtoull(text.c_str(), nullptr, 10);
}

// What our cgroup (v2) may still allocate: memory.max less memory.current.
uint64_t cgroup_headroom()
{
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("0::", 0) != 0)
            continue;
        std::string dir = "/sys/fs/cgroup" + line.substr(3);
        uint64_t max = read_number(dir + "/memory.max");
        uint64_t current = read_number(dir + "/memory.current");
        if (max == k_unlimited || current == k_unlimited)
            return k_unlimited;
        return max > current ? max - current : 0;
    }
    return k_unlimited;
}

uint64_t address_space_limit()
{
    struct rlimit rl {
    };
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return k_unlimited;
    return rl.rlim_cur;
}

bool is_pid(const char *name)
{
    for (const char *c = name; *c; ++c)
        if (!std::isdigit(static_cast<unsigned char>(*c)))
            return false;
    return *name != '\0';
}

} // namespace

uint64_t group_rss_bytes(pid_t pgid)
{
    DIR *proc = opendir("/proc");
    if (proc == nullptr)
        return 0;
    static const long page = sysconf(_SC_PAGESIZE);
    uint64_t total = 0;
    while (dirent *e = readdir(proc)) {
        long pgrp = 0, rss = 0;
        if (is_pid(e->d_name) && read_stat(e->d_name, &pgrp, &rss) && pgrp == pgid && rss > 0)
            total += static_cast<uint64_t>(rss) * static_cast<uint64_t>(page);
    }
    closedir(proc);
    return total;
}

uint64_t default_rss_limit()
{
    uint64_t free = std::min({mem_available(), cgroup_headroom(), address_space_limit()});
    if (free == k_unlimited)
        return 0; // nothing known: no limit
    return static_cast<uint64_t>(static_cast<double>(free) * k_rss_share);
}

} // namespace xmem::profile
