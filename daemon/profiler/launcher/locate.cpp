#include "locate.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <unistd.h>
#include <utility>

namespace xmem::profile
{

namespace
{

bool is_file(const std::string &path)
{
    return access(path.c_str(), R_OK) == 0;
}

std::string self_dir()
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return {};
    buf[n] = '\0';
    std::string path(buf);
    return path.substr(0, path.rfind('/'));
}

std::string real_path(const std::string &path)
{
    char buf[PATH_MAX];
    return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

std::string base_name(const std::string &path)
{
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool ends_with(const std::string &s, const char *suffix)
{
    size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// python, python3, python3.11, ... but not python3-config.
bool is_python_name(const std::string &name)
{
    if (name.rfind("python", 0) != 0)
        return false;
    for (size_t i = 6; i < name.size(); ++i)
        if (!(name[i] == '.' || (name[i] >= '0' && name[i] <= '9')))
            return false;
    return true;
}

} // namespace

xmem::Result<ShimPaths> locate_shim()
{
    ShimPaths shim;
    bool build_tree = real_path(self_dir()) == real_path(XMEM_BUILD_BINDIR);
    shim.python_dir = build_tree ? XMEM_SOURCE_PYDIR : XMEM_DATADIR "/python";
    shim.capture_lib =
        std::string(build_tree ? XMEM_BUILD_LIBDIR : XMEM_PKGLIBDIR) + "/libxmem-capture.so";
    if (const char *v = std::getenv("XMEM_PROFILER_PYDIR"); v && *v)
        shim.python_dir = v;
    if (const char *v = std::getenv("XMEM_CAPTURE_LIB"); v && *v)
        shim.capture_lib = v;
    if (!is_file(shim.python_dir + "/sitecustomize.py")) {
        return xmem::Result<ShimPaths>::fail(
            "xmem: " + shim.python_dir +
            "/sitecustomize.py: not found (reinstall xmem or set XMEM_PROFILER_PYDIR)");
    }
    if (!is_file(shim.capture_lib)) {
        return xmem::Result<ShimPaths>::fail(
            "xmem: " + shim.capture_lib +
            ": not found (was xmem built with LibTorch? make deps && make)");
    }
    return xmem::Result<ShimPaths>::ok(std::move(shim));
}

std::string find_python(const std::string &requested)
{
    if (!requested.empty())
        return requested;
    if (const char *v = std::getenv("XMEM_PYTHON"); v && *v)
        return v;
    if (access("/usr/bin/python3", X_OK) == 0)
        return "/usr/bin/python3";
    return "python3";
}

Command resolve_command(const std::vector<std::string> &command, const std::string &python)
{
    Command cmd;
    const std::string &first = command.front();
    if (is_python_name(base_name(first))) {
        cmd.argv.push_back(python);
        cmd.argv.insert(cmd.argv.end(), command.begin() + 1, command.end());
    } else if (ends_with(first, ".py")) {
        cmd.argv.push_back(python);
        cmd.argv.insert(cmd.argv.end(), command.begin(), command.end());
    } else {
        cmd.argv = command;
    }
    // Name the script: the first argument after the interpreter that is not an option.
    cmd.name = base_name(first);
    if (cmd.argv.front() == python) {
        for (size_t i = 1; i < cmd.argv.size(); ++i) {
            const std::string &a = cmd.argv[i];
            if (a == "-m" && i + 1 < cmd.argv.size()) {
                cmd.name = cmd.argv[i + 1];
                break;
            }
            if (a == "-c") {
                cmd.name = "python -c";
                break;
            }
            if (!a.empty() && a[0] != '-') {
                cmd.name = base_name(a);
                break;
            }
        }
    }
    return cmd;
}

int available_cpus()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int>(n) : 1;
}

} // namespace xmem::profile
