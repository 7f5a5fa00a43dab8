#include "locate.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <sys/stat.h>
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
    shim.capture_src = build_tree ? XMEM_SOURCE_CAPTUREDIR : XMEM_DATADIR "/capture-src";
    shim.capture_include =
        build_tree ? XMEM_SOURCE_SIMULATORDIR : XMEM_DATADIR "/capture-src/include";
    shim.capture_lib_torch = XMEM_CAPTURE_TORCH;
    if (const char *v = std::getenv("XMEM_PROFILER_PYDIR"); v && *v)
        shim.python_dir = v;
    if (const char *v = std::getenv("XMEM_CAPTURE_LIB"); v && *v) {
        shim.capture_lib = v;
        shim.capture_src.clear(); // named by the user: used as it is, never rebuilt
        shim.capture_include.clear();
    }
    if (!is_file(shim.python_dir + "/sitecustomize.py")) {
        return xmem::Result<ShimPaths>::fail(
            "xmem: " + shim.python_dir +
            "/sitecustomize.py: not found (reinstall xmem or set XMEM_PROFILER_PYDIR)");
    }
    if (shim.capture_src.empty() && !is_file(shim.capture_lib)) {
        return xmem::Result<ShimPaths>::fail("xmem: " + shim.capture_lib +
                                             ": not found (check XMEM_CAPTURE_LIB)");
    }
    return xmem::Result<ShimPaths>::ok(std::move(shim));
}

std::string python_override(const std::string &requested)
{
    if (!requested.empty())
        return requested;
    const char *v = std::getenv("XMEM_PYTHON");
    return v && *v ? v : "";
}

std::string search_path(const std::string &name, const std::string &path_env)
{
    size_t start = 0;
    while (start <= path_env.size()) {
        size_t colon = path_env.find(':', start);
        if (colon == std::string::npos)
            colon = path_env.size();
        std::string dir = path_env.substr(start, colon - start);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        struct stat st {
        };
        if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            access(candidate.c_str(), X_OK) == 0)
            return candidate;
        start = colon + 1;
    }
    return {};
}

namespace
{

// The interpreter for a command whose interpreter is written WRITTEN (python3, /v/bin/python).
xmem::Result<std::string> pick_python(const std::string &written, const std::string &override,
                                      const std::string &path_env)
{
    if (!override.empty())
        return xmem::Result<std::string>::ok(override);
    if (written.find('/') != std::string::npos)
        return xmem::Result<std::string>::ok(written);
    std::string found = search_path(written, path_env);
    if (found.empty())
        return xmem::Result<std::string>::fail(
            "xmem: " + written +
            ": not found on the job's PATH (activate the job's environment, or pass --python)");
    return xmem::Result<std::string>::ok(found);
}

// The script's name for messages: the first argument after the interpreter that is not an
// option.
std::string script_name(const std::vector<std::string> &args_after_python)
{
    for (size_t i = 0; i < args_after_python.size(); ++i) {
        const std::string &a = args_after_python[i];
        if (a == "-m" && i + 1 < args_after_python.size())
            return args_after_python[i + 1];
        if (a == "-c")
            return "python -c";
        if (!a.empty() && a[0] != '-')
            return base_name(a);
    }
    return {};
}

} // namespace

xmem::Result<Command> resolve_command(const std::vector<std::string> &command,
                                      const std::string &override, const std::string &path_env)
{
    Command cmd;
    const std::string &first = command.front();
    cmd.name = base_name(first);
    std::vector<std::string> args;
    if (is_python_name(base_name(first))) {
        args.assign(command.begin() + 1, command.end());
        auto python = pick_python(first, override, path_env);
        if (!python.ok())
            return xmem::Result<Command>::fail(python.error());
        cmd.python = python.value();
    } else if (ends_with(first, ".py")) {
        args = command;
        auto python = pick_python("python3", override, path_env);
        if (!python.ok())
            return xmem::Result<Command>::fail(python.error());
        cmd.python = python.value();
    } else {
        cmd.argv = command;
        return xmem::Result<Command>::ok(std::move(cmd));
    }
    cmd.argv.push_back(cmd.python);
    cmd.argv.insert(cmd.argv.end(), args.begin(), args.end());
    if (std::string script = script_name(args); !script.empty())
        cmd.name = script;
    return xmem::Result<Command>::ok(std::move(cmd));
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
